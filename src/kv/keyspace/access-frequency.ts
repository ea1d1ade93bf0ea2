/**
 * A key's access frequency for the LFU eviction policies, as Redis keeps it: a logarithmic
 * counter of 8 bits that each access raises with probability 1 / ((counter − 5) × lfu-log-factor
 * + 1), and that falls by one for every `lfu-decay-time` minutes since it was last raised. A key
 * starts at 5, so a new key is not the first to go. OBJECT FREQ reads it.
 *
 * It lives where the key's read time lives otherwise (the entry's int32, KeyTable.readTime), as
 * Redis keeps it in its objects' LRU field: the minute of the last access in 16 bits above the
 * counter, plus one, so that 0 still means "not accessed since written". Switching between LRU
 * and LFU policies reinterprets the field, as Redis does ("will take some time to adjust").
 */

/** A new key's counter. */
export const initialCounter = 5;
export const counterMax = 255;
const minuteMask = 0xffff;

export interface FrequencyConfig {
  /** lfu-log-factor: how slowly the counter climbs. */
  logFactor: number;
  /** lfu-decay-time: minutes for the counter to fall by one; 0 never. */
  decayMinutes: number;
}

/** The field for `counter` last raised at minute `minute`. */
const pack = (minute: number, counter: number) => (minute & minuteMask) * 256 + counter + 1;

/** Minutes since the Unix epoch, in 16 bits, as Redis's LFU clock. */
export const minuteOf = (nowMs: number) => Math.floor(nowMs / 60_000) & minuteMask;

/** The counter held in `field` as of minute `now`, decayed (OBJECT FREQ's answer). */
export function counterOf(field: number, now: number, config: FrequencyConfig): number {
  if (field <= 0) return initialCounter;
  const packed = field - 1;
  const counter = packed & 0xff;
  const last = (packed >>> 8) & minuteMask;
  if (config.decayMinutes === 0) return counter;
  const elapsed = now >= last ? now - last : minuteMask - last + now;
  return Math.max(0, counter - Math.floor(elapsed / config.decayMinutes));
}

/** The field after one access at minute `now`; `random` is uniform in [0, 1). */
export function accessed(field: number, now: number, config: FrequencyConfig, random: number): number {
  let counter = counterOf(field, now, config);
  if (counter < counterMax) {
    const base = Math.max(0, counter - initialCounter);
    if (random < 1 / (base * config.logFactor + 1)) counter++;
  }
  return pack(now, counter);
}

/** The field for RESTORE … FREQ `counter`, as of minute `now`. */
export const withCounter = (counter: number, now: number) => pack(now, Math.min(counterMax, Math.max(0, counter)));

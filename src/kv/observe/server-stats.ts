/**
 * The server's counters, as INFO stats, errorstats and commandstats report them and CONFIG
 * RESETSTAT zeroes them (Redis's resetServerStats, resetCommandTableStats and
 * resetErrorTableStats). Monitoring reads these by name (redis_exporter, Datadog's Redis check),
 * so INFO lists every field Redis 7.0 lists, in its order (info.ts); those for machinery svc has
 * not — replication, forks, defragmentation, client tracking, I/O threads — are there as 0.
 *
 * Network counts are RESP's, as Redis's are of its one protocol: bytes and reads and writes of
 * the client sockets. The REST API is not counted in them.
 */
import type { CommandStats } from "./command-timing.ts";
import { LazyFree } from "../keyspace/lazy-free.ts";

/** INFO's used_memory: the JavaScript heap and the array buffers (the key tables' slabs). */
export const usedMemoryBytes = (usage = process.memoryUsage()): number => usage.heapUsed + usage.external;

/** Samples an instantaneous rate is averaged over, one per cron run (Redis's STATS_METRIC_SAMPLES). */
const rateSamples = 16;
/** An error code is the error's first word, found within this many characters; else it counts as ERR. */
const errorCodeCharsMax = 31;

/**
 * A rate per second from a growing count sampled now and then: the mean of the last rateSamples
 * samples, as Redis's trackInstantaneousMetric and getInstantaneousMetric compute it.
 */
class InstantaneousRate {
  private readonly samples = new Float64Array(rateSamples);
  private next = 0;
  private lastCount = 0;
  private lastMs = -1;

  sample(count: number, nowMs: number): void {
    if (this.lastMs >= 0 && nowMs > this.lastMs) {
      this.samples[this.next] = ((count - this.lastCount) * 1000) / (nowMs - this.lastMs);
      this.next = (this.next + 1) % rateSamples;
    }
    this.lastCount = count;
    this.lastMs = nowMs;
  }

  get perSecond(): number {
    let sum = 0;
    for (const s of this.samples) sum += s;
    return sum / rateSamples;
  }

  reset(): void {
    this.samples.fill(0);
    this.lastMs = -1;
  }
}

export class ServerStats {
  commandsProcessed = 0;
  connectionsReceived = 0;
  /** Connections refused at maxclients (not among those received). */
  rejectedConnections = 0;
  keyspaceHits = 0;
  keyspaceMisses = 0;
  expiredKeys = 0;
  /** Keys deleted to get under maxmemory (eviction.ts). */
  evictedKeys = 0;
  /** Per command name (commandstats). */
  readonly commands = new Map<string, CommandStats>();
  /** The same statistics by the command's CommandShape.statsIndex, once looked up by name. */
  readonly commandsByIndex: (CommandStats | undefined)[] = [];
  /** Bytes read from and written to client sockets. */
  netInputBytes = 0;
  netOutputBytes = 0;
  /** Socket reads handled and socket writes made. */
  readsProcessed = 0;
  writesProcessed = 0;
  /** Error replies sent, and by error code (errorstats). */
  errorReplies = 0;
  readonly errorCodes = new Map<string, number>();
  /** The active expiry cycle: a running estimate of the share of expired keys among those it met. */
  expiredStaleShare = 0;
  /** Runs of the cycle its time budget cut short, and its time spent in all. */
  expireTimeCapReached = 0;
  expireCycleMs = 0;
  /**
   * used_memory when the server started (before loading, its listeners included: listenersStarted),
   * and the most sampled since (cron, INFO).
   */
  memoryAtStartBytes = usedMemoryBytes();
  memoryPeakBytes = this.memoryAtStartBytes;
  private readonly opsRate = new InstantaneousRate();
  private readonly inputRate = new InstantaneousRate();
  private readonly outputRate = new InstantaneousRate();

  /**
   * The RESP and REST listeners started, after the file was loaded, and took `bytes`: they are part
   * of what the server uses with no data, as Redis measures used_memory_startup once its listeners
   * are up. Starting the REST server takes ~4 MB of heap and buffers, which left an empty server
   * 4.4–4.8 MB above its startup figure, next to the 5 MB MEMORY DOCTOR waits for (its test failed
   * on a busy machine, 2026-11-29).
   */
  listenersStarted(bytes: number): void {
    this.memoryAtStartBytes += Math.max(0, bytes);
    this.memoryPeakBytes = Math.max(this.memoryPeakBytes, this.memoryAtStartBytes);
  }

  /**
   * An error reply went to a client: counted under its code, the message's first word (WRONGTYPE,
   * NOAUTH, ERR …), as Redis's afterErrorReply counts it.
   */
  errorReplied(message: string): void {
    this.errorReplies++;
    const space = message.indexOf(" ");
    const code = space > 0 && space <= errorCodeCharsMax ? message.slice(0, space) : "ERR";
    this.errorCodes.set(code, (this.errorCodes.get(code) ?? 0) + 1);
  }

  /** One run of the expiry cycle: `met` keys with a time looked at, `expired` of them deleted. */
  expireCycleRan(met: number, expired: number, ms: number, timeCapped: boolean): void {
    // As Redis: a 5% step toward this run's share, so one run moves the estimate little.
    const share = met > 0 ? expired / met : 0;
    this.expiredStaleShare = share * 0.05 + this.expiredStaleShare * 0.95;
    this.expireCycleMs += ms;
    if (timeCapped) this.expireTimeCapReached++;
  }

  /** Takes one sample of each instantaneous rate, and of used memory for its peak (the cron, ten times a second). */
  sample(nowMs: number, usedBytes: number): void {
    this.noteMemory(usedBytes);
    this.opsRate.sample(this.commandsProcessed, nowMs);
    this.inputRate.sample(this.netInputBytes, nowMs);
    this.outputRate.sample(this.netOutputBytes, nowMs);
  }

  /** A reading of used memory (the cron's, INFO's): the peak is the largest. */
  noteMemory(usedBytes: number): void {
    this.memoryPeakBytes = Math.max(this.memoryPeakBytes, usedBytes);
  }

  get opsPerSecond(): number {
    return Math.round(this.opsRate.perSecond);
  }

  get inputKbps(): number {
    return this.inputRate.perSecond / 1024;
  }

  get outputKbps(): number {
    return this.outputRate.perSecond / 1024;
  }

  /** UNLINK's and FLUSHDB/FLUSHALL ASYNC's lazy freeing (INFO's lazyfree_pending_objects, lazyfreed_objects). */
  readonly lazyFree = new LazyFree();

  /** CONFIG RESETSTAT: every counter back to zero. */
  reset(): void {
    this.lazyFree.freedObjects = 0;
    this.commandsProcessed =
      this.connectionsReceived =
      this.rejectedConnections =
      this.keyspaceHits =
      this.keyspaceMisses =
      this.expiredKeys =
      this.evictedKeys =
        0;
    this.commands.clear();
    this.commandsByIndex.length = 0;
    this.netInputBytes = this.netOutputBytes = this.readsProcessed = this.writesProcessed = 0;
    this.errorReplies = 0;
    this.errorCodes.clear();
    this.expiredStaleShare = this.expireTimeCapReached = this.expireCycleMs = 0;
    for (const rate of [this.opsRate, this.inputRate, this.outputRate]) rate.reset();
  }
}

/**
 * LATENCY GRAPH's and LATENCY DOCTOR's text, for people to read: what the latency monitor
 * (latency-monitor.ts) recorded, and what usually causes it. Redis draws and words both its own
 * way; nothing parses them, so these are svc's.
 */
import type { LatencyMonitor, LatencySeries } from "./latency-monitor.ts";

/** Columns of the graph's bars at their longest. */
const barColumnsMax = 50;
/** Samples the graph shows at most: the newest. */
const graphSamplesMax = 40;
const rule = "-".repeat(80);

/** How long ago `unixSeconds` was, in the largest whole unit: "35s", "12m", "3h", "2d". */
function ago(unixSeconds: number, nowSeconds: number): string {
  const seconds = Math.max(0, nowSeconds - unixSeconds);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** LATENCY GRAPH: the event's samples, one bar a line, newest last, scaled to the worst shown. */
export function latencyGraph(event: string, series: LatencySeries, nowSeconds: number): string {
  const shown = series.samples.slice(-graphSamplesMax);
  const high = Math.max(...shown.map((s) => s.ms));
  const low = Math.min(...shown.map((s) => s.ms));
  const lines = [`${event} - high ${high} ms, low ${low} ms (all time high ${series.maxMs} ms)`, rule];
  for (const sample of shown) {
    const columns = Math.max(1, Math.round((sample.ms / high) * barColumnsMax));
    lines.push(`${`${ago(sample.unixSeconds, nowSeconds)} ago`.padStart(9)}  ${"#".repeat(columns).padEnd(barColumnsMax)}  ${sample.ms} ms`);
  }
  return `${lines.join("\n")}\n`;
}

/** What usually makes each event slow, and what to do about it. */
const advice: Readonly<Record<string, string>> = {
  command:
    "Slow commands: one command's work holds every client back. SLOWLOG GET names them. Commands whose work grows with the data (KEYS, SMEMBERS, HGETALL, LRANGE 0 -1, SORT, ZUNIONSTORE on large keys) are the usual cause: SCAN, SSCAN, HSCAN and ZSCAN do the same work in steps.",
  "fast-command":
    "Slow O(1) or O(log N) commands: their own work is small, so the time went elsewhere — a garbage collection pause, the machine's other load, or swapping. Check the process's RSS against the machine's memory, and the CPU the other processes take.",
  "aof-write":
    "Slow writes to the append-only file: the disk, or the page cache's writeback, is holding writes up. A dedicated disk, or appendfsync no on a server that can lose the last seconds, helps.",
  "aof-fsync-always":
    "Slow fdatasync under appendfsync always: every write waits for the disk to confirm it. A disk with a faster flush helps; appendfsync everysec trades up to a second of writes for not waiting.",
  "expire-cycle": "A long active expiry cycle: many keys expiring at the same moment. Spreading the times to live (adding a random part) spreads the work.",
  "eviction-cycle":
    "Long evictions: the data is past maxmemory and keys are evicted in bulk. A maxmemory with room for the write load, or fewer large writes at once, shortens them.",
};

/** The mean of the samples' latencies and their mean absolute deviation from it, ms. */
function spread(series: LatencySeries): { mean: number; deviation: number } {
  const values = series.samples.map((s) => s.ms);
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const deviation = values.reduce((a, b) => a + Math.abs(b - mean), 0) / values.length;
  return { mean, deviation };
}

/** The mean seconds between the samples, or null for one sample. */
function period(series: LatencySeries): number | null {
  const samples = series.samples;
  if (samples.length < 2) return null;
  return (samples.at(-1)!.unixSeconds - samples[0]!.unixSeconds) / (samples.length - 1);
}

/** LATENCY DOCTOR: each event's spikes in numbers, then the usual causes of the events seen. */
export function latencyDoctor(monitor: LatencyMonitor): string {
  if (!monitor.on && monitor.events.size === 0) {
    return [
      "The latency monitor is off (latency-monitor-threshold is 0), so there is nothing to report.",
      "Turn it on with CONFIG SET latency-monitor-threshold <milliseconds>: events that take at least",
      "that long are then recorded, and LATENCY LATEST, HISTORY, GRAPH and DOCTOR report them.",
      "",
    ].join("\n");
  }
  if (monitor.events.size === 0) {
    return `No event has taken ${monitor.thresholdMs} ms or more since the monitor was turned on or last reset.\n`;
  }
  const threshold = monitor.on ? `of ${monitor.thresholdMs} ms or more (latency-monitor-threshold)` : "recorded while the monitor was on (it is off now)";
  const lines = [`Latency spikes ${threshold}, by event:`, ""];
  for (const [event, series] of monitor.events) {
    const { mean, deviation } = spread(series);
    const every = period(series);
    const count = series.samples.length;
    lines.push(
      `${event}: ${count} second${count === 1 ? "" : "s"} with a spike, mean ${mean.toFixed(0)} ms, mean deviation ${deviation.toFixed(0)} ms` +
        (every === null ? "" : `, one every ${every.toFixed(0)} s on average`) +
        `. Worst ever: ${series.maxMs} ms.`,
    );
  }
  lines.push("", "What usually causes them:", "");
  for (const event of monitor.events.keys()) {
    const text = advice[event];
    if (text !== undefined) lines.push(`- ${event}: ${text}`);
  }
  lines.push("", "LATENCY RESET clears what was recorded; LATENCY GRAPH <event> draws one event's spikes.", "");
  return lines.join("\n");
}

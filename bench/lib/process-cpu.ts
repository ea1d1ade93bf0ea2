/**
 * CPU time a process has used, from /proc: what the benchmarks report beside throughput. On a
 * shared machine a run's requests per second move with the neighbours' load, while the CPU each
 * request costs the server moves far less, so it is the steadier measure of efficiency.
 */
import { readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const clockTicksPerSec = 100;

/** The CPU seconds (user + system) a /proc stat line counts. */
function statSeconds(stat: string): number {
  // Fields after the command name, which is in parentheses and may itself hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line; the slice starts at field 3.
  return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSec;
}

/** CPU seconds (user + system, every thread) a process has used so far; 10 ms resolution. */
export function cpuSeconds(pid: number): number {
  return statSeconds(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/**
 * CPU seconds a process's main thread (the one whose id is the process's: the event loop of a
 * Bun server, Redis's main thread) has used so far; 10 ms resolution. What cpuSeconds counts
 * beyond it is the process's helper threads: a JIT compiler, a collector's, an allocator's.
 */
export function mainThreadCpuSeconds(pid: number): number {
  return statSeconds(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8"));
}

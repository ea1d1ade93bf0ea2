/**
 * Micro-benchmark comparisons: each case runs our fast path and its reference in the same process
 * under tinybench and prints one markdown row with both rates and their ratio, a table `svc bench`
 * records in bench/RESULTS.md as it is. Ratios above 1 mean ours is faster.
 */
import { Bench } from "tinybench";

export interface Case {
  name: string;
  ours: () => unknown;
  reference: () => unknown;
  /** Bytes one operation processes; adds a MB/s column. */
  bytesPerOp?: number;
}

export interface Row {
  name: string;
  oursOpsPerSec: number;
  referenceOpsPerSec: number;
  bytesPerOp?: number;
}

/** Time spent measuring each side of a case. */
const measureTimeMs = 400;

async function opsPerSec(name: string, fn: () => unknown): Promise<number> {
  const bench = new Bench({ time: measureTimeMs, warmupTime: 100 });
  bench.add(name, fn);
  await bench.run();
  const result = bench.tasks[0]!.result;
  if (result.state !== "completed") throw new Error(`benchmark ${name} did not complete: ${result.state}`);
  return result.throughput.mean;
}

export async function compare(cases: Case[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const c of cases) {
    const oursOpsPerSec = await opsPerSec(`${c.name} (ours)`, c.ours);
    const referenceOpsPerSec = await opsPerSec(`${c.name} (reference)`, c.reference);
    rows.push({ name: c.name, oursOpsPerSec, referenceOpsPerSec, bytesPerOp: c.bytesPerOp });
  }
  return rows;
}

const rate = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2));
const mbPerSec = (ops: number, bytes?: number) => (bytes ? ((ops * bytes) / 1e6).toFixed(1) : "");

export function printTable(title: string, oursLabel: string, referenceLabel: string, rows: Row[]): void {
  const withBytes = rows.some((r) => r.bytesPerOp);
  const header = ["case", `${oursLabel} ops/s`, `${referenceLabel} ops/s`, "ratio"];
  if (withBytes) header.push(`${oursLabel} MB/s`, `${referenceLabel} MB/s`);
  console.log(`\n### ${title}\n`);
  console.log(`| ${header.join(" | ")} |`);
  console.log(`|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`);
  for (const r of rows) {
    const cells = [r.name, rate(r.oursOpsPerSec), rate(r.referenceOpsPerSec), `${(r.oursOpsPerSec / r.referenceOpsPerSec).toFixed(2)}×`];
    if (withBytes) cells.push(mbPerSec(r.oursOpsPerSec, r.bytesPerOp), mbPerSec(r.referenceOpsPerSec, r.bytesPerOp));
    console.log(`| ${cells.join(" | ")} |`);
  }
}

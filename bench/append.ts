// Segment append: one native call doing writev (+ fdatasync) on a worker thread, against node:fs
// writevSync (+ fdatasyncSync) on the JavaScript thread. With a sync the disk dominates both, so the
// table also shows how long each keeps the JavaScript thread busy per append — the time a server
// could not spend answering other clients.
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendChunks, appendChunksReference } from "../src/native/append.ts";
import { compare, printTable } from "./lib/compare.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-bench-append-"));
const fdNative = openSync(join(dir, "native.log"), "a");
const fdReference = openSync(join(dir, "reference.log"), "a");
const batch = Array.from({ length: 64 }, () => crypto.getRandomValues(new Uint8Array(1024)));
const batchBytes = 64 * 1024;

const rows = await compare([
  {
    name: "64 × 1 KiB, no sync",
    ours: () => appendChunks(fdNative, batch, false),
    reference: () => appendChunksReference(fdReference, batch, false),
    bytesPerOp: batchBytes,
  },
  {
    name: "64 × 1 KiB + fdatasync",
    ours: () => appendChunks(fdNative, batch, true),
    reference: () => appendChunksReference(fdReference, batch, true),
    bytesPerOp: batchBytes,
  },
]);
printTable("segment append: native vs node:fs", "native", "node:fs", rows);

/** Mean milliseconds the JavaScript thread is inside the call, over `runs` synced appends. */
async function jsThreadMsPerAppend(append: typeof appendChunks, fd: number, runs: number): Promise<number> {
  let busy = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const pending = append(fd, batch, true);
    busy += performance.now() - start;
    await pending;
  }
  return busy / runs;
}
const nativeBusy = await jsThreadMsPerAppend(appendChunks, fdNative, 200);
const referenceBusy = await jsThreadMsPerAppend(appendChunksReference, fdReference, 200);
console.log(`\n| JS thread busy per synced 64 KiB append | native | node:fs | ratio |\n|---|---:|---:|---:|`);
console.log(`| ms | ${nativeBusy.toFixed(4)} | ${referenceBusy.toFixed(4)} | ${(referenceBusy / nativeBusy).toFixed(0)}× less |`);

closeSync(fdNative);
closeSync(fdReference);
rmSync(dir, { recursive: true, force: true });

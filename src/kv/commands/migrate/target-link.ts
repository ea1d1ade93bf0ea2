/**
 * MIGRATE's way to another server: one exchange — write the request, read `replies` reply lines —
 * that blocks the calling thread until it is done, as Redis's MIGRATE blocks its server, so that
 * no other client sees a key between its copy and its deletion. The sockets themselves run on a
 * thread of their own (target-link-thread.ts), started at the first MIGRATE; the server's thread
 * waits on a shared flag and takes the answer from a message port without returning to its
 * event loop.
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { NumberedAnswer, TargetAnswer, TargetExchange, TargetLinkMessage } from "./target-link-thread.ts";

/** Steps an exchange may take, each within the timeout: connecting, writing, and the replies. */
const stepsBeyondReplies = 2;
/** Slack on the server's wait beyond the link thread's own timeouts, which decide first. */
const waitSlackMs = 1_000;

let thread: { worker: Worker; answers: MessagePort } | null = null;
let lastId = 0;

function linkThread(): { worker: Worker; answers: MessagePort } {
  if (thread !== null) return thread;
  const worker = new Worker(new URL("./target-link-thread.ts", import.meta.url).href);
  // It keeps connections, not the process: a server that stops does not wait for it.
  worker.unref();
  const { port1, port2 } = new MessageChannel();
  worker.postMessage({ answers: port2 } satisfies TargetLinkMessage, [port2]);
  thread = { worker, answers: port1 };
  return thread;
}

/**
 * Writes `request` to host:port and reads `replies` reply lines, each step within `timeoutMs`;
 * blocks until then. The connection is kept for the next exchange with the same target.
 */
export function exchangeWithTarget(host: string, port: number, request: Uint8Array, replies: number, timeoutMs: number): TargetAnswer {
  const { worker, answers } = linkThread();
  const id = ++lastId;
  const done = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const message: TargetExchange = { id, host, port, request, replies, timeoutMs, done: done.buffer as SharedArrayBuffer };
  worker.postMessage(message satisfies TargetLinkMessage);
  // Each reply is read within the timeout, so the whole may take that long per step; a retry doubles it.
  const waitMs = 2 * (replies + stepsBeyondReplies) * timeoutMs + waitSlackMs;
  const gaveUp = { failed: "reading", lines: [] } satisfies TargetAnswer;
  if (Atomics.wait(done, 0, 0, waitMs) === "timed-out") return gaveUp;
  // Answers to exchanges given up on before may wait in the port ahead of this one's.
  for (;;) {
    const received = receiveMessageOnPort(answers)?.message as NumberedAnswer | undefined;
    if (received === undefined) return gaveUp;
    if (received.id === id) return received.answer;
  }
}

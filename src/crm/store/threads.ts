/**
 * Ending the SQLite store's worker threads (checkpointer.ts, search-reader-thread.ts), which both
 * answer "stop" by closing their connection and saying "stopped".
 */

/** Asks `worker` to close its connection, waits for it at most `waitMs`, and ends the thread. */
export async function stopThread(worker: Worker, waitMs: number): Promise<void> {
  await new Promise<void>((resolve) => {
    worker.addEventListener("message", (event) => event.data === "stopped" && resolve());
    setTimeout(resolve, waitMs).unref();
    worker.postMessage("stop");
  });
  worker.terminate();
}

/**
 * The mediasoup worker processes (C++, one thread each) that carry the media. Sessions are spread
 * over them; a worker that dies takes its sessions with it, /healthz answers 503 until a
 * replacement has started (after mediaWorkerRestartDelayMs, so a worker that dies at birth cannot
 * spin the CPU), and the pool is whole again.
 */
import { createWorker } from "mediasoup";
import type { types } from "mediasoup";
import { mediaWorkerRestartDelayMs } from "../core/limits.ts";
import type { Logger } from "../core/log.ts";
import { probeSlotSupport } from "./worker-slot.ts";

export type Worker = types.Worker;

/** How long after a worker's exit it is judged (see the "died" handler): a signal's delivery time. */
const workerDeathJudgedAfterMs = 50;

export class WorkerPool {
  readonly #slots: (Worker | null)[];
  /** Sessions on each worker: a room that needs a new worker takes the least loaded. */
  readonly #load = new Map<Worker, number>();
  #closed = false;
  /** Set when this process got SIGINT, which the workers (same process group) got as well. */
  #interrupted = false;
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(
    readonly size: number,
    /** The worker binary; passed per worker because mediasoup reads MEDIASOUP_WORKER_BIN only at import. */
    private readonly workerBin: string,
    private readonly log: Logger,
  ) {
    this.#slots = new Array<Worker | null>(size).fill(null);
  }

  async start(): Promise<void> {
    process.once("SIGINT", () => {
      this.#interrupted = true;
    });
    await Promise.all(this.#slots.map((_, index) => this.#spawn(index)));
  }

  /** True while every worker of the pool is alive. */
  get healthy(): boolean {
    return this.#slots.every((w) => w !== null && !w.died && !w.closed);
  }

  /** Process ids of the live workers, in pool order (for logs, dumps and tests). */
  get pids(): number[] {
    return this.#slots.filter((w): w is Worker => w !== null).map((w) => w.pid);
  }

  /** The live worker carrying the fewest sessions, not one of `except`; null when there is none. */
  leastLoaded(except: ReadonlySet<Worker> = new Set()): Worker | null {
    let best: Worker | null = null;
    for (const w of this.#slots) {
      if (w === null || w.died || w.closed || except.has(w)) continue;
      if (best === null || (this.#load.get(w) ?? 0) < (this.#load.get(best) ?? 0)) best = w;
    }
    return best;
  }

  /** Counts a session on `worker` until the returned function is called. */
  hold(worker: Worker): () => void {
    this.#load.set(worker, (this.#load.get(worker) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = this.#load.get(worker);
      if (n !== undefined) this.#load.set(worker, n - 1);
    };
  }

  async #spawn(index: number): Promise<void> {
    const worker = await createWorker({ logLevel: "warn", workerBin: this.workerBin });
    try {
      await probeSlotSupport(worker);
    } catch (error) {
      worker.close();
      throw error;
    }
    if (this.#closed) {
      worker.close();
      return;
    }
    this.#slots[index] = worker;
    this.#load.set(worker, 0);
    this.log.info({ worker: index, workerPid: worker.pid }, "media worker started");
    worker.on("died", (error) => {
      this.#load.delete(worker);
      this.#slots[index] = null;
      // Ctrl-C signals the whole process group: the worker gets it as this process does, and its
      // exit may be seen before our own SIGINT handler ran. Judged a moment later, that is an
      // interrupt, not a death.
      setTimeout(() => {
        if (this.#interrupted || this.#closed) {
          this.log.info({ worker: index, workerPid: worker.pid }, "media worker stopped by the interrupt");
          return;
        }
        this.log.error({ worker: index, workerPid: worker.pid, err: error }, "media worker died; its sessions are gone");
        this.#respawnLater(index);
      }, workerDeathJudgedAfterMs);
    });
  }

  #respawnLater(index: number): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#spawn(index).catch((error: unknown) => {
        this.log.error({ worker: index, err: error }, "media worker could not be replaced; trying again");
        this.#respawnLater(index);
      });
    }, mediaWorkerRestartDelayMs);
    this.#timers.add(timer);
  }

  close(): void {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    for (const w of this.#slots) w?.close();
  }
}

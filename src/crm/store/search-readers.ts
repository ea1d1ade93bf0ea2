/**
 * A serving SQLite store's search readers: threads (search-reader-thread.ts) with read-only
 * connections of their own, which run the statements of searches (RecordStore.list with `q` or
 * `updated_since`). bun:sqlite is synchronous, so on the main thread a search of a few
 * milliseconds — a rare term at a million records reads its matches from the index and checks each
 * one's access row — held up every request behind it, and used one core of two. A thread costs a
 * hop each way (~80 µs), more than a plain list's statements take, so only searches go there.
 *
 * Each statement goes to the thread with the fewest in flight. In WAL mode every connection sees
 * what is committed when its statement starts, as the main thread's reader does: a search sent
 * after a create was answered finds it. A thread that fails (its connection cannot open, it runs
 * out of memory) is dropped, and what it was asked is asked again of the store's own reader, which
 * takes every search once no thread is left: reads can be asked twice.
 */
import type { SQLQueryBindings } from "bun:sqlite";
import { type Queryable, readsOnly } from "./db.ts";
import type { SearchReaderAnswer, SearchReaderMessage } from "./search-reader-thread.ts";
import { stopThread } from "./threads.ts";

/**
 * How long a search waits for its thread before the store's own reader is asked instead, should a
 * thread stall: a search is a few milliseconds at most. (Under `bun test`, Bun 1.4.5's
 * `expect(promise).rejects` on a promise a thread's message settles takes no Worker message until
 * a timer fires, so such a test waited for this; tests await those with try/catch.)
 */
const searchAnswerWaitMs = 2000;
/** How long close() waits for a thread to close its connection. */
const stopWaitMs = 1000;

interface Thread {
  worker: Worker;
  /** Statements sent and not yet answered. */
  inFlight: number;
}

interface Asked {
  /** Asks the store's own reader instead, if the thread has not answered by then (see #ask). */
  late: ReturnType<typeof setTimeout>;
  mode: "all" | "get";
  sql: string;
  params: readonly unknown[];
  resolve: (rows: unknown) => void;
  reject: (error: unknown) => void;
  thread: Thread;
}

export class SearchReaders implements Queryable {
  readonly dialect = "sqlite";
  /** The threads still running. */
  #threads: Thread[];
  readonly #asked = new Map<number, Asked>();
  #nextId = 1;

  /**
   * `threads` threads on the database at `path`. `prepare` is the store's own rewriting of a
   * statement and its parameters for SQLite (sqlite.ts), `mapError` its mapping of SQLite's
   * errors (store-errors.ts), and `fallback` its own reader.
   */
  constructor(
    path: string,
    threads: number,
    private readonly prepare: (sql: string, params: readonly unknown[]) => [string, SQLQueryBindings[]],
    private readonly mapError: (error: unknown) => unknown,
    private readonly fallback: Queryable,
  ) {
    this.#threads = Array.from({ length: threads }, () => {
      const worker = new Worker(new URL("./search-reader-thread.ts", import.meta.url).href);
      const thread: Thread = { worker, inFlight: 0 };
      worker.onmessage = (event: MessageEvent<SearchReaderAnswer | "stopped">) => this.#answered(event.data);
      worker.addEventListener("error", () => this.#failed(thread));
      worker.postMessage({ open: path } satisfies SearchReaderMessage);
      return thread;
    });
  }

  all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.#ask("all", sql, params) as Promise<T[]>;
  }

  get<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return this.#ask("get", sql, params) as Promise<T | undefined>;
  }

  run(): Promise<number> {
    return Promise.reject(new Error("the search readers only read: writes go through the store's writer"));
  }

  /** Has each thread's connection load the planner statistics the writer has just made. */
  reloadStatistics(): void {
    for (const { worker } of this.#threads) worker.postMessage("analyze" satisfies SearchReaderMessage);
  }

  /** Closes the threads' connections and ends them; statements still unanswered are refused. */
  async close(): Promise<void> {
    await Promise.all(this.#threads.map(({ worker }) => stopThread(worker, stopWaitMs)));
    for (const asked of this.#asked.values()) asked.reject(new Error("the store closed before a search was answered"));
    this.#asked.clear();
  }

  #ask(mode: "all" | "get", sql: string, params: readonly unknown[]): Promise<unknown> {
    // Only reads: what a thread was asked may be asked again of the store's own reader.
    if (!readsOnly(sql)) return Promise.reject(new Error("the search readers only read: writes go through the store's writer"));
    if (this.#threads.length === 0) return this.fallback[mode](sql, params);
    const thread = this.#threads.reduce((least, t) => (t.inFlight < least.inFlight ? t : least));
    const id = this.#nextId++;
    const [prepared, bindings] = this.prepare(sql, params);
    return new Promise((resolve, reject) => {
      const late = setTimeout(() => this.#late(id), searchAnswerWaitMs);
      this.#asked.set(id, { late, mode, sql, params, resolve, reject, thread });
      thread.inFlight++;
      thread.worker.postMessage({ id, mode, sql: prepared, params: bindings } satisfies SearchReaderMessage);
    });
  }

  /** An answer that has not come: the store's own reader is asked instead (a late answer is dropped). */
  #late(id: number): void {
    const asked = this.#asked.get(id);
    if (asked !== undefined) this.#askStoreInstead(id, asked);
  }

  /** Drops a thread that failed; what it was asked goes to the store's own reader. */
  #failed(thread: Thread): void {
    if (!this.#threads.includes(thread)) return;
    this.#threads = this.#threads.filter((t) => t !== thread);
    thread.worker.terminate();
    for (const [id, asked] of this.#asked) if (asked.thread === thread) this.#askStoreInstead(id, asked);
  }

  /** Takes statement `id` from its thread and asks the store's own reader. */
  #askStoreInstead(id: number, asked: Asked): void {
    clearTimeout(asked.late);
    this.#asked.delete(id);
    asked.thread.inFlight--;
    this.fallback[asked.mode](asked.sql, asked.params).then(asked.resolve, asked.reject);
  }

  #answered(answer: SearchReaderAnswer | "stopped"): void {
    if (answer === "stopped") return;
    const asked = this.#asked.get(answer.id);
    if (asked === undefined) return;
    clearTimeout(asked.late);
    this.#asked.delete(answer.id);
    asked.thread.inFlight--;
    if ("rows" in answer) return asked.resolve(answer.rows);
    const error = Object.assign(new Error(answer.error.message), { name: answer.error.name, code: answer.error.code });
    asked.reject(this.mapError(error));
  }
}

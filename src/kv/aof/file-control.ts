/**
 * The append-only file's life in a running server: loaded and continued at start, started and
 * stopped by CONFIG SET appendonly, rewritten once it has grown, and closed with the server.
 *
 * Starting it at runtime is Redis's way: the file is begun empty and holds nothing until a rewrite
 * has written the whole dataset into it; until then commands reach only that rewrite (the log's
 * `awaitingBase`). A rewrite that fails is tried again by the same check that starts automatic
 * ones, with the same limit on repeated failures. Stopping it writes and syncs what is pending and
 * closes it; the file stays, as Redis leaves its own. Changes apply one at a time, in order, each
 * to whatever CONFIG says when its turn comes.
 */
import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../core/log.ts";
import type { Server } from "../kit/server.ts";
import { AppendLog, type FsyncPolicy } from "./append-log.ts";
import { loadAppendLog } from "./load.ts";
import { removeStaleRewriteFiles, rewriteDue } from "./rewrite.ts";

/** How often the file's growth is checked for an automatic rewrite (Redis's serverCron, hz 10). */
const rewriteCheckMs = 100;
/** The append-only file's name in --dir (Redis's appendfilename default). */
export const aofFileName = "appendonly.aof";

export class AofFileControl {
  readonly path: string;
  private changes: Promise<void> = Promise.resolve();
  private readonly checkTimer: ReturnType<typeof setInterval>;

  constructor(
    private readonly engine: Server,
    private readonly dir: string,
    private readonly logger: Logger,
  ) {
    this.path = join(dir, aofFileName);
    this.checkTimer = setInterval(() => this.maybeRewrite(), rewriteCheckMs);
  }

  /** At start with appendonly yes: replays the file, then continues it. */
  loadAndContinue(): void {
    mkdirSync(this.dir, { recursive: true });
    removeStaleRewriteFiles(this.dir, this.logger);
    const loaded = loadAppendLog(this.engine, this.path, this.logger, { loadTruncated: this.engine.config.get("aof-load-truncated") !== "no" });
    this.logger.info({ path: this.path, commands: loaded.commands, bytes: loaded.sizeBytes }, "append-only file loaded");
    this.engine.aof = this.open(loaded.sizeBytes, false);
    this.engine.aofBaseBytes = loaded.sizeBytes;
    // What was loaded is on disk already: no changes since the last save, as Redis counts.
    this.engine.persistence.dirtyAtLastSave = this.engine.dirty;
  }

  /** CONFIG SET appendonly changed: brings the file in line with it, after earlier changes. */
  follow(): void {
    this.changes = this.changes.then(() =>
      this.apply().catch((error: unknown) => {
        // The file could not be opened or closed (a full or read-only disk, say): INFO's
        // aof_enabled says which state the server is in, and the next change tries again.
        this.logger.error({ path: this.path, err: error }, "could not start or stop the append-only file as CONFIG SET appendonly asked");
      }),
    );
  }

  private async apply(): Promise<void> {
    const wanted = this.engine.config.get("appendonly") === "yes";
    const aof = this.engine.aof;
    if (wanted && aof === null) this.start();
    else if (!wanted && aof !== null) await this.stopFile(aof);
  }

  private start(): void {
    mkdirSync(this.dir, { recursive: true });
    // A file left from before would load stale data if the server died before the rewrite: the
    // new one begins empty (Redis's rewrite replaces its files too).
    if (existsSync(this.path)) unlinkSync(this.path);
    this.engine.aof = this.open(0, true);
    this.engine.aofBaseBytes = 0;
    this.logger.info({ path: this.path }, "append-only file started; a rewrite writes the dataset into it");
    this.startRewrite();
  }

  /** Gives up a rewrite still walking (its temporary file goes), then writes, syncs and closes the file. */
  private async stopFile(aof: AppendLog): Promise<void> {
    const rewriteEnded = this.engine.rewrite?.abort();
    // From here the log takes no more appends; close() writes and syncs what it holds.
    await aof.close();
    await rewriteEnded;
    if (this.engine.aof === aof) this.engine.aof = null;
    this.logger.info({ path: this.path }, "append-only file stopped");
  }

  private open(sizeBytes: number, awaitingBase: boolean): AppendLog {
    const path = this.path;
    const logger = this.logger;
    const log = new AppendLog(path, this.engine.config.get("appendfsync") as FsyncPolicy, sizeBytes, {
      logger,
      awaitingBase,
      latency: this.engine.latency,
      // Redis exits here too: every reply it sent was synced, and none may follow unsynced.
      onFatal: (error) => {
        logger.fatal({ path, err: error }, "cannot persist to the append-only file under appendfsync always; exiting");
        process.exit(1);
      },
    });
    log.timestamps = this.engine.config.get("aof-timestamp-enabled") === "yes";
    return log;
  }

  /** Starts a rewrite when the file has grown enough, or when a file started at runtime waits for one. */
  private maybeRewrite(): void {
    const engine = this.engine;
    const aof = engine.aof;
    // No rewrite starts beside a busy script (Redis's cron, which starts them, waits for it).
    if (aof === null || engine.rewrite !== null || aof.isClosing || engine.busyScript !== null) return;
    if (!aof.awaitingBase) {
      const percentage = Number(engine.config.get("auto-aof-rewrite-percentage"));
      const minBytes = Number(engine.config.get("auto-aof-rewrite-min-size"));
      if (!rewriteDue(aof.sizeBytes, engine.aofBaseBytes, percentage, minBytes)) return;
    }
    const allowed = engine.persistence.autoRewriteAllowed(engine.clock.nowMs(), (minutes) =>
      this.logger.warn(
        { minutes, failuresInARow: engine.persistence.rewriteFailuresInARow },
        "automatic append-only file rewrites keep failing; waiting before the next try",
      ),
    );
    if (allowed) this.startRewrite();
  }

  private startRewrite(): void {
    try {
      this.engine.startRewrite();
    } catch {
      // Logged and counted by the engine; maybeRewrite tries again, spaced out after failures.
    }
  }

  /** The server stops, after any change of CONFIG still being applied. */
  async stop(): Promise<void> {
    clearInterval(this.checkTimer);
    await this.changes;
    if (this.engine.aof !== null) await this.stopFile(this.engine.aof);
  }
}

/**
 * `svc kv`: the Redis-compatible key-value service. RESP2 on --port (6379) and the REST API
 * (src/kv/rest, docs/kv-rest.md) on --http-port (5020), over one engine.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { flag } from "../core/config.ts";
import { kvDatabasesDefault, kvRestBlockTimeoutMsMax } from "../core/limits.ts";
import { defineService } from "../service.ts";
import { AppendLog, type FsyncPolicy, fsyncPolicies } from "./aof/append-log.ts";
import { loadAppendLog } from "./aof/load.ts";
import { removeStaleRewriteFiles, rewriteDue } from "./aof/rewrite.ts";
import { Engine } from "./engine.ts";
import { startActiveExpire } from "./expire.ts";
import { NativeRespParser } from "./resp/native-parser.ts";
import { RespParser } from "./resp/parser.ts";
import { startRestServer } from "./rest/server.ts";
import { startRespServer } from "./server.ts";

/** How often the file's growth is checked for an automatic rewrite (Redis's serverCron, hz 10). */
const autoRewriteCheckMs = 100;

/**
 * Where data lives unless --dir says otherwise: a directory of its own under the working
 * directory, so `svc up` persists without setup and never scatters files where it was started.
 */
const dataDirDefault = "data/kv";

/** The append-only file's name in --dir (Redis's appendfilename default). */
const aofFileName = "appendonly.aof";

export const kvService = defineService({
  name: "kv",
  summary: "Redis-compatible key-value server (RESP2/RESP3)",
  envPrefix: "SVC_KV",
  flags: {
    port: flag.int({ default: 6379, min: 0, max: 65535, help: "RESP port (RESP2, and RESP3 after HELLO 3); 0 picks a free one (printed)" }),
    bind: flag.string({ default: "127.0.0.1", help: "address to listen on" }),
    httpPort: flag.int({ default: 5020, min: 0, max: 65535, help: "REST API port; 0 picks a free one (printed)" }),
    httpBlockTimeout: flag.duration({
      default: kvRestBlockTimeoutMsMax, min: 0, max: kvRestBlockTimeoutMsMax,
      help: "longest a blocking command (BLPOP …) over REST POST /cmd waits before answering null",
    }),
    dir: flag.string({ default: dataDirDefault, help: "directory for persistence files (created if missing)" }),
    appendonly: flag.enum({ default: "yes", choices: ["yes", "no"], help: `log every write to ${aofFileName} in --dir and replay it at start` }),
    appendfsync: flag.enum({
      default: "everysec", choices: fsyncPolicies,
      help: "always: a write is on disk before its reply (group commit); everysec: synced once a second; no: when the kernel likes",
    }),
    requirepass: flag.string({ default: "", help: "password clients must give (AUTH, or a REST bearer token); empty for none" }),
    databases: flag.int({ default: kvDatabasesDefault, min: 1, max: 1_000_000, help: "number of databases (SELECT 0..n-1)" }),
    respParser: flag.enum({
      default: "ts", choices: ["ts", "native"],
      help: "RESP request parser: TypeScript or the napi-rs scanner; they behave identically (bench/RESULTS.md has the speeds)",
    }),
  },
  async start(config, log) {
    const engine = new Engine({
      databases: config.databases,
      log,
      config: {
        port: String(config.port), bind: config.bind, dir: config.dir, requirepass: config.requirepass,
        appendonly: config.appendonly, appendfsync: config.appendfsync,
      },
    });
    if (config.appendonly === "yes") {
      mkdirSync(config.dir, { recursive: true });
      const path = join(config.dir, aofFileName);
      removeStaleRewriteFiles(config.dir, log);
      const loaded = loadAppendLog(engine, path, log);
      log.info({ path, commands: loaded.commands, bytes: loaded.sizeBytes }, "append-only file loaded");
      engine.aof = new AppendLog(path, config.appendfsync as FsyncPolicy, loaded.sizeBytes, {
        logger: log,
        // Redis exits here too: every reply it sent was synced, and none may follow unsynced.
        onFatal: (error) => {
          log.fatal({ path, err: error }, "cannot persist to the append-only file under appendfsync always; exiting");
          process.exit(1);
        },
      });
      engine.aofBaseBytes = loaded.sizeBytes;
      // What was loaded is on disk already: no changes since the last save, as Redis counts.
      engine.persistence.dirtyAtLastSave = engine.dirty;
    }
    // SHUTDOWN stops the server the way a signal does (run-service.ts), flushing what is left.
    engine.onShutdown = () => process.kill(process.pid, "SIGTERM");
    const parser = config.respParser === "native" ? NativeRespParser : RespParser;
    const resp = startRespServer(engine, config.bind, config.port, () => new parser(engine.clientLimits.bulkBytesMax));
    engine.config.set("port", String(resp.port));
    const rest = startRestServer({ engine, hostname: config.bind, port: config.httpPort, blockTimeoutMs: config.httpBlockTimeout, log });
    const stopExpire = startActiveExpire(engine);
    const autoRewrite = setInterval(() => {
      const aof = engine.aof;
      const percentage = Number(engine.config.get("auto-aof-rewrite-percentage"));
      const minBytes = Number(engine.config.get("auto-aof-rewrite-min-size"));
      if (aof === null || engine.rewrite !== null || !rewriteDue(aof.sizeBytes, engine.aofBaseBytes, percentage, minBytes)) return;
      const allowed = engine.persistence.autoRewriteAllowed(engine.clock.nowMs(), (minutes) =>
        log.warn({ minutes, failuresInARow: engine.persistence.rewriteFailuresInARow }, "automatic append-only file rewrites keep failing; waiting before the next try"),
      );
      if (!allowed) return;
      try {
        engine.startRewrite();
      } catch {
        // Logged and counted by the engine; the limit above spaces out the next tries.
      }
    }, autoRewriteCheckMs);
    log.info({ port: resp.port, httpPort: rest.port, bind: config.bind }, "kv listening (RESP2, REST)");
    return {
      endpoints: [
        { protocol: "RESP2", address: `${config.bind}:${resp.port}`, tryIt: `redis-cli -p ${resp.port} PING` },
        { protocol: "REST", address: `${rest.url}`, tryIt: `curl ${rest.url}dbsize` },
      ],
      async stop() {
        stopExpire();
        clearInterval(autoRewrite);
        resp.stop();
        await rest.stop(true);
        // A rewrite still walking is given up; its temporary file goes (Redis kills its child).
        const rewriteEnded = engine.rewrite?.abort();
        await engine.aof?.close();
        await rewriteEnded;
      },
    };
  },
});

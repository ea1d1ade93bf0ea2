/**
 * `svc kv`: the Redis-compatible key-value service. RESP2 on --port (6379) and the REST API
 * (src/kv/rest, docs/kv-rest.md) on --http-port (5020), over one engine.
 */
import { readAclFile } from "./acl/acl-file.ts";
import { flag } from "../core/config.ts";
import {
  httpIdleTimeoutSecondsDefault,
  httpIdleTimeoutSecondsMax,
  kvDatabasesDefault,
  kvRestBlockTimeoutMsDefault,
  kvRestBlockTimeoutMsMax,
} from "../core/limits.ts";
import { defineService } from "../service.ts";
import { fsyncPolicies } from "./aof/append-log.ts";
import { AofFileControl, aofFileName } from "./aof/file-control.ts";
import { startCron } from "./server/cron.ts";
import { Engine } from "./server/engine.ts";
import { NativeRespParser } from "./resp/native-parser.ts";
import { RespParser } from "./resp/parser.ts";
import { startRestServer } from "./rest/rest-server.ts";
import { startRespServer } from "./resp/resp-server.ts";
import { usedMemoryBytes } from "./observe/server-stats.ts";

/**
 * Where data lives unless --dir says otherwise: a directory of its own under the working
 * directory, so `svc up` persists without setup and never scatters files where it was started.
 */
const dataDirDefault = "data/kv";

export const kvService = defineService({
  name: "kv",
  summary: "Redis-compatible key-value server (RESP2/RESP3)",
  envPrefix: "SVC_KV",
  flags: {
    port: flag.int({ default: 6379, min: 0, max: 65535, help: "RESP port (RESP2, and RESP3 after HELLO 3); 0 picks a free one (printed)" }),
    bind: flag.string({ default: "127.0.0.1", help: "address to listen on" }),
    httpPort: flag.int({ default: 5020, min: 0, max: 65535, help: "REST API port; 0 picks a free one (printed)" }),
    httpBlockTimeout: flag.duration({
      default: kvRestBlockTimeoutMsDefault,
      min: 0,
      max: kvRestBlockTimeoutMsMax,
      help: "longest a blocking command (BLPOP …) over REST POST /cmd waits before answering its timeout reply",
    }),
    httpIdleTimeout: flag.duration({
      default: httpIdleTimeoutSecondsDefault * 1000,
      min: 1000,
      max: httpIdleTimeoutSecondsMax * 1000,
      help: "close a REST connection silent this long (whole seconds), except while a blocking command waits",
    }),
    dir: flag.string({ default: dataDirDefault, help: "directory for persistence files (created if missing)" }),
    appendonly: flag.enum({ default: "yes", choices: ["yes", "no"], help: `log every write to ${aofFileName} in --dir and replay it at start` }),
    aofLoadTruncated: flag.enum({
      default: "yes",
      choices: ["yes", "no"],
      help: "at start, load an append-only file that ends inside a command up to its last complete one (yes) or refuse to start (no)",
    }),
    aofTimestampEnabled: flag.enum({
      default: "no",
      choices: ["yes", "no"],
      help: "write #TS:<unix seconds> annotations into the append-only file, as Redis 7 does, for redis-check-aof --truncate-to-timestamp",
    }),
    appendfsync: flag.enum({
      default: "everysec",
      choices: fsyncPolicies,
      help: "always: a write is on disk before its reply (group commit); everysec: synced once a second; no: when the kernel likes",
    }),
    requirepass: flag.string({ default: "", help: "password clients must give (AUTH, or a REST bearer token); empty for none" }),
    aclfile: flag.string({ default: "", help: "ACL users file (user lines, as ACL SAVE writes them), loaded at start; empty for none" }),
    databases: flag.int({ default: kvDatabasesDefault, min: 1, max: 1_000_000, help: "number of databases (SELECT 0..n-1)" }),
    enableDebugCommand: flag.enum({
      default: "no",
      choices: ["no", "yes", "local"],
      help: "DEBUG: refused (no, Redis 7's default), allowed from this machine only (local), or allowed (yes)",
    }),
    enableModuleCommand: flag.enum({
      default: "no",
      choices: ["no", "yes", "local"],
      help: "MODULE LOAD, LOADEX and UNLOAD: refused (no, Redis 7's default), from this machine only (local), or allowed (yes); svc loads no modules either way",
    }),
    respParser: flag.enum({
      default: "ts",
      choices: ["ts", "native"],
      help: "RESP request parser: TypeScript or the napi-rs scanner; they behave identically (bench/RESULTS.md has the speeds)",
    }),
  },
  async start(config, log) {
    const engine = new Engine({
      databases: config.databases,
      log,
      config: {
        port: String(config.port),
        bind: config.bind,
        dir: config.dir,
        requirepass: config.requirepass,
        aclfile: config.aclfile,
        appendonly: config.appendonly,
        appendfsync: config.appendfsync,
        appendfilename: aofFileName,
        "aof-timestamp-enabled": config.aofTimestampEnabled,
        "aof-load-truncated": config.aofLoadTruncated,
        "enable-debug-command": config.enableDebugCommand,
        "enable-module-command": config.enableModuleCommand,
      },
    });
    // The file's users, the default user among them, replace what requirepass set, as in Redis;
    // a file that cannot be read or has a bad line stops the start.
    if (config.aclfile !== "") {
      try {
        engine.acl.replaceAll(readAclFile(config.aclfile, engine.acl));
      } catch (error) {
        throw new Error(`Aborting startup because of ACL errors: ${(error as Error).message.replace(/^ERR /, "")}`);
      }
    }
    const aofControl = new AofFileControl(engine, config.dir, log);
    if (config.appendonly === "yes") aofControl.loadAndContinue();
    engine.onAppendonly = () => aofControl.follow();
    // SHUTDOWN stops the server the way a signal does (run-service.ts), flushing what is left.
    engine.onShutdown = () => process.kill(process.pid, "SIGTERM");
    const parser = config.respParser === "native" ? NativeRespParser : RespParser;
    const beforeListening = usedMemoryBytes();
    const resp = startRespServer(engine, config.bind, config.port, () => new parser(engine.clientLimits.bulkBytesMax));
    engine.config.set("port", String(resp.port));
    // CONFIG SET port: to the port it is on, nothing changes.
    engine.onPortChange = (port) => {
      if (port !== resp.port) resp.moveTo(port);
    };
    const rest = startRestServer({
      engine,
      hostname: config.bind,
      port: config.httpPort,
      log,
      blockTimeoutMs: config.httpBlockTimeout,
      idleTimeoutSeconds: Math.ceil(config.httpIdleTimeout / 1000),
    });
    const stopCron = startCron(engine);
    engine.stats.listenersStarted(usedMemoryBytes() - beforeListening);
    log.info({ port: resp.port, httpPort: rest.port, bind: config.bind }, "kv listening (RESP2, REST)");
    return {
      endpoints: [
        { protocol: "RESP2", address: `${config.bind}:${resp.port}`, tryIt: `redis-cli -p ${resp.port} PING` },
        { protocol: "REST", address: `${rest.url}`, tryIt: `curl ${rest.url}dbsize` },
      ],
      async stop() {
        stopCron();
        resp.stop();
        await rest.stop(true);
        // A rewrite still walking is given up and its temporary file removed (Redis kills its child).
        await aofControl.stop();
      },
    };
  },
});

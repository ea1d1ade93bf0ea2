/**
 * `svc kv`: the Redis-compatible key-value service. RESP2 on --port (6379); the REST API on
 * --http-port arrives with its own module.
 */
import { flag } from "../core/config.ts";
import { kvDatabasesDefault } from "../core/limits.ts";
import { defineService } from "../service.ts";
import { Engine } from "./engine.ts";
import { startActiveExpire } from "./expire.ts";
import { NativeRespParser } from "./resp/native-parser.ts";
import { RespParser } from "./resp/parser.ts";
import { startRespServer } from "./server.ts";

export const kvService = defineService({
  name: "kv",
  summary: "Redis-compatible key-value server (RESP2/RESP3)",
  envPrefix: "SVC_KV",
  flags: {
    port: flag.int({ default: 6379, min: 0, max: 65535, help: "RESP port (RESP2, and RESP3 after HELLO 3); 0 picks a free one (printed)" }),
    bind: flag.string({ default: "127.0.0.1", help: "address to listen on" }),
    httpPort: flag.int({ default: 5020, min: 0, max: 65535, help: "REST API port (reserved: the REST API is not built yet)" }),
    dir: flag.string({ default: ".", help: "directory for persistence files" }),
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
      config: { port: String(config.port), bind: config.bind, dir: config.dir, requirepass: config.requirepass },
    });
    const parser = config.respParser === "native" ? NativeRespParser : RespParser;
    const resp = startRespServer(engine, config.bind, config.port, () => new parser(engine.clientLimits.bulkBytesMax));
    engine.config.set("port", String(resp.port));
    const stopExpire = startActiveExpire(engine);
    log.info({ port: resp.port, bind: config.bind }, "kv listening (RESP2)");
    return {
      endpoints: [{ protocol: "RESP2", address: `${config.bind}:${resp.port}`, tryIt: `redis-cli -p ${resp.port} PING` }],
      async stop() {
        stopExpire();
        resp.stop();
      },
    };
  },
});

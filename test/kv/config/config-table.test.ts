/**
 * The CONFIG table (src/kv/config/config-table.ts) row by row: every name is one Redis 7.0 knows,
 * every default is what CONFIG SET would store for it, every bound is checked at the limit and one
 * past it with Redis's words, and setting a parameter applies it to a running engine.
 */
import { describe, expect, test } from "bun:test";
import { canonicalConfigValue, configParams, configParamsByName } from "../../../src/kv/config/config-table.ts";
import { rememberedParams } from "../../../src/kv/config/remembered-params.ts";
import { Engine } from "../../../src/kv/server/engine.ts";
import { createLogger } from "../../../src/core/log.ts";

const int64Max = 9223372036854775807n;
const refusal = (name: string, why: string) => `ERR CONFIG SET failed (possibly related to argument '${name}') - ${why}`;

describe("the CONFIG table", () => {
  test("no parameter or alias is listed twice, in svc's rows and the remembered ones together", () => {
    expect(configParams.length).toBeGreaterThan(30);
    expect(rememberedParams.length).toBeGreaterThan(100);
    const names = [...configParams, ...rememberedParams].flatMap((p) => (p.alias === undefined ? [p.name] : [p.name, p.alias]));
    expect(new Set(names).size).toBe(names.length);
    expect(configParamsByName.size).toBe(names.length);
  });

  test("every default is what CONFIG SET would store for it (settable parameters)", () => {
    for (const param of [...configParams, ...rememberedParams]) {
      if (param.default === undefined || param.type.kind === "immutable" || param.type.kind === "start-only") continue;
      expect([param.name, canonicalConfigValue(param.name, param.default)]).toEqual([param.name, param.default]);
    }
  });

  test("integer and memory parameters: the lower bound is taken, one below is refused with Redis's words", () => {
    let checked = 0;
    for (const param of configParams) {
      const type = param.type;
      if (type.kind !== "integer" && type.kind !== "memory") continue;
      checked++;
      expect(canonicalConfigValue(param.name, String(type.min))).toBe(String(type.min));
      const max = type.kind === "integer" ? (type.max ?? int64Max) : int64Max;
      const below = type.min - 1;
      if (type.kind === "integer") {
        expect(() => canonicalConfigValue(param.name, String(below))).toThrow(refusal(param.name, `argument must be between ${type.min} and ${max} inclusive`));
        expect(canonicalConfigValue(param.name, String(max))).toBe(String(max));
        // Past LLONG_MAX the text is no integer at all, as for Redis's string2ll.
        const pastMax = max === int64Max ? "argument couldn't be parsed into an integer" : `argument must be between ${type.min} and ${max} inclusive`;
        expect(() => canonicalConfigValue(param.name, String(max + 1n))).toThrow(refusal(param.name, pastMax));
        expect(() => canonicalConfigValue(param.name, "ten")).toThrow(refusal(param.name, "argument couldn't be parsed into an integer"));
      } else {
        if (type.min > 0)
          expect(() => canonicalConfigValue(param.name, String(below))).toThrow(
            refusal(param.name, `argument must be between ${type.min} and ${max} inclusive`),
          );
        expect(() => canonicalConfigValue(param.name, "1tb")).toThrow(refusal(param.name, "argument must be a memory value"));
      }
    }
    expect(checked).toBeGreaterThan(15);
  });

  test("memory values take Redis's units and are stored in bytes", () => {
    expect(canonicalConfigValue("maxmemory", "1mb")).toBe("1048576");
    expect(canonicalConfigValue("maxmemory", "1M")).toBe("1000000");
    expect(canonicalConfigValue("maxmemory", "2GB")).toBe(String(2 * 1024 ** 3));
    expect(() => canonicalConfigValue("proto-max-bulk-len", "1048575")).toThrow(
      refusal("proto-max-bulk-len", `argument must be between 1048576 and ${int64Max} inclusive`),
    );
  });

  test("words, yes/no, immutable, start-only and an old name", () => {
    expect(canonicalConfigValue("maxmemory-policy", "ALLKEYS-LRU")).toBe("allkeys-lru");
    expect(() => canonicalConfigValue("appendfsync", "sometimes")).toThrow(
      refusal("appendfsync", "argument(s) must be one of the following: everysec, always, no"),
    );
    expect(canonicalConfigValue("appendonly", "YES")).toBe("yes");
    expect(() => canonicalConfigValue("appendonly", "maybe")).toThrow(refusal("appendonly", "argument must be 'yes' or 'no'"));
    expect(() => canonicalConfigValue("databases", "4")).toThrow(refusal("databases", "can't set immutable config"));
    // The port moves at run time (the engine applies it); its value is checked as an integer port.
    expect(canonicalConfigValue("port", "6380")).toBe("6380");
    expect(() => canonicalConfigValue("port", "x")).toThrow(refusal("port", "argument couldn't be parsed into an integer"));
    // Set to what it holds (CONFIG GET's value set back, as tools do): a change of nothing.
    expect(canonicalConfigValue("bind", " 127.0.0.1  ::1", "127.0.0.1 ::1")).toBe("127.0.0.1 ::1");
    expect(() => canonicalConfigValue("bind", "0.0.0.0", "127.0.0.1")).toThrow(refusal("bind", "svc sets it at start only; restart with --bind"));
    expect(canonicalConfigValue("dir", "/data", "/data")).toBe("/data");
    expect(() => canonicalConfigValue("dir", "/data/", "/data")).toThrow(refusal("dir", "svc sets it at start only; restart with --dir"));
    // lua-time-limit is checked, and worded, as busy-reply-threshold, as before the table.
    expect(() => canonicalConfigValue("lua-time-limit", "-1")).toThrow(refusal("busy-reply-threshold", `argument must be between 0 and ${int64Max} inclusive`));
    expect(canonicalConfigValue("latency-tracking-info-percentiles", "1e2  50.50")).toBe("100 50.5");
    // A remembered parameter is checked by its type too; text is kept as typed.
    expect(canonicalConfigValue("lazyfree-lazy-eviction", "Yes")).toBe("yes");
    expect(canonicalConfigValue("proc-title-template", "Redis {title}")).toBe("Redis {title}");
  });

  test("a new engine holds every default, and setting a parameter applies it", () => {
    const engine = new Engine({ databases: 16, log: createLogger({ level: "silent" }) });
    for (const param of configParams) if (param.default !== undefined) expect([param.name, engine.config.get(param.name)]).toEqual([param.name, param.default]);
    expect(engine.config.get("databases")).toBe("16");
    expect(engine.config.get("lua-time-limit")).toBe("5000");
    engine.setConfig("lua-time-limit", "250");
    expect([engine.busyReplyThresholdMs, engine.config.get("busy-reply-threshold")]).toEqual([250, "250"]);
    engine.setConfig("maxclients", "7");
    engine.setConfig("slowlog-max-len", "3");
    engine.setConfig("maxmemory-policy", "allkeys-lfu");
    engine.setConfig("lfu-log-factor", "4");
    engine.setConfig("notify-keyspace-events", "KEA");
    expect(engine.maxClients).toBe(7);
    expect(engine.slowlog.lengthMax).toBe(3);
    expect(engine.eviction.policy).toBe("allkeys-lfu");
    expect(engine.dbs[0]!.frequency).toBe(engine.frequencyConfig);
    expect(engine.frequencyConfig.logFactor).toBe(4);
    expect(engine.config.get("notify-keyspace-events")).toBe("AKE");
  });
});

// Flags and environment: every kind parses and validates, precedence is argv > env > default,
// limits hold at the bound and fail one past it, and errors name the flag or variable.
import { describe, expect, test } from "bun:test";
import { flag, formatHelp, parseConfig } from "../../src/core/config.ts";
import { SvcError } from "../../src/core/errors.ts";
import { MiB } from "../../src/core/limits.ts";

const spec = {
  port: flag.int({ default: 6379, min: 0, max: 65535, help: "RESP port" }),
  requirepass: flag.string({ help: "password", default: "" }),
  appendonly: flag.bool({ default: true, help: "keep an append-only file" }),
  logLevel: flag.enum({ default: "info", choices: ["debug", "info", "warn"] as const, help: "level", env: "SVC_LOG_LEVEL" }),
  corsOrigin: flag.list({ default: [], help: "allowed origin" }),
  maxRequestBodyBytes: flag.bytes({ default: 10 * MiB, min: 1, max: 64 * MiB, help: "body limit" }),
  binaryIdleTimeout: flag.duration({ default: 600_000, min: 1000, max: 3_600_000, help: "idle timeout" }),
};

const parse = (argv: string[], env: Record<string, string> = {}) => parseConfig(spec, argv, env, "SVC_KV");

function errorOf(fn: () => unknown): SvcError {
  try {
    fn();
  } catch (error) {
    if (error instanceof SvcError) return error;
    throw error;
  }
  throw new Error("expected an SvcError");
}

describe("parseConfig", () => {
  test("defaults apply when nothing is given", () => {
    expect(parse([]).values).toEqual({
      port: 6379,
      requirepass: "",
      appendonly: true,
      logLevel: "info",
      corsOrigin: [],
      maxRequestBodyBytes: 10 * MiB,
      binaryIdleTimeout: 600_000,
    });
  });

  test("--name value and --name=value are the same", () => {
    expect(parse(["--port", "7000"]).values.port).toBe(7000);
    expect(parse(["--port=7000"]).values.port).toBe(7000);
    expect(parse(["--requirepass=a=b"]).values.requirepass).toBe("a=b");
  });

  test("the command line beats the environment, which beats the default", () => {
    expect(parse([], { SVC_KV_PORT: "7001" }).values.port).toBe(7001);
    expect(parse(["--port", "7002"], { SVC_KV_PORT: "7001" }).values.port).toBe(7002);
    expect(parse([], { SVC_LOG_LEVEL: "debug" }).values.logLevel).toBe("debug");
  });

  test("a repeated single-valued flag keeps the last value", () => {
    expect(parse(["--port", "1", "--port", "2"]).values.port).toBe(2);
  });

  test("booleans: --x, --no-x, --x=false, and env words", () => {
    expect(parse(["--no-appendonly"]).values.appendonly).toBe(false);
    expect(parse(["--appendonly=false"]).values.appendonly).toBe(false);
    expect(parse(["--no-appendonly", "--appendonly"]).values.appendonly).toBe(true);
    for (const [text, value] of [
      ["no", false],
      ["0", false],
      ["YES", true],
      ["1", true],
    ] as const) {
      expect(parse([], { SVC_KV_APPENDONLY: text }).values.appendonly).toBe(value);
    }
    expect(errorOf(() => parse(["--appendonly=maybe"])).message).toBe('--appendonly: expected true or false, got "maybe"');
  });

  test("lists collect repeats, replace the env's list, and split env on commas", () => {
    expect(parse(["--cors-origin", "https://a", "--cors-origin=https://b"]).values.corsOrigin).toEqual(["https://a", "https://b"]);
    expect(parse([], { SVC_KV_CORS_ORIGIN: "https://a, https://b" }).values.corsOrigin).toEqual(["https://a", "https://b"]);
    expect(parse(["--cors-origin", "https://c"], { SVC_KV_CORS_ORIGIN: "https://a" }).values.corsOrigin).toEqual(["https://c"]);
  });

  test("an enum refuses values outside its choices", () => {
    expect(errorOf(() => parse(["--log-level", "loud"])).message).toBe('--log-level: expected one of debug, info, warn, got "loud"');
    expect(errorOf(() => parse([], { SVC_LOG_LEVEL: "loud" })).message).toBe('SVC_LOG_LEVEL: expected one of debug, info, warn, got "loud"');
  });

  test("int bounds: accepted at each limit, refused one past", () => {
    expect(parse(["--port", "0"]).values.port).toBe(0);
    expect(parse(["--port", "65535"]).values.port).toBe(65535);
    expect(errorOf(() => parse(["--port", "65536"])).message).toBe("--port: expected an integer from 0 to 65535, got 65536");
    expect(errorOf(() => parse(["--port", "-1"])).message).toBe("--port: expected an integer from 0 to 65535, got -1");
    for (const bad of ["1.5", "1e3", "", "0x10", "ten"]) {
      expect(errorOf(() => parse(["--port", bad])).message).toBe(`--port: expected an integer, got ${JSON.stringify(bad)}`);
    }
  });

  test("byte sizes take B, KiB, MiB and GiB, with bounds at the limit and one past", () => {
    const bytes = (text: string) => parse(["--max-request-body-bytes", text]).values.maxRequestBodyBytes;
    expect(bytes("1")).toBe(1);
    expect(bytes("512B")).toBe(512);
    expect(bytes("256KiB")).toBe(256 * 1024);
    expect(bytes("64MiB")).toBe(64 * MiB);
    expect(bytes("67108864")).toBe(64 * MiB);
    expect(errorOf(() => bytes("67108865")).message).toBe("--max-request-body-bytes: expected a size from 1B to 64MiB, got 67108865B");
    expect(errorOf(() => bytes("1GiB")).message).toBe("--max-request-body-bytes: expected a size from 1B to 64MiB, got 1GiB");
    expect(errorOf(() => bytes("0")).message).toContain("expected a size from 1B to 64MiB");
    expect(errorOf(() => bytes("10MB")).message).toContain("expected a byte size such as");
  });

  test("durations take ms, s, m and h (a bare number is ms), with bounds", () => {
    const duration = (text: string) => parse(["--binary-idle-timeout", text]).values.binaryIdleTimeout;
    expect(duration("1000")).toBe(1000);
    expect(duration("1500ms")).toBe(1500);
    expect(duration("30s")).toBe(30_000);
    expect(duration("10m")).toBe(600_000);
    expect(duration("1h")).toBe(3_600_000);
    expect(errorOf(() => duration("999")).message).toBe("--binary-idle-timeout: expected a duration from 1s to 1h, got 999ms");
    expect(errorOf(() => duration("3600001ms")).message).toBe("--binary-idle-timeout: expected a duration from 1s to 1h, got 3600001ms");
    expect(errorOf(() => duration("1.5s")).message).toContain("expected a duration such as");
  });

  test("an unknown flag is refused with the closest known one", () => {
    const error = errorOf(() => parse(["--prot", "1"]));
    expect(error.code).toBe("bad_config");
    expect(error.message).toBe("unknown flag --prot (did you mean --port?)");
    expect(errorOf(() => parse(["--zzzzzz"])).message).toBe("unknown flag --zzzzzz");
  });

  test("a flag without its value is refused", () => {
    expect(errorOf(() => parse(["--port"])).message).toBe("--port needs a value");
  });

  test("a required string flag must be given", () => {
    const required = { token: flag.string({ help: "t", required: true }) };
    expect(errorOf(() => parseConfig(required, [], {}, "X")).message).toBe("missing required flag --token");
    expect(parseConfig(required, [], { X_TOKEN: "abc" }, "X").values.token).toBe("abc");
  });

  test("positionals are returned, and everything after -- is positional", () => {
    const { values, positionals } = parse(["a", "--port", "1", "b", "--", "--port", "2"]);
    expect(values.port).toBe(1);
    expect(positionals).toEqual(["a", "b", "--port", "2"]);
  });
});

describe("formatHelp", () => {
  test("lists every flag with its spelling, default and environment variable", () => {
    const help = formatHelp(spec, "SVC_KV");
    expect(help).toContain("--port <n>");
    expect(help).toContain("RESP port (default 6379; env SVC_KV_PORT)");
    expect(help).toContain("--[no-]appendonly");
    expect(help).toContain("--log-level <debug|info|warn>");
    expect(help).toContain("(default info; env SVC_LOG_LEVEL)");
    expect(help).toContain("body limit (default 10MiB; env SVC_KV_MAX_REQUEST_BODY_BYTES)");
    expect(help).toContain("idle timeout (default 10m; env SVC_KV_BINARY_IDLE_TIMEOUT)");
    expect(help).toContain("allowed origin (repeatable; env SVC_KV_CORS_ORIGIN)");
    expect(help.split("\n")).toHaveLength(Object.keys(spec).length);
  });
});

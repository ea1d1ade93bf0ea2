/**
 * A real `svc broker` for tests: started as its own process on a free port (--bind 127.0.0.1:0)
 * over a temporary data dir, found by the address it prints, and driven with fetch.
 */
import type { Subprocess } from "bun";
import { join } from "node:path";
import { tempDir } from "../../support/temp-dir.ts";
import { brokerAddress, brokerAddresses, type SpawnedServer, spawnServer } from "../../support/spawn.ts";

const cliPath = join(import.meta.dir, "../../../src/cli.ts");

// Removed once every test file has run: a support module is loaded once for all the files that
// use it, so an afterAll here would remove it after the first of them.
const root = tempDir("svc-broker-");
let dirs = 0;

/** A fresh data dir under this test file's temporary root. */
export function freshDataDir(): string {
  return join(root, `d${++dirs}`);
}

export interface BrokerProcess {
  url: string;
  dataDir: string;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  output(): string;
  /** SIGTERM, and wait for a clean exit. */
  stop(): Promise<void>;
  /** SIGKILL: no chance to flush or close anything. */
  kill(): Promise<void>;
  /** fetch relative to the broker, JSON in (when `body` is not a string) and the parsed answer out. */
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** As `call`, with request headers (an API key), and the answer's headers. */
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
}

export async function startBroker(dataDir = freshDataDir(), flags: string[] = []): Promise<BrokerProcess> {
  const argv = [process.execPath, cliPath, "broker", "--bind", "127.0.0.1:0", "--data-dir", dataDir, "--log-level", "warn", ...flags];
  const server = await spawnServer("svc broker", argv, brokerAddress);
  return attach(server.where, dataDir, server);
}

/** The test's handle on a spawned broker whose HTTP address is `where`. */
function attach(where: string, dataDir: string, server: SpawnedServer<unknown>): BrokerProcess {
  const url = `http://${where}`;
  const send: BrokerProcess["send"] = async (method, path, body, headers = {}) => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      init.headers = { ...headers, "content-type": "application/json" };
    }
    const response = await fetch(`${url}${path}`, init);
    const raw = await response.text();
    return { status: response.status, body: raw === "" ? null : JSON.parse(raw), headers: response.headers };
  };
  return {
    url,
    dataDir,
    proc: server.proc,
    output: server.output,
    stop: server.stop,
    kill: server.kill,
    send,
    async call(method, path, body) {
      const { status, body: answer } = await send(method, path, body);
      return { status, body: answer };
    },
  };
}

/** Each partition's high watermark, to show a refused request wrote nothing. */
export async function highWatermarks(broker: BrokerProcess, topic: string, headers: Record<string, string> = {}): Promise<number[]> {
  const { body } = await broker.send("GET", `/topics/${topic}`, undefined, headers);
  return (body.partition_details as { high_watermark: number }[]).map((p) => p.high_watermark);
}

/** Every record of a partition, read to its high watermark. */
export async function readAll(broker: BrokerProcess, topic: string, partition: number, encoding = "utf8"): Promise<any[]> {
  const records: any[] = [];
  for (let offset = 0; ; ) {
    const { status, body } = await broker.call(
      "GET",
      `/topics/${topic}/consume?partition=${partition}&offset=${offset}&max_records=10000&encoding=${encoding}`,
    );
    if (status !== 200) throw new Error(`consume → ${status} ${JSON.stringify(body)}`);
    records.push(...body.records);
    if (body.next_offset >= body.high_watermark) return records;
    offset = body.next_offset;
  }
}

export interface BinaryBrokerProcess extends BrokerProcess {
  /** host and port of the SV01 listener. */
  binaryHost: string;
  binaryPort: number;
}

/** A broker with its binary listener on a free port too (--bind-binary 127.0.0.1:0). */
export async function startBinaryBroker(dataDir = freshDataDir(), flags: string[] = []): Promise<BinaryBrokerProcess> {
  const argv = [
    process.execPath,
    cliPath,
    "broker",
    "--bind",
    "127.0.0.1:0",
    "--bind-binary",
    "127.0.0.1:0",
    "--data-dir",
    dataDir,
    "--log-level",
    "warn",
    ...flags,
  ];
  const server = await spawnServer("svc broker", argv, brokerAddresses);
  const broker = await attach(server.where.http, dataDir, server);
  const [host, port] = [
    server.where.binary.slice(0, server.where.binary.lastIndexOf(":")),
    Number(server.where.binary.slice(server.where.binary.lastIndexOf(":") + 1)),
  ];
  return { ...broker, binaryHost: host, binaryPort: port };
}

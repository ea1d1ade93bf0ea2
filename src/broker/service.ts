/**
 * `svc broker`: the Kafka-style log broker's HTTP API (docs/broker.md). Topics and their
 * partitions' logs live under --data-dir and are loaded, with recovery, before the port opens.
 */
import { mkdirSync } from "node:fs";
import { flag } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import { systemClock } from "../core/clock.ts";
import {
  brokerFlushEveryRecordsDefault,
  brokerFlushEveryRecordsMax,
  brokerRecordBytesMax,
  binaryConnectionsPerAddressDefault,
  binaryHandshakeTokenBytesMax,
  binaryIdleTimeoutMs,
  binaryInFlightBytesDefault,
  binaryRequestsInFlightMax,
  binaryUnreadOutputBytesMax,
  brokerRequestBodyBytesMax,
  coordMemberTimeoutDefaultMs,
  coordMemberTimeoutMaxMs,
  coordMemberTimeoutMinMs,
  fetchBytesMax,
  fetchRecordsMax,
} from "../core/limits.ts";
import { defineService } from "../service.ts";
import { formatBindAddress, parseBindAddress } from "../core/bind-address.ts";
import { Broker } from "./broker.ts";
import { type BinaryListener, startBinaryListener } from "./binary/listener.ts";
import { startBrokerHttp } from "./http/server.ts";
import { corsOrigins, loadTls } from "./transport.ts";

/**
 * Where data lives unless --data-dir says otherwise: a directory of its own under the working
 * directory (as kv's data/kv), so `svc up` persists without setup.
 */
const dataDirDefault = "data/broker";

// The four size flags may lower the spec's limits, not raise them: the spec states them as
// maxima, and a record's frame (src/broker/log/record.ts) cannot hold more than 8 MiB anyway.
export const brokerService = defineService({
  name: "broker",
  summary: "Kafka-style log broker: topics, partitions on disk, produce and consume over HTTP",
  envPrefix: "SVC_BROKER",
  flags: {
    bind: flag.string({ default: "127.0.0.1:8080", help: "HTTP address host:port; port 0 picks a free one (printed)" }),
    dataDir: flag.string({ default: dataDirDefault, help: "directory for topics and their logs (created if missing)" }),
    flushEveryRecords: flag.int({
      default: brokerFlushEveryRecordsDefault,
      min: 1,
      max: brokerFlushEveryRecordsMax,
      help: "records written per fdatasync: 1 puts every produce on disk before its answer; above 1, the records between syncs are answered once written (they survive a crash of the process, not of the machine)",
    }),
    maxRequestBodyBytes: flag.bytes({ default: brokerRequestBodyBytesMax, min: 1, max: brokerRequestBodyBytesMax, help: "largest request body (413 past it)" }),
    maxRecordBytes: flag.bytes({
      default: brokerRecordBytesMax,
      min: 1,
      max: brokerRecordBytesMax,
      help: "largest key plus value of one record (413 past it)",
    }),
    maxFetchRecords: flag.int({ default: fetchRecordsMax, min: 1, max: fetchRecordsMax, help: "largest max_records a consume may ask for" }),
    maxFetchBytes: flag.bytes({ default: fetchBytesMax, min: 1, max: fetchBytesMax, help: "largest max_bytes a consume may ask for" }),
    auth: flag.enum({
      choices: ["off", "required"],
      default: "off",
      help: "required: every request needs an API key (Authorization: Bearer or X-Svc-Key); the first start writes an admin key to <data-dir>/bootstrap.key",
    }),
    bindBinary: flag.string({
      default: "",
      help: "address host:port of the SV01 binary protocol listener; port 0 picks a free one (printed). None: no binary listener",
    }),
    binaryIdleTimeout: flag.duration({ default: binaryIdleTimeoutMs, min: 1000, help: "a binary connection that sends nothing this long is closed" }),
    binaryMaxConnectionsPerIp: flag.int({
      default: binaryConnectionsPerAddressDefault,
      min: 1,
      max: 1_000_000,
      help: "binary connections one address may hold; one past is closed at once",
    }),
    binaryMaxInflightBytes: flag.bytes({
      default: binaryInFlightBytesDefault,
      min: 1,
      help: "request bytes running on all binary connections together; a request past it waits",
    }),
    corsOrigin: flag.list({ default: [], help: "an origin (scheme://host[:port]) whose browsers may call the API; repeatable. None: no CORS headers" }),
    tlsCert: flag.string({ default: "", help: "PEM certificate chain: serve HTTPS (needs --tls-key)" }),
    tlsKey: flag.string({ default: "", help: "PEM private key of --tls-cert" }),
    coordMemberTimeout: flag.duration({
      default: coordMemberTimeoutDefaultMs,
      min: coordMemberTimeoutMinMs,
      max: coordMemberTimeoutMaxMs,
      help: "a consumer group member not heard from for this long is removed and its group rebalances (Kafka's session.timeout.ms); heartbeat every third of it or more often",
    }),
  },
  async start(config, log) {
    const bind = parseBindAddress(config.bind);
    const binaryBind = config.bindBinary === "" ? null : parseBindAddress(config.bindBinary);
    const tls = loadTls(config.tlsCert, config.tlsKey);
    const origins = corsOrigins(config.corsOrigin);
    mkdirSync(config.dataDir, { recursive: true });
    const broker = new Broker({
      dataDir: config.dataDir,
      flushEveryRecords: config.flushEveryRecords,
      recordBytesMax: config.maxRecordBytes,
      fetchRecordsMax: config.maxFetchRecords,
      fetchBytesMax: config.maxFetchBytes,
      clock: systemClock,
      authRequired: config.auth === "required",
      memberTimeoutMs: config.coordMemberTimeout,
    });
    // The port opens before recovery, so liveness (/healthz) answers while a large data dir is
    // read and /readyz says 503 until it is done; every other request is refused with 503 meanwhile.
    let http: ReturnType<typeof startBrokerHttp>;
    try {
      http = startBrokerHttp(broker, {
        hostname: bind.hostname,
        port: bind.port,
        bodyBytesMax: config.maxRequestBodyBytes,
        corsOrigins: origins,
        tls,
        log,
      });
    } catch (error) {
      // OpenSSL's refusal of the PEM files (bad base64, a key that does not match the certificate).
      const reason = (error as { reason?: unknown }).reason;
      if (tls !== null && typeof reason === "string") throw new SvcError("bad_config", `--tls-cert and --tls-key could not be used: ${reason}`);
      throw error;
    }
    try {
      await broker.open(log);
    } catch (error) {
      await http.stop(true);
      await broker.close();
      throw error;
    }
    const address = formatBindAddress(bind.hostname, http.port);
    const protocol = tls === null ? "HTTP" : "HTTPS";
    log.info({ address, dataDir: config.dataDir, topics: broker.topics.count }, `broker listening (${protocol})`);
    const endpoints = [{ protocol, address, tryIt: `curl ${tls === null ? "http" : "https"}://${address}/healthz` }];
    let binary: BinaryListener | null = null;
    if (binaryBind !== null) {
      binary = startBinaryListener(broker, {
        hostname: binaryBind.hostname,
        port: binaryBind.port,
        tls,
        limits: {
          payloadBytesMax: config.maxRequestBodyBytes,
          tokenBytesMax: binaryHandshakeTokenBytesMax,
          inFlightPerConnection: binaryRequestsInFlightMax,
          unreadOutputBytesMax: binaryUnreadOutputBytesMax,
        },
        idleTimeoutMs: config.binaryIdleTimeout,
        connectionsPerAddressMax: config.binaryMaxConnectionsPerIp,
        inFlightBytesMax: config.binaryMaxInflightBytes,
        log,
      });
      const binaryAddress = formatBindAddress(binaryBind.hostname, binary.port);
      endpoints.push({
        protocol: tls === null ? "SV01" : "SV01+TLS",
        address: binaryAddress,
        tryIt: "the client in src/broker/binary/client.ts (docs/broker.md)",
      });
    }
    return {
      endpoints,
      async stop() {
        broker.ready = false;
        binary?.stop();
        await http.stop();
        await broker.close();
      },
    };
  },
});

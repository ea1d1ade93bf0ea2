/**
 * The CONFIG parameters Redis 7.0 has and svc does not act on: replication, cluster, TLS, the
 * active defragmenter, the compact encodings' thresholds, logging and process settings. Each is
 * checked as Redis checks it (its type, bounds and words) and remembered, and CONFIG GET reports
 * it from Redis 7.0.15's default, so that a tool reading or setting back every parameter sees
 * what it would see on Redis (docs/kv.md lists them under CONFIG SET).
 *
 * Redis's multi-word and special parameters (client-output-buffer-limit, oom-score-adj-values,
 * shutdown-on-sig*) are remembered as text, unchecked.
 */
import type { ConfigParam, ParamType } from "./config-table.ts";

const bool: ParamType = { kind: "bool" };
const text: ParamType = { kind: "text" };
const immutable: ParamType = { kind: "immutable" };
const int = (min: number, max?: bigint): ParamType => (max === undefined ? { kind: "integer", min } : { kind: "integer", min, max });
const memory = (min: number): ParamType => ({ kind: "memory", min });
const words = (...choices: string[]): ParamType => ({ kind: "enum", words: choices });

/** C's INT_MAX and INT_MIN: the bounds of Redis's int parameters. */
const intMax = 2_147_483_647n;
const intMin = -2_147_483_648;
/** The highest TCP port. */
const portMax = 65_535n;

const row = (name: string, type: ParamType, defaultValue: string, alias?: string): ConfigParam =>
  alias === undefined ? { name, type, default: defaultValue } : { name, type, default: defaultValue, alias };

export const rememberedParams: readonly ConfigParam[] = [
  // ---- the process, logging, the network (svc runs in the foreground and logs to stdout) ----
  row("daemonize", immutable, "no"),
  row("supervised", immutable, "no"),
  row("pidfile", immutable, ""),
  row("logfile", immutable, ""),
  row("loglevel", words("debug", "verbose", "notice", "warning"), "notice"),
  row("syslog-enabled", immutable, "no"),
  row("syslog-ident", immutable, "redis"),
  row("syslog-facility", immutable, "local0"),
  row("always-show-logo", immutable, "no"),
  row("set-proc-title", immutable, "yes"),
  row("proc-title-template", text, "{title} {listen-addr} {server-mode}"),
  row("crash-log-enabled", bool, "yes"),
  row("crash-memcheck-enabled", bool, "yes"),
  row("ignore-warnings", text, ""),
  row("protected-mode", bool, "yes"),
  row("tcp-backlog", immutable, "511"),
  row("unixsocket", immutable, ""),
  row("unixsocketperm", immutable, "0"),
  row("bind-source-addr", text, ""),
  row("socket-mark-id", immutable, "0"),
  row("io-threads", immutable, "1"),
  row("io-threads-do-reads", immutable, "no"),
  row("server_cpulist", immutable, ""),
  row("bio_cpulist", immutable, ""),
  row("aof_rewrite_cpulist", immutable, ""),
  row("bgsave_cpulist", immutable, ""),
  row("oom-score-adj", words("no", "yes", "relative", "absolute"), "no"),
  row("oom-score-adj-values", text, "0 200 800"),
  row("disable-thp", immutable, "yes"),
  row("jemalloc-bg-thread", bool, "yes"),
  row("shutdown-on-sigint", text, "default"),
  row("shutdown-on-sigterm", text, "default"),
  row("shutdown-timeout", int(0, intMax), "10"),
  row("client-output-buffer-limit", text, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"),
  row("maxmemory-clients", { kind: "memory-or-percent" }, "0"),
  row("maxmemory-eviction-tenacity", int(0, 100n), "10"),
  row("propagation-error-behavior", words("ignore", "panic", "panic-on-replicas"), "ignore"),
  row("sanitize-dump-payload", words("no", "yes", "clients"), "no"),

  // ---- persistence svc does its own way (one append-only file, no RDB snapshots) ----
  row("dbfilename", text, "dump.rdb"),
  row("appenddirname", immutable, "appendonlydir"),
  row("rdbcompression", bool, "yes"),
  row("rdbchecksum", immutable, "yes"),
  row("rdb-del-sync-files", bool, "no"),
  row("rdb-save-incremental-fsync", bool, "yes"),
  row("stop-writes-on-bgsave-error", bool, "yes"),
  row("aof-use-rdb-preamble", bool, "yes"),
  row("aof-rewrite-incremental-fsync", bool, "yes"),
  row("aof-disable-auto-gc", bool, "no"),
  row("no-appendfsync-on-rewrite", bool, "no"),

  // ---- memory: the list encoding's thresholds, the defragmenter, lazy freeing ----
  row("list-max-listpack-size", int(intMin, intMax), "-2", "list-max-ziplist-size"),
  row("list-compress-depth", int(0, intMax), "0"),
  row("stream-node-max-bytes", memory(0), "4096"),
  row("activerehashing", bool, "yes"),
  row("activedefrag", bool, "no"),
  row("active-defrag-ignore-bytes", memory(1), "104857600"),
  row("active-defrag-threshold-lower", int(0, 1000n), "10"),
  row("active-defrag-threshold-upper", int(0, 1000n), "100"),
  row("active-defrag-cycle-min", int(1, 99n), "1"),
  row("active-defrag-cycle-max", int(1, 99n), "25"),
  row("active-defrag-max-scan-fields", int(1), "1000"),
  row("active-expire-effort", int(1, 10n), "1"),
  row("dynamic-hz", bool, "yes"),
  row("lazyfree-lazy-eviction", bool, "no"),
  row("lazyfree-lazy-expire", bool, "no"),
  row("lazyfree-lazy-server-del", bool, "no"),
  row("lazyfree-lazy-user-del", bool, "no"),
  row("lazyfree-lazy-user-flush", bool, "no"),

  // ---- replication (svc has no replicas) ----
  row("masterauth", text, ""),
  row("masteruser", text, ""),
  row("replica-serve-stale-data", bool, "yes", "slave-serve-stale-data"),
  row("replica-read-only", bool, "yes", "slave-read-only"),
  row("replica-lazy-flush", bool, "no", "slave-lazy-flush"),
  row("replica-ignore-maxmemory", bool, "yes", "slave-ignore-maxmemory"),
  row("replica-priority", int(0, intMax), "100", "slave-priority"),
  row("replica-announce-ip", text, "", "slave-announce-ip"),
  row("replica-announce-port", int(0, portMax), "0", "slave-announce-port"),
  row("replica-announced", bool, "yes"),
  row("replica-ignore-disk-write-errors", bool, "no"),
  row("repl-ping-replica-period", int(1, intMax), "10", "repl-ping-slave-period"),
  row("repl-timeout", int(1, intMax), "60"),
  row("repl-backlog-size", memory(1), "1048576"),
  row("repl-backlog-ttl", int(0), "3600"),
  row("repl-disable-tcp-nodelay", bool, "no"),
  row("repl-diskless-sync", bool, "yes"),
  row("repl-diskless-sync-delay", int(0, intMax), "5"),
  row("repl-diskless-sync-max-replicas", int(0, intMax), "0"),
  row("repl-diskless-load", words("disabled", "on-empty-db", "swapdb"), "disabled"),

  // ---- cluster (svc is one standalone server) ----
  row("cluster-enabled", immutable, "no"),
  row("cluster-config-file", immutable, "nodes.conf"),
  row("cluster-port", immutable, "0"),
  row("cluster-node-timeout", int(0), "15000"),
  row("cluster-announce-ip", text, ""),
  row("cluster-announce-hostname", text, ""),
  row("cluster-announce-port", int(0, portMax), "0"),
  row("cluster-announce-bus-port", int(0, portMax), "0"),
  row("cluster-announce-tls-port", int(0, portMax), "0"),
  row("cluster-preferred-endpoint-type", words("ip", "hostname", "unknown-endpoint"), "ip"),
  row("cluster-replica-validity-factor", int(0, intMax), "10", "cluster-slave-validity-factor"),
  row("cluster-replica-no-failover", bool, "no", "cluster-slave-no-failover"),
  row("cluster-migration-barrier", int(0, intMax), "1"),
  row("cluster-allow-replica-migration", bool, "yes"),
  row("cluster-require-full-coverage", bool, "yes"),
  row("cluster-allow-reads-when-down", bool, "no"),
  row("cluster-allow-pubsubshard-when-down", bool, "yes"),
  row("cluster-link-sendbuf-limit", memory(0), "0"),

  // ---- Redis's own test parameters, shown only to CONFIG GET of their exact name ----
  { name: "use-exit-on-panic", type: bool, default: "no", hidden: true },
  { name: "rdb-key-save-delay", type: int(intMin, intMax), default: "0", hidden: true },
  { name: "key-load-delay", type: int(intMin, intMax), default: "0", hidden: true },
  { name: "watchdog-period", type: int(0, intMax), default: "0", hidden: true },
  { name: "loading-process-events-interval-bytes", type: int(1024, intMax), default: "2097152", hidden: true },

  // ---- TLS (svc listens in plain TCP) ----
  row("tls-port", int(0, portMax), "0"),
  row("tls-cert-file", text, ""),
  row("tls-key-file", text, ""),
  row("tls-key-file-pass", text, ""),
  row("tls-client-cert-file", text, ""),
  row("tls-client-key-file", text, ""),
  row("tls-client-key-file-pass", text, ""),
  row("tls-dh-params-file", text, ""),
  row("tls-ca-cert-file", text, ""),
  row("tls-ca-cert-dir", text, ""),
  row("tls-protocols", text, ""),
  row("tls-ciphers", text, ""),
  row("tls-ciphersuites", text, ""),
  row("tls-auth-clients", words("no", "yes", "optional"), "yes"),
  row("tls-prefer-server-ciphers", bool, "no"),
  row("tls-session-caching", bool, "yes"),
  row("tls-session-cache-size", int(0, intMax), "20480"),
  row("tls-session-cache-timeout", int(0, intMax), "300"),
  row("tls-replication", bool, "no"),
  row("tls-cluster", bool, "no"),
];

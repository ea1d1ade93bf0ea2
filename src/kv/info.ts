/**
 * INFO: the server's state in Redis's "# Section\r\nfield:value" text. Field names follow Redis
 * so monitoring tools and client libraries that parse INFO find what they look for.
 */
import { redisCompatibleVersion } from "./commands/connection.ts";
import type { Engine } from "./engine.ts";

const defaultSections = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"];
const allSections = [...defaultSections.slice(0, 7), "commandstats", ...defaultSections.slice(7)];

type Fields = [string, string | number][];

function server(engine: Engine): Fields {
  const uptimeSeconds = Math.floor((engine.clock.nowMs() - engine.startedMs) / 1000);
  return [
    ["redis_version", redisCompatibleVersion], ["redis_mode", "standalone"], ["os", `${process.platform} ${process.arch}`],
    ["arch_bits", 64], ["process_id", process.pid], ["tcp_port", engine.config.get("port") ?? "6379"],
    ["uptime_in_seconds", uptimeSeconds], ["uptime_in_days", Math.floor(uptimeSeconds / 86400)],
    ["hz", engine.config.get("hz") ?? "10"], ["executable", process.execPath], ["svc_runtime", `bun ${Bun.version}`],
  ];
}

function clients(engine: Engine): Fields {
  let pubsubClients = 0;
  for (const s of engine.sessions.values()) if (s.subscribed) pubsubClients++;
  return [
    ["connected_clients", engine.sessions.size], ["blocked_clients", engine.blocking.blockedCount],
    ["pubsub_clients", pubsubClients], ["maxclients", 10000],
  ];
}

function memory(): Fields {
  const usage = process.memoryUsage();
  return [
    ["used_memory", usage.heapUsed], ["used_memory_human", `${(usage.heapUsed / 1024 / 1024).toFixed(2)}M`],
    ["used_memory_rss", usage.rss], ["used_memory_peak", usage.rss], ["maxmemory", 0], ["maxmemory_policy", "noeviction"],
    ["mem_allocator", "bun"],
  ];
}

/**
 * Redis's fields, with svc's meaning where it differs: the "rdb" ones describe SAVE and BGSAVE,
 * which make the append-only file durable (svc writes no snapshots); nothing forks, so there is
 * no copy-on-write to report.
 */
function persistence(engine: Engine): Fields {
  const state = engine.persistence;
  const nowMs = engine.clock.nowMs();
  const aof = engine.aof;
  return [
    ["loading", 0], ["aof_enabled", aof === null || aof.isClosing ? 0 : 1],
    ["rdb_changes_since_last_save", engine.dirty - state.dirtyAtLastSave],
    ["rdb_bgsave_in_progress", state.bgsaveInProgress ? 1 : 0], ["rdb_last_save_time", Math.floor(engine.lastSaveMs / 1000)],
    ["rdb_last_bgsave_status", state.lastBgsaveOk ? "ok" : "err"], ["rdb_saves", state.saves],
    ["aof_rewrite_in_progress", engine.rewrite === null ? 0 : 1], ["aof_rewrite_scheduled", 0],
    ["aof_last_rewrite_time_sec", state.lastRewriteSeconds], ["aof_current_rewrite_time_sec", state.currentRewriteSeconds(nowMs)],
    ["aof_last_bgrewrite_status", state.lastRewriteOk ? "ok" : "err"], ["aof_rewrites", state.rewrites],
    ["aof_rewrites_consecutive_failures", state.rewriteFailuresInARow],
    ["aof_last_write_status", aof?.failureReason == null ? "ok" : "err"],
    ["aof_current_size", aof?.sizeBytes ?? 0], ["aof_base_size", engine.aofBaseBytes],
    ["aof_buffer_length", aof?.bufferedBytes ?? 0], ["aof_pending_bio_fsync", aof?.syncInFlight ? 1 : 0],
    ["aof_delayed_fsync", 0],
  ];
}

/**
 * Every field Redis 7.0 lists, in its order: monitoring reads them by name. Those of machinery svc
 * has not (replication, eviction, forks, defragmentation, client tracking, I/O threads) are 0.
 */
function stats(engine: Engine): Fields {
  const s = engine.stats;
  return [
    ["total_connections_received", s.connectionsReceived], ["total_commands_processed", s.commandsProcessed],
    ["instantaneous_ops_per_sec", s.opsPerSecond], ["total_net_input_bytes", s.netInputBytes],
    ["total_net_output_bytes", s.netOutputBytes], ["total_net_repl_input_bytes", 0], ["total_net_repl_output_bytes", 0],
    ["instantaneous_input_kbps", s.inputKbps.toFixed(2)], ["instantaneous_output_kbps", s.outputKbps.toFixed(2)],
    ["instantaneous_input_repl_kbps", "0.00"], ["instantaneous_output_repl_kbps", "0.00"], ["rejected_connections", 0],
    ["sync_full", 0], ["sync_partial_ok", 0], ["sync_partial_err", 0], ["expired_keys", s.expiredKeys],
    ["expired_stale_perc", (s.expiredStaleShare * 100).toFixed(2)], ["expired_time_cap_reached_count", s.expireTimeCapReached],
    ["expire_cycle_cpu_milliseconds", Math.floor(s.expireCycleMs)], ["evicted_keys", 0], ["evicted_clients", 0],
    ["total_eviction_exceeded_time", 0], ["current_eviction_exceeded_time", 0], ["keyspace_hits", s.keyspaceHits],
    ["keyspace_misses", s.keyspaceMisses], ["pubsub_channels", engine.pubsub.channels.size],
    ["pubsub_patterns", engine.pubsub.patterns.size], ["pubsubshard_channels", engine.pubsub.shardChannels.size],
    ["latest_fork_usec", 0], ["total_forks", 0], ["migrate_cached_sockets", 0], ["slave_expires_tracked_keys", 0],
    ["active_defrag_hits", 0], ["active_defrag_misses", 0], ["active_defrag_key_hits", 0], ["active_defrag_key_misses", 0],
    ["total_active_defrag_time", 0], ["current_active_defrag_time", 0], ["tracking_total_keys", 0],
    ["tracking_total_items", 0], ["tracking_total_prefixes", 0], ["unexpected_error_replies", 0],
    ["total_error_replies", s.errorReplies], ["dump_payload_sanitizations", 0], ["total_reads_processed", s.readsProcessed],
    ["total_writes_processed", s.writesProcessed], ["io_threaded_reads_processed", 0], ["io_threaded_writes_processed", 0],
    ["reply_buffer_shrinks", 0], ["reply_buffer_expands", 0],
  ];
}

/** Error replies by code, as errorstat_<CODE>:count=<n>, in byte order as Redis's radix tree lists them. */
function errorstats(engine: Engine): Fields {
  const codes = [...engine.stats.errorCodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return codes.map(([code, count]) => [`errorstat_${code}`, `count=${count}`]);
}

function commandstats(engine: Engine): Fields {
  return [...engine.stats.commands].map(([name, s]) => [
    `cmdstat_${name}`,
    `calls=${s.calls},usec=${Math.round(s.usec)},usec_per_call=${s.calls === 0 ? "0.00" : (s.usec / s.calls).toFixed(2)},rejected_calls=${s.rejectedCalls},failed_calls=${s.failedCalls}`,
  ]);
}

function keyspace(engine: Engine): Fields {
  return engine.dbs
    .filter((db) => db.size > 0)
    .map((db) => [`db${db.index}`, `keys=${db.size},expires=${db.expiringCount},avg_ttl=0`]);
}

const writers: Record<string, (engine: Engine) => Fields> = {
  server, clients, memory, persistence, stats, commandstats, keyspace,
  replication: () => [["role", "master"], ["connected_slaves", 0]],
  cpu: () => {
    const usage = process.cpuUsage();
    return [["used_cpu_sys", (usage.system / 1e6).toFixed(6)], ["used_cpu_user", (usage.user / 1e6).toFixed(6)]];
  },
  modules: () => [],
  errorstats,
  cluster: () => [["cluster_enabled", 0]],
};

const titles: Record<string, string> = { cpu: "CPU", commandstats: "Commandstats", errorstats: "Errorstats" };

/** INFO's text for the requested sections ("default", "all", "everything" or section names). */
export function infoText(engine: Engine, requested: readonly string[]): string {
  const words = requested.map((s) => s.toLowerCase());
  const sections = words.length === 0 || words.includes("default") ? defaultSections
    : words.includes("all") || words.includes("everything") ? allSections
    : allSections.filter((s) => words.includes(s));
  return sections
    .map((name) => {
      const title = titles[name] ?? name[0]!.toUpperCase() + name.slice(1);
      const lines = writers[name]!(engine).map(([k, v]) => `${k}:${v}\r\n`).join("");
      return `# ${title}\r\n${lines}`;
    })
    .join("\r\n");
}

/**
 * INFO: the server's state in Redis's "# Section\r\nfield:value" text. Field names follow Redis
 * so monitoring tools and client libraries that parse INFO find what they look for.
 */
import { compiledStats } from "../scripting/compiled/compiled-script.ts";
import os from "node:os";
import { redisCompatibleVersion } from "../server/version.ts";
import type { Server } from "../kit/server.ts";
import { clientBuffers } from "./client-buffers.ts";
import { humanBytes } from "../text/human-bytes.ts";
import { usedMemoryBytes } from "./server-stats.ts";

const defaultSections = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"];
/** Redis 7.0's order: the command statistics, errors and latencies between Modules and Cluster. */
const allSections = [...defaultSections.slice(0, 8), "commandstats", "errorstats", "latencystats", ...defaultSections.slice(9)];
/** Sections INFO shows only when asked for by name: svc's own. */
const namedOnlySections = ["svc"];

type Fields = [string, string | number][];

/** 40 random hex digits, as Redis's run_id and replication id: new with each process. */
const randomHexId = () => Array.from(crypto.getRandomValues(new Uint8Array(20)), (b) => b.toString(16).padStart(2, "0")).join("");
const runId = randomHexId();
const replicationId = randomHexId();
/** Stands for Redis's build id: the same for the same svc version on the same runtime. */
const buildId = Bun.hash(`${redisCompatibleVersion} bun ${Bun.version}`).toString(16).padStart(16, "0").slice(0, 16);
/** Redis's LRU clock ticks in seconds and wraps at 24 bits. */
const lruClockMax = 2 ** 24;

function server(engine: Server): Fields {
  const nowMs = engine.clock.nowMs();
  const uptimeSeconds = Math.floor((nowMs - engine.startedMs) / 1000);
  const hz = engine.config.get("hz") ?? "10";
  return [
    ["redis_version", redisCompatibleVersion],
    ["redis_git_sha1", "00000000"],
    ["redis_git_dirty", 0],
    ["redis_build_id", buildId],
    ["redis_mode", "standalone"],
    ["os", `${os.type()} ${os.release()} ${os.machine()}`],
    ["arch_bits", 64],
    ["monotonic_clock", "POSIX clock_gettime"],
    ["multiplexing_api", process.platform === "linux" ? "epoll" : "kqueue"],
    // Not built by a C compiler: these describe Redis's build, and Redis writes 0.0.0 for a compiler that is not gcc.
    ["atomicvar_api", "js-atomics"],
    ["gcc_version", "0.0.0"],
    ["process_id", process.pid],
    ["process_supervised", "no"],
    ["run_id", runId],
    ["tcp_port", engine.config.get("port") ?? "6379"],
    ["server_time_usec", nowMs * 1000],
    ["uptime_in_seconds", uptimeSeconds],
    ["uptime_in_days", Math.floor(uptimeSeconds / 86400)],
    ["hz", hz],
    ["configured_hz", hz],
    ["lru_clock", Math.floor(nowMs / 1000) % lruClockMax],
    ["executable", process.execPath],
    ["config_file", ""],
    ["io_threads_active", 0],
    ["svc_runtime", `bun ${Bun.version}`],
  ];
}

function clients(engine: Server): Fields {
  let pubsubClients = 0;
  let timedBlocked = 0;
  for (const s of engine.sessions.values()) {
    if (s.subscribed) pubsubClients++;
    if (s.blocked !== null && s.blocked.deadlineMs !== Infinity) timedBlocked++;
  }
  const { maxInput, maxOutput } = clientBuffers(engine);
  return [
    ["connected_clients", engine.sessions.size],
    ["cluster_connections", 0],
    ["maxclients", engine.maxClients],
    // The largest now, where Redis keeps the largest of the last few seconds.
    ["client_recent_max_input_buffer", maxInput],
    ["client_recent_max_output_buffer", maxOutput],
    // Clients a CLIENT PAUSE holds count too: Redis blocks them to postpone their commands.
    ["blocked_clients", engine.blocking.blockedCount + engine.clientPause.heldCount],
    ["tracking_clients", engine.tracking.clients],
    ["clients_in_timeout_table", timedBlocked],
    ["pubsub_clients", pubsubClients],
  ];
}

/**
 * Memory in Redis's fields. used_memory is the JavaScript heap and the array buffers (the key
 * tables' slabs are most of the data); the allocator fields read the same figures, since Bun does
 * not expose its allocators' own. Scripting and replication hold nothing: svc has neither.
 */
function memory(engine: Server): Fields {
  const usage = process.memoryUsage();
  const used = usedMemoryBytes(usage);
  const stats = engine.stats;
  stats.noteMemory(used);
  const usedMemoryPeak = stats.memoryPeakBytes;
  const usedMemoryStartup = Math.min(used, stats.memoryAtStartBytes);
  const dataset = used - usedMemoryStartup;
  const rss = usage.rss;
  const total = os.totalmem();
  const ratio = (a: number, b: number) => (b === 0 ? "0.00" : (a / b).toFixed(2));
  const aofBuffer = engine.aof?.bufferedBytes ?? 0;
  const maxmemory = engine.maxMemoryBytes;
  const clientBytes = clientBuffers(engine).totalBytes;
  const scripts = engine.scriptsIfStarted;
  const lua = scripts?.luaBytes ?? 0;
  const scriptBytes = scripts?.bodyBytes ?? 0;
  const functions = engine.functionsIfStarted;
  const functionsLua = functions?.luaBytes ?? 0;
  return [
    ["used_memory", used],
    ["used_memory_human", humanBytes(used)],
    ["used_memory_rss", rss],
    ["used_memory_rss_human", humanBytes(rss)],
    ["used_memory_peak", usedMemoryPeak],
    ["used_memory_peak_human", humanBytes(usedMemoryPeak)],
    ["used_memory_peak_perc", `${((used * 100) / usedMemoryPeak).toFixed(2)}%`],
    ["used_memory_overhead", used - dataset],
    ["used_memory_startup", usedMemoryStartup],
    ["used_memory_dataset", dataset],
    ["used_memory_dataset_perc", `${used === 0 ? "0.00" : ((dataset * 100) / used).toFixed(2)}%`],
    ["allocator_allocated", used],
    ["allocator_active", usage.heapTotal + usage.external],
    ["allocator_resident", rss],
    ["total_system_memory", total],
    ["total_system_memory_human", humanBytes(total)],
    ["used_memory_lua", lua],
    ["used_memory_vm_eval", lua],
    ["used_memory_lua_human", humanBytes(lua)],
    ["used_memory_scripts_eval", scriptBytes],
    ["number_of_cached_scripts", scripts?.size ?? 0],
    ["number_of_functions", functions?.functionCount ?? 0],
    ["number_of_libraries", functions?.libraries.size ?? 0],
    ["used_memory_vm_functions", functionsLua],
    ["used_memory_vm_total", lua + functionsLua],
    ["used_memory_vm_total_human", humanBytes(lua + functionsLua)],
    ["used_memory_functions", 0],
    ["used_memory_scripts", scriptBytes],
    ["used_memory_scripts_human", humanBytes(scriptBytes)],
    ["maxmemory", maxmemory],
    ["maxmemory_human", humanBytes(maxmemory)],
    ["maxmemory_policy", engine.config.get("maxmemory-policy") ?? "noeviction"],
    ["allocator_frag_ratio", ratio(usage.heapTotal + usage.external, used)],
    ["allocator_frag_bytes", usage.heapTotal - usage.heapUsed],
    ["allocator_rss_ratio", ratio(rss, usage.heapTotal + usage.external)],
    ["allocator_rss_bytes", rss - usage.heapTotal - usage.external],
    ["rss_overhead_ratio", "1.00"],
    ["rss_overhead_bytes", 0],
    ["mem_fragmentation_ratio", ratio(rss, used)],
    ["mem_fragmentation_bytes", rss - used],
    ["mem_not_counted_for_evict", aofBuffer],
    ["mem_replication_backlog", 0],
    ["mem_total_replication_buffers", 0],
    ["mem_clients_slaves", 0],
    ["mem_clients_normal", clientBytes],
    ["mem_cluster_links", 0],
    ["mem_aof_buffer", aofBuffer],
    ["mem_allocator", `bun-${Bun.version}`],
    ["active_defrag_running", 0],
    ["lazyfree_pending_objects", engine.stats.lazyFree.pendingObjects],
    ["lazyfreed_objects", engine.stats.lazyFree.freedObjects],
  ];
}

/**
 * Redis's fields, with svc's meaning where it differs: the "rdb" ones describe SAVE and BGSAVE,
 * which make the append-only file durable (svc writes no snapshots); nothing forks, so there is
 * no copy-on-write to report. The aof_ sizes show while the file is on, as in Redis.
 */
function persistence(engine: Server): Fields {
  const state = engine.persistence;
  const nowMs = engine.clock.nowMs();
  const aof = engine.aof;
  const aofOn = aof !== null && !aof.isClosing;
  const fields: Fields = [
    ["loading", 0],
    ["async_loading", 0],
    ["current_cow_peak", 0],
    ["current_cow_size", 0],
    ["current_cow_size_age", 0],
    ["current_fork_perc", "0.00"],
    ["current_save_keys_processed", 0],
    ["current_save_keys_total", 0],
    ["rdb_changes_since_last_save", engine.dirty - state.dirtyAtLastSave],
    ["rdb_bgsave_in_progress", state.bgsaveInProgress ? 1 : 0],
    ["rdb_last_save_time", Math.floor(engine.lastSaveMs / 1000)],
    ["rdb_last_bgsave_status", state.lastBgsaveOk ? "ok" : "err"],
    ["rdb_last_bgsave_time_sec", -1],
    ["rdb_current_bgsave_time_sec", -1],
    ["rdb_saves", state.saves],
    ["rdb_last_cow_size", 0],
    ["rdb_last_load_keys_expired", 0],
    ["rdb_last_load_keys_loaded", 0],
    ["aof_enabled", aofOn ? 1 : 0],
    ["aof_rewrite_in_progress", engine.rewrite === null ? 0 : 1],
    ["aof_rewrite_scheduled", 0],
    ["aof_last_rewrite_time_sec", state.lastRewriteSeconds],
    ["aof_current_rewrite_time_sec", state.currentRewriteSeconds(nowMs)],
    ["aof_last_bgrewrite_status", state.lastRewriteOk ? "ok" : "err"],
    ["aof_rewrites", state.rewrites],
    ["aof_rewrites_consecutive_failures", state.rewriteFailuresInARow],
    ["aof_last_write_status", aof?.failureReason == null ? "ok" : "err"],
    ["aof_last_cow_size", 0],
    ["module_fork_in_progress", 0],
    ["module_fork_last_cow_size", 0],
  ];
  if (!aofOn) return fields;
  return [
    ...fields,
    ["aof_current_size", aof.sizeBytes],
    ["aof_base_size", engine.aofBaseBytes],
    ["aof_pending_rewrite", 0],
    ["aof_buffer_length", aof.bufferedBytes],
    ["aof_pending_bio_fsync", aof.syncInFlight ? 1 : 0],
    ["aof_delayed_fsync", 0],
  ];
}

/**
 * A master with no replicas: the replication id is new with each process, the offsets are 0. The
 * good replicas are counted, as 0, while min-replicas-to-write and its lag are set (Redis's order).
 */
function replication(engine: Server): Fields {
  return [
    ["role", "master"],
    ["connected_slaves", 0],
    ...(engine.writesWantReplicas ? ([["min_slaves_good_slaves", 0]] as Fields) : []),
    ["master_failover_state", "no-failover"],
    ["master_replid", replicationId],
    ["master_replid2", "0".repeat(40)],
    ["master_repl_offset", 0],
    ["second_repl_offset", -1],
    ["repl_backlog_active", 0],
    ["repl_backlog_size", 1048576],
    ["repl_backlog_first_byte_offset", 0],
    ["repl_backlog_histlen", 0],
  ];
}

/** Seconds of CPU, the process's and the JavaScript thread's (which runs every command); no children are forked. */
function cpu(): Fields {
  const all = process.cpuUsage();
  const main = process.threadCpuUsage();
  const seconds = (micros: number) => (micros / 1e6).toFixed(6);
  return [
    ["used_cpu_sys", seconds(all.system)],
    ["used_cpu_user", seconds(all.user)],
    ["used_cpu_sys_children", "0.000000"],
    ["used_cpu_user_children", "0.000000"],
    ["used_cpu_sys_main_thread", seconds(main.system)],
    ["used_cpu_user_main_thread", seconds(main.user)],
  ];
}

/**
 * Every field Redis 7.0 lists, in its order: monitoring reads them by name. Those of machinery svc
 * has not (replication, eviction, forks, defragmentation, I/O threads) are 0.
 */
function stats(engine: Server): Fields {
  const s = engine.stats;
  return [
    ["total_connections_received", s.connectionsReceived],
    ["total_commands_processed", s.commandsProcessed],
    ["instantaneous_ops_per_sec", s.opsPerSecond],
    ["total_net_input_bytes", s.netInputBytes],
    ["total_net_output_bytes", s.netOutputBytes],
    ["total_net_repl_input_bytes", 0],
    ["total_net_repl_output_bytes", 0],
    ["instantaneous_input_kbps", s.inputKbps.toFixed(2)],
    ["instantaneous_output_kbps", s.outputKbps.toFixed(2)],
    ["instantaneous_input_repl_kbps", "0.00"],
    ["instantaneous_output_repl_kbps", "0.00"],
    ["rejected_connections", s.rejectedConnections],
    ["sync_full", 0],
    ["sync_partial_ok", 0],
    ["sync_partial_err", 0],
    ["expired_keys", s.expiredKeys],
    ["expired_stale_perc", (s.expiredStaleShare * 100).toFixed(2)],
    ["expired_time_cap_reached_count", s.expireTimeCapReached],
    ["expire_cycle_cpu_milliseconds", Math.floor(s.expireCycleMs)],
    ["evicted_keys", s.evictedKeys],
    ["evicted_clients", 0],
    ["total_eviction_exceeded_time", 0],
    ["current_eviction_exceeded_time", 0],
    ["keyspace_hits", s.keyspaceHits],
    ["keyspace_misses", s.keyspaceMisses],
    ["pubsub_channels", engine.pubsub.channels.size],
    ["pubsub_patterns", engine.pubsub.patterns.size],
    ["pubsubshard_channels", engine.pubsub.shardChannels.size],
    ["latest_fork_usec", 0],
    ["total_forks", 0],
    ["migrate_cached_sockets", 0],
    ["slave_expires_tracked_keys", 0],
    ["active_defrag_hits", 0],
    ["active_defrag_misses", 0],
    ["active_defrag_key_hits", 0],
    ["active_defrag_key_misses", 0],
    ["total_active_defrag_time", 0],
    ["current_active_defrag_time", 0],
    ["tracking_total_keys", engine.tracking.keys],
    ["tracking_total_items", engine.tracking.totalItems],
    ["tracking_total_prefixes", engine.tracking.prefixCount],
    ["unexpected_error_replies", 0],
    ["total_error_replies", s.errorReplies],
    ["dump_payload_sanitizations", 0],
    ["total_reads_processed", s.readsProcessed],
    ["total_writes_processed", s.writesProcessed],
    ["io_threaded_reads_processed", 0],
    ["io_threaded_writes_processed", 0],
    ["reply_buffer_shrinks", 0],
    ["reply_buffer_expands", 0],
  ];
}

/** Error replies by code, as errorstat_<CODE>:count=<n>, in byte order as Redis's radix tree lists them. */
function errorstats(engine: Server): Fields {
  const codes = [...engine.stats.errorCodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return codes.map(([code, count]) => [`errorstat_${code}`, `count=${count}`]);
}

function commandstats(engine: Server): Fields {
  return [...engine.stats.commands].map(([name, s]) => [
    `cmdstat_${name}`,
    `calls=${s.calls},usec=${Math.round(s.usec)},usec_per_call=${s.calls === 0 ? "0.00" : (s.usec / s.calls).toFixed(2)},rejected_calls=${s.rejectedCalls},failed_calls=${s.failedCalls}`,
  ]);
}

function keyspace(engine: Server): Fields {
  return engine.dbs.filter((db) => db.size > 0).map((db) => [`db${db.index}`, `keys=${db.size},expires=${db.expiringCount},avg_ttl=${db.avgTtlMs}`]);
}

/**
 * Each command's latencies at latency-tracking-info-percentiles (latency-histogram.ts), in µs
 * with three decimals, for the commands timed while latency-tracking was on.
 */
function latencystats(engine: Server): Fields {
  const percentiles = (engine.config.get("latency-tracking-info-percentiles") ?? "").split(" ").filter((w) => w !== "");
  const fields: Fields = [];
  for (const [name, stats] of engine.stats.commands) {
    const histogram = stats.latency;
    if (histogram === null) continue;
    const values = percentiles.map((p) => `p${p}=${(histogram.percentileNs(Number(p)) / 1000).toFixed(3)}`);
    fields.push([`latency_percentiles_usec_${name}`, values.join(",")]);
  }
  return fields;
}

/**
 * svc's own section, `INFO svc`, shown only when named (so every section Redis has lists exactly
 * its fields): scripts' runs on the compiled path that completed, and that left the script to
 * Lua (docs/kv.md, "Scripts compiled to JavaScript").
 */
function svc(): Fields {
  return [
    ["compiled_script_runs", compiledStats.completed],
    ["compiled_script_bails", compiledStats.bailed],
  ];
}

const writers: Record<string, (engine: Server) => Fields> = {
  svc,
  server,
  clients,
  memory,
  persistence,
  stats,
  commandstats,
  keyspace,
  replication,
  cpu,
  latencystats,
  modules: () => [],
  errorstats,
  cluster: () => [["cluster_enabled", 0]],
};

const titles: Record<string, string> = { cpu: "CPU", commandstats: "Commandstats", errorstats: "Errorstats", latencystats: "Latencystats" };

/** INFO's text for the requested sections ("default", "all", "everything" or section names). */
export function infoText(engine: Server, requested: readonly string[]): string {
  const words = requested.map((s) => s.toLowerCase());
  const sections =
    words.length === 0 || words.includes("default")
      ? defaultSections
      : words.includes("all") || words.includes("everything")
        ? allSections
        : [...allSections, ...namedOnlySections].filter((s) => words.includes(s));
  return sections
    .map((name) => {
      const title = titles[name] ?? name[0]!.toUpperCase() + name.slice(1);
      const lines = writers[name]!(engine)
        .map(([k, v]) => `${k}:${v}\r\n`)
        .join("");
      return `# ${title}\r\n${lines}`;
    })
    .join("\r\n");
}

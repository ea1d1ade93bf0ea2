/**
 * The parameter names Redis 7.0 knows (CONFIG GET *, aliases included). CONFIG SET refuses any
 * other name as Redis does ("Unknown option"), so that a misspelt parameter is an error rather
 * than a value remembered and never used. Of these, svc acts on those in config-table.ts;
 * the rest are remembered as given (docs/kv.md).
 */
export const redisConfigNames: ReadonlySet<string> = new Set(
  `
  acl-pubsub-default aclfile acllog-max-len active-defrag-cycle-max active-defrag-cycle-min
  active-defrag-ignore-bytes active-defrag-max-scan-fields active-defrag-threshold-lower
  active-defrag-threshold-upper active-expire-effort activedefrag activerehashing always-show-logo
  aof-disable-auto-gc aof-load-truncated aof-rewrite-incremental-fsync aof-timestamp-enabled
  aof-use-rdb-preamble aof_rewrite_cpulist appenddirname appendfilename appendfsync appendonly
  auto-aof-rewrite-min-size auto-aof-rewrite-percentage bgsave_cpulist bind bind-source-addr bio_cpulist
  busy-reply-threshold client-output-buffer-limit client-query-buffer-limit cluster-allow-pubsubshard-when-down
  cluster-allow-reads-when-down cluster-allow-replica-migration cluster-announce-bus-port
  cluster-announce-hostname cluster-announce-ip cluster-announce-port cluster-announce-tls-port
  cluster-config-file cluster-enabled cluster-link-sendbuf-limit cluster-migration-barrier cluster-node-timeout
  cluster-port cluster-preferred-endpoint-type cluster-replica-no-failover cluster-replica-validity-factor
  cluster-require-full-coverage cluster-slave-no-failover cluster-slave-validity-factor crash-log-enabled
  crash-memcheck-enabled daemonize databases dbfilename dir disable-thp dynamic-hz enable-debug-command
  enable-module-command enable-protected-configs hash-max-listpack-entries hash-max-listpack-value
  hash-max-ziplist-entries hash-max-ziplist-value hll-sparse-max-bytes hz ignore-warnings io-threads
  io-threads-do-reads jemalloc-bg-thread latency-monitor-threshold latency-tracking
  latency-tracking-info-percentiles lazyfree-lazy-eviction lazyfree-lazy-expire lazyfree-lazy-server-del
  lazyfree-lazy-user-del lazyfree-lazy-user-flush lfu-decay-time lfu-log-factor list-compress-depth
  list-max-listpack-size list-max-ziplist-size logfile loglevel lua-time-limit masterauth masteruser maxclients
  maxmemory maxmemory-clients maxmemory-eviction-tenacity maxmemory-policy maxmemory-samples
  min-replicas-max-lag min-replicas-to-write min-slaves-max-lag min-slaves-to-write no-appendfsync-on-rewrite
  notify-keyspace-events oom-score-adj oom-score-adj-values pidfile port proc-title-template
  propagation-error-behavior protected-mode proto-max-bulk-len rdb-del-sync-files rdb-save-incremental-fsync
  rdbchecksum rdbcompression repl-backlog-size repl-backlog-ttl repl-disable-tcp-nodelay repl-diskless-load
  repl-diskless-sync repl-diskless-sync-delay repl-diskless-sync-max-replicas repl-ping-replica-period
  repl-ping-slave-period repl-timeout replica-announce-ip replica-announce-port replica-announced
  replica-ignore-disk-write-errors replica-ignore-maxmemory replica-lazy-flush replica-priority
  replica-read-only replica-serve-stale-data replicaof requirepass sanitize-dump-payload save server_cpulist
  set-max-intset-entries set-proc-title shutdown-on-sigint shutdown-on-sigterm shutdown-timeout
  slave-announce-ip slave-announce-port slave-ignore-maxmemory slave-lazy-flush slave-priority slave-read-only
  slave-serve-stale-data slaveof slowlog-log-slower-than slowlog-max-len socket-mark-id
  stop-writes-on-bgsave-error stream-node-max-bytes stream-node-max-entries supervised syslog-enabled
  syslog-facility syslog-ident tcp-backlog tcp-keepalive timeout tls-auth-clients tls-ca-cert-dir
  tls-ca-cert-file tls-cert-file tls-ciphers tls-ciphersuites tls-client-cert-file tls-client-key-file
  tls-client-key-file-pass tls-cluster tls-dh-params-file tls-key-file tls-key-file-pass tls-port
  tls-prefer-server-ciphers tls-protocols tls-replication tls-session-cache-size tls-session-cache-timeout
  tls-session-caching tracking-table-max-keys unixsocket unixsocketperm zset-max-listpack-entries
  zset-max-listpack-value zset-max-ziplist-entries zset-max-ziplist-value
`
    .split(/\s+/)
    .filter((name) => name !== ""),
);

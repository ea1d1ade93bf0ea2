/**
 * Every bound svc enforces, in one place, units last. A limit from a spec names the spec; a limit
 * of our own says why it has its value. Each limit has a test at the limit and one past it.
 */

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

// ---- HTTP (src/http) -------------------------------------------------------------------------
/** A client-supplied X-Request-Id longer than this is replaced by one of ours. */
export const requestIdLengthMax = 64;

// ---- Process supervision (svc up) ------------------------------------------------------------
/** How long a service child may take to report where it listens before `svc up` gives up. */
export const serviceStartTimeoutMs = 30_000;
/** How long a service child may take to stop after SIGTERM before it is killed. */
export const serviceStopTimeoutMs = 10_000;

// ---- Broker (spec: broker-api.md, "Limits") --------------------------------------------------
export const brokerRequestBodyBytesMax = 10 * MiB;
export const brokerRecordBytesMax = 8 * MiB;
export const topicNameLengthMax = 200;
export const topicPartitionsMax = 10_000;
export const groupJoinTopicsMax = 100;
export const fetchRecordsDefault = 100;
export const fetchRecordsMax = 10_000;
export const fetchBytesDefault = 1 * MiB;
export const fetchBytesMax = 8 * MiB;
export const idempotentSequenceWindow = 128;
export const producerIdsPerKeyMax = 10_000;
export const producerIdleMs = 7 * 24 * 60 * 60 * 1000;
export const binaryRequestsInFlightMax = 32;
export const binaryIdleTimeoutMs = 10 * 60 * 1000;
export const binaryHandshakeTokenBytesMax = 1024;
export const groupCommitFlushIntervalMs = 1000;

// ---- Broker service (src/broker; our own bounds where the spec leaves them open) -------------
/** Default of --flush-every-records (spec: "flush ... default 1"): every produce is synced before its answer. */
export const brokerFlushEveryRecordsDefault = 1;
/**
 * Largest --flush-every-records accepted. Only 1 is acted on today (a larger value still syncs
 * every flush, which is safer than asked); the bound keeps a typo from meaning "never".
 */
export const brokerFlushEveryRecordsMax = 1_000_000;

// ---- Broker partition log (src/broker/log; our own bounds, the spec leaves them open) ----------
/** A sparse index gets an entry per this many log bytes (Kafka's index.interval.bytes). */
export const logIndexIntervalBytes = 4 * KiB;
/** Smallest segment_bytes accepted: below this, a segment would roll on nearly every flush. */
export const logSegmentBytesMin = 1 * KiB;
/**
 * Largest segment_bytes accepted. Index positions are u32; one flush may land past the roll
 * size, and 2 GiB plus the largest flush still fits in 4 GiB.
 */
export const logSegmentBytesMax = 2 * GiB;
/**
 * Bytes of produces one group-commit flush takes at most (a single larger produce still goes
 * alone): it bounds how far one write overshoots segment_bytes and how long one sync holds.
 */
export const logFlushBytesMax = 16 * MiB;

// ---- Broker retention (src/broker/retention-scheduler.ts; the spec leaves the schedule open) ----
/**
 * How often the background pass rolls aged segments and applies retention (Kafka's
 * log.retention.check.interval.ms): retention_ms is in days by default, so minutes of lateness
 * are noise, and an idle broker wakes rarely. POST /admin/run-retention runs one at once.
 */
export const retentionCheckIntervalMs = 5 * 60 * 1000;

// ---- Broker compaction (src/broker/log/compaction.ts; the spec leaves these open) ---------------
/**
 * Kept records are encoded and written to a segment's replacement in runs of about this many
 * bytes: a rewrite holds a bounded buffer, not a copy of the segment, and still writes in large
 * blocks.
 */
export const compactionWriteChunkBytes = 1 * MiB;

// ---- Media (spec: session-control-and-crm-api.md, part A "Limits") ---------------------------
export const sessionPeersMax = 256;
export const mediaRequestBodyBytesMax = 256 * KiB;
export const mediaEngineAnswerTimeoutMs = 5000;

// ---- CRM (spec: session-control-and-crm-api.md, part B "Limits") -----------------------------
export const crmPageSizeMax = 100;

// ---- kv (Redis's defaults where Redis has one) -------------------------------------------------
/** Redis's client-query-buffer-limit: a client whose unparsed input passes this is closed. */
export const kvQueryBufferBytesMax = 1 * GiB;
/** Pending replies at which we stop reading a client until it reads: its input waits in the kernel. */
export const kvOutputPauseBytes = 4 * MiB;
/** Redis's pubsub client-output-buffer hard limit: a subscriber this far behind is disconnected. */
export const kvPubsubOutputBytesMax = 32 * MiB;
/** Default number of databases (Redis's `databases`). */
export const kvDatabasesDefault = 16;
/** Active expiry runs this often (Redis's hz 10) ... */
export const kvExpireCycleIntervalMs = 100;
/** ... spending at most this long per run (25% of the interval, as Redis's slow cycle). */
export const kvExpireCycleBudgetMs = 25;
/** Keys with a time to live sampled per batch of the active cycle (Redis's 20). */
export const kvExpireSampleKeys = 20;

// ---- kv REST API (src/kv/rest; the spec leaves request limits open) ----------------------------
/**
 * Largest JSON request body: a 10 MiB value still fits after JSON escaping or base64 (4/3);
 * bigger values belong on RESP, which streams them without a JSON parse.
 */
export const kvRestBodyBytesMax = 16 * MiB;
/**
 * Longest a blocking command over POST /cmd waits before answering as a timeout. Bun.serve (in
 * src/http) closes a connection that sends nothing for 10 s, its default idleTimeout, so the
 * answer must come before that.
 */
export const kvRestBlockTimeoutMsMax = 8_000;

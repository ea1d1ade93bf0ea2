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
/** A connection that sends nothing for this long is closed, unless its request holds it open (Bun's default). */
export const httpIdleTimeoutSecondsDefault = 10;
/** The longest idle timeout Bun.serve takes. */
export const httpIdleTimeoutSecondsMax = 255;

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
/** How often producer ids unused for producerIdleMs are looked for (a week's deadline needs no more). */
export const producerIdleCheckIntervalMs = 60 * 60 * 1000;
/** How often producer ids' last-use times are written out when they changed. */
export const producerLastUsedFlushIntervalMs = 60 * 1000;

// ---- Broker binary protocol (src/broker/binary; our own bounds where the spec leaves them open) ----
/** Default of --binary-max-connections-per-ip: room for a busy client host's pools, not for a flood. */
export const binaryConnectionsPerAddressDefault = 256;
/** Default of --binary-max-inflight-bytes: request bytes running on all binary connections together. */
export const binaryInFlightBytesDefault = 64 * MiB;
/**
 * Responses a binary client has not read, bytes, before it is disconnected: four of the largest
 * consume answers (8 MiB each), so a client reading slowly but surely is never cut off.
 */
export const binaryUnreadOutputBytesMax = 32 * MiB;

// ---- Broker consumer groups (src/broker/groups; the spec leaves these open) --------------------
/** Default of --coord-member-timeout: Kafka's session.timeout.ms default since 3.0. */
export const coordMemberTimeoutDefaultMs = 45_000;
/** Least --coord-member-timeout (the floor): below it a GC pause or a slow network drops members. */
export const coordMemberTimeoutMinMs = 1000;
/** Largest --coord-member-timeout: Kafka's group.max.session.timeout.ms default (30 minutes). */
export const coordMemberTimeoutMaxMs = 30 * 60 * 1000;
/**
 * How often silent members are looked for, at most: a member is removed within this of its
 * timeout (a tenth of a short timeout, so a 1 s timeout is kept to within 10%).
 */
export const coordExpiryCheckIntervalMaxMs = 1000;

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
 * alone): it bounds how far one write overshoots segment_bytes and how long one sync holds. A
 * larger flush did not sync faster per byte: durable 1,000-record produces of 1 KiB (1 MB each,
 * 16 in flight) ran at 360–422 a second with 16 MiB flushes, 413 with 4 MiB and 626–646 with
 * 2 MiB; of 100 B (132 KB each), 4,260 with 16 MiB and 4,718 with 2 MiB.
 */
export const logFlushBytesMax = 2 * MiB;

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
/**
 * A MONITOR client this far behind is disconnected too. Redis counts monitors as normal clients,
 * with no limit, so a slow monitor on a busy server grows its memory without end; a monitor's
 * stream is the same kind of push as a subscriber's, so it gets the same bound.
 */
export const kvMonitorOutputBytesMax = 32 * MiB;
/** Default number of databases (Redis's `databases`). */
export const kvDatabasesDefault = 16;
/** The server's periodic work (cron.ts) runs this often (Redis's serverCron at hz 10). */
export const kvCronIntervalMs = 100;
/** Active expiry spends at most this long per run (25% of the interval, as Redis's slow cycle). */
export const kvExpireCycleBudgetMs = 25;
/** Keys with a time to live sampled per batch of the active cycle (Redis's 20). */
export const kvExpireSampleKeys = 20;
/**
 * UNLINK, FLUSHDB ASYNC and their kin hand a value "to the background" (INFO's lazyfreed_objects)
 * when freeing it is more work than this: Redis 7.0's LAZYFREE_THRESHOLD, in its units (elements
 * of a hash table, sorted set or stream node tree, nodes of a list).
 */
export const kvLazyFreeEffortMin = 64;
/** A list node (listpack) of Redis 7.0's default list-max-listpack-size -2 holds at most this many bytes. */
export const kvListNodeBytesMax = 8 * KiB;
/**
 * After a full collection run to reclaim a large value freed the lazy way, the next runs no sooner
 * than this: each pauses the event loop for a time that grows with the heap (~65 ms at 150 MB).
 */
export const kvLazyFreeCollectIntervalMs = 1000;
/**
 * Glob patterns: a match that reaches this many `*` (runs of them count once, a final one not at
 * all) fails, as Redis 7.0.15 with the fix for CVE-2024-31228 (Debian's build) stops its matcher's
 * recursion there. The same patterns then match the same keys, channels and names.
 */
export const kvGlobStarsMax = 1000;
/** Moving idle resizes on spends at most this long per run (Redis's activerehashing: 1 ms). */
export const kvActiveRehashBudgetMs = 1;

// ---- kv REST API (src/kv/rest; the spec leaves request limits open) ----------------------------
/**
 * Largest JSON request body: a 10 MiB value still fits after JSON escaping or base64 (4/3);
 * bigger values belong on RESP, which streams them without a JSON parse.
 */
export const kvRestBodyBytesMax = 16 * MiB;
/**
 * How long a blocking command over POST /cmd waits, by default, before answering as a timeout:
 * under the 60 s after which common proxies (nginx's proxy_read_timeout, a cloud load
 * balancer's idle timeout) give up on a silent upstream, so a default wait behind one still
 * gets its own answer.
 */
export const kvRestBlockTimeoutMsDefault = 30_000;
/** The most `--http-block-timeout` allows: a wait over HTTP still ends, as none over RESP must. */
export const kvRestBlockTimeoutMsMax = 3_600_000;

// ---- Media service (src/media; our own bounds where part A of the spec leaves them open) ------
/** Longest token accepted; a JWT of a 256-byte user and room is well under 1 KiB. */
export const mediaTokenBytesMax = 4 * KiB;
/** Longest user id or room name (in a token or in peers), in UTF-8 bytes. */
export const mediaUserIdBytesMax = 256;
/** Default lifetime of `svc media token` (one hour, as LiveKit's default). */
export const mediaTokenTtlSecondsDefault = 3600;
/** Longest lifetime `svc media token` mints: a leaked token must run out within a month. */
export const mediaTokenTtlSecondsMax = 30 * 24 * 3600;
/**
 * Receive slots one session may open. A voice client shows a few loudest speakers (3 is usual);
 * each slot is a consumer in the worker that every switch re-points, so the count is bounded.
 */
export const mediaSlotsPerSessionMax = 16;
/**
 * Delay before a dead worker is replaced. /healthz answers 503 meanwhile, and a worker that dies
 * as it starts cannot spin the CPU in a restart loop.
 */
export const mediaWorkerRestartDelayMs = 1000;
/**
 * Sessions of one room placed on one worker before the room spreads to another (its routers then
 * pipe each sender to the others). Below it a room stays on one worker, where a slot switch is one
 * request and no packet is copied between workers. bench/media.ts measures how large a room one
 * worker carries at < 1% loss.
 */
export const mediaRoomSessionsPerWorkerMax = 300;
/** How often the audio-level observer reports who is speaking (mediasoup's default is 1000). */
export const mediaAudioLevelIntervalMs = 300;
/** Average level (dBov, -127..0) at or above which a user counts as speaking. */
export const mediaSpeakingThresholdDbov = -70;
/** Lowest and highest UDP port the workers' transports use unless --rtc-min-port/--rtc-max-port say otherwise. */
export const mediaRtcPortMinDefault = 40000;
export const mediaRtcPortMaxDefault = 49999;

// ---- CRM service (src/crm; the spec leaves these open, docs/crm.md says why) --------------------
/** Largest JSON body of a CRM request: a record is a few KiB, a flow definition a few tens. */
export const crmRequestBodyBytesMax = 1 * MiB;
/** `per` when a list does not say; the spec leaves it open (Salesforce's UI lists 20-ish too). */
export const crmPageSizeDefault = 20;
/** Highest `page` a list accepts: bounds the OFFSET a client can make the database skip. */
export const crmPageMax = 100_000;
/**
 * A list's `total` counts matches up to this many and then says `total_exact: false` ("2,000 or
 * more"), as Salesforce's list views do, so no list walks every row a user can see to count them.
 * The count is most of a plain list's cost: on PostgreSQL at 100k leads a rep's list ran ~1,400
 * req/s with four clients counting to 10,000 (Elasticsearch's default), ~2,600 to 2,000. The
 * same as --search-newest-rows' default: a search looks at, and counts, as far as a list does.
 * `--list-count-max` changes it.
 */
export const crmListCountMaxDefault = 2_000;
/** The most `--list-count-max` allows: a count that large already walks a million rows. */
export const crmListCountMaxMax = 1_000_000;
/**
 * A search (q, updated_since) looks for its page among the user's this many newest records first,
 * each checked on its own row, and its `total` then says "at least" (docs/crm.md). They lie
 * together on disk (ids in order), ~0.4 µs each on SQLite, where checking each match's visibility
 * is a random read (~1.6 µs): 2,000 hold page 1 of a term one record in a hundred matches.
 * `--search-newest-rows` changes it.
 */
export const crmSearchNewestRowsDefault = 2_000;
/**
 * On SQLite a first page of a search is looked for among this share of --search-newest-rows first
 * (500 of 2,000): a term that matches none or few of them would not fill the page from the rest
 * either, and is then read from its matches at once (a failing look at 2,000 rows cost 1.3 ms of a
 * 5 ms search at 1M leads).
 */
export const crmSearchFirstLookShare = 4;
/**
 * PostgreSQL asks its owner-keyed search index once per owner whose records the user sees
 * (records/owner-search.ts) while those owners are at most one in this many of the users: at 1M
 * leads owned evenly by sixteen users, three owners' scans took 2.1 ms against 6.3 ms for one scan
 * of everyone's matches, eight took 5.0 ms, and all sixteen 12.5 ms.
 */
export const crmSearchOwnerShareMax = 3;
/** Searches a crm store remembers as rare (records/record-store.ts, rareSearches) before it starts over. */
export const crmRareSearchesMax = 10_000;
/** The most `--search-newest-rows` allows. */
export const crmSearchNewestRowsMax = 1_000_000;
/** Characters of a text or picklist value (Salesforce's text field maximum). */
export const crmTextCharsMax = 255;
/** Characters of a long text value (descriptions). */
export const crmLongTextCharsMax = 32_000;
/** Custom fields per object. */
export const crmCustomFieldsMax = 100;
/** Values of one picklist. */
export const crmPicklistValuesMax = 200;
/** Roles in the hierarchy: every request walks it in memory. */
export const crmRolesMax = 1000;
/** Sharing rules per object: each adds a term to every list query. */
export const crmSharingRulesMax = 50;
/** Conditions of one criteria-based sharing rule. */
export const crmSharingCriteriaMax = 10;
/** Terms of a search text `q`, and its characters. */
export const crmSearchTermsMax = 8;
export const crmSearchCharsMax = 200;
/**
 * Settings a crm process keeps between requests at one settings version (store/settings-cache.ts),
 * signed-in tokens included: past this many the cache starts over, so a flood of distinct tokens
 * cannot grow it without bound.
 */
export const crmSettingsCacheEntriesMax = 10_000;
/** Write transactions waiting for SQLite's one writer before new ones are refused with 503. */
export const crmWriteQueueMax = 1024;
/**
 * Requests' write transactions SQLite commits as one (store/sqlite.ts): those waiting when the
 * writer comes free. A commit cost 193 µs of a 540 µs create (WAL pages, FTS5's new segment).
 */
export const crmWriteGroupMax = 32;
/** How often the serving process's checkpointer thread copies SQLite's write-ahead log into the database (store/checkpointer.ts). */
export const crmCheckpointEveryMs = 100;
/**
 * Pages of SQLite's write-ahead log past which the writer finishes a checkpoint itself, between
 * two write transactions, so that the next one starts the log again from its beginning. The
 * checkpointer thread's checkpoints never finish while writes go on (each commit adds pages while
 * it copies), and SQLite starts the log again only after one that copied every page: under a
 * steady 3,600 creates/s the log had grown to 3.7 GB in 40 s, and every read, which looks its pages
 * up in the log's index first, got slower with it (creates fell from 3,650 to 2,700/s).
 */
export const crmSqliteLogPagesMax = 4096;
/** Bytes of SQLite's write-ahead log file kept when the log starts again (PRAGMA journal_size_limit); the rest is truncated. */
export const crmSqliteLogKeptBytes = 64 * 1024 * 1024;
/**
 * How often a SQLite store indexes the records created since its last batch (store/search-backlog.ts),
 * and the most it indexes of one object in one batch: at 3,000 creates/s a batch holds ~300, and
 * a backlog a crash or a bulk load left is worked off in steps that keep a request's wait short.
 */
export const crmSearchIndexEveryMs = 50;
export const crmSearchIndexBatchRows = 5_000;
/**
 * Threads that run a serving SQLite store's searches, each with a connection of its own
 * (store/search-readers.ts): the machines have two cores.
 */
export const crmSearchReaderThreads = 2;
/**
 * How much of the database file each SQLite connection reads through a memory map instead of
 * read() calls: a list's few thousand index probes (a search's matches against the user's access
 * rows) took 6.7 ms through SQLite's page cache and 2.5 ms mapped, at 100k leads. Address space,
 * not memory: the kernel's page cache holds the pages either way.
 */
export const crmSqliteMmapBytes = 1024 * 1024 * 1024;
/** How long SQLite waits for a lock another process (a CLI tool) holds. */
export const crmSqliteBusyTimeoutMs = 5000;
/** Connections to PostgreSQL per server process. */
export const crmPostgresPoolMax = 10;
/** Live API tokens per user. */
export const crmTokensPerUserMax = 100;
/** Characters of an API token's name (settings API and /settings page alike). */
export const crmTokenNameCharsMax = 100;
/**
 * Highest record, user, token and rule id: PostgreSQL's INTEGER, the id column of both stores. A
 * path id past it is 404 and a reference past it a 422, without asking the database.
 */
export const crmRecordIdMax = 2_147_483_647;
/** Characters of a user's sign-in password: at least 8 (NIST SP 800-63B's floor); the cap bounds argon2id's input. */
export const crmPasswordCharsMin = 8;
export const crmPasswordCharsMax = 1024;
/** Largest form post of the /settings page: a username, a password or a token name. */
export const crmSettingsFormBytesMax = 16 * KiB;
/**
 * Largest form post of the admin pages: a flow's steps as JSON (up to 50 steps, each text up to
 * 1000 characters) URL-encoded, which can triple its size.
 */
export const crmAdminFormBytesMax = 256 * KiB;
/** Rule definitions (validation, workflow, flow) per object and kind. */
export const crmRuleDefinitionsMax = 100;

// ---- CRM rules engine (src/crm/rules; the spec leaves these open, docs/crm-rules.md) ----------
/**
 * Deepest nesting of `all`/`any` groups in one condition (a bare comparison is depth 1). Real
 * criteria are two or three levels deep; the bound keeps the parser's and the evaluator's
 * recursion shallow whatever an admin sends.
 */
export const crmConditionDepthMax = 8;
/** Groups and comparisons in one condition, all levels counted: evaluation cost per save is bounded. */
export const crmConditionNodesMax = 200;
/** Values in one `in` list (a picklist rarely has more). */
export const crmConditionInValuesMax = 100;
/** Longest string an admin may put in a rule: a compared value, a template, an error message. */
export const crmRuleTextCharsMax = 1000;
/** Longest rule or flow name (Salesforce's API names stop at 80). */
export const crmRuleNameCharsMax = 80;
/** Longest field name a rule may refer to (PostgreSQL's identifier length). */
export const crmRuleFieldNameCharsMax = 63;
/** Field updates in one workflow rule. */
export const crmWorkflowUpdatesMax = 20;
/** Steps in one flow, the steps inside decision branches counted. */
export const crmFlowStepsMax = 50;
/** Decisions nested inside decision branches, at most. */
export const crmFlowDecisionDepthMax = 4;
/** Outcomes of one decision (its `else` not counted). */
export const crmFlowBranchesMax = 10;
/** Fields one create_record step may set. */
export const crmFlowCreateFieldsMax = 50;
/**
 * How many saves deep flows may nest (the API's own save is depth 0; a record a flow creates or
 * updates is saved at depth + 1). A flow that keeps triggering itself stops here with a 422 that
 * rolls the whole request back, as Salesforce stops runaway recursion with an error.
 */
export const crmFlowSaveDepthMax = 5;
/** Problems one rule definition reports at most; a huge broken body still gets a bounded answer. */
export const crmRuleProblemsMax = 100;

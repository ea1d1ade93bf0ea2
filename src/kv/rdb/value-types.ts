/** The RDB type bytes of the values DUMP writes and RESTORE reads (Redis's RDB_TYPE_*). */
export const rdbType = {
  string: 0,
  list: 1,
  set: 2,
  /** A sorted set with its scores as text (before RDB 8). */
  zsetText: 3,
  hash: 4,
  /** A sorted set with binary scores. */
  zset: 5,
  hashZipmap: 9,
  listZiplist: 10,
  setIntset: 11,
  zsetZiplist: 12,
  hashZiplist: 13,
  /** A list as ziplist nodes (Redis 3.2–6). */
  listQuicklist: 14,
  hashListpack: 16,
  zsetListpack: 17,
  /** A list as nodes that are listpacks or single plain items (Redis 7). */
  listQuicklist2: 18,
  setListpack: 20,
  /** A stream: listpack nodes, its IDs and its consumer groups (Redis 5–6). */
  streamListpacks: 15,
  /** The same with Redis 7.0's first and deleted IDs, entries added and groups' read counts. */
  streamListpacks2: 19,
  /** The same with Redis 7.2's consumer active times. */
  streamListpacks3: 21,
} as const;

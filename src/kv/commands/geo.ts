/**
 * The GEO commands. A GEO key is an ordinary sorted set whose scores are 52-bit geohashes
 * (geohash.ts), so TYPE says zset and every Z command works on it; these commands only encode
 * positions into scores and search score ranges (search.ts).
 *
 * Argument handling follows Redis 7.0's geo.c: GEOADD's options, then each position checked in
 * turn; the search commands look the key up first (WRONGTYPE wins over bad arguments), then read
 * options left to right and answer the first bad one, then check the combinations. Replies are
 * written as Redis writes them: distances "%.4f", coordinates to 17 decimal places (format.ts).
 */
import { parseFloatArg, parseInt64 } from "../text/args.ts";
import { getZSet, replyStrings, storeResult } from "../kit/lookup.ts";
import { type CommandSpec, type Exec, keyAndOptionKeys } from "../kit/spec.ts";
import { KvError, notAnInteger, syntaxError } from "../text/errors.ts";
import { ZSet } from "../types/zset/zset.ts";
import { distanceM, parseUnit } from "../types/geo/distance.ts";
import { formatDistance, formatHuman, formatPrintf } from "../types/geo/format.ts";
import { decodeScore, geohashString, isValidPosition, scoreAsInteger, scoreOf } from "../types/geo/geohash.ts";
import { optionWord as word } from "../types/geo/option-word.ts";
import { cellsToScan, type GeoPoint, membersInShape, type Shape } from "../types/geo/search.ts";
import { type Compare, mergeSort, partialQuickSort } from "../types/geo/geo-sort.ts";

// ---- arguments ----------------------------------------------------------------------------------

/** A double argument with Redis's "ERR <message>" in place of the generic float error. */
function parseNumber(text: string, message: string): number {
  try {
    return parseFloatArg(text);
  } catch {
    throw new KvError(`ERR ${message}`);
  }
}

/** A longitude, latitude pair, checked against the Mercator limits. */
function parsePosition(longitudeText: string, latitudeText: string): [number, number] {
  const longitude = parseFloatArg(longitudeText);
  const latitude = parseFloatArg(latitudeText);
  if (!isValidPosition(longitude, latitude)) {
    throw new KvError(`ERR invalid longitude,latitude pair ${formatPrintf(longitude)},${formatPrintf(latitude)}`);
  }
  return [longitude, latitude];
}

/** A radius and its unit: [radius in the unit, meters per unit]. */
function parseRadius(radiusText: string, unitText: string): [number, number] {
  const radius = parseNumber(radiusText, "need numeric radius");
  if (radius < 0) throw new KvError("ERR radius cannot be negative");
  return [radius, parseUnit(unitText)];
}

/** A box's width, height and unit: [width, height, meters per unit]. */
function parseBox(widthText: string, heightText: string, unitText: string): [number, number, number] {
  const width = parseNumber(widthText, "need numeric width");
  const height = parseNumber(heightText, "need numeric height");
  if (height < 0 || width < 0) throw new KvError("ERR height or width cannot be negative");
  return [width, height, parseUnit(unitText)];
}

const noMember = () => new KvError("ERR could not decode requested zset member");

/** A member's position; Redis's error when the set does not hold it. */
function memberPosition(zset: ZSet, member: string): [number, number] {
  const score = zset.score(member);
  if (score === undefined) throw noMember();
  return decodeScore(score);
}

// ---- replies ------------------------------------------------------------------------------------

/**
 * A coordinate reply (Redis's addReplyHumanLongDouble): a bulk string in RESP2, a RESP3 double
 * in RESP3 — both with the 17-decimal text, not the `%.17g` of other doubles.
 */
function replyCoordinate(x: Exec, value: number): void {
  x.reply.double(value, formatHuman(value));
}

function replyPosition(x: Exec, position: [number, number]): void {
  x.reply.array(2);
  replyCoordinate(x, position[0]);
  replyCoordinate(x, position[1]);
}

// ---- GEOADD -------------------------------------------------------------------------------------

function geoadd(x: Exec, argv: string[]): void {
  let nx = false;
  let xx = false;
  let ch = false;
  let first = 2;
  for (; first < argv.length; first++) {
    const option = word(argv[first]!);
    if (option === "nx") nx = true;
    else if (option === "xx") xx = true;
    else if (option === "ch") ch = true;
    else break;
  }
  const rest = argv.length - first;
  // No positions at all is ZADD's syntax error in Redis (GEOADD hands its work to ZADD).
  if (rest % 3 !== 0 || (nx && xx) || rest === 0) throw syntaxError();
  const scores: number[] = [];
  for (let i = first; i < argv.length; i += 3) scores.push(scoreOf(...parsePosition(argv[i]!, argv[i + 1]!)));

  const key = argv[1]!;
  const existing = getZSet(x, key);
  if (existing === undefined && xx) return x.reply.integer(0);
  const zset = existing ?? new ZSet();
  let added = 0;
  let updated = 0;
  scores.forEach((score, n) => {
    const member = argv[first + 3 * n + 2]!;
    const current = zset.score(member);
    if (current === undefined ? xx : nx) return;
    if (current === undefined) added++;
    else if (current !== score) updated++;
    else return;
    zset.set(member, score);
  });
  if (existing === undefined) x.db.set(key, zset);
  else if (added + updated > 0) x.db.modified(key);
  // Redis's GEOADD hands its work to ZADD, whose event this is.
  if (added + updated > 0) x.db.notify("zadd", key);
  x.reply.integer(ch ? added + updated : added);
}

// ---- GEOPOS, GEOHASH, GEODIST -------------------------------------------------------------------

function geopos(x: Exec, argv: string[]): void {
  const zset = getZSet(x, argv[1]!);
  x.reply.array(argv.length - 2);
  for (let i = 2; i < argv.length; i++) {
    const score = zset?.score(argv[i]!);
    if (score === undefined) x.reply.array(null);
    else replyPosition(x, decodeScore(score));
  }
}

function geohash(x: Exec, argv: string[]): void {
  const zset = getZSet(x, argv[1]!);
  const hashes = argv.slice(2).map((member) => {
    const score = zset?.score(member);
    return score === undefined ? null : geohashString(...decodeScore(score));
  });
  replyStrings(x, hashes);
}

function geodist(x: Exec, argv: string[]): void {
  // The unit is checked before the key is looked up.
  let unitM = 1;
  if (argv.length === 5) unitM = parseUnit(argv[4]!);
  else if (argv.length > 5) throw syntaxError();
  const zset = getZSet(x, argv[1]!);
  const score1 = zset?.score(argv[2]!);
  const score2 = zset?.score(argv[3]!);
  if (score1 === undefined || score2 === undefined) return x.reply.bulk(null);
  const [longitude1, latitude1] = decodeScore(score1);
  const [longitude2, latitude2] = decodeScore(score2);
  x.reply.bulk(formatDistance(distanceM(longitude1, latitude1, longitude2, latitude2) / unitM));
}

// ---- GEORADIUS, GEORADIUSBYMEMBER, GEOSEARCH, GEOSEARCHSTORE -------------------------------------

/** Which command of the search family is running, as Redis's georadiusGeneric flags say. */
interface SearchCommand {
  /** Where the centre comes from: fixed arguments (GEORADIUS*) or FROM* options (GEOSEARCH*). */
  centre: "position" | "member" | "options";
  /** STORE/STOREDIST key options (GEORADIUS, GEORADIUSBYMEMBER), none (the _RO forms and GEOSEARCH), or GEOSEARCHSTORE's destination. */
  store: "options" | "none" | "destination";
}

type Sort = "none" | "asc" | "desc";

type StoreEvent = "georadiusstore" | "geosearchstore";

/** The keyspace event of a search that stores: GEOSEARCHSTORE's own, or GEORADIUS* … STORE's. */
const storeEvent = (c: SearchCommand): StoreEvent => (c.store === "destination" ? "geosearchstore" : "georadiusstore");

interface SearchRequest {
  /** Partly filled until the options are read; complete once validated. */
  shape: { -readonly [K in keyof Shape]: Shape[K] };
  storeKey: string | null;
  storeDistance: boolean;
  withDistance: boolean;
  withHash: boolean;
  withCoordinates: boolean;
  sort: Sort;
  /** 0: no COUNT. */
  count: number;
  any: boolean;
  fromMember: boolean;
  fromPosition: boolean;
  byRadius: boolean;
  byBox: boolean;
}

function newRequest(): SearchRequest {
  return {
    shape: { kind: "radius", longitude: 0, latitude: 0, radius: 0, width: 0, height: 0, unitM: 1 },
    storeKey: null,
    storeDistance: false,
    withDistance: false,
    withHash: false,
    withCoordinates: false,
    sort: "none",
    count: 0,
    any: false,
    fromMember: false,
    fromPosition: false,
    byRadius: false,
    byBox: false,
  };
}

function parseCount(text: string): number {
  const count = parseInt64(text);
  if (count === null) throw notAnInteger();
  if (count <= 0n) throw new KvError("ERR COUNT must be > 0");
  return Number(count);
}

/**
 * Reads the optional arguments from `at` on, left to right, answering the first bad one. Each
 * option that takes values is recognised only when its values are all present (else it is a
 * syntax error), and FROMMEMBER/FROMLONLAT and BYRADIUS/BYBOX exclude each other by order.
 */
function parseOptions(argv: string[], at: number, c: SearchCommand, zset: ZSet | undefined, r: SearchRequest): void {
  const shape = r.shape;
  const search = c.centre === "options";
  for (let i = at; i < argv.length; i++) {
    const option = word(argv[i]!);
    const left = argv.length - i - 1;
    if (option === "withdist") r.withDistance = true;
    else if (option === "withhash") r.withHash = true;
    else if (option === "withcoord") r.withCoordinates = true;
    else if (option === "any") r.any = true;
    else if (option === "asc") r.sort = "asc";
    else if (option === "desc") r.sort = "desc";
    else if (option === "count" && left >= 1) r.count = parseCount(argv[++i]!);
    else if ((option === "store" || option === "storedist") && left >= 1 && c.store === "options") {
      r.storeKey = argv[++i]!;
      r.storeDistance = option === "storedist";
    } else if (option === "storedist" && c.store === "destination") r.storeDistance = true;
    else if (option === "frommember" && left >= 1 && search && !r.fromPosition) {
      const member = argv[++i]!;
      // Without a key the member cannot be looked up; the options are still read for their errors.
      if (zset !== undefined) [shape.longitude, shape.latitude] = memberPosition(zset, member);
      r.fromMember = true;
    } else if (option === "fromlonlat" && left >= 2 && search && !r.fromMember) {
      [shape.longitude, shape.latitude] = parsePosition(argv[i + 1]!, argv[i + 2]!);
      r.fromPosition = true;
      i += 2;
    } else if (option === "byradius" && left >= 2 && search && !r.byBox) {
      [shape.radius, shape.unitM] = parseRadius(argv[i + 1]!, argv[i + 2]!);
      shape.kind = "radius";
      r.byRadius = true;
      i += 2;
    } else if (option === "bybox" && left >= 3 && search && !r.byRadius) {
      [shape.width, shape.height, shape.unitM] = parseBox(argv[i + 1]!, argv[i + 2]!, argv[i + 3]!);
      shape.kind = "box";
      r.byBox = true;
      i += 3;
    } else throw syntaxError();
  }
}

/** The option combinations Redis refuses, in the order it checks them. */
function checkCombinations(argv: string[], c: SearchCommand, r: SearchRequest): void {
  if (r.storeKey !== null && (r.withDistance || r.withHash || r.withCoordinates)) {
    const what = c.store === "destination" ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS";
    throw new KvError(`ERR ${what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options`);
  }
  // Redis names the command as the client spelled it.
  if (c.centre === "options" && !(r.fromMember || r.fromPosition)) {
    throw new KvError(`ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for ${argv[0]}`);
  }
  if (c.centre === "options" && !(r.byRadius || r.byBox)) {
    throw new KvError(`ERR exactly one of BYRADIUS and BYBOX can be specified for ${argv[0]}`);
  }
  if (r.any && r.count === 0) throw new KvError("ERR the ANY argument requires COUNT argument");
}

/** Reads and checks a search command's arguments (Redis's georadiusGeneric up to the search). */
function parseSearch(x: Exec, argv: string[], c: SearchCommand): { zset: ZSet | undefined; request: SearchRequest } {
  const keyIndex = c.store === "destination" ? 2 : 1;
  const zset = getZSet(x, argv[keyIndex]!);
  const r = newRequest();
  const shape = r.shape;
  let optionsAt: number;
  if (c.centre === "position") {
    [shape.longitude, shape.latitude] = parsePosition(argv[2]!, argv[3]!);
    [shape.radius, shape.unitM] = parseRadius(argv[4]!, argv[5]!);
    optionsAt = 6;
  } else if (c.centre === "member") {
    // Without a key Redis neither looks the member up nor reads the radius.
    if (zset !== undefined) {
      [shape.longitude, shape.latitude] = memberPosition(zset, argv[2]!);
      [shape.radius, shape.unitM] = parseRadius(argv[3]!, argv[4]!);
    }
    optionsAt = 5;
  } else {
    optionsAt = keyIndex + 1;
    if (c.store === "destination") r.storeKey = argv[1]!;
  }
  parseOptions(argv, optionsAt, c, zset, r);
  checkCombinations(argv, c, r);
  return { zset, request: r };
}

const byDistance: Compare<GeoPoint> = (a, b) => (a.distance > b.distance ? 1 : a.distance === b.distance ? 0 : -1);
const byDistanceDescending: Compare<GeoPoint> = (a, b) => -byDistance(a, b);

/** Orders the first `wanted` points as Redis does: a full stable sort, or a partial quicksort. */
function sortPoints(points: GeoPoint[], sort: Sort, wanted: number): void {
  if (sort === "none") return;
  const compare = sort === "asc" ? byDistance : byDistanceDescending;
  if (wanted === points.length) mergeSort(points, compare);
  else partialQuickSort(points, compare, wanted - 1);
}

function replyPoints(x: Exec, points: readonly GeoPoint[], r: SearchRequest): void {
  const extras = Number(r.withDistance) + Number(r.withHash) + Number(r.withCoordinates);
  x.reply.array(points.length);
  for (const point of points) {
    if (extras > 0) x.reply.array(extras + 1);
    x.reply.bulk(point.member);
    if (r.withDistance) x.reply.bulk(formatDistance(point.distance));
    if (r.withHash) x.reply.integer(scoreAsInteger(point.score));
    if (r.withCoordinates) replyPosition(x, [point.longitude, point.latitude]);
  }
}

function storePoints(x: Exec, key: string, points: readonly GeoPoint[], storeDistance: boolean, event: StoreEvent): void {
  // Built as a skiplist and compacted when small, as Redis builds it.
  const result = new ZSet(false);
  for (const point of points) {
    const score = storeDistance ? point.distance : point.score;
    // A NaN distance (asin just past 1, for nearly antipodal points) cannot be ordered; Redis
    // stores it anyway, with undefined order. We leave such members out rather than corrupt the set.
    if (!Number.isNaN(score)) result.set(point.member, score);
  }
  result.compactIfSmall();
  storeResult(x, key, result, event);
}

function geosearchGeneric(x: Exec, argv: string[], c: SearchCommand): void {
  const { zset, request: r } = parseSearch(x, argv, c);
  if (zset === undefined) {
    if (r.storeKey !== null) storeResult(x, r.storeKey, new ZSet(), storeEvent(c));
    else x.reply.array(0);
    return;
  }
  // COUNT asks for the nearest ones, so it sorts ascending unless told otherwise; ANY does not.
  if (r.count !== 0 && r.sort === "none" && !r.any) r.sort = "asc";
  const shape: Shape = r.shape;
  const points = membersInShape(zset, shape, cellsToScan(shape), r.any ? r.count : 0);
  const wanted = r.count === 0 || points.length < r.count ? points.length : r.count;
  sortPoints(points, r.sort, wanted);
  const returned = points.slice(0, wanted);
  for (const point of returned) point.distance /= shape.unitM;
  if (r.storeKey === null) replyPoints(x, returned, r);
  else storePoints(x, r.storeKey, returned, r.storeDistance, storeEvent(c));
}

// ---- declarations -------------------------------------------------------------------------------

const group = "geo" as const;
const one: readonly [number, number, number] = [1, 1, 1];

const search = (name: string, arity: number, c: SearchCommand, summary: string): CommandSpec => ({
  name,
  arity,
  flags: c.store === "none" ? ["readonly"] : ["write", "denyoom", ...(c.store === "options" ? (["movablekeys"] as const) : [])],
  group,
  summary,
  keys: c.store === "destination" ? [1, 2, 1] : one,
  ...(c.store === "options" ? { movableKeys: keyAndOptionKeys(5, ["STORE", "STOREDIST"]) } : {}),
  run: (x, argv) => geosearchGeneric(x, argv, c),
});

export const geoCommands: readonly CommandSpec[] = [
  { name: "geoadd", arity: -5, flags: ["write", "denyoom"], group, summary: "Adds one or more members to a geospatial index.", keys: one, run: geoadd },
  {
    name: "geopos",
    arity: -2,
    flags: ["readonly"],
    group,
    summary: "Returns the longitude and latitude of members of a geospatial index.",
    keys: one,
    run: geopos,
  },
  { name: "geohash", arity: -2, flags: ["readonly"], group, summary: "Returns members of a geospatial index as geohash strings.", keys: one, run: geohash },
  {
    name: "geodist",
    arity: -4,
    flags: ["readonly"],
    group,
    summary: "Returns the distance between two members of a geospatial index.",
    keys: one,
    run: geodist,
  },
  search(
    "georadius",
    -6,
    { centre: "position", store: "options" },
    "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.",
  ),
  search("georadius_ro", -6, { centre: "position", store: "none" }, "Returns members from a geospatial index that are within a distance from a coordinate."),
  search(
    "georadiusbymember",
    -5,
    { centre: "member", store: "options" },
    "Queries a geospatial index for members within a distance from a member, optionally stores the result.",
  ),
  search("georadiusbymember_ro", -5, { centre: "member", store: "none" }, "Returns members from a geospatial index that are within a distance from a member."),
  search("geosearch", -7, { centre: "options", store: "none" }, "Queries a geospatial index for members inside an area of a box or a circle."),
  search(
    "geosearchstore",
    -8,
    { centre: "options", store: "destination" },
    "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.",
  ),
];

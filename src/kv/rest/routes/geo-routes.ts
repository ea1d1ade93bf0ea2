/**
 * Geospatial indexes: GEOADD, GEOPOS, GEODIST and GEOSEARCH under /geo/{key}. Coordinates and
 * distances come back as JSON numbers (GEODIST's and WITHDIST's text parsed, RESP3's doubles as
 * they are), so clients do no parsing of their own.
 */
import { SvcError } from "../../../core/errors.ts";
import { type Body, bytesField, integerField, numberField, objectListField, optionalBooleanField, optionalWordField } from "../body-fields.ts";
import type { Json } from "../json-reply.ts";
import { notFound, type RestRoutes, result, runAndAnswer, outcomeValue } from "../request.ts";

const searchFields = [
  "longitude",
  "latitude",
  "member",
  "radius",
  "width",
  "height",
  "unit",
  "count",
  "any",
  "sort",
  "withcoord",
  "withdist",
  "withhash",
] as const;

const bad = (message: string) => new SvcError("bad_request", message);

/** GEOSEARCH's FROM… and BY… arguments: one centre (a position or a member), one shape (a radius or a box). */
function searchArea(body: Body, unit: string): string[] {
  const position = body.longitude !== undefined || body.latitude !== undefined;
  if (position === (body.member !== undefined)) throw bad("give either 'longitude' and 'latitude', or 'member', as the centre");
  const centre = position ? ["FROMLONLAT", numberField(body, "longitude"), numberField(body, "latitude")] : ["FROMMEMBER", bytesField(body, "member")];
  const box = body.width !== undefined || body.height !== undefined;
  if (box === (body.radius !== undefined)) throw bad("give either 'radius', or 'width' and 'height', as the area");
  const shape = box ? ["BYBOX", numberField(body, "width"), numberField(body, "height"), unit] : ["BYRADIUS", numberField(body, "radius"), unit];
  return [...centre, ...shape];
}

function searchOptions(body: Body): { argv: string[]; extras: string[] } {
  const argv: string[] = [];
  const count = integerField(body, "count", true);
  if (count !== undefined) argv.push("COUNT", count);
  if (optionalBooleanField(body, "any")) argv.push("ANY");
  const sort = optionalWordField(body, "sort");
  if (sort !== undefined) argv.push(sort);
  // The reply lists the extras in this order, whatever order they were asked in.
  const extras = (["withdist", "withhash", "withcoord"] as const).filter((name) => optionalBooleanField(body, name));
  argv.push(...extras.map((name) => name.toUpperCase()));
  return { argv, extras };
}

/** GEOSEARCH's [member, dist?, hash?, [lon, lat]?] items as objects; plain members when no extras. */
function searchResult(value: Json, extras: readonly string[]): Json {
  if (extras.length === 0) return value;
  return (value as Json[][]).map((item) => {
    const out: { [key: string]: Json } = { member: item[0]! };
    extras.forEach((extra, i) => {
      const v = item[i + 1]!;
      if (extra === "withdist") out.distance = Number(v);
      else if (extra === "withhash") out.hash = v;
      else [out.longitude, out.latitude] = v as [Json, Json];
    });
    return out;
  });
}

export const geoRoutes: RestRoutes = {
  "/geo/:key/add": {
    async POST(r) {
      const body = await r.body(["members"]);
      const argv = ["GEOADD", r.params.key!];
      objectListField(body, "members", ["longitude", "latitude", "member"]).forEach((item, i) => {
        argv.push(
          numberField(item, "longitude", `members[${i}].longitude`),
          numberField(item, "latitude", `members[${i}].latitude`),
          bytesField(item, "member", `members[${i}].member`),
        );
      });
      return runAndAnswer(r, argv);
    },
  },
  "/geo/:key/pos/:member": {
    async GET(r) {
      const [position] = outcomeValue(await r.run(["GEOPOS", r.params.key!, r.params.member!])) as Json[];
      return position === null || position === undefined ? notFound("member not found") : result(position);
    },
  },
  "/geo/:key/dist/:member1/:member2": {
    async GET(r) {
      const argv = ["GEODIST", r.params.key!, r.params.member1!, r.params.member2!, r.query("unit", "m")];
      const distance = outcomeValue(await r.run(argv));
      return distance === null ? notFound("member not found") : result(Number(distance));
    },
  },
  "/geo/:key/search": {
    async POST(r) {
      const body = await r.body(searchFields);
      const unit = optionalWordField(body, "unit") ?? "m";
      const options = searchOptions(body);
      const argv = ["GEOSEARCH", r.params.key!, ...searchArea(body, unit), ...options.argv];
      return runAndAnswer(r, argv, (value) => searchResult(value, options.extras));
    },
  },
};

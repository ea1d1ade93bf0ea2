// The GEO building blocks in isolation: geohash encode/decode (round trips, limits, the clamping
// of edge cells, scores a client wrote with ZADD), GEOHASH's base32 strings, Redis's number
// formats, the haversine, and the two sorts. Expected values were read from redis-server 7.0.15.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { distanceM } from "../../../../src/kv/types/geo/distance.ts";
import { formatDistance, formatFixed, formatHuman, formatPrintf } from "../../../../src/kv/types/geo/format.ts";
import { decodeScore, geohashString, isValidPosition, latitudeMax, latitudeMin, scoreOf } from "../../../../src/kv/types/geo/geohash.ts";
import { mergeSort, partialQuickSort } from "../../../../src/kv/types/geo/geo-sort.ts";

const human = ([longitude, latitude]: [number, number]) => [formatHuman(longitude), formatHuman(latitude)];

describe("geohash scores", () => {
  test("GEOADD's scores and GEOPOS's positions are Redis's for known places and the corners", () => {
    expect(scoreOf(13.361389, 38.115556)).toBe(3479099956230698);
    expect(human(decodeScore(3479099956230698))).toEqual(["13.36138933897018433", "38.11555639549629859"]);
    expect(scoreOf(15.087269, 37.502669)).toBe(3479447370796909);
    expect(scoreOf(0, 0)).toBe(3377699720527872);
    expect(scoreOf(180, 0)).toBe(10133099161583616);
    // A coordinate on its upper limit gets cell 2^26, one bit past the 52; its centre is clamped.
    expect(scoreOf(180, latitudeMax)).toBe(13510798882111488);
    expect(human(decodeScore(13510798882111488))).toEqual(["180", "85.0511287799999991"]);
    expect(scoreOf(-180, latitudeMin)).toBe(0);
    expect(human(decodeScore(0))).toEqual(["-179.99999731779098511", "-85.05112751263942528"]);
  });

  test("scores a client wrote with ZADD decode as Redis's uint64 cast makes them", () => {
    expect(human(decodeScore(-1))).toEqual(["180", "85.0511287799999991"]);
    expect(human(decodeScore(1.5))).toEqual(["-179.99999731779098511", "-85.05112497791824921"]);
    expect(human(decodeScore(Infinity))).toEqual(["-179.99999731779098511", "-85.05112751263942528"]);
    expect(human(decodeScore(-Infinity))).toEqual(["180", "-85.05112751263942528"]);
    expect(human(decodeScore(2 ** 63))).toEqual(["180", "-85.05112751263942528"]);
    expect(human(decodeScore(2 ** 64))).toEqual(["-179.99999731779098511", "-85.05112751263942528"]);
  });

  test("the limits are inclusive, and one ulp past them is refused", () => {
    const ulpAbove = (x: number) => x + Math.abs(x) * Number.EPSILON;
    for (const [lon, lat] of [
      [180, 0],
      [-180, 0],
      [0, latitudeMax],
      [0, latitudeMin],
      [180, latitudeMax],
      [-180, latitudeMin],
    ] as const) {
      expect(isValidPosition(lon, lat)).toBe(true);
    }
    expect(isValidPosition(ulpAbove(180), 0)).toBe(false);
    expect(isValidPosition(-ulpAbove(180), 0)).toBe(false);
    expect(isValidPosition(0, ulpAbove(latitudeMax))).toBe(false);
    expect(isValidPosition(0, -ulpAbove(latitudeMax))).toBe(false);
    expect(ulpAbove(latitudeMax)).not.toBe(latitudeMax);
  });

  test("a longitude that rounds up to the limit spills a bit and loses the latitude's last bit, as in Redis", () => {
    // 359.99999999999997 / 360 rounds to 1: cell 2^26, bit 53, and the score's double drops bit 0.
    expect(scoreOf(179.99999999999997, -7.105427357601003e-15)).toBe(9382499223688532);
    expect(human(decodeScore(9382499223688532))).toEqual(["180", "-0.00000380208174278"]);
  });

  test("encode then decode lands within half a cell, and re-encoding the centre gives the same score", () => {
    const halfCellLongitude = 360 / 2 ** 27;
    const halfCellLatitude = (latitudeMax - latitudeMin) / 2 ** 27;
    // Away from the upper limits, where a spilled bit changes the cell (see the test above).
    const below = (limit: number) => limit - 1e-9;
    fc.assert(
      fc.property(fc.double({ min: -180, max: below(180), noNaN: true }), fc.double({ min: latitudeMin, max: below(latitudeMax), noNaN: true }), (lon, lat) => {
        const score = scoreOf(lon, lat);
        const [dlon, dlat] = decodeScore(score);
        expect(Math.abs(dlon - lon)).toBeLessThanOrEqual(halfCellLongitude * 1.000001);
        expect(Math.abs(dlat - lat)).toBeLessThanOrEqual(halfCellLatitude * 1.000001);
        expect(scoreOf(dlon, dlat)).toBe(score);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("GEOHASH strings", () => {
  test("are Redis's 11 characters on the ±90 latitude range, the last always 0", () => {
    expect(geohashString(...decodeScore(3479099956230698))).toBe("sqc8b49rny0");
    expect(geohashString(...decodeScore(scoreOf(15.087269, 37.502669)))).toBe("sqdtr74hyu0");
    expect(geohashString(...decodeScore(13510798882111488))).toBe("bp05b5048p0");
    expect(geohashString(...decodeScore(0))).toBe("00bh0hbj200");
    expect(geohashString(0.0000026822090148926, 0.00000126736058093)).toBe("s0000000000");
  });

  test("use only the base32 alphabet", () => {
    fc.assert(
      fc.property(fc.double({ min: -180, max: 180, noNaN: true }), fc.double({ min: latitudeMin, max: latitudeMax, noNaN: true }), (lon, lat) => {
        expect(geohashString(lon, lat)).toMatch(/^[0-9b-hjkmnp-z]{10}0$/);
      }),
    );
  });
});

describe("number formats", () => {
  test("fixed point rounds the exact binary value half to even, as glibc's printf does", () => {
    expect(formatFixed(0.5, 0)).toBe("0");
    expect(formatFixed(2.5, 0)).toBe("2");
    expect(formatFixed(0.125, 2)).toBe("0.12");
    expect(formatFixed(0.375, 2)).toBe("0.38");
    // 1.005 is really 1.00499999999999989...: down, where a decimal-minded rounding goes up.
    expect(formatFixed(1.005, 2)).toBe("1.00");
    expect(formatPrintf(-1e-7)).toBe("-0.000000");
    expect(formatPrintf(Infinity)).toBe("inf");
    expect(formatPrintf(200)).toBe("200.000000");
    expect(formatDistance(166274.15156960033)).toBe("166274.1516");
    expect(formatDistance(0)).toBe("0.0000");
  });

  test("coordinates print 17 decimals without trailing zeros, and never -0", () => {
    expect(formatHuman(180)).toBe("180");
    expect(formatHuman(0.0000026822090148926)).toBe("0.00000268220901489");
    expect(formatHuman(-1e-20)).toBe("0");
    expect(formatHuman(-0)).toBe("0");
    expect(formatHuman(-12.5)).toBe("-12.5");
  });
});

describe("distance", () => {
  test("GEODIST Palermo Catania is Redis's 166274.1516 m", () => {
    const [lon1, lat1] = decodeScore(scoreOf(13.361389, 38.115556));
    const [lon2, lat2] = decodeScore(scoreOf(15.087269, 37.502669));
    expect(formatDistance(distanceM(lon1, lat1, lon2, lat2))).toBe("166274.1516");
    expect(formatDistance(distanceM(lon1, lat1, lon2, lat2) / 1000)).toBe("166.2742");
  });

  test("is symmetric and zero from a point to itself", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -85, max: 85, noNaN: true }),
        fc.double({ min: -180, max: 180, noNaN: true }),
        fc.double({ min: -85, max: 85, noNaN: true }),
        (a, b, c, d) => {
          expect(distanceM(a, b, a, b)).toBe(0);
          expect(Math.abs(distanceM(a, b, c, d) - distanceM(c, d, a, b))).toBeLessThan(1e-6);
        },
      ),
    );
  });
});

describe("sorting", () => {
  const compare = (a: { v: number }, b: { v: number }) => (a.v > b.v ? 1 : a.v === b.v ? 0 : -1);
  const items = fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 120 }).map((vs) => vs.map((v, i) => ({ v, i })));

  test("mergeSort sorts and keeps ties in their original order", () => {
    fc.assert(
      fc.property(items, (list) => {
        const sorted = [...list];
        mergeSort(sorted, compare);
        for (let k = 1; k < sorted.length; k++) {
          const [a, b] = [sorted[k - 1]!, sorted[k]!];
          expect(a.v < b.v || (a.v === b.v && a.i < b.i)).toBe(true);
        }
      }),
    );
  });

  test("partialQuickSort puts the smallest values, in order, in the wanted places and keeps every item", () => {
    fc.assert(
      fc.property(items, fc.nat(), (list, wantedSeed) => {
        if (list.length === 0) return;
        const last = wantedSeed % list.length;
        const sorted = [...list];
        partialQuickSort(sorted, compare, last);
        const reference = list.map((x) => x.v).sort((a, b) => a - b);
        expect(sorted.slice(0, last + 1).map((x) => x.v)).toEqual(reference.slice(0, last + 1));
        expect(sorted.map((x) => x.i).sort((a, b) => a - b)).toEqual(list.map((x) => x.i));
      }),
    );
  });

  test("partialQuickSort orders ties as Redis 7.0's pqsort does (a case read from redis-server)", () => {
    // Five members at one distance, then others: Redis answers the first five in their original order.
    const distances = [285.3, 285.3, 285.3, 285.3, 285.3, 223.6, 193.1, 91.3, 116.7, 132.2, 92.0];
    const list = distances.map((v, i) => ({ v, i }));
    partialQuickSort(list, (a, b) => -compare(a, b), 4);
    expect(list.slice(0, 5).map((x) => x.i)).toEqual([0, 1, 2, 3, 4]);
  });
});

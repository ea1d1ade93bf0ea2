/**
 * Distances on Redis's spherical Earth: the haversine formula with Redis's radius, evaluated in
 * the same order of double operations as Redis so results agree to the last bit (Bun's
 * Math.sin/cos/asin are glibc's, the same libm redis-server calls).
 */
import { KvError } from "../../text/errors.ts";
import { optionWord } from "./option-word.ts";

/** Earth's quadratic mean radius for WGS-84, as Redis uses it. */
export const earthRadiusM = 6372797.560856;

const radiansPerDegree = Math.PI / 180;

export const degreesToRadians = (degrees: number) => degrees * radiansPerDegree;
export const radiansToDegrees = (radians: number) => radians / radiansPerDegree;

/**
 * Distance in meters along a meridian. Redis takes this shortcut whenever two longitudes are
 * the same (the haversine reduces to it); it differs from the full formula in the last bits.
 */
export function meridianDistanceM(latitude1: number, latitude2: number): number {
  return earthRadiusM * Math.abs(degreesToRadians(latitude2) - degreesToRadians(latitude1));
}

/** Great-circle distance in meters between two positions given in degrees. */
export function distanceM(longitude1: number, latitude1: number, longitude2: number, latitude2: number): number {
  const longitude1Rad = degreesToRadians(longitude1);
  const longitude2Rad = degreesToRadians(longitude2);
  const v = Math.sin((longitude2Rad - longitude1Rad) / 2);
  if (v === 0) return meridianDistanceM(latitude1, latitude2);
  const latitude1Rad = degreesToRadians(latitude1);
  const latitude2Rad = degreesToRadians(latitude2);
  const u = Math.sin((latitude2Rad - latitude1Rad) / 2);
  const a = u * u + Math.cos(latitude1Rad) * Math.cos(latitude2Rad) * v * v;
  return 2.0 * earthRadiusM * Math.asin(Math.sqrt(a));
}

/** Meters per unit, for the units Redis accepts (in any case). */
const metersPerUnit: ReadonlyMap<string, number> = new Map([
  ["m", 1],
  ["km", 1000],
  ["ft", 0.3048],
  ["mi", 1609.34],
]);

/** Meters per `unit`; Redis's error for anything else. */
export function parseUnit(unit: string): number {
  const meters = metersPerUnit.get(optionWord(unit));
  if (meters === undefined) throw new KvError("ERR unsupported unit provided. please use M, KM, FT, MI");
  return meters;
}

/**
 * Finding the members inside a circle or a box, as Redis does it: pick a geohash precision whose
 * cells are about as large as the search area, take the cell holding the centre and its eight
 * neighbours, drop the neighbours the area cannot reach, scan each remaining cell as one score
 * range of the sorted set, and keep the members whose decoded position passes the exact test.
 *
 * Everything here follows Redis step for step, including its approximations (the step estimate,
 * the single step-down near cell edges, the bounding box), because they decide which members are
 * examined, and so the reply's order and, with COUNT ANY, its content.
 */
import { degreesToRadians, distanceM, earthRadiusM, meridianDistanceM, radiansToDegrees } from "./distance.ts";
import { alignTo52, type Area, type Cell, decodeArea, decodeScore, encode, neighbour, stepMax } from "./geohash.ts";
import type { ZSet } from "../zset/zset.ts";

export interface Shape {
  readonly kind: "radius" | "box";
  readonly longitude: number;
  readonly latitude: number;
  /** In the query's unit; BYRADIUS only. */
  readonly radius: number;
  /** In the query's unit; BYBOX only. */
  readonly width: number;
  readonly height: number;
  /** Meters per unit of the query. */
  readonly unitM: number;
}

/** A member found by a search. */
export interface GeoPoint {
  readonly member: string;
  readonly score: number;
  readonly longitude: number;
  readonly latitude: number;
  /** From the centre, in meters until the command converts it to the query's unit. */
  distance: number;
}

/** Half the Web Mercator world's width in meters: the step estimate doubles a radius up to it. */
const mercatorMaxM = 20037726.37;
/** Latitudes beyond which a degree of longitude is much shorter, so cells must be coarser. */
const polarLatitude = 66;
const nearPoleLatitude = 80;

/** The precision (bits per coordinate) whose cells roughly cover `rangeM` around a point at `latitude`. */
export function estimateStep(rangeM: number, latitude: number): number {
  if (rangeM === 0) return stepMax;
  let step = 1;
  while (rangeM < mercatorMaxM) {
    rangeM *= 2;
    step++;
  }
  // Two coarser than the doubling count, so the area fits in the centre cell and its neighbours.
  step -= 2;
  if (latitude > polarLatitude || latitude < -polarLatitude) {
    step--;
    if (latitude > nearPoleLatitude || latitude < -nearPoleLatitude) step--;
  }
  return Math.min(Math.max(step, 1), stepMax);
}

/**
 * The area's extent in degrees. Meridians converge, so the box is widest at its edge nearer the
 * pole; Redis takes that edge's longitude span (the top one north of the equator, the bottom one
 * south of it).
 */
export function boundingBox(shape: Shape): Area {
  const halfHeightM = shape.unitM * (shape.kind === "radius" ? shape.radius : shape.height / 2);
  const halfWidthM = shape.unitM * (shape.kind === "radius" ? shape.radius : shape.width / 2);
  const latitudeDelta = radiansToDegrees(halfHeightM / earthRadiusM);
  const longitudeDeltaTop = radiansToDegrees(halfWidthM / earthRadiusM / Math.cos(degreesToRadians(shape.latitude + latitudeDelta)));
  const longitudeDeltaBottom = radiansToDegrees(halfWidthM / earthRadiusM / Math.cos(degreesToRadians(shape.latitude - latitudeDelta)));
  const longitudeDelta = shape.latitude < 0 ? longitudeDeltaBottom : longitudeDeltaTop;
  return {
    longitudeMin: shape.longitude - longitudeDelta,
    longitudeMax: shape.longitude + longitudeDelta,
    latitudeMin: shape.latitude - latitudeDelta,
    latitudeMax: shape.latitude + latitudeDelta,
  };
}

/** How far the area reaches from its centre: the radius, or the distance to a box's corner. */
function reachM(shape: Shape): number {
  const reach = shape.kind === "radius" ? shape.radius : Math.sqrt((shape.width / 2) * (shape.width / 2) + (shape.height / 2) * (shape.height / 2));
  return reach * shape.unitM;
}

/** The centre cell and its neighbours in the order Redis scans them; null for a neighbour left out. */
type CellSet = (Cell | null)[];

/** Centre, N, S, E, W, NE, NW, SE, SW: Redis's scan order. */
const scanOrder: readonly (readonly [east: -1 | 0 | 1, north: -1 | 0 | 1])[] = [
  [0, 0],
  [0, 1],
  [0, -1],
  [1, 0],
  [-1, 0],
  [1, 1],
  [-1, 1],
  [1, -1],
  [-1, -1],
];

const cellsAround = (centre: Cell): Cell[] => scanOrder.map(([east, north]) => neighbour(centre, east, north));

/** Whether the four side neighbours fail to reach the bounding box's edges at this precision. */
function sidesFallShort(cells: readonly Cell[], box: Area): boolean {
  const north = decodeArea(cells[1]!);
  const south = decodeArea(cells[2]!);
  const east = decodeArea(cells[3]!);
  const west = decodeArea(cells[4]!);
  return (
    north.latitudeMax < box.latitudeMax || south.latitudeMin > box.latitudeMin || east.longitudeMax < box.longitudeMax || west.longitudeMin > box.longitudeMin
  );
}

/** The cells to scan for a shape (Redis's geohashCalculateAreasByShapeWGS84). */
export function cellsToScan(shape: Shape): CellSet {
  const box = boundingBox(shape);
  let step = estimateStep(reachM(shape), shape.latitude);
  let cells = cellsAround(encode(shape.longitude, shape.latitude, step));
  // Near a cell edge the estimate can be one step too fine for the neighbours to cover the area.
  if (step > 1 && sidesFallShort(cells, box)) {
    step--;
    cells = cellsAround(encode(shape.longitude, shape.latitude, step));
  }
  const result: CellSet = [...cells];
  // Leave out the rows and columns of neighbours that lie wholly beyond the bounding box.
  if (step >= 2) {
    const centre = decodeArea(cells[0]!);
    const drop = (...indexes: number[]) => indexes.forEach((i) => (result[i] = null));
    if (centre.latitudeMin < box.latitudeMin) drop(2, 8, 7);
    if (centre.latitudeMax > box.latitudeMax) drop(1, 5, 6);
    if (centre.longitudeMin < box.longitudeMin) drop(4, 8, 6);
    if (centre.longitudeMax > box.longitudeMax) drop(3, 7, 5);
  }
  return result;
}

/** The member's position and distance when it lies inside the shape, else null. */
function pointInShape(shape: Shape, member: string, score: number): GeoPoint | null {
  const [longitude, latitude] = decodeScore(score);
  if (shape.kind === "radius") {
    const distance = distanceM(shape.longitude, shape.latitude, longitude, latitude);
    if (distance > shape.radius * shape.unitM) return null;
    return { member, score, longitude, latitude, distance };
  }
  // A box is tested along each axis: the north-south distance first (the cheap one), then the
  // east-west distance at the member's latitude.
  if (meridianDistanceM(latitude, shape.latitude) > (shape.height * shape.unitM) / 2) return null;
  if (distanceM(longitude, latitude, shape.longitude, latitude) > (shape.width * shape.unitM) / 2) return null;
  return { member, score, longitude, latitude, distance: distanceM(shape.longitude, shape.latitude, longitude, latitude) };
}

/**
 * Members of the cells inside the shape, cell by cell in scan order and by score within a cell.
 * `limit` > 0 (COUNT ANY) stops once that many are found. A cell equal to the one scanned just
 * before it is skipped (at coarse steps neighbours can coincide); Redis compares only with the
 * previous one, so a repeat further apart is scanned again and its members appear twice, as
 * they do in Redis's reply.
 */
export function membersInShape(zset: ZSet, shape: Shape, cells: CellSet, limit: number): GeoPoint[] {
  const found: GeoPoint[] = [];
  // Redis remembers the previous cell by its index and tests "index != 0", so a neighbour equal
  // to the centre cell (index 0) is still scanned.
  let previous: Cell | null = null;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i];
    if (cell === null || cell === undefined) continue;
    if (previous !== null && previous.bits === cell.bits && previous.step === cell.step) continue;
    if (limit > 0 && found.length >= limit) break;
    scanCell(zset, shape, cell, found, limit);
    previous = i === 0 ? null : cell;
  }
  return found;
}

/** Appends the cell's members inside the shape to `found`, stopping at `limit` (> 0). */
function scanCell(zset: ZSet, shape: Shape, cell: Cell, found: GeoPoint[], limit: number): void {
  // The cell is every score whose leading 2·step bits are the cell's: [cell, next cell).
  const min = Number(alignTo52(cell));
  const max = Number(alignTo52({ bits: cell.bits + 1n, step: cell.step }));
  const entries = zset.rangeByScore({ min, max, minExclusive: false, maxExclusive: true });
  for (const { member, score } of entries) {
    const point = pointInShape(shape, member, score);
    if (point !== null) found.push(point);
    if (limit > 0 && found.length >= limit) return;
  }
}

// Exposition text read back by an independent parser: arbitrary label values and numbers survive
// the round trip, filtering only removes lines, and histogram buckets are consistent.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { MetricsRegistry } from "../src/core/metrics.ts";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A sample-line parser written from the format's definition, independent of the writer. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    let i = 0;
    while (i < line.length && line[i] !== "{" && line[i] !== " ") i++;
    const name = line.slice(0, i);
    const labels: Record<string, string> = {};
    if (line[i] === "{") {
      i++;
      while (line[i] !== "}") {
        const eq = line.indexOf("=", i);
        const key = line.slice(i, eq);
        i = eq + 2; // past ="
        let value = "";
        while (line[i] !== '"') {
          if (line[i] === "\\") {
            const next = line[i + 1];
            value += next === "n" ? "\n" : next;
            i += 2;
          } else {
            value += line[i++];
          }
        }
        labels[key] = value;
        i++; // past the closing quote
        if (line[i] === ",") i++;
      }
      i++;
    }
    const raw = line.slice(i + 1);
    const value = raw === "+Inf" ? Infinity : raw === "-Inf" ? -Infinity : Number(raw);
    samples.push({ name, labels, value });
  }
  return samples;
}

const labelValue = fc.string({ unit: "binary", maxLength: 20 });
const number = fc.oneof(fc.double(), fc.constantFrom(Infinity, -Infinity, Number.NaN, 0, -0, 1e300));

describe("metrics exposition round trip", () => {
  test("arbitrary label values and values parse back exactly", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(labelValue, labelValue), { selector: (t) => JSON.stringify(t), maxLength: 10 }),
        fc.array(number, { minLength: 10, maxLength: 10 }),
        (series, values) => {
          const r = new MetricsRegistry();
          const g = r.gauge({ name: "g", help: "any\nhelp\\", labelNames: ["a", "b"] });
          series.forEach(([a, b], i) => g.labels(a, b).set(values[i]!));
          const parsed = parseExposition(r.expose());
          expect(parsed.map((s) => [s.labels.a, s.labels.b])).toEqual(series);
          // -0 prints as 0, which Prometheus reads as the same value.
          parsed.forEach((s, i) => expect(s.value).toBe(Object.is(values[i], -0) ? 0 : values[i]!));
        },
      ),
      { numRuns: 200 },
    );
  });

  test("a filtered exposition is the full one minus the rejected series' lines", () => {
    fc.assert(
      fc.property(fc.uniqueArray(labelValue, { maxLength: 12 }), fc.func(fc.boolean()), (topics, keep) => {
        const r = new MetricsRegistry();
        const c = r.counter({ name: "c", help: "h", labelNames: ["topic"] });
        topics.forEach((t, i) => c.labels(t).inc(i));
        const admitted = (labels: Readonly<Record<string, string>>) => keep(labels.topic);
        const full = parseExposition(r.expose());
        const filtered = parseExposition(r.expose(admitted));
        expect(filtered).toEqual(full.filter((s) => admitted(s.labels)));
      }),
      { numRuns: 200 },
    );
  });

  test("histogram buckets never decrease and +Inf equals _count", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ noNaN: true }), { maxLength: 50 }), (observations) => {
        const r = new MetricsRegistry();
        const h = r.histogram({ name: "h", help: "h", buckets: [-1, 0, 0.5, 1, 100] });
        for (const v of observations) h.observe(v);
        const samples = parseExposition(r.expose());
        const buckets = samples.filter((s) => s.name === "h_bucket").map((s) => s.value);
        for (let i = 1; i < buckets.length; i++) expect(buckets[i]!).toBeGreaterThanOrEqual(buckets[i - 1]!);
        expect(buckets.at(-1)).toBe(observations.length);
        expect(samples.find((s) => s.name === "h_count")!.value).toBe(observations.length);
      }),
      { numRuns: 200 },
    );
  });
});

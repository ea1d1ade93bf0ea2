// The Prometheus exposition writer: exact text for each metric type, escaping, per-caller
// filtering, scrape-time gauges, and programmer errors that must fail loudly.
import { describe, expect, test } from "bun:test";
import { AssertionError } from "../../src/core/assert.ts";
import { MetricsRegistry } from "../../src/core/metrics.ts";

describe("metrics exposition", () => {
  test("a labelled counter prints HELP, TYPE and one line per series in insertion order", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "svc_records_total", help: "Records produced.", labelNames: ["topic", "partition"] });
    c.labels("orders", "1").inc(5);
    c.labels("audit", "0").inc();
    c.labels("orders", "1").inc(2);
    expect(r.expose()).toBe(
      "# HELP svc_records_total Records produced.\n# TYPE svc_records_total counter\n" +
        'svc_records_total{topic="orders",partition="1"} 7\nsvc_records_total{topic="audit",partition="0"} 1\n',
    );
  });

  test("a gauge sets, increments and decrements; fractions and infinities print as Prometheus reads them", () => {
    const r = new MetricsRegistry();
    const g = r.gauge({ name: "g", help: "h", labelNames: ["k"] });
    g.labels("a").set(10);
    g.labels("a").inc(2.5);
    g.labels("a").dec();
    g.labels("b").set(Infinity);
    g.labels("c").set(-Infinity);
    g.labels("d").set(Number.NaN);
    expect(r.expose()).toBe('# HELP g h\n# TYPE g gauge\ng{k="a"} 11.5\ng{k="b"} +Inf\ng{k="c"} -Inf\ng{k="d"} NaN\n');
  });

  test("a histogram prints cumulative buckets, +Inf, sum and count", () => {
    const r = new MetricsRegistry();
    const h = r.histogram({ name: "lat_seconds", help: "Latency.", buckets: [0.1, 1, 10] });
    for (const v of [0.05, 0.1, 0.5, 5, 50]) h.observe(v);
    expect(r.expose()).toBe(
      "# HELP lat_seconds Latency.\n# TYPE lat_seconds histogram\n" +
        'lat_seconds_bucket{le="0.1"} 2\nlat_seconds_bucket{le="1"} 3\nlat_seconds_bucket{le="10"} 4\n' +
        'lat_seconds_bucket{le="+Inf"} 5\nlat_seconds_sum 55.65\nlat_seconds_count 5\n',
    );
  });

  test("metrics without labels are exposed at zero from registration", () => {
    const r = new MetricsRegistry();
    r.counter({ name: "c", help: "h" });
    r.gauge({ name: "g", help: "h" });
    r.histogram({ name: "h", help: "h", buckets: [1] });
    expect(r.expose()).toBe(
      "# HELP c h\n# TYPE c counter\nc 0\n# HELP g h\n# TYPE g gauge\ng 0\n" +
        '# HELP h h\n# TYPE h histogram\nh_bucket{le="1"} 0\nh_bucket{le="+Inf"} 0\nh_sum 0\nh_count 0\n',
    );
  });

  test("help text and label values are escaped", () => {
    const r = new MetricsRegistry();
    r.counter({ name: "c", help: 'back\\slash and\nnewline "quotes stay"', labelNames: ["v"] })
      .labels('a"b\\c\nd')
      .inc();
    expect(r.expose()).toBe('# HELP c back\\\\slash and\\nnewline "quotes stay"\n# TYPE c counter\nc{v="a\\"b\\\\c\\nd"} 1\n');
  });

  test("a filter drops series per caller but keeps every metric's HELP and TYPE", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "produced", help: "p", labelNames: ["topic"] });
    const lag = r.gauge({ name: "lag", help: "l", labelNames: ["group", "topic"] });
    c.labels("orders").inc();
    c.labels("secret").inc();
    lag.labels("g2", "secret").set(3);
    const readable = (labels: Readonly<Record<string, string>>) => labels.topic !== "secret";
    expect(r.expose(readable)).toBe('# HELP produced p\n# TYPE produced counter\nproduced{topic="orders"} 1\n# HELP lag l\n# TYPE lag gauge\n');
  });

  test("a histogram's series is filtered on its labels without le", () => {
    const r = new MetricsRegistry();
    const h = r.histogram({ name: "h", help: "h", labelNames: ["topic"], buckets: [1] });
    h.labels("a").observe(1);
    h.labels("b").observe(2);
    const seen: Record<string, string>[] = [];
    r.expose((labels) => (seen.push({ ...labels }), labels.topic === "a"));
    expect(seen).toEqual([{ topic: "a" }, { topic: "b" }]);
    expect(r.expose((l) => l.topic === "a")).not.toContain('topic="b"');
  });

  test("a collected gauge shows exactly what its callback set at this scrape", () => {
    const r = new MetricsRegistry();
    let offsets: [string, number][] = [
      ["0", 10],
      ["1", 20],
    ];
    r.gauge({ name: "end_offset", help: "e", labelNames: ["partition"], collect: (set) => offsets.forEach(([p, o]) => set([p], o)) });
    expect(r.expose()).toContain('end_offset{partition="0"} 10\nend_offset{partition="1"} 20\n');
    offsets = [["1", 25]];
    const second = r.expose();
    expect(second).toContain('end_offset{partition="1"} 25\n');
    expect(second).not.toContain('partition="0"');
  });

  test("remove drops one series and reset drops all", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "c", help: "h", labelNames: ["t"] });
    c.labels("a").inc();
    c.labels("b").inc();
    c.remove("a");
    expect(r.expose()).toBe('# HELP c h\n# TYPE c counter\nc{t="b"} 1\n');
    c.reset();
    expect(r.expose()).toBe("# HELP c h\n# TYPE c counter\n");
  });

  test("label values that differ only in where a separator falls are different series", () => {
    const r = new MetricsRegistry();
    const c = r.counter({ name: "c", help: "h", labelNames: ["a", "b"] });
    c.labels("x\u0000", "y").inc();
    c.labels("x", "\u0000y").inc(2);
    expect(c.labels("x\u0000", "y").value).toBe(1);
    expect(c.labels("x", "\u0000y").value).toBe(2);
  });
});

describe("metrics programmer errors", () => {
  const r = new MetricsRegistry();
  r.counter({ name: "taken", help: "h", labelNames: ["t"] });
  const cases: [string, () => unknown][] = [
    ["a duplicate name", () => r.counter({ name: "taken", help: "h" })],
    ["a bad metric name", () => r.counter({ name: "1bad", help: "h" })],
    ["a bad label name", () => r.counter({ name: "ok1", help: "h", labelNames: ["bad-label"] })],
    ["a reserved __ label", () => r.counter({ name: "ok2", help: "h", labelNames: ["__x"] })],
    ["le on a histogram", () => r.histogram({ name: "ok3", help: "h", labelNames: ["le"] })],
    ["unsorted buckets", () => r.histogram({ name: "ok4", help: "h", buckets: [1, 0.5] })],
    ["an infinite bucket", () => r.histogram({ name: "ok5", help: "h", buckets: [1, Infinity] })],
    ["the wrong number of label values", () => new MetricsRegistry().counter({ name: "c", help: "h", labelNames: ["t"] }).labels()],
    ["a negative counter increment", () => new MetricsRegistry().counter({ name: "c", help: "h" }).inc(-1)],
  ];
  for (const [what, fn] of cases) {
    test(`${what} throws an AssertionError`, () => {
      expect(fn).toThrow(AssertionError);
    });
  }
});

/**
 * Metrics in the Prometheus text exposition format (version 0.0.4), written by us rather than
 * prom-client because the broker must filter what it exposes per caller: a key sees only series
 * whose `topic` it may read and whose `group` it owns. So `expose()` takes a filter over each
 * series' labels, and everything else stays small: counters, gauges (set, or collected at scrape
 * time) and histograms, with labels.
 *
 *   const produced = registry.counter({ name: "svc_topic_records_produced_total", help: "...", labelNames: ["topic"] });
 *   const orders = produced.labels("orders");  // keep the child on the hot path
 *   orders.inc(batch.length);
 */
import { assert } from "./assert.ts";

export const metricsContentType = "text/plain; version=0.0.4; charset=utf-8";

/** Seconds; the classic Prometheus client default, fine for request latencies. */
export const defaultBucketsSeconds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

export type Labels = Readonly<Record<string, string>>;
export type SeriesFilter = (labels: Labels, metricName: string) => boolean;

const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface MetricOptions {
  name: string;
  help: string;
  labelNames?: readonly string[];
}

/** A counter or gauge may be read at scrape time instead of kept up to date on every change. */
export interface CollectedOptions extends MetricOptions {
  /**
   * Reports the metric's series when it is scraped (the broker reads partition offsets and flush
   * counts this way). Such a metric shows only what collect reports, and keeps nothing between
   * scrapes, so a scrape of thousands of partitions makes no series objects or keys.
   */
  collect?: (set: (labelValues: readonly string[], value: number) => void) => void;
}

// ---- text format -------------------------------------------------------------------------------

const escapeHelp = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
const labelValueSpecial = /[\\"\n]/;
/** Most values (topic names, partition numbers) hold nothing to escape: they are tested once, not rewritten thrice. */
const escapeLabelValue = (text: string) => (labelValueSpecial.test(text) ? text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n") : text);

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function formatLabels(names: readonly string[], values: readonly string[], extra = ""): string {
  // Concatenated rather than mapped and joined: a scrape formats this once per series.
  let out = "";
  for (let i = 0; i < names.length; i++) out += `${i === 0 ? "" : ","}${names[i]}="${escapeLabelValue(values[i]!)}"`;
  if (extra !== "") out += out === "" ? extra : `,${extra}`;
  return out === "" ? "" : `{${out}}`;
}

function labelsObject(names: readonly string[], values: readonly string[]): Labels {
  const labels: Record<string, string> = {};
  names.forEach((name, i) => (labels[name] = values[i]!));
  return labels;
}

// ---- metrics -----------------------------------------------------------------------------------

/**
 * Children are keyed by their label values, each prefixed with its length, so no two different
 * value lists share a key whatever characters a client-chosen name (a group name) contains.
 */
const seriesKey = (values: readonly string[]) => values.map((v) => `${v.length}:${v}`).join("");

abstract class Metric<Child> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly children = new Map<string, { values: readonly string[]; child: Child }>();
  /** Set by a collected counter or gauge (CollectedOptions): its series are read at scrape time. */
  protected collect: CollectedOptions["collect"];

  constructor(options: MetricOptions, reserved: readonly string[] = []) {
    assert(metricNamePattern.test(options.name), `invalid metric name ${JSON.stringify(options.name)}`);
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
    for (const label of this.labelNames) {
      assert(labelNamePattern.test(label) && !label.startsWith("__"), `invalid label name ${JSON.stringify(label)}`);
      assert(!reserved.includes(label), `label name ${label} is reserved for ${this.name}`);
    }
    assert(new Set(this.labelNames).size === this.labelNames.length, `duplicate label names on ${this.name}`);
  }

  abstract readonly type: "counter" | "gauge" | "histogram";
  protected abstract newChild(): Child;
  /** Sample lines of one series, without the trailing newline of the last. */
  protected abstract sampleLines(values: readonly string[], child: Child): string[];

  /**
   * A metric without labels has one series, which exists from registration at zero (as in the
   * Prometheus clients) so a scrape never finds it missing. Called by each concrete constructor.
   */
  protected initUnlabelled(): void {
    if (this.labelNames.length === 0) this.labels();
  }

  /** The series with these label values, created at zero on first use. */
  labels(...values: string[]): Child {
    assert(values.length === this.labelNames.length, `${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    const key = seriesKey(values);
    let entry = this.children.get(key);
    if (entry === undefined) {
      entry = { values: [...values], child: this.newChild() };
      this.children.set(key, entry);
    }
    return entry.child;
  }

  /** Drops one series, e.g. when its topic is deleted. */
  remove(...values: string[]): void {
    this.children.delete(seriesKey(values));
  }

  reset(): void {
    this.children.clear();
  }

  /** HELP, TYPE and the sample lines of every series the filter admits. */
  expose(filter: SeriesFilter | undefined): string {
    let out = `# HELP ${this.name} ${escapeHelp(this.help)}\n# TYPE ${this.name} ${this.type}\n`;
    const collect = this.collect;
    if (collect !== undefined) {
      collect((values, value) => {
        assert(values.length === this.labelNames.length, `${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
        if (filter && !filter(labelsObject(this.labelNames, values), this.name)) return;
        out += `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(value)}\n`;
      });
      return out;
    }
    for (const { values, child } of this.series()) {
      if (filter && !filter(labelsObject(this.labelNames, values), this.name)) continue;
      for (const line of this.sampleLines(values, child)) out += `${line}\n`;
    }
    return out;
  }

  protected series(): Iterable<{ values: readonly string[]; child: Child }> {
    return this.children.values();
  }
}

export class CounterChild {
  value = 0;
  inc(n = 1): void {
    assert(n >= 0, `a counter only goes up, not by ${n}`);
    this.value += n;
  }
}

export class Counter extends Metric<CounterChild> {
  readonly type = "counter";
  constructor(options: CollectedOptions) {
    super(options);
    this.collect = options.collect;
    if (this.collect === undefined) this.initUnlabelled();
  }
  protected newChild() {
    return new CounterChild();
  }
  protected sampleLines(values: readonly string[], child: CounterChild) {
    return [`${this.name}${formatLabels(this.labelNames, values)} ${formatValue(child.value)}`];
  }
  /** For a counter without labels. */
  inc(n = 1): void {
    this.labels().inc(n);
  }
}

export class GaugeChild {
  value = 0;
  set(v: number): void {
    this.value = v;
  }
  inc(n = 1): void {
    this.value += n;
  }
  dec(n = 1): void {
    this.value -= n;
  }
}

export class Gauge extends Metric<GaugeChild> {
  readonly type = "gauge";
  constructor(options: CollectedOptions) {
    super(options);
    this.collect = options.collect;
    if (this.collect === undefined) this.initUnlabelled();
  }
  protected newChild() {
    return new GaugeChild();
  }
  protected sampleLines(values: readonly string[], child: GaugeChild) {
    return [`${this.name}${formatLabels(this.labelNames, values)} ${formatValue(child.value)}`];
  }
  set(v: number): void {
    this.labels().set(v);
  }
  inc(n = 1): void {
    this.labels().inc(n);
  }
  dec(n = 1): void {
    this.labels().dec(n);
  }
}

export class HistogramChild {
  /** Per-bucket counts (not cumulative); the last slot counts observations above every bound. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(v: number): void {
    let i = 0;
    while (i < this.bounds.length && v > this.bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += v;
    this.count += 1;
  }
}

export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, ascending and finite; +Inf is implied. */
  buckets?: readonly number[];
}

export class Histogram extends Metric<HistogramChild> {
  readonly type = "histogram";
  readonly buckets: readonly number[];

  constructor(options: HistogramOptions) {
    super(options, ["le"]);
    this.buckets = options.buckets ?? defaultBucketsSeconds;
    assert(this.buckets.length > 0, `${this.name} needs at least one bucket`);
    this.buckets.forEach((b, i) => {
      assert(Number.isFinite(b), `${this.name}: bucket bounds must be finite`);
      assert(i === 0 || b > this.buckets[i - 1]!, `${this.name}: bucket bounds must ascend`);
    });
    this.initUnlabelled();
  }
  protected newChild() {
    return new HistogramChild(this.buckets);
  }
  protected sampleLines(values: readonly string[], child: HistogramChild) {
    const lines: string[] = [];
    let cumulative = 0;
    this.buckets.forEach((bound, i) => {
      cumulative += child.counts[i]!;
      lines.push(`${this.name}_bucket${formatLabels(this.labelNames, values, `le="${formatValue(bound)}"`)} ${cumulative}`);
    });
    lines.push(`${this.name}_bucket${formatLabels(this.labelNames, values, 'le="+Inf"')} ${child.count}`);
    lines.push(`${this.name}_sum${formatLabels(this.labelNames, values)} ${formatValue(child.sum)}`);
    lines.push(`${this.name}_count${formatLabels(this.labelNames, values)} ${child.count}`);
    return lines;
  }
  observe(v: number): void {
    this.labels().observe(v);
  }
}

// ---- registry ----------------------------------------------------------------------------------

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric<unknown>>();

  private register<M extends Metric<unknown>>(metric: M): M {
    assert(!this.metrics.has(metric.name), `metric ${metric.name} is already registered`);
    this.metrics.set(metric.name, metric);
    return metric;
  }

  counter(options: CollectedOptions): Counter {
    return this.register(new Counter(options));
  }

  gauge(options: CollectedOptions): Gauge {
    return this.register(new Gauge(options));
  }

  histogram(options: HistogramOptions): Histogram {
    return this.register(new Histogram(options));
  }

  /** The exposition of every metric, in registration order, with only the admitted series. */
  expose(filter?: SeriesFilter): string {
    let out = "";
    for (const metric of this.metrics.values()) out += metric.expose(filter);
    return out;
  }
}

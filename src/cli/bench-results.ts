/**
 * bench/RESULTS.md as data: the latest result of each benchmark, one `### <title>` section each,
 * grouped under one `## <service>` heading per service, after an intro.
 *
 *   # Benchmark results
 *   <intro>
 *   ## kv
 *   ### kv: svc kv vs redis-server 7.0.15 (redis-benchmark -c 50 -n 500000 -r 100000)
 *   > Measured 2026-11-29 · AMD EPYC · 2 cores · Bun 1.4.5 — by `./svc bench kv` at 7bf2cfe
 *   <what the benchmark printed under its title, as printed>
 *
 * A benchmark is identified by its title normalised (`normaliseTitle`), so a run with other
 * counts in its title (`median of 3` → `median of 5`, `-n 50000` → `-n 100000`) replaces the
 * section instead of adding a second one. The `## <service>` headings are derived from the titles
 * (`kv: …` → kv, and so on) and written by `formatResultsFile`; prose under one is kept.
 *
 * `./svc bench` (src/cli/bench.ts) parses what each benchmark prints (`parseBenchOutput`),
 * compares each section with the recorded one (`diffSection`: ratios that moved beyond a noise
 * band, verdicts that changed), and replaces the sections in place (`updateSections`).
 * Pure functions over text: no file or process access here.
 */

export const services = ["kv", "broker", "media", "crm", "other"] as const;
export type Service = (typeof services)[number];

/** The `## ` heading each service's sections are written under. */
export const serviceHeadings: Record<Service, string> = {
  kv: "kv",
  broker: "broker",
  media: "media",
  crm: "crm",
  other: "native, wasm and other kernels",
};

export interface Section {
  /** The title as last printed, without `### `. */
  title: string;
  /** When, where and from what the body was measured; "" when unknown. */
  measured: string;
  /** The lines the benchmark printed under its title, without leading and trailing blank lines. */
  body: string[];
}

export interface ResultsFile {
  /** Everything before the first `## ` or `### ` heading (title and intro prose). */
  intro: string[];
  /** Prose found under a service's `## ` heading before its first section, kept as it is. */
  notes: Partial<Record<Service, string[]>>;
  /** In file order; `formatResultsFile` groups them by service, keeping this order within each. */
  sections: Section[];
}

const measuredPrefix = "> Measured ";

/** The intro a results file gets when it has none (a new or empty file). */
export const defaultIntro: readonly string[] = [
  "# Benchmark results",
  "",
  "The latest result of each benchmark in bench/, one `### ` section each, grouped by service. A section",
  "holds what the benchmark printed under its title, as printed, below a `> Measured` line: the date,",
  "the machine (CPU, cores, Bun) and the run or commit it came from. A ratio is its column's first side",
  "over its second (ts/redis, svc/redis, redis/svc, broker/raw; `ratio` in the kernel tables is ours over",
  "the reference): for rates, above 1 means ours is faster; for memory, CPU and µs, above 1 in svc/redis",
  "means svc uses more. The machines are shared 2-core VMs, so treat moves under ~10–15% as noise.",
  "",
  "**Regenerating.** `./svc bench [name...]` runs the benchmarks (all of them without names) and records",
  "them here: each section a run printed replaces the recorded one in place, a new benchmark's is added,",
  "the others stay as they are. A benchmark is known by its title without its numbers and parenthesised",
  "load parameters, so a run with other counts in its title still replaces its section. After each",
  "benchmark, `./svc bench` prints where the run differs from what was recorded: every ratio (a `×`",
  "value, or a percentage of the raw disk) that moved by more than the noise band (`--noise-percent`,",
  "default 10), rows and tables that appeared or went, and every **Verdict:** whose words changed.",
  "`./svc bench --no-record` prints the comparison without writing this file: use it for quick looks",
  "with lowered counts (SVC_BENCH_KV_REQUESTS and the like) and for runs on a busy machine.",
  "",
  "**History** is in git, not here: `git log -p bench/RESULTS.md` has every earlier run with the notes",
  "written about it. Until the change that gave it this form, this file was an append-only log of every",
  "run, with a `## <date> · <machine> · <what>` heading each (the dated runs docs/*.md cite are there);",
  "bench/lib/results-from-log.ts kept the newest section of each benchmark from it.",
];

// ---- titles --------------------------------------------------------------------------------

/**
 * The identity of a benchmark's title: parenthesised parts dropped (they hold the load's
 * parameters: client counts, durations, request counts), clauses that only say how many runs
 * were taken (`, median of 5 interleaved rounds`) or with what load generator (`, wrk -t 2 …`)
 * dropped, numbers replaced by `#`, case and spacing folded.
 */
export function normaliseTitle(title: string): string {
  let text = title.trim();
  // Innermost groups first, so nested parentheses go too.
  for (let previous = ""; previous !== text; ) {
    previous = text;
    text = text.replace(/\s*\([^()]*\)/g, "");
  }
  return text
    .replace(/\d(?:[\d,.]*\d)?/g, "#")
    .split(",")
    .filter((clause, i) => i === 0 || !/^\s*(median of\b|medians?\b|wrk\b|redis-benchmark\b|# (alternating|interleaved)\b)/i.test(clause))
    .join(",")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/** The service a title belongs to, from its `<service>:` prefix; kernels and the rest are "other". */
export function serviceOf(title: string): Service {
  const prefix = /^\s*([a-z]+):/i.exec(title)?.[1]?.toLowerCase();
  return (services as readonly string[]).includes(prefix ?? "") && prefix !== "other" ? (prefix as Service) : "other";
}

function serviceOfHeading(heading: string): Service {
  const word = /^\s*([a-z]+)/i.exec(heading)?.[1]?.toLowerCase() ?? "";
  return (services as readonly string[]).includes(word) ? (word as Service) : "other";
}

// ---- parsing and formatting ------------------------------------------------------------------

const isSectionHeading = (line: string) => line.startsWith("### ");
const isGroupHeading = (line: string) => line.startsWith("## ");

export function trimBlankLines(lines: readonly string[]): string[] {
  let start = 0;
  let end = lines.length;
  while (start < end && lines[start]!.trim() === "") start++;
  while (end > start && lines[end - 1]!.trim() === "") end--;
  return lines.slice(start, end);
}

/** The section whose `### ` title is at `start`, up to `end`; `measured` is read from its first line when that is a `> Measured` line. */
function readSection(lines: readonly string[], start: number, end: number): Section {
  const title = lines[start]!.slice(4).trim();
  let body = trimBlankLines(lines.slice(start + 1, end));
  let measured = "";
  if (body[0]?.startsWith(measuredPrefix)) {
    measured = body[0].slice(measuredPrefix.length).trim();
    body = trimBlankLines(body.slice(1));
  }
  return { title, measured, body };
}

/**
 * Reads a results file. Never throws: an empty file has no intro and no sections; a `### `
 * section without a `> Measured` line has measured "".
 */
export function parseResultsFile(text: string): ResultsFile {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const file: ResultsFile = { intro: [], notes: {}, sections: [] };
  let i = 0;
  while (i < lines.length && !isGroupHeading(lines[i]!) && !isSectionHeading(lines[i]!)) i++;
  file.intro = trimBlankLines(lines.slice(0, i));
  let group: Service = "other";
  while (i < lines.length) {
    const line = lines[i]!;
    let end = i + 1;
    while (end < lines.length && !isGroupHeading(lines[end]!) && !isSectionHeading(lines[end]!)) end++;
    if (isGroupHeading(line)) {
      group = serviceOfHeading(line.slice(3));
      const prose = trimBlankLines(lines.slice(i + 1, end));
      if (prose.length > 0) file.notes[group] = [...(file.notes[group] ?? []), ...prose];
    } else {
      file.sections.push(readSection(lines, i, end));
    }
    i = end;
  }
  return file;
}

function formatSection(section: Section): string[] {
  const out = [`### ${section.title}`, ""];
  if (section.measured !== "") out.push(`${measuredPrefix}${section.measured}`, "");
  if (section.body.length > 0) out.push(...section.body, "");
  return out;
}

/** The file's text: intro, then each service that has sections or notes, in `services` order. */
export function formatResultsFile(file: ResultsFile): string {
  const out: string[] = [];
  if (file.intro.length > 0) out.push(...file.intro, "");
  for (const service of services) {
    const sections = file.sections.filter((s) => serviceOf(s.title) === service);
    const notes = file.notes[service] ?? [];
    if (sections.length === 0 && notes.length === 0) continue;
    out.push(`## ${serviceHeadings[service]}`, "");
    if (notes.length > 0) out.push(...notes, "");
    for (const section of sections) out.push(...formatSection(section));
  }
  while (out.length > 0 && out.at(-1) === "") out.pop();
  return `${out.join("\n")}\n`;
}

/**
 * The sections a benchmark printed to stdout: each `### ` title with the lines up to the next
 * one. Lines before the first title, and `## ` headings, are not part of any section.
 */
export function parseBenchOutput(stdout: string, measured: string): Section[] {
  const lines = stdout.replace(/\r\n/g, "\n").split("\n");
  const sections: Section[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!isSectionHeading(lines[i]!)) continue;
    let end = i + 1;
    while (end < lines.length && !isSectionHeading(lines[end]!) && !isGroupHeading(lines[end]!)) end++;
    const { title, body } = readSection(lines, i, end);
    sections.push({ title, measured, body });
    i = end - 1;
  }
  return sections;
}

export interface SectionUpdate {
  next: Section;
  /** The section it replaced; undefined when the benchmark had none recorded. */
  previous?: Section;
}

/**
 * Puts `incoming` into `file`: each replaces the recorded section with the same normalised title
 * in place, or is added after the others. Sections not in `incoming` are left as they are. When
 * `incoming` holds one benchmark twice, the later one is kept.
 */
export function updateSections(file: ResultsFile, incoming: readonly Section[]): { file: ResultsFile; updates: SectionUpdate[] } {
  const sections = [...file.sections];
  const updates: SectionUpdate[] = [];
  for (const next of incoming) {
    const key = normaliseTitle(next.title);
    const at = sections.findIndex((s) => normaliseTitle(s.title) === key);
    const earlier = updates.findIndex((u) => normaliseTitle(u.next.title) === key);
    if (earlier !== -1) {
      updates[earlier] = { next, previous: updates[earlier]!.previous };
    } else {
      updates.push({ next, previous: at === -1 ? undefined : sections[at] });
    }
    if (at === -1) sections.push(next);
    else sections[at] = next;
  }
  return { file: { ...file, sections }, updates };
}

// ---- tables and differences ------------------------------------------------------------------

export interface Table {
  header: string[];
  rows: string[][];
}

const isTableLine = (line: string) => line.trimStart().startsWith("|");
const isDelimiterRow = (cells: string[]) => cells.length > 0 && cells.every((c) => /^:?-{3,}:?$/.test(c));

export function splitRow(line: string): string[] {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|")) text = text.slice(0, -1);
  return text.split("|").map((c) => c.trim());
}

/** Markdown tables in `lines`: a header row, a delimiter row, then rows. */
export function parseTables(lines: readonly string[]): Table[] {
  const tables: Table[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!isTableLine(lines[i]!) || i + 1 >= lines.length || !isTableLine(lines[i + 1]!)) continue;
    const header = splitRow(lines[i]!);
    if (!isDelimiterRow(splitRow(lines[i + 1]!))) continue;
    const rows: string[][] = [];
    let j = i + 2;
    for (; j < lines.length && isTableLine(lines[j]!); j++) rows.push(splitRow(lines[j]!));
    tables.push({ header, rows });
    i = j - 1;
  }
  return tables;
}

/** A ratio as written: `0.83×`, `**1.02×**`, `13× less`, or a percentage (`138%`). */
export function parseRatio(cell: string): { value: number; unit: "×" | "%" } | undefined {
  const match = /^\**\s*([+-]?\d[\d,]*(?:\.\d+)?)\s*(×|%)/.exec(cell.trim());
  if (match === undefined || match === null) return undefined;
  return { value: Number(match[1]!.replace(/,/g, "")), unit: match[2] as "×" | "%" };
}

/** Columns whose percentages are ratios against the raw disk (`broker/raw`, `of raw MB/s`); elsewhere only `×` values are ratios. */
const percentRatioHeader = /\/raw\b|\bof raw\b/i;

function ratioCell(header: string, cell: string): { value: number; unit: "×" | "%" } | undefined {
  const ratio = parseRatio(cell);
  if (ratio === undefined) return undefined;
  return ratio.unit === "×" || percentRatioHeader.test(header) ? ratio : undefined;
}

/** Each row's label: its first cells, as many as make it unique in the table (then a count). */
function rowLabels(table: Table): string[] {
  const width = Math.max(1, table.header.length);
  for (let k = 1; k <= width; k++) {
    const labels = table.rows.map((r) =>
      r
        .slice(0, k)
        .map((c) => c.replace(/\*\*/g, ""))
        .join(" · "),
    );
    if (new Set(labels).size === labels.length || k === width) {
      const seen = new Map<string, number>();
      return labels.map((label) => {
        const n = (seen.get(label) ?? 0) + 1;
        seen.set(label, n);
        return n === 1 ? label : `${label} (${n})`;
      });
    }
  }
  return [];
}

/** A table's identity within its section: its first header cell and how many tables before it had the same. */
function tableKeys(tables: readonly Table[]): string[] {
  const seen = new Map<string, number>();
  return tables.map((t) => {
    const first = t.header[0] ?? "";
    const n = (seen.get(first) ?? 0) + 1;
    seen.set(first, n);
    return n === 1 ? first : `${first} (table ${n})`;
  });
}

/** A row label made of numbers only (`407,942`, `3,981, 3,634`): a measurement, not a name. */
const isNumberLabel = (label: string) => /^[\d\s.,%×·+-]+$/.test(label) && /\d/.test(label);

const normaliseNumbers = (text: string) =>
  text
    .replace(/[+-]?\d(?:[\d,.]*\d)?/g, "#")
    .replace(/\s+/g, " ")
    .trim();

function bodyOutsideTables(lines: readonly string[]): string[] {
  return lines.filter((l) => !isTableLine(l) && l.trim() !== "");
}

const isVerdict = (line: string) => /^\s*\*\*Verdict:?\*\*/.test(line);

/** The `×` ratios written in a line of prose, each with the words before it. */
function proseRatios(line: string): { label: string; value: number }[] {
  const found: { label: string; value: number }[] = [];
  const pattern = /([+-]?\d[\d,]*(?:\.\d+)?)\s*×/g;
  for (const match of line.matchAll(pattern)) {
    const before = line.slice(0, match.index);
    const clauseStart = Math.max(before.lastIndexOf(","), before.lastIndexOf(";"), before.lastIndexOf(":"), before.lastIndexOf("("));
    const local = before.slice(clauseStart + 1).trim();
    const lead = before.slice(0, Math.max(0, before.indexOf(":"))).trim();
    const label = [lead.length > 60 ? `${lead.slice(0, 57)}…` : lead, local].filter((s) => s !== "").join(": ");
    found.push({ label: label === "" ? "ratio" : label, value: Number(match[1]!.replace(/,/g, "")) });
  }
  return found;
}

export interface DiffOptions {
  /** Relative change below which a ratio counts as unchanged; 0.1 means ±10%. */
  noise: number;
}

export interface SectionDiff {
  /** One line per difference worth reading, without indentation. */
  lines: string[];
  /** How many ratios were compared (moved or not). */
  compared: number;
}

const formatChange = (from: number, to: number) => {
  if (from === 0) return "from 0";
  const change = (to / from - 1) * 100;
  return `${change >= 0 ? "+" : ""}${change.toFixed(0)}%`;
};

const moved = (from: number, to: number, noise: number) => (from === 0 ? to !== 0 : Math.abs(to / from - 1) > noise);

/**
 * Where `next` differs from `previous` beyond noise: a line per table cell holding a ratio (`×`,
 * or a percentage against the raw disk) that moved by more than `noise`, rows and tables that
 * appeared or went, ratios in prose lines that moved, and verdicts whose words changed (numbers
 * aside). Tables are matched by their first header cell, columns by header, rows by their label.
 */
export function diffSection(previous: Section, next: Section, options: DiffOptions): SectionDiff {
  const lines: string[] = [];
  let compared = 0;
  if (previous.title !== next.title) lines.push(`title was: ${previous.title}`);

  const oldTables = parseTables(previous.body);
  const newTables = parseTables(next.body);
  const oldKeys = tableKeys(oldTables);
  const newKeys = tableKeys(newTables);
  newTables.forEach((table, t) => {
    const key = newKeys[t]!;
    const o = oldKeys.indexOf(key);
    if (o === -1) {
      lines.push(`new table: | ${table.header.join(" | ")} |`);
      return;
    }
    const old = oldTables[o]!;
    const oldLabels = rowLabels(old);
    const newLabels = rowLabels(table);
    const where = key === "" ? "" : `[${key}] `;
    // In a table whose first column is a measurement (such as "exposition bytes"), a row whose
    // label is not recorded is compared with the recorded row at its place, when the row counts agree.
    const samePlaces = old.rows.length === table.rows.length;
    const matched = new Set<number>();
    newLabels.forEach((label, r) => {
      const found = oldLabels.indexOf(label);
      const inPlace = samePlaces && isNumberLabel(label) && isNumberLabel(oldLabels[r]!) && !newLabels.includes(oldLabels[r]!);
      const oldRow = found === -1 && inPlace ? r : found;
      if (oldRow === -1) {
        lines.push(`${where}new row: ${label}`);
        return;
      }
      matched.add(oldRow);
      table.header.forEach((column, c) => {
        if (c === 0) return;
        const oc = old.header.indexOf(column);
        if (oc === -1) return;
        const now = ratioCell(column, table.rows[r]![c] ?? "");
        const was = ratioCell(column, old.rows[oldRow]![oc] ?? "");
        if (now === undefined || was === undefined || now.unit !== was.unit) return;
        compared++;
        if (moved(was.value, now.value, options.noise)) {
          lines.push(
            `${where}${label} · ${column}: ${old.rows[oldRow]![oc]!.replace(/\*\*/g, "")} → ${table.rows[r]![c]!.replace(/\*\*/g, "")} (${formatChange(was.value, now.value)})`,
          );
        }
      });
    });
    oldLabels.forEach((label, r) => {
      if (!matched.has(r)) lines.push(`${where}row gone: ${label}`);
    });
  });
  oldTables.forEach((table, t) => {
    if (!newKeys.includes(oldKeys[t]!)) lines.push(`table gone: | ${table.header.join(" | ")} |`);
  });

  // Prose lines with ratios (e.g. "against redis-server: rewrite 1.64×, load 0.81×"), matched by their words.
  const oldProse = bodyOutsideTables(previous.body).filter((l) => !isVerdict(l));
  for (const line of bodyOutsideTables(next.body).filter((l) => !isVerdict(l))) {
    const ratios = proseRatios(line);
    if (ratios.length === 0) continue;
    const match = oldProse.find((l) => normaliseNumbers(l) === normaliseNumbers(line));
    if (match === undefined) continue;
    const oldRatios = proseRatios(match);
    ratios.forEach((ratio, i) => {
      const was = oldRatios[i];
      if (was === undefined) return;
      compared++;
      if (moved(was.value, ratio.value, options.noise)) {
        lines.push(`${ratio.label}: ${was.value}× → ${ratio.value}× (${formatChange(was.value, ratio.value)})`);
      }
    });
  }

  const oldVerdicts = previous.body.filter(isVerdict);
  const newVerdicts = next.body.filter(isVerdict);
  newVerdicts.forEach((verdict, i) => {
    const was = oldVerdicts[i];
    if (was === undefined) {
      lines.push(`new verdict: ${verdict.trim()}`);
    } else if (normaliseNumbers(was) !== normaliseNumbers(verdict)) {
      lines.push(`verdict changed: ${verdict.trim()}`, `  was: ${was.trim()}`);
    }
  });
  for (const verdict of oldVerdicts.slice(newVerdicts.length)) lines.push(`verdict gone: ${verdict.trim()}`);
  return { lines, compared };
}

/** The report `./svc bench` prints for one section it recorded: a heading line, then indented differences. */
export function describeUpdate(update: SectionUpdate, options: DiffOptions): string[] {
  const { next, previous } = update;
  if (previous === undefined) return [`${next.title}: new, nothing recorded to compare with`];
  const diff = diffSection(previous, next, options);
  const band = `±${Math.round(options.noise * 100)}%`;
  const since = previous.measured === "" ? "the recorded run" : `the run of ${previous.measured}`;
  if (diff.lines.length === 0) {
    return [`${next.title}: as ${since} (${diff.compared} ratios compared, none moved beyond ${band}; no verdict changed)`];
  }
  return [`${next.title}: against ${since} (${diff.compared} ratios compared, noise band ${band}):`, ...diff.lines.map((l) => `  ${l}`)];
}

// bench/RESULTS.md as data (src/cli/bench-results.ts), its conversion from the old append-only
// log (bench/lib/results-from-log.ts) and `svc bench`'s recording step (src/cli/bench.ts): real
// markdown in, real markdown out.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  defaultIntro,
  describeUpdate,
  diffSection,
  formatResultsFile,
  normaliseTitle,
  parseBenchOutput,
  parseRatio,
  parseResultsFile,
  parseTables,
  type Section,
  serviceOf,
  updateSections,
} from "../../src/cli/bench-results.ts";
import { measuredFromHeading, parseLog, resultsFromLog, splitClosingNotes } from "../../bench/lib/results-from-log.ts";
import { recordBenchOutput } from "../../src/cli/bench.ts";

const md = (...lines: string[]) => `${lines.join("\n")}\n`;

const recorded = md(
  "# Benchmark results",
  "",
  "Intro prose.",
  "",
  "## kv",
  "",
  "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 50000 -r 100000), median of 3 interleaved rounds",
  "",
  "> Measured 2026-11-26 · AMD EPYC · 2 cores · Bun 1.4.5 — run “kv: the session's final head”",
  "",
  "| test | redis ops/s | svc ops/s | svc/redis |",
  "|---|---:|---:|---:|",
  "| set -P 1 | 71,429 | 61,881 | 0.87× |",
  "| incr -P 1 | 57,078 | 53,362 | 0.93× |",
  "| set -P 16 | 349,650 | 588,235 | 1.68× |",
  "| **median** | | | **1.18×** |",
  "",
  "### kv: REST (wrk -t 2 -c 50 -d 5s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 100,000, median of 3",
  "",
  "> Measured 2026-11-26 · AMD EPYC · 2 cores · Bun 1.4.5",
  "",
  "| operation | REST ops/s | RESP ops/s | REST/RESP |",
  "|---|---:|---:|---:|",
  "| PUT /kv/{key} vs SET | 45,799 | 82,368 | 0.56× |",
  "| GET /kv/{key} vs GET | 74,665 | 95,484 | 0.78× |",
  "",
  "## broker",
  "",
  "### broker: authentication, grants and quotas on vs off (wrk -t 2 -c 4 -d 5s, 2 alternating runs each, medians)",
  "",
  "> Measured 2026-11-29 (14:28 UTC) · AMD EPYC · 2 cores · Bun 1.4.5",
  "",
  "| load | off req/s | on req/s | on/off | off CPU µs/req | on CPU µs/req | CPU on/off |",
  "|---|---:|---:|---:|---:|---:|---:|",
  "| produce (100 × 100 B) | 3,639 | 3,960 | 1.088× | 270 | 396 | 1.467× |",
  "| consume (1000 records) | 1,102 | 1,223 | 1.110× | 986 | 1041 | 1.055× |",
  "",
  "**Verdict:** access control costs within 5% of the request rate.",
  "",
  "## native, wasm and other kernels",
  "",
  "### crc32c: native vs TypeScript",
  "",
  "> Measured 2026-11-23 · AMD EPYC · 2 cores · Bun 1.4.5",
  "",
  "| case | native ops/s | TS ops/s | ratio | native MB/s | TS MB/s |",
  "|---|---:|---:|---:|---:|---:|",
  "| 64 B | 3,760,248 | 2,425,072 | 1.55× | 240.7 | 155.2 |",
);

/** What `bun bench/kv.ts` prints for the AOF table, with other counts in its title and one ratio moved. */
const kvAofOutput = md(
  "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds",
  "",
  "| test | redis ops/s | svc ops/s | svc/redis |",
  "|---|---:|---:|---:|",
  "| set -P 1 | 71,000 | 60,000 | 0.85× |",
  "| incr -P 1 | 57,078 | 40,000 | 0.70× |",
  "| set -P 16 | 349,650 | 588,235 | 1.68× |",
  "| lpush -P 16 | 568,182 | 806,452 | 1.42× |",
  "| **median** | | | **1.10×** |",
  "",
);

describe("titles", () => {
  test("counts, parenthesised load and 'median of' clauses do not split a benchmark", () => {
    const same = [
      [
        "kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 50000 -r 100000)",
        "kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds",
      ],
      [
        "broker: durable produce vs the disk's writev+fdatasync (wrk -t 2 -c 4 -d 5s)",
        "broker: durable produce (--flush-every-records 1) vs the disk's writev+fdatasync, wrk -t 2 -c 4 -d 5s",
      ],
      [
        "broker: consume from the page cache (max_records 10,000, max_bytes 8 MiB)",
        "broker: consume from the page cache (wrk -t 2 -c 4 -d 5s, max_records 10,000, max_bytes 8 MiB)",
      ],
      [
        "kv: REST (wrk -t 2 -c 50 -d 5s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 100,000, median of 3",
        "kv: REST (wrk -t 2 -c 50 -d 10s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 200,000, median of 5",
      ],
      [
        "kv: svc kv vs redis-server 7.0.15 (redis-benchmark -c 50 -n 500000 -r 100000)",
        "kv: svc kv vs redis-server 7.2.4 (redis-benchmark -c 50 -n 50000 -r 100000)",
      ],
    ];
    for (const [a, b] of same) expect(normaliseTitle(a!)).toBe(normaliseTitle(b!));
    const different = [
      "kv: append-only file, appendfsync everysec (redis-benchmark -c 50 -n 500000 -r 100000)",
      "kv: memory for 1,000,000 small string keys (RSS growth after MEMORY PURGE)",
      "kv: memory for 1,000,000 small string keys set with EX (RSS growth after MEMORY PURGE, fresh servers)",
    ];
    const keys = new Set([normaliseTitle(same[0]![0]!), ...different.map(normaliseTitle)]);
    expect(keys.size).toBe(4);
  });

  test("a title's service is its prefix; kernels are other", () => {
    expect(serviceOf("kv: streams (…)")).toBe("kv");
    expect(serviceOf("broker: GET /metrics")).toBe("broker");
    expect(serviceOf("media: session setup")).toBe("media");
    expect(serviceOf("crm: list with q")).toBe("crm");
    expect(serviceOf("crc32c: native vs TypeScript")).toBe("other");
    expect(serviceOf("HyperLogLog: wasm vs TypeScript reference")).toBe("other");
  });
});

describe("parse and format", () => {
  test("a recorded file parses into its sections and formats back to the same text", () => {
    const file = parseResultsFile(recorded);
    expect(file.intro).toEqual(["# Benchmark results", "", "Intro prose."]);
    expect(file.sections.map((s) => serviceOf(s.title))).toEqual(["kv", "kv", "broker", "other"]);
    const aof = file.sections[0]!;
    expect(aof.measured).toBe("2026-11-26 · AMD EPYC · 2 cores · Bun 1.4.5 — run “kv: the session's final head”");
    expect(aof.body[0]).toBe("| test | redis ops/s | svc ops/s | svc/redis |");
    expect(aof.body.at(-1)).toBe("| **median** | | | **1.18×** |");
    expect(formatResultsFile(file)).toBe(recorded);
  });

  test("sections are written grouped by service in the order kv, broker, media, crm, other", () => {
    const file = parseResultsFile(md("# R", "", "### crc32c: x", "", "| a | b |", "|---|---:|", "| 1 | 2× |", "", "### crm: y", "", "### kv: z", "", "text"));
    const text = formatResultsFile(file);
    expect(text.split("\n").filter((l) => l.startsWith("#"))).toEqual([
      "# R",
      "## kv",
      "### kv: z",
      "## crm",
      "### crm: y",
      "## native, wasm and other kernels",
      "### crc32c: x",
    ]);
    expect(formatResultsFile(parseResultsFile(text))).toBe(text);
  });

  test("an empty file has no intro and no sections; formatting it gives an empty file", () => {
    for (const text of ["", "\n", "\n\n  \n"]) {
      const file = parseResultsFile(text);
      expect(file).toEqual({ intro: [], notes: {}, sections: [] });
      expect(formatResultsFile(file)).toBe("\n");
    }
  });

  test("a malformed file parses without throwing and loses no text", () => {
    const malformed = md(
      "stray line before any heading",
      "## something nobody defined",
      "a note under it",
      "### kv: a section without a Measured line",
      "| not a table: no delimiter row |",
      "| x |",
      "### ",
      "## kv",
      "",
      "kv's own note",
      "### kv: second",
      "> Measured somewhen",
    ).replace(/\n/g, "\r\n");
    const file = parseResultsFile(malformed);
    expect(file.intro).toEqual(["stray line before any heading"]);
    expect(file.notes).toEqual({ other: ["a note under it"], kv: ["kv's own note"] });
    expect(file.sections.map((s) => [s.title, s.measured, s.body.length])).toEqual([
      ["kv: a section without a Measured line", "", 2],
      ["", "", 0],
      ["kv: second", "somewhen", 0],
    ]);
    expect(parseTables(file.sections[0]!.body)).toEqual([]);
    const text = formatResultsFile(file);
    for (const kept of ["stray line", "a note under it", "kv's own note", "| x |", "> Measured somewhen"]) expect(text).toContain(kept);
    expect(formatResultsFile(parseResultsFile(text))).toBe(text);
  });

  test("a benchmark's stdout gives its sections, each with the run's Measured line", () => {
    const stdout = `\n${kvAofOutput}\n### kv: REST (wrk -t 2 -c 50 -d 5s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 100,000, median of 3\n\n| operation | REST ops/s | RESP ops/s | REST/RESP |\n|---|---:|---:|---:|\n| PUT /kv/{key} vs SET | 40,000 | 82,368 | 0.49× |\n\n`;
    const sections = parseBenchOutput(stdout, "2026-12-01 · CPU · 2 cores · Bun 1.4.5 — by `./svc bench kv` at abc1234");
    expect(sections.map((s) => s.title.slice(0, 25))).toEqual(["kv: append-only file, app", "kv: REST (wrk -t 2 -c 50 "]);
    expect(sections[0]!.body).toHaveLength(7);
    expect(sections.every((s) => s.measured.endsWith("at abc1234"))).toBe(true);
    expect(parseBenchOutput("no sections here\n| a |\n", "m")).toEqual([]);
  });
});

describe("updating", () => {
  test("a run's section replaces the recorded one in place, new ones are added, the rest stay", () => {
    const file = parseResultsFile(recorded);
    const incoming = parseBenchOutput(
      `${kvAofOutput}\n### kv: streams (redis-benchmark -c 50 -n 200,000)\n\n| case | redis | svc | svc/redis |\n|---|---:|---:|---:|\n| XADD | 1 | 1 | 1.00× |\n`,
      "NEW",
    );
    const { file: updated, updates } = updateSections(file, incoming);
    expect(updates.map((u) => [u.next.title.slice(0, 20), u.previous?.measured.slice(0, 10)])).toEqual([
      ["kv: append-only file", "2026-11-26"],
      ["kv: streams (redis-b", undefined],
    ]);
    expect(updated.sections.map((s) => s.measured.slice(0, 10))).toEqual(["NEW", "2026-11-26", "2026-11-29", "2026-11-23", "NEW"]);
    expect(file.sections[0]!.measured).not.toBe("NEW"); // the input is not changed
    const text = formatResultsFile(updated);
    expect(text).toContain(
      "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds\n\n> Measured NEW\n\n| test |",
    );
    expect(text).not.toContain("median of 3 interleaved rounds");
    // The new kv section is written with kv, before broker; the other sections are as they were.
    expect(text.indexOf("### kv: streams")).toBeLessThan(text.indexOf("## broker"));
    for (const start of ["### kv: REST", "### broker: authentication", "### crc32c"]) {
      const at = recorded.indexOf(start);
      const block = recorded.slice(at, recorded.indexOf("\n### ", at + 1) === -1 ? undefined : recorded.indexOf("\n##", at + 1));
      expect(text).toContain(block.trim());
    }
  });

  test("a benchmark printed twice in one run keeps the later one", () => {
    const [a, b] = [kvAofOutput, kvAofOutput.replace("0.85×", "0.99×")].map((o) => parseBenchOutput(o, "m")[0]!);
    const { file, updates } = updateSections(parseResultsFile(recorded), [a!, b!]);
    expect(updates).toHaveLength(1);
    expect(updates[0]!.previous?.measured).toStartWith("2026-11-26");
    expect(file.sections[0]!.body).toContain("| set -P 1 | 71,000 | 60,000 | 0.99× |");
  });
});

describe("differences", () => {
  const noise = { noise: 0.1 };
  const recordedAof = parseResultsFile(recorded).sections[0]!;
  const newAof = parseBenchOutput(kvAofOutput, "m")[0]!;

  test("ratios that moved beyond the band, new and gone rows, and the title", () => {
    const { lines, compared } = diffSection(recordedAof, newAof, noise);
    expect(lines).toEqual([`title was: ${recordedAof.title}`, "[test] incr -P 1 · svc/redis: 0.93× → 0.70× (-25%)", "[test] new row: lpush -P 16"]);
    expect(compared).toBe(4); // set -P 1 (0.87 → 0.85) and the median (1.18 → 1.10) are within 10%
    expect(diffSection(recordedAof, newAof, { noise: 0.05 }).lines).toContain("[test] median · svc/redis: 1.18× → 1.10× (-7%)");
    const shrunk = { ...newAof, body: newAof.body.filter((l) => !l.startsWith("| set -P 16")) };
    expect(diffSection(recordedAof, shrunk, noise).lines).toContain("[test] row gone: set -P 16");
  });

  test("a changed verdict, percentages against the raw disk, and ratios in prose", () => {
    const before: Section = {
      title: "broker: durable produce",
      measured: "then",
      body: [
        "| value | records/req | broker req/s | broker CPU | broker/raw |",
        "|---|---:|---:|---:|---:|",
        "| 100 B | 1 | 9,209 | 71% | 138% |",
        "| 100 B | 1,000 | 1,232 | 111% | 51% |",
        "",
        "against redis-server: rewrite 1.64×, load 0.81× (theirs/ours: above 1 means svc is faster)",
        "",
        "**Verdict:** produce at 1000-record batches is 51% of raw disk (target ≥ 50%): met.",
      ],
    };
    const after: Section = {
      ...before,
      body: [
        "| value | records/req | broker req/s | broker CPU | broker/raw |",
        "|---|---:|---:|---:|---:|",
        "| 100 B | 1 | 9,000 | 99% | 140% |",
        "| 100 B | 1,000 | 1,000 | 111% | 45% |",
        "",
        "against redis-server: rewrite 1.60×, load 0.60× (theirs/ours: above 1 means svc is faster)",
        "",
        "**Verdict:** produce at 1000-record batches is 45% of raw disk (target ≥ 50%): NOT met.",
      ],
    };
    expect(diffSection(before, after, noise).lines).toEqual([
      "[value] 100 B · 1,000 · broker/raw: 51% → 45% (-12%)", // CPU percentages are not ratios
      "against redis-server: load: 0.81× → 0.6× (-26%)",
      "verdict changed: **Verdict:** produce at 1000-record batches is 45% of raw disk (target ≥ 50%): NOT met.",
      "  was: **Verdict:** produce at 1000-record batches is 51% of raw disk (target ≥ 50%): met.",
    ]);
    // Only numbers moved in the verdict, within noise: nothing to say.
    const same = { ...before, body: before.body.map((l) => l.replace("51% of raw", "52% of raw")) };
    expect(diffSection(before, same, noise).lines).toEqual([]);
  });

  test("a table whose first column is a measurement is compared row by row in place", () => {
    const table = (bytes: string, ratio: string): Section => ({
      title: "t",
      measured: "",
      body: ["| exposition bytes | median ms | vs before |", "|---:|---:|---:|", `| ${bytes} | 3.11 | ${ratio} |`],
    });
    expect(diffSection(table("407,559", "1.00×"), table("407,942", "1.50×"), noise).lines).toEqual([
      "[exposition bytes] 407,942 · vs before: 1.00× → 1.50× (+50%)",
    ]);
  });

  test("tables are matched by their first header cell, a second alike by its place", () => {
    const body = (a: string, b: string) => [
      "| -P 1 | redis ops/s | ts/redis |",
      "|---|---:|---:|",
      `| set | 1 | ${a} |`,
      "",
      "| -P 1 | redis | redis/svc |",
      "|---|---:|---:|",
      `| set | 1 | ${b} |`,
    ];
    const diff = diffSection({ title: "t", measured: "", body: body("1.00×", "1.00×") }, { title: "t", measured: "", body: body("1.00×", "0.50×") }, noise);
    expect(diff.lines).toEqual(["[-P 1 (table 2)] set · redis/svc: 1.00× → 0.50× (-50%)"]);
    const added = diffSection({ title: "t", measured: "", body: [] }, { title: "t", measured: "", body: body("1×", "1×") }, noise);
    expect(added.lines).toEqual(["new table: | -P 1 | redis ops/s | ts/redis |", "new table: | -P 1 | redis | redis/svc |"]);
  });

  test("ratios are read as written", () => {
    expect(parseRatio("**0.92×**")).toEqual({ value: 0.92, unit: "×" });
    expect(parseRatio("13× less")).toEqual({ value: 13, unit: "×" });
    expect(parseRatio("1,232×")).toEqual({ value: 1232, unit: "×" });
    expect(parseRatio("-2.3%")).toEqual({ value: -2.3, unit: "%" });
    expect(parseRatio("85.0 MiB")).toBeUndefined();
    expect(parseRatio("")).toBeUndefined();
  });

  test("the report names the recorded run and says when nothing moved", () => {
    expect(describeUpdate({ next: recordedAof, previous: recordedAof }, noise)).toEqual([
      `${recordedAof.title}: as the run of ${recordedAof.measured} (4 ratios compared, none moved beyond ±10%; no verdict changed)`,
    ]);
    expect(describeUpdate({ next: newAof }, noise)).toEqual([`${newAof.title}: new, nothing recorded to compare with`]);
    expect(describeUpdate({ next: newAof, previous: recordedAof }, noise)[1]).toBe(`  title was: ${recordedAof.title}`);
  });
});

describe("from the append-only log", () => {
  const log = md(
    "# Benchmark results",
    "",
    "Old intro.",
    "",
    "## 2026-11-23 · AMD EPYC · 2 cores · Bun 1.4.5 · kv (issue 3)",
    "",
    "Notes about the run.",
    "",
    "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 50000 -r 100000)",
    "",
    "| test | redis ops/s | svc ops/s | svc/redis |",
    "|---|---:|---:|---:|",
    "| set -P 1 | 1 | 1 | 1.00× |",
    "",
    "**Against the targets**: notes about the whole run.",
    "",
    "## 2026-11-27 (14:25 UTC) · Intel Xeon · 2 cores · Bun 1.4.5 · kv: the AOF alone",
    "",
    "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds",
    "",
    "| test | redis ops/s | svc ops/s | svc/redis |",
    "|---|---:|---:|---:|",
    "| set -P 1 | 1 | 2 | 2.00× |",
    "",
    "## 2026-11-27 (13:55 UTC) · Intel Xeon · 2 cores · Bun 1.4.5 · kv: after the review",
    "",
    "What changed.",
    "",
    "## svc bench — 2026-11-27 · Intel(R) Xeon(R) Processor · 2 cores · Bun 1.4.5",
    "[svc] ▶ kv: bun bench/kv.ts",
    "### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds",
    "",
    "| test | redis ops/s | svc ops/s | svc/redis |",
    "|---|---:|---:|---:|",
    "| set -P 1 | 1 | 3 | 3.00× |",
    "",
    "### kv: REST (wrk -t 2 -c 50 -d 5s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 100,000, median of 3",
    "",
    "| operation | REST ops/s | RESP ops/s | REST/RESP |",
    "|---|---:|---:|---:|",
    "| PUT /kv/{key} vs SET | 1 | 2 | 0.50× |",
    "[svc] ✔ kv (600.0s)",
    "[svc] summary:",
    "",
    "## 2026-11-28 · Intel Xeon · 2 cores · Bun 1.4.5 · an untitled table",
    "",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
  );

  test("the runs: headings, pasted svc bench runs under the heading before them, progress lines dropped", () => {
    const runs = parseLog(log);
    expect(runs.map((r) => [r.date, r.minutes, r.sections.length, r.untitledTables])).toEqual([
      ["2026-11-23", undefined, 1, 0],
      ["2026-11-27", 14 * 60 + 25, 1, 0],
      ["2026-11-27", 13 * 60 + 55, 0, 0],
      ["2026-11-27", 13 * 60 + 55, 2, 0],
      ["2026-11-28", undefined, 0, 1],
    ]);
    expect(runs[3]!.measured).toBe("2026-11-27 (13:55 UTC) · Intel Xeon · 2 cores · Bun 1.4.5 — run “kv: after the review”");
    expect(runs[3]!.sections[1]!.body.at(-1)).toBe("| PUT /kv/{key} vs SET | 1 | 2 | 0.50× |");
    expect(runs[0]!.sections[0]!.body.at(-1)).toBe("| set -P 1 | 1 | 1 | 1.00× |");
    expect(runs[0]!.closingNotes).toEqual(["**Against the targets**: notes about the whole run."]);
  });

  test("each benchmark's newest section: by date, then by time when both runs give one", () => {
    const { file, sources } = resultsFromLog(log, ["# Benchmark results"]);
    expect(file.sections.map((s) => s.body.at(-1))).toEqual(["| set -P 1 | 1 | 2 | 2.00× |", "| PUT /kv/{key} vs SET | 1 | 2 | 0.50× |"]);
    expect(sources.map((s) => s.heading.slice(0, 24))).toEqual(["2026-11-27 (14:25 UTC) ·", "2026-11-27 (13:55 UTC) ·"]);
    const text = formatResultsFile(file);
    expect(text).toStartWith(
      "# Benchmark results\n\n## kv\n\n### kv: append-only file, appendfsync always (redis-benchmark -c 50 -n 100000 -r 100000), median of 5 interleaved rounds\n\n> Measured 2026-11-27 (14:25 UTC) · Intel Xeon · 2 cores · Bun 1.4.5 — run “kv: the AOF alone”\n",
    );
    expect(formatResultsFile(parseResultsFile(text))).toBe(text);
  });

  test("headings and closing notes", () => {
    expect(measuredFromHeading("2026-11-23 · AMD EPYC · 2 cores · Bun 1.4.5")).toBe("2026-11-23 · AMD EPYC · 2 cores · Bun 1.4.5");
    expect(measuredFromHeading("2026-11-29 (12:45 UTC) · AMD EPYC · 2 cores · Bun 1.4.5 · broker: a · b")).toBe(
      "2026-11-29 (12:45 UTC) · AMD EPYC · 2 cores · Bun 1.4.5 — run “broker: a · b”",
    );
    expect(splitClosingNotes(["| a |", "|---|", "| 1 |", "", "Scrapes' CPU: 1%", "", "**Verdict:** met.", "", "Notes."])).toEqual({
      kept: ["| a |", "|---|", "| 1 |", "", "Scrapes' CPU: 1%", "", "**Verdict:** met."],
      notes: ["Notes."],
    });
    expect(splitClosingNotes(["only prose"])).toEqual({ kept: ["only prose"], notes: [] });
  });
});

describe("bench/RESULTS.md", () => {
  const text = readFileSync(join(import.meta.dir, "../../bench/RESULTS.md"), "utf8");
  const file = parseResultsFile(text);

  test("is in the recorded form: one section per benchmark, each with its Measured line", () => {
    expect(formatResultsFile(file)).toBe(text);
    expect(file.intro.join("\n")).toContain("git log -p bench/RESULTS.md");
    expect(file.sections.length).toBeGreaterThan(0);
    const keys = file.sections.map((s) => normaliseTitle(s.title));
    expect(new Set(keys).size).toBe(keys.length);
    for (const section of file.sections) expect(section.measured).toMatch(/^\d{4}-\d{2}-\d{2}\b.* · \d+ cores · Bun /);
  });
});

describe("svc bench's recording step", () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-results-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const outcome = { name: "kv", exitCode: 0, seconds: 1, stdout: `## not a section\n${kvAofOutput}` };

  test("compares with the file, then replaces the benchmark's sections in it", () => {
    const path = join(dir, "RESULTS.md");
    writeFileSync(path, recorded);
    const report = recordBenchOutput(outcome, "2026-12-01 · CPU · 2 cores · Bun 1.4.5 — by `./svc bench kv` at abc1234", path, true, 0.1);
    expect(report[0]).toStartWith("compared with ");
    expect(report).toContain("    [test] incr -P 1 · svc/redis: 0.93× → 0.70× (-25%)");
    expect(report.at(-1)).toStartWith(
      "  kv: REST (wrk -t 2 -c 50 -d 5s) vs RESP (redis-benchmark -c 50 -P 1), same process, keys from 100,000, median of 3: not printed by this run, left as recorded",
    );
    const written = readFileSync(path, "utf8");
    expect(written).toContain("> Measured 2026-12-01 · CPU · 2 cores · Bun 1.4.5 — by `./svc bench kv` at abc1234\n\n| test |");
    expect(written).not.toContain("## not a section");
    expect(written.replace(/### kv: append-only[\s\S]*?\n(?=### )/, "")).toBe(recorded.replace(/### kv: append-only[\s\S]*?\n(?=### )/, ""));
  });

  test("--no-record compares only; a missing file is created with the default intro; a failed run is not recorded", () => {
    const path = join(dir, "kept.md");
    writeFileSync(path, recorded);
    expect(recordBenchOutput(outcome, "m", path, false, 0.1).length).toBeGreaterThan(1);
    expect(readFileSync(path, "utf8")).toBe(recorded);

    const fresh = join(dir, "fresh.md");
    recordBenchOutput(outcome, "m", fresh, true, 0.1);
    const created = readFileSync(fresh, "utf8");
    expect(created).toStartWith(`${defaultIntro.join("\n")}\n\n## kv\n\n### kv: append-only file`);

    const failed = join(dir, "failed.md");
    writeFileSync(failed, "");
    expect(recordBenchOutput({ ...outcome, exitCode: 1 }, "m", failed, true, 0.1)).toEqual([]);
    expect(readFileSync(failed, "utf8")).toBe("");
  });
});

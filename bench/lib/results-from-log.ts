/**
 * Turns the old bench/RESULTS.md — an append-only log of runs, each under a
 * `## <date> · <machine> · <what>` heading (and, for runs pasted from `./svc bench`, a
 * `## svc bench — <date> · <machine>` line) — into the form of src/cli/bench-results.ts: the newest
 * result of each benchmark, with the date and machine line of the run it came from.
 *
 * The newest of a benchmark's sections is the one of the latest date; on the same date, the later
 * one in the file, unless both headings give a time (`(13:55 UTC)`) and its time is earlier. A
 * section is its `### ` title and the lines up to the next heading, kept as they are, but for the
 * `[svc] …` progress lines a pasted `./svc bench` run carried. The runs' own notes (the prose
 * under each `## ` heading before its first `### `) are not kept: they stay in git's history.
 *
 *   bun bench/lib/results-from-log.ts [file]          rewrite the file (default bench/RESULTS.md)
 *   bun bench/lib/results-from-log.ts --check [file]  print what it would write, change nothing
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultIntro, formatResultsFile, normaliseTitle, parseTables, type ResultsFile, type Section, trimBlankLines } from "../../src/cli/bench-results.ts";

export interface LogRun {
  /** The `## ` heading's text. */
  heading: string;
  /** The `> Measured` text for its sections. */
  measured: string;
  date: string;
  /** Minutes after midnight UTC, when the heading gives a time. */
  minutes?: number;
  sections: Section[];
  /** Tables printed under the run's heading without a `### ` title of their own (not kept). */
  untitledTables: number;
  /** The notes written after the run's last section (not kept). */
  closingNotes: string[];
}

const isTableLine = (line: string) => line.trimStart().startsWith("|");
const isVerdict = (line: string) => line.trimStart().startsWith("**Verdict:**");

/**
 * A run's last section ends, in the log, with whatever was written about the whole run
 * (`**Against the targets.**`, what moved since the run before). The benchmarks end their output
 * with a table or a **Verdict:** line, so what follows the last of those is the run's notes.
 */
export function splitClosingNotes(body: readonly string[]): { kept: string[]; notes: string[] } {
  let end = body.length;
  while (end > 0 && !isTableLine(body[end - 1]!) && !isVerdict(body[end - 1]!)) end--;
  if (end === 0) return { kept: [...body], notes: [] };
  return { kept: trimBlankLines(body.slice(0, end)), notes: trimBlankLines(body.slice(end)) };
}

/** "2026-11-29 (10:55 UTC) · AMD EPYC · 2 cores · Bun 1.4.5 · kv: …" → date and machine, then the run it names. */
export function measuredFromHeading(heading: string): string {
  const fields = heading.split(" · ");
  const bun = fields.findIndex((f) => /^Bun\b/.test(f.trim()));
  if (bun === -1) return heading.trim();
  const where = fields
    .slice(0, bun + 1)
    .join(" · ")
    .trim();
  const what = fields
    .slice(bun + 1)
    .join(" · ")
    .trim();
  return what === "" ? where : `${where} — run “${what}”`;
}

function timeOf(heading: string): number | undefined {
  const times = [...heading.matchAll(/\b(\d{1,2}):(\d{2})\b/g)];
  const last = times.at(-1);
  return last === undefined ? undefined : Number(last[1]) * 60 + Number(last[2]);
}

const pastedProgress = /^\[svc\] /;

export function parseLog(text: string): LogRun[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const runs: LogRun[] = [];
  let parent: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith("## ")) continue;
    let end = i + 1;
    while (end < lines.length && !lines[end]!.startsWith("## ")) end++;
    const own = lines[i]!.slice(3).trim();
    const pasted = /^svc bench — (.*)$/.exec(own);
    // A pasted `./svc bench` run belongs to the hand-written heading just before it, which says what was measured.
    const heading = pasted !== null && parent !== undefined ? parent : pasted !== null ? pasted[1]! : own;
    if (pasted === null) parent = own;
    const body = lines.slice(i + 1, end).filter((l) => !pastedProgress.test(l));
    const firstTitle = body.findIndex((l) => l.startsWith("### "));
    const run: LogRun = {
      heading,
      measured: measuredFromHeading(heading),
      date: /\d{4}-\d{2}-\d{2}/.exec(heading)?.[0] ?? "",
      minutes: timeOf(heading),
      sections: [],
      closingNotes: [],
      untitledTables: parseTables(firstTitle === -1 ? body : body.slice(0, firstTitle)).length,
    };
    for (let s = firstTitle; s !== -1 && s < body.length; ) {
      let next = s + 1;
      while (next < body.length && !body[next]!.startsWith("### ")) next++;
      run.sections.push({ title: body[s]!.slice(4).trim(), measured: run.measured, body: trimBlankLines(body.slice(s + 1, next)) });
      s = next;
    }
    const last = run.sections.at(-1);
    if (last !== undefined) {
      const { kept, notes } = splitClosingNotes(last.body);
      last.body = kept;
      run.closingNotes = notes;
    }
    runs.push(run);
    i = end - 1;
  }
  return runs;
}

/** Whether a section of run `b` is newer than one of run `a` that comes before it in the file. */
function newer(a: LogRun, b: LogRun): boolean {
  if (b.date !== a.date) return b.date > a.date;
  if (a.minutes !== undefined && b.minutes !== undefined) return b.minutes >= a.minutes;
  return true;
}

export interface Conversion {
  file: ResultsFile;
  runs: LogRun[];
  /** For each kept section, the run it came from. */
  sources: { title: string; heading: string }[];
}

/** The newest section of each benchmark in the log, in the order benchmarks first appear. */
export function resultsFromLog(text: string, intro: readonly string[] = defaultIntro): Conversion {
  const runs = parseLog(text);
  const kept = new Map<string, { section: Section; run: LogRun }>();
  for (const run of runs) {
    for (const section of run.sections) {
      const key = normaliseTitle(section.title);
      const current = kept.get(key);
      if (current === undefined) kept.set(key, { section, run });
      else if (newer(current.run, run)) kept.set(key, { section, run }); // Map keeps the first insertion's place.
    }
  }
  const entries = [...kept.values()];
  return {
    file: { intro: [...intro], notes: {}, sections: entries.map((e) => e.section) },
    runs,
    sources: entries.map((e) => ({ title: e.section.title, heading: e.run.heading })),
  };
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const path = args.find((a) => !a.startsWith("--")) ?? join(import.meta.dir, "../RESULTS.md");
  const before = readFileSync(path, "utf8");
  if (!/^## \d{4}-\d{2}-\d{2}/m.test(before)) {
    process.stderr.write(`${path} has no "## <date> · …" run headings: it is not the append-only log (already converted?)\n`);
    process.exit(1);
  }
  const { file, runs, sources } = resultsFromLog(before);
  const after = formatResultsFile(file);
  const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  for (const run of runs.filter((r) => r.untitledTables > 0)) {
    process.stderr.write(`not kept: ${run.untitledTables} table(s) without a ### title under "## ${run.heading}"\n`);
  }
  for (const run of runs.filter((r) => r.closingNotes.length > 0)) {
    const kept = sources.some((s) => s.heading === run.heading && s.title === run.sections.at(-1)!.title);
    if (kept) process.stderr.write(`not kept: ${run.closingNotes.length} line(s) of notes after "${run.sections.at(-1)!.title}" in "## ${run.heading}"\n`);
  }
  for (const { title, heading } of sources) process.stderr.write(`${title}\n    from "## ${heading}"\n`);
  process.stderr.write(
    `${runs.length} runs, ${runs.reduce((n, r) => n + r.sections.length, 0)} sections → ${sources.length} benchmarks; ${lineCount(before)} → ${lineCount(after)} lines\n`,
  );
  if (check) process.stdout.write(after);
  else writeFileSync(path, after);
}

/**
 * The examples of a Markdown page, as test/crm/docs-examples.test.ts runs them. Every fenced
 * block is one of:
 * - `console`: a shell session. `$ ` starts a command (a line ending in `\` continues it); the lines
 *   up to the next command are what it prints on standard output, exactly.
 * - `http`: a request (`METHOD /path`, header lines, a blank line, the body), or the answer to the
 *   request before it (`HTTP/1.1 201 Created`, header lines, a blank line, a JSON body). An answer
 *   is abridged: a JSON object shows some of its members, an array every element, each compared
 *   the same way; a header shown must have that value.
 * - `text`: not an example (a synopsis, a grammar); nothing runs.
 * Any other kind of block is an error, so a new example cannot silently escape the test.
 */
import { STATUS_CODES } from "node:http";

export interface ConsoleCommand {
  command: string;
  /** Standard output, lines joined by "\n", without a final newline. */
  output: string;
}

export interface HttpRequestExample {
  method: string;
  path: string;
  headers: [string, string][];
  body: string;
}

export interface HttpAnswerExample {
  status: number;
  reason: string;
  headers: [string, string][];
  /** The parsed JSON body, or undefined when none is shown. */
  body: unknown;
}

export type Example =
  | { kind: "console"; line: number; commands: ConsoleCommand[] }
  | { kind: "request"; line: number; request: HttpRequestExample; answer: HttpAnswerExample };

interface Block {
  lang: string;
  line: number;
  /** The fence's indentation (a block inside a list item), taken off each of its lines. */
  indent: number;
  lines: string[];
}

const fence = /^( {0,8})```(.*)$/;

function fencedBlocks(markdown: string, file: string): Block[] {
  const blocks: Block[] = [];
  let open: Block | null = null;
  markdown.split("\n").forEach((text, i) => {
    const m = fence.exec(text);
    if (m === null) {
      if (open !== null) open.lines.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)));
      return;
    }
    if (open !== null) {
      if (m[2]!.trim() !== "") throw new Error(`${file}:${i + 1}: a block closes with a bare fence`);
      blocks.push(open);
      open = null;
    } else {
      open = { lang: m[2]!.trim(), line: i + 1, indent: m[1]!.length, lines: [] };
    }
  });
  if (open !== null) throw new Error(`${file}: a block opened at line ${(open as Block).line} is never closed`);
  return blocks;
}

function consoleCommands(block: Block, file: string): ConsoleCommand[] {
  const commands: { command: string; output: string[] }[] = [];
  let continued = false;
  for (const text of block.lines) {
    const last = commands.at(-1);
    if (continued && last !== undefined) {
      last.command += `\n${text}`;
    } else if (text.startsWith("$ ")) {
      commands.push({ command: text.slice(2), output: [] });
    } else if (last === undefined) {
      throw new Error(`${file}:${block.line}: a console block starts with a command ("$ ")`);
    } else {
      last.output.push(text);
    }
    continued = text.endsWith("\\") && commands.at(-1)?.output.length === 0;
  }
  return commands.map((c) => ({ command: c.command, output: c.output.join("\n") }));
}

/** Header lines up to the first blank line, then the rest as the body. */
function headersAndBody(lines: string[]): { headers: [string, string][]; body: string } {
  const blank = lines.indexOf("");
  const head = blank === -1 ? lines : lines.slice(0, blank);
  const headers = head.map((h): [string, string] => {
    const colon = h.indexOf(":");
    if (colon < 1) throw new Error(`not a header line: ${JSON.stringify(h)}`);
    return [h.slice(0, colon).trim(), h.slice(colon + 1).trim()];
  });
  const body = blank === -1 ? [] : lines.slice(blank + 1);
  return { headers, body: body.join("\n").trim() };
}

function answer(block: Block, file: string): HttpAnswerExample {
  const m = /^HTTP\/1\.1 (\d{3}) (.+)$/.exec(block.lines[0] ?? "");
  if (m === null) throw new Error(`${file}:${block.line}: an answer starts with "HTTP/1.1 <status> <reason>"`);
  const status = Number(m[1]);
  if (STATUS_CODES[status] !== m[2]) throw new Error(`${file}:${block.line}: ${status} is "${STATUS_CODES[status]}", not "${m[2]}"`);
  const { headers, body } = headersAndBody(block.lines.slice(1));
  return { status, reason: m[2]!, headers, body: body === "" ? undefined : JSON.parse(body) };
}

/** The examples of one page, in order. */
export function examplesOf(markdown: string, file: string): Example[] {
  const examples: Example[] = [];
  let pending: { line: number; request: HttpRequestExample } | null = null;
  for (const block of fencedBlocks(markdown, file)) {
    const first = block.lines[0] ?? "";
    if (pending !== null && !(block.lang === "http" && first.startsWith("HTTP/"))) {
      throw new Error(`${file}:${pending.line}: a request is followed by the answer it gets (an http block "HTTP/1.1 ...")`);
    }
    if (block.lang === "text") continue;
    if (block.lang === "console") {
      examples.push({ kind: "console", line: block.line, commands: consoleCommands(block, file) });
    } else if (block.lang === "http" && first.startsWith("HTTP/")) {
      if (pending === null) throw new Error(`${file}:${block.line}: an answer without a request before it`);
      examples.push({ kind: "request", line: pending.line, request: pending.request, answer: answer(block, file) });
      pending = null;
    } else if (block.lang === "http") {
      const m = /^(GET|POST|PATCH|PUT|DELETE) (\/\S*)$/.exec(first);
      if (m === null) throw new Error(`${file}:${block.line}: a request starts with "METHOD /path"`);
      pending = { line: block.line, request: { method: m[1]!, path: m[2]!, ...headersAndBody(block.lines.slice(1)) } };
    } else {
      throw new Error(`${file}:${block.line}: a \`\`\`${block.lang} block; mark it console, http (both run by the test) or text (not an example)`);
    }
  }
  if (pending !== null) throw new Error(`${file}:${pending.line}: a request without the answer it gets`);
  return examples;
}

/**
 * Where `actual` differs from the abridged `expected`, as a path and what was found; null when it
 * matches. Objects: every member shown must match (others may exist). Arrays: the same length, each
 * element matching. Anything else: equal.
 */
export function mismatch(expected: unknown, actual: unknown, path = "body"): string | null {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${JSON.stringify(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} elements, got ${actual.length}: ${JSON.stringify(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const m = mismatch(expected[i], actual[i], `${path}[${i}]`);
      if (m !== null) return m;
    }
    return null;
  }
  if (typeof expected === "object" && expected !== null) {
    if (typeof actual !== "object" || actual === null || Array.isArray(actual)) return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key)) return `${path}.${key}: missing in ${JSON.stringify(actual)}`;
      const m = mismatch(value, (actual as Record<string, unknown>)[key], `${path}.${key}`);
      if (m !== null) return m;
    }
    return null;
  }
  return Object.is(expected, actual) ? null : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

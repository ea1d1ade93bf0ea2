/**
 * MONITOR: the clients that asked see every command the server runs, one status line each, as
 * Redis shows them: `+<unix seconds>.<microseconds> [<db> <client address>] "<name>" "<arg>" ...`,
 * each argument quoted with C-style escapes and passwords redacted (redact.ts). A command is
 * shown once it has run (so SELECT shows the database it selected), the commands EXEC runs each
 * in turn and then EXEC; administrative commands (CONFIG, DEBUG, SLOWLOG ...) and commands
 * refused before running are not shown, as in Redis.
 */
import type { CommandShape } from "../kit/command-info.ts";
import { redactSecrets } from "./redact.ts";
import type { Session } from "../server/session.ts";

const hex = (code: number) => `\\x${code.toString(16).padStart(2, "0")}`;

/** An argument between double quotes, escaped as Redis's sdscatrepr escapes it. */
export function quoted(arg: string): string {
  let out = '"';
  for (let i = 0; i < arg.length; i++) {
    const c = arg.charCodeAt(i);
    if (c === 0x5c) out += "\\\\";
    else if (c === 0x22) out += '\\"';
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x0d) out += "\\r";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x07) out += "\\a";
    else if (c === 0x08) out += "\\b";
    else if (c >= 0x20 && c < 0x7f) out += arg[i];
    else out += hex(c);
  }
  return `${out}"`;
}

/** Microseconds since the Unix epoch as `seconds.micros`, micros in six digits. */
export function unixMicrosText(micros: number): string {
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, "0")}`;
}

export class Monitors {
  private readonly sessions = new Set<Session>();

  get size(): number {
    return this.sessions.size;
  }

  has(session: Session): boolean {
    return this.sessions.has(session);
  }

  add(session: Session): void {
    this.sessions.add(session);
  }

  delete(session: Session): void {
    this.sessions.delete(session);
  }

  /** Shows a command `session` ran to every monitor, unless it is administrative. */
  feed(session: Session, spec: CommandShape, argv: readonly string[]): void {
    if (spec.flags.includes("admin")) return;
    const micros = Math.round((performance.timeOrigin + performance.now()) * 1000);
    const peer = session.inScript ? "lua" : (session.transport?.peer ?? "");
    const line = `${unixMicrosText(micros)} [${session.dbIndex} ${peer}] ${redactSecrets(spec, argv).map(quoted).join(" ")}`;
    for (const monitor of this.sessions) {
      monitor.reply.simple(line);
      monitor.transport?.flush();
    }
  }
}

/**
 * In-process harness for kv unit tests: an engine on a manual clock, sessions, and a reply
 * collector that turns replies into plain values — strings for status and bulk replies, numbers
 * for integers, arrays, null for nil, and `{ error }` for errors.
 */
import { ManualClock } from "../../src/core/clock.ts";
import { createLogger } from "../../src/core/log.ts";
import { Engine } from "../../src/kv/server/engine.ts";
import type { Reply } from "../../src/kv/kit/reply.ts";
import { formatDouble } from "../../src/kv/text/format-double.ts";
import { Session } from "../../src/kv/server/session.ts";
import { latin1Text } from "../../src/kv/types/string/bytes.ts";
import { compilesScripts } from "../../src/kv/scripting/script-cache.ts";

// Scripts compiled at their first run, as for the servers the tests start (support/servers.ts):
// in-process tests run most scripts once, and are to check the compiled path too.
compilesScripts.fromRun = 1;

export type Plain = string | number | null | { error: string } | Plain[];

/** Collects replies as plain values, nesting arrays by their announced lengths. */
export class Collector implements Reply {
  protocol: 2 | 3 = 2;
  readonly values: Plain[] = [];
  private readonly open: { items: Plain[]; left: number }[] = [];

  private add(value: Plain): void {
    const top = this.open.at(-1);
    if (top === undefined) {
      this.values.push(value);
      return;
    }
    top.items.push(value);
    top.left--;
    if (top.left === 0) {
      this.open.pop();
      this.add(top.items);
    }
  }

  simple(text: string): void {
    this.add(text);
  }
  error(message: string): void {
    this.add({ error: message });
  }
  integer(n: number | bigint): void {
    this.add(Number(n));
  }
  bulk(value: string | null): void {
    this.add(value);
  }
  bulkBytes(bytes: Uint8Array, from: number, to: number): void {
    this.add(latin1Text(bytes, from, to));
  }
  map(pairs: number): void {
    this.array(pairs * 2);
  }
  set(count: number): void {
    this.array(count);
  }
  double(n: number, text = formatDouble(n)): void {
    this.add(text);
  }
  push(count: number): void {
    this.array(count);
  }
  verbatim(text: string): void {
    this.add(text);
  }
  boolean(value: boolean): void {
    this.add(value ? 1 : 0);
  }
  bigNumber(digits: string): void {
    this.add(digits);
  }
  array(length: number | null): void {
    if (length === null) this.add(null);
    else if (length === 0) this.add([]);
    else this.open.push({ items: [], left: length });
  }
}

export interface Harness {
  engine: Engine;
  clock: ManualClock;
  /** Runs one command on the default session and returns its reply. */
  run(...argv: (string | number)[]): Plain;
  /** A second client, for WATCH, blocking and pub/sub tests. */
  session(): { session: Session; collector: Collector; run(...argv: (string | number)[]): Plain };
}

export function harness(databases = 16): Harness {
  const clock = new ManualClock();
  // DEBUG allowed, as the side-by-side servers allow it: tests use it.
  const engine = new Engine({ databases, clock, log: createLogger({ level: "silent" }), config: { "enable-debug-command": "yes" } });
  const session = () => {
    const collector = new Collector();
    const s = new Session(collector, null);
    engine.register(s);
    return {
      session: s,
      collector,
      run(...argv: (string | number)[]): Plain {
        const before = collector.values.length;
        engine.execute(s, argv.map(String));
        engine.settleTiming();
        return collector.values.length > before ? collector.values.at(-1)! : (undefined as unknown as Plain);
      },
    };
  };
  const main = session();
  return { engine, clock, run: main.run, session };
}

// The end-of-turn queue (src/kv/server/end-of-turn.ts): connections' replies leave after the turn's
// reads, each queued writer once, in the order queued, and one queued while the queue is being
// written waits for the next turn instead of being lost.
import { expect, test } from "bun:test";
import { type TurnWriter, writeAtEndOfTurn } from "../../../src/kv/server/end-of-turn.ts";

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function recorder(log: string[], name: string, onWrite?: () => void): TurnWriter {
  return {
    writeAtTurnEnd() {
      log.push(name);
      onWrite?.();
    },
  };
}

test("writers queued in one turn write after it, once each, in order", async () => {
  const log: string[] = [];
  writeAtEndOfTurn(recorder(log, "a"));
  writeAtEndOfTurn(recorder(log, "b"));
  // Work still running in this turn — here a microtask — comes first.
  await Promise.resolve();
  expect(log).toEqual([]);
  await nextTurn();
  expect(log).toEqual(["a", "b"]);
  await nextTurn();
  expect(log).toEqual(["a", "b"]);
});

test("a writer queued while the queue writes is written in a later turn", async () => {
  const log: string[] = [];
  const late = recorder(log, "late");
  writeAtEndOfTurn(recorder(log, "first", () => writeAtEndOfTurn(late)));
  await nextTurn();
  expect(log).toEqual(["first"]);
  await nextTurn();
  await nextTurn();
  expect(log).toEqual(["first", "late"]);
});

test("reads that arrive in the same turn are all served before any writer runs", async () => {
  const log: string[] = [];
  const server = Bun.listen<undefined>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(_socket, chunk) {
        log.push(`read ${chunk.toString()}`);
        writeAtEndOfTurn(recorder(log, `write ${chunk.toString()}`));
      },
    },
  });
  const clients = await Promise.all(
    ["x", "y"].map((name) => Bun.connect<undefined>({ hostname: "127.0.0.1", port: server.port, socket: { data() {} } }).then((s) => ({ s, name }))),
  );
  // Give the server time to accept both before either sends.
  await Bun.sleep(50);
  for (const { s, name } of clients) s.write(name); // in one tick
  for (let i = 0; i < 100 && log.length < 4; i++) await Bun.sleep(5);
  for (const { s } of clients) s.end();
  server.stop(true);
  // Loopback delivers each write into the server's socket before write() returns, so the
  // server's next poll finds both sockets readable: both reads, then both writes.
  expect(log).toEqual(["read x", "read y", "write x", "write y"]);
});

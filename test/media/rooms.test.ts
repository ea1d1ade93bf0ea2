// A room that spans workers, on a real `svc media` with two workers and room for two sessions of
// a room per worker: the third and fourth sessions land on the other worker, every sender is
// piped to the other router, and every session hears every other one across the boundary. A
// sender who leaves frees the slots it fed on both workers; a worker that dies takes only its own
// sessions, and the survivors keep hearing each other.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitUntil } from "../support/wait.ts";
import { announcedSsrc } from "./support/answers.ts";
import { type MediaUnderTest, startMedia } from "./support/media.ts";
import { Peer, type Received } from "./support/peer.ts";
import { expectMonotonic } from "./support/sequence.ts";

let media: MediaUnderTest;
const peers: Peer[] = [];
const room = "wide";
/** Bounds for a loaded 2-core machine: four WebRTC handshakes and a worker's death. */
const testTimeoutMs = 60_000;

beforeAll(async () => {
  media = await startMedia(["--workers", "2", "--room-sessions-per-worker", "2"]);
});
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  await media.stop();
});

async function join(user: string): Promise<Peer> {
  const peer = await Peer.join(media, user, room, { slots: 3 });
  peers.push(peer);
  return peer;
}

async function slotMap(peer: Peer): Promise<Record<string, string>> {
  const res = await media.call("POST", `/v1/sessions/${peer.sessionId}/slots`, { token: media.token(peer.user, room) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, string>;
}

/** The worker each session was placed on, from the service's "session created" log lines. */
function workerOf(peer: Peer): number {
  const line = media.server
    .output()
    .split("\n")
    .find((l) => l.includes("session created") && l.includes(`"session":${peer.sessionId},`));
  const pid = line === undefined ? undefined : /"workerPid":(\d+)/.exec(line)?.[1];
  if (pid === undefined) throw new Error(`no "session created" line for session ${peer.sessionId}`);
  return Number(pid);
}

/** Everything `peer` received tagged `tag`, over all its slots. */
const taggedAnywhere = (peer: Peer, tag: number): Received[] => [...peer.received.values()].flat().filter((r) => r.tag === tag);

describe("a room spanning two workers", () => {
  let a: Peer;
  let b: Peer;
  let c: Peer;
  let d: Peer;

  test(
    "past --room-sessions-per-worker the room opens a router on the other worker, and everyone hears everyone",
    async () => {
      a = await join("a");
      b = await join("b");
      c = await join("c");
      d = await join("d");
      expect(workerOf(b)).toBe(workerOf(a));
      expect(workerOf(d)).toBe(workerOf(c));
      expect(new Set([workerOf(a), workerOf(c)])).toEqual(new Set(media.workerPids()));
      // Pipes open asynchronously: each session ends up with the three others on its three slots.
      for (const peer of [a, b, c, d]) {
        const others = ["a", "b", "c", "d"].filter((u) => u !== peer.user);
        await waitUntil(
          async () =>
            Object.values(await slotMap(peer))
              .sort()
              .join() === others.join()
              ? true
              : undefined,
          `${peer.user} hears the others`,
        );
      }
      // Media crosses the boundary both ways: a (first worker) reaches d (second), d reaches a.
      await Promise.all([a.send(25, { tag: 0xa }), d.send(25, { tag: 0xd })]);
      await waitUntil(() => (taggedAnywhere(d, 0xa).length >= 20 && taggedAnywhere(a, 0xd).length >= 20 ? true : undefined), "a and d hear each other");
      const mapOfD = await slotMap(d);
      const slotOfA = Object.keys(mapOfD).find((mid) => mapOfD[mid] === "a")!;
      const onSlot = d.packets(slotOfA);
      expect(onSlot.every((r) => r.tag === 0xa)).toBe(true);
      expect(new Set(onSlot.map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(d.answer, slotOfA)]));
      expectMonotonic(onSlot);
    },
    testTimeoutMs,
  );

  test(
    "a sender who leaves frees the slots it fed on both workers, and nothing more of it arrives",
    async () => {
      const res = await media.call("DELETE", `/v1/sessions/${a.sessionId}`, { token: media.token("a", room) });
      expect(res.status).toBe(204);
      // b shares a's worker; c and d get a through a pipe that closes with a's producer.
      for (const peer of [b, c, d]) {
        await waitUntil(async () => (Object.values(await slotMap(peer)).includes("a") ? undefined : true), `${peer.user} no longer hears a`);
      }
      const before = taggedAnywhere(d, 0xa).length;
      await a.send(10, { tag: 0xa });
      expect(taggedAnywhere(d, 0xa).length).toBe(before);
      // A newcomer takes a's place on the first worker, and the second worker hears it.
      const e = await join("e");
      expect(workerOf(e)).toBe(workerOf(b));
      await waitUntil(async () => (Object.values(await slotMap(d)).includes("e") ? true : undefined), "d hears the newcomer");
      await e.send(25, { tag: 0xe });
      await waitUntil(() => (taggedAnywhere(d, 0xe).length >= 20 ? true : undefined), "e's audio on d's slot");
    },
    testTimeoutMs,
  );

  test(
    "a worker that dies takes only its own sessions; the other worker's sessions keep hearing each other",
    async () => {
      process.kill(workerOf(c), "SIGKILL");
      for (const peer of [c, d]) {
        await waitUntil(
          async () =>
            (await media.call("POST", `/v1/sessions/${peer.sessionId}/slots`, { token: media.token(peer.user, room) })).status === 404 ? true : undefined,
          `${peer.user}'s session is gone with its worker`,
        );
      }
      // b's slots drop c and d (their pipes closed with the worker) and keep e.
      await waitUntil(async () => (Object.values(await slotMap(b)).join() === "e" ? true : undefined), "b hears only e");
      const before = taggedAnywhere(b, 0xe).length;
      const e = peers.find((p) => p.user === "e")!;
      await e.send(25, { tag: 0xe });
      await waitUntil(() => (taggedAnywhere(b, 0xe).length >= before + 20 ? true : undefined), "e still reaches b");
      const stats = await media.call("GET", "/v1/stats", undefined, { authorization: `Bearer ${media.token("b", room)}` });
      expect(((await stats.json()) as { rooms: Record<string, number> }).rooms).toEqual({ [room]: 2 });
    },
    testTimeoutMs,
  );
});

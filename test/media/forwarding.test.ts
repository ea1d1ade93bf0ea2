// Real werift peers over loopback against a real `svc media`: ICE and DTLS connect, a peer's audio
// arrives on another's slot under the SSRC the answer announced, a slot switching users keeps its
// SSRC and continues its sequence numbers, PATCH stops and starts forwarding at once, the slot map
// says who is where, the loudest speakers win slots and keep them, and a second POST replaces.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitUntil } from "../support/wait.ts";
import { announcedSsrc } from "./support/answers.ts";
import { type MediaUnderTest, startMedia } from "./support/media.ts";
import { Peer, type Received } from "./support/peer.ts";
import { expectMonotonic } from "./support/sequence.ts";

let media: MediaUnderTest;
const peers: Peer[] = [];

beforeAll(async () => {
  media = await startMedia();
});
afterAll(async () => {
  await Promise.all(peers.map((p) => p.close()));
  await media.stop();
});

async function join(user: string, room: string, options: { slots: number; send?: boolean; peers?: string[] | null }): Promise<Peer> {
  const peer = await Peer.join(media, user, room, options);
  peers.push(peer);
  return peer;
}

async function slotMap(peer: Peer, room: string): Promise<Record<string, string>> {
  const res = await media.call("POST", `/v1/sessions/${peer.sessionId}/slots`, { token: media.token(peer.user, room) });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, string>;
}

async function patch(peer: Peer, room: string, list: string[] | null): Promise<void> {
  const res = await media.call("PATCH", `/v1/sessions/${peer.sessionId}`, { token: media.token(peer.user, room), peers: list });
  expect(res.status).toBe(204);
}

const tagged = (list: Received[], tag: number) => list.filter((r) => r.tag === tag);

describe("forwarding between real WebRTC peers", () => {
  test("ICE and DTLS connect, and A's audio arrives on B's slot under the SSRC B's answer announced", async () => {
    const a = await join("alice", "r1", { slots: 1 });
    const b = await join("bob", "r1", { slots: 1 });
    expect(a.pc.connectionState).toBe("connected");
    expect(b.pc.connectionState).toBe("connected");
    await a.send(25, { tag: 1 });
    await waitUntil(() => (tagged(b.packets("1"), 1).length >= 20 ? true : undefined), "alice's packets on bob's slot");
    const got = b.packets("1");
    expect(new Set(got.map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(b.answer, "1")]));
    expectMonotonic(got);
    // And the other way round: B is on A's only slot.
    expect(await slotMap(a, "r1")).toEqual({ "1": "bob" });
    expect(await slotMap(b, "r1")).toEqual({ "1": "alice" });
    // Alice leaves: the slot she fed is free at once, and nothing more arrives on it.
    const del = await media.call("DELETE", `/v1/sessions/${a.sessionId}`, { token: media.token("alice", "r1") });
    expect(del.status).toBe(204);
    expect(await slotMap(b, "r1")).toEqual({});
  });

  test("PATCH switches a slot from A to C: forwarding of A stops at once, C continues the same SSRC with the next sequence number", async () => {
    const a = await join("a", "r2", { slots: 0 });
    const c = await join("c", "r2", { slots: 0 });
    const b = await join("b", "r2", { slots: 1, peers: ["a"] });
    expect(await slotMap(b, "r2")).toEqual({ "1": "a" });
    await a.send(20, { tag: 0xa });
    await c.send(5, { tag: 0xc });
    await waitUntil(() => (tagged(b.packets("1"), 0xa).length >= 20 ? true : undefined), "all of a on b's slot");
    // b does not hear c: nothing of c's arrived.
    expect(tagged(b.packets("1"), 0xc)).toEqual([]);

    await patch(b, "r2", ["c"]);
    expect(await slotMap(b, "r2")).toEqual({ "1": "c" });
    const beforeSwitch = b.packets("1").length;
    const lastOfA = b.packets("1").at(-1)!;
    await a.send(10, { tag: 0xa });
    await c.send(20, { tag: 0xc });
    await waitUntil(() => (tagged(b.packets("1"), 0xc).length >= 15 ? true : undefined), "c on b's slot");
    const after = b.packets("1").slice(beforeSwitch);
    expect(tagged(after, 0xa)).toEqual([]);
    expect(new Set(b.packets("1").map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(b.answer, "1")]));
    expect(after[0]!.sequenceNumber).toBe((lastOfA.sequenceNumber + 1) % 0x10000);
    const tsStep = (after[0]!.timestamp - lastOfA.timestamp + 2 ** 32) % 2 ** 32;
    expect(tsStep).toBeGreaterThanOrEqual(960);
    expectMonotonic(b.packets("1"));

    // An empty peer set frees the slot and stops forwarding; null hears the whole room again.
    await patch(b, "r2", []);
    expect(await slotMap(b, "r2")).toEqual({});
    const silent = b.packets("1").length;
    await c.send(10, { tag: 0xc });
    await a.send(5, { tag: 0xa });
    expect(b.packets("1").length).toBe(silent);
    await patch(b, "r2", null);
    expect(Object.values(await slotMap(b, "r2"))).toHaveLength(1);
    await Promise.all([c.send(20, { tag: 0xc }), a.send(20, { tag: 0xa })]);
    await waitUntil(() => (b.packets("1").length >= silent + 10 ? true : undefined), "forwarding again after peers: null");
    expectMonotonic(b.packets("1"));
  });

  test("more speakers than slots: the loud speaker takes the slot from a silent one and keeps it when another starts speaking", async () => {
    const quiet = await join("q", "r3", { slots: 0 });
    const loud = await join("l", "r3", { slots: 0 });
    const listener = await join("z", "r3", { slots: 1 });
    // Both silent: the slot went to one of them (whoever the chooser ranks first).
    expect(Object.values(await slotMap(listener, "r3"))).toHaveLength(1);
    // q silent (-127 dBov), l loud (-10 dBov): after an audio-level report l holds the slot.
    const speaking = Promise.all([quiet.send(60, { tag: 1, levelDbov: 127 }), loud.send(60, { tag: 2, levelDbov: 10 })]);
    await waitUntil(async () => ((await slotMap(listener, "r3"))["1"] === "l" ? true : undefined), "the loud speaker on the slot");
    await speaking;
    // Now q speaks louder than l, who keeps speaking: the slot is sticky and stays with l.
    await Promise.all([quiet.send(50, { tag: 1, levelDbov: 3 }), loud.send(50, { tag: 2, levelDbov: 30 })]);
    expect((await slotMap(listener, "r3"))["1"]).toBe("l");
    expect(new Set(listener.packets("1").map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(listener.answer, "1")]));
    expectMonotonic(listener.packets("1"));
  });

  test("a second POST for the same user and room replaces the first session: the old id is gone, the count unchanged", async () => {
    const first = await join("dup", "r4", { slots: 1 });
    const stats = async () =>
      (await (await media.call("GET", "/v1/stats", undefined, { authorization: `Bearer ${media.token("dup", "r4")}` })).json()) as {
        sessions: number;
        rooms: Record<string, number>;
      };
    const before = await stats();
    expect(before.rooms).toEqual({ r4: 1 });
    const second = await join("dup", "r4", { slots: 1 });
    expect(second.sessionId).not.toBe(first.sessionId);
    const after = await stats();
    expect(after).toEqual({ sessions: before.sessions, rooms: { r4: 1 } });
    const old = await media.call("POST", `/v1/sessions/${first.sessionId}/slots`, { token: media.token("dup", "r4") });
    expect(old.status).toBe(404);
    expect((await media.call("POST", `/v1/sessions/${second.sessionId}/slots`, { token: media.token("dup", "r4") })).status).toBe(200);
  });
});

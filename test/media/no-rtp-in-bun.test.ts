// No RTP crosses into Bun: a 50-person room (3 slots each, everyone speaking) streams through
// svc's MediaServer in a process of its own, and that process's Bun thread uses no more CPU
// while the room streams than while it sits idle; the forwarding is all in the worker. When
// every slot packet crossed worker → Bun → worker (the relay svc had before the worker patch),
// the same room took ~18% of a core in Bun (bench/RESULTS.md, 2026-11-29).
//
// The participants are bench/lib/rtp-generator.ts (plain RTP over PlainTransports: 50 werift
// peers would measure werift) and the forwarding process is bench/lib/media-forwarder.ts in its
// `slots` mode, the code `svc media` runs with a PlainTransport where it has a WebRtcTransport.
import { describe, expect, test } from "bun:test";
import { ForwarderProcess } from "../../bench/lib/media-forwarder-process.ts";
import { opusPacketsPerSec, Participant, type PacketWindow, sendAll } from "../../bench/lib/rtp-generator.ts";

const participants = 50;
const slotsPerParticipant = 3;
/** Seconds measured idle, then streaming (after a warm-up while slot choice settles). */
const idleSeconds = 2;
const warmupSeconds = 1;
const streamingSeconds = 3;
/**
 * Extra Bun CPU the streaming room may cost over idle, in cores: slot choice reruns on each
 * audio-level report (every 300 ms). A relay through Bun costs several times this at 50 people.
 */
const extraBunCoresMax = 0.05;
/**
 * The room must really stream: at least this share of the slot packets arrives (a room that does
 * not forward delivers none; a loaded machine may drop a few on loopback).
 */
const deliveredShareMin = 0.5;
/** Bounds for a loaded 2-core machine: building 50 sessions and six seconds of audio. */
const testTimeoutMs = 120_000;

describe("slots switched in the worker", () => {
  test(
    "the Bun process's CPU stays flat while a 50-person room streams",
    async () => {
      const ssrcs = Array.from({ length: participants }, (_, i) => 0x1000_0000 + i);
      const forwarder = await ForwarderProcess.start({ mode: "slots", participants, slots: slotsPerParticipant, workers: 1, ssrcs });
      const warmupPackets = warmupSeconds * opusPacketsPerSec;
      const window: PacketWindow = {
        warmedUp: true,
        firstIndex: warmupPackets,
        endIndex: warmupPackets + streamingSeconds * opusPacketsPerSec,
        expectedSsrcs: new Set(forwarder.ready.participants.flatMap((p) => p.slotSsrcs)),
      };
      const people = forwarder.ready.participants.map((p, i) => new Participant(i, ssrcs[i]!, 10 + i, p.port, window));
      try {
        await Promise.all(people.map((p) => p.open()));
        const idleStart = forwarder.cpuSeconds();
        await Bun.sleep(idleSeconds * 1000);
        const idleEnd = forwarder.cpuSeconds();
        const idleBunCores = (idleEnd.bun - idleStart.bun) / idleSeconds;

        let start = { at: 0, cpu: idleEnd };
        let end = { at: 0, cpu: idleEnd };
        await sendAll(people, window.endIndex, (index) => {
          if (start.at === 0 && index >= window.firstIndex) start = { at: performance.now(), cpu: forwarder.cpuSeconds() };
          if (end.at === 0 && index >= window.endIndex) end = { at: performance.now(), cpu: forwarder.cpuSeconds() };
        });
        const wallSeconds = (end.at - start.at) / 1000;
        const streamingBunCores = (end.cpu.bun - start.cpu.bun) / wallSeconds;
        const workerCores = (end.cpu.workers - start.cpu.workers) / wallSeconds;
        await Bun.sleep(300);
        const received = people.reduce((sum, p) => sum + [...p.slots.values()].reduce((s, slot) => s + slot.inWindow, 0), 0);
        const expected = participants * slotsPerParticipant * streamingSeconds * opusPacketsPerSec;
        console.log(
          `Bun: ${(idleBunCores * 100).toFixed(1)}% of a core idle, ${(streamingBunCores * 100).toFixed(1)}% streaming; ` +
            `worker ${(workerCores * 100).toFixed(1)}%; ${received} of ${expected} slot packets delivered`,
        );
        expect(received).toBeGreaterThanOrEqual(expected * deliveredShareMin);
        expect(streamingBunCores - idleBunCores).toBeLessThan(extraBunCoresMax);
      } finally {
        people.forEach((p) => p.close());
        await forwarder.stop();
      }
    },
    testTimeoutMs,
  );
});

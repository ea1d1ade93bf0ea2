/**
 * svc media's slots (switched inside the mediasoup worker) against plain mediasoup consumers, the
 * largest room one worker carries, and session setup.
 *
 * Forwarding. Rooms of 10 and of 50 participants, each sending Opus at 50 packets/s and receiving
 * 3 slots. In svc each slot is one consumer the worker re-points when slot choice changes its user
 * (docs/media.md "Slots"); the baseline is what mediasoup does alone — each receiver holds
 * ordinary consumers of the 3 sources it hears. Both sides see the same senders, levels and
 * receivers, in the same run, one after the other (the order alternates between room sizes, so
 * drift on a shared machine does not favour one side). Target: slots/consumers CPU per packet ≤ 1.3×.
 *
 * werift at 50 × 50 packets/s with SRTP in JavaScript would measure werift, not us, on 2 cores,
 * so the participants are lib/rtp-generator.ts: one UDP socket each, plain RTP with the
 * ssrc-audio-level extension (levels fixed per participant, −10 dBov for the first and 1 dB
 * quieter for each next, all speaking), so the audio-level observer and slot choice run. Slots
 * are sticky, so with everyone starting at once the first users reported speaking keep them and
 * nearly every receiver hears the same 3 sources; the baseline gives each receiver consumers of
 * the first 3 others — the same shape, 3 hot sources fanned out to the room. The forwarding side
 * (lib/media-forwarder.ts) is its own process, opening one comedia PlainTransport per participant:
 * in `slots` mode through svc's MediaServer — the same room router, producers, observer and
 * switched slot consumers as `svc media`, with a PlainTransport where `svc media` has a
 * WebRtcTransport (so no SRTP/DTLS on either side) — and in `consumers` mode one router for the
 * room with plain consumers.
 *
 * Reported per run: forwarded packets/s (what the participants received in the measured window
 * over its wall time), loss (every packet sent in the window, times the slots that hear its
 * sender, against what arrived — the payload names sender and packet), sequence-number breaks
 * per slot (should be 0: a slot stays one continuous stream, also across its slot switches in the
 * warm-up), receivers whose slot choice is wrong (not 3 other users, or a slot carrying another
 * user than the slot map names), and the forwarding side's CPU (its Bun process plus its mediasoup workers,
 * /proc/<pid>/stat user+system over the window's wall time; 100% = one core; the Bun process's
 * part shown apart), also per 1000 forwarded packets/s. slots/consumers compares the two modes:
 * forwarded packets/s and CPU per packet.
 *
 * Capacity. The same runs on one worker, for growing rooms: the largest room at < 1% loss is
 * what one worker (one core) carries. Target ≥ 300 participants with 3 slots each. Plain
 * consumers run at each size too, so a limit of the machine (the load generator shares it) shows
 * as loss on both sides.
 *
 * Setup. A real `svc media` (--workers 2, the cores of the machine it was written on) and real
 * werift offers (one send line, 3 slots): each POST /v1/sessions is timed until its answer is
 * read, joining rooms of 10 and of 50 one participant at a time; each full room is deleted before
 * the next. ICE/DTLS are not part of it (the client's side of the handshake is not the server's
 * setup latency).
 *
 * SVC_BENCH_MEDIA_SECONDS sets each forwarding run's measured window (default 10; a warm-up of 2 s
 * precedes it); SVC_BENCH_MEDIA_SETUP_SESSIONS the POSTs timed per room size (default 100);
 * SVC_BENCH_MEDIA_ROOMS the room sizes (default "10,50"); SVC_BENCH_MEDIA_CAPACITY_ROOMS the room
 * sizes tried on one worker (default "100,200,300,400,500"; it stops after the first size where
 * both modes lose ≥ 1%).
 */
import { availableParallelism } from "node:os";
import { median } from "./lib/redis-benchmark.ts";
import { ForwarderProcess } from "./lib/media-forwarder-process.ts";
import type { ForwarderConfig, ForwarderStats } from "./lib/media-forwarder.ts";
import { opusPacketsPerSec, Participant, type PacketWindow, sendAll } from "./lib/rtp-generator.ts";
import { startMedia } from "../test/media/support/media.ts";
import { Peer } from "../test/media/support/peer.ts";

const measuredSeconds = Number(process.env.SVC_BENCH_MEDIA_SECONDS ?? 10);
const setupSessionsPerRoomSize = Number(process.env.SVC_BENCH_MEDIA_SETUP_SESSIONS ?? 100);
const roomSizes = (process.env.SVC_BENCH_MEDIA_ROOMS ?? "10,50").split(",").map(Number);
const capacityRoomSizes = (process.env.SVC_BENCH_MEDIA_CAPACITY_ROOMS ?? "100,200,300,400,500").split(",").map(Number);
/** The capacity runs' measured window: shorter, as there are many of them. */
const capacitySeconds = Math.min(measuredSeconds, 5);
/** Loss at which a room counts as more than one worker carries. */
const capacityLossShareMax = 0.01;
const slotsPerParticipant = 3;
/** Workers on the forwarding side: one per core, as `svc media` defaults to. */
const workers = availableParallelism();
/** Slot choice needs a few audio-level reports (every 300 ms) to settle before measuring. */
const warmupSeconds = 2;
/** Sequence numbers are checked from halfway through the warm-up, so the first slot switches count. */
const sequenceCheckFromShare = 0.5;
/** Senders keep going after the window, so packets of the window in flight meet no slot change. */
const tailSeconds = 0.5;
/** Time for the last packets to arrive after the senders stop. */
const drainMs = 300;
/** The loudest participant's level (−dBov); each next one is 1 dB quieter, all above −70 dBov. */
const loudestLevelDbov = 10;
/** Distinct werift offers made for the setup phase (a werift peer per POST would time werift). */
const setupOffers = 10;
/** Unmeasured POSTs first, so the JIT and the workers' first router are not in the percentiles. */
const setupWarmupPosts = 5;

interface RunResult {
  mode: ForwarderConfig["mode"];
  participants: number;
  workers: number;
  offeredInPerSec: number;
  forwardedPerSec: number;
  expected: number;
  received: number;
  sequenceBreaks: number;
  strays: number;
  /** Slots fed by more than one sender inside the window (a slot switch while measuring). */
  slotsSwitchedInWindow: number;
  /** Receivers whose slots are not 3 other users, each carrying the user the slot map names. */
  choiceMismatches: number;
  /** Forwarding side's CPU over the window, in cores (1 = one core busy): all of it, and its Bun process's part. */
  cpuCores: number;
  bunCores: number;
}

const randomSsrc = () => crypto.getRandomValues(new Uint32Array(1))[0]! || 1;

/**
 * Receivers whose slots are not what slot choice promises: `slots` different users other than
 * the receiver itself (everyone speaks, and there are more speakers than slots), each slot
 * carrying, in the measured window, exactly the user the slot map names.
 */
function choiceMismatches(stats: ForwarderStats, people: Participant[], slotSsrcs: number[][]): number {
  return people.filter((person, r) => {
    const map = stats.slotMaps[r]!;
    const users = Object.values(map);
    if (users.length !== slotsPerParticipant || new Set(users).size !== users.length || users.includes(`u${r}`)) return true;
    const carried = slotSsrcs[r]!.map((ssrc) => [...(person.slots.get(ssrc)?.sources ?? [])].map((i) => `u${i}`).join("+"));
    return carried.sort().join(",") !== [...users].sort().join(",");
  }).length;
}

async function forwardingRun(mode: ForwarderConfig["mode"], participants: number, workers: number, seconds: number): Promise<RunResult> {
  const ssrcs = Array.from({ length: participants }, randomSsrc);
  const forwarder = await ForwarderProcess.start({ mode, participants, slots: slotsPerParticipant, workers, ssrcs });
  const warmupPackets = warmupSeconds * opusPacketsPerSec;
  const measuredPackets = Math.round(seconds * opusPacketsPerSec);
  const window: PacketWindow = {
    warmedUp: false,
    firstIndex: warmupPackets,
    endIndex: warmupPackets + measuredPackets,
    expectedSsrcs: new Set(forwarder.ready.participants.flatMap((p) => p.slotSsrcs)),
  };
  const people = forwarder.ready.participants.map((p, i) => new Participant(i, ssrcs[i]!, loudestLevelDbov + i, p.port, window));
  try {
    await Promise.all(people.map((p) => p.open()));
    let cpuStart = { bun: 0, workers: 0 };
    let cpuEnd = { bun: 0, workers: 0 };
    let wallStart = 0;
    let wallEnd = 0;
    // Slot maps are read while everyone still speaks: once senders stop, their silence reports
    // arrive at different times and the still-speaking take the slots of the already-silent.
    let statsWhileSending: Promise<ForwarderStats> | undefined;
    await sendAll(people, window.endIndex + tailSeconds * opusPacketsPerSec, (index) => {
      if (!window.warmedUp && index >= warmupPackets * sequenceCheckFromShare) window.warmedUp = true;
      if (wallStart === 0 && index >= window.firstIndex) {
        wallStart = performance.now();
        cpuStart = forwarder.cpuSeconds();
      }
      if (wallEnd === 0 && index >= window.endIndex) {
        wallEnd = performance.now();
        cpuEnd = forwarder.cpuSeconds();
        statsWhileSending = forwarder.stats();
      }
    });
    await Bun.sleep(drainMs);
    const stats = await statsWhileSending!;
    const wallSeconds = (wallEnd - wallStart) / 1000;
    const slots = people.flatMap((p) => [...p.slots.values()]);
    const received = slots.reduce((sum, s) => sum + s.inWindow, 0);
    return {
      mode,
      participants,
      workers,
      offeredInPerSec: participants * opusPacketsPerSec,
      forwardedPerSec: received / wallSeconds,
      expected: participants * slotsPerParticipant * measuredPackets,
      received,
      sequenceBreaks: slots.reduce((sum, s) => sum + s.sequenceBreaks, 0),
      strays: people.reduce((sum, p) => sum + p.strays, 0),
      slotsSwitchedInWindow: slots.filter((s) => s.sources.size > 1).length,
      choiceMismatches: choiceMismatches(
        stats,
        people,
        forwarder.ready.participants.map((p) => p.slotSsrcs),
      ),
      cpuCores: (cpuEnd.bun + cpuEnd.workers - cpuStart.bun - cpuStart.workers) / wallSeconds,
      bunCores: (cpuEnd.bun - cpuStart.bun) / wallSeconds,
    };
  } finally {
    people.forEach((p) => p.close());
    await forwarder.stop();
  }
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const cpuPer1000 = (r: RunResult) => (r.cpuCores * 100) / (r.forwardedPerSec / 1000);
const lossShare = (r: RunResult) => (r.expected - r.received) / r.expected;

function printRuns(runs: RunResult[]): void {
  console.log(
    "| room | mode | in pkt/s | forwarded pkt/s | expected | lost | seq breaks | slot choice wrong | CPU | of which Bun | CPU % per 1000 fwd pkt/s |",
  );
  console.log("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
  for (const r of runs) {
    console.log(
      `| ${r.participants} | ${r.mode} | ${fmt(r.offeredInPerSec)} | ${fmt(r.forwardedPerSec)} | ${fmt(r.expected)} | ` +
        `${fmt(r.expected - r.received)} (${(lossShare(r) * 100).toFixed(2)}%) | ${r.sequenceBreaks} | ` +
        `${r.mode === "slots" ? r.choiceMismatches : "—"} | ${(r.cpuCores * 100).toFixed(1)}% | ${(r.bunCores * 100).toFixed(1)}% | ${cpuPer1000(r).toFixed(2)} |`,
    );
  }
}

/** Setup latency: POST /v1/sessions until the answer is read, rooms joined one participant at a time. */
async function setupLatency(): Promise<{ participants: number; samples: number[] }[]> {
  const media = await startMedia(["--workers", String(workers)]);
  const offers: string[] = [];
  try {
    for (let i = 0; i < setupOffers; i++) {
      const { peer, sdp } = await Peer.offer(`offer-${i}`, { slots: slotsPerParticipant });
      offers.push(sdp);
      await peer.close();
    }
    const post = async (user: string, room: string, offer: string): Promise<{ ms: number; id: number }> => {
      const start = performance.now();
      const res = await media.call("POST", "/v1/sessions", { token: media.token(user, room), sdp_offer: offer });
      const body = (await res.json()) as { session_id: number };
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`POST /v1/sessions → ${res.status} ${JSON.stringify(body)}`);
      return { ms, id: body.session_id };
    };
    const remove = async (user: string, room: string, id: number) => {
      const res = await media.call("DELETE", `/v1/sessions/${id}`, { token: media.token(user, room) });
      if (res.status !== 204) throw new Error(`DELETE /v1/sessions/${id} → ${res.status}`);
    };
    for (let i = 0; i < setupWarmupPosts; i++) {
      const { id } = await post(`warm-${i}`, "warmup", offers[i % offers.length]!);
      await remove(`warm-${i}`, "warmup", id);
    }
    const results: { participants: number; samples: number[] }[] = [];
    for (const participants of roomSizes) {
      const samples: number[] = [];
      for (let round = 0; samples.length < setupSessionsPerRoomSize; round++) {
        const room = `setup-${participants}-${round}`;
        const joined: { user: string; id: number }[] = [];
        for (let i = 0; i < participants && samples.length < setupSessionsPerRoomSize; i++) {
          const user = `u${i}`;
          const { ms, id } = await post(user, room, offers[i % offers.length]!);
          samples.push(ms);
          joined.push({ user, id });
        }
        for (const { user, id } of joined) await remove(user, room, id);
      }
      results.push({ participants, samples: samples.sort((a, b) => a - b) });
    }
    return results;
  } finally {
    await media.stop();
  }
}

async function main(): Promise<void> {
  const runs: RunResult[] = [];
  for (const [i, participants] of roomSizes.entries()) {
    const order: ForwarderConfig["mode"][] = i % 2 === 0 ? ["slots", "consumers"] : ["consumers", "slots"];
    for (const mode of order) runs.push(await forwardingRun(mode, participants, workers, measuredSeconds));
  }

  console.log(`### media: slots switched in the worker (svc) vs plain mediasoup consumers, ${measuredSeconds} s per run\n`);
  console.log(
    `Plain RTP (PlainTransport, comedia) from lib/rtp-generator.ts at ${opusPacketsPerSec} pkt/s per participant; ` +
      `${slotsPerParticipant} slots per participant; ${workers} mediasoup workers; ` +
      "CPU = forwarding process + its workers (100% = one core).\n",
  );
  printRuns(runs);
  console.log("\n| room | slots/consumers forwarded pkt/s | slots/consumers CPU per packet | target |");
  console.log("|---:|---:|---:|---:|");
  for (const participants of roomSizes) {
    const slots = runs.find((r) => r.mode === "slots" && r.participants === participants)!;
    const plain = runs.find((r) => r.mode === "consumers" && r.participants === participants)!;
    console.log(
      `| ${participants} | ${(slots.forwardedPerSec / plain.forwardedPerSec).toFixed(2)}× | ${(cpuPer1000(slots) / cpuPer1000(plain)).toFixed(2)}× | ≤ 1.30× |`,
    );
  }
  const oddities = runs.filter((r) => r.strays > 0 || r.slotsSwitchedInWindow > 0);
  for (const r of oddities)
    console.log(`\nnote: ${r.mode} ${r.participants}: ${r.strays} packets on unknown SSRCs, ${r.slotsSwitchedInWindow} slots switched source while measured`);

  const capacity: RunResult[] = [];
  for (const [i, participants] of capacityRoomSizes.entries()) {
    const order: ForwarderConfig["mode"][] = i % 2 === 0 ? ["slots", "consumers"] : ["consumers", "slots"];
    const sized: RunResult[] = [];
    for (const mode of order) sized.push(await forwardingRun(mode, participants, 1, capacitySeconds));
    capacity.push(...sized);
    if (sized.every((r) => lossShare(r) >= capacityLossShareMax)) break;
  }
  console.log(`\n### media: the largest room one worker carries (--workers 1, ${slotsPerParticipant} slots each, ${capacitySeconds} s per run)\n`);
  printRuns(capacity);
  const largest = (mode: ForwarderConfig["mode"]) =>
    Math.max(0, ...capacity.filter((r) => r.mode === mode && lossShare(r) < capacityLossShareMax).map((r) => r.participants));
  console.log(
    `\nLargest room at < ${capacityLossShareMax * 100}% loss on one worker: slots ${largest("slots")}, plain consumers ${largest("consumers")} ` +
      `(target ≥ 300; sizes tried: ${capacityRoomSizes.join(", ")}).`,
  );

  const setup = await setupLatency();
  console.log(
    `\n### media: session setup, POST /v1/sessions until the answer (real svc media, --workers ${workers}, werift offers with ${slotsPerParticipant} slots)\n`,
  );
  console.log("| room | POSTs | p50 ms | p99 ms | max ms |");
  console.log("|---:|---:|---:|---:|---:|");
  for (const { participants, samples } of setup) {
    console.log(
      `| ${participants} | ${samples.length} | ${median(samples).toFixed(1)} | ${percentile(samples, 99).toFixed(1)} | ${samples.at(-1)!.toFixed(1)} |`,
    );
  }
  console.log("");
}

await main();

/**
 * The forwarding side of bench/media.ts, run as its own process so its CPU (this Bun process and
 * its mediasoup workers) is measured apart from the load generator's. One room of N participants,
 * each with a comedia PlainTransport on 127.0.0.1 that receives its Opus and sends it its slots,
 * in one of two modes:
 *
 * - `slots`: svc's own code — MediaServer.createPlain (sessions as the server makes them, on a
 *   PlainTransport instead of a WebRtcTransport: the room's router, producer, audio-level
 *   observer, a switched consumer per slot) and its rooms (slot choice by audio level, each change
 *   one switch request to the worker).
 * - `consumers`: the plain mediasoup baseline — one router for the room, each participant's
 *   producer, one AudioLevelObserver for the room, and for each receiver ordinary consumers of the
 *   `slots` sources it hears (the first others: like svc's sticky choice, a few hot sources
 *   fanned out to nearly everyone). No Bun in the packet path.
 *
 * Protocol: argv[2] is a JSON ForwarderConfig; once built, one line `READY <json ForwarderReady>`
 * on stdout. Then it reads stdin lines: `stats` → `STATS <json ForwarderStats>`; `quit` (or the end
 * of stdin) closes everything and exits.
 */
import type { types } from "mediasoup";
import { createLogger, type Logger } from "../../src/core/log.ts";
import { mediaAudioLevelIntervalMs, mediaSpeakingThresholdDbov } from "../../src/core/limits.ts";
import { MediaServer } from "../../src/media/media-server.ts";
import { parseOffer } from "../../src/media/sdp/offer.ts";
import type { Session } from "../../src/media/session.ts";
import { mediasoupWorkerBin } from "../../src/media/worker-bin.ts";
import { WorkerPool } from "../../src/media/workers.ts";
import { audioLevelExtensionId, benchPayloadType } from "./rtp-generator.ts";

export interface ForwarderConfig {
  mode: "slots" | "consumers";
  participants: number;
  slots: number;
  workers: number;
  /** Each participant's sending SSRC, by index. */
  ssrcs: number[];
}

export interface ForwarderReady {
  /** This process and its mediasoup workers: whose CPU is the forwarding side's. */
  pids: number[];
  /** By participant index: the local port of its transport and the SSRCs of its slots. */
  participants: { port: number; slotSsrcs: number[] }[];
}

export interface ForwarderStats {
  /** By participant index: slot mid → user ("u<index>"), as svc's slot choice has it now. */
  slotMaps: Record<string, string>[];
}

const roomName = "bench";
const opusParameters = { minptime: 10, useinbandfec: 1 };
const audioLevelUri = "urn:ietf:params:rtp-hdrext:ssrc-audio-level";
const plainListen = { protocol: "udp" as const, ip: "127.0.0.1" };
const userOf = (index: number) => `u${index}`;

/**
 * A werift-shaped offer (what a voice client sends): one sendonly Opus line with the audio-level
 * extension and `ssrc`, and `slots` recvonly lines. Its ICE and DTLS lines are there only because
 * the parser insists; a PlainTransport never uses them.
 */
function offerText(ssrc: number, slots: number): string {
  const mids = Array.from({ length: slots + 1 }, (_, i) => String(i));
  const lines = ["v=0", "o=- 1 0 IN IP4 0.0.0.0", "s=-", "t=0 0", `a=group:BUNDLE ${mids.join(" ")}`];
  for (const mid of mids) {
    lines.push(
      `m=audio 9 UDP/TLS/RTP/SAVPF ${benchPayloadType}`,
      "c=IN IP4 0.0.0.0",
      "a=ice-ufrag:bnch",
      "a=ice-pwd:benchbenchbenchbenchbe",
      "a=fingerprint:sha-256 4F:02:34:90:D6:C9:D5:E0:0B:36:84:41:40:DB:68:CC:19:70:B8:7D:A7:D7:ED:5E:F8:CE:67:5A:1A:DF:81:B3",
      "a=setup:actpass",
      mid === "0" ? "a=sendonly" : "a=recvonly",
      `a=mid:${mid}`,
      "a=rtcp-mux",
      `a=extmap:${audioLevelExtensionId} ${audioLevelUri}`,
      `a=ssrc:${mid === "0" ? ssrc : 1000 + Number(mid)} cname:bench`,
      `a=rtpmap:${benchPayloadType} opus/48000/2`,
      `a=fmtp:${benchPayloadType} minptime=10;useinbandfec=1`,
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

const openPlain = (router: types.Router) => router.createPlainTransport({ listenInfo: plainListen, rtcpMux: true, comedia: true });

async function buildSlots(
  config: ForwarderConfig,
  pool: WorkerPool,
  log: Logger,
): Promise<{ ready: ForwarderReady["participants"]; stats: () => ForwarderStats; close: () => void }> {
  // The WebRTC listen settings are never used: every session here is opened on a PlainTransport.
  const server = new MediaServer(pool, { ip: plainListen.ip, announcedAddress: undefined, portMin: 0, portMax: 0 }, log);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const sessions: Session[] = [];
  for (let i = 0; i < config.participants; i++) {
    const offer = parseOffer(offerText(config.ssrcs[i]!, config.slots));
    sessions.push(await server.createPlain({ user: userOf(i), room: roomName, exp }, offer, openPlain));
  }
  return {
    ready: sessions.map((s) => ({ port: (s.transport as types.PlainTransport).tuple.localPort, slotSsrcs: s.slots.map((slot) => slot.ssrc) })),
    stats: () => ({ slotMaps: sessions.map((s) => s.slotMap()) }),
    close: () => sessions.forEach((s) => s.close()),
  };
}

async function buildConsumers(
  config: ForwarderConfig,
  pool: WorkerPool,
): Promise<{ ready: ForwarderReady["participants"]; stats: () => ForwarderStats; close: () => void }> {
  const worker = pool.leastLoaded()!;
  const codec = { mimeType: "audio/opus", payloadType: benchPayloadType, clockRate: 48000, channels: 2, parameters: opusParameters, rtcpFeedback: [] };
  const router = await worker.createRouter({
    mediaCodecs: [{ kind: "audio", mimeType: "audio/opus", clockRate: 48000, channels: 2, preferredPayloadType: benchPayloadType }],
  });
  const observer = await router.createAudioLevelObserver({
    maxEntries: config.slots,
    threshold: mediaSpeakingThresholdDbov,
    interval: mediaAudioLevelIntervalMs,
  });
  const transports: types.PlainTransport[] = [];
  const producers: types.Producer[] = [];
  for (let i = 0; i < config.participants; i++) {
    const transport = await openPlain(router);
    const producer = await transport.produce({
      kind: "audio",
      rtpParameters: {
        codecs: [codec],
        headerExtensions: [{ uri: audioLevelUri, id: audioLevelExtensionId }],
        encodings: [{ ssrc: config.ssrcs[i]! }],
        rtcp: { cname: userOf(i), reducedSize: true },
      },
    });
    await observer.addProducer({ producerId: producer.id });
    transports.push(transport);
    producers.push(producer);
  }
  // What a slot consumer asks for in svc (session.ts): Opus only, no header extensions.
  const rtpCapabilities: types.RtpCapabilities = {
    codecs: [
      {
        kind: "audio",
        mimeType: "audio/opus",
        preferredPayloadType: benchPayloadType,
        clockRate: 48000,
        channels: 2,
        parameters: opusParameters,
        rtcpFeedback: [],
      },
    ],
    headerExtensions: [],
  };
  const heard: number[][] = [];
  const ready: ForwarderReady["participants"] = [];
  for (let r = 0; r < config.participants; r++) {
    const sources = [...Array(config.participants).keys()].filter((i) => i !== r).slice(0, config.slots);
    const consumers = await Promise.all(sources.map((i) => transports[r]!.consume({ producerId: producers[i]!.id, rtpCapabilities })));
    heard.push(sources);
    ready.push({ port: transports[r]!.tuple.localPort, slotSsrcs: consumers.map((c) => c.rtpParameters.encodings![0]!.ssrc!) });
  }
  return {
    ready,
    stats: () => ({ slotMaps: heard.map((sources) => Object.fromEntries(sources.map((s, k) => [String(k + 1), userOf(s)]))) }),
    close: () => router.close(),
  };
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as ForwarderConfig;
  const log = createLogger({ level: "warn", destination: { write: (line: string) => void process.stderr.write(line) } });
  const pool = new WorkerPool(config.workers, mediasoupWorkerBin(), log);
  await pool.start();
  const built = config.mode === "slots" ? await buildSlots(config, pool, log) : await buildConsumers(config, pool);
  const ready: ForwarderReady = { pids: [process.pid, ...pool.pids], participants: built.ready };
  console.log(`READY ${JSON.stringify(ready)}`);
  for await (const line of console) {
    if (line.trim() === "stats") console.log(`STATS ${JSON.stringify(built.stats())}`);
    else if (line.trim() === "quit") break;
  }
  built.close();
  pool.close();
  process.exit(0);
}

await main();

/**
 * The mediasoup worker that ./svc builds (media-worker/build) against Debian's libraries, driven by
 * real WebRTC peers: werift peers in this process connect over loopback to WebRtcTransports of a
 * real worker process. The DTLS handshake is the point: a worker built without the kTLS fix dies
 * with SIGSEGV writing its ServerHello, so "DTLS connected and the worker is alive" proves the fix,
 * and RTP arriving through the producer and out of a consumer proves the libsrtp 3 layer over
 * libsrtp2 encrypts and decrypts both ways.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import * as mediasoup from "mediasoup";
import type { types as ms } from "mediasoup";
import { SvcError } from "../../src/core/errors";
import { mediasoupWorkerBin, useBuiltWorker } from "../../src/media/worker-bin";
import { MediaStreamTrack, RTCPeerConnection, RTCRtpCodecParameters, type RTCRtpTransceiver, RtpHeader, RtpPacket } from "werift";
import * as sdpTransform from "sdp-transform";
import { waitUntil } from "../support/wait.ts";

/** Generous bounds for a shared 2-core machine; they only bound a wait, nothing is timed. */
const connectTimeoutMs = 30_000;
const rtpTimeoutMs = 30_000;
const testTimeoutMs = 90_000;
/** Packets each side must see before the flow counts as working. */
const packetsExpected = 20;
/** Opus at 20 ms frames: 50 packets/s, 960 samples each at 48 kHz. */
const packetIntervalMs = 20;
const samplesPerPacket = 960;

const opus: ms.RouterRtpCodecCapability = { kind: "audio", mimeType: "audio/opus", clockRate: 48000, channels: 2 };

/**
 * A werift peer that talks only over loopback. With no ICE servers configured werift still tries
 * its built-in default STUN server for a reflexive candidate; without internet that lookup fails
 * at once and changes nothing, since the worker is ICE-lite and the pair used is loopback-to-loopback.
 */
function loopbackPeer(): RTCPeerConnection {
  return new RTCPeerConnection({
    iceServers: [],
    iceUseIpv6: false,
    iceInterfaceAddresses: { udp4: "127.0.0.1" },
    iceAdditionalHostAddresses: ["127.0.0.1"],
    codecs: { audio: [new RTCRtpCodecParameters({ mimeType: "audio/opus", clockRate: 48000, channels: 2 })], video: [] },
  });
}

/** What the worker needs from a peer's offer for its one audio m-line. */
interface OfferedAudio {
  mid: string;
  direction: string;
  payloadType: number;
  fmtp: Record<string, string | number>;
  fingerprints: ms.DtlsFingerprint[];
  ssrc: number | undefined;
  cname: string | undefined;
  midExtensionId: number | undefined;
}

function offeredAudio(sdp: string): OfferedAudio {
  const session = sdpTransform.parse(sdp);
  const media = session.media.find((m) => m.type === "audio");
  if (media === undefined) throw new Error(`no audio m-line in the offer:\n${sdp}`);
  const rtp = media.rtp.find((r) => r.codec.toLowerCase() === "opus");
  if (rtp === undefined) throw new Error(`no Opus in the offer:\n${sdp}`);
  const fingerprint = media.fingerprint ?? session.fingerprint;
  if (fingerprint === undefined) throw new Error(`no DTLS fingerprint in the offer:\n${sdp}`);
  const fmtp = media.fmtp.find((f) => f.payload === rtp.payload);
  const ssrcLine = media.ssrcs?.[0];
  return {
    mid: String(media.mid),
    direction: media.direction ?? "sendrecv",
    payloadType: rtp.payload,
    fmtp: fmtp === undefined ? {} : (sdpTransform.parseParams(fmtp.config) as Record<string, string | number>),
    fingerprints: [{ algorithm: fingerprint.type as ms.FingerprintAlgorithm, value: fingerprint.hash }],
    ssrc: ssrcLine === undefined ? undefined : Number(ssrcLine.id),
    cname: media.ssrcs?.find((s) => s.attribute === "cname")?.value,
    midExtensionId: media.ext?.find((e) => e.uri === "urn:ietf:params:rtp-hdrext:sdes:mid")?.value,
  };
}

/** The worker's answer: ICE-lite, its candidates and fingerprint, DTLS server (setup:passive). */
function answerFor(
  offer: OfferedAudio,
  transport: ms.WebRtcTransport,
  direction: "recvonly" | "sendonly",
  sending?: { ssrc: number; cname: string; payloadType: number },
): string {
  const payloadType = sending?.payloadType ?? offer.payloadType;
  const fingerprint = transport.dtlsParameters.fingerprints.find((f) => f.algorithm === "sha-256")!;
  const fmtpConfig = Object.entries(offer.fmtp)
    .map(([k, v]) => `${k}=${v}`)
    .join(";");
  return sdpTransform.write({
    version: 0,
    origin: { username: "-", sessionId: "1", sessionVersion: 1, netType: "IN", ipVer: 4, address: "127.0.0.1" },
    name: "-",
    timing: { start: 0, stop: 0 },
    icelite: "ice-lite",
    fingerprint: { type: fingerprint.algorithm, hash: fingerprint.value },
    groups: [{ type: "BUNDLE", mids: offer.mid }],
    media: [
      {
        type: "audio",
        port: transport.iceCandidates[0]!.port,
        protocol: "UDP/TLS/RTP/SAVPF",
        payloads: String(payloadType),
        connection: { version: 4, ip: "127.0.0.1" },
        mid: offer.mid,
        direction,
        rtcpMux: "rtcp-mux",
        iceUfrag: transport.iceParameters.usernameFragment,
        icePwd: transport.iceParameters.password,
        setup: "passive",
        candidates: transport.iceCandidates.map((c) => ({
          foundation: c.foundation,
          component: 1,
          transport: c.protocol,
          priority: c.priority,
          ip: c.address,
          port: c.port,
          type: c.type,
        })),
        endOfCandidates: "end-of-candidates",
        rtp: [{ payload: payloadType, codec: "opus", rate: 48000, encoding: 2 }],
        fmtp: fmtpConfig === "" ? [] : [{ payload: payloadType, config: fmtpConfig }],
        ext:
          direction === "recvonly" && offer.midExtensionId !== undefined ? [{ value: offer.midExtensionId, uri: "urn:ietf:params:rtp-hdrext:sdes:mid" }] : [],
        ssrcs: sending === undefined ? [] : [{ id: sending.ssrc, attribute: "cname", value: sending.cname }],
      },
    ],
  });
}

/** The worker's death, once it happened: every wait gives up on it at once. */
let workerDied: Error | undefined;

/** waitUntil `done`, polling every 50 ms, giving up at once when the worker died. */
async function waitFor(what: string, timeoutMs: number, done: () => boolean | Promise<boolean>): Promise<void> {
  const probe = async () => {
    if (await done()) return true;
    if (workerDied !== undefined) throw new Error(`the worker died while waiting for ${what}: ${workerDied.message}`);
    return undefined;
  };
  await waitUntil(probe, what, timeoutMs, 50);
}

function loopbackTransport(router: ms.Router): Promise<ms.WebRtcTransport> {
  return router.createWebRtcTransport({ listenInfos: [{ protocol: "udp", ip: "127.0.0.1" }], enableUdp: true, enableTcp: false });
}

/** Both ends of one DTLS association up: werift's view and the worker's. */
async function waitConnected(pc: RTCPeerConnection, transport: ms.WebRtcTransport): Promise<void> {
  await waitFor("werift connectionState connected", connectTimeoutMs, () => pc.connectionState === "connected");
  await waitFor("worker dtlsState connected", connectTimeoutMs, () => transport.dtlsState === "connected");
}

async function inboundPackets(producer: ms.Producer): Promise<number> {
  const stats = await producer.getStats();
  return stats.reduce((sum, s) => sum + s.packetCount, 0);
}

describe("mediasoup worker built by ./svc", () => {
  let worker: ms.Worker;
  let router: ms.Router;
  const peers: RTCPeerConnection[] = [];
  let sending: ReturnType<typeof setInterval> | undefined;

  beforeAll(async () => {
    useBuiltWorker();
    // mediasoup read MEDIASOUP_WORKER_BIN when this file imported it, before useBuiltWorker ran.
    worker = await mediasoup.createWorker({ logLevel: "warn", workerBin: mediasoupWorkerBin() });
    worker.on("died", (error) => {
      workerDied = error;
    });
    router = await worker.createRouter({ mediaCodecs: [opus] });
  });

  afterAll(async () => {
    if (sending !== undefined) clearInterval(sending);
    await Promise.allSettled(peers.map((pc) => pc.close()));
    worker?.close();
  });

  test("useBuiltWorker points mediasoup at the built binary", () => {
    expect(existsSync(mediasoupWorkerBin())).toBe(true);
    expect(process.env.MEDIASOUP_WORKER_BIN).toBe(mediasoupWorkerBin());
    expect(worker.pid).toBeGreaterThan(0);
  });

  test("useBuiltWorker fails with a clear message when the binary is missing", () => {
    const saved = process.env.MEDIASOUP_WORKER_BIN;
    process.env.MEDIASOUP_WORKER_BIN = "/nonexistent/mediasoup-worker";
    try {
      let thrown: unknown;
      try {
        useBuiltWorker();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SvcError);
      expect((thrown as SvcError).message).toContain("run ./svc once to build it");
      expect((thrown as SvcError).message).toContain("/nonexistent/mediasoup-worker");
    } finally {
      if (saved === undefined) delete process.env.MEDIASOUP_WORKER_BIN;
      else process.env.MEDIASOUP_WORKER_BIN = saved;
    }
  });

  let producer: ms.Producer;
  let sentSsrc = 0;

  test(
    "a werift sender connects (ICE, DTLS) and the producer receives its Opus RTP",
    async () => {
      const transport = await loopbackTransport(router);
      const pc = loopbackPeer();
      peers.push(pc);
      const transceiver: RTCRtpTransceiver = pc.addTransceiver(new MediaStreamTrack({ kind: "audio" }), { direction: "sendonly" });
      await pc.setLocalDescription(await pc.createOffer());
      const offer: OfferedAudio = offeredAudio(pc.localDescription!.sdp);
      expect(offer.direction).toBe("sendonly");

      // The worker is the DTLS server (answer a=setup:passive): it writes the ServerHello, the
      // message that crashes a worker built without the kTLS fix.
      await transport.connect({ dtlsParameters: { role: "client", fingerprints: offer.fingerprints } });
      producer = await transport.produce({
        kind: "audio",
        rtpParameters: {
          mid: offer.mid,
          codecs: [{ mimeType: "audio/opus", payloadType: offer.payloadType, clockRate: 48000, channels: 2, parameters: offer.fmtp }],
          headerExtensions: offer.midExtensionId === undefined ? [] : [{ uri: "urn:ietf:params:rtp-hdrext:sdes:mid", id: offer.midExtensionId }],
          encodings: offer.ssrc === undefined ? [] : [{ ssrc: offer.ssrc }],
          rtcp: { cname: offer.cname, reducedSize: true },
        },
      });
      await pc.setRemoteDescription({ type: "answer", sdp: answerFor(offer, transport, "recvonly") });

      await waitConnected(pc, transport);
      expect(["connected", "completed"]).toContain(transport.iceState);
      expect(workerDied).toBeUndefined();

      sentSsrc = transceiver.sender.ssrc;
      let sequenceNumber = 1;
      let timestamp = 0;
      sending = setInterval(() => {
        const header = new RtpHeader({ payloadType: offer.payloadType, sequenceNumber, timestamp, marker: sequenceNumber === 1 });
        sequenceNumber = (sequenceNumber + 1) & 0xffff;
        timestamp = (timestamp + samplesPerPacket) >>> 0;
        // A silent-looking Opus frame: the worker forwards payloads without decoding them.
        void transceiver.sender.sendRtp(new RtpPacket(header, Buffer.alloc(40, 0xf8))).catch(() => {});
      }, packetIntervalMs);

      await waitFor(`${packetsExpected} packets at the producer`, rtpTimeoutMs, async () => (await inboundPackets(producer)) >= packetsExpected);
      const [stats] = await producer.getStats();
      expect(stats!.ssrc).toBe(sentSsrc);
      expect(stats!.mimeType.toLowerCase()).toBe("audio/opus");
      expect(workerDied).toBeUndefined();
    },
    testTimeoutMs,
  );

  test(
    "a second werift peer consuming the producer receives the packets",
    async () => {
      expect(producer).toBeDefined();
      const transport = await loopbackTransport(router);
      const pc = loopbackPeer();
      peers.push(pc);
      pc.addTransceiver("audio", { direction: "recvonly" });
      const received: RtpPacket[] = [];
      pc.onTrack.subscribe((track) => {
        track.onReceiveRtp.subscribe((rtp) => received.push(rtp));
      });
      await pc.setLocalDescription(await pc.createOffer());
      const offer = offeredAudio(pc.localDescription!.sdp);
      expect(offer.direction).toBe("recvonly");

      await transport.connect({ dtlsParameters: { role: "client", fingerprints: offer.fingerprints } });
      // The capabilities come from the receiver's offer, but mediasoup sends on the router's payload
      // type whatever preferredPayloadType says, so the answer names the consumer's.
      const consumer = await transport.consume({
        producerId: producer.id,
        rtpCapabilities: {
          codecs: [{ kind: "audio", mimeType: "audio/opus", preferredPayloadType: offer.payloadType, clockRate: 48000, channels: 2, parameters: offer.fmtp }],
          headerExtensions: [],
        },
      });
      const consumerSsrc = consumer.rtpParameters.encodings![0]!.ssrc!;
      const consumerPayloadType = consumer.rtpParameters.codecs[0]!.payloadType;
      const answer = answerFor(offer, transport, "sendonly", {
        ssrc: consumerSsrc,
        cname: consumer.rtpParameters.rtcp!.cname!,
        payloadType: consumerPayloadType,
      });
      await pc.setRemoteDescription({ type: "answer", sdp: answer });

      await waitConnected(pc, transport);
      await waitFor(`${packetsExpected} packets at the receiving peer`, rtpTimeoutMs, () => received.length >= packetsExpected);
      for (const rtp of received) {
        expect(rtp.header.ssrc).toBe(consumerSsrc);
        expect(rtp.header.payloadType).toBe(consumerPayloadType);
        expect(rtp.payload.equals(Buffer.alloc(40, 0xf8))).toBe(true);
      }
      expect(workerDied).toBeUndefined();
    },
    testTimeoutMs,
  );
});

/**
 * The SDP answer to a parsed offer (RFC 3264, RFC 8829 §5.3): same m-lines in the same order, the
 * send line answered recvonly, each slot line answered sendonly with its slot consumer's SSRC,
 * everything else rejected with port 0. We are ICE-lite (RFC 8445 §2.5) with host candidates only,
 * and the client's BUNDLE group is answered as one transport.
 */
import { write } from "sdp-transform";
import type { MediaAttributes, MediaDescription, SessionDescription } from "sdp-transform";
import { acceptedSendExtensions, type ParsedOffer } from "./offer.ts";

export interface TransportDescription {
  ice: { usernameFragment: string; password: string };
  candidates: { foundation: string; priority: number; address: string; protocol: "udp" | "tcp"; port: number }[];
  fingerprints: { algorithm: string; value: string }[];
}

export interface AnswerInput {
  offer: ParsedOffer;
  /** Goes in the o= line; a new session gets a new id, so a client can tell answers apart. */
  sessionId: number;
  transport: TransportDescription;
  /** The SSRC and CNAME each slot's mid is sent with; stable for the life of the session. */
  slotStreams: ReadonlyMap<string, { ssrc: number; cname: string }>;
}

type Rtp = MediaAttributes["rtp"][number];

function opusRtp(payloadType: number): Rtp {
  return { payload: payloadType, codec: "opus", rate: 48000, encoding: 2 };
}

function fmtpOf(payloadType: number, parameters: Record<string, string | number>): MediaAttributes["fmtp"] {
  const config = Object.entries(parameters)
    .map(([k, v]) => `${k}=${v}`)
    .join(";");
  return config === "" ? [] : [{ payload: payloadType, config }];
}

function rejectedLine(m: MediaDescription): MediaDescription {
  return {
    type: m.type,
    port: 0,
    protocol: m.protocol,
    payloads: m.payloads,
    connection: { version: 4, ip: "0.0.0.0" },
    rtp: m.rtp,
    fmtp: [],
    mid: m.mid,
    direction: "inactive",
  };
}

function acceptedLine(input: AnswerInput, m: MediaDescription): MediaDescription {
  const { transport } = input;
  const candidate = transport.candidates[0];
  const fingerprint = transport.fingerprints.find((f) => f.algorithm === "sha-256") ?? transport.fingerprints[0]!;
  return {
    type: "audio",
    port: candidate?.port ?? 9,
    protocol: "UDP/TLS/RTP/SAVPF",
    connection: { version: candidate?.address.includes(":") ? 6 : 4, ip: candidate?.address ?? "0.0.0.0" },
    rtp: [],
    fmtp: [],
    mid: m.mid,
    iceUfrag: transport.ice.usernameFragment,
    icePwd: transport.ice.password,
    fingerprint: { type: fingerprint.algorithm, hash: fingerprint.value },
    setup: input.offer.clientDtlsRole === "server" ? "active" : "passive",
    candidates: transport.candidates.map((c, i) => ({
      foundation: c.foundation,
      component: 1,
      transport: c.protocol,
      priority: c.priority,
      ip: c.address,
      port: c.port,
      type: "host",
      ...(c.protocol === "tcp" ? { tcptype: "passive" } : {}),
      generation: 0,
      "network-id": i,
    })),
    endOfCandidates: "end-of-candidates",
    rtcpMux: "rtcp-mux",
  };
}

export function writeAnswer(input: AnswerInput): string {
  const { offer } = input;
  const media = offer.sdp.media.map((m, index): MediaDescription => {
    if (offer.rejected.includes(index)) return rejectedLine(m);
    const line = acceptedLine(input, m);
    if (offer.send?.index === index) {
      const { opus, extensions } = offer.send;
      line.payloads = String(opus.payloadType);
      line.rtp = [opusRtp(opus.payloadType)];
      line.fmtp = fmtpOf(opus.payloadType, opus.parameters);
      line.ext = extensions.filter((e) => (acceptedSendExtensions as readonly string[]).includes(e.uri)).map((e) => ({ value: e.id, uri: e.uri }));
      line.direction = "recvonly";
      return line;
    }
    const slot = offer.slots.find((s) => s.index === index)!;
    const stream = input.slotStreams.get(slot.mid)!;
    line.payloads = String(slot.opus.payloadType);
    line.rtp = [opusRtp(slot.opus.payloadType)];
    line.fmtp = fmtpOf(slot.opus.payloadType, slot.opus.parameters);
    line.direction = "sendonly";
    // One stream id per slot: a browser makes one remote track per mid whichever user feeds it.
    line.msid = [{ id: `slot-${slot.mid}`, appdata: `slot-${slot.mid}` }];
    line.ssrcs = [{ id: stream.ssrc, attribute: "cname", value: stream.cname }];
    return line;
  });
  const mids = media.filter((m) => m.port !== 0).map((m) => String(m.mid));
  const sdp: SessionDescription = {
    version: 0,
    origin: { username: "svc-media", sessionId: input.sessionId, sessionVersion: 1, netType: "IN", ipVer: 4, address: "0.0.0.0" },
    name: "-",
    timing: { start: 0, stop: 0 },
    icelite: "ice-lite",
    groups: mids.length > 0 ? [{ type: "BUNDLE", mids: mids.join(" ") }] : [],
    msidSemantic: { semantic: "WMS", token: "*" },
    media,
  };
  return write(sdp);
}

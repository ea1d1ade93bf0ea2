/**
 * A client's SDP offer, read with sdp-transform and checked for what an audio-only, Opus-only,
 * BUNDLEd, ICE-lite server can accept. Each problem is a 400 whose message names it, so a client
 * developer can fix the offer without reading our source.
 *
 * What the offer turns into:
 *  - the one audio m-line the client sends on (sendonly or sendrecv) → one producer;
 *  - each recvonly audio m-line → one slot, answered sendonly;
 *  - every other m-line (video, data, inactive audio) → answered with port 0 (rejected), which
 *    RFC 3264 §6 allows and every browser handles.
 */
import { parse } from "sdp-transform";
import type { MediaDescription, SessionDescription } from "sdp-transform";
import { SvcError } from "../../core/errors.ts";
import { mediaSlotsPerSessionMax } from "../../core/limits.ts";

/** The header extensions we accept on the client's send m-line; the rest are not answered. */
export const acceptedSendExtensions = ["urn:ietf:params:rtp-hdrext:sdes:mid", "urn:ietf:params:rtp-hdrext:ssrc-audio-level"] as const;

/** Hash functions mediasoup can check a DTLS certificate fingerprint with. */
const fingerprintAlgorithms = ["sha-1", "sha-224", "sha-256", "sha-384", "sha-512"] as const;
export type FingerprintAlgorithm = (typeof fingerprintAlgorithms)[number];

export interface OpusCodec {
  payloadType: number;
  /** The offer's fmtp parameters for that payload type, e.g. { minptime: 10, useinbandfec: 1 }. */
  parameters: Record<string, string | number>;
}

export interface SendLine {
  index: number;
  mid: string;
  opus: OpusCodec;
  /** The client's SSRC when the offer lists one; otherwise packets are matched by mid. */
  ssrc: number | undefined;
  cname: string | undefined;
  extensions: { uri: string; id: number }[];
}

export interface SlotLine {
  index: number;
  mid: string;
  opus: OpusCodec;
}

export interface ParsedOffer {
  sdp: SessionDescription;
  ice: { usernameFragment: string; password: string };
  fingerprints: { algorithm: FingerprintAlgorithm; value: string }[];
  /** The client's DTLS role, as mediasoup's transport.connect() wants it. */
  clientDtlsRole: "auto" | "client" | "server";
  send: SendLine | undefined;
  slots: SlotLine[];
  /** Indexes of m-lines answered with port 0. */
  rejected: number[];
}

const badOffer = (why: string) => new SvcError("bad_request", `sdp_offer ${why}`);

function parseText(text: string): SessionDescription {
  if (!/^v=0\r?\n/.test(text)) throw badOffer("does not parse: an SDP description starts with the line v=0");
  let sdp: SessionDescription;
  try {
    sdp = parse(text);
  } catch (error) {
    throw badOffer(`does not parse: ${(error as Error).message}`);
  }
  if (!Array.isArray(sdp.media) || sdp.media.length === 0) throw badOffer("does not parse: it has no m= lines");
  return sdp;
}

/** The Opus payload type of an m-line, or a 400 naming the codecs it offers instead. */
function opusOf(m: MediaDescription, what: string): OpusCodec {
  const opus = m.rtp.find((r) => r.codec.toLowerCase() === "opus" && r.rate === 48000);
  if (opus === undefined) {
    const offered = m.rtp.map((r) => `${r.codec}/${r.rate}`).join(", ") || "none";
    throw badOffer(`has an unsupported codec on ${what}: offers ${offered}; this server forwards only opus/48000/2`);
  }
  const fmtp = m.fmtp.find((f) => f.payload === opus.payload)?.config ?? "";
  const parameters: Record<string, string | number> = {};
  for (const pair of fmtp.split(";")) {
    const [key, value] = pair.split("=").map((s) => s.trim());
    if (key && value !== undefined) parameters[key] = /^\d+$/.test(value) ? Number(value) : value;
  }
  return { payloadType: opus.payload, parameters };
}

function iceOf(sdp: SessionDescription, m: MediaDescription): ParsedOffer["ice"] {
  const usernameFragment = m.iceUfrag ?? sdp.iceUfrag;
  const password = m.icePwd ?? sdp.icePwd;
  if (usernameFragment === undefined || usernameFragment === "" || password === undefined || password === "") {
    throw badOffer("has no ICE credentials (a=ice-ufrag and a=ice-pwd)");
  }
  return { usernameFragment: String(usernameFragment), password: String(password) };
}

function fingerprintsOf(sdp: SessionDescription, m: MediaDescription): ParsedOffer["fingerprints"] {
  const fingerprint = m.fingerprint ?? sdp.fingerprint;
  if (fingerprint === undefined) throw badOffer("has no DTLS fingerprint (a=fingerprint)");
  const algorithm = fingerprint.type.toLowerCase();
  if (!(fingerprintAlgorithms as readonly string[]).includes(algorithm)) {
    throw badOffer(`has a DTLS fingerprint with unsupported hash ${fingerprint.type}; use one of ${fingerprintAlgorithms.join(", ")}`);
  }
  return [{ algorithm: algorithm as FingerprintAlgorithm, value: fingerprint.hash }];
}

function dtlsRoleOf(sdp: SessionDescription, m: MediaDescription): ParsedOffer["clientDtlsRole"] {
  const setup = m.setup ?? sdp.setup ?? "actpass";
  switch (setup) {
    case "actpass":
    case "active":
      // We answer passive, so the client opens the handshake as DTLS client.
      return "client";
    case "passive":
      return "server";
    default:
      throw badOffer(`has a=setup:${setup}; expected actpass, active or passive`);
  }
}

function directionOf(sdp: SessionDescription, m: MediaDescription): string {
  return m.direction ?? sdp.direction ?? "sendrecv";
}

function sendLineOf(m: MediaDescription, index: number, mid: string): SendLine {
  const ssrcLines = m.ssrcs ?? [];
  const groups = m.ssrcGroups ?? [];
  // Audio has no RTX or simulcast: several SSRCs on a send line means something we cannot forward.
  const ssrcs = [...new Set(ssrcLines.map((s) => Number(s.id)))];
  if (ssrcs.length > 1 || groups.length > 0) throw badOffer(`m-line mid ${mid} sends more than one SSRC; audio sends one`);
  const extensions = (m.ext ?? []).filter((e) => (acceptedSendExtensions as readonly string[]).includes(e.uri)).map((e) => ({ uri: e.uri, id: e.value }));
  if (ssrcs.length === 0 && !extensions.some((e) => e.uri === acceptedSendExtensions[0])) {
    throw badOffer(`m-line mid ${mid} sends audio with neither a=ssrc nor the sdes:mid header extension, so its packets cannot be recognised`);
  }
  return {
    index,
    mid,
    opus: opusOf(m, `m-line mid ${mid}`),
    ssrc: ssrcs[0],
    cname: ssrcLines.find((s) => s.attribute === "cname")?.value,
    extensions,
  };
}

/** Reads and checks an offer; throws a 400 that names the first problem found. */
export function parseOffer(text: string): ParsedOffer {
  const sdp = parseText(text);
  // sdp-transform gives numbers for values that look numeric (a=group:BUNDLE 0, a=ice-ufrag:1234).
  const bundle = String(sdp.groups?.find((g) => g.type === "BUNDLE")?.mids ?? "").split(" ");
  const mids = new Set<string>();
  let send: SendLine | undefined;
  const slots: SlotLine[] = [];
  const rejected: number[] = [];
  let first: MediaDescription | undefined;

  sdp.media.forEach((m, index) => {
    const mid = m.mid === undefined ? undefined : String(m.mid);
    if (mid === undefined || mid === "") throw badOffer(`m-line ${index} has no a=mid`);
    if (mids.has(mid)) throw badOffer(`has two m-lines with mid ${mid}`);
    mids.add(mid);
    const direction = directionOf(sdp, m);
    if (m.type !== "audio" || m.port === 0 || direction === "inactive") {
      rejected.push(index);
      return;
    }
    if (!m.protocol.includes("SAVPF") && !m.protocol.includes("SAVP"))
      throw badOffer(`m-line mid ${mid} uses ${m.protocol}; WebRTC media needs UDP/TLS/RTP/SAVPF`);
    if (m.rtcpMux === undefined) throw badOffer(`m-line mid ${mid} lacks a=rtcp-mux`);
    first ??= m;
    if (direction === "sendonly" || direction === "sendrecv") {
      if (send !== undefined) throw badOffer(`has more than one audio m-line that sends (mids ${send.mid} and ${mid}); send on one`);
      send = sendLineOf(m, index, mid);
    } else {
      slots.push({ index, mid, opus: opusOf(m, `m-line mid ${mid}`) });
    }
  });

  if (first === undefined) throw badOffer("has no audio: no audio m-line that sends or receives");
  const accepted = [...(send ? [send] : []), ...slots];
  if (accepted.length > 1 && !accepted.every((a) => bundle.includes(a.mid))) {
    throw badOffer("does not BUNDLE its audio m-lines (a=group:BUNDLE); one transport carries them all");
  }
  if (slots.length > mediaSlotsPerSessionMax) {
    throw badOffer(`has ${slots.length} recvonly audio m-lines; at most ${mediaSlotsPerSessionMax} slots per session`);
  }
  const slotPayloadTypes = new Set(slots.map((s) => s.opus.payloadType));
  if (slotPayloadTypes.size > 1) throw badOffer("uses different Opus payload types on its recvonly m-lines; use one");

  return {
    sdp,
    ice: iceOf(sdp, first),
    fingerprints: fingerprintsOf(sdp, first),
    clientDtlsRole: dtlsRoleOf(sdp, first),
    send,
    slots,
    rejected,
  };
}

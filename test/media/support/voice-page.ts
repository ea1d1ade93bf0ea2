/**
 * A minimal voice client page for browser tests, served from its own origin (a tiny Bun.serve on
 * another port than `svc media`), so every call to the media API is cross-origin and the browser
 * sends real CORS preflights (JSON bodies are not "simple" requests).
 *
 * The page does what a real client does: getUserMedia for the microphone, one sendonly audio
 * transceiver for it plus N recvonly ones (the slots), createOffer, POST /v1/sessions, apply the
 * answer. It exposes `window.voice` for the test to drive through page.evaluate.
 */
import type { Server } from "bun";
import type { Page } from "playwright-core";

const pageScript = `
let pc;
let session;
let mediaUrl;
let token;

async function call(method, path, body) {
  const res = await fetch(mediaUrl + path, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text === "" ? null : JSON.parse(text) };
}

window.voice = {
  async join(url, userToken, slots, mic) {
    mediaUrl = url;
    token = userToken;
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    pc = new RTCPeerConnection();
    // "sendonly" as a voice client written for this API does; "sendrecv" is what addTrack makes,
    // as most WebRTC apps do.
    if (mic === "sendrecv") pc.addTrack(stream.getAudioTracks()[0], stream);
    else pc.addTransceiver(stream.getAudioTracks()[0], { direction: "sendonly", streams: [stream] });
    for (let i = 0; i < slots; i++) pc.addTransceiver("audio", { direction: "recvonly" });
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const res = await call("POST", "/v1/sessions", { token, sdp_offer: pc.localDescription.sdp });
    if (res.status !== 200) return { status: res.status, error: res.body };
    session = res.body.session_id;
    await pc.setRemoteDescription({ type: "answer", sdp: res.body.sdp_answer });
    return { status: 200, sessionId: session, offer: pc.localDescription.sdp, answer: res.body.sdp_answer };
  },
  state() {
    return { connection: pc.connectionState, ice: pc.iceConnectionState };
  },
  /** inbound-rtp of each recvonly transceiver, by mid: what this browser received on its slots. */
  async inbound() {
    const out = {};
    for (const t of pc.getTransceivers()) {
      if (t.direction !== "recvonly") continue;
      const report = await t.receiver.getStats();
      report.forEach((s) => {
        if (s.type === "inbound-rtp") out[t.mid] = { ssrc: s.ssrc, packetsReceived: s.packetsReceived };
      });
    }
    return out;
  },
  /** outbound-rtp of the microphone's sender. */
  async outbound() {
    const sender = pc.getTransceivers().find((t) => t.direction !== "recvonly").sender;
    let out = null;
    (await sender.getStats()).forEach((s) => {
      if (s.type === "outbound-rtp") out = { ssrc: s.ssrc, packetsSent: s.packetsSent };
    });
    return out;
  },
  slots: () => call("POST", "/v1/sessions/" + session + "/slots", { token }),
  patch: (peers) => call("PATCH", "/v1/sessions/" + session, { token, peers }),
  remove: () => call("DELETE", "/v1/sessions/" + session, { token }),
};
`;

const pageHtml = `<!doctype html>
<html><head><meta charset="utf-8"><title>voice test client</title></head>
<body><p>voice test client</p><script>${pageScript}</script></body></html>`;

/** Serves the page at / on 127.0.0.1 and a free port. http://127.0.0.1 is a secure context, so getUserMedia works. */
export function serveVoicePage(): Server<undefined> {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(pageHtml, { headers: { "content-type": "text/html; charset=utf-8" } }),
  });
}

export interface JoinResult {
  status: number;
  error?: unknown;
  sessionId?: number;
  offer?: string;
  answer?: string;
}

export interface ApiResult {
  status: number;
  body: unknown;
}

export type Inbound = Record<string, { ssrc: number; packetsReceived: number }>;

/** What `window.voice` offers the test. */
export type VoiceMethod = "join" | "state" | "inbound" | "outbound" | "slots" | "patch" | "remove";

/** Runs `window.voice[method](...args)` in the page and returns its (JSON-able) result. */
export async function callVoice<T>(page: Page, method: VoiceMethod, ...args: unknown[]): Promise<T> {
  const result = await page.evaluate(([m, a]) => (globalThis as unknown as { voice: Record<string, (...x: unknown[]) => unknown> }).voice[m]!(...a), [
    method,
    args,
  ] as const);
  return result as T;
}

/**
 * A werift WebRTC peer on loopback, as a voice client would be: one sendonly Opus transceiver
 * (optional) and N recvonly ones (the slots), joining through POST /v1/sessions and recording
 * every RTP packet that arrives on each slot.
 */
import { RTCPeerConnection, RTCRtpCodecParameters, RtpHeader, RtpPacket, type RTCRtpTransceiver } from "werift";
import type { MediaUnderTest } from "./media.ts";

const audioLevelUri = "urn:ietf:params:rtp-hdrext:ssrc-audio-level";
const audioLevelId = 1;
/** An Opus frame of silence (TOC byte plus padding): mediasoup forwards payloads unread. */
const opusPayload = Buffer.from([0xf8, 0xff, 0xfe]);

export interface Received {
  ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  /** First payload byte after our 3-byte frame: which peer sent it (see Peer.send). */
  tag: number;
  at: number;
}

export class Peer {
  readonly received = new Map<string, Received[]>();
  sessionId = 0;
  answer = "";
  #seq = Math.floor(Math.random() * 0xffff);
  #ts = Math.floor(Math.random() * 0xffff_ffff);
  #sender: RTCRtpTransceiver | undefined;

  private constructor(
    readonly user: string,
    readonly pc: RTCPeerConnection,
  ) {}

  /** Creates the peer's offer (1 send line when `send`, then `slots` recvonly lines). */
  static async offer(user: string, options: { slots: number; send?: boolean }): Promise<{ peer: Peer; sdp: string }> {
    const pc = new RTCPeerConnection({
      iceServers: [],
      iceUseIpv6: false,
      iceInterfaceAddresses: { udp4: "127.0.0.1" },
      iceAdditionalHostAddresses: ["127.0.0.1"],
      codecs: { audio: [new RTCRtpCodecParameters({ mimeType: "audio/opus", clockRate: 48000, channels: 2 })] },
      headerExtensions: { audio: [{ id: audioLevelId, uri: audioLevelUri }] },
    });
    const peer = new Peer(user, pc);
    if (options.send ?? true) peer.#sender = pc.addTransceiver("audio", { direction: "sendonly" });
    for (let i = 0; i < options.slots; i++) {
      const t = pc.addTransceiver("audio", { direction: "recvonly" });
      t.onTrack.subscribe((track, transceiver) => {
        track.onReceiveRtp.subscribe((rtp) => {
          const mid = transceiver.mid!;
          const list = peer.received.get(mid) ?? [];
          list.push({
            ssrc: rtp.header.ssrc,
            sequenceNumber: rtp.header.sequenceNumber,
            timestamp: rtp.header.timestamp,
            tag: rtp.payload[3] ?? -1,
            at: Date.now(),
          });
          peer.received.set(mid, list);
        });
      });
    }
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    return { peer, sdp: pc.localDescription!.sdp };
  }

  /** Offers, posts the session, applies the answer and waits until ICE and DTLS are connected. */
  static async join(media: MediaUnderTest, user: string, room: string, options: { slots: number; send?: boolean; peers?: string[] | null }): Promise<Peer> {
    const { peer, sdp } = await Peer.offer(user, options);
    const res = await media.call("POST", "/v1/sessions", {
      token: media.token(user, room),
      sdp_offer: sdp,
      ...(options.peers === undefined ? {} : { peers: options.peers }),
    });
    if (res.status !== 200) throw new Error(`POST /v1/sessions for ${user}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { session_id: number; sdp_answer: string };
    peer.sessionId = body.session_id;
    peer.answer = body.sdp_answer;
    await peer.pc.setRemoteDescription({ type: "answer", sdp: body.sdp_answer });
    await peer.connected();
    return peer;
  }

  async connected(limitMs = 15_000): Promise<void> {
    const deadline = Date.now() + limitMs;
    while (this.pc.connectionState !== "connected") {
      if (Date.now() > deadline) throw new Error(`${this.user}: not connected (state ${this.pc.connectionState}, ice ${this.pc.iceConnectionState})`);
      await Bun.sleep(20);
    }
  }

  /**
   * Sends `count` 20 ms Opus packets, paced at 20 ms, each carrying an audio level of -`levelDbov`
   * dBov (0 loudest) and a tag byte after the frame so receivers can tell senders apart.
   */
  async send(count: number, options: { tag: number; levelDbov?: number; paceMs?: number }): Promise<void> {
    const sender = this.#sender!.sender;
    for (let i = 0; i < count; i++) {
      this.#seq = (this.#seq + 1) & 0xffff;
      this.#ts = (this.#ts + 960) >>> 0;
      const header = new RtpHeader({
        payloadType: 96,
        sequenceNumber: this.#seq,
        timestamp: this.#ts,
        extension: true,
        extensions: [{ id: audioLevelId, payload: Buffer.from([0x80 | (options.levelDbov ?? 127)]) }],
      });
      await sender.sendRtp(new RtpPacket(header, Buffer.concat([opusPayload, Buffer.from([options.tag])])));
      await Bun.sleep(options.paceMs ?? 20);
    }
  }

  packets(mid: string): Received[] {
    return this.received.get(mid) ?? [];
  }

  async close(): Promise<void> {
    await this.pc.close();
  }
}

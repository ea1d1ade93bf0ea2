/**
 * `svc media`: the session-control API of the voice forwarding engine (docs/media.md) over a pool
 * of mediasoup workers. Media flows over UDP ports in --rtc-min-port..--rtc-max-port on the
 * --bind host (or --announced-ip in the candidates); the HTTP API is on --bind.
 */
import { availableParallelism } from "node:os";
import { flag } from "../core/config.ts";
import { mediaRoomSessionsPerWorkerMax, mediaRtcPortMaxDefault, mediaRtcPortMinDefault } from "../core/limits.ts";
import { defineService } from "../service.ts";
import { mediaDataDirDefault, tokenTool } from "./token-tool.ts";

/** Most workers accepted: one per core is the point, and no machine we target has more. */
const workersMax = 256;
/** Most --room-sessions-per-worker accepted: far past what one worker thread forwards. */
const roomSessionsPerWorkerMax = 100_000;

export const mediaService = defineService({
  name: "media",
  summary: "voice SFU: session-control HTTP API over mediasoup workers, audio slots chosen by level",
  envPrefix: "SVC_MEDIA",
  flags: {
    bind: flag.string({ default: "127.0.0.1:8443", help: "HTTP address host:port (also the address media ports bind); port 0 picks a free one" }),
    tokenSecret: flag.string({
      default: "",
      help: "HS256 secret tokens are signed with (at least 32 bytes); empty: generated once into --data-dir/token-secret",
    }),
    announcedIp: flag.string({ default: "", help: "address put in ICE candidates when clients reach this host at another address (NAT, containers)" }),
    rtcMinPort: flag.int({ default: mediaRtcPortMinDefault, min: 1, max: 65535, help: "lowest UDP port for media" }),
    rtcMaxPort: flag.int({ default: mediaRtcPortMaxDefault, min: 1, max: 65535, help: "highest UDP port for media" }),
    workers: flag.int({ default: availableParallelism(), min: 1, max: workersMax, help: "mediasoup worker processes (default: the number of cores)" }),
    roomSessionsPerWorker: flag.int({
      default: mediaRoomSessionsPerWorkerMax,
      min: 1,
      max: roomSessionsPerWorkerMax,
      help: "sessions of one room on one worker before the room spreads to another (its senders are piped across)",
    }),
    dataDir: flag.string({ default: mediaDataDirDefault, help: "where a generated token secret is kept" }),
  },
  tools: [tokenTool],
  async start(config, log) {
    // The engine (mediasoup and the modules around it) loads only when media starts: it takes
    // ~120 ms, which `svc kv` and the other services' processes, started from the same CLI, should
    // not pay.
    const { startMedia } = await import("./start.ts");
    return startMedia(config, log);
  },
});

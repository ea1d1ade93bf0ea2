/**
 * `svc media`: the session-control API of the voice forwarding engine (docs/media.md) over a pool
 * of mediasoup workers. Media flows over UDP ports in --rtc-min-port..--rtc-max-port on the
 * --bind host (or --announced-ip in the candidates); the HTTP API is on --bind.
 */
import { availableParallelism } from "node:os";
import { formatBindAddress, parseBindAddress } from "../core/bind-address.ts";
import { flag } from "../core/config.ts";
import { SvcError } from "../core/errors.ts";
import { mediaRequestBodyBytesMax, mediaRtcPortMaxDefault, mediaRtcPortMinDefault } from "../core/limits.ts";
import { startHttpServer } from "../http/server.ts";
import { defineService } from "../service.ts";
import { mediaRoutes } from "./http/routes.ts";
import { MediaServer } from "./media-server.ts";
import type { ListenConfig } from "./session.ts";
import { resolveTokenSecret } from "./token-secret.ts";
import { mediaDataDirDefault, tokenTool } from "./token-tool.ts";
import { mediasoupWorkerBin, useBuiltWorker } from "./worker-bin.ts";
import { WorkerPool } from "./workers.ts";

/** Most workers accepted: one per core is the point, and no machine we target has more. */
const workersMax = 256;

const unspecifiedHosts = new Set(["0.0.0.0", "::"]);

/** Where the UDP sockets bind and what the ICE candidates announce. */
function listenConfig(host: string, announcedIp: string, portMin: number, portMax: number): ListenConfig {
  if (portMin > portMax) throw new SvcError("bad_config", `--rtc-min-port ${portMin} is above --rtc-max-port ${portMax}`);
  const ip = host === "localhost" ? "127.0.0.1" : host;
  if (unspecifiedHosts.has(ip) && announcedIp === "") {
    throw new SvcError("bad_config", `--bind ${host} listens on every address; give --announced-ip, the address clients reach this host at`);
  }
  return { ip, announcedAddress: announcedIp === "" ? undefined : announcedIp, portMin, portMax };
}

export const mediaService = defineService({
  name: "media",
  summary: "voice SFU: session-control HTTP API over mediasoup workers, audio slots chosen by level",
  envPrefix: "SVC_MEDIA",
  flags: {
    bind: flag.string({ default: "127.0.0.1:8443", help: "HTTP address host:port (also the address media ports bind); port 0 picks a free one" }),
    tokenSecret: flag.string({ default: "", help: "HS256 secret tokens are signed with (at least 32 bytes); empty: generated once into --data-dir/token-secret" }),
    announcedIp: flag.string({ default: "", help: "address put in ICE candidates when clients reach this host at another address (NAT, containers)" }),
    rtcMinPort: flag.int({ default: mediaRtcPortMinDefault, min: 1, max: 65535, help: "lowest UDP port for media" }),
    rtcMaxPort: flag.int({ default: mediaRtcPortMaxDefault, min: 1, max: 65535, help: "highest UDP port for media" }),
    workers: flag.int({ default: availableParallelism(), min: 1, max: workersMax, help: "mediasoup worker processes (default: the number of cores)" }),
    dataDir: flag.string({ default: mediaDataDirDefault, help: "where a generated token secret is kept" }),
  },
  tools: [tokenTool],
  async start(config, log) {
    const bind = parseBindAddress(config.bind);
    const listen = listenConfig(bind.hostname, config.announcedIp, config.rtcMinPort, config.rtcMaxPort);
    const secret = resolveTokenSecret(config.tokenSecret, config.dataDir);
    if (secret.generated) log.warn({ path: secret.source }, "no --token-secret given: generated one; `svc media token` signs with it");
    else log.info({ source: secret.source }, "token secret loaded");
    useBuiltWorker();
    const workers = new WorkerPool(config.workers, mediasoupWorkerBin(), log);
    await workers.start();
    const server = new MediaServer(workers, listen, log);
    const http = startHttpServer({
      name: "media",
      hostname: bind.hostname,
      port: bind.port,
      routes: mediaRoutes(server, secret.secret),
      bodyBytesMax: mediaRequestBodyBytesMax,
      cors: { kind: "any" },
      log,
    });
    const address = formatBindAddress(bind.hostname, http.port);
    log.info({ address, workers: config.workers, rtcPorts: `${listen.portMin}-${listen.portMax}` }, "media listening (HTTP)");
    return {
      endpoints: [{ protocol: "HTTP", address, tryIt: `curl http://${address}/healthz` }],
      async stop() {
        await http.stop();
        server.close();
      },
    };
  },
});

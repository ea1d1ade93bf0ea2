/**
 * Starting `svc media`: the worker pool, the media server over it and the HTTP API, from the flags
 * service.ts declares. Kept apart from the declaration so that only a process that runs media
 * loads mediasoup.
 */
import { formatBindAddress, parseBindAddress } from "../core/bind-address.ts";
import { SvcError } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import { mediaRequestBodyBytesMax } from "../core/limits.ts";
import { startHttpServer } from "../http/server.ts";
import type { RunningService } from "../service.ts";
import { mediaRoutes } from "./http/routes.ts";
import { MediaServer } from "./media-server.ts";
import type { ListenConfig } from "./session.ts";
import { resolveTokenSecret } from "./token-secret.ts";
import { mediasoupWorkerBin, useBuiltWorker } from "./worker-bin.ts";
import { WorkerPool } from "./workers.ts";

/** The flags `svc media` starts from (service.ts). */
export interface MediaConfig {
  bind: string;
  tokenSecret: string;
  announcedIp: string;
  rtcMinPort: number;
  rtcMaxPort: number;
  workers: number;
  roomSessionsPerWorker: number;
  dataDir: string;
}

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

export async function startMedia(config: MediaConfig, log: Logger): Promise<RunningService> {
  const bind = parseBindAddress(config.bind);
  const listen = listenConfig(bind.hostname, config.announcedIp, config.rtcMinPort, config.rtcMaxPort);
  const secret = resolveTokenSecret(config.tokenSecret, config.dataDir);
  if (secret.generated) log.warn({ path: secret.source }, "no --token-secret given: generated one; `svc media token` signs with it");
  else log.info({ source: secret.source }, "token secret loaded");
  useBuiltWorker();
  const workers = new WorkerPool(config.workers, mediasoupWorkerBin(), log);
  await workers.start();
  const server = new MediaServer(workers, listen, log, { roomSessionsPerWorkerMax: config.roomSessionsPerWorker });
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
}

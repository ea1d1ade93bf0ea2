/**
 * The contract between a service (kv, broker, media, crm) and the CLI. A service declares its
 * flags and how to start; the CLI gives it `svc <name>`, runs it under `svc up`, and stops it
 * cleanly on Ctrl-C or SIGTERM.
 */
/** One address a service listens on, and a first command a user can paste to try it. */
export interface Endpoint {
  /** What speaks there, e.g. "RESP2" or "HTTP". */
  protocol: string;
  /** host:port or a URL. */
  address: string;
  /** e.g. `redis-cli -p 6379 PING` or a curl line. */
  tryIt: string;
}

export interface RunningService {
  endpoints: Endpoint[];
  /** Stops accepting work, finishes or fails what is in flight, flushes to disk, closes. */
  stop(): Promise<void>;
}

/** The message a service child sends `svc up` over IPC once it listens. */
export interface ReadyMessage {
  type: "ready";
  service: string;
  pid: number;
  endpoints: Endpoint[];
}

export function isReadyMessage(message: unknown): message is ReadyMessage {
  const m = message as Partial<ReadyMessage> | null;
  return typeof m === "object" && m !== null && m.type === "ready" && Array.isArray(m.endpoints);
}

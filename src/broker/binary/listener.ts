/**
 * The binary protocol's listener (`--bind-binary`, spec: Binary protocol): a Bun.listen socket
 * server, TLS when the broker has a certificate, whose connections (connection.ts) run the same
 * operations as HTTP. Here are the limits that span connections: how many one address may hold
 * (`--binary-max-connections-per-ip`; one past it is closed at once, as Kafka's
 * max.connections.per.ip does), how long one may sit idle (`--binary-idle-timeout`), the shared
 * budget of request bytes in flight, and revocation: a revoked key's connections stop at once.
 */
import type { Socket, TCPSocketListener } from "bun";
import type { Logger } from "../../core/log.ts";
import type { Broker } from "../broker.ts";
import type { TlsPem } from "../transport.ts";
import { BinaryConnection, type BinaryLimits, InFlightBudget } from "./connection.ts";

export interface BinaryListenerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  tls: TlsPem | null;
  limits: BinaryLimits;
  /** --binary-idle-timeout: a connection that sends nothing this long is closed. */
  idleTimeoutMs: number;
  /** --binary-max-connections-per-ip */
  connectionsPerAddressMax: number;
  /** --binary-max-inflight-bytes: request bytes running on all connections together. */
  inFlightBytesMax: number;
  log: Logger;
}

export interface BinaryListener {
  readonly port: number;
  /** Stops accepting and closes every connection. */
  stop(): void;
}

/** A connection's slot on its socket: null for one refused at open. */
type SocketData = { connection: BinaryConnection | null; address: string };

export function startBinaryListener(broker: Broker, options: BinaryListenerOptions): BinaryListener {
  const budget = new InFlightBudget(options.inFlightBytesMax);
  const byAddress = new Map<string, number>();
  const connections = new Set<BinaryConnection>();
  const log = options.log.child({ listener: "binary" });
  // Idle connections are looked for on a timer of our own (Bun's socket timeouts tick too
  // coarsely for a short --binary-idle-timeout): within a tenth of the timeout, at most a second late.
  const idleCheck = setInterval(
    () => {
      const silentSince = performance.now() - options.idleTimeoutMs;
      for (const connection of connections) {
        if (connection.lastHeardMs <= silentSince)
          connection.stop(`408 the connection sent nothing for ${options.idleTimeoutMs / 1000} s (--binary-idle-timeout)`);
      }
    },
    Math.min(1000, Math.ceil(options.idleTimeoutMs / 10)),
  );
  idleCheck.unref();

  broker.keys.onRevoke((keyId) => {
    for (const connection of connections) if (connection.keyId === keyId) connection.stop("401 this API key was revoked");
  });

  const release = (data: SocketData) => {
    const left = (byAddress.get(data.address) ?? 1) - 1;
    if (left === 0) byAddress.delete(data.address);
    else byAddress.set(data.address, left);
  };

  const listener: TCPSocketListener<SocketData> = Bun.listen<SocketData>({
    hostname: options.hostname,
    port: options.port,
    ...(options.tls === null ? {} : { tls: options.tls }),
    socket: {
      open(socket: Socket<SocketData>) {
        const address = socket.remoteAddress;
        const count = byAddress.get(address) ?? 0;
        if (count >= options.connectionsPerAddressMax) {
          socket.data = { connection: null, address };
          log.warn({ address, connections: count }, "binary connection refused: this address holds --binary-max-connections-per-ip already");
          socket.end();
          return;
        }
        byAddress.set(address, count + 1);
        const data: SocketData = { connection: null, address };
        socket.data = data;
        data.connection = new BinaryConnection(
          broker,
          {
            write: (bytes) => Math.max(0, socket.write(bytes)),
            pause: () => socket.pause(),
            resume: () => socket.resume(),
            end: () => socket.end(),
            remoteAddress: address,
          },
          options.limits,
          budget,
          log,
          (closed) => {
            if (connections.delete(closed)) broker.metrics.binaryConnections--;
          },
        );
        connections.add(data.connection);
        broker.metrics.binaryConnections++;
      },
      data(socket, bytes) {
        socket.data.connection?.data(bytes);
      },
      drain(socket) {
        socket.data.connection?.drain();
      },
      close(socket) {
        const { connection } = socket.data;
        if (connection === null) return;
        connection.closedBySocket();
        release(socket.data);
      },
      error(socket, error) {
        log.warn({ err: error, address: socket.data?.address }, "binary connection error");
      },
    },
  });

  return {
    port: listener.port,
    stop() {
      clearInterval(idleCheck);
      listener.stop(true);
    },
  };
}

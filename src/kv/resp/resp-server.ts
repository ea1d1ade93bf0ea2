/**
 * The RESP2 listener on Bun.listen: one Connection per client socket.
 */
import type { TCPSocketListener } from "bun";
import { Connection } from "./resp-connection.ts";
import type { Engine } from "../server/engine.ts";
import type { RequestParser } from "./parser.ts";

export interface RespServer {
  /** The port it listens on now (CONFIG SET port moves it). */
  readonly port: number;
  readonly hostname: string;
  /**
   * Listens on `port` instead, as CONFIG SET port does: the clients already connected stay, and
   * the old port is closed once the new one is open. Throws the system's error when it cannot be.
   */
  moveTo(port: number): void;
  /** Stops accepting and closes every client connection. */
  stop(): void;
}

/** What a connection past maxclients reads before it is closed. */
const maxClientsError = "-ERR max number of clients reached\r\n";

/** Listens for RESP clients; `newParser` makes each connection's request parser. */
export function startRespServer(engine: Engine, hostname: string, port: number, newParser: () => RequestParser): RespServer {
  const listen = (at: number): TCPSocketListener<Connection> =>
    Bun.listen<Connection>({
      hostname,
      port: at,
      socket: {
        open(socket) {
          // As Redis: past maxclients the connection gets one error line and is closed, before it
          // is a client (it counts in rejected_connections, not in total_connections_received).
          if (engine.sessions.size >= engine.maxClients) {
            engine.stats.rejectedConnections++;
            socket.end(maxClientsError);
            return;
          }
          socket.setNoDelay(true);
          socket.data = new Connection(engine, socket, newParser());
        },
        data(socket, chunk) {
          socket.data?.onData(chunk);
        },
        drain(socket) {
          socket.data?.write();
        },
        close(socket) {
          socket.data?.onClose();
        },
        error(socket, error) {
          engine.log.debug({ err: error }, "client socket error");
          socket.data?.onClose();
        },
      },
    });
  let listener = listen(port);
  /** Listeners no longer accepting whose clients are still connected: closed at stop. */
  const retired: TCPSocketListener<Connection>[] = [];
  return {
    get port() {
      return listener.port;
    },
    hostname: listener.hostname,
    moveTo(at: number) {
      const next = listen(at);
      listener.stop(false);
      retired.push(listener);
      listener = next;
    },
    stop: () => {
      for (const old of retired) old.stop(true);
      listener.stop(true);
    },
  };
}

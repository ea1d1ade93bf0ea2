/**
 * A real `svc media` process for tests: started on port 0 with a known token secret and a small
 * RTC port range, and a client for its HTTP API.
 */
import { join } from "node:path";
import { mintToken } from "../../../src/media/token.ts";
import { mediaAddress, type SpawnedServer, spawnServer } from "../../support/spawn.ts";
import { tempDir } from "../../support/temp-dir.ts";

const cliPath = join(import.meta.dir, "../../../src/cli.ts");

export const testSecret = "test-secret-".padEnd(40, "x");

export interface MediaUnderTest {
  server: SpawnedServer<string>;
  url: string;
  /** A token for (user, room), valid for an hour unless `exp` (seconds) says otherwise. */
  token(user: string, room: string, exp?: number): string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Process ids of the workers, from the service's log lines ("media worker started"). */
  workerPids(): number[];
  stop(): Promise<void>;
}

export async function startMedia(flags: string[] = []): Promise<MediaUnderTest> {
  const dataDir = tempDir("svc-media-");
  const server = await spawnServer(
    "svc media",
    [process.execPath, cliPath, "media", "--bind", "127.0.0.1:0", "--token-secret", testSecret, "--workers", "1", "--data-dir", dataDir, ...flags],
    mediaAddress,
  );
  const url = `http://${server.where}`;
  return {
    server,
    url,
    token: (user, room, exp = Math.floor(Date.now() / 1000) + 3600) => mintToken(testSecret, { user, room, exp }),
    call: (method, path, body, headers = {}) =>
      fetch(`${url}${path}`, {
        method,
        headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      }),
    workerPids: () => [...server.output().matchAll(/"workerPid":(\d+)[^\n]*media worker started/g)].map((m) => Number(m[1])),
    stop: () => server.stop(),
  };
}

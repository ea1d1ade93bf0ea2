// The media engine failing under the API: a worker that stops answering makes session creation a
// 503 after the spec's 5 s (and leaves nothing behind), and a worker that dies turns /healthz to
// 503, takes its sessions with it, and is replaced so /healthz is ok again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { waitUntil } from "../support/wait.ts";
import { type MediaUnderTest, startMedia } from "./support/media.ts";
import { Peer } from "./support/peer.ts";

let media: MediaUnderTest;

beforeAll(async () => {
  media = await startMedia(["--workers", "1"]);
});
afterAll(() => media.stop());

async function offer(user: string): Promise<string> {
  const { peer, sdp } = await Peer.offer(user, { slots: 1 });
  await peer.close();
  return sdp;
}

/** How long the worker's death and replacement may take to show in /healthz. */
const healthzWaitMs = 15_000;

describe("media engine failures", () => {
  test("a worker that does not answer within 5 s gives 503, and the failed session is not counted", async () => {
    const [pid] = media.workerPids();
    expect(pid).toBeGreaterThan(0);
    const sdp = await offer("stuck");
    process.kill(pid!, "SIGSTOP");
    try {
      const res = await media.call("POST", "/v1/sessions", { token: media.token("stuck", "slow"), sdp_offer: sdp });
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: string }).error).toMatch(/did not answer within 5 s/);
    } finally {
      process.kill(pid!, "SIGCONT");
    }
    const stats = await media.call("GET", "/v1/stats", undefined, { authorization: `Bearer ${media.token("stuck", "slow")}` });
    expect(((await stats.json()) as { rooms: Record<string, number> }).rooms).toEqual({ slow: 0 });
  }, 30_000);

  test("a dead worker turns /healthz to 503 and drops its sessions; its replacement makes /healthz ok again", async () => {
    const res = await media.call("POST", "/v1/sessions", { token: media.token("victim", "crash"), sdp_offer: await offer("victim") });
    expect(res.status).toBe(200);
    const { session_id } = (await res.json()) as { session_id: number };
    const [pid] = media.workerPids().slice(-1);
    process.kill(pid!, "SIGKILL");
    await waitUntil(async () => ((await media.call("GET", "/healthz")).status === 503 ? true : undefined), "/healthz 503", healthzWaitMs);
    const slots = await media.call("POST", `/v1/sessions/${session_id}/slots`, { token: media.token("victim", "crash") });
    expect(slots.status).toBe(404);
    await waitUntil(async () => ((await media.call("GET", "/healthz")).status === 200 ? true : undefined), "/healthz ok", healthzWaitMs);
    expect(media.workerPids().length).toBe(2);
    // The replacement serves new sessions.
    const again = await media.call("POST", "/v1/sessions", { token: media.token("victim", "crash"), sdp_offer: await offer("victim") });
    expect(again.status).toBe(200);
  }, 30_000);
});

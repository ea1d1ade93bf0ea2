// Every rule and error row of spec part A over HTTP against a real `svc media`: 400 naming what is
// wrong in an offer, 401 for missing, expired and foreign tokens on every route, 404 for another
// user's or room's session, peers at 256 and 257, bodies at 256 KiB and one byte past, DELETE 204,
// stats naming only the token's room, CORS from any origin, and the flags and token tool.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { mediaRequestBodyBytesMax, sessionPeersMax } from "../../src/core/limits.ts";
import { mintToken } from "../../src/media/token.ts";
import { mediaAddress, spawnServer } from "../support/spawn.ts";
import { type MediaUnderTest, startMedia } from "./support/media.ts";
import { badOffers, baseOffer } from "./support/offers.ts";
import { Peer } from "./support/peer.ts";
import { tempDir } from "../support/temp-dir.ts";

const cliPath = join(import.meta.dir, "../../src/cli.ts");
let media: MediaUnderTest;

beforeAll(async () => {
  media = await startMedia();
});
afterAll(() => media.stop());

async function create(user: string, room: string, extra: Record<string, unknown> = {}): Promise<number> {
  const { peer, sdp } = await Peer.offer(user, { slots: 1 });
  await peer.close();
  const res = await media.call("POST", "/v1/sessions", { token: media.token(user, room), sdp_offer: sdp, ...extra });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { session_id: number; sdp_answer: string };
  expect(Number.isInteger(body.session_id)).toBe(true);
  expect(body.sdp_answer).toStartWith("v=0");
  return body.session_id;
}

async function errorOf(res: Response): Promise<string> {
  const body = (await res.json()) as { error: string };
  expect(typeof body.error).toBe("string");
  return body.error;
}

describe("POST /v1/sessions errors", () => {
  for (const bad of badOffers()) {
    test(`400 naming the problem when the offer has ${bad.name}, and no session is created`, async () => {
      const res = await media.call("POST", "/v1/sessions", { token: media.token("u", "bad-offers"), sdp_offer: bad.offer });
      expect(res.status).toBe(400);
      expect(await errorOf(res)).toMatch(bad.message);
      const stats = await media.call("GET", "/v1/stats", undefined, { authorization: `Bearer ${media.token("u", "bad-offers")}` });
      expect(((await stats.json()) as { rooms: Record<string, number> }).rooms).toEqual({ "bad-offers": 0 });
    });
  }

  test("a refused second offer for the same user and room (400) leaves the first session in place", async () => {
    const id = await create("keeper", "second-offer");
    const res = await media.call("POST", "/v1/sessions", {
      token: media.token("keeper", "second-offer"),
      sdp_offer: baseOffer(1).replaceAll("opus/48000/2", "PCMU/8000"),
    });
    expect(res.status).toBe(400);
    expect((await media.call("POST", `/v1/sessions/${id}/slots`, { token: media.token("keeper", "second-offer") })).status).toBe(200);
  });

  test("an offer whose send line has no a=ssrc is accepted when it carries the sdes:mid header extension", async () => {
    const sdp = baseOffer(1)
      .replace("a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level", "a=extmap:1 urn:ietf:params:rtp-hdrext:sdes:mid")
      .split("\r\n")
      .filter((l) => !l.startsWith("a=ssrc:1111"))
      .join("\r\n");
    const res = await media.call("POST", "/v1/sessions", { token: media.token("midonly", "r"), sdp_offer: sdp });
    expect(res.status).toBe(200);
  });

  test("400 when sdp_offer is missing, or the body is not a JSON object", async () => {
    const res = await media.call("POST", "/v1/sessions", { token: media.token("u", "r") });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatch(/sdp_offer is required/);
    expect((await media.call("POST", "/v1/sessions", "[1]")).status).toBe(400);
    expect((await media.call("POST", "/v1/sessions", "{nope")).status).toBe(400);
  });

  test(`peers with ${sessionPeersMax} entries is accepted; ${sessionPeersMax + 1} is a 400`, async () => {
    const names = Array.from({ length: sessionPeersMax + 1 }, (_, i) => `p${i}`);
    await create("many", "peers", { peers: names.slice(0, sessionPeersMax) });
    const { sdp } = await Peer.offer("many", { slots: 1 });
    const res = await media.call("POST", "/v1/sessions", { token: media.token("many", "peers"), sdp_offer: sdp, peers: names });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toMatch(/peers has 257 entries; at most 256/);
    const notStrings = await media.call("POST", "/v1/sessions", { token: media.token("many", "peers"), sdp_offer: sdp, peers: ["a", 7] });
    expect(notStrings.status).toBe(400);
    expect(await errorOf(notStrings)).toMatch(/peers\[1\]/);
  });

  test("a body of exactly 256 KiB is read (then judged on its content); one byte more is 413", async () => {
    const body = (n: number) => {
      const head = JSON.stringify({ token: media.token("big", "r"), sdp_offer: "" }).slice(0, -2);
      return `${head}${"x".repeat(n - head.length - 2)}"}`;
    };
    expect(body(mediaRequestBodyBytesMax).length).toBe(mediaRequestBodyBytesMax);
    const atLimit = await media.call("POST", "/v1/sessions", body(mediaRequestBodyBytesMax));
    expect(atLimit.status).toBe(400);
    expect(await errorOf(atLimit)).toMatch(/sdp_offer does not parse/);
    const past = await media.call("POST", "/v1/sessions", body(mediaRequestBodyBytesMax + 1));
    expect(past.status).toBe(413);
  });
});

describe("tokens and ownership", () => {
  test("401 on every route for a missing, expired or differently signed token", async () => {
    const id = await create("owner", "room-a");
    const { sdp } = await Peer.offer("owner", { slots: 1 });
    const bad = {
      missing: undefined,
      expired: media.token("owner", "room-a", Math.floor(Date.now() / 1000) - 1),
      foreign: mintToken("another-secret-that-is-long-enough-xx", { user: "owner", room: "room-a", exp: Math.floor(Date.now() / 1000) + 60 }),
    };
    for (const [why, token] of Object.entries(bad)) {
      const calls = [
        media.call("POST", "/v1/sessions", { token, sdp_offer: sdp }),
        media.call("PATCH", `/v1/sessions/${id}`, { token, peers: [] }),
        media.call("DELETE", `/v1/sessions/${id}`, { token }),
        media.call("POST", `/v1/sessions/${id}/slots`, { token }),
        media.call("GET", "/v1/stats", undefined, token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ];
      for (const res of await Promise.all(calls)) {
        expect(res.status, why).toBe(401);
        expect(await errorOf(res), why).toMatch(/^token /);
      }
    }
    // Nothing above touched the session.
    expect((await media.call("POST", `/v1/sessions/${id}/slots`, { token: media.token("owner", "room-a") })).status).toBe(200);
  });

  test("404 for another user's session, the same user's session from another room, and ids that name none", async () => {
    const id = await create("owner2", "room-a");
    for (const [user, room, path] of [
      ["intruder", "room-a", `/v1/sessions/${id}`],
      ["owner2", "room-b", `/v1/sessions/${id}`],
      ["owner2", "room-a", "/v1/sessions/999999"],
      ["owner2", "room-a", "/v1/sessions/abc"],
    ] as const) {
      const token = media.token(user, room);
      for (const res of [
        await media.call("PATCH", path, { token, peers: [] }),
        await media.call("POST", `${path}/slots`, { token }),
        await media.call("DELETE", path, { token }),
      ]) {
        expect(res.status, `${user}@${room} ${path}`).toBe(404);
      }
    }
    expect((await media.call("POST", `/v1/sessions/${id}/slots`, { token: media.token("owner2", "room-a") })).status).toBe(200);
  });

  test("PATCH with 256 peers is 204, with 257 is 400 and keeps the earlier set; DELETE is 204 and the session is gone", async () => {
    const id = await create("patcher", "room-p");
    const token = media.token("patcher", "room-p");
    const names = Array.from({ length: sessionPeersMax + 1 }, (_, i) => `p${i}`);
    expect((await media.call("PATCH", `/v1/sessions/${id}`, { token, peers: names.slice(0, sessionPeersMax) })).status).toBe(204);
    const over = await media.call("PATCH", `/v1/sessions/${id}`, { token, peers: names });
    expect(over.status).toBe(400);
    expect(await errorOf(over)).toMatch(/at most 256/);
    expect((await media.call("PATCH", `/v1/sessions/${id}`, { token })).status).toBe(204);
    const del = await media.call("DELETE", `/v1/sessions/${id}`, { token });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe("");
    expect((await media.call("DELETE", `/v1/sessions/${id}`, { token })).status).toBe(404);
  });
});

describe("stats, health and CORS", () => {
  test("stats counts sessions server-wide and names only the token's room", async () => {
    await create("s1", "stats-x");
    await create("s2", "stats-x");
    await create("s3", "stats-y");
    const res = await media.call("GET", "/v1/stats", undefined, { authorization: `Bearer ${media.token("anyone", "stats-x")}` });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { sessions: number; rooms: Record<string, number> };
    expect(Object.keys(body.rooms)).toEqual(["stats-x"]);
    expect(body.rooms["stats-x"]).toBe(2);
    expect(body.sessions).toBeGreaterThanOrEqual(3);
  });

  test("/healthz answers ok without a token", async () => {
    const res = await media.call("GET", "/healthz");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("ok");
  });

  test("any origin may call: preflight allows it, responses carry Access-Control-Allow-Origin: *", async () => {
    const pre = await fetch(`${media.url}/v1/sessions`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("*");
    expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
    expect(pre.headers.get("access-control-allow-headers")).toBe("content-type");
    const res = await media.call("GET", "/v1/stats", undefined, { origin: "https://other.example", authorization: `Bearer ${media.token("u", "r")}` });
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("svc media flags and token tool", () => {
  async function refused(flags: string[]): Promise<string> {
    const proc = Bun.spawn([process.execPath, cliPath, "media", ...flags], { stdout: "ignore", stderr: "pipe" });
    const stderr = await new Response(proc.stderr).text();
    expect(await proc.exited).toBe(2);
    return stderr;
  }

  test("bad flags are refused before anything starts", async () => {
    expect(await refused(["--rtc-min-port", "5000", "--rtc-max-port", "4000"])).toMatch(/--rtc-min-port 5000 is above --rtc-max-port 4000/);
    expect(await refused(["--bind", "0.0.0.0:0"])).toMatch(/--announced-ip/);
    expect(await refused(["--workers", "0"])).toMatch(/--workers: expected an integer/);
    expect(await refused(["--room-sessions-per-worker", "0"])).toMatch(/--room-sessions-per-worker: expected an integer/);
    expect(await refused(["--room-sessions-per-worker", "100001"])).toMatch(/--room-sessions-per-worker: expected an integer/);
    expect(await refused(["--token-secret", "short"])).toMatch(/at least 32 bytes/);
  });

  test("with no secret configured, the service generates one and `svc media token` signs with it", async () => {
    const dataDir = tempDir("svc-media-secret-");
    const env = { ...process.env, SVC_MEDIA_TOKEN_SECRET: undefined };
    const server = await spawnServer(
      "svc media",
      [process.execPath, cliPath, "media", "--bind", "127.0.0.1:0", "--workers", "1", "--data-dir", dataDir],
      mediaAddress,
      { env },
    );
    try {
      expect(server.output()).toContain(join(dataDir, "token-secret"));
      const tool = Bun.spawn([process.execPath, cliPath, "media", "token", "--user", "cli", "--room", "cli-room", "--ttl", "60", "--data-dir", dataDir], {
        stdout: "pipe",
        env,
      });
      const token = (await new Response(tool.stdout).text()).trim();
      expect(await tool.exited).toBe(0);
      const res = await fetch(`http://${server.where}/v1/stats`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ sessions: 0, rooms: { "cli-room": 0 } });
    } finally {
      await server.stop();
    }
  });

  test("svc media token refuses a missing --user and a --ttl past 30 days", async () => {
    for (const args of [
      ["--room", "r"],
      ["--user", "u", "--room", "r", "--ttl", String(30 * 24 * 3600 + 1)],
    ]) {
      const proc = Bun.spawn([process.execPath, cliPath, "media", "token", "--token-secret", "x".repeat(32), ...args], { stdout: "ignore", stderr: "pipe" });
      expect(await proc.exited).toBe(2);
    }
  });
});

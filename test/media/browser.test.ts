// Headless Chromium with a fake microphone joins a room with a werift peer through a page on
// another origin (real CORS preflights): Chromium's own offer (its extmaps, rtcp-fb, a=msid, Opus
// on payload type 111, several codecs) is accepted, ICE and DTLS connect, each side's audio arrives
// on the other's slot under the SSRC its answer announced, and PATCH and DELETE from the page work.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import type { Page } from "playwright-core";
import { parse } from "sdp-transform";
import { sharedBrowser } from "../support/browser.ts";
import { waitUntil } from "../support/wait.ts";
import { announcedSsrc } from "./support/answers.ts";
import { type MediaUnderTest, startMedia } from "./support/media.ts";
import { Peer } from "./support/peer.ts";
import { type ApiResult, callVoice, type Inbound, type JoinResult, serveVoicePage } from "./support/voice-page.ts";

/** Launching Chromium and connecting on a loaded 2-core machine: far more than bun's default 5 s. */
const browserTestMs = 60_000;
const room = "browser-room";
const browserSlots = 2;

const browser = sharedBrowser(["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]);
let media: MediaUnderTest;
let pageServer: Server<undefined>;
let page: Page;
let second: Page;
let werift: Peer;
let joined: JoinResult;
let sending = true;
let sender: Promise<void>;
/** Paths of the CORS preflights (OPTIONS) the first page's browser sent, seen through CDP. */
const preflights: string[] = [];

beforeAll(async () => {
  media = await startMedia();
  pageServer = serveVoicePage();
});
afterAll(async () => {
  sending = false;
  await sender;
  await page?.close();
  await second?.close();
  await werift?.close();
  pageServer?.stop(true);
  await media?.stop();
});

/** Bound of each wait below (for a loaded machine, not a timing claim), and its poll: every 50 ms, not to flood the page with calls. */
const waitMs = 20_000;
const pollMs = 50;

async function openPage(): Promise<Page> {
  const opened = await (await browser()).newPage();
  opened.on("console", (msg) => console.log(`[page] ${msg.text()}`));
  await opened.goto(`http://${pageServer.hostname}:${pageServer.port}/`);
  // The page's origin differs from the API's (another port): every call to the API is cross-origin.
  expect(new URL(opened.url()).origin).not.toBe(new URL(media.url).origin);
  return opened;
}

function join(on: Page, user: string, slots: number, mic: "sendonly" | "sendrecv"): Promise<JoinResult> {
  return callVoice(on, "join", media.url, media.token(user, room), slots, mic);
}

const inbound = (on: Page = page): Promise<Inbound> => callVoice(on, "inbound");
const fromPage = (method: "slots" | "patch" | "remove", ...args: unknown[]): Promise<ApiResult> => callVoice(page, method, ...args);

describe("Chromium and werift in one room", () => {
  test(
    "Chromium's offer from another origin is answered, and ICE and DTLS connect in the browser",
    async () => {
      werift = await Peer.join(media, "werift", room, { slots: 1 });
      // The werift peer talks for the whole file (20 ms packets), as a participant would.
      sender = (async () => {
        while (sending) await werift.send(10, { tag: 7, levelDbov: 20 });
      })();

      page = await openPage();
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Network.enable");
      cdp.on("Network.requestWillBeSent", (e) => {
        if (e.request.method === "OPTIONS") preflights.push(new URL(e.request.url).pathname);
      });
      joined = await join(page, "chromium", browserSlots, "sendonly");
      expect(joined).toMatchObject({ status: 200 });
      // A real browser offer: Opus among other codecs, one send line with its msid, BUNDLEd.
      const offer = parse(joined.offer!);
      expect(offer.media.map((m) => m.direction)).toEqual(["sendonly", "recvonly", "recvonly"]);
      expect(offer.media[0]!.rtp.length).toBeGreaterThan(1);
      const answer = parse(joined.answer!);
      // Chromium offers header extensions we do not use (abs-send-time, transport-cc): the answer
      // keeps only the audio level and mid ones, under Chromium's ids.
      expect(offer.media[0]!.ext!.length).toBeGreaterThan(2);
      expect(answer.media[0]!.ext!.map((e) => e.uri).sort()).toEqual(["urn:ietf:params:rtp-hdrext:sdes:mid", "urn:ietf:params:rtp-hdrext:ssrc-audio-level"]);
      expect(answer.media.map((m) => [String(m.mid), m.direction])).toEqual([
        ["0", "recvonly"],
        ["1", "sendonly"],
        ["2", "sendonly"],
      ]);
      // The answer keeps Chromium's Opus payload type, whatever number it chose.
      const chromeOpus = offer.media[0]!.rtp.find((r) => r.codec.toLowerCase() === "opus")!.payload;
      expect(answer.media.map((m) => String(m.payloads))).toEqual([String(chromeOpus), String(chromeOpus), String(chromeOpus)]);

      await waitUntil(
        async () => {
          const state = await callVoice<{ connection: string }>(page, "state");
          if (state.connection === "failed") throw new Error("the browser's connection failed");
          return state.connection === "connected" ? true : undefined;
        },
        "the browser's connectionState to be connected",
        waitMs,
        pollMs,
      );
      // The JSON POST was not a "simple" request: the browser asked first, and was allowed.
      expect(preflights).toContain("/v1/sessions");
    },
    browserTestMs,
  );

  test(
    "the werift peer's audio arrives on a browser slot under the SSRC the answer announced, and /slots names the werift user there",
    async () => {
      const slots = await fromPage("slots");
      expect(slots.status).toBe(200);
      expect(Object.values(slots.body as Record<string, string>)).toEqual(["werift"]);
      const mid = Object.keys(slots.body as Record<string, string>)[0]!;
      expect(["1", "2"]).toContain(mid);

      let first = 0;
      await waitUntil(
        async () => {
          first = (await inbound())[mid]?.packetsReceived ?? 0;
          return first > 0 ? true : undefined;
        },
        "packets on the browser's slot",
        waitMs,
        pollMs,
      );
      await waitUntil(
        async () => (((await inbound())[mid]?.packetsReceived ?? 0) >= first + 20 ? true : undefined),
        "packetsReceived to keep growing",
        waitMs,
        pollMs,
      );
      const stats = (await inbound())[mid]!;
      expect(stats.ssrc).toBe(announcedSsrc(joined.answer!, mid));
    },
    browserTestMs,
  );

  test(
    "the browser's microphone reaches the werift peer's slot under the SSRC werift's answer announced",
    async () => {
      await waitUntil(() => (werift.packets("1").length >= 50 ? true : undefined), "browser audio on werift's slot", waitMs, pollMs);
      expect(new Set(werift.packets("1").map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(werift.answer, "1")]));
      const slotsOfWerift = await media.call("POST", `/v1/sessions/${werift.sessionId}/slots`, { token: media.token("werift", room) });
      expect(await slotsOfWerift.json()).toEqual({ "1": "chromium" });
      // The browser really sent them: its sender counts packets too.
      const out = await callVoice<{ packetsSent: number }>(page, "outbound");
      expect(out.packetsSent).toBeGreaterThanOrEqual(50);
    },
    browserTestMs,
  );

  test(
    "PATCH peers: [] from the page stops forwarding to the browser, null starts it again, and DELETE answers 204",
    async () => {
      const total = (s: Inbound) => Object.values(s).reduce((n, x) => n + x.packetsReceived, 0);
      expect(await fromPage("patch", [])).toEqual({ status: 204, body: null });
      expect(await fromPage("slots")).toEqual({ status: 200, body: {} });
      // Packets already on the wire when the 204 was sent may still land: wait until the count holds
      // still across half a second (it never would if forwarding went on at 50 packets/s).
      let stopped = total(await inbound());
      await waitUntil(
        async () => {
          await Bun.sleep(500);
          const now = total(await inbound());
          const still = now === stopped;
          stopped = now;
          return still ? true : undefined;
        },
        "forwarding to the browser to stop",
        waitMs,
        pollMs,
      );
      const weriftSentBefore = werift.packets("1").length;
      // Meanwhile werift keeps talking (its sender loop) and still hears the browser: the room lives on.
      await waitUntil(() => (werift.packets("1").length >= weriftSentBefore + 50 ? true : undefined), "more browser audio on werift's slot", waitMs, pollMs);
      expect(total(await inbound())).toBe(stopped);

      expect(await fromPage("patch", null)).toEqual({ status: 204, body: null });
      await waitUntil(async () => (total(await inbound()) >= stopped + 20 ? true : undefined), "forwarding to the browser again", waitMs, pollMs);

      expect(await fromPage("remove")).toEqual({ status: 204, body: null });
      const gone = await media.call("POST", `/v1/sessions/${joined.sessionId}/slots`, { token: media.token("chromium", room) });
      expect(gone.status).toBe(404);
      const slotsOfWerift = await media.call("POST", `/v1/sessions/${werift.sessionId}/slots`, { token: media.token("werift", room) });
      expect(await slotsOfWerift.json()).toEqual({});
      // PATCH and DELETE are not simple methods either: preflighted on the session's path.
      expect(preflights).toContain(`/v1/sessions/${joined.sessionId}`);
    },
    browserTestMs,
  );

  test(
    "a page that adds its microphone with addTrack (a sendrecv line, as most apps do) is answered recvonly there, and both directions flow",
    async () => {
      second = await openPage();
      const result = await join(second, "chromium-addtrack", 1, "sendrecv");
      expect(result).toMatchObject({ status: 200 });
      expect(parse(result.offer!).media.map((m) => m.direction)).toEqual(["sendrecv", "recvonly"]);
      expect(parse(result.answer!).media.map((m) => m.direction)).toEqual(["recvonly", "sendonly"]);
      await waitUntil(
        async () => {
          const state = await callVoice<{ connection: string }>(second, "state");
          if (state.connection === "failed") throw new Error("the second page's connection failed");
          return state.connection === "connected" ? true : undefined;
        },
        "the second page's connectionState to be connected",
        waitMs,
        pollMs,
      );
      // werift's only slot was freed by the DELETE above; the new participant takes it.
      const slotsOfWerift = await media.call("POST", `/v1/sessions/${werift.sessionId}/slots`, { token: media.token("werift", room) });
      expect(await slotsOfWerift.json()).toEqual({ "1": "chromium-addtrack" });
      const before = werift.packets("1").length;
      await waitUntil(() => (werift.packets("1").length >= before + 50 ? true : undefined), "the addTrack page's audio on werift's slot", waitMs, pollMs);
      expect(new Set(werift.packets("1").map((r) => r.ssrc))).toEqual(new Set([announcedSsrc(werift.answer, "1")]));
      await waitUntil(
        async () => (((await inbound(second))["1"]?.packetsReceived ?? 0) >= 20 ? true : undefined),
        "werift's audio on the addTrack page's slot",
        waitMs,
        pollMs,
      );
      expect((await inbound(second))["1"]!.ssrc).toBe(announcedSsrc(result.answer!, "1"));
    },
    browserTestMs,
  );
});

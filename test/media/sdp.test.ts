// Offer reading and answer writing without a media engine: each rule that makes an offer a 400
// names its problem, a good offer becomes one send line and its slots, and the answer mirrors the
// offer's m-lines with the roles, payload types and SSRCs a client needs.
import { describe, expect, test } from "bun:test";
import { parse } from "sdp-transform";
import { mediaSlotsPerSessionMax } from "../../src/core/limits.ts";
import { writeAnswer } from "../../src/media/sdp/answer.ts";
import { parseOffer } from "../../src/media/sdp/offer.ts";
import { badOffers, baseOffer } from "./support/offers.ts";

describe("parseOffer", () => {
  test("a send line and two recvonly lines become a producer line and two slots", () => {
    const offer = parseOffer(baseOffer(2));
    expect(offer.send).toMatchObject({ mid: "0", ssrc: 1111, opus: { payloadType: 96, parameters: { minptime: 10, useinbandfec: 1 } } });
    expect(offer.send!.extensions).toEqual([{ uri: "urn:ietf:params:rtp-hdrext:ssrc-audio-level", id: 1 }]);
    expect(offer.slots.map((s) => s.mid)).toEqual(["1", "2"]);
    expect(offer.clientDtlsRole).toBe("client");
    expect(offer.ice).toEqual({ usernameFragment: "137c", password: "9dc839bbad311bdaf0befd" });
  });

  for (const bad of badOffers()) {
    test(`400 when the offer has ${bad.name}`, () => {
      expect(() => parseOffer(bad.offer)).toThrow(bad.message);
      try {
        parseOffer(bad.offer);
      } catch (error) {
        expect((error as { status: number }).status).toBe(400);
      }
    });
  }

  test(`${mediaSlotsPerSessionMax} recvonly lines are accepted; ${mediaSlotsPerSessionMax + 1} are a 400`, () => {
    expect(parseOffer(baseOffer(mediaSlotsPerSessionMax)).slots.length).toBe(mediaSlotsPerSessionMax);
    expect(() => parseOffer(baseOffer(mediaSlotsPerSessionMax + 1))).toThrow(/at most 16 slots/);
  });

  test('numeric-looking values (a one-line BUNDLE group "0", a digits-only ufrag) are read as text', () => {
    const offer = parseOffer(baseOffer(0).replace("a=ice-ufrag:137c", "a=ice-ufrag:1234"));
    expect(offer.send!.mid).toBe("0");
    expect(offer.ice.usernameFragment).toBe("1234");
  });

  test("a video line is rejected (port 0) but does not make the offer a 400", () => {
    const withVideo = `${baseOffer(1)}m=video 9 UDP/TLS/RTP/SAVPF 97\r\nc=IN IP4 0.0.0.0\r\na=mid:v\r\na=sendrecv\r\na=rtcp-mux\r\na=rtpmap:97 VP8/90000\r\n`;
    expect(parseOffer(withVideo).rejected).toEqual([2]);
  });
});

describe("DTLS roles", () => {
  const answerSetup = (offerText: string) =>
    parse(
      writeAnswer({
        offer: parseOffer(offerText),
        sessionId: 1,
        transport: { ice: { usernameFragment: "uf", password: "pw" }, candidates: [], fingerprints: [{ algorithm: "sha-256", value: "AA:BB" }] },
        slotStreams: new Map(),
      }),
    ).media.map((m) => m.setup);

  test("an actpass or active client is the DTLS client and the answer is passive", () => {
    for (const setup of ["actpass", "active"]) {
      const offer = baseOffer(0).replaceAll("a=setup:actpass", `a=setup:${setup}`);
      expect(parseOffer(offer).clientDtlsRole).toBe("client");
      expect(answerSetup(offer)).toEqual(["passive"]);
    }
  });

  test("a passive client is the DTLS server and the answer is active", () => {
    const offer = baseOffer(0).replaceAll("a=setup:actpass", "a=setup:passive");
    expect(parseOffer(offer).clientDtlsRole).toBe("server");
    expect(answerSetup(offer)).toEqual(["active"]);
  });
});

describe("writeAnswer", () => {
  test("mirrors the offer: send line recvonly, slot lines sendonly with their SSRC, ice-lite, passive DTLS, one BUNDLE", () => {
    const offer = parseOffer(baseOffer(2));
    const sdp = parse(
      writeAnswer({
        offer,
        sessionId: 7,
        transport: {
          ice: { usernameFragment: "uf", password: "pw" },
          candidates: [{ foundation: "f", priority: 1, address: "127.0.0.1", protocol: "udp", port: 40000 }],
          fingerprints: [{ algorithm: "sha-256", value: "AA:BB" }],
        },
        slotStreams: new Map([
          ["1", { ssrc: 11, cname: "c1" }],
          ["2", { ssrc: 22, cname: "c2" }],
        ]),
      }),
    );
    expect(sdp.icelite).toBe("ice-lite");
    expect(sdp.groups).toEqual([{ type: "BUNDLE", mids: "0 1 2" }]);
    expect(sdp.media.map((m) => [String(m.mid), m.direction, m.port, String(m.payloads)])).toEqual([
      ["0", "recvonly", 40000, "96"],
      ["1", "sendonly", 40000, "96"],
      ["2", "sendonly", 40000, "96"],
    ]);
    expect(sdp.media.map((m) => m.setup)).toEqual(["passive", "passive", "passive"]);
    expect(sdp.media[1]!.ssrcs).toEqual([{ id: 11, attribute: "cname", value: "c1" }]);
    expect(sdp.media[0]!.ext).toEqual([{ value: 1, uri: "urn:ietf:params:rtp-hdrext:ssrc-audio-level" }]);
    expect(sdp.media[0]!.candidates![0]).toMatchObject({ ip: "127.0.0.1", port: 40000, type: "host", transport: "udp" });
  });
});

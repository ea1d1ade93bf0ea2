/**
 * SDP offers for tests: a werift-shaped base offer (one sendonly Opus line, `slots` recvonly ones,
 * BUNDLEd) and the single-line mutations that make each of spec part A's 400 rows.
 */

export function baseOffer(slots = 2, options: { send?: boolean } = {}): string {
  const send = options.send ?? true;
  const lines = [
    "v=0",
    "o=- 48463186 0 IN IP4 0.0.0.0",
    "s=-",
    "t=0 0",
    `a=group:BUNDLE ${[...(send ? ["0"] : []), ...Array.from({ length: slots }, (_, i) => String(i + 1))].join(" ")}`,
    "a=msid-semantic:WMS *",
  ];
  const media = (mid: string, direction: string, ssrc: number) => [
    "m=audio 9 UDP/TLS/RTP/SAVPF 96",
    "c=IN IP4 0.0.0.0",
    "a=ice-ufrag:137c",
    "a=ice-pwd:9dc839bbad311bdaf0befd",
    "a=fingerprint:sha-256 4F:02:34:90:D6:C9:D5:E0:0B:36:84:41:40:DB:68:CC:19:70:B8:7D:A7:D7:ED:5E:F8:CE:67:5A:1A:DF:81:B3",
    "a=setup:actpass",
    `a=${direction}`,
    `a=mid:${mid}`,
    "a=rtcp-mux",
    "a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level",
    `a=ssrc:${ssrc} cname:test`,
    "a=rtpmap:96 opus/48000/2",
    "a=fmtp:96 minptime=10;useinbandfec=1",
  ];
  if (send) lines.push(...media("0", "sendonly", 1111));
  for (let i = 1; i <= slots; i++) lines.push(...media(String(i), "recvonly", 2000 + i));
  return `${lines.join("\r\n")}\r\n`;
}

/** Each 400 row of the spec's offer rules: the offer, and what the error must name. */
export function badOffers(): { name: string; offer: string; message: RegExp }[] {
  const ok = baseOffer(2);
  const without = (pattern: RegExp) =>
    ok
      .split("\r\n")
      .filter((l) => !pattern.test(l))
      .join("\r\n");
  return [
    { name: "not SDP at all", offer: "hello", message: /sdp_offer does not parse/ },
    { name: "no m-lines", offer: "v=0\r\no=- 1 0 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n", message: /does not parse: it has no m= lines/ },
    { name: "no audio", offer: ok.replaceAll("m=audio", "m=video"), message: /has no audio/ },
    { name: "no ICE credentials", offer: without(/^a=ice-(ufrag|pwd)/), message: /no ICE credentials/ },
    { name: "no fingerprint", offer: without(/^a=fingerprint/), message: /no DTLS fingerprint/ },
    { name: "unsupported codec", offer: ok.replaceAll("opus/48000/2", "PCMU/8000"), message: /unsupported codec.*PCMU\/8000.*opus/ },
    { name: "no rtcp-mux", offer: without(/^a=rtcp-mux/), message: /lacks a=rtcp-mux/ },
    { name: "no mid", offer: without(/^a=mid/), message: /has no a=mid/ },
    { name: "not bundled", offer: without(/^a=group:BUNDLE/), message: /does not BUNDLE/ },
    { name: "two sending lines", offer: ok.replace("a=recvonly", "a=sendonly"), message: /more than one audio m-line that sends/ },
    { name: "a send line with neither a=ssrc nor the sdes:mid extension", offer: without(/^a=ssrc:1111/), message: /neither a=ssrc nor the sdes:mid/ },
    {
      name: "two SSRCs on the send line",
      offer: ok.replace("a=ssrc:1111 cname:test", "a=ssrc:1111 cname:test\r\na=ssrc:1112 cname:test"),
      message: /more than one SSRC/,
    },
    { name: "bad fingerprint hash", offer: ok.replaceAll("a=fingerprint:sha-256", "a=fingerprint:md5"), message: /unsupported hash md5/ },
  ];
}

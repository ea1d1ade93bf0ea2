/** Reading what the media server's SDP answers announced. */
import { parse } from "sdp-transform";

/** The SSRC an answer announced for `mid`. */
export function announcedSsrc(answer: string, mid: string): number {
  const m = parse(answer).media.find((x) => String(x.mid) === mid)!;
  return Number(m.ssrcs![0]!.id);
}

/**
 * Binary-safe strings in JSON. The engine's strings are latin1 "byte strings" (one char per byte);
 * JSON strings are Unicode. The REST API maps between them this way, in both directions:
 *
 * - bytes that are valid UTF-8 travel as a JSON string (the common case: text);
 * - any other bytes travel as `{"base64": "<standard base64>"}`, so nothing is lost or guessed.
 *
 * Reading each byte as a code point (latin1 → UTF-8 of each byte) would turn "é" stored by a
 * RESP client as UTF-8 into "Ã©"; replacing bad sequences with U+FFFD would lose data. A client
 * may send the base64 form wherever the API takes a string value, key or argument.
 */
import { SvcError } from "../../core/errors.ts";

export type JsonBytes = string | { base64: string };

/** Fatal: invalid UTF-8 is an error, not U+FFFD. ignoreBOM: a leading EF BB BF is data, kept. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
// biome-ignore lint/suspicious/noControlCharactersInRegex: the class is every ASCII byte, control characters included, on purpose
const ascii = /^[\x00-\x7f]*$/;
const base64Text = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A byte string as JSON: its UTF-8 text when valid, otherwise base64-tagged. */
export function bytesToJson(bytes: string): JsonBytes {
  if (ascii.test(bytes)) return bytes;
  const buffer = Buffer.from(bytes, "latin1");
  try {
    return strictUtf8.decode(buffer);
  } catch {
    return { base64: buffer.toString("base64") };
  }
}

/** Text for a human (error messages): UTF-8 where valid, U+FFFD where not. */
export function bytesToText(bytes: string): string {
  return ascii.test(bytes) ? bytes : Buffer.from(bytes, "latin1").toString("utf8");
}

/** A JSON string as the byte string of its UTF-8 encoding. */
export function textToBytes(text: string): string {
  return ascii.test(text) ? text : Buffer.from(text, "utf8").toString("latin1");
}

const badRequest = (message: string) => new SvcError("bad_request", message);

/**
 * A request value that stands for bytes — a JSON string or `{"base64": ...}` — as a byte string;
 * undefined when `value` has neither shape. `where` names the value in error messages.
 */
export function jsonToBytes(value: unknown, where: string): string | undefined {
  if (typeof value === "string") {
    // A lone surrogate ("\ud800" in the JSON) has no UTF-8 form; encoding would invent U+FFFD.
    if (!value.isWellFormed()) throw badRequest(`${where} is not valid Unicode (it holds a lone surrogate)`);
    return textToBytes(value);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  const encoded = (value as Record<string, unknown>).base64;
  if (keys.length !== 1 || typeof encoded !== "string") return undefined;
  if (encoded.length % 4 !== 0 || !base64Text.test(encoded)) throw badRequest(`${where}.base64 is not standard padded base64`);
  return Buffer.from(encoded, "base64").toString("latin1");
}

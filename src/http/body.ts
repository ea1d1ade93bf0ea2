/**
 * Reading a JSON request body within a byte limit. A declared Content-Length over the limit is
 * refused before a byte is read; a chunked body is counted as it streams in and refused the moment
 * it passes the limit, so an oversized upload never sits in our memory.
 */
import { SvcError } from "../core/errors.ts";

function isJsonMediaType(contentType: string | null): boolean {
  if (contentType === null) return false;
  const mediaType = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function tooLarge(limitBytes: number): SvcError {
  return new SvcError("body_too_large", `request body exceeds the limit of ${limitBytes} bytes`);
}

/** The raw body bytes, or a body_too_large error once more than `limitBytes` arrive. */
export async function readBodyBytes(req: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null && Number(declared) > limitBytes) throw tooLarge(limitBytes);
  // A declared length within the limit bounds what can arrive: Bun's one-call read is several
  // times cheaper than pulling the stream chunk by chunk, and than building `req.body` at all.
  if (declared !== null) return await req.bytes();
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.length;
    if (received > limitBytes) {
      await reader.cancel();
      throw tooLarge(limitBytes);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The body parsed as JSON; 415 for another media type, 400 for bytes that are not JSON. */
export async function readJsonBody<T>(req: Request, limitBytes: number): Promise<T> {
  if (!isJsonMediaType(req.headers.get("content-type"))) {
    throw new SvcError("unsupported_media_type", "expected a JSON body with Content-Type: application/json");
  }
  const bytes = await readBodyBytes(req, limitBytes);
  if (bytes.length === 0) throw new SvcError("malformed_json", "request body is empty; expected JSON");
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new SvcError("malformed_json", "request body is not valid UTF-8");
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new SvcError("malformed_json", `malformed JSON body: ${(error as Error).message}`);
  }
}

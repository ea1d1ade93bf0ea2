/**
 * Loads svc_native.node, the napi-rs addon built from native/ by the ./svc bootstrap into
 * native/dist/. Bun cannot `import` a .node file, so it is loaded with require().
 *
 * There is no silent fallback: code that wants the TypeScript path asks for it by name (see each
 * function's module), and a missing addon is a setup error with the fix in its message.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

export interface NativeAddon {
  crc32c(data: Uint8Array, start: number, end: number, seed: number): number;
  sealFrames(frames: Uint8Array, bodyBytesMax: number): number;
  checkedFramesPrefix(data: Uint8Array, start: number, end: number, bodyBytesMax: number): number;
  appendChunks(fd: number, chunks: Uint8Array[], sync: boolean): Promise<number>;
  writeChunksAt(fd: number, chunks: Uint8Array[], position: number, sync: boolean): Promise<void>;
  respScanBind(state: Float64Array, out: Uint32Array): number;
  respScan(buf: Uint8Array, binding: number): number;
  LuaScripts: new (memoryBytesMax: number) => NativeLuaScripts;
}

/** Lua scripts for EVAL (native/script): compiled once each, run with the server as their host. */
export interface NativeLuaScripts {
  /** Compiles `body` and keeps it under `sha`; Lua's compile error, or null. */
  load(sha: string, body: Uint8Array): string | null;
  has(sha: string): boolean;
  /** Bytes the Lua state holds. */
  usedMemory(): number;
  /** Forgets every script. */
  flush(): void;
  /**
   * Runs the script kept under `sha`, its keys then its arguments packed in `words`
   * (kv/scripting/words.ts), the first `keyCount` of them keys. `call` runs one command for it:
   * given the command's words packed, it returns a byte saying whether data changed, then the
   * RESP2 reply. `log` gets a level byte (0-3) and then redis.log's text. Returns the RESP2 reply.
   */
  run(
    sha: string, words: Uint8Array, keyCount: number, limitMs: number,
    call: (words: Buffer) => Uint8Array, log: (line: Buffer) => void,
  ): Buffer;
}

export const nativeAddonPath = join(import.meta.dir, "../../native/dist/svc_native.node");

function loadAddon(): NativeAddon {
  if (!existsSync(nativeAddonPath)) {
    throw new Error(`native addon missing at ${nativeAddonPath}: run ./svc once, it builds native/`);
  }
  return createRequire(import.meta.url)(nativeAddonPath) as NativeAddon;
}

export const nativeAddon: NativeAddon = loadAddon();

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
  frameProduceRecords(payload: Uint8Array, at: number, count: number, out: Uint8Array, partitions: Float64Array, sequences: Float64Array): boolean;
  appendChunks(fd: number, chunks: Uint8Array[], sync: boolean): Promise<number>;
  appendStampedChunks(fd: number, chunks: Uint8Array[], baseOffsets: number[], timestampMs: number, bodyBytesMax: number, sync: boolean): Promise<number>;
  writeChunksAt(fd: number, chunks: Uint8Array[], position: number, sync: boolean): Promise<void>;
  respScanBind(state: Float64Array, out: Uint32Array): number;
  respScan(buf: Uint8Array, binding: number): number;
  /**
   * Opens a Lua state (native/node/src/script.rs) whose scripts may hold `memoryBytesMax` bytes
   * between them; returns its number. The mailbox and the server's functions are kept for every
   * run. `call` runs one command for a script: its words are packed (kv/scripting/words.ts) in
   * the mailbox, or in `words` when they do not fit; it writes the RESP2 reply at the mailbox's
   * start and returns its length — or, for a reply too long for the mailbox, returns the reply in
   * a buffer of its own; or returns undefined when it failed, and the run fails. `log` gets a
   * level byte (0-3), then redis.log's text.
   */
  luaOpen(memoryBytesMax: number, mailbox: Buffer, call: (words?: Buffer) => number | Uint8Array | undefined, log: (line: Buffer) => void): number;
  /** Closes state `lua`: its scripts and functions are gone. */
  luaClose(lua: number): void;
  /** Compiles `body`, whose SHA-1 is `sha`, and keeps it; returns its number, or throws Lua's compile error. */
  luaLoad(lua: number, sha: string, body: Uint8Array): number;
  /** Runs a library's code (FUNCTION LOAD) and keeps the functions it registers; throws Redis's error less "ERR ". */
  luaLoadLibrary(lua: number, code: Uint8Array): RegisteredFunction[];
  /** Forgets the scripts or functions numbered `ids`. */
  luaUnload(lua: number, ids: number[]): void;
  /** Bytes the Lua state holds. */
  luaUsedMemory(lua: number): number;
  /** Keeps `words` (packed) as the next run's keys and arguments, when they do not fit the mailbox. */
  luaStageWords(lua: number, words: Uint8Array): void;
  /** Throws why the last luaRun (lua-run.ts, through Bun's FFI) answered luaFailed. */
  luaTakeFailure(): void;
  /** Goes on with the busy script for one more slice, killed first if `kill`; answers as luaRun. */
  luaResume(lua: number, kill: boolean): number;
  /** The last run's reply when luaRun or luaResume answered luaReplyTooLong: the flags byte (counted, plain), then the reply. */
  luaTakeReply(lua: number): Buffer;
  /**
   * Keeps `ask`, which answers what a running script asks besides its commands and log lines,
   * for every state: `ask(luaAskSetProtocol, protocol)` (redis.setresp) sets the protocol its
   * commands reply in; `ask(luaAskMayRun, words)` (redis.acl_check_cmd) answers whether its user
   * may run the command packed in `words` (luaAnswer*); `ask(luaAskElapsed, 0)`, how many µs
   * the running script has run, from its command's start. Undefined: it failed, and the run fails.
   */
  luaSetAsk(ask: (question: number, argument: number | Buffer) => number | undefined): void;
}

/** `ask`'s questions and answers (native/node/src/script.rs's ASK_*). */
export const luaAskSetProtocol = 1;
export const luaAskMayRun = 2;
export const luaAskElapsed = 3;
export const luaAnswerDenied = 0;
export const luaAnswerAllowed = 1;
export const luaAnswerUnknownCommand = 2;

/** A function a library registered. */
export interface RegisteredFunction {
  name: string;
  /** The number `luaRun` knows it by. */
  id: number;
  flags: string[];
  description?: string | null;
}

/** What luaRun answers for a reply too long for the mailbox (native/node/src/script.rs's REPLY_TOO_LONG). */
export const luaReplyTooLong = 0xffffffff;
/** What luaRun and luaResume answer for a script that stopped busy (native/node/src/script.rs's BUSY). */
export const luaBusy = 0xfffffffe;

export const nativeAddonPath = join(import.meta.dir, "../../native/dist/svc_native.node");

function loadAddon(): NativeAddon {
  if (!existsSync(nativeAddonPath)) {
    throw new Error(`native addon missing at ${nativeAddonPath}: run ./svc once, it builds native/`);
  }
  return createRequire(import.meta.url)(nativeAddonPath) as NativeAddon;
}

export const nativeAddon: NativeAddon = loadAddon();

/**
 * luaRun: starts a script in a native Lua state (native/node/src/script.rs's svc_lua_run). It is
 * a C function called through Bun's FFI, not an N-API one: every EVAL, EVALSHA and FCALL makes
 * this call, and an FFI call of four numbers costs ~8 ns where the N-API call cost ~90 (~100 ns
 * of a ~1 µs EVALSHA, 2026-11-30). The state's other functions stay in the addon.
 *
 * The addon is loaded (addon.ts, by require) before it is opened here: the dynamic linker hands
 * this dlopen the library already loaded, so both reach the same states.
 */
import { dlopen, FFIType } from "bun:ffi";
import { nativeAddonPath } from "./addon.ts";

const { symbols } = dlopen(nativeAddonPath, {
  svc_lua_run: { args: [FFIType.u32, FFIType.u32, FFIType.u32, FFIType.u32], returns: FFIType.u32 },
});

/**
 * Starts script `id` of state `lua`. Its keys, then its arguments (the first `keyCount` keys),
 * are packed in the mailbox, or were staged. Returns the reply's length × 2, + 1 if it is an
 * error already counted (its command's), the RESP2 reply being at the mailbox's start; or, for a
 * reply too long for the mailbox, luaReplyTooLong, and luaTakeReply has it; or, for a script
 * that ran past `busyAfterMs` and stopped, luaBusy: luaResume goes on with it. A run that failed
 * (the server's side threw, or the state is gone) answers luaFailed, and the addon's luaTakeFailure throws why.
 *
 * The server's functions the run calls back (its commands, its log lines) must not throw: an
 * exception left pending across an FFI call is not thrown where the call returns.
 */
export const luaRun = symbols.svc_lua_run as (lua: number, id: number, keyCount: number, busyAfterMs: number) => number;

/** What luaRun answers for a run that failed (native/node/src/script.rs's FAILED). */
export const luaFailed = 0xfffffffd;

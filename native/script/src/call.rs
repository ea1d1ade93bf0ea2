//! redis.call and redis.pcall, as raw Lua C functions: they read the command's words off the
//! stack, hand them to the running script's host (the server), and push its reply back as Lua
//! values (resp_to_lua.rs), raising it when the command failed and the script used redis.call.
//!
//! Raw, not mlua callbacks, for two reasons: a Rust callback cannot raise a Lua value (mlua turns
//! its errors into userdata, and a script's pcall must get Redis's error table), and this is the
//! path every command of every script takes — mlua's argument and value handling was a tenth of
//! a script's time. lua_error leaves by longjmp, so nothing Rust owns may be alive when it or any
//! Lua call that can raise runs: the words and the reply live in their own blocks below.

use std::cell::Cell;
use std::ffi::{c_int, CStr};

use mlua::ffi;

use crate::number::format_g17;
use crate::resp_to_lua;
use crate::run::CURRENT_RUN;

pub unsafe extern "C-unwind" fn redis_call(state: *mut ffi::lua_State) -> c_int {
    command(state, true)
}

pub unsafe extern "C-unwind" fn redis_pcall(state: *mut ffi::lua_State) -> c_int {
    command(state, false)
}

/// { err = message }, a misuse of the call itself: raised by redis.call, returned by
/// redis.pcall, as Redis 7.0's luaRedisGenericCommand does.
unsafe fn fail(state: *mut ffi::lua_State, message: &CStr, raises: bool) -> c_int {
    ffi::lua_createtable(state, 0, 1);
    ffi::lua_pushstring(state, message.as_ptr());
    ffi::lua_setfield(state, -2, c"err".as_ptr());
    if raises {
        ffi::lua_error(state);
    }
    1
}

unsafe fn command(state: *mut ffi::lua_State, raises: bool) -> c_int {
    let nargs = ffi::lua_gettop(state);
    if nargs == 0 {
        return fail(state, c"ERR Please specify at least one argument for this redis lib call", raises);
    }
    for index in 1..=nargs {
        let kind = ffi::lua_type(state, index);
        if kind != ffi::LUA_TSTRING && kind != ffi::LUA_TNUMBER {
            return fail(state, c"ERR Lua redis lib command arguments must be strings or integers", raises);
        }
    }
    let run = CURRENT_RUN.with(Cell::get);
    if run.is_null() {
        return fail(state, c"ERR redis.call outside a script", raises);
    }
    // SAFETY: CURRENT_RUN points at the Run of the script running now (run.rs, hosting).
    if !(*run).before_call(state) {
        // Killed: the command does not run, and the next instruction raises the kill.
        return 0;
    }
    let reply = {
        // Numbers as Redis 7.0 writes them (%.17g), not as Lua would turn them into strings.
        let numbers: Vec<String> = (1..=nargs)
            .filter(|&i| ffi::lua_type(state, i) == ffi::LUA_TNUMBER)
            .map(|i| format_g17(ffi::lua_tonumber(state, i)))
            .collect();
        let mut formatted = numbers.iter();
        let mut word = |i: c_int| match ffi::lua_type(state, i) {
            ffi::LUA_TNUMBER => formatted.next().expect("one formatted number per number").as_bytes(),
            _ => {
                let mut length = 0;
                let text = ffi::lua_tolstring(state, i, &mut length);
                std::slice::from_raw_parts(text.cast::<u8>(), length)
            }
        };
        // Most commands have a few words: those are gathered on the stack, not in a Vec.
        let mut inline: [&[u8]; WORDS_INLINE] = [&[]; WORDS_INLINE];
        let spilled: Vec<&[u8]>;
        let words: &[&[u8]] = if nargs as usize <= WORDS_INLINE {
            for (slot, i) in inline.iter_mut().zip(1..=nargs) {
                *slot = word(i);
            }
            &inline[..nargs as usize]
        } else {
            spilled = (1..=nargs).map(word).collect();
            &spilled
        };
        let (reply_at, reply_bytes) = (*run)
            .with_host(|host| {
                let reply = host.call(words);
                (reply.as_ptr(), reply.len())
            })
            .unwrap_or((OUTSIDE_A_SCRIPT.as_ptr(), OUTSIDE_A_SCRIPT.len()));
        (reply_at, reply_bytes)
    };
    // The words are the host's now: off the stack with them, as Redis pops its arguments, so that
    // a command of nearly all the stack Lua allows (LUAI_MAXCSTACK, 8,000 slots: `unpack` of a
    // 7,999-item table) still leaves room for its reply.
    ffi::lua_settop(state, 0);
    // The reply is the host's (its mailbox, or a buffer it keeps until the next call), not this
    // function's: it is read in place, with nothing Rust owns alive, as pushing its value can
    // raise (out of memory).
    let text = std::slice::from_raw_parts(reply.0, reply.1);
    if resp_to_lua::push(state, text).is_err() {
        return fail(state, c"ERR the server wrote a malformed reply for a script", raises);
    }
    if raises && text.first() == Some(&b'-') {
        ffi::lua_error(state);
    }
    1
}

/// Words of a command gathered on the stack rather than in a Vec (call's `inline`).
const WORDS_INLINE: usize = 16;

/// What redis.call answers when no script is running (it cannot be called then: see with_host).
const OUTSIDE_A_SCRIPT: &[u8] = b"-ERR redis.call outside a script\r\n";

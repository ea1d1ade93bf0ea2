//! A command's RESP2 reply as the Lua value redis.call returns, by Redis's rules: an integer → a
//! number, a bulk string → a string, a null bulk or null array → false, an array → a table of
//! its items, a status → { ok = text }, an error → { err = text }. A command's own error (the
//! whole reply) also carries `ignore_error_stats_update = true`, as in Redis 7: the server counted
//! it when the command failed, and a script passing it on must not have it counted again.
//!
//! Built on the raw Lua stack, inside redis.call (call.rs): this is the path every command a
//! script runs takes, and mlua's values cost a reference and an allocation each.

use std::ffi::{c_int, CStr};

use mlua::ffi;

/// The field that marks an error table as already counted in the server's error statistics.
pub const COUNTED_FIELD: &CStr = c"ignore_error_stats_update";

/// A reply that is not RESP2: what went wrong is the reply's, not the script's.
#[derive(Debug)]
pub struct Malformed;

/// Pushes the Lua value of the one RESP2 reply in `bytes`. On a malformed reply the stack is left
/// as it was. Raises only Lua's own errors (out of memory), and `bytes` must stay valid meanwhile.
pub unsafe fn push(state: *mut ffi::lua_State, bytes: &[u8]) -> Result<(), Malformed> {
    let top = ffi::lua_gettop(state);
    let mut at = 0;
    let mut pushed = push_at(state, bytes, &mut at);
    if pushed.is_ok() && at != bytes.len() {
        pushed = Err(Malformed);
    }
    if pushed.is_err() {
        ffi::lua_settop(state, top);
    } else if bytes[0] == b'-' {
        ffi::lua_pushboolean(state, 1);
        ffi::lua_setfield(state, -2, COUNTED_FIELD.as_ptr());
    }
    pushed
}

/// The line from `at` up to CRLF; moves `at` past the CRLF.
fn line<'a>(bytes: &'a [u8], at: &mut usize) -> Result<&'a [u8], Malformed> {
    let start = *at;
    let length = bytes[start..].windows(2).position(|w| w == b"\r\n").ok_or(Malformed)?;
    *at = start + length + 2;
    Ok(&bytes[start..start + length])
}

fn number(text: &[u8]) -> Result<i64, Malformed> {
    std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()).ok_or(Malformed)
}

unsafe fn push_bytes(state: *mut ffi::lua_State, bytes: &[u8]) {
    ffi::lua_pushlstring(state, bytes.as_ptr().cast(), bytes.len());
}

unsafe fn push_at(state: *mut ffi::lua_State, bytes: &[u8], at: &mut usize) -> Result<(), Malformed> {
    // Room for this item and a table it goes into; nesting past Lua's stack is malformed here.
    if ffi::lua_checkstack(state, 3) == 0 {
        return Err(Malformed);
    }
    let kind = *bytes.get(*at).ok_or(Malformed)?;
    *at += 1;
    let head = line(bytes, at)?;
    match kind {
        b'+' | b'-' => {
            ffi::lua_createtable(state, 0, 2);
            push_bytes(state, head);
            ffi::lua_setfield(state, -2, if kind == b'+' { c"ok" } else { c"err" }.as_ptr());
        }
        // Lua 5.1 numbers are doubles: integers past 2^53 round, as they do in Redis.
        b':' => ffi::lua_pushnumber(state, number(head)? as f64),
        b'$' => {
            let length = number(head)?;
            if length < 0 {
                ffi::lua_pushboolean(state, 0);
                return Ok(());
            }
            let end = at.checked_add(length as usize).filter(|&end| end + 2 <= bytes.len()).ok_or(Malformed)?;
            push_bytes(state, &bytes[*at..end]);
            *at = end + 2;
        }
        b'*' => {
            let count = number(head)?;
            if count < 0 {
                ffi::lua_pushboolean(state, 0);
                return Ok(());
            }
            // Sized by what the reply can hold, not by a count it may only claim.
            ffi::lua_createtable(state, (count as usize).min(bytes.len() - *at) as c_int, 0);
            for index in 1..=count {
                push_at(state, bytes, at)?;
                ffi::lua_rawseti(state, -2, index as ffi::lua_Integer);
            }
        }
        _ => return Err(Malformed),
    }
    Ok(())
}

//! A script's return value as the RESP2 reply the client gets, by Redis's rules:
//! - a number → an integer, its fraction dropped (3.99 → 3);
//! - a string → a bulk string; nil and false → the null bulk string; true → the integer 1;
//! - a table with a string `err` → an error reply, one with a string `ok` → a status reply;
//! - any other table → an array of its items 1, 2, … up to the first nil.
//!
//! A status or error line must not break the protocol, so CR and LF in one become spaces (an
//! error's at its end are trimmed first), and it ends at a NUL, as Redis's C strings do.
//!
//! Read off the raw Lua stack, as redis.call's replies are pushed onto it (resp_to_lua.rs): every
//! script's reply takes this path, and mlua's values cost a reference and an allocation each.
//! Tables are read with rawget, so no metamethod (no script code) runs while a reply is made.

use std::ffi::{c_int, CStr};

use mlua::ffi;

use crate::resp_to_lua::COUNTED_FIELD;

/// Tables nested deeper than this are answered with an error (a table can hold itself).
pub const DEPTH_MAX: usize = 1000;

/// A number as the integer Redis's `(long long)` cast makes of it on x86: the fraction dropped,
/// and NaN or anything out of range as the smallest integer.
pub fn to_integer(n: f64) -> i64 {
    if n.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        return i64::MIN;
    }
    n.trunc() as i64
}

/// Appends `text` as a status line's text, as Redis writes it: up to its first NUL (it passes
/// through a C string), CR and LF replaced by spaces.
pub fn push_status(out: &mut Vec<u8>, text: &[u8]) {
    let text = text.split(|&b| b == 0).next().unwrap_or_default();
    out.extend(text.iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
    out.extend_from_slice(b"\r\n");
}

/// Appends `text` as an error line's text: as a status's, but with CR and LF first trimmed from
/// its end (Redis's addReplyErrorFormat trims "-<text>", so only the end can lose any).
pub fn push_error(out: &mut Vec<u8>, text: &[u8]) {
    let text = text.split(|&b| b == 0).next().unwrap_or_default();
    let end = text.iter().rposition(|&b| b != b'\r' && b != b'\n').map_or(0, |i| i + 1);
    push_status(out, &text[..end]);
}

/// Appends `<kind><n>\r\n` (`:5`, `$3`, `*2`) without formatting a String.
fn push_header(out: &mut Vec<u8>, kind: u8, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.push(kind);
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
    out.extend_from_slice(b"\r\n");
}

/// The bytes of the string at `index`; valid while it stays on the stack.
pub unsafe fn string_at<'a>(state: *mut ffi::lua_State, index: c_int) -> &'a [u8] {
    let mut length = 0;
    let text = ffi::lua_tolstring(state, index, &mut length);
    std::slice::from_raw_parts(text.cast::<u8>(), length)
}

/// Pushes `table[field]`, read raw (`table` at an absolute index); returns its type.
pub unsafe fn raw_field(state: *mut ffi::lua_State, table: c_int, field: &CStr) -> c_int {
    ffi::lua_pushstring(state, field.as_ptr());
    ffi::lua_rawget(state, table);
    ffi::lua_type(state, -1)
}

/// Appends the value at `index` (absolute) as a RESP2 reply. Raises only Lua's own errors (out
/// of memory, or a stack too deep), so call it protected.
pub unsafe fn encode(state: *mut ffi::lua_State, index: c_int, out: &mut Vec<u8>) {
    encode_at(state, index, out, 0);
}

/// Whether the table at `index` (absolute) is an error the server has already counted (a
/// command's error passed on).
pub unsafe fn is_counted_error(state: *mut ffi::lua_State, index: c_int) -> bool {
    let top = ffi::lua_gettop(state);
    let counted = raw_field(state, index, c"err") == ffi::LUA_TSTRING
        && raw_field(state, index, COUNTED_FIELD) == ffi::LUA_TBOOLEAN
        && ffi::lua_toboolean(state, -1) != 0;
    ffi::lua_settop(state, top);
    counted
}

unsafe fn encode_at(state: *mut ffi::lua_State, index: c_int, out: &mut Vec<u8>, depth: usize) {
    match ffi::lua_type(state, index) {
        ffi::LUA_TBOOLEAN if ffi::lua_toboolean(state, index) != 0 => out.extend_from_slice(b":1\r\n"),
        ffi::LUA_TNUMBER => push_header(out, b':', to_integer(ffi::lua_tonumber(state, index))),
        ffi::LUA_TSTRING => {
            let bytes = string_at(state, index);
            push_header(out, b'$', bytes.len() as i64);
            out.extend_from_slice(bytes);
            out.extend_from_slice(b"\r\n");
        }
        ffi::LUA_TTABLE if depth >= DEPTH_MAX => out.extend_from_slice(b"-ERR reached lua stack limit\r\n"),
        ffi::LUA_TTABLE => encode_table(state, index, out, depth),
        // nil and false; functions, userdata, threads: what Redis sends for a type it has no reply for.
        _ => out.extend_from_slice(b"$-1\r\n"),
    }
}

unsafe fn encode_table(state: *mut ffi::lua_State, table: c_int, out: &mut Vec<u8>, depth: usize) {
    ffi::luaL_checkstack(state, 2, c"a reply nested too deep".as_ptr());
    let top = ffi::lua_gettop(state);
    if raw_field(state, table, c"err") == ffi::LUA_TSTRING {
        out.push(b'-');
        push_error(out, string_at(state, -1));
        return ffi::lua_settop(state, top);
    }
    ffi::lua_settop(state, top);
    if raw_field(state, table, c"ok") == ffi::LUA_TSTRING {
        out.push(b'+');
        push_status(out, string_at(state, -1));
        return ffi::lua_settop(state, top);
    }
    ffi::lua_settop(state, top);
    let mut count = 0;
    loop {
        ffi::lua_rawgeti(state, table, count + 1);
        let nil = ffi::lua_type(state, -1) == ffi::LUA_TNIL;
        ffi::lua_settop(state, top);
        if nil {
            break;
        }
        count += 1;
    }
    push_header(out, b'*', count as i64);
    for item in 1..=count {
        ffi::lua_rawgeti(state, table, item);
        encode_at(state, top + 1, out, depth + 1);
        ffi::lua_settop(state, top);
    }
}

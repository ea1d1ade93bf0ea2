//! A script's return value as the reply the client gets, by Redis 7.0's rules:
//! - a number → an integer, its fraction dropped (3.99 → 3);
//! - a string → a bulk string; nil → null; false → null, true → the integer 1 (after
//!   redis.setresp(3): RESP3's booleans, which a RESP2 client gets as 0 and 1);
//! - a table with a string `err` → an error reply, one with a string `ok` → a status reply, one
//!   with a number `double` → a double, a string `big_number` → a big number, a table
//!   `verbatim_string` with string `format` and `string` → a verbatim string, a table `map` → a
//!   map of its pairs, a table `set` → a set of its keys (whatever the protocol the script asked
//!   for: the client's own decides how each is written);
//! - any other table → an array of its items 1, 2, … up to the first nil.
//!
//! Written as RESP3 where RESP2 has no such type; the server replays it to the client in the
//! client's protocol (src/kv/scripting/resp-replay.ts), as Redis writes it: a map as a flat
//! array, a set as an array, a double, big number or verbatim string as a bulk string, a
//! boolean as 0 or 1.
//!
//! A status or error line must not break the protocol, so CR and LF in one become spaces (an
//! error's at its end are trimmed first), and it ends at a NUL, as Redis's C strings do; a big
//! number's CR and LF become spaces too.
//!
//! Read off the raw Lua stack, as redis.call's replies are pushed onto it (resp_to_lua.rs): every
//! script's reply takes this path, and mlua's values cost a reference and an allocation each.
//! Tables are read with rawget, and a map's and a set's pairs with lua_next, so no metamethod
//! (no script code) runs while a reply is made.

use std::ffi::{c_int, CStr};

use mlua::ffi;

use crate::run::CURRENT_RUN;
use crate::number::format_g17;
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

/// Appends the value at `index` (absolute) as a reply, and returns whether it is plain RESP2:
/// integers, bulk strings (null among them), statuses and arrays of those only — bytes a RESP2
/// client can be sent as they are, with no error in them for the server to count. Raises only
/// Lua's own errors (out of memory, or a stack too deep), so call it protected.
pub unsafe fn encode(state: *mut ffi::lua_State, index: c_int, out: &mut Vec<u8>) -> bool {
    // SAFETY: CURRENT_RUN points at the Run of the script running now, or is null.
    let resp3 = CURRENT_RUN.with(|run| run.get().as_ref().is_some_and(|run| run.resp3.get()));
    let mut plain = true;
    encode_at(state, index, out, 0, resp3, &mut plain);
    plain
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

/// encode for the value at `index`, `plain` cleared once anything but plain RESP2 is written.
unsafe fn encode_at(state: *mut ffi::lua_State, index: c_int, out: &mut Vec<u8>, depth: usize, resp3: bool, plain: &mut bool) {
    match ffi::lua_type(state, index) {
        ffi::LUA_TBOOLEAN if resp3 => {
            *plain = false;
            out.extend_from_slice(if ffi::lua_toboolean(state, index) != 0 { b"#t\r\n" } else { b"#f\r\n" });
        }
        ffi::LUA_TBOOLEAN if ffi::lua_toboolean(state, index) != 0 => out.extend_from_slice(b":1\r\n"),
        ffi::LUA_TNUMBER => push_header(out, b':', to_integer(ffi::lua_tonumber(state, index))),
        ffi::LUA_TSTRING => push_bulk(out, string_at(state, index)),
        ffi::LUA_TTABLE if depth >= DEPTH_MAX => {
            *plain = false;
            out.extend_from_slice(b"-ERR reached lua stack limit\r\n");
        }
        ffi::LUA_TTABLE => encode_table(state, index, out, depth, resp3, plain),
        // nil and false; functions, userdata, threads: what Redis sends for a type it has no reply for.
        _ => out.extend_from_slice(b"$-1\r\n"),
    }
}

fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    push_header(out, b'$', bytes.len() as i64);
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

unsafe fn encode_table(state: *mut ffi::lua_State, table: c_int, out: &mut Vec<u8>, depth: usize, resp3: bool, plain: &mut bool) {
    ffi::luaL_checkstack(state, 4, c"a reply nested too deep".as_ptr());
    let top = ffi::lua_gettop(state);
    // The first field the table has of these decides what it is, in Redis's order. Of them only
    // a status is plain RESP2.
    if raw_field(state, table, c"err") == ffi::LUA_TSTRING {
        *plain = false;
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
    if raw_field(state, table, c"double") == ffi::LUA_TNUMBER {
        *plain = false;
        out.push(b',');
        out.extend_from_slice(format_g17(ffi::lua_tonumber(state, -1)).as_bytes());
        out.extend_from_slice(b"\r\n");
        return ffi::lua_settop(state, top);
    }
    ffi::lua_settop(state, top);
    if raw_field(state, table, c"big_number") == ffi::LUA_TSTRING {
        *plain = false;
        out.push(b'(');
        out.extend(string_at(state, -1).iter().map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }));
        out.extend_from_slice(b"\r\n");
        return ffi::lua_settop(state, top);
    }
    ffi::lua_settop(state, top);
    if raw_field(state, table, c"verbatim_string") == ffi::LUA_TTABLE {
        let verbatim = ffi::lua_gettop(state);
        if raw_field(state, verbatim, c"format") == ffi::LUA_TSTRING && raw_field(state, verbatim, c"string") == ffi::LUA_TSTRING {
            // Three bytes of format, as Redis writes them: cut, or padded with spaces.
            let format = string_at(state, -2);
            let text = string_at(state, -1);
            *plain = false;
            push_header(out, b'=', text.len() as i64 + 4);
            out.extend((0..3).map(|i| format.get(i).copied().filter(|&b| b != 0).unwrap_or(b' ')));
            out.push(b':');
            out.extend_from_slice(text);
            out.extend_from_slice(b"\r\n");
            return ffi::lua_settop(state, top);
        }
    }
    ffi::lua_settop(state, top);
    for (field, kind) in [(c"map", b'%'), (c"set", b'~')] {
        if raw_field(state, table, field) == ffi::LUA_TTABLE {
            *plain = false;
            encode_pairs(state, top + 1, out, depth, resp3, kind, plain);
            return ffi::lua_settop(state, top);
        }
        ffi::lua_settop(state, top);
    }
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
        encode_at(state, top + 1, out, depth + 1, resp3, plain);
        ffi::lua_settop(state, top);
    }
}

/// A map (`%`: each key, then its value) or a set (`~`: each key) of the table at `pairs`, in
/// lua_next's order: counted in a first pass, for the header, then written.
unsafe fn encode_pairs(state: *mut ffi::lua_State, pairs: c_int, out: &mut Vec<u8>, depth: usize, resp3: bool, kind: u8, plain: &mut bool) {
    let mut count = 0i64;
    ffi::lua_pushnil(state);
    while ffi::lua_next(state, pairs) != 0 {
        ffi::lua_pop(state, 1);
        count += 1;
    }
    push_header(out, kind, count);
    ffi::lua_pushnil(state);
    while ffi::lua_next(state, pairs) != 0 {
        let (key, value) = (ffi::lua_gettop(state) - 1, ffi::lua_gettop(state));
        encode_at(state, key, out, depth + 1, resp3, plain);
        if kind == b'%' {
            encode_at(state, value, out, depth + 1, resp3, plain);
        }
        ffi::lua_settop(state, key);
    }
}

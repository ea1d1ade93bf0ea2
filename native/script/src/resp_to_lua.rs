//! A command's reply as the Lua value redis.call returns, by Redis 7.0's rules. In RESP2: an
//! integer → a number, a bulk string → a string, a null bulk or null array → false, an array → a
//! table of its items, a status → { ok = text }, an error → { err = text }. A command's own error
//! (the whole reply) also carries `ignore_error_stats_update = true`, as in Redis 7: the server
//! counted it when the command failed, and a script passing it on must not have it counted again.
//!
//! After redis.setresp(3) the commands reply in RESP3, whose types become: a map → { map = {
//! key = value, … } }, a set → { set = { item = true, … } }, a double → { double = n }, a big
//! number → { big_number = text }, a verbatim string → { verbatim_string = { format = "txt",
//! string = text } }, null → nil, a boolean → a boolean; an attribute is skipped.
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

/// The integer of a reply's line, read as `str::parse::<i64>` reads it (an optional sign, then
/// digits), straight from the bytes: every integer reply and length a script gets passes here.
fn number(text: &[u8]) -> Result<i64, Malformed> {
    let (negative, digits) = match text {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        _ => (false, text),
    };
    if digits.is_empty() {
        return Err(Malformed);
    }
    // Summed below zero, where i64 reaches one further (i64::MIN has no positive).
    let mut value: i64 = 0;
    for &digit in digits {
        if !digit.is_ascii_digit() {
            return Err(Malformed);
        }
        value = value.checked_mul(10).and_then(|v| v.checked_sub(i64::from(digit - b'0'))).ok_or(Malformed)?;
    }
    if negative {
        Ok(value)
    } else {
        value.checked_neg().ok_or(Malformed)
    }
}

#[cfg(test)]
mod number_tests {
    use super::number;

    #[test]
    fn reads_what_str_parse_reads() {
        let mut cases: Vec<String> = ["", "-", "+", "0", "-0", "+7", "007", "12a", " 1", "1 ", "--1", "+-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "99999999999999999999"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            // xorshift: lengths 0-21 of digits, signs and a few other bytes.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let length = (seed % 22) as usize;
            let text: String = (0..length).map(|i| b"0123456789012345678901-+x"[((seed >> (i % 50)) as usize + i * 7) % 25] as char).collect();
            cases.push(text);
        }
        for case in cases {
            let expected = case.parse::<i64>().ok();
            assert_eq!(number(case.as_bytes()).ok(), expected, "{case:?}");
        }
    }
}

unsafe fn push_bytes(state: *mut ffi::lua_State, bytes: &[u8]) {
    ffi::lua_pushlstring(state, bytes.as_ptr().cast(), bytes.len());
}

unsafe fn push_at(state: *mut ffi::lua_State, bytes: &[u8], at: &mut usize) -> Result<(), Malformed> {
    // Room for this item and the tables it goes into (a map's: its wrapper, itself, a key and a
    // value); nesting past Lua's stack is malformed here.
    if ffi::lua_checkstack(state, 5) == 0 {
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
        b'*' | b'>' => {
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
        b'_' => ffi::lua_pushnil(state),
        b'#' => match head {
            b"t" => ffi::lua_pushboolean(state, 1),
            b"f" => ffi::lua_pushboolean(state, 0),
            _ => return Err(Malformed),
        },
        b',' => {
            let n = std::str::from_utf8(head).ok().and_then(|t| t.parse::<f64>().ok()).ok_or(Malformed)?;
            ffi::lua_createtable(state, 0, 1);
            ffi::lua_pushnumber(state, n);
            ffi::lua_setfield(state, -2, c"double".as_ptr());
        }
        b'(' => {
            ffi::lua_createtable(state, 0, 1);
            push_bytes(state, head);
            ffi::lua_setfield(state, -2, c"big_number".as_ptr());
        }
        b'=' => {
            let length = usize::try_from(number(head)?).map_err(|_| Malformed)?;
            let end = at.checked_add(length).filter(|&end| end + 2 <= bytes.len() && length >= 4).ok_or(Malformed)?;
            let (format, text) = bytes[*at..end].split_at(3);
            ffi::lua_createtable(state, 0, 1);
            ffi::lua_createtable(state, 0, 2);
            push_bytes(state, &text[1..]);
            ffi::lua_setfield(state, -2, c"string".as_ptr());
            push_bytes(state, format);
            ffi::lua_setfield(state, -2, c"format".as_ptr());
            ffi::lua_setfield(state, -2, c"verbatim_string".as_ptr());
            *at = end + 2;
        }
        b'%' | b'~' => {
            let count = number(head)?;
            ffi::lua_createtable(state, 0, 1);
            ffi::lua_createtable(state, 0, (count.max(0) as usize).min(bytes.len() - *at) as c_int);
            for _ in 0..count {
                push_at(state, bytes, at)?;
                if kind == b'%' {
                    push_at(state, bytes, at)?;
                } else {
                    ffi::lua_pushboolean(state, 1);
                }
                // A nil key (a null member) would raise; Redis's server never sends one.
                if ffi::lua_type(state, -2) == ffi::LUA_TNIL {
                    return Err(Malformed);
                }
                ffi::lua_rawset(state, -3);
            }
            ffi::lua_setfield(state, -2, if kind == b'%' { c"map" } else { c"set" }.as_ptr());
        }
        b'|' => {
            // Attributes describe the reply that follows; scripts see only the reply.
            let pairs = number(head)?;
            let top = ffi::lua_gettop(state);
            for _ in 0..pairs.max(0) * 2 {
                push_at(state, bytes, at)?;
            }
            ffi::lua_settop(state, top);
            return push_at(state, bytes, at);
        }
        _ => return Err(Malformed),
    }
    Ok(())
}

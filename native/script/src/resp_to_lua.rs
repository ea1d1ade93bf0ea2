//! A command's RESP2 reply as the Lua value redis.call returns, by Redis's rules: an integer → a
//! number, a bulk string → a string, a null bulk or null array → false, an array → a table of
//! its items, a status → { ok = text }, an error → { err = text }. A command's own error (the
//! whole reply) also carries `ignore_error_stats_update = true`, as in Redis 7: the server counted
//! it when the command failed, and a script passing it on must not have it counted again.

use mlua::{Lua, Result, Value};

/// The field that marks an error table as already counted in the server's error statistics.
pub const COUNTED_FIELD: &str = "ignore_error_stats_update";

/// The reply in `bytes` (one whole RESP2 reply, as the server wrote it) and whether it is an error.
pub fn decode(lua: &Lua, bytes: &[u8]) -> Result<(Value, bool)> {
    let mut at = 0;
    let failed = bytes.first() == Some(&b'-');
    let value = decode_at(lua, bytes, &mut at)?;
    if let (true, Value::Table(error)) = (failed, &value) {
        error.raw_set(COUNTED_FIELD, true)?;
    }
    Ok((value, failed))
}

fn malformed() -> mlua::Error {
    mlua::Error::runtime("the server wrote a malformed reply for a script")
}

/// The line from `at` up to CRLF; moves `at` past the CRLF.
fn line<'a>(bytes: &'a [u8], at: &mut usize) -> Result<&'a [u8]> {
    let start = *at;
    let length = bytes[start..].windows(2).position(|w| w == b"\r\n").ok_or_else(malformed)?;
    *at = start + length + 2;
    Ok(&bytes[start..start + length])
}

fn number(text: &[u8]) -> Result<i64> {
    std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()).ok_or_else(malformed)
}

fn decode_at(lua: &Lua, bytes: &[u8], at: &mut usize) -> Result<Value> {
    let kind = *bytes.get(*at).ok_or_else(malformed)?;
    *at += 1;
    let head = line(bytes, at)?;
    match kind {
        b'+' | b'-' => {
            let table = lua.create_table()?;
            table.raw_set(if kind == b'+' { "ok" } else { "err" }, lua.create_string(head)?)?;
            Ok(Value::Table(table))
        }
        // Lua 5.1 numbers are doubles: integers past 2^53 round, as they do in Redis.
        b':' => Ok(Value::Number(number(head)? as f64)),
        b'$' => {
            let length = number(head)?;
            if length < 0 {
                return Ok(Value::Boolean(false));
            }
            let start = *at;
            let end = start + length as usize;
            if end + 2 > bytes.len() {
                return Err(malformed());
            }
            *at = end + 2;
            Ok(Value::String(lua.create_string(&bytes[start..end])?))
        }
        b'*' => {
            let count = number(head)?;
            if count < 0 {
                return Ok(Value::Boolean(false));
            }
            let table = lua.create_table_with_capacity(count as usize, 0)?;
            for index in 1..=count {
                table.raw_set(index, decode_at(lua, bytes, at)?)?;
            }
            Ok(Value::Table(table))
        }
        _ => Err(malformed()),
    }
}

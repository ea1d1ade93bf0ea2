//! A script's return value as the RESP2 reply the client gets, by Redis's rules:
//! - a number → an integer, its fraction dropped (3.99 → 3);
//! - a string → a bulk string; nil and false → the null bulk string; true → the integer 1;
//! - a table with a string `err` → an error reply, one with a string `ok` → a status reply;
//! - any other table → an array of its items 1, 2, … up to the first nil.
//!
//! A status or error line must not break the protocol, so CR and LF in one become spaces (an
//! error's at its end are trimmed first), and it ends at a NUL, as Redis's C strings do.

use mlua::{Table, Value};

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

fn push_bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(format!("${}\r\n", bytes.len()).as_bytes());
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// Appends `value` as a RESP2 reply.
pub fn encode(value: &Value, out: &mut Vec<u8>) {
    encode_at(value, out, 0);
}

/// Whether `table` is an error the server has already counted (a command's error passed on).
pub fn is_counted_error(table: &Table) -> bool {
    matches!(table.raw_get::<Value>("err"), Ok(Value::String(_)))
        && matches!(table.raw_get::<Value>(COUNTED_FIELD.to_str().expect("ASCII")), Ok(Value::Boolean(true)))
}

fn encode_at(value: &Value, out: &mut Vec<u8>, depth: usize) {
    match value {
        Value::Nil | Value::Boolean(false) => out.extend_from_slice(b"$-1\r\n"),
        Value::Boolean(true) => out.extend_from_slice(b":1\r\n"),
        Value::Integer(n) => out.extend_from_slice(format!(":{n}\r\n").as_bytes()),
        Value::Number(n) => out.extend_from_slice(format!(":{}\r\n", to_integer(*n)).as_bytes()),
        Value::String(s) => push_bulk(out, &s.as_bytes()),
        Value::Table(t) if depth >= DEPTH_MAX => {
            let _ = t;
            out.extend_from_slice(b"-ERR reached lua stack limit\r\n");
        }
        Value::Table(t) => encode_table(t, out, depth),
        // Functions, userdata, threads: what Redis sends for a type it has no reply for.
        _ => out.extend_from_slice(b"$-1\r\n"),
    }
}

fn encode_table(table: &Table, out: &mut Vec<u8>, depth: usize) {
    if let Ok(Value::String(err)) = table.raw_get::<Value>("err") {
        out.push(b'-');
        return push_error(out, &err.as_bytes());
    }
    if let Ok(Value::String(ok)) = table.raw_get::<Value>("ok") {
        out.push(b'+');
        return push_status(out, &ok.as_bytes());
    }
    // Counted first, then read again one at a time: mlua holds a reference for every value kept
    // in Rust, and Lua 5.1 has room for ~8,000 of them, fewer than a long array's items.
    let mut count = 0;
    while !matches!(table.raw_get::<Value>(count + 1), Ok(Value::Nil) | Err(_)) {
        count += 1;
    }
    out.extend_from_slice(format!("*{count}\r\n").as_bytes());
    for index in 1..=count {
        encode_at(&table.raw_get::<Value>(index).unwrap_or(Value::Nil), out, depth + 1);
    }
}

//! The `cjson` library Redis gives scripts (lua-cjson 2.1's encode and decode, with its defaults):
//! - encode: a table whose keys are 1..n (holes allowed unless the array is excessively sparse)
//!   is an array, any other an object (number keys written as strings), the empty table `{}`;
//!   numbers as `%.14g`; strings with `"`, `\`, `/` and control bytes escaped, other bytes as
//!   they are; nil and cjson.null as `null`; NaN, infinities, functions and nesting past 1000
//!   deep are errors, in lua-cjson's words;
//! - decode: JSON to tables and numbers, `null` to cjson.null (a light userdata holding NULL).

use mlua::{LightUserData, Lua, LuaString, Result, Table, Value};

use crate::number::format_g;

/// Nesting cjson allows, encoding and decoding.
const DEPTH_MAX: usize = 1000;
/// Digits cjson writes numbers with.
const NUMBER_DIGITS: i32 = 14;
/// An array is excessively sparse past this index when also past `SPARSE_RATIO` × its items.
const SPARSE_SAFE: usize = 10;
const SPARSE_RATIO: usize = 2;

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn is_null(value: &Value) -> bool {
    matches!(value, Value::Nil) || matches!(value, Value::LightUserData(LightUserData(p)) if p.is_null())
}

pub fn library(lua: &Lua) -> Result<Table> {
    let cjson = lua.create_table()?;
    cjson.set("null", null())?;
    cjson.set(
        "encode",
        lua.create_function(|lua, value: Value| {
            let mut out = Vec::new();
            encode(&value, &mut out, 1).map_err(mlua::Error::runtime)?;
            lua.create_string(out)
        })?,
    )?;
    cjson.set(
        "decode",
        lua.create_function(|lua, text: LuaString| {
            let bytes = text.as_bytes();
            let mut decoder = Decoder { lua, bytes: &bytes, at: 0 };
            decoder.skip_space();
            let value = decoder.value(1)?;
            decoder.skip_space();
            if decoder.at < bytes.len() {
                return Err(decoder.error("the end of the string"));
            }
            Ok(value)
        })?,
    )?;
    Ok(cjson)
}

fn encode(value: &Value, out: &mut Vec<u8>, depth: usize) -> std::result::Result<(), String> {
    match value {
        v if is_null(v) => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(n) => encode_number(*n as f64, out)?,
        Value::Number(n) => encode_number(*n, out)?,
        Value::String(s) => encode_string(&s.as_bytes(), out),
        Value::Table(t) => {
            if depth > DEPTH_MAX {
                return Err(format!("Cannot serialise, excessive nesting ({depth})"));
            }
            encode_table(t, out, depth)?;
        }
        other => return Err(format!("Cannot serialise {}: type not supported", other.type_name())),
    }
    Ok(())
}

fn encode_number(n: f64, out: &mut Vec<u8>) -> std::result::Result<(), String> {
    if !n.is_finite() {
        return Err("Cannot serialise number: must not be NaN or Inf".to_string());
    }
    out.extend_from_slice(format_g(n, NUMBER_DIGITS).as_bytes());
    Ok(())
}

fn encode_string(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in bytes {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..=0x1f | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// The table's length as an array, or None when it is an object.
fn array_length(table: &Table) -> std::result::Result<Option<usize>, String> {
    let (mut max, mut items) = (0usize, 0usize);
    for pair in table.pairs::<Value, Value>() {
        let (key, _) = pair.map_err(|e| e.to_string())?;
        let index = match key {
            Value::Integer(i) if i >= 1 => i as usize,
            Value::Number(n) if n >= 1.0 && n.fract() == 0.0 && n < 9.0e15 => n as usize,
            _ => return Ok(None),
        };
        max = max.max(index);
        items += 1;
    }
    if max > SPARSE_SAFE && max > items * SPARSE_RATIO {
        return Err("Cannot serialise table: excessively sparse array".to_string());
    }
    Ok(if items == 0 { None } else { Some(max) })
}

fn encode_table(table: &Table, out: &mut Vec<u8>, depth: usize) -> std::result::Result<(), String> {
    if let Some(length) = array_length(table)? {
        out.push(b'[');
        for index in 1..=length {
            if index > 1 {
                out.push(b',');
            }
            let item: Value = table.raw_get(index).map_err(|e| e.to_string())?;
            encode(&item, out, depth + 1)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    let mut first = true;
    for pair in table.pairs::<Value, Value>() {
        let (key, item) = pair.map_err(|e| e.to_string())?;
        if !first {
            out.push(b',');
        }
        first = false;
        match &key {
            Value::String(s) => encode_string(&s.as_bytes(), out),
            Value::Integer(n) => encode_string(format_g(*n as f64, NUMBER_DIGITS).as_bytes(), out),
            Value::Number(n) => encode_string(format_g(*n, NUMBER_DIGITS).as_bytes(), out),
            _ => return Err("Cannot serialise table: table key must be a number or string".to_string()),
        }
        out.push(b':');
        encode(&item, out, depth + 1)?;
    }
    out.push(b'}');
    Ok(())
}

struct Decoder<'a> {
    lua: &'a Lua,
    bytes: &'a [u8],
    at: usize,
}

impl Decoder<'_> {
    /// lua-cjson's message: what it expected, what it found, and where (1-based).
    fn error(&self, expected: &str) -> mlua::Error {
        let found = match self.bytes.get(self.at) {
            None => "T_END",
            Some(b'{') => "T_OBJ_BEGIN",
            Some(b'}') => "T_OBJ_END",
            Some(b'[') => "T_ARR_BEGIN",
            Some(b']') => "T_ARR_END",
            Some(b',') => "T_COMMA",
            Some(b':') => "T_COLON",
            Some(b'"') => "T_STRING",
            Some(b'-' | b'0'..=b'9') => "T_NUMBER",
            Some(_) if self.bytes[self.at..].starts_with(b"true") || self.bytes[self.at..].starts_with(b"false") => "T_BOOLEAN",
            Some(_) if self.bytes[self.at..].starts_with(b"null") => "T_NULL",
            Some(_) => "invalid token",
        };
        mlua::Error::runtime(format!("Expected {expected} but found {found} at character {}", self.at + 1))
    }

    fn skip_space(&mut self) {
        while self.at < self.bytes.len() && matches!(self.bytes[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value> {
        if self.bytes[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value> {
        if depth > DEPTH_MAX {
            return Err(mlua::Error::runtime(format!("Found too many nested data structures ({depth}) at character {}", self.at + 1)));
        }
        match self.bytes.get(self.at) {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Value::String(self.lua.create_string(self.string()?)?)),
            Some(b't') => self.literal(b"true", Value::Boolean(true)),
            Some(b'f') => self.literal(b"false", Value::Boolean(false)),
            Some(b'n') => self.literal(b"null", null()),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("value")),
        }
    }

    fn number(&mut self) -> Result<Value> {
        let start = self.at;
        while self.at < self.bytes.len() && matches!(self.bytes[self.at], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
            self.at += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.at]).unwrap_or("");
        match text.parse::<f64>() {
            Ok(n) => Ok(Value::Number(n)),
            Err(_) => {
                self.at = start;
                Err(self.error("value"))
            }
        }
    }

    fn string(&mut self) -> Result<Vec<u8>> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.bytes.get(self.at) else { return Err(self.error("string end")) };
            self.at += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&escape) = self.bytes.get(self.at) else { return Err(self.error("escape")) };
                    self.at += 1;
                    match escape {
                        b'"' | b'\\' | b'/' => out.push(escape),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => self.unicode_escape(&mut out)?,
                        _ => return Err(self.error("valid escape")),
                    }
                }
                _ => out.push(b),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self.bytes.get(self.at..self.at + 4).and_then(|d| std::str::from_utf8(d).ok()).and_then(|d| u32::from_str_radix(d, 16).ok());
        let Some(n) = digits else { return Err(self.error("unicode escape")) };
        self.at += 4;
        Ok(n)
    }

    /// `\uXXXX`, with a surrogate pair as one character, written as UTF-8.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        let mut code = self.hex4()?;
        if (0xd800..0xdc00).contains(&code) && self.bytes[self.at..].starts_with(b"\\u") {
            self.at += 2;
            let low = self.hex4()?;
            if !(0xdc00..0xe000).contains(&low) {
                return Err(self.error("low surrogate"));
            }
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        }
        let c = char::from_u32(code).ok_or_else(|| self.error("unicode character"))?;
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        Ok(())
    }

    /// The items of an array or object, the decoder at its opening byte: `item` reads each (the
    /// 1-based index given), between commas, up to `close`.
    fn items(&mut self, close: u8, expected: &str, mut item: impl FnMut(&mut Self, usize) -> Result<()>) -> Result<()> {
        self.at += 1;
        self.skip_space();
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Ok(());
        }
        for index in 1.. {
            self.skip_space();
            item(self, index)?;
            self.skip_space();
            match self.bytes.get(self.at) {
                Some(b',') => self.at += 1,
                Some(&b) if b == close => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.error(expected)),
            }
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<Value> {
        let table = self.lua.create_table()?;
        self.items(b']', "comma or array end", |decoder, index| table.raw_set(index, decoder.value(depth + 1)?))?;
        Ok(Value::Table(table))
    }

    fn object(&mut self, depth: usize) -> Result<Value> {
        let table = self.lua.create_table()?;
        self.items(b'}', "comma or object end", |decoder, _| {
            if decoder.bytes.get(decoder.at) != Some(&b'"') {
                return Err(decoder.error("object key string"));
            }
            let key = decoder.string()?;
            decoder.skip_space();
            if decoder.bytes.get(decoder.at) != Some(&b':') {
                return Err(decoder.error("colon"));
            }
            decoder.at += 1;
            decoder.skip_space();
            let value = decoder.value(depth + 1)?;
            table.raw_set(decoder.lua.create_string(key)?, value)
        })?;
        Ok(Value::Table(table))
    }
}

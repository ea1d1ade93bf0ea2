//! The `cjson` library Redis gives scripts (lua-cjson 2.1.0), computing and failing as it does:
//! - encode: a table whose keys are 1..n (holes allowed unless the array is excessively sparse)
//!   is an array, any other an object (number keys written as strings), the empty table `{}`;
//!   numbers as `%.14g`; strings with `"`, `\`, `/` and control bytes escaped, other bytes as
//!   they are; nil and cjson.null as `null`; NaN and infinities, functions and nesting past the
//!   depth limit are errors;
//! - decode: JSON read token by token as lua-cjson reads it — its error says what was expected,
//!   what was found (a token's name, or what was wrong with it) and where; the input ends at its
//!   first NUL, as a C string does; `null` is cjson.null (a light userdata holding NULL); numbers
//!   are read as C's strtod reads them, so with invalid numbers allowed (the default) NaN,
//!   Infinity and hexadecimal numbers are read too;
//! - the settings (encode_sparse_array, encode_max_depth, decode_max_depth,
//!   encode_number_precision, encode_keep_buffer, encode_invalid_numbers, decode_invalid_numbers)
//!   read and set as lua-cjson's do, and `new`, which makes another instance with settings of its
//!   own.
//!
//! One difference, on purpose: lua-cjson keeps the settings of the `cjson` every script shares
//! for the life of the server, so that in Redis a script that sets `cjson.encode_max_depth(2)`
//! makes every later script's encode of a deeper table fail. Here they are the run's: each script
//! (and each library's load) starts from the defaults. An instance made by `new` keeps its own.
//! Nesting is bounded at NESTING_MAX whatever the settings say (Redis: as deep as its Lua stack
//! holds), so that no depth a script asks for grows the native stack without bound.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{LightUserData, Lua, MultiValue, Result, Table, Value};

use crate::run::CURRENT_RUN;
use crate::number::format_g;
use crate::rust_functions::{self, argument_error};

/// The deepest nesting encode and decode follow, whatever their settings.
pub const NESTING_MAX: i32 = 1000;

/// An instance's settings, lua-cjson's defaults by Default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Excessively sparse arrays: encoded as objects (true) or refused.
    sparse_convert: bool,
    /// An array is excessively sparse when its largest index is past `sparse_ratio` times its
    /// items (0: never) and past `sparse_safe`.
    pub(crate) sparse_ratio: i32,
    pub(crate) sparse_safe: i32,
    pub(crate) encode_max_depth: i32,
    pub(crate) decode_max_depth: i32,
    /// Significant digits of numbers, 1 to 14.
    pub(crate) number_precision: i32,
    /// Whether lua-cjson keeps its encoding buffer between calls (nothing else changes here).
    keep_buffer: bool,
    /// NaN and infinities: refused (0), written as nan/inf/-inf (1), or as null (2).
    encode_invalid_numbers: u8,
    /// Whether decode reads NaN, Infinity, hexadecimal and such non-JSON numbers.
    decode_invalid_numbers: bool,
}

impl Settings {
    /// The depth past which encode refuses nesting: the setting, within NESTING_MAX.
    pub(crate) fn encode_depth_max(&self) -> i32 {
        self.encode_max_depth.min(NESTING_MAX)
    }

    /// The depth past which decode refuses nesting: the setting, within NESTING_MAX.
    pub(crate) fn decode_depth_max(&self) -> i32 {
        self.decode_max_depth.min(NESTING_MAX)
    }

    /// Whether an array whose largest index is `max`, holding `items`, is excessively sparse.
    pub(crate) fn excessively_sparse(&self, max: f64, items: f64) -> bool {
        self.sparse_ratio > 0 && max > items * f64::from(self.sparse_ratio) && max > f64::from(self.sparse_safe)
    }

    /// Writes a finite number as encode writes it (`%.14g`, or the set precision).
    pub(crate) fn write_finite(&self, n: f64, out: &mut Vec<u8>) {
        out.extend_from_slice(format_g(n, self.number_precision).as_bytes());
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            sparse_convert: false,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            number_precision: 14,
            keep_buffer: true,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: true,
        }
    }
}

/// Where an instance keeps its settings: the running script's (the shared `cjson`), or its own
/// (one made by `new`).
#[derive(Clone)]
enum Home {
    Run,
    Own(Rc<Cell<Settings>>),
}

impl Home {
    fn get(&self) -> Settings {
        match self {
            Home::Run => run_settings(),
            Home::Own(settings) => settings.get(),
        }
    }

    fn set(&self, settings: Settings) {
        match self {
            // SAFETY: as in get.
            Home::Run => CURRENT_RUN.with(|run| {
                if let Some(run) = unsafe { run.get().as_ref() } {
                    run.cjson.set(settings);
                }
            }),
            Home::Own(own) => own.set(settings),
        }
    }
}

/// The settings of the running script's `cjson` (lua-cjson's defaults outside a run).
pub(crate) fn run_settings() -> Settings {
    // SAFETY: CURRENT_RUN points at the Run of the script running now, or is null.
    CURRENT_RUN.with(|run| unsafe { run.get().as_ref() }.map(|run| run.cjson.get()).unwrap_or_default())
}

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

/// The shared `cjson`, whose settings are the running script's. Its `decode` decodes plain JSON
/// straight onto Lua's stack, and its `encode` reads plain values straight off it
/// (cjson_stack.rs); anything else goes through the general decoder and encoder below.
pub fn library(lua: &Lua) -> Result<Table> {
    let cjson = instance(lua, Home::Run)?;
    rust_functions::with_fast_path(lua, &cjson, "decode", crate::cjson_stack::decode)?;
    rust_functions::with_fast_path(lua, &cjson, "encode", crate::cjson_stack::encode)?;
    Ok(cjson)
}

type Function = Box<dyn Fn(&Lua, MultiValue) -> Result<MultiValue>>;

fn instance(lua: &Lua, home: Home) -> Result<Table> {
    let with = |f: fn(&Lua, &Home, MultiValue) -> Result<MultiValue>| -> Function {
        let home = home.clone();
        Box::new(move |lua, args| f(lua, &home, args))
    };
    let functions: Vec<(&str, Function)> = vec![
        ("encode", with(encode)),
        ("decode", with(decode)),
        ("encode_sparse_array", with(encode_sparse_array)),
        ("encode_max_depth", with(|lua, home, args| integer_setting(lua, home, args, 1, i32::MAX, |s| &mut s.encode_max_depth))),
        ("decode_max_depth", with(|lua, home, args| integer_setting(lua, home, args, 1, i32::MAX, |s| &mut s.decode_max_depth))),
        ("encode_number_precision", with(|lua, home, args| integer_setting(lua, home, args, 1, 14, |s| &mut s.number_precision))),
        ("encode_keep_buffer", with(encode_keep_buffer)),
        ("encode_invalid_numbers", with(encode_invalid_numbers)),
        ("decode_invalid_numbers", with(decode_invalid_numbers)),
        ("new", Box::new(|lua, _| instance(lua, Home::Own(Rc::new(Cell::new(Settings::default())))).map(|t| MultiValue::from_vec(vec![Value::Table(t)])))),
    ];
    let cjson = rust_functions::library(lua, functions)?;
    cjson.raw_set("null", null())?;
    cjson.raw_set("_NAME", "cjson")?;
    cjson.raw_set("_VERSION", "2.1.0")?;
    Ok(cjson)
}

fn one(value: Value) -> MultiValue {
    MultiValue::from_vec(vec![value])
}

// ---- settings -------------------------------------------------------------------------------

/// A setting function's arguments, at most `count` of them ("found too many arguments"), padded
/// with nil.
fn setting_arguments(args: MultiValue, count: usize) -> Result<Vec<Value>> {
    if args.len() > count {
        return Err(argument_error(count + 1, "found too many arguments"));
    }
    let mut values = args.into_vec();
    values.resize(count, Value::Nil);
    Ok(values)
}

/// luaL_checkinteger's reading of an argument, cut to a C int as lua-cjson stores it.
fn integer_argument(lua: &Lua, value: &Value, position: usize) -> Result<i32> {
    match lua.coerce_number(value.clone())? {
        Some(n) => Ok(crate::lua_to_resp::to_integer(n) as i32),
        None => Err(argument_error(position, format!("number expected, got {}", value.type_name()))),
    }
}

/// An integer setting: set when given (from min to max), answered in any case. lua-cjson names
/// the first argument in the range error, whichever was out of range.
fn integer_option(lua: &Lua, value: &Value, position: usize, min: i32, max: i32, setting: &mut i32) -> Result<Value> {
    if !value.is_nil() {
        let n = integer_argument(lua, value, position)?;
        if n < min || n > max {
            return Err(argument_error(1, format!("expected integer between {min} and {max}")));
        }
        *setting = n;
    }
    Ok(Value::Number(f64::from(*setting)))
}

fn integer_setting(lua: &Lua, home: &Home, args: MultiValue, min: i32, max: i32, field: fn(&mut Settings) -> &mut i32) -> Result<MultiValue> {
    let args = setting_arguments(args, 1)?;
    let mut settings = home.get();
    let answer = integer_option(lua, &args[0], 1, min, max, field(&mut settings))?;
    home.set(settings);
    Ok(one(answer))
}

/// An option among `options` (a boolean reads as the second): set when given, answered as a
/// boolean when it is the first or second, else by its name.
fn enum_option(lua: &Lua, value: &Value, position: usize, options: &[&str], setting: &mut u8) -> Result<Value> {
    match value {
        Value::Nil => {}
        Value::Boolean(b) => *setting = u8::from(*b),
        other => {
            let Some(name) = lua.coerce_string(other.clone())? else {
                return Err(argument_error(position, format!("string expected, got {}", other.type_name())));
            };
            let name = name.to_string_lossy();
            let Some(index) = options.iter().position(|o| *o == name) else {
                return Err(argument_error(position, format!("invalid option '{name}'")));
            };
            *setting = index as u8;
        }
    }
    Ok(if *setting <= 1 { Value::Boolean(*setting == 1) } else { Value::String(lua.create_string(options[*setting as usize])?) })
}

const ON_OFF: &[&str] = &["off", "on"];

fn boolean_setting(lua: &Lua, home: &Home, args: MultiValue, field: fn(&mut Settings) -> &mut bool) -> Result<MultiValue> {
    let args = setting_arguments(args, 1)?;
    let mut settings = home.get();
    let mut value = u8::from(*field(&mut settings));
    let answer = enum_option(lua, &args[0], 1, ON_OFF, &mut value)?;
    *field(&mut settings) = value == 1;
    home.set(settings);
    Ok(one(answer))
}

fn encode_keep_buffer(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    boolean_setting(lua, home, args, |s| &mut s.keep_buffer)
}

fn decode_invalid_numbers(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    boolean_setting(lua, home, args, |s| &mut s.decode_invalid_numbers)
}

fn encode_invalid_numbers(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    let args = setting_arguments(args, 1)?;
    let mut settings = home.get();
    let answer = enum_option(lua, &args[0], 1, &["off", "on", "null"], &mut settings.encode_invalid_numbers)?;
    home.set(settings);
    Ok(one(answer))
}

fn encode_sparse_array(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    let args = setting_arguments(args, 3)?;
    let mut settings = home.get();
    let mut convert = u8::from(settings.sparse_convert);
    let answers = vec![
        enum_option(lua, &args[0], 1, ON_OFF, &mut convert)?,
        integer_option(lua, &args[1], 2, 0, i32::MAX, &mut settings.sparse_ratio)?,
        integer_option(lua, &args[2], 3, 0, i32::MAX, &mut settings.sparse_safe)?,
    ];
    settings.sparse_convert = convert == 1;
    home.set(settings);
    Ok(MultiValue::from_vec(answers))
}

// ---- encode ---------------------------------------------------------------------------------

fn encode(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    if args.len() != 1 {
        return Err(argument_error(1, "expected 1 argument"));
    }
    let settings = home.get();
    let mut out = Vec::new();
    Encoder { settings, max_depth: settings.encode_depth_max() }.value(&args[0], &mut out, 0).map_err(mlua::Error::runtime)?;
    Ok(one(Value::String(lua.create_string(out)?)))
}

struct Encoder {
    settings: Settings,
    /// The depth past which nesting is refused: the setting, within NESTING_MAX.
    max_depth: i32,
}

/// lua-cjson's message for what it cannot encode: "Cannot serialise <type>: <reason>".
fn cannot(value: &Value, reason: &str) -> String {
    let type_name = match value {
        Value::LightUserData(_) => "userdata",
        other => other.type_name(),
    };
    format!("Cannot serialise {type_name}: {reason}")
}

impl Encoder {
    fn value(&self, value: &Value, out: &mut Vec<u8>, depth: i32) -> std::result::Result<(), String> {
        match value {
            Value::Nil => out.extend_from_slice(b"null"),
            Value::LightUserData(LightUserData(p)) if p.is_null() => out.extend_from_slice(b"null"),
            Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Integer(n) => self.number(*n as f64, value, out)?,
            Value::Number(n) => self.number(*n, value, out)?,
            Value::String(s) => encode_string(&s.as_bytes(), out),
            Value::Table(t) => {
                let depth = depth + 1;
                if depth > self.max_depth {
                    return Err(format!("Cannot serialise, excessive nesting ({depth})"));
                }
                match self.array_length(t, value)? {
                    Some(length) => self.array(t, length, out, depth)?,
                    None => self.object(t, out, depth)?,
                }
            }
            other => return Err(cannot(other, "type not supported")),
        }
        Ok(())
    }

    fn number(&self, n: f64, value: &Value, out: &mut Vec<u8>) -> std::result::Result<(), String> {
        if !n.is_finite() {
            match self.settings.encode_invalid_numbers {
                0 => return Err(cannot(value, "must not be NaN or Inf")),
                1 if n.is_nan() => return Ok(out.extend_from_slice(b"nan")),
                2 => return Ok(out.extend_from_slice(b"null")),
                _ => {}
            }
        }
        self.settings.write_finite(n, out);
        Ok(())
    }

    /// The table's length as an array, or None when it is an object.
    fn array_length(&self, table: &Table, value: &Value) -> std::result::Result<Option<usize>, String> {
        let (mut max, mut items) = (0f64, 0f64);
        for pair in table.pairs::<Value, Value>() {
            let (key, _) = pair.map_err(|e| e.to_string())?;
            let k = match key {
                Value::Integer(i) => i as f64,
                Value::Number(n) => n,
                _ => return Ok(None),
            };
            if k.floor() != k || k < 1.0 {
                return Ok(None);
            }
            max = max.max(k);
            items += 1.0;
        }
        if self.settings.excessively_sparse(max, items) {
            if !self.settings.sparse_convert {
                return Err(cannot(value, "excessively sparse array"));
            }
            return Ok(None);
        }
        Ok((max > 0.0).then_some(max as usize))
    }

    fn array(&self, table: &Table, length: usize, out: &mut Vec<u8>, depth: i32) -> std::result::Result<(), String> {
        out.push(b'[');
        for index in 1..=length {
            if index > 1 {
                out.push(b',');
            }
            let item: Value = table.raw_get(index).map_err(|e| e.to_string())?;
            self.value(&item, out, depth)?;
        }
        out.push(b']');
        Ok(())
    }

    fn object(&self, table: &Table, out: &mut Vec<u8>, depth: i32) -> std::result::Result<(), String> {
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
                Value::Integer(n) => self.number_key(*n as f64, &key, out)?,
                Value::Number(n) => self.number_key(*n, &key, out)?,
                other => return Err(cannot(other, "table key must be a number or string")),
            }
            out.push(b':');
            self.value(&item, out, depth)?;
        }
        out.push(b'}');
        Ok(())
    }

    fn number_key(&self, n: f64, key: &Value, out: &mut Vec<u8>) -> std::result::Result<(), String> {
        out.push(b'"');
        self.number(n, key, out)?;
        out.push(b'"');
        Ok(())
    }
}

pub(crate) fn encode_string(bytes: &[u8], out: &mut Vec<u8>) {
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

// ---- decode ---------------------------------------------------------------------------------

fn decode(lua: &Lua, home: &Home, args: MultiValue) -> Result<MultiValue> {
    if args.len() != 1 {
        return Err(argument_error(1, "expected 1 argument"));
    }
    let text = match lua.coerce_string(args[0].clone())? {
        Some(text) => text,
        None => return Err(argument_error(1, format!("string expected, got {}", args[0].type_name()))),
    };
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && (bytes[0] == 0 || bytes[1] == 0) {
        return Err(mlua::Error::runtime("JSON parser does not support UTF-16 or UTF-32"));
    }
    // A C string: the input ends at its first NUL.
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let settings = home.get();
    let mut decoder = Decoder { lua, bytes: &bytes[..end], at: 0, depth: 0, settings, max_depth: settings.decode_depth_max() };
    let token = decoder.next_token();
    let value = decoder.value(token)?;
    let token = decoder.next_token();
    if !matches!(token.kind, Kind::End) {
        return Err(decoder.unexpected("the end", &token));
    }
    Ok(one(value))
}

/// A token, as lua-cjson's tokenizer makes them.
enum Kind {
    ObjectBegin,
    ObjectEnd,
    ArrayBegin,
    ArrayEnd,
    String(Vec<u8>),
    Number(f64),
    Boolean(bool),
    Null,
    Colon,
    Comma,
    End,
    /// What was wrong with the input here ("invalid token", "invalid number", …).
    Error(&'static str),
}

struct Token {
    kind: Kind,
    /// Where it starts (for an error, where the error is), from 0.
    at: usize,
}

impl Kind {
    /// The name lua-cjson gives a token it did not expect.
    fn name(&self) -> &'static str {
        match self {
            Kind::ObjectBegin => "T_OBJ_BEGIN",
            Kind::ObjectEnd => "T_OBJ_END",
            Kind::ArrayBegin => "T_ARR_BEGIN",
            Kind::ArrayEnd => "T_ARR_END",
            Kind::String(_) => "T_STRING",
            Kind::Number(_) => "T_NUMBER",
            Kind::Boolean(_) => "T_BOOLEAN",
            Kind::Null => "T_NULL",
            Kind::Colon => "T_COLON",
            Kind::Comma => "T_COMMA",
            Kind::End => "T_END",
            Kind::Error(what) => what,
        }
    }
}

struct Decoder<'a> {
    lua: &'a Lua,
    bytes: &'a [u8],
    at: usize,
    depth: i32,
    settings: Settings,
    /// The depth past which nesting is refused: the setting, within NESTING_MAX.
    max_depth: i32,
}

impl Decoder<'_> {
    fn peek(&self, offset: usize) -> u8 {
        self.bytes.get(self.at + offset).copied().unwrap_or(0)
    }

    fn unexpected(&self, expected: &str, token: &Token) -> mlua::Error {
        mlua::Error::runtime(format!("Expected {expected} but found {} at character {}", token.kind.name(), token.at + 1))
    }

    fn error_token(&self, what: &'static str) -> Token {
        Token { kind: Kind::Error(what), at: self.at }
    }

    fn next_token(&mut self) -> Token {
        while matches!(self.peek(0), b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
        let at = self.at;
        let single = |kind| Some(Token { kind, at });
        let token = match self.peek(0) {
            0 => return Token { kind: Kind::End, at },
            b'{' => single(Kind::ObjectBegin),
            b'}' => single(Kind::ObjectEnd),
            b'[' => single(Kind::ArrayBegin),
            b']' => single(Kind::ArrayEnd),
            b',' => single(Kind::Comma),
            b':' => single(Kind::Colon),
            _ => None,
        };
        if let Some(token) = token {
            self.at += 1;
            return token;
        }
        let rest = &self.bytes[self.at..];
        match self.peek(0) {
            b'"' => self.string_token(),
            b'-' | b'0'..=b'9' => {
                if !self.settings.decode_invalid_numbers && self.is_invalid_number() {
                    return self.error_token("invalid number");
                }
                self.number_token()
            }
            _ if rest.starts_with(b"true") => {
                self.at += 4;
                Token { kind: Kind::Boolean(true), at }
            }
            _ if rest.starts_with(b"false") => {
                self.at += 5;
                Token { kind: Kind::Boolean(false), at }
            }
            _ if rest.starts_with(b"null") => {
                self.at += 4;
                Token { kind: Kind::Null, at }
            }
            // Only these letters and '+' start a token lua-cjson looks at further: NaN and
            // Infinity in any case, and '+5', when invalid numbers are read.
            b'+' | b'i' | b'I' | b'n' | b'N' if self.settings.decode_invalid_numbers && self.is_invalid_number() => self.number_token(),
            _ => self.error_token("invalid token"),
        }
    }

    /// Whether the number here is one strict JSON refuses: a leading '+' or zero, hexadecimal,
    /// Infinity or NaN.
    fn is_invalid_number(&self) -> bool {
        let mut p = &self.bytes[self.at..];
        if p.first() == Some(&b'+') {
            return true;
        }
        if p.first() == Some(&b'-') {
            p = &p[1..];
        }
        match p.first() {
            Some(b'0') => matches!(p.get(1), Some(c) if *c | 0x20 == b'x' || c.is_ascii_digit()),
            Some(c) if *c <= b'9' => false,
            None => false,
            _ => p.len() >= 3 && (p[..3].eq_ignore_ascii_case(b"inf") || p[..3].eq_ignore_ascii_case(b"nan")),
        }
    }

    fn number_token(&mut self) -> Token {
        let at = self.at;
        match strtod(&self.bytes[self.at..]) {
            Some((n, length)) => {
                self.at += length;
                Token { kind: Kind::Number(n), at }
            }
            None => self.error_token("invalid number"),
        }
    }

    fn string_token(&mut self) -> Token {
        let at = self.at;
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.peek(0) {
                b'"' => break,
                0 => return self.error_token("unexpected end of string"),
                b'\\' => {
                    let escaped = match self.peek(1) {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'u' => {
                            if !self.unicode_escape(&mut out) {
                                return self.error_token("invalid unicode escape code");
                            }
                            continue;
                        }
                        _ => return self.error_token("invalid escape code"),
                    };
                    out.push(escaped);
                    self.at += 2;
                }
                b => {
                    out.push(b);
                    self.at += 1;
                }
            }
        }
        self.at += 1;
        Token { kind: Kind::String(out), at }
    }

    /// Four hex digits from `at`, or None.
    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits.iter().try_fold(0u32, |n, &d| Some(n << 4 | char::from(d).to_digit(16)?))
    }

    /// `\uXXXX` here, a surrogate pair as one character, appended as UTF-8; false, reading
    /// nothing, for an invalid one.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut code) = self.hex4(self.at + 2) else { return false };
        let mut length = 6;
        if code & 0xf800 == 0xd800 {
            if code & 0x400 != 0 || self.peek(6) != b'\\' || self.peek(7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.at + 8) else { return false };
            if low & 0xfc00 != 0xdc00 {
                return false;
            }
            code = (((code & 0x3ff) << 10) | (low & 0x3ff)) + 0x10000;
            length = 12;
        }
        let Some(c) = char::from_u32(code) else { return false };
        let mut buf = [0u8; 4];
        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        self.at += length;
        true
    }

    /// The value `token` starts.
    fn value(&mut self, token: Token) -> Result<Value> {
        match token.kind {
            Kind::String(bytes) => Ok(Value::String(self.lua.create_string(bytes)?)),
            Kind::Number(n) => Ok(Value::Number(n)),
            Kind::Boolean(b) => Ok(Value::Boolean(b)),
            Kind::Null => Ok(null()),
            Kind::ObjectBegin => self.object(),
            Kind::ArrayBegin => self.array(),
            _ => Err(self.unexpected("value", &token)),
        }
    }

    fn descend(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(mlua::Error::runtime(format!("Found too many nested data structures ({}) at character {}", self.depth, self.at)));
        }
        Ok(())
    }

    fn object(&mut self) -> Result<Value> {
        self.descend()?;
        let table = self.lua.create_table()?;
        let mut token = self.next_token();
        if matches!(token.kind, Kind::ObjectEnd) {
            self.depth -= 1;
            return Ok(Value::Table(table));
        }
        loop {
            let Kind::String(key) = token.kind else { return Err(self.unexpected("object key string", &token)) };
            let colon = self.next_token();
            if !matches!(colon.kind, Kind::Colon) {
                return Err(self.unexpected("colon", &colon));
            }
            let first = self.next_token();
            let value = self.value(first)?;
            table.raw_set(self.lua.create_string(key)?, value)?;
            token = self.next_token();
            if matches!(token.kind, Kind::ObjectEnd) {
                self.depth -= 1;
                return Ok(Value::Table(table));
            }
            if !matches!(token.kind, Kind::Comma) {
                return Err(self.unexpected("comma or object end", &token));
            }
            token = self.next_token();
        }
    }

    fn array(&mut self) -> Result<Value> {
        self.descend()?;
        let table = self.lua.create_table()?;
        let mut token = self.next_token();
        if matches!(token.kind, Kind::ArrayEnd) {
            self.depth -= 1;
            return Ok(Value::Table(table));
        }
        for index in 1.. {
            let value = self.value(token)?;
            table.raw_set(index, value)?;
            token = self.next_token();
            if matches!(token.kind, Kind::ArrayEnd) {
                break;
            }
            if !matches!(token.kind, Kind::Comma) {
                return Err(self.unexpected("comma or array end", &token));
            }
            token = self.next_token();
        }
        self.depth -= 1;
        Ok(Value::Table(table))
    }
}

/// The number C's strtod reads at the start of `text` and the bytes it takes, or None when it
/// reads none: an optional sign, then INF or INFINITY, NAN or NAN(chars), a hexadecimal number
/// (0x, digits with an optional point, an optional binary exponent), or a decimal one.
pub fn strtod(text: &[u8]) -> Option<(f64, usize)> {
    let (negative, start) = match text.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let rest = &text[start..];
    let signed = |n: f64| if negative { -n } else { n };
    let starts = |word: &[u8]| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word);
    if starts(b"infinity") {
        return Some((signed(f64::INFINITY), start + 8));
    }
    if starts(b"inf") {
        return Some((signed(f64::INFINITY), start + 3));
    }
    if starts(b"nan") {
        let mut length = 3;
        if rest.get(3) == Some(&b'(') {
            if let Some(close) = rest[4..].iter().position(|c| !(c.is_ascii_alphanumeric() || *c == b'_')) {
                if rest[4 + close] == b')' {
                    length = 4 + close + 1;
                }
            }
        }
        return Some((signed(f64::NAN), start + length));
    }
    if rest.len() > 2 && rest[0] == b'0' && rest[1] | 0x20 == b'x' {
        if let Some((n, length)) = hexadecimal(&rest[2..]) {
            return Some((signed(n), start + 2 + length));
        }
        // "0x" with no digit after it: strtod reads the 0.
        return Some((signed(0.0), start + 1));
    }
    let digits = |from: usize| rest[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut length = digits(0);
    let mut mantissa_digits = length;
    if rest.get(length) == Some(&b'.') {
        let fraction = digits(length + 1);
        mantissa_digits += fraction;
        length += 1 + fraction;
    }
    if mantissa_digits == 0 {
        return None;
    }
    if matches!(rest.get(length), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(rest.get(length + 1), Some(b'+' | b'-')));
        let exponent = digits(length + 1 + sign);
        if exponent > 0 {
            length += 1 + sign + exponent;
        }
    }
    let n: f64 = std::str::from_utf8(&rest[..length]).ok()?.parse().ok()?;
    Some((signed(n), start + length))
}

/// A hexadecimal number's digits, point and binary exponent (after its "0x"), and their length.
fn hexadecimal(text: &[u8]) -> Option<(f64, usize)> {
    let (mut value, mut exponent, mut length, mut any) = (0f64, 0i32, 0, false);
    while let Some(d) = text.get(length).and_then(|c| char::from(*c).to_digit(16)) {
        value = value * 16.0 + f64::from(d);
        length += 1;
        any = true;
    }
    if text.get(length) == Some(&b'.') {
        length += 1;
        while let Some(d) = text.get(length).and_then(|c| char::from(*c).to_digit(16)) {
            value = value * 16.0 + f64::from(d);
            exponent -= 4;
            length += 1;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if matches!(text.get(length), Some(b'p' | b'P')) {
        let sign = usize::from(matches!(text.get(length + 1), Some(b'+' | b'-')));
        let count = text[length + 1 + sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        if count > 0 {
            let digits: i32 = std::str::from_utf8(&text[length + 1 + sign..length + 1 + sign + count]).ok()?.parse().unwrap_or(i32::MAX);
            exponent = exponent.saturating_add(if text[length + 1] == b'-' { -digits } else { digits });
            length += 1 + sign + count;
        }
    }
    Some((value * 2f64.powi(exponent), length))
}

#[cfg(test)]
mod tests {
    use super::strtod;

    #[test]
    fn reads_numbers_as_strtod_does() {
        assert_eq!(strtod(b"12.5e1x"), Some((125.0, 6)));
        assert_eq!(strtod(b"-0x10,"), Some((-16.0, 5)));
        assert_eq!(strtod(b"0x1.8p1"), Some((3.0, 7)));
        assert_eq!(strtod(b"0x"), Some((0.0, 1)));
        assert_eq!(strtod(b"+5"), Some((5.0, 2)));
        assert_eq!(strtod(b"1e"), Some((1.0, 1)));
        assert_eq!(strtod(b".5"), Some((0.5, 2)));
        assert_eq!(strtod(b"5."), Some((5.0, 2)));
        assert_eq!(strtod(b"Infinity]"), Some((f64::INFINITY, 8)));
        assert_eq!(strtod(b"-inf"), Some((f64::NEG_INFINITY, 4)));
        assert!(strtod(b"NaN").unwrap().0.is_nan());
        assert_eq!(strtod(b"nan(12)x").unwrap().1, 7);
        assert_eq!(strtod(b"-"), None);
        assert_eq!(strtod(b"."), None);
        assert_eq!(strtod(b"e5"), None);
    }
}

//! The `cmsgpack` library Redis gives scripts (lua-cmsgpack 0.4, the MessagePack of 2013, without
//! the bin and ext types):
//! - pack(...) encodes each value and joins them: an integral number within int64 as the smallest
//!   integer form, any other as a float32 when that holds it exactly, else a float64; a table whose
//!   keys are exactly 1..n as an array, any other as a map; nested past 16 tables, and functions
//!   and other values it cannot write, as nil;
//! - unpack(s) decodes every value in s; unpack_one(s [, offset]) and unpack_limit(s, limit [,
//!   offset]) decode one or `limit` and first return where the next value starts, or -1 at the end.

use mlua::{Lua, MultiValue, Result, Table, Value};

use crate::lua_to_resp::to_integer;
use crate::rust_functions::{self, argument_error, bare_error};

/// Tables nested deeper than this are packed as nil.
const NESTING_MAX: usize = 16;

/// A bad argument, worded by Lua with the name the function was called by.
fn arg_error(position: usize, _function: &str, message: &str) -> mlua::Error {
    argument_error(position, message)
}

/// The library; its `unpack` decodes a whole, well-formed string straight onto Lua's stack
/// (cmsgpack_stack.rs), and anything else through the general decoder below.
pub fn library(lua: &Lua) -> Result<Table> {
    let table = general_library(lua)?;
    rust_functions::with_fast_path(lua, &table, "unpack", crate::cmsgpack_stack::unpack)?;
    Ok(table)
}

fn general_library(lua: &Lua) -> Result<Table> {
    rust_functions::library(lua, vec![
        ("pack", Box::new(|lua, values: MultiValue| {
            if values.is_empty() {
                return Err(arg_error(0, "pack", "MessagePack pack needs input."));
            }
            let mut out = Vec::new();
            for value in values.iter() {
                encode(value, &mut out, 0);
            }
            Ok(MultiValue::from_vec(vec![Value::String(lua.create_string(out)?)]))
        })),
        ("unpack", Box::new(|lua, args: MultiValue| unpack(lua, "unpack", &args, 0, 0))),
        ("unpack_one", Box::new(|lua, args: MultiValue| {
            let offset = integer_arg(lua, &args, 1, "unpack_one", true)?;
            unpack(lua, "unpack_one", &args, 1, offset)
        })),
        ("unpack_limit", Box::new(|lua, args: MultiValue| {
            let limit = integer_arg(lua, &args, 1, "unpack_limit", false)?;
            let offset = integer_arg(lua, &args, 2, "unpack_limit", true)?;
            unpack(lua, "unpack_limit", &args, limit, offset)
        })),
    ])
}

/// An integer argument as luaL_optinteger reads it (`optional`: 0 when absent; otherwise
/// luaL_checkinteger's error): a number, or a string Lua reads as one, made an integer as C
/// casts a double.
fn integer_arg(lua: &Lua, args: &MultiValue, index: usize, function: &str, optional: bool) -> Result<i64> {
    let value = args.get(index).cloned().unwrap_or(Value::Nil);
    let got = match &value {
        Value::Nil if optional => return Ok(0),
        Value::Nil if index >= args.len() => "no value",
        other => other.type_name(),
    };
    match lua.coerce_number(value)? {
        Some(n) => Ok(to_integer(n)),
        None => Err(arg_error(index + 1, function, &format!("number expected, got {got}"))),
    }
}

fn encode(value: &Value, out: &mut Vec<u8>, depth: usize) {
    match value {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(n) => encode_number(*n as f64, out),
        Value::Number(n) => encode_number(*n, out),
        Value::String(s) => encode_bytes(&s.as_bytes(), out),
        Value::Table(t) if depth < NESTING_MAX => encode_table(t, out, depth),
        _ => out.push(0xc0),
    }
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    if n.trunc() == n && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&n) {
        return encode_integer(n as i64, out);
    }
    let narrow = n as f32;
    if f64::from(narrow) == n {
        out.push(0xca);
        out.extend_from_slice(&narrow.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_integer(n: i64, out: &mut Vec<u8>) {
    match n {
        0..=127 => out.push(n as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        0x100..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        0x1_0000_0000.. => {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
        -32..=-1 => out.push(n as i8 as u8),
        -128..=-33 => out.extend_from_slice(&[0xd0, n as i8 as u8]),
        -32768..=-129 => {
            out.push(0xd1);
            out.extend_from_slice(&(n as i16).to_be_bytes());
        }
        -2_147_483_648..=-32769 => {
            out.push(0xd2);
            out.extend_from_slice(&(n as i32).to_be_bytes());
        }
        _ => {
            out.push(0xd3);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    let len = bytes.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(bytes);
}

/// Writes a container header: `fix` | n below `fix_max`, else the 16- or 32-bit form.
fn encode_header(n: usize, fix: u8, fix_max: usize, wide: u8, out: &mut Vec<u8>) {
    if n < fix_max {
        out.push(fix | n as u8);
    } else if n <= 0xffff {
        out.push(wide);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(wide + 1);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// Whether the table's keys are exactly 1..n, and how many keys it has. Its pairs are walked
/// without being kept: mlua holds a reference for every value kept in Rust, and Lua 5.1 has room
/// for ~8,000 of them.
fn array_shape(table: &Table) -> (bool, usize) {
    let (mut count, mut max, mut integral) = (0usize, 0.0f64, true);
    for (key, _) in table.pairs::<Value, Value>().filter_map(|p| p.ok()) {
        count += 1;
        let n = match key {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => f64::NAN,
        };
        integral &= n >= 1.0 && n.trunc() == n;
        max = max.max(n);
    }
    (integral && max == count as f64, count)
}

fn encode_table(table: &Table, out: &mut Vec<u8>, depth: usize) {
    let (is_array, count) = array_shape(table);
    if is_array {
        encode_header(count, 0x90, 16, 0xdc, out);
        for index in 1..=count {
            encode(&table.raw_get::<Value>(index).unwrap_or(Value::Nil), out, depth + 1);
        }
    } else {
        encode_header(count, 0x80, 16, 0xde, out);
        for (key, value) in table.pairs::<Value, Value>().filter_map(|p| p.ok()) {
            encode(&key, out, depth + 1);
            encode(&value, out, depth + 1);
        }
    }
}

/// The string argument (a number is taken as its text, as luaL_checklstring does).
fn bytes_arg(lua: &Lua, args: &MultiValue, function: &str) -> Result<Vec<u8>> {
    match args.front() {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(v @ (Value::Integer(_) | Value::Number(_))) => Ok(lua.coerce_string(v.clone())?.map(|s| s.as_bytes().to_vec()).unwrap_or_default()),
        None => Err(arg_error(1, function, "string expected, got no value")),
        Some(other) => Err(arg_error(1, function, &format!("string expected, got {}", other.type_name()))),
    }
}

/// lua-cmsgpack's unpack_full: every value when limit and offset are both 0, else at most `limit`
/// values from `offset`, preceded by where the next starts (-1 at the end). Its messages print
/// the offset and the length as C ints.
fn unpack(lua: &Lua, function: &str, args: &MultiValue, limit: i64, offset: i64) -> Result<MultiValue> {
    let bytes = bytes_arg(lua, args, function)?;
    let len = bytes.len() as i64;
    if offset < 0 || limit < 0 {
        return Err(mlua::Error::runtime(format!("Invalid request to unpack with offset of {} and limit of {}.", offset as i32, len as i32)));
    }
    if offset > len {
        return Err(mlua::Error::runtime(format!("Start offset {} greater than input length {}.", offset as i32, len as i32)));
    }
    let all = limit == 0 && offset == 0;
    // The string argument is the one slot of lua-cmsgpack's stack in use when it starts.
    let mut decoder = Decoder { lua, bytes: &bytes, at: offset as usize, slots: 1 };
    // Stored as they are made (thousands held as Rust values would each hold an mlua reference),
    // after the place of the next offset when there is one.
    let values = lua.create_table()?;
    let first = if all { 1 } else { 2 };
    let mut count = 0;
    while decoder.at < bytes.len() && (all || (count as i64) < limit) {
        values.raw_set(first + count, decoder.value()?)?;
        count += 1;
        decoder.slots += 1;
    }
    if !all {
        decoder.need_slot(c"in function mp_unpack_full")?;
        let next = if decoder.at < bytes.len() { decoder.at as f64 } else { -1.0 };
        values.raw_set(1, next)?;
        count += 1;
    }
    Ok(rust_functions::many(values, count))
}

/// Lua's bound on the stack of a C function (LUAI_MAXCSTACK): lua-cmsgpack's decoding keeps every
/// value it has made and every table it is filling there, and stops with "stack overflow" past
/// it. The decoder counts the same slots to stop where it stops, with its messages, though it
/// keeps its values elsewhere.
const C_STACK_SLOTS_MAX: usize = 8000;
/// lua-cmsgpack's words for the slot each value needs.
const VALUE_SLOT: &std::ffi::CStr = c"too many return values at once; use unpack_one or unpack_limit instead.";
const ARRAY_SLOT: &std::ffi::CStr = c"in function mp_decode_to_lua_array";

struct Decoder<'a> {
    lua: &'a Lua,
    bytes: &'a [u8],
    at: usize,
    /// The slots lua-cmsgpack's stack would hold at this point.
    slots: usize,
}

/// A table being filled as its items are decoded.
enum Open {
    Array { table: Table, index: usize, left: usize },
    Map { table: Table, key: Option<Value>, left: usize },
}

fn missing() -> mlua::Error {
    mlua::Error::runtime("Missing bytes in input.")
}

fn bad() -> mlua::Error {
    mlua::Error::runtime("Bad data format in input.")
}

impl Decoder<'_> {
    /// luaL_checkstack(L, 1, what): "stack overflow (what)" when no slot is left.
    fn need_slot(&self, what: &std::ffi::CStr) -> Result<()> {
        if self.slots + 1 > C_STACK_SLOTS_MAX {
            return Err(mlua::Error::runtime(format!("stack overflow ({})", what.to_string_lossy())));
        }
        Ok(())
    }

    /// One whole value, nested tables and all. Iterative, with the tables being filled in a list
    /// of their own: a nesting thousands deep costs no native stack.
    fn value(&mut self) -> Result<Value> {
        let mut open: Vec<Open> = Vec::new();
        loop {
            let mut done = match self.item()? {
                Item::Done(value) => value,
                Item::Array(n) => {
                    // Not sized ahead, as lua-cmsgpack's lua_newtable: an array holding nils
                    // then has the length (#) Redis's has.
                    let table = self.lua.create_table()?;
                    self.slots += 1;
                    self.need_slot(ARRAY_SLOT)?;
                    if n > 0 {
                        open.push(Open::Array { table, index: 1, left: n });
                        self.slots += 1; // the index, pushed before each item
                        continue;
                    }
                    self.slots -= 1;
                    Value::Table(table)
                }
                Item::Map(n) => {
                    let table = self.lua.create_table()?;
                    if n > 0 {
                        self.slots += 1;
                        open.push(Open::Map { table, key: None, left: n });
                        continue;
                    }
                    Value::Table(table)
                }
            };
            // Store what was made in the table it belongs to; a table filled is made in turn.
            loop {
                let filled = match open.last_mut() {
                    None => return Ok(done),
                    Some(Open::Array { table, index, left }) => {
                        table.raw_set(*index, done)?;
                        *index += 1;
                        *left -= 1;
                        self.slots -= 1;
                        if *left > 0 {
                            self.slots += 1;
                            false
                        } else {
                            true
                        }
                    }
                    Some(Open::Map { table, key, left }) => match key.take() {
                        None => {
                            *key = Some(done);
                            self.slots += 1;
                            false
                        }
                        Some(k) => {
                            // lua_settable's refusals, raised inside lua-cmsgpack's C code.
                            match &k {
                                Value::Nil => return Err(bare_error("table index is nil")),
                                Value::Number(n) if n.is_nan() => return Err(bare_error("table index is NaN")),
                                _ => {}
                            }
                            table.raw_set(k, done)?;
                            self.slots -= 1;
                            *left -= 1;
                            *left == 0
                        }
                    },
                };
                if !filled {
                    break;
                }
                let (Some(Open::Array { table, .. }) | Some(Open::Map { table, .. })) = open.pop() else { unreachable!() };
                self.slots -= 1;
                done = Value::Table(table);
            }
        }
    }

    /// The next item: a whole value, or the head of an array or map and its length.
    fn item(&mut self) -> Result<Item> {
        if self.at >= self.bytes.len() {
            return Err(missing());
        }
        self.need_slot(VALUE_SLOT)?;
        let (head, after) = head(self.bytes, self.at).map_err(|fault| match fault {
            Fault::Missing => missing(),
            Fault::Bad => bad(),
        })?;
        let kind = self.bytes[self.at];
        let rest = &self.bytes[self.at + 1..after];
        self.at = after;
        Ok(match head {
            Head::Array(n) => Item::Array(n),
            Head::Map(n) => Item::Map(n),
            Head::Scalar(_) => Item::Done(match scalar(kind, rest) {
                Scalar::Nil => Value::Nil,
                Scalar::Boolean(b) => Value::Boolean(b),
                Scalar::Number(n) => Value::Number(n),
                Scalar::String(text) => Value::String(self.lua.create_string(text)?),
            }),
        })
    }
}

/// What `Decoder::item` read.
enum Item {
    Done(Value),
    Array(usize),
    Map(usize),
}

// ---- the format, shared with cmsgpack_stack.rs ---------------------------------------------------

/// A value's head: a scalar (where it ends), or an array's or map's length (its items follow).
pub(crate) enum Head {
    Scalar(usize),
    Array(usize),
    Map(usize),
}

/// Why a value cannot be read: its bytes run out, or its type byte is none lua-cmsgpack reads.
#[derive(Debug)]
pub(crate) enum Fault {
    Missing,
    Bad,
}

/// The head of the value at `at` and where its items (or the next value) start.
pub(crate) fn head(bytes: &[u8], at: usize) -> std::result::Result<(Head, usize), Fault> {
    let kind = *bytes.get(at).ok_or(Fault::Missing)?;
    let scalar = |bytes_after: usize| {
        let end = at + 1 + bytes_after;
        if end <= bytes.len() { Ok((Head::Scalar(end), end)) } else { Err(Fault::Missing) }
    };
    let length = |width: usize| -> std::result::Result<usize, Fault> {
        let field = bytes.get(at + 1..at + 1 + width).ok_or(Fault::Missing)?;
        Ok(field.iter().fold(0usize, |n, &b| n << 8 | usize::from(b)))
    };
    match kind {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => scalar(0),
        0xa0..=0xbf => scalar(usize::from(kind & 0x1f)),
        0x90..=0x9f => Ok((Head::Array(usize::from(kind & 0x0f)), at + 1)),
        0x80..=0x8f => Ok((Head::Map(usize::from(kind & 0x0f)), at + 1)),
        0xca | 0xce | 0xd2 => scalar(4),
        0xcb | 0xcf | 0xd3 => scalar(8),
        0xcc | 0xd0 => scalar(1),
        0xcd | 0xd1 => scalar(2),
        0xd9..=0xdb => {
            let width = 1 << (kind - 0xd9);
            scalar(width + length(width)?)
        }
        0xdc | 0xdd => {
            let width = 2 << (kind - 0xdc);
            Ok((Head::Array(length(width)?), at + 1 + width))
        }
        0xde | 0xdf => {
            let width = 2 << (kind - 0xde);
            Ok((Head::Map(length(width)?), at + 1 + width))
        }
        _ => Err(Fault::Bad),
    }
}

/// A scalar as lua-cmsgpack makes it: every number a Lua number, a string's bytes as they are.
pub(crate) enum Scalar<'a> {
    Nil,
    Boolean(bool),
    Number(f64),
    String(&'a [u8]),
}

/// The scalar of type byte `kind` (one `head` read as a scalar) whose bytes after the type byte
/// are `rest`.
pub(crate) fn scalar(kind: u8, rest: &[u8]) -> Scalar<'_> {
    let uint = || rest.iter().fold(0u64, |n, &b| n << 8 | u64::from(b));
    Scalar::Number(match kind {
        0x00..=0x7f => f64::from(kind),
        0xe0..=0xff => f64::from(kind as i8),
        0xc0 => return Scalar::Nil,
        0xc2 => return Scalar::Boolean(false),
        0xc3 => return Scalar::Boolean(true),
        0xa0..=0xbf => return Scalar::String(rest),
        0xd9..=0xdb => return Scalar::String(&rest[1 << (kind - 0xd9)..]),
        0xca => f64::from(f32::from_bits(uint() as u32)),
        0xcb => f64::from_bits(uint()),
        0xcc..=0xcf => uint() as f64,
        0xd0 => f64::from(uint() as u8 as i8),
        0xd1 => f64::from(uint() as u16 as i16),
        0xd2 => f64::from(uint() as u32 as i32),
        0xd3 => uint() as i64 as f64,
        _ => unreachable!("a type byte head reads as a scalar"),
    })
}

//! The `struct` library Redis gives scripts (Roberto Ierusalimschy's struct 0.2): binary packing
//! by a format string — `>` `<` byte order (little-endian by default), `!n` alignment (none by
//! default), `b B h H l L T` integers of C's sizes here (1, 2, 8, 8 bytes), `i I` with an
//! optional size (4 by default, at most 32), `f d` floats, `s` a zero-terminated string, `cn` n
//! bytes (`c0`: the whole string when packing, a length read just before when unpacking), `x` a
//! zero byte, and spaces ignored. pack, unpack (values, then the position after them) and size.

use mlua::{Lua, LuaString, MultiValue, Result, Table, Value};

use crate::lua_to_resp::to_integer;
use crate::rust_functions::{self, argument_error};

/// Widest integer an `i`/`I` option may ask for, in bytes.
const INT_BYTES_MAX: usize = 32;
/// Lua's bound on the stack of a C function (LUAI_MAXCSTACK).
const C_STACK_SLOTS_MAX: usize = 8000;
/// Alignment `!` without a number asks for (the largest C alignment here).
const ALIGN_DEFAULT: usize = 8;

fn runtime(message: String) -> mlua::Error {
    mlua::Error::runtime(message)
}

/// A bad argument, worded by Lua with the name the function was called by.
fn arg_error(position: usize, _function: &str, message: &str) -> mlua::Error {
    argument_error(position, message)
}

/// The format's state as it is read: byte order and alignment.
struct Header {
    big_endian: bool,
    align: usize,
}

/// A format string being read.
struct Format<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Format<'_> {
    fn next(&mut self) -> Option<u8> {
        let b = self.bytes.get(self.at).copied()?;
        self.at += 1;
        Some(b)
    }

    /// The number written at this point of the format, or `default` if there is none.
    fn number(&mut self, default: usize) -> Result<usize> {
        if !self.bytes.get(self.at).is_some_and(u8::is_ascii_digit) {
            return Ok(default);
        }
        let mut n: usize = 0;
        while let Some(&d) = self.bytes.get(self.at).filter(|d| d.is_ascii_digit()) {
            n = n.checked_mul(10).and_then(|n| n.checked_add(usize::from(d - b'0'))).filter(|&n| n <= i32::MAX as usize).ok_or_else(|| runtime("integral size overflow".to_string()))?;
            self.at += 1;
        }
        Ok(n)
    }

    /// The size option `opt` takes, reading its number if it has one; 0 for the control options.
    fn size(&mut self, opt: u8) -> Result<usize> {
        Ok(match opt {
            b'b' | b'B' | b'x' => 1,
            b'h' | b'H' => 2,
            b'l' | b'L' | b'T' | b'd' => 8,
            b'f' => 4,
            b'c' => self.number(1)?,
            b'i' | b'I' => {
                let n = self.number(4)?;
                if n > INT_BYTES_MAX {
                    return Err(runtime(format!("integral size {n} is larger than limit of {INT_BYTES_MAX}")));
                }
                n
            }
            _ => 0,
        })
    }

    /// Applies a control option (byte order, alignment, a space); anything else is an error.
    fn control(&mut self, opt: u8, header: &mut Header, function: &str) -> Result<()> {
        match opt {
            b' ' => {}
            b'>' => header.big_endian = true,
            b'<' => header.big_endian = false,
            b'!' => {
                let a = self.number(ALIGN_DEFAULT)?;
                if !a.is_power_of_two() {
                    return Err(runtime(format!("alignment {a} is not a power of 2")));
                }
                header.align = a;
            }
            _ => return Err(arg_error(1, function, &format!("invalid format option '{}'", char::from(opt)))),
        }
        Ok(())
    }
}

/// Padding before an item of `size` at `len`, under the header's alignment.
fn padding(len: usize, header: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(header.align);
    (size - (len & (size - 1))) & (size - 1)
}

/// A number argument, as luaL_checknumber reads it (a numeric string counts).
fn number_arg(lua: &Lua, args: &MultiValue, index: usize, function: &str) -> Result<f64> {
    let value = args.get(index).cloned().unwrap_or(Value::Nil);
    match &value {
        Value::Integer(n) => Ok(*n as f64),
        Value::Number(n) => Ok(*n),
        Value::String(_) => lua.coerce_number(value.clone())?.ok_or_else(|| arg_error(index + 1, function, "number expected, got string")),
        other => Err(arg_error(index + 1, function, &format!("number expected, got {}", other.type_name()))),
    }
}

/// A string argument, as luaL_checklstring reads it (a number counts, as its text).
fn string_arg(lua: &Lua, args: &MultiValue, index: usize, function: &str) -> Result<Vec<u8>> {
    let value = args.get(index).cloned().unwrap_or(Value::Nil);
    match &value {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => Ok(lua.coerce_string(value.clone())?.map(|s| s.as_bytes().to_vec()).unwrap_or_default()),
        Value::Nil if index >= args.len() => Err(arg_error(index + 1, function, "string expected, got no value")),
        other => Err(arg_error(index + 1, function, &format!("string expected, got {}", other.type_name()))),
    }
}

fn put_integer(n: f64, size: usize, big_endian: bool, out: &mut Vec<u8>) {
    // As C's casts: a negative number through a signed 64-bit integer, so its sign extends.
    let mut value: u64 = if n < 0.0 { n as i64 as u64 } else { n as u64 };
    let mut bytes = vec![0u8; size];
    for i in 0..size {
        let at = if big_endian { size - 1 - i } else { i };
        bytes[at] = (value & 0xff) as u8;
        value = value.checked_shr(8).unwrap_or(0);
    }
    out.extend_from_slice(&bytes);
}

fn get_integer(bytes: &[u8], big_endian: bool, signed: bool) -> f64 {
    let size = bytes.len();
    let mut value: u64 = 0;
    for i in 0..size {
        let b = if big_endian { bytes[i] } else { bytes[size - 1 - i] };
        value = value.checked_shl(8).unwrap_or(0) | u64::from(b);
    }
    if !signed {
        return value as f64;
    }
    let bits = (size * 8).min(64);
    if bits > 0 && bits < 64 && value & (1u64 << (bits - 1)) != 0 {
        value |= u64::MAX << bits;
    }
    value as i64 as f64
}

fn pack(lua: &Lua, args: MultiValue) -> Result<LuaString> {
    let format = string_arg(lua, &args, 0, "pack")?;
    let mut fmt = Format { bytes: &format, at: 0 };
    let mut header = Header { big_endian: false, align: 1 };
    let mut out = Vec::new();
    let mut arg = 1;
    while let Some(opt) = fmt.next() {
        let mut size = fmt.size(opt)?;
        out.resize(out.len() + padding(out.len(), &header, opt, size), 0);
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                put_integer(number_arg(lua, &args, arg, "pack")?, size, header.big_endian, &mut out);
                arg += 1;
            }
            b'x' => out.push(0),
            b'f' => {
                let f = number_arg(lua, &args, arg, "pack")? as f32;
                arg += 1;
                out.extend_from_slice(&if header.big_endian { f.to_be_bytes() } else { f.to_le_bytes() });
            }
            b'd' => {
                let d = number_arg(lua, &args, arg, "pack")?;
                arg += 1;
                out.extend_from_slice(&if header.big_endian { d.to_be_bytes() } else { d.to_le_bytes() });
            }
            b'c' | b's' => {
                let s = string_arg(lua, &args, arg, "pack")?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    // struct 0.2 names the argument after the string here.
                    return Err(arg_error(arg + 1, "pack", "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => fmt.control(opt, &mut header, "pack")?,
        }
    }
    lua.create_string(out)
}

/// unpack's results, in a Lua table as they are made.
struct Values {
    table: Table,
    count: usize,
}

impl Values {
    fn push(&mut self, value: Value) -> Result<()> {
        self.count += 1;
        self.table.raw_set(self.count, value)
    }

    fn pop(&mut self) -> Result<Option<Value>> {
        if self.count == 0 {
            return Ok(None);
        }
        let value = self.table.raw_get(self.count)?;
        self.table.raw_set(self.count, Value::Nil)?;
        self.count -= 1;
        Ok(Some(value))
    }
}

fn unpack(lua: &Lua, args: MultiValue) -> Result<MultiValue> {
    let format = string_arg(lua, &args, 0, "unpack")?;
    let data = string_arg(lua, &args, 1, "unpack")?;
    // struct 0.2 reads the offset into a size_t: a negative one is a huge position, past the data.
    let offset = match args.get(2) {
        None | Some(Value::Nil) => 1,
        Some(_) => to_integer(number_arg(lua, &args, 2, "unpack")?) as u64 as usize,
    };
    if offset == 0 {
        return Err(arg_error(3, "unpack", "offset must be 1 or greater"));
    }
    let mut pos = offset - 1;
    let mut fmt = Format { bytes: &format, at: 0 };
    let mut header = Header { big_endian: false, align: 1 };
    // Stored as they are made (thousands held as Rust values would each hold an mlua reference).
    let mut values = Values { table: lua.create_table()?, count: 0 };
    let too_short = || arg_error(2, "unpack", "data string too short");
    while let Some(opt) = fmt.next() {
        let mut size = fmt.size(opt)?;
        pos = pos.saturating_add(padding(pos, &header, opt, size));
        if size > data.len() || pos > data.len() - size {
            return Err(too_short());
        }
        // struct 0.2 keeps its arguments and results on Lua's stack, and makes sure of room for an
        // item and the final position before each option.
        if args.len() + values.count + 2 > C_STACK_SLOTS_MAX {
            return Err(runtime("stack overflow (too many results)".to_string()));
        }
        match opt {
            b'b' | b'B' | b'h' | b'H' | b'l' | b'L' | b'T' | b'i' | b'I' => {
                values.push(Value::Number(get_integer(&data[pos..pos + size], header.big_endian, opt.is_ascii_lowercase())))?;
            }
            b'x' => {}
            b'f' => {
                let raw: [u8; 4] = data[pos..pos + 4].try_into().expect("four bytes");
                let f = if header.big_endian { f32::from_be_bytes(raw) } else { f32::from_le_bytes(raw) };
                values.push(Value::Number(f64::from(f)))?;
            }
            b'd' => {
                let raw: [u8; 8] = data[pos..pos + 8].try_into().expect("eight bytes");
                values.push(Value::Number(if header.big_endian { f64::from_be_bytes(raw) } else { f64::from_le_bytes(raw) }))?;
            }
            b'c' => {
                if size == 0 {
                    // The value before, if Lua reads it as a number, as a size_t: a negative one
                    // is huge, and too long for the data.
                    let previous = values.pop()?.map(|v| lua.coerce_number(v)).transpose()?.flatten();
                    let Some(n) = previous else { return Err(runtime("format 'c0' needs a previous size".to_string())) };
                    size = if n < 0.0 { usize::MAX } else { n as usize };
                    if size > data.len() || pos > data.len() - size {
                        return Err(too_short());
                    }
                }
                values.push(Value::String(lua.create_string(&data[pos..pos + size])?))?;
            }
            b's' => {
                let end = data[pos..].iter().position(|&b| b == 0).ok_or_else(|| runtime("unfinished string in data".to_string()))?;
                values.push(Value::String(lua.create_string(&data[pos..pos + end])?))?;
                size = end + 1;
            }
            _ => fmt.control(opt, &mut header, "unpack")?,
        }
        pos += size;
    }
    values.push(Value::Number((pos + 1) as f64))?;
    Ok(rust_functions::many(values.table, values.count))
}

fn size(lua: &Lua, args: MultiValue) -> Result<f64> {
    let format = string_arg(lua, &args, 0, "size")?;
    let mut fmt = Format { bytes: &format, at: 0 };
    let mut header = Header { big_endian: false, align: 1 };
    let mut pos = 0;
    while let Some(opt) = fmt.next() {
        let size = fmt.size(opt)?;
        pos += padding(pos, &header, opt, size);
        if opt == b's' {
            return Err(arg_error(1, "size", "option 's' has no fixed size"));
        }
        if opt == b'c' && size == 0 {
            return Err(arg_error(1, "size", "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            fmt.control(opt, &mut header, "size")?;
        }
        pos += size;
    }
    Ok(pos as f64)
}

pub fn library(lua: &Lua) -> Result<Table> {
    rust_functions::library(lua, vec![
        ("pack", Box::new(|lua, args| Ok(MultiValue::from_vec(vec![Value::String(pack(lua, args)?)])))),
        ("unpack", Box::new(unpack)),
        ("size", Box::new(|lua, args| Ok(MultiValue::from_vec(vec![Value::Number(size(lua, args)?)])))),
    ])
}

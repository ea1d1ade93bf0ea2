//! `cjson.decode(s)` of plain JSON decoded straight onto Lua's stack: the way the shared `cjson`
//! decodes a document whose strings hold no escapes (BullMQ decodes each job's options so); and
//! `cjson.encode(v)` of plain values read straight off it (BullMQ encodes each job's options).
//!
//! The general decoder (cjson.rs) goes through mlua's values, each string and table held by a
//! reference of its own, and cost ~3× Redis's. This one makes the values with Lua's stack calls
//! and holds nothing else. A first pass checks the document against strict JSON without escapes
//! and within the run's decode_max_depth, and only then are the values made. Whatever it does not
//! accept — an escape, a NUL, a number strict JSON does not write, anything lua-cjson refuses,
//! nesting too deep, an argument that is not one string — goes to the general decoder (the Rust
//! function that is this C function's upvalue, called as rust_functions.rs calls it), which
//! answers with lua-cjson's exact error or values. So both give the same values for what this
//! one takes: its strings are the bytes between the quotes, its numbers exactly what strtod reads.
//!
//! The encoder reads values with Lua's raw stack calls (lua_next, lua_rawgeti), which do not
//! raise, and writes into a buffer kept by the thread; it takes nil, cjson.null, booleans, finite
//! numbers, strings, and tables whose keys are strings or numbers, nested within the run's
//! encode_max_depth, and arrays not excessively sparse. Anything else — a function, a NaN, a
//! sparse array, a key of another type, an argument count other than one — stops it, the stack
//! as it was, and the general encoder answers, with lua-cjson's error or text. Both write the same
//! text for what this one takes: tables are walked in the same order (lua_next), numbers written
//! by the same Settings::write_finite, strings by the same encode_string.
//!
//! Making a value can raise (out of memory), which leaves by longjmp: the functions here hold only
//! plain numbers and borrowed bytes across Lua calls, nothing with a destructor.

use std::cell::Cell;
use std::ffi::c_int;

use mlua::ffi;

use crate::cjson::{encode_string, run_settings, Settings};

thread_local! {
    /// What encode writes into, kept from call to call (as lua-cjson keeps its buffer): the text
    /// is pushed from it once it is back here, so nothing the frame owns is alive when pushing
    /// raises.
    static ENCODED: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Bytes of the kept buffer past which it is not kept (one large encode does not hold its room).
const KEPT_BUFFER_BYTES_MAX: usize = 64 * 1024;

pub unsafe extern "C-unwind" fn encode(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) == 1 {
        let settings = run_settings();
        let mut out = ENCODED.take();
        out.clear();
        let encoder = Encoder { state, settings, max_depth: settings.encode_depth_max() };
        let written = encoder.value(1, &mut out, 0).is_some();
        ffi::lua_settop(state, 1);
        if out.capacity() > KEPT_BUFFER_BYTES_MAX {
            out.shrink_to(KEPT_BUFFER_BYTES_MAX);
        }
        let (text, length) = (out.as_ptr(), out.len());
        ENCODED.set(out);
        if written {
            // SAFETY: the buffer is the thread's again, untouched until the next encode.
            ffi::lua_pushlstring(state, text.cast(), length);
            return 1;
        }
    }
    crate::rust_functions::call(state)
}

/// Walks values on the stack, writing them as the general encoder writes them; None, at the
/// first thing it leaves to the general encoder (the caller puts the stack back).
struct Encoder {
    state: *mut ffi::lua_State,
    settings: Settings,
    max_depth: i32,
}

impl Encoder {
    /// Writes the value at stack index `index` (positive), at nesting `depth`.
    unsafe fn value(&self, index: c_int, out: &mut Vec<u8>, depth: i32) -> Option<()> {
        let state = self.state;
        match ffi::lua_type(state, index) {
            ffi::LUA_TNIL => out.extend_from_slice(b"null"),
            ffi::LUA_TLIGHTUSERDATA if ffi::lua_touserdata(state, index).is_null() => out.extend_from_slice(b"null"),
            ffi::LUA_TBOOLEAN => out.extend_from_slice(if ffi::lua_toboolean(state, index) != 0 { b"true" } else { b"false" }),
            ffi::LUA_TNUMBER => self.number(ffi::lua_tonumber(state, index), out)?,
            ffi::LUA_TSTRING => {
                let mut length = 0;
                let text = ffi::lua_tolstring(state, index, &mut length);
                encode_string(std::slice::from_raw_parts(text.cast::<u8>(), length), out);
            }
            ffi::LUA_TTABLE => {
                let depth = depth + 1;
                // Room for a key, a value and an item on top of what is there.
                if depth > self.max_depth || ffi::lua_checkstack(state, 3) == 0 {
                    return None;
                }
                match self.array_length(index)? {
                    Some(length) => self.array(index, length, out, depth)?,
                    None => self.object(index, out, depth)?,
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn number(&self, n: f64, out: &mut Vec<u8>) -> Option<()> {
        if !n.is_finite() {
            return None;
        }
        self.settings.write_finite(n, out);
        Some(())
    }

    /// The table's length as an array (Some(None): it is an object); None for an array too sparse.
    unsafe fn array_length(&self, index: c_int) -> Option<Option<usize>> {
        let state = self.state;
        let (mut max, mut items) = (0f64, 0f64);
        let mut object = false;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, index) != 0 {
            ffi::lua_settop(state, -2);
            let k = ffi::lua_tonumber(state, -1);
            if ffi::lua_type(state, -1) != ffi::LUA_TNUMBER || k.floor() != k || k < 1.0 {
                object = true;
                ffi::lua_settop(state, -2);
                break;
            }
            max = max.max(k);
            items += 1.0;
        }
        if object {
            return Some(None);
        }
        if self.settings.excessively_sparse(max, items) {
            return None;
        }
        Some((max > 0.0).then_some(max as usize))
    }

    unsafe fn array(&self, index: c_int, length: usize, out: &mut Vec<u8>, depth: i32) -> Option<()> {
        let state = self.state;
        out.push(b'[');
        for item in 1..=length {
            if item > 1 {
                out.push(b',');
            }
            ffi::lua_rawgeti(state, index, item as ffi::lua_Integer);
            self.value(ffi::lua_gettop(state), out, depth)?;
            ffi::lua_settop(state, -2);
        }
        out.push(b']');
        Some(())
    }

    unsafe fn object(&self, index: c_int, out: &mut Vec<u8>, depth: i32) -> Option<()> {
        let state = self.state;
        out.push(b'{');
        let mut first = true;
        ffi::lua_pushnil(state);
        while ffi::lua_next(state, index) != 0 {
            if !first {
                out.push(b',');
            }
            first = false;
            let top = ffi::lua_gettop(state);
            match ffi::lua_type(state, top - 1) {
                ffi::LUA_TSTRING => {
                    let mut length = 0;
                    let text = ffi::lua_tolstring(state, top - 1, &mut length);
                    encode_string(std::slice::from_raw_parts(text.cast::<u8>(), length), out);
                }
                ffi::LUA_TNUMBER => {
                    out.push(b'"');
                    self.number(ffi::lua_tonumber(state, top - 1), out)?;
                    out.push(b'"');
                }
                _ => return None,
            }
            out.push(b':');
            self.value(top, out, depth)?;
            ffi::lua_settop(state, -2);
        }
        out.push(b'}');
        Some(())
    }
}

pub unsafe extern "C-unwind" fn decode(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) == 1 && ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
        let mut length = 0;
        let text = ffi::lua_tolstring(state, 1, &mut length);
        let bytes = std::slice::from_raw_parts(text.cast::<u8>(), length);
        let max_depth = run_settings().decode_depth_max();
        if let Some(depth) = depth_of(bytes, max_depth as usize) {
            // A table and a key for each level, and the value being made.
            if ffi::lua_checkstack(state, (2 * depth + 2) as c_int) != 0 {
                let mut at = skip_space(bytes, 0);
                at = push_value(state, bytes, at);
                debug_assert_eq!(skip_space(bytes, at), bytes.len());
                return 1;
            }
        }
    }
    // In this frame, so that an error is positioned as the general decoder's own are.
    crate::rust_functions::call(state)
}

/// How deep the one value `bytes` holds nests, if it is plain JSON this decoder takes and nests
/// no deeper than `max_depth`.
fn depth_of(bytes: &[u8], max_depth: usize) -> Option<usize> {
    let mut deepest = 0;
    let at = skip_value(bytes, skip_space(bytes, 0), 1, max_depth, &mut deepest)?;
    (skip_space(bytes, at) == bytes.len()).then_some(deepest)
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Where the value at `at` ends, checking it, a table in it at nesting `level`.
fn skip_value(bytes: &[u8], at: usize, level: usize, max_depth: usize, deepest: &mut usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'-' | b'0'..=b'9' => number_end(bytes, at),
        b't' => literal(bytes, at, b"true"),
        b'f' => literal(bytes, at, b"false"),
        b'n' => literal(bytes, at, b"null"),
        open @ (b'[' | b'{') => {
            if level > max_depth {
                return None;
            }
            *deepest = (*deepest).max(level);
            let close = if open == b'[' { b']' } else { b'}' };
            let mut at = skip_space(bytes, at + 1);
            if bytes.get(at) == Some(&close) {
                return Some(at + 1);
            }
            loop {
                if open == b'{' {
                    at = string_end(bytes, at)?;
                    at = skip_space(bytes, at);
                    if bytes.get(at) != Some(&b':') {
                        return None;
                    }
                    at = skip_space(bytes, at + 1);
                }
                at = skip_space(bytes, skip_value(bytes, at, level + 1, max_depth, deepest)?);
                match bytes.get(at) {
                    Some(b',') => at = skip_space(bytes, at + 1),
                    Some(&c) if c == close => return Some(at + 1),
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
    bytes[at..].starts_with(word).then_some(at + word.len())
}

/// Where the string at `at` (its opening quote) ends, past its closing quote, if it holds no
/// escape and no NUL.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let length = bytes[at + 1..].iter().position(|&b| matches!(b, b'"' | b'\\' | 0))?;
    (bytes[at + 1 + length] == b'"').then_some(at + length + 2)
}

/// Where the number at `at` ends, if it is written as strict JSON writes numbers. That grammar is
/// exactly what strtod reads of such text (no hex, inf or nan can start this way, and what may not
/// follow is refused), so the general decoder would read the same number: checked once here,
/// converted once by push_value.
fn number_end(bytes: &[u8], at: usize) -> Option<usize> {
    let digits = |mut i: usize| {
        let from = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i > from).then_some(i)
    };
    let mut end = at + usize::from(bytes[at] == b'-');
    end = match bytes.get(end) {
        Some(b'0') => end + 1,
        Some(b'1'..=b'9') => digits(end)?,
        _ => return None,
    };
    if bytes.get(end) == Some(&b'.') {
        end = digits(end + 1)?;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        end = digits(end + 1 + usize::from(matches!(bytes.get(end + 1), Some(b'+' | b'-'))))?;
    }
    // Digits or letters right after it are lua-cjson's to read (strtod would go on, or stop).
    if bytes.get(end).is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'.') {
        return None;
    }
    Some(end)
}

/// Pushes the value at `at` (which depth_of accepted) and returns where what follows it starts.
unsafe fn push_value(state: *mut ffi::lua_State, bytes: &[u8], at: usize) -> usize {
    match bytes[at] {
        b'"' => {
            let end = string_end(bytes, at).expect("checked by depth_of");
            ffi::lua_pushlstring(state, bytes[at + 1..].as_ptr().cast(), end - at - 2);
            end
        }
        b't' => {
            ffi::lua_pushboolean(state, 1);
            at + 4
        }
        b'f' => {
            ffi::lua_pushboolean(state, 0);
            at + 5
        }
        b'n' => {
            // cjson.null: a light userdata holding NULL.
            ffi::lua_pushlightuserdata(state, std::ptr::null_mut());
            at + 4
        }
        b'[' => {
            ffi::lua_createtable(state, 0, 0);
            let mut at = skip_space(bytes, at + 1);
            let mut index = 1;
            while bytes[at] != b']' {
                at = skip_space(bytes, push_value(state, bytes, at));
                ffi::lua_rawseti(state, -2, index);
                index += 1;
                if bytes[at] == b',' {
                    at = skip_space(bytes, at + 1);
                }
            }
            at + 1
        }
        b'{' => {
            ffi::lua_createtable(state, 0, 0);
            let mut at = skip_space(bytes, at + 1);
            while bytes[at] != b'}' {
                at = skip_space(bytes, push_value(state, bytes, at));
                // The colon.
                at = skip_space(bytes, at + 1);
                at = skip_space(bytes, push_value(state, bytes, at));
                ffi::lua_rawset(state, -3);
                if bytes[at] == b',' {
                    at = skip_space(bytes, at + 1);
                }
            }
            at + 1
        }
        _ => {
            let end = number_end(bytes, at).expect("checked by depth_of");
            // ASCII digits, sign, point and exponent only (number_end): valid UTF-8 and a valid f64.
            let value: f64 = std::str::from_utf8(&bytes[at..end]).expect("ASCII").parse().expect("a JSON number");
            ffi::lua_pushnumber(state, value);
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use mlua::{Function, Lua};

    use super::depth_of;
    use crate::fast_path_tests::{Random, OUTCOME};
    use crate::rust_functions::general_of;

    /// Appends a JSON value, mostly plain, now and then with what only the general decoder takes
    /// (escapes, non-JSON numbers) or refuses; nested at most `depth` more levels.
    fn value(r: &mut Random, depth: u32, out: &mut String) {
        let space = |r: &mut Random, out: &mut String| out.push_str(r.pick(&["", "", " ", "\n\t ", "\r"]));
        space(r, out);
        match r.below(if depth == 0 { 4 } else { 6 }) {
            0 => out.push_str(r.pick(&["0", "-0", "12", "-3.25", "1e5", "2E-3", "6.02e+23", "0.5", "1e400", "01", "0x1f", "NaN", "-Infinity", "1.", ".5", "+1", "- 1"])),
            1 => {
                let text = r.pick(&["", "job", "a b", "caf\u{e9}", "\u{1}", "x\\\"y", "\\u00e9", "\\n", "\\ud83d\\ude00", "\\x"]);
                out.push('"');
                out.push_str(text);
                out.push('"');
            }
            2 => out.push_str(r.pick(&["true", "false", "null", "nul", "truex"])),
            3 => {
                let n = r.below(4);
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push(',');
                    }
                    value(r, depth.saturating_sub(1), out);
                }
                out.push_str(r.pick(&["]", "]", "]", ",]"]));
            }
            _ => {
                let n = r.below(4);
                out.push('{');
                for i in 0..n {
                    if i > 0 {
                        out.push(',');
                    }
                    space(r, out);
                    out.push_str(r.pick(&["\"k\"", "\"name\"", "\"\"", "\"k\"", "k", "1"]));
                    space(r, out);
                    out.push(':');
                    value(r, depth.saturating_sub(1), out);
                }
                out.push('}');
            }
        }
        space(r, out);
    }

    #[test]
    fn decode_on_the_stack_answers_as_the_general_decoder() {
        let lua = Lua::new();
        let library = crate::cjson::library(&lua).unwrap();
        let fast: Function = library.get("decode").unwrap();
        let general = general_of(&lua, &fast);
        let null: mlua::Value = library.get("null").unwrap();
        let outcome: Function = lua.load(OUTCOME).call(null).unwrap();
        let mut r = Random(0x2545_f491_4f6c_dd1d);
        let mut taken = 0;
        for case in 0..20_000 {
            let mut text = String::new();
            value(&mut r, 4, &mut text);
            let mut bytes = text.into_bytes();
            let extra = r.pick(&["x", "\0", " ", "]", "1"]).as_bytes()[0];
            r.damage(&mut bytes, extra);
            taken += usize::from(depth_of(&bytes, 1000).is_some());
            let s = lua.create_string(&bytes).unwrap();
            let (ours, theirs): (mlua::LuaString, mlua::LuaString) = (outcome.call((&fast, &s)).unwrap(), outcome.call((&general, &s)).unwrap());
            assert_eq!(ours.as_bytes(), theirs.as_bytes(), "case {case}: {:?}", String::from_utf8_lossy(&bytes));
        }
        assert!(taken > 3_000 && taken < 19_000, "{taken} of 20,000 decoded on the stack");
        // Not one string: a number, nothing, two arguments — the general decoder's answers.
        for args in ["1", "", "'[1]', 2"] {
            let args = if args.is_empty() { String::new() } else { format!(", {args}") };
            let call = |f: &Function| -> mlua::LuaString { lua.load(format!("local outcome, f = ... return outcome(f{args})")).call((&outcome, f)).unwrap() };
            assert_eq!(call(&fast).as_bytes(), call(&general).as_bytes(), "{args}");
        }
    }

    /// Random Lua values — plain ones, and now and then what only the general encoder answers (a
    /// function, NaN, a sparse array, a boolean key) — encoded by both; the differences found.
    const ENCODE_BOTH: &str = r#"
        local fast, general, null = ...
        math.randomseed(7)
        local numbers = {0, -0.0, 1, -3, 0.1, 1e300, 1/3, 2^53, 123456789012345, -2.5e-7, 1/0, 0/0}
        local strings = {'', 'a', 'x"y', 'a/b', '\n\t', '\1', 'caf\233', '\127', 'k1', 'job'}
        local keys = {'a', 'b', '', 'k1', 1.5, 2, -1, 0}
        local function gen(depth)
          local r = math.random(1, depth > 0 and 11 or 7)
          if r == 1 then return nil
          elseif r == 2 then return null
          elseif r == 3 then return math.random(0, 1) == 1
          elseif r == 4 then return numbers[math.random(#numbers - (math.random(8) == 1 and 0 or 2))]
          elseif r <= 6 then return strings[math.random(#strings)]
          elseif r == 7 then return math.random(40) == 1 and print or 'x'
          elseif r <= 9 then
            local t = {}
            for i = 1, math.random(0, 5) do t[i] = gen(depth - 1) end
            if math.random(6) == 1 then t[math.random(1, 30)] = 1 end
            return t
          else
            local t = {}
            for i = 1, math.random(0, 4) do t[keys[math.random(#keys)]] = gen(depth - 1) end
            if math.random(30) == 1 then t[true] = 1 end
            return t
          end
        end
        local differences, plain = {}, 0
        for case = 1, 20000 do
          local v = gen(4)
          local ok, ours = pcall(fast, v)
          local same, theirs = pcall(general, v)
          if ok then plain = plain + 1 end
          if ok ~= same or ours ~= theirs then
            differences[#differences + 1] = case .. ': ' .. tostring(ours) .. ' / ' .. tostring(theirs)
          end
        end
        return table.concat(differences, '\n'), plain
    "#;

    #[test]
    fn encode_off_the_stack_answers_as_the_general_encoder() {
        let lua = Lua::new();
        let library = crate::cjson::library(&lua).unwrap();
        let fast: Function = library.get("encode").unwrap();
        let general = general_of(&lua, &fast);
        let null: mlua::Value = library.get("null").unwrap();
        let (differences, encoded): (String, u32) = lua.load(ENCODE_BOTH).call((fast, general, null)).unwrap();
        assert_eq!(differences, "");
        // Most values encode; some (a function, NaN, a sparse array, a boolean key) are errors.
        assert!(encoded > 5_000 && encoded < 19_900, "{encoded} of 20,000 encoded");
    }

    #[test]
    fn the_first_pass_takes_plain_json_within_the_depth_only() {
        assert_eq!(depth_of(br#" {"a": [1, -2.5e3, "x", true, false, null, {}], "": []} "#, 1000), Some(3));
        assert_eq!(depth_of(b"7", 1000), Some(0));
        for refused in [&br#""a\"b""#[..], b"01", b"1.", b"NaN", b"[1,]", b"{\"a\"}", b"[1] 2", b"\"a\0\"", b"", b"truex", b"{a:1}"] {
            assert_eq!(depth_of(refused, 1000), None, "{}", String::from_utf8_lossy(refused));
        }
        // At the depth allowed, and one past it.
        assert_eq!(depth_of(b"[[[]]]", 3), Some(3));
        assert_eq!(depth_of(b"[[[]]]", 2), None);
    }
}

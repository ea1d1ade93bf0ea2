//! `cjson.decode(s)` of plain JSON decoded straight onto Lua's stack: the way the shared `cjson`
//! decodes a document whose strings hold no escapes (BullMQ decodes each job's options so).
//!
//! The general decoder (cjson.rs) goes through mlua's values, each string and table held by a
//! reference of its own, and cost ~3× Redis's. This one makes the values with Lua's stack calls
//! and holds nothing else. A first pass checks the document against strict JSON without escapes
//! and within the run's decode_max_depth, and only then are the values made. Whatever it does not
//! accept — an escape, a NUL, a number strict JSON does not write, anything lua-cjson refuses,
//! nesting too deep, an argument that is not one string — goes to the general decoder (the Rust
//! function that is this C function's upvalue, called as rust_functions.rs calls it), which
//! answers with lua-cjson's exact error or values. So both give the same values for what this
//! one takes: its strings are the bytes between the quotes, its numbers read by the same strtod.
//!
//! Making a value can raise (out of memory), which leaves by longjmp: the functions here hold only
//! plain numbers and borrowed bytes across Lua calls, nothing with a destructor.

use std::cell::Cell;
use std::ffi::c_int;

use mlua::ffi;

use crate::cjson::{strtod, NESTING_MAX};
use crate::run::CURRENT_RUN;

pub unsafe extern "C-unwind" fn decode(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) == 1 && ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
        let mut length = 0;
        let text = ffi::lua_tolstring(state, 1, &mut length);
        let bytes = std::slice::from_raw_parts(text.cast::<u8>(), length);
        let run = CURRENT_RUN.with(Cell::get);
        // SAFETY: CURRENT_RUN points at the Run of the script running now, or is null.
        let max_depth = unsafe { run.as_ref() }.map(|run| run.cjson.get().decode_max_depth).unwrap_or(NESTING_MAX).min(NESTING_MAX);
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
        b'-' | b'0'..=b'9' => number(bytes, at).map(|(_, end)| end),
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

/// The number at `at` if it is written as strict JSON writes numbers, and where it ends.
fn number(bytes: &[u8], at: usize) -> Option<(f64, usize)> {
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
    let (value, length) = strtod(&bytes[at..])?;
    (length == end - at).then_some((value, end))
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
            let (value, end) = number(bytes, at).expect("checked by depth_of");
            ffi::lua_pushnumber(state, value);
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use mlua::{ffi, Function, Lua};

    use super::depth_of;

    /// A small deterministic generator (xorshift64*), so a failure repeats.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
            words[self.below(words.len() as u64) as usize]
        }
    }

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

    /// What a call of `f` with the arguments gives: whether it succeeded, and each value or the
    /// error, tables by their length and their pairs (sorted), cjson.null by name.
    const OUTCOME: &str = r#"
        local null = ...
        local function dump(v)
          if v == null then return 'null' end
          if type(v) == 'number' then return string.format('%.17g', v) end
          if type(v) ~= 'table' then return type(v) .. ':' .. tostring(v) end
          local parts = {}
          for k, x in pairs(v) do parts[#parts + 1] = dump(k) .. '=' .. dump(x) end
          table.sort(parts)
          return '{#' .. #v .. ',' .. table.concat(parts, ',') .. '}'
        end
        local function collect(...)
          local out = {tostring(select('#', ...))}
          for i = 1, select('#', ...) do out[#out + 1] = dump((select(i, ...))) end
          return table.concat(out, '|')
        end
        return function(f, ...) return collect(pcall(f, ...)) end
    "#;

    #[test]
    fn decode_on_the_stack_answers_as_the_general_decoder() {
        let lua = Lua::new();
        let library = crate::cjson::library(&lua).unwrap();
        let fast: Function = library.get("decode").unwrap();
        // SAFETY: the general decode, as the library had it: its Rust function (the closure's
        // upvalue) behind rust_functions.rs's C function.
        let general: Function = unsafe {
            lua.exec_raw(&fast, |state| {
                ffi::lua_getupvalue(state, -1, 1);
                ffi::lua_remove(state, -2);
                ffi::lua_pushcclosure(state, crate::rust_functions::call, 1);
            })
        }
        .unwrap();
        let null: mlua::Value = library.get("null").unwrap();
        let outcome: Function = lua.load(OUTCOME).call(null).unwrap();
        let mut r = Random(0x2545_f491_4f6c_dd1d);
        let mut taken = 0;
        for case in 0..20_000 {
            let mut text = String::new();
            value(&mut r, 4, &mut text);
            let mut bytes = text.into_bytes();
            match r.below(8) {
                0 if !bytes.is_empty() => bytes.truncate(r.below(bytes.len() as u64) as usize),
                1 if !bytes.is_empty() => {
                    let at = r.below(bytes.len() as u64) as usize;
                    bytes[at] = r.next() as u8;
                }
                2 => bytes.push(r.pick(&["x", "\0", " ", "]", "1"]).as_bytes()[0]),
                _ => {}
            }
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

//! `cmsgpack.unpack(s)` decoded straight onto Lua's stack, as lua-cmsgpack decodes: the way a
//! whole, well-formed string is unpacked (BullMQ unpacks each job's options so, on every add).
//!
//! The general decoder (cmsgpack.rs) goes through mlua's values, each string and table held by a
//! reference of its own, and cost ~7× Redis's on a job's options. This one makes the values with
//! Lua's stack calls and holds nothing else: a first pass over the bytes checks that the string is
//! whole and well-formed and finds how deep it nests and how many values it holds; only then are
//! the values made. Whatever the first pass does not accept — bytes missing or of no type, a map
//! key that is nil or NaN, more values or nesting than the stack is sure to hold, an argument that
//! is not a string — goes to the general decoder (the Rust function that is this C function's
//! upvalue, called as rust_functions.rs calls it), which answers it with lua-cmsgpack's exact
//! error or results. So both give the same values for what this one takes.
//!
//! Making a value can raise (out of memory), which leaves by longjmp: the functions here hold only
//! plain numbers and borrowed bytes across Lua calls, nothing with a destructor.

use std::ffi::c_int;

use mlua::ffi;

use crate::cmsgpack::{head, scalar, Head, Scalar};

/// Stack slots this decoder takes at most, counting two per level of nesting (a table and a key)
/// and one per value returned; past it, the general decoder (whose limit is Lua's, 8,000 slots)
/// decides. Well under that limit, so that both succeed alike where this one runs.
const STACK_SLOTS_MAX: usize = 7_000;

/// What the first pass found of a string it accepts.
struct Shape {
    values: usize,
    depth: usize,
}

pub unsafe extern "C-unwind" fn unpack(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
        let mut length = 0;
        let text = ffi::lua_tolstring(state, 1, &mut length);
        let bytes = std::slice::from_raw_parts(text.cast::<u8>(), length);
        if let Some(shape) = shape_of(bytes) {
            let slots = shape.values + 2 * shape.depth + 2;
            if slots <= STACK_SLOTS_MAX && ffi::lua_checkstack(state, slots as c_int) != 0 {
                // Only the string stays below the values, as in lua-cmsgpack.
                ffi::lua_settop(state, 1);
                let mut at = 0;
                while at < bytes.len() {
                    at = push_value(state, bytes, at);
                }
                return shape.values as c_int;
            }
        }
    }
    // In this frame, so that an error is positioned at the script's line, as the general
    // unpack's own are.
    crate::rust_functions::call(state)
}

/// The values and nesting of `bytes` if it is a run of whole values this decoder takes.
fn shape_of(bytes: &[u8]) -> Option<Shape> {
    let mut shape = Shape { values: 0, depth: 0 };
    let mut at = 0;
    while at < bytes.len() {
        at = skip_value(bytes, at, 1, &mut shape.depth)?;
        shape.values += 1;
        if shape.values > STACK_SLOTS_MAX {
            return None;
        }
    }
    Some(shape)
}

/// Where the value at `at` ends, checking it, at nesting `level`; the deepest level seen goes to
/// `deepest`. None for anything the general decoder should answer.
fn skip_value(bytes: &[u8], at: usize, level: usize, deepest: &mut usize) -> Option<usize> {
    if level > STACK_SLOTS_MAX / 2 {
        return None;
    }
    *deepest = (*deepest).max(level);
    let (head, after) = head(bytes, at).ok()?;
    match head {
        Head::Scalar(end) => Some(end),
        Head::Array(n) => {
            let mut at = after;
            for _ in 0..n {
                at = skip_value(bytes, at, level + 1, deepest)?;
            }
            Some(at)
        }
        Head::Map(n) => {
            let mut at = after;
            for _ in 0..n {
                // lua_settable refuses a nil or NaN key: the general decoder raises it.
                if matches!(bytes.get(at), Some(0xc0)) || is_nan_at(bytes, at) {
                    return None;
                }
                at = skip_value(bytes, at, level + 1, deepest)?;
                at = skip_value(bytes, at, level + 1, deepest)?;
            }
            Some(at)
        }
    }
}

/// Whether the value at `at` is a float32 or float64 NaN.
fn is_nan_at(bytes: &[u8], at: usize) -> bool {
    match bytes.get(at) {
        Some(0xca) => bytes.get(at + 1..at + 5).is_some_and(|b| f32::from_be_bytes(b.try_into().unwrap()).is_nan()),
        Some(0xcb) => bytes.get(at + 1..at + 9).is_some_and(|b| f64::from_be_bytes(b.try_into().unwrap()).is_nan()),
        _ => false,
    }
}

/// Pushes the value at `at` (which shape_of accepted) and returns where the next starts.
unsafe fn push_value(state: *mut ffi::lua_State, bytes: &[u8], at: usize) -> usize {
    let (head, after) = head(bytes, at).expect("checked by shape_of");
    match head {
        Head::Scalar(end) => {
            push_scalar(state, bytes[at], &bytes[at + 1..end]);
            end
        }
        Head::Array(n) => {
            ffi::lua_createtable(state, 0, 0);
            let mut at = after;
            for index in 1..=n {
                at = push_value(state, bytes, at);
                ffi::lua_rawseti(state, -2, index as ffi::lua_Integer);
            }
            at
        }
        Head::Map(n) => {
            ffi::lua_createtable(state, 0, 0);
            let mut at = after;
            for _ in 0..n {
                at = push_value(state, bytes, at);
                at = push_value(state, bytes, at);
                ffi::lua_rawset(state, -3);
            }
            at
        }
    }
}

/// Pushes the scalar of type byte `kind` whose bytes after the type byte are `rest`.
unsafe fn push_scalar(state: *mut ffi::lua_State, kind: u8, rest: &[u8]) {
    match scalar(kind, rest) {
        Scalar::Nil => ffi::lua_pushnil(state),
        Scalar::Boolean(b) => ffi::lua_pushboolean(state, c_int::from(b)),
        Scalar::Number(n) => ffi::lua_pushnumber(state, n),
        Scalar::String(text) => {
            ffi::lua_pushlstring(state, text.as_ptr().cast(), text.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use mlua::{Function, Lua};

    use super::shape_of;
    use crate::fast_path_tests::{Random, OUTCOME};
    use crate::rust_functions::general_of;

    /// Appends one msgpack value of every kind lua-cmsgpack reads (and now and then a nil or NaN
    /// map key), nested at most `depth` more levels.
    fn value(r: &mut Random, depth: u32, out: &mut Vec<u8>) {
        let kinds = if depth == 0 { 12 } else { 16 };
        match r.below(kinds) {
            0 => out.push(r.below(0x80) as u8),
            1 => out.push(0xe0 | r.below(0x20) as u8),
            2 => out.push([0xc0, 0xc2, 0xc3][r.below(3) as usize]),
            3 => {
                let kind = [0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3][r.below(8) as usize];
                out.push(kind);
                let width = 1 << ((kind & 0x03) as usize);
                out.extend_from_slice(&r.next().to_be_bytes()[8 - width..]);
            }
            4 => {
                out.push(0xca);
                let bits = if r.below(8) == 0 { f32::NAN.to_bits() } else { r.next() as u32 };
                out.extend_from_slice(&bits.to_be_bytes());
            }
            5 => {
                out.push(0xcb);
                let bits = if r.below(8) == 0 { f64::NAN.to_bits() } else { (r.below(1000) as f64 / 7.0).to_bits() };
                out.extend_from_slice(&bits.to_be_bytes());
            }
            6..=8 => {
                let n = r.below(40) as usize;
                if n < 32 && r.below(2) == 0 {
                    out.push(0xa0 | n as u8);
                } else if r.below(2) == 0 {
                    out.extend_from_slice(&[0xd9, n as u8]);
                } else {
                    out.extend_from_slice(&[0xda, 0, n as u8]);
                }
                out.extend((0..n).map(|_| r.next() as u8));
            }
            9..=11 => out.push(r.next() as u8),
            12 | 13 => {
                let n = r.below(6);
                if r.below(2) == 0 { out.push(0x90 | n as u8) } else { out.extend_from_slice(&[0xdc, 0, n as u8]) }
                (0..n).for_each(|_| value(r, depth - 1, out));
            }
            _ => {
                let n = r.below(5);
                if r.below(2) == 0 { out.push(0x80 | n as u8) } else { out.extend_from_slice(&[0xde, 0, n as u8]) }
                for _ in 0..n {
                    value(r, 0, out);
                    value(r, depth - 1, out);
                }
            }
        }
    }

    #[test]
    fn unpack_on_the_stack_answers_as_the_general_decoder() {
        let lua = Lua::new();
        let library = crate::cmsgpack::library(&lua).unwrap();
        let fast: Function = library.get("unpack").unwrap();
        let general = general_of(&lua, &fast);
        let outcome: Function = lua.load(OUTCOME).eval().unwrap();
        let mut r = Random(0x9e37_79b9_7f4a_7c15);
        let mut taken = 0;
        for case in 0..20_000 {
            let mut bytes = Vec::new();
            for _ in 0..=r.below(3) {
                value(&mut r, 4, &mut bytes);
            }
            let extra = r.next() as u8;
            r.damage(&mut bytes, extra);
            taken += usize::from(shape_of(&bytes).is_some());
            let s = lua.create_string(&bytes).unwrap();
            let (ours, theirs): (mlua::LuaString, mlua::LuaString) = (outcome.call((&fast, &s)).unwrap(), outcome.call((&general, &s)).unwrap());
            assert_eq!(ours.as_bytes(), theirs.as_bytes(), "case {case}: {bytes:02x?}");
        }
        // Most cases take the stack's way, some the general decoder's.
        assert!(taken > 5_000 && taken < 19_000, "{taken} of 20,000 decoded on the stack");
        // A number (luaL_checklstring takes it as its text) and a nil: the general decoder's answers.
        for argument in [mlua::Value::Number(1.0), mlua::Value::Nil] {
            let (ours, theirs): (mlua::LuaString, mlua::LuaString) = (outcome.call((&fast, argument.clone())).unwrap(), outcome.call((&general, argument)).unwrap());
            assert_eq!(ours.as_bytes(), theirs.as_bytes());
        }
    }

    #[test]
    fn the_first_pass_takes_whole_values_only() {
        // Two values: a fixmap of one pair, then a fixarray of a string and a nested array.
        let shape = shape_of(&[0x81, 0xa1, b'a', 0x01, 0x92, 0xa0, 0x91, 0xc3]).unwrap();
        assert_eq!((shape.values, shape.depth), (2, 3));
        assert!(shape_of(&[]).is_some_and(|s| s.values == 0));
        // Cut short, a type lua-cmsgpack does not read, a nil key, a NaN key: the general decoder's.
        assert!(shape_of(&[0x92, 0x01]).is_none());
        assert!(shape_of(&[0xa3, b'a']).is_none());
        assert!(shape_of(&[0xc4, 0x00]).is_none());
        assert!(shape_of(&[0x81, 0xc0, 0x01]).is_none());
        assert!(shape_of(&[0x81, 0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0, 0x01]).is_none());
        // Nesting past what the stack is sure to hold: at the bound taken, one past it not.
        let depth_max = super::STACK_SLOTS_MAX / 2;
        let mut nested = vec![0x91; depth_max - 1];
        nested.push(0xc0);
        assert!(shape_of(&nested).is_some_and(|s| s.depth == depth_max));
        nested.insert(0, 0x91);
        assert!(shape_of(&nested).is_none());
    }
}

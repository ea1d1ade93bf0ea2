//! The `bit` library Redis gives scripts (LuaBitOp 1.0.2): bitwise operations on numbers taken as
//! 32-bit integers, results signed. Raw Lua C functions, as LuaBitOp's are: each reads its
//! arguments as LuaBitOp does (right to left for band, bor and bxor, so the last bad one is
//! named), with Lua's "number expected" for anything that is not a number.

use std::ffi::c_int;

use mlua::{ffi, Lua, Table};

/// 2^52 + 2^51: added to a double, it leaves the number, rounded to an integer, in the low 32
/// bits of its representation (LuaBitOp's normalisation, kept as it is for arguments past 2^51).
const NORMALISER: f64 = 6_755_399_441_055_744.0;

/// `n` as LuaBitOp normalises it: the low 32 bits of `n + 2^52 + 2^51`.
pub fn to_bit(n: f64) -> u32 {
    (n + NORMALISER).to_bits() as u32
}

/// LuaBitOp's barg: argument `index` normalised; a type error for one that is not a number.
unsafe fn argument(state: *mut ffi::lua_State, index: c_int) -> u32 {
    let bits = to_bit(ffi::lua_tonumber(state, index));
    if bits == 0 && ffi::lua_isnumber(state, index) == 0 {
        ffi::luaL_typerror(state, index, c"number".as_ptr());
    }
    bits
}

unsafe fn push(state: *mut ffi::lua_State, bits: u32) -> c_int {
    ffi::lua_pushnumber(state, f64::from(bits as i32));
    1
}

/// `bit.tohex(x [, n])`: the low `|n|` hex digits of x (8 by default, at most 8), upper case for
/// a negative n. n = -2^31 reads as -(2^31 - 1), as Redis fixed it (CVE-2024-31449).
pub fn to_hex(x: u32, digits: i32) -> String {
    let digits = digits.max(i32::MIN + 1);
    let count = digits.unsigned_abs().min(8) as usize;
    let text = if digits < 0 { format!("{x:08X}") } else { format!("{x:08x}") };
    text[8 - count..].to_string()
}

unsafe extern "C-unwind" fn tobit(state: *mut ffi::lua_State) -> c_int {
    push(state, argument(state, 1))
}

unsafe extern "C-unwind" fn bnot(state: *mut ffi::lua_State) -> c_int {
    push(state, !argument(state, 1))
}

unsafe extern "C-unwind" fn bswap(state: *mut ffi::lua_State) -> c_int {
    push(state, argument(state, 1).swap_bytes())
}

unsafe extern "C-unwind" fn tohex(state: *mut ffi::lua_State) -> c_int {
    let x = argument(state, 1);
    let digits = if ffi::lua_type(state, 2) == ffi::LUA_TNONE { 8 } else { argument(state, 2) as i32 };
    let text = to_hex(x, digits);
    ffi::lua_pushlstring(state, text.as_ptr().cast(), text.len());
    1
}

/// band, bor, bxor: the first argument, then each from the last down to the second.
unsafe fn fold(state: *mut ffi::lua_State, op: fn(u32, u32) -> u32) -> c_int {
    let mut bits = argument(state, 1);
    for index in (2..=ffi::lua_gettop(state)).rev() {
        bits = op(bits, argument(state, index));
    }
    push(state, bits)
}

unsafe extern "C-unwind" fn band(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a & b)
}

unsafe extern "C-unwind" fn bor(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a | b)
}

unsafe extern "C-unwind" fn bxor(state: *mut ffi::lua_State) -> c_int {
    fold(state, |a, b| a ^ b)
}

/// The shifts and rotations: x, then a count taken modulo 32.
unsafe fn shift(state: *mut ffi::lua_State, op: fn(u32, u32) -> u32) -> c_int {
    let x = argument(state, 1);
    let n = argument(state, 2) & 31;
    push(state, op(x, n))
}

unsafe extern "C-unwind" fn lshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |x, n| x << n)
}

unsafe extern "C-unwind" fn rshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |x, n| x >> n)
}

unsafe extern "C-unwind" fn arshift(state: *mut ffi::lua_State) -> c_int {
    shift(state, |x, n| ((x as i32) >> n) as u32)
}

unsafe extern "C-unwind" fn rol(state: *mut ffi::lua_State) -> c_int {
    shift(state, u32::rotate_left)
}

unsafe extern "C-unwind" fn ror(state: *mut ffi::lua_State) -> c_int {
    shift(state, u32::rotate_right)
}

/// The library as a table of functions.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let bit = lua.create_table()?;
    let functions: [(&str, ffi::lua_CFunction); 12] = [
        ("tobit", tobit), ("tohex", tohex), ("bnot", bnot), ("band", band), ("bor", bor), ("bxor", bxor),
        ("lshift", lshift), ("rshift", rshift), ("arshift", arshift), ("rol", rol), ("ror", ror), ("bswap", bswap),
    ];
    for (name, function) in functions {
        // SAFETY: plain Lua C functions (above).
        bit.raw_set(name, unsafe { lua.create_c_function(function)? })?;
    }
    Ok(bit)
}

#[cfg(test)]
mod tests {
    use super::{to_bit, to_hex};

    #[test]
    fn normalises_like_luabitop() {
        assert_eq!(to_bit(0xffffffffu32 as f64) as i32, -1);
        assert_eq!(to_bit(4_294_967_296.0 + 5.0), 5);
        assert_eq!(to_bit(-1.0) as i32, -1);
        assert_eq!(to_bit(2.5), 2);
        assert_eq!(to_bit(3.5), 4);
        // Past 2^52 the sum keeps fewer low bits: LuaBitOp's answer, not x mod 2^32.
        assert_eq!(to_bit(9_007_199_254_740_994.0), 1);
        assert_eq!(to_hex(255, 8), "000000ff");
        assert_eq!(to_hex(255, -2), "FF");
        assert_eq!(to_hex(u32::MAX, 4), "ffff");
        assert_eq!(to_hex(1, i32::MIN), "00000001");
        assert_eq!(to_hex(1, 0), "");
    }
}

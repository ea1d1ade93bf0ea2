//! The `bit` library Redis gives scripts (LuaBitOp's functions): bitwise operations on numbers
//! taken as 32-bit integers, modulo 2^32 and rounded to the nearest integer, results signed.

use mlua::{Lua, Result, Table, Variadic};

/// `n` as LuaBitOp normalises it: rounded half to even, then its low 32 bits as a signed int.
pub fn to_bit(n: f64) -> i32 {
    if !n.is_finite() {
        return 0;
    }
    n.round_ties_even().rem_euclid(4_294_967_296.0) as u32 as i32
}

/// `bit.tohex(x [, n])`: the low `|n|` hex digits of x (8 by default), upper case for negative n.
pub fn to_hex(x: f64, digits: Option<f64>) -> String {
    let digits = digits.map(to_bit).unwrap_or(8);
    let upper = digits < 0;
    let count = digits.unsigned_abs().min(8) as usize;
    let value = to_bit(x) as u32 as u64;
    let text = if upper { format!("{value:08X}") } else { format!("{value:08x}") };
    text[8 - count..].to_string()
}

fn fold(values: Variadic<f64>, op: fn(i32, i32) -> i32) -> f64 {
    let mut items = values.iter().map(|&v| to_bit(v));
    let first = items.next().unwrap_or(0);
    f64::from(items.fold(first, op))
}

/// The library as a table of functions.
pub fn library(lua: &Lua) -> Result<Table> {
    let bit = lua.create_table()?;
    bit.set("tobit", lua.create_function(|_, x: f64| Ok(f64::from(to_bit(x))))?)?;
    bit.set("tohex", lua.create_function(|_, (x, n): (f64, Option<f64>)| Ok(to_hex(x, n)))?)?;
    bit.set("bnot", lua.create_function(|_, x: f64| Ok(f64::from(!to_bit(x))))?)?;
    bit.set("band", lua.create_function(|_, v: Variadic<f64>| Ok(fold(v, |a, b| a & b)))?)?;
    bit.set("bor", lua.create_function(|_, v: Variadic<f64>| Ok(fold(v, |a, b| a | b)))?)?;
    bit.set("bxor", lua.create_function(|_, v: Variadic<f64>| Ok(fold(v, |a, b| a ^ b)))?)?;
    let shift = |f: fn(i32, u32) -> i32| move |_: &Lua, (x, n): (f64, f64)| Ok(f64::from(f(to_bit(x), to_bit(n) as u32 & 31)));
    bit.set("lshift", lua.create_function(shift(|x, n| ((x as u32) << n) as i32))?)?;
    bit.set("rshift", lua.create_function(shift(|x, n| ((x as u32) >> n) as i32))?)?;
    bit.set("arshift", lua.create_function(shift(|x, n| x >> n))?)?;
    bit.set("rol", lua.create_function(shift(|x, n| (x as u32).rotate_left(n) as i32))?)?;
    bit.set("ror", lua.create_function(shift(|x, n| (x as u32).rotate_right(n) as i32))?)?;
    bit.set("bswap", lua.create_function(|_, x: f64| Ok(f64::from(to_bit(x).swap_bytes())))?)?;
    Ok(bit)
}

#[cfg(test)]
mod tests {
    use super::{to_bit, to_hex};

    #[test]
    fn normalises_like_luabitop() {
        assert_eq!(to_bit(0xffffffffu32 as f64), -1);
        assert_eq!(to_bit(4_294_967_296.0 + 5.0), 5);
        assert_eq!(to_bit(-1.0), -1);
        assert_eq!(to_bit(2.5), 2);
        assert_eq!(to_bit(3.5), 4);
        assert_eq!(to_hex(255.0, None), "000000ff");
        assert_eq!(to_hex(255.0, Some(-2.0)), "FF");
        assert_eq!(to_hex(-1.0, Some(4.0)), "ffff");
    }
}

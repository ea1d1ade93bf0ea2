//! Lua 5.1 library functions whose C code a script's arguments could make crash the server or
//! hold it for minutes, replaced or bounded here. Each keeps Lua 5.1's results and messages for
//! every argument that worked before.
//!
//! - `unpack(t, i, j)` counts its results as `j - i + 1` in a C int: with i = -2 and j = 2^31-1
//!   that overflows, and as signed overflow is undefined the compiler drops the check that was to
//!   catch it, then pushes 2^31 values past the stack (CVE-2025-46817). Here the count is taken in
//!   64 bits. Past Lua's stack room it is "too many results to unpack", as in Redis.
//! - `string.find`, `match`, `gmatch` and `gsub` match by recursion in C, one level per quantified
//!   item or capture of the pattern, with no bound: a pattern of 300,000 `a?` overflows the C
//!   stack (Redis crashes too). A pattern with more such items than later Luas let the matcher
//!   recurse (their MAXCCALLS, 200) is refused, in their words: "pattern too complex".
//! - `collectgarbage('stop')`, `'setpause'` and `'setstepmul'` change the collector of every script
//!   after the one that calls them: the run is marked (Run::collector_changed), and the server
//!   puts the collector back when it ends (lib.rs, collect_garbage_now_and_then).
//! - `table.insert(t, pos, v)` shifts every slot from the end of `t` down to `pos`, one at a time,
//!   in C, where no time limit reaches: a position of -2^31 is two billion shifts. A position more
//!   than `INSERT_BELOW_START_MAX` below the start is refused as later Luas refuse any below it
//!   ("position out of bounds"). It also refuses read-only tables (readonly.rs).

use std::ffi::{c_int, CStr};

use mlua::{ffi, Function, Lua, Table};

use crate::run::CURRENT_RUN;
use crate::readonly;

/// Quantified items and captures a pattern may hold: Lua 5.2-5.4's bound on the matcher's depth.
pub const PATTERN_ITEMS_MAX: usize = 200;

/// How far below 1 `table.insert` may be asked to insert (each slot below costs a shift in C).
pub const INSERT_BELOW_START_MAX: i64 = 1_000_000;

/// Upvalue of the pattern guards: Lua's own function.
const ORIGINAL_UPVALUE: c_int = 1;

/// Replaces `unpack` and `collectgarbage` in `globals` and the pattern functions in `string`.
pub fn install(lua: &Lua, globals: &Table, string: &Table) -> mlua::Result<()> {
    // SAFETY: a plain Lua C function (below).
    globals.raw_set("unpack", unsafe { lua.create_c_function(unpack)? })?;
    let collectgarbage: Function = globals.raw_get("collectgarbage")?;
    // SAFETY: a C closure of one upvalue made on the main thread, protected.
    let marked: Function = unsafe {
        lua.exec_raw(collectgarbage, |state| {
            ffi::lua_pushcclosure(state, collector_guard, 1);
        })?
    };
    globals.raw_set("collectgarbage", marked)?;
    for name in ["find", "match", "gmatch", "gsub"] {
        let original: Function = string.raw_get(name)?;
        // SAFETY: a C closure of one upvalue made on the main thread, protected.
        let guarded: Function = unsafe {
            lua.exec_raw(original, |state| {
                ffi::lua_pushcclosure(state, pattern_guard, 1);
            })?
        };
        string.raw_set(name, guarded)?;
    }
    Ok(())
}

/// Lua 5.1's `unpack`, its count in 64 bits.
unsafe extern "C-unwind" fn unpack(state: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    // As luaL_optint and luaL_checkint read them: a C int, the lua_Integer cut to 32 bits.
    let first = i64::from(ffi::luaL_optinteger(state, 2, 1) as c_int);
    let last = if ffi::lua_type(state, 3) <= ffi::LUA_TNIL {
        i64::from(ffi::lua_objlen(state, 1) as c_int)
    } else {
        i64::from(ffi::luaL_checkinteger(state, 3) as c_int)
    };
    if first > last {
        return 0;
    }
    let count = last - first + 1;
    if count >= i64::from(c_int::MAX) || ffi::lua_checkstack(state, count as c_int) == 0 {
        return ffi::luaL_error(state, c"too many results to unpack".as_ptr());
    }
    for index in first..=last {
        ffi::lua_rawgeti(state, 1, index as ffi::lua_Integer);
    }
    count as c_int
}

/// `collectgarbage`: Lua's own, the run marked when it changes how the collector runs.
unsafe extern "C-unwind" fn collector_guard(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_type(state, 1) == ffi::LUA_TSTRING {
        let option = CStr::from_ptr(ffi::lua_tolstring(state, 1, std::ptr::null_mut()));
        if [c"stop", c"setpause", c"setstepmul"].contains(&option) {
            // SAFETY: CURRENT_RUN points at the Run of the script running now, or is null.
            if let Some(run) = CURRENT_RUN.with(|run| run.get().as_ref()) {
                run.collector_changed.set(true);
            }
        }
    }
    let original = ffi::lua_tocfunction(state, ffi::lua_upvalueindex(ORIGINAL_UPVALUE)).expect("a guard wraps a C function");
    original(state)
}

/// The find, match, gmatch and gsub guard: refuses a pattern the matcher would recurse too deep
/// for, then runs Lua's own function. The pattern is only looked at when both the subject and
/// the pattern are strings (or numbers), so a bad argument gets Lua's own message.
unsafe extern "C-unwind" fn pattern_guard(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_isstring(state, 1) != 0 && ffi::lua_isstring(state, 2) != 0 {
        let mut len = 0;
        let pattern = ffi::lua_tolstring(state, 2, &mut len);
        // Each item takes a byte at least: a pattern this short needs no count.
        if len > PATTERN_ITEMS_MAX && pattern_items(std::slice::from_raw_parts(pattern.cast(), len)) > PATTERN_ITEMS_MAX {
            return ffi::luaL_error(state, c"pattern too complex".as_ptr());
        }
    }
    let original = ffi::lua_tocfunction(state, ffi::lua_upvalueindex(ORIGINAL_UPVALUE)).expect("a guard wraps a C function");
    original(state)
}

/// The quantified items and captures of a Lua 5.1 pattern: each is a level of the matcher's
/// recursion (its other items loop). Read as Lua 5.1 reads a pattern, up to its first NUL.
pub fn pattern_items(pattern: &[u8]) -> usize {
    let p = pattern.split(|&b| b == 0).next().unwrap_or_default();
    let (mut at, mut items) = (0, 0);
    while at < p.len() {
        match p[at] {
            b'(' | b')' => {
                items += 1;
                at += 1;
                continue;
            }
            b'%' => match p.get(at + 1) {
                // %bxy and back-references match in a loop; %f[set] is a test.
                Some(b'b') => {
                    at += 4;
                    continue;
                }
                Some(b'f') => {
                    at = set_end(p, at + 2);
                    continue;
                }
                Some(d) if d.is_ascii_digit() => {
                    at += 2;
                    continue;
                }
                _ => at += 2,
            },
            b'[' => at = set_end(p, at),
            _ => at += 1,
        }
        if matches!(p.get(at), Some(b'?' | b'*' | b'+' | b'-')) {
            items += 1;
            at += 1;
        }
    }
    items
}

/// Where a set `[...]` starting at `at` ends (just past its `]`), as Lua 5.1's classEnd finds it;
/// the pattern's length for an unfinished one (Lua refuses it).
fn set_end(p: &[u8], mut at: usize) -> usize {
    if p.get(at) != Some(&b'[') {
        return at + 1;
    }
    at += 1;
    if p.get(at) == Some(&b'^') {
        at += 1;
    }
    loop {
        let Some(&b) = p.get(at) else { return p.len() };
        at += if b == b'%' { 2 } else { 1 };
        if p.get(at) == Some(&b']') {
            return at + 1;
        }
        if at >= p.len() {
            return p.len();
        }
    }
}

/// `table.insert`'s guard (its upvalues are readonly.rs's): refuses a read-only table, and a
/// position so far below the start that shifting down to it would hold the server.
pub unsafe extern "C-unwind" fn insert(state: *mut ffi::lua_State) -> c_int {
    if readonly::is_readonly(state, 1) {
        readonly::refuse(state);
    }
    if ffi::lua_gettop(state) == 3 && ffi::lua_type(state, 1) == ffi::LUA_TTABLE && ffi::lua_isnumber(state, 2) != 0 {
        let position = i64::from(ffi::lua_tointeger(state, 2) as c_int);
        if position < 1 - INSERT_BELOW_START_MAX {
            return ffi::luaL_argerror(state, 2, c"position out of bounds".as_ptr());
        }
    }
    readonly::call_original(state)
}

#[cfg(test)]
mod tests {
    use super::pattern_items;

    #[test]
    fn counts_what_the_matcher_recurses_on() {
        assert_eq!(pattern_items(b"abc"), 0);
        assert_eq!(pattern_items(b"a?b*c+d-"), 4);
        assert_eq!(pattern_items(b"(a)(b)"), 4);
        assert_eq!(pattern_items(b"[a-z]+%d*%-"), 2);
        assert_eq!(pattern_items(b"[%]-]*"), 1);
        assert_eq!(pattern_items(b"[]-]"), 0);
        assert_eq!(pattern_items(b"%b()+%f[%w]%1?"), 0);
        assert_eq!(pattern_items(b"a?\0a?a?"), 1);
        assert_eq!(pattern_items(&b"a?".repeat(300)), 300);
        assert_eq!(pattern_items(b"[abc"), 0);
    }
}

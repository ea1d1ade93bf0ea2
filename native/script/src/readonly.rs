//! Read-only tables: the globals and libraries every script shares.
//!
//! Redis patches its Lua so that a table can be marked read-only, and every write to one — an
//! assignment, `rawset`, `table.insert`, `setmetatable` — fails with "Attempt to modify a
//! readonly table". svc runs Lua 5.1 unpatched, so sandbox.lua shows scripts an empty proxy in
//! place of each shared table: reads pass through its `__index`, assignments meet its
//! `__newindex`, and its metatable is hidden. What a metatable cannot stop writes into the proxy
//! raw: `rawset(_G, 'tostring', f)` would give every later script that `tostring`, and
//! `table.insert(string, x)` would add to `string`. Those functions, and `setmetatable` (whose
//! own refusal of a hidden metatable words it differently), are replaced here by ones that refuse
//! a registered proxy first and are otherwise Lua's own C function, called directly.
//!
//! `getmetatable` of a proxy shows what Redis shows of the table it stands for: nothing for a
//! library, and for the globals a read-only table whose `__index` is the function that refuses
//! an unknown name (sandbox.lua registers each proxy with what it shows).

use std::ffi::c_int;

use mlua::{ffi, Function, Lua, Table};

/// The words Redis refuses a write to a read-only table with.
pub const READONLY_MESSAGE: &std::ffi::CStr = c"Attempt to modify a readonly table";

/// Upvalues of the guards: the registered proxies (each mapped to the metatable it shows, or
/// false for none), and Lua's own function.
const PROXIES_UPVALUE: c_int = 1;
const ORIGINAL_UPVALUE: c_int = 2;

/// Replaces `rawset`, `setmetatable` and `getmetatable` in `globals` and `insert` in `table`
/// with guards; returns the function sandbox.lua registers each proxy with:
/// `protect(proxy, shown)`, `shown` being the metatable getmetatable shows of it, or false.
pub fn install(lua: &Lua, globals: &Table, table: &Table) -> mlua::Result<Function> {
    let proxies = lua.create_table()?;
    let guarded = |original: Function, guard: ffi::lua_CFunction| -> mlua::Result<Function> {
        // SAFETY: a C closure of two upvalues made on the main thread, protected.
        unsafe {
            lua.exec_raw((&proxies, original), |state| {
                ffi::lua_pushcclosure(state, guard, 2);
            })
        }
    };
    globals.raw_set("rawset", guarded(globals.raw_get("rawset")?, refuse_first)?)?;
    globals.raw_set("setmetatable", guarded(globals.raw_get("setmetatable")?, refuse_first)?)?;
    globals.raw_set("getmetatable", guarded(globals.raw_get("getmetatable")?, shown_metatable)?)?;
    table.raw_set("insert", guarded(table.raw_get("insert")?, crate::limits::insert)?)?;
    // SAFETY: as above, one upvalue.
    unsafe {
        lua.exec_raw(&proxies, |state| {
            ffi::lua_pushcclosure(state, protect, 1);
        })
    }
}

/// Whether the value at `index` is a registered proxy.
pub unsafe fn is_readonly(state: *mut ffi::lua_State, index: c_int) -> bool {
    // Every proxy has a metatable; most tables a script inserts into have none, and answer here.
    if ffi::lua_type(state, index) != ffi::LUA_TTABLE || ffi::lua_getmetatable(state, index) == 0 {
        return false;
    }
    ffi::lua_pop(state, 1);
    ffi::lua_pushvalue(state, index);
    ffi::lua_rawget(state, ffi::lua_upvalueindex(PROXIES_UPVALUE));
    let registered = ffi::lua_type(state, -1) != ffi::LUA_TNIL;
    ffi::lua_pop(state, 1);
    registered
}

/// Raises Redis's error for a write to a read-only table. Without a position, as Redis's comes
/// from inside the C function that was asked to write.
pub unsafe fn refuse(state: *mut ffi::lua_State) -> ! {
    ffi::lua_pushstring(state, READONLY_MESSAGE.as_ptr());
    ffi::lua_error(state)
}

/// Calls the guarded function (its upvalue) on this call's arguments, as if it had been called.
pub unsafe fn call_original(state: *mut ffi::lua_State) -> c_int {
    let original = ffi::lua_tocfunction(state, ffi::lua_upvalueindex(ORIGINAL_UPVALUE)).expect("a guard wraps a C function");
    original(state)
}

/// `rawset` and `setmetatable`: refused for a proxy, Lua's own otherwise.
unsafe extern "C-unwind" fn refuse_first(state: *mut ffi::lua_State) -> c_int {
    if is_readonly(state, 1) {
        refuse(state);
    }
    call_original(state)
}

/// `getmetatable`: what a proxy shows, Lua's own answer otherwise.
unsafe extern "C-unwind" fn shown_metatable(state: *mut ffi::lua_State) -> c_int {
    if !is_readonly(state, 1) {
        return call_original(state);
    }
    ffi::lua_pushvalue(state, 1);
    ffi::lua_rawget(state, ffi::lua_upvalueindex(PROXIES_UPVALUE));
    if ffi::lua_toboolean(state, -1) == 0 {
        ffi::lua_pushnil(state);
    }
    1
}

/// `protect(proxy, shown)`: registers a proxy (sandbox.lua only; scripts never see it).
unsafe extern "C-unwind" fn protect(state: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    ffi::lua_settop(state, 2);
    if ffi::lua_type(state, 2) == ffi::LUA_TNIL {
        ffi::lua_pushboolean(state, 0);
        ffi::lua_replace(state, 2);
    }
    ffi::lua_rawset(state, ffi::lua_upvalueindex(PROXIES_UPVALUE));
    0
}

//! The Rust functions of the cjson, cmsgpack and struct libraries, as scripts call them: each
//! behind a C function that gives it the conventions of Lua's C libraries, which Redis's are.
//!
//! An mlua function that fails raises a userdata (mlua's error object), so a script's
//! `pcall(cjson.decode, s)` got that userdata, not the message Redis gives, and the message
//! lacked its position. Here the Rust function's error comes back to the C function as a
//! value, and the C function raises it as Lua's C libraries do: a bad argument through
//! luaL_argerror ("bad argument #1 to 'pack' (...)", the name Lua finds for the call), anything
//! else as luaL_error does, the caller's position in front. Many results (cmsgpack's) come back
//! in a table and are pushed by the C function, whose stack then holds what lua-cmsgpack's holds.

use std::ffi::{c_int, c_void};
use std::sync::Arc;

use mlua::{ffi, Function, LightUserData, Lua, MultiValue, Table, Value};

/// Markers, as the first value the Rust function answers with, of what follows it.
static RAISE_ARGUMENT: u8 = 0;
static RAISE_MESSAGE: u8 = 0;
static RAISE_BARE: u8 = 0;
static MANY_RESULTS: u8 = 0;

/// Results past this many come back in a table (mlua pushes a callback's results itself, on a
/// stack of its own reckoning).
const FEW_RESULTS_MAX: usize = 16;

/// Upvalue of the C function: the mlua function it calls.
const FUNCTION_UPVALUE: c_int = 1;

fn marker(which: &'static u8) -> Value {
    Value::LightUserData(LightUserData((which as *const u8).cast_mut().cast::<c_void>()))
}

/// An error for argument `position` with Lua's words after the function's name: "bad argument
/// #position to 'name' (message)".
pub fn argument_error(position: usize, message: impl Into<String>) -> mlua::Error {
    mlua::Error::BadArgument { to: None, pos: position, name: None, cause: Arc::new(mlua::Error::runtime(message.into())) }
}

/// An error Lua itself raises inside a C library's function ("table index is nil"): raised with no
/// position, as a runtime error inside a C function has none.
#[derive(Debug)]
struct Bare(String);

impl std::fmt::Display for Bare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Bare {}

pub fn bare_error(message: impl Into<String>) -> mlua::Error {
    mlua::Error::external(Bare(message.into()))
}

/// Results already stored in `table` at 1..=count: what a function answers when it makes more
/// values than it should hold as Rust values (mlua keeps a reference for each, in a stack of
/// limited room).
pub fn many(table: Table, count: usize) -> MultiValue {
    MultiValue::from_vec(vec![marker(&MANY_RESULTS), Value::Table(table), Value::Number(count as f64)])
}

/// The text of an error, without mlua's wording around it.
fn message_of(error: &mlua::Error) -> String {
    match error {
        mlua::Error::RuntimeError(message) => message.clone(),
        mlua::Error::MemoryError(_) => "not enough memory".to_string(),
        mlua::Error::BadArgument { cause, .. } => message_of(cause),
        mlua::Error::CallbackError { cause, .. } => message_of(cause),
        other => other.to_string(),
    }
}

/// `f` as a Lua function with the conventions of Lua's C libraries.
pub fn function(lua: &Lua, f: impl Fn(&Lua, MultiValue) -> mlua::Result<MultiValue> + 'static) -> mlua::Result<Function> {
    let inner = lua.create_function(move |lua, args: MultiValue| {
        Ok(match f(lua, args) {
            Ok(results) if results.len() <= FEW_RESULTS_MAX => results,
            Ok(results) => {
                let count = results.len();
                many(lua.create_sequence_from(results)?, count)
            }
            Err(error @ mlua::Error::BadArgument { .. }) => {
                let mlua::Error::BadArgument { pos, .. } = &error else { unreachable!() };
                let text = lua.create_string(message_of(&error))?;
                MultiValue::from_vec(vec![marker(&RAISE_ARGUMENT), Value::Number(*pos as f64), Value::String(text)])
            }
            Err(error) => match error.downcast_ref::<Bare>() {
                Some(Bare(text)) => MultiValue::from_vec(vec![marker(&RAISE_BARE), Value::String(lua.create_string(text)?)]),
                None => MultiValue::from_vec(vec![marker(&RAISE_MESSAGE), Value::String(lua.create_string(message_of(&error))?)]),
            },
        })
    })?;
    // SAFETY: a C closure of one upvalue made on the main thread, protected.
    unsafe {
        lua.exec_raw(inner, |state| {
            ffi::lua_pushcclosure(state, call, 1);
        })
    }
}

/// A table of functions made by `function`.
pub fn library(lua: &Lua, functions: Vec<(&str, Box<dyn Fn(&Lua, MultiValue) -> mlua::Result<MultiValue>>)>) -> mlua::Result<Table> {
    let table = lua.create_table()?;
    for (name, f) in functions {
        table.raw_set(name, function(lua, f)?)?;
    }
    Ok(table)
}

/// Replaces `table[name]`, a function made by `function`, with the C function `fast` holding the
/// same upvalue (the Rust function): `fast` answers what it can straight on Lua's stack and ends
/// by calling `call` for the rest, in its own frame, so that what the Rust function answers —
/// errors positioned as before — is unchanged (cmsgpack_stack.rs, cjson_stack.rs).
pub fn with_fast_path(lua: &Lua, table: &Table, name: &str, fast: ffi::lua_CFunction) -> mlua::Result<()> {
    let general: Function = table.raw_get(name)?;
    // SAFETY: a C closure of one upvalue (the general one's own) made on the main thread, protected.
    let faster: Function = unsafe {
        lua.exec_raw(&general, |state| {
            ffi::lua_getupvalue(state, -1, FUNCTION_UPVALUE);
            ffi::lua_remove(state, -2);
            ffi::lua_pushcclosure(state, fast, 1);
        })
    }?;
    table.raw_set(name, faster)
}

/// The general function behind `fast`, a function with_fast_path made, as `function` made it:
/// what the fast path's tests compare it with.
#[cfg(test)]
pub fn general_of(lua: &Lua, fast: &Function) -> Function {
    // SAFETY: the C closure's one upvalue, behind `call` again, in place of the closure.
    unsafe {
        lua.exec_raw(fast, |state| {
            ffi::lua_getupvalue(state, -1, FUNCTION_UPVALUE);
            ffi::lua_remove(state, -2);
            ffi::lua_pushcclosure(state, call, 1);
        })
    }
    .expect("a function made by with_fast_path")
}

/// Calls the mlua function with this call's arguments and raises or returns what it answered.
/// A C function whose first upvalue is such a function may end by calling this (cmsgpack_stack.rs):
/// its errors are then positioned as this one's are.
pub(crate) unsafe extern "C-unwind" fn call(state: *mut ffi::lua_State) -> c_int {
    let count = ffi::lua_gettop(state);
    ffi::lua_pushvalue(state, ffi::lua_upvalueindex(FUNCTION_UPVALUE));
    ffi::lua_insert(state, 1);
    ffi::lua_call(state, count, ffi::LUA_MULTRET);
    let results = ffi::lua_gettop(state);
    if results == 0 || ffi::lua_type(state, 1) != ffi::LUA_TLIGHTUSERDATA {
        return results;
    }
    let first = ffi::lua_touserdata(state, 1).cast::<u8>().cast_const();
    if std::ptr::eq(first, &RAISE_ARGUMENT) {
        let position = ffi::lua_tointeger(state, 2) as c_int;
        return ffi::luaL_argerror(state, position, ffi::lua_tolstring(state, 3, std::ptr::null_mut()));
    }
    if std::ptr::eq(first, &RAISE_MESSAGE) {
        ffi::luaL_where(state, 1);
        ffi::lua_pushvalue(state, 2);
        ffi::lua_concat(state, 2);
        ffi::lua_error(state);
    }
    if std::ptr::eq(first, &RAISE_BARE) {
        ffi::lua_pushvalue(state, 2);
        ffi::lua_error(state);
    }
    if std::ptr::eq(first, &MANY_RESULTS) {
        let many = ffi::lua_tointeger(state, 3) as c_int;
        // The table in the first slot, below its values, as lua-cmsgpack's string argument is.
        ffi::lua_settop(state, 2);
        ffi::lua_replace(state, 1);
        // Lua's own luaL_checkstack (mlua's asks for LUA_MINSTACK slots more).
        ffi::luaL_checkstack_(state, many, c"too many results".as_ptr());
        for index in 1..=many {
            ffi::lua_rawgeti(state, 1, ffi::lua_Integer::from(index));
        }
        return many;
    }
    results
}

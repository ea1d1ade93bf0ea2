//! Lua source as scripts may load it: text only, under a chunk name that cannot be collected while
//! it is parsed, and run in the environment of the code that loaded it.
//!
//! - **Text only.** Lua 5.1 loads precompiled bytecode when a chunk's first byte is ESC, and its
//!   bytecode is not verified: crafted bytecode reads and writes the server's memory. Redis builds
//!   its Lua with the bytecode loader taken out, so such a chunk is parsed as text and is a syntax
//!   error ("unexpected symbol near 'char(27)'"). Here the same chunk is given to the parser behind
//!   one space: the loader is not chosen, the parser sees the same tokens on the same lines, and the
//!   error reads the same. EVAL's scripts, FUNCTION LOAD's libraries, `loadstring` and `load` all
//!   go this way.
//! - **Anchored names.** Lua 5.1's parser makes a string of the chunk's name and holds it only in
//!   its lexer until the function it builds refers to it; `load`'s reader, which is script code,
//!   runs before then and can collect it (CVE-2025-49844, fixed in Redis by anchoring the name).
//!   Lua strings are interned, so the parser's string is the one already on the stack or in the
//!   registry when there is one: `loadstring` and `load` push the name before loading, and the
//!   names of scripts and libraries are kept in the registry for the state's life (`anchor_names`).
//! - **Length.** Lua 5.1's lexer finds a long string's text from its delimiter's count of '=' in
//!   a C int: past 2^30 of them the count overflows and the lexer reads past its buffer (the
//!   CVE-2025-46819 class). A chunk that long cannot be loaded under the state's memory limit (1
//!   GiB, which also bounds the lexer's buffer); CHUNK_BYTES_MAX refuses one whatever the limit.
//! - **Environment.** A loaded chunk runs with the thread's globals unless given others; here those
//!   are the sandbox's own table, which scripts must not reach (and whose writes no one checks). The
//!   `loadstring` and `load` given to scripts set the chunk's environment to the one they were made
//!   for: the scripts' read-only globals, or a library's.

use std::borrow::Cow;
use std::ffi::{c_char, c_int, c_void};

use mlua::{ffi, Function, Lua, Table};

/// The first byte of a precompiled chunk (LUA_SIGNATURE's).
const BYTECODE_MARK: u8 = 0x1b;

/// The chunk names the server gives scripts and libraries.
pub const SCRIPT_CHUNK_NAME: &str = "@user_script";
pub const LIBRARY_CHUNK_NAME: &str = "@user_function";

/// Where `anchor_names` keeps the chunk names in the registry.
const ANCHORED_NAMES_KEY: &str = "svc.chunk_names";

/// The longest chunk loaded: below the lexer's overflow (see the module's comment).
pub const CHUNK_BYTES_MAX: usize = 1 << 30;
/// What a longer one gets.
pub const CHUNK_TOO_LONG: &str = "chunk too long";

/// Upvalue of `loadstring` and `load`: the environment their chunks get.
const ENV_UPVALUE: c_int = 1;

/// `source` as it is handed to the parser: behind a space when it would otherwise be taken for
/// bytecode (see the module's comment). Borrowed, and free, in every other case.
pub fn text_only(source: &[u8]) -> Cow<'_, [u8]> {
    if source.first() == Some(&BYTECODE_MARK) {
        let mut spaced = Vec::with_capacity(source.len() + 1);
        spaced.push(b' ');
        spaced.extend_from_slice(source);
        Cow::Owned(spaced)
    } else {
        Cow::Borrowed(source)
    }
}

/// Keeps the names of scripts' and libraries' chunks reachable for the state's life, so that the
/// parser's string for them is never a fresh, unanchored one.
pub fn anchor_names(lua: &Lua) -> mlua::Result<()> {
    lua.set_named_registry_value(ANCHORED_NAMES_KEY, lua.create_sequence_from([SCRIPT_CHUNK_NAME, LIBRARY_CHUNK_NAME])?)
}

/// `loadstring` and `load` for code whose environment is `env`.
pub fn loaders(lua: &Lua, env: Table) -> mlua::Result<(Function, Function)> {
    let make = |f: ffi::lua_CFunction| -> mlua::Result<Function> {
        // SAFETY: pushes a C closure of one upvalue, `env`, on the main thread, protected; `f`
        // reads its arguments as the Lua functions it replaces do.
        unsafe {
            lua.exec_raw(&env, |state| {
                ffi::lua_pushcclosure(state, f, 1);
            })
        }
    };
    Ok((make(loadstring)?, make(load)?))
}

/// What `read_text` hands the parser: a space first if the text would pass for bytecode.
struct Text {
    space_first: bool,
    bytes: *const u8,
    len: usize,
    given: bool,
}

unsafe extern "C-unwind" fn read_text(_state: *mut ffi::lua_State, data: *mut c_void, size: *mut usize) -> *const c_char {
    let text = &mut *data.cast::<Text>();
    if text.space_first {
        text.space_first = false;
        *size = 1;
        return c" ".as_ptr();
    }
    if text.given {
        *size = 0;
        return std::ptr::null();
    }
    text.given = true;
    *size = text.len;
    text.bytes.cast()
}

/// After a lua_load that returned `status`: the chunk with its environment set, or nil and the
/// message, as Lua's load_aux answers.
unsafe fn loaded(state: *mut ffi::lua_State, status: c_int) -> c_int {
    if status == 0 {
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(ENV_UPVALUE));
        ffi::lua_setfenv(state, -2);
        return 1;
    }
    ffi::lua_pushnil(state);
    ffi::lua_insert(state, -2);
    2
}

/// `loadstring(text [, chunkname])`: Lua 5.1's, text only, its name anchored, its chunk in `env`.
unsafe extern "C-unwind" fn loadstring(state: *mut ffi::lua_State) -> c_int {
    let mut len = 0;
    let bytes = ffi::luaL_checklstring(state, 1, &mut len);
    // The name defaults to the text itself, as a C string (up to its first NUL), as in Lua.
    let name = ffi::luaL_optlstring(state, 2, bytes, std::ptr::null_mut());
    ffi::lua_settop(state, 2);
    if len >= CHUNK_BYTES_MAX {
        ffi::lua_pushnil(state);
        ffi::lua_pushlstring(state, CHUNK_TOO_LONG.as_ptr().cast(), CHUNK_TOO_LONG.len());
        return 2;
    }
    ffi::lua_pushstring(state, name);
    let mut text = Text { space_first: len > 0 && *bytes.cast::<u8>() == BYTECODE_MARK, bytes: bytes.cast(), len, given: false };
    let status = ffi::lua_load(state, read_text, (&mut text as *mut Text).cast(), name);
    loaded(state, status)
}

/// Stack slot where `load` keeps the reader's last piece alive (as Lua's luaB_load does).
const PIECE_SLOT: c_int = 3;

/// What `read_pieces` remembers between calls.
struct Pieces {
    /// No piece has been read yet.
    first: bool,
    /// Bytes read so far.
    read: usize,
    /// The piece in PIECE_SLOT is still to be given (a space went first).
    held: Option<(*const c_char, usize)>,
}

/// Lua's generic_reader, calling the function at slot 1 for each piece, with a space before a
/// first piece that would pass for bytecode. Script code runs here: nothing Rust owns is alive
/// across the call, which may leave by longjmp.
unsafe extern "C-unwind" fn read_pieces(state: *mut ffi::lua_State, data: *mut c_void, size: *mut usize) -> *const c_char {
    let pieces = &mut *data.cast::<Pieces>();
    if let Some((at, len)) = pieces.held.take() {
        *size = len;
        return at;
    }
    // Lua's own luaL_checkstack (mlua's asks for LUA_MINSTACK slots more).
    ffi::luaL_checkstack_(state, 2, c"too many nested functions".as_ptr());
    ffi::lua_pushvalue(state, 1);
    ffi::lua_call(state, 0, 1);
    if ffi::lua_isnil(state, -1) != 0 {
        ffi::lua_pop(state, 1);
        *size = 0;
        return std::ptr::null();
    }
    if ffi::lua_isstring(state, -1) == 0 {
        ffi::luaL_error(state, c"reader function must return a string".as_ptr());
    }
    ffi::lua_replace(state, PIECE_SLOT);
    let at = ffi::lua_tolstring(state, PIECE_SLOT, size);
    pieces.read = pieces.read.saturating_add(*size);
    if pieces.read >= CHUNK_BYTES_MAX {
        ffi::luaL_error(state, c"chunk too long".as_ptr());
    }
    if pieces.first && *size > 0 {
        pieces.first = false;
        if *at.cast::<u8>() == BYTECODE_MARK {
            pieces.held = Some((at, *size));
            *size = 1;
            return c" ".as_ptr();
        }
    }
    at
}

/// `load(reader [, chunkname])`: Lua 5.1's, text only, its name anchored, its chunk in `env`.
unsafe extern "C-unwind" fn load(state: *mut ffi::lua_State) -> c_int {
    let name = ffi::luaL_optlstring(state, 2, c"=(load)".as_ptr(), std::ptr::null_mut());
    ffi::luaL_checktype(state, 1, ffi::LUA_TFUNCTION);
    ffi::lua_settop(state, PIECE_SLOT);
    ffi::lua_pushstring(state, name);
    let mut pieces = Pieces { first: true, read: 0, held: None };
    let status = ffi::lua_load(state, read_pieces, (&mut pieces as *mut Pieces).cast(), name);
    loaded(state, status)
}

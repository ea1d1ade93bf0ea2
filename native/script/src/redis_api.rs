//! The functions of the `redis` library other than call and pcall (call.rs), as raw Lua C
//! functions: sha1hex, error_reply, status_reply, log, setresp, set_repl and acl_check_cmd.
//!
//! C functions, as Redis's are, so they behave as Redis's in the ways a Lua function cannot: `return
//! redis.sha1hex()` keeps the script's line for the error (a tail call into a Lua function drops
//! the caller's frame), and each reads its arguments as Redis's does (lua_gettop, lua_tolstring).
//! Misuse raises what Redis's luaPushError makes, an error table { err = "ERR <message>" } (so a
//! script's pcall gets the text, and the reply has no "user_script:1:" in front) — except
//! error_reply and status_reply, which, as in Redis, return that table instead of raising it.
//!
//! Nothing Rust owns is alive across a Lua call that can raise (it leaves by longjmp): arguments
//! are turned into strings on the stack first, and what Rust builds from them is dropped before
//! anything is pushed.

use std::ffi::{c_int, CStr};

use mlua::{ffi, Lua, Table};

use crate::run::CURRENT_RUN;
use crate::number::format_g17;

/// Redis's log levels, LOG_DEBUG to LOG_WARNING.
const LOG_LEVEL_MIN: f64 = 0.0;
const LOG_LEVEL_MAX: f64 = 3.0;
/// Redis's PROPAGATE_AOF | PROPAGATE_REPL: the flags redis.set_repl accepts.
const REPL_FLAGS_ALL: c_int = 3;

/// `n` as C's `(int)` makes it on x86: the fraction dropped, and NaN or anything out of range as
/// the smallest int.
fn c_int_of(n: f64) -> c_int {
    if n.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&n) {
        return c_int::MIN;
    }
    n.trunc() as c_int
}

/// The functions, in a table sandbox.lua copies into `redis`.
pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let redis = lua.create_table()?;
    let functions: [(&str, ffi::lua_CFunction); 7] = [
        ("sha1hex", sha1hex),
        ("error_reply", error_reply),
        ("status_reply", status_reply),
        ("log", log),
        ("setresp", setresp),
        ("set_repl", set_repl),
        ("acl_check_cmd", acl_check_cmd),
    ];
    for (name, function) in functions {
        // SAFETY: plain Lua C functions (below).
        redis.raw_set(name, unsafe { lua.create_c_function(function)? })?;
    }
    Ok(redis)
}

/// The error Redis's luaPushErrorBuff makes of `text`: "-CODE message" keeps its code (the
/// first word), anything else gets ERR; the message is trimmed of CR and LF at both ends; and it
/// passes through a C string, so it ends at a NUL.
pub fn error_text(text: &[u8]) -> Vec<u8> {
    let (code, message): (&[u8], &[u8]) = match text.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(space) => (&rest[..space], &rest[space + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", text),
    };
    let is_newline = |b: &u8| *b == b'\r' || *b == b'\n';
    let start = message.iter().position(|b| !is_newline(b)).unwrap_or(message.len());
    let end = message.iter().rposition(|b| !is_newline(b)).map_or(start, |i| i + 1);
    let mut out = [code, b" ", &message[start..end]].concat();
    if let Some(nul) = out.iter().position(|&b| b == 0) {
        out.truncate(nul);
    }
    out
}

/// Pushes { err = error_text(text) }.
unsafe fn push_error_table(state: *mut ffi::lua_State, text: &[u8]) {
    let err = error_text(text);
    ffi::lua_createtable(state, 0, 1);
    ffi::lua_pushlstring(state, err.as_ptr().cast(), err.len());
    drop(err);
    ffi::lua_setfield(state, -2, c"err".as_ptr());
}

/// Raises { err = "ERR <message>" }.
unsafe fn raise(state: *mut ffi::lua_State, message: &CStr) -> ! {
    push_error_table(state, message.to_bytes());
    ffi::lua_error(state)
}

/// The bytes of the string or number at `index` (a number made a string in place, as
/// lua_tolstring does), or None for any other type.
unsafe fn bytes_at<'a>(state: *mut ffi::lua_State, index: c_int) -> Option<&'a [u8]> {
    let mut len = 0;
    let text = ffi::lua_tolstring(state, index, &mut len);
    (!text.is_null()).then(|| std::slice::from_raw_parts(text.cast(), len))
}

/// `redis.sha1hex(text)`: the SHA-1 of text, in hex; of nothing for a value that is not a string
/// or a number, as Redis hashes then.
unsafe extern "C-unwind" fn sha1hex(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) != 1 {
        raise(state, c"wrong number of arguments");
    }
    let digest = sha1_smol::Sha1::from(bytes_at(state, 1).unwrap_or_default()).digest().to_string();
    ffi::lua_pushlstring(state, digest.as_ptr().cast(), digest.len());
    1
}

/// `redis.error_reply(text)`: { err = text }, its code ERR unless it names one ("-CODE text").
unsafe extern "C-unwind" fn error_reply(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) != 1 || ffi::lua_type(state, 1) != ffi::LUA_TSTRING {
        push_error_table(state, b"wrong number or type of arguments");
        return 1;
    }
    let text = bytes_at(state, 1).unwrap_or_default();
    if text.first() == Some(&b'-') {
        push_error_table(state, text);
    } else {
        let dashed = [b"-", text].concat();
        push_error_table(state, &dashed);
    }
    1
}

/// `redis.status_reply(text)`: { ok = text }.
unsafe extern "C-unwind" fn status_reply(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) != 1 || ffi::lua_type(state, 1) != ffi::LUA_TSTRING {
        push_error_table(state, b"wrong number or type of arguments");
        return 1;
    }
    ffi::lua_createtable(state, 0, 1);
    ffi::lua_pushvalue(state, 1);
    ffi::lua_setfield(state, -2, c"ok".as_ptr());
    1
}

/// `redis.log(level, ...)`: a line of the arguments that are strings or numbers, separated by
/// spaces, at Redis's level 0 (debug) to 3 (warning).
unsafe extern "C-unwind" fn log(state: *mut ffi::lua_State) -> c_int {
    let count = ffi::lua_gettop(state);
    if count < 2 {
        raise(state, c"redis.log() requires two arguments or more.");
    }
    if ffi::lua_isnumber(state, 1) == 0 {
        raise(state, c"First argument must be a number (log level).");
    }
    let level = ffi::lua_tonumber(state, 1).trunc();
    if !(LOG_LEVEL_MIN..=LOG_LEVEL_MAX).contains(&level) {
        raise(state, c"Invalid debug level.");
    }
    // Every argument made a string in place first: nothing below calls Lua. As in Redis, one
    // that is neither is left out, and a space goes before each part but the second argument.
    let parts: Vec<(c_int, &[u8])> = (2..=count).filter_map(|i| bytes_at(state, i).map(|part| (i, part))).collect();
    let mut line = Vec::new();
    for (index, part) in parts {
        if index != 2 {
            line.push(b' ');
        }
        line.extend_from_slice(part);
    }
    let run = CURRENT_RUN.with(|run| run.get());
    if !run.is_null() {
        // SAFETY: CURRENT_RUN points at the Run of the script running now (lib.rs, running).
        let _ = (*run).with_host(|host| host.log(level as u8, &line));
    }
    0
}

/// `redis.setresp(version)`: the protocol the commands the script calls from now on reply in (2,
/// or 3: maps, sets, doubles, booleans and nulls of their own, converted to Lua as Redis 7.0
/// does, resp_to_lua.rs), and that its booleans are returned in.
unsafe extern "C-unwind" fn setresp(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) != 1 {
        raise(state, c"redis.setresp() requires one argument.");
    }
    let version = ffi::lua_tonumber(state, 1).trunc();
    if version != 2.0 && version != 3.0 {
        raise(state, c"RESP version must be 2 or 3.");
    }
    let run = CURRENT_RUN.with(|run| run.get());
    if !run.is_null() {
        // SAFETY: as in log.
        let run = &*run;
        run.resp3.set(version == 3.0);
        let _ = run.with_host(|host| host.set_protocol(version as u8));
    }
    0
}

/// `redis.set_repl(flags)`: checked as Redis checks it; there are no replicas, and every write
/// goes to the append-only file, so it changes nothing.
unsafe extern "C-unwind" fn set_repl(state: *mut ffi::lua_State) -> c_int {
    if ffi::lua_gettop(state) != 1 {
        raise(state, c"redis.set_repl() requires two arguments.");
    }
    let flags = c_int_of(ffi::lua_tonumber(state, 1));
    if flags & !REPL_FLAGS_ALL != 0 {
        raise(state, c"Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    }
    0
}

/// `redis.acl_check_cmd(command, ...)`: whether the script's user may run the command with those
/// arguments (keys and channels included), without running it. Arguments as redis.call takes
/// them; an unknown command (or subcommand) is an error.
unsafe extern "C-unwind" fn acl_check_cmd(state: *mut ffi::lua_State) -> c_int {
    let count = ffi::lua_gettop(state);
    if count == 0 {
        raise(state, c"Please specify at least one argument for this redis lib call");
    }
    for index in 1..=count {
        let kind = ffi::lua_type(state, index);
        if kind != ffi::LUA_TSTRING && kind != ffi::LUA_TNUMBER {
            raise(state, c"Lua redis lib command arguments must be strings or integers");
        }
    }
    let allowed = {
        let numbers: Vec<String> = (1..=count)
            .filter(|&i| ffi::lua_type(state, i) == ffi::LUA_TNUMBER)
            .map(|i| format_g17(ffi::lua_tonumber(state, i)))
            .collect();
        let mut formatted = numbers.iter();
        let words: Vec<&[u8]> = (1..=count)
            .map(|i| match ffi::lua_type(state, i) {
                ffi::LUA_TNUMBER => formatted.next().expect("one formatted number per number").as_bytes(),
                _ => bytes_at(state, i).unwrap_or_default(),
            })
            .collect();
        let run = CURRENT_RUN.with(|run| run.get());
        // SAFETY: as in log.
        if run.is_null() { None } else { (*run).with_host(|host| host.may_run(&words)).ok().flatten() }
    };
    match allowed {
        Some(allowed) => {
            ffi::lua_pushboolean(state, c_int::from(allowed));
            1
        }
        None => raise(state, c"Invalid command passed to redis.acl_check_cmd()"),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn errors_are_worded_as_redis_words_them() {
        assert_eq!(error_text(b"bad"), b"ERR bad");
        assert_eq!(error_text(b"-bad"), b"ERR bad");
        assert_eq!(error_text(b"-E1 z"), b"E1 z");
        assert_eq!(error_text(b"- x"), b" x");
        assert_eq!(error_text(b"-"), b"ERR ");
        assert_eq!(error_text(b"-x\r\n"), b"ERR x");
        assert_eq!(error_text(b"-\r\nCODE x"), b"\r\nCODE x");
        assert_eq!(error_text(b"x\r\n"), b"ERR x");
        assert_eq!(error_text(b"-E a\0b"), b"E a");
    }
}

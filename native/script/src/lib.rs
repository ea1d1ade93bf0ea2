//! Lua scripts for the kv server's EVAL, in Lua 5.1 (the version Redis embeds, so scripts written
//! for Redis compute the same: `10/2` is `5`, not `5.0`).
//!
//! One `Scripts` holds one Lua state: the sandbox (sandbox.lua) and every script loaded into it,
//! compiled once and kept by number (the server maps SHA-1s to numbers). Running a script hands
//! each `redis.call` to a `Host` — the server, which runs the command as a client would and
//! answers its RESP2 reply — and gives back the script's result as the RESP2 reply for the client.

mod bit;
mod call;
mod cjson;
mod cmsgpack;
mod lua_to_resp;
mod number;
mod resp_to_lua;
mod struct_lib;

use std::cell::{Cell, RefCell};
use std::ffi::{c_int, CStr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{ffi, Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, VmState};


/// The version scripts read from redis.REDIS_VERSION, and as a number (0x00MMmmpp).
const REDIS_VERSION: &str = "7.0.15";
const REDIS_VERSION_NUM: u32 = 0x0007_000f;

/// Lua instructions between checks of a script's time limit (a check reads the clock).
const INSTRUCTIONS_PER_CHECK: u32 = 100_000;

/// What a script asks of the server.
pub trait Host {
    /// Runs one command, `args[0]` its name, as the script's client. Returns its RESP2 reply and
    /// whether it changed data.
    fn call(&mut self, args: &[&[u8]]) -> (Vec<u8>, bool);
    /// redis.log: a line for the server's log, at Redis's level 0 (debug) to 3 (warning).
    fn log(&mut self, level: u8, text: &[u8]);
}

/// Where the registry keeps sandbox.lua's runners of scripts and of functions, and the table of
/// compiled scripts and registered functions, for `run`.
const SCRIPT_RUNNER_KEY: &CStr = c"svc_script_runner";
const FUNCTION_RUNNER_KEY: &CStr = c"svc_function_runner";
const SCRIPTS_KEY: &CStr = c"svc_scripts";

/// Longest a library's code may run when it is loaded (Redis's FUNCTION LOAD timeout).
const LIBRARY_LOAD_LIMIT: Duration = Duration::from_millis(500);

/// A function a library registered when it was loaded.
pub struct Registered {
    pub name: String,
    /// The number `run` knows it by.
    pub id: u32,
    pub flags: Vec<String>,
    pub description: Option<String>,
}

/// Pushes a new table of `words` (KEYS, ARGV, or a function's keys and arguments). Raw stack
/// calls: see run_caught.
unsafe fn push_words(state: *mut ffi::lua_State, words: &[&[u8]]) {
    ffi::lua_createtable(state, words.len() as c_int, 0);
    for (i, word) in words.iter().enumerate() {
        ffi::lua_pushlstring(state, word.as_ptr().cast(), word.len());
        ffi::lua_rawseti(state, -2, i as ffi::lua_Integer + 1);
    }
}



pub struct Scripts {
    lua: Lua,
    /// Compiled scripts by their number, 1 up (a Lua array).
    compiled: Table,
    /// What each is called in error messages — a script's SHA-1 (hex, lower case), a function's
    /// name — and whether it is a function: the first is number 1's.
    names: RefCell<Vec<(String, bool)>>,
    /// sandbox.lua's runner of a library's code.
    library_runner: Function,
    /// The run in progress, as the bridge's functions and the time-limit hook see it.
    run: Rc<Run>,
}

/// What the running script's callbacks share: redis.call (call.rs), the bridge's `log`, made once
/// with the state, and the time-limit hook find the script's host here. (A Lua function made per
/// run, mlua's scope, cost more than the rest of running a short script.)
#[derive(Default)]
pub struct Run {
    /// The server the running script calls; None while none runs.
    host: Cell<Option<*mut dyn Host>>,
    /// When the running script passes its time limit; None while none runs.
    deadline: Cell<Option<Instant>>,
    /// Whether the running script has changed data (then it runs on past its limit, as in Redis).
    pub wrote: Cell<bool>,
    /// Set when the limit ended the script.
    ended: Cell<bool>,
}

impl Run {
    /// Runs `f` with the running script's host; an error for a call made outside a run (a
    /// function kept in a global and called later cannot be: globals are read-only).
    pub fn with_host<R>(&self, f: impl FnOnce(&mut dyn Host) -> R) -> mlua::Result<R> {
        let host = self.host.get().ok_or_else(|| mlua::Error::runtime("redis.call outside a script"))?;
        // SAFETY: set only for the length of run_caught, from a &mut the run holds; Lua runs one
        // callback at a time and none runs a script, so this is the only reference while f runs.
        Ok(f(unsafe { &mut *host }))
    }
}

impl Scripts {
    /// A new Lua state whose scripts may hold at most `memory_bytes_max` bytes between them: past
    /// it an allocation fails, and the script with it, rather than the server running out.
    pub fn new(memory_bytes_max: usize) -> mlua::Result<Self> {
        // The debug library is loaded for sandbox.lua's error handler, which keeps its getinfo,
        // and is then taken out of the globals.
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG;
        // SAFETY: loading the debug library is what mlua calls unsafe; scripts never reach it.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::new()) };
        lua.set_memory_limit(memory_bytes_max)?;
        let bridge = lua.create_table()?;
        bridge.set("version", REDIS_VERSION)?;
        bridge.set("version_num", REDIS_VERSION_NUM)?;
        bridge.set("bit", bit::library(&lua)?)?;
        bridge.set("cjson", cjson::library(&lua)?)?;
        bridge.set("cmsgpack", cmsgpack::library(&lua)?)?;
        bridge.set("struct", struct_lib::library(&lua)?)?;
        bridge.set(
            "sha1hex",
            lua.create_function(|_, text: mlua::LuaString| Ok(sha1_smol::Sha1::from(&*text.as_bytes()).digest().to_string()))?,
        )?;
        // SAFETY: both are plain Lua C functions (call.rs).
        bridge.set("redis_call", unsafe { lua.create_c_function(call::redis_call)? })?;
        bridge.set("redis_pcall", unsafe { lua.create_c_function(call::redis_pcall)? })?;
        let runners: Table = lua.load(include_str!("sandbox.lua")).set_name("=svc_sandbox").call(bridge.clone())?;
        let run = Rc::new(Run::default());
        {
            let run = run.clone();
            lua.set_hook(HookTriggers::new().every_nth_instruction(INSTRUCTIONS_PER_CHECK), move |_, _| match run.deadline.get() {
                Some(at) if !run.wrote.get() && Instant::now() >= at => {
                    run.ended.set(true);
                    Err(mlua::Error::runtime("time limit"))
                }
                _ => Ok(VmState::Continue),
            })?;
        }
        {
            let run = run.clone();
            bridge.raw_set(
                "log",
                lua.create_function(move |_, (level, text): (u8, mlua::LuaString)| {
                    run.with_host(|host| host.log(level, &text.as_bytes()))
                })?,
            )?;
        }
        let compiled = lua.create_table()?;
        lua.set_named_registry_value(SCRIPT_RUNNER_KEY.to_str().expect("ASCII"), runners.get::<Function>("script")?)?;
        lua.set_named_registry_value(FUNCTION_RUNNER_KEY.to_str().expect("ASCII"), runners.get::<Function>("fcall")?)?;
        lua.set_named_registry_value(SCRIPTS_KEY.to_str().expect("ASCII"), &compiled)?;
        let library_runner = runners.get("library")?;
        Ok(Scripts { lua, compiled, names: RefCell::new(Vec::new()), library_runner, run })
    }

    /// Compiles `body`, the script whose SHA-1 is `sha`, and keeps it; returns the number `run`
    /// knows it by. The error is Lua's message ("user_script:1: …").
    pub fn load(&self, sha: &str, body: &[u8]) -> Result<u32, String> {
        let function = self.lua.load(body).set_name("@user_script").into_function().map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => message,
            other => other.to_string(),
        })?;
        self.keep(sha, false, function).map_err(|e| e.to_string())
    }

    fn keep(&self, name: &str, is_function: bool, callable: Function) -> mlua::Result<u32> {
        let mut names = self.names.borrow_mut();
        names.push((name.to_string(), is_function));
        self.compiled.raw_set(names.len(), callable)?;
        Ok(names.len() as u32)
    }

    /// Runs a library's code (its shebang made a comment) and keeps the functions it registers;
    /// returns them. The error is what Redis 7.0 answers after "Error compiling function: " or
    /// "Error registering functions: " (the first word says which), e.g. "ERR Function already
    /// exists in the library"; a library that registers nothing is an error too.
    /// `host` takes the library's redis.log lines (it calls no command while it loads).
    pub fn load_library(&self, code: &[u8], host: &mut dyn Host) -> Result<Vec<Registered>, String> {
        let chunk = self.lua.load(code).set_name("@user_function").into_function().map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => format!("Error compiling function: {message}"),
            other => format!("Error compiling function: {other}"),
        })?;
        let result = self.running(LIBRARY_LOAD_LIMIT, host, || self.library_runner.call::<(bool, Value)>(chunk));
        let registering_error = |text: String| format!("Error registering functions: {text}");
        let registered = match result {
            Ok((true, Value::Table(list))) => list,
            Ok(_) if self.run.ended.get() => return Err(registering_error("ERR FUNCTION LOAD timeout".to_string())),
            Ok((false, Value::Table(error))) => {
                let text = match error.raw_get::<Value>("err") {
                    Ok(Value::String(s)) => s.to_string_lossy(),
                    _ => "ERR unknown error".to_string(),
                };
                return Err(registering_error(text));
            }
            Ok(_) => return Err(registering_error("ERR unknown error".to_string())),
            Err(error) => return Err(registering_error(format!("ERR {error}"))),
        };
        if registered.raw_len() == 0 {
            return Err("No functions registered".to_string());
        }
        let mut functions = Vec::new();
        for entry in registered.sequence_values::<Table>() {
            let entry = entry.map_err(|e| e.to_string())?;
            let name: String = entry.get("name").map_err(|e| e.to_string())?;
            let flags: Vec<String> = entry.get::<Table>("flags").and_then(|t| t.sequence_values().collect()).map_err(|e| e.to_string())?;
            let description: Option<String> = entry.get("description").map_err(|e| e.to_string())?;
            let id = self.keep(&name, true, entry.get("callback").map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
            functions.push(Registered { name, id, flags, description });
        }
        Ok(functions)
    }

    /// Forgets the scripts or functions numbered `ids` (a library deleted or replaced).
    pub fn unload(&self, ids: &[u32]) -> mlua::Result<()> {
        for &id in ids {
            self.compiled.raw_set(id, Value::Nil)?;
        }
        Ok(())
    }

    /// Runs the script `load` numbered `id` with KEYS and ARGV set; returns a byte saying whether
    /// the reply is an error the server has counted already (1: a command's own, passed on), then
    /// the RESP2 reply. A script that has not written by `limit` is ended with an error; one that
    /// has runs on.
    pub fn run(&self, id: u32, keys: &[&[u8]], argv: &[&[u8]], limit: Duration, host: &mut dyn Host) -> Vec<u8> {
        let names = self.names.borrow();
        let Some((name, is_function)) = names.get((id as usize).wrapping_sub(1)) else {
            return format!("\0-ERR no script is numbered {id}\r\n").into_bytes();
        };
        let mut out = vec![0];
        match self.run_caught(id, *is_function, keys, argv, limit, host) {
            Ok((true, value)) => {
                out[0] = u8::from(matches!(&value, Value::Table(t) if lua_to_resp::is_counted_error(t)));
                lua_to_resp::encode(&value, &mut out);
            }
            Ok((false, _)) if self.run.ended.get() => out.extend_from_slice(
                format!("-ERR script {name} ran past its time limit without writing and was ended\r\n").as_bytes(),
            ),
            Ok((false, Value::Table(error))) => {
                out[0] = u8::from(lua_to_resp::is_counted_error(&error));
                script_error(&error, name, &mut out);
            }
            // Lua calls no handler for an allocation that fails: its message comes as it is.
            Ok((false, Value::String(message))) => {
                out.push(b'-');
                lua_to_resp::push_error(&mut out, format!("ERR {} script: {name}", message.to_string_lossy()).as_bytes());
            }
            Ok((false, _)) => out.extend_from_slice(format!("-ERR unknown error script: {name}\r\n").as_bytes()),
            Err(error) => {
                out.push(b'-');
                lua_to_resp::push_error(&mut out, format!("ERR {error}").as_bytes());
            }
        }
        out
    }

    /// Runs `f` as the run in progress — a script's or a library's load — with `host` answering
    /// its redis.call and redis.log and `limit` its time limit; the run's state is reset first.
    fn running<R>(&self, limit: Duration, host: &mut dyn Host, f: impl FnOnce() -> R) -> R {
        self.run.wrote.set(false);
        self.run.ended.set(false);
        self.run.deadline.set(Some(Instant::now() + limit));
        // SAFETY: the pointer is taken away again below, before `host`'s borrow ends, and only
        // redis.call, the bridge's log and the hook read it, which Lua calls only inside `f`.
        let host: *mut (dyn Host + '_) = host;
        self.run.host.set(Some(unsafe { std::mem::transmute::<*mut (dyn Host + '_), *mut (dyn Host + 'static)>(host) }));
        let outer = call::CURRENT_RUN.with(|current| current.replace(Rc::as_ptr(&self.run)));
        let result = f();
        call::CURRENT_RUN.with(|current| current.set(outer));
        self.run.host.set(None);
        self.run.deadline.set(None);
        result
    }

    fn run_caught(&self, id: u32, is_function: bool, keys: &[&[u8]], argv: &[&[u8]], limit: Duration, host: &mut dyn Host) -> mlua::Result<(bool, Value)> {
        // On the raw stack, inside exec_raw's protected call: the mlua calls that would do the
        // same (table sets, a function call) each run protected on their own, which cost more
        // than running a short script. Any Lua error here (out of memory) is caught as mlua's.
        self.running(limit, host, || unsafe {
            self.lua.exec_raw::<(bool, Value)>((), |state| {
                let runner = if is_function { FUNCTION_RUNNER_KEY } else { SCRIPT_RUNNER_KEY };
                ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, runner.as_ptr());
                ffi::lua_getfield(state, ffi::LUA_REGISTRYINDEX, SCRIPTS_KEY.as_ptr());
                ffi::lua_rawgeti(state, -1, ffi::lua_Integer::from(id));
                ffi::lua_remove(state, -2);
                // A function gets its keys and arguments as its parameters; a script as the
                // globals KEYS and ARGV, which its runner sets.
                push_words(state, keys);
                push_words(state, argv);
                ffi::lua_call(state, 3, 2);
            })
        })
    }

    /// Bytes the Lua state holds (INFO's used_memory_lua).
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

/// A script's error as Redis 7.0 reports it: "-<error> script: <sha or function>, on @user_script:<line>."
fn script_error(error: &Table, name: &str, out: &mut Vec<u8>) {
    let text = match error.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.as_bytes().to_vec(),
        _ => b"ERR unknown error".to_vec(),
    };
    let mut line = text;
    line.extend_from_slice(format!(" script: {name}").as_bytes());
    let at = match error.raw_get::<Value>("line") {
        Ok(Value::Number(n)) => Some(n as i64),
        Ok(Value::Integer(n)) => Some(n),
        _ => None,
    };
    if let (Ok(Value::String(source)), Some(at)) = (error.raw_get::<Value>("source"), at) {
        line.extend_from_slice(format!(", on {}:{at}.", source.to_string_lossy()).as_bytes());
    }
    out.push(b'-');
    lua_to_resp::push_error(out, &line);
}

#[cfg(test)]
mod tests;

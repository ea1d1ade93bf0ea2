//! Lua scripts for the kv server's EVAL, in Lua 5.1 (the version Redis embeds, so scripts written
//! for Redis compute the same: `10/2` is `5`, not `5.0`).
//!
//! One `Scripts` holds one Lua state: the sandbox (sandbox.lua) and every script loaded into it,
//! compiled once and kept by number (the server maps SHA-1s to numbers). Running a script hands
//! each `redis.call` to a `Host` — the server, which runs the command as a client would and
//! answers its RESP2 reply — and gives back the script's result as the RESP2 reply for the client.
//! A run that goes on past busy-reply-threshold stops for the server between slices (run.rs).

mod bit;
mod call;
mod chunks;
mod cjson;
mod cjson_stack;
mod cmsgpack;
mod cmsgpack_stack;
#[cfg(test)]
mod fast_path_tests;
mod limits;
mod lua_to_resp;
mod number;
mod readonly;
mod redis_api;
mod resp_to_lua;
mod run;
mod rust_functions;
mod struct_lib;
pub mod word_cache;
pub mod words;

use std::cell::{Cell, Ref, RefCell};
use std::ffi::c_int;
use std::rc::Rc;
use std::time::Duration;

use mlua::{ffi, Function, Lua, LuaOptions, StdLib, Table, Value};

pub use run::{run_word, with_run_words, Outcome, Run, BUSY_SLICE};
use run::Runner;

/// The version scripts read from redis.REDIS_VERSION, and as a number (0x00MMmmpp).
const REDIS_VERSION: &str = "7.0.15";
const REDIS_VERSION_NUM: u32 = 0x0007_000f;

/// What a script asks of the server.
pub trait Host {
    /// Runs one command, `args[0]` its name, as the script's client. Returns its RESP2 reply,
    /// which stays as it is until the next call.
    fn call(&mut self, args: &[&[u8]]) -> &[u8];
    /// redis.log: a line for the server's log, at Redis's level 0 (debug) to 3 (warning).
    fn log(&mut self, level: u8, text: &[u8]);
    /// redis.setresp: the protocol (2 or 3) the commands the script calls from now on reply in.
    /// Each run starts in 2.
    fn set_protocol(&mut self, _protocol: u8) {}
    /// redis.acl_check_cmd: whether the script's user may run `args` (`args[0]` the command);
    /// None for a command, or a container's subcommand, that does not exist.
    fn may_run(&mut self, _args: &[&[u8]]) -> Option<bool> {
        None
    }
    /// How long the script has run so far: from when the server started its command, which read
    /// the clock then. Asked once a run, at its first check of the time (run.rs), so that a short
    /// script reads no clock of its own. A host that does not know answers zero: the run is then
    /// timed from that check.
    fn elapsed(&mut self) -> Duration {
        Duration::ZERO
    }
}

/// Longest a library's code may run when it is loaded (Redis's FUNCTION LOAD timeout).
const LIBRARY_LOAD_LIMIT: Duration = Duration::from_millis(500);

/// Lua 5.1's defaults for the collector's pause and step multiplier (LUAI_GCPAUSE, LUAI_GCMUL),
/// in percent, put back at each such step.
const GC_PAUSE_PERCENT: c_int = 200;
const GC_STEP_MULTIPLIER_PERCENT: c_int = 200;
/// Garbage past this share of the memory limit (1/n) after a run: a whole collection before the
/// next (garbage: what is in use beyond what the last whole collection left).
const GC_FULL_COLLECTION_SHARE: usize = 4;

/// A function a library registered when it was loaded.
pub struct Registered {
    pub name: String,
    /// The number `start` knows it by.
    pub id: u32,
    pub flags: Vec<String>,
    pub description: Option<String>,
}

pub struct Scripts {
    /// The script's stack and the run on it. First, so that it is dropped first: a busy run is
    /// ended while the Lua state still exists.
    runner: Runner,
    lua: Lua,
    /// Compiled scripts by their number, 1 up (a Lua array).
    compiled: Table,
    /// What each is called in error messages — a script's SHA-1 (hex, lower case), a function's
    /// name — and whether it is a function: the first is number 1's.
    names: RefCell<Vec<(Rc<str>, bool)>>,
    /// sandbox.lua's runner of a library's code.
    library_runner: Function,
    /// The environment every script runs in (sandbox.lua's `env`), set on it when compiled.
    script_env: Table,
    /// The state's main thread, where runs start and the collector is stepped.
    state: *mut ffi::lua_State,
    /// Bytes the state may hold (its memory limit).
    memory_bytes_max: usize,
    /// Bytes in use after the last whole collection: what was alive then.
    live_bytes: Cell<usize>,
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
        let run = Rc::new(Run::default());
        let bridge = lua.create_table()?;
        bridge.set("version", REDIS_VERSION)?;
        bridge.set("version_num", REDIS_VERSION_NUM)?;
        bridge.set("bit", bit::library(&lua)?)?;
        bridge.set("cjson", cjson::library(&lua)?)?;
        bridge.set("cmsgpack", cmsgpack::library(&lua)?)?;
        bridge.set("struct", struct_lib::library(&lua)?)?;
        // SAFETY: both are plain Lua C functions (call.rs).
        bridge.set("redis_call", unsafe { lua.create_c_function(call::redis_call)? })?;
        bridge.set("redis_pcall", unsafe { lua.create_c_function(call::redis_pcall)? })?;
        bridge.set("redis_api", redis_api::library(&lua)?)?;
        {
            let run = run.clone();
            bridge.raw_set("ending", lua.create_function(move |_, ()| Ok(run.ending()))?)?;
        }
        // What would let a script crash the server or change what other scripts see, replaced
        // before sandbox.lua copies the globals: limits.rs, readonly.rs, chunks.rs.
        let globals = lua.globals();
        limits::install(&lua, &globals, &globals.raw_get("string")?)?;
        bridge.set("protect", readonly::install(&lua, &globals, &globals.raw_get("table")?)?)?;
        bridge.set("loaders", lua.create_function(|lua, env: Table| chunks::loaders(lua, env))?)?;
        chunks::anchor_names(&lua)?;
        let runners: Table = lua.load(include_str!("sandbox.lua")).set_name("=svc_sandbox").call(bridge)?;
        let compiled = lua.create_table()?;
        let library_runner = runners.get("library")?;
        let script_env = runners.get("env")?;
        let (handler, script_names) = (runners.get::<Function>("handler")?, runners.get::<Table>("script_names")?);
        // Every script's KEYS and ARGV: two tables refilled by each run (run_entry says why).
        let (keys, argv) = (lua.create_table()?, lua.create_table()?);
        script_names.raw_set("KEYS", &keys)?;
        script_names.raw_set("ARGV", &argv)?;
        let mut state = std::ptr::null_mut();
        let mut entry = 0;
        // SAFETY: pushes the five upvalues and makes the closure on the main thread's stack,
        // protected; the registry keeps it.
        unsafe {
            lua.exec_raw::<()>((handler, script_names, &compiled, keys, argv), |raw| {
                ffi::lua_pushcclosure(raw, run::run_entry, 5);
                entry = ffi::luaL_ref(raw, ffi::LUA_REGISTRYINDEX);
                state = raw;
            })?;
        }
        let runner = Runner::new(state, entry, run).map_err(|e| mlua::Error::runtime(format!("no stack for scripts: {e}")))?;
        Ok(Scripts {
            runner, lua, compiled, names: RefCell::new(Vec::new()), library_runner, script_env, state, memory_bytes_max,
            live_bytes: Cell::new(0),
        })
    }

    /// Compiles `body`, the script whose SHA-1 is `sha`, and keeps it; returns the number `start`
    /// knows it by. The error is Lua's message ("user_script:1: …").
    pub fn load(&self, sha: &str, body: &[u8]) -> Result<u32, String> {
        if body.len() >= chunks::CHUNK_BYTES_MAX {
            return Err(format!("user_script: {}", chunks::CHUNK_TOO_LONG));
        }
        let function = self.lua.load(chunks::text_only(body).as_ref()).set_name(chunks::SCRIPT_CHUNK_NAME).into_function().map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => message,
            other => other.to_string(),
        })?;
        function.set_environment(self.script_env.clone()).map_err(|e| e.to_string())?;
        self.keep(sha, false, function).map_err(|e| e.to_string())
    }

    fn keep(&self, name: &str, is_function: bool, callable: Function) -> mlua::Result<u32> {
        let mut names = self.names.borrow_mut();
        names.push((Rc::from(name), is_function));
        self.compiled.raw_set(names.len(), callable)?;
        Ok(names.len() as u32)
    }

    /// Runs a library's code (its shebang made a comment) and keeps the functions it registers;
    /// returns them. The error is what Redis 7.0 answers after "Error compiling function: " or
    /// "Error registering functions: " (the first word says which), e.g. "ERR Function already
    /// exists in the library"; a library that registers nothing is an error too.
    /// `host` takes the library's redis.log lines (it calls no command while it loads).
    pub fn load_library(&self, code: &[u8], host: &mut dyn Host) -> Result<Vec<Registered>, String> {
        if code.len() >= chunks::CHUNK_BYTES_MAX {
            return Err(format!("Error compiling function: user_function: {}", chunks::CHUNK_TOO_LONG));
        }
        let chunk = self.lua.load(chunks::text_only(code).as_ref()).set_name(chunks::LIBRARY_CHUNK_NAME).into_function().map_err(|e| match e {
            mlua::Error::SyntaxError { message, .. } => format!("Error compiling function: {message}"),
            other => format!("Error compiling function: {other}"),
        })?;
        let (result, timed_out) = self.runner.run().loading(LIBRARY_LOAD_LIMIT, host, || self.library_runner.call::<(bool, Value)>(chunk));
        self.runner.settle_hook();
        let registering_error = |text: String| format!("Error registering functions: {text}");
        // Past its time the code is stopped at every instruction, so the error may surface
        // anywhere, the library runner included.
        if timed_out {
            return Err(registering_error("ERR FUNCTION LOAD timeout".to_string()));
        }
        let registered = match result {
            Ok((true, Value::Table(list))) => list,
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

    /// Whether a run is busy in this state: started, past its threshold, waiting for `resume`.
    pub fn busy(&self) -> bool {
        self.runner.busy()
    }

    /// The buffer to pack the next run's keys, then arguments, into (words.rs); emptied first.
    /// Not while a run is busy.
    pub fn words_for_next_run(&self) -> std::cell::RefMut<'_, Vec<u8>> {
        assert!(!self.busy(), "a script is busy in this Lua state");
        let mut words = std::cell::RefMut::map(self.runner.job(), |job| &mut job.words);
        words.clear();
        words
    }

    /// Starts script or function `id` (numbered by `load` or `load_library`) with the words
    /// packed by `words_for_next_run`, the first `key_count` of them its keys. It runs to its end
    /// (Done: `reply` has its reply), or until it has run `busy_after` and stops for the server
    /// (Busy: `resume` goes on with it).
    pub fn start(&self, id: u32, key_count: usize, busy_after: Duration, host: &mut dyn Host) -> Outcome {
        {
            let mut job = self.runner.job();
            job.out.clear();
            let names = self.names.borrow();
            let Some((name, is_function)) = names.get((id as usize).wrapping_sub(1)) else {
                job.out.extend_from_slice(format!("\0-ERR no script is numbered {id}\r\n").as_bytes());
                return Outcome::Done;
            };
            job.id = id;
            job.is_function = *is_function;
            job.key_count = key_count;
            job.name = name.clone();
        }
        self.ended(self.runner.start(busy_after, host))
    }

    /// Goes on with the busy run for a slice (BUSY_SLICE) or to its end; with `kill` (SCRIPT KILL,
    /// FUNCTION KILL) it is ended first, with Redis's error, however it catches errors.
    pub fn resume(&self, kill: bool, host: &mut dyn Host) -> Outcome {
        self.ended(self.runner.resume(kill, host))
    }

    fn ended(&self, outcome: Outcome) -> Outcome {
        if outcome == Outcome::Done {
            self.collect_garbage_now_and_then();
        }
        outcome
    }

    /// After a run, the garbage collector, so that no script's use of it reaches the next:
    /// - after a run that stopped the collector or changed its pause or step multiplier, those go
    ///   back to Lua's defaults and the collector runs again (in Redis they last; it only restarts
    ///   a stopped collector with the step it makes every 50 scripts);
    /// - after a run that leaves more garbage than a GC_FULL_COLLECTION_SHARE of the memory limit,
    ///   a whole collection: Lua 5.1 does not collect when an allocation fails, so the garbage of
    ///   a script that stopped the collector, or made hundreds of megabytes, would make the next
    ///   scripts fail with "not enough memory" (Redis, with no limit, grows instead). Garbage is
    ///   what is in use beyond what the last whole collection left alive, so a large cache of
    ///   compiled scripts does not make every run collect.
    ///
    /// Redis's own step every 50 scripts is not made: Lua's incremental collector already keeps
    /// pace with what scripts allocate, and the forced step tripled the collector's work on short
    /// scripts (a no-op EVALSHA 1.2 → 1.4 µs in process), for a restart the first rule now makes.
    fn collect_garbage_now_and_then(&self) {
        let changed = self.runner.run().collector_changed.get();
        let garbage = self.lua.used_memory().saturating_sub(self.live_bytes.get());
        let full = garbage > self.memory_bytes_max / GC_FULL_COLLECTION_SHARE;
        if !changed && !full {
            return;
        }
        unsafe extern "C-unwind" fn defaults(state: *mut ffi::lua_State) {
            ffi::lua_gc(state, ffi::LUA_GCSETPAUSE, GC_PAUSE_PERCENT);
            ffi::lua_gc(state, ffi::LUA_GCSETSTEPMUL, GC_STEP_MULTIPLIER_PERCENT);
        }
        unsafe extern "C-unwind" fn restart(state: *mut ffi::lua_State) -> c_int {
            defaults(state);
            ffi::lua_gc(state, ffi::LUA_GCRESTART, 0);
            0
        }
        unsafe extern "C-unwind" fn collect(state: *mut ffi::lua_State) -> c_int {
            defaults(state);
            ffi::lua_gc(state, ffi::LUA_GCCOLLECT, 0);
            0
        }
        let what: ffi::lua_CFunction = if full { collect } else { restart };
        // SAFETY: the main thread, between runs. Protected: a collection may run mlua's
        // finalizers, and nothing that fails in one may take the server down (what fails is
        // dropped). A whole collection restarts a stopped collector too (its threshold is set
        // anew).
        unsafe {
            if ffi::lua_cpcall(self.state, what, std::ptr::null_mut()) != 0 {
                ffi::lua_pop(self.state, 1);
            }
        }
        if full {
            self.live_bytes.set(self.lua.used_memory());
        }
    }

    /// The reply of the run that ended last: a byte of flags — run::REPLY_COUNTED (an error the
    /// server has counted already: a command's own, passed on) and run::REPLY_PLAIN (plain RESP2)
    /// — then the RESP2 reply.
    pub fn reply(&self) -> Ref<'_, [u8]> {
        Ref::map(self.runner.job_ref(), |job| &job.out[..])
    }

    /// Runs script `id` with `keys` and `argv` to its end, resuming it while it is busy; returns
    /// `reply()`'s bytes. For callers that cannot answer others meanwhile (tests).
    pub fn run(&self, id: u32, keys: &[&[u8]], argv: &[&[u8]], host: &mut dyn Host) -> Vec<u8> {
        {
            let mut words = self.words_for_next_run();
            let all: Vec<&[u8]> = keys.iter().chain(argv.iter()).copied().collect();
            words.extend_from_slice(&words::pack(&all));
        }
        let mut outcome = self.start(id, keys.len(), Duration::MAX, host);
        while outcome == Outcome::Busy {
            outcome = self.resume(false, host);
        }
        self.reply().to_vec()
    }

    /// Bytes the Lua state holds (INFO's used_memory_lua).
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

#[cfg(test)]
mod tests;

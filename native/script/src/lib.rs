//! Lua scripts for the kv server's EVAL, in Lua 5.1 (the version Redis embeds, so scripts written
//! for Redis compute the same: `10/2` is `5`, not `5.0`).
//!
//! One `Scripts` holds one Lua state: the sandbox (sandbox.lua) and every script loaded into it,
//! compiled once and kept by number (the server maps SHA-1s to numbers). Running a script hands
//! each `redis.call` to a `Host` — the server, which runs the command as a client would and
//! answers its RESP2 reply — and gives back the script's result as the RESP2 reply for the client.

mod bit;
mod call;
mod chunks;
mod cjson;
mod cmsgpack;
mod limits;
mod lua_to_resp;
mod number;
mod readonly;
mod redis_api;
mod resp_to_lua;
mod rust_functions;
mod struct_lib;

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
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
    /// Runs one command, `args[0]` its name, as the script's client. Returns its RESP2 reply,
    /// which stays as it is until the next call, and whether the command changed data.
    fn call(&mut self, args: &[&[u8]]) -> (&[u8], bool);
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
}

/// The upvalues of `run_entry`: sandbox.lua's error handler, the names scripts see as globals
/// (where KEYS and ARGV go), and the table of compiled scripts and registered functions.
const HANDLER_UPVALUE: c_int = 1;
const SCRIPT_NAMES_UPVALUE: c_int = 2;
const SCRIPTS_UPVALUE: c_int = 3;

/// Longest a library's code may run when it is loaded (Redis's FUNCTION LOAD timeout).
const LIBRARY_LOAD_LIMIT: Duration = Duration::from_millis(500);

/// Runs between two steps of the garbage collector that the server makes itself, and the KiB
/// each such step collects: Redis's LUA_GC_CYCLE_PERIOD, which it uses for both.
const GC_STEP_PERIOD_RUNS: u32 = 50;
const GC_STEP_KIB: c_int = 50;
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
    /// The environment every script runs in (sandbox.lua's `env`), set on it when compiled.
    script_env: Table,
    /// The run in progress, as the bridge's functions and the time-limit hook see it.
    run: Rc<Run>,
    /// The state's main thread, where runs start (run_entry), and run_entry's place in the
    /// registry.
    state: *mut ffi::lua_State,
    entry: c_int,
    /// Runs since the last garbage collection step (collect_garbage_now_and_then).
    runs_since_gc_step: Cell<u32>,
    /// Bytes the state may hold (its memory limit).
    memory_bytes_max: usize,
    /// Bytes in use after the last whole collection: what was alive then.
    live_bytes: Cell<usize>,
}

/// What `run_entry` is asked to do and where it writes the reply: one run of a script or function.
struct Job<'a> {
    id: u32,
    is_function: bool,
    keys: &'a [&'a [u8]],
    argv: &'a [&'a [u8]],
    /// What the script is called in error messages.
    name: &'a str,
    /// Whether the time limit ended it.
    ended: &'a Cell<bool>,
    out: &'a mut Vec<u8>,
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
    /// Whether the script asked for RESP3 (redis.setresp(3)): its booleans are returned as RESP3's.
    pub resp3: Cell<bool>,
    /// The settings of the `cjson` scripts share, the run's own (cjson.rs).
    pub cjson: Cell<cjson::Settings>,
    /// Whether the script stopped the collector or changed its pace (limits.rs).
    pub collector_changed: Cell<bool>,
}

impl Run {
    /// What a script may set for itself, back to the defaults: each run starts from them.
    fn reset_settings(&self) {
        self.resp3.set(false);
        self.cjson.set(cjson::Settings::default());
        self.collector_changed.set(false);
    }

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
        // SAFETY: both are plain Lua C functions (call.rs).
        bridge.set("redis_call", unsafe { lua.create_c_function(call::redis_call)? })?;
        bridge.set("redis_pcall", unsafe { lua.create_c_function(call::redis_pcall)? })?;
        bridge.set("redis_api", redis_api::library(&lua)?)?;
        // What would let a script crash the server or change what other scripts see, replaced
        // before sandbox.lua copies the globals: limits.rs, readonly.rs, chunks.rs.
        let globals = lua.globals();
        limits::install(&lua, &globals, &globals.raw_get("string")?)?;
        bridge.set("protect", readonly::install(&lua, &globals, &globals.raw_get("table")?)?)?;
        bridge.set("loaders", lua.create_function(|lua, env: Table| chunks::loaders(lua, env))?)?;
        chunks::anchor_names(&lua)?;
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
        let compiled = lua.create_table()?;
        let library_runner = runners.get("library")?;
        let script_env = runners.get("env")?;
        let (handler, script_names) = (runners.get::<Function>("handler")?, runners.get::<Table>("script_names")?);
        let mut state = std::ptr::null_mut();
        let mut entry = 0;
        // SAFETY: pushes the three upvalues and makes the closure on the main thread's stack,
        // protected; the registry keeps it.
        unsafe {
            lua.exec_raw::<()>((handler, script_names, &compiled), |raw| {
                ffi::lua_pushcclosure(raw, run_entry, 3);
                entry = ffi::luaL_ref(raw, ffi::LUA_REGISTRYINDEX);
                state = raw;
            })?;
        }
        Ok(Scripts { lua, compiled, names: RefCell::new(Vec::new()), library_runner, script_env, run, state, entry, runs_since_gc_step: Cell::new(0), memory_bytes_max, live_bytes: Cell::new(0) })
    }

    /// Compiles `body`, the script whose SHA-1 is `sha`, and keeps it; returns the number `run`
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
        if code.len() >= chunks::CHUNK_BYTES_MAX {
            return Err(format!("Error compiling function: user_function: {}", chunks::CHUNK_TOO_LONG));
        }
        let chunk = self.lua.load(chunks::text_only(code).as_ref()).set_name(chunks::LIBRARY_CHUNK_NAME).into_function().map_err(|e| match e {
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
        let mut out = Vec::new();
        self.run_into(id, keys, argv, limit, host, &mut out);
        out
    }

    /// `run`, writing into `out` (emptied first), whose room a caller keeps from run to run.
    pub fn run_into(&self, id: u32, keys: &[&[u8]], argv: &[&[u8]], limit: Duration, host: &mut dyn Host, out: &mut Vec<u8>) {
        out.clear();
        let names = self.names.borrow();
        let Some((name, is_function)) = names.get((id as usize).wrapping_sub(1)) else {
            return out.extend_from_slice(format!("\0-ERR no script is numbered {id}\r\n").as_bytes());
        };
        let mut job = Job { id, is_function: *is_function, keys, argv, name, ended: &self.run.ended, out };
        // SAFETY: run_entry runs protected (lua_pcall) on the main thread, whose stack is put
        // back as it was; `job` outlives the call.
        self.running(limit, host, || unsafe {
            let state = self.state;
            let top = ffi::lua_gettop(state);
            ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::lua_Integer::from(self.entry));
            ffi::lua_pushlightuserdata(state, (&mut job as *mut Job).cast());
            let status = ffi::lua_pcall(state, 1, 0, 0);
            if status != 0 {
                // Out of memory making KEYS and ARGV, say: what run_entry wrote is dropped.
                job.out.clear();
                job.out.extend_from_slice(b"\0-");
                let message = if ffi::lua_type(state, -1) == ffi::LUA_TSTRING { lua_to_resp::string_at(state, -1) } else { b"unknown error" };
                lua_to_resp::push_error(job.out, &[b"ERR ", message].concat());
            }
            ffi::lua_settop(state, top);
        });
        self.collect_garbage_now_and_then();
    }

    /// After a run, the garbage collector, so that no script's use of it reaches the next:
    /// - after a run that stopped the collector or changed its pause or step multiplier, those go
    ///   back to Lua's defaults and the collector runs again (in Redis they last; it only restarts
    ///   a stopped collector with its periodic step);
    /// - every GC_STEP_PERIOD_RUNS runs, a step, as Redis makes after its scripts, with the
    ///   defaults put back;
    /// - after a run that leaves more garbage than a GC_FULL_COLLECTION_SHARE of the memory limit,
    ///   a whole collection: Lua 5.1 does not collect when an allocation fails, so the garbage of
    ///   a script that stopped the collector, or made hundreds of megabytes, would make the next
    ///   scripts fail with "not enough memory" (Redis, with no limit, grows instead). Garbage is
    ///   what is in use beyond what the last whole collection left alive, so a large cache of
    ///   compiled scripts does not make every run collect.
    fn collect_garbage_now_and_then(&self) {
        let runs = self.runs_since_gc_step.get() + 1;
        let changed = self.run.collector_changed.get();
        let garbage = self.lua.used_memory().saturating_sub(self.live_bytes.get());
        let full = garbage > self.memory_bytes_max / GC_FULL_COLLECTION_SHARE;
        if runs < GC_STEP_PERIOD_RUNS && !changed && !full {
            return self.runs_since_gc_step.set(runs);
        }
        self.runs_since_gc_step.set(0);
        unsafe extern "C-unwind" fn defaults(state: *mut ffi::lua_State) {
            ffi::lua_gc(state, ffi::LUA_GCSETPAUSE, GC_PAUSE_PERCENT);
            ffi::lua_gc(state, ffi::LUA_GCSETSTEPMUL, GC_STEP_MULTIPLIER_PERCENT);
        }
        unsafe extern "C-unwind" fn step(state: *mut ffi::lua_State) -> c_int {
            defaults(state);
            ffi::lua_gc(state, ffi::LUA_GCSTEP, GC_STEP_KIB);
            0
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
        let what: ffi::lua_CFunction = if full { collect } else if changed { restart } else { step };
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

    /// Runs `f` as the run in progress — a script's or a library's load — with `host` answering
    /// its redis.call and redis.log and `limit` its time limit; the run's state is reset first.
    fn running<R>(&self, limit: Duration, host: &mut dyn Host, f: impl FnOnce() -> R) -> R {
        self.run.wrote.set(false);
        self.run.ended.set(false);
        self.run.reset_settings();
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

    /// Bytes the Lua state holds (INFO's used_memory_lua).
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }
}

/// Runs a script or function as a `Job` (the lightuserdata argument) says, protected by the
/// lua_pcall in run_into, and writes its reply into the job's `out`: the counted-error byte, then
/// RESP2. The script itself runs under a lua_pcall of its own whose error function is
/// sandbox.lua's handler (that is what xpcall does), so its errors come back as the handler's
/// tables; what reaches run_into's pcall is Lua's (out of memory making KEYS and ARGV).
///
/// Raw stack calls, not mlua's: mlua's protected call makes a closure per call and its values a
/// reference each, which together cost as much as running a short script; and a runner in Lua
/// would be two calls more (itself, and xpcall). Nothing Rust owns may be alive across a Lua call
/// that can raise (it leaves by longjmp): the job's buffer is its caller's, and no temporary
/// lives across one.
unsafe extern "C-unwind" fn run_entry(state: *mut ffi::lua_State) -> c_int {
    let job = &mut *ffi::lua_touserdata(state, 1).cast::<Job>();
    ffi::lua_settop(state, 0);
    ffi::lua_pushvalue(state, ffi::lua_upvalueindex(HANDLER_UPVALUE));
    ffi::lua_rawgeti(state, ffi::lua_upvalueindex(SCRIPTS_UPVALUE), ffi::lua_Integer::from(job.id));
    let arguments = if job.is_function {
        // A function gets its keys and arguments as its parameters.
        push_words(state, job.keys);
        push_words(state, job.argv);
        2
    } else {
        // A script reads them as the globals KEYS and ARGV.
        let names = ffi::lua_upvalueindex(SCRIPT_NAMES_UPVALUE);
        ffi::lua_pushstring(state, c"KEYS".as_ptr());
        push_words(state, job.keys);
        ffi::lua_rawset(state, names);
        ffi::lua_pushstring(state, c"ARGV".as_ptr());
        push_words(state, job.argv);
        ffi::lua_rawset(state, names);
        0
    };
    let status = ffi::lua_pcall(state, arguments, 1, 1);
    ffi::lua_pushboolean(state, c_int::from(status == 0));
    ffi::lua_replace(state, 1);
    // Stack: 1 whether it ran to its end, 2 its value or its error.
    let out = &mut *job.out;
    out.push(0);
    if ffi::lua_toboolean(state, 1) != 0 {
        if ffi::lua_type(state, 2) == ffi::LUA_TTABLE && lua_to_resp::is_counted_error(state, 2) {
            out[0] = 1;
        }
        lua_to_resp::encode(state, 2, out);
    } else if job.ended.get() {
        out.extend_from_slice(b"-ERR script ");
        out.extend_from_slice(job.name.as_bytes());
        out.extend_from_slice(b" ran past its time limit without writing and was ended\r\n");
    } else {
        match ffi::lua_type(state, 2) {
            ffi::LUA_TTABLE => {
                out[0] = u8::from(lua_to_resp::is_counted_error(state, 2));
                script_error(state, 2, job.name, out);
            }
            // Lua calls no handler for an allocation that fails: its message comes as it is.
            ffi::LUA_TSTRING => {
                let message = lua_to_resp::string_at(state, 2);
                let line = [b"ERR ", message, b" script: ", job.name.as_bytes()].concat();
                out.push(b'-');
                lua_to_resp::push_error(out, &line);
            }
            _ => {
                out.extend_from_slice(b"-ERR unknown error script: ");
                out.extend_from_slice(job.name.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
        }
    }
    0
}

/// A script's error (the table at `index`) as Redis 7.0 reports it: "-<error> script: <sha or
/// function>, on @user_script:<line>."
unsafe fn script_error(state: *mut ffi::lua_State, index: c_int, name: &str, out: &mut Vec<u8>) {
    // The three fields stay on the stack, so their bytes stay valid, until the line is written.
    let err = lua_to_resp::raw_field(state, index, c"err");
    let source = lua_to_resp::raw_field(state, index, c"source");
    let at = lua_to_resp::raw_field(state, index, c"line");
    let text: &[u8] = if err == ffi::LUA_TSTRING { lua_to_resp::string_at(state, -3) } else { b"ERR unknown error" };
    let mut line = [text, b" script: ", name.as_bytes()].concat();
    if source == ffi::LUA_TSTRING && at == ffi::LUA_TNUMBER {
        let source = String::from_utf8_lossy(lua_to_resp::string_at(state, -2));
        line.extend_from_slice(format!(", on {source}:{}.", ffi::lua_tonumber(state, -1) as i64).as_bytes());
    }
    ffi::lua_pop(state, 3);
    out.push(b'-');
    lua_to_resp::push_error(out, &line);
}

#[cfg(test)]
mod tests;

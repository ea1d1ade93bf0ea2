//! Lua states for the kv server's EVAL and FUNCTION (crate svc-script), each known by a number:
//! `luaOpen` makes one, `luaRun` runs a script in it — to its end, or until it has run past
//! busy-reply-threshold and stops for the server, after which `luaResume` goes on with it slice
//! by slice — and each command the script calls comes back to JavaScript once, through the `call`
//! function the state was opened with.
//!
//! Why numbers and free functions rather than a class: napi-rs 3 records every call of a class
//! instance's method as a borrow of it, in a table shared by the process under a lock, and Bun
//! charges ~60 ns for each typed-array argument. A trivial method call cost ~300 ns; a run now
//! crosses with four numbers, and not through N-API at all: `luaRun` is the C function
//! svc_lua_run, which Bun's FFI calls (see there).
//!
//! Words (KEYS and ARGV, a command's arguments) cross as one buffer: a u32 count, then each word
//! as a u32 length and its bytes, little-endian (svc_script::words; src/kv/scripting/words.ts on
//! the other side).
//!
//! A command's words and its reply cross through a mailbox: one buffer the server gives
//! `luaOpen`, which both sides write and read in turn. What does not fit crosses in a buffer of
//! its own: a script's words through `luaStageWords` before the run, its reply through
//! `luaTakeReply` after it, a command's words as `call`'s argument and its reply as what `call`
//! returns.

use std::cell::{Cell, RefCell};
use std::ptr;
use std::rc::Rc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use svc_script::word_cache::with_word_cache;
use svc_script::{words, Outcome};

/// What `luaRun` and `luaResume` return when the reply is too long for the mailbox:
/// `luaTakeReply` has it. Never a length: the mailbox is far shorter than 2^31 bytes.
const REPLY_TOO_LONG: u32 = u32::MAX;
/// What they return when the script has stopped busy: `luaResume` goes on with it.
const BUSY: u32 = u32::MAX - 1;

/// One Lua state and what its runs reach the server through.
struct LuaState {
    scripts: svc_script::Scripts,
    /// The server's functions for a script's commands and its log lines, held for as long as
    /// the state lives (luaClose lets go of them).
    call: sys::napi_ref,
    log: sys::napi_ref,
    /// The mailbox, held by `_mailbox` and written through the pointer (see luaOpen).
    _mailbox: Uint8Array,
    mailbox_at: *mut u8,
    mailbox_bytes: usize,
    /// A run's words when they do not fit the mailbox (luaStageWords), until the run.
    staged: RefCell<Option<Vec<u8>>>,
    /// The environment luaOpen was called in, which every run reaches the server through (JsHost):
    /// svc_lua_run is given none, as no N-API call is under way there.
    env: sys::napi_env,
}

thread_local! {
    /// The states opened on this thread, by number; None once closed.
    static STATES: RefCell<Vec<Option<Rc<LuaState>>>> = const { RefCell::new(Vec::new()) };
}

/// The state numbered `handle`. A clone of its Rc, so that none of STATES is borrowed while a
/// script runs (INFO, run by a script, asks for the state's memory).
fn state(handle: u32) -> Result<Rc<LuaState>> {
    STATES.with_borrow(|states| states.get(handle as usize).cloned().flatten())
        .ok_or_else(|| Error::new(Status::InvalidArg, format!("no Lua state is numbered {handle}")))
}

/// The server, as a running script reaches it: the functions luaOpen was given, taken out of
/// their references only when a script first calls a command or logs.
struct JsHost<'a> {
    env: sys::napi_env,
    state: &'a LuaState,
    call: sys::napi_value,
    log: sys::napi_value,
    /// `undefined`, what the functions are called on; fetched with the first of them.
    this: sys::napi_value,
    /// A command's reply that was too long for the mailbox, until the next command.
    own_reply: Vec<u8>,
    /// A JavaScript exception thrown by `call` or `log`, left pending: the run ends with it.
    failure: Option<Error>,
}

impl<'a> JsHost<'a> {
    /// The server as `state`'s runs reach it, through the env the state was opened in: the same
    /// for an N-API call (luaResume, luaLoadLibrary) as for svc_lua_run, which no N-API call gives one.
    fn new(state: &'a LuaState) -> Self {
        JsHost { env: state.env, state, call: ptr::null_mut(), log: ptr::null_mut(), this: ptr::null_mut(), own_reply: Vec::new(), failure: None }
    }

    /// The function `reference` holds, fetched into `slot` the first time (with `undefined`).
    fn function(&mut self, reference: sys::napi_ref, slot: sys::napi_value) -> Result<sys::napi_value> {
        if !slot.is_null() {
            return Ok(slot);
        }
        let mut value = ptr::null_mut();
        // SAFETY: a reference made by luaOpen, alive until luaClose; values of this env.
        unsafe {
            check_status!(sys::napi_get_reference_value(self.env, reference, &mut value))?;
            if self.this.is_null() {
                check_status!(sys::napi_get_undefined(self.env, &mut self.this))?;
            }
        }
        Ok(value)
    }

    /// Calls `function` (fetched by `function`) with `args`, as plain functions are called.
    fn invoke(&self, function: sys::napi_value, args: &[sys::napi_value]) -> Result<sys::napi_value> {
        let mut result = ptr::null_mut();
        // SAFETY: values of this env, made in the native call still running.
        check_status!(unsafe { sys::napi_call_function(self.env, self.this, function, args.len(), args.as_ptr(), &mut result) })?;
        Ok(result)
    }

    /// A new Buffer holding a copy of `bytes`.
    fn buffer(&self, bytes: &[u8]) -> Result<sys::napi_value> {
        let mut data = ptr::null_mut();
        let mut value = ptr::null_mut();
        // SAFETY: copies `bytes` into memory the new Buffer owns.
        check_status!(unsafe { sys::napi_create_buffer_copy(self.env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut value) })?;
        Ok(value)
    }

    /// Runs one command through `call`: the length of its reply at the mailbox's start, or None
    /// when it was too long for it and is in own_reply.
    fn exchange(&mut self, args: &[&[u8]]) -> Result<Option<usize>> {
        self.call = self.function(self.state.call, self.call)?;
        if words::packed_bytes(args) > self.state.mailbox_bytes {
            let words = self.buffer(&words::pack(args))?;
            let answer = self.invoke(self.call, &[words])?;
            return self.reply_of(answer);
        }
        {
            // SAFETY: JavaScript writes the mailbox only inside `call`, not now.
            let mailbox = unsafe { std::slice::from_raw_parts_mut(self.state.mailbox_at, self.state.mailbox_bytes) };
            // A word the script was given crosses as a reference to it, and one the server
            // holds in the word cache as that (svc_script::words).
            svc_script::with_run_words(|run| with_word_cache(|cache| words::pack_into(args, mailbox, |word| run.find(word), Some(cache))));
        }
        let reply = self.invoke(self.call, &[]).and_then(|answer| self.reply_of(answer));
        // The server read every word if `call` answered, and may not have if it failed (it
        // threw, or answered undefined).
        with_word_cache(|cache| if reply.is_ok() { cache.confirm() } else { cache.forget_pending() });
        reply
    }

    /// The reply `answer` (what `call` returned) gives: the length of the reply at the mailbox's
    /// start, or None for a reply in a typed array of its own, copied into own_reply.
    fn reply_of(&mut self, answer: sys::napi_value) -> Result<Option<usize>> {
        let mut length = 0u32;
        // SAFETY: `answer` is a value of this env, made in the call still running.
        unsafe {
            if sys::napi_get_value_uint32(self.env, answer, &mut length) == sys::Status::napi_ok {
                if length as usize > self.state.mailbox_bytes {
                    return Err(Error::new(Status::GenericFailure, "a reply longer than the mailbox"));
                }
                return Ok(Some(length as usize));
            }
            let (mut kind, mut length, mut data, mut buffer, mut offset) = (0, 0, ptr::null_mut(), ptr::null_mut(), 0);
            check_status!(sys::napi_get_typedarray_info(self.env, answer, &mut kind, &mut length, &mut data, &mut buffer, &mut offset))?;
            let own = if length == 0 { &[][..] } else { std::slice::from_raw_parts(data.cast::<u8>(), length) };
            self.own_reply.clear();
            self.own_reply.extend_from_slice(own);
            if self.own_reply.is_empty() {
                self.own_reply.extend_from_slice(b"-ERR the server answered nothing\r\n");
            }
            Ok(None)
        }
    }
}

thread_local! {
    /// The server's function for what a running script asks besides commands and log lines
    /// (luaSetAsk): `ask(question, argument)`, a number back.
    static ASK: Cell<sys::napi_ref> = const { Cell::new(ptr::null_mut()) };
}

/// `ask`'s questions: redis.setresp's protocol (the argument; answer ignored),
/// redis.acl_check_cmd's (the argument the command's packed words; the answer
/// ASK_ALLOWED, ASK_DENIED or ASK_UNKNOWN_COMMAND), and how long the running script has run
/// (Host::elapsed; argument 0, the answer in microseconds).
const ASK_SET_PROTOCOL: u32 = 1;
const ASK_MAY_RUN: u32 = 2;
const ASK_ELAPSED: u32 = 3;
const ASK_ALLOWED: u32 = 1;
const ASK_UNKNOWN_COMMAND: u32 = 2;

/// Keeps `ask`, the function that answers what a running script asks besides its commands and
/// log lines (redis.setresp, redis.acl_check_cmd), for every state; called once when the server's
/// Lua side is loaded. `ask(1, protocol)` sets the protocol the script's commands reply in;
/// `ask(2, words)` answers 1 if the script's user may run the command packed in `words`, 0 if
/// not, 2 if there is no such command; `ask(3, 0)` answers the microseconds the running script
/// has run.
#[napi(js_name = "luaSetAsk")]
pub fn lua_set_ask(env: Env, ask: Function) -> Result<()> {
    let mut reference = ptr::null_mut();
    // SAFETY: a reference to the function, kept for the process's life (the one it replaces is
    // let go).
    unsafe {
        check_status!(sys::napi_create_reference(env.raw(), ask.raw(), 1, &mut reference))?;
        let old = ASK.replace(reference);
        if !old.is_null() {
            check_status!(sys::napi_delete_reference(env.raw(), old))?;
        }
    }
    Ok(())
}

impl JsHost<'_> {
    /// Asks `ask` `question` about `argument`; its answer as a u32.
    fn ask(&mut self, question: u32, argument: sys::napi_value) -> Result<u32> {
        let reference = ASK.get();
        if reference.is_null() {
            return Err(Error::new(Status::GenericFailure, "luaSetAsk was not called"));
        }
        let ask = self.function(reference, ptr::null_mut())?;
        let mut question_value = ptr::null_mut();
        let mut answer = 0;
        // SAFETY: values of this env, made in the native call still running.
        unsafe {
            check_status!(sys::napi_create_uint32(self.env, question, &mut question_value))?;
            let result = self.invoke(ask, &[question_value, argument])?;
            check_status!(sys::napi_get_value_uint32(self.env, result, &mut answer))?;
        }
        Ok(answer)
    }

    fn number(&self, n: u32) -> Result<sys::napi_value> {
        let mut value = ptr::null_mut();
        // SAFETY: a value of this env.
        check_status!(unsafe { sys::napi_create_uint32(self.env, n, &mut value) })?;
        Ok(value)
    }
}

/// What a script's command answers once the server has failed to run one of them.
const FAILED_COMMAND: &[u8] = b"-ERR the server failed to run the command\r\n";

impl svc_script::Host for JsHost<'_> {
    fn set_protocol(&mut self, protocol: u8) {
        let asked = self.number(u32::from(protocol)).and_then(|argument| self.ask(ASK_SET_PROTOCOL, argument));
        if let Err(error) = asked {
            self.failure.get_or_insert(error);
        }
    }

    fn may_run(&mut self, args: &[&[u8]]) -> Option<bool> {
        let asked = self.buffer(&words::pack(args)).and_then(|words| self.ask(ASK_MAY_RUN, words));
        match asked {
            Ok(ASK_UNKNOWN_COMMAND) => None,
            Ok(answer) => Some(answer == ASK_ALLOWED),
            Err(error) => {
                self.failure.get_or_insert(error);
                Some(false)
            }
        }
    }

    fn elapsed(&mut self) -> Duration {
        let asked = self.number(0).and_then(|argument| self.ask(ASK_ELAPSED, argument));
        match asked {
            Ok(micros) => Duration::from_micros(u64::from(micros)),
            Err(error) => {
                self.failure.get_or_insert(error);
                Duration::ZERO
            }
        }
    }

    fn call(&mut self, args: &[&[u8]]) -> &[u8] {
        if self.failure.is_some() {
            // The run fails with the server's error once it returns: the server runs none of
            // the script's commands after it.
            return FAILED_COMMAND;
        }
        match self.exchange(args) {
            // SAFETY: the mailbox is written by JavaScript only inside the next `call`.
            Ok(Some(length)) => unsafe { std::slice::from_raw_parts(self.state.mailbox_at, length) },
            Ok(None) => &self.own_reply,
            Err(error) => {
                self.failure.get_or_insert(error);
                FAILED_COMMAND
            }
        }
    }

    fn log(&mut self, level: u8, text: &[u8]) {
        // The level, then the text: one buffer, as the call takes one argument.
        let mut line = Vec::with_capacity(1 + text.len());
        line.push(level);
        line.extend_from_slice(text);
        let logged = self.function(self.state.log, self.log).and_then(|log| {
            self.log = log;
            let line = self.buffer(&line)?;
            self.invoke(log, &[line])
        });
        if let Err(error) = logged {
            self.failure.get_or_insert(error);
        }
    }
}

/// A function a library registered, as `luaLoadLibrary` returns it.
#[napi(object)]
pub struct RegisteredFunction {
    pub name: String,
    /// The number `luaRun` knows it by.
    pub id: u32,
    pub flags: Vec<String>,
    pub description: Option<String>,
}

/// Opens a Lua state whose scripts may hold `memory_bytes_max` bytes between them; returns its
/// number. `mailbox` and the server's functions are kept for every run: `call` finds a
/// command's words packed in the mailbox (or, when they do not fit, in the buffer it is given),
/// writes the RESP2 reply at the mailbox's start and returns its length — or, for a reply too
/// long for the mailbox, returns it in a typed array; `log` gets a level byte (0-3), then
/// redis.log's text.
#[napi(js_name = "luaOpen")]
pub fn lua_open(env: Env, memory_bytes_max: f64, mut mailbox: Uint8Array, call: Function, log: Function) -> Result<u32> {
    let scripts = svc_script::Scripts::new(memory_bytes_max as usize).map_err(|e| Error::new(Status::GenericFailure, format!("Lua could not start: {e}")))?;
    let (mut call_ref, mut log_ref) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: references to the two functions, released by luaClose.
    unsafe {
        check_status!(sys::napi_create_reference(env.raw(), call.raw(), 1, &mut call_ref))?;
        check_status!(sys::napi_create_reference(env.raw(), log.raw(), 1, &mut log_ref))?;
    }
    // SAFETY: only the pointer is kept; the array it points into lives as long as the state
    // holds it, and is used during later synchronous calls while JavaScript is stopped.
    let slice = unsafe { mailbox.as_mut() };
    let (mailbox_at, mailbox_bytes) = (slice.as_mut_ptr(), slice.len());
    let state = LuaState {
        scripts,
        call: call_ref,
        log: log_ref,
        _mailbox: mailbox,
        mailbox_at,
        mailbox_bytes,
        staged: RefCell::new(None),
        env: env.raw(),
    };
    STATES.with_borrow_mut(|states| {
        states.push(Some(Rc::new(state)));
        Ok(states.len() as u32 - 1)
    })
}

/// Closes the state numbered `handle`: its scripts and functions are gone, and so is its number.
#[napi(js_name = "luaClose")]
pub fn lua_close(env: Env, handle: u32) -> Result<()> {
    let state = STATES.with_borrow_mut(|states| states.get_mut(handle as usize).and_then(Option::take));
    let Some(state) = state else { return Ok(()) };
    // SAFETY: the references luaOpen made, released once.
    unsafe {
        check_status!(sys::napi_delete_reference(env.raw(), state.call))?;
        check_status!(sys::napi_delete_reference(env.raw(), state.log))?;
    }
    Ok(())
}

/// Compiles `body`, the script whose SHA-1 is `sha`, and keeps it; returns the number `luaRun`
/// knows it by, or throws Lua's compile error.
#[napi(js_name = "luaLoad")]
pub fn lua_load(handle: u32, sha: String, body: &[u8]) -> Result<u32> {
    state(handle)?.scripts.load(&sha, body).map_err(|message| Error::new(Status::GenericFailure, message))
}

/// Runs a library's code (FUNCTION LOAD; its shebang made a comment) and keeps the functions it
/// registers; returns them, or throws the error Redis 7.0 gives after "ERR ". Its redis.log
/// lines go to the state's `log`.
#[napi(js_name = "luaLoadLibrary")]
pub fn lua_load_library(handle: u32, code: &[u8]) -> Result<Vec<RegisteredFunction>> {
    let state = state(handle)?;
    let mut host = JsHost::new(&state);
    let loaded = state.scripts.load_library(code, &mut host);
    if let Some(error) = host.failure {
        return Err(error);
    }
    let registered = loaded.map_err(|message| Error::new(Status::GenericFailure, message))?;
    Ok(registered
        .into_iter()
        .map(|r| RegisteredFunction { name: r.name, id: r.id, flags: r.flags, description: r.description })
        .collect())
}

/// Forgets the scripts or functions numbered `ids`.
#[napi(js_name = "luaUnload")]
pub fn lua_unload(handle: u32, ids: Vec<u32>) -> Result<()> {
    state(handle)?.scripts.unload(&ids).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
}

/// Bytes the Lua state holds.
#[napi(js_name = "luaUsedMemory")]
pub fn lua_used_memory(handle: u32) -> Result<f64> {
    Ok(state(handle)?.scripts.used_memory() as f64)
}

/// Keeps `words` (packed) as the keys and arguments of the next run, for words too long for the
/// mailbox.
#[napi(js_name = "luaStageWords")]
pub fn lua_stage_words(handle: u32, words: &[u8]) -> Result<()> {
    *state(handle)?.staged.borrow_mut() = Some(words.to_vec());
    Ok(())
}

thread_local! {
    /// Why the last svc_lua_run failed, until luaTakeFailure takes it.
    static FAILURE: RefCell<Option<Error>> = const { RefCell::new(None) };
}

/// What svc_lua_run returns when the run failed: luaTakeFailure throws why.
const FAILED: u32 = u32::MAX - 2;

/// `luaRun(lua, id, keyCount, busyAfterMs)`: lua_run as a plain C function, which the server
/// calls through Bun's FFI (src/native/lua-run.ts) rather than N-API: an FFI call of four
/// numbers costs ~8 ns, an N-API one ~90 (the call, a handle scope, reading each argument and
/// making the answer a value), a tenth of a short script's run. With no N-API call under way
/// there is no env to be given: the state keeps the one it was opened in, which lives as long
/// as the thread's JavaScript does. Its answer is lua_run's, or FAILED.
///
/// Values it makes for the server's `call` (a command's words too long for the mailbox, the
/// call's answer) are kept only in locals on this thread's stack, where JavaScript's collector
/// finds them: no handle scope is open to hold them, and none is needed.
#[no_mangle]
pub extern "C" fn svc_lua_run(handle: u32, id: u32, key_count: u32, busy_after_ms: u32) -> u32 {
    let outcome = std::panic::catch_unwind(|| {
        let state = state(handle)?;
        lua_run(&state, id, key_count, busy_after_ms)
    });
    let error = match outcome {
        Ok(Ok(answer)) => return answer,
        Ok(Err(error)) => error,
        Err(_) => Error::new(Status::GenericFailure, "luaRun panicked"),
    };
    FAILURE.set(Some(error));
    FAILED
}

/// Throws why the last svc_lua_run answered FAILED (nothing if it did not).
#[napi(js_name = "luaTakeFailure")]
pub fn lua_take_failure() -> Result<()> {
    FAILURE.take().map_or(Ok(()), Err)
}

/// Starts script or function `id` in `state`. Its keys, then its arguments (the first `key_count` of them
/// keys), are packed in the mailbox, or were staged (luaStageWords). Past `busy_after_ms` it
/// stops, and BUSY is returned: luaResume goes on with it. Otherwise what `answer` says.
fn lua_run(state: &LuaState, id: u32, key_count: u32, busy_after_ms: u32) -> Result<u32> {
    if state.scripts.busy() {
        return Err(Error::new(Status::GenericFailure, "a script is busy in this Lua state"));
    }
    {
        let mut words = state.scripts.words_for_next_run();
        match state.staged.borrow_mut().take() {
            Some(staged) => words.extend_from_slice(&staged),
            None => {
                // SAFETY: the mailbox, which JavaScript does not write during this call but inside `call`.
                let mailbox = unsafe { std::slice::from_raw_parts(state.mailbox_at, state.mailbox_bytes) };
                let packed = words::unpack_prefix(mailbox)
                    .ok_or_else(|| Error::new(Status::InvalidArg, "words are not packed as count, then length and bytes each"))?
                    .1;
                words.extend_from_slice(&mailbox[..packed]);
            }
        }
    }
    let mut host = JsHost::new(state);
    let outcome = state.scripts.start(id, key_count as usize, Duration::from_millis(u64::from(busy_after_ms)), &mut host);
    answer(state, host, outcome)
}

/// Goes on with the busy script of state `handle` for one more slice, killed first if `kill`
/// (SCRIPT KILL, FUNCTION KILL): BUSY again, or what `answer` says.
#[napi(js_name = "luaResume")]
pub fn lua_resume(handle: u32, kill: bool) -> Result<u32> {
    let state = state(handle)?;
    if !state.scripts.busy() {
        return Err(Error::new(Status::GenericFailure, "no script is busy in this Lua state"));
    }
    let mut host = JsHost::new(&state);
    let outcome = state.scripts.resume(kill, &mut host);
    answer(&state, host, outcome)
}

/// The answer to luaRun and luaResume: BUSY; or, for a run that ended, its reply — a byte of
/// flags (REPLY_COUNTED: an error already counted, its command's; REPLY_PLAIN: plain RESP2), then
/// the RESP2 reply — left at the mailbox's start less that byte, and its length × 4 + the flags
/// returned; for a reply too long for the mailbox, REPLY_TOO_LONG, and luaTakeReply gives it. A
/// JavaScript exception the server's `call` threw is the failure.
fn answer(state: &LuaState, host: JsHost, outcome: Outcome) -> Result<u32> {
    if let Some(error) = host.failure {
        return Err(error);
    }
    if outcome == Outcome::Busy {
        return Ok(BUSY);
    }
    let reply = state.scripts.reply();
    let (flags, resp) = (reply[0], &reply[1..]);
    // A length the answer cannot carry under its flags and sentinels goes the long way too.
    if resp.len() > state.mailbox_bytes || resp.len() >= (FAILED >> 2) as usize {
        return Ok(REPLY_TOO_LONG);
    }
    // SAFETY: as in lua_run; JavaScript reads the reply once this call has returned.
    unsafe { std::slice::from_raw_parts_mut(state.mailbox_at, resp.len()) }.copy_from_slice(resp);
    Ok((resp.len() as u32) << 2 | u32::from(flags))
}

/// The last run's reply, when luaRun or luaResume answered REPLY_TOO_LONG: the flags byte, then
/// the RESP2.
#[napi(js_name = "luaTakeReply")]
pub fn lua_take_reply(handle: u32) -> Result<Buffer> {
    Ok(state(handle)?.scripts.reply().to_vec().into())
}


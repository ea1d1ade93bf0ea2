//! How a script runs: on a stack of its own (a stackful coroutine), so that once it has run past
//! busy-reply-threshold it can stop wherever it is — inside pcall, a metamethod, a sort
//! comparator, a Lua coroutine — and hand the server back to JavaScript, which answers other
//! clients (BUSY, SCRIPT KILL) and resumes it. That is what Redis does from its Lua hook by
//! processing events there; a JavaScript server cannot re-enter its event loop from inside a
//! native call, so the native call returns instead, with the script's stack kept.
//!
//! What the server's JavaScript is called for — a script's commands, its log lines — runs back on
//! the stack that resumed the script (`Yielder::on_parent_stack`), so the JavaScript engine only
//! ever sees its own stack.
//!
//! Two rules keep the two stacks apart. Nothing that can raise a Lua error (longjmp) runs on the
//! parent stack, and nothing Rust owns is alive on the script's stack across a Lua call that can
//! raise: see run_entry.

use std::cell::{Cell, Ref, RefCell};
use std::ffi::c_int;
use std::rc::Rc;
use std::time::{Duration, Instant};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use mlua::ffi;

use crate::{cjson, lua_to_resp, words, Host};

/// Lua instructions between checks of the clock (Redis's hook runs every 100,000 too).
pub const INSTRUCTIONS_PER_CHECK: c_int = 100_000;

/// Commands a script calls between checks of the clock: a script that does little but call
/// commands runs few instructions, and a slow command (KEYS on a large database) would otherwise
/// go unchecked for 100,000 instructions' worth of calls.
const CALLS_PER_CHECK: u32 = 16;

/// How long a busy script runs before it lets the server answer others again. Redis processes
/// events at every hook call (~1 ms of Lua); a few ms keeps replies to others prompt while the
/// cost of stopping and resuming (a turn of the event loop) stays a small share of the time.
pub const BUSY_SLICE: Duration = Duration::from_millis(2);

/// Bytes of a script's stack: Lua nests C calls at most 200 deep (LUAI_MAXCCALLS), but a reply
/// nested ~2,000 deep is encoded recursively, and loadstring parses on this stack. It is mapped,
/// not committed: only the pages a script touches take memory.
const STACK_BYTES: usize = 16 * 1024 * 1024;

/// How many of a run's words (its keys, then its arguments) are remembered as the Lua strings the
/// script got, so that a command naming one crosses as a reference to it (run_word). Scripts
/// name a few keys and arguments; a command naming a later one carries its bytes.
const RUN_WORDS_REMEMBERED: usize = 32;

/// A word of the run as the script got it: where Lua keeps the string's bytes, and where the
/// job keeps the word's (which the server was given).
struct RunWord {
    lua: *const u8,
    given: *const u8,
    length: usize,
}

/// The run's remembered words, and a bit for each of their Lua addresses (address_bit): most
/// words of a script's commands are not the run's (BullMQ's: one in five), and one test of that
/// mask turns them away without a pass over up to RUN_WORDS_REMEMBERED words each.
struct RememberedWords {
    words: Vec<RunWord>,
    addresses: u64,
}

impl RememberedWords {
    fn push(&mut self, word: RunWord) {
        self.addresses |= address_bit(word.lua);
        self.words.push(word);
    }

    fn clear(&mut self) {
        self.words.clear();
        self.addresses = 0;
    }
}

/// One of 64 bits for a Lua string's address: bits 4 to 9, above the allocator's 16-byte alignment.
fn address_bit(address: *const u8) -> u64 {
    1 << ((address as usize >> 4) & 63)
}

/// What a run raises when SCRIPT KILL or FUNCTION KILL ends it (Redis 7.0's words).
const KILLED: &std::ffi::CStr = c"ERR Script killed by user with SCRIPT KILL...";
/// What a library's code raises when it runs past its load time.
const LOAD_TIMEOUT: &std::ffi::CStr = c"ERR FUNCTION LOAD timeout";

/// What JavaScript's call (through `Scripts`) asks of the script's stack.
pub(crate) enum Resume {
    /// Run this job to its end or until it is busy.
    Start(*mut Job),
    /// Go on with the job that was busy (the kill, if asked, is in `Run`).
    Continue,
    /// Leave the loop: the state is being dropped.
    Stop,
}

/// Why the script's stack handed the server back.
pub(crate) enum Pause {
    Finished,
    Busy,
}

/// How a start or a resume ended: the job ran to its end (its reply is in `Job::out`), or it is
/// busy and waits to be resumed.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Outcome {
    Done,
    Busy,
}

pub(crate) type ScriptStack = Coroutine<Resume, Pause, (), DefaultStack>;

/// One run of a script or function: what `run_entry` is asked to do and where it writes the reply.
pub(crate) struct Job {
    pub id: u32,
    pub is_function: bool,
    /// Its keys, then its arguments, packed (words.rs); the first `key_count` are keys.
    pub words: Vec<u8>,
    pub key_count: usize,
    /// What the script is called in error messages: a script's SHA-1, a function's name.
    pub name: Rc<str>,
    /// The reply: a byte of REPLY_COUNTED and REPLY_PLAIN, then RESP2. Kept from run to run for
    /// its room.
    pub out: Vec<u8>,
}

/// A reply's first byte: it is an error the server has counted already (a command's own, passed on).
pub const REPLY_COUNTED: u8 = 1;
/// A reply's first byte: it is plain RESP2 (lua_to_resp::encode), which a RESP2 client is sent as it is.
pub const REPLY_PLAIN: u8 = 2;

/// What may run now on the Lua state, as the hook and redis.call check it.
#[derive(Clone, Copy)]
enum Mode {
    Idle,
    /// A script or function, on the script's stack; past `busy_after` (from the start of its
    /// command) it stops at each check once its slice is over.
    Script { busy_after: Duration },
    /// A library's code, being loaded, on the caller's stack; it is ended at `deadline`.
    Library { deadline: Instant },
}

/// What the running code's callbacks share: redis.call (call.rs), the bridge's `log`, and the
/// hook find the script's host, its stack and what has been asked of it here.
pub struct Run {
    /// The server the running script calls; None while none runs.
    host: Cell<Option<*mut dyn Host>>,
    /// The script's stack, while a run is on it: what stops it and what calls back to the server.
    yielder: Cell<*const Yielder<Resume, Pause>>,
    mode: Cell<Mode>,
    /// When the running script is busy: worked out at its first check of the time; None before.
    busy_at: Cell<Option<Instant>>,
    /// When the slice of a resumed busy script ends; None before its first stop.
    slice_end: Cell<Option<Instant>>,
    /// SCRIPT KILL or FUNCTION KILL asked for the running script's end.
    kill: Cell<bool>,
    /// The library being loaded ran past its time.
    timed_out: Cell<bool>,
    /// A hook was set to raise at every instruction (kill, load timeout): put back after the run.
    raising: Cell<bool>,
    calls_since_check: Cell<u32>,
    /// Whether the script asked for RESP3 (redis.setresp(3)): its booleans are returned as RESP3's.
    pub resp3: Cell<bool>,
    /// The settings of the `cjson` scripts share, the run's own (cjson.rs).
    pub cjson: Cell<cjson::Settings>,
    /// Whether the script stopped the collector or changed its pace (limits.rs).
    pub collector_changed: Cell<bool>,
    /// The run's first RUN_WORDS_REMEMBERED words, in order (run_word); empty between runs.
    words: RefCell<RememberedWords>,
}

thread_local! {
    /// The run in progress on this thread, which redis.call and the hook reach; null while none runs.
    pub static CURRENT_RUN: Cell<*const Run> = const { Cell::new(std::ptr::null()) };
}

impl Default for Run {
    fn default() -> Self {
        Run {
            host: Cell::new(None),
            yielder: Cell::new(std::ptr::null()),
            mode: Cell::new(Mode::Idle),
            busy_at: Cell::new(None),
            slice_end: Cell::new(None),
            kill: Cell::new(false),
            timed_out: Cell::new(false),
            raising: Cell::new(false),
            calls_since_check: Cell::new(0),
            resp3: Cell::new(false),
            cjson: Cell::new(cjson::Settings::default()),
            collector_changed: Cell::new(false),
            words: RefCell::new(RememberedWords { words: Vec::with_capacity(RUN_WORDS_REMEMBERED), addresses: 0 }),
        }
    }
}

/// The number of the running script's word (among its keys, then its arguments) that `word` —
/// a string a command it calls names — is, if it is one of the first RUN_WORDS_REMEMBERED: the
/// string Lua made of the word, its bytes still the word's. Lua interns strings, so a command
/// naming KEYS[1], or any string equal to it, passes that very string while it lives; the bytes
/// are compared too, as a string dropped and collected can leave its address to another.
pub fn run_word(word: &[u8]) -> Option<u32> {
    with_run_words(|words| words.find(word))
}

/// The running script's remembered words, borrowed for the words of one command (with_run_words).
pub struct RunWords<'a>(Option<Ref<'a, RememberedWords>>);

impl RunWords<'_> {
    /// run_word for one word.
    pub fn find(&self, word: &[u8]) -> Option<u32> {
        let remembered = self.0.as_ref()?;
        if remembered.addresses & address_bit(word.as_ptr()) == 0 {
            return None;
        }
        let words = &remembered.words;
        // SAFETY: the words point into the job's words, which stay as they are until the run ends
        // (words_for_next_run is refused while one is busy), and into strings this check does not trust.
        let number = words.iter().position(|w| w.lua == word.as_ptr() && w.length == word.len() && unsafe { std::slice::from_raw_parts(w.given, w.length) } == word)?;
        Some(number as u32)
    }
}

/// Runs `f` with the running script's words found and borrowed once: for all the words of one
/// command, not once per word.
pub fn with_run_words<R>(f: impl FnOnce(&RunWords) -> R) -> R {
    let run = CURRENT_RUN.with(Cell::get);
    // SAFETY: CURRENT_RUN points at the Run in progress, or is null.
    let words = RunWords((!run.is_null()).then(|| unsafe { &*run }.words.borrow()));
    f(&words)
}

/// A closure the compiler would not send to the parent stack: JavaScript runs there on the same
/// thread, one call at a time, so nothing is shared between threads.
struct OnThisThread<F>(F);
// SAFETY: the parent stack is on the same thread; see above.
unsafe impl<F> Send for OnThisThread<F> {}
impl<F: FnOnce() -> R, R> OnThisThread<F> {
    fn call(self) -> R {
        (self.0)()
    }
}

impl Run {
    /// What a script may set for itself, back to the defaults: each run starts from them.
    fn reset_settings(&self) {
        self.resp3.set(false);
        self.cjson.set(cjson::Settings::default());
        self.collector_changed.set(false);
    }

    /// Runs `f` with the running script's host, on the stack that resumed the script when it runs
    /// on its own; an error for a call made outside a run (a function kept in a global and called
    /// later cannot be: globals are read-only).
    pub fn with_host<R>(&self, f: impl FnOnce(&mut dyn Host) -> R) -> mlua::Result<R> {
        let host = self.host.get().ok_or_else(|| mlua::Error::runtime("redis.call outside a script"))?;
        // SAFETY: set only while a start, resume or library load runs, from a &mut it holds; Lua
        // runs one callback at a time, so this is the only reference while f runs.
        let call = OnThisThread(move || f(unsafe { &mut *host }));
        let yielder = self.yielder.get();
        if matches!(self.mode.get(), Mode::Script { .. }) && !yielder.is_null() {
            // SAFETY: the yielder of the script's stack, which is running this code.
            Ok(unsafe { &*yielder }.on_parent_stack(move || call.call()))
        } else {
            Ok(call.call())
        }
    }

    /// Whether the run is being ended (killed, or a library past its load time): error handlers
    /// of the script's own are skipped then (sandbox.lua's xpcall), since the error raised from
    /// the hook runs them with hooks off, and one that loops would never end.
    pub fn ending(&self) -> bool {
        self.kill.get() || self.timed_out.get()
    }

    /// The check redis.call makes before each command: every CALLS_PER_CHECK calls, whether the
    /// script should stop for the server. Returns false when the command must not run because the
    /// script is being killed: the hook, now set to fire at the next instruction, raises then
    /// (an error raised here would run the error handlers with hooks on, see `raise_always`).
    pub(crate) unsafe fn before_call(&self, state: *mut ffi::lua_State) -> bool {
        let calls = self.calls_since_check.get() + 1;
        if calls < CALLS_PER_CHECK && !self.kill.get() {
            self.calls_since_check.set(calls);
            return true;
        }
        self.calls_since_check.set(0);
        if !self.kill.get() {
            self.pause_if_busy();
        }
        if self.kill.get() {
            raise_at_next_instruction(state, self);
            return false;
        }
        true
    }

    /// Stops the script for the server if it is past its busy threshold and its slice is over.
    fn pause_if_busy(&self) {
        let Mode::Script { busy_after } = self.mode.get() else { return };
        let now = Instant::now();
        let busy_at = self.busy_at.get().unwrap_or_else(|| {
            // The run's first check: it started when the server says, which spares every short
            // script a reading of the clock at its start.
            let ran = self.with_host(|host| host.elapsed()).unwrap_or(Duration::ZERO);
            let started = now.checked_sub(ran).unwrap_or(now);
            let at = started.checked_add(busy_after).unwrap_or_else(far_future);
            self.busy_at.set(Some(at));
            at
        });
        if now < busy_at || self.slice_end.get().is_some_and(|end| now < end) {
            return;
        }
        // SAFETY: in Script mode the code runs on the script's stack, whose yielder this is.
        let yielder = unsafe { &*self.yielder.get() };
        // Resumed by `Scripts::resume`, which sets the next slice.
        yielder.suspend(Pause::Busy);
    }
}

/// The hook every INSTRUCTIONS_PER_CHECK instructions (and at every instruction once a run is
/// being ended): stops a busy script for the server, ends a killed one, ends a library's load
/// past its time. An error raised here runs the error handlers with hooks off (Lua calls hooks
/// with them off), so the script's line is found and no handler is itself interrupted.
pub(crate) unsafe extern "C-unwind" fn check_hook(state: *mut ffi::lua_State, _: *mut ffi::lua_Debug) {
    let run = CURRENT_RUN.with(Cell::get);
    if run.is_null() {
        return;
    }
    let run = &*run;
    if !run.kill.get() {
        match run.mode.get() {
            Mode::Library { deadline } if Instant::now() >= deadline => {
                run.timed_out.set(true);
                raise_always(state, run, LOAD_TIMEOUT);
            }
            Mode::Script { .. } => run.pause_if_busy(),
            _ => {}
        }
    }
    if run.kill.get() {
        raise_always(state, run, KILLED);
    }
}

/// Raises `message` as an error table, and makes the hook fire at every instruction of this Lua
/// thread from now on, so that a pcall catching the error cannot go on: the next instruction
/// raises it again (Redis sets a line hook for the same reason).
unsafe fn raise_always(state: *mut ffi::lua_State, run: &Run, message: &std::ffi::CStr) -> ! {
    raise_at_next_instruction(state, run);
    ffi::lua_createtable(state, 0, 1);
    ffi::lua_pushstring(state, message.as_ptr());
    ffi::lua_setfield(state, -2, c"err".as_ptr());
    ffi::lua_error(state)
}

unsafe fn raise_at_next_instruction(state: *mut ffi::lua_State, run: &Run) {
    run.raising.set(true);
    ffi::lua_sethook(state, Some(check_hook), ffi::LUA_MASKCOUNT | ffi::LUA_MASKLINE, 1);
}

/// The script's stack and the Lua state's main thread, where runs start.
pub(crate) struct Runner {
    stack: RefCell<ScriptStack>,
    run: Rc<Run>,
    state: *mut ffi::lua_State,
    /// A job is on the stack, busy: only resume may go on with it.
    busy: Cell<bool>,
    job: RefCell<Box<Job>>,
}

impl Runner {
    /// A new stack whose runs call `run_entry` (the registry's `entry`) on the main thread `state`.
    pub fn new(state: *mut ffi::lua_State, entry: c_int, run: Rc<Run>) -> std::io::Result<Self> {
        let on_stack = run.clone();
        let stack = Coroutine::with_stack(DefaultStack::new(STACK_BYTES)?, move |yielder: &Yielder<Resume, Pause>, mut input: Resume| loop {
            on_stack.yielder.set(yielder);
            match input {
                // SAFETY: the job is the Runner's, which outlives the run; run_entry runs on
                // this stack under lua_pcall.
                Resume::Start(job) => unsafe { execute(state, entry, job) },
                Resume::Continue => {}
                Resume::Stop => return,
            }
            on_stack.yielder.set(std::ptr::null());
            input = yielder.suspend(Pause::Finished);
        });
        // SAFETY: the hook is a plain function reading CURRENT_RUN.
        unsafe { ffi::lua_sethook(state, Some(check_hook), ffi::LUA_MASKCOUNT, INSTRUCTIONS_PER_CHECK) };
        let job = Job { id: 0, is_function: false, words: Vec::new(), key_count: 0, name: Rc::from(""), out: Vec::new() };
        Ok(Runner { stack: RefCell::new(stack), run, state, busy: Cell::new(false), job: RefCell::new(Box::new(job)) })
    }

    pub fn run(&self) -> &Run {
        &self.run
    }

    pub fn busy(&self) -> bool {
        self.busy.get()
    }

    /// The job to fill before `start`, and whose `out` holds the reply after a run is Done.
    pub fn job(&self) -> std::cell::RefMut<'_, Box<Job>> {
        self.job.borrow_mut()
    }

    pub fn job_ref(&self) -> std::cell::Ref<'_, Box<Job>> {
        self.job.borrow()
    }

    /// Runs the job that was filled in, until it ends or is busy past `busy_after`.
    pub fn start(&self, busy_after: Duration, host: &mut dyn Host) -> Outcome {
        assert!(!self.busy.get(), "a script is busy in this Lua state: it must be resumed first");
        self.run.kill.set(false);
        self.run.slice_end.set(None);
        self.run.calls_since_check.set(0);
        self.run.reset_settings();
        self.run.busy_at.set(None);
        // The borrow ends here; the job is not borrowed again until the run is Done (busy guards).
        let job: *mut Job = &mut **self.job.borrow_mut();
        self.drive(Mode::Script { busy_after }, host, Resume::Start(job))
    }

    /// Goes on with the busy job for one more slice, killed first if `kill` (SCRIPT KILL).
    pub fn resume(&self, kill: bool, host: &mut dyn Host) -> Outcome {
        assert!(self.busy.get(), "no script is busy in this Lua state");
        if kill {
            self.run.kill.set(true);
        }
        self.run.slice_end.set(Some(Instant::now() + BUSY_SLICE));
        let mode = self.run.mode.get();
        self.drive(mode, host, Resume::Continue)
    }

    fn drive(&self, mode: Mode, host: &mut dyn Host, input: Resume) -> Outcome {
        // A script cannot start another run (EVAL and FCALL are not for scripts), so the stack
        // is never resumed from itself.
        let mut stack = self.stack.borrow_mut();
        let outcome = self.run.hosting(mode, host, || match stack.resume(input) {
            CoroutineResult::Yield(Pause::Busy) => Outcome::Busy,
            CoroutineResult::Yield(Pause::Finished) => Outcome::Done,
            CoroutineResult::Return(()) => unreachable!("the script's stack only returns when stopped"),
        });
        self.busy.set(outcome == Outcome::Busy);
        if outcome == Outcome::Done {
            self.run.words.borrow_mut().clear();
            self.run.mode.set(Mode::Idle);
            self.run.kill.set(false);
            self.settle_hook();
        } else {
            // Kept for the resume: hosting() puts back Idle.
            self.run.mode.set(mode);
        }
        outcome
    }

    /// Puts the main thread's hook back to its usual count, if a kill or timeout changed it.
    pub fn settle_hook(&self) {
        if self.run.raising.replace(false) {
            // SAFETY: the main thread, between runs.
            unsafe { ffi::lua_sethook(self.state, Some(check_hook), ffi::LUA_MASKCOUNT, INSTRUCTIONS_PER_CHECK) };
        }
    }
}

impl Run {
    /// Runs `f` as the run in progress in `mode`, with `host` answering its redis.call and
    /// redis.log; the mode is Idle again after it (Runner::drive keeps a busy one's).
    fn hosting<R>(&self, mode: Mode, host: &mut dyn Host, f: impl FnOnce() -> R) -> R {
        self.mode.set(mode);
        // SAFETY: the pointer is taken away again below, before `host`'s borrow ends, and only
        // redis.call, the bridge's log and the hook read it, which Lua calls only inside `f`.
        let host: *mut (dyn Host + '_) = host;
        self.host.set(Some(unsafe { std::mem::transmute::<*mut (dyn Host + '_), *mut (dyn Host + 'static)>(host) }));
        let outer = CURRENT_RUN.with(|current| current.replace(self));
        let result = f();
        CURRENT_RUN.with(|current| current.set(outer));
        self.host.set(None);
        self.mode.set(Mode::Idle);
        result
    }

    /// Runs a library's code (on the caller's stack) with `deadline` as its time limit; true if
    /// the limit ended it.
    pub(crate) fn loading<R>(&self, limit: Duration, host: &mut dyn Host, f: impl FnOnce() -> R) -> (R, bool) {
        self.timed_out.set(false);
        self.reset_settings();
        let deadline = Instant::now().checked_add(limit).unwrap_or_else(far_future);
        let result = self.hosting(Mode::Library { deadline }, host, f);
        (result, self.timed_out.replace(false))
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        // A busy script is killed and run to its end: its stack holds Lua's C frames, which must
        // not be unwound by a Rust panic (what dropping a suspended coroutine does).
        struct Nobody;
        impl Host for Nobody {
            fn call(&mut self, _: &[&[u8]]) -> &[u8] {
                b"-ERR the server is gone\r\n"
            }
            fn log(&mut self, _: u8, _: &[u8]) {}
        }
        while self.busy.get() {
            self.resume(true, &mut Nobody);
        }
        let stack = self.stack.get_mut();
        self.run.hosting(Mode::Idle, &mut Nobody, || stack.resume(Resume::Stop));
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

/// Runs `job` by calling run_entry protected, on the main thread `state`.
unsafe fn execute(state: *mut ffi::lua_State, entry: c_int, job: *mut Job) {
    let top = ffi::lua_gettop(state);
    ffi::lua_rawgeti(state, ffi::LUA_REGISTRYINDEX, ffi::lua_Integer::from(entry));
    ffi::lua_pushlightuserdata(state, job.cast());
    let status = ffi::lua_pcall(state, 1, 0, 0);
    if status != 0 {
        // Out of memory making KEYS and ARGV, say: what run_entry wrote is dropped.
        let out = &mut (*job).out;
        out.clear();
        out.extend_from_slice(b"\0-");
        let message = if ffi::lua_type(state, -1) == ffi::LUA_TSTRING { lua_to_resp::string_at(state, -1) } else { b"unknown error" };
        lua_to_resp::push_error(out, &[b"ERR ", message].concat());
    }
    ffi::lua_settop(state, top);
}

/// The upvalues of `run_entry`: sandbox.lua's error handler, the names scripts see as globals
/// (where KEYS and ARGV are), the table of compiled scripts and registered functions, and the
/// tables scripts see as KEYS and ARGV.
pub(crate) const HANDLER_UPVALUE: c_int = 1;
pub(crate) const SCRIPT_NAMES_UPVALUE: c_int = 2;
pub(crate) const SCRIPTS_UPVALUE: c_int = 3;
pub(crate) const KEYS_UPVALUE: c_int = 4;
pub(crate) const ARGV_UPVALUE: c_int = 5;

/// Words a script's KEYS or ARGV table is refilled with at most (refill_words): a run with more
/// gets a new table, so that one run of many words leaves no large table behind for the rest.
const REFILLED_WORDS_MAX: usize = 64;

/// Pushes a new table of the words packed in `packed`, from the `from`th, `count` of them; the
/// first RUN_WORDS_REMEMBERED words of the run are remembered in `run` as they are pushed.
unsafe fn push_words(state: *mut ffi::lua_State, packed: &[u8], from: usize, count: usize, run: &Run) {
    ffi::lua_createtable(state, count as c_int, 0);
    fill_words(state, ffi::lua_gettop(state), packed, from, count, run);
}

/// Sets `[1..count]` of the (empty) table at stack index `table` to the words packed in `packed`
/// from the `from`th; the first RUN_WORDS_REMEMBERED words of the run are remembered in `run`.
unsafe fn fill_words(state: *mut ffi::lua_State, table: c_int, packed: &[u8], from: usize, count: usize, run: &Run) {
    let mut i = 0;
    words::each(packed, |word| {
        if i >= from && i < from + count {
            ffi::lua_pushlstring(state, word.as_ptr().cast(), word.len());
            if i < RUN_WORDS_REMEMBERED {
                let lua = ffi::lua_tolstring(state, -1, std::ptr::null_mut()).cast::<u8>();
                run.words.borrow_mut().push(RunWord { lua, given: word.as_ptr(), length: word.len() });
            }
            ffi::lua_rawseti(state, table, (i - from) as ffi::lua_Integer + 1);
        }
        i += 1;
    });
}

/// Makes the script's table `name` (KEYS or ARGV, kept in upvalue `upvalue` of run_entry and in
/// the script names) hold the words packed in `packed`, from the `from`th, `count` of them, as
/// push_words would make it. The table of the run before is emptied and filled again rather than
/// a new one made: two tables a run were a tenth of a short script's time, in their allocation
/// and in the collector's work on them. A script cannot keep a table from one run to the next (the
/// globals and libraries it could store one in are read-only, and `setfenv` is gone), so no run
/// sees what another did to it. A function gets new tables (push_words): a library's functions
/// share its locals, where one could keep its keys.
unsafe fn refill_words(state: *mut ffi::lua_State, upvalue: c_int, name: &std::ffi::CStr, packed: &[u8], from: usize, count: usize, run: &Run) {
    let slot = ffi::lua_upvalueindex(upvalue);
    if count > REFILLED_WORDS_MAX || ffi::lua_objlen(state, slot) > REFILLED_WORDS_MAX {
        push_words(state, packed, from, count, run);
        ffi::lua_pushvalue(state, -1);
        ffi::lua_replace(state, slot);
        ffi::lua_pushstring(state, name.as_ptr());
        ffi::lua_insert(state, -2);
        ffi::lua_rawset(state, ffi::lua_upvalueindex(SCRIPT_NAMES_UPVALUE));
        return;
    }
    ffi::lua_pushvalue(state, slot);
    let table = ffi::lua_gettop(state);
    // Whatever the last run left in it, its words and anything it added, goes; so does a
    // metatable it set. Clearing a field during lua_next is allowed.
    ffi::lua_pushnil(state);
    while ffi::lua_next(state, table) != 0 {
        ffi::lua_pop(state, 1);
        ffi::lua_pushvalue(state, -1);
        ffi::lua_pushnil(state);
        ffi::lua_rawset(state, table);
    }
    if ffi::lua_getmetatable(state, table) != 0 {
        ffi::lua_pop(state, 1);
        ffi::lua_pushnil(state);
        ffi::lua_setmetatable(state, table);
    }
    fill_words(state, table, packed, from, count, run);
    ffi::lua_pop(state, 1);
}

/// Runs a script or function as the `Job` (the lightuserdata argument) says, protected by the
/// lua_pcall in `execute`, and writes its reply into the job's `out`: the byte of REPLY_COUNTED
/// and REPLY_PLAIN, then RESP2. The script itself runs under a lua_pcall of its own whose error
/// function is sandbox.lua's handler (that is what xpcall does), so its errors come back as the
/// handler's tables; what reaches `execute`'s pcall is Lua's (out of memory making KEYS and ARGV).
///
/// Raw stack calls, not mlua's: mlua's protected call makes a closure per call and its values a
/// reference each, which together cost as much as running a short script; and a runner in Lua
/// would be two calls more (itself, and xpcall). Nothing Rust owns may be alive across a Lua call
/// that can raise (it leaves by longjmp): the job's buffers are its Runner's, and no temporary
/// lives across one.
pub(crate) unsafe extern "C-unwind" fn run_entry(state: *mut ffi::lua_State) -> c_int {
    let job = &mut *ffi::lua_touserdata(state, 1).cast::<Job>();
    ffi::lua_settop(state, 0);
    ffi::lua_pushvalue(state, ffi::lua_upvalueindex(HANDLER_UPVALUE));
    ffi::lua_rawgeti(state, ffi::lua_upvalueindex(SCRIPTS_UPVALUE), ffi::lua_Integer::from(job.id));
    let total = words::count(&job.words);
    let key_count = job.key_count.min(total);
    // SAFETY: a run is started only with its Run in CURRENT_RUN (hosting).
    let run = &*CURRENT_RUN.with(Cell::get);
    run.words.borrow_mut().clear();
    let arguments = if job.is_function {
        // A function gets its keys and arguments as its parameters.
        push_words(state, &job.words, 0, key_count, run);
        push_words(state, &job.words, key_count, total - key_count, run);
        2
    } else {
        // A script reads them as the globals KEYS and ARGV.
        refill_words(state, KEYS_UPVALUE, c"KEYS", &job.words, 0, key_count, run);
        refill_words(state, ARGV_UPVALUE, c"ARGV", &job.words, key_count, total - key_count, run);
        0
    };
    let status = ffi::lua_pcall(state, arguments, 1, 1);
    ffi::lua_pushboolean(state, c_int::from(status == 0));
    ffi::lua_replace(state, 1);
    // Stack: 1 whether it ran to its end, 2 its value or its error.
    let out = &mut job.out;
    out.clear();
    out.push(0);
    if ffi::lua_toboolean(state, 1) != 0 {
        if ffi::lua_type(state, 2) == ffi::LUA_TTABLE && lua_to_resp::is_counted_error(state, 2) {
            out[0] = REPLY_COUNTED;
        }
        if lua_to_resp::encode(state, 2, out) {
            out[0] |= REPLY_PLAIN;
        }
        return 0;
    }
    match ffi::lua_type(state, 2) {
        ffi::LUA_TTABLE => {
            out[0] = if lua_to_resp::is_counted_error(state, 2) { REPLY_COUNTED } else { 0 };
            script_error(state, 2, &job.name, out);
        }
        // Lua calls no handler for an allocation that fails, nor for an error in the handler:
        // the message comes as it is.
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

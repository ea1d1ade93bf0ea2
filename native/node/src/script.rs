//! `LuaScripts`: Lua scripts for the kv server's EVAL (crate svc-script). One call runs a whole
//! script; each command it calls comes back to JavaScript once, through `call`.
//!
//! Words (KEYS and ARGV, a command's arguments) cross as one buffer: a u32 count, then each word
//! as a u32 length and its bytes, little-endian. src/kv/scripting/words.ts writes and reads it.
//!
//! A command's words and its reply cross through a mailbox: one buffer the server gives `bind`,
//! which both sides write and read in turn. A buffer made per call, and a typed array returned
//! per call, cost ~2 µs a command in Bun; the mailbox costs nothing per call. What does not fit
//! crosses in a buffer of its own.

use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;

/// The words packed at the start of `bytes` and the bytes they take, or None when they are not
/// in that format.
fn unpack_words_prefix(bytes: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let read_u32 = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()) as usize);
    let count = read_u32(0)?;
    let mut at = 4;
    let mut words = Vec::with_capacity(count.min(bytes.len() / 4));
    for _ in 0..count {
        let length = read_u32(at)?;
        words.push(bytes.get(at + 4..at + 4 + length)?);
        at += 4 + length;
    }
    Some((words, at))
}

/// The words packed in `bytes`, which they fill, or None when the buffer is not that format.
fn unpack_words(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    unpack_words_prefix(bytes).and_then(|(words, end)| (end == bytes.len()).then_some(words))
}

fn pack_words(words: &[&[u8]]) -> Vec<u8> {
    let mut out = vec![0; 4 + words.iter().map(|w| 4 + w.len()).sum::<usize>()];
    pack_words_into(words, &mut out);
    out
}

/// Packs `words` at the start of `out`, which has room for them.
fn pack_words_into(words: &[&[u8]], out: &mut [u8]) {
    out[..4].copy_from_slice(&(words.len() as u32).to_le_bytes());
    let mut at = 4;
    for word in words {
        out[at..at + 4].copy_from_slice(&(word.len() as u32).to_le_bytes());
        out[at + 4..at + 4 + word.len()].copy_from_slice(word);
        at += 4 + word.len();
    }
}

/// What the server's `call` answers: the reply's length in the mailbox, doubled, plus 1 if the
/// command changed data; or, for a reply too long for the mailbox, a buffer of its own holding
/// that flag byte and then the reply.
type CallAnswer = Either<u32, Uint8Array>;

/// The server, as a running script reaches it: the JavaScript functions `bind` was given.
struct JsHost<'a> {
    env: &'a Env,
    mailbox: &'a mut [u8],
    call: Function<'a, Option<BufferSlice<'a>>, CallAnswer>,
    log: Function<'a, BufferSlice<'a>, ()>,
    /// A JavaScript exception thrown by `call` or `log`: rethrown once the script is done.
    failure: Option<Error>,
}

impl JsHost<'_> {
    fn exchange(&mut self, args: &[&[u8]]) -> Result<(Vec<u8>, bool)> {
        let packed_bytes = 4 + args.iter().map(|w| 4 + w.len()).sum::<usize>();
        let answer = if packed_bytes <= self.mailbox.len() {
            pack_words_into(args, self.mailbox);
            self.call.call(None)?
        } else {
            self.call.call(Some(BufferSlice::copy_from(self.env, pack_words(args))?))?
        };
        Ok(match answer {
            Either::A(n) => {
                let length = (n >> 1) as usize;
                let reply = self.mailbox.get(..length).ok_or_else(|| Error::new(Status::GenericFailure, "a reply longer than the mailbox"))?;
                (reply.to_vec(), n & 1 != 0)
            }
            Either::B(own) if !own.is_empty() => (own[1..].to_vec(), own[0] != 0),
            Either::B(_) => (b"-ERR the server answered nothing\r\n".to_vec(), false),
        })
    }
}

impl svc_script::Host for JsHost<'_> {
    fn call(&mut self, args: &[&[u8]]) -> (Vec<u8>, bool) {
        self.exchange(args).unwrap_or_else(|error| {
            self.failure.get_or_insert(error);
            (b"-ERR the server failed to run the command\r\n".to_vec(), false)
        })
    }

    fn log(&mut self, level: u8, text: &[u8]) {
        // The level, then the text: one buffer, as the call takes one argument.
        let mut line = Vec::with_capacity(1 + text.len());
        line.push(level);
        line.extend_from_slice(text);
        if let Err(error) = BufferSlice::copy_from(self.env, line).and_then(|line| self.log.call(line)) {
            self.failure.get_or_insert(error);
        }
    }
}

/// A function a library registered, as `loadLibrary` returns it.
#[napi(object)]
pub struct RegisteredFunction {
    pub name: String,
    /// The number `run` knows it by.
    pub id: u32,
    pub flags: Vec<String>,
    pub description: Option<String>,
}

#[napi]
pub struct LuaScripts {
    inner: svc_script::Scripts,
    /// The server's functions for a script's commands and its log lines, and the mailbox (see `bind`).
    call: Option<FunctionRef<Option<BufferSlice<'static>>, CallAnswer>>,
    log: Option<FunctionRef<BufferSlice<'static>, ()>>,
    mailbox: Option<Uint8Array>,
}

#[napi]
impl LuaScripts {
    /// A Lua state whose scripts may hold `memory_bytes_max` bytes between them.
    #[napi(constructor)]
    pub fn new(memory_bytes_max: f64) -> Result<Self> {
        let inner = svc_script::Scripts::new(memory_bytes_max as usize).map_err(|e| Error::new(Status::GenericFailure, format!("Lua could not start: {e}")))?;
        Ok(LuaScripts { inner, call: None, log: None, mailbox: None })
    }

    /// The mailbox and the functions every run reaches the server through, kept from now on.
    /// `call` finds a command's words packed in the mailbox (or, when they do not fit, in the
    /// buffer it is given), writes the reply there and answers as CallAnswer says; `log` gets a
    /// level byte (0-3), then redis.log's text.
    #[napi]
    pub fn bind(
        &mut self,
        mailbox: Uint8Array,
        call: Function<Option<BufferSlice<'static>>, CallAnswer>,
        log: Function<BufferSlice<'static>, ()>,
    ) -> Result<()> {
        self.mailbox = Some(mailbox);
        self.call = Some(call.create_ref()?);
        self.log = Some(log.create_ref()?);
        Ok(())
    }

    /// The Lua state, and the functions and mailbox `bind` gave as the host of one run or load.
    fn bound<'a>(&'a mut self, env: &'a Env) -> Result<(&'a svc_script::Scripts, JsHost<'a>)> {
        let (Some(call), Some(log), Some(mailbox)) = (&self.call, &self.log, &mut self.mailbox) else {
            return Err(Error::new(Status::GenericFailure, "used before bind: the server's functions are not set"));
        };
        // SAFETY: the mailbox is JavaScript's, kept alive by this object, and only written by
        // JavaScript inside `call`, while this side waits for it (one thread).
        let mailbox = unsafe { mailbox.as_mut() };
        let host = JsHost { env, mailbox, call: call.borrow_back(env)?, log: log.borrow_back(env)?, failure: None };
        Ok((&self.inner, host))
    }

    /// Compiles `body`, the script whose SHA-1 is `sha`, and keeps it; returns the number `run`
    /// knows it by, or throws Lua's compile error.
    #[napi]
    pub fn load(&self, sha: String, body: &[u8]) -> Result<u32> {
        self.inner.load(&sha, body).map_err(|message| Error::new(Status::GenericFailure, message))
    }

    /// Runs a library's code (FUNCTION LOAD; its shebang made a comment) and keeps the functions
    /// it registers; returns them, or throws the error Redis 7.0 gives after "ERR ". Its
    /// redis.log lines go to the bound `log`.
    #[napi]
    pub fn load_library(&mut self, env: Env, code: &[u8]) -> Result<Vec<RegisteredFunction>> {
        let (scripts, mut host) = self.bound(&env)?;
        let loaded = scripts.load_library(code, &mut host);
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
    #[napi]
    pub fn unload(&self, ids: Vec<u32>) -> Result<()> {
        self.inner.unload(&ids).map_err(|e| Error::new(Status::GenericFailure, e.to_string()))
    }

    /// Bytes the Lua state holds.
    #[napi]
    pub fn used_memory(&self) -> f64 {
        self.inner.used_memory() as f64
    }

    /// Runs script `id`. Its keys, then its arguments (the first `key_count` of them keys), are
    /// packed in the mailbox, or in `words` when they do not fit. The reply — a byte saying
    /// whether it is an error already counted (its command's), then the RESP2 reply — is left at
    /// the mailbox's start, and its length × 2, + 1 if counted, is returned; a reply too long for
    /// the mailbox is returned in a buffer of its own.
    #[napi]
    pub fn run(&mut self, env: Env, id: u32, words: Option<&[u8]>, key_count: u32, limit_ms: u32) -> Result<Either<u32, BufferSlice<'_>>> {
        let (scripts, mut host) = self.bound(&env)?;
        let bad_words = || Error::new(Status::InvalidArg, "words are not packed as count, then length and bytes each");
        // The words are copied out of the mailbox: the script's commands write over it.
        let packed = match words {
            Some(words) => words.to_vec(),
            None => host.mailbox[..unpack_words_prefix(host.mailbox).ok_or_else(bad_words)?.1].to_vec(),
        };
        let words = unpack_words(&packed).ok_or_else(bad_words)?;
        let key_count = (key_count as usize).min(words.len());
        let reply = scripts.run(id, &words[..key_count], &words[key_count..], Duration::from_millis(u64::from(limit_ms)), &mut host);
        if let Some(error) = host.failure {
            return Err(error);
        }
        let (counted, resp) = (reply[0], &reply[1..]);
        if resp.len() <= host.mailbox.len() {
            host.mailbox[..resp.len()].copy_from_slice(resp);
            return Ok(Either::A((resp.len() as u32) << 1 | u32::from(counted)));
        }
        Ok(Either::B(BufferSlice::copy_from(&env, reply)?))
    }
}

#[cfg(test)]
mod tests {
    use super::{pack_words, unpack_words};

    #[test]
    fn words_round_trip() {
        let words: Vec<&[u8]> = vec![b"SET", b"", b"\x00\xff\r\n"];
        assert_eq!(unpack_words(&pack_words(&words)), Some(words));
        assert_eq!(unpack_words(&[1, 0, 0, 0, 5, 0, 0, 0, b'a']), None);
        assert_eq!(unpack_words(&[0, 0, 0, 0, 9]), None);
    }
}

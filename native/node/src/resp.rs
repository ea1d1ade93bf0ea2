//! `respScan`: the kv server's RESP request scanner (crate svc-resp), one call per read buffer.
//!
//! Numbers cross in two typed arrays rather than as arguments and objects: `state` (Float64Array,
//! because a declared bulk length is a JavaScript number of any size) carries the limits and the
//! progress in and out, and `out` (Uint32Array) receives the argument offsets. The arrays are
//! bound once (respScanBind) and named by a small number on each call: in Bun every typed-array
//! argument costs about 60 ns, as much as scanning a small read, and a number about 10 ns. The
//! slot numbers and status codes below are mirrored in src/native/resp-scan.ts.

use std::cell::RefCell;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use svc_resp::{Limits, Progress, ProtocolError, Stop, OUT_WORDS_MIN};

const SLOT_LINE_BYTES_MAX: usize = 0;
const SLOT_ARGS_MAX: usize = 1;
const SLOT_BULK_BYTES_MAX: usize = 2;
const SLOT_END: usize = 3;
const SLOT_POS: usize = 4;
const SLOT_ARGS_LEFT: usize = 5;
/// The declared length of the argument being awaited, or -1 while its `$` line is to come.
const SLOT_BULK_LENGTH: usize = 6;
const SLOT_WORDS: usize = 7;
const STATE_SLOTS: usize = 8;

const STATUS_NEED_MORE: u32 = 0;
const STATUS_OUT_FULL: u32 = 1;
const STATUS_INLINE: u32 = 2;
const STATUS_TOO_BIG_MBULK_COUNT: u32 = 3;
const STATUS_INVALID_MULTIBULK_LENGTH: u32 = 4;
const STATUS_EXPECTED_DOLLAR: u32 = 5;
const STATUS_TOO_BIG_BULK_COUNT: u32 = 6;
const STATUS_INVALID_BULK_LENGTH: u32 = 7;

/// A bound pair of state and out arrays.
#[derive(Clone, Copy)]
struct Binding {
    state: *mut f64,
    state_len: usize,
    out: *mut u32,
    out_len: usize,
}

thread_local! {
    /// The bindings made on this thread (each JavaScript thread has its own arrays), by number.
    static BINDINGS: RefCell<Vec<Binding>> = const { RefCell::new(Vec::new()) };
}

/// Binds `state` and `out` for later respScan calls on this thread and returns the binding's
/// number. The arrays stay alive from now on: the references taken here are never released.
#[napi(js_name = "respScanBind")]
pub fn resp_scan_bind(mut state: Float64Array, mut out: Uint32Array) -> Result<u32> {
    if state.len() < STATE_SLOTS || out.len() < OUT_WORDS_MIN {
        return Err(invalid(format!(
            "respScan needs {STATE_SLOTS} state slots and {OUT_WORDS_MIN} out words"
        )));
    }
    // SAFETY: only the pointers are kept. They are used during later synchronous calls, while
    // JavaScript is stopped, and the memory lives as long as the references forgotten below.
    let (state_slice, out_slice) = unsafe { (state.as_mut(), out.as_mut()) };
    if overlap(state_slice, out_slice) {
        return Err(invalid("respScan state and out must not share memory".to_owned()));
    }
    let binding = Binding {
        state: state_slice.as_mut_ptr(),
        state_len: state_slice.len(),
        out: out_slice.as_mut_ptr(),
        out_len: out_slice.len(),
    };
    std::mem::forget(state);
    std::mem::forget(out);
    BINDINGS.with_borrow_mut(|bindings| {
        bindings.push(binding);
        Ok(bindings.len() as u32 - 1)
    })
}

/// Scans `buf[state.pos, state.end)` for whole multibulk commands, writing one record per command
/// into `out` (argument count, then start and end offset of each argument) and the progress back
/// into `state`, the arrays of `binding`. Returns a status: 0 needs more input, 1 `out` is full
/// (call again), 2 an inline command starts at `state.pos`, 3 and up a protocol error. A bad
/// binding or bad slots throw: they are a bug in the caller, never something a client sent.
#[napi(js_name = "respScan")]
pub fn resp_scan(buf: &[u8], binding: u32) -> Result<u32> {
    let binding = BINDINGS
        .with_borrow(|bindings| bindings.get(binding as usize).copied())
        .ok_or_else(|| invalid(format!("respScan binding {binding} was not made on this thread")))?;
    // SAFETY: see resp_scan_bind; buf is checked not to overlap the arrays.
    let (state, out) = unsafe {
        (
            std::slice::from_raw_parts_mut(binding.state, binding.state_len),
            std::slice::from_raw_parts_mut(binding.out, binding.out_len),
        )
    };
    if overlap(buf, state) || overlap(buf, out) {
        return Err(invalid("respScan buf must not share memory with state or out".to_owned()));
    }
    let end = whole(state[SLOT_END], buf.len().min(u32::MAX as usize), "end")?;
    let limits = Limits {
        line_bytes_max: whole(state[SLOT_LINE_BYTES_MAX], usize::MAX, "lineBytesMax")?,
        args_max: whole(state[SLOT_ARGS_MAX], u32::MAX as usize, "argsMax")? as u32,
        bulk_bytes_max: state[SLOT_BULK_BYTES_MAX],
    };
    let mut progress = Progress {
        pos: whole(state[SLOT_POS], end, "pos")?,
        args_left: whole(state[SLOT_ARGS_LEFT], u32::MAX as usize, "argsLeft")? as u32,
        bulk_len: match state[SLOT_BULK_LENGTH] {
            -1.0 => None,
            // A declared length is a whole double below 2^63, so it converts exactly.
            n if n >= 0.0 && n.fract() == 0.0 => Some(n as u64),
            n => return Err(invalid(format!("respScan bulk length {n} is neither -1 nor a length"))),
        },
    };
    let scan = svc_resp::scan(&buf[..end], &limits, &mut progress, out);
    state[SLOT_POS] = progress.pos as f64;
    state[SLOT_ARGS_LEFT] = f64::from(progress.args_left);
    state[SLOT_BULK_LENGTH] = progress.bulk_len.map_or(-1.0, |n| n as f64);
    state[SLOT_WORDS] = scan.words as f64;
    Ok(status(scan.stop))
}

fn status(stop: Stop) -> u32 {
    match stop {
        Stop::NeedMore => STATUS_NEED_MORE,
        Stop::OutFull => STATUS_OUT_FULL,
        Stop::Inline => STATUS_INLINE,
        Stop::Error(ProtocolError::TooBigMbulkCount) => STATUS_TOO_BIG_MBULK_COUNT,
        Stop::Error(ProtocolError::InvalidMultibulkLength) => STATUS_INVALID_MULTIBULK_LENGTH,
        Stop::Error(ProtocolError::ExpectedDollar) => STATUS_EXPECTED_DOLLAR,
        Stop::Error(ProtocolError::TooBigBulkCount) => STATUS_TOO_BIG_BULK_COUNT,
        Stop::Error(ProtocolError::InvalidBulkLength) => STATUS_INVALID_BULK_LENGTH,
    }
}

/// `value` as an index, if it is a whole number from 0 to `max`.
fn whole(value: f64, max: usize, name: &str) -> Result<usize> {
    if value >= 0.0 && value.fract() == 0.0 && value <= max as f64 {
        Ok(value as usize)
    } else {
        Err(invalid(format!("respScan {name} {value} is not a whole number from 0 to {max}")))
    }
}

fn overlap<A, B>(a: &[A], b: &[B]) -> bool {
    let (a, b) = (a.as_ptr_range(), b.as_ptr_range());
    (a.start as usize) < (b.end as usize) && (b.start as usize) < (a.end as usize)
}

fn invalid(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

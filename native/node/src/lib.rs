//! The napi-rs face of svc's native crates. Every export is batch-shaped: an N-API call costs about
//! 120 ns in Bun, so one call covers a whole buffer or a whole flush, never a single small item.

use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::fd::FromRawFd;

use napi::bindgen_prelude::*;
use napi_derive::napi;

pub mod resp;
pub mod script;

/// The addon's allocator, Lua's included (mlua allocates through Rust's): a script makes and drops
/// small tables, strings and closures by the hundred, and mimalloc served those ~10% faster than
/// glibc's malloc in process (20 local functions defined per run 1.85 → 1.65 µs, 50 small tables
/// 17 → 14.7 µs); Redis gives its Lua jemalloc for the same reason. Bun's own mimalloc exports
/// no symbols, so this one is the addon's alone.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// CRC32C of `data[start..end]`, continuing from `seed` (0 for a new checksum).
#[napi(js_name = "crc32c")]
pub fn crc32c(data: &[u8], start: u32, end: u32, seed: u32) -> Result<u32> {
    let (start, end) = (start as usize, end as usize);
    if start > end || end > data.len() {
        return Err(Error::new(
            Status::InvalidArg,
            format!("crc32c range {start}..{end} is outside a buffer of {} bytes", data.len()),
        ));
    }
    Ok(svc_log::checksum::crc32c_extend(seed, &data[start..end]))
}

/// Writes the CRC32C of every broker record frame in `frames` (back to back from its start, each
/// body at most `body_max` bytes); returns the number of frames. One call seals a produce batch.
#[napi(js_name = "sealFrames")]
pub fn seal_frames(mut frames: Uint8Array, body_max: u32) -> Result<u32> {
    // SAFETY: the array is JavaScript's and alive for this synchronous call; nothing else runs
    // JavaScript (or holds another Rust view of it) until it returns.
    let bytes = unsafe { frames.as_mut() };
    svc_log::frames::seal_frames(bytes, body_max)
        .map(|n| n as u32)
        .ok_or_else(|| Error::new(Status::InvalidArg, "frame lengths do not tile the buffer".to_string()))
}

/// Lays out the `count` records of a binary produce payload, from byte `at` to its end, as log
/// frames in `out`, and each record's partition and sequence (-1: none) in `partitions` and
/// `sequences`: one call for a whole request. False at anything malformed.
#[napi(js_name = "frameProduceRecords")]
pub fn frame_produce_records(payload: &[u8], at: u32, count: u32, mut out: Uint8Array, mut partitions: Float64Array, mut sequences: Float64Array) -> bool {
    let Some(src) = payload.get(at as usize..) else { return false };
    // SAFETY: the three arrays are JavaScript's, distinct from `payload` (the caller made them for
    // this call), and alive for this synchronous call; nothing else runs JavaScript until it returns.
    let (out, partitions, sequences) = unsafe { (out.as_mut(), partitions.as_mut(), sequences.as_mut()) };
    let routing = svc_log::frames::ProduceRouting { partitions, sequences };
    svc_log::frames::frame_produce_records(src, count as usize, out, routing).is_some()
}

/// Bytes of the longest run of whole, checksum-valid frames at the start of `data[start..end]`.
#[napi(js_name = "checkedFramesPrefix")]
pub fn checked_frames_prefix(data: &[u8], start: u32, end: u32, body_max: u32) -> Result<u32> {
    let (start, end) = (start as usize, end as usize);
    if start > end || end > data.len() {
        return Err(Error::new(
            Status::InvalidArg,
            format!("frame range {start}..{end} is outside a buffer of {} bytes", data.len()),
        ));
    }
    Ok(svc_log::frames::checked_prefix(&data[start..end], body_max) as u32)
}

/// One append of a batch of chunks to an open segment file, run on a worker thread.
pub struct AppendChunks {
    fd: i32,
    chunks: Vec<Buffer>,
    sync: bool,
    /// Set for a flush of produces laid out before it: each chunk's frames are stamped first.
    stamps: Option<Stamps>,
}

/// Offsets, timestamp and CRCs a flush writes into its chunks' frames before they go to disk.
struct Stamps {
    /// The offset of each chunk's first frame.
    base_offsets: Vec<f64>,
    timestamp_ms: f64,
    body_max: u32,
}

impl Task for AppendChunks {
    type Output = f64;
    type JsValue = f64;

    fn compute(&mut self) -> Result<Self::Output> {
        if let Some(stamps) = &self.stamps {
            let safe = |n: f64| n.fract() == 0.0 && n.abs() <= 9_007_199_254_740_991.0;
            if stamps.base_offsets.len() != self.chunks.len() || !stamps.base_offsets.iter().all(|&b| safe(b) && b >= 0.0) || !safe(stamps.timestamp_ms) {
                return Err(Error::new(Status::InvalidArg, "one safe, non-negative base offset per chunk and a safe timestamp are needed".to_string()));
            }
            for (chunk, &base) in self.chunks.iter_mut().zip(&stamps.base_offsets) {
                // SAFETY: the flush hands its chunks over for the task's life: no JavaScript reads
                // or writes them until it settles (segment.ts), so this thread's view is the only one.
                let frames = unsafe { std::slice::from_raw_parts_mut(chunk.as_ptr() as *mut u8, chunk.len()) };
                svc_log::frames::stamp_frames(frames, base as u64, stamps.timestamp_ms as i64, stamps.body_max)
                    .ok_or_else(|| Error::new(Status::InvalidArg, "frame lengths do not tile a chunk".to_string()))?;
            }
        }
        // The descriptor belongs to the JavaScript side, which keeps it open until this task
        // settles; ManuallyDrop stops the File from closing it here.
        let file = ManuallyDrop::new(unsafe { File::from_raw_fd(self.fd) });
        let slices: Vec<&[u8]> = self.chunks.iter().map(|b| b.as_ref()).collect();
        let length = svc_log::append::append_chunks(&file, &slices, self.sync)
            .map_err(|e| Error::new(Status::GenericFailure, format!("segment append failed: {e}")))?;
        // File lengths stay far below 2^53, where a JavaScript number stops being exact.
        Ok(length as f64)
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// Appends `chunks` in order to the file open for appending at `fd`, then `fdatasync`s it when
/// `sync` is true. Resolves to the file's length afterwards. The caller must keep `fd` open and
/// must not start another append on it until this one settles.
#[napi(ts_return_type = "Promise<number>")]
pub fn append_chunks(fd: i32, chunks: Vec<Buffer>, sync: bool) -> AsyncTask<AppendChunks> {
    AsyncTask::new(AppendChunks { fd, chunks, sync, stamps: None })
}

/// As appendChunks, for chunks of frames laid out before their flush: on the worker thread, first
/// stamps chunk i's frames with offsets from `base_offsets[i]`, `timestamp_ms` and their CRCs
/// (svc_log::frames::stamp_frames), so the JavaScript thread never spends a flush's checksumming. The chunks must
/// not be touched by JavaScript until the task settles.
#[napi(ts_return_type = "Promise<number>")]
pub fn append_stamped_chunks(fd: i32, chunks: Vec<Buffer>, base_offsets: Vec<f64>, timestamp_ms: f64, body_max: u32, sync: bool) -> AsyncTask<AppendChunks> {
    let stamps = Some(Stamps { base_offsets, timestamp_ms, body_max });
    AsyncTask::new(AppendChunks { fd, chunks, sync, stamps })
}

/// One positional write of a batch of chunks (and its sync) to an append-only file, run on a
/// worker thread.
pub struct WriteChunksAt {
    fd: i32,
    chunks: Vec<Buffer>,
    position: f64,
    sync: bool,
}

impl Task for WriteChunksAt {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> Result<Self::Output> {
        // As in AppendChunks: the descriptor stays the JavaScript side's to close.
        let file = ManuallyDrop::new(unsafe { File::from_raw_fd(self.fd) });
        let slices: Vec<&[u8]> = self.chunks.iter().map(|b| b.as_ref()).collect();
        svc_log::append::write_chunks_at(&file, &slices, self.position as u64, self.sync)
            .map_err(|e| Error::new(Status::GenericFailure, format!("append-only file write failed: {e}")))
    }

    fn resolve(&mut self, _env: Env, _output: Self::Output) -> Result<Self::JsValue> {
        Ok(())
    }
}

/// Writes `chunks` in order from byte `position` of the file open for writing at `fd`, then
/// `fdatasync`s it when `sync` is true. The caller must keep `fd` open until this settles.
#[napi(ts_return_type = "Promise<void>")]
pub fn write_chunks_at(fd: i32, chunks: Vec<Buffer>, position: f64, sync: bool) -> Result<AsyncTask<WriteChunksAt>> {
    if !(position >= 0.0 && position.fract() == 0.0) {
        return Err(Error::new(Status::InvalidArg, format!("write position {position} is not a byte offset")));
    }
    Ok(AsyncTask::new(WriteChunksAt { fd, chunks, position, sync }))
}

//! Checksums of broker record frames, a whole run of frames per call: a produce batch is sealed,
//! and a read buffer verified, with one crossing from JavaScript instead of one per record.
//!
//! A frame (src/broker/log/record.ts has the full layout) starts with `body_len: u32` — the bytes
//! after that field — and `crc: u32`, the CRC32C of everything after the CRC, up to the frame's
//! end. Frames follow each other with no padding.

use crate::checksum::crc32c;

/// The length field, which the body length does not count.
const LENGTH_FIELD_BYTES: usize = 4;
/// Where the checksummed bytes start: after the length and the CRC.
const CRC_COVERS_FROM: usize = 8;
/// The shortest body: a frame with an empty key and an empty value.
pub const BODY_BYTES_MIN: u32 = 28;
/// Where a frame's fields are: its offset (u64), timestamp (i64), key length (i32), key.
const OFFSET_AT: usize = 8;
const TIMESTAMP_AT: usize = 16;
const KEY_LENGTH_AT: usize = 24;
const KEY_AT: usize = 28;

fn read_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// The end of the frame at `pos`, if its length field is whole, within bounds and the frame fits.
fn frame_end(buf: &[u8], pos: usize, body_max: u32) -> Option<usize> {
    if buf.len() - pos < LENGTH_FIELD_BYTES {
        return None;
    }
    let body = read_u32(buf, pos);
    if !(BODY_BYTES_MIN..=body_max).contains(&body) {
        return None;
    }
    let end = pos + LENGTH_FIELD_BYTES + body as usize;
    (end <= buf.len()).then_some(end)
}

/// Writes the CRC of every frame in `buf` (frames back to back from its start). Returns how many
/// frames were sealed, or None if the lengths do not tile the buffer exactly (a caller's bug).
pub fn seal_frames(buf: &mut [u8], body_max: u32) -> Option<usize> {
    let mut pos = 0;
    let mut frames = 0;
    while pos < buf.len() {
        let end = frame_end(buf, pos, body_max)?;
        seal_frame(buf, pos, end);
        pos = end;
        frames += 1;
    }
    Some(frames)
}

/// Writes the CRC of the frame at `buf[pos..end]`.
fn seal_frame(buf: &mut [u8], pos: usize, end: usize) {
    let crc = crc32c(&buf[pos + CRC_COVERS_FROM..end]);
    buf[pos + LENGTH_FIELD_BYTES..pos + CRC_COVERS_FROM].copy_from_slice(&crc.to_le_bytes());
}

/// Writes every frame's offset (from `base_offset`, one more per frame), its timestamp and then its
/// CRC: a produce's frames, laid out when it arrived, made ready to write once the flush that
/// writes them knows where they go. Returns how many frames, or None if the lengths do not tile
/// the buffer exactly (a caller's bug).
pub fn stamp_frames(buf: &mut [u8], base_offset: u64, timestamp_ms: i64, body_max: u32) -> Option<usize> {
    let mut pos = 0;
    let mut frames = 0u64;
    while pos < buf.len() {
        let end = frame_end(buf, pos, body_max)?;
        buf[pos + OFFSET_AT..pos + OFFSET_AT + 8].copy_from_slice(&(base_offset + frames).to_le_bytes());
        buf[pos + TIMESTAMP_AT..pos + TIMESTAMP_AT + 8].copy_from_slice(&timestamp_ms.to_le_bytes());
        // In the same pass, while the frame is in cache.
        seal_frame(buf, pos, end);
        pos = end;
        frames += 1;
    }
    Some(frames as usize)
}

/// What a record of a binary (SV01) produce carries besides its key and value.
pub struct ProduceRouting<'a> {
    /// Each record's partition; -1 routes by key, or round-robin. (f64, as JavaScript holds numbers.)
    pub partitions: &'a mut [f64],
    /// Each record's sequence; -1 for none.
    pub sequences: &'a mut [f64],
}

/// An SV01 record's fields besides its key and value: key_len, value_len, partition and sequence.
pub const SV01_RECORD_FIXED_BYTES: usize = 20;
/// What a log frame adds around a key and value: length, CRC, offset, timestamp, key and value lengths.
pub const FRAME_OVERHEAD_BYTES: usize = 32;
/// A sequence of i64's least value means "none" on the wire.
const NO_SEQUENCE: i64 = i64::MIN;
/// The largest sequence JavaScript holds exactly (2^53 - 1).
const SEQUENCE_MAX: i64 = (1 << 53) - 1;

fn read_be_i32(buf: &[u8], at: usize) -> i32 {
    i32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

/// Lays out the `count` records of an SV01 produce payload (`src`: from the first record to the
/// payload's end; big-endian `key_len: i32` (-1 none), key, `value_len: u32`, value,
/// `partition: i32`, `sequence: i64`) as log frames in `out`, their offsets, timestamps and CRCs
/// left zero for stamp_frames, and each record's partition and sequence in `routing`. `out` must
/// be exactly `src.len() + 12 * count` bytes, what the frames of well-formed records take.
/// Returns None at anything malformed, having written part of `out`: the caller reads the payload
/// again with its reference decoder for the message.
pub fn frame_produce_records(src: &[u8], count: usize, out: &mut [u8], routing: ProduceRouting) -> Option<()> {
    let extra = FRAME_OVERHEAD_BYTES - SV01_RECORD_FIXED_BYTES;
    if routing.partitions.len() != count || routing.sequences.len() != count || Some(out.len()) != count.checked_mul(extra)?.checked_add(src.len()) {
        return None;
    }
    let (mut at, mut pos) = (0usize, 0usize);
    for i in 0..count {
        if src.len() - at < 4 {
            return None;
        }
        let key_len = read_be_i32(src, at);
        at += 4;
        if key_len < -1 {
            return None;
        }
        let key_bytes = key_len.max(0) as usize;
        if src.len() - at < key_bytes + 4 {
            return None;
        }
        let key = &src[at..at + key_bytes];
        at += key_bytes;
        let value_bytes = read_be_i32(src, at) as u32 as usize;
        at += 4;
        if src.len() - at < value_bytes || src.len() - at - value_bytes < 12 {
            return None;
        }
        let value = &src[at..at + value_bytes];
        at += value_bytes;
        let partition = read_be_i32(src, at);
        let sequence = i64::from_be_bytes(src[at + 4..at + 12].try_into().ok()?);
        at += 12;
        if partition < -1 || (sequence != NO_SEQUENCE && !(0..=SEQUENCE_MAX).contains(&sequence)) {
            return None;
        }
        routing.partitions[i] = partition as f64;
        routing.sequences[i] = if sequence == NO_SEQUENCE { -1.0 } else { sequence as f64 };
        let body = (FRAME_OVERHEAD_BYTES - LENGTH_FIELD_BYTES + key_bytes + value_bytes) as u32;
        let frame = &mut out[pos..pos + FRAME_OVERHEAD_BYTES + key_bytes + value_bytes];
        frame[0..4].copy_from_slice(&body.to_le_bytes());
        frame[4..KEY_LENGTH_AT].fill(0);
        frame[KEY_LENGTH_AT..KEY_LENGTH_AT + 4].copy_from_slice(&key_len.to_le_bytes());
        frame[KEY_AT..KEY_AT + key_bytes].copy_from_slice(key);
        let value_length_at = KEY_AT + key_bytes;
        frame[value_length_at..value_length_at + 4].copy_from_slice(&(value_bytes as u32).to_le_bytes());
        frame[value_length_at + 4..].copy_from_slice(value);
        pos += frame.len();
    }
    (at == src.len()).then_some(())
}

/// Bytes of the longest run of whole frames from the start of `buf` whose lengths are in bounds
/// and whose CRCs match: everything a reader may parse without checking again.
pub fn checked_prefix(buf: &[u8], body_max: u32) -> usize {
    let mut pos = 0;
    while let Some(end) = frame_end(buf, pos, body_max) {
        if crc32c(&buf[pos + CRC_COVERS_FROM..end]) != read_u32(buf, pos + LENGTH_FIELD_BYTES) {
            break;
        }
        pos = end;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame with an empty key (-1 = none) and `value`, CRC left zero.
    fn frame(value: &[u8]) -> Vec<u8> {
        let body = BODY_BYTES_MIN as usize + value.len();
        let mut f = vec![0u8; LENGTH_FIELD_BYTES + body];
        f[0..4].copy_from_slice(&(body as u32).to_le_bytes());
        f[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        f[28..32].copy_from_slice(&(value.len() as u32).to_le_bytes());
        f[32..].copy_from_slice(value);
        f
    }

    #[test]
    fn sealed_frames_check_and_a_flipped_bit_stops_the_prefix() {
        let mut buf = [frame(b"one"), frame(b""), frame(b"three")].concat();
        assert_eq!(seal_frames(&mut buf, 1 << 20), Some(3));
        assert_eq!(checked_prefix(&buf, 1 << 20), buf.len());
        let second = frame(b"one").len();
        let mut damaged = buf.clone();
        damaged[second + 20] ^= 1;
        assert_eq!(checked_prefix(&damaged, 1 << 20), second);
        assert_eq!(checked_prefix(&buf[..buf.len() - 1], 1 << 20), second + frame(b"").len());
    }

    /// An SV01 record: big-endian key_len, key, value_len, value, partition, sequence.
    fn sv01_record(key: Option<&[u8]>, value: &[u8], partition: i32, sequence: i64) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(&key.map_or(-1, |k| k.len() as i32).to_be_bytes());
        r.extend_from_slice(key.unwrap_or(b""));
        r.extend_from_slice(&(value.len() as u32).to_be_bytes());
        r.extend_from_slice(value);
        r.extend_from_slice(&partition.to_be_bytes());
        r.extend_from_slice(&sequence.to_be_bytes());
        r
    }

    #[test]
    fn produce_records_become_frames_that_stamp_and_check() {
        let src = [sv01_record(None, b"one", -1, i64::MIN), sv01_record(Some(b"k"), b"", 2, 7)].concat();
        let mut out = vec![0u8; src.len() + 24];
        let (mut partitions, mut sequences) = ([0f64; 2], [0f64; 2]);
        let routing = ProduceRouting { partitions: &mut partitions, sequences: &mut sequences };
        assert_eq!(frame_produce_records(&src, 2, &mut out, routing), Some(()));
        assert_eq!((partitions, sequences), ([-1.0, 2.0], [-1.0, 7.0]));
        assert_eq!(&out[..frame(b"one").len()], &frame(b"one")[..]);
        assert_eq!(stamp_frames(&mut out, 40, 1_700_000_000_000, 1 << 20), Some(2));
        assert_eq!(checked_prefix(&out, 1 << 20), out.len());
        let second = frame(b"one").len();
        assert_eq!(u64::from_le_bytes(out[second + 8..second + 16].try_into().unwrap()), 41);
        assert_eq!(&out[second + 24..second + 29], &[1, 0, 0, 0, b'k']);
    }

    #[test]
    fn malformed_produce_records_are_refused() {
        let good = sv01_record(None, b"v", 0, i64::MIN);
        let run = |src: &[u8], count: usize| {
            let mut out = vec![0u8; src.len() + 12 * count];
            let (mut p, mut s) = (vec![0f64; count], vec![0f64; count]);
            frame_produce_records(src, count, &mut out, ProduceRouting { partitions: &mut p, sequences: &mut s })
        };
        assert_eq!(run(&good, 1), Some(()));
        assert_eq!(run(&good[..good.len() - 1], 1), None);
        assert_eq!(run(&[good.clone(), vec![0]].concat(), 1), None);
        assert_eq!(run(&sv01_record(None, b"v", -2, i64::MIN), 1), None);
        assert_eq!(run(&sv01_record(None, b"v", 0, -1), 1), None);
        assert_eq!(run(&sv01_record(None, b"v", 0, 1 << 53), 1), None);
        let mut bad_key = good.clone();
        bad_key[0..4].copy_from_slice(&(-2i32).to_be_bytes());
        assert_eq!(run(&bad_key, 1), None);
    }

    #[test]
    fn lengths_that_do_not_tile_are_refused() {
        let mut buf = frame(b"x");
        buf.push(0);
        assert_eq!(seal_frames(&mut buf, 1 << 20), None);
        let mut short = frame(b"x");
        short[0..4].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(seal_frames(&mut short, 1 << 20), None);
    }
}

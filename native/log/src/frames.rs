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
        let crc = crc32c(&buf[pos + CRC_COVERS_FROM..end]);
        buf[pos + LENGTH_FIELD_BYTES..pos + CRC_COVERS_FROM].copy_from_slice(&crc.to_le_bytes());
        pos = end;
        frames += 1;
    }
    Some(frames)
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

//! Words (KEYS and ARGV, a command's arguments) packed in one buffer, the form they cross between
//! JavaScript and Rust in: a u32 count, then each word as a u32 length and its bytes,
//! little-endian. src/kv/scripting/words.ts writes and reads it on the other side.
//!
//! A command a script calls crosses to JavaScript with a word the script was given (KEYS[1],
//! ARGV[2]) as a reference rather than its bytes: its length field is RUN_WORD_REFERENCE plus the
//! word's number among the run's keys and arguments, and no bytes follow. The server holds those
//! words already, as strings, and reuses them instead of reading the bytes again.

/// The words packed at the start of `bytes` and the bytes they take, or None when they are not
/// in that format.
pub fn unpack_prefix(bytes: &[u8]) -> Option<(Vec<&[u8]>, usize)> {
    let mut words = Vec::with_capacity(read_u32(bytes, 0)?.min(bytes.len() / 4));
    let end = each(bytes, |word| words.push(word))?;
    Some((words, end))
}

/// The words packed in `bytes`, which they fill, or None when the buffer is not that format.
pub fn unpack(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    unpack_prefix(bytes).and_then(|(words, end)| (end == bytes.len()).then_some(words))
}

/// Calls `f` with each word packed at the start of `bytes`, in order; returns the bytes they
/// take, or None (after calling `f` with those before it) at the first that is not whole.
pub fn each<'a>(bytes: &'a [u8], mut f: impl FnMut(&'a [u8])) -> Option<usize> {
    let count = read_u32(bytes, 0)?;
    let mut at = 4;
    for _ in 0..count {
        let length = read_u32(bytes, at)?;
        f(bytes.get(at + 4..at + 4 + length)?);
        at += 4 + length;
    }
    Some(at)
}

/// The number of words packed at the start of `bytes` (0 for a buffer too short to say).
pub fn count(bytes: &[u8]) -> usize {
    read_u32(bytes, 0).unwrap_or(0)
}

pub fn pack(words: &[&[u8]]) -> Vec<u8> {
    let mut out = vec![0; packed_bytes(words)];
    pack_into_referring(words, &mut out, |_| None);
    out
}

/// The bytes `words` take packed.
pub fn packed_bytes(words: &[&[u8]]) -> usize {
    4 + words.iter().map(|w| 4 + w.len()).sum::<usize>()
}

/// A packed length with this bit set is a reference to the running script's word numbered by the
/// rest of it (pack_into_referring).
pub const RUN_WORD_REFERENCE: u32 = 1 << 31;

/// Packs `words` at the start of `out`, which has room for them packed whole (packed_bytes), each
/// word `reference` numbers written as a reference to that word of the run (RUN_WORD_REFERENCE);
/// returns the bytes written.
pub fn pack_into_referring(words: &[&[u8]], out: &mut [u8], reference: impl Fn(&[u8]) -> Option<u32>) -> usize {
    out[..4].copy_from_slice(&(words.len() as u32).to_le_bytes());
    let mut at = 4;
    for word in words {
        if let Some(number) = reference(word) {
            out[at..at + 4].copy_from_slice(&(RUN_WORD_REFERENCE | number).to_le_bytes());
            at += 4;
            continue;
        }
        out[at..at + 4].copy_from_slice(&(word.len() as u32).to_le_bytes());
        out[at + 4..at + 4 + word.len()].copy_from_slice(word);
        at += 4 + word.len();
    }
    at
}

fn read_u32(bytes: &[u8], at: usize) -> Option<usize> {
    bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize)
}

#[cfg(test)]
mod tests {
    use super::{pack, pack_into_referring, unpack, unpack_prefix, RUN_WORD_REFERENCE};

    #[test]
    fn words_round_trip() {
        let words: Vec<&[u8]> = vec![b"SET", b"", b"\x00\xff\r\n"];
        assert_eq!(unpack(&pack(&words)), Some(words.clone()));
        let mut longer = pack(&words);
        longer.push(7);
        assert_eq!(unpack_prefix(&longer).map(|(w, end)| (w, end)), Some((words, longer.len() - 1)));
        assert_eq!(unpack(&[1, 0, 0, 0, 5, 0, 0, 0, b'a']), None);
        assert_eq!(unpack(&[0, 0, 0, 0, 9]), None);
        assert_eq!(unpack(&[0, 0]), None);
    }

    #[test]
    fn referred_words_take_a_length_field_only() {
        let words: Vec<&[u8]> = vec![b"GET", b"key", b"x"];
        let mut out = vec![0; 64];
        let written = pack_into_referring(&words, &mut out, |word| (word == b"key").then_some(5));
        let mut expected = vec![3, 0, 0, 0, 3, 0, 0, 0, b'G', b'E', b'T'];
        expected.extend_from_slice(&(RUN_WORD_REFERENCE | 5).to_le_bytes());
        expected.extend_from_slice(&[1, 0, 0, 0, b'x']);
        assert_eq!(&out[..written], &expected[..]);
        // Referring to none packs as pack does.
        let written = pack_into_referring(&words, &mut out, |_| None);
        assert_eq!(&out[..written], &pack(&words)[..]);
    }
}

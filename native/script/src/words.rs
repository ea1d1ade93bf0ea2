//! Words (KEYS and ARGV, a command's arguments) packed in one buffer, the form they cross between
//! JavaScript and Rust in: a u32 count, then each word as a u32 length and its bytes,
//! little-endian. src/kv/scripting/words.ts writes and reads it on the other side.
//!
//! A command a script calls crosses to JavaScript with a word the script was given (KEYS[1],
//! ARGV[2]) as a reference rather than its bytes: its length field is RUN_WORD_REFERENCE plus the
//! word's number among the run's keys and arguments, and no bytes follow. The server holds those
//! words already, as strings, and reuses them instead of reading the bytes again. Other words it
//! holds already cross as references to the word cache (word_cache.rs, pack_into).

use crate::word_cache::{pair_for, Lookup, WordCache};

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
    pack_into(words, &mut out, |_| None, None);
    out
}

/// The bytes `words` take packed.
pub fn packed_bytes(words: &[&[u8]]) -> usize {
    4 + words.iter().map(|w| 4 + w.len()).sum::<usize>()
}

/// A packed length from this on is not a length (no word is 2 GiB: Lua's memory is bounded below
/// that) but one of three marks, told apart by their top three bits:
///
/// - RUN_WORD_REFERENCE + n: the running script's word numbered n;
/// - CACHED_WORD + slot: the word the server holds in that slot of the word cache (word_cache.rs);
/// - CACHE_THIS_WORD + (slot << 8) + length: the word's bytes follow, and the server keeps it in
///   that slot of the word cache.
///
/// No bytes follow the first two.
pub const RUN_WORD_REFERENCE: u32 = 1 << 31;
/// Run words numbered from this on cross with their bytes: n must stay below CACHED_WORD.
pub const RUN_WORDS_REFERRED_MAX: u32 = 1 << 30;
pub const CACHED_WORD: u32 = 0b110 << 29;
pub const CACHE_THIS_WORD: u32 = 0b111 << 29;

/// Words of a command whose word-cache pairs are found, and read into the processor's cache,
/// before any is looked up (the rest are found as they are looked up).
const WORDS_PREFETCHED: usize = 16;

/// Packs `words` at the start of `out`, which has room for them packed whole (packed_bytes), and
/// returns the bytes written. A word `reference` numbers crosses as a reference to that word of
/// the run (RUN_WORD_REFERENCE); with a `cache`, a word it holds crosses as CACHED_WORD and its
/// slot, and one it does not, but keeps from now on, as CACHE_THIS_WORD, its slot and length, then
/// its bytes.
pub fn pack_into(words: &[&[u8]], out: &mut [u8], reference: impl Fn(&[u8]) -> Option<u32>, mut cache: Option<&mut WordCache>) -> usize {
    let mut pairs = [None; WORDS_PREFETCHED];
    if let Some(cache) = &cache {
        for (pair, word) in pairs.iter_mut().zip(words) {
            *pair = cache.prefetch(word);
        }
    }
    out[..4].copy_from_slice(&(words.len() as u32).to_le_bytes());
    let mut at = 4;
    for (i, word) in words.iter().enumerate() {
        let (mark, bytes) = if let Some(number) = reference(word).filter(|&n| n < RUN_WORDS_REFERRED_MAX) {
            (RUN_WORD_REFERENCE | number, &[][..])
        } else {
            let lookup = match cache.as_deref_mut() {
                Some(cache) => cache.lookup_in(word, pairs.get(i).copied().unwrap_or_else(|| pair_for(word))),
                None => Lookup::Uncached,
            };
            match lookup {
                Lookup::Held(slot) => (CACHED_WORD | slot, &[][..]),
                Lookup::Keep(slot) => (CACHE_THIS_WORD | (slot << 8) | word.len() as u32, *word),
                Lookup::Uncached => (word.len() as u32, *word),
            }
        };
        out[at..at + 4].copy_from_slice(&mark.to_le_bytes());
        out[at + 4..at + 4 + bytes.len()].copy_from_slice(bytes);
        at += 4 + bytes.len();
    }
    at
}

fn read_u32(bytes: &[u8], at: usize) -> Option<usize> {
    bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().expect("four bytes")) as usize)
}

#[cfg(test)]
mod tests {
    use super::{pack, pack_into, read_u32, unpack, unpack_prefix, CACHED_WORD, CACHE_THIS_WORD, RUN_WORD_REFERENCE};
    use crate::word_cache::{WordCache, SLOTS};

    /// Reads words packed by pack_into with a cache as the server does (src/kv/scripting/words.ts),
    /// keeping its own copy of the cache's words in `held`.
    fn unpack_cached(bytes: &[u8], run: &[&[u8]], held: &mut [Vec<u8>]) -> Vec<Vec<u8>> {
        let count = read_u32(bytes, 0).unwrap();
        let mut at = 4;
        let mut words = Vec::new();
        for _ in 0..count {
            let mark = read_u32(bytes, at).unwrap() as u32;
            at += 4;
            if mark >= CACHE_THIS_WORD {
                let (slot, length) = (((mark - CACHE_THIS_WORD) >> 8) as usize, (mark & 0xff) as usize);
                held[slot] = bytes[at..at + length].to_vec();
                words.push(held[slot].clone());
                at += length;
            } else if mark >= CACHED_WORD {
                words.push(held[(mark - CACHED_WORD) as usize].clone());
            } else if mark >= RUN_WORD_REFERENCE {
                words.push(run[(mark - RUN_WORD_REFERENCE) as usize].to_vec());
            } else {
                words.push(bytes[at..at + mark as usize].to_vec());
                at += mark as usize;
            }
        }
        words
    }

    #[test]
    fn cached_words_unpack_as_they_were_packed_and_cross_shorter_when_held() {
        let mut cache = WordCache::default();
        let mut held = vec![Vec::new(); SLOTS];
        let run: Vec<&[u8]> = vec![b"bull:q:1"];
        let long = vec![b'x'; 64];
        let distinct: Vec<String> = (0..3000).map(|n| format!("k{n}")).collect();
        let mut commands: Vec<Vec<&[u8]>> = vec![vec![b"HGET", b"bull:q:1", b"field"], vec![b"HGET", b"bull:q:1", b"field"], vec![b"SET", b"", &long, b"field"]];
        commands.extend(distinct.iter().map(|k| vec![&b"HSET"[..], b"h", k.as_bytes(), b"field"]));
        commands.push(vec![b"HGET", b"bull:q:1", b"field"]);
        let mut out = vec![0u8; 1024];
        for (i, words) in commands.iter().enumerate() {
            let written = pack_into(words, &mut out, |w| run.iter().position(|r| *r == w).map(|n| n as u32), Some(&mut cache));
            cache.confirm();
            let unpacked = unpack_cached(&out[..written], &run, &mut held);
            assert_eq!(unpacked, words.iter().map(|w| w.to_vec()).collect::<Vec<_>>(), "command {i}");
            if i == 1 {
                // All three held or given: four bytes each, no bytes of their own.
                assert_eq!(written, 4 + 3 * 4);
            }
        }
    }

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
        let written = pack_into(&words, &mut out, |word| (word == b"key").then_some(5), None);
        let mut expected = vec![3, 0, 0, 0, 3, 0, 0, 0, b'G', b'E', b'T'];
        expected.extend_from_slice(&(RUN_WORD_REFERENCE | 5).to_le_bytes());
        expected.extend_from_slice(&[1, 0, 0, 0, b'x']);
        assert_eq!(&out[..written], &expected[..]);
        // Referring to none packs as pack does.
        let written = pack_into(&words, &mut out, |_| None, None);
        assert_eq!(&out[..written], &pack(&words)[..]);
    }
}

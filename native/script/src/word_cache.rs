//! The words of scripts' commands that the server already holds as strings: a table of slots
//! mirrored on both sides of the bridge. Here each slot keeps a word's bytes; in JavaScript
//! (src/kv/scripting/words.ts) the same slot keeps the string made of them. A command's word found
//! here crosses as the slot's number alone, so the server makes no string of it again and compares
//! no bytes: a script's commands repeat their names, field names and the keys they build
//! ("bull:q:123" is named by most of a job's commands), and making a string of a word's bytes,
//! or comparing them with a recent word's in JavaScript, was ~6% of the server's time under
//! BullMQ (perf, 2026-11-30).
//!
//! A word not found takes a slot of the pair its bytes hash to, and crosses with its bytes and
//! that slot's number: the server makes its string and keeps it there. Of the pair it replaces
//! the word used less recently, so a stream of unique words (job ids, timestamps) costs no more
//! than it did without the table, and two words a script uses in turn that hash alike no longer
//! push each other out on every use: with one slot per hash, BullMQ's scripts missed six words
//! a job that never change (a command's name, "duration", "MAXLEN" …), made anew each time.
//!
//! The two sides agree only if the server reads every word that crossed. A word kept here is
//! first pending: it is trusted once the command that carried it has come back from JavaScript
//! (`confirm`); if JavaScript failed instead, its pending slots are emptied (`forget_pending`),
//! and are filled again before any word refers to them.

/// Words longer than this cross with their bytes every time: keys and names are short, and long
/// values rarely repeat. With its length a word fills one 64-byte cache line.
pub const WORD_BYTES_MAX: usize = 63;
/// Slots of the table (a power of two); a slot's number takes SLOT_BITS bits. 1,024 slots of 64
/// bytes stay in the processor's cache, where 4,096 made every lookup a miss to memory.
pub const SLOT_BITS: u32 = 10;
pub const SLOTS: usize = 1 << SLOT_BITS;
/// Slots are taken in pairs (two ways of a set): a word's hash picks the pair, 128 bytes together.
/// Two, not more: `recent` says which of the two was used last, and the other is replaced.
const WAYS: usize = 2;
const PAIR_BITS: u32 = SLOT_BITS - 1;

thread_local! {
    /// The table for this thread's scripts, of every state: src/kv/scripting/words.ts keeps one
    /// for the thread too.
    static WORD_CACHE: std::cell::RefCell<WordCache> = std::cell::RefCell::new(WordCache::default());
}

/// Runs `f` with this thread's word cache (not across a call into the server: see confirm).
pub fn with_word_cache<R>(f: impl FnOnce(&mut WordCache) -> R) -> R {
    WORD_CACHE.with_borrow_mut(f)
}

/// One cache line: a lookup reads one.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    /// Bytes of the word kept, 0 for none (the empty word is never kept).
    length: u8,
    bytes: [u8; WORD_BYTES_MAX],
}

const EMPTY: Slot = Slot { length: 0, bytes: [0; WORD_BYTES_MAX] };

/// Where a word stands with the table.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The server holds it in this slot.
    Held(u32),
    /// It was not held: it now takes this slot, and the server keeps it there once it reads it.
    Keep(u32),
    /// Too long or empty: not kept.
    Uncached,
}

pub struct WordCache {
    slots: Box<[Slot]>,
    /// Per pair, the way (0 or 1) used last: a word not held replaces the other.
    recent: Box<[u8]>,
    /// Slots filled since the last confirm, not yet known to the server.
    pending: Vec<u32>,
}

impl Default for WordCache {
    fn default() -> Self {
        WordCache { slots: vec![EMPTY; SLOTS].into_boxed_slice(), recent: vec![0; SLOTS / WAYS].into_boxed_slice(), pending: Vec::new() }
    }
}

impl WordCache {
    /// Finds `word`, or makes room for it (see Lookup).
    pub fn lookup(&mut self, word: &[u8]) -> Lookup {
        self.lookup_in(word, pair_for(word))
    }

    /// lookup, with `word`'s pair (pair_for) found already.
    pub fn lookup_in(&mut self, word: &[u8], pair: Option<u32>) -> Lookup {
        let Some(pair) = pair else { return Lookup::Uncached };
        let first = pair as usize * WAYS;
        for way in 0..WAYS {
            let slot = &self.slots[first + way];
            if usize::from(slot.length) == word.len() && &slot.bytes[..word.len()] == word {
                self.recent[pair as usize] = way as u8;
                return Lookup::Held((first + way) as u32);
            }
        }
        // An emptied slot (forget_pending) first, else the one used less recently.
        let way = if self.slots[first].length == 0 { 0 } else if self.slots[first + 1].length == 0 { 1 } else { 1 - usize::from(self.recent[pair as usize]) };
        self.recent[pair as usize] = way as u8;
        let number = first + way;
        let slot = &mut self.slots[number];
        slot.length = word.len() as u8;
        slot.bytes[..word.len()].copy_from_slice(word);
        self.pending.push(number as u32);
        Lookup::Keep(number as u32)
    }

    /// Starts reading `word`'s pair of slots into the processor's cache, and returns the pair
    /// (pair_for). A command's words are looked up one after another, and their slots, far apart,
    /// are rarely in the cache: asked for together, their reads from memory overlap.
    pub fn prefetch(&self, word: &[u8]) -> Option<u32> {
        let pair = pair_for(word)?;
        let first = pair as usize * WAYS;
        #[cfg(target_arch = "x86_64")]
        for line in &self.slots[first..first + WAYS] {
            // SAFETY: a hint with an address inside the table; it reads nothing the program sees.
            unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((line as *const Slot).cast()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = first;
        Some(pair)
    }

    /// The server has read every word sent since the last confirm: what they filled is held.
    pub fn confirm(&mut self) {
        self.pending.clear();
    }

    /// The server failed before it read every word sent since the last confirm: the slots they
    /// filled are emptied, as the server may not hold those words.
    pub fn forget_pending(&mut self) {
        for &number in &self.pending {
            self.slots[number as usize].length = 0;
        }
        self.pending.clear();
    }
}

/// The pair of slots `word` may take, or None for a word not kept: the empty word, and words
/// past WORD_BYTES_MAX.
pub fn pair_for(word: &[u8]) -> Option<u32> {
    (!word.is_empty() && word.len() <= WORD_BYTES_MAX).then(|| pair_of(word))
}

/// The pair `word` (1 to WORD_BYTES_MAX bytes) hashes to: eight bytes at a time, multiplied and
/// folded, its top bits. The last eight (or, in a shorter word, its first and last four, or its
/// first, middle and last byte) are read overlapping what came before rather than copied out and
/// padded: a copy on the stack read back at once stalled the processor.
fn pair_of(word: &[u8]) -> u32 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let length = word.len();
    let u32_at = |at: usize| u64::from(u32::from_le_bytes(word[at..at + 4].try_into().expect("four bytes")));
    let u64_at = |at: usize| u64::from_le_bytes(word[at..at + 8].try_into().expect("eight bytes"));
    let mut hash = length as u64;
    let last = if length >= 8 {
        let mut at = 0;
        while at + 8 < length {
            hash = (hash.rotate_left(5) ^ u64_at(at)).wrapping_mul(K);
            at += 8;
        }
        u64_at(length - 8)
    } else if length >= 4 {
        (u32_at(length - 4) << 32) | u32_at(0)
    } else {
        (u64::from(word[0]) << 16) | (u64::from(word[length / 2]) << 8) | u64::from(word[length - 1])
    };
    hash = (hash.rotate_left(5) ^ last).wrapping_mul(K);
    (hash >> (64 - PAIR_BITS)) as u32
}

#[cfg(test)]
mod tests {
    use super::{Lookup, WordCache, SLOTS, WORD_BYTES_MAX};

    /// `count` words other than `word` that hash to its pair.
    fn pair_mates(word: &[u8], count: usize) -> Vec<String> {
        let pair = super::pair_of(word);
        (0..1_000_000).map(|n| format!("w{n}")).filter(|w| super::pair_of(w.as_bytes()) == pair).take(count).collect()
    }

    #[test]
    fn a_word_is_held_once_kept_until_two_others_take_its_pair() {
        let mut cache = WordCache::default();
        let Lookup::Keep(slot) = cache.lookup(b"bull:q:1") else { panic!("a new word is kept") };
        assert_eq!(cache.lookup(b"bull:q:1"), Lookup::Held(slot));
        cache.confirm();
        assert_eq!(cache.lookup(b"bull:q:1"), Lookup::Held(slot));
        let mates = pair_mates(b"bull:q:1", 2);
        // One other word of the same pair takes the other slot: both are held.
        let Lookup::Keep(other) = cache.lookup(mates[0].as_bytes()) else { panic!("a new word is kept") };
        assert_ne!(other, slot);
        assert_eq!(cache.lookup(b"bull:q:1"), Lookup::Held(slot));
        assert_eq!(cache.lookup(mates[0].as_bytes()), Lookup::Held(other));
        // A third replaces the one used less recently: bull:q:1, not mates[0]; and bull:q:1,
        // back, replaces mates[1], used less recently than mates[0].
        assert_eq!(cache.lookup(mates[1].as_bytes()), Lookup::Keep(slot));
        assert_eq!(cache.lookup(mates[0].as_bytes()), Lookup::Held(other));
        assert_eq!(cache.lookup(b"bull:q:1"), Lookup::Keep(slot));
        assert_eq!(cache.lookup(mates[0].as_bytes()), Lookup::Held(other));
    }

    #[test]
    fn two_words_used_in_turn_that_share_a_pair_stay_held() {
        let mut cache = WordCache::default();
        let mates = pair_mates(b"duration", 1);
        let (Lookup::Keep(a), Lookup::Keep(b)) = (cache.lookup(b"duration"), cache.lookup(mates[0].as_bytes())) else { panic!("new words are kept") };
        for _ in 0..10 {
            assert_eq!(cache.lookup(b"duration"), Lookup::Held(a));
            assert_eq!(cache.lookup(mates[0].as_bytes()), Lookup::Held(b));
        }
    }

    #[test]
    fn the_empty_word_and_long_words_are_not_kept() {
        let mut cache = WordCache::default();
        assert_eq!(cache.lookup(b""), Lookup::Uncached);
        let long = vec![b'x'; WORD_BYTES_MAX + 1];
        assert_eq!(cache.lookup(&long), Lookup::Uncached);
        assert!(matches!(cache.lookup(&long[..WORD_BYTES_MAX]), Lookup::Keep(_)));
        assert!(matches!(cache.lookup(&long[..WORD_BYTES_MAX]), Lookup::Held(_)));
    }

    #[test]
    fn words_kept_before_a_failure_are_forgotten_and_those_confirmed_stay() {
        let mut cache = WordCache::default();
        let Lookup::Keep(confirmed) = cache.lookup(b"hget") else { panic!() };
        cache.confirm();
        let Lookup::Keep(pending) = cache.lookup(b"field") else { panic!() };
        cache.forget_pending();
        assert_eq!(cache.lookup(b"hget"), Lookup::Held(confirmed));
        assert_eq!(cache.lookup(b"field"), Lookup::Keep(pending));
    }

    #[test]
    fn pairs_spread_words_that_differ_in_one_byte() {
        let pairs: std::collections::HashSet<u32> = (0..300).map(|n| super::pair_of(format!("bull:queue:{n}").as_bytes())).collect();
        // 300 words into 512 pairs: about 228 distinct if spread at random.
        assert!(pairs.len() > 205, "{} distinct pairs", pairs.len());
        assert!(pairs.iter().all(|&p| (p as usize) < SLOTS / 2));
    }
}

//! Remembering the ids of pieces already encoded, since text repeats the
//! same words over and over: only a piece's first occurrence reaches the
//! vocabulary and the merging.
//!
//! Each thread keeps what it learned from one call to the next, for the
//! tokenizers it used last, as HuggingFace tokenizers keeps its BPE cache:
//! a document then starts with the words the previous ones taught it.
//! Pieces of up to 15 bytes (nearly all of them) live in open-addressing
//! tables keyed by their packed bytes: 2 to 7 bytes (most lookups) in 16-byte
//! slots, so that the table a lookup touches most stays in the CPU's L2
//! cache, 8 to 15 bytes in 32-byte slots. Longer ones (words of non-Latin
//! scripts, runs of symbols) live in a hash table over a buffer of their bytes.
//!
//! A new piece with places no token crosses (see [`crate::bpe::uncrossed`]:
//! a run of Chinese is one piece) is encoded part by part, each part looked
//! up, encoded and remembered like a piece, since the parts repeat where
//! the runs do not (a run of 16 bytes or more is not remembered whole).

use std::cell::RefCell;

use hashbrown::HashTable;

use super::encode::{encode_piece, encode_skipping_rank};
use super::tables::{packed_key, short_key, Tables};
use crate::util::token_table::hash_of;

/// A short-piece table's first and largest number of slots (powers of two).
const TABLE_MIN_SLOTS: usize = 1 << 8;
const TABLE_START_MAX: usize = 1 << 14;
const TABLE_MAX_SLOTS: usize = 1 << 17;
/// The long pieces are forgotten when this many are remembered, or their
/// bytes reach `LONG_BYTES_LIMIT`, or their ids `LONG_IDS_LIMIT` (3 MB of
/// Russian, Chinese and Japanese text has some 17,000 distinct pieces of 16
/// bytes or more, 0.7 MB with 0.2 M ids; with room for 16,384, a text
/// encoded twice merged most of them again); longer pieces than
/// `LONG_PIECE_MAX` bytes are not remembered (a megabyte of one letter does
/// not repeat).
const LONG_LIMIT: usize = 1 << 15;
const LONG_BYTES_LIMIT: usize = 1 << 21;
const LONG_IDS_LIMIT: usize = 1 << 19;
const LONG_PIECE_MAX: usize = 1 << 12;
/// Pieces of this many bytes or more are long (see [`LongPieces`]).
const LONG_PIECE_MIN: usize = 16;
/// Pieces encoded without a short-piece table after it filled while most
/// lookups missed (text whose pieces rarely repeat: random letters, hex,
/// base64); then it is tried again.
const BYPASS_PIECES: usize = 1 << 15;
/// Caches a thread keeps: one per tokenizer it used last.
const CACHES_PER_THREAD: usize = 4;
/// Marks an unused id place in a slot (no id is u32::MAX: see `Vocab::new`).
const NO_ID: u32 = u32::MAX;

/// A slot of a short-piece table: a piece's packed key (zero: empty) and
/// its ids, inline or in the table's store.
trait Slot: Copy + Default {
    type Key: Copy + PartialEq + Default;
    fn key_of(piece: &[u8]) -> Self::Key;
    fn hash(key: Self::Key) -> u64;
    fn key(&self) -> Self::Key;
    fn new(key: Self::Key, ids: &[u32], store: &mut Vec<u32>) -> Self;
    fn push_ids(&self, store: &[u32], out: &mut Vec<u32>);
}

/// A piece of 2 to 7 bytes: one or two ids inline (`[id, NO_ID]` or
/// `[a, b]`), more in the store (`[NO_ID, at]`: the count at `at`, then
/// the ids).
#[derive(Clone, Copy, Default)]
struct SmallSlot {
    key: u64,
    ids: [u32; 2],
}

impl Slot for SmallSlot {
    type Key = u64;

    #[inline(always)]
    fn key_of(piece: &[u8]) -> u64 {
        short_key(piece)
    }

    #[inline(always)]
    fn hash(key: u64) -> u64 {
        key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[inline(always)]
    fn key(&self) -> u64 {
        self.key
    }

    fn new(key: u64, ids: &[u32], store: &mut Vec<u32>) -> Self {
        let ids = match *ids {
            [id] => [id, NO_ID],
            [a, b] => [a, b],
            _ => {
                let at = store.len() as u32;
                store.push(ids.len() as u32);
                store.extend_from_slice(ids);
                [NO_ID, at]
            }
        };
        Self { key, ids }
    }

    #[inline(always)]
    fn push_ids(&self, store: &[u32], out: &mut Vec<u32>) {
        if let [NO_ID, at] = self.ids {
            let at = at as usize;
            return out.extend_from_slice(&store[at + 1..at + 1 + store[at] as usize]);
        }
        // Both places, then back over an unused second one: no branch on
        // the number of ids.
        out.extend_from_slice(&self.ids);
        out.truncate(out.len() - (self.ids[1] == NO_ID) as usize);
    }
}

/// A piece of 8 to 15 bytes: up to three ids inline, more in the store
/// (`count` = `IN_STORE`, the ids at `ids[0]..ids[1]`). Aligned to its
/// size: a table's buffer is only 16-byte aligned, so half its slots would
/// cross two cache lines, and a probe of one would miss twice.
#[derive(Clone, Copy, Default)]
#[repr(align(32))]
struct MidSlot {
    key: u128,
    count: u32,
    ids: [u32; 3],
}

const IN_STORE: u32 = u32::MAX;

impl Slot for MidSlot {
    type Key = u128;

    #[inline(always)]
    fn key_of(piece: &[u8]) -> u128 {
        packed_key(piece)
    }

    #[inline(always)]
    fn hash(key: u128) -> u64 {
        ((key as u64) ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    #[inline(always)]
    fn key(&self) -> u128 {
        self.key
    }

    fn new(key: u128, ids: &[u32], store: &mut Vec<u32>) -> Self {
        let mut slot = Self {
            key,
            count: ids.len() as u32,
            ids: [0; 3],
        };
        if ids.len() <= 3 {
            slot.ids[..ids.len()].copy_from_slice(ids);
        } else {
            slot.count = IN_STORE;
            slot.ids[0] = store.len() as u32;
            store.extend_from_slice(ids);
            slot.ids[1] = store.len() as u32;
        }
        slot
    }

    #[inline(always)]
    fn push_ids(&self, store: &[u32], out: &mut Vec<u32>) {
        if self.count == IN_STORE {
            return out.extend_from_slice(&store[self.ids[0] as usize..self.ids[1] as usize]);
        }
        // All three places, then back over the unused ones: no branch on
        // the number of ids.
        out.extend_from_slice(&self.ids);
        out.truncate(out.len() - 3 + self.count as usize);
    }
}

/// The table slot where probing for `key` starts.
#[inline(always)]
fn home<S: Slot>(key: S::Key, slots: usize) -> usize {
    (S::hash(key) >> (64 - slots.trailing_zeros())) as usize
}

/// The ids of short pieces of one length band, for one tokenizer.
#[derive(Default)]
struct ShortPieces<S: Slot> {
    table: Vec<S>,
    /// Occupied slots of `table`.
    filled: usize,
    /// Lookups, and those that missed, since the table last grew or was cleared.
    lookups: usize,
    misses: usize,
    /// Ids of the table's pieces that do not fit their slot.
    store: Vec<u32>,
    /// Pieces still to encode without the table (see [`BYPASS_PIECES`]).
    bypass: usize,
}

impl<S: Slot> ShortPieces<S> {
    /// An empty table sized for a text of `text_len` bytes (about one piece
    /// in 8 bytes), for the calls that start one.
    fn for_text(text_len: usize) -> Self {
        let slots = (text_len / 8)
            .next_power_of_two()
            .clamp(TABLE_MIN_SLOTS, TABLE_START_MAX);
        Self {
            table: vec![S::default(); slots],
            filled: 0,
            lookups: 0,
            misses: 0,
            store: Vec::new(),
            bypass: 0,
        }
    }

    fn clear(&mut self) {
        self.table.fill(S::default());
        self.filled = 0;
        self.store.clear();
        self.lookups = 0;
        self.misses = 0;
    }

    /// Appends the ids of `piece` if the table has them.
    #[inline(always)]
    fn push_known(&mut self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        if self.bypass > 0 {
            return false;
        }
        let key = S::key_of(piece);
        self.lookups += 1;
        let mask = self.table.len() - 1;
        let mut at = home::<S>(key, self.table.len());
        loop {
            let slot = &self.table[at];
            if slot.key() == key {
                slot.push_ids(&self.store, out);
                return true;
            }
            if slot.key() == S::Key::default() {
                return false;
            }
            at = (at + 1) & mask;
        }
    }

    /// Adds `piece` (not in the table) and its ids.
    fn remember(&mut self, piece: &[u8], ids: &[u32]) {
        if self.bypass > 0 {
            self.bypass -= 1;
            return;
        }
        self.misses += 1;
        // At most 5/8 full: probes stay short.
        if (self.filled + 1) * 8 > self.table.len() * 5 {
            // Past the starting sizes, grow only while most lookups hit:
            // for text whose pieces rarely repeat (random letters) a larger
            // table would only leave the CPU cache. That table starts over
            // after a stretch of pieces encoded without it (filling it only
            // cost time), and one full at the largest size (bounded, and so
            // is its store: at most 15 ids a piece) starts over at once.
            let mostly_hits = self.lookups > 2 * self.misses;
            let may_grow = self.table.len() < TABLE_START_MAX || mostly_hits;
            if self.table.len() < TABLE_MAX_SLOTS && may_grow {
                self.grow();
            } else {
                if !mostly_hits {
                    self.bypass = BYPASS_PIECES;
                }
                self.clear();
            }
        }
        let slot = S::new(S::key_of(piece), ids, &mut self.store);
        self.place(slot);
    }

    fn grow(&mut self) {
        let slots = self.table.len() * 2;
        let old = std::mem::replace(&mut self.table, vec![S::default(); slots]);
        self.filled = 0;
        self.lookups = 0;
        self.misses = 0;
        for slot in old {
            if slot.key() != S::Key::default() {
                self.place(slot);
            }
        }
    }

    /// Puts `slot` (whose key is not in the table) at the end of its probe run.
    fn place(&mut self, slot: S) {
        let mask = self.table.len() - 1;
        let mut at = home::<S>(slot.key(), self.table.len());
        while self.table[at].key() != S::Key::default() {
            at = (at + 1) & mask;
        }
        self.table[at] = slot;
        self.filled += 1;
    }
}

/// The ids of pieces of 16 bytes or more, for one tokenizer.
#[derive(Default)]
struct LongPieces {
    /// The pieces' bytes, end to end.
    bytes: Vec<u8>,
    /// Where each piece ends in `bytes` and its ids end in `ids` (each
    /// starts where the one before ends).
    ends: Vec<(u32, u32)>,
    ids: Vec<u32>,
    /// Indices into `ends`, found by the piece's bytes.
    by_bytes: HashTable<u32>,
}

impl LongPieces {
    /// Room for the long pieces of a text of `text_len` bytes of Russian or
    /// Chinese (one in about 100 bytes), so that the table is not rebuilt
    /// as it fills; the memory of the buffers is only reserved, not touched.
    fn for_text(text_len: usize) -> Self {
        let pieces = (text_len / 100).min(LONG_LIMIT);
        Self {
            bytes: Vec::with_capacity((text_len / 4).min(LONG_BYTES_LIMIT)),
            ends: Vec::with_capacity(pieces),
            ids: Vec::with_capacity((text_len / 8).min(LONG_IDS_LIMIT)),
            by_bytes: HashTable::with_capacity(pieces),
        }
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
        self.ids.clear();
        self.by_bytes.clear();
    }

    /// Appends the ids of `piece` if the table has them.
    fn push_known(&self, piece: &[u8], out: &mut Vec<u32>) -> bool {
        if piece.len() > LONG_PIECE_MAX {
            return false;
        }
        let (bytes, ends) = (&self.bytes, &self.ends);
        let found = self
            .by_bytes
            .find(hash_of(piece), |&e| piece_at(bytes, ends, e) == piece);
        let Some(&entry) = found else {
            return false;
        };
        let entry = entry as usize;
        let first = entry.checked_sub(1).map_or(0, |e| ends[e].1 as usize);
        out.extend_from_slice(&self.ids[first..ends[entry].1 as usize]);
        true
    }

    /// Adds `piece` (not in the table) and its ids.
    fn remember(&mut self, piece: &[u8], ids: &[u32]) {
        if piece.len() > LONG_PIECE_MAX {
            return;
        }
        if self.ends.len() >= LONG_LIMIT
            || self.bytes.len() + piece.len() > LONG_BYTES_LIMIT
            || self.ids.len() + ids.len() > LONG_IDS_LIMIT
        {
            self.clear();
        }
        self.bytes.extend_from_slice(piece);
        self.ids.extend_from_slice(ids);
        let entry = self.ends.len() as u32;
        // Within the limits above, both ends fit a u32.
        self.ends
            .push((self.bytes.len() as u32, self.ids.len() as u32));
        let (bytes, ends) = (&self.bytes, &self.ends);
        let rehash = |&e: &u32| hash_of(piece_at(bytes, ends, e));
        self.by_bytes.insert_unique(hash_of(piece), entry, rehash);
    }
}

/// The bytes of entry `e` of a [`LongPieces`] (it starts where `e - 1` ends).
fn piece_at<'b>(bytes: &'b [u8], ends: &[(u32, u32)], e: u32) -> &'b [u8] {
    let start = (e as usize)
        .checked_sub(1)
        .map_or(0, |p| ends[p].0 as usize);
    &bytes[start..ends[e as usize].0 as usize]
}

/// What a thread remembers for one tokenizer.
#[derive(Default)]
struct Remembered {
    small: ShortPieces<SmallSlot>,
    mid: ShortPieces<MidSlot>,
    long: LongPieces,
}

/// Which tokenizer a cache belongs to, and which of its generations (a
/// tokenizer's caches are cleared by moving to the next).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CacheKey {
    pub tokenizer: u64,
    pub generation: u64,
}

thread_local! {
    /// This thread's caches, the most recently used last.
    static CACHES: RefCell<Vec<(CacheKey, Remembered)>> = const { RefCell::new(Vec::new()) };
}

/// The cache of one encoding call: this thread's cache for the tokenizer,
/// given back when the call ends.
pub struct PieceCache {
    key: CacheKey,
    remembered: Remembered,
}

impl PieceCache {
    /// Takes this thread's cache for `key`. A thread without one (or with
    /// one from before the tokenizer's cache was cleared, whose memory goes)
    /// starts a new one sized for a text of `text_len` bytes; a nested call
    /// on the same thread, from a callback, gets a new one too.
    pub fn take(key: CacheKey, text_len: usize) -> Self {
        let remembered = CACHES.with(|caches| {
            let mut caches = caches.try_borrow_mut().ok()?;
            let at = caches
                .iter()
                .position(|(k, _)| k.tokenizer == key.tokenizer)?;
            let (old_key, remembered) = caches.remove(at);
            (old_key == key).then_some(remembered)
        });
        let mut remembered = remembered.unwrap_or_else(|| Remembered {
            small: ShortPieces::for_text(text_len),
            mid: ShortPieces::for_text(text_len),
            long: LongPieces::for_text(text_len),
        });
        // A new text may repeat its pieces: use the tables from its start.
        remembered.small.bypass = 0;
        remembered.mid.bypass = 0;
        Self { key, remembered }
    }

    /// Appends the ids of `piece` (empty: none).
    #[inline]
    pub fn encode(&mut self, tables: &Tables, piece: &[u8], out: &mut Vec<u32>) {
        if piece.len() >= LONG_PIECE_MIN {
            return self.encode_long(tables, piece, out);
        }
        if self.push_known(tables, piece, out) {
            return;
        }
        let before = out.len();
        self.encode_new(tables, piece, out);
        self.remember(piece, before, out);
    }

    /// A piece of [`LONG_PIECE_MIN`] bytes or more. One with places no
    /// token crosses (a run of Chinese or Japanese) is encoded part by part
    /// and not remembered whole: it rarely comes again whole (its parts
    /// do), and such runs only pushed the long pieces that repeat (long
    /// words of other scripts) out of the cache; nor is it looked for there.
    #[inline]
    fn encode_long(&mut self, tables: &Tables, piece: &[u8], out: &mut Vec<u32>) {
        let cut = tables.next_uncrossed(piece, 0);
        if cut.is_none() && self.remembered.long.push_known(piece, out) {
            return;
        }
        let Some(cut) = cut else {
            let before = out.len();
            match tables.whole_piece(piece) {
                Some(id) => out.push(id),
                None => encode_skipping_rank(tables, piece, u32::MAX, out),
            }
            // Remembered only where it is looked for (not in the cache).
            return self.remembered.long.remember(piece, &out[before..]);
        };
        // A token that is the whole piece would cross `cut`: there is none
        // to look up.
        self.encode_parts(tables, piece, cut, out)
    }

    /// Appends the ids of `piece` if they are known (always for a byte).
    #[inline(always)]
    fn push_known(&mut self, tables: &Tables, piece: &[u8], out: &mut Vec<u32>) -> bool {
        let remembered = &mut self.remembered;
        match piece.len() {
            0 | 1 => {
                encode_piece(tables, piece, out);
                true
            }
            2..=7 => remembered.small.push_known(piece, out),
            8..=15 => remembered.mid.push_known(piece, out),
            _ => remembered.long.push_known(piece, out),
        }
    }

    /// Remembers the ids of `piece`: `out[before..]`.
    fn remember(&mut self, piece: &[u8], before: usize, out: &[u32]) {
        let remembered = &mut self.remembered;
        match piece.len() {
            0 | 1 => {}
            2..=7 => remembered.small.remember(piece, &out[before..]),
            8..=15 => remembered.mid.remember(piece, &out[before..]),
            _ => remembered.long.remember(piece, &out[before..]),
        }
    }

    /// A piece not in the cache: a token, or the parts between the places
    /// no token crosses (see [`crate::bpe::uncrossed`]) each encoded (and
    /// remembered) on its own, or merged whole.
    #[cold]
    fn encode_new(&mut self, tables: &Tables, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(id) = tables.whole_piece(piece) {
            return out.push(id);
        }
        self.encode_no_token(tables, piece, tables.next_uncrossed(piece, 0), out);
    }

    /// A piece that is no token, whose first uncrossed place is `cut`: its
    /// parts, or (with none) the whole piece merged.
    #[inline]
    fn encode_no_token(
        &mut self,
        tables: &Tables,
        piece: &[u8],
        cut: Option<usize>,
        out: &mut Vec<u32>,
    ) {
        match cut {
            Some(cut) => self.encode_parts(tables, piece, cut, out),
            None => encode_skipping_rank(tables, piece, u32::MAX, out),
        }
    }

    /// The parts of `piece` (no token) between the places no token
    /// crosses, the first at `cut`.
    fn encode_parts(&mut self, tables: &Tables, piece: &[u8], mut cut: usize, out: &mut Vec<u32>) {
        let mut start = 0;
        loop {
            self.encode_part(tables, &piece[start..cut], out);
            start = cut;
            match tables.next_uncrossed(piece, start) {
                Some(next) => cut = next,
                None if start < piece.len() => cut = piece.len(),
                None => return,
            }
        }
    }

    /// A part of a piece between uncrossed places: its bytes merged. That
    /// is what encoding it as a piece gives, and the cache shares it with
    /// the pieces, unless the part is a token its bytes do not merge to (a
    /// piece that is a token is that token).
    fn encode_part(&mut self, tables: &Tables, part: &[u8], out: &mut Vec<u32>) {
        if tables.is_token_not_merged_whole(part) {
            return encode_skipping_rank(tables, part, u32::MAX, out);
        }
        if self.push_known(tables, part, out) {
            return;
        }
        let before = out.len();
        encode_piece(tables, part, out);
        self.remember(part, before, out);
    }
}

impl Drop for PieceCache {
    /// Gives the cache back to the thread, as its most recent.
    fn drop(&mut self) {
        let remembered = std::mem::take(&mut self.remembered);
        CACHES.with(|caches| {
            let Ok(mut caches) = caches.try_borrow_mut() else {
                return;
            };
            caches.retain(|(k, _)| k.tokenizer != self.key.tokenizer);
            if caches.len() == CACHES_PER_THREAD {
                caches.remove(0);
            }
            caches.push((self.key, remembered));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Pretokenizer, Tokenizer};

    fn tokenizer(pairs: &[(&[u8], &[u8])]) -> Tokenizer {
        let vocab = crate::bpe::encode::tests::merge_vocab(pairs);
        Tokenizer::new(vocab, Pretokenizer::builtin("gpt2").unwrap())
    }

    #[test]
    fn packed_keys_differ_for_different_pieces() {
        let pieces: Vec<Vec<u8>> = (2..=15)
            .flat_map(|n| [vec![b'a'; n], vec![0; n], (0..n as u8).collect()])
            .collect();
        let keys: std::collections::HashSet<u128> = pieces.iter().map(|p| packed_key(p)).collect();
        assert_eq!(keys.len(), pieces.len());
        assert!(keys.iter().all(|&k| k != 0), "0 marks an empty slot");
    }

    #[test]
    fn pieces_that_rarely_repeat_give_the_ids_of_each_piece_alone() {
        // Words of random letters: the table fills with pieces that do not
        // come back, so pieces are encoded around it for a while, then with
        // it again (several times a call here).
        let t = tokenizer(&[(b"a", b"b"), (b"B", b"c"), (b" ", b"a"), (b"ab", b"Bc")]);
        let mut rng = crate::util::rng::Rng::new(3);
        let words: Vec<String> = (0..120_000)
            .map(|_| {
                let n = 2 + (rng.next_u64() % 6) as usize;
                (0..n)
                    .map(|_| {
                        (b'a' + (rng.next_u64() % 26) as u8 - 32 * (rng.next_u64() % 2) as u8)
                            as char
                    })
                    .collect()
            })
            .collect();
        let text = words.join(" ");
        let mut alone = Vec::new();
        for piece in t.pretokenizer().pieces(&text).unwrap() {
            encode_piece(t.encoder().tables(), piece.as_bytes(), &mut alone);
        }
        t.clear_cache();
        assert_eq!(t.encode_ordinary(&text).unwrap(), alone);
        // And again, with what the first call left.
        assert_eq!(t.encode_ordinary(&text).unwrap(), alone);
    }

    #[test]
    fn pieces_of_every_length_and_id_count_come_back_from_the_cache() {
        // Words of 1 to 19 letters whose ids number from one (the whole word
        // is a token) to the word's length, in each table and its store.
        let t = tokenizer(&[
            (b"a", b"b"),
            (b"ab", b"ab"),
            (b"abab", b"abab"),
            (b" ", b"abababab"),
        ]);
        let mut words = Vec::new();
        for n in 1..=19 {
            for cut in 0..=n {
                let word: String = (0..n)
                    .map(|i| match i < cut {
                        true => ["a", "b"][i % 2],
                        false => "c",
                    })
                    .collect();
                words.push(word);
            }
        }
        let text = words.join(" ");
        let each: Vec<Vec<u32>> = t
            .pretokenizer()
            .pieces(&text)
            .unwrap()
            .iter()
            .map(|p| {
                let mut ids = Vec::new();
                encode_piece(t.encoder().tables(), p.as_bytes(), &mut ids);
                ids
            })
            .collect();
        let counts: std::collections::HashSet<usize> = each.iter().map(Vec::len).collect();
        assert!((1..=19).all(|n| counts.contains(&n)), "{counts:?}");
        let alone = each.concat();
        t.clear_cache();
        for round in 0..3 {
            // Learned in the first round, remembered in the others.
            assert_eq!(t.encode_ordinary(&text).unwrap(), alone, "round {round}");
        }
    }

    #[test]
    fn pieces_taken_apart_where_no_token_crosses_encode_as_whole_pieces_do() {
        // Random tokens over CJK, Cyrillic and ASCII characters, plus
        // "中文字符", whose bytes do not merge to it under tiktoken's rule
        // ("文字" goes first, and then nothing joins): as a piece it is one
        // token, as a part of a longer piece its bytes merged. Every other
        // case, the same tokens as a merge list (each made from two earlier
        // ones, where it can be). Pieces repeat, and recur as the parts of
        // others, so that the cache hands back both.
        use crate::vocab::{Ranking, Vocab};
        let units = ["中", "文", "字", "符", "я", "з", "a", " "];
        let mut random = crate::bpe::random_text::RandomText::new(units, 17);
        let mut parts_used = [0, 0];
        for case in 0..100 {
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            for chars in ["中", "文", "字", "符", "文字", "中文", "字符", "中文字符"]
            {
                tokens.push(chars.as_bytes().to_vec());
            }
            for _ in 0..10 + case % 40 {
                let token = random.token(3, 7);
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            let vocab = match case % 2 {
                0 => Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]),
                _ => {
                    let mut made: Vec<Vec<u8>> = tokens[..256].to_vec();
                    let mut merges = Vec::new();
                    for token in &tokens[256..] {
                        let id = |part: &[u8]| made.iter().position(|t| t == part);
                        let split = (1..token.len())
                            .find_map(|k| Some((id(&token[..k])?, id(&token[k..])?)));
                        if let Some((left, right)) = split {
                            merges.push((left as u32, right as u32));
                            made.push(token.clone());
                        }
                    }
                    Vocab::new(made.into_iter().map(Some), Ranking::Merges(merges), vec![])
                }
            }
            .unwrap();
            let vocab = crate::bpe::encode::tests::tables_of(vocab);
            let key = CacheKey {
                tokenizer: u64::MAX - case,
                generation: 0,
            };
            let mut cache = PieceCache::take(key, 1 << 10);
            let mut pieces: Vec<Vec<u8>> = vec!["中文字符".into(), "中文字符я".into()];
            for _ in 0..60 {
                let n = 1 + random.pick(24);
                let piece = random.text(n);
                let cut = random.pick(piece.len());
                pieces.push(piece[cut..].to_vec());
                pieces.push(piece);
            }
            for piece in pieces.iter().chain(&pieces).rev() {
                let (mut got, mut want) = (vec![], vec![]);
                cache.encode(&vocab, piece, &mut got);
                encode_piece(&vocab, piece, &mut want);
                assert_eq!(
                    got,
                    want,
                    "case {case}: {:?}",
                    String::from_utf8_lossy(piece)
                );
                parts_used[(case % 2) as usize] +=
                    usize::from(vocab.next_uncrossed(piece, 0).is_some());
            }
        }
        assert!(
            parts_used.iter().all(|&n| n > 500),
            "pieces taken apart, by kind of vocabulary: {parts_used:?}"
        );
    }

    #[test]
    fn each_tokenizer_keeps_its_own_pieces_on_a_thread() {
        // The same words, merged differently by each of six tokenizers (more
        // than a thread keeps tables for), used in turn on one thread.
        // Short pieces, and long ones (16 bytes or more) that repeat.
        let text =
            "abc abc cab bca abcabc ab abcabcabcabcabcab bcabcabcabcabcabc abcabcabcabcabcab";
        let tokenizers: Vec<Tokenizer> = [
            vec![],
            vec![(&b"a"[..], &b"b"[..])],
            vec![(&b"b"[..], &b"c"[..])],
            vec![(&b"a"[..], &b"b"[..]), (&b"ab"[..], &b"c"[..])],
            vec![(&b"c"[..], &b"a"[..]), (&b"b"[..], &b"ca"[..])],
            vec![(&b" "[..], &b"a"[..]), (&b" a"[..], &b"b"[..])],
        ]
        .iter()
        .map(|pairs| tokenizer(pairs))
        .collect();
        let alone: Vec<Vec<u32>> = tokenizers
            .iter()
            .map(|t| t.clone().encode_ordinary(text).unwrap())
            .collect();
        assert_eq!(
            alone.iter().collect::<std::collections::HashSet<_>>().len(),
            6
        );
        for round in 0..3 {
            for (t, want) in tokenizers.iter().zip(&alone).rev() {
                assert_eq!(&t.encode_ordinary(text).unwrap(), want, "round {round}");
                if round == 1 {
                    t.clear_cache();
                }
            }
        }
    }
}

//! Remembering the ids of pieces already encoded, since text repeats the
//! same words over and over: only a piece's first occurrence reaches the
//! vocabulary and the merging.
//!
//! Pieces of up to 15 bytes (nearly all of them) live in an open-addressing
//! table keyed by their packed bytes, which each thread keeps from one call
//! to the next for the tokenizers it used last, as HuggingFace tokenizers
//! keeps its BPE cache: a document then starts with the words the previous
//! ones taught it. Longer pieces are remembered for one call only.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::encode::encode_piece;
use crate::vocab::Vocab;

/// The short-piece table's first and largest number of slots (powers of
/// two); 32 bytes a slot.
const TABLE_MIN_SLOTS: usize = 1 << 8;
const TABLE_START_MAX: usize = 1 << 14;
const TABLE_MAX_SLOTS: usize = 1 << 17;
/// `Slot::count` of a piece whose ids are in the store (`ids[0]..ids[1]`).
const IN_STORE: u32 = u32::MAX;
/// The long pieces of a call are forgotten when this many are remembered.
const LONG_LIMIT: usize = 1 << 16;
/// Short-piece tables a thread keeps: one per tokenizer it used last.
const TABLES_PER_THREAD: usize = 4;

/// A piece of at most 15 bytes (its packed key, 0 for an empty slot) and its
/// ids: up to three inline, more in the table's store.
#[derive(Clone, Copy, Default)]
struct Slot {
    key: u128,
    count: u32,
    ids: [u32; 3],
}

/// Packs a piece of 2 to 15 bytes and its length into one integer (bytes in
/// order, zero-padded, the length in the top byte), from two overlapping
/// loads rather than a byte copy.
#[inline(always)]
fn packed_key(piece: &[u8]) -> u128 {
    let n = piece.len();
    debug_assert!((2..=15).contains(&n));
    let bytes = if n >= 8 {
        let lo = u64::from_le_bytes(piece[..8].try_into().expect("8 bytes"));
        let hi = u64::from_le_bytes(piece[n - 8..].try_into().expect("8 bytes"));
        // The overlapping bytes are the same in both halves.
        lo as u128 | (hi as u128) << ((n - 8) * 8)
    } else if n >= 4 {
        let lo = u32::from_le_bytes(piece[..4].try_into().expect("4 bytes"));
        let hi = u32::from_le_bytes(piece[n - 4..].try_into().expect("4 bytes"));
        (lo as u64 | (hi as u64) << ((n - 4) * 8)) as u128
    } else {
        let lo = u16::from_le_bytes(piece[..2].try_into().expect("2 bytes"));
        (lo as u32 | (piece[n - 1] as u32) << ((n - 1) * 8)) as u128
    };
    bytes | (n as u128) << 120
}

#[inline(always)]
fn slot_hash(key: u128) -> u64 {
    ((key as u64) ^ ((key >> 64) as u64).rotate_left(29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The table slot where probing for `key` starts.
#[inline(always)]
fn home(key: u128, slots: usize) -> usize {
    (slot_hash(key) >> (64 - slots.trailing_zeros())) as usize
}

/// The ids of pieces of 2 to 15 bytes, for one tokenizer.
#[derive(Default)]
struct ShortPieces {
    table: Vec<Slot>,
    /// Occupied slots of `table`.
    filled: usize,
    /// Lookups, and those that missed, since the table last grew or was cleared.
    lookups: usize,
    misses: usize,
    /// Ids of the table's pieces that have more than three.
    store: Vec<u32>,
}

impl ShortPieces {
    fn clear(&mut self) {
        self.table.fill(Slot::default());
        self.filled = 0;
        self.store.clear();
        self.lookups = 0;
        self.misses = 0;
    }

    #[inline]
    fn encode(&mut self, vocab: &Vocab, piece: &[u8], out: &mut Vec<u32>) {
        if self.table.is_empty() {
            self.table = vec![Slot::default(); TABLE_MIN_SLOTS];
        }
        let key = packed_key(piece);
        self.lookups += 1;
        let mask = self.table.len() - 1;
        let mut at = home(key, self.table.len());
        loop {
            let slot = &self.table[at];
            if slot.key == key {
                match slot.count {
                    1 => out.push(slot.ids[0]),
                    2 => out.extend_from_slice(&slot.ids[..2]),
                    3 => out.extend_from_slice(&slot.ids),
                    _ => out
                        .extend_from_slice(&self.store[slot.ids[0] as usize..slot.ids[1] as usize]),
                }
                return;
            }
            if slot.key == 0 {
                break;
            }
            at = (at + 1) & mask;
        }
        self.insert_new(vocab, piece, key, at, out);
    }

    /// Encodes a piece not in the table and adds it at slot `at`.
    #[cold]
    fn insert_new(
        &mut self,
        vocab: &Vocab,
        piece: &[u8],
        key: u128,
        at: usize,
        out: &mut Vec<u32>,
    ) {
        let before = out.len();
        encode_piece(vocab, piece, out);
        self.misses += 1;
        // At most 5/8 full: probes stay short.
        let full = (self.filled + 1) * 8 > self.table.len() * 5;
        if full {
            // Past the starting sizes, grow only while most lookups hit:
            // for text whose pieces rarely repeat (random letters) a larger
            // table would only leave the CPU cache. That table, and one full
            // at the largest size (bounded, and so is its store: at most 15
            // ids a piece), start over.
            let mostly_hits = self.lookups > 2 * self.misses;
            let may_grow = self.table.len() < TABLE_START_MAX || mostly_hits;
            if self.table.len() < TABLE_MAX_SLOTS && may_grow {
                self.grow();
            } else {
                self.clear();
            }
        }
        let ids = &out[before..];
        let mut slot = Slot {
            key,
            count: ids.len() as u32,
            ids: [0; 3],
        };
        if ids.len() <= 3 {
            slot.ids[..ids.len()].copy_from_slice(ids);
        } else {
            slot.count = IN_STORE;
            slot.ids[0] = self.store.len() as u32;
            self.store.extend_from_slice(ids);
            slot.ids[1] = self.store.len() as u32;
        }
        if full {
            self.place(slot);
        } else {
            self.table[at] = slot;
            self.filled += 1;
        }
    }

    fn grow(&mut self) {
        let slots = self.table.len() * 2;
        let old = std::mem::replace(&mut self.table, vec![Slot::default(); slots]);
        self.filled = 0;
        self.lookups = 0;
        self.misses = 0;
        for slot in old {
            if slot.key != 0 {
                self.place(slot);
            }
        }
    }

    /// Puts `slot` (whose key is not in the table) at the end of its probe run.
    fn place(&mut self, slot: Slot) {
        let mask = self.table.len() - 1;
        let mut at = home(slot.key, self.table.len());
        while self.table[at].key != 0 {
            at = (at + 1) & mask;
        }
        self.table[at] = slot;
        self.filled += 1;
    }
}

/// Which tokenizer a short-piece table belongs to, and which of its
/// generations (a tokenizer's cache is cleared by moving to the next).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct CacheKey {
    pub tokenizer: u64,
    pub generation: u64,
}

thread_local! {
    /// This thread's short-piece tables, the most recently used last.
    static TABLES: RefCell<Vec<(CacheKey, ShortPieces)>> = const { RefCell::new(Vec::new()) };
}

/// The cache of one encoding call: this thread's short-piece table for the
/// tokenizer (given back when the call ends), and the call's long pieces.
pub struct PieceCache<'t> {
    key: CacheKey,
    short: ShortPieces,
    long: FxHashMap<&'t [u8], (u32, u32)>,
    long_store: Vec<u32>,
}

impl<'t> PieceCache<'t> {
    /// Takes this thread's table for `key` (a new one if it has none; a
    /// nested call on the same thread, from a callback, gets an empty one).
    pub fn take(key: CacheKey) -> Self {
        let short = TABLES.with(|tables| {
            let mut tables = tables.try_borrow_mut().ok()?;
            let at = tables
                .iter()
                .position(|(k, _)| k.tokenizer == key.tokenizer)?;
            let (old_key, mut short) = tables.remove(at);
            if old_key != key {
                // Cleared since: forget the pieces, keep the memory.
                short.clear();
            }
            Some(short)
        });
        Self {
            key,
            short: short.unwrap_or_default(),
            long: FxHashMap::default(),
            long_store: Vec::new(),
        }
    }

    #[inline]
    pub fn encode(&mut self, vocab: &Vocab, piece: &'t [u8], out: &mut Vec<u32>) {
        match piece.len() {
            0 | 1 => encode_piece(vocab, piece, out),
            2..=15 => self.short.encode(vocab, piece, out),
            _ => self.encode_long(vocab, piece, out),
        }
    }

    /// Pieces of 16 bytes or more, remembered for this call (keyed by the
    /// text's own bytes).
    fn encode_long(&mut self, vocab: &Vocab, piece: &'t [u8], out: &mut Vec<u32>) {
        if let Some(&(start, end)) = self.long.get(piece) {
            out.extend_from_slice(&self.long_store[start as usize..end as usize]);
            return;
        }
        let before = out.len();
        encode_piece(vocab, piece, out);
        if self.long.len() >= LONG_LIMIT || self.long_store.len() > u32::MAX as usize / 2 {
            self.long.clear();
            self.long_store.clear();
        }
        let span = (
            self.long_store.len() as u32,
            (self.long_store.len() + out.len() - before) as u32,
        );
        self.long_store.extend_from_slice(&out[before..]);
        self.long.insert(piece, span);
    }
}

impl Drop for PieceCache<'_> {
    /// Gives the short-piece table back to the thread, as its most recent.
    fn drop(&mut self) {
        let short = std::mem::take(&mut self.short);
        if short.table.is_empty() {
            return;
        }
        TABLES.with(|tables| {
            let Ok(mut tables) = tables.try_borrow_mut() else {
                return;
            };
            tables.retain(|(k, _)| k.tokenizer != self.key.tokenizer);
            if tables.len() == TABLES_PER_THREAD {
                tables.remove(0);
            }
            tables.push((self.key, short));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Ranking;
    use crate::{Pretokenizer, Tokenizer};

    /// Byte tokens plus the merges of `pairs`, in order, each making a new token.
    fn tokenizer(pairs: &[(&[u8], &[u8])]) -> Tokenizer {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut merges = Vec::new();
        for (l, r) in pairs {
            let id = |t: &[u8]| tokens.iter().position(|x| x == t).unwrap() as u32;
            merges.push((id(l), id(r)));
            tokens.push([*l, *r].concat());
        }
        let vocab = Vocab::new(
            tokens.into_iter().map(Some),
            Ranking::Merges(merges),
            vec![],
        );
        Tokenizer::new(vocab.unwrap(), Pretokenizer::builtin("gpt2").unwrap())
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
    fn each_tokenizer_keeps_its_own_pieces_on_a_thread() {
        // The same words, merged differently by each of six tokenizers (more
        // than a thread keeps tables for), used in turn on one thread.
        let text = "abc abc cab bca abcabc ab";
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

//! The vocabulary with the lookup indexes that encoding reads: whole
//! pieces by their packed bytes, the rules of byte pairs, the characters
//! merging may take whole, the places no token crosses. [`Tables`] holds
//! them and answers the lookups; [`crate::Encoder`] fills the
//! indexes that are found by encoding (which tokens encode to themselves).

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use super::uncrossed::Uncrossed;
use super::whole_chars::WholeChars;
use crate::vocab::{MergeRule, Ranking, Vocab};

#[derive(Clone, Debug)]
pub(crate) struct Tables {
    vocab: Vocab,
    /// Tokens whose own bytes encode to exactly themselves: a piece equal to
    /// one of them needs no merging (for trained vocabularies, all of them).
    encodes_to_itself: Vec<bool>,
    /// The whole-piece tokens of 2 to 31 bytes by their packed bytes (see
    /// [`Tables::packed_whole_piece`]), in tables by length: 3 and 4 bytes
    /// (8-byte entries: the spans merging in text of other scripts looks up
    /// most, two Cyrillic letters say, stay in the CPU's L2 cache), 2 and 5
    /// to 7, 8 to 15, 16 to 31 (first and last 16 bytes and the length).
    three_byte_pieces: FxHashMap<u32, u32>,
    four_byte_pieces: FxHashMap<u32, u32>,
    short_whole_pieces: FxHashMap<u64, u32>,
    mid_whole_pieces: MidPieces,
    long_whole_pieces: FxHashMap<(u128, u128, u8), u32>,
    /// The first 16 bytes and the length of each whole-piece token of 32
    /// bytes or more: most pieces that long (runs of Chinese or Japanese,
    /// long words of other scripts) are known not to be one without
    /// hashing them whole and probing the table of all tokens.
    longer_whole_pieces: LongerPieces,
    /// The rule of every pair of single bytes, indexed by `left << 8 | right`
    /// (rank u32::MAX: none): the first merges of every piece, without hashing.
    byte_pair_rules: Box<[MergeRule]>,
    /// Under tiktoken's rule, the characters that merging may take as one
    /// symbol from the start; none for merge lists.
    whole_chars: WholeChars,
    /// Where no token crosses between two characters of a piece.
    uncrossed: Uncrossed,
    /// Under tiktoken's rule, the tokens with a byte of 0x80 or more whose
    /// bytes do not merge to themselves (none in OpenAI's vocabularies).
    /// Every part of a piece cut where no token crosses holds such a byte;
    /// a part that is one of these tokens is merged, not taken whole.
    not_merged_whole: FxHashSet<u32>,
}

/// Packs a piece of 2 to 15 bytes and its length into one integer (bytes in
/// order, zero-padded, the length in the top byte), from two overlapping
/// loads rather than a byte copy.
#[inline(always)]
pub(crate) fn packed_key(piece: &[u8]) -> u128 {
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

/// A piece of 2 to 7 bytes as one integer: [`packed_key`] with the length
/// in the top byte of 64 bits.
#[inline(always)]
pub(crate) fn short_key(piece: &[u8]) -> u64 {
    debug_assert!((2..=7).contains(&piece.len()));
    packed_key(piece) as u64 | (piece.len() as u64) << 56
}

/// A piece of 3 or 4 bytes as one integer (its length tells the tables apart).
#[inline(always)]
fn word_key(piece: &[u8]) -> u32 {
    debug_assert!((3..=4).contains(&piece.len()));
    let last = piece.len() - 1;
    u16::from_le_bytes([piece[0], piece[1]]) as u32
        | (piece[2] as u32) << 16
        | (piece[last] as u32) << (8 * last)
}

/// The whole-piece tokens of 8 to 15 bytes by [`packed_key`]: a hash table
/// of 32-byte entries aligned to their size (a map of `u128` to `u32` has
/// the same entries only 16-byte aligned: half of them cross two cache
/// lines, and the lookups of new pieces miss on both).
#[derive(Clone, Debug, Default)]
struct MidPieces(HashTable<MidEntry>);

#[derive(Clone, Copy, Debug)]
#[repr(align(32))]
struct MidEntry {
    key: u128,
    id: u32,
}

impl MidPieces {
    #[inline(always)]
    fn hash(key: u128) -> u64 {
        FxBuildHasher.hash_one(key)
    }

    /// Adds the token of `key`, which is not in the table yet: the table of
    /// tokens rejects two (non-special) tokens with the same bytes.
    fn insert(&mut self, key: u128, id: u32) {
        let entry = MidEntry { key, id };
        self.0
            .insert_unique(Self::hash(key), entry, |e| Self::hash(e.key));
    }

    #[inline(always)]
    fn get(&self, key: u128) -> Option<&u32> {
        self.0
            .find(Self::hash(key), |e| e.key == key)
            .map(|e| &e.id)
    }
}

/// A piece of 16 to 31 bytes as its first and last 16 bytes and its length.
#[inline(always)]
fn long_key(piece: &[u8]) -> (u128, u128, u8) {
    let n = piece.len();
    let lo = u128::from_le_bytes(piece[..16].try_into().expect("16 bytes"));
    let hi = u128::from_le_bytes(piece[n - 16..].try_into().expect("16 bytes"));
    (lo, hi, n as u8)
}

/// The first 16 bytes and the lengths of a set of byte strings of 32 bytes
/// or more (a few hundred tokens in OpenAI's vocabularies): a small table
/// that stays in the CPU's cache.
#[derive(Clone, Debug, Default)]
struct LongerPieces(FxHashSet<(u128, usize)>);

impl LongerPieces {
    fn key(bytes: &[u8]) -> (u128, usize) {
        let start = u128::from_le_bytes(bytes[..16].try_into().expect("16 bytes"));
        (start, bytes.len())
    }

    fn add(&mut self, bytes: &[u8]) {
        self.0.insert(Self::key(bytes));
    }

    /// Whether one of the strings may be `piece` (of 32 bytes or more).
    #[inline]
    fn may_hold(&self, piece: &[u8]) -> bool {
        !self.0.is_empty() && self.0.contains(&Self::key(piece))
    }
}

impl Tables {
    /// The tables that need no encoding to build: the rules of byte pairs
    /// and the places no token crosses. The whole pieces and characters
    /// come after, from [`Tables::index_whole_pieces`] and the setters.
    pub(crate) fn new(vocab: Vocab) -> Self {
        let none = MergeRule {
            rank: u32::MAX,
            result: 0,
        };
        // A merge makes the token of its two sides' bytes, so only the pairs
        // that spell a two-byte token can have a rule: look those up alone
        // (a few thousand lookups at load instead of 65,536).
        let mut byte_pair_rules = vec![none; 1 << 16].into_boxed_slice();
        for token in vocab.slots().filter(|t| t.len() == 2) {
            let (left, right) = (vocab.byte_id(token[0]), vocab.byte_id(token[1]));
            if let Some(rule) = vocab.merge_rule(left, right) {
                byte_pair_rules[(token[0] as usize) << 8 | token[1] as usize] = rule;
            }
        }
        let uncrossed = Uncrossed::of(&vocab);
        Self {
            vocab,
            encodes_to_itself: Vec::new(),
            three_byte_pieces: FxHashMap::default(),
            four_byte_pieces: FxHashMap::default(),
            short_whole_pieces: FxHashMap::default(),
            mid_whole_pieces: MidPieces::default(),
            long_whole_pieces: FxHashMap::default(),
            longer_whole_pieces: LongerPieces::default(),
            byte_pair_rules,
            whole_chars: WholeChars::default(),
            uncrossed,
            not_merged_whole: FxHashSet::default(),
        }
    }

    /// Fills the whole-piece tables: every token under tiktoken's rule,
    /// else those `encodes_to_itself` marks (one flag per id).
    pub(crate) fn index_whole_pieces(&mut self, encodes_to_itself: Vec<bool>) {
        self.encodes_to_itself = encodes_to_itself;
        for id in 0..self.vocab.len() as u32 {
            let bytes = self.vocab.slot(id);
            if !self.is_whole_piece(id) {
                continue;
            }
            match bytes.len() {
                0 | 1 => {}
                3 => _ = self.three_byte_pieces.insert(word_key(bytes), id),
                4 => _ = self.four_byte_pieces.insert(word_key(bytes), id),
                ..=7 => _ = self.short_whole_pieces.insert(short_key(bytes), id),
                8..=15 => self.mid_whole_pieces.insert(packed_key(bytes), id),
                16..=31 => _ = self.long_whole_pieces.insert(long_key(bytes), id),
                _ => self.longer_whole_pieces.add(bytes),
            }
        }
    }

    pub(crate) fn set_whole_chars(&mut self, whole_chars: WholeChars) {
        self.whole_chars = whole_chars;
    }

    /// See `not_merged_whole`.
    pub(crate) fn set_not_merged_whole(&mut self, ids: FxHashSet<u32>) {
        self.not_merged_whole = ids;
    }

    #[inline]
    pub(crate) fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// Whether pairs rank by the id of the token they make (tiktoken's rule).
    #[inline]
    pub(crate) fn ranks_by_token_id(&self) -> bool {
        matches!(self.vocab.ranking(), Ranking::TokenIds)
    }

    #[inline]
    pub(crate) fn byte_id(&self, byte: u8) -> u32 {
        self.vocab.byte_id(byte)
    }

    #[inline]
    pub(crate) fn merge_rule(&self, left: u32, right: u32) -> Option<MergeRule> {
        self.vocab.merge_rule(left, right)
    }

    /// See [`Vocab::rank_count`].
    #[inline]
    pub(crate) fn rank_count(&self) -> usize {
        self.vocab.rank_count()
    }

    /// See [`Vocab::token`].
    #[inline]
    pub(crate) fn token(&self, id: u32) -> Option<&[u8]> {
        self.vocab.token(id)
    }

    /// The token a whole piece encodes to without merging, if there is one:
    /// under tiktoken's rule any token; otherwise a token whose bytes encode
    /// to itself (so the shortcut cannot change the answer).
    #[inline]
    pub(crate) fn whole_piece(&self, piece: &[u8]) -> Option<u32> {
        if (2..=31).contains(&piece.len()) {
            return self.packed_whole_piece(piece);
        }
        if !self.longer_whole_pieces.may_hold(piece) {
            return None;
        }
        let id = self.vocab.id_of(piece)?;
        self.is_whole_piece(id).then_some(id)
    }

    /// [`Tables::whole_piece`] for 2 to 31 bytes: one lookup of an integer
    /// key. (Through the table of ids by bytes it is the hash of the bytes,
    /// the id, its offsets and a byte comparison: several dependent cache
    /// misses for each new piece.)
    #[inline]
    fn packed_whole_piece(&self, piece: &[u8]) -> Option<u32> {
        match piece.len() {
            3 => self.three_byte_pieces.get(&word_key(piece)),
            4 => self.four_byte_pieces.get(&word_key(piece)),
            ..=7 => self.short_whole_pieces.get(&short_key(piece)),
            8..=15 => self.mid_whole_pieces.get(packed_key(piece)),
            _ => self.long_whole_pieces.get(&long_key(piece)),
        }
        .copied()
    }

    /// The merge rule of adjacent symbols `left`, `right`, which together
    /// hold the bytes `span`. Under tiktoken's rule that is the token of
    /// those bytes: up to 31 bytes it is looked up by them, in the tables
    /// that every new piece's first lookup uses (smaller than the table of
    /// pairs, and kept in the CPU cache by those lookups).
    #[inline]
    pub(crate) fn adjacent_rule(&self, left: u32, right: u32, span: &[u8]) -> Option<MergeRule> {
        if !self.ranks_by_token_id() || span.len() > 31 {
            return self.merge_rule(left, right);
        }
        // Under this rule every token but the specials is a whole piece.
        let id = self.packed_whole_piece(span)?;
        Some(MergeRule {
            rank: id,
            result: id,
        })
    }

    fn is_whole_piece(&self, id: u32) -> bool {
        !self.vocab.is_special(id)
            && !self.vocab.slot(id).is_empty()
            && (self.ranks_by_token_id() || self.encodes_to_itself[id as usize])
    }

    /// The merge rule of the token pair made of the single bytes `left`, `right`.
    #[inline]
    pub(crate) fn byte_pair_rule(&self, left: u8, right: u8) -> Option<MergeRule> {
        let rule = self.byte_pair_rules[(left as usize) << 8 | right as usize];
        (rule.rank != u32::MAX).then_some(rule)
    }

    /// The token of the character of two or three bytes at `piece[at..]`,
    /// and its length, when merging may start from it as one symbol there
    /// (see [`WholeChars`]).
    #[inline]
    pub(crate) fn char_token(&self, piece: &[u8], at: usize) -> Option<(u32, usize)> {
        self.whole_chars.at(piece, at)
    }

    /// The first position of `piece` after `from` that no token crosses (see
    /// [`Uncrossed`]): the piece encodes as its two sides do.
    #[inline]
    pub(crate) fn next_uncrossed(&self, piece: &[u8], from: usize) -> Option<usize> {
        self.uncrossed.next(piece, from)
    }

    /// Whether `part` is a token whose bytes do not merge to it (never, in
    /// OpenAI's vocabularies; for merge lists, [`Tables::whole_piece`] leaves
    /// such tokens out already).
    #[inline]
    pub(crate) fn is_token_not_merged_whole(&self, part: &[u8]) -> bool {
        !self.not_merged_whole.is_empty()
            && self
                .whole_piece(part)
                .is_some_and(|id| self.not_merged_whole.contains(&id))
    }
}

#[cfg(test)]
mod tests {
    use crate::bpe::Encoder;
    use crate::vocab::{Ranking, Vocab};

    #[test]
    fn long_tokens_are_found_whole_and_other_long_pieces_are_not() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let long = [b"=".repeat(40), b"-".repeat(300)];
        tokens.extend(long.iter().cloned());
        let vocab = Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap();
        let encoder = Encoder::new(vocab);
        let v = encoder.tables();
        assert_eq!(v.whole_piece(&long[0]), Some(256));
        assert_eq!(v.whole_piece(&long[1]), Some(257));
        // Same first byte, other lengths; same length, other first byte;
        // then the same first 16 bytes and length, other bytes after.
        for piece in [
            b"=".repeat(41),
            b"-".repeat(299),
            b"+".repeat(40),
            b"+".repeat(300),
        ] {
            assert_eq!(v.whole_piece(&piece), None);
        }
        let mut other = b"=".repeat(39);
        other.push(b'x');
        assert_eq!(v.whole_piece(&other), None);
    }
}

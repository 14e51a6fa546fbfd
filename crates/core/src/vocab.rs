//! The vocabulary: id <-> bytes, merge ranks, special tokens, and the
//! invariants checked once when a vocabulary is built, so that a bad file
//! fails at load and never at encode.

use rayon::prelude::*;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use crate::bpe::uncrossed::Uncrossed;
use crate::bpe::whole_chars::WholeChars;
use crate::error::{Error, Result};
use crate::special::SpecialTokens;
use crate::token_table::{TableError, TokenTable};

/// A pair of token ids packed into one hash key.
#[inline]
pub fn pair_key(left: u32, right: u32) -> u64 {
    ((left as u64) << 32) | right as u64
}

#[derive(Clone, Copy, Debug)]
pub struct MergeRule {
    pub rank: u32,
    pub result: u32,
}

/// How adjacent pairs are ranked for merging.
#[derive(Clone, Debug)]
pub enum Ranking {
    /// An explicit merge list, rank = position (trained, HuggingFace, GPT-2).
    Merges(Vec<(u32, u32)>),
    /// tiktoken's rule: any adjacent pair whose concatenated bytes are a
    /// token merges, ranked by that token's id; a piece that is itself a
    /// token encodes to that token directly.
    TokenIds,
}

#[derive(Clone, Debug)]
pub struct Vocab {
    /// id -> bytes and back (specials are not found by their bytes); an
    /// empty entry is an unused id (tiktoken vocabularies leave gaps below
    /// their special tokens).
    tokens: TokenTable,
    byte_ids: [u32; 256],
    ranking: Ranking,
    merge_rules: FxHashMap<u64, MergeRule>,
    special: SpecialTokens,
    is_special: Vec<bool>,
    /// Tokens whose own bytes encode to exactly themselves: a piece equal to
    /// one of them needs no merging (for trained vocabularies, all of them).
    encodes_to_itself: Vec<bool>,
    /// The whole-piece tokens of 2 to 31 bytes by their packed bytes (see
    /// [`Vocab::packed_whole_piece`]), in tables by length: 3 and 4 bytes
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
pub fn packed_key(piece: &[u8]) -> u128 {
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
pub fn short_key(piece: &[u8]) -> u64 {
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

fn describe(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

impl Vocab {
    /// Builds and checks a vocabulary. `tokens[id]` is the bytes of `id`
    /// (None or empty: the id is unused); `special` maps text to id.
    pub fn new<T: AsRef<[u8]>>(
        tokens: impl IntoIterator<Item = Option<T>>,
        ranking: Ranking,
        special: Vec<(String, u32)>,
    ) -> Result<Self> {
        let bad = |msg: String| Err(Error::InvalidVocabulary(msg));
        // Special tokens are not found by their bytes (their text is plain text).
        let special_ids: FxHashSet<u32> = special.iter().map(|(_, id)| *id).collect();
        let tokens = match TokenTable::new(tokens, |id| !special_ids.contains(&(id as u32))) {
            Ok(tokens) => tokens,
            Err(TableError::TooLarge) => {
                return bad("the tokens hold 4 GiB of bytes or more".into())
            }
            Err(TableError::SameBytes(first, id, bytes)) => {
                return bad(format!(
                    "ids {first} and {id} have the same bytes {}",
                    describe(&bytes)
                ))
            }
        };
        let n = tokens.len();
        if n >= u32::MAX as usize {
            return bad(format!("{n} tokens is more than ids can address"));
        }
        let mut is_special = vec![false; n];
        for (text, id) in &special {
            if *id as usize >= n {
                return bad(format!(
                    "special token {text:?} has id {id}, beyond the {n} ids"
                ));
            }
            let slot = tokens.get(*id);
            if text.is_empty() {
                return bad(format!("special token id {id} is empty"));
            }
            if slot != text.as_bytes() {
                return bad(format!(
                    "special token {text:?} has id {id}, but that id holds {}",
                    if slot.is_empty() {
                        "nothing".into()
                    } else {
                        describe(slot)
                    }
                ));
            }
            if std::mem::replace(&mut is_special[*id as usize], true) {
                return bad(format!("id {id} is given to two special tokens"));
            }
        }
        let special = SpecialTokens::new(special)?;

        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            match tokens.id_of(&[b as u8]) {
                Some(id) => *slot = id,
                None => return bad(format!("no token for the single byte 0x{b:02X}")),
            }
        }

        let mut merge_rules = FxHashMap::default();
        match &ranking {
            Ranking::Merges(merges) => {
                // Each rule needs a lookup of its joined bytes (a cache miss):
                // made in parallel, then inserted in rank order so that the
                // first problem by rank is the one reported.
                let rule_of = |joined: &mut Vec<u8>,
                               (rank, &(left, right)): (usize, &(u32, u32))|
                 -> Result<(u64, MergeRule)> {
                    for part in [left, right] {
                        let usable = (part as usize) < n && !tokens.get(part).is_empty();
                        if !usable {
                            return Err(Error::InvalidVocabulary(format!(
                                "merge rank {rank} names id {part}, which is not a token"
                            )));
                        }
                        if is_special[part as usize] {
                            return Err(Error::InvalidVocabulary(format!(
                                "merge rank {rank} names the special token id {part}"
                            )));
                        }
                    }
                    joined.clear();
                    joined.extend_from_slice(tokens.get(left));
                    joined.extend_from_slice(tokens.get(right));
                    let Some(result) = tokens.id_of(joined) else {
                        return Err(Error::InvalidVocabulary(format!(
                            "merge rank {rank} ({left} + {right}) makes {}, which is not a token",
                            describe(joined)
                        )));
                    };
                    let rank = rank as u32;
                    Ok((pair_key(left, right), MergeRule { rank, result }))
                };
                let rules: Vec<Result<(u64, MergeRule)>> = merges
                    .par_iter()
                    .enumerate()
                    .map_init(Vec::new, rule_of)
                    .collect();
                merge_rules.reserve(merges.len());
                for rule in rules {
                    let (key, rule) = rule?;
                    if let Some(earlier) = merge_rules.insert(key, rule) {
                        let (left, right) = merges[rule.rank as usize];
                        return bad(format!(
                            "merge rank {} ({left} + {right}) repeats merge rank {}",
                            rule.rank, earlier.rank
                        ));
                    }
                }
            }
            Ranking::TokenIds => {
                // Every way to cut a token in two tokens is a pair that merges
                // into it. Found in parallel (on the caller's thread pool).
                let rules: Vec<(u64, MergeRule)> = (0..tokens.len())
                    .into_par_iter()
                    .filter(|&id| !is_special[id] && tokens.get(id as u32).len() >= 2)
                    .flat_map_iter(|id| {
                        let bytes = tokens.get(id as u32);
                        let tokens = &tokens;
                        (1..bytes.len()).filter_map(move |cut| {
                            // Most prefixes are not tokens: look the suffix up only after.
                            let left = tokens.id_of(&bytes[..cut])?;
                            let right = tokens.id_of(&bytes[cut..])?;
                            let rule = MergeRule {
                                rank: id as u32,
                                result: id as u32,
                            };
                            Some((pair_key(left, right), rule))
                        })
                    })
                    .collect();
                merge_rules.extend(rules);
            }
        }
        let mut vocab = Self {
            tokens,
            byte_ids,
            ranking,
            merge_rules,
            special,
            is_special,
            encodes_to_itself: Vec::new(),
            three_byte_pieces: FxHashMap::default(),
            four_byte_pieces: FxHashMap::default(),
            short_whole_pieces: FxHashMap::default(),
            mid_whole_pieces: MidPieces::default(),
            long_whole_pieces: FxHashMap::default(),
            longer_whole_pieces: LongerPieces::default(),
            byte_pair_rules: Box::default(),
            whole_chars: WholeChars::default(),
            uncrossed: Uncrossed::default(),
            not_merged_whole: FxHashSet::default(),
        };
        let none = MergeRule {
            rank: u32::MAX,
            result: 0,
        };
        // A merge makes the token of its two sides' bytes, so only the pairs
        // that spell a two-byte token can have a rule: look those up alone
        // (a few thousand lookups at load instead of 65,536).
        let mut byte_pair_rules = vec![none; 1 << 16].into_boxed_slice();
        for token in vocab.tokens.iter().filter(|t| t.len() == 2) {
            let (left, right) = (byte_ids[token[0] as usize], byte_ids[token[1] as usize]);
            if let Some(rule) = vocab.merge_rule(left, right) {
                byte_pair_rules[(token[0] as usize) << 8 | token[1] as usize] = rule;
            }
        }
        vocab.byte_pair_rules = byte_pair_rules;
        if matches!(vocab.ranking, Ranking::Merges(_)) {
            vocab.encodes_to_itself = vocab.find_tokens_that_encode_to_themselves();
        }
        for id in 0..vocab.tokens.len() as u32 {
            let bytes = vocab.tokens.get(id);
            if !vocab.is_whole_piece(id) {
                continue;
            }
            match bytes.len() {
                0 | 1 => {}
                3 => _ = vocab.three_byte_pieces.insert(word_key(bytes), id),
                4 => _ = vocab.four_byte_pieces.insert(word_key(bytes), id),
                ..=7 => _ = vocab.short_whole_pieces.insert(short_key(bytes), id),
                8..=15 => vocab.mid_whole_pieces.insert(packed_key(bytes), id),
                16..=31 => _ = vocab.long_whole_pieces.insert(long_key(bytes), id),
                _ => vocab.longer_whole_pieces.add(bytes),
            }
        }
        if matches!(vocab.ranking, Ranking::TokenIds) {
            // Merging a character's bytes alone uses the tables above.
            vocab.whole_chars = WholeChars::of(&vocab);
            vocab.not_merged_whole = vocab.find_tokens_not_merged_whole();
        }
        vocab.uncrossed = Uncrossed::of(&vocab);
        Ok(vocab)
    }

    /// See `not_merged_whole`.
    fn find_tokens_not_merged_whole(&self) -> FxHashSet<u32> {
        (0..self.tokens.len() as u32)
            .into_par_iter()
            .filter(|&id| {
                let bytes = self.tokens.get(id);
                bytes.len() >= 2
                    && bytes.iter().any(|&b| b >= 0x80)
                    && !self.is_special[id as usize]
            })
            .map_init(Vec::new, |parts, id| {
                (!self.bytes_merge_to(id, parts)).then_some(id)
            })
            .flatten()
            .collect()
    }

    fn find_tokens_that_encode_to_themselves(&self) -> Vec<bool> {
        (0..self.tokens.len() as u32)
            .into_par_iter()
            .map_init(Vec::new, |parts, id| {
                let empty = self.tokens.get(id).is_empty();
                !self.is_special[id as usize] && !empty && self.bytes_merge_to(id, parts)
            })
            .collect()
    }

    /// Whether merging the bytes of token `id` makes exactly `id` (`parts`:
    /// scratch space).
    pub(crate) fn bytes_merge_to(&self, id: u32, parts: &mut Vec<u32>) -> bool {
        parts.clear();
        crate::bpe::encode::encode_skipping_rank(self, self.tokens.get(id), u32::MAX, parts);
        parts[..] == [id]
    }

    /// Number of ids (including unused ones).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The bytes of `id`, or None when no token has that id.
    pub fn token(&self, id: u32) -> Option<&[u8]> {
        ((id as usize) < self.tokens.len())
            .then(|| self.tokens.get(id))
            .filter(|b| !b.is_empty())
    }

    /// One more than the highest merge rank.
    pub fn rank_count(&self) -> usize {
        match &self.ranking {
            Ranking::Merges(merges) => merges.len(),
            Ranking::TokenIds => self.tokens.len(),
        }
    }

    /// The non-special token with exactly these bytes.
    #[inline]
    pub fn id_of(&self, bytes: &[u8]) -> Option<u32> {
        self.tokens.id_of(bytes)
    }

    /// The token a whole piece encodes to without merging, if there is one:
    /// under tiktoken's rule any token; otherwise a token whose bytes encode
    /// to itself (so the shortcut cannot change the answer).
    #[inline]
    pub fn whole_piece(&self, piece: &[u8]) -> Option<u32> {
        if (2..=31).contains(&piece.len()) {
            return self.packed_whole_piece(piece);
        }
        if !self.longer_whole_pieces.may_hold(piece) {
            return None;
        }
        let id = self.id_of(piece)?;
        self.is_whole_piece(id).then_some(id)
    }

    /// [`Vocab::whole_piece`] for 2 to 31 bytes: one lookup of an integer
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
    pub fn adjacent_rule(&self, left: u32, right: u32, span: &[u8]) -> Option<MergeRule> {
        if !matches!(self.ranking, Ranking::TokenIds) || span.len() > 31 {
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
        let id = id as usize;
        !self.is_special[id]
            && !self.tokens.get(id as u32).is_empty()
            && (matches!(self.ranking, Ranking::TokenIds) || self.encodes_to_itself[id])
    }

    #[inline]
    pub fn byte_id(&self, byte: u8) -> u32 {
        self.byte_ids[byte as usize]
    }

    /// The merge rule of the token pair made of the single bytes `left`, `right`.
    #[inline]
    pub fn byte_pair_rule(&self, left: u8, right: u8) -> Option<MergeRule> {
        let rule = self.byte_pair_rules[(left as usize) << 8 | right as usize];
        (rule.rank != u32::MAX).then_some(rule)
    }

    #[inline]
    pub fn merge_rule(&self, left: u32, right: u32) -> Option<MergeRule> {
        self.merge_rules.get(&pair_key(left, right)).copied()
    }

    /// Sets the whitespace each special token swallows (in the order given to `new`).
    pub fn with_special_strip(mut self, strip: Vec<crate::special::Strip>) -> Result<Self> {
        self.special = self.special.with_strip(strip)?;
        Ok(self)
    }

    pub fn special(&self) -> &SpecialTokens {
        &self.special
    }

    /// The token of the character of two or three bytes at `piece[at..]`,
    /// and its length, when merging may start from it as one symbol there
    /// (see [`WholeChars`]).
    #[inline]
    pub fn char_token(&self, piece: &[u8], at: usize) -> Option<(u32, usize)> {
        self.whole_chars.at(piece, at)
    }

    /// The first position of `piece` after `from` that no token crosses (see
    /// [`Uncrossed`]): the piece encodes as its two sides do.
    #[inline]
    pub fn next_uncrossed(&self, piece: &[u8], from: usize) -> Option<usize> {
        self.uncrossed.next(piece, from)
    }

    /// Whether `part` is a token whose bytes do not merge to it (never, in
    /// OpenAI's vocabularies; for merge lists, [`Vocab::whole_piece`] leaves
    /// such tokens out already).
    #[inline]
    pub fn is_token_not_merged_whole(&self, part: &[u8]) -> bool {
        !self.not_merged_whole.is_empty()
            && self
                .whole_piece(part)
                .is_some_and(|id| self.not_merged_whole.contains(&id))
    }

    /// Whether `id` is a special token (never made by merging).
    pub fn is_special(&self, id: u32) -> bool {
        self.is_special.get(id as usize).copied().unwrap_or(false)
    }

    /// The merge list: the explicit one, or for tiktoken's rule, for each
    /// token in rank order the last merge that makes it from its own bytes
    /// (found by encoding them with every merge but the token's own).
    /// Tokens that merging cannot make from their bytes are returned apart.
    pub fn merges(&self) -> (Vec<(u32, u32)>, Vec<u32>) {
        if let Ranking::Merges(merges) = &self.ranking {
            return (merges.clone(), Vec::new());
        }
        let mut merges = Vec::new();
        let mut unreachable = Vec::new();
        let mut parts = Vec::new();
        for (id, bytes) in self.tokens.iter().enumerate() {
            if self.is_special[id] || bytes.len() < 2 {
                continue;
            }
            parts.clear();
            crate::bpe::encode::encode_skipping_rank(self, bytes, id as u32, &mut parts);
            match parts[..] {
                [left, right]
                    if self
                        .merge_rule(left, right)
                        .is_some_and(|r| r.result == id as u32) =>
                {
                    merges.push((left, right))
                }
                _ => unreachable.push(id as u32),
            }
        }
        (merges, unreachable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn byte_tokens() -> Vec<Option<Vec<u8>>> {
        (0..=255u8).map(|b| Some(vec![b])).collect()
    }

    fn pairs(merges: Vec<(u32, u32)>) -> Ranking {
        Ranking::Merges(merges)
    }

    #[test]
    fn merge_to_a_missing_token_is_named() {
        let err = Vocab::new(byte_tokens(), pairs(vec![(97, 98)]), vec![]).unwrap_err();
        assert!(err.to_string().contains("merge rank 0 (97 + 98)"), "{err}");
    }

    #[test]
    fn missing_byte_is_named() {
        let mut tokens = byte_tokens();
        tokens[7] = Some(b"xy".to_vec());
        let err = Vocab::new(tokens, pairs(vec![]), vec![]).unwrap_err();
        assert!(err.to_string().contains("0x07"), "{err}");
    }

    #[test]
    fn special_id_must_hold_its_text() {
        let mut tokens = byte_tokens();
        tokens.push(Some(b"<s>".to_vec()));
        assert!(Vocab::new(tokens.clone(), pairs(vec![]), vec![("<s>".into(), 256)]).is_ok());
        assert!(Vocab::new(tokens, pairs(vec![]), vec![("<t>".into(), 256)]).is_err());
    }

    #[test]
    fn derived_merges_include_tokens_made_after_a_later_rank() {
        // "abc" (256) is only made from "ab" (257): a merge of higher rank first.
        let mut tokens = byte_tokens();
        tokens.push(Some(b"abc".to_vec()));
        tokens.push(Some(b"ab".to_vec()));
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(v.merges(), (vec![(257, 99), (97, 98)], vec![]));
    }

    #[test]
    fn long_tokens_are_found_whole_and_other_long_pieces_are_not() {
        let mut tokens = byte_tokens();
        let long = [b"=".repeat(40), b"-".repeat(300)];
        tokens.extend(long.iter().map(|t| Some(t.clone())));
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
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

    #[test]
    fn token_id_ranking_merges_every_cut_and_derives_merges() {
        // tiktoken-style: "ab" (256), "abc" (257) reachable as ab+c.
        let mut tokens = byte_tokens();
        tokens.push(Some(b"ab".to_vec()));
        tokens.push(Some(b"abc".to_vec()));
        tokens.push(None); // an unused id
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(v.merge_rule(97, 98).unwrap().rank, 256);
        assert_eq!(v.merge_rule(256, 99).unwrap().result, 257);
        assert!(v.token(258).is_none());
        assert_eq!(v.merges(), (vec![(97, 98), (256, 99)], vec![]));
    }
}

//! The vocabulary: id <-> bytes, merge ranks, special tokens, and the
//! invariants checked once when a vocabulary is built, so that a bad file
//! fails at load and never at encode. The lookup indexes that encoding
//! reads are built over it by [`crate::Encoder`].

use rayon::prelude::*;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::text::special::SpecialTokens;
use crate::util::token_table::{TableError, TokenTable};

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
        Ok(Self {
            tokens,
            byte_ids,
            ranking,
            merge_rules,
            special,
            is_special,
        })
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

    #[inline]
    pub fn byte_id(&self, byte: u8) -> u32 {
        self.byte_ids[byte as usize]
    }

    #[inline]
    pub fn merge_rule(&self, left: u32, right: u32) -> Option<MergeRule> {
        self.merge_rules.get(&pair_key(left, right)).copied()
    }

    /// Sets the whitespace each special token swallows (in the order given to `new`).
    pub fn with_special_strip(mut self, strip: Vec<crate::text::special::Strip>) -> Result<Self> {
        self.special = self.special.with_strip(strip)?;
        Ok(self)
    }

    pub fn special(&self) -> &SpecialTokens {
        &self.special
    }

    /// Whether `id` is a special token (never made by merging).
    pub fn is_special(&self, id: u32) -> bool {
        self.is_special.get(id as usize).copied().unwrap_or(false)
    }

    /// How adjacent pairs are ranked.
    pub fn ranking(&self) -> &Ranking {
        &self.ranking
    }

    /// The bytes held at `id` (< [`Vocab::len`]): a special token's text
    /// too, and nothing for an unused id.
    #[inline]
    pub(crate) fn slot(&self, id: u32) -> &[u8] {
        self.tokens.get(id)
    }

    /// The bytes held at every id in order (see [`Vocab::slot`]).
    pub(crate) fn slots(&self) -> impl Iterator<Item = &[u8]> {
        self.tokens.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_tokens() -> Vec<Option<Vec<u8>>> {
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
    fn token_id_ranking_merges_every_cut() {
        // tiktoken-style: "ab" (256), "abc" (257) reachable as ab+c.
        let mut tokens = byte_tokens();
        tokens.push(Some(b"ab".to_vec()));
        tokens.push(Some(b"abc".to_vec()));
        tokens.push(None); // an unused id
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(v.merge_rule(97, 98).unwrap().rank, 256);
        assert_eq!(v.merge_rule(256, 99).unwrap().result, 257);
        assert!(v.token(258).is_none());
    }
}

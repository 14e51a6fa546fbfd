//! The vocabulary: id <-> bytes, merge ranks, special tokens, and the
//! invariants checked once when a vocabulary is built, so that a bad file
//! fails at load and never at encode.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::special::SpecialTokens;

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

#[derive(Clone, Debug)]
pub struct Vocab {
    tokens: Vec<Vec<u8>>,
    byte_ids: [u32; 256],
    merges: Vec<(u32, u32)>,
    merge_rules: FxHashMap<u64, MergeRule>,
    special: SpecialTokens,
    is_special: Vec<bool>,
}

impl Vocab {
    /// Builds and checks a vocabulary. `tokens[id]` is the bytes of `id`;
    /// `merges` are id pairs in rank order; `special` maps text to id.
    pub fn new(
        tokens: Vec<Vec<u8>>,
        merges: Vec<(u32, u32)>,
        special: Vec<(String, u32)>,
    ) -> Result<Self> {
        let bad = |msg: String| Err(Error::InvalidVocabulary(msg));
        let n = tokens.len();
        if n > u32::MAX as usize {
            return bad(format!("{n} tokens is more than ids can address"));
        }
        let mut is_special = vec![false; n];
        for (text, id) in &special {
            let Some(bytes) = tokens.get(*id as usize) else {
                return bad(format!(
                    "special token {text:?} has id {id}, beyond the {n} tokens"
                ));
            };
            if bytes != text.as_bytes() {
                return bad(format!(
                    "special token {text:?} has id {id}, but that id holds {:?}",
                    String::from_utf8_lossy(bytes)
                ));
            }
            if std::mem::replace(&mut is_special[*id as usize], true) {
                return bad(format!("id {id} is given to two special tokens"));
            }
        }
        let special = SpecialTokens::new(special)?;

        let mut ids_by_bytes: FxHashMap<&[u8], u32> = FxHashMap::default();
        ids_by_bytes.reserve(n);
        for (id, bytes) in tokens.iter().enumerate() {
            if is_special[id] {
                continue;
            }
            if bytes.is_empty() {
                return bad(format!("token id {id} is empty"));
            }
            if let Some(first) = ids_by_bytes.insert(bytes, id as u32) {
                return bad(format!(
                    "ids {first} and {id} have the same bytes {:?}",
                    String::from_utf8_lossy(bytes)
                ));
            }
        }
        let mut byte_ids = [0u32; 256];
        for (b, slot) in byte_ids.iter_mut().enumerate() {
            match ids_by_bytes.get(&[b as u8][..]) {
                Some(&id) => *slot = id,
                None => return bad(format!("no token for the single byte 0x{b:02X}")),
            }
        }

        let mut merge_rules = FxHashMap::default();
        merge_rules.reserve(merges.len());
        for (rank, &(left, right)) in merges.iter().enumerate() {
            for part in [left, right] {
                if part as usize >= n {
                    return bad(format!(
                        "merge rank {rank} names id {part}, beyond the {n} tokens"
                    ));
                }
                if is_special[part as usize] {
                    return bad(format!(
                        "merge rank {rank} names the special token id {part}"
                    ));
                }
            }
            let joined = [
                tokens[left as usize].as_slice(),
                tokens[right as usize].as_slice(),
            ]
            .concat();
            let Some(&result) = ids_by_bytes.get(joined.as_slice()) else {
                return bad(format!(
                    "merge rank {rank} ({left} + {right}) makes {:?}, which is not a token",
                    String::from_utf8_lossy(&joined)
                ));
            };
            let rule = MergeRule {
                rank: rank as u32,
                result,
            };
            if let Some(earlier) = merge_rules.insert(pair_key(left, right), rule) {
                return bad(format!(
                    "merge rank {rank} ({left} + {right}) repeats merge rank {}",
                    earlier.rank
                ));
            }
        }
        drop(ids_by_bytes);
        Ok(Self {
            tokens,
            byte_ids,
            merges,
            merge_rules,
            special,
            is_special,
        })
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn token(&self, id: u32) -> Option<&[u8]> {
        self.tokens.get(id as usize).map(Vec::as_slice)
    }

    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    pub fn merges(&self) -> &[(u32, u32)] {
        &self.merges
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.is_special.get(id as usize).copied().unwrap_or(false)
    }

    #[inline]
    pub fn byte_id(&self, byte: u8) -> u32 {
        self.byte_ids[byte as usize]
    }

    #[inline]
    pub fn merge_rule(&self, left: u32, right: u32) -> Option<MergeRule> {
        self.merge_rules.get(&pair_key(left, right)).copied()
    }

    pub fn special(&self) -> &SpecialTokens {
        &self.special
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn byte_tokens() -> Vec<Vec<u8>> {
        (0..=255u8).map(|b| vec![b]).collect()
    }

    #[test]
    fn merge_to_a_missing_token_is_named() {
        let err = Vocab::new(byte_tokens(), vec![(97, 98)], vec![]).unwrap_err();
        assert!(err.to_string().contains("merge rank 0 (97 + 98)"), "{err}");
    }

    #[test]
    fn missing_byte_is_named() {
        let mut tokens = byte_tokens();
        tokens[7] = b"xy".to_vec();
        let err = Vocab::new(tokens, vec![], vec![]).unwrap_err();
        assert!(err.to_string().contains("0x07"), "{err}");
    }

    #[test]
    fn special_id_must_hold_its_text() {
        let mut tokens = byte_tokens();
        tokens.push(b"<s>".to_vec());
        assert!(Vocab::new(tokens.clone(), vec![], vec![("<s>".into(), 256)]).is_ok());
        assert!(Vocab::new(tokens, vec![], vec![("<t>".into(), 256)]).is_err());
    }
}

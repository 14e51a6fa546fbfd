//! The encoder of a vocabulary: [`Vocab`] plus the lookup indexes encoding
//! reads ([`Tables`]), built once at load. Some of those indexes are found
//! by encoding: a token is taken whole for a piece when its own bytes merge
//! to it, and a character is taken whole when its bytes do; so they are
//! filled here, stage by stage, each stage encoding with the tables of the
//! stages before it.

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::encode::encode_skipping_rank;
use super::tables::Tables;
use super::whole_chars::WholeChars;
use crate::vocab::{Ranking, Vocab};

#[derive(Clone, Debug)]
pub struct Encoder {
    tables: Tables,
}

impl Encoder {
    /// Builds the lookup indexes of `vocab` (checked already by [`Vocab::new`]).
    pub fn new(vocab: Vocab) -> Self {
        let mut tables = Tables::new(vocab);
        // Merging only needs the rules so far: no whole pieces, no whole characters.
        let encodes_to_itself = match tables.vocab().ranking() {
            Ranking::Merges(_) => tokens_that_encode_to_themselves(&tables),
            Ranking::TokenIds => Vec::new(),
        };
        tables.index_whole_pieces(encodes_to_itself);
        if tables.ranks_by_token_id() {
            // Merging a character's bytes alone uses the tables above.
            let mut parts = Vec::new();
            let whole_chars =
                WholeChars::of(tables.vocab(), |id| bytes_merge_to(&tables, id, &mut parts));
            tables.set_whole_chars(whole_chars);
            let not_merged_whole = tokens_not_merged_whole(&tables);
            tables.set_not_merged_whole(not_merged_whole);
        }
        Self { tables }
    }

    #[inline]
    pub fn vocab(&self) -> &Vocab {
        self.tables.vocab()
    }

    #[inline]
    pub(crate) fn tables(&self) -> &Tables {
        &self.tables
    }

    #[cfg(test)]
    pub(crate) fn into_tables(self) -> Tables {
        self.tables
    }

    /// The merge list: the explicit one, or for tiktoken's rule, for each
    /// token in rank order the last merge that makes it from its own bytes
    /// (found by encoding them with every merge but the token's own).
    /// Tokens that merging cannot make from their bytes are returned apart.
    pub fn merges(&self) -> (Vec<(u32, u32)>, Vec<u32>) {
        let vocab = self.vocab();
        if let Ranking::Merges(merges) = vocab.ranking() {
            return (merges.clone(), Vec::new());
        }
        let mut merges = Vec::new();
        let mut unreachable = Vec::new();
        let mut parts = Vec::new();
        for (id, bytes) in vocab.slots().enumerate() {
            if vocab.is_special(id as u32) || bytes.len() < 2 {
                continue;
            }
            parts.clear();
            encode_skipping_rank(&self.tables, bytes, id as u32, &mut parts);
            match parts[..] {
                [left, right]
                    if vocab
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

/// Whether merging the bytes of token `id` makes exactly `id` (`parts`:
/// scratch space).
fn bytes_merge_to(tables: &Tables, id: u32, parts: &mut Vec<u32>) -> bool {
    parts.clear();
    encode_skipping_rank(tables, tables.vocab().slot(id), u32::MAX, parts);
    parts[..] == [id]
}

/// For each id, whether it is a token whose bytes merge to it.
fn tokens_that_encode_to_themselves(tables: &Tables) -> Vec<bool> {
    let vocab = tables.vocab();
    (0..vocab.len() as u32)
        .into_par_iter()
        .map_init(Vec::new, |parts, id| {
            let empty = vocab.slot(id).is_empty();
            !vocab.is_special(id) && !empty && bytes_merge_to(tables, id, parts)
        })
        .collect()
}

/// The tokens with a byte of 0x80 or more whose bytes do not merge to them.
fn tokens_not_merged_whole(tables: &Tables) -> FxHashSet<u32> {
    let vocab = tables.vocab();
    (0..vocab.len() as u32)
        .into_par_iter()
        .filter(|&id| {
            let bytes = vocab.slot(id);
            bytes.len() >= 2 && bytes.iter().any(|&b| b >= 0x80) && !vocab.is_special(id)
        })
        .map_init(Vec::new, |parts, id| {
            (!bytes_merge_to(tables, id, parts)).then_some(id)
        })
        .flatten()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_tokens() -> Vec<Option<Vec<u8>>> {
        (0..=255u8).map(|b| Some(vec![b])).collect()
    }

    #[test]
    fn derived_merges_include_tokens_made_after_a_later_rank() {
        // "abc" (256) is only made from "ab" (257): a merge of higher rank first.
        let mut tokens = byte_tokens();
        tokens.push(Some(b"abc".to_vec()));
        tokens.push(Some(b"ab".to_vec()));
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(
            Encoder::new(v).merges(),
            (vec![(257, 99), (97, 98)], vec![])
        );
    }

    #[test]
    fn token_id_ranking_derives_merges() {
        // tiktoken-style: "ab" (256), "abc" (257) reachable as ab+c.
        let mut tokens = byte_tokens();
        tokens.push(Some(b"ab".to_vec()));
        tokens.push(Some(b"abc".to_vec()));
        tokens.push(None); // an unused id
        let v = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(
            Encoder::new(v).merges(),
            (vec![(97, 98), (256, 99)], vec![])
        );
    }
}

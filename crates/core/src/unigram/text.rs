//! Unigram tokenizing of whole texts: allowed special tokens are cut out,
//! the rest is cut into words (metaspace or a BPE-side pre-tokenizer), and
//! each word is segmented on its own lattice.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::UnigramModel;
use crate::error::Result;
use crate::metaspace::{split_before_spaces, word_of};
use crate::pretokenize::Pretokenizer;
use crate::rng::Rng;
use crate::special::{Segment, Selection, SpecialTokens};

/// How a text is cut into words before segmentation.
#[derive(Clone, Debug)]
pub enum Words {
    /// SentencePiece style: spaces as `▁`, a `▁` in front of the text.
    Metaspace,
    Pretokenized(Pretokenizer),
}

#[derive(Clone, Debug)]
pub struct UnigramTokenizer {
    model: UnigramModel,
    special: SpecialTokens,
    words: Words,
}

enum Item<'t> {
    Special(u32),
    /// A metaspace word: a slice of the text, spaces not yet written as `▁`,
    /// and whether it takes the dummy `▁` in front.
    Metaspace(&'t str, bool),
    /// A word cut by a pre-tokenizer: a slice of the text as it is.
    Piece(&'t str),
}

impl Item<'_> {
    /// Calls `f` with the word this item stands for (None for a special).
    fn with_word<T>(&self, f: impl FnOnce(&str) -> T) -> Option<T> {
        match *self {
            Item::Special(_) => None,
            Item::Metaspace(piece, dummy) => Some(f(&word_of(piece, dummy))),
            Item::Piece(piece) => Some(f(piece)),
        }
    }
}

/// Texts at least this long (bytes) keep the ids of each distinct word for
/// the call: prose repeats its words, and a lattice costs far more than a lookup.
const CACHE_MIN_TEXT: usize = 1 << 12;
/// The per-call cache is dropped when it holds this many words.
const CACHE_LIMIT: usize = 1 << 16;

impl UnigramTokenizer {
    pub fn new(model: UnigramModel, special: SpecialTokens, words: Words) -> Self {
        Self {
            model,
            special,
            words,
        }
    }

    pub fn special(&self) -> &SpecialTokens {
        &self.special
    }

    /// Calls `f` on each special token and word of `text` in order. In
    /// metaspace mode each piece of text between special tokens gets the
    /// dummy `▁` (as tokenizers' Prepend normalizer does).
    fn for_each_item<'t>(
        &self,
        text: &'t str,
        allowed: Selection,
        mut f: impl FnMut(Item<'t>),
    ) -> Result<()> {
        self.special.split(text, allowed, |segment| match segment {
            Segment::Special(id) => {
                f(Item::Special(id));
                Ok(())
            }
            Segment::Text(t) => match &self.words {
                Words::Metaspace => {
                    for (i, piece) in split_before_spaces(t, true).enumerate() {
                        f(Item::Metaspace(piece, i == 0));
                    }
                    Ok(())
                }
                Words::Pretokenized(pretokenizer) => {
                    pretokenizer.for_each_piece(t, |piece| f(Item::Piece(piece)))
                }
            },
        })
    }

    /// The first special token that is not allowed: (byte position, text).
    pub fn find_disallowed<'s>(
        &'s self,
        text: &str,
        disallowed: Selection,
    ) -> Result<Option<(usize, &'s str)>> {
        self.special.find(text, disallowed)
    }

    /// The Viterbi segmentation of every word.
    pub fn encode(&self, text: &str, allowed: Selection) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        // (word slice, dummy) -> where its ids already are in `out`.
        let mut cache: FxHashMap<(&str, bool), (usize, usize)> = FxHashMap::default();
        let use_cache = text.len() >= CACHE_MIN_TEXT;
        self.for_each_item(text, allowed, |item| {
            let key = match item {
                Item::Special(id) => return out.push(id),
                Item::Metaspace(piece, dummy) => (piece, dummy),
                Item::Piece(piece) => (piece, false),
            };
            if let Some(&(start, end)) = use_cache.then(|| cache.get(&key)).flatten() {
                out.extend_from_within(start..end);
                return;
            }
            let start = out.len();
            item.with_word(|word| self.model.encode_word(word, &mut out));
            if use_cache {
                if cache.len() >= CACHE_LIMIT {
                    cache.clear();
                }
                cache.insert(key, (start, out.len()));
            }
        })?;
        Ok(out)
    }

    pub fn encode_batch(&self, texts: &[&str], allowed: Selection) -> Result<Vec<Vec<u32>>> {
        texts.par_iter().map(|t| self.encode(t, allowed)).collect()
    }

    /// The `k` best segmentations of the whole text with their total scores,
    /// best first. Words are independent, so the k best of the text combine
    /// the k best of each word (on a tie, the earlier combination first).
    /// Candidates share their beginnings in a tree of choices, so a long
    /// text costs O(words x k^2), not a copy of every candidate per word.
    pub fn nbest(&self, text: &str, allowed: Selection, k: usize) -> Result<Vec<(Vec<u32>, f64)>> {
        const ROOT: u32 = u32::MAX;
        if k == 0 {
            return Ok(Vec::new());
        }
        // The options of each word (a special token: its one id), the choice
        // tree as (parent, word, option), and the beam as (total, tree node).
        let mut options: Vec<Vec<(Vec<u32>, f64)>> = Vec::new();
        let mut tree: Vec<(u32, u32, u32)> = Vec::new();
        let mut beam: Vec<(f64, u32)> = vec![(0.0, ROOT)];
        self.for_each_item(text, allowed, |item| {
            let these = match item {
                Item::Special(id) => vec![(vec![id], 0.0)],
                _ => item
                    .with_word(|word| self.model.nbest_word(word, k))
                    .unwrap_or_default(),
            };
            let word = options.len() as u32;
            let mut combined: Vec<(f64, u32, u32)> = beam
                .iter()
                .flat_map(|&(total, node)| {
                    these
                        .iter()
                        .enumerate()
                        .map(move |(o, (_, add))| (total + add, node, o as u32))
                })
                .collect();
            // Stable: equal totals keep the order they were made in.
            combined.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
            combined.truncate(k);
            beam = combined
                .into_iter()
                .map(|(total, parent, option)| {
                    tree.push((parent, word, option));
                    (total, (tree.len() - 1) as u32)
                })
                .collect();
            options.push(these);
        })?;
        Ok(beam
            .into_iter()
            .map(|(total, mut node)| {
                let mut chosen = Vec::new();
                while node != ROOT {
                    let (parent, word, option) = tree[node as usize];
                    chosen.push((word, option));
                    node = parent;
                }
                let ids = chosen
                    .iter()
                    .rev()
                    .flat_map(|&(w, o)| options[w as usize][o as usize].0.iter().copied())
                    .collect();
                (ids, total)
            })
            .collect())
    }

    /// A segmentation drawn with probability proportional to
    /// exp(alpha x total score), word by word (the words are independent).
    pub fn sample(
        &self,
        text: &str,
        allowed: Selection,
        alpha: f64,
        rng: &mut Rng,
    ) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(text.len() / 3);
        self.for_each_item(text, allowed, |item| match item {
            Item::Special(id) => out.push(id),
            _ => out.extend(
                item.with_word(|word| self.model.sample_word(word, alpha, rng))
                    .unwrap_or_default(),
            ),
        })?;
        Ok(out)
    }

    /// [`Self::sample`] over a batch; text `i` draws from its own stream of `seed`.
    pub fn sample_batch(
        &self,
        texts: &[&str],
        allowed: Selection,
        alpha: f64,
        seed: u64,
    ) -> Result<Vec<Vec<u32>>> {
        texts
            .par_iter()
            .enumerate()
            .map(|(i, t)| self.sample(t, allowed, alpha, &mut Rng::for_item(seed, i as u64)))
            .collect()
    }
}

//! Unigram tokenizing of whole texts: allowed special tokens are cut out,
//! the rest is normalized (if the model says so) and cut into words (metaspace
//! or a BPE-side pre-tokenizer), and each word is segmented on its own lattice.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::lattice::MAX_NBEST;
use super::UnigramModel;
use crate::error::Result;
use crate::text::metaspace::{split_before_spaces, word_of};
use crate::text::normalize::Normalizer;
use crate::text::pretokenize::Pretokenizer;
use crate::text::special::{Segment, Selection, SpecialTokens};
use crate::util::rng::Rng;

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
    normalizer: Normalizer,
}

/// A text cut at its allowed special tokens: a special token's id, or the
/// text between two of them, normalized.
enum Span<'t> {
    Special(u32),
    Text(Cow<'t, str>),
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

/// A row of the n-best merge: beam entry `row` with option `option`.
struct Merge {
    total: f64,
    row: usize,
    option: usize,
}

impl Ord for Merge {
    /// Greater pops first: the higher total, then the earlier (row, option).
    fn cmp(&self, other: &Self) -> Ordering {
        self.total
            .partial_cmp(&other.total)
            .unwrap_or(Ordering::Equal)
            .then_with(|| (other.row, other.option).cmp(&(self.row, self.option)))
    }
}
impl PartialOrd for Merge {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Merge {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Merge {}

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
            normalizer: Normalizer::default(),
        }
    }

    /// Normalizes the text between special tokens (which are found in the
    /// text as given) before it is cut into words.
    pub fn with_normalizer(mut self, normalizer: Normalizer) -> Self {
        self.normalizer = normalizer;
        self
    }

    pub fn special(&self) -> &SpecialTokens {
        &self.special
    }

    /// `text` cut at its allowed special tokens, the text between them
    /// normalized (never searched for special tokens again).
    fn spans<'t>(&self, text: &'t str, allowed: Selection) -> Result<Vec<Span<'t>>> {
        let mut spans = Vec::new();
        self.special.split(text, allowed, |segment| {
            spans.push(match segment {
                Segment::Special(id) => Span::Special(id),
                Segment::Text(t) => Span::Text(self.normalizer.apply(t)),
            });
            Ok(())
        })?;
        Ok(spans)
    }

    /// Calls `f` on each special token and word of `spans` in order. In
    /// metaspace mode each piece of text between special tokens gets the
    /// dummy `▁` (as tokenizers' Prepend normalizer does).
    fn for_each_item<'s>(&self, spans: &'s [Span<'_>], mut f: impl FnMut(Item<'s>)) -> Result<()> {
        for span in spans {
            match span {
                Span::Special(id) => f(Item::Special(*id)),
                Span::Text(t) => match &self.words {
                    Words::Metaspace => {
                        for (i, piece) in split_before_spaces(t, true).enumerate() {
                            f(Item::Metaspace(piece, i == 0));
                        }
                    }
                    Words::Pretokenized(pretokenizer) => {
                        pretokenizer.for_each_piece(t, |piece| f(Item::Piece(piece)))?
                    }
                },
            }
        }
        Ok(())
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
        let spans = self.spans(text, allowed)?;
        self.for_each_item(&spans, |item| {
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
    /// text costs O(words x k log k), not a copy of every candidate per word.
    /// `k` is clamped to `MAX_NBEST` (512, SentencePiece's bound).
    pub fn nbest(&self, text: &str, allowed: Selection, k: usize) -> Result<Vec<(Vec<u32>, f64)>> {
        const ROOT: u32 = u32::MAX;
        let k = k.min(MAX_NBEST);
        if k == 0 {
            return Ok(Vec::new());
        }
        // The options of each word (a special token: its one id), the choice
        // tree as (parent, word, option), and the beam as (total, tree node).
        let mut options: Vec<Vec<(Vec<u32>, f64)>> = Vec::new();
        let mut tree: Vec<(u32, u32, u32)> = Vec::new();
        let mut beam: Vec<(f64, u32)> = vec![(0.0, ROOT)];
        let spans = self.spans(text, allowed)?;
        self.for_each_item(&spans, |item| {
            let these = match item {
                Item::Special(id) => vec![(vec![id], 0.0)],
                _ => item
                    .with_word(|word| self.model.nbest_word(word, k))
                    .unwrap_or_default(),
            };
            let word = options.len() as u32;
            // The k best of beam x options without making the product: the
            // beam is best first and so are the options, so each beam entry's
            // row is too; merge the rows, equal totals in the order they would
            // be made in (beam entry, then option).
            let mut combined: Vec<(f64, u32, u32)> =
                Vec::with_capacity(k.min(beam.len() * these.len()));
            let mut rows: BinaryHeap<Merge> = beam
                .iter()
                .enumerate()
                .filter_map(|(row, &(total, _))| {
                    these.first().map(|(_, add)| Merge {
                        total: total + add,
                        row,
                        option: 0,
                    })
                })
                .collect();
            while combined.len() < k {
                let Some(Merge { total, row, option }) = rows.pop() else {
                    break;
                };
                combined.push((total, beam[row].1, option as u32));
                if let Some((_, add)) = these.get(option + 1) {
                    rows.push(Merge {
                        total: beam[row].0 + add,
                        row,
                        option: option + 1,
                    });
                }
            }
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
        let spans = self.spans(text, allowed)?;
        self.for_each_item(&spans, |item| match item {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(table: &[(&str, f64)]) -> UnigramTokenizer {
        let model = crate::unigram::tests::model(table);
        UnigramTokenizer::new(
            model,
            SpecialTokens::new(Vec::new()).unwrap(),
            Words::Metaspace,
        )
    }

    #[test]
    fn nbest_of_a_text_is_the_stable_sort_of_the_product() {
        let t = tokenizer(&[
            ("▁", -1.0),
            ("a", -1.0),
            ("b", -1.5),
            ("▁a", -1.5),
            ("ab", -2.0),
            ("▁ab", -3.5),
            ("▁b", -2.5),
        ]);
        let text = "ab ba ab";
        let words: Vec<Vec<(Vec<u32>, f64)>> = ["▁ab", "▁ba", "▁ab"]
            .iter()
            .map(|w| t.model.nbest_word(w, usize::MAX))
            .collect();
        let mut all: Vec<(Vec<u32>, f64)> = vec![(Vec::new(), 0.0)];
        for options in &words {
            all = all
                .iter()
                .flat_map(|(ids, total)| {
                    options.iter().map(move |(more, add)| {
                        let mut ids = ids.clone();
                        ids.extend(more);
                        (ids, total + add)
                    })
                })
                .collect();
            all.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap());
        }
        for k in [1, 2, 7, 30, all.len(), all.len() + 4] {
            let got = t.nbest(text, Selection::Nothing, k).unwrap();
            // Truncating after each word keeps the first k of the full sort.
            assert_eq!(got, all[..k.min(all.len())].to_vec(), "k={k}");
        }
    }

    #[test]
    fn text_between_special_tokens_is_normalized_after_they_are_found() {
        let table = [
            ("▁", -1.0),
            ("a", -1.0),
            ("b", -1.0),
            ("▁ab", -1.5),
            ("c", -1.0),
        ];
        let plain = tokenizer(&table);
        let special = SpecialTokens::new(vec![("<S>".to_string(), 99)]).unwrap();
        let normalized = UnigramTokenizer::new(
            crate::unigram::tests::model(&table),
            special,
            Words::Metaspace,
        )
        .with_normalizer(Normalizer::from_names(&["nfkc", "lowercase"]).unwrap());
        // NFKC would make `＜s＞` of a fullwidth `<S>`: only the text as given
        // holds special tokens, so lowercase cannot make `<s>` of it either.
        let mut expected = plain.encode("ab c", Selection::Nothing).unwrap();
        expected.push(99);
        expected.extend(plain.encode("ab", Selection::Nothing).unwrap());
        let text = "ＡB Ｃ<S>aＢ";
        assert_eq!(normalized.encode(text, Selection::All).unwrap(), expected);
        let best = normalized.nbest(text, Selection::All, 1).unwrap();
        assert_eq!(best[0].0, expected);
        let mut rng = Rng::for_item(7, 0);
        let drawn = normalized
            .sample(text, Selection::All, 1e6, &mut rng)
            .unwrap();
        assert_eq!(drawn, expected);
    }

    #[test]
    fn nbest_with_a_huge_k_is_clamped() {
        let t = tokenizer(&[("▁", -1.0), ("a", -1.0), ("aa", -2.0), ("▁a", -2.0)]);
        let text = "aaaa ".repeat(40);
        let got = t.nbest(&text, Selection::Nothing, usize::MAX).unwrap();
        assert_eq!(got.len(), MAX_NBEST);
        assert!(got.windows(2).all(|w| w[0].1 >= w[1].1));
        let all_tied = tokenizer(&[("▁", 0.0), ("a", 0.0), ("aa", 0.0), ("▁a", 0.0)]);
        let got = all_tied
            .nbest(&"a".repeat(60), Selection::Nothing, 3)
            .unwrap();
        assert_eq!(got.len(), 3);
    }
}

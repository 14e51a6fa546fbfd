//! Pre-token counting: each distinct pre-token once, with its multiplicity.
//! Texts (and long texts cut at safe places) are counted in parallel into
//! per-thread tables that are then added together.

use std::borrow::Cow;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::text::metaspace::{metaspace_chunks, split_before_spaces, word_of};
use crate::text::normalize::Normalizer;
use crate::text::pretokenize::Pretokenizer;
use crate::text::special::{Segment, Selection, SpecialTokens};

/// Long texts are cut into chunks of about this many bytes for parallel work.
const CHUNK_BYTES: usize = 1 << 20;

#[derive(Default, Debug, Clone)]
pub struct PretokenCounts {
    counts: FxHashMap<Vec<u8>, u64>,
}

fn count_chunk<'t>(
    chunk: &'t str,
    pretokenizer: &Pretokenizer,
    special: &SpecialTokens,
    table: &mut FxHashMap<&'t [u8], u64>,
) -> Result<()> {
    special.split(chunk, Selection::All, |segment| match segment {
        // Special tokens are cut out and never counted.
        Segment::Special(_) => Ok(()),
        Segment::Text(text) => pretokenizer.for_each_piece(text, |piece| {
            *table.entry(piece.as_bytes()).or_insert(0) += 1;
        }),
    })
}

/// The text between the special tokens of every text, normalized, each
/// piece of text on its own: normalized text is not searched for special
/// tokens again, and each piece counts as a text of its own (in metaspace
/// mode it takes the dummy `▁` as it does between special tokens).
fn normalized_segments<'t>(
    texts: &[&'t str],
    special: &SpecialTokens,
    normalizer: &Normalizer,
) -> Result<Vec<Cow<'t, str>>> {
    let per_text = texts
        .par_iter()
        .map(|text| {
            let mut segments = Vec::new();
            special.split(text, Selection::All, |segment| {
                if let Segment::Text(t) = segment {
                    segments.push(normalizer.apply(t));
                }
                Ok(())
            })?;
            Ok(segments)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(per_text.into_iter().flatten().collect())
}

fn add_tables<K: std::hash::Hash + Eq>(
    mut a: FxHashMap<K, u64>,
    mut b: FxHashMap<K, u64>,
) -> FxHashMap<K, u64> {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    for (k, v) in b {
        *a.entry(k).or_insert(0) += v;
    }
    a
}

impl PretokenCounts {
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts the pre-tokens of `texts`, cutting out `special` tokens first
    /// and normalizing the text between them.
    pub fn add_texts(
        &mut self,
        texts: &[&str],
        pretokenizer: &Pretokenizer,
        special: &SpecialTokens,
        normalizer: &Normalizer,
    ) -> Result<()> {
        if !normalizer.is_identity() {
            let segments = normalized_segments(texts, special, normalizer)?;
            let refs: Vec<&str> = segments.iter().map(|s| s.as_ref()).collect();
            let none = SpecialTokens::new(Vec::new())?;
            return self.add_texts(&refs, pretokenizer, &none, &Normalizer::default());
        }
        // Special tokens could straddle a chunk boundary, so chunking only
        // happens when there are none to cut out.
        let chunks: Vec<&str> = if special.is_empty() {
            texts
                .iter()
                .flat_map(|t| pretokenizer.safe_chunks(t, CHUNK_BYTES))
                .collect()
        } else {
            texts.to_vec()
        };
        let table = chunks
            .par_iter()
            .try_fold(FxHashMap::default, |mut table, chunk| {
                count_chunk(chunk, pretokenizer, special, &mut table).map(|()| table)
            })
            .try_reduce(FxHashMap::default, |a, b| Ok(add_tables(a, b)))?;
        for (piece, count) in table {
            match self.counts.get_mut(piece) {
                Some(c) => *c += count,
                None => {
                    self.counts.insert(piece.to_vec(), count);
                }
            }
        }
        Ok(())
    }

    /// Counts SentencePiece-style words (unigram training's default): each
    /// space becomes `▁`, a `▁` goes in front of each piece of text between
    /// special tokens (normalized first), and words start at every `▁`:
    /// `"a  b"` -> `▁a`, `▁`, `▁b`.
    pub fn add_texts_metaspace(
        &mut self,
        texts: &[&str],
        special: &SpecialTokens,
        normalizer: &Normalizer,
    ) -> Result<()> {
        if !normalizer.is_identity() {
            let segments = normalized_segments(texts, special, normalizer)?;
            let refs: Vec<&str> = segments.iter().map(|s| s.as_ref()).collect();
            let none = SpecialTokens::new(Vec::new())?;
            return self.add_texts_metaspace(&refs, &none, &Normalizer::default());
        }
        // (chunk, whether it starts its text): long texts are cut before a space.
        let chunks: Vec<(&str, bool)> = if special.is_empty() {
            texts
                .iter()
                .flat_map(|t| {
                    metaspace_chunks(t, CHUNK_BYTES)
                        .enumerate()
                        .map(|(i, c)| (c, i == 0))
                })
                .collect()
        } else {
            texts.iter().map(|t| (*t, true)).collect()
        };
        // Raw pieces as slices of the text; `initial` holds the first piece of
        // a text, which gets the dummy `▁` when the keys are made.
        type Tables<'t> = (FxHashMap<&'t str, u64>, FxHashMap<&'t str, u64>);
        let (table, initial) = chunks
            .par_iter()
            .try_fold(
                || -> Tables { (FxHashMap::default(), FxHashMap::default()) },
                |(mut table, mut initial), &(chunk, starts_text)| {
                    let mut index = 0;
                    special.split(chunk, Selection::All, |segment| {
                        if let Segment::Text(text) = segment {
                            // Every piece of text gets the dummy `▁` but the
                            // continuation of a long text cut into chunks.
                            let dummy = starts_text || index > 0;
                            for (i, piece) in split_before_spaces(text, dummy).enumerate() {
                                let into = if dummy && i == 0 {
                                    &mut initial
                                } else {
                                    &mut table
                                };
                                *into.entry(piece).or_insert(0) += 1;
                            }
                        }
                        index += 1;
                        Ok(())
                    })?;
                    Ok((table, initial))
                },
            )
            .try_reduce(
                || (FxHashMap::default(), FxHashMap::default()),
                |(a, b), (c, d)| Ok((add_tables(a, c), add_tables(b, d))),
            )?;
        for (pieces, dummy) in [(table, false), (initial, true)] {
            for (piece, count) in pieces {
                *self
                    .counts
                    .entry(word_of(piece, dummy).into_bytes())
                    .or_insert(0) += count;
            }
        }
        Ok(())
    }

    /// Adds counts made elsewhere (count shards): the same pre-token's counts add up.
    pub fn add_counts<'a>(
        &mut self,
        counts: impl IntoIterator<Item = (&'a [u8], u64)>,
    ) -> Result<()> {
        for (pretoken, count) in counts {
            let slot = self.counts.entry(pretoken.to_vec()).or_insert(0);
            *slot = slot.checked_add(count).ok_or_else(|| {
                crate::error::Error::InvalidTraining("a pre-token count overflows u64".into())
            })?;
        }
        Ok(())
    }

    /// Empties the table (after its counts were written out).
    pub fn clear(&mut self) {
        self.counts = FxHashMap::default();
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// The pre-tokens of one partition (`crc32(bytes) % partitions`, zlib's
    /// CRC-32) with their counts, sorted by bytes: a count shard's records.
    pub fn partition_sorted(&self, partition: u32, partitions: u32) -> Vec<(&[u8], u64)> {
        let mut records: Vec<(&[u8], u64)> = self
            .counts
            .iter()
            .filter(|(k, _)| crate::util::crc32::crc32(k) % partitions == partition)
            .map(|(k, &v)| (k.as_slice(), v))
            .collect();
        records.sort_unstable();
        records
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.counts.iter().map(|(k, &v)| (k.as_slice(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::metaspace::METASPACE;

    #[test]
    fn normalized_text_between_special_tokens_is_counted() {
        // "<S>" is found in the text as given, then the rest is lowercased;
        // "<s>" made by lowercasing is ordinary text.
        let special = SpecialTokens::new(vec![("<S>".into(), 0)]).unwrap();
        let lowercase = Normalizer::from_names(&["lowercase"]).unwrap();
        let mut counts = PretokenCounts::new();
        let whitespace = Pretokenizer::builtin("whitespace").unwrap();
        counts
            .add_texts(&["Ab<S>ab <s>"], &whitespace, &special, &lowercase)
            .unwrap();
        let mut words: Vec<(Vec<u8>, u64)> = counts.iter().map(|(k, v)| (k.to_vec(), v)).collect();
        words.sort();
        assert_eq!(words, [(b" <s>".to_vec(), 1), (b"ab".to_vec(), 2)]);
    }

    fn counted(texts: &[&str], specials: &[&str]) -> Vec<(String, u64)> {
        counted_normalized(texts, specials, &[])
    }

    fn counted_normalized(
        texts: &[&str],
        specials: &[&str],
        normalize: &[&str],
    ) -> Vec<(String, u64)> {
        let special = SpecialTokens::new(
            specials
                .iter()
                .enumerate()
                .map(|(i, s)| (s.to_string(), i as u32))
                .collect(),
        )
        .unwrap();
        let normalizer = Normalizer::from_names(normalize).unwrap();
        let mut counts = PretokenCounts::new();
        counts
            .add_texts_metaspace(texts, &special, &normalizer)
            .unwrap();
        let mut words: Vec<(String, u64)> = counts
            .iter()
            .map(|(k, v)| (String::from_utf8(k.to_vec()).unwrap(), v))
            .collect();
        words.sort();
        words
    }

    #[test]
    fn metaspace_words_as_the_reference_cuts_them() {
        let w = |s: &str, n| (s.replace('_', METASPACE), n);
        assert_eq!(
            counted(&["a  b"], &[]),
            vec![w("_", 1), w("_a", 1), w("_b", 1)]
        );
        assert_eq!(counted(&[" a", ""], &[]), vec![w("_", 1), w("_a", 1)]);
        assert_eq!(
            counted(&["x<s>y z<s>"], &["<s>"]),
            vec![w("_x", 1), w("_y", 1), w("_z", 1)]
        );
        // The dummy `▁` after a special token, then the text's own space.
        assert_eq!(counted(&["<s> y"], &["<s>"]), vec![w("_", 1), w("_y", 1)]);
    }

    #[test]
    fn metaspace_words_of_normalized_text_between_special_tokens() {
        let w = |s: &str, n| (s.replace('_', METASPACE), n);
        // The special token is found in the text as given (NFKC would make
        // `＜s＞` of it, lowercase would not) and each side takes the dummy `▁`.
        assert_eq!(
            counted_normalized(&["Ａb<S>ＣD ab"], &["<S>"], &["nfkc", "lowercase"]),
            vec![w("_ab", 2), w("_cd", 1)]
        );
        assert_eq!(
            counted_normalized(&["ＡB"], &[], &["nfkc"]),
            vec![w("_AB", 1)]
        );
    }

    #[test]
    fn long_texts_are_cut_only_before_spaces() {
        let text = "ab cdé ".repeat(50_000) + "end";
        let chunks: Vec<&str> = metaspace_chunks(&text, 1000).collect();
        assert!(chunks.len() > 100);
        assert_eq!(chunks.concat(), text);
        assert!(chunks[1..].iter().all(|c| c.starts_with(' ')));
        let words = counted(&[text.as_str()], &[]);
        let w = |s: &str| s.replace('_', METASPACE);
        assert_eq!(
            words,
            vec![(w("_ab"), 50_000), (w("_cdé"), 50_000), (w("_end"), 1)]
        );
    }
}

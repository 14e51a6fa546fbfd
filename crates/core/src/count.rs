//! Pre-token counting: each distinct pre-token once, with its multiplicity.
//! Texts (and long texts cut at safe places) are counted in parallel into
//! per-thread tables that are then added together.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::pretokenize::Pretokenizer;
use crate::special::{Segment, Selection, SpecialTokens};

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

fn add_tables<'t>(
    mut a: FxHashMap<&'t [u8], u64>,
    mut b: FxHashMap<&'t [u8], u64>,
) -> FxHashMap<&'t [u8], u64> {
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

    /// Counts the pre-tokens of `texts`, cutting out `special` tokens first.
    pub fn add_texts(
        &mut self,
        texts: &[&str],
        pretokenizer: &Pretokenizer,
        special: &SpecialTokens,
    ) -> Result<()> {
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

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> {
        self.counts.iter().map(|(k, &v)| (k.as_slice(), v))
    }
}

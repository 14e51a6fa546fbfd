//! The unigram best path (Viterbi) over one text, in sentencepiece's float32
//! arithmetic (offers rounded before they are compared, scores shifted back
//! to 0 beyond +-1e5) or in tokenizers' plain f64.

use std::ops::{Add, Sub};

use crate::util::double_array::{DoubleArray, NONE};

/// A segment of the best path: a byte range and the piece id, or [`NONE`] for unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seg {
    pub start: u32,
    pub end: u32,
    pub id: u32,
}

pub(crate) trait Score: Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> {
    const ZERO: Self;
    /// sentencepiece's float32 shifting: |score| beyond this is shifted to 0.
    const REBASE: Option<Self>;
    fn abs(self) -> Self;
}

impl Score for f32 {
    const ZERO: f32 = 0.0;
    const REBASE: Option<f32> = Some(1e5);
    #[inline]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
}

impl Score for f64 {
    const ZERO: f64 = 0.0;
    const REBASE: Option<f64> = None;
    #[inline]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
}

const UNREACHED: u32 = u32::MAX;

/// Reused buffers of the best path (one per byte position).
pub(crate) struct Scratch<T> {
    score: Vec<T>,
    from: Vec<u32>,
    id: Vec<u32>,
}

impl<T: Score> Default for Scratch<T> {
    fn default() -> Self {
        Scratch {
            score: Vec::new(),
            from: Vec::new(),
            id: Vec::new(),
        }
    }
}

/// The candidates of a lattice: a trie of pieces (value: id) and each id's score.
pub(crate) struct Lattice<'a, T> {
    pub trie: &'a DoubleArray,
    pub scores: &'a [T],
    /// The longest candidate in bytes (bounds the shifting of scores).
    pub max_len: usize,
    pub unk_score: T,
}

impl<T: Score> Lattice<'_, T> {
    /// The best segmentation of `text`, appended to `out` (left to right).
    ///
    /// From each character boundary every candidate that starts there offers
    /// `best[start] + score` at its end; a strictly better offer replaces the
    /// stored path, so among equal offers the one starting first stays. Where
    /// no candidate is exactly the one character at `start`, an unknown
    /// segment of that character offers `best[start] + unk_score`.
    pub(crate) fn best_path(&self, text: &str, scratch: &mut Scratch<T>, out: &mut Vec<Seg>) {
        let bytes = text.as_bytes();
        let n = bytes.len();
        if n == 0 {
            return;
        }
        let Scratch { score, from, id } = scratch;
        score.clear();
        score.resize(n + 1, T::ZERO);
        from.clear();
        from.resize(n + 1, UNREACHED);
        id.clear();
        id.resize(n + 1, NONE);
        let trie = self.trie;
        let mut start = 0usize;
        while start < n {
            let char_len = utf8_len(bytes[start]);
            let mut here = score[start];
            if let Some(limit) = T::REBASE {
                if here.abs() > limit {
                    let offset = here;
                    let last = n.min(start + self.max_len.max(char_len));
                    for p in start..=last {
                        if from[p] != UNREACHED || p == start {
                            score[p] = score[p] - offset;
                        }
                    }
                    here = score[start];
                }
            }
            let mut single = false;
            let mut state = 0u32;
            for (i, &b) in bytes[start..].iter().enumerate() {
                match trie.step(state, b) {
                    Some(next) => state = next,
                    None => break,
                }
                let piece = trie.value(state);
                if piece == NONE {
                    continue;
                }
                let end = start + i + 1;
                let offer = self.scores[piece as usize] + here;
                if from[end] == UNREACHED || offer > score[end] {
                    score[end] = offer;
                    from[end] = start as u32;
                    id[end] = piece;
                }
                if i + 1 == char_len {
                    single = true;
                }
            }
            if !single {
                let end = start + char_len;
                let offer = self.unk_score + here;
                if from[end] == UNREACHED || offer > score[end] {
                    score[end] = offer;
                    from[end] = start as u32;
                    id[end] = NONE;
                }
            }
            start += char_len;
        }
        let first = out.len();
        let mut end = n;
        while end > 0 {
            let begin = from[end];
            out.push(Seg {
                start: begin,
                end: end as u32,
                id: id[end],
            });
            end = begin as usize;
        }
        out[first..].reverse();
    }
}

#[inline]
pub(crate) fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

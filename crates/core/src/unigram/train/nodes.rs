//! The working state of unigram training: the distinct words, every
//! piece ever in the table, and the nodes of all words' lattices.

use crate::unigram::lattice::{View, UNK};
use crate::unigram::UNK_PENALTY;

/// A distinct word: text positions `start..start + len`.
#[derive(Clone, Copy)]
pub(super) struct Word {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) count: u64,
}

/// The lattices of all words: the nodes beginning at text position `p` are
/// `starts[p]..starts[p + 1]`, length ascending.
pub(super) struct Nodes {
    pub(super) starts: Vec<u32>,
    pub(super) lens: Vec<u32>,
    pub(super) pieces: Vec<u32>,
    pub(super) scores: Vec<f64>,
}

impl Nodes {
    pub(super) fn view(&self, word: Word) -> View<'_> {
        let (start, len) = (word.start as usize, word.len as usize);
        View {
            starts: &self.starts[start..=start + len],
            lens: &self.lens,
            scores: &self.scores,
        }
    }

    pub(super) fn range(&self, word: Word) -> std::ops::Range<usize> {
        self.starts[word.start as usize] as usize
            ..self.starts[(word.start + word.len) as usize] as usize
    }

    /// Drops the nodes of dead pieces and reloads the scores.
    pub(super) fn refresh(&mut self, table: &Table, unk_score: f64) {
        let mut write = 0;
        let mut read = 0;
        for p in 0..self.starts.len() - 1 {
            let read_end = self.starts[p + 1] as usize;
            self.starts[p] = write as u32;
            for k in read..read_end {
                let piece = self.pieces[k];
                if piece == UNK || table.alive[piece as usize] {
                    self.lens[write] = self.lens[k];
                    self.pieces[write] = piece;
                    self.scores[write] = if piece == UNK {
                        unk_score
                    } else {
                        table.score[piece as usize]
                    };
                    write += 1;
                }
            }
            read = read_end;
        }
        let last = self.starts.len() - 1;
        self.starts[last] = write as u32;
        self.lens.truncate(write);
        self.pieces.truncate(write);
        self.scores.truncate(write);
    }
}

/// Every piece that was ever in the table, in table order.
pub(super) struct Table {
    /// An occurrence in the text, and the length in characters.
    pub(super) pos: Vec<u32>,
    pub(super) len: Vec<u32>,
    pub(super) score: Vec<f64>,
    pub(super) alive: Vec<bool>,
    /// The live ids, ascending.
    pub(super) live: Vec<u32>,
}

impl Table {
    pub(super) fn unk_score(&self) -> f64 {
        let mut min = f64::INFINITY;
        for &p in &self.live {
            if self.score[p as usize] < min {
                min = self.score[p as usize];
            }
        }
        min - UNK_PENALTY
    }

    pub(super) fn keep(&mut self, kept: Vec<u32>) {
        self.alive.iter_mut().for_each(|a| *a = false);
        for &p in &kept {
            self.alive[p as usize] = true;
        }
        self.live = kept;
    }
}

//! Pruning in unigram training: each multi-character piece's loss of
//! likelihood were it removed (its best split without it replacing it),
//! and the table shrunk to the costliest pieces.

use rayon::prelude::*;

use super::Trainer;
use crate::unigram::lattice::{self, Scratch, View, UNK};
use crate::unigram::progress::{Progress, Stage};

impl Trainer {
    /// The lattice of piece `p` on its own: the nodes at one of its
    /// occurrences that end inside it (`whole`: with the node of p itself).
    fn piece_lattice(&self, p: u32, whole: bool, into: &mut OwnedLattice) {
        let (pos, len) = (
            self.table.pos[p as usize] as usize,
            self.table.len[p as usize] as usize,
        );
        into.clear();
        for b in 0..len {
            into.starts.push(into.lens.len() as u32);
            for k in self.nodes.starts[pos + b] as usize..self.nodes.starts[pos + b + 1] as usize {
                let l = self.nodes.lens[k] as usize;
                if b + l > len || (!whole && b == 0 && l == len) {
                    break; // lengths ascend
                }
                into.lens.push(l as u32);
                into.scores.push(self.nodes.scores[k]);
                into.pieces.push(self.nodes.pieces[k]);
            }
        }
        into.starts.push(into.lens.len() as u32);
    }

    /// Shrinks the table to max(desired, floor(factor x size)) pieces at
    /// most: characters stay, then candidates by (loss desc, piece asc).
    /// Removes the pieces that cost least likelihood; None when `progress`
    /// asks to stop (it is asked between waves of the Viterbi pass).
    pub(super) fn prune(
        &mut self,
        desired: usize,
        factor: f64,
        progress: &mut dyn Progress,
    ) -> Option<()> {
        // 1. Each multi-character piece: None if its own best segmentation
        // is not itself (removable), else its best split without itself.
        let multi: Vec<u32> = self
            .table
            .live
            .iter()
            .copied()
            .filter(|&p| self.table.len[p as usize] >= 2)
            .collect();
        let alternatives: Vec<Option<Vec<u32>>> = multi
            .par_iter()
            .map_init(
                || (OwnedLattice::default(), Scratch::default(), Vec::new()),
                |(lattice, scratch, path), &p| {
                    self.piece_lattice(p, true, lattice);
                    lattice::viterbi(lattice.view(), scratch, path);
                    if path.len() >= 2 {
                        return None;
                    }
                    self.piece_lattice(p, false, lattice);
                    lattice::viterbi(lattice.view(), scratch, path);
                    Some(path.iter().map(|&k| lattice.pieces[k as usize]).collect())
                },
            )
            .collect();

        // 2. Viterbi over all words: freq[q] += count for each node of each path.
        let mut freq = vec![0u64; self.table.score.len()];
        let wave = 4 * rayon::current_num_threads();
        for group in self.blocks().chunks(wave) {
            if !progress.report(Stage::Working) {
                return None;
            }
            let paths: Vec<Vec<(u32, u64)>> = group
                .par_iter()
                .map_init(
                    || (Scratch::default(), Vec::new()),
                    |(scratch, path), block| {
                        let mut uses = Vec::new();
                        for &w in &self.words[block.clone()] {
                            lattice::viterbi(self.nodes.view(w), scratch, path);
                            uses.extend(
                                path.iter()
                                    .map(|&k| self.nodes.pieces[k as usize])
                                    .filter(|&q| q != UNK)
                                    .map(|q| (q, w.count)),
                            );
                        }
                        uses
                    },
                )
                .collect();
            for (q, count) in paths.into_iter().flatten() {
                freq[q as usize] += count;
            }
        }
        let vsum: u64 = self.words.iter().map(|w| w.count).sum();
        let mut total = 0.0;
        for &p in &self.table.live {
            total += freq[p as usize] as f64;
        }
        let log_sum = total.ln();

        // 3. Losses.
        let mut chars = Vec::new();
        let mut candidates: Vec<(f64, u32)> = Vec::new();
        let mut alternatives = multi.iter().zip(alternatives);
        for &p in &self.table.live {
            if self.table.len[p as usize] == 1 {
                chars.push(p);
                continue;
            }
            let Some((_, alternative)) = alternatives.next() else {
                break;
            };
            let f_p = freq[p as usize];
            let Some(alt) = alternative.filter(|_| f_p != 0) else {
                continue;
            };
            let f = f_p as f64 / vsum as f64;
            let lp = (f_p as f64).ln() - log_sum;
            let log_sum_alt = (total + f_p as f64 * (alt.len() - 1) as f64).ln();
            let mut lp_alt = 0.0;
            for &q in &alt {
                lp_alt += ((freq[q as usize] + f_p) as f64).ln() - log_sum_alt;
            }
            candidates.push((f * (lp - lp_alt), p));
        }

        // 4. Keep the characters and the costliest candidates.
        let new_size = desired.max((factor * self.table.live.len() as f64).floor() as usize);
        candidates.sort_unstable_by(|a, b| {
            b.0.partial_cmp(&a.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.1.cmp(&b.1))
        });
        let room = new_size.saturating_sub(chars.len());
        let mut kept = chars;
        kept.extend(candidates.iter().take(room).map(|&(_, p)| p));
        kept.sort_unstable();
        self.table.keep(kept);
        let unk_score = self.table.unk_score();
        self.nodes.refresh(&self.table, unk_score);
        Some(())
    }
}

/// A small owned lattice (a piece's own, for pruning).
#[derive(Default)]
struct OwnedLattice {
    starts: Vec<u32>,
    lens: Vec<u32>,
    scores: Vec<f64>,
    pieces: Vec<u32>,
}

impl OwnedLattice {
    fn clear(&mut self) {
        self.starts.clear();
        self.lens.clear();
        self.scores.clear();
        self.pieces.clear();
    }

    fn view(&self) -> View<'_> {
        View {
            starts: &self.starts,
            lens: &self.lens,
            scores: &self.scores,
        }
    }
}

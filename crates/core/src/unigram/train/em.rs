//! The EM step of unigram training: expected piece counts over every
//! word's lattice (E), then new scores from them with the digamma
//! function (M), as SentencePiece computes them.

use rayon::prelude::*;

use super::{Trainer, BLOCK_NODES};
use crate::unigram::lattice::{self, Scratch, UNK};
use crate::unigram::progress::{Progress, Stage};

/// ψ(x), SentencePiece's way: the recurrence up to 7, then the asymptotic
/// series, evaluated in the reference's order. NaN unless x > 0.
pub fn digamma(mut x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    let mut r = 0.0;
    while x < 7.0 {
        r -= 1.0 / x;
        x += 1.0;
    }
    x -= 0.5;
    let xx = 1.0 / x;
    let xx2 = xx * xx;
    let xx4 = xx2 * xx2;
    r += x.ln() + (1.0 / 24.0) * xx2 - (7.0 / 960.0) * xx4 + (31.0 / 8064.0) * xx4 * xx2
        - (127.0 / 30720.0) * xx4 * xx4;
    r
}

impl Trainer {
    /// Runs of whole words holding about BLOCK_NODES nodes each.
    pub(super) fn blocks(&self) -> Vec<std::ops::Range<usize>> {
        let mut blocks = Vec::new();
        let (mut first, mut nodes) = (0, 0);
        for (i, &word) in self.words.iter().enumerate() {
            nodes += self.nodes.range(word).len();
            if nodes >= BLOCK_NODES {
                blocks.push(first..i + 1);
                (first, nodes) = (i + 1, 0);
            }
        }
        if first < self.words.len() {
            blocks.push(first..self.words.len());
        }
        blocks
    }

    /// Expected count of every piece (by id) and the objective: for each
    /// word in order, each node in order, expected += count x marginal.
    /// The expected piece counts and the objective; None when `progress`
    /// asks to stop (it is asked between waves of blocks).
    pub(super) fn e_step(&self, progress: &mut dyn Progress) -> Option<(Vec<f64>, f64)> {
        let mut expected = vec![0.0; self.table.score.len()];
        let mut objective = 0.0;
        let blocks = self.blocks();
        // A few blocks per thread at a time bounds the buffered marginals.
        let wave = 4 * rayon::current_num_threads();
        for group in blocks.chunks(wave) {
            if !progress.report(Stage::Working) {
                return None;
            }
            let results: Vec<(Vec<f64>, Vec<f64>)> = group
                .par_iter()
                .map_init(Scratch::default, |scratch, block| {
                    let words = &self.words[block.clone()];
                    let base = self.nodes.range(words[0]).start;
                    let end = self.nodes.range(words[words.len() - 1]).end;
                    let mut marginals = vec![0.0; end - base];
                    let log_z = words
                        .iter()
                        .map(|&w| {
                            let range = self.nodes.range(w);
                            let out = &mut marginals[range.start - base..range.end - base];
                            lattice::marginals(self.nodes.view(w), scratch, out)
                        })
                        .collect();
                    (marginals, log_z)
                })
                .collect();
            for (block, (marginals, log_z)) in group.iter().zip(results) {
                let words = &self.words[block.clone()];
                let base = self.nodes.range(words[0]).start;
                for (&w, z) in words.iter().zip(log_z) {
                    let count = w.count as f64;
                    for k in self.nodes.range(w) {
                        let piece = self.nodes.pieces[k];
                        if piece != UNK {
                            expected[piece as usize] += count * marginals[k - base];
                        }
                    }
                    objective += count * z;
                }
            }
        }
        Some((expected, objective))
    }

    /// score(p) = ψ(v_p) - ψ(total); characters keep v = max(v, 0.5), other
    /// pieces with v < 0.5 go.
    pub(super) fn m_step(&mut self, expected: &[f64]) {
        let mut kept = Vec::with_capacity(self.table.live.len());
        let mut values = Vec::with_capacity(self.table.live.len());
        for &p in &self.table.live {
            let v = expected[p as usize];
            if self.table.len[p as usize] == 1 {
                kept.push(p);
                values.push(if 0.5 > v { 0.5 } else { v });
            } else if v >= 0.5 {
                kept.push(p);
                values.push(v);
            }
        }
        let mut total = 0.0;
        for &v in &values {
            total += v;
        }
        let digamma_total = digamma(total);
        for (&p, &v) in kept.iter().zip(&values) {
            self.table.score[p as usize] = digamma(v) - digamma_total;
        }
        self.table.keep(kept);
        let unk_score = self.table.unk_score();
        self.nodes.refresh(&self.table, unk_score);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digamma_matches_known_values() {
        let euler_gamma = 0.577_215_664_901_532_9;
        assert!((digamma(1.0) + euler_gamma).abs() < 1e-9);
        assert!((digamma(0.5) + euler_gamma + 2.0 * 2f64.ln()).abs() < 1e-9);
        // ψ(10) = H(9) - γ
        let harmonic: f64 = (1..10).map(|k| 1.0 / k as f64).sum();
        assert!((digamma(10.0) - (harmonic - euler_gamma)).abs() < 1e-9);
        // Bit for bit what the Python reference computes.
        for (x, bits) in [
            (1.0, 0xbfe2788cfc76f696u64),
            (0.5, 0xbfff6a897d33d306),
            (1234.5, 0x401c78d93f4064c4),
            (3.25e-3, 0xc073443a1f461524),
        ] {
            assert_eq!(digamma(x).to_bits(), bits, "{x}");
        }
        assert!(digamma(0.0).is_nan() && digamma(-1.0).is_nan() && digamma(f64::NAN).is_nan());
    }
}

//! BPE-dropout: merging by rank where each merge may be skipped at random.

use std::collections::BinaryHeap;

use super::encode::{encode_piece, merge_linked, HeapQueue, MergeQueue};
use super::tables::Tables;
use crate::util::rng::Rng;

/// BPE-dropout (Provilkov et al. 2020) as HuggingFace tokenizers does it:
/// each candidate merge, when its turn comes, is skipped with probability
/// `p`; skipped candidates come back after the next merge, and merging stops
/// when every remaining candidate was skipped in a row.
struct DropoutQueue<'r> {
    inner: HeapQueue,
    skipped: Vec<(u32, u32)>,
    p: f64,
    rng: &'r mut Rng,
}

impl MergeQueue for DropoutQueue<'_> {
    fn push(&mut self, rank: u32, position: u32) {
        self.inner.push(rank, position);
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        while let Some(entry) = self.inner.pop() {
            if self.rng.next_f64() < self.p {
                self.skipped.push(entry);
            } else {
                // Back in the queue: after this merge they get a new draw.
                for (rank, position) in self.skipped.drain(..) {
                    self.inner.push(rank, position);
                }
                return Some(entry);
            }
        }
        None
    }
}

/// Appends the ids of one pre-token encoded with BPE-dropout; `p == 0` is
/// exactly [`encode_piece`].
pub(crate) fn encode_piece_with_dropout(
    tables: &Tables,
    piece: &[u8],
    p: f64,
    rng: &mut Rng,
    out: &mut Vec<u32>,
) {
    if p <= 0.0 || piece.len() < 2 {
        return encode_piece(tables, piece, out);
    }
    // No whole-piece lookup: a word that is a token must be able to split.
    let mut queue = DropoutQueue {
        inner: HeapQueue(BinaryHeap::with_capacity(piece.len())),
        skipped: Vec::new(),
        p,
        rng,
    };
    merge_linked(tables, piece, u32::MAX, false, &mut queue, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::encode::tests::vocab_with;

    #[test]
    fn dropout_zero_is_plain_one_is_bytes_and_between_varies_by_seed() {
        let vocab = vocab_with(&[(b"a", b"b"), (b"ab", b"c"), (b"abc", b"d"), (b"d", b"e")]);
        let text = b"abcdeabcde";
        let mut plain = Vec::new();
        encode_piece(&vocab, text, &mut plain);
        let with = |p: f64, seed: u64| {
            let mut out = Vec::new();
            encode_piece_with_dropout(&vocab, text, p, &mut Rng::new(seed), &mut out);
            out
        };
        assert_eq!(with(0.0, 1), plain);
        let bytes: Vec<u32> = text.iter().map(|&b| vocab.byte_id(b)).collect();
        assert_eq!(with(1.0, 1), bytes);
        let outcomes: std::collections::HashSet<Vec<u32>> =
            (0..200).map(|s| with(0.3, s)).collect();
        assert!(
            outcomes.len() > 3 && outcomes.contains(&plain),
            "{outcomes:?}"
        );
        assert_eq!(with(0.3, 5), with(0.3, 5));
        for ids in outcomes {
            let decoded: Vec<u8> = ids
                .iter()
                .flat_map(|&id| vocab.token(id).unwrap().to_vec())
                .collect();
            assert_eq!(decoded, text);
        }
    }
}

//! The trainer's candidate merges: a max-heap ordered by count, then by the
//! tie rule on the pair's bytes (the smallest (left, right) bytes,
//! or the largest under subword-nmt's rule).
//!
//! Late in training most candidates tie on small counts, so the heap
//! compares bytes often. Each entry carries the first eight bytes of both
//! sides as big-endian integers: two different such prefixes order the
//! sides as their bytes do (zero padding can only make a prefix compare
//! equal, never the wrong way), and only equal prefixes of different
//! tokens read the tokens' bytes. An entry is 32 bytes, with no pointers.

use std::cmp::Ordering;

/// A token's first eight bytes, zero-padded, as a big-endian integer.
fn prefix_key(bytes: &[u8]) -> u64 {
    let mut key = [0u8; 8];
    let n = bytes.len().min(8);
    key[..n].copy_from_slice(&bytes[..n]);
    u64::from_be_bytes(key)
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    count: u64,
    /// `left << 32 | right`.
    pair: u64,
    left_key: u64,
    right_key: u64,
}

/// Candidate pairs with the count each had when it was pushed. The
/// comparisons read the tokens' bytes, passed in by id (`tokens[id]`).
pub(super) struct Candidates {
    heap: Vec<Entry>,
    /// [`prefix_key`] of each token.
    keys: Vec<u64>,
    largest_ties: bool,
}

impl Candidates {
    /// An empty heap over `tokens`.
    pub(super) fn new<T: AsRef<[u8]>>(tokens: &[T], largest_ties: bool) -> Self {
        Self {
            heap: Vec::new(),
            keys: tokens.iter().map(|t| prefix_key(t.as_ref())).collect(),
            largest_ties,
        }
    }

    /// Learns the next token's bytes.
    pub(super) fn token_added(&mut self, bytes: &[u8]) {
        self.keys.push(prefix_key(bytes));
    }

    /// Adds `(pair, count)`s to an empty heap, in linear time.
    pub(super) fn fill<T: AsRef<[u8]>>(
        &mut self,
        pairs: impl IntoIterator<Item = (u64, u64)>,
        tokens: &[T],
    ) {
        debug_assert!(self.heap.is_empty());
        self.heap = pairs
            .into_iter()
            .map(|(pair, count)| self.entry(pair, count))
            .collect();
        for at in (0..self.heap.len() / 2).rev() {
            self.sift_down(at, tokens);
        }
    }

    pub(super) fn push<T: AsRef<[u8]>>(&mut self, pair: u64, count: u64, tokens: &[T]) {
        let entry = self.entry(pair, count);
        self.heap.push(entry);
        let mut at = self.heap.len() - 1;
        while at > 0 {
            let parent = (at - 1) / 2;
            if !self.before(&self.heap[at], &self.heap[parent], tokens) {
                break;
            }
            self.heap.swap(at, parent);
            at = parent;
        }
    }

    /// The best candidate: (pair, count when pushed).
    pub(super) fn pop<T: AsRef<[u8]>>(&mut self, tokens: &[T]) -> Option<(u64, u64)> {
        let last = self.heap.pop()?;
        let top = match self.heap.first_mut() {
            Some(first) => std::mem::replace(first, last),
            None => return Some((last.pair, last.count)),
        };
        self.sift_down(0, tokens);
        Some((top.pair, top.count))
    }

    fn entry(&self, pair: u64, count: u64) -> Entry {
        Entry {
            count,
            pair,
            left_key: self.keys[(pair >> 32) as usize],
            right_key: self.keys[pair as u32 as usize],
        }
    }

    fn sift_down<T: AsRef<[u8]>>(&mut self, mut at: usize, tokens: &[T]) {
        let n = self.heap.len();
        loop {
            let left = 2 * at + 1;
            if left >= n {
                break;
            }
            let right = left + 1;
            let child = if right < n && self.before(&self.heap[right], &self.heap[left], tokens) {
                right
            } else {
                left
            };
            if !self.before(&self.heap[child], &self.heap[at], tokens) {
                break;
            }
            self.heap.swap(at, child);
            at = child;
        }
    }

    /// Whether `a` comes out before `b`.
    #[inline]
    fn before<T: AsRef<[u8]>>(&self, a: &Entry, b: &Entry, tokens: &[T]) -> bool {
        if a.count != b.count {
            return a.count > b.count;
        }
        let side =
            |a_key, a: u64, b_key, b: u64| side_order(a_key, a as u32, b_key, b as u32, tokens);
        let by_bytes = side(a.left_key, a.pair >> 32, b.left_key, b.pair >> 32)
            .then_with(|| side(a.right_key, a.pair, b.right_key, b.pair));
        match self.largest_ties {
            false => by_bytes == Ordering::Less,
            true => by_bytes == Ordering::Greater,
        }
    }
}

/// The order of two tokens' bytes, from their prefix keys when those differ.
#[inline]
fn side_order<T: AsRef<[u8]>>(a_key: u64, a: u32, b_key: u64, b: u32, tokens: &[T]) -> Ordering {
    match a_key.cmp(&b_key) {
        Ordering::Equal if a != b => tokens[a as usize].as_ref().cmp(tokens[b as usize].as_ref()),
        order => order,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn pops_in_the_order_of_count_then_the_tie_rule_on_bytes() {
        // Tokens that share long prefixes, end in zero bytes, or are prefixes
        // of each other: the cases where prefix keys tie or mislead.
        let mut rng = Rng::new(5);
        let mut tokens: Vec<Vec<u8>> = vec![b"a".to_vec(), b"a\0".to_vec(), b"a\0\0".to_vec()];
        while tokens.len() < 60 {
            let n = 1 + (rng.next_u64() % 12) as usize;
            let token: Vec<u8> = (0..n)
                .map(|_| [0u8, 1, b'a', b'b', 0xFF][(rng.next_u64() % 5) as usize])
                .collect();
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        for largest_ties in [false, true] {
            let mut pairs: Vec<(u64, u64)> = Vec::new();
            for _ in 0..2_000 {
                let (l, r) = (rng.next_u64() % 60, rng.next_u64() % 60);
                pairs.push((l << 32 | r, 1 + rng.next_u64() % 4));
            }
            let (first, rest) = pairs.split_at(700);
            let mut heap = Candidates::new(&tokens, largest_ties);
            heap.fill(first.iter().copied(), &tokens);
            for &(pair, count) in rest {
                heap.push(pair, count, &tokens);
            }
            let mut popped = Vec::new();
            while let Some(entry) = heap.pop(&tokens) {
                popped.push(entry);
            }
            let sides = |pair: u64| {
                (
                    &tokens[(pair >> 32) as usize],
                    &tokens[pair as u32 as usize],
                )
            };
            pairs.sort_by(|a, b| {
                let by_bytes = sides(a.0).cmp(&sides(b.0));
                let by_bytes = if largest_ties {
                    by_bytes.reverse()
                } else {
                    by_bytes
                };
                b.1.cmp(&a.1).then(by_bytes)
            });
            assert_eq!(popped, pairs, "largest_ties = {largest_ties}");
        }
    }
}

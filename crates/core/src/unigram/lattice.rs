//! The lattice of a word and what runs over it (docs/unigram.md, "Lattice"):
//! Viterbi, forward-backward, n-best and sampling.
//!
//! A lattice is kept as flat arrays: the nodes beginning at position `p`
//! (a character index) are `starts[p]..starts[p + 1]`, length ascending. The
//! trainer views one big array of all words' nodes; inference builds a small
//! one per word. Every position has a node of length 1 (a character piece or
//! an unk node), so every position is reachable.
//!
//! The arithmetic repeats the reference's operation for operation: `lse2`
//! folded in begin order (forward) or length order (backward), Viterbi's
//! strictly-greater rule, n-best totals added left to right from 0.0.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::Range;

use crate::rng::Rng;

/// The piece of an unk node (an uncovered character).
pub(crate) const UNK: u32 = u32::MAX;
/// `prev` of a node that follows BOS, and "not reached yet".
const BOS: u32 = u32::MAX - 1;
const UNSET: u32 = u32::MAX;

/// Borrowed lattice arrays; node indices are absolute in `lens`/`scores`/`pieces`.
#[derive(Clone, Copy)]
pub(crate) struct View<'a> {
    /// n + 1 entries for a word of n characters.
    pub starts: &'a [u32],
    pub lens: &'a [u32],
    pub scores: &'a [f64],
}

impl View<'_> {
    fn len(&self) -> usize {
        self.starts.len() - 1
    }
    fn base(&self) -> usize {
        self.starts[0] as usize
    }
    fn node_count(&self) -> usize {
        self.starts[self.len()] as usize - self.base()
    }
    fn at(&self, pos: usize) -> Range<usize> {
        self.starts[pos] as usize..self.starts[pos + 1] as usize
    }
    fn end(&self, pos: usize, node: usize) -> usize {
        pos + self.lens[node] as usize
    }
}

/// log(exp(x) + exp(y)), SentencePiece's way (cut off when 50 apart). The
/// min/max pick like Python's `min`/`max` (the first argument on a tie).
#[inline]
pub fn lse2(x: f64, y: f64) -> f64 {
    let vmin = if y < x { y } else { x };
    let vmax = if y > x { y } else { x };
    if vmax > vmin + 50.0 {
        vmax
    } else {
        vmax + ((vmin - vmax).exp() + 1.0).ln()
    }
}

/// Per-thread buffers, reused from word to word.
#[derive(Default)]
pub(crate) struct Scratch {
    alpha: Vec<f64>,
    beta: Vec<f64>,
    best: Vec<f64>,
    prev: Vec<u32>,
    /// Nodes ending at each position, begin ascending: (node, begin).
    end_start: Vec<u32>,
    ends: Vec<(u32, u32)>,
}

/// alpha[pos]: LSE over the nodes l ending at pos (begin ascending) of
/// alpha[begin(l)] + scale x score(l); alpha[0] = 0. Pushing each node to
/// its end while walking begins in order adds the terms in that order.
fn forward(view: View, scale: f64, alpha: &mut Vec<f64>) {
    let n = view.len();
    alpha.clear();
    alpha.resize(n + 1, f64::NAN); // NaN: no term yet
    alpha[0] = 0.0;
    for b in 0..n {
        let a = alpha[b];
        for k in view.at(b) {
            let v = a + scale * view.scores[k];
            let e = view.end(b, k);
            alpha[e] = if alpha[e].is_nan() {
                v
            } else {
                lse2(alpha[e], v)
            };
        }
    }
}

/// beta[pos]: LSE over the nodes r beginning at pos (length ascending) of
/// beta[end(r)] + score(r); beta[n] = 0.
fn backward(view: View, beta: &mut Vec<f64>) {
    let n = view.len();
    beta.clear();
    beta.resize(n + 1, 0.0);
    for b in (0..n).rev() {
        let mut nodes = view.at(b);
        let Some(first) = nodes.next() else { continue };
        let mut acc = beta[view.end(b, first)] + view.scores[first];
        for k in nodes {
            acc = lse2(acc, beta[view.end(b, k)] + view.scores[k]);
        }
        beta[b] = acc;
    }
}

/// Writes the marginal of every node (node order) into `out` and returns log Z.
pub(crate) fn marginals(view: View, scratch: &mut Scratch, out: &mut [f64]) -> f64 {
    forward(view, 1.0, &mut scratch.alpha);
    backward(view, &mut scratch.beta);
    let (alpha, beta) = (&scratch.alpha, &scratch.beta);
    let n = view.len();
    let log_z = alpha[n];
    let base = view.base();
    for (b, &a) in alpha[..n].iter().enumerate() {
        for k in view.at(b) {
            let e = view.end(b, k);
            out[k - base] = (a + view.scores[k] + beta[e] - log_z).exp();
        }
    }
    log_z
}

/// The best path as node indices, BOS and EOS left out. best[r] = best[l] +
/// score(r) over the l ending where r begins; a later l must be strictly
/// greater to win, so on a tie the earliest-beginning l wins.
pub(crate) fn viterbi(view: View, scratch: &mut Scratch, path: &mut Vec<u32>) {
    path.clear();
    let n = view.len();
    if n == 0 {
        return;
    }
    let base = view.base();
    let (best, prev) = (&mut scratch.best, &mut scratch.prev);
    best.clear();
    best.resize(view.node_count(), 0.0);
    prev.clear();
    prev.resize(view.node_count(), UNSET);
    for k in view.at(0) {
        best[k - base] = 0.0 + view.scores[k];
        prev[k - base] = BOS;
    }
    let (mut eos_best, mut eos_prev) = (0.0, UNSET);
    // Walking the l in (begin, length) order offers each r its
    // predecessors begin ascending, as the pull form of the recurrence does.
    for b in 0..n {
        for l in view.at(b) {
            let from = best[l - base];
            let e = view.end(b, l);
            if e == n {
                let total = from + 0.0;
                if eos_prev == UNSET || total > eos_best {
                    (eos_best, eos_prev) = (total, l as u32);
                }
                continue;
            }
            for r in view.at(e) {
                let total = from + view.scores[r];
                if prev[r - base] == UNSET || total > best[r - base] {
                    best[r - base] = total;
                    prev[r - base] = l as u32;
                }
            }
        }
    }
    let mut node = eos_prev;
    while node != BOS && node != UNSET {
        path.push(node);
        node = prev[node as usize - base];
    }
    path.reverse();
}

/// Fills `scratch.ends` with the nodes ending at each position, begin ascending.
fn collect_ends(view: View, scratch: &mut Scratch) {
    let n = view.len();
    let (end_start, ends) = (&mut scratch.end_start, &mut scratch.ends);
    end_start.clear();
    end_start.resize(n + 2, 0);
    for b in 0..n {
        for k in view.at(b) {
            end_start[view.end(b, k) + 1] += 1;
        }
    }
    for pos in 1..end_start.len() {
        end_start[pos] += end_start[pos - 1];
    }
    ends.clear();
    ends.resize(end_start[n + 1] as usize, (0, 0));
    let mut cursor = end_start.clone();
    for b in 0..n {
        for k in view.at(b) {
            let slot = &mut cursor[view.end(b, k)];
            ends[*slot as usize] = (k as u32, b as u32);
            *slot += 1;
        }
    }
}

/// A segmentation drawn with P proportional to exp(alpha x total score):
/// forward filtering with the scaled scores, then backward sampling from EOS.
pub(crate) fn sample(
    view: View,
    alpha: f64,
    rng: &mut Rng,
    scratch: &mut Scratch,
    path: &mut Vec<u32>,
) {
    path.clear();
    forward(view, alpha, &mut scratch.alpha);
    collect_ends(view, scratch);
    let mut pos = view.len();
    while pos > 0 {
        let here = scratch.end_start[pos] as usize..scratch.end_start[pos + 1] as usize;
        let log_total = scratch.alpha[pos];
        let draw = rng.next_f64();
        let mut mass = 0.0;
        // The last candidate also takes what rounding leaves above the sum.
        let mut chosen = scratch.ends[here.end - 1];
        for &(node, begin) in &scratch.ends[here] {
            let logit = scratch.alpha[begin as usize] + alpha * view.scores[node as usize];
            mass += (logit - log_total).exp();
            if draw < mass {
                chosen = (node, begin);
                break;
            }
        }
        path.push(chosen.0);
        pos = chosen.1 as usize;
    }
    path.reverse();
}

/// An n-best search entry: a path prefix ending at `pos`, its exact total `g`
/// (added left to right from 0.0), and `key`: `g` when complete, else an
/// upper bound of the total of every completion.
struct Entry {
    key: f64,
    g: f64,
    pos: u32,
    /// Last node of the prefix in the arena; UNSET for the empty prefix.
    tail: u32,
    order: u64,
}

impl Ord for Entry {
    /// Greater pops first: higher key, then the earlier pushed.
    fn cmp(&self, other: &Self) -> Ordering {
        self.key
            .partial_cmp(&other.key)
            .unwrap_or(Ordering::Equal)
            .then_with(|| other.order.cmp(&self.order))
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}

/// The `k` best segmentations by (total desc, Viterbi's tie order: longest
/// last piece, then longest piece before it, ...), each with its total.
///
/// A* from BOS: a prefix's priority is its exact total plus the best
/// completion (backward Viterbi in f64) plus a margin that covers every
/// rounding of the left-to-right sums, so it bounds the exact total of any
/// completion. When a complete path surfaces with total T, everything whose
/// bound reaches T is expanded first, which gathers all paths of total
/// exactly T; they are then ordered by the tie rule.
pub(crate) fn nbest(view: View, k: usize) -> Vec<(Vec<u32>, f64)> {
    let n = view.len();
    let mut found = Vec::new();
    if k == 0 {
        return found;
    }
    if n == 0 {
        found.push((Vec::new(), 0.0));
        return found;
    }
    // Best completion from each position and the largest sum of |score| of
    // any completion (for the rounding margin).
    let mut h = vec![0.0f64; n + 1];
    let mut h_abs = vec![0.0f64; n + 1];
    for b in (0..n).rev() {
        let (mut best, mut abs) = (f64::NEG_INFINITY, 0.0f64);
        for r in view.at(b) {
            let e = view.end(b, r);
            best = best.max(view.scores[r] + h[e]);
            abs = abs.max(view.scores[r].abs() + h_abs[e]);
        }
        h[b] = best;
        h_abs[b] = abs;
    }
    let bound = |g: f64, pos: usize| {
        let steps = (n - pos) as f64 + 1.0;
        g + h[pos] + 8.0 * steps * f64::EPSILON * (g.abs() + h_abs[pos])
    };

    let mut arena: Vec<(u32, u32)> = Vec::new(); // (node, previous arena index)
    let mut heap = BinaryHeap::new();
    let mut order = 0u64;
    heap.push(Entry {
        key: bound(0.0, 0),
        g: 0.0,
        pos: 0,
        tail: UNSET,
        order,
    });
    let mut expand = |entry: &Entry, heap: &mut BinaryHeap<Entry>, arena: &mut Vec<(u32, u32)>| {
        let pos = entry.pos as usize;
        for r in view.at(pos) {
            let g = entry.g + view.scores[r];
            let e = view.end(pos, r);
            arena.push((r as u32, entry.tail));
            order += 1;
            heap.push(Entry {
                key: if e == n { g } else { bound(g, e) },
                g,
                pos: e as u32,
                tail: (arena.len() - 1) as u32,
                order,
            });
        }
    };
    // Longer last piece first, then the piece before it, ...
    let tie_order = |arena: &[(u32, u32)], mut a: u32, mut b: u32| {
        while a != UNSET && b != UNSET {
            let (na, nb) = (arena[a as usize], arena[b as usize]);
            match view.lens[nb.0 as usize].cmp(&view.lens[na.0 as usize]) {
                Ordering::Equal => (a, b) = (na.1, nb.1),
                unequal => return unequal,
            }
        }
        Ordering::Equal
    };

    while found.len() < k {
        let Some(top) = heap.pop() else { break };
        if (top.pos as usize) < n {
            expand(&top, &mut heap, &mut arena);
            continue;
        }
        let total = top.g;
        let mut group = vec![top.tail];
        while heap.peek().is_some_and(|next| next.key >= total) {
            let Some(next) = heap.pop() else { break };
            if (next.pos as usize) < n {
                expand(&next, &mut heap, &mut arena);
            } else {
                group.push(next.tail);
            }
        }
        group.sort_by(|&a, &b| tie_order(&arena, a, b));
        for tail in group.into_iter().take(k - found.len()) {
            let mut nodes = Vec::new();
            let mut at = tail;
            while at != UNSET {
                nodes.push(arena[at as usize].0);
                at = arena[at as usize].1;
            }
            nodes.reverse();
            found.push((nodes, total));
        }
    }
    found
}

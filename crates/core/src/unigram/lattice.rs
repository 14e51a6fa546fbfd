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
use std::ops::Range;

use crate::util::rng::Rng;

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
    if vmax == f64::NEG_INFINITY {
        // Both -inf: nothing plus nothing (not -inf - -inf = NaN).
        return vmax;
    }
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
    let n = view.len();
    let mut alpha = alpha;
    if !scratch.alpha[n].is_finite() {
        // alpha x score overflowed (the distribution is then all but a point
        // mass on the best paths): the largest alpha for which no sum of a
        // path's scaled scores can overflow draws the same way.
        let nodes = view.base()..view.base() + view.node_count();
        let max_abs = view.scores[nodes]
            .iter()
            .fold(0.0f64, |m, s| m.max(s.abs()));
        let largest = f64::MAX / max_abs / (n as f64 + 1.0) / 2.0;
        alpha = if largest.is_finite() {
            alpha.min(largest)
        } else {
            0.0
        };
        forward(view, alpha, &mut scratch.alpha);
    }
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

/// At most this many segmentations come out of an n-best search:
/// SentencePiece's `kMaxNBestSize`. It refuses a larger n-best size, as
/// bytepair's Python API does; the core clamps one.
pub const MAX_NBEST: usize = 512;

/// An n-best search entry: a path suffix from `pos` to the end, the sum `g`
/// of its scores and `g_abs` of their magnitudes, and `key`: the exact total
/// (added left to right from 0.0) when complete (`pos` 0), else an upper
/// bound of the total of every completion.
struct Entry {
    key: f64,
    g: f64,
    g_abs: f64,
    pos: u32,
    /// First node of the suffix in the arena; UNSET for the empty suffix.
    tail: u32,
}

/// A node of the n-best search tree: the lattice node, the arena index of
/// the suffix after it (UNSET: none) and its depth (nodes in the suffix).
#[derive(Clone, Copy)]
struct Step {
    node: u32,
    next: u32,
    depth: u32,
}

/// The `k` best segmentations (`k` at most [`MAX_NBEST`]) by (total desc,
/// Viterbi's tie order: longest last piece, then longest piece before it,
/// ...), each with its total.
///
/// A* from EOS over path suffixes: a suffix's priority is its sum plus the
/// best prefix before it (forward Viterbi in f64) plus a margin that covers
/// every rounding, so it bounds the exact left-to-right total of any
/// completion; a complete path's priority is its exact total. Equal
/// priorities pop in the tie order (which compares suffixes from the end,
/// the way they grow), so complete paths surface in exactly the order
/// wanted and the search stops after `k` of them, ties or not.
pub(crate) fn nbest(view: View, k: usize) -> Vec<(Vec<u32>, f64)> {
    let k = k.min(MAX_NBEST);
    let n = view.len();
    let mut found = Vec::new();
    if k == 0 {
        return found;
    }
    if n == 0 {
        found.push((Vec::new(), 0.0));
        return found;
    }
    let mut scratch = Scratch::default();
    collect_ends(view, &mut scratch);
    let (end_start, ends) = (&scratch.end_start, &scratch.ends);
    // Best prefix ending at each position and the largest sum of |score| of
    // any prefix (for the rounding margin).
    let mut h = vec![f64::NEG_INFINITY; n + 1];
    let mut h_abs = vec![0.0f64; n + 1];
    h[0] = 0.0;
    for pos in 1..=n {
        let (mut best, mut abs) = (f64::NEG_INFINITY, 0.0f64);
        for &(node, begin) in &ends[end_start[pos] as usize..end_start[pos + 1] as usize] {
            let (node, begin) = (node as usize, begin as usize);
            best = best.max(h[begin] + view.scores[node]);
            abs = abs.max(h_abs[begin] + view.scores[node].abs());
        }
        h[pos] = best;
        h_abs[pos] = abs;
    }
    let margin = 8.0 * (n as f64 + 1.0) * f64::EPSILON;
    let bound = |g: f64, g_abs: f64, pos: usize| h[pos] + g + margin * (g_abs + h_abs[pos]);

    let mut arena: Vec<Step> = Vec::new();
    // Which of two suffixes comes first on equal totals: compared from the
    // end, the longer piece first; they part below their deepest common step.
    let tie_order = |arena: &[Step], mut a: u32, mut b: u32| {
        let depth = |x: u32| {
            if x == UNSET {
                0
            } else {
                arena[x as usize].depth
            }
        };
        let up = |x: u32| arena[x as usize].next;
        if a == b {
            return Ordering::Equal;
        }
        let (da, db) = (depth(a), depth(b));
        for _ in db..da {
            a = up(a);
        }
        for _ in da..db {
            b = up(b);
        }
        if a == b {
            // One suffix is the other's end: the shorter first.
            return da.cmp(&db);
        }
        while up(a) != up(b) {
            (a, b) = (up(a), up(b));
        }
        let (la, lb) = (
            view.lens[arena[a as usize].node as usize],
            view.lens[arena[b as usize].node as usize],
        );
        lb.cmp(&la)
    };
    let before = |arena: &[Step], a: &Entry, b: &Entry| match a.key.partial_cmp(&b.key) {
        Some(Ordering::Greater) => true,
        Some(Ordering::Less) => false,
        _ => tie_order(arena, a.tail, b.tail) == Ordering::Less,
    };
    let mut heap: Vec<Entry> = Vec::new();
    heap_push(
        &mut heap,
        Entry {
            key: bound(0.0, 0.0, n),
            g: 0.0,
            g_abs: 0.0,
            pos: n as u32,
            tail: UNSET,
        },
        |a, b| before(&arena, a, b),
    );
    while found.len() < k {
        let Some(top) = heap_pop(&mut heap, |a, b| before(&arena, a, b)) else {
            break;
        };
        let pos = top.pos as usize;
        if pos == 0 {
            let mut nodes = Vec::new();
            let mut at = top.tail;
            while at != UNSET {
                nodes.push(arena[at as usize].node);
                at = arena[at as usize].next;
            }
            found.push((nodes, top.key));
            continue;
        }
        let depth = if top.tail == UNSET {
            1
        } else {
            arena[top.tail as usize].depth + 1
        };
        for &(node, begin) in &ends[end_start[pos] as usize..end_start[pos + 1] as usize] {
            let score = view.scores[node as usize];
            let (g, g_abs) = (score + top.g, score.abs() + top.g_abs);
            arena.push(Step {
                node,
                next: top.tail,
                depth,
            });
            let tail = (arena.len() - 1) as u32;
            let key = if begin == 0 {
                // The exact total, added left to right from 0.0.
                let mut total = 0.0;
                let mut at = tail;
                while at != UNSET {
                    total += view.scores[arena[at as usize].node as usize];
                    at = arena[at as usize].next;
                }
                total
            } else {
                bound(g, g_abs, begin as usize)
            };
            let entry = Entry {
                key,
                g,
                g_abs,
                pos: begin,
                tail,
            };
            heap_push(&mut heap, entry, |a, b| before(&arena, a, b));
        }
    }
    found
}

/// Adds `entry` to the binary heap `heap` (`before(a, b)`: a pops first).
fn heap_push(heap: &mut Vec<Entry>, entry: Entry, before: impl Fn(&Entry, &Entry) -> bool) {
    heap.push(entry);
    let mut at = heap.len() - 1;
    while at > 0 {
        let parent = (at - 1) / 2;
        if !before(&heap[at], &heap[parent]) {
            break;
        }
        heap.swap(at, parent);
        at = parent;
    }
}

/// Takes the first entry out of the binary heap `heap`.
fn heap_pop(heap: &mut Vec<Entry>, before: impl Fn(&Entry, &Entry) -> bool) -> Option<Entry> {
    if heap.is_empty() {
        return None;
    }
    let last = heap.len() - 1;
    heap.swap(0, last);
    let top = heap.pop();
    let mut at = 0;
    loop {
        let (left, right) = (2 * at + 1, 2 * at + 2);
        let mut first = at;
        if left < heap.len() && before(&heap[left], &heap[first]) {
            first = left;
        }
        if right < heap.len() && before(&heap[right], &heap[first]) {
            first = right;
        }
        if first == at {
            break;
        }
        heap.swap(at, first);
        at = first;
    }
    top
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lattice of `n` positions with every length 1..=max at each, scored by `score(begin, len)`.
    fn full(
        n: usize,
        max: usize,
        score: impl Fn(usize, usize) -> f64,
    ) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
        let (mut starts, mut lens, mut scores) = (Vec::new(), Vec::new(), Vec::new());
        for b in 0..n {
            starts.push(lens.len() as u32);
            for len in 1..=max.min(n - b) {
                lens.push(len as u32);
                scores.push(score(b, len));
            }
        }
        starts.push(lens.len() as u32);
        (starts, lens, scores)
    }

    /// Every path (node lists) with its left-to-right total, sorted by
    /// (total desc, longest last piece, then the one before, ...).
    fn sorted_paths(view: View) -> Vec<(Vec<u32>, f64)> {
        fn walk(view: View, pos: usize, path: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
            if pos == view.len() {
                out.push(path.clone());
                return;
            }
            for r in view.at(pos) {
                path.push(r as u32);
                walk(view, view.end(pos, r), path, out);
                path.pop();
            }
        }
        let mut all = Vec::new();
        walk(view, 0, &mut Vec::new(), &mut all);
        let mut all: Vec<(Vec<u32>, f64)> = all
            .into_iter()
            .map(|p| {
                let total = p.iter().fold(0.0, |t, &r| t + view.scores[r as usize]);
                (p, total)
            })
            .collect();
        let key = |p: &[u32]| -> Vec<std::cmp::Reverse<u32>> {
            p.iter()
                .rev()
                .map(|&r| std::cmp::Reverse(view.lens[r as usize]))
                .collect()
        };
        all.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap()
                .then_with(|| key(&a.0).cmp(&key(&b.0)))
        });
        all
    }

    #[test]
    fn lse2_of_nothing_is_nothing() {
        let inf = f64::NEG_INFINITY;
        assert_eq!(lse2(inf, inf), inf);
        assert_eq!(lse2(inf, -3.0), -3.0);
        assert_eq!(lse2(-3.0, inf), -3.0);
        assert!((lse2(0.0, 0.0) - 2f64.ln()).abs() < 1e-15);
    }

    #[test]
    fn nbest_with_ties_equals_the_sorted_enumeration() {
        for (n, max) in [(1, 1), (4, 2), (7, 3), (9, 16)] {
            for flavour in 0..3 {
                let (starts, lens, scores) = full(n, max, |b, len| match flavour {
                    0 => 0.0,
                    1 => -(len as f64) * 0.5,
                    _ => -(((b * 7 + len * 3) % 4) as f64) * 0.25,
                });
                let view = View {
                    starts: &starts,
                    lens: &lens,
                    scores: &scores,
                };
                let all = sorted_paths(view);
                for k in [1, 2, 5, all.len(), all.len() + 3] {
                    let want: Vec<_> = all.iter().take(k).cloned().collect();
                    assert_eq!(
                        nbest(view, k),
                        want,
                        "n={n} max={max} flavour={flavour} k={k}"
                    );
                }
            }
        }
    }

    #[test]
    fn nbest_of_a_long_tied_word_is_fast() {
        // All scores 0: 2^29-ish paths share the best total.
        let (starts, lens, scores) = full(30, 16, |_, _| 0.0);
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        let best = nbest(view, 1);
        // The tie order: longest last piece, then the longest before it.
        assert_eq!(best.len(), 1);
        let lengths: Vec<u32> = best[0].0.iter().map(|&r| lens[r as usize]).collect();
        assert_eq!(lengths, [14, 16]);
        assert_eq!(best[0].1, 0.0);
        let (starts, lens, scores) = full(2000, 16, |_, _| 0.0);
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        let top = nbest(view, 50);
        assert_eq!(top.len(), 50);
        assert!(top.iter().all(|(_, t)| *t == 0.0));
    }

    #[test]
    fn nbest_clamps_k() {
        let (starts, lens, scores) = full(20, 4, |b, len| -((b + len) as f64));
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        assert_eq!(nbest(view, usize::MAX).len(), MAX_NBEST);
    }

    #[test]
    fn a_huge_sampling_alpha_draws_the_best_path() {
        // The best path is the one piece of length 3; the worst is 1 + 1 + 1.
        let (starts, lens, scores) = full(3, 3, |_, len| if len == 3 { -1.0 } else { -2.0 });
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        let mut rng = Rng::new(7);
        let mut scratch = Scratch::default();
        let mut path = Vec::new();
        for alpha in [1e3, 1.7e308, f64::MAX] {
            for _ in 0..20 {
                sample(view, alpha, &mut rng, &mut scratch, &mut path);
                let lengths: Vec<u32> = path.iter().map(|&r| lens[r as usize]).collect();
                assert_eq!(lengths, [3], "alpha {alpha}");
            }
        }
        // Scores that overflow a path's sum even at alpha 1.
        let (starts, lens, scores) = full(3, 3, |_, len| if len == 3 { -1e308 } else { -1.5e308 });
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        sample(view, 1.0, &mut rng, &mut scratch, &mut path);
        assert_eq!(path.len(), 1);
    }
}

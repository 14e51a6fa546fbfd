//! Seed candidates from a suffix array (docs/unigram.md, "Seeds").
//!
//! The distinct words are laid end to end as symbols, each followed by a
//! break (symbol 0, which also stands for every uncovered character). A
//! substring's occurrences are one interval of the suffix array, so its
//! frequency (overlapping occurrences, each weighted by its word's count) is
//! the sum of the weights over that interval. One pass over the suffix array,
//! with one open interval per length, visits every distinct valid substring
//! of 2..max_len symbols once.
//!
//! A candidate is named by (start of its interval, length): for substrings
//! of at most `depth` symbols that order is their lexicographic order, so
//! sorting by it is sorting by the piece's text (covered characters get
//! symbols in code point order).

use rustc_hash::FxHashSet;

use crate::error::{Error, Result};
use crate::unigram::progress::{Progress, Stage};

/// A distinct substring: the suffixes `sa[start..end]` begin with it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidate {
    pub start: u32,
    pub end: u32,
    pub len: u32,
    /// frequency x length
    pub score: u64,
}

/// The suffixes of `text` sorted by their first `depth` symbols (enough
/// for substrings up to that length; `depth >= text.len()` gives the full
/// suffix array). Prefix doubling with two stable counting sorts a round,
/// so O(n log depth). `progress` is asked before each round whether to go
/// on (None when it says no).
pub(crate) fn sort_suffixes(
    text: &[u32],
    depth: usize,
    progress: &mut dyn Progress,
) -> Option<Vec<u32>> {
    let n = text.len();
    if n == 0 {
        return Some(Vec::new());
    }
    let alphabet = text.iter().max().map_or(1, |&m| m as usize + 1);
    let mut sa = vec![0u32; n];
    let mut count = vec![0u32; alphabet.max(n) + 1];
    counting_sort(
        0..n as u32,
        |i| text[i as usize],
        &mut count[..alphabet + 1],
        &mut sa,
    );
    let mut rank = vec![0u32; n];
    for k in 1..n {
        let (a, b) = (sa[k - 1] as usize, sa[k] as usize);
        rank[b] = rank[a] + u32::from(text[a] != text[b]);
    }
    let mut by_second = vec![0u32; n];
    let mut next_rank = vec![0u32; n];
    let mut h = 1;
    while h < depth && (rank[sa[n - 1] as usize] as usize) < n - 1 {
        if !progress.report(Stage::Working) {
            return None;
        }
        // Order by the rank h further on (none: first), then stably by rank.
        let mut k = 0;
        for i in n.saturating_sub(h)..n {
            by_second[k] = i as u32;
            k += 1;
        }
        for &p in &sa {
            if p as usize >= h {
                by_second[k] = p - h as u32;
                k += 1;
            }
        }
        let ranks = rank[sa[n - 1] as usize] as usize + 1;
        counting_sort(
            by_second.iter().copied(),
            |i| rank[i as usize],
            &mut count[..ranks + 1],
            &mut sa,
        );
        let second = |i: usize| if i + h < n { rank[i + h] + 1 } else { 0 };
        next_rank[sa[0] as usize] = 0;
        for k in 1..n {
            let (a, b) = (sa[k - 1] as usize, sa[k] as usize);
            let differ = rank[a] != rank[b] || second(a) != second(b);
            next_rank[b] = next_rank[a] + u32::from(differ);
        }
        std::mem::swap(&mut rank, &mut next_rank);
        h *= 2;
    }
    Some(sa)
}

/// Stable counting sort of `items` by `key` into `out`; `count` has one slot
/// more than there are keys.
fn counting_sort(
    items: impl Iterator<Item = u32> + Clone,
    key: impl Fn(u32) -> u32,
    count: &mut [u32],
    out: &mut [u32],
) {
    count.fill(0);
    for i in items.clone() {
        count[key(i) as usize + 1] += 1;
    }
    for c in 1..count.len() {
        count[c] += count[c - 1];
    }
    for i in items {
        let slot = &mut count[key(i) as usize];
        out[*slot as usize] = i;
        *slot += 1;
    }
}

/// The suffix array (sorted to `max_len` symbols) and the best `seed_size`
/// candidates by (score desc, text asc), returned in text order.
///
/// `weights[p]`: the count of the word holding position `p`; `kinds[s]`:
/// the character kind of symbol `s` (`scan::char_kind`: 0 letters and
/// marks, 1 numbers, 2 the rest). A candidate has 2..=max_len symbols, no
/// break, frequency >= 2, `metaspace` (that symbol) only as its first
/// symbol, and all its symbols of one kind, but for a first symbol of kind 2
/// (`▁the`, `,and`; not `the,` or `a1`). No candidate is in `excluded`
/// (the special tokens as symbols).
#[allow(clippy::too_many_arguments)] // one caller; the text's four views and the limits
pub(crate) fn seed_candidates(
    text: &[u32],
    weights: &[u64],
    kinds: &[u8],
    metaspace: Option<u32>,
    max_len: usize,
    seed_size: usize,
    excluded: &FxHashSet<Vec<u32>>,
    progress: &mut dyn Progress,
) -> Result<(Vec<u32>, Vec<Candidate>)> {
    let n = text.len();
    let max_len = max_len.min(n); // no longer substring exists
    let kind = |p: usize| kinds.get(text[p] as usize).copied().unwrap_or(2);
    // May position p + 1 follow position p inside a piece?
    let joins = |p: usize| p + 1 < n && text[p + 1] != 0 && Some(text[p + 1]) != metaspace;
    // run[p]: the longest run of one kind starting at p (no break inside);
    // valid[p]: the longest valid substring starting at p, at most max_len.
    let mut run = vec![0u32; n + 1];
    let mut valid = vec![0u32; n + 1];
    for p in (0..n).rev() {
        if text[p] == 0 {
            continue;
        }
        let same = joins(p) && kind(p + 1) == kind(p);
        run[p] = 1 + if same { run[p + 1] } else { 0 };
        let longest = match kind(p) {
            2 => 1 + if joins(p) { run[p + 1] } else { 0 },
            _ => run[p],
        };
        valid[p] = longest.min(max_len as u32);
    }
    drop(run);
    let sa = sort_suffixes(text, max_len, progress).ok_or(Error::Interrupted)?;

    let mut found = Vec::new();
    // open[len]: (weight so far, start) of the interval of the current
    // suffix's prefix of that length.
    let mut open = vec![(0u64, 0u32); max_len + 1];
    let mut close = |open: &[(u64, u32)], lens: std::ops::RangeInclusive<usize>, end: usize| {
        for len in lens {
            let (freq, start) = open[len];
            if freq >= 2 {
                let score = freq.checked_mul(len as u64).ok_or_else(|| {
                    Error::InvalidTraining(
                        "word counts too large: a seed score overflows u64".into(),
                    )
                })?;
                found.push(Candidate {
                    start,
                    end: end as u32,
                    len: len as u32,
                    score,
                });
            }
        }
        Ok::<(), Error>(())
    };
    let mut previous = (0usize, 0usize); // (position, valid length) of the last suffix
    for (i, &p) in sa.iter().enumerate() {
        if i % (1 << 20) == 0 && !progress.report(Stage::Working) {
            return Err(Error::Interrupted);
        }
        let p = p as usize;
        let here = valid[p] as usize;
        // Validity depends on the text only, so a shared prefix is valid for both or neither.
        let limit = here.min(previous.1);
        let common = (0..limit)
            .take_while(|&j| text[previous.0 + j] == text[p + j])
            .count();
        close(&open, (common + 1).max(2)..=previous.1, i)?;
        for slot in open.iter_mut().take(here + 1).skip((common + 1).max(2)) {
            *slot = (0, i as u32);
        }
        for slot in open.iter_mut().take(here + 1).skip(2) {
            slot.0 += weights[p];
        }
        previous = (p, here);
    }
    close(&open, 2..=previous.1, n)?;
    if !excluded.is_empty() {
        found.retain(|c| {
            let p = sa[c.start as usize] as usize;
            !excluded.contains(&text[p..p + c.len as usize])
        });
    }

    let better = |a: &Candidate, b: &Candidate| {
        b.score
            .cmp(&a.score)
            .then(a.start.cmp(&b.start))
            .then(a.len.cmp(&b.len))
    };
    if found.len() > seed_size {
        found.select_nth_unstable_by(seed_size, better);
        found.truncate(seed_size);
    }
    found.sort_unstable_by_key(|c| (c.start, c.len));
    Ok((sa, found))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;
    use std::collections::BTreeMap;

    fn go_on(_: Stage) -> bool {
        true
    }

    #[test]
    fn full_suffix_array_matches_sorting() {
        let mut rng = Rng::new(7);
        for round in 0..200 {
            let n = (rng.next_u64() % 40) as usize;
            let sigma = 1 + round % 4;
            let text: Vec<u32> = (0..n)
                .map(|_| (rng.next_u64() % sigma as u64) as u32)
                .collect();
            let mut naive: Vec<u32> = (0..n as u32).collect();
            naive.sort_by(|&a, &b| text[a as usize..].cmp(&text[b as usize..]));
            assert_eq!(
                sort_suffixes(&text, n.max(1), &mut go_on).unwrap(),
                naive,
                "{text:?}"
            );
            // Sorted to depth d: the first d symbols are in order.
            let sa = sort_suffixes(&text, 3, &mut go_on).unwrap();
            for pair in sa.windows(2) {
                let cut = |p: u32| &text[p as usize..(p as usize + 3).min(n)];
                assert!(cut(pair[0]) <= cut(pair[1]));
            }
        }
    }

    /// Words as symbol strings (no 0 inside) with counts -> what the
    /// reference's substring_frequencies keeps (freq >= 2), by brute force.
    fn naive(
        words: &[(Vec<u32>, u64)],
        kinds: &[u8],
        max_len: usize,
        metaspace: Option<u32>,
    ) -> BTreeMap<Vec<u32>, u64> {
        let mut freq = BTreeMap::new();
        for (word, count) in words {
            for b in 0..word.len() {
                for e in b + 2..=(b + max_len).min(word.len()) {
                    let piece = &word[b..e];
                    if piece.contains(&0) || piece[1..].iter().any(|&s| Some(s) == metaspace) {
                        continue;
                    }
                    let from = usize::from(kinds[piece[0] as usize] == 2);
                    let kind = kinds[piece[from] as usize];
                    if piece[from..].iter().any(|&s| kinds[s as usize] != kind) {
                        continue;
                    }
                    *freq.entry(piece.to_vec()).or_insert(0) += count;
                }
            }
        }
        freq.retain(|_, f| *f >= 2);
        freq
    }

    #[test]
    fn seeds_equal_a_naive_count() {
        let mut rng = Rng::new(11);
        for round in 0..300 {
            let sigma = 2 + round % 5;
            let metaspace = (round % 2 == 0).then_some(1);
            let max_len = 1 + (rng.next_u64() % 6) as usize;
            let words: Vec<(Vec<u32>, u64)> = (0..1 + rng.next_u64() % 6)
                .map(|_| {
                    let len = 1 + (rng.next_u64() % 9) as usize;
                    // symbol 0: an uncovered character inside a word
                    let word = (0..len)
                        .map(|_| (rng.next_u64() % sigma as u64) as u32)
                        .collect();
                    (word, 1 + rng.next_u64() % 3)
                })
                .collect();
            let (mut text, mut weights) = (Vec::new(), Vec::new());
            for (word, count) in &words {
                text.extend(word);
                text.push(0);
                weights.extend(std::iter::repeat_n(*count, word.len() + 1));
            }
            // Symbols of the three kinds (symbol 0 is a break).
            let kinds: Vec<u8> = (0..sigma as u32).map(|s| (s % 3) as u8).collect();
            let none = FxHashSet::default();
            let (sa, seeds) = seed_candidates(
                &text,
                &weights,
                &kinds,
                metaspace,
                max_len,
                usize::MAX,
                &none,
                &mut go_on,
            )
            .unwrap();
            let got: Vec<(Vec<u32>, u64)> = seeds
                .iter()
                .map(|c| {
                    let p = sa[c.start as usize] as usize;
                    (text[p..p + c.len as usize].to_vec(), c.score / c.len as u64)
                })
                .collect();
            let want: Vec<(Vec<u32>, u64)> = naive(&words, &kinds, max_len, metaspace)
                .into_iter()
                .collect();
            assert_eq!(got, want, "{words:?} max_len {max_len}");
            // Every suffix of an interval starts with the piece.
            for c in &seeds {
                let piece = &text[sa[c.start as usize] as usize..][..c.len as usize];
                for &p in &sa[c.start as usize..c.end as usize] {
                    assert_eq!(&text[p as usize..p as usize + c.len as usize], piece);
                }
            }
        }
    }

    #[test]
    fn seed_size_keeps_the_best_then_the_smallest_text() {
        // "ab" x2, "bc" x2, "abc" x2 (score 6 beats 4; "ab" < "bc").
        let text = vec![1, 2, 3, 0, 1, 2, 3, 0];
        let weights = vec![1; 8];
        let best = |excluded: &[Vec<u32>]| {
            let excluded = excluded.iter().cloned().collect();
            let (sa, seeds) =
                seed_candidates(&text, &weights, &[2; 8], None, 3, 2, &excluded, &mut go_on)
                    .unwrap();
            seeds
                .iter()
                .map(|c| {
                    (
                        text[sa[c.start as usize] as usize..][..c.len as usize].to_vec(),
                        c.score,
                    )
                })
                .collect::<Vec<(Vec<u32>, u64)>>()
        };
        assert_eq!(best(&[]), vec![(vec![1, 2], 4), (vec![1, 2, 3], 6)]);
        // An excluded piece (a special token's text) leaves room for the next.
        assert_eq!(
            best(&[vec![1, 2, 3]]),
            vec![(vec![1, 2], 4), (vec![2, 3], 4)]
        );
    }
}

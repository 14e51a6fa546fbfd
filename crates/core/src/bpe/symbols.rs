//! Merge rules over any alphabet (classic character BPE, whose symbols are
//! not bytes): the adjacent pair of lowest rank, leftmost first, merges
//! until no pair has a rule, as for bytes.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::vocab::pair_key;

/// Merge rules over any alphabet (classic character BPE, whose symbols are
/// not bytes): pair of symbol ids -> (rank, result id).
#[derive(Clone, Debug, Default)]
pub struct SymbolRules(FxHashMap<u64, (u32, u32)>);

impl SymbolRules {
    /// `rules`: (left, right, result) in rank order; a repeated pair keeps its first rank.
    pub fn new(rules: impl IntoIterator<Item = (u32, u32, u32)>) -> Self {
        let mut map = FxHashMap::default();
        for (rank, (left, right, result)) in rules.into_iter().enumerate() {
            map.entry(pair_key(left, right))
                .or_insert((rank as u32, result));
        }
        Self(map)
    }

    /// The adjacent pair of lowest rank, leftmost first, merges until no
    /// pair has a rule: the rule bytes merge by, over these symbols.
    pub fn merge(&self, symbols: &mut Vec<u32>) {
        merge_symbols(symbols, &self.0)
    }
}

/// Words of up to this many symbols merge by a plain scan; longer ones with
/// a heap over a linked list, so that a long word without spaces (unspaced
/// CJK, minified code) costs O(n log n), not O(n²).
const SYMBOL_SCAN_LIMIT: usize = 64;

fn merge_symbols(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    match symbols.len() > SYMBOL_SCAN_LIMIT {
        true => merge_symbols_by_heap(symbols, rules),
        false => merge_symbols_by_scan(symbols, rules),
    }
}

fn merge_symbols_by_scan(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    let rule_at = |s: &[u32], i: usize| rules.get(&pair_key(s[i], s[i + 1]));
    loop {
        let mut best: Option<(usize, u32, u32)> = None;
        for i in 0..symbols.len().saturating_sub(1) {
            if let Some(&(rank, result)) = rule_at(symbols, i) {
                if best.is_none_or(|(_, r, _)| rank < r) {
                    best = Some((i, rank, result));
                }
            }
        }
        let Some((at, _, result)) = best else {
            return;
        };
        symbols[at] = result;
        symbols.remove(at + 1);
    }
}

/// [`merge_symbols`] for long words. Symbols keep the index they started at,
/// so ordering candidates by (rank, left index) is the rule's order (lowest
/// rank, leftmost). A popped candidate whose pair no longer has that rank
/// is stale and skipped; every live pair has an entry of its current rank.
fn merge_symbols_by_heap(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    const END: u32 = u32::MAX;
    let n = symbols.len();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    next[n - 1] = END;
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = END;
    let mut alive = vec![true; n];
    let rank_of = |ids: &[u32], left: usize, right: u32| {
        rules
            .get(&pair_key(ids[left], ids[right as usize]))
            .map(|&(rank, _)| rank)
    };
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = (0..n - 1)
        .filter_map(|i| rank_of(symbols, i, i as u32 + 1).map(|r| Reverse((r, i as u32))))
        .collect();
    while let Some(Reverse((rank, left))) = heap.pop() {
        let left = left as usize;
        let right = next[left];
        if !alive[left] || right == END || rank_of(symbols, left, right) != Some(rank) {
            continue;
        }
        let (_, result) = rules[&pair_key(symbols[left], symbols[right as usize])];
        symbols[left] = result;
        alive[right as usize] = false;
        let after = next[right as usize];
        next[left] = after;
        if after != END {
            prev[after as usize] = left as u32;
            if let Some(r) = rank_of(symbols, left, after) {
                heap.push(Reverse((r, left as u32)));
            }
        }
        let before = prev[left];
        if before != END {
            if let Some(r) = rank_of(symbols, before as usize, left as u32) {
                heap.push(Reverse((r, before)));
            }
        }
    }
    let mut at = 0u32;
    let mut merged = Vec::with_capacity(n);
    while at != END {
        merged.push(symbols[at as usize]);
        at = next[at as usize];
    }
    *symbols = merged;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    #[test]
    fn long_symbol_words_merge_by_heap_as_by_scan() {
        // Rules over a small alphabet, results made by earlier rules too, and
        // ranks that rise and fall along a chain: every order the rule allows.
        let mut rng = Rng::new(11);
        for round in 0..200 {
            let alphabet = 2 + (rng.next_u64() % 4) as u32;
            let count = (rng.next_u64() % 40) as u32;
            let mut rules = Vec::new();
            for result in alphabet..alphabet + count {
                let left = (rng.next_u64() % result as u64) as u32;
                let right = (rng.next_u64() % result as u64) as u32;
                rules.push((left, right, result));
            }
            let table = SymbolRules::new(rules.iter().copied());
            let length = 65 + (rng.next_u64() % 400) as usize;
            let word: Vec<u32> = (0..length)
                .map(|_| (rng.next_u64() % alphabet as u64) as u32)
                .collect();
            let (mut by_heap, mut by_scan) = (word.clone(), word.clone());
            merge_symbols_by_heap(&mut by_heap, &table.0);
            merge_symbols_by_scan(&mut by_scan, &table.0);
            assert_eq!(by_heap, by_scan, "round {round}");
        }
    }

    #[test]
    fn symbol_rules_merge_lowest_rank_leftmost() {
        // Symbols 0 = a, 1 = b; rules: (a, a) -> 2 at rank 0, (2, b) -> 3 at rank 1.
        let rules = SymbolRules::new([(0, 0, 2), (2, 1, 3), (0, 0, 9)]);
        let mut word = vec![0, 0, 0, 1];
        rules.merge(&mut word);
        assert_eq!(
            word,
            vec![2, 0, 1],
            "a a a b -> aa a b: left to right, no overlap"
        );
        let mut word = vec![0, 0, 1];
        rules.merge(&mut word);
        assert_eq!(word, vec![3]);
        let mut unknown = vec![7, 8];
        rules.merge(&mut unknown);
        assert_eq!(unknown, vec![7, 8]);
    }
}

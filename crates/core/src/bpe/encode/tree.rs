//! Medium pieces: symbols in place, the lowest pair from a tournament tree.

use super::{encode_by_heap, first_pair_rule, first_symbol};
use crate::bpe::tables::Tables;
use crate::vocab::MergeRule;

/// Pieces of up to this many symbols go to the tree encoder (a bit set of
/// live symbols fits one u64), longer ones to the heap encoder.
pub(super) const TREE_LIMIT: usize = 64;
/// ... so a piece longer than this many bytes (no first symbol is longer
/// than 3) goes to the heap encoder without counting them.
pub(super) const TREE_BYTES_LIMIT: usize = 3 * TREE_LIMIT;

/// Medium pieces: symbols stay at the index where they start (a bit set
/// marks the live ones, so a neighbour is one bit scan), and a tournament
/// tree over the indices holds the lowest `(rank, index)` key at its root:
/// each merge updates three leaves, O(log n), with no shifting of arrays.
/// A piece of more than [`TREE_LIMIT`] first symbols goes to the heap
/// encoder.
pub(super) fn encode_by_tree(tables: &Tables, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    const NO_KEY: u64 = u64::MAX;
    let n = piece.len();
    debug_assert!((2..=TREE_BYTES_LIMIT).contains(&n));
    let mut symbols = [0u32; TREE_LIMIT];
    // Symbol i holds piece[starts[i]..starts[the next live symbol]], or to n.
    let mut starts = [0u8; TREE_LIMIT + 1];
    let mut count = 0;
    let mut at = 0;
    while at < n {
        if count == TREE_LIMIT {
            return encode_by_heap(tables, piece, skip, out);
        }
        let (id, width) = first_symbol(tables, piece, at, skip == u32::MAX);
        (symbols[count], starts[count]) = (id, at as u8);
        count += 1;
        at += width;
    }
    starts[count] = n as u8;
    let leaves = count.next_power_of_two();
    let mut results = [0u32; TREE_LIMIT];
    // tree[1] is the root, tree[leaves + i] the pair starting at symbol i.
    let mut tree = [NO_KEY; 2 * TREE_LIMIT];
    for i in 0..count - 1 {
        let (start, end) = (starts[i] as usize, starts[i + 2] as usize);
        let rule = first_pair_rule(tables, piece, start, end, symbols[i], symbols[i + 1], skip);
        if let Some(rule) = rule {
            tree[leaves + i] = (rule.rank as u64) << 32 | i as u64;
            results[i] = rule.result;
        }
    }
    for k in (1..leaves).rev() {
        tree[k] = tree[2 * k].min(tree[2 * k + 1]);
    }
    let mut live: u64 = u64::MAX >> (64 - count);
    // The first live symbol after `i`, if any.
    let next = |live: u64, i: usize| {
        let after = live & !((2u64 << i).wrapping_sub(1));
        (after != 0).then(|| after.trailing_zeros() as usize)
    };
    // Where the bytes of live symbol `i` end.
    let end = |live: u64, i: usize| starts[next(live, i).unwrap_or(count)] as usize;
    let key_of = |rule: Option<MergeRule>, i: usize| match rule {
        Some(rule) if rule.rank != skip => ((rule.rank as u64) << 32 | i as u64, rule.result),
        _ => (NO_KEY, 0),
    };
    loop {
        let top = tree[1];
        if top == NO_KEY {
            break;
        }
        let at = top as u32 as usize;
        let right = next(live, at).expect("a pair starts at `at`");
        symbols[at] = results[at];
        live &= !(1u64 << right);
        tree[leaves + right] = NO_KEY;
        (tree[leaves + at], results[at]) = match next(live, at) {
            Some(after) => {
                let span = &piece[starts[at] as usize..end(live, after)];
                key_of(tables.adjacent_rule(symbols[at], symbols[after], span), at)
            }
            None => (NO_KEY, 0),
        };
        // The leaves that changed: `first..=right`, ancestors shared once
        // their paths meet (the three are neighbours, so within a level or two).
        let before = live & ((1u64 << at) - 1);
        let first = if before != 0 {
            let p = 63 - before.leading_zeros() as usize;
            let span = &piece[starts[p] as usize..end(live, at)];
            (tree[leaves + p], results[p]) =
                key_of(tables.adjacent_rule(symbols[p], symbols[at], span), p);
            p
        } else {
            at
        };
        let (mut low, mut mid, mut high) = (
            (leaves + first) >> 1,
            (leaves + at) >> 1,
            (leaves + right) >> 1,
        );
        while low > 0 {
            tree[low] = tree[2 * low].min(tree[2 * low + 1]);
            if mid != low {
                tree[mid] = tree[2 * mid].min(tree[2 * mid + 1]);
            }
            if high != mid {
                tree[high] = tree[2 * high].min(tree[2 * high + 1]);
            }
            (low, mid, high) = (low >> 1, mid >> 1, high >> 1);
        }
    }
    let mut rest = live;
    while rest != 0 {
        out.push(symbols[rest.trailing_zeros() as usize]);
        rest &= rest - 1;
    }
}

//! Short pieces: a plain scan of small fixed arrays.

use super::{first_pair_rule, first_symbol, SCAN_LIMIT};
use crate::bpe::tables::Tables;

/// Short pieces: symbols, pair ranks and pair results in small fixed
/// arrays, so that finding the lowest rank is a plain scan of integers and
/// closing the gap after a merge a short loop, not a call. Only the two
/// pairs beside a merge change, so each merge costs two lookups.
pub(super) fn encode_by_scan(tables: &Tables, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    const NO_RANK: u32 = u32::MAX;
    let n = piece.len();
    debug_assert!((1..=SCAN_LIMIT).contains(&n));
    let whole_chars = skip == u32::MAX;
    let mut symbols = [0u32; SCAN_LIMIT];
    // Symbol i holds piece[starts[i]..starts[i + 1]].
    let mut starts = [0u8; SCAN_LIMIT + 1];
    let mut len = 0;
    let mut at = 0;
    while at < n {
        let (id, width) = first_symbol(tables, piece, at, whole_chars);
        (symbols[len], starts[len]) = (id, at as u8);
        len += 1;
        at += width;
    }
    starts[len] = n as u8;
    let mut ranks = [NO_RANK; SCAN_LIMIT];
    let mut results = [0u32; SCAN_LIMIT];
    let rule_at = |symbols: &[u32; SCAN_LIMIT], starts: &[u8; SCAN_LIMIT + 1], i: usize| {
        let span = &piece[starts[i] as usize..starts[i + 2] as usize];
        match tables.adjacent_rule(symbols[i], symbols[i + 1], span) {
            Some(rule) if rule.rank != skip => (rule.rank, rule.result),
            _ => (NO_RANK, 0),
        }
    };
    for i in 0..len.saturating_sub(1) {
        let (start, end) = (starts[i] as usize, starts[i + 2] as usize);
        (ranks[i], results[i]) =
            match first_pair_rule(tables, piece, start, end, symbols[i], symbols[i + 1], skip) {
                Some(rule) => (rule.rank, rule.result),
                None => (NO_RANK, 0),
            };
    }
    // The pairs beside the last merge, (index, rank, result): their ranks go
    // in `ranks` only once the lowest of the others is found, and are then
    // compared with it. The next merge is rarely one of them, so the branch
    // predictor lets the next merge start while their lookups are under
    // way, rather than the scan waiting for them. At first, pair 0 stands
    // in (comparing it with itself changes nothing).
    let mut fresh = [(0, ranks[0], results[0]); 2];
    while len >= 2 {
        // The leftmost adjacent pair of lowest rank.
        let (mut lowest, mut at) = (NO_RANK, 0);
        for (i, &rank) in ranks[..len - 1].iter().enumerate() {
            if rank < lowest {
                (lowest, at) = (rank, i);
            }
        }
        for (i, rank, result) in fresh {
            (ranks[i], results[i]) = (rank, result);
            if rank < lowest || (rank == lowest && i < at) {
                (lowest, at) = fresh_pair_first(rank, i);
            }
        }
        if lowest == NO_RANK {
            break;
        }
        symbols[at] = results[at];
        for k in at + 1..len - 1 {
            symbols[k] = symbols[k + 1];
            ranks[k] = ranks[k + 1];
            results[k] = results[k + 1];
        }
        for k in at + 1..len {
            starts[k] = starts[k + 1];
        }
        len -= 1;
        let right = match at + 1 < len {
            true => rule_at(&symbols, &starts, at),
            false => (NO_RANK, 0),
        };
        fresh[1] = (at, right.0, right.1);
        fresh[0] = match at {
            0 => fresh[1],
            _ => {
                let (rank, result) = rule_at(&symbols, &starts, at - 1);
                (at - 1, rank, result)
            }
        };
        ranks[at] = NO_RANK;
        if at > 0 {
            ranks[at - 1] = NO_RANK;
        }
    }
    out.extend_from_slice(&symbols[..len]);
}

/// A pair beside the last merge goes first: out of line, so that the
/// comparison stays a (well predicted) branch.
#[cold]
#[inline(never)]
fn fresh_pair_first(rank: u32, index: usize) -> (u32, usize) {
    (rank, index)
}

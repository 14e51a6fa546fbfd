//! Encoding by merge rank: start from the bytes of a piece and repeatedly
//! merge the adjacent pair of lowest rank, leftmost first, until no
//! adjacent pair has a rank. Every algorithm here gives exactly that
//! answer; they differ in how they find the next merge, and the dispatch
//! picks one by the piece's length:
//!
//! - `scan`: short pieces (almost all of them), a plain scan of small
//!   arrays, O(n²) but with n tiny the cache locality wins;
//! - `tree`: medium pieces (up to 64 symbols: long words of non-ASCII
//!   letters, runs of CJK) keep their symbols in place and find the lowest
//!   pair with a tournament tree, O(log n) a merge;
//! - `linked`: long pieces, a queue of candidate merges (a min-heap, or
//!   buckets by rank for very long ones) over a linked list of symbols,
//!   O(n log n), so a megabyte without spaces stays fast;
//! - `windows`: pieces longer than a window are merged window by window,
//!   with a check at each seam that keeps the answer exact.

mod linked;
mod scan;
#[cfg(test)]
pub(crate) mod tests;
mod tree;
mod windows;

pub(crate) use linked::{merge_linked, HeapQueue, MergeQueue};

use super::tables::Tables;
use crate::vocab::MergeRule;

/// Pieces up to this long (in bytes) use the plain scan.
const SCAN_LIMIT: usize = 32;

/// Appends the ids of one pre-token to `out`.
pub(crate) fn encode_piece(tables: &Tables, piece: &[u8], out: &mut Vec<u32>) {
    match piece.len() {
        0 => {}
        1 => out.push(tables.byte_id(piece[0])),
        _ => match tables.whole_piece(piece) {
            Some(id) => out.push(id),
            None => encode_skipping_rank(tables, piece, u32::MAX, out),
        },
    }
}

/// Merges by rank, never applying the merges of rank `skip` (u32::MAX skips
/// none). Encoding a token's bytes while skipping its own rank stops at the
/// two parts its last merge joins.
pub(crate) fn encode_skipping_rank(tables: &Tables, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    match piece.len() {
        0 => {}
        n if n <= SCAN_LIMIT => scan::encode_by_scan(tables, piece, skip, out),
        n if n <= tree::TREE_BYTES_LIMIT => tree::encode_by_tree(tables, piece, skip, out),
        _ => encode_by_heap(tables, piece, skip, out),
    }
}

/// The symbol merging starts from at `piece[at..]`, and its length in
/// bytes: a whole character's token where [`Tables::char_token`] allows it
/// (`whole_chars`: not when a rank is skipped, which needs every merge),
/// else the byte's.
#[inline(always)]
fn first_symbol(tables: &Tables, piece: &[u8], at: usize, whole_chars: bool) -> (u32, usize) {
    let byte = piece[at];
    // Only the lead byte of a character of two or three bytes starts one
    // (checked here first: most bytes are ASCII).
    if whole_chars && (0xc2..0xf0).contains(&byte) {
        if let Some(symbol) = tables.char_token(piece, at) {
            return symbol;
        }
    }
    (tables.byte_id(byte), 1)
}

/// The rule of two adjacent first symbols `left`, `right` that together
/// hold `piece[start..end]` (none of rank `skip`): two single bytes read
/// the table of byte pairs, any other pair is looked up.
#[inline(always)]
fn first_pair_rule(
    tables: &Tables,
    piece: &[u8],
    start: usize,
    end: usize,
    left: u32,
    right: u32,
    skip: u32,
) -> Option<MergeRule> {
    let rule = match end - start {
        2 => tables.byte_pair_rule(piece[start], piece[start + 1]),
        _ => tables.adjacent_rule(left, right, &piece[start..end]),
    };
    rule.filter(|rule| rule.rank != skip)
}

/// Long pieces: merged window by window when longer than a window (and
/// no rank is skipped), else whole over a linked list.
fn encode_by_heap(tables: &Tables, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    if skip == u32::MAX && piece.len() > windows::WINDOW + windows::WINDOW_OVERLAP {
        return windows::encode_in_windows(
            tables,
            piece,
            windows::WINDOW,
            windows::WINDOW_OVERLAP,
            out,
        );
    }
    linked::merge(tables, piece, skip, &mut None, out)
}

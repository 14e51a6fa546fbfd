//! Very long pieces: window by window, exactly.

use super::linked::merge;
use crate::bpe::tables::Tables;

/// Pieces longer than a window and its overlap are encoded window by window
/// (in bytes), so that the merge state of a megabyte piece stays in cache.
pub(super) const WINDOW: usize = 1 << 16;
pub(super) const WINDOW_OVERLAP: usize = 1 << 12;
/// Seams that may move back before a piece is merged whole instead.
const SEAM_RETRIES: usize = 8;

/// Encodes a very long piece window by window, exactly. BPE's answer is the
/// only way to cut a piece into tokens that each encode to themselves and
/// whose every adjacent pair `a, b` encodes to exactly `[a, b]`
/// ([`pair_is_stable`]): had the whole piece's merging ever joined bytes
/// across one of the cuts, the first such merge would also happen when
/// merging the two tokens beside it alone. Each window's answer has both
/// properties, so only the seams need a check. A window's last `overlap`
/// bytes are encoded but not kept: merges there lack their right-hand
/// context. A seam that fails check moves back one token; after
/// `SEAM_RETRIES` the whole piece is merged in one go.
pub(super) fn encode_in_windows(
    tables: &Tables,
    piece: &[u8],
    window: usize,
    overlap: usize,
    out: &mut Vec<u32>,
) {
    let first = out.len();
    let mut start = 0;
    let mut ids = Vec::new();
    let mut buckets = None;
    let mut retries = 0;
    while start < piece.len() {
        let end = (start + window + overlap).min(piece.len());
        ids.clear();
        merge(tables, &piece[start..end], u32::MAX, &mut buckets, &mut ids);
        if out.len() > first && !pair_is_stable(tables, out[out.len() - 1], ids[0]) {
            retries += 1;
            if retries > SEAM_RETRIES {
                out.truncate(first);
                return merge(tables, piece, u32::MAX, &mut buckets, out);
            }
            let back = out.pop().expect("a token of this piece");
            start -= token_len(tables, back);
            continue;
        }
        let (count, bytes) = kept_of_window(tables, &ids, window, end == piece.len());
        out.extend_from_slice(&ids[..count]);
        start += bytes;
    }
}

/// How many of a window's ids to keep, and their bytes: those within its
/// first `window` bytes (at least one), or all of them in the piece's last.
pub(super) fn kept_of_window(
    tables: &Tables,
    ids: &[u32],
    window: usize,
    last: bool,
) -> (usize, usize) {
    let mut bytes = 0;
    for (count, &id) in ids.iter().enumerate() {
        let len = token_len(tables, id);
        if !last && count > 0 && bytes + len > window {
            return (count, bytes);
        }
        bytes += len;
    }
    (ids.len(), bytes)
}

fn token_len(tables: &Tables, id: u32) -> usize {
    tables.token(id).map_or(0, <[u8]>::len)
}

/// Whether the bytes of `left` and `right` together merge to exactly these
/// two tokens.
fn pair_is_stable(tables: &Tables, left: u32, right: u32) -> bool {
    let (Some(l), Some(r)) = (tables.token(left), tables.token(right)) else {
        return false;
    };
    let mut ids = Vec::with_capacity(2);
    merge(tables, &[l, r].concat(), u32::MAX, &mut None, &mut ids);
    ids == [left, right]
}

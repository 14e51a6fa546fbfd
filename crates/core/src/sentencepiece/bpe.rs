//! sentencepiece's BPE: merges by score over the whole normalized text.
//!
//! Symbols are the characters (a user-defined piece is one frozen symbol that
//! never merges); repeatedly the adjacent pair whose concatenation is a
//! normal, user-defined or unused piece with the highest score merges, ties
//! to the leftmost; an unused piece in the result is split back into the two
//! symbols it was last offered as (recursively); an unused piece that no
//! merge made counts as unknown.

use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::unigram::{utf8_len, Seg};
use super::{Kind, Tables};
use crate::double_array::DoubleArray;

#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    end: u32,
    prev: u32,
    next: u32,
    frozen: bool,
}

const NIL: u32 = u32::MAX;

/// A candidate merge; the greatest key pops first: the highest score, then
/// the smallest left index. (Among candidates with the same left index at
/// most one is still valid when popped, so the right index and length need
/// not order them.)
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    score: u64,
    /// `u32::MAX - left`
    left_key: u32,
    right: u32,
    len: u32,
}

/// `score` as an unsigned key with the same order (no NaN).
#[inline]
pub(crate) fn score_key(score: f64) -> u64 {
    let bits = score.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}

/// The symbols of `text`: characters, and the longest user-defined piece at
/// a position as one frozen symbol.
fn split_symbols(text: &str, user: Option<&DoubleArray>, symbols: &mut Vec<Symbol>) {
    let bytes = text.as_bytes();
    let mut position = 0usize;
    while position < bytes.len() {
        let user_len = user.map_or(0, |u| u.longest_prefix(&bytes[position..]));
        let frozen = user_len > 0;
        let len = if frozen {
            user_len
        } else {
            utf8_len(bytes[position])
        };
        let index = symbols.len() as u32;
        symbols.push(Symbol {
            start: position as u32,
            end: (position + len) as u32,
            prev: if index == 0 { NIL } else { index - 1 },
            next: index + 1,
            frozen,
        });
        position += len;
    }
    if let Some(last) = symbols.last_mut() {
        last.next = NIL;
    }
}

type MadeFrom<'a> = FxHashMap<&'a [u8], (u32, u32, u32)>;

/// Offers the merge of `left` and `right` when their concatenation is a piece.
fn consider<'a>(
    tables: &Tables,
    bytes: &'a [u8],
    symbols: &[Symbol],
    agenda: &mut BinaryHeap<Candidate>,
    made_from: &mut MadeFrom<'a>,
    left: u32,
    right: u32,
) {
    if left == NIL || right == NIL {
        return;
    }
    let (l, r) = (symbols[left as usize], symbols[right as usize]);
    if l.frozen || r.frozen {
        return;
    }
    let merged = &bytes[l.start as usize..r.end as usize];
    let Some(id) = tables.segment_trie.get(merged) else {
        return;
    };
    agenda.push(Candidate {
        score: tables.score_keys[id as usize],
        left_key: u32::MAX - left,
        right,
        len: merged.len() as u32,
    });
    if tables.kinds[id as usize] == Kind::Unused {
        made_from.insert(merged, (l.start, l.end, r.end));
    }
}

pub(crate) fn segments(tables: &Tables, text: &str, out: &mut Vec<Seg>) {
    let mut symbols = Vec::with_capacity(text.len());
    split_symbols(text, tables.user_trie.as_ref(), &mut symbols);
    if symbols.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    let mut agenda: BinaryHeap<Candidate> = BinaryHeap::with_capacity(symbols.len());
    // For an unused piece: where it was last offered as (start, middle, end).
    let mut made_from: MadeFrom = FxHashMap::default();

    for index in 1..symbols.len() as u32 {
        consider(
            tables,
            bytes,
            &symbols,
            &mut agenda,
            &mut made_from,
            index - 1,
            index,
        );
    }

    while let Some(c) = agenda.pop() {
        let left = u32::MAX - c.left_key;
        let (l, r) = (symbols[left as usize], symbols[c.right as usize]);
        if l.start == l.end || r.start == r.end || (l.end - l.start) + (r.end - r.start) != c.len {
            continue;
        }
        // Adjacent in the text: the left symbol grows over the right one.
        symbols[left as usize].end = r.end;
        symbols[left as usize].next = r.next;
        if r.next != NIL {
            symbols[r.next as usize].prev = left;
        }
        symbols[c.right as usize].end = r.start;
        symbols[c.right as usize].start = r.start;
        let prev = symbols[left as usize].prev;
        let next = symbols[left as usize].next;
        consider(
            tables,
            bytes,
            &symbols,
            &mut agenda,
            &mut made_from,
            prev,
            left,
        );
        consider(
            tables,
            bytes,
            &symbols,
            &mut agenda,
            &mut made_from,
            left,
            next,
        );
    }

    let mut index = 0u32;
    while index != NIL {
        let s = symbols[index as usize];
        resegment(tables, bytes, &made_from, s.start, s.end, out);
        index = s.next;
    }
}

fn resegment(
    tables: &Tables,
    bytes: &[u8],
    made_from: &MadeFrom,
    start: u32,
    end: u32,
    out: &mut Vec<Seg>,
) {
    let text = &bytes[start as usize..end as usize];
    let id = tables.piece_to_id(text);
    if tables.kinds[id as usize] == Kind::Unused {
        if let Some(&(a, b, c)) = made_from.get(text) {
            let (first, second) = (b - a, c - b);
            resegment(tables, bytes, made_from, start, start + first, out);
            resegment(
                tables,
                bytes,
                made_from,
                start + first,
                start + first + second,
                out,
            );
        } else {
            out.push(Seg {
                start,
                end,
                id: tables.unk_id,
            });
        }
    } else {
        // A character that is a control piece is no piece of text to
        // sentencepiece: unknown (spelled in bytes, or one <unk> a run).
        let id = match tables.kinds[id as usize] {
            Kind::Control => tables.unk_id,
            _ => id,
        };
        out.push(Seg { start, end, id });
    }
}

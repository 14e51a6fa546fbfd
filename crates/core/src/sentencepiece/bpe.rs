//! sentencepiece's BPE: merges by score over the whole normalized text.
//!
//! Symbols are the characters (a user-defined piece is one frozen symbol that
//! never merges); repeatedly the adjacent pair whose concatenation is a
//! normal, user-defined or unused piece with the highest score merges, ties
//! to the leftmost; an unused piece in the result is split back into the two
//! symbols it was last offered as (recursively); an unused piece that no
//! merge made counts as unknown.
//!
//! sentencepiece runs one agenda over the whole text (a megabyte of English
//! took 1.1 s); here the text is cut where no piece crosses (between words,
//! see [`Crossings`]) and each run merges alone, a repeated run once a call:
//! the same merges, so the same ids.

use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::unigram::{utf8_len, Seg};
use super::{Kind, Tables};
use crate::util::double_array::DoubleArray;

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

/// Where merging cannot cross: the character pairs that occur inside a
/// piece merging can make (the merged symbol holding both characters would
/// be one). Between two characters of any other pair, or beside a frozen
/// symbol, the text splits into runs that merge on their own: a candidate
/// across the cut is never a piece, and each run's merges come in the same
/// order (score, then leftmost) as in the whole text's agenda. None where
/// that fails: an unused piece splits back by where it was last offered in
/// the whole text, so its runs are not independent.
pub(crate) struct Crossings(FxHashSet<u64>);

impl Crossings {
    pub(crate) fn new(pieces: &[String], kinds: &[Kind]) -> Option<Self> {
        if kinds.contains(&Kind::Unused) {
            return None;
        }
        let mut pairs = FxHashSet::default();
        for (piece, kind) in pieces.iter().zip(kinds) {
            if kind.segments() {
                let chars: Vec<char> = piece.chars().collect();
                pairs.extend(chars.windows(2).map(|w| char_pair(w[0], w[1])));
            }
        }
        Some(Self(pairs))
    }

    /// Whether a merge may join the symbols `left` and `right` (adjacent, unmerged).
    #[inline]
    fn may_join(&self, bytes: &[u8], left: &Symbol, right: &Symbol) -> bool {
        if left.frozen || right.frozen {
            return false;
        }
        let last = char_at(bytes, left.start as usize);
        let first = char_at(bytes, right.start as usize);
        self.0.contains(&char_pair(last, first))
    }
}

#[inline]
fn char_pair(left: char, right: char) -> u64 {
    (left as u64) << 32 | right as u64
}

/// The character starting at `bytes[at..]` (a symbol's start, so a boundary).
#[inline]
fn char_at(bytes: &[u8], at: usize) -> char {
    let len = utf8_len(bytes[at]);
    std::str::from_utf8(&bytes[at..at + len])
        .ok()
        .and_then(|c| c.chars().next())
        .unwrap_or(char::REPLACEMENT_CHARACTER)
}

/// The merge state of one call, kept from run to run.
#[derive(Default)]
struct Scratch<'a> {
    run: Vec<Symbol>,
    agenda: BinaryHeap<Candidate>,
    made_from: MadeFrom<'a>,
    /// The segments of each run already merged in this call, by its bytes
    /// (relative to the run's start): words repeat.
    known: FxHashMap<&'a [u8], (u32, u32)>,
    known_segments: Vec<Seg>,
}

pub(crate) fn segments(tables: &Tables, text: &str, out: &mut Vec<Seg>) {
    let mut symbols = Vec::with_capacity(text.len());
    split_symbols(text, tables.user_trie.as_ref(), &mut symbols);
    if symbols.is_empty() {
        return;
    }
    let bytes = text.as_bytes();
    let mut scratch = Scratch::default();
    let Some(crossings) = &tables.crossings else {
        return merge(tables, bytes, symbols, &mut scratch, out);
    };
    let mut start = 0;
    for end in 1..=symbols.len() {
        if end < symbols.len() && crossings.may_join(bytes, &symbols[end - 1], &symbols[end]) {
            continue;
        }
        merge_run(tables, bytes, &symbols[start..end], &mut scratch, out);
        start = end;
    }
}

/// The segments of a run of symbols that merges on its own (see
/// [`Crossings`]), from this call's earlier runs where they hold the same bytes.
fn merge_run<'a>(
    tables: &Tables,
    bytes: &'a [u8],
    symbols: &[Symbol],
    scratch: &mut Scratch<'a>,
    out: &mut Vec<Seg>,
) {
    let base = symbols[0].start;
    let text = &bytes[base as usize..symbols[symbols.len() - 1].end as usize];
    if let Some(&(from, to)) = scratch.known.get(text) {
        let known = &scratch.known_segments[from as usize..to as usize];
        out.extend(known.iter().map(|s| Seg {
            start: s.start + base,
            end: s.end + base,
            id: s.id,
        }));
        return;
    }
    let first = out.len();
    let mut run = std::mem::take(&mut scratch.run);
    run.clear();
    let last = symbols.len() as u32 - 1;
    run.extend(symbols.iter().enumerate().map(|(i, s)| Symbol {
        prev: if i == 0 { NIL } else { i as u32 - 1 },
        next: if i as u32 == last { NIL } else { i as u32 + 1 },
        ..*s
    }));
    merge(tables, bytes, run, scratch, out);
    let from = scratch.known_segments.len() as u32;
    scratch
        .known_segments
        .extend(out[first..].iter().map(|s| Seg {
            start: s.start - base,
            end: s.end - base,
            id: s.id,
        }));
    let to = scratch.known_segments.len() as u32;
    scratch.known.insert(text, (from, to));
}

/// sentencepiece's merging of linked `symbols` (indices in order), and the
/// segments they end as; gives `symbols` back to `scratch` for reuse.
fn merge<'a>(
    tables: &Tables,
    bytes: &'a [u8],
    mut symbols: Vec<Symbol>,
    scratch: &mut Scratch<'a>,
    out: &mut Vec<Seg>,
) {
    let Scratch {
        agenda, made_from, ..
    } = scratch;
    agenda.clear();
    for index in 1..symbols.len() as u32 {
        consider(tables, bytes, &symbols, agenda, made_from, index - 1, index);
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
        consider(tables, bytes, &symbols, agenda, made_from, prev, left);
        consider(tables, bytes, &symbols, agenda, made_from, left, next);
    }

    let mut index = 0u32;
    while index != NIL {
        let s = symbols[index as usize];
        resegment(tables, bytes, made_from, s.start, s.end, out);
        index = s.next;
    }
    scratch.run = symbols;
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

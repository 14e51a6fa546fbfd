//! Characters that merging may take as one symbol from the start (under
//! tiktoken's rule), instead of their two or three bytes: fewer symbols,
//! so fewer merges and lookups (a third fewer in Cyrillic and CJK words).
//!
//! A character `c` whose bytes are a token qualifies, between a byte `p`
//! before it and a byte `q` after it (either may be missing), when
//! - merging its bytes alone makes `c`, with no merge on the way ranked
//!   above `c` (every shorter token inside it has a lower id), and
//! - every token that holds part or all of `c` together with `p` (its bytes
//!   end with `p` and a beginning of `c`'s) or with `q` (they begin with an
//!   end of `c`'s and `q`) has a higher id than `c`.
//!
//! Why that changes nothing: while `c` is not whole, one of its own merges
//! is pending at a rank no higher than `c`'s, and every pair reaching across
//! its edge ranks higher, so merging from the bytes never crosses the edge
//! before `c` is whole, and merges its bytes as it would alone. Every other
//! merge it makes meanwhile ranks below that pending one, so below any pair
//! with a whole `c` too: starting from `c` makes the same merges elsewhere,
//! in the same order, and the same tokens. The neighbours matter: " \xd0"
//! is an early token of cl100k, which joins a space to the first byte of a
//! Cyrillic letter before the letter is whole.

use rustc_hash::FxHashMap;

use crate::vocab::Vocab;

/// One qualifying character: its token and the sets of bytes allowed
/// beside it (indices into `WholeChars::byte_sets`: most characters share
/// their sets, and an 8-byte entry keeps the table in the CPU cache).
#[derive(Clone, Copy, Debug)]
struct WholeChar {
    id: u32,
    before: u16,
    after: u16,
}

fn allows(set: &[u64; 4], byte: u8) -> bool {
    set[byte as usize >> 6] >> (byte & 63) & 1 == 1
}

fn disallow(set: &mut [u64; 4], byte: u8) {
    set[byte as usize >> 6] &= !(1 << (byte & 63));
}

#[derive(Clone, Debug, Default)]
pub struct WholeChars {
    /// Code point (below 0x10000) -> 1 + index into `chars`, 0 for none
    /// (empty: no character qualifies).
    by_code_point: Box<[u16]>,
    chars: Box<[WholeChar]>,
    byte_sets: Box<[[u64; 4]]>,
}

/// Up to 3 bytes as a key: the bytes, and the length above them.
fn key(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .rev()
        .fold(bytes.len() as u32, |k, &b| k << 8 | b as u32)
}

/// Lowers the id recorded for `byte` in `seen` to `id`.
fn lower(seen: &mut Vec<(u8, u32)>, byte: u8, id: u32) {
    match seen.iter_mut().find(|(b, _)| *b == byte) {
        Some((_, low)) => *low = (*low).min(id),
        None => seen.push((byte, id)),
    }
}

impl WholeChars {
    /// The qualifying characters of a vocabulary under tiktoken's rule;
    /// `merges_to_itself(id)` tells whether merging the bytes of token `id`
    /// makes exactly `id` (with every table but this one).
    pub fn of(vocab: &Vocab, mut merges_to_itself: impl FnMut(u32) -> bool) -> Self {
        let candidates: Vec<(u32, u32, &[u8])> = (0..vocab.len() as u32)
            .filter_map(|id| {
                let bytes = vocab.token(id).filter(|b| (2..=3).contains(&b.len()))?;
                let mut chars = std::str::from_utf8(bytes).ok()?.chars();
                let c = chars.next()?;
                let findable = vocab.id_of(bytes) == Some(id);
                (chars.next().is_none() && findable).then_some((c as u32, id, bytes))
            })
            .collect();
        if candidates.is_empty() {
            return Self::default();
        }
        // For each beginning of a candidate's bytes, the bytes that precede
        // it at the end of some token, with the lowest such token's id; for
        // each end, the bytes that follow it at the start of some token.
        let mut before: FxHashMap<u32, Vec<(u8, u32)>> = FxHashMap::default();
        let mut after: FxHashMap<u32, Vec<(u8, u32)>> = FxHashMap::default();
        for &(_, _, bytes) in &candidates {
            for k in 1..=bytes.len() {
                before.insert(key(&bytes[..k]), Vec::new());
                after.insert(key(&bytes[bytes.len() - k..]), Vec::new());
            }
        }
        for id in 0..vocab.len() as u32 {
            let Some(t) = vocab.token(id).filter(|t| vocab.id_of(t) == Some(id)) else {
                continue;
            };
            // A beginning starts with a lead byte, an end with any byte of
            // a character of several bytes.
            for at in t.len().saturating_sub(3).max(1)..t.len() {
                if t[at] >= 0xc2 {
                    if let Some(seen) = before.get_mut(&key(&t[at..])) {
                        lower(seen, t[at - 1], id);
                    }
                }
            }
            if t[0] >= 0x80 {
                for at in 1..t.len().min(4) {
                    if let Some(seen) = after.get_mut(&key(&t[..at])) {
                        lower(seen, t[at], id);
                    }
                }
            }
        }
        let mut by_code_point = vec![0u16; 1 << 16].into_boxed_slice();
        let mut chars = Vec::new();
        let mut byte_sets: Vec<[u64; 4]> = Vec::new();
        let mut set_of: FxHashMap<[u64; 4], u16> = FxHashMap::default();
        for &(c, id, bytes) in &candidates {
            let n = bytes.len();
            let inner_parts_earlier = (1..n - 1)
                .flat_map(|len| bytes.windows(len + 1))
                .all(|part| vocab.id_of(part).is_none_or(|p| p < id));
            if !inner_parts_earlier || !merges_to_itself(id) {
                continue;
            }
            let (mut before_set, mut after_set) = ([u64::MAX; 4], [u64::MAX; 4]);
            for k in 1..=n {
                for &(byte, low) in &before[&key(&bytes[..k])] {
                    if low < id {
                        disallow(&mut before_set, byte);
                    }
                }
                for &(byte, low) in &after[&key(&bytes[n - k..])] {
                    if low < id {
                        disallow(&mut after_set, byte);
                    }
                }
            }
            // A set not seen before is numbered next (a character whose set
            // would not fit a u16 is left out: it merges from its bytes).
            let mut set_index = |set: [u64; 4]| match set_of.get(&set) {
                Some(&index) => Some(index),
                None => {
                    let index = u16::try_from(byte_sets.len()).ok()?;
                    byte_sets.push(set);
                    set_of.insert(set, index);
                    Some(index)
                }
            };
            let (Some(before), Some(after)) = (set_index(before_set), set_index(after_set)) else {
                continue;
            };
            chars.push(WholeChar { id, before, after });
            // At most one entry per code point below 0x10000: fits a u16.
            by_code_point[c as usize] = chars.len() as u16;
        }
        Self {
            by_code_point,
            chars: chars.into_boxed_slice(),
            byte_sets: byte_sets.into_boxed_slice(),
        }
    }

    /// The token of the character of two or three bytes at `piece[at..]`,
    /// and its length, when merging may start from it as one symbol there.
    #[inline]
    pub fn at(&self, piece: &[u8], at: usize) -> Option<(u32, usize)> {
        let first = piece[at];
        if first < 0xc2 || self.by_code_point.is_empty() {
            return None;
        }
        let tail = |i: usize| {
            piece
                .get(at + i)
                .filter(|&&b| b & 0xc0 == 0x80)
                .map(|&b| b as u32 & 0x3f)
        };
        let (c, len) = if first < 0xe0 {
            ((first as u32 & 0x1f) << 6 | tail(1)?, 2)
        } else if first < 0xf0 {
            let c = (first as u32 & 0x0f) << 12 | tail(1)? << 6 | tail(2)?;
            // An overlong form is not the character (surrogates have no token).
            (c >= 0x800).then_some((c, 3))?
        } else {
            return None;
        };
        let entry = self.by_code_point[c as usize].checked_sub(1)?;
        let char = self.chars[entry as usize];
        let allowed = |set: u16, byte: u8| allows(&self.byte_sets[set as usize], byte);
        let before_ok = at == 0 || allowed(char.before, piece[at - 1]);
        let after_ok = piece.get(at + len).is_none_or(|&b| allowed(char.after, b));
        (before_ok && after_ok).then_some((char.id, len))
    }
}

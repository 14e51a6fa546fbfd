//! Places inside a piece that no token crosses, where its encoding splits
//! into the encodings of the two sides.
//!
//! Merging only ever makes tokens, so if no token of the vocabulary can
//! cover the bytes on both sides of a position `b`, no symbol ever does:
//! no pair across `b` has a rank, each side merges as it would alone, and
//! the order in which the two sides' merges interleave changes nothing.
//! A token covering `b` holds the bytes `piece[b - 1]` and `piece[b]`, and
//! either `piece[b + 1]` too or ends right there; so `b` is uncrossed when
//! no token holds those three bytes in a row and none ends with those two.
//!
//! That is the case between most characters of scripts whose words are
//! long and whose tokens are short (Chinese and Japanese runs are single
//! pieces, and most of their adjacent characters share no token): the
//! sides are short words that repeat, so the piece cache knows most of
//! them, and only the rest is merged. Only the positions between two
//! characters of several bytes are considered (a continuation byte, then a
//! lead byte), which keeps the tables small.

use crate::vocab::Vocab;

/// Continuation bytes (0x80..=0xBF) and lead bytes (0xC2..=0xF4).
const CONTINUATIONS: usize = 64;
const LEADS: usize = 0xF5 - 0xC2;

#[derive(Clone, Debug, Default)]
pub struct Uncrossed {
    /// Bit `(c1 * LEADS + l) * 64 + c2`: a token holds continuation `c1`,
    /// lead `l`, continuation `c2` in a row (empty: nothing is uncrossed).
    inner: Box<[u64]>,
    /// Bit `c1 * LEADS + l`: a token ends with continuation `c1`, lead `l`.
    ends: Box<[u64]>,
}

#[inline(always)]
fn continuation(byte: u8) -> Option<usize> {
    (0x80..=0xBF)
        .contains(&byte)
        .then(|| (byte - 0x80) as usize)
}

#[inline(always)]
fn lead(byte: u8) -> Option<usize> {
    (0xC2..=0xF4)
        .contains(&byte)
        .then(|| (byte - 0xC2) as usize)
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

fn get(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

impl Uncrossed {
    /// From every token the vocabulary can make by merging (specials are
    /// not merged, so they do not count).
    pub fn of(vocab: &Vocab) -> Self {
        let mut inner = vec![0u64; CONTINUATIONS * LEADS].into_boxed_slice();
        let mut ends = vec![0u64; (CONTINUATIONS * LEADS).div_ceil(64)].into_boxed_slice();
        for id in 0..vocab.len() as u32 {
            let Some(token) = vocab.token(id).filter(|_| !vocab.is_special(id)) else {
                continue;
            };
            for (i, w) in token.windows(2).enumerate() {
                let (Some(c1), Some(l)) = (continuation(w[0]), lead(w[1])) else {
                    continue;
                };
                // A lead byte followed by no continuation (not UTF-8) counts
                // as an end: the pair is then crossed whatever follows it.
                match token.get(i + 2).and_then(|&next| continuation(next)) {
                    Some(c2) => set(&mut inner, (c1 * LEADS + l) * 64 + c2),
                    None => set(&mut ends, c1 * LEADS + l),
                }
            }
        }
        Self { inner, ends }
    }

    /// Whether no token crosses position `b` of `piece` (0 < b < len).
    #[inline(always)]
    fn at(&self, piece: &[u8], b: usize) -> bool {
        let (Some(c1), Some(l)) = (continuation(piece[b - 1]), lead(piece[b])) else {
            return false;
        };
        let pair = c1 * LEADS + l;
        if get(&self.ends, pair) {
            return false;
        }
        // Past `ends`, a token holding the pair goes on with a continuation.
        match piece.get(b + 1).and_then(|&next| continuation(next)) {
            Some(c2) => !get(&self.inner, pair * 64 + c2),
            None => true,
        }
    }

    /// The first uncrossed position of `piece` after `from`, if any.
    #[inline]
    pub fn next(&self, piece: &[u8], from: usize) -> Option<usize> {
        if self.inner.is_empty() {
            return None;
        }
        // A plain loop: `find` with a closure was not inlined here.
        let mut b = from + 1;
        while b < piece.len() {
            if piece[b] >= 0xC2 && self.at(piece, b) {
                return Some(b);
            }
            b += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::encode::encode_skipping_rank;
    use crate::bpe::encode::tests::tables_of;
    use crate::vocab::Ranking;

    #[test]
    fn a_piece_merges_as_its_sides_do_at_every_uncrossed_position() {
        // Random vocabularies of CJK, Cyrillic and accented characters and
        // ASCII, with random tokens over them; at each uncrossed position,
        // merging the whole piece equals merging the two sides alone.
        let units = ["中", "文", "字", "я", "з", "é", "a", " "];
        let mut random = crate::bpe::random_text::RandomText::new(units, 3);
        let (mut cuts, mut positions) = (0, 0);
        for case in 0..200 {
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            for _ in 0..20 + case % 80 {
                let token = random.token(3, 7);
                if !tokens.contains(&token) {
                    tokens.push(token);
                }
            }
            {
                let tokens = tokens.iter().cloned().map(Some);
                let vocab = tables_of(Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap());
                let uncrossed = Uncrossed::of(vocab.vocab());
                // No token has an uncrossed place (the piece cache skips the
                // whole-token lookup of a piece that has one).
                for token in (0..vocab.vocab().len() as u32).filter_map(|id| vocab.token(id)) {
                    assert_eq!(uncrossed.next(token, 0), None, "case {case}: {token:?}");
                }
                for _ in 0..20 {
                    let n = 1 + random.pick(30);
                    let piece = random.text(n);
                    let mut whole = Vec::new();
                    encode_skipping_rank(&vocab, &piece, u32::MAX, &mut whole);
                    for b in 1..piece.len() {
                        positions += 1;
                        if !uncrossed.at(&piece, b) {
                            continue;
                        }
                        cuts += 1;
                        let mut sides = Vec::new();
                        encode_skipping_rank(&vocab, &piece[..b], u32::MAX, &mut sides);
                        encode_skipping_rank(&vocab, &piece[b..], u32::MAX, &mut sides);
                        assert_eq!(sides, whole, "case {case}, at {b} of {piece:?}");
                    }
                }
            }
        }
        eprintln!("{cuts} of {positions} positions uncrossed");
        assert!(cuts * 20 > positions, "{cuts} of {positions}");
    }

    #[test]
    fn tokens_that_end_at_a_lead_byte_or_are_not_utf8_cross_it() {
        // "я" then "中": crossed by a token ending with "я"'s last byte and
        // "中"'s first, or holding them and a byte that continues nothing.
        let piece = "я中".as_bytes();
        let at = 2;
        for token in [&piece[1..3], &[piece[1], piece[2], b'a'][..], &piece[1..4]] {
            let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
            tokens.push(token.to_vec());
            let vocab =
                Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap();
            assert!(!Uncrossed::of(&vocab).at(piece, at), "{token:?}");
        }
        let bytes: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let vocab = Vocab::new(bytes.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap();
        assert!(Uncrossed::of(&vocab).at(piece, at));
    }
}

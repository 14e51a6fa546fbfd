//! Hand-written scanners for the builtin patterns (GPT-2 / r50k / p50k,
//! cl100k, o200k): the same pieces as the published regexes, in one pass and
//! linear time, with no backtracking stack to overflow on a megabyte of
//! spaces. Each scanner decides, at a position, which alternative of the
//! pattern matches first (leftmost-first, as the regex engine does) and where
//! that match ends; the reasoning for each alternative is written beside it.
//! Character classes come from the regex engine's own Unicode tables
//! (regex-syntax), so `\p{L}` here is `\p{L}` there.
//!
//! Tests compare every scanner with the regex itself (fancy-regex).

use std::sync::OnceLock;

use regex_syntax::hir::{Class, HirKind};
use rustc_hash::FxHashMap;

use crate::text::scan_blocks::{self, Pattern};

const LETTER: u16 = 1; // \p{L}
const NUMBER: u16 = 2; // \p{N}
const SPACE: u16 = 4; // \s (White_Space)
const UPPER: u16 = 8; // \p{Lu}
const LOWER: u16 = 16; // \p{Ll}
const TITLE: u16 = 32; // \p{Lt}
const MODIFIER: u16 = 64; // \p{Lm}
const OTHER_LETTER: u16 = 128; // \p{Lo}
const MARK: u16 = 256; // \p{M}

/// o200k's "upper-ish" class [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
const CASED_UPPER: u16 = UPPER | TITLE | MODIFIER | OTHER_LETTER | MARK;
/// o200k's "lower-ish" class [\p{Ll}\p{Lm}\p{Lo}\p{M}].
const CASED_LOWER: u16 = LOWER | MODIFIER | OTHER_LETTER | MARK;

const BLOCK: usize = 256;

/// Class flags of every code point, in deduplicated blocks of 256.
struct Classes {
    block_of: Vec<u16>,
    blocks: Vec<[u16; BLOCK]>,
}

fn classes() -> &'static Classes {
    static CLASSES: OnceLock<Classes> = OnceLock::new();
    CLASSES.get_or_init(|| {
        let mut flags = vec![0u16; 0x110000];
        for (pattern, flag) in [
            (r"\p{L}", LETTER),
            (r"\p{N}", NUMBER),
            (r"\s", SPACE),
            (r"\p{Lu}", UPPER),
            (r"\p{Ll}", LOWER),
            (r"\p{Lt}", TITLE),
            (r"\p{Lm}", MODIFIER),
            (r"\p{Lo}", OTHER_LETTER),
            (r"\p{M}", MARK),
        ] {
            let hir = regex_syntax::parse(pattern).expect("a valid class");
            let HirKind::Class(Class::Unicode(class)) = hir.kind() else {
                unreachable!("{pattern} is a Unicode class")
            };
            for range in class.ranges() {
                for slot in &mut flags[range.start() as usize..=range.end() as usize] {
                    *slot |= flag;
                }
            }
        }
        let mut block_of = Vec::with_capacity(flags.len() / BLOCK);
        let mut blocks: Vec<[u16; BLOCK]> = Vec::new();
        // Fx, not SipHash: hashing the 4,352 blocks was most of this table's
        // cost, paid by the first call that meets a non-ASCII character.
        let mut seen = FxHashMap::default();
        for chunk in flags.chunks(BLOCK) {
            let block: [u16; BLOCK] = chunk.try_into().expect("whole blocks");
            let index = *seen.entry(block).or_insert_with(|| {
                blocks.push(block);
                blocks.len() - 1
            });
            block_of.push(index as u16);
        }
        Classes { block_of, blocks }
    })
}

/// The classes of ASCII characters, written out (a test checks them against
/// the regex tables): most text is ASCII, and this needs no table lookup.
const ASCII: [u16; 128] = {
    let mut table = [0u16; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        table[c] = if b.is_ascii_uppercase() {
            LETTER | UPPER
        } else if b.is_ascii_lowercase() {
            LETTER | LOWER
        } else if b.is_ascii_digit() {
            NUMBER
        } else if matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') {
            SPACE
        } else {
            0
        };
        c += 1;
    }
    table
};

#[inline]
fn class_of(c: char) -> u16 {
    if (c as u32) < 128 {
        return ASCII[c as usize];
    }
    let table = classes();
    let cp = c as usize;
    table.blocks[table.block_of[cp / BLOCK] as usize][cp % BLOCK]
}

/// The kind of a character for unigram seed pieces: 0 a letter or mark
/// (`\p{L}`, `\p{M}`), 1 a number (`\p{N}`), 2 anything else.
pub fn char_kind(c: char) -> u8 {
    let class = class_of(c);
    if class & (LETTER | MARK) != 0 {
        0
    } else if class & NUMBER != 0 {
        1
    } else {
        2
    }
}

/// `\s`, as the regex engine defines it.
pub fn is_space(c: char) -> bool {
    class_of(c) & SPACE != 0
}

/// `\p{L}` or `\p{N}`, as the regex engine defines them.
pub fn is_letter_or_number(c: char) -> bool {
    class_of(c) & (LETTER | NUMBER) != 0
}

/// Neither \s, \p{L} nor \p{N}: the `[^\s\p{L}\p{N}]` of the patterns.
#[inline]
fn is_other(class: u16) -> bool {
    class & (SPACE | LETTER | NUMBER) == 0
}

/// The character at byte `i` and its length; `i` is a char boundary.
#[inline]
fn char_at(text: &str, i: usize) -> Option<(char, usize)> {
    let first = *text.as_bytes().get(i)?;
    if first < 0x80 {
        return Some((first as char, 1));
    }
    let c = text[i..].chars().next()?;
    Some((c, c.len_utf8()))
}

/// End of the longest run of characters from `i` whose class satisfies `keep`.
#[inline]
fn run_of(text: &str, mut i: usize, keep: impl Fn(char, u16) -> bool) -> usize {
    while let Some((c, len)) = char_at(text, i) {
        if !keep(c, class_of(c)) {
            break;
        }
        i += len;
    }
    i
}

/// A whitespace run from `i`: (end, start of its last char, start of its last \r or \n).
fn space_run(text: &str, i: usize) -> (usize, usize, Option<usize>) {
    let (mut end, mut last, mut newline) = (i, i, None);
    while let Some((c, len)) = char_at(text, end) {
        if class_of(c) & SPACE == 0 {
            break;
        }
        if c == '\r' || c == '\n' {
            newline = Some(end);
        }
        last = end;
        end += len;
    }
    (end, last, newline)
}

/// Length of a contraction suffix after an apostrophe at `i` ('s 't 're 've
/// 'm 'll 'd), including the apostrophe; case-insensitive per Unicode simple
/// case folding when `fold` (so `ſ` counts as `s`, `K`... never appears).
fn contraction(text: &str, i: usize, fold: bool) -> Option<usize> {
    let rest = text.get(i..)?.strip_prefix('\'')?;
    let mut chars = rest.chars();
    let norm = |c: Option<char>| -> Option<char> {
        let c = c?;
        Some(if !fold {
            c
        } else if c == 'ſ' {
            's'
        } else {
            c.to_ascii_lowercase()
        })
    };
    let (first, second) = (norm(chars.next()), norm(chars.next()));
    let first_len = rest.chars().next().map_or(0, char::len_utf8);
    match (first, second) {
        (Some('s' | 't' | 'm' | 'd'), _) => Some(1 + first_len),
        (Some('r'), Some('e')) | (Some('v'), Some('e')) | (Some('l'), Some('l')) => {
            let second_len = rest[first_len..].chars().next().map_or(0, char::len_utf8);
            Some(1 + first_len + second_len)
        }
        _ => None,
    }
}

/// `\p{N}{1,3}` at `i` (a digit is there).
fn up_to_three_digits(text: &str, i: usize) -> usize {
    let mut end = i;
    for _ in 0..3 {
        match char_at(text, end) {
            Some((d, n)) if class_of(d) & NUMBER != 0 => end += n,
            _ => break,
        }
    }
    end
}

/// ` ?[^\s\p{L}\p{N}]+` at `i`, then the run of characters `tail` accepts
/// (cl100k: newlines; o200k: newlines and slashes); None when no such run starts here.
fn punctuation_run(text: &str, i: usize, tail: impl Fn(char) -> bool) -> Option<usize> {
    let (c, len) = char_at(text, i)?;
    let start = match char_at(text, i + len) {
        Some((next, _)) if c == ' ' && is_other(class_of(next)) => i + len,
        _ if is_other(class_of(c)) => i,
        _ => return None,
    };
    let end = run_of(text, start, |_, k| is_other(k));
    Some(run_of(text, end, |ch, _| tail(ch)))
}

/// The builtin patterns that have a scanner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scanner {
    /// GPT-2's pattern and tiktoken's r50k/p50k form of it (they cut alike).
    Gpt2,
    Cl100k,
    O200k,
}

impl Scanner {
    /// Calls `piece` for every piece of `text`, in order.
    pub fn for_each_piece<'t>(self, text: &'t str, piece: impl FnMut(&'t str)) {
        match self {
            Scanner::Gpt2 => cut(text, piece, gpt2_end, Pattern::Gpt2),
            Scanner::Cl100k => cut(text, piece, cl100k_fast, Pattern::Cl100k),
            Scanner::O200k => cut(text, piece, o200k_fast, Pattern::O200k),
        }
    }
}

/// The pieces of `text`: in plain ASCII their starts are found 64 bytes at
/// a time (see [`scan_blocks`]; the next block begins at the last start of
/// a block), elsewhere each piece ends where `end_at` says.
#[inline(always)]
fn cut<'t>(
    text: &'t str,
    mut piece: impl FnMut(&'t str),
    end_at: impl Fn(&str, usize) -> usize,
    pattern: Pattern,
) {
    // A block cut short by a character the rules leave out is tried again
    // past that character; one with fewer starts than this, `skip` bytes on,
    // twice as far each time in a row (up to `MAX_SKIP`): text that is not
    // plain ASCII does not pay for a block at every piece.
    const WORTH_IT: u32 = 4;
    const MAX_SKIP: usize = 1 << 12;
    let bytes = text.as_bytes();
    let (mut i, mut next_block, mut skip) = (0, 0, 64);
    while i < text.len() {
        if i >= next_block {
            match scan_blocks::starts(pattern, bytes, i) {
                Some((starts, limit)) => {
                    let (block, worth_it) = (i, starts.count_ones() >= WORTH_IT);
                    next_block = match limit {
                        63 => 0,
                        _ if worth_it => block + limit as usize + 1,
                        _ => {
                            let at = block + skip;
                            skip = (skip * 2).min(MAX_SKIP);
                            at
                        }
                    };
                    if worth_it {
                        skip = 64;
                    }
                    let mut rest = starts & !1;
                    while rest != 0 {
                        let end = block + rest.trailing_zeros() as usize;
                        debug_assert_eq!(end, end_at(text, i), "at {i} of {text:?}");
                        piece(&text[i..end]);
                        i = end;
                        rest &= rest - 1;
                    }
                    // A whole block: the next one starts at its last start.
                    if limit == 63 && i > block {
                        continue;
                    }
                }
                None => next_block = usize::MAX,
            }
        }
        let end = end_at(text, i);
        debug_assert!(end > i && text.is_char_boundary(end));
        piece(&text[i..end]);
        i = end;
    }
}

// ASCII fast paths. Most text is ASCII, and for an ASCII character the
// class is one table lookup and the length one byte. Each fast path below
// follows its pattern exactly while every character it has to classify is
// ASCII; at the first non-ASCII character whose class matters it hands the
// whole piece to the general scanner above (`cl100k_end`, `o200k_end`),
// which stays the one place where the Unicode reasoning lives. Runs of a
// single class may instead go on with the general `run_of`, which is the same
// run. Tests check the fast paths against the regexes and the general scanners.

#[inline(always)]
fn ascii_class(b: u8) -> u16 {
    ASCII[(b & 0x7F) as usize]
}

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is ASCII and in `lo..=hi`
/// (`0 < lo <= hi < 0x80`), all eight bytes at once: adding to the low seven
/// bits of a byte never carries into the next.
#[inline(always)]
fn bytes_in(word: u64, lo: u8, hi: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let low7 = word & !HIGH_BITS;
    let at_least_lo = low7 + ONES * (0x80 - lo as u64);
    let above_hi = low7 + ONES * (0x7F - hi as u64);
    at_least_lo & !above_hi & !word & HIGH_BITS
}

/// The high bit of each ASCII letter in `word` (an upper-case letter with
/// the 0x20 bit set is its lower case; no other ASCII byte becomes a letter).
#[inline(always)]
fn ascii_letters(word: u64) -> u64 {
    bytes_in(word | 0x2020_2020_2020_2020, b'a', b'z')
}

/// The end of the run from `j` of the bytes `marks` marks (eight at a time:
/// a word ends without a loop exit per byte to mispredict) and `is_in`
/// accepts (the same bytes, one at a time, for the last seven).
#[inline(always)]
fn ascii_run(
    bytes: &[u8],
    mut j: usize,
    marks: impl Fn(u64) -> u64,
    is_in: impl Fn(&u8) -> bool,
) -> usize {
    while let Some(chunk) = bytes.get(j..j + 8) {
        let outside = !marks(u64::from_le_bytes(chunk.try_into().expect("8 bytes"))) & HIGH_BITS;
        if outside != 0 {
            return j + outside.trailing_zeros() as usize / 8;
        }
        j += 8;
    }
    while bytes.get(j).is_some_and(&is_in) {
        j += 1;
    }
    j
}

/// End of the run of letters (`\p{L}`) from `j`, over ASCII bytes first
/// and then, past a non-ASCII character, by the general `run_of`.
#[inline(always)]
fn letter_run(text: &str, j: usize) -> usize {
    let bytes = text.as_bytes();
    let j = ascii_run(bytes, j, ascii_letters, u8::is_ascii_alphabetic);
    match bytes.get(j) {
        Some(&b) if b >= 0x80 => run_of(text, j, |_, k| k & LETTER != 0),
        _ => j,
    }
}

/// End of the run of `[^\s\p{L}\p{N}]` from `j`.
#[inline(always)]
fn other_run(text: &str, mut j: usize) -> usize {
    let bytes = text.as_bytes();
    while let Some(&b) = bytes.get(j) {
        if b >= 0x80 {
            return run_of(text, j, |_, k| is_other(k));
        }
        if !is_other(ascii_class(b)) {
            break;
        }
        j += 1;
    }
    j
}

/// `\p{N}{1,3}` at `i`, where an ASCII digit is.
#[inline(always)]
fn digits_fast(text: &str, i: usize) -> usize {
    let bytes = text.as_bytes();
    let mut j = i + 1;
    while j < i + 3 {
        match bytes.get(j) {
            Some(b) if b.is_ascii_digit() => j += 1,
            Some(&b) if b >= 0x80 => return up_to_three_digits(text, i),
            _ => break,
        }
    }
    j
}

/// An ASCII whitespace run from `i`: (end, start of its last char, start of
/// its last \r or \n); None when a non-ASCII character follows it (it may be
/// whitespace too).
#[inline(always)]
fn ascii_space_run(bytes: &[u8], i: usize) -> Option<(usize, usize, Option<usize>)> {
    let (mut end, mut newline) = (i, None);
    while let Some(&b) = bytes.get(end) {
        if b >= 0x80 {
            return None;
        }
        if ascii_class(b) & SPACE == 0 {
            break;
        }
        if b == b'\r' || b == b'\n' {
            newline = Some(end);
        }
        end += 1;
    }
    Some((end, end - 1, newline))
}

/// The end of an ASCII ` ?[^\s\p{L}\p{N}]+` piece at `i` and the run of
/// `trailing` bytes after it (the two patterns differ only there), or None
/// when the piece at `i` is not punctuation. `class`: the ASCII class of the
/// byte at `i`; `next_class`: that of the byte after it, if there is one.
#[inline(always)]
fn punctuation_end(
    text: &str,
    i: usize,
    class: u16,
    next_class: Option<u16>,
    trailing: impl Fn(u8) -> bool,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let start = if bytes[i] == b' ' && next_class.is_some_and(is_other) {
        i + 1
    } else if is_other(class) {
        i
    } else {
        return None;
    };
    let mut end = other_run(text, start + 1);
    while bytes.get(end).is_some_and(|&t| trailing(t)) {
        end += 1;
    }
    Some(end)
}

/// [`cl100k_end`] with the ASCII fast path.
#[inline(always)]
fn cl100k_fast(text: &str, i: usize) -> usize {
    let bytes = text.as_bytes();
    let b = bytes[i];
    if b >= 0x80 {
        return cl100k_end(text, i);
    }
    let class = ascii_class(b);
    if class & LETTER != 0 {
        return letter_run(text, i + 1);
    }
    if class & NUMBER != 0 {
        return digits_fast(text, i);
    }
    if b == b'\'' {
        if let Some(n) = contraction(text, i, true) {
            return i + n;
        }
    }
    let next = bytes.get(i + 1).copied();
    if next.is_some_and(|n| n >= 0x80) {
        return cl100k_end(text, i);
    }
    let next_class = next.map_or(0, ascii_class);
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`
    if b != b'\r' && b != b'\n' && next_class & LETTER != 0 {
        return letter_run(text, i + 2);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    if let Some(end) = punctuation_end(text, i, class, next.map(|_| next_class), |t| {
        matches!(t, b'\r' | b'\n')
    }) {
        return end;
    }
    let Some((end, last, newline)) = ascii_space_run(bytes, i) else {
        return cl100k_end(text, i);
    };
    if end == text.len() {
        return end;
    }
    if let Some(at) = newline {
        return at + 1;
    }
    space_end(text, i, end, last)
}

/// [`o200k_end`] with the ASCII fast path.
#[inline(always)]
fn o200k_fast(text: &str, i: usize) -> usize {
    let bytes = text.as_bytes();
    let b = bytes[i];
    if b >= 0x80 {
        return o200k_end(text, i);
    }
    let class = ascii_class(b);
    // `P?U*W+C?|P?U+W*C?` over ASCII letters is: upper case, then lower
    // case, then a contraction (an optional ASCII prefix changes nothing,
    // since neither alternative can start at it).
    let upper_run = |j| {
        ascii_run(
            bytes,
            j,
            |w| bytes_in(w, b'A', b'Z'),
            u8::is_ascii_uppercase,
        )
    };
    let lower_run = |j| {
        ascii_run(
            bytes,
            j,
            |w| bytes_in(w, b'a', b'z'),
            u8::is_ascii_lowercase,
        )
    };
    let word = |s: usize| -> usize {
        // Most words end within eight bytes: both runs from one load.
        let j = match bytes.get(s..s + 8) {
            Some(chunk) => {
                let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                let not_upper = !bytes_in(w, b'A', b'Z') & HIGH_BITS;
                if not_upper == 0 {
                    lower_run(upper_run(s + 8))
                } else {
                    // The bytes from the first that is not upper case on.
                    let rest = u64::MAX << (not_upper.trailing_zeros() & !7);
                    let not_lower = !bytes_in(w, b'a', b'z') & HIGH_BITS & rest;
                    if not_lower == 0 {
                        lower_run(s + 8)
                    } else {
                        s + not_lower.trailing_zeros() as usize / 8
                    }
                }
            }
            None => lower_run(upper_run(s)),
        };
        match bytes.get(j) {
            Some(&n) if n >= 0x80 => o200k_end(text, i),
            Some(b'\'') => j + contraction(text, j, true).unwrap_or(0),
            _ => j,
        }
    };
    if class & LETTER != 0 {
        return word(i);
    }
    if class & NUMBER != 0 {
        return digits_fast(text, i);
    }
    let next = bytes.get(i + 1).copied();
    if next.is_some_and(|n| n >= 0x80) {
        return o200k_end(text, i);
    }
    let next_class = next.map_or(0, ascii_class);
    if b != b'\r' && b != b'\n' && next_class & LETTER != 0 {
        return word(i + 1);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    let trailing = |t| matches!(t, b'\r' | b'\n' | b'/');
    if let Some(end) = punctuation_end(text, i, class, next.map(|_| next_class), trailing) {
        return end;
    }
    let Some((end, last, newline)) = ascii_space_run(bytes, i) else {
        return o200k_end(text, i);
    };
    if let Some(at) = newline {
        return at + 1;
    }
    space_end(text, i, end, last)
}

/// Where a whitespace run at `i` ends as `\s+(?!\S)` would cut it, else the
/// single character (`\s`): whole run at the end of the text, all but its
/// last character before a non-space, one character when it is alone.
#[inline]
fn space_end(text: &str, i: usize, end: usize, last: usize) -> usize {
    if end == text.len() || last == i {
        end
    } else {
        last
    }
}

/// `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
fn gpt2_end(text: &str, i: usize) -> usize {
    let (c, len) = char_at(text, i).expect("i < len");
    if c == '\'' {
        if let Some(n) = contraction(text, i, false) {
            return i + n;
        }
    }
    let class = class_of(c);
    // ` ?X+`: a space joins the run that follows it.
    let (start, class) = match (c, char_at(text, i + len)) {
        (' ', Some((next, _))) if class_of(next) & SPACE == 0 => (i + len, class_of(next)),
        _ => (i, class),
    };
    if class & LETTER != 0 {
        return run_of(text, start, |_, k| k & LETTER != 0);
    }
    if class & NUMBER != 0 {
        return run_of(text, start, |_, k| k & NUMBER != 0);
    }
    if is_other(class) {
        return run_of(text, start, |_, k| is_other(k));
    }
    let (end, last, _) = space_run(text, i);
    space_end(text, i, end, last)
}

/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|
///  ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s`
fn cl100k_end(text: &str, i: usize) -> usize {
    let (c, len) = char_at(text, i).expect("i < len");
    if c == '\'' {
        if let Some(n) = contraction(text, i, true) {
            return i + n;
        }
    }
    let class = class_of(c);
    let letters = |from| run_of(text, from, |_, k| k & LETTER != 0);
    // `[^\r\n\p{L}\p{N}]?+\p{L}++`: one leading non-letter, non-digit, non-newline
    // character may join a word; possessive, so without the word it fails.
    if class & LETTER != 0 {
        return letters(i);
    }
    let prefixable = c != '\r' && c != '\n' && class & NUMBER == 0;
    if prefixable {
        if let Some((next, _)) = char_at(text, i + len) {
            if class_of(next) & LETTER != 0 {
                return letters(i + len);
            }
        }
    }
    // `\p{N}{1,3}+`
    if class & NUMBER != 0 {
        return up_to_three_digits(text, i);
    }
    // ` ?[^\s\p{L}\p{N}]++[\r\n]*+`
    if let Some(end) = punctuation_run(text, i, |ch| ch == '\r' || ch == '\n') {
        return end;
    }
    // Whitespace: `\s++$`, then `\s*[\r\n]` (up to the run's last newline),
    // then `\s+(?!\S)`, then `\s`.
    let (end, last, newline) = space_run(text, i);
    if end == text.len() {
        return end;
    }
    if let Some(at) = newline {
        return at + 1;
    }
    space_end(text, i, end, last)
}

/// The o200k pattern (seven alternatives; see the module docs of tiktoken):
/// `P?U*W+C?|P?U+W*C?|\p{N}{1,3}| ?O+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+` with
/// P = [^\r\n\p{L}\p{N}], U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}],
/// W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], O = [^\s\p{L}\p{N}], C = a contraction.
fn o200k_end(text: &str, i: usize) -> usize {
    let (c, len) = char_at(text, i).expect("i < len");
    let class = class_of(c);
    let prefixable = c != '\r' && c != '\n' && class & (LETTER | NUMBER) == 0;
    let with_contraction = |end: usize| end + contraction(text, end, true).unwrap_or(0);

    // `U*W+` from `s`: U* takes the longest run it can while W+ still finds a
    // character: either the W run right after the U run, or (backtracking)
    // the last character of the U run that is also in W.
    let upper_then_lower = |s: usize| -> Option<usize> {
        let mut end = s;
        let mut last_lower_in_run = None;
        while let Some((ch, n)) = char_at(text, end) {
            let k = class_of(ch);
            if k & CASED_UPPER == 0 {
                break;
            }
            if k & CASED_LOWER != 0 {
                last_lower_in_run = Some(end + n);
            }
            end += n;
        }
        match char_at(text, end) {
            Some((ch, _)) if class_of(ch) & CASED_LOWER != 0 => {
                Some(run_of(text, end, |_, k| k & CASED_LOWER != 0))
            }
            _ => last_lower_in_run,
        }
    };
    // `U+W*` from `s`.
    let upper_run_then_lower = |s: usize| -> Option<usize> {
        let end = run_of(text, s, |_, k| k & CASED_UPPER != 0);
        (end > s).then(|| run_of(text, end, |_, k| k & CASED_LOWER != 0))
    };
    // Each alternative tries the optional prefix P first, then without it.
    for alternative in [
        &upper_then_lower as &dyn Fn(usize) -> Option<usize>,
        &upper_run_then_lower,
    ] {
        if prefixable {
            if let Some(end) = alternative(i + len) {
                return with_contraction(end);
            }
        }
        if let Some(end) = alternative(i) {
            return with_contraction(end);
        }
    }
    // `\p{N}{1,3}`
    if class & NUMBER != 0 {
        return up_to_three_digits(text, i);
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n/]*`
    if let Some(end) = punctuation_run(text, i, |ch| matches!(ch, '\r' | '\n' | '/')) {
        return end;
    }
    // Whitespace: `\s*[\r\n]+` (up to the run's last newline), then
    // `\s+(?!\S)`, then `\s+`.
    let (end, last, newline) = space_run(text, i);
    if let Some(at) = newline {
        return at + 1;
    }
    space_end(text, i, end, last)
}

#[cfg(test)]
mod tests;

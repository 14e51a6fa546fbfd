//! Where the pieces of 64 bytes of plain ASCII start, found for all 64
//! positions at once with bit masks, for the builtin scanners (GPT-2,
//! cl100k, o200k; the rules below are cl100k's and o200k's, GPT-2's are
//! simpler: see [`gpt2_starts`]).
//!
//! Within ASCII prose and code, whether a piece starts at a position depends
//! only on the characters just before it (and, for a space, on the rest of
//! its run of whitespace). The rules below follow the patterns' alternatives (see the scalar
//! scanners in `scan`, which they must agree with):
//!
//! - a space starts a piece when it begins a run of whitespace, begins the
//!   spaces after the run's last newline (or after the newlines that end a
//!   punctuation piece), or is the last before a non-space;
//! - a letter starts one after a newline or a digit, after a lower-case
//!   letter when it is upper case (o200k only), and after punctuation that
//!   did not start its own piece (punctuation that follows punctuation or a
//!   space: otherwise the punctuation is the word's one-character prefix);
//! - a digit starts one after a non-digit, and every third digit of a run;
//! - a newline starts one after a letter or a digit (after punctuation it
//!   ends that punctuation's piece; after a newline it is the same run);
//! - punctuation starts one after a letter, a digit or a newline.
//!
//! Typographic punctuation (curly quotes, dashes, the ellipsis: three bytes
//! each in UTF-8) and the commonest CJK punctuation are punctuation like the
//! ASCII kind, found from their first byte; no piece starts inside them.
//! Kana and CJK ideographs (see [`wide_chars`]) are letters without case:
//! in o200k's words they belong to both runs, upper then lower, so an
//! upper-case letter right after one is left to the scalar code.
//!
//! The characters these rules do not cover end the stretch they can be
//! trusted for: other non-ASCII text (and the character before it), tabs
//! and the rarer whitespace (and the spaces before them), apostrophes that
//! may begin a contraction, and (o200k) a slash after a newline, which can
//! extend a punctuation piece; so do spaces that reach the block's end. The
//! scanner cuts the pieces between trusted starts and finds where the last
//! one ends with its scalar code.

/// Bit masks of the character classes of 64 bytes (bit `k`: byte `k`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Classes {
    non_ascii: u64,
    upper: u64,
    lower: u64,
    digit: u64,
    space: u64,
    newline: u64,
    /// Tab, vertical tab, form feed: whitespace the rules leave out.
    other_space: u64,
    apostrophe: u64,
    slash: u64,
    /// The first bytes of typographic punctuation (see [`punctuation_leads`]).
    punctuation_leads: u64,
    /// Letters without case: the kana and CJK ideographs of [`wide_chars`].
    caseless: u64,
}

/// Which builtin pattern the starts are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pattern {
    Gpt2,
    Cl100k,
    O200k,
}

/// The piece starts of `bytes[i..i + 64]` that the rules decide, given that a
/// piece starts at `i`: bit `k` is set when one starts at `i + k` (bit 0
/// always), and `limit` is how many of the 64 positions they were decided
/// for (starts at `k >= limit` are unknown). None when fewer than 64 bytes
/// are left.
#[inline]
pub(crate) fn starts(pattern: Pattern, bytes: &[u8], i: usize) -> Option<(u64, u32)> {
    let block: &[u8; 64] = bytes.get(i..i + 64)?.try_into().ok()?;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: this CPU has AVX2.
        return Some(unsafe { starts_avx2(pattern, block) });
    }
    Some(starts_with(
        pattern,
        block,
        classify,
        two_byte_letters,
        wide_chars,
    ))
}

/// [`starts`] 32 bytes to a vector instead of 16: fewer instructions a block.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn starts_avx2(pattern: Pattern, block: &[u8; 64]) -> (u64, u32) {
    starts_with(
        pattern,
        block,
        |b| classify_avx2(b),
        |b| two_byte_letters_avx2(b),
        |b| wide_chars_avx2(b),
    )
}

/// [`starts`] with the given classifiers: the two-byte letters are looked
/// for only in a block with non-ASCII bytes, the three-byte characters
/// only where some are left.
#[inline(always)]
fn starts_with(
    pattern: Pattern,
    block: &[u8; 64],
    classify: impl Fn(&[u8; 64]) -> Classes,
    two_byte_letters: impl Fn(&[u8; 64]) -> (u64, u64),
    wide_chars: impl Fn(&[u8; 64]) -> (u64, u64),
) -> (u64, u32) {
    let classes = classify(block);
    let mut letters = (0, 0);
    let mut wide = (0, 0);
    if classes.non_ascii != 0 {
        letters = two_byte_letters(block);
        if classes.non_ascii & !(letters.0 | letters.1) != 0 {
            wide = wide_chars(block);
        }
    }
    starts_of_classes(pattern, block, classes, letters, wide)
}

/// The starts, given the classes of the ASCII bytes, the two-byte letters
/// (upper, lower case) and the three-byte characters (letters, first bytes
/// of punctuation) of `block`.
#[inline(always)]
fn starts_of_classes(
    pattern: Pattern,
    block: &[u8; 64],
    mut classes: Classes,
    (upper, lower): (u64, u64),
    (caseless, wide_punctuation): (u64, u64),
) -> (u64, u32) {
    classes.upper |= upper;
    classes.lower |= lower;
    classes.caseless = caseless;
    let wide_punctuation_bytes = wide_punctuation | wide_punctuation << 1 | wide_punctuation << 2;
    classes.non_ascii &= !(upper | lower | caseless | wide_punctuation_bytes);
    classes.punctuation_leads = punctuation_leads(block, classes.non_ascii) | wide_punctuation;
    starts_of(pattern, classes)
}

/// The first bytes of the typographic punctuation in `block` whose three
/// bytes are all in it: – — ‘ ’ “ ” … (U+2013, U+2014, U+2018, U+2019,
/// U+201C, U+201D, U+2026, all `[^\s\p{L}\p{N}]`). Looked for among a few
/// non-ASCII bytes only: a block of non-Latin text is not worth it.
#[inline(always)]
fn punctuation_leads(block: &[u8; 64], non_ascii: u64) -> u64 {
    const FEW: u32 = 12;
    if non_ascii == 0 || non_ascii.count_ones() > FEW {
        return 0;
    }
    let (mut leads, mut rest) = (0, non_ascii);
    while rest != 0 {
        let k = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        if let [0xE2, 0x80, 0x93 | 0x94 | 0x98 | 0x99 | 0x9C | 0x9D | 0xA6, ..] = block[k..] {
            leads |= 1 << k;
            rest &= !(0b11 << (k + 1));
        }
    }
    leads
}

#[inline(always)]
fn starts_of(pattern: Pattern, c: Classes) -> (u64, u32) {
    // Bit k of `before(x)`: x at k - 1 (nothing before bit 0, whose piece
    // start is given).
    let before = |x: u64| x << 1;
    let leads = c.punctuation_leads;
    let inside_punctuation = before(leads) | before(before(leads));
    let unknown = c.non_ascii & !(leads | inside_punctuation);
    let letter = c.upper | c.lower | c.caseless;
    let whitespace = c.space | c.newline | c.other_space;
    // All three bytes of typographic punctuation count as punctuation.
    let other = !(unknown | letter | c.digit | whitespace);
    if pattern == Pattern::Gpt2 {
        return gpt2_starts(c, letter, whitespace, other, unknown);
    }
    let contraction = match pattern {
        // o200k's words end with an optional contraction.
        Pattern::O200k => c.apostrophe & before(letter),
        // cl100k's contractions are pieces of their own.
        _ => c.apostrophe,
    };
    let slash_in_tail = match pattern {
        Pattern::O200k => c.slash & before(c.newline),
        _ => 0,
    };
    // o200k: a caseless letter is in both of its word's runs (upper, then
    // lower), so whether an upper-case letter after one starts a piece
    // depends on what follows that letter's run.
    let upper_after_caseless = match pattern {
        Pattern::O200k => c.upper & before(c.caseless),
        _ => 0,
    };
    let (space_starts, undecided_spaces) = match c.space & whitespace >> 1 {
        // No space before whitespace (most prose): each space starts a piece.
        0 => (c.space, 0),
        _ => whitespace_runs(c, other, unknown),
    };
    let untrusted = unknown
        | unknown >> 1
        | c.other_space
        | undecided_spaces
        | contraction
        | slash_in_tail
        | upper_after_caseless
        | 1 << 63;
    let limit = untrusted.trailing_zeros();

    // Punctuation that is a word's prefix started its own piece; after
    // punctuation or a space it did not (bits 0 and 1 see nothing before).
    // A character of three bytes is absorbed or not as its first byte is.
    let absorbed_at = other & (before(other) | before(c.space)) & !inside_punctuation;
    let absorbed_punctuation =
        absorbed_at | before(absorbed_at & leads) | before(before(absorbed_at & leads));
    let mut letter_starts = before(c.newline) | before(c.digit) | before(absorbed_punctuation);
    if pattern == Pattern::O200k {
        letter_starts |= c.upper & before(c.lower);
    }
    let run_starts = c.digit & !before(c.digit);
    let mut digit_starts = run_starts;
    let in_threes = c.digit & before(c.digit) & before(before(c.digit));
    let mut third = run_starts;
    loop {
        third = (third << 3) & in_threes;
        if third == 0 {
            break;
        }
        digit_starts |= third;
    }
    let starts = 1
        | space_starts
        | letter & letter_starts
        | digit_starts
        | c.newline & before(letter | c.digit)
        | other & before(letter | c.digit | c.newline);
    // Bit 63 is never trusted, so `limit` < 64.
    (starts & ((1u64 << limit) - 1), limit)
}

/// The starts for GPT-2's pattern (`'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+|
/// ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`), which is simpler: a run of
/// letters, digits or punctuation starts a piece unless a space is its
/// prefix, and a run of whitespace (newlines too) starts one and, when it is
/// longer than one, so does its last character. Every apostrophe may begin
/// a contraction, at any position.
#[inline(always)]
fn gpt2_starts(c: Classes, letter: u64, whitespace: u64, other: u64, unknown: u64) -> (u64, u32) {
    let before = |x: u64| x << 1;
    // Only the last character of a whitespace run depends on what follows
    // it, and the character before non-ASCII text is not trusted.
    let untrusted = unknown | unknown >> 1 | c.apostrophe | 1 << 63;
    let limit = untrusted.trailing_zeros();
    let run_starts = |class: u64| class & !before(class) & !before(c.space);
    let starts = 1
        | run_starts(letter)
        | run_starts(c.digit)
        | run_starts(other)
        | whitespace & (!before(whitespace) | !(whitespace >> 1));
    (starts & ((1u64 << limit) - 1), limit)
}

/// The spaces that start a piece, and those that cannot be decided here
/// (the runs before a tab or non-ASCII text, or at the block's end, whose
/// whitespace may go on), for a block with runs of whitespace.
#[inline(never)]
fn whitespace_runs(c: Classes, other: u64, unknown: u64) -> (u64, u64) {
    let before = |x: u64| x << 1;
    let spaces_before_newline = runs_followed_by(c.space, c.newline);
    let undecided = runs_followed_by(c.space, c.other_space | unknown) | runs_to_the_end(c.space);
    // Newlines right after punctuation end its piece (`[\r\n]*`).
    let tail_newlines = fill_from_seeds(c.newline, c.newline & before(other));
    // A whitespace run with a newline is cut after its last newline
    // (`\s*[\r\n]+`), and its last space before a non-space starts the next
    // piece (`\s+(?!\S)`): a space starts a piece when it begins a run of
    // whitespace, begins the spaces after the run's last newline or after
    // the newlines of a punctuation piece, or is the last before a non-space.
    let run = c.space | c.newline;
    let starts = c.space
        & (!before(run)
            | before(c.newline) & !spaces_before_newline
            | before(tail_newlines)
            | !(run >> 1));
    (starts, undecided)
}

/// The bits of the runs of `runs` that a bit of `next` follows.
#[inline(always)]
fn runs_followed_by(runs: u64, next: u64) -> u64 {
    let reversed = runs.reverse_bits();
    fill_from_seeds(reversed, reversed & next.reverse_bits() << 1).reverse_bits()
}

/// The bits of the run of `runs` that reaches bit 63, if any.
#[inline(always)]
fn runs_to_the_end(runs: u64) -> u64 {
    let reversed = runs.reverse_bits();
    fill_from_seeds(reversed, reversed & 1).reverse_bits()
}

/// The bits of the runs of `runs` whose lowest bit is in `seeds`: adding a
/// run's lowest bit carries through the whole run. (Reversed, a run's
/// lowest bit is the one just before what follows it.)
#[inline(always)]
fn fill_from_seeds(runs: u64, seeds: u64) -> u64 {
    runs & !runs.wrapping_add(seeds)
}

/// The case of a letter of two bytes the blocks know (Latin-1's and the
/// basic Cyrillic ones, U+00C0-U+00FF but × and ÷, and U+0400-U+047F,
/// all `\p{Lu}` or `\p{Ll}`): Some(true) for upper case. Beside them a
/// rule treats both bytes as one letter's.
fn two_byte_letter_is_upper(lead: u8, second: u8) -> Option<bool> {
    if second & 0xc0 != 0x80 {
        return None;
    }
    match lead {
        0xc3 => match second {
            0x97 | 0xb7 => None,
            _ => Some(second <= 0x9e),
        },
        0xd0 => Some(second < 0xb0),
        // U+0460-U+047F alternate: upper case at even code points.
        0xd1 => Some(second >= 0xa0 && second.is_multiple_of(2)),
        _ => None,
    }
}

/// Both bytes of each letter of [`two_byte_letter_is_upper`] in `block`
/// (whose both bytes are in it), upper and lower case.
#[inline(always)]
fn two_byte_letters(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        two_byte_letters_sse2(block)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        two_byte_letters_bytes(block)
    }
}

/// One pair of bytes at a time: the definition, for other targets and the tests.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn two_byte_letters_bytes(block: &[u8; 64]) -> (u64, u64) {
    let (mut upper, mut lower) = (0, 0);
    for k in 0..63 {
        if let Some(is_upper) = two_byte_letter_is_upper(block[k], block[k + 1]) {
            let both = 0b11 << k;
            match is_upper {
                true => upper |= both,
                false => lower |= both,
            }
        }
    }
    (upper, lower)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn two_byte_letters_sse2(block: &[u8; 64]) -> (u64, u64) {
    let (eq, below, odd) = masks_sse2(block);
    two_byte_letters_of(eq, below, odd)
}

/// The masks of the bytes of `block` equal to a value and below one (in
/// signed order: 0x80..=0xFF before ASCII), and of the odd bytes, from
/// SSE2 compares, 16 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks_sse2(block: &[u8; 64]) -> (impl Fn(u8) -> u64, impl Fn(u8) -> u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of every x86_64 CPU, and the 16 bytes at
    // 16 * part are within the block.
    let parts =
        [0, 1, 2, 3].map(|part| unsafe { _mm_loadu_si128(block.as_ptr().add(16 * part).cast()) });
    let bits =
        |m: __m128i, part: usize| (unsafe { _mm_movemask_epi8(m) } as u32 as u64) << (16 * part);
    let eq = move |b: u8| {
        (0..4).fold(0, |m, k| {
            m | bits(
                unsafe { _mm_cmpeq_epi8(parts[k], _mm_set1_epi8(b as i8)) },
                k,
            )
        })
    };
    let below = move |b: u8| {
        (0..4).fold(0, |m, k| {
            m | bits(
                unsafe { _mm_cmplt_epi8(parts[k], _mm_set1_epi8(b as i8)) },
                k,
            )
        })
    };
    // Each byte's lowest bit moved to its top bit.
    let odd = (0..4).fold(0, |m, k| {
        m | bits(unsafe { _mm_slli_epi16(parts[k], 7) }, k)
    });
    (eq, below, odd)
}

/// [`masks_sse2`] from AVX2 compares, 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn masks_avx2(block: &[u8; 64]) -> (impl Fn(u8) -> u64, impl Fn(u8) -> u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: the 32 bytes at 32 * part are within the block.
    let parts =
        [0, 1].map(|part| unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * part).cast()) });
    let bits = |m: __m256i, part: usize| (_mm256_movemask_epi8(m) as u32 as u64) << (32 * part);
    let eq = move |b: u8| {
        bits(_mm256_cmpeq_epi8(parts[0], _mm256_set1_epi8(b as i8)), 0)
            | bits(_mm256_cmpeq_epi8(parts[1], _mm256_set1_epi8(b as i8)), 1)
    };
    let below = move |b: u8| {
        bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(b as i8), parts[0]), 0)
            | bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(b as i8), parts[1]), 1)
    };
    let odd = bits(_mm256_slli_epi16(parts[0], 7), 0) | bits(_mm256_slli_epi16(parts[1], 7), 1);
    (eq, below, odd)
}

/// [`two_byte_letters`] from the masks of the bytes equal to a value
/// (`eq`), below one (`below`, in signed order) and odd (`odd`).
#[inline(always)]
fn two_byte_letters_of(eq: impl Fn(u8) -> u64, below: impl Fn(u8) -> u64, odd: u64) -> (u64, u64) {
    // Signed: 0x80..=0xBF are the lowest values, so "below" needs no lower bound.
    let second = below(0xc0);
    let (below_9f, below_a0, below_b0) = (below(0x9f), below(0xa0), below(0xb0));
    let x97_b7 = eq(0x97) | eq(0xb7);
    // The second bytes of each lead.
    let (c3, d0, d1) = (
        eq(0xc3) << 1 & second,
        eq(0xd0) << 1 & second,
        eq(0xd1) << 1 & second,
    );
    let upper = (c3 & below_9f | d0 & below_b0 | d1 & !below_a0 & !odd) & !(c3 & x97_b7);
    let lower = (c3 & !below_9f | d0 & !below_b0 | d1 & (below_a0 | odd)) & !(c3 & x97_b7);
    (upper | upper >> 1, lower | lower >> 1)
}

/// The three-byte characters of `block` (whose three bytes are all in it)
/// that the rules know: letters without case (`\p{Lo}`, and the `\p{Lm}`
/// prolonged sound mark ー) of Hiragana, Katakana and the CJK ideographs
/// (U+3041–U+3096, U+30A1–U+30FA, U+30FC, U+4000–U+4DBF, U+4E00–U+9FFF),
/// all three bytes of each; and the first bytes of the commonest CJK
/// punctuation (、。「」『』【】 and the full-width ！（），：；？, all
/// `[^\s\p{L}\p{N}]`). Tests check each against the regex engine's classes.
#[inline(always)]
fn wide_chars(block: &[u8; 64]) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        wide_chars_sse2(block)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        wide_chars_bytes(block)
    }
}

/// [`wide_chars`] from the masks of the bytes equal to a value (`eq`) and
/// below one (`below`, in signed order: 0x80..=0xFF before ASCII).
#[inline(always)]
fn wide_chars_of(eq: impl Fn(u8) -> u64, below: impl Fn(u8) -> u64) -> (u64, u64) {
    // Bit k of `second(x)` / `third(x)`: x at k + 1 / k + 2.
    let (second, third) = (|x: u64| x >> 1, |x: u64| x >> 2);
    let continuation = below(0xc0);
    let between = |lo: u8, hi: u8| continuation & !below(lo) & below(hi + 1);
    let e3 = eq(0xe3);
    let kana = e3
        & (second(eq(0x81)) & third(between(0x81, 0xbf))
            | second(eq(0x82)) & third(between(0x80, 0x96) | between(0xa1, 0xbf))
            | second(eq(0x83)) & third(between(0x80, 0xba) | eq(0xbc)));
    // U+4DC0..U+4DFF (E4 B7 xx) are the Yijing hexagrams, symbols.
    let ideographs = (eq(0xe4) & second(continuation & !eq(0xb7))
        | !below(0xe5) & below(0xea) & second(continuation))
        & third(continuation);
    let punctuation = e3 & second(eq(0x80)) & third(eq(0x81) | eq(0x82) | between(0x8c, 0x91))
        | eq(0xef)
            & second(eq(0xbc))
            & third(eq(0x81) | eq(0x88) | eq(0x89) | eq(0x8c) | eq(0x9a) | eq(0x9b) | eq(0x9f));
    let letters = kana | ideographs;
    (letters | letters << 1 | letters << 2, punctuation)
}

/// One byte at a time: the definition's masks, for other targets and the tests.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn wide_chars_bytes(block: &[u8; 64]) -> (u64, u64) {
    let mask =
        |hit: &dyn Fn(u8) -> bool| (0..64).fold(0u64, |m, k| m | (hit(block[k]) as u64) << k);
    wide_chars_of(|b| mask(&|x| x == b), |b| mask(&|x| (x as i8) < (b as i8)))
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn wide_chars_sse2(block: &[u8; 64]) -> (u64, u64) {
    let (eq, below, _) = masks_sse2(block);
    wide_chars_of(eq, below)
}

/// [`wide_chars_sse2`] 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn wide_chars_avx2(block: &[u8; 64]) -> (u64, u64) {
    let (eq, below, _) = masks_avx2(block);
    wide_chars_of(eq, below)
}

/// [`two_byte_letters_sse2`] 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn two_byte_letters_avx2(block: &[u8; 64]) -> (u64, u64) {
    let (eq, below, odd) = masks_avx2(block);
    two_byte_letters_of(eq, below, odd)
}

#[inline(always)]
fn classify(block: &[u8; 64]) -> Classes {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of every x86_64 CPU.
        unsafe { classify_sse2(block) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        classify_bytes(block)
    }
}

/// One byte at a time: the definition, for other targets and the tests.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn classify_bytes(block: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (k, &b) in block.iter().enumerate() {
        let bit = 1u64 << k;
        let mask = match b {
            0x80.. => &mut c.non_ascii,
            b'A'..=b'Z' => &mut c.upper,
            b'a'..=b'z' => &mut c.lower,
            b'0'..=b'9' => &mut c.digit,
            b' ' => &mut c.space,
            b'\n' | b'\r' => &mut c.newline,
            b'\t' | 0x0B | 0x0C => &mut c.other_space,
            b'\'' => &mut c.apostrophe,
            b'/' => &mut c.slash,
            _ => continue,
        };
        *mask |= bit;
    }
    c
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn classify_sse2(block: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    for part in 0..4 {
        let v = _mm_loadu_si128(block.as_ptr().add(16 * part).cast());
        let is = |b: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8));
        // Signed compares: non-ASCII bytes are negative, below every range.
        let within = |lo: u8, hi: u8| {
            _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(lo as i8 - 1)),
                _mm_cmplt_epi8(v, _mm_set1_epi8(hi as i8 + 1)),
            )
        };
        let bits = |m: __m128i| (_mm_movemask_epi8(m) as u32 as u64) << (16 * part);
        c.non_ascii |= bits(v);
        c.upper |= bits(within(b'A', b'Z'));
        c.lower |= bits(within(b'a', b'z'));
        c.digit |= bits(within(b'0', b'9'));
        c.space |= bits(is(b' '));
        c.newline |= bits(_mm_or_si128(is(b'\n'), is(b'\r')));
        c.other_space |= bits(_mm_or_si128(is(b'\t'), _mm_or_si128(is(0x0B), is(0x0C))));
        c.apostrophe |= bits(is(b'\''));
        c.slash |= bits(is(b'/'));
    }
    c
}

/// [`classify_sse2`] 32 bytes at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn classify_avx2(block: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    for part in 0..2 {
        // SAFETY: the 32 bytes at 32 * part are within the block.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * part).cast()) };
        let is = |b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
        let within = |lo: u8, hi: u8| {
            _mm256_and_si256(
                _mm256_cmpgt_epi8(v, _mm256_set1_epi8(lo as i8 - 1)),
                _mm256_cmpgt_epi8(_mm256_set1_epi8(hi as i8 + 1), v),
            )
        };
        let bits = |m: __m256i| (_mm256_movemask_epi8(m) as u32 as u64) << (32 * part);
        c.non_ascii |= bits(v);
        c.upper |= bits(within(b'A', b'Z'));
        c.lower |= bits(within(b'a', b'z'));
        c.digit |= bits(within(b'0', b'9'));
        c.space |= bits(is(b' '));
        c.newline |= bits(_mm256_or_si256(is(b'\n'), is(b'\r')));
        c.other_space |= bits(_mm256_or_si256(
            is(b'\t'),
            _mm256_or_si256(is(0x0B), is(0x0C)),
        ));
        c.apostrophe |= bits(is(b'\''));
        c.slash |= bits(is(b'/'));
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_classes_equal_the_bytes_classes() {
        let mut rng = crate::util::rng::Rng::new(11);
        for round in 0..2000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                const EDGES: &[u8] = b"@AZ[`az{/09:' \t\n\r\x0b\x0c\x0e\x1f\x7f\x80\xff";
                let r = rng.next_u64();
                // Half the rounds near the ranges' edges, half anywhere.
                *b = match round % 2 {
                    0 => EDGES[(r % EDGES.len() as u64) as usize],
                    _ => r as u8,
                };
            }
            assert_eq!(classify(&block), classify_bytes(&block), "{block:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2.
                let avx2 = unsafe { classify_avx2(&block) };
                assert_eq!(avx2, classify_bytes(&block), "{block:?}");
            }
        }
    }

    #[test]
    fn two_byte_letters_are_the_letters_of_their_case() {
        for c in (0x80..0x800).filter_map(char::from_u32) {
            let mut bytes = [0; 2];
            c.encode_utf8(&mut bytes);
            if let Some(is_upper) = two_byte_letter_is_upper(bytes[0], bytes[1]) {
                assert!(c.is_alphabetic(), "{c:?}");
                assert_eq!(c.is_uppercase(), is_upper, "{c:?}");
                assert_eq!(c.is_lowercase(), !is_upper, "{c:?}");
            }
        }
        let known = (0x80..0x800)
            .filter_map(char::from_u32)
            .filter(|c| {
                let mut bytes = [0; 2];
                c.encode_utf8(&mut bytes);
                two_byte_letter_is_upper(bytes[0], bytes[1]).is_some()
            })
            .count();
        assert_eq!(known, 62 + 128);
        let mut rng = crate::util::rng::Rng::new(3);
        for round in 0..4000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                const EDGES: &[u8] =
                    b"a \x7f\x80\x97\x9e\x9f\xa0\xa1\xaf\xb0\xb7\xbf\xc0\xc2\xc3\xd0\xd1\xd2";
                let r = rng.next_u64();
                *b = match round % 2 {
                    0 => EDGES[(r % EDGES.len() as u64) as usize],
                    _ => r as u8,
                };
            }
            assert_eq!(
                two_byte_letters(&block),
                two_byte_letters_bytes(&block),
                "{block:?}"
            );
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2.
                let avx2 = unsafe { two_byte_letters_avx2(&block) };
                assert_eq!(avx2, two_byte_letters_bytes(&block), "{block:?}");
            }
        }
    }

    #[test]
    fn wide_chars_are_caseless_letters_and_punctuation() {
        let caseless = fancy_regex::Regex::new(r"^[\p{Lo}\p{Lm}]$").unwrap();
        let punctuation = fancy_regex::Regex::new(r"^[^\s\p{L}\p{N}]$").unwrap();
        let (mut letters, mut marks) = (0, 0);
        for c in (0x800..0x10000).filter_map(char::from_u32) {
            let mut block = [b' '; 64];
            c.encode_utf8(&mut block[5..]);
            let (letter, lead) = wide_chars_bytes(&block);
            let text = c.to_string();
            if letter != 0 {
                assert_eq!(letter, 0b111 << 5, "{c:?}");
                assert!(caseless.is_match(&text).unwrap(), "{c:?}");
                letters += 1;
            }
            if lead != 0 {
                assert_eq!(lead, 1 << 5, "{c:?}");
                assert!(punctuation.is_match(&text).unwrap(), "{c:?}");
                marks += 1;
            }
            // Cut by the block's end: unknown.
            let mut block = [b' '; 64];
            block[62..].copy_from_slice(&text.as_bytes()[..2]);
            assert_eq!(wide_chars_bytes(&block), (0, 0), "{c:?}");
        }
        // The ranges of the docs: kana, ー, CJK extension A and the unified ideographs.
        assert_eq!(letters, 86 + 90 + 1 + 3520 + 20992);
        assert_eq!(marks, 15);
    }

    #[test]
    fn vector_wide_chars_equal_the_bytes_ones() {
        const EDGES: &[u8] = b"a \x80\x81\x82\x83\x88\x89\x8b\x8c\x91\x92\x96\x97\x9a\x9b\x9f\xa0\xa1\xb6\xb7\xb8\xba\xbb\xbc\xbd\xbf\xc0\xe3\xe4\xe5\xe9\xea\xef";
        let mut rng = crate::util::rng::Rng::new(5);
        for round in 0..4000 {
            let mut block = [0u8; 64];
            for b in block.iter_mut() {
                let r = rng.next_u64();
                *b = match round % 2 {
                    0 => EDGES[(r % EDGES.len() as u64) as usize],
                    _ => r as u8,
                };
            }
            let want = wide_chars_bytes(&block);
            assert_eq!(wide_chars(&block), want, "{block:?}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: this CPU has AVX2.
                assert_eq!(unsafe { wide_chars_avx2(&block) }, want, "{block:?}");
            }
        }
    }
}

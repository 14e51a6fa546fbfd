//! SentencePiece's normalizer (normalizer.cc of sentencepiece 0.2.x) and
//! HuggingFace tokenizers' reading of the same precompiled charsmap.
//!
//! The charsmap blob: a 4-byte little-endian size, a darts-clone
//! double-array trie of that many bytes (u32 units, little endian), then the
//! replacement strings, each ended by a NUL byte. The trie maps UTF-8 byte
//! strings to the offset of their replacement. A blob is checked when it is
//! read, so normalizing never fails: tokenizers' reading ([`Charsmap::new`])
//! checks every unit and replacement reachable from the root;
//! sentencepiece's ([`Charsmap::new_sentencepiece`], the one of a `.model`)
//! also refuses every blob sentencepiece 0.2.x refuses ("precompiled_charsmap
//! is invalid"), which checks every unit of the trie, reachable or not.

use unicode_segmentation::UnicodeSegmentation;

use crate::error::{Error, Result};
use crate::util::double_array::DoubleArray;

/// What an escaped space is written as (U+2581).
pub const SPACE_SYMBOL: &str = "\u{2581}";

fn corrupt(problem: String) -> Error {
    Error::InvalidCharsmap(problem)
}

#[inline]
fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}
#[inline]
fn value(unit: u32) -> u32 {
    unit & 0x7FFF_FFFF
}
/// Whether `unit` holds a value (a replacement offset), not a node.
#[inline]
fn is_value(unit: u32) -> bool {
    unit & 0x8000_0000 != 0
}
#[inline]
fn label(unit: u32) -> u32 {
    unit & 0x8000_00FF
}
#[inline]
fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

/// A precompiled charsmap: the darts-clone trie and the replacement strings.
#[derive(Clone, Debug)]
pub(crate) struct Charsmap {
    units: Vec<u32>,
    strings: Vec<u8>,
}

/// Where unit `index` of the trie starts in the charsmap blob.
#[inline]
fn unit_byte(index: usize) -> usize {
    4 + 4 * index
}

impl Charsmap {
    /// Reads and checks a blob as HuggingFace tokenizers reads it (non-empty;
    /// an empty blob means no rules): the layout, then every state reachable
    /// from the root ([`Self::check`]).
    pub(crate) fn new(blob: &[u8]) -> Result<Self> {
        let charsmap = Self::split(blob)?;
        charsmap.check()?;
        Ok(charsmap)
    }

    /// Reads and checks a blob as sentencepiece 0.2.x's Normalizer::Init
    /// does (DecodePrecompiledCharsMap, then darts-clone's validate over the
    /// whole trie, see [`Self::check_sentencepiece`]), refusing each blob it
    /// refuses; then [`Self::check`] as [`Self::new`], which only adds that a
    /// reachable replacement must be UTF-8 (sentencepiece copies its bytes;
    /// the text normalized here is a `str`).
    pub(crate) fn new_sentencepiece(blob: &[u8]) -> Result<Self> {
        let charsmap = Self::split(blob)?;
        charsmap.check_sentencepiece()?;
        charsmap.check()?;
        Ok(charsmap)
    }

    /// The trie and the strings of a blob: its size field must be a
    /// positive multiple of 4 that fits the blob.
    fn split(blob: &[u8]) -> Result<Self> {
        if blob.len() <= 4 {
            return Err(corrupt(format!("a charsmap of {} bytes", blob.len())));
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if !trie_size.is_multiple_of(4) || 4 + trie_size > blob.len() || trie_size == 0 {
            return Err(corrupt(format!(
                "trie size {trie_size} does not fit a blob of {} bytes",
                blob.len()
            )));
        }
        let units = blob[4..4 + trie_size]
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Charsmap {
            units,
            strings: blob[4 + trie_size..].to_vec(),
        })
    }

    /// What sentencepiece 0.2.x checks of a charsmap beyond [`Self::split`],
    /// over the whole blob, reachable from the root or not:
    ///
    /// * the trie is a positive multiple of 1024 bytes (256 units), and
    ///   replacement strings follow it, the last of their bytes a NUL;
    /// * the root (unit 0) has no label, no leaf and a nonzero offset;
    /// * each other unit is either a value (its top bit set), the offset of
    ///   a replacement inside the strings, or a node, whose 256 children
    ///   (`unit ^ offset ^ byte`) are all inside the trie and whose leaf, if
    ///   it has one, is a value.
    ///
    /// So every replacement starts inside the strings and ends at a NUL
    /// inside them.
    fn check_sentencepiece(&self) -> Result<()> {
        let n = self.units.len();
        let trie_size = 4 * n;
        if trie_size < 1024 || !trie_size.is_multiple_of(1024) {
            return Err(corrupt(format!(
                "trie size {trie_size} (at byte 0 of the charsmap) is not a positive multiple \
                 of 1024 bytes (256 units)"
            )));
        }
        let strings_at = 4 + trie_size;
        let Some(&last) = self.strings.last() else {
            return Err(corrupt(format!(
                "the trie fills the charsmap (trie size {trie_size}, at byte 0): no replacement \
                 strings follow it at byte {strings_at}"
            )));
        };
        if last != 0 {
            return Err(corrupt(format!(
                "the replacement strings (bytes {strings_at} to {} of the charsmap) do not end \
                 with a NUL byte: the last one is {last:#04x}",
                strings_at + self.strings.len() - 1
            )));
        }
        // The 256 children of unit `index`, all in the trie; their base.
        let children = |index: usize, unit: u32| -> Result<usize> {
            let base = index ^ offset(unit);
            if base | 0xFF >= n {
                return Err(corrupt(format!(
                    "the trie refers to unit {} but has {n} units (unit {index}, {unit:#010x} \
                     at byte {} of the charsmap, puts its children at units {} to {})",
                    base | 0xFF,
                    unit_byte(index),
                    base & !0xFF,
                    base | 0xFF
                )));
            }
            Ok(base)
        };
        let root = self.units[0];
        children(0, root)?;
        if label(root) != 0 || has_leaf(root) || offset(root) == 0 {
            return Err(corrupt(format!(
                "the root (unit 0, {root:#010x} at byte 4 of the charsmap) must have no label, \
                 no leaf and a nonzero offset"
            )));
        }
        let strings = self.strings.len();
        for (index, &unit) in self.units.iter().enumerate().skip(1) {
            if is_value(unit) {
                let at = value(unit) as usize;
                if at >= strings {
                    return Err(corrupt(format!(
                        "unit {index} ({unit:#010x} at byte {} of the charsmap) holds the \
                         replacement offset {at}, beyond the {strings} bytes of strings",
                        unit_byte(index)
                    )));
                }
            } else {
                let base = children(index, unit)?;
                let leaf = self.units[base];
                if has_leaf(unit) && !is_value(leaf) {
                    return Err(corrupt(format!(
                        "unit {index} ({unit:#010x} at byte {} of the charsmap) has a leaf at \
                         unit {base} ({leaf:#010x} at byte {}), which holds no replacement offset \
                         (its top bit is clear)",
                        unit_byte(index),
                        unit_byte(base)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Walks every state reachable from the root: each unit a byte can reach
    /// must exist, and each replacement must be in range and UTF-8.
    fn check(&self) -> Result<()> {
        let n = self.units.len();
        let root = offset(self.units[0]);
        if root >= n {
            return Err(corrupt(format!(
                "the trie refers to unit {root} but has {n} units"
            )));
        }
        let mut seen = vec![false; n];
        let mut stack = vec![root];
        seen[root] = true;
        while let Some(position) = stack.pop() {
            for byte in 0..=255usize {
                let child = position ^ byte;
                let Some(&unit) = self.units.get(child) else {
                    return Err(corrupt(format!(
                        "the trie refers to unit {child} but has {n} units"
                    )));
                };
                if label(unit) != byte as u32 {
                    continue;
                }
                let next = child ^ offset(unit);
                let Some(&next_unit) = self.units.get(next) else {
                    return Err(corrupt(format!(
                        "the trie refers to unit {next} but has {n} units"
                    )));
                };
                if has_leaf(unit) {
                    self.replacement_checked(value(next_unit))?;
                }
                if !seen[next] {
                    seen[next] = true;
                    stack.push(next);
                }
            }
        }
        Ok(())
    }

    fn replacement_checked(&self, at: u32) -> Result<&[u8]> {
        let at = at as usize;
        if at > self.strings.len() {
            return Err(corrupt(format!(
                "replacement offset {at} beyond the {} bytes of strings",
                self.strings.len()
            )));
        }
        let rest = &self.strings[at..];
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        let text = &rest[..end];
        std::str::from_utf8(text)
            .map_err(|e| corrupt(format!("the replacement string at {at} is not UTF-8: {e}")))?;
        Ok(text)
    }

    #[inline]
    fn replacement(&self, at: u32) -> &[u8] {
        let rest = self.strings.get(at as usize..).unwrap_or(&[]);
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        &rest[..end]
    }

    /// Calls `found(length, value)` for every key that is a prefix of `key`, shortest first;
    /// stops when it returns false.
    #[inline]
    fn prefixes(&self, key: &[u8], mut found: impl FnMut(usize, u32) -> bool) {
        let units = &self.units;
        let mut position = offset(units[0]);
        for (index, &byte) in key.iter().enumerate() {
            position ^= byte as usize;
            let Some(&unit) = units.get(position) else {
                return;
            };
            if label(unit) != byte as u32 {
                return;
            }
            position ^= offset(unit);
            if has_leaf(unit) {
                let Some(&v) = units.get(position) else {
                    return;
                };
                if !found(index + 1, value(v)) {
                    return;
                }
            }
        }
    }

    /// (replacement, bytes consumed) of the longest rule at the start of `data`.
    #[inline]
    pub(crate) fn longest_match(&self, data: &[u8]) -> Option<(&[u8], usize)> {
        let mut best = None;
        self.prefixes(data, |length, v| {
            best = Some((length, v));
            true
        });
        best.map(|(length, v)| (self.replacement(v), length))
    }

    /// The replacement of the shortest rule that is a prefix of `data` (up to its first NUL).
    #[inline]
    pub(crate) fn shortest_match(&self, data: &[u8]) -> Option<&[u8]> {
        let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
        let mut best = None;
        self.prefixes(&data[..end], |_, v| {
            best = Some(v);
            false
        });
        best.map(|v| self.replacement(v))
    }
}

/// SentencePiece's normalizer: the charsmap (longest rule at each position)
/// and the whitespace rules.
#[derive(Clone, Debug)]
pub struct SpNormalizer {
    charsmap: Option<Charsmap>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
}

impl SpNormalizer {
    /// `charsmap`: the precompiled charsmap blob, empty for no rules. A
    /// corrupt blob (each one sentencepiece refuses, see
    /// `Charsmap::new_sentencepiece`) is an error here; normalizing never
    /// fails.
    pub fn new(
        charsmap: &[u8],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
    ) -> Result<Self> {
        let charsmap = if charsmap.is_empty() {
            None
        } else {
            Some(Charsmap::new_sentencepiece(charsmap)?)
        };
        Ok(SpNormalizer {
            charsmap,
            add_dummy_prefix,
            remove_extra_whitespaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
        })
    }

    /// `text` as sentencepiece's Normalizer::Normalize returns it (no user-defined pieces).
    pub fn normalize(&self, text: &str) -> String {
        self.normalize_with(text, None)
    }

    /// NormalizePrefix: (normalized bytes, input bytes consumed) at the start of `data`.
    #[inline]
    fn prefix<'a>(&'a self, data: &'a [u8], user: Option<&DoubleArray>) -> (&'a [u8], usize) {
        if let Some(user) = user {
            let length = user.longest_prefix(data);
            if length > 0 {
                return (&data[..length], length);
            }
        }
        if let Some(charsmap) = &self.charsmap {
            if let Some(found) = charsmap.longest_match(data) {
                return found;
            }
        }
        // A charsmap rule may end inside a character, leaving `data` at a
        // continuation byte: sentencepiece writes U+FFFD and moves one byte.
        match utf8_char_length(data) {
            Some(length) => (&data[..length], length),
            None => (REPLACEMENT_CHARACTER.as_bytes(), 1),
        }
    }

    /// `text` normalized; `user`: the user-defined pieces, copied as they are.
    pub(crate) fn normalize_with(&self, text: &str, user: Option<&DoubleArray>) -> String {
        let data = text.as_bytes();
        if data.is_empty() {
            return String::new();
        }
        let remove_extra = self.remove_extra_whitespaces;
        let space: &[u8] = if self.escape_whitespaces {
            SPACE_SYMBOL.as_bytes()
        } else {
            b" "
        };
        let mut position = 0;
        if remove_extra {
            while position < data.len() {
                let (piece, consumed) = self.prefix(&data[position..], user);
                if piece != b" " {
                    break;
                }
                position += consumed;
            }
        }
        if position == data.len() {
            return String::new();
        }
        let mut out: Vec<u8> = Vec::with_capacity(data.len() + data.len() / 4 + 4);
        if self.add_dummy_prefix && !self.treat_whitespace_as_suffix {
            out.extend_from_slice(space);
        }
        let mut is_previous_space = remove_extra;
        while position < data.len() {
            let (mut piece, consumed) = self.prefix(&data[position..], user);
            if is_previous_space {
                let skip = piece.iter().take_while(|&&b| b == b' ').count();
                piece = &piece[skip..];
            }
            if !piece.is_empty() {
                if self.escape_whitespaces {
                    for &byte in piece {
                        if byte == b' ' {
                            out.extend_from_slice(SPACE_SYMBOL.as_bytes());
                        } else {
                            out.push(byte);
                        }
                    }
                } else {
                    out.extend_from_slice(piece);
                }
                is_previous_space = piece.last() == Some(&b' ');
            }
            position += consumed;
            if !remove_extra {
                is_previous_space = false;
            }
        }
        if remove_extra {
            while out.ends_with(space) {
                out.truncate(out.len() - space.len());
            }
        }
        if self.add_dummy_prefix && self.treat_whitespace_as_suffix {
            out.extend_from_slice(space);
        }
        // Every part is whole UTF-8: characters of `text`, checked replacements,
        // whole user-defined pieces, and removals of whole ASCII spaces / `▁`.
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// What a byte that does not start a valid character becomes.
const REPLACEMENT_CHARACTER: &str = "\u{FFFD}";

/// The length of the valid UTF-8 character at the start of `data` (non-empty),
/// or None (sentencepiece's DecodeUTF8, as `utf8_char_length` of
/// `bytepair.reference.normalize`): never longer than `data`.
#[inline]
fn utf8_char_length(data: &[u8]) -> Option<usize> {
    let length = match data[0] {
        0x00..=0x7F => return Some(1),
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => return None,
    };
    // from_utf8 accepts exactly the shortest-form scalar values DecodeUTF8 accepts.
    let bytes = data.get(..length)?;
    std::str::from_utf8(bytes).ok().map(|_| length)
}

/// `text` through HuggingFace tokenizers' `Precompiled` normalizer: per
/// extended grapheme cluster, a cluster shorter than 6 bytes that starts with
/// a rule is replaced whole by the shortest such rule's replacement;
/// otherwise each character is replaced by its shortest rule, or kept.
pub(crate) fn apply_charsmap_tokenizers(charsmap: &Charsmap, text: &str, out: &mut String) {
    out.reserve(text.len());
    for cluster in text.graphemes(true) {
        if cluster.len() < 6 {
            if let Some(replacement) = charsmap.shortest_match(cluster.as_bytes()) {
                push_checked(out, replacement);
                continue;
            }
            if cluster.len() == 1 {
                out.push_str(cluster);
                continue;
            }
        }
        for (at, ch) in cluster.char_indices() {
            let bytes = &cluster.as_bytes()[at..at + ch.len_utf8()];
            match charsmap.shortest_match(bytes) {
                Some(replacement) => push_checked(out, replacement),
                None => out.push(ch),
            }
        }
    }
}

#[inline]
fn push_checked(out: &mut String, replacement: &[u8]) {
    // Reachable replacements were checked to be UTF-8 when the charsmap was read.
    match std::str::from_utf8(replacement) {
        Ok(s) => out.push_str(s),
        Err(_) => out.push_str(&String::from_utf8_lossy(replacement)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A darts-clone charsmap with the one rule `from` (one byte) -> `to`:
    /// the root at unit 256, its child for `from` a leaf pointing at unit 1,
    /// which holds the replacement offset 0.
    fn one_byte_rule(from: u8, to: &str) -> Vec<u8> {
        let mut units = vec![0u32; 512];
        units[0] = 256 << 10;
        units[256] = 1; // label 1: byte 0 does not step from the root
        let child = 256 ^ from as usize;
        units[child] = ((child as u32 ^ 1) << 10) | (1 << 8) | from as u32;
        units[1] = 0x8000_0000;
        let mut blob = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for unit in units {
            blob.extend_from_slice(&unit.to_le_bytes());
        }
        blob.extend_from_slice(to.as_bytes());
        blob.push(0);
        blob
    }

    #[test]
    fn a_rule_ending_inside_a_character_leaves_replacement_characters() {
        let blob = one_byte_rule(0xC3, "x");
        let n = SpNormalizer::new(&blob, false, false, false, false).unwrap();
        // "é" is C3 A9: C3 -> "x", then the lone continuation byte -> U+FFFD.
        assert_eq!(n.normalize("é"), "x\u{FFFD}");
        assert_eq!(n.normalize("aé"), "ax\u{FFFD}");
        // With four or more bytes after it, each continuation byte alone.
        assert_eq!(n.normalize("éé€"), "x\u{FFFD}x\u{FFFD}€");
        assert_eq!(n.normalize("ébcd"), "x\u{FFFD}bcd");
        let spaced = SpNormalizer::new(&blob, true, true, true, false).unwrap();
        assert_eq!(spaced.normalize(" é a"), "▁x\u{FFFD}▁a");
    }

    /// `blob` with unit `index` of its trie set to `unit`.
    fn with_unit(blob: &[u8], index: usize, unit: u32) -> Vec<u8> {
        let mut blob = blob.to_vec();
        blob[4 + 4 * index..8 + 4 * index].copy_from_slice(&unit.to_le_bytes());
        blob
    }

    /// The error of a `.model`'s normalizer with charsmap `blob`.
    fn refusal(blob: &[u8]) -> String {
        match SpNormalizer::new(blob, true, true, true, false) {
            Ok(_) => panic!("a charsmap sentencepiece refuses was read"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_unit_whose_top_bit_flips_is_refused_not_skipped() {
        // As the flip of bit 31 of a unit of sp_test_model.model's charsmap
        // (file byte 21320): the unit of the rule for "a" turns into a value,
        // whose label no byte matches.
        let blob = one_byte_rule(b'a', "b");
        let child = 256 ^ b'a' as usize;
        let mut flipped = blob.clone();
        flipped[4 + 4 * child + 3] |= 0x80;
        // Walking from the root finds nothing wrong: the rule is just gone.
        let walked = Charsmap::new(&flipped).unwrap();
        assert_eq!(walked.longest_match(b"a"), None);
        assert_eq!(
            refusal(&flipped),
            "corrupt precompiled charsmap: unit 353 (0x80058161 at byte 1416 of the charsmap) \
             holds the replacement offset 360801, beyond the 2 bytes of strings"
        );
        let n = SpNormalizer::new(&blob, false, false, false, false).unwrap();
        assert_eq!(n.normalize("cab"), "cbb");
    }

    #[test]
    fn every_unit_is_checked_as_sentencepiece_checks_it_reachable_or_not() {
        let blob = one_byte_rule(b'a', "b");
        // Unit 400 is no child of any state (nothing has it at its label).
        let unreachable = 400;
        let corrupt = [
            (
                // A value beyond the strings ("b" and its NUL).
                0x8000_0002,
                "unit 400 (0x80000002 at byte 1604 of the charsmap) holds the replacement \
                 offset 2, beyond the 2 bytes of strings",
            ),
            (
                // Children beyond the 512 units.
                1000 << 10,
                "the trie refers to unit 767 but has 512 units (unit 400, 0x000fa000 at byte \
                 1604 of the charsmap, puts its children at units 512 to 767)",
            ),
            (
                // A leaf (the unit itself, offset 0) that holds no value.
                0x100,
                "unit 400 (0x00000100 at byte 1604 of the charsmap) has a leaf at unit 400 \
                 (0x00000100 at byte 1604), which holds no replacement offset (its top bit is \
                 clear)",
            ),
        ];
        for (unit, message) in corrupt {
            let bad = with_unit(&blob, unreachable, unit);
            assert_eq!(
                refusal(&bad),
                format!("corrupt precompiled charsmap: {message}")
            );
            // tokenizers' reading (a tokenizer.json) never looks at it.
            let walked = Charsmap::new(&bad).unwrap();
            assert_eq!(walked.longest_match(b"a"), Some((&b"b"[..], 1)));
        }
        // A value at the strings' last byte (their final NUL) is in range,
        // and so are children at the trie's last 256 units.
        for unit in [0x8000_0001, (400 ^ 256) << 10, 0] {
            let good = with_unit(&blob, unreachable, unit);
            let n = SpNormalizer::new(&good, false, false, false, false).unwrap();
            assert_eq!(n.normalize("cab"), "cbb");
        }
    }

    #[test]
    fn the_root_and_the_layout_are_checked_as_sentencepiece_checks_them() {
        let blob = one_byte_rule(b'a', "b");
        let root = 256 << 10;
        // A label, a leaf, no offset.
        for unit in [root | 1, root | 0x100, 0] {
            assert_eq!(
                refusal(&with_unit(&blob, 0, unit)),
                format!(
                    "corrupt precompiled charsmap: the root (unit 0, {unit:#010x} at byte 4 of \
                     the charsmap) must have no label, no leaf and a nonzero offset"
                )
            );
        }
        // The top bit set, and with it an offset far beyond the trie.
        assert!(refusal(&with_unit(&blob, 0, 0xFFFF_FC00)).starts_with(
            "corrupt precompiled charsmap: the trie refers to unit 4194303 but has 512"
        ));
        // The trie: a multiple of 1024 bytes (here 260 units, 1040 bytes).
        let mut short = blob.clone();
        short[..4].copy_from_slice(&1040u32.to_le_bytes());
        assert_eq!(
            refusal(&short),
            "corrupt precompiled charsmap: trie size 1040 (at byte 0 of the charsmap) is not a \
             positive multiple of 1024 bytes (256 units)"
        );
        // The strings: present, and ended by a NUL.
        assert_eq!(
            refusal(&blob[..4 + 2048]),
            "corrupt precompiled charsmap: the trie fills the charsmap (trie size 2048, at \
             byte 0): no replacement strings follow it at byte 2052"
        );
        let mut unended = blob.clone();
        *unended.last_mut().unwrap() = b'c';
        assert_eq!(
            refusal(&unended),
            "corrupt precompiled charsmap: the replacement strings (bytes 2052 to 2053 of the \
             charsmap) do not end with a NUL byte: the last one is 0x63"
        );
    }

    #[test]
    fn utf8_char_length_is_sentencepieces() {
        assert_eq!(utf8_char_length(b"a"), Some(1));
        assert_eq!(utf8_char_length("é".as_bytes()), Some(2));
        assert_eq!(utf8_char_length("€x".as_bytes()), Some(3));
        assert_eq!(utf8_char_length("😀".as_bytes()), Some(4));
        assert_eq!(utf8_char_length(&[0xA9]), None);
        assert_eq!(utf8_char_length(&[0xA9, 0x80, 0x80, 0x80, 0x80]), None);
        assert_eq!(utf8_char_length(&[0xC3]), None);
        assert_eq!(utf8_char_length(&[0xF0, 0x9F, 0x98]), None);
        assert_eq!(utf8_char_length(&[0xC0, 0x80]), None);
        assert_eq!(utf8_char_length(&[0xED, 0xA0, 0x80]), None);
    }
}

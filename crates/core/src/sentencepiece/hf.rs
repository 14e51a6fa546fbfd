//! HuggingFace tokenizers' encoding of a Unigram `tokenizer.json`
//! (`Tokenizer.encode(text, add_special_tokens=False).ids`), as
//! `bytepair.reference.hf_unigram` writes it down:
//!
//! 1. added tokens with `normalized: false` are cut out of the raw text
//!    (leftmost, then longest); the others out of each normalized part;
//! 2. the normalizer steps in order: `Precompiled` (per extended grapheme
//!    cluster, shortest rule), `Replace` (a literal or a regex), `Prepend`,
//!    and `NFC`, `NFKC`, `Lowercase` (as [`crate::Normalizer`] does them);
//! 3. optional `WhitespaceSplit` (Unicode White_Space, dropped), then
//!    `Metaspace` (spaces become the replacement, which is prepended as the
//!    scheme says, and with `split` a piece starts at every replacement);
//! 4. one f64 lattice per piece over ALL vocabulary entries, the unknown
//!    segment scoring `min(all scores) - 10`, ties to the segment that
//!    starts first;
//! 5. runs of unknown segments (or of `unk_id`'s piece) fused into one text,
//!    which is looked up, else its byte pieces (byte fallback, when all
//!    exist), else `unk_id`.

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use fancy_regex::{NoExpand, Regex};
use rayon::prelude::*;
use unicode_segmentation::UnicodeSegmentation;

use super::normalize::{apply_charsmap_tokenizers, Charsmap};
use super::unigram::{Lattice, Scratch, Seg};
use super::UNK_PENALTY;
use crate::error::{Error, Result};
use crate::text::normalize::Normalizer;
use crate::text::special::automaton_kind;
use crate::util::double_array::{DoubleArray, NONE};

/// A normalizer step of the file, in order.
#[derive(Clone, Debug)]
pub enum HfNormalizerStep {
    /// The precompiled charsmap blob (decoded from base64).
    Precompiled(Vec<u8>),
    /// Every match of `pattern` becomes `content` (no `$` expansion). With
    /// `regex`, `pattern` is written for fancy-regex (what
    /// `bytepair.formats.hf_regex.from_tokenizers` returns); else a literal.
    Replace {
        pattern: String,
        content: String,
        regex: bool,
    },
    /// `prepend` goes in front of every non-empty piece of text.
    Prepend(String),
    /// tokenizers' `NFC`, `NFKC` or `Lowercase` normalizer (its type name).
    Unicode(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrependScheme {
    Always,
    Never,
    First,
}

impl PrependScheme {
    /// "always", "never" or "first".
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "always" => Ok(PrependScheme::Always),
            "never" => Ok(PrependScheme::Never),
            "first" => Ok(PrependScheme::First),
            other => Err(Error::InvalidVocabulary(format!(
                "unknown prepend_scheme {other:?} (expected always, never or first)"
            ))),
        }
    }
}

/// The Metaspace pre-tokenizer.
#[derive(Clone, Copy, Debug)]
pub struct Metaspace {
    pub replacement: char,
    pub prepend_scheme: PrependScheme,
    pub split: bool,
}

/// An entry of `added_tokens`.
#[derive(Clone, Debug)]
pub struct HfAddedToken {
    pub content: String,
    pub id: u32,
    /// Cut out of the normalized text instead of the raw text.
    pub normalized: bool,
}

enum Step {
    Precompiled(Charsmap),
    Literal(String, String),
    Regex(Regex, String),
    Prepend(String),
    /// A Unicode form or lowercase, and the type name it was read as.
    Unicode(Normalizer, &'static str),
}

impl Step {
    fn name(&self) -> &'static str {
        match self {
            Step::Precompiled(_) => "Precompiled",
            Step::Literal(..) | Step::Regex(..) => "Replace",
            Step::Prepend(_) => "Prepend",
            Step::Unicode(_, name) => name,
        }
    }
}

/// How many times its length normalizing may make a text (NFKC makes one
/// character at most 11 times longer in UTF-8; real pipelines stay far below).
const GROWTH_LIMIT: usize = 64;
/// What a short text may always grow by.
const GROWTH_SLACK: usize = 1 << 16;

struct Added {
    matcher: AhoCorasick,
    ids: Vec<u32>,
}

impl Added {
    /// A matcher of `(text, id)`: the leftmost, then longest, match.
    fn new(tokens: Vec<(String, u32)>) -> Result<Option<Self>> {
        if tokens.is_empty() {
            return Ok(None);
        }
        let texts: Vec<&str> = tokens.iter().map(|(text, _)| text.as_str()).collect();
        let matcher = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(automaton_kind(&texts))
            .build(texts)
            .map_err(|e| Error::InvalidSpecialTokens(e.to_string()))?;
        Ok(Some(Added {
            matcher,
            ids: tokens.iter().map(|&(_, id)| id).collect(),
        }))
    }
}

/// `text` cut into (ordinary part, None) and (added token, Some(id)); empty
/// ordinary parts dropped.
fn split_added<'t>(
    added: Option<&Added>,
    text: &'t str,
    mut each: impl FnMut(&'t str, Option<u32>) -> Result<()>,
) -> Result<()> {
    let Some(added) = added else {
        if !text.is_empty() {
            each(text, None)?;
        }
        return Ok(());
    };
    let mut position = 0;
    for m in added.matcher.find_iter(text) {
        if m.start() > position {
            each(&text[position..m.start()], None)?;
        }
        each(
            &text[m.start()..m.end()],
            Some(added.ids[m.pattern().as_usize()]),
        )?;
        position = m.end();
    }
    if position < text.len() {
        each(&text[position..], None)?;
    }
    Ok(())
}

/// tokenizers' Unigram encoder for one `tokenizer.json`.
pub struct HfUnigramEncoder {
    trie: DoubleArray,
    scores: Vec<f64>,
    max_len: usize,
    unk_score: f64,
    unk_id: Option<u32>,
    byte_ids: Option<Box<[u32; 256]>>,
    steps: Vec<Step>,
    whitespace_split: bool,
    metaspace: Metaspace,
    raw_added: Option<Added>,
    normalized_added: Option<Added>,
}

impl HfUnigramEncoder {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        pieces: Vec<String>,
        scores: Vec<f64>,
        unk_id: Option<u32>,
        byte_fallback: bool,
        normalizer: Vec<HfNormalizerStep>,
        whitespace_split: bool,
        metaspace: Metaspace,
        added_tokens: Vec<HfAddedToken>,
    ) -> Result<Self> {
        if pieces.is_empty() {
            return Err(Error::InvalidVocabulary("the vocabulary is empty".into()));
        }
        if pieces.len() != scores.len() {
            return Err(Error::InvalidVocabulary(format!(
                "{} pieces and {} scores",
                pieces.len(),
                scores.len()
            )));
        }
        if pieces.len() >= NONE as usize {
            return Err(Error::InvalidVocabulary("too many pieces".into()));
        }
        if let Some(id) = scores.iter().position(|s| !s.is_finite()) {
            return Err(Error::InvalidVocabulary(format!(
                "the score of id {id} is not a finite number"
            )));
        }
        if let Some(id) = pieces.iter().position(|p| p.is_empty()) {
            return Err(Error::InvalidVocabulary(format!("piece {id} is empty")));
        }
        if let Some(unk) = unk_id {
            if unk as usize >= pieces.len() {
                return Err(Error::InvalidVocabulary(format!(
                    "unk_id {unk} is not an id of the {} pieces",
                    pieces.len()
                )));
            }
        }
        for token in &added_tokens {
            if token.content.is_empty() {
                return Err(Error::InvalidSpecialTokens("an empty added token".into()));
            }
            if token.id as usize >= pieces.len() {
                return Err(Error::InvalidSpecialTokens(format!(
                    "added token {:?} has id {}, not an id of the {} pieces",
                    token.content,
                    token.id,
                    pieces.len()
                )));
            }
        }
        // tokenizers keeps the last id of a repeated piece: offer the keys last first.
        let keys = pieces
            .iter()
            .enumerate()
            .rev()
            .map(|(id, p)| (p.as_bytes(), id as u32))
            .collect();
        let trie = DoubleArray::build(keys);
        let max_len = pieces.iter().map(|p| p.len()).max().unwrap_or(0);
        let min_score = scores.iter().copied().fold(f64::INFINITY, f64::min);
        let byte_ids = if byte_fallback {
            let mut ids = Box::new([NONE; 256]);
            for (byte, slot) in ids.iter_mut().enumerate() {
                *slot = trie
                    .get(format!("<0x{byte:02X}>").as_bytes())
                    .unwrap_or(NONE);
            }
            Some(ids)
        } else {
            None
        };
        let mut steps = Vec::with_capacity(normalizer.len());
        for step in normalizer {
            steps.push(match step {
                HfNormalizerStep::Precompiled(blob) => Step::Precompiled(Charsmap::new(&blob)?),
                HfNormalizerStep::Replace {
                    pattern,
                    content,
                    regex: false,
                } => {
                    if pattern.is_empty() {
                        return Err(Error::InvalidPattern {
                            pattern,
                            message: "an empty Replace pattern".into(),
                        });
                    }
                    Step::Literal(pattern, content)
                }
                HfNormalizerStep::Replace {
                    pattern,
                    content,
                    regex: true,
                } => {
                    let compiled = Regex::new(&pattern).map_err(|e| Error::InvalidPattern {
                        pattern: pattern.clone(),
                        message: e.to_string(),
                    })?;
                    Step::Regex(compiled, content)
                }
                HfNormalizerStep::Prepend(prepend) => Step::Prepend(prepend),
                HfNormalizerStep::Unicode(name) => {
                    let (names, name): (&[&str], _) = match name.as_str() {
                        "NFC" => (&["nfc"], "NFC"),
                        "NFKC" => (&["nfkc"], "NFKC"),
                        "Lowercase" => (&["lowercase"], "Lowercase"),
                        other => {
                            return Err(Error::InvalidNormalization(format!(
                                "unknown normalizer {other:?} (known here: NFC, NFKC, Lowercase)"
                            )))
                        }
                    };
                    Step::Unicode(Normalizer::from_names(names)?, name)
                }
            });
        }
        let raw: Vec<(String, u32)> = added_tokens
            .iter()
            .filter(|t| !t.normalized)
            .map(|t| (t.content.clone(), t.id))
            .collect();
        let mut encoder = HfUnigramEncoder {
            trie,
            scores,
            max_len,
            unk_score: min_score - UNK_PENALTY,
            unk_id,
            byte_ids,
            steps,
            whitespace_split,
            metaspace,
            raw_added: Added::new(raw)?,
            normalized_added: None,
        };
        // tokenizers looks for a normalized token's text as the normalizers
        // make it, in the normalized text.
        let mut normalized = Vec::new();
        for token in added_tokens.iter().filter(|t| t.normalized) {
            let text = encoder.normalize(&token.content)?;
            if text.is_empty() {
                return Err(Error::InvalidSpecialTokens(format!(
                    "added token {:?} (normalized: true): the normalizers make nothing of it",
                    token.content
                )));
            }
            normalized.push((text, token.id));
        }
        encoder.normalized_added = Added::new(normalized)?;
        Ok(encoder)
    }

    /// The file's normalizer steps, in order. The text may grow to
    /// `GROWTH_LIMIT` times its length (a chain of `Replace` steps could
    /// multiply it past memory, and a failed allocation aborts the process):
    /// a step that would make it longer is an error naming the step.
    pub fn normalize(&self, text: &str) -> Result<String> {
        let limit = text
            .len()
            .saturating_mul(GROWTH_LIMIT)
            .saturating_add(GROWTH_SLACK);
        let mut text = text.to_owned();
        for (index, step) in self.steps.iter().enumerate() {
            let too_long = |length: usize| {
                Error::InvalidNormalization(format!(
                    "normalizer step {index} ({}) would make the text {length} bytes long, more \
                     than {GROWTH_LIMIT} times the {} bytes given",
                    step.name(),
                    (limit - GROWTH_SLACK) / GROWTH_LIMIT
                ))
            };
            // Worst cases are checked before the step allocates anything.
            let grown = match step {
                Step::Literal(pattern, content) if content.len() > pattern.len() => {
                    let worst = text.len() / pattern.len().max(1) * content.len() + text.len();
                    match worst > limit {
                        true => {
                            let count = text.matches(pattern.as_str()).count();
                            Some(text.len() - count * pattern.len() + count * content.len())
                        }
                        false => None,
                    }
                }
                Step::Regex(regex, content) if !content.is_empty() => {
                    let worst = text
                        .len()
                        .saturating_add(1)
                        .saturating_mul(content.len() + 1);
                    match worst > limit {
                        true => {
                            let (mut count, mut matched) = (0usize, 0usize);
                            for found in regex.find_iter(&text) {
                                let found = found.map_err(|e| Error::PatternFailed {
                                    position: 0,
                                    message: e.to_string(),
                                })?;
                                (count, matched) = (count + 1, matched + found.as_str().len());
                            }
                            Some(text.len() - matched + count * content.len())
                        }
                        false => None,
                    }
                }
                _ => None,
            };
            if let Some(length) = grown.filter(|&length| length > limit) {
                return Err(too_long(length));
            }
            text = match step {
                Step::Precompiled(charsmap) => {
                    let mut out = String::with_capacity(text.len());
                    apply_charsmap_tokenizers(charsmap, &text, &mut out);
                    out
                }
                Step::Literal(pattern, content) => text.replace(pattern.as_str(), content),
                Step::Prepend(prepend) if !text.is_empty() => format!("{prepend}{text}"),
                Step::Prepend(_) => text,
                Step::Unicode(normalizer, _) => match normalizer.apply(&text) {
                    Cow::Borrowed(_) => text,
                    Cow::Owned(normalized) => normalized,
                },
                Step::Regex(regex, content) => regex
                    .try_replacen(&text, 0, NoExpand(content))
                    .map_err(|e| Error::PatternFailed {
                        position: 0,
                        message: e.to_string(),
                    })?
                    .into_owned(),
            };
            if text.len() > limit {
                return Err(too_long(text.len()));
            }
        }
        Ok(text)
    }

    /// `Tokenizer.encode(text, add_special_tokens=False).ids`.
    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut work = Work {
            ids: Vec::new(),
            scratch: Scratch::default(),
            segments: Vec::new(),
            piece: String::new(),
        };
        let mut position = 0usize;
        split_added(self.raw_added.as_ref(), text, |part, added| {
            let mut at_start = position == 0;
            position += part.len();
            if let Some(id) = added {
                work.ids.push(id);
                return Ok(());
            }
            let normalized = self.normalize(part)?;
            let lead = if at_start {
                self.first_character_lead(part, &normalized)?
            } else {
                0
            };
            split_added(
                self.normalized_added.as_ref(),
                &normalized,
                |inner, added| {
                    if let Some(id) = added {
                        work.ids.push(id);
                    } else {
                        self.pre_tokenize(inner, at_start, lead, &mut work)?;
                    }
                    at_start = false;
                    Ok(())
                },
            )
        })?;
        Ok(work.ids)
    }

    pub fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>> {
        texts.par_iter().map(|text| self.encode(text)).collect()
    }

    /// With `WhitespaceSplit` and prepend scheme "first": how many leading
    /// bytes of `normalized` the first character of `part` (the start of the
    /// input) became. tokenizers prepends to a word whose first character came
    /// from the input's first one, by its offset in the input: NFKC makes
    /// `" \u{308}"` of `¨`, and the word `\u{308}` then starts the input.
    /// A character that shares its grapheme cluster becomes one character:
    /// tokenizers aligns a cluster's replacement character by character
    /// (T5's charsmap makes `" \u{308}"` of `"¨\u{316}"`, and the `\u{308}`
    /// stands for the `\u{316}`).
    fn first_character_lead(&self, part: &str, normalized: &str) -> Result<usize> {
        if !self.whitespace_split || self.metaspace.prepend_scheme != PrependScheme::First {
            return Ok(0);
        }
        let Some(cluster) = part.graphemes(true).next() else {
            return Ok(0);
        };
        if cluster.chars().nth(1).is_some() {
            return Ok(normalized.chars().next().map_or(0, char::len_utf8));
        }
        let made = self.normalize(cluster)?;
        Ok(match normalized.starts_with(made.as_str()) {
            true => made.len(),
            false => 0,
        })
    }

    /// Pre-tokenizes normalized `text` and encodes each piece into `work.ids`;
    /// `lead`: see [`Self::first_character_lead`].
    fn pre_tokenize(
        &self,
        text: &str,
        at_text_start: bool,
        lead: usize,
        work: &mut Work,
    ) -> Result<()> {
        if !self.whitespace_split {
            return self.metaspace_word(text, at_text_start, work);
        }
        let mut start = None;
        for (index, ch) in text.char_indices() {
            if ch.is_whitespace() {
                if let Some(s) = start.take() {
                    let first = at_text_start && (s == 0 || s < lead);
                    self.metaspace_word(&text[s..index], first, work)?;
                }
            } else if start.is_none() {
                start = Some(index);
            }
        }
        if let Some(s) = start {
            self.metaspace_word(&text[s..], at_text_start && (s == 0 || s < lead), work)?;
        }
        Ok(())
    }

    /// Metaspace on one word; `first`: the word starts the whole input.
    fn metaspace_word(&self, word: &str, first: bool, work: &mut Work) -> Result<()> {
        let replacement = self.metaspace.replacement;
        let mut piece = std::mem::take(&mut work.piece);
        piece.clear();
        let prepend = match self.metaspace.prepend_scheme {
            PrependScheme::Always => true,
            PrependScheme::Never => false,
            PrependScheme::First => first,
        };
        let starts_with_space = word.starts_with(' ') || word.starts_with(replacement);
        if prepend && !starts_with_space && !word.is_empty() {
            piece.push(replacement);
        }
        for ch in word.chars() {
            piece.push(if ch == ' ' { replacement } else { ch });
        }
        let result = if self.metaspace.split {
            let mut from = 0;
            let mut result = Ok(());
            for (index, _) in piece.match_indices(replacement) {
                if index > 0 && index > from {
                    result = result.and_then(|_| self.segment(&piece[from..index], work));
                    from = index;
                }
            }
            if from < piece.len() {
                result = result.and_then(|_| self.segment(&piece[from..], work));
            }
            result
        } else if piece.is_empty() {
            Ok(())
        } else {
            self.segment(&piece, work)
        };
        work.piece = piece;
        result
    }

    /// tokenizers' Unigram on one pre-tokenized piece.
    fn segment(&self, piece: &str, work: &mut Work) -> Result<()> {
        let lattice = Lattice {
            trie: &self.trie,
            scores: &self.scores,
            max_len: self.max_len,
            unk_score: self.unk_score,
        };
        work.segments.clear();
        lattice.best_path(piece, &mut work.scratch, &mut work.segments);
        let bytes = piece.as_bytes();
        let mut index = 0;
        let segments = &work.segments;
        while index < segments.len() {
            let Seg { start, mut end, id } = segments[index];
            index += 1;
            let unknown = |id: u32| id == NONE || Some(id) == self.unk_id;
            if unknown(id) {
                while index < segments.len() && unknown(segments[index].id) {
                    end = segments[index].end;
                    index += 1;
                }
            } else {
                work.ids.push(id);
                continue;
            }
            let text = &bytes[start as usize..end as usize];
            if let Some(id) = self.trie.get(text) {
                work.ids.push(id);
                continue;
            }
            if let Some(byte_ids) = &self.byte_ids {
                if text.iter().all(|&b| byte_ids[b as usize] != NONE) {
                    work.ids.extend(text.iter().map(|&b| byte_ids[b as usize]));
                    continue;
                }
            }
            match self.unk_id {
                Some(unk) => work.ids.push(unk),
                None => {
                    return Err(Error::NoUnknownPiece(
                        String::from_utf8_lossy(text).into_owned(),
                    ))
                }
            }
        }
        Ok(())
    }
}

struct Work {
    ids: Vec<u32>,
    scratch: Scratch<f64>,
    segments: Vec<Seg>,
    piece: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_added(id: u32) -> Result<HfUnigramEncoder> {
        HfUnigramEncoder::new(
            vec!["<unk>".into(), "▁".into(), "<x>".into()],
            vec![0.0, -1.0, 0.0],
            Some(0),
            false,
            Vec::new(),
            false,
            Metaspace {
                replacement: '▁',
                prepend_scheme: PrependScheme::Always,
                split: true,
            },
            vec![HfAddedToken {
                content: "<x>".into(),
                id,
                normalized: false,
            }],
        )
    }

    #[test]
    fn added_token_ids_must_be_ids_of_the_vocabulary() {
        assert_eq!(with_added(2).unwrap().encode("<x>").unwrap(), vec![2]);
        for id in [3, 999, u32::MAX] {
            let Err(Error::InvalidSpecialTokens(message)) = with_added(id) else {
                panic!("id {id} was accepted");
            };
            assert!(message.contains(&id.to_string()), "{message}");
        }
    }
}

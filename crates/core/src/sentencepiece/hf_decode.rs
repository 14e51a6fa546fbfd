//! HuggingFace tokenizers' `decode(ids, skip_special_tokens=False)` for a
//! Unigram `tokenizer.json`: the pieces of the ids through the file's
//! decoder steps, joined (no decoder: joined by spaces). The reference is
//! `bytepair.reference.hf_unigram.decode_chain`, whose rules this follows
//! step for step; a `Replace` with a regex stays there (the caller does
//! not build this decoder for one).
//!
//! Each step maps the list of tokens to a new one, as tokenizers'
//! `decode_chain` does. A token stays borrowed from the vocabulary until
//! a step changes it, so that a step that leaves most tokens alone costs
//! no allocation for them.

use std::borrow::Cow;

use crate::error::{Error, Result};

/// One decoder of the chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HfDecoderStep {
    /// A run of byte tokens (`<0xC3>`) becomes its text when it is valid
    /// UTF-8, else one U+FFFD token per byte.
    ByteFallback,
    /// All tokens become one.
    Fuse,
    /// `replacement` (one character) becomes a space; the first token
    /// loses every one when `prepend` (the prepend scheme is not "never").
    Metaspace { replacement: String, prepend: bool },
    /// Every occurrence of the literal `pattern` becomes `content`.
    Replace { pattern: String, content: String },
    /// Up to `start` leading and `stop` trailing `content` characters are
    /// cut from each token.
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
}

/// The decoder of one `tokenizer.json`: its pieces and steps.
#[derive(Clone, Debug)]
pub struct HfDecoder {
    pieces: Vec<String>,
    /// None: the file has no decoder.
    steps: Option<Vec<HfDecoderStep>>,
}

impl HfDecoder {
    pub fn new(pieces: Vec<String>, steps: Option<Vec<HfDecoderStep>>) -> Self {
        Self { pieces, steps }
    }

    /// The text of `ids`; an id out of range is an error naming its position,
    /// and so is a token on which tokenizers' Strip decoder panics.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        let size = self.pieces.len();
        let mut tokens: Vec<Cow<str>> = Vec::with_capacity(ids.len());
        for (position, &id) in ids.iter().enumerate() {
            let piece =
                self.pieces
                    .get(id as usize)
                    .ok_or(Error::UnknownId { id, position, size })?;
            tokens.push(Cow::Borrowed(piece.as_str()));
        }
        let Some(steps) = &self.steps else {
            return Ok(tokens.join(" "));
        };
        let Some((last, before)) = steps.split_last() else {
            return Ok(tokens.concat());
        };
        for step in before {
            tokens = apply(step, tokens)?;
        }
        // The last step writes its tokens straight into the text (most
        // files end with Metaspace, which changes nearly every token).
        let mut text = String::with_capacity(tokens.iter().map(|t| t.len()).sum());
        match replacement(last) {
            Some(Replacement { from, first, rest }) if !from.is_empty() => {
                for (n, token) in tokens.iter().enumerate() {
                    push_replaced(&mut text, token, from, if n == 0 { first } else { rest });
                }
            }
            _ => {
                for token in apply(last, tokens)? {
                    text.push_str(&token);
                }
            }
        }
        Ok(text)
    }
}

/// What a step that replaces text (Metaspace, Replace) turns `from` into:
/// `first` in the first token, `rest` in the others.
struct Replacement<'s> {
    from: &'s str,
    first: &'s str,
    rest: &'s str,
}

/// The replacement a step makes; None for the steps that make none.
fn replacement(step: &HfDecoderStep) -> Option<Replacement<'_>> {
    match step {
        HfDecoderStep::Metaspace {
            replacement,
            prepend,
        } => Some(Replacement {
            from: replacement,
            first: if *prepend { "" } else { " " },
            rest: " ",
        }),
        HfDecoderStep::Replace { pattern, content } => Some(Replacement {
            from: pattern,
            first: content,
            rest: content,
        }),
        _ => None,
    }
}

/// Appends `token` with every (non-empty) `from` replaced by `to`.
fn push_replaced(text: &mut String, token: &str, from: &str, to: &str) {
    let mut parts = token.split(from);
    if let Some(first) = parts.next() {
        text.push_str(first);
    }
    for part in parts {
        text.push_str(to);
        text.push_str(part);
    }
}

fn apply<'p>(step: &HfDecoderStep, tokens: Vec<Cow<'p, str>>) -> Result<Vec<Cow<'p, str>>> {
    Ok(match step {
        HfDecoderStep::ByteFallback => byte_fallback(tokens),
        HfDecoderStep::Fuse => vec![Cow::Owned(tokens.concat())],
        HfDecoderStep::Metaspace { .. } | HfDecoderStep::Replace { .. } => {
            let Some(Replacement { from, first, rest }) = replacement(step) else {
                unreachable!("both steps replace")
            };
            tokens
                .into_iter()
                .enumerate()
                .map(|(n, token)| replaced(token, from, if n == 0 { first } else { rest }))
                .collect()
        }
        HfDecoderStep::Strip {
            content,
            start,
            stop,
        } => tokens
            .into_iter()
            .map(|token| strip(token, *content, *start, *stop))
            .collect::<Result<_>>()?,
    })
}

/// `token` with every `from` replaced by `to` (an empty `from`, as
/// Python's `str.replace`, puts `to` around every character).
fn replaced<'p>(token: Cow<'p, str>, from: &str, to: &str) -> Cow<'p, str> {
    if !from.is_empty() && !token.contains(from) {
        return token;
    }
    Cow::Owned(token.replace(from, to))
}

/// The byte of a byte token: "<0x" and two characters that Rust's
/// `u8::from_str_radix(_, 16)` reads (tokenizers' rule, so "+F" too) and ">".
fn byte_of_token(token: &str) -> Option<u8> {
    let hex = token.strip_prefix("<0x")?.strip_suffix('>')?;
    if token.len() != 6 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

fn byte_fallback(tokens: Vec<Cow<str>>) -> Vec<Cow<str>> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut run = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut Vec<Cow<str>>| {
        if run.is_empty() {
            return;
        }
        match String::from_utf8(std::mem::take(run)) {
            Ok(text) => out.push(Cow::Owned(text)),
            Err(invalid) => {
                out.extend((0..invalid.as_bytes().len()).map(|_| Cow::Borrowed("\u{fffd}")))
            }
        }
    };
    for token in tokens {
        match byte_of_token(&token) {
            Some(byte) => run.push(byte),
            None => {
                flush(&mut run, &mut out);
                out.push(token);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// tokenizers' Strip decoder, which panics (index out of bounds) when a
/// token is shorter than `stop` and every character is `content`, or when
/// the ends it cuts overlap: an error here.
fn strip(token: Cow<str>, content: char, start: usize, stop: usize) -> Result<Cow<str>> {
    let chars: Vec<(usize, char)> = token.char_indices().collect();
    let mut start_cut = 0;
    for (index, &(_, c)) in chars.iter().take(start).enumerate() {
        if c != content {
            break;
        }
        start_cut = index + 1;
    }
    let mut stop_cut = chars.len();
    for back in 0..stop {
        let Some(index) = chars.len().checked_sub(back + 1) else {
            return Err(Error::DecoderPanics(format!(
                "tokenizers' Strip decoder (stop={stop}) panics on the token {token:?}: \
                 it reads before its start"
            )));
        };
        if chars[index].1 != content {
            break;
        }
        stop_cut = index;
    }
    if start_cut > stop_cut {
        return Err(Error::DecoderPanics(format!(
            "tokenizers' Strip decoder (start={start}, stop={stop}) panics on the token \
             {token:?}: the cuts of both ends overlap"
        )));
    }
    if start_cut == 0 && stop_cut == chars.len() {
        return Ok(token);
    }
    let byte_at = |i: usize| chars.get(i).map_or(token.len(), |&(at, _)| at);
    Ok(Cow::Owned(
        token[byte_at(start_cut)..byte_at(stop_cut)].to_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoder(pieces: &[&str], steps: Option<Vec<HfDecoderStep>>) -> HfDecoder {
        HfDecoder::new(pieces.iter().map(|p| p.to_string()).collect(), steps)
    }

    #[test]
    fn decode_runs_the_steps_in_order() {
        let pieces = [
            "▁a▁b", "▁c", "<0xC3>", "<0xA9>", "<0xFF>", "__x__", "<0x+F>",
        ];
        let metaspace = HfDecoderStep::Metaspace {
            replacement: "▁".into(),
            prepend: true,
        };
        let t5 = decoder(&pieces, Some(vec![metaspace.clone()]));
        // The first token loses every replacement, the others get spaces.
        assert_eq!(t5.decode(&[0, 1, 0]).unwrap(), "ab c a b");
        // The same when the step is not the last one.
        let fused = decoder(&pieces, Some(vec![metaspace.clone(), HfDecoderStep::Fuse]));
        assert_eq!(fused.decode(&[0, 1, 0]).unwrap(), "ab c a b");
        let no_decoder = decoder(&pieces, None);
        assert_eq!(no_decoder.decode(&[1, 5]).unwrap(), "▁c __x__");
        let llama = decoder(
            &pieces,
            Some(vec![
                HfDecoderStep::Replace {
                    pattern: "▁".into(),
                    content: " ".into(),
                },
                HfDecoderStep::ByteFallback,
                HfDecoderStep::Fuse,
                HfDecoderStep::Strip {
                    content: ' ',
                    start: 1,
                    stop: 0,
                },
            ]),
        );
        // A valid run is its text, an invalid one a U+FFFD per byte; "+F" is a byte.
        assert_eq!(
            llama.decode(&[1, 2, 3, 1, 4, 2, 6]).unwrap(),
            "c\u{e9} c\u{fffd}\u{fffd}\u{fffd}"
        );
        let strip = decoder(
            &pieces,
            Some(vec![HfDecoderStep::Strip {
                content: '_',
                start: 2,
                stop: 2,
            }]),
        );
        assert_eq!(strip.decode(&[5]).unwrap(), "x");
        let replace_last = decoder(
            &pieces,
            Some(vec![
                HfDecoderStep::ByteFallback,
                HfDecoderStep::Replace {
                    pattern: "▁".into(),
                    content: "_ ".into(),
                },
            ]),
        );
        assert_eq!(
            replace_last.decode(&[0, 2, 3, 1]).unwrap(),
            "_ a_ b\u{e9}_ c"
        );
        assert!(matches!(
            t5.decode(&[1, 7]),
            Err(Error::UnknownId {
                id: 7,
                position: 1,
                size: 7
            })
        ));
    }

    #[test]
    fn strip_fails_where_tokenizers_panics() {
        let over = |start, stop, token: &str| {
            let d = decoder(
                &[token],
                Some(vec![HfDecoderStep::Strip {
                    content: '_',
                    start,
                    stop,
                }]),
            );
            d.decode(&[0])
        };
        assert!(
            matches!(over(0, 3, "__"), Err(Error::DecoderPanics(m)) if m.contains("before its start"))
        );
        assert!(matches!(over(2, 2, "__"), Err(Error::DecoderPanics(m)) if m.contains("overlap")));
        assert_eq!(over(1, 1, "_é_").unwrap(), "é");
    }
}

//! Special tokens: finding them in text and tiktoken's allowed/disallowed policy.
//!
//! Matching rule: scanning left to right, the occurrence that starts first
//! wins; among occurrences starting at the same place, the longest.

use std::sync::{Arc, Mutex};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::error::{Error, Result};

/// Whitespace a special token swallows when it is cut out of text, as
/// HuggingFace's `lstrip` / `rstrip` (RoBERTa's `<mask>` takes the space before it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Strip {
    pub left: bool,
    pub right: bool,
}

#[derive(Clone, Debug)]
pub struct SpecialTokens {
    tokens: Vec<(String, u32)>,
    strip: Vec<Strip>,
    /// Matches every special token; None when there are none.
    all: Option<AhoCorasick>,
    /// The matchers of the last subsets asked for (a tokenizer asks for the
    /// same few again and again: its always-allowed added tokens, one set of
    /// allowed specials), so a call does not build an automaton.
    subsets: Arc<Mutex<Vec<KeptSubset>>>,
}

/// A subset's indices and the matcher of its texts.
type KeptSubset = (Vec<usize>, Arc<AhoCorasick>);

/// How many subsets' matchers are kept.
const SUBSETS_KEPT: usize = 8;

/// One piece of a text after special tokens were cut out.
#[derive(Debug, PartialEq, Eq)]
pub enum Segment<'t> {
    Text(&'t str),
    Special(u32),
}

fn matcher<'a>(texts: impl IntoIterator<Item = &'a str>) -> Option<AhoCorasick> {
    let texts: Vec<&str> = texts.into_iter().collect();
    if texts.is_empty() {
        return None;
    }
    Some(
        AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(automaton_kind(&texts))
            .build(texts)
            .expect("special tokens are few and short; automaton size limits cannot be hit"),
    )
}

/// Patterns longer in all than this are matched with a contiguous NFA rather
/// than the DFA that aho-corasick picks for a few patterns: building that DFA
/// takes time quadratic in a pattern's length (a special token of 40,000
/// characters took a minute to load), and long patterns are rare.
const DFA_PATTERN_BYTES: usize = 1 << 12;

/// The automaton for matching `texts`: aho-corasick's own choice, unless the
/// texts are long (see [`DFA_PATTERN_BYTES`]).
pub(crate) fn automaton_kind(texts: &[&str]) -> Option<AhoCorasickKind> {
    let bytes: usize = texts.iter().map(|text| text.len()).sum();
    (bytes > DFA_PATTERN_BYTES).then_some(AhoCorasickKind::ContiguousNFA)
}

/// A subset of the special tokens, by index into [`SpecialTokens::tokens`].
#[derive(Clone, Copy, Debug)]
pub enum Selection<'s> {
    All,
    Nothing,
    Some(&'s [usize]),
}

impl SpecialTokens {
    pub fn new(tokens: Vec<(String, u32)>) -> Result<Self> {
        let mut seen = std::collections::HashSet::new();
        for (text, id) in &tokens {
            if text.is_empty() {
                return Err(Error::InvalidSpecialTokens(format!(
                    "special token id {id} is empty"
                )));
            }
            if !seen.insert(text.as_str()) {
                return Err(Error::InvalidSpecialTokens(format!(
                    "special token {text:?} is given twice"
                )));
            }
        }
        let all = matcher(tokens.iter().map(|(t, _)| t.as_str()));
        let strip = vec![Strip::default(); tokens.len()];
        Ok(Self {
            tokens,
            strip,
            all,
            subsets: Arc::default(),
        })
    }

    /// Sets the whitespace each special token swallows, in the order of `tokens`.
    pub fn with_strip(mut self, strip: Vec<Strip>) -> Result<Self> {
        if strip.len() != self.tokens.len() {
            return Err(Error::InvalidSpecialTokens(format!(
                "{} strip settings for {} special tokens",
                strip.len(),
                self.tokens.len()
            )));
        }
        self.strip = strip;
        Ok(self)
    }

    pub fn tokens(&self) -> &[(String, u32)] {
        &self.tokens
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    fn subset(&self, selection: &Selection) -> Result<Option<Arc<AhoCorasick>>> {
        let Selection::Some(indices) = selection else {
            return Ok(None);
        };
        let mut texts = Vec::with_capacity(indices.len());
        for &i in *indices {
            let (text, _) = self.tokens.get(i).ok_or_else(|| {
                Error::InvalidSpecialTokens(format!("no special token with index {i}"))
            })?;
            texts.push(text.as_str());
        }
        let mut kept = self.subsets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, found)) = kept.iter().find(|(chosen, _)| chosen == indices) {
            return Ok(Some(found.clone()));
        }
        let Some(built) = matcher(texts).map(Arc::new) else {
            return Ok(None);
        };
        if kept.len() == SUBSETS_KEPT {
            kept.remove(0);
        }
        kept.push((indices.to_vec(), built.clone()));
        Ok(Some(built))
    }

    /// The first occurrence (byte position, text) of a selected special token.
    pub fn find(&self, text: &str, selection: Selection) -> Result<Option<(usize, &str)>> {
        let found = match &selection {
            Selection::Nothing => None,
            Selection::All => self
                .all
                .as_ref()
                .and_then(|m| m.find(text))
                .map(|m| (m.start(), self.tokens[m.pattern().as_usize()].0.as_str())),
            Selection::Some(indices) => self.subset(&selection)?.and_then(|m| {
                m.find(text).map(|found| {
                    let index = indices[found.pattern().as_usize()];
                    (found.start(), self.tokens[index].0.as_str())
                })
            }),
        };
        Ok(found)
    }

    /// Cuts the selected special tokens out of `text`; calls `segment` in order.
    pub fn split<'t>(
        &self,
        text: &'t str,
        selection: Selection,
        mut segment: impl FnMut(Segment<'t>) -> Result<()>,
    ) -> Result<()> {
        let subset;
        // The matcher and, per pattern, the index of its special token
        // (None: the pattern's own index, for the matcher of them all).
        let (matcher, indices): (&AhoCorasick, Option<&[usize]>) = match selection {
            Selection::Nothing => return emit_text(text, &mut segment),
            Selection::All => match &self.all {
                Some(m) => (m, None),
                None => return emit_text(text, &mut segment),
            },
            Selection::Some(chosen) => {
                subset = self.subset(&selection)?;
                match &subset {
                    Some(m) => (m, Some(chosen)),
                    None => return emit_text(text, &mut segment),
                }
            }
        };
        // As tokenizers' added vocabulary does: the specials are found in the
        // text as given, and only then widened over the whitespace they strip.
        // A special inside whitespace another one stripped is still emitted
        // (the whitespace is dropped, the special is not), and text is
        // emitted only from where the last special ended.
        let mut last = 0;
        for found in matcher.find_iter(text) {
            let pattern = found.pattern().as_usize();
            let index = indices.map_or(pattern, |chosen| chosen[pattern]);
            let strip = self.strip[index];
            let mut start = found.start();
            if strip.left {
                start = text[..start].trim_end().len().max(last);
            }
            let mut end = found.end();
            if strip.right {
                end = text.len() - text[end..].trim_start().len();
            }
            if last < start {
                emit_text(&text[last..start], &mut segment)?;
            }
            // An lstrip special wholly inside whitespace the one before it
            // stripped is left with nothing: tokenizers drops it.
            if start < end {
                segment(Segment::Special(self.tokens[index].1))?;
            }
            last = end;
        }
        emit_text(&text[last..], &mut segment)
    }
}

fn emit_text<'t>(text: &'t str, segment: &mut impl FnMut(Segment<'t>) -> Result<()>) -> Result<()> {
    if text.is_empty() {
        Ok(())
    } else {
        segment(Segment::Text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specials() -> SpecialTokens {
        SpecialTokens::new(vec![
            ("<a>".into(), 0),
            ("<a><b>".into(), 1),
            ("b>".into(), 2),
        ])
        .unwrap()
    }

    #[test]
    fn earliest_then_longest_wins() {
        let mut out = Vec::new();
        specials()
            .split("x<a><b>y<a>b>", Selection::All, |s| {
                out.push(format!("{s:?}"));
                Ok(())
            })
            .unwrap();
        assert_eq!(
            out,
            [
                "Text(\"x\")",
                "Special(1)",
                "Text(\"y\")",
                "Special(0)",
                "Special(2)"
            ]
            .map(String::from)
        );
    }

    #[test]
    fn strip_swallows_the_whitespace_beside_a_special() {
        let s = SpecialTokens::new(vec![("<m>".into(), 7)])
            .unwrap()
            .with_strip(vec![Strip {
                left: true,
                right: false,
            }])
            .unwrap();
        let mut out = Vec::new();
        s.split("a  <m> b", Selection::All, |seg| {
            out.push(format!("{seg:?}"));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            out,
            ["Text(\"a\")", "Special(7)", "Text(\" b\")"].map(String::from)
        );
    }

    #[test]
    fn a_special_inside_whitespace_another_strips_is_kept() {
        // tokenizers finds "\n" in the text as given, though <m> swallows it.
        let s = SpecialTokens::new(vec![
            ("<m>".into(), 7),
            ("\n".into(), 8),
            (" <x>".into(), 9),
            ("\t".into(), 10),
        ])
        .unwrap()
        .with_strip(vec![
            Strip {
                left: false,
                right: true,
            },
            Strip::default(),
            Strip::default(),
            Strip {
                left: true,
                right: false,
            },
        ])
        .unwrap();
        for (text, want) in [
            (
                "a<m>\n\nb",
                "Text(\"a\") Special(7) Special(8) Special(8) Text(\"b\")",
            ),
            ("<m> <x>", "Special(7) Special(9)"),
            ("<m>  c", "Special(7) Text(\"c\")"),
            // An lstrip special inside the stripped whitespace is left empty: dropped.
            ("<m>\tc", "Special(7) Text(\"c\")"),
        ] {
            let mut out = Vec::new();
            s.split(text, Selection::All, |seg| {
                out.push(format!("{seg:?}"));
                Ok(())
            })
            .unwrap();
            assert_eq!(out.join(" "), want, "{text:?}");
        }
    }

    #[test]
    fn duplicates_and_empty_are_rejected() {
        assert!(SpecialTokens::new(vec![("x".into(), 0), ("x".into(), 1)]).is_err());
        assert!(SpecialTokens::new(vec![("".into(), 0)]).is_err());
    }

    #[test]
    fn find_reports_the_first_selected_occurrence() {
        let s = specials();
        assert_eq!(
            s.find("zz b> <a>", Selection::Some(&[0])).unwrap(),
            Some((6, "<a>"))
        );
        assert_eq!(s.find("zz", Selection::All).unwrap(), None);
    }
}

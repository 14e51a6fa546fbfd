//! Optional normalization of text before pre-tokenization: NFC or
//! NFKC, then lowercase, each as HuggingFace tokenizers' normalizer of that
//! name does it (so that an exported tokenizer.json gives the same ids).
//!
//! It applies to the text between special tokens, which are found in the text
//! as given (as tokenizers treats added tokens that are not normalized), and
//! normalized text is never searched for special tokens again.

use std::borrow::Cow;

// The crate (and so the Unicode 9.0 tables) HuggingFace tokenizers normalizes
// with: the current Unicode tables compose marks assigned since differently.
use unicode_normalization_alignments::{
    is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization,
};

use crate::error::{Error, Result};

/// A Unicode normalization form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Nfc,
    Nfkc,
}

/// What is done to text before it is cut into pieces: a form, then lowercase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Normalizer {
    form: Option<Form>,
    lowercase: bool,
}

impl Normalizer {
    /// From names: "nfc" or "nfkc" (at most one), "lowercase"; none is the identity.
    pub fn from_names<S: AsRef<str>>(names: &[S]) -> Result<Self> {
        let mut normalizer = Self::default();
        for name in names {
            match name.as_ref() {
                "nfc" | "nfkc" if normalizer.form.is_some() => {
                    return Err(Error::InvalidNormalization(
                        "give at most one of nfc and nfkc".into(),
                    ))
                }
                "nfc" => normalizer.form = Some(Form::Nfc),
                "nfkc" => normalizer.form = Some(Form::Nfkc),
                "lowercase" => normalizer.lowercase = true,
                other => {
                    return Err(Error::InvalidNormalization(format!(
                        "unknown normalization {other:?} (known: nfc, nfkc, lowercase)"
                    )))
                }
            }
        }
        Ok(normalizer)
    }

    pub fn is_identity(&self) -> bool {
        self.form.is_none() && !self.lowercase
    }

    /// `text` normalized; borrowed when nothing changes (ASCII text under
    /// NFC/NFKC, text without capitals under lowercase).
    pub fn apply<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let formed: Cow<'t, str> = match self.form {
            None => Cow::Borrowed(text),
            Some(Form::Nfc) => match is_nfc_quick(text.chars()) {
                IsNormalized::Yes => Cow::Borrowed(text),
                _ => Cow::Owned(text.nfc().map(|(c, _)| c).collect()),
            },
            Some(Form::Nfkc) => match is_nfkc_quick(text.chars()) {
                IsNormalized::Yes => Cow::Borrowed(text),
                _ => Cow::Owned(text.nfkc().map(|(c, _)| c).collect()),
            },
        };
        if !self.lowercase || !formed.chars().any(changes_in_lowercase) {
            return formed;
        }
        // Character by character, as HuggingFace tokenizers' Lowercase: no
        // context rules (a final Σ becomes σ, where str::to_lowercase and
        // Python's str.lower() give ς).
        Cow::Owned(formed.chars().flat_map(char::to_lowercase).collect())
    }
}

fn changes_in_lowercase(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_uppercase();
    }
    let mut lower = c.to_lowercase();
    !(lower.next() == Some(c) && lower.next().is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normalized(names: &[&str], text: &str) -> String {
        Normalizer::from_names(names)
            .unwrap()
            .apply(text)
            .into_owned()
    }

    #[test]
    fn forms_then_lowercase() {
        assert_eq!(normalized(&["nfc"], "e\u{301}"), "\u{e9}");
        assert_eq!(normalized(&["nfkc"], "ﬁ①Ａ"), "fi1A");
        assert_eq!(normalized(&["nfkc", "lowercase"], "ﬁ①Ａ"), "fi1a");
        assert_eq!(normalized(&["lowercase"], "ΟΔΟΣ ΣΑ İ"), "οδοσ σα i\u{307}");
        assert_eq!(normalized(&[], "AbC"), "AbC");
    }

    #[test]
    fn unchanged_text_is_borrowed() {
        let both = Normalizer::from_names(&["nfkc", "lowercase"]).unwrap();
        assert!(matches!(both.apply("plain ascii text"), Cow::Borrowed(_)));
        assert!(matches!(both.apply("Capital"), Cow::Owned(_)));
    }

    #[test]
    fn bad_names_are_errors() {
        assert!(Normalizer::from_names(&["nfd"]).is_err());
        assert!(Normalizer::from_names(&["nfc", "nfkc"]).is_err());
    }
}

//! Which special tokens a call allows or refuses (indices into the
//! tokenizer's special-token list, as Python's tokenizer classes pass them),
//! and tiktoken's check that a text holds no refused one.

use pyo3::prelude::*;

use bytepair_core::{Error, Selection, SpecialTokens};

use crate::errors::{disallowed_error, to_py, without_gil};

/// Which special tokens, by index into the tokenizer's special-token list.
pub(crate) enum Chosen {
    All,
    Nothing,
    Some(Vec<usize>),
}

impl Chosen {
    pub(crate) fn from(indices: Vec<usize>, total: usize) -> Self {
        if indices.is_empty() {
            Chosen::Nothing
        } else if indices.len() == total {
            Chosen::All
        } else {
            Chosen::Some(indices)
        }
    }

    pub(crate) fn selection(&self) -> Selection<'_> {
        match self {
            Chosen::All => Selection::All,
            Chosen::Nothing => Selection::Nothing,
            Chosen::Some(v) => Selection::Some(v),
        }
    }
}

/// The allowed and the disallowed special tokens of a call, for a tokenizer
/// of `special`.
pub(crate) fn chosen(
    special: &SpecialTokens,
    allowed: Vec<usize>,
    disallowed: Vec<usize>,
) -> (Chosen, Chosen) {
    let total = special.tokens().len();
    (
        Chosen::from(allowed, total),
        Chosen::from(disallowed, total),
    )
}

/// Runs `work` without the GIL unless `text` holds a disallowed special
/// token, which raises DisallowedSpecialError naming it (tiktoken's contract).
pub(crate) fn unless_disallowed<T: Send>(
    py: Python<'_>,
    special: &SpecialTokens,
    text: &str,
    disallowed: &Chosen,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    let found = without_gil(py, || match special.find(text, disallowed.selection())? {
        Some((position, token)) => Ok(Err((position, token.to_owned()))),
        None => work().map(Ok),
    })?;
    found.map_err(|(position, token)| disallowed_error(py, "", text, position, &token))
}

/// Raises DisallowedSpecialError for the first text of a batch that holds a
/// disallowed special token.
pub(crate) fn check_batch(
    py: Python<'_>,
    special: &SpecialTokens,
    texts: &[&str],
    disallowed: &Chosen,
) -> PyResult<()> {
    if matches!(disallowed, Chosen::Nothing) {
        return Ok(());
    }
    for (i, text) in texts.iter().enumerate() {
        if let Some((position, token)) =
            special.find(text, disallowed.selection()).map_err(to_py)?
        {
            let prefix = format!("text {i} of the batch: ");
            return Err(disallowed_error(py, &prefix, text, position, token));
        }
    }
    Ok(())
}

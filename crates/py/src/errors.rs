//! Core errors and panics as Python exceptions: a panic is a RuntimeError
//! (never an abort), a damaged checkpoint is bytepair's FormatError, a
//! disallowed special token is its DisallowedSpecialError (tiktoken's text).

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use bytepair_core::batch_pipeline::panic_message;
use bytepair_core::Error;

pub(crate) fn to_py(err: Error) -> PyErr {
    match err {
        Error::Interrupted => PyKeyboardInterrupt::new_err("training interrupted"),
        Error::Io { path, message } => PyOSError::new_err(format!("{path}: {message}")),
        Error::CorruptCheckpoint {
            path,
            offset,
            problem,
        } => Python::attach(|py| {
            let class = py
                .import("bytepair.errors")
                .and_then(|m| m.getattr("FormatError"));
            match class.and_then(|c| c.call1((&path, &problem, format!("byte {offset}")))) {
                Ok(instance) => PyErr::from_value(instance),
                Err(_) => PyValueError::new_err(format!("{path} (byte {offset}): {problem}")),
            }
        }),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Runs `work` without the GIL on the calling thread (so Ctrl-C can still be
/// checked from it); a panic becomes RuntimeError, never an abort.
pub(crate) fn without_gil<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|panic| internal_error(&panic_message(&*panic)))?
        .map_err(to_py)
}

pub(crate) fn internal_error(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "internal error in bytepair's core (please report): {what}"
    ))
}

/// tiktoken's error for special-token text the call did not allow, raised
/// as `bytepair.DisallowedSpecialError` (a ValueError). `position` is a byte
/// offset into `text`; the message gives it in characters.
pub(crate) fn disallowed_error(
    py: Python<'_>,
    prefix: &str,
    text: &str,
    position: usize,
    token: &str,
) -> PyErr {
    let char_position = text[..position].chars().count();
    let message = format!(
        "{prefix}Encountered text corresponding to disallowed special token {token:?} at character {char_position}.\n\
         If you want this text to be encoded as a special token, pass it to `allowed_special`, \
         e.g. `allowed_special={{{token:?}, ...}}`.\n\
         If you want this text to be encoded as normal text, disable the check for this token \
         by passing `disallowed_special=(enc.special_tokens_set - {{{token:?}}})`.\n\
         To disable this check for all special tokens, pass `disallowed_special=()`."
    );
    let class = py
        .import("bytepair.errors")
        .and_then(|m| m.getattr("DisallowedSpecialError"));
    match class.and_then(|c| c.call1((message.clone(), token, char_position))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(_) => PyValueError::new_err(message),
    }
}

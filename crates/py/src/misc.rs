//! What the file formats and tools call: a `.tiktoken` rank file's
//! parser, a byte-level `tokenizer.json` read on its fast path, ids as the
//! command line writes and reads them, and Gage's byte pair compression.

use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes};

use crate::convert::{ids_of, u32_buffer};
use crate::errors::{internal_error, without_gil};
use crate::in_parallel;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_rank_file, m)?)?;
    m.add_class::<HfBpeDocument>()?;
    m.add_function(wrap_pyfunction!(split_hf_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(format_ids, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(gage_compress, m)?)?;
    m.add_function(wrap_pyfunction!(gage_decompress, m)?)?;
    Ok(())
}

/// The tokens of a `.tiktoken` rank file by rank (None where no line gives
/// that rank). Raises ValueError(line, problem); line 0 is the whole file.
#[pyfunction]
fn parse_rank_file<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Vec<Option<Bound<'py, PyBytes>>>> {
    let tokens = py
        .detach(|| bytepair_core::rank_file::parse(data))
        .map_err(|(line, problem)| PyValueError::new_err((line, problem)))?;
    Ok(tokens
        .into_iter()
        .map(|t| t.map(|bytes| PyBytes::new(py, &bytes)))
        .collect())
}

/// A byte-level `tokenizer.json` with its two big tables kept in Rust
/// (`bytepair_core::hf_json`); maps like the `model.vocab` dict for lookups.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct HfBpeDocument {
    document: bytepair_core::hf_json::BpeDocument,
}

/// A `tokenizer.json`'s tokens by id (None for an unused id) and its merges
/// as id pairs, by rank.
type Tables<'py> = (Vec<Option<Bound<'py, PyBytes>>>, Vec<(u32, u32)>);

#[pymethods]
impl HfBpeDocument {
    /// The document without `model.vocab` and `model.merges`, as JSON text.
    #[getter]
    fn rest(&self) -> &str {
        &self.document.rest
    }

    fn __len__(&self) -> usize {
        self.document.len()
    }

    fn __contains__(&self, key: &str) -> bool {
        self.document.id(key).is_some()
    }

    fn __getitem__(&self, key: &str) -> PyResult<u32> {
        self.document
            .id(key)
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_owned()))
    }

    /// (tokens by id, merge id pairs) given the specials (text -> id), or None
    /// when the slow path must read the file to say what is wrong.
    fn tables<'py>(
        &self,
        py: Python<'py>,
        specials: std::collections::HashMap<String, u32>,
    ) -> PyResult<Option<Tables<'py>>> {
        let specials = specials.into_iter().collect();
        let tables = in_parallel(py, || Ok(self.document.tables(&specials)))?;
        Ok(tables.map(|tables| {
            let tokens = tables
                .tokens()
                .map(|t| t.map(|bytes| PyBytes::new(py, bytes)))
                .collect();
            (tokens, tables.merges)
        }))
    }
}

/// Parse a `tokenizer.json` file's bytes on the fast path (None: read it
/// the slow way, which also explains bytes that are not UTF-8). Bytes, not
/// str: a str that is not ASCII would be encoded back to UTF-8 to get here.
#[pyfunction]
fn split_hf_bpe(py: Python<'_>, data: &[u8]) -> PyResult<Option<HfBpeDocument>> {
    let document = without_gil(py, || {
        Ok(std::str::from_utf8(data)
            .ok()
            .and_then(bytepair_core::hf_json::split_document))
    })?;
    Ok(document.map(|document| HfBpeDocument { document }))
}

/// `ids` as the command line prints them: separated by spaces, or with
/// `json` as a JSON list (bytepair_core::id_text).
#[pyfunction]
fn format_ids<'py>(
    py: Python<'py>,
    ids: &Bound<'py, PyAny>,
    json: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let ids = ids_of(ids)?;
    let text = without_gil(py, || {
        let mut text = Vec::new();
        bytepair_core::id_text::write_ids(&ids, json, &mut text);
        Ok(text)
    })?;
    Ok(PyBytes::new(py, &text))
}

/// The ids of `text` in its plain shapes as native-endian u32 (for numpy:
/// a Python int each cost more than the parsing), or None: the command
/// line then reads it the slow way, which names what is wrong and where.
#[pyfunction]
fn parse_ids<'py>(py: Python<'py>, text: &str) -> PyResult<Option<Bound<'py, PyByteArray>>> {
    let ids = without_gil(py, || {
        Ok(bytepair_core::id_text::parse_ids(text.as_bytes()))
    })?;
    ids.map(|ids| u32_buffer(py, ids.iter().copied(), ids.len()))
        .transpose()
}

/// Gage's byte pair compression of `data` (bytepair_core::gage's container),
/// calling `progress(bytes done)` about ten times a second and checking for
/// Ctrl-C as often.
#[pyfunction]
#[pyo3(signature = (data, progress=None))]
fn gage_compress<'py>(
    py: Python<'py>,
    data: &[u8],
    progress: Option<Py<PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut error = None;
    let mut last_report = Instant::now();
    let packed = without_gil(py, || {
        Ok(bytepair_core::gage::compress_until(data, |done| {
            if last_report.elapsed() < Duration::from_millis(100) {
                return true;
            }
            last_report = Instant::now();
            Python::attach(|py| {
                let checked = py.check_signals().and_then(|()| match &progress {
                    Some(callback) => callback.call1(py, (done,)).map(drop),
                    None => Ok(()),
                });
                checked.map_err(|e| error = Some(e)).is_ok()
            })
        }))
    })?;
    match (packed, error) {
        (_, Some(error)) => Err(error),
        (Some(packed), None) => Ok(PyBytes::new(py, &packed)),
        (None, None) => Err(internal_error("gage compression stopped for no reason")),
    }
}

/// The bytes `gage_compress` was given; ValueError naming what is corrupt and where.
#[pyfunction]
fn gage_decompress<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let original = without_gil(py, || bytepair_core::gage::decompress(data))?;
    Ok(PyBytes::new(py, &original))
}

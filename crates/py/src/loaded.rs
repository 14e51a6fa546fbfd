//! Encoders and decoders of loaded files, by their own library's rules:
//! [`CoreSentencePiece`] for a sentencepiece `.model` (unigram or BPE),
//! [`CoreHfUnigram`] and [`CoreHfDecoder`] for a Unigram `tokenizer.json`
//! (tokenizers).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyList};

use bytepair_core::{Error, Rng};

use crate::convert::{batch_buffers, ids_of, lists_of, u32_buffer, IdInts};
use crate::errors::without_gil;
use crate::in_parallel;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreSentencePiece>()?;
    m.add_class::<CoreHfUnigram>()?;
    m.add_class::<CoreHfDecoder>()?;
    Ok(())
}

/// A loaded model's encoder, by its own library's rules: a `.model` file's
/// (sentencepiece) or a Unigram tokenizer.json's (tokenizers). Their Python
/// classes make the same calls through it.
trait LoadedEncoder: Sync {
    fn ids(&self, text: &str) -> Result<Vec<u32>, Error>;
    fn batch_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, Error>;
}

impl LoadedEncoder for bytepair_core::sentencepiece::SentencePieceEncoder {
    fn ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        Ok(self.encode(text))
    }

    fn batch_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, Error> {
        Ok(self.encode_batch(texts))
    }
}

impl LoadedEncoder for bytepair_core::sentencepiece::HfUnigramEncoder {
    fn ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.encode(text)
    }

    fn batch_ids(&self, texts: &[&str]) -> Result<Vec<Vec<u32>>, Error> {
        self.encode_batch(texts)
    }
}

/// The ids of one text, without the GIL.
fn loaded_ids(py: Python<'_>, encoder: &impl LoadedEncoder, text: &str) -> PyResult<Vec<u32>> {
    without_gil(py, || encoder.ids(text))
}

/// The ids of many texts, in parallel on the pool, without the GIL.
fn loaded_batch(
    py: Python<'_>,
    encoder: &impl LoadedEncoder,
    texts: &[PyBackedStr],
) -> PyResult<Vec<Vec<u32>>> {
    let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
    in_parallel(py, || encoder.batch_ids(&refs))
}

/// The settings of a [`CoreSentencePiece`], from a dict with these keys
/// (each given): the `.model`'s trainer and normalizer specs.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct SentencePieceSettings {
    /// "unigram" or "bpe".
    algorithm: String,
    byte_fallback: bool,
    precompiled_charsmap: Vec<u8>,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    escape_whitespaces: bool,
    treat_whitespace_as_suffix: bool,
}

/// SentencePiece's own encoding of a loaded `.model` (unigram or BPE):
/// `SentencePieceProcessor.encode(text)`'s ids.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreSentencePiece {
    inner: bytepair_core::sentencepiece::SentencePieceEncoder,
    ints: IdInts,
}

#[pymethods]
impl CoreSentencePiece {
    /// `kinds`: per piece, as the `.model` names them. `settings`: see
    /// [`SentencePieceSettings`].
    #[new]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<String>,
        settings: SentencePieceSettings,
    ) -> PyResult<Self> {
        use bytepair_core::sentencepiece::{Kind, SentencePieceEncoder, SpAlgorithm, SpNormalizer};
        let size = pieces.len();
        let inner = without_gil(py, || {
            let kinds = kinds
                .iter()
                .map(|k| Kind::parse(k))
                .collect::<Result<Vec<_>, _>>()?;
            let algorithm = match settings.algorithm.as_str() {
                "unigram" => SpAlgorithm::Unigram,
                "bpe" => SpAlgorithm::Bpe,
                other => {
                    return Err(Error::InvalidVocabulary(format!(
                        "algorithm {other:?}: use unigram or bpe"
                    )))
                }
            };
            let normalizer = SpNormalizer::new(
                &settings.precompiled_charsmap,
                settings.add_dummy_prefix,
                settings.remove_extra_whitespaces,
                settings.escape_whitespaces,
                settings.treat_whitespace_as_suffix,
            )?;
            let byte_fallback = settings.byte_fallback;
            SentencePieceEncoder::new(pieces, scores, kinds, algorithm, byte_fallback, normalizer)
        })?;
        Ok(Self {
            inner,
            ints: IdInts::new(size),
        })
    }

    fn encode<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, &loaded_ids(py, &self.inner, text)?)
    }

    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &str,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let ids = loaded_ids(py, &self.inner, text)?;
        u32_buffer(py, ids.iter().copied(), ids.len())
    }

    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
    ) -> PyResult<Bound<'py, PyList>> {
        lists_of(py, &self.ints, &loaded_batch(py, &self.inner, &texts)?)
    }

    fn encode_batch_to_buffers<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        batch_buffers(py, &loaded_batch(py, &self.inner, &texts)?)
    }

    /// `SentencePieceProcessor.decode(ids)` as UTF-8 bytes, or with
    /// `raw_bytes` the byte pieces' bytes as they are.
    fn decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        unk_surface: &str,
        raw_bytes: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_of(ids)?;
        let bytes = without_gil(py, || self.inner.decode(&ids, unk_surface, raw_bytes))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A unigram segmentation drawn with probability proportional to exp(alpha x score).
    fn sample(&self, py: Python<'_>, text: &str, alpha: f64, seed: u64) -> PyResult<Vec<u32>> {
        without_gil(py, || self.inner.sample(text, alpha, &mut Rng::new(seed)))
    }

    /// [`Self::sample`] over many texts in parallel; text `i` has its own stream of `seed`.
    fn sample_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        alpha: f64,
        seed: u64,
    ) -> PyResult<Vec<Vec<u32>>> {
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        in_parallel(py, || self.inner.sample_batch(&refs, alpha, seed))
    }
}

/// The settings of a [`CoreHfUnigram`], from a dict with these keys (each
/// given): a `tokenizer.json`'s model, normalizer and pre-tokenizer.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct HfUnigramSettings {
    unk_id: Option<u32>,
    byte_fallback: bool,
    /// In order: ("precompiled", charsmap) | ("replace", (pattern, content,
    /// is_regex)) | ("prepend", text) | ("unicode", "NFC" | "NFKC" |
    /// "Lowercase").
    normalizers: Vec<(String, Py<PyAny>)>,
    whitespace_split: bool,
    metaspace: MetaspaceSettings,
    /// (content, id, normalized) of each added token.
    added_tokens: Vec<(String, u32, bool)>,
}

/// The Metaspace pre-tokenizer of a `tokenizer.json`, from a dict with these
/// keys (each given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct MetaspaceSettings {
    replacement: char,
    /// "always", "first" or "never".
    prepend_scheme: String,
    split: bool,
}

/// tokenizers' encoding of a Unigram `tokenizer.json`:
/// `encode(text, add_special_tokens=False).ids`.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreHfUnigram {
    inner: bytepair_core::sentencepiece::HfUnigramEncoder,
    ints: IdInts,
}

#[pymethods]
impl CoreHfUnigram {
    /// `settings`: see [`HfUnigramSettings`].
    #[new]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        settings: HfUnigramSettings,
    ) -> PyResult<Self> {
        use bytepair_core::sentencepiece::{
            HfAddedToken, HfNormalizerStep, HfUnigramEncoder, Metaspace, PrependScheme,
        };
        let HfUnigramSettings {
            unk_id,
            byte_fallback,
            normalizers,
            whitespace_split,
            metaspace,
            added_tokens,
        } = settings;
        let mut steps = Vec::with_capacity(normalizers.len());
        for (kind, value) in &normalizers {
            let value = value.bind(py);
            steps.push(match kind.as_str() {
                "precompiled" => HfNormalizerStep::Precompiled(value.extract()?),
                "replace" => {
                    let (pattern, content, regex): (String, String, bool) = value.extract()?;
                    HfNormalizerStep::Replace {
                        pattern,
                        content,
                        regex,
                    }
                }
                "prepend" => HfNormalizerStep::Prepend(value.extract()?),
                "unicode" => HfNormalizerStep::Unicode(value.extract()?),
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown normalizer step {other:?}"
                    )))
                }
            });
        }
        let size = pieces.len();
        let inner = without_gil(py, || {
            let metaspace = Metaspace {
                replacement: metaspace.replacement,
                prepend_scheme: PrependScheme::parse(&metaspace.prepend_scheme)?,
                split: metaspace.split,
            };
            let added = added_tokens
                .into_iter()
                .map(|(content, id, normalized)| HfAddedToken {
                    content,
                    id,
                    normalized,
                })
                .collect();
            HfUnigramEncoder::new(
                pieces,
                scores,
                unk_id,
                byte_fallback,
                steps,
                whitespace_split,
                metaspace,
                added,
            )
        })?;
        Ok(Self {
            inner,
            ints: IdInts::new(size),
        })
    }

    fn encode<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, &loaded_ids(py, &self.inner, text)?)
    }

    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &str,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let ids = loaded_ids(py, &self.inner, text)?;
        u32_buffer(py, ids.iter().copied(), ids.len())
    }

    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
    ) -> PyResult<Bound<'py, PyList>> {
        lists_of(py, &self.ints, &loaded_batch(py, &self.inner, &texts)?)
    }

    fn encode_batch_to_buffers<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        batch_buffers(py, &loaded_batch(py, &self.inner, &texts)?)
    }
}

/// tokenizers' decode of a Unigram tokenizer.json (HfDecoder).
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreHfDecoder {
    inner: bytepair_core::sentencepiece::HfDecoder,
}

#[pymethods]
impl CoreHfDecoder {
    /// `steps`: None (no decoder), else in order ("byte_fallback", None) |
    /// ("fuse", None) | ("metaspace", (replacement, prepend)) | ("replace",
    /// (pattern, content)), a literal pattern | ("strip", (content, start, stop)).
    #[new]
    fn new(pieces: Vec<String>, steps: Option<Vec<(String, Bound<'_, PyAny>)>>) -> PyResult<Self> {
        use bytepair_core::sentencepiece::{HfDecoder, HfDecoderStep};
        let steps = match steps {
            None => None,
            Some(steps) => {
                let mut read = Vec::with_capacity(steps.len());
                for (kind, value) in &steps {
                    read.push(match kind.as_str() {
                        "byte_fallback" => HfDecoderStep::ByteFallback,
                        "fuse" => HfDecoderStep::Fuse,
                        "metaspace" => {
                            let (replacement, prepend): (char, bool) = value.extract()?;
                            HfDecoderStep::Metaspace {
                                replacement: replacement.to_string(),
                                prepend,
                            }
                        }
                        "replace" => {
                            let (pattern, content) = value.extract()?;
                            HfDecoderStep::Replace { pattern, content }
                        }
                        "strip" => {
                            let (content, start, stop) = value.extract()?;
                            HfDecoderStep::Strip {
                                content,
                                start,
                                stop,
                            }
                        }
                        other => {
                            return Err(PyValueError::new_err(format!(
                                "unknown decoder step {other:?}"
                            )))
                        }
                    });
                }
                Some(read)
            }
        };
        Ok(Self {
            inner: HfDecoder::new(pieces, steps),
        })
    }

    fn decode(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<String> {
        let ids = ids_of(ids)?;
        without_gil(py, || self.inner.decode(&ids))
    }
}

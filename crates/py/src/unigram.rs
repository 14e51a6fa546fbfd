//! The unigram tokenizer trained here ([`CoreUnigram`]: encode, n-best,
//! sampling, decode) and its training ([`train_unigram`]) on counted words.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyList};

use bytepair_core::{Error, Normalizer, Rng, SpecialTokens};

use crate::convert::{batch_buffers, ids_of, lists_of, pretokenizer, u32_buffer, IdInts};
use crate::errors::{to_py, without_gil};
use crate::specials::{check_batch, chosen, unless_disallowed, Chosen};
use crate::train::PretokenCounter;
use crate::{in_parallel, thread_pool};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreUnigram>()?;
    m.add_class::<TrainedUnigram>()?;
    m.add_class::<UnigramRound>()?;
    m.add_function(wrap_pyfunction!(train_unigram, m)?)?;
    Ok(())
}

/// A unigram tokenizer: pieces with log-probabilities, special tokens, and
/// how text is cut into words ("metaspace" or a BPE-side pre-tokenizer),
/// and the normalization of the text between special tokens.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreUnigram {
    inner: bytepair_core::unigram::UnigramTokenizer,
    decoder: bytepair_core::unigram::UnigramDecoder,
    ints: IdInts,
}

fn unigram_kind(kind: &str) -> Result<bytepair_core::unigram::Kind, Error> {
    use bytepair_core::unigram::Kind;
    match kind {
        "normal" => Ok(Kind::Normal),
        "unknown" => Ok(Kind::Unknown),
        "control" => Ok(Kind::Control),
        "byte" => Ok(Kind::Byte),
        other => Err(Error::InvalidVocabulary(format!(
            "piece kind {other:?}: use normal, unknown, control or byte"
        ))),
    }
}

impl CoreUnigram {
    fn chosen(&self, allowed: Vec<usize>, disallowed: Vec<usize>) -> (Chosen, Chosen) {
        chosen(self.inner.special(), allowed, disallowed)
    }

    /// The ids of `text`, or an error for a disallowed special in it.
    fn ids(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Vec<u32>> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        unless_disallowed(py, self.inner.special(), text, &disallowed, || {
            self.inner.encode(text, allowed.selection())
        })
    }

    /// Many texts' ids in parallel, after checking them all for disallowed specials.
    fn batch_ids(
        &self,
        py: Python<'_>,
        texts: &[PyBackedStr],
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Vec<Vec<u32>>> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        check_batch(py, self.inner.special(), &refs, &disallowed)?;
        in_parallel(py, || self.inner.encode_batch(&refs, allowed.selection()))
    }
}

/// The settings of a [`CoreUnigram`], from a dict with these keys (each
/// given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct UnigramSettings {
    /// The id of `<unk>` (None: the model has none).
    unk_id: Option<u32>,
    /// Characters without a piece are encoded as their UTF-8 bytes' pieces.
    byte_fallback: bool,
    /// The longest normal piece, in characters.
    max_piece_length: usize,
    /// "metaspace" (SentencePiece's words), a builtin pre-tokenizer's name,
    /// or "regex" for `pattern`.
    pretokenizer: String,
    pattern: Option<String>,
    /// The normalizers applied to the text between special tokens, in order.
    normalize: Vec<String>,
}

#[pymethods]
impl CoreUnigram {
    /// `kinds`: "normal", "unknown", "control" or "byte" per piece.
    /// `special_tokens`: (text, id) of the control pieces, in the order
    /// `allowed`/`disallowed` indices refer to. `settings`: see
    /// [`UnigramSettings`].
    #[new]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<String>,
        special_tokens: Vec<(String, u32)>,
        settings: UnigramSettings,
    ) -> PyResult<Self> {
        use bytepair_core::unigram::{UnigramDecoder, UnigramModel, UnigramTokenizer, Words};
        let size = pieces.len();
        let (inner, decoder) = without_gil(py, || {
            let kinds = kinds
                .iter()
                .map(|k| unigram_kind(k))
                .collect::<Result<Vec<_>, _>>()?;
            let UnigramSettings {
                unk_id,
                byte_fallback,
                max_piece_length,
                pretokenizer: kind,
                pattern,
                normalize,
            } = settings;
            let metaspace = kind == "metaspace";
            let decoder = UnigramDecoder::new(&pieces, &kinds, metaspace)?;
            let model = UnigramModel::new(
                pieces,
                scores,
                kinds,
                unk_id,
                byte_fallback,
                max_piece_length,
            )?;
            let words = match metaspace {
                true => Words::Metaspace,
                false => Words::Pretokenized(pretokenizer(&kind, pattern.as_deref())?),
            };
            let tokenizer =
                UnigramTokenizer::new(model, SpecialTokens::new(special_tokens)?, words)
                    .with_normalizer(Normalizer::from_names(&normalize)?);
            Ok((tokenizer, decoder))
        })?;
        Ok(Self {
            inner,
            decoder,
            ints: IdInts::new(size),
        })
    }

    /// The text of `ids` as UTF-8 bytes (bytepair.reference.unigram.decode
    /// with errors "replace"), or with `raw_bytes` the byte pieces' bytes as
    /// they are (its text with errors "surrogateescape", encoded back).
    fn decode<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
        raw_bytes: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_of(ids)?;
        let bytes = without_gil(py, || self.decoder.decode(&ids, raw_bytes))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = self.ids(py, text, allowed, disallowed)?;
        self.ints.list(py, &ids)
    }

    /// Like `encode`, as native-endian u32 in a bytearray (for numpy).
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        let ids = self.ids(py, text, allowed, disallowed)?;
        u32_buffer(py, ids.iter().copied(), ids.len())
    }

    /// Many texts in parallel, after checking them all for disallowed specials.
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let batch = self.batch_ids(py, &texts, allowed, disallowed)?;
        lists_of(py, &self.ints, &batch)
    }

    /// Like `encode_batch`, as one flat u32 buffer and u64 offsets.
    fn encode_batch_to_buffers<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        let batch = self.batch_ids(py, &texts, allowed, disallowed)?;
        batch_buffers(py, &batch)
    }

    /// The `k` best segmentations as (ids, total log-probability), best first.
    fn nbest(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        k: usize,
    ) -> PyResult<Vec<(Vec<u32>, f64)>> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        unless_disallowed(py, self.inner.special(), text, &disallowed, || {
            self.inner.nbest(text, allowed.selection(), k)
        })
    }

    /// A segmentation sampled with probability proportional to exp(alpha x score).
    fn sample(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        alpha: f64,
        seed: u64,
    ) -> PyResult<Vec<u32>> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        unless_disallowed(py, self.inner.special(), text, &disallowed, || {
            self.inner
                .sample(text, allowed.selection(), alpha, &mut Rng::new(seed))
        })
    }

    /// [`Self::sample`] over many texts in parallel; text `i` has its own stream of `seed`.
    fn sample_batch(
        &self,
        py: Python<'_>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<usize>,
        alpha: f64,
        seed: u64,
    ) -> PyResult<Vec<Vec<u32>>> {
        let (allowed, _) = self.chosen(allowed, Vec::new());
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        in_parallel(py, || {
            self.inner
                .sample_batch(&refs, allowed.selection(), alpha, seed)
        })
    }
}

/// What a unigram training made: pieces by id with their scores and kinds,
/// and the rounds of EM and pruning.
#[pyclass(frozen, get_all, module = "bytepair._native._ext")]
struct TrainedUnigram {
    /// By id: `<unk>`, the special tokens, the 256 byte pieces (with byte
    /// fallback), then the normal pieces.
    pieces: Vec<String>,
    /// Each piece's log-probability (0 for the pieces that are not normal).
    scores: Vec<f64>,
    /// Each piece's kind: "normal", "unknown", "control" or "byte".
    kinds: Vec<&'static str>,
    rounds: Vec<UnigramRound>,
}

/// One round of unigram training: EM sub-iterations, then a pruning (none
/// in the last round).
#[pyclass(frozen, get_all, module = "bytepair._native._ext")]
#[derive(Clone)]
struct UnigramRound {
    /// Pieces in the table when the round began.
    size_at_start: usize,
    /// The E-step objective (sum of count x log Z) of each sub-iteration.
    objectives: Vec<f64>,
    /// Pieces left after the EM sub-iterations.
    size_after_em: usize,
    /// Pieces kept by the pruning, None if the round did not prune.
    size_after_prune: Option<usize>,
}

/// The settings of [`train_unigram`], from a dict with these keys (each
/// given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct UnigramTrainSettings {
    /// All ids: `<unk>`, the specials, the 256 byte pieces (with byte
    /// fallback) and the normal pieces.
    vocab_size: usize,
    special_tokens: Vec<String>,
    /// In (0, 1]: the share of character occurrences the kept characters cover.
    character_coverage: f64,
    /// In characters.
    max_piece_length: usize,
    /// How many multi-character seeds to start from (characters come on top).
    seed_size: usize,
    /// In (0, 1): the share of the table a pruning keeps.
    shrinking_factor: f64,
    num_sub_iterations: usize,
    byte_fallback: bool,
}

/// Trains a unigram model on counted words (a PretokenCounter) with
/// `settings` (see [`UnigramTrainSettings`]). `progress` is called as
/// progress(stage, table_size) with stage "seeded", "em" or "pruned";
/// Ctrl-C stops training with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (counter, settings, progress=None))]
fn train_unigram(
    py: Python<'_>,
    counter: &PretokenCounter,
    settings: UnigramTrainSettings,
    progress: Option<Py<PyAny>>,
) -> PyResult<TrainedUnigram> {
    use bytepair_core::unigram::{Stage, UnigramConfig};
    let config = UnigramConfig {
        vocab_size: settings.vocab_size,
        special_tokens: settings.special_tokens,
        character_coverage: settings.character_coverage,
        max_piece_length: settings.max_piece_length,
        seed_size: settings.seed_size,
        shrinking_factor: settings.shrinking_factor,
        num_sub_iterations: settings.num_sub_iterations,
        byte_fallback: settings.byte_fallback,
        metaspace: counter.pretokenizer.is_none(),
    };
    let mut words = Vec::with_capacity(counter.counts.len());
    for (bytes, count) in counter.counts.iter() {
        match std::str::from_utf8(bytes) {
            Ok(word) => words.push((word.to_owned(), count)),
            Err(_) => {
                return Err(PyValueError::new_err(
                    "a pre-token is not valid UTF-8 text: a unigram vocabulary is made of \
                     characters, so its pre-tokenizer must cut text at character boundaries",
                ))
            }
        }
    }
    // Training runs on a thread of the pool (its parallel steps need the
    // pool); this thread waits without the GIL and checks for Ctrl-C, which
    // Python only delivers to the main thread, and asks the trainer to stop.
    let cancel = AtomicBool::new(false);
    let callback_error: Mutex<Option<PyErr>> = Mutex::new(None);
    let mut report = |stage: Stage| -> bool {
        if cancel.load(Ordering::Relaxed) {
            return false;
        }
        let (name, size) = match stage {
            Stage::Seeded { table_size } => ("seeded", table_size),
            Stage::Em { table_size, .. } => ("em", table_size),
            Stage::Pruned { table_size, .. } => ("pruned", table_size),
            Stage::Working => return true, // only the Ctrl-C check above
        };
        let Some(callback) = &progress else {
            return true;
        };
        Python::attach(|py| match callback.call1(py, (name, size)) {
            Ok(_) => true,
            Err(e) => {
                *callback_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                false
            }
        })
    };
    let pool = thread_pool();
    let mut interrupted = None;
    let result = std::thread::scope(|scope| {
        let training = scope.spawn(|| {
            pool.install(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    bytepair_core::unigram::train(words, &config, &mut report)
                }))
            })
        });
        while !training.is_finished() {
            py.detach(|| std::thread::sleep(Duration::from_millis(20)));
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    interrupted = Some(e);
                    cancel.store(true, Ordering::Relaxed);
                }
            }
        }
        training.join()
    });
    if let Some(err) = interrupted {
        return Err(err);
    }
    if let Some(err) = callback_error
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
    {
        return Err(err);
    }
    let result = match result {
        Ok(Ok(result)) => result,
        _ => {
            return Err(PyRuntimeError::new_err(
                "internal error in bytepair's unigram trainer (please report)",
            ))
        }
    };
    let trained = result.map_err(to_py)?;
    let rounds = trained
        .rounds
        .iter()
        .map(|r| UnigramRound {
            size_at_start: r.size_at_start,
            objectives: r.objectives.clone(),
            size_after_em: r.size_after_em,
            size_after_prune: r.size_after_prune,
        })
        .collect();
    Ok(TrainedUnigram {
        pieces: trained.pieces,
        scores: trained.scores,
        kinds: trained.kinds.iter().map(|k| k.as_str()).collect(),
        rounds,
    })
}

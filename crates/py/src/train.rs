//! Pre-token counting and BPE training: the settings read from dicts, the
//! trainer run without the GIL with progress reports, Ctrl-C and timed
//! checkpoints, and its result as a [`TrainedBPE`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use bytepair_core::bpe::Progress;
use bytepair_core::{
    Error, Normalizer, PretokenCounts, Pretokenizer, SpecialTokens, TrainConfig, Trained,
};

use crate::convert;
use crate::errors::{to_py, without_gil};
use crate::in_parallel;

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PretokenCounter>()?;
    m.add_class::<TrainedBPE>()?;
    m.add_function(wrap_pyfunction!(train_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(resume_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_info, m)?)?;
    m.add_function(wrap_pyfunction!(train_bpe_symbols, m)?)?;
    Ok(())
}

/// Pre-token counts, filled batch by batch before training.
#[pyclass(module = "bytepair._native._ext")]
pub(crate) struct PretokenCounter {
    pub(crate) counts: PretokenCounts,
    /// None: SentencePiece-style words (`"metaspace"`, for unigram training).
    pub(crate) pretokenizer: Option<Pretokenizer>,
    special: SpecialTokens,
    /// Applied to the text between special tokens.
    normalizer: Normalizer,
}

#[pymethods]
impl PretokenCounter {
    #[new]
    #[pyo3(signature = (special_tokens, pretokenizer, pattern=None, normalize=Vec::new()))]
    fn new(
        special_tokens: Vec<String>,
        pretokenizer: &str,
        pattern: Option<&str>,
        normalize: Vec<String>,
    ) -> PyResult<Self> {
        let normalizer = Normalizer::from_names(&normalize).map_err(to_py)?;
        let special = SpecialTokens::new(
            special_tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| (t, i as u32))
                .collect(),
        )
        .map_err(to_py)?;
        Ok(Self {
            counts: PretokenCounts::new(),
            pretokenizer: match pretokenizer {
                "metaspace" => None,
                _ => Some(convert::pretokenizer(pretokenizer, pattern).map_err(to_py)?),
            },
            special,
            normalizer,
        })
    }

    /// Counts the pre-tokens of `texts` in parallel, without the GIL.
    fn add_texts(&mut self, py: Python<'_>, texts: Vec<PyBackedStr>) -> PyResult<()> {
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        let (counts, pretokenizer, special, normalizer) = (
            &mut self.counts,
            &self.pretokenizer,
            &self.special,
            &self.normalizer,
        );
        in_parallel(py, || match pretokenizer {
            Some(pretokenizer) => counts.add_texts(&refs, pretokenizer, special, normalizer),
            None => counts.add_texts_metaspace(&refs, special, normalizer),
        })
    }

    fn __len__(&self) -> usize {
        self.counts.len()
    }

    /// Adds (pre-token bytes, count) pairs counted elsewhere (count shards).
    fn add_counts(&mut self, counts: Vec<(Vec<u8>, u64)>) -> PyResult<()> {
        self.counts
            .add_counts(counts.iter().map(|(k, v)| (k.as_slice(), *v)))
            .map_err(to_py)
    }

    /// Empties the table.
    fn clear(&mut self) {
        self.counts.clear();
    }

    /// The (pre-token bytes, count) pairs of one partition of `partitions`
    /// (zlib's CRC-32 of the bytes modulo `partitions`), sorted by bytes: a
    /// count shard's records, without making Python objects for the others.
    fn partition_items<'py>(
        &self,
        py: Python<'py>,
        partition: u32,
        partitions: u32,
    ) -> PyResult<Vec<(Bound<'py, PyBytes>, u64)>> {
        if partition >= partitions {
            return Err(PyValueError::new_err(format!(
                "partition {partition} is not below {partitions}"
            )));
        }
        let records = py.detach(|| self.counts.partition_sorted(partition, partitions));
        Ok(records
            .into_iter()
            .map(|(k, v)| (PyBytes::new(py, k), v))
            .collect())
    }

    /// The counts as a list of (pre-token bytes, count).
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        self.counts
            .iter()
            .map(|(k, v)| (PyBytes::new(py, k), v))
            .collect()
    }
}

/// What a BPE training made.
#[pyclass(frozen, get_all, module = "bytepair._native._ext")]
struct TrainedBPE {
    /// All tokens by id: the special tokens, then the base symbols (the 256
    /// bytes, or [`train_bpe_symbols`]' `base`), then the merged tokens.
    tokens: Vec<Vec<u8>>,
    /// The merges in rank order, as id pairs.
    merges: Vec<(u32, u32)>,
    /// The count of each merge's pair when it was made.
    merge_counts: Vec<u64>,
    /// Why training stopped: "vocab_size", "no_pairs" or "min_frequency".
    stop_reason: &'static str,
}

impl From<Trained> for TrainedBPE {
    fn from(trained: Trained) -> Self {
        Self {
            tokens: trained.tokens,
            merges: trained.merges,
            merge_counts: trained.counts,
            stop_reason: trained.stop.as_str(),
        }
    }
}

/// The settings of [`train_bpe`], from a dict with these keys (each given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct BpeSettings {
    vocab_size: usize,
    special_tokens: Vec<String>,
    /// A pair is merged only if it occurs at least this many times.
    min_frequency: u64,
    /// No token longer than this many bytes is made (None: no limit).
    max_token_length: Option<usize>,
    /// None: no checkpoint is written.
    checkpoint: Option<CheckpointSettings>,
}

/// Where [`train_bpe`] keeps its state, from a dict with these keys: the
/// file, `meta`, the text stored in it (the caller's JSON, given back by
/// [`checkpoint_info`]), and `every`, the seconds between two writes (an
/// infinite or negative period: only at the end and on Ctrl-C).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct CheckpointSettings {
    path: PathBuf,
    meta: String,
    every: f64,
}

/// How [`resume_bpe`] goes on writing its checkpoint: [`CheckpointSettings`]'s
/// `meta` and `every`, the file being the one it resumes from.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct ResumeCheckpointSettings {
    meta: String,
    every: f64,
}

/// Trains BPE on counted pre-tokens with `settings` (see [`BpeSettings`]).
/// `progress(merges_done, vocab_len)` is called about ten times a second;
/// Ctrl-C stops training with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (counter, settings, progress=None))]
fn train_bpe(
    py: Python<'_>,
    counter: &PretokenCounter,
    settings: BpeSettings,
    progress: Option<Py<PyAny>>,
) -> PyResult<TrainedBPE> {
    let mut config = TrainConfig::new(
        settings.vocab_size,
        settings.special_tokens,
        settings.min_frequency,
    );
    config.max_token_length = settings.max_token_length;
    let every = settings.checkpoint.as_ref().map(|c| c.every);
    config.checkpoint = settings
        .checkpoint
        .map(
            |CheckpointSettings { path, meta, .. }| bytepair_core::bpe::Checkpointing {
                path,
                meta,
            },
        );
    let counts = &counter.counts;
    trained_with_progress(py, progress, every, |report| {
        bytepair_core::train(counts.iter(), &config, report)
    })
}

/// Goes on with a checkpointed BPE training up to `vocab_size`; with
/// `checkpoint` (see [`ResumeCheckpointSettings`]), writes new checkpoints over it.
#[pyfunction]
#[pyo3(signature = (path, vocab_size, checkpoint=None, progress=None))]
fn resume_bpe(
    py: Python<'_>,
    path: PathBuf,
    vocab_size: usize,
    checkpoint: Option<ResumeCheckpointSettings>,
    progress: Option<Py<PyAny>>,
) -> PyResult<TrainedBPE> {
    let every = checkpoint.as_ref().map(|c| c.every);
    let meta = checkpoint.map(|c| c.meta);
    trained_with_progress(py, progress, every, |report| {
        bytepair_core::bpe::resume(&path, vocab_size, meta, report).map(|(t, _)| t)
    })
}

/// A checkpoint's meta and how many merges it holds, from its head (and
/// with `verify`, after checking the whole file and its checksum).
#[pyfunction]
#[pyo3(signature = (path, verify=false))]
fn checkpoint_info(py: Python<'_>, path: PathBuf, verify: bool) -> PyResult<(String, usize)> {
    py.detach(|| {
        if verify {
            bytepair_core::bpe::checkpoint::verify(&path)?;
        }
        bytepair_core::bpe::checkpoint::read_head(&path).map(|(meta, _, merges)| (meta, merges))
    })
    .map_err(to_py)
}

/// The settings of [`train_bpe_symbols`], from a dict with these keys (each
/// given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct SymbolBpeSettings {
    vocab_size: usize,
    min_frequency: u64,
    /// Stops after this many merges (None: at `vocab_size`).
    max_merges: Option<usize>,
    /// Gives ties to the largest pair (subword-nmt's rule), else the smallest.
    largest_ties: bool,
}

/// Trains BPE over a base alphabet other than bytes (classic character
/// BPE): `base[i]` are the bytes of symbol i, each word a list of symbol
/// indices with its count. `settings`: see [`SymbolBpeSettings`].
#[pyfunction]
#[pyo3(signature = (words, base, settings, progress=None))]
fn train_bpe_symbols(
    py: Python<'_>,
    words: Vec<(Vec<u32>, u64)>,
    base: Vec<Vec<u8>>,
    settings: SymbolBpeSettings,
    progress: Option<Py<PyAny>>,
) -> PyResult<TrainedBPE> {
    let mut config = TrainConfig::new(settings.vocab_size, Vec::new(), settings.min_frequency);
    config.max_merges = settings.max_merges;
    config.largest_ties = settings.largest_ties;
    trained_with_progress(py, progress, None, |report| {
        bytepair_core::bpe::train_symbols(words, base, &config, report)
    })
}

/// Runs a BPE trainer without the GIL, calling `progress(merges_done,
/// vocab_len)` about ten times a second, checking for Ctrl-C, and asking for
/// a checkpoint every `checkpoint_every` seconds.
fn trained_with_progress<F>(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    checkpoint_every: Option<f64>,
    train: F,
) -> PyResult<TrainedBPE>
where
    F: FnOnce(&mut dyn Progress) -> Result<Trained, Error> + Send,
{
    struct Report {
        callback: Option<Py<PyAny>>,
        last_report: Instant,
        checkpoint_every: Option<Duration>,
        last_checkpoint: Instant,
        error: Option<PyErr>,
    }
    impl Progress for Report {
        fn merged(&mut self, merges_done: usize, vocab_len: usize) -> bool {
            if self.last_report.elapsed() < Duration::from_millis(100) {
                return true;
            }
            self.last_report = Instant::now();
            Python::attach(|py| {
                if let Err(e) = py.check_signals() {
                    self.error = Some(e);
                    return false;
                }
                if let Some(callback) = &self.callback {
                    if let Err(e) = callback.call1(py, (merges_done, vocab_len)) {
                        self.error = Some(e);
                        return false;
                    }
                }
                true
            })
        }
        fn checkpoint_due(&mut self) -> bool {
            let due = self
                .checkpoint_every
                .is_some_and(|every| self.last_checkpoint.elapsed() >= every);
            if due {
                self.last_checkpoint = Instant::now();
            }
            due
        }
    }
    let mut report = Report {
        callback: progress.as_ref().map(|p| p.clone_ref(py)),
        last_report: Instant::now(),
        // An infinite or negative period: checkpoints only at the end and on Ctrl-C.
        checkpoint_every: checkpoint_every.and_then(|s| Duration::try_from_secs_f64(s).ok()),
        last_checkpoint: Instant::now(),
        error: None,
    };
    let result = without_gil(py, || train(&mut report));
    if let Some(err) = report.error {
        return Err(err);
    }
    let trained = result?;
    if let Some(callback) = &progress {
        callback.call1(py, (trained.merges.len(), trained.tokens.len()))?;
    }
    Ok(trained.into())
}

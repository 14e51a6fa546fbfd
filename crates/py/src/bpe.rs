//! The BPE encoders: [`CoreBPE`] (byte-level BPE: tiktoken's and
//! HuggingFace's files, and the models trained here), with the batch
//! pipeline for large batches, and [`CoreSymbolBPE`] (merge rules over an
//! alphabet of symbols: classic character BPE).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyByteArray, PyBytes, PyList};

use bytepair_core::batch_pipeline::{self, Failure};
use bytepair_core::{Error, Normalizer, Ranking, Rng, Selection, Strip, Vocab};

use crate::convert::{
    batch_buffers, ids_of, merge_pairs, offsets_buffer, offsets_of, pretokenizer, token_bytes,
    u32_buffer, with_id_buffer, IdInts,
};
use crate::errors::{internal_error, to_py, without_gil};
use crate::specials::{check_batch, chosen, unless_disallowed, Chosen};
use crate::{in_parallel, thread_pool};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreBPE>()?;
    m.add_class::<CoreSymbolBPE>()?;
    Ok(())
}

/// A BPE tokenizer: vocabulary, merges, special tokens, pre-tokenizer.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreBPE {
    inner: bytepair_core::Tokenizer,
    ints: IdInts,
}

/// How a [`CoreBPE`] reads text, from a dict with these keys (each given).
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
struct EncoderSettings {
    /// A builtin pre-tokenizer's name, or "regex" for `pattern`.
    pretokenizer: String,
    pattern: Option<String>,
    /// Per special token (in order), whether it swallows the whitespace on
    /// its left / right (HuggingFace's lstrip / rstrip); None: none does.
    special_strip: Option<Vec<(bool, bool)>>,
    /// The normalizers applied to the text between special tokens, in order.
    normalize: Vec<String>,
}

/// A vocabulary's merges in rank order, and the ids of its tokens (of two
/// bytes or more) that no merge makes from their bytes.
type NaturalMerges = (Vec<(u32, u32)>, Vec<u32>);

impl CoreBPE {
    /// Encodes a large batch and hands the ids of its texts to `take`, group
    /// by group in any order (with the index of the group's first text), on
    /// this thread with the GIL, which is released while this thread encodes
    /// or waits (see [`bytepair_core::batch_pipeline`]). Building lists needs the
    /// GIL: after the encoding it would be a serial tail, and beside a full
    /// pool a third thread on the cores.
    fn pipelined(
        &self,
        py: Python<'_>,
        refs: &[&str],
        selection: Selection<'_>,
        take: impl FnMut(usize, &[Vec<u32>]) -> PyResult<()>,
    ) -> PyResult<()> {
        batch_pipeline::encode_in_groups(
            &thread_pool(),
            refs,
            PIPELINE_GROUP_BYTES,
            |text| self.inner.encode_with_special(text, selection),
            take,
            |work| py.detach(work),
        )
        .map_err(|failure| match failure {
            Failure::Text(e) => to_py(e),
            Failure::Panic(what) => internal_error(&what),
            Failure::Take(e) => e,
        })
    }

    /// [`Self::pipelined`] after the special-token check of [`Self::batch_ids`].
    fn checked_pipelined(
        &self,
        py: Python<'_>,
        texts: &[PyBackedStr],
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        take: impl FnMut(usize, &[Vec<u32>]) -> PyResult<()>,
    ) -> PyResult<()> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        check_batch(py, self.inner.vocab().special(), &refs, &disallowed)?;
        self.pipelined(py, &refs, allowed.selection(), take)
    }

    fn id_list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        self.ints.list(py, ids)
    }

    fn chosen(&self, allowed: Vec<usize>, disallowed: Vec<usize>) -> (Chosen, Chosen) {
        chosen(self.inner.vocab().special(), allowed, disallowed)
    }

    /// Encodes `text` into `out` (empty). `dropout`: (probability, seed) for
    /// BPE-dropout, None for the plain encoding.
    fn ids(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
        out: &mut Vec<u32>,
    ) -> PyResult<()> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        let special = self.inner.vocab().special();
        unless_disallowed(py, special, text, &disallowed, || match dropout {
            None => self
                .inner
                .encode_with_special_into(text, allowed.selection(), out),
            Some((p, seed)) => {
                let mut rng = Rng::new(seed);
                *out = self
                    .inner
                    .encode_with_dropout(text, allowed.selection(), p, &mut rng)?;
                Ok(())
            }
        })
    }

    fn batch_ids(
        &self,
        py: Python<'_>,
        texts: &[PyBackedStr],
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
    ) -> PyResult<Vec<Vec<u32>>> {
        let (allowed, disallowed) = self.chosen(allowed, disallowed);
        let refs: Vec<&str> = texts.iter().map(|t| &**t).collect();
        check_batch(py, self.inner.vocab().special(), &refs, &disallowed)?;
        if let Some((p, seed)) = dropout {
            let selection = allowed.selection();
            return in_parallel(py, || {
                self.inner
                    .encode_batch_with_dropout(&refs, selection, p, seed)
            });
        }
        // Handing a small batch to the pool costs more than encoding it here.
        let total_bytes: usize = refs.iter().map(|t| t.len()).sum();
        if refs.len() < 2 || total_bytes < SMALL_BATCH_BYTES {
            let selection = allowed.selection();
            return without_gil(py, || {
                refs.iter()
                    .map(|t| self.inner.encode_with_special(t, selection))
                    .collect()
            });
        }
        in_parallel(py, || self.inner.encode_batch(&refs, allowed.selection()))
    }
}

/// thread: on 2 cores, batches of 16 to 64 KB gained at most 1.09x from the
/// pool (waking its threads costs about what sharing saves), and 128 KB 1.6x.
const SMALL_BATCH_BYTES: usize = 1 << 16;
/// Batches from this size on are encoded in groups, the calling thread taking
/// part and building the lists (or filling the flat ids) between its groups;
/// smaller ones go to the pool whole, and their lists follow.
const PIPELINE_BYTES: usize = 1 << 20;
/// ... in groups of texts of about this many bytes.
const PIPELINE_GROUP_BYTES: usize = 1 << 15;

/// Whether a batch takes the pipelined path (see [`PIPELINE_BYTES`]).
fn pipelines(texts: &[PyBackedStr]) -> bool {
    texts.len() >= 2 && texts.iter().map(|t| t.len()).sum::<usize>() >= PIPELINE_BYTES
}

#[pymethods]
impl CoreBPE {
    /// `tokens[id]`: bytes, or None for an unused id. `merges`: id pairs in
    /// rank order, or None for tiktoken's rule (rank = id of the merged bytes).
    /// `special_tokens`: (text, id), in the order `allowed` / `disallowed`
    /// indices refer to. `settings`: see [`EncoderSettings`].
    #[new]
    fn new(
        tokens: &Bound<'_, PyAny>,
        merges: Option<&Bound<'_, PyAny>>,
        special_tokens: Vec<(String, u32)>,
        settings: EncoderSettings,
    ) -> PyResult<Self> {
        let py = tokens.py();
        let EncoderSettings {
            pretokenizer: kind,
            pattern,
            special_strip,
            normalize,
        } = settings;
        let tokens = token_bytes(tokens)?;
        let merges = merges.map(merge_pairs).transpose()?;
        let pretokenizer = pretokenizer(&kind, pattern.as_deref()).map_err(to_py)?;
        let normalizer = Normalizer::from_names(&normalize).map_err(to_py)?;
        let ranking = merges.map_or(Ranking::TokenIds, Ranking::Merges);
        let vocab = in_parallel(py, || {
            // The bytes objects are read in place (immutable, and kept alive here).
            let vocab = Vocab::new(tokens.iter().map(Option::as_deref), ranking, special_tokens)?;
            match special_strip {
                Some(strip) => vocab.with_special_strip(
                    strip
                        .into_iter()
                        .map(|(left, right)| Strip { left, right })
                        .collect(),
                ),
                None => Ok(vocab),
            }
        })?;
        let ints = IdInts::new(vocab.len());
        Ok(Self {
            inner: bytepair_core::Tokenizer::new(vocab, pretokenizer).with_normalizer(normalizer),
            ints,
        })
    }

    // ---- Encoding ----

    /// Forgets the pieces every thread's cache learned (ids never change).
    fn clear_cache(&self) {
        self.inner.clear_cache()
    }

    fn encode_ordinary<'py>(&self, py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyList>> {
        with_id_buffer(
            |ids| without_gil(py, || self.inner.encode_ordinary_into(text, ids)),
            |ids| self.id_list(py, ids),
        )
    }

    /// `allowed` / `disallowed`: indices into the special-token list.
    /// Returns the ids, or raises naming the first disallowed special token.
    #[pyo3(signature = (text, allowed, disallowed, dropout=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
    ) -> PyResult<Bound<'py, PyList>> {
        with_id_buffer(
            |ids| self.ids(py, text, allowed, disallowed, dropout, ids),
            |ids| self.id_list(py, ids),
        )
    }

    /// Like `encode`, as native-endian u32 in a bytearray (for numpy, no boxing).
    #[pyo3(signature = (text, allowed, disallowed, dropout=None))]
    fn encode_to_buffer<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
    ) -> PyResult<Bound<'py, PyByteArray>> {
        with_id_buffer(
            |ids| self.ids(py, text, allowed, disallowed, dropout, ids),
            |ids| u32_buffer(py, ids.iter().copied(), ids.len()),
        )
    }

    #[pyo3(signature = (texts, allowed, disallowed, dropout=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
    ) -> PyResult<Bound<'py, PyList>> {
        if dropout.is_some() || !pipelines(&texts) {
            let batch = self.batch_ids(py, &texts, allowed, disallowed, dropout)?;
            let lists = batch
                .iter()
                .map(|ids| self.id_list(py, ids))
                .collect::<PyResult<Vec<_>>>()?;
            return PyList::new(py, lists);
        }
        let mut lists = vec![None; texts.len()];
        self.checked_pipelined(py, &texts, allowed, disallowed, |first, group| {
            for (list, ids) in lists[first..].iter_mut().zip(group) {
                *list = Some(self.id_list(py, ids)?);
            }
            Ok(())
        })?;
        let lists: Option<Vec<_>> = lists.into_iter().collect();
        PyList::new(
            py,
            lists.ok_or_else(|| internal_error("a text of the batch was not handed over"))?,
        )
    }

    /// Like `encode_batch`, as (all ids as u32, offsets as u64: text i is
    /// ids[offsets[i]:offsets[i+1]]), both in bytearrays.
    #[pyo3(signature = (texts, allowed, disallowed, dropout=None))]
    fn encode_batch_to_buffers<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<PyBackedStr>,
        allowed: Vec<usize>,
        disallowed: Vec<usize>,
        dropout: Option<(f64, u64)>,
    ) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
        if dropout.is_some() || !pipelines(&texts) {
            let batch = self.batch_ids(py, &texts, allowed, disallowed, dropout)?;
            return batch_buffers(py, &batch);
        }
        // The groups come in any order: each is kept as one run of ids (with
        // its first text's index), put in order at the end.
        let mut runs = Vec::new();
        self.checked_pipelined(py, &texts, allowed, disallowed, |first, group| {
            let lengths: Vec<usize> = group.iter().map(Vec::len).collect();
            runs.push((first, group.concat(), lengths));
            Ok(())
        })?;
        runs.sort_unstable_by_key(|&(first, _, _)| first);
        let offsets = offsets_of(
            runs.iter()
                .flat_map(|(_, _, lengths)| lengths.iter().copied()),
        );
        let total = offsets[offsets.len() - 1] as usize;
        let ids = u32_buffer(
            py,
            runs.iter().flat_map(|(_, flat, _)| flat).copied(),
            total,
        )?;
        Ok((ids, offsets_buffer(py, &offsets)?))
    }

    /// The pieces the pre-tokenizer cuts `text` into, once normalized
    /// (specials not cut out).
    fn pretokenize(&self, py: Python<'_>, text: &str) -> PyResult<Vec<String>> {
        without_gil(py, || {
            let text = self.inner.normalizer().apply(text);
            self.inner
                .pretokenizer()
                .pieces(&text)
                .map(|p| p.into_iter().map(str::to_owned).collect())
        })
    }

    // ---- Decoding ----

    fn decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_of(ids)?;
        let bytes = without_gil(py, || self.inner.decode_bytes(&ids))?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn token_bytes<'py>(&self, py: Python<'py>, id: u32) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = bytepair_core::decode_bytes(self.inner.vocab(), &[id]).map_err(|error| {
            match error {
                // One id: there is no position to name.
                Error::UnusedId { id, .. } => PyValueError::new_err(format!(
                    "token id {id} is unused: no token of this vocabulary has it"
                )),
                other => to_py(other),
            }
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The id of the ordinary (non-special) token with exactly these bytes.
    fn token_id(&self, bytes: &[u8]) -> Option<u32> {
        self.inner.vocab().id_of(bytes)
    }

    // ---- Miscellaneous ----

    fn n_vocab(&self) -> usize {
        self.inner.vocab().len()
    }

    /// (merges in rank order, ids of tokens no merge makes from their bytes).
    fn merges(&self, py: Python<'_>) -> PyResult<NaturalMerges> {
        without_gil(py, || Ok(self.inner.merges()))
    }
}

/// Merge rules over an alphabet of symbol ids (classic character BPE):
/// encodes words given as symbol ids.
#[pyclass(frozen, module = "bytepair._native._ext")]
struct CoreSymbolBPE {
    rules: bytepair_core::bpe::SymbolRules,
}

#[pymethods]
impl CoreSymbolBPE {
    /// `rules`: (left id, right id, result id) in rank order; a repeated pair keeps its first rank.
    #[new]
    fn new(rules: Vec<(u32, u32, u32)>) -> Self {
        Self {
            rules: bytepair_core::bpe::SymbolRules::new(rules),
        }
    }

    /// Each word's symbols after merging by rank, in parallel without the GIL.
    fn encode_words(&self, py: Python<'_>, words: Vec<Vec<u32>>) -> PyResult<Vec<Vec<u32>>> {
        use rayon::prelude::*;
        in_parallel(py, || {
            Ok(words
                .into_par_iter()
                .map(|mut word| {
                    self.rules.merge(&mut word);
                    word
                })
                .collect())
        })
    }
}

//! The Rust/Python boundary of bytepair, and nothing else: plain data in and
//! out (`str`, `bytes`, `list[int]`), the GIL released for real work, frozen
//! classes, every core error and every panic turned into a Python exception.

use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyTuple};

use bytepair_core::batch_pipeline::{self, panic_message, Failure};
use bytepair_core::rng::Rng;
use bytepair_core::special::Strip;
use bytepair_core::vocab::Ranking;
use bytepair_core::{
    Error, Normalizer, PretokenCounts, Pretokenizer, Selection, SpecialTokens, TrainConfig, Vocab,
};

fn to_py(err: Error) -> PyErr {
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

/// The thread pool of this process. A pool's threads do not survive `fork`
/// (multiprocessing, DataLoader workers): a child that used the parent's pool
/// would wait forever, so each process makes its own on first use.
/// Its size follows RAYON_NUM_THREADS, else the number of cores.
fn thread_pool() -> Arc<rayon::ThreadPool> {
    static POOL: Mutex<Option<(u32, Arc<rayon::ThreadPool>)>> = Mutex::new(None);
    let pid = std::process::id();
    let mut slot = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match slot.as_ref() {
        Some((owner, pool)) if *owner == pid => pool.clone(),
        _ => {
            // A pool inherited through fork has no threads; never touch it again.
            if let Some(inherited) = slot.take() {
                std::mem::forget(inherited);
            }
            let pool = Arc::new(
                rayon::ThreadPoolBuilder::new()
                    .thread_name(|i| format!("bytepair-{i}"))
                    .build()
                    .expect("starting worker threads"),
            );
            *slot = Some((pid, pool.clone()));
            pool
        }
    }
}

/// Runs `work` without the GIL on the calling thread (so Ctrl-C can still be
/// checked from it); a panic becomes RuntimeError, never an abort.
fn without_gil<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(work)))
        .map_err(|panic| internal_error(&panic_message(&*panic)))?
        .map_err(to_py)
}

fn internal_error(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "internal error in bytepair's core (please report): {what}"
    ))
}

/// Like [`without_gil`], for parallel work: runs on this process's pool.
fn in_parallel<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    let pool = thread_pool();
    without_gil(py, || pool.install(work))
}

/// A model's tokens (bytes, or None for an unused id), read in place; a
/// wrong type is named by its index, which pyo3's conversion would not say.
fn token_bytes(tokens: &Bound<'_, PyAny>) -> PyResult<Vec<Option<PyBackedBytes>>> {
    let mut read = Vec::with_capacity(tokens.len().unwrap_or(0));
    for (i, token) in tokens.try_iter()?.enumerate() {
        let token = token?;
        if token.is_none() {
            read.push(None);
        } else if token.is_instance_of::<PyBytes>() || token.is_instance_of::<PyByteArray>() {
            read.push(Some(token.extract()?));
        } else {
            let kind = token.get_type().name()?;
            return Err(PyTypeError::new_err(format!(
                "tokens[{i}] is {kind}, not bytes (or None)"
            )));
        }
    }
    Ok(read)
}

/// A model's merges, each a tuple or list of two ids, by rank; a bad one is
/// named by its rank and shown as given.
fn merge_pairs(merges: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u32)>> {
    let mut read = Vec::with_capacity(merges.len().unwrap_or(0));
    for (rank, pair) in merges.try_iter()?.enumerate() {
        let pair = pair?;
        match id_pair(&pair) {
            Some(ids) => read.push(ids),
            None => {
                return Err(PyValueError::new_err(format!(
                    "merge rank {rank} is {}, not a pair of token ids",
                    pair.repr()?
                )))
            }
        }
    }
    Ok(read)
}

fn id_pair(pair: &Bound<'_, PyAny>) -> Option<(u32, u32)> {
    let (left, right) = if let Ok(pair) = pair.cast::<PyTuple>() {
        (pair.len() == 2).then(|| (pair.get_item(0), pair.get_item(1)))?
    } else if let Ok(pair) = pair.cast::<PyList>() {
        (pair.len() == 2).then(|| (pair.get_item(0), pair.get_item(1)))?
    } else {
        return None;
    };
    Some((token_id(&left.ok()?)?, token_id(&right.ok()?)?))
}

/// An id as Python's `operator.index` reads it (numpy integers too), but not
/// a bool, which is an int to Python and never meant as an id.
fn token_id(value: &Bound<'_, PyAny>) -> Option<u32> {
    if value.is_instance_of::<PyBool>() {
        return None;
    }
    value.extract().ok()
}

/// Token ids as the decoders read them: a one-dimensional buffer of u32 in
/// this machine's byte order (a numpy uint32 array, as `encode_to_numpy`
/// and datasets give) copied at once; anything else as a sequence of ints,
/// one by one (a 7.4 M-id numpy array that way took 0.7 s, twice as long as
/// the list of its ints). PyBuffer takes a big-endian ">I" for u32 too, and
/// its ids would come out byte-swapped: only native formats are copied.
fn ids_of(ids: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
    if let Ok(buffer) = PyBuffer::<u32>::get(ids) {
        let native = match buffer.format().to_bytes() {
            b"I" | b"@I" | b"=I" => true,
            b"<I" => cfg!(target_endian = "little"),
            b">I" | b"!I" => cfg!(target_endian = "big"),
            _ => false,
        };
        if native && buffer.dimensions() == 1 {
            return buffer.to_vec(ids.py());
        }
    }
    ids.extract()
}

fn pretokenizer(kind: &str, pattern: Option<&str>) -> Result<Pretokenizer, Error> {
    match (kind, pattern) {
        ("regex", Some(p)) => Pretokenizer::from_pattern(p),
        (name, _) => Pretokenizer::builtin(name),
    }
}

/// Which special tokens, by index into the tokenizer's special-token list.
enum Chosen {
    All,
    Nothing,
    Some(Vec<usize>),
}

impl Chosen {
    fn from(indices: Vec<usize>, total: usize) -> Self {
        if indices.is_empty() {
            Chosen::Nothing
        } else if indices.len() == total {
            Chosen::All
        } else {
            Chosen::Some(indices)
        }
    }
    fn selection(&self) -> Selection<'_> {
        match self {
            Chosen::All => Selection::All,
            Chosen::Nothing => Selection::Nothing,
            Chosen::Some(v) => Selection::Some(v),
        }
    }
}

/// A BPE tokenizer: vocabulary, merges, special tokens, pre-tokenizer.
#[pyclass(frozen, module = "bytepair._native")]
struct CoreBPE {
    inner: bytepair_core::Tokenizer,
    ints: IdInts,
}

/// Python ints for the ids of a vocabulary, made on first use: a list of
/// ids then costs a reference count per id instead of allocating an int
/// each. Each thread keeps its own ints: when two threads shared them, every
/// list one of them built first pulled the reference counts it writes out of
/// the other core's cache, and lists from two threads came out barely faster
/// than from one.
struct IdInts {
    size: usize,
    /// Names this vocabulary's table in a thread's tables (never reused).
    key: u64,
}

/// The int tables a thread keeps, the most recently made last: a few, so
/// that a long-lived thread that meets many vocabularies stays bounded.
const INT_TABLES_PER_THREAD: usize = 4;

type IntTable = Vec<Option<Py<PyInt>>>;

thread_local! {
    static INT_TABLES: RefCell<Vec<(u64, IntTable)>> = const { RefCell::new(Vec::new()) };
}

impl IdInts {
    fn new(size: usize) -> Self {
        static NEXT_KEY: AtomicU64 = AtomicU64::new(0);
        Self {
            size,
            key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// `ids` (all below the vocabulary size) as a list of this thread's ints.
    fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
        INT_TABLES.with(|tables| {
            // Building a list may collect garbage, whose finalizers may encode
            // on this thread: that inner call makes its ints afresh.
            let Ok(mut tables) = tables.try_borrow_mut() else {
                return PyList::new(py, ids);
            };
            let at = match tables.iter().position(|(key, _)| *key == self.key) {
                Some(at) => at,
                None => {
                    if tables.len() == INT_TABLES_PER_THREAD {
                        tables.remove(0);
                    }
                    let mut table = IntTable::new();
                    table.resize_with(self.size, || None);
                    tables.push((self.key, table));
                    tables.len() - 1
                }
            };
            let table = &mut tables[at].1;
            fill_list(py, table, ids)
        })
    }
}

/// How far ahead of the id being stored its table entry, and then its int,
/// are fetched into the CPU cache: the table and the ints are scattered over
/// megabytes, and storing one id is only a load and a reference count.
const INT_TABLE_AHEAD: usize = 32;
const INT_AHEAD: usize = 16;

#[inline(always)]
fn prefetch<T>(at: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

thread_local! {
    /// This thread's buffer for the ids of one text, kept from call to call.
    /// A new one each call is an allocation of 4/3 of the text's size, which
    /// is slow where other code left the C heap fragmented (after HF
    /// tokenizers had encoded 3 MB, that malloc took about 3% of encoding
    /// documents one call each).
    static ID_BUFFER: Cell<Vec<u32>> = const { Cell::new(Vec::new()) };
}

/// The most ids [`ID_BUFFER`] keeps between calls (16 MB): the buffer of a
/// larger text goes with its call.
const ID_BUFFER_KEEP: usize = 1 << 22;

/// Encodes with `fill` into this thread's id buffer (empty), then hands the
/// ids to `finish`. A nested call (from a finalizer that encodes) gets a
/// buffer of its own.
fn with_id_buffer<T>(
    fill: impl FnOnce(&mut Vec<u32>) -> PyResult<()>,
    finish: impl FnOnce(&[u32]) -> PyResult<T>,
) -> PyResult<T> {
    let mut ids = ID_BUFFER.take();
    ids.clear();
    let result = fill(&mut ids).and_then(|()| finish(&ids));
    if ids.capacity() <= ID_BUFFER_KEEP {
        ID_BUFFER.set(ids);
    }
    result
}

/// The list of `ids`' ints from `table`, making those not made yet.
fn fill_list<'py>(
    py: Python<'py>,
    table: &mut IntTable,
    ids: &[u32],
) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: with the GIL held, a new list of `ids.len()` empty places; each
    // place gets a new reference. If making an int fails, the places left
    // empty are allowed: the list's deallocation skips them.
    unsafe {
        let list = pyo3::ffi::PyList_New(ids.len() as pyo3::ffi::Py_ssize_t);
        if list.is_null() {
            return Err(PyErr::fetch(py));
        }
        let list = Bound::from_owned_ptr(py, list).cast_into_unchecked::<PyList>();
        for (i, &id) in ids.iter().enumerate() {
            if let Some(&ahead) = ids.get(i + INT_TABLE_AHEAD) {
                prefetch(table.as_ptr().wrapping_add(ahead as usize));
            }
            if let Some(&ahead) = ids.get(i + INT_AHEAD) {
                if let Some(Some(int)) = table.get(ahead as usize) {
                    prefetch(int.as_ptr());
                }
            }
            let Some(slot) = table.get_mut(id as usize) else {
                // The list's deallocation skips the places left empty.
                return Err(internal_error(&format!(
                    "id {id} is beyond the vocabulary of {} ids",
                    table.len()
                )));
            };
            let int = match slot {
                Some(int) => int.as_ptr(),
                empty => empty.insert(id.into_pyobject(py)?.unbind()).as_ptr(),
            };
            pyo3::ffi::Py_INCREF(int);
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as pyo3::ffi::Py_ssize_t, int);
        }
        Ok(list)
    }
}

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
        let total = self.inner.vocab().special().tokens().len();
        (
            Chosen::from(allowed, total),
            Chosen::from(disallowed, total),
        )
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

/// Batches smaller than this (in bytes of text) are encoded on the calling
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

/// `count` ids as native-endian u32 in a new bytearray.
fn u32_buffer<'py>(
    py: Python<'py>,
    ids: impl Iterator<Item = u32>,
    count: usize,
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, count * 4, |buf| {
        for (chunk, id) in buf.chunks_exact_mut(4).zip(ids) {
            chunk.copy_from_slice(&id.to_ne_bytes());
        }
        Ok(())
    })
}

/// A batch's lists of ids, each from the vocabulary's ints (as `encode`'s
/// list): with an int made afresh for every id, llama2's model took 295
/// ms instead of 255 on 3 MB of multilingual text in texts of about 10 KB.
fn lists_of<'py>(
    py: Python<'py>,
    ints: &IdInts,
    batch: &[Vec<u32>],
) -> PyResult<Bound<'py, PyList>> {
    let lists = batch
        .iter()
        .map(|ids| ints.list(py, ids))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, lists)
}

/// The offsets of texts of these lengths in their flat ids
/// (`ids[offsets[i]..offsets[i + 1]]` is text `i`), from 0 to the total.
fn offsets_of(lengths: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut offsets = vec![0u64];
    offsets.extend(lengths.scan(0u64, |end, length| {
        *end += length as u64;
        Some(*end)
    }));
    offsets
}

/// A batch's offsets as native-endian u64, for numpy's int64.
fn offsets_buffer<'py>(py: Python<'py>, offsets: &[u64]) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, offsets.len() * 8, |buf| {
        for (chunk, offset) in buf.chunks_exact_mut(8).zip(offsets) {
            chunk.copy_from_slice(&offset.to_ne_bytes());
        }
        Ok(())
    })
}

/// A batch's ids as one flat u32 buffer and its offsets.
fn batch_buffers<'py>(
    py: Python<'py>,
    batch: &[Vec<u32>],
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
    let offsets = offsets_of(batch.iter().map(Vec::len));
    let total = offsets[offsets.len() - 1] as usize;
    let ids = u32_buffer(py, batch.iter().flatten().copied(), total)?;
    Ok((ids, offsets_buffer(py, &offsets)?))
}

#[pymethods]
impl CoreBPE {
    /// `tokens[id]`: bytes, or None for an unused id. `merges`: id pairs in
    /// rank order, or None for tiktoken's rule (rank = id of the merged bytes).
    /// `special_strip`: per special token (in order), whether it swallows the
    /// whitespace on its left / right (HuggingFace's lstrip / rstrip).
    #[new]
    #[pyo3(signature = (tokens, merges, special_tokens, pretokenizer, pattern=None, special_strip=None, normalize=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        tokens: &Bound<'_, PyAny>,
        merges: Option<&Bound<'_, PyAny>>,
        special_tokens: Vec<(String, u32)>,
        pretokenizer: &str,
        pattern: Option<&str>,
        special_strip: Option<Vec<(bool, bool)>>,
        normalize: Vec<String>,
    ) -> PyResult<Self> {
        let tokens = token_bytes(tokens)?;
        let merges = merges.map(merge_pairs).transpose()?;
        let pretokenizer = self::pretokenizer(pretokenizer, pattern).map_err(to_py)?;
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
        let bytes =
            bytepair_core::decode::decode_bytes(self.inner.vocab(), &[id]).map_err(|error| {
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
    #[allow(clippy::type_complexity)]
    fn merges(&self, py: Python<'_>) -> PyResult<(Vec<(u32, u32)>, Vec<u32>)> {
        without_gil(py, || Ok(self.inner.vocab().merges()))
    }
}

/// tiktoken's error for special-token text the call did not allow, raised
/// as `bytepair.DisallowedSpecialError` (a ValueError).
/// Runs `work` without the GIL unless `text` holds a disallowed special
/// token, which raises DisallowedSpecialError naming it (tiktoken's contract).
fn unless_disallowed<T: Send>(
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
fn check_batch(
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

fn disallowed_error(
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

/// Pre-token counts, filled batch by batch before training.
#[pyclass(module = "bytepair._native")]
struct PretokenCounter {
    counts: PretokenCounts,
    /// None: SentencePiece-style words (`"metaspace"`, for unigram training).
    pretokenizer: Option<Pretokenizer>,
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
                _ => Some(self::pretokenizer(pretokenizer, pattern).map_err(to_py)?),
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

/// Trains BPE on counted pre-tokens. `progress(merges_done, vocab_len)` is
/// called about ten times a second; Ctrl-C stops training with KeyboardInterrupt.
/// Returns (tokens, merges, counts, stop_reason).
#[pyfunction]
#[pyo3(signature = (counter, vocab_size, special_tokens, min_frequency, max_token_length=None, checkpoint=None, progress=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn train_bpe(
    py: Python<'_>,
    counter: &PretokenCounter,
    vocab_size: usize,
    special_tokens: Vec<String>,
    min_frequency: u64,
    max_token_length: Option<usize>,
    checkpoint: Option<(std::path::PathBuf, String, f64)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<Vec<u8>>, Vec<(u32, u32)>, Vec<u64>, &'static str)> {
    let mut config = TrainConfig::new(vocab_size, special_tokens, min_frequency);
    config.max_token_length = max_token_length;
    let every = checkpoint.as_ref().map(|c| c.2);
    config.checkpoint =
        checkpoint.map(|(path, meta, _)| bytepair_core::bpe::train::Checkpointing { path, meta });
    let counts = &counter.counts;
    trained_with_progress(py, progress, every, |report| {
        bytepair_core::train(counts.iter(), &config, report)
    })
}

/// Goes on with a checkpointed BPE training up to `vocab_size`; with
/// `checkpoint` = (meta, seconds), writes new checkpoints over it with that
/// meta every so many seconds. Returns what `train_bpe` returns.
#[pyfunction]
#[pyo3(signature = (path, vocab_size, checkpoint=None, progress=None))]
#[allow(clippy::type_complexity)]
fn resume_bpe(
    py: Python<'_>,
    path: std::path::PathBuf,
    vocab_size: usize,
    checkpoint: Option<(String, f64)>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<Vec<u8>>, Vec<(u32, u32)>, Vec<u64>, &'static str)> {
    let every = checkpoint.as_ref().map(|c| c.1);
    let meta = checkpoint.map(|c| c.0);
    trained_with_progress(py, progress, every, |report| {
        bytepair_core::bpe::train::resume(&path, vocab_size, meta, report).map(|(t, _)| t)
    })
}

/// A checkpoint's meta and how many merges it holds, from its head (and
/// with `verify`, after checking the whole file and its checksum).
#[pyfunction]
#[pyo3(signature = (path, verify=false))]
fn checkpoint_info(
    py: Python<'_>,
    path: std::path::PathBuf,
    verify: bool,
) -> PyResult<(String, usize)> {
    py.detach(|| {
        if verify {
            bytepair_core::bpe::checkpoint::verify(&path)?;
        }
        bytepair_core::bpe::checkpoint::read_head(&path).map(|(meta, _, merges)| (meta, merges))
    })
    .map_err(to_py)
}

/// Merge rules over an alphabet of symbol ids (classic character BPE):
/// encodes words given as symbol ids.
#[pyclass(frozen, module = "bytepair._native")]
struct CoreSymbolBPE {
    rules: bytepair_core::bpe::encode::SymbolRules,
}

#[pymethods]
impl CoreSymbolBPE {
    /// `rules`: (left id, right id, result id) in rank order; a repeated pair keeps its first rank.
    #[new]
    fn new(rules: Vec<(u32, u32, u32)>) -> Self {
        Self {
            rules: bytepair_core::bpe::encode::SymbolRules::new(rules),
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

/// Trains BPE over a base alphabet other than bytes (classic character
/// BPE): `base[i]` are the bytes of symbol i, each word a list of symbol
/// indices with its count; `max_merges` stops after that many merges;
/// `largest_ties` gives ties to the largest pair (subword-nmt's rule).
/// Returns what `train_bpe` returns.
#[pyfunction]
#[pyo3(signature = (words, base, vocab_size, min_frequency, max_merges, largest_ties, progress=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn train_bpe_symbols(
    py: Python<'_>,
    words: Vec<(Vec<u32>, u64)>,
    base: Vec<Vec<u8>>,
    vocab_size: usize,
    min_frequency: u64,
    max_merges: Option<usize>,
    largest_ties: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<Vec<u8>>, Vec<(u32, u32)>, Vec<u64>, &'static str)> {
    let mut config = TrainConfig::new(vocab_size, Vec::new(), min_frequency);
    config.max_merges = max_merges;
    config.largest_ties = largest_ties;
    trained_with_progress(py, progress, None, |report| {
        bytepair_core::bpe::train::train_symbols(words, base, &config, report)
    })
}

/// Runs a BPE trainer without the GIL, calling `progress(merges_done,
/// vocab_len)` about ten times a second, checking for Ctrl-C, and asking for
/// a checkpoint every `checkpoint_every` seconds.
#[allow(clippy::type_complexity)]
fn trained_with_progress(
    py: Python<'_>,
    progress: Option<Py<PyAny>>,
    checkpoint_every: Option<f64>,
    train: impl FnOnce(
            &mut dyn bytepair_core::bpe::train::Progress,
        ) -> Result<bytepair_core::Trained, Error>
        + Send,
) -> PyResult<(Vec<Vec<u8>>, Vec<(u32, u32)>, Vec<u64>, &'static str)> {
    struct Report {
        callback: Option<Py<PyAny>>,
        last_report: Instant,
        checkpoint_every: Option<Duration>,
        last_checkpoint: Instant,
        error: Option<PyErr>,
    }
    impl bytepair_core::bpe::train::Progress for Report {
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
    Ok((
        trained.tokens,
        trained.merges,
        trained.counts,
        trained.stop.as_str(),
    ))
}

/// A unigram tokenizer: pieces with log-probabilities, special tokens, and
/// how text is cut into words ("metaspace" or a BPE-side pre-tokenizer),
/// and the normalization of the text between special tokens.
#[pyclass(frozen, module = "bytepair._native")]
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
        let total = self.inner.special().tokens().len();
        (
            Chosen::from(allowed, total),
            Chosen::from(disallowed, total),
        )
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

#[pymethods]
impl CoreUnigram {
    /// `special_tokens`: (text, id) of the control pieces, in the order
    /// `allowed`/`disallowed` indices refer to.
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (pieces, scores, kinds, unk_id, byte_fallback, max_piece_length, special_tokens, pretokenizer, pattern=None, normalize=Vec::new()))]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<String>,
        unk_id: Option<u32>,
        byte_fallback: bool,
        max_piece_length: usize,
        special_tokens: Vec<(String, u32)>,
        pretokenizer: &str,
        pattern: Option<&str>,
        normalize: Vec<String>,
    ) -> PyResult<Self> {
        use bytepair_core::unigram::{UnigramDecoder, UnigramModel, UnigramTokenizer, Words};
        let size = pieces.len();
        let (inner, decoder) = without_gil(py, || {
            let kinds = kinds
                .iter()
                .map(|k| unigram_kind(k))
                .collect::<Result<Vec<_>, _>>()?;
            let decoder = UnigramDecoder::new(&pieces, &kinds, pretokenizer == "metaspace")?;
            let model = UnigramModel::new(
                pieces,
                scores,
                kinds,
                unk_id,
                byte_fallback,
                max_piece_length,
            )?;
            let words = match pretokenizer {
                "metaspace" => Words::Metaspace,
                kind => Words::Pretokenized(self::pretokenizer(kind, pattern)?),
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
    #[allow(clippy::too_many_arguments)]
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

/// SentencePiece's own encoding of a loaded `.model` (unigram or BPE):
/// `SentencePieceProcessor.encode(text)`'s ids.
#[pyclass(frozen, module = "bytepair._native")]
struct CoreSentencePiece {
    inner: bytepair_core::sentencepiece::SentencePieceEncoder,
    ints: IdInts,
}

#[pymethods]
impl CoreSentencePiece {
    /// `normalizer`: (precompiled charsmap, add_dummy_prefix,
    /// remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix).
    #[new]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<String>,
        algorithm: &str,
        byte_fallback: bool,
        normalizer: (Vec<u8>, bool, bool, bool, bool),
    ) -> PyResult<Self> {
        use bytepair_core::sentencepiece::{Kind, SentencePieceEncoder, SpAlgorithm, SpNormalizer};
        let size = pieces.len();
        let inner = without_gil(py, || {
            let kinds = kinds
                .iter()
                .map(|k| Kind::parse(k))
                .collect::<Result<Vec<_>, _>>()?;
            let algorithm = match algorithm {
                "unigram" => SpAlgorithm::Unigram,
                "bpe" => SpAlgorithm::Bpe,
                other => {
                    return Err(Error::InvalidVocabulary(format!(
                        "algorithm {other:?}: use unigram or bpe"
                    )))
                }
            };
            let (charsmap, dummy, extra, escape, suffix) = &normalizer;
            let normalizer = SpNormalizer::new(charsmap, *dummy, *extra, *escape, *suffix)?;
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

/// tokenizers' encoding of a Unigram `tokenizer.json`:
/// `encode(text, add_special_tokens=False).ids`.
#[pyclass(frozen, module = "bytepair._native")]
struct CoreHfUnigram {
    inner: bytepair_core::sentencepiece::HfUnigramEncoder,
    ints: IdInts,
}

#[pymethods]
impl CoreHfUnigram {
    /// `normalizers`: ("precompiled", charsmap) | ("replace", (pattern,
    /// content, is_regex)) | ("prepend", text) | ("unicode", "NFC" | "NFKC" |
    /// "Lowercase"), in order; `metaspace`:
    /// (replacement, prepend scheme, split); `added_tokens`: (content, id,
    /// normalized).
    #[new]
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn new(
        py: Python<'_>,
        pieces: Vec<String>,
        scores: Vec<f64>,
        unk_id: Option<u32>,
        byte_fallback: bool,
        normalizers: Vec<(String, Bound<'_, PyAny>)>,
        whitespace_split: bool,
        metaspace: (char, String, bool),
        added_tokens: Vec<(String, u32, bool)>,
    ) -> PyResult<Self> {
        use bytepair_core::sentencepiece::{
            HfAddedToken, HfNormalizerStep, HfUnigramEncoder, Metaspace, PrependScheme,
        };
        let mut steps = Vec::with_capacity(normalizers.len());
        for (kind, value) in &normalizers {
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
                replacement: metaspace.0,
                prepend_scheme: PrependScheme::parse(&metaspace.1)?,
                split: metaspace.2,
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
#[pyclass(frozen, module = "bytepair._native")]
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

/// Trains a unigram model on counted words (a PretokenCounter). `progress`
/// is called as progress(stage, table_size) with stage "seeded", "em" or
/// "pruned"; Ctrl-C stops training with KeyboardInterrupt.
/// Returns (pieces, scores, kinds, rounds) with rounds as
/// (size_at_start, objectives, size_after_em, size_after_prune).
#[pyfunction]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
#[pyo3(signature = (counter, vocab_size, special_tokens, character_coverage, max_piece_length, seed_size, shrinking_factor, num_sub_iterations, byte_fallback, progress=None))]
fn train_unigram(
    py: Python<'_>,
    counter: &PretokenCounter,
    vocab_size: usize,
    special_tokens: Vec<String>,
    character_coverage: f64,
    max_piece_length: usize,
    seed_size: usize,
    shrinking_factor: f64,
    num_sub_iterations: usize,
    byte_fallback: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(
    Vec<String>,
    Vec<f64>,
    Vec<&'static str>,
    Vec<(usize, Vec<f64>, usize, Option<usize>)>,
)> {
    use bytepair_core::unigram::{Stage, UnigramConfig};
    let config = UnigramConfig {
        vocab_size,
        special_tokens,
        character_coverage,
        max_piece_length,
        seed_size,
        shrinking_factor,
        num_sub_iterations,
        byte_fallback,
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
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let callback_error: Mutex<Option<PyErr>> = Mutex::new(None);
    let mut report = |stage: Stage| -> bool {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
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
                    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
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
        .map(|r| {
            (
                r.size_at_start,
                r.objectives.clone(),
                r.size_after_em,
                r.size_after_prune,
            )
        })
        .collect();
    let kinds = trained.kinds.iter().map(|k| k.as_str()).collect();
    Ok((trained.pieces, trained.scores, kinds, rounds))
}

/// A byte-level `tokenizer.json` with its two big tables kept in Rust
/// (`bytepair_core::hf_json`); maps like the `model.vocab` dict for lookups.
#[pyclass(frozen, module = "bytepair._native")]
struct HfBpeDocument {
    document: bytepair_core::hf_json::BpeDocument,
}

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
    #[allow(clippy::type_complexity)]
    fn tables<'py>(
        &self,
        py: Python<'py>,
        specials: std::collections::HashMap<String, u32>,
    ) -> PyResult<Option<(Vec<Option<Bound<'py, PyBytes>>>, Vec<(u32, u32)>)>> {
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

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreBPE>()?;
    m.add_class::<PretokenCounter>()?;
    m.add_function(wrap_pyfunction!(train_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(train_bpe_symbols, m)?)?;
    m.add_function(wrap_pyfunction!(resume_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_info, m)?)?;
    m.add_class::<CoreSymbolBPE>()?;
    m.add_class::<CoreUnigram>()?;
    m.add_class::<CoreSentencePiece>()?;
    m.add_class::<CoreHfUnigram>()?;
    m.add_class::<CoreHfDecoder>()?;
    m.add_function(wrap_pyfunction!(train_unigram, m)?)?;
    m.add_function(wrap_pyfunction!(parse_rank_file, m)?)?;
    m.add_function(wrap_pyfunction!(split_hf_bpe, m)?)?;
    m.add_function(wrap_pyfunction!(format_ids, m)?)?;
    m.add_function(wrap_pyfunction!(parse_ids, m)?)?;
    m.add_function(wrap_pyfunction!(gage_compress, m)?)?;
    m.add_function(wrap_pyfunction!(gage_decompress, m)?)?;
    m.add_class::<HfBpeDocument>()?;
    m.add("GPT2_PATTERN", bytepair_core::pretokenize::GPT2_PATTERN)?;
    m.add(
        "WHITESPACE_PATTERN",
        bytepair_core::pretokenize::WHITESPACE_PATTERN,
    )?;
    m.add("R50K_PATTERN", bytepair_core::pretokenize::R50K_PATTERN)?;
    m.add("CL100K_PATTERN", bytepair_core::pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", bytepair_core::pretokenize::O200K_PATTERN)?;
    Ok(())
}

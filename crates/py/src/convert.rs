//! Python arguments read into core data, and ids made into Python lists and
//! buffers. All `unsafe` of the glue lives in this file: the list of ids
//! filled from a table of ints (the hot end of every `encode`), and a
//! prefetch hint.

#![allow(unsafe_code)]

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList, PyTuple};

use bytepair_core::{Error, Pretokenizer};

use crate::errors::internal_error;

/// A model's tokens (bytes, or None for an unused id), read in place; a
/// wrong type is named by its index, which pyo3's conversion would not say.
pub(crate) fn token_bytes(tokens: &Bound<'_, PyAny>) -> PyResult<Vec<Option<PyBackedBytes>>> {
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
pub(crate) fn merge_pairs(merges: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u32)>> {
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
pub(crate) fn ids_of(ids: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
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

pub(crate) fn pretokenizer(kind: &str, pattern: Option<&str>) -> Result<Pretokenizer, Error> {
    match (kind, pattern) {
        ("regex", Some(p)) => Pretokenizer::from_pattern(p),
        (name, _) => Pretokenizer::builtin(name),
    }
}

/// Python ints for the ids of a vocabulary, made on first use: a list of
/// ids then costs a reference count per id instead of allocating an int
/// each. Each thread keeps its own ints: when two threads shared them, every
/// list one of them built first pulled the reference counts it writes out of
/// the other core's cache, and lists from two threads came out barely faster
/// than from one.
pub(crate) struct IdInts {
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
    pub(crate) fn new(size: usize) -> Self {
        static NEXT_KEY: AtomicU64 = AtomicU64::new(0);
        Self {
            size,
            key: NEXT_KEY.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// `ids` (all below the vocabulary size) as a list of this thread's ints.
    pub(crate) fn list<'py>(&self, py: Python<'py>, ids: &[u32]) -> PyResult<Bound<'py, PyList>> {
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
pub(crate) fn with_id_buffer<T>(
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

/// `count` ids as native-endian u32 in a new bytearray.
pub(crate) fn u32_buffer<'py>(
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
pub(crate) fn lists_of<'py>(
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
pub(crate) fn offsets_of(lengths: impl Iterator<Item = usize>) -> Vec<u64> {
    let mut offsets = vec![0u64];
    offsets.extend(lengths.scan(0u64, |end, length| {
        *end += length as u64;
        Some(*end)
    }));
    offsets
}

/// A batch's offsets as native-endian u64, for numpy's int64.
pub(crate) fn offsets_buffer<'py>(
    py: Python<'py>,
    offsets: &[u64],
) -> PyResult<Bound<'py, PyByteArray>> {
    PyByteArray::new_with(py, offsets.len() * 8, |buf| {
        for (chunk, offset) in buf.chunks_exact_mut(8).zip(offsets) {
            chunk.copy_from_slice(&offset.to_ne_bytes());
        }
        Ok(())
    })
}

/// A batch's ids as one flat u32 buffer and its offsets.
pub(crate) fn batch_buffers<'py>(
    py: Python<'py>,
    batch: &[Vec<u32>],
) -> PyResult<(Bound<'py, PyByteArray>, Bound<'py, PyByteArray>)> {
    let offsets = offsets_of(batch.iter().map(Vec::len));
    let total = offsets[offsets.len() - 1] as usize;
    let ids = u32_buffer(py, batch.iter().flatten().copied(), total)?;
    Ok((ids, offsets_buffer(py, &offsets)?))
}

//! The Rust/Python boundary of bytepair, and nothing else: plain data in and
//! out (`str`, `bytes`, `list[int]`), the GIL released for real work, frozen
//! classes, every core error and every panic turned into a Python exception.
//! Settings cross as structs read from a dict (`#[pyo3(from_item_all)]`),
//! results as small frozen classes with named fields.
//!
//! One file per concern:
//! - this one: the module and the process's thread pool;
//! - [`errors`]: core errors and panics as Python exceptions;
//! - [`convert`]: reading Python arguments, making lists and buffers of ids
//!   (all `unsafe` of the glue is there);
//! - [`specials`]: which special tokens a call allows, and its check;
//! - [`bpe`]: byte-level and symbol BPE encoders (with the batch pipeline);
//! - [`train`]: pre-token counting and BPE training (progress, Ctrl-C,
//!   checkpoints);
//! - [`unigram`]: the unigram tokenizer trained here, and its training;
//! - [`loaded`]: encoders and decoders of loaded `.model` and Unigram
//!   `tokenizer.json` files;
//! - [`misc`]: rank files, the `tokenizer.json` fast path, id text, Gage's
//!   compression.

// Only convert.rs may hold `unsafe` (it says so with an allow of its own).
#![deny(unsafe_code)]

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;

use bytepair_core::Error;

mod bpe;
mod convert;
mod errors;
mod loaded;
mod misc;
mod specials;
mod train;
mod unigram;

use errors::without_gil;

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

/// Like [`without_gil`], for parallel work: runs on this process's pool.
fn in_parallel<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Error> + Send,
) -> PyResult<T> {
    let pool = thread_pool();
    without_gil(py, || pool.install(work))
}

#[pymodule]
fn _ext(m: &Bound<'_, PyModule>) -> PyResult<()> {
    bpe::register(m)?;
    train::register(m)?;
    unigram::register(m)?;
    loaded::register(m)?;
    misc::register(m)?;
    m.add("GPT2_PATTERN", bytepair_core::GPT2_PATTERN)?;
    m.add("WHITESPACE_PATTERN", bytepair_core::WHITESPACE_PATTERN)?;
    m.add("R50K_PATTERN", bytepair_core::R50K_PATTERN)?;
    m.add("CL100K_PATTERN", bytepair_core::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", bytepair_core::O200K_PATTERN)?;
    Ok(())
}

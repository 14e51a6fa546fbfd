//! bytepair-core: subword tokenizers without Python, exact to the rules of
//! the libraries they stand in for, and fast.
//!
//! # Byte-level BPE
//!
//! Encoding: text -> the allowed special tokens cut out ([`SpecialTokens`],
//! [`Selection`]) -> optional normalization ([`Normalizer`]) -> pieces
//! ([`Pretokenizer`]: GPT-2, cl100k and o200k's patterns by hand-written
//! scanners, any other pattern by regex) -> each piece merged by rank
//! ([`Encoder`]: the [`Vocab`] plus its lookup indexes) -> ids. Decoding
//! concatenates the tokens' bytes. [`Tokenizer`] holds the whole pipeline,
//! with a piece cache per thread. A vocabulary ranks pairs by an explicit
//! merge list (trained, HuggingFace, GPT-2 files) or by token id
//! (tiktoken's rule, [`Ranking::TokenIds`]); [`rank_file`] reads tiktoken
//! files and [`hf_json`] the large tables of a BPE `tokenizer.json`.
//!
//! Training: pre-tokens are counted ([`PretokenCounts`], in parallel) and
//! merged by the exact incremental trainer ([`train()`]): the most frequent
//! adjacent pair merges everywhere, ties to the smallest (left bytes, right
//! bytes). It can write checkpoints and resume from them
//! ([`bpe::checkpoint`], [`bpe::resume`]); [`bpe::train_symbols`] and
//! [`bpe::SymbolRules`] do the same over symbols other than bytes
//! (character-level BPE).
//!
//! # Unigram
//!
//! [`unigram`]: SentencePiece's unigram language model, trained here from
//! counted words (seeds from a suffix array, EM, pruning by likelihood
//! loss) and used to segment words (Viterbi, n-best, sampling).
//!
//! # Loaded models
//!
//! [`sentencepiece`]: models made by other libraries, encoded by their own
//! rules: a SentencePiece `.model` file (unigram or BPE, with its
//! normalizer and byte fallback) and a HuggingFace Unigram
//! `tokenizer.json` (its normalizer, pre-tokenizer and decoder steps).
//!
//! # Also
//!
//! [`gage`] compresses with a BPE-style dictionary (a measure of how well a
//! vocabulary fits a text); [`id_text`] reads and writes ids as text;
//! [`batch_pipeline`] encodes a large batch on a thread pool, handing each
//! finished group to the calling thread.
//!
//! Invariants: results equal the pure-Python reference (`bytepair.reference`)
//! on every input; nothing here depends on hash order or thread count; no
//! path that user input reaches panics.

pub mod bpe;
mod decode;
mod error;
mod formats;
pub mod gage;
mod parallel;
pub mod sentencepiece;
mod text;
mod tokenizer;
pub mod unigram;
mod util;
mod vocab;

pub use formats::{hf_json, id_text, rank_file};
pub use parallel::batch_pipeline;

pub use bpe::{train, Encoder, StopReason, TrainConfig, Trained};
pub use decode::decode_bytes;
pub use error::{Error, Result};
pub use parallel::count::PretokenCounts;
pub use text::normalize::Normalizer;
pub use text::pretokenize::{
    Pretokenizer, CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, R50K_PATTERN, WHITESPACE_PATTERN,
};
pub use text::special::{Selection, SpecialTokens, Strip};
pub use tokenizer::Tokenizer;
pub use util::rng::Rng;
pub use vocab::{Ranking, Vocab};

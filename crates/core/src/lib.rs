//! bytepair-core: exact byte-level BPE without Python.
//!
//! The pipeline: text -> special tokens cut out ([`special`]) -> pieces
//! ([`pretokenize`]) -> merge by rank ([`bpe::encode`]) -> ids, and back with
//! [`decode`]. Training counts pre-tokens ([`count`]) and merges them with the
//! exact incremental trainer ([`bpe::train`]).
//!
//! Invariants: results equal the pure-Python reference (`bytepair.reference`)
//! on every input; ties in training go to the smallest (left bytes, right
//! bytes); nothing here depends on hash order or thread count; no path that
//! user input reaches panics.

pub mod batch_pipeline;
pub mod bpe;
pub mod count;
mod crc32;
pub mod decode;
mod double_array;
pub mod error;
pub mod gage;
pub mod hf_json;
pub mod id_text;
pub mod metaspace;
pub mod normalize;
pub mod pretokenize;
pub mod rank_file;
pub mod rng;
pub mod scan;
mod scan_blocks;
pub mod sentencepiece;
pub mod special;
mod token_table;
pub mod tokenizer;
pub mod unigram;
pub mod vocab;

pub use bpe::encoder::Encoder;
pub use bpe::train::{train, StopReason, TrainConfig, Trained};
pub use count::PretokenCounts;
pub use error::{Error, Result};
pub use normalize::Normalizer;
pub use pretokenize::Pretokenizer;
pub use special::{Selection, SpecialTokens};
pub use tokenizer::Tokenizer;
pub use vocab::Vocab;

//! Text before it becomes pieces: special tokens found and cut out, the
//! optional normalization, and pre-tokenizing (hand-written scanners for the
//! builtin patterns, whose block-at-a-time SIMD code is all in
//! `scan_blocks`; any other pattern by regex; SentencePiece's metaspace
//! words).

pub mod metaspace;
pub mod normalize;
pub mod pretokenize;
pub mod scan;
mod scan_blocks;
pub mod special;

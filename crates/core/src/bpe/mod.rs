//! Byte-level BPE: the exact trainer (with checkpoints) and the encoder by merge rank.

mod candidates;
pub mod checkpoint;
pub(crate) mod dropout;
pub mod encode;
pub mod encoder;
pub(crate) mod piece_cache;
#[cfg(test)]
mod random_text;
pub mod symbols;
mod tables;
pub mod train;
mod uncrossed;
mod whole_chars;

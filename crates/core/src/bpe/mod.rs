//! Byte-level BPE: the exact trainer (with checkpoints) and the encoder by merge rank.

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

/// The checkpoints at their former place: for the Python glue until it
/// imports them from [`train::checkpoint`].
pub use train::checkpoint;

//! Byte-level BPE: the exact trainer (with checkpoints) and the encoder by merge rank.

mod candidates;
pub mod checkpoint;
pub mod encode;
pub mod piece_cache;
#[cfg(test)]
mod random_text;
pub mod train;
pub mod uncrossed;
pub mod whole_chars;

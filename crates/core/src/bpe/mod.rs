//! Byte-level BPE: the exact trainer and the encoder by merge rank.

pub mod encode;
pub mod train;

//! Byte-level BPE: the exact trainer (with checkpoints) and the encoder by
//! merge rank, over bytes or (for character-level BPE) any symbols.

pub(crate) mod dropout;
pub(crate) mod encode;
mod encoder;
pub(crate) mod piece_cache;
#[cfg(test)]
mod random_text;
mod symbols;
mod tables;
mod train;
mod uncrossed;
mod whole_chars;

pub use encoder::Encoder;
pub use symbols::SymbolRules;
pub use train::checkpoint;
pub use train::{
    resume, train, train_symbols, Checkpointing, Progress, StopReason, TrainConfig, Trained,
};

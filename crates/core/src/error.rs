//! One error type for everything user input can reach. No path that user
//! input reaches panics; each failure names what was wrong and where.

use thiserror::Error;

#[derive(Debug, Clone, Error)]
pub enum Error {
    #[error("invalid pre-tokenizer regex {pattern:?}: {message}")]
    InvalidPattern { pattern: String, message: String },

    #[error(
        "unknown pre-tokenizer {0:?} (known: none, whitespace, gpt2, r50k, p50k, cl100k, o200k)"
    )]
    UnknownPretokenizer(String),

    #[error("the pre-tokenizer regex failed at byte {position} of the text: {message}")]
    PatternFailed { position: usize, message: String },

    #[error("inconsistent vocabulary: {0}")]
    InvalidVocabulary(String),

    #[error("invalid normalization: {0}")]
    InvalidNormalization(String),

    #[error("token id {id} at position {position} is not in the vocabulary (it has {size} ids, 0 to {})", size.saturating_sub(1))]
    UnknownId {
        id: u32,
        position: usize,
        size: usize,
    },

    #[error("token id {id} at position {position} is unused: no token of this vocabulary has it")]
    UnusedId { id: u32, position: usize },

    #[error("invalid special tokens: {0}")]
    InvalidSpecialTokens(String),

    #[error("invalid training settings: {0}")]
    InvalidTraining(String),

    #[error("corrupt precompiled charsmap: {0}")]
    InvalidCharsmap(String),

    #[error("{0:?} has no piece and the model has no unknown piece")]
    NoUnknownPiece(String),

    /// A token on which one of tokenizers' decoders panics (the message says which).
    #[error("{0}")]
    DecoderPanics(String),

    #[error("corrupt compressed data: {0}")]
    CorruptCompressed(String),

    #[error("{path}: {message}")]
    Io { path: String, message: String },

    #[error("{path} (byte {offset}): {problem}")]
    CorruptCheckpoint {
        path: String,
        offset: u64,
        problem: String,
    },

    #[error("interrupted")]
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

//! Work spread over threads: counting pre-tokens, and encoding a large
//! batch in groups handed to the calling thread as they finish.

pub mod batch_pipeline;
pub mod count;

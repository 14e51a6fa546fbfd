//! Reading and writing files fast: tiktoken rank files, the large tables of
//! a BPE `tokenizer.json`, and ids as text.

pub mod hf_json;
pub mod id_text;
pub mod rank_file;

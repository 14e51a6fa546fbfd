//! Small building blocks: a checksum, a double-array trie, a seeded random
//! number generator, and the table of token bytes.

pub mod crc32;
pub mod double_array;
pub mod rng;
pub mod token_table;

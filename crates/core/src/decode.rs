//! Decoding: ids back to bytes.

use crate::error::{Error, Result};
use crate::vocab::Vocab;

pub fn decode_bytes(vocab: &Vocab, ids: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for (position, &id) in ids.iter().enumerate() {
        match vocab.token(id) {
            Some(bytes) => out.extend_from_slice(bytes),
            None => {
                return Err(Error::UnknownId {
                    id,
                    position,
                    size: vocab.len(),
                })
            }
        }
    }
    Ok(out)
}

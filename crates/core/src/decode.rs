//! Decoding: ids back to bytes.

use crate::error::{Error, Result};
use crate::vocab::Vocab;

pub fn decode_bytes(vocab: &Vocab, ids: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(ids.len() * 4);
    for (position, &id) in ids.iter().enumerate() {
        match vocab.token(id) {
            Some(bytes) => out.extend_from_slice(bytes),
            None if (id as usize) < vocab.len() => {
                return Err(Error::UnusedId { id, position });
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::Ranking;

    #[test]
    fn unknown_and_unused_ids_are_named() {
        let mut tokens: Vec<Option<Vec<u8>>> = (0..=255u8).map(|b| Some(vec![b])).collect();
        tokens.push(None);
        let vocab = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
        assert_eq!(decode_bytes(&vocab, &[104, 105]).unwrap(), b"hi");
        let unused = decode_bytes(&vocab, &[104, 256]).unwrap_err().to_string();
        assert!(
            unused.contains("token id 256 at position 1 is unused"),
            "{unused}"
        );
        let unknown = decode_bytes(&vocab, &[999]).unwrap_err().to_string();
        assert!(
            unknown.contains("token id 999 at position 0 is not in the vocabulary"),
            "{unknown}"
        );
    }
}

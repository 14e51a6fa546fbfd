//! The bytes of every token, end to end in one buffer, and the lookup from
//! bytes back to an id: loading a vocabulary of 200,000 tokens then makes
//! a few allocations instead of two per token, and the lookup keeps no copy
//! of the bytes it is keyed by.

use std::hash::Hasher;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxHasher;

#[derive(Clone, Debug, Default)]
pub struct TokenTable {
    bytes: Vec<u8>,
    /// Token `id` is `bytes[starts[id]..starts[id + 1]]`; empty: an unused id.
    starts: Vec<u32>,
    /// The ids that [`TokenTable::id_of`] finds.
    ids: HashTable<u32>,
}

/// The hash of a byte string in these tables.
pub(crate) fn hash_of(bytes: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(bytes);
    hasher.finish()
}

/// Why a table could not be built.
pub enum TableError {
    /// More bytes than u32 offsets address.
    TooLarge,
    /// Two findable ids with the same bytes (the earlier id first).
    SameBytes(u32, u32, Vec<u8>),
}

impl TokenTable {
    /// `tokens[id]` (None or empty: unused); the non-empty ones for which
    /// `findable(id)` holds can be looked up by their bytes.
    pub fn new<T: AsRef<[u8]>>(
        tokens: impl IntoIterator<Item = Option<T>>,
        findable: impl Fn(usize) -> bool,
    ) -> Result<Self, TableError> {
        let (mut bytes, mut starts) = (Vec::new(), vec![0u32]);
        for token in tokens {
            if let Some(token) = &token {
                bytes.extend_from_slice(token.as_ref());
            }
            starts.push(u32::try_from(bytes.len()).map_err(|_| TableError::TooLarge)?);
        }
        let bytes_of =
            |id: u32| &bytes[starts[id as usize] as usize..starts[id as usize + 1] as usize];
        let count = starts.len() as u32 - 1;
        let mut ids = HashTable::with_capacity(count as usize);
        for id in (0..count).filter(|&id| findable(id as usize)) {
            let token = bytes_of(id);
            if token.is_empty() {
                continue;
            }
            let found = ids.entry(
                hash_of(token),
                |&other| bytes_of(other) == token,
                |&other| hash_of(bytes_of(other)),
            );
            match found {
                Entry::Occupied(first) => {
                    return Err(TableError::SameBytes(*first.get(), id, token.to_vec()))
                }
                Entry::Vacant(slot) => {
                    slot.insert(id);
                }
            }
        }
        Ok(Self { bytes, starts, ids })
    }

    /// Number of ids, unused ones included.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of `id` (empty for an unused id); `id` must be below `len`.
    #[inline]
    pub fn get(&self, id: u32) -> &[u8] {
        let id = id as usize;
        &self.bytes[self.starts[id] as usize..self.starts[id + 1] as usize]
    }

    /// The findable id with exactly these bytes.
    #[inline]
    pub fn id_of(&self, bytes: &[u8]) -> Option<u32> {
        self.ids
            .find(hash_of(bytes), |&id| self.get(id) == bytes)
            .copied()
    }

    /// Every id's bytes, in id order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        self.starts
            .windows(2)
            .map(|w| &self.bytes[w[0] as usize..w[1] as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ids_by_bytes_but_not_unused_or_unfindable_ones() {
        let tokens = [Some(&b"ab"[..]), None, Some(b""), Some(b"<s>"), Some(b"c")];
        let Ok(table) = TokenTable::new(tokens, |id| id != 3) else {
            panic!("a valid table")
        };
        assert_eq!(table.len(), 5);
        assert_eq!(table.id_of(b"ab"), Some(0));
        assert_eq!(table.id_of(b"c"), Some(4));
        assert_eq!(table.id_of(b"<s>"), None, "not findable");
        assert_eq!(table.id_of(b""), None, "unused ids are not found");
        assert_eq!(table.get(3), b"<s>");
        assert_eq!(table.get(1), b"");
        let all: Vec<&[u8]> = table.iter().collect();
        assert_eq!(all, [&b"ab"[..], b"", b"", b"<s>", b"c"]);
    }

    #[test]
    fn the_same_bytes_twice_names_both_ids() {
        let tokens = [Some(b"x"), Some(b"y"), Some(b"x")];
        match TokenTable::new(tokens, |_| true) {
            Err(TableError::SameBytes(0, 2, bytes)) => assert_eq!(bytes, b"x"),
            _ => panic!("the repeat is refused"),
        }
        // Not when one of them is not findable (a special token's text).
        assert!(TokenTable::new([Some(b"x"), Some(b"x")], |id| id == 0).is_ok());
    }
}

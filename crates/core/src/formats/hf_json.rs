//! The fast path for reading a byte-level BPE `tokenizer.json`.
//!
//! Nearly all of such a file is two tables: `model.vocab` (text -> id) and
//! `model.merges`. Python's `json` module spends most of a load building
//! objects for them, so this module parses the document once, keeps the two
//! tables in Rust, and hands back the rest of the document as JSON text for
//! the Python reader to check as usual.
//!
//! It never explains a problem: on anything irregular (a repeated key, an id
//! that is not a u32, a token that is not byte-level text, a merge that does
//! not fit) it answers `None` and the caller reads the file again on the slow
//! path, whose errors name the key, merge and line.

use std::fmt::Write as _;

use hashbrown::hash_table::{Entry, HashTable};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::formats::rank_file::id_limit;
use crate::util::token_table::hash_of;

/// A document whose `model.vocab` and `model.merges` were taken out.
pub struct BpeDocument {
    /// The document without `model.vocab` and `model.merges`, as JSON text.
    pub rest: String,
    vocab: VocabTable,
    merges: MergeList,
}

/// A model's tables as ids: what `formats.byte_level.model_from_tables` makes.
pub struct ByteLevelTables {
    /// Every token's bytes, end to end.
    bytes: Vec<u8>,
    /// Where in `bytes` each id's token is (None: an unused id).
    ranges: Vec<Option<(usize, usize)>>,
    pub merges: Vec<(u32, u32)>,
}

impl ByteLevelTables {
    /// The bytes of each id (None: unused), in id order.
    pub fn tokens(&self) -> impl Iterator<Item = Option<&[u8]>> {
        self.ranges
            .iter()
            .map(|r| r.map(|(a, b)| &self.bytes[a..b]))
    }

    /// Gives `id` the bytes pushed since `start`; None when it already has some.
    fn close(&mut self, id: u32, start: usize) -> Option<()> {
        let range = (start, self.bytes.len());
        self.ranges[id as usize]
            .replace(range)
            .is_none()
            .then_some(())
    }
}

/// Entries of a JSON object in file order, values unparsed; None on a repeated key.
struct RawEntries<'a>(Option<Vec<(String, &'a RawValue)>>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for RawEntries<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = RawEntries<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut seen = FxHashSet::default();
                let mut entries = Vec::new();
                let mut repeated = false;
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    repeated |= !seen.insert(key.clone());
                    entries.push((key, value));
                }
                Ok(RawEntries((!repeated).then_some(entries)))
            }
        }
        deserializer.deserialize_map(V(std::marker::PhantomData))
    }
}

/// `model.vocab`: its keys end to end in one buffer (not a string a key)
/// with their ids, in file order. A repeated key or an id that is not a u32
/// is a parse error, which sends the file to the slow path.
#[derive(Default)]
struct VocabTable {
    text: String,
    /// The key (`text[start..end]`) and id of each entry.
    entries: Vec<(u32, u32, u32)>,
    /// Indices into `entries`, found by key.
    by_key: HashTable<u32>,
}

/// The key of entry `e` of a [`VocabTable`], given its text and entries.
fn key_at<'t>(text: &'t str, entries: &[(u32, u32, u32)], e: u32) -> &'t str {
    let (start, end, _) = entries[e as usize];
    &text[start as usize..end as usize]
}

impl VocabTable {
    fn key(&self, entry: u32) -> &str {
        key_at(&self.text, &self.entries, entry)
    }

    fn get(&self, key: &str) -> Option<u32> {
        let entry = self
            .by_key
            .find(hash_of(key.as_bytes()), |&e| self.key(e) == key)?;
        Some(self.entries[*entry as usize].2)
    }

    fn iter(&self) -> impl Iterator<Item = (&str, u32)> {
        (0..self.entries.len() as u32).map(|e| (self.key(e), self.entries[e as usize].2))
    }
}

impl<'de> serde::Deserialize<'de> for VocabTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VocabTable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                use serde::de::Error;
                let mut vocab = VocabTable::default();
                let expected = map.size_hint().unwrap_or(0);
                vocab.entries.reserve(expected);
                vocab.by_key.reserve(expected, |_| 0);
                let too_long = || M::Error::custom("a vocabulary of 4 GiB");
                loop {
                    let start = u32::try_from(vocab.text.len()).map_err(|_| too_long())?;
                    if map.next_key_seed(Side(&mut vocab.text))?.is_none() {
                        return Ok(vocab);
                    }
                    let end = u32::try_from(vocab.text.len()).map_err(|_| too_long())?;
                    let id = u32::try_from(map.next_value::<u64>()?)
                        .map_err(|_| M::Error::custom("an id beyond u32"))?;
                    let entry = vocab.entries.len() as u32;
                    vocab.entries.push((start, end, id));
                    let (text, entries) = (&vocab.text, &vocab.entries);
                    let key_of = |e: u32| key_at(text, entries, e);
                    let key = key_of(entry);
                    match vocab.by_key.entry(
                        hash_of(key.as_bytes()),
                        |&e| key_of(e) == key,
                        |&e| hash_of(key_of(e).as_bytes()),
                    ) {
                        Entry::Occupied(_) => return Err(M::Error::custom("a repeated key")),
                        Entry::Vacant(slot) => {
                            slot.insert(entry);
                        }
                    }
                }
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// `model.merges`, "left right" strings or ["left", "right"] pairs: both
/// sides of every merge end to end in one buffer, rather than two strings a
/// merge.
#[derive(Default)]
struct MergeList {
    text: String,
    /// Merge `i` is `text[a..b]` + `text[b..c]` for `(a, b, c) = bounds[i]`.
    bounds: Vec<(u32, u32, u32)>,
}

impl MergeList {
    fn sides(&self, (a, b, c): (u32, u32, u32)) -> (&str, &str) {
        (
            &self.text[a as usize..b as usize],
            &self.text[b as usize..c as usize],
        )
    }

    /// Appends one merge's sides; false when one is empty (irregular).
    fn push(&mut self, left: &str, right: &str) -> bool {
        let start = self.text.len();
        self.text.push_str(left);
        let middle = self.text.len();
        self.text.push_str(right);
        self.close(start, middle)
    }

    /// Records the merge whose sides are `text[start..middle]` and
    /// `text[middle..]`; false when one is empty (irregular).
    fn close(&mut self, start: usize, middle: usize) -> bool {
        let end = self.text.len();
        match (
            u32::try_from(start),
            u32::try_from(middle),
            u32::try_from(end),
        ) {
            (Ok(a), Ok(b), Ok(c)) if a < b && b < c => {
                self.bounds.push((a, b, c));
                true
            }
            _ => false,
        }
    }
}

/// The merges array. Anything irregular in it is a parse error, which
/// sends the file to the slow path like any other.
impl<'de> serde::Deserialize<'de> for MergeList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MergeList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut merges = MergeList::default();
                merges.bounds.reserve(seq.size_hint().unwrap_or(0));
                while seq.next_element_seed(OneMerge(&mut merges))?.is_some() {}
                Ok(merges)
            }
        }
        deserializer.deserialize_seq(V)
    }
}

fn irregular<E: serde::de::Error>() -> E {
    E::custom("an irregular merge")
}

/// One merge, "left right" or ["left", "right"], appended to the list.
struct OneMerge<'l>(&'l mut MergeList);

impl<'de> DeserializeSeed<'de> for OneMerge<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for OneMerge<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a merge")
    }

    fn visit_str<E: serde::de::Error>(self, line: &str) -> Result<(), E> {
        let mut parts = line.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(left), Some(right), None) if self.0.push(left, right) => Ok(()),
            _ => Err(irregular()),
        }
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        // Each side goes to the buffer as it is read (it may hold escapes).
        let list = self.0;
        let start = list.text.len();
        seq.next_element_seed(Side(&mut list.text))?
            .ok_or_else(irregular)?;
        let middle = list.text.len();
        seq.next_element_seed(Side(&mut list.text))?
            .ok_or_else(irregular)?;
        let more = seq.next_element::<serde::de::IgnoredAny>()?.is_some();
        match !more && list.close(start, middle) {
            true => Ok(()),
            false => Err(irregular()),
        }
    }
}

/// A string appended to a buffer as it is read (it may hold escapes): one
/// side of a ["left", "right"] merge, or a vocabulary key.
struct Side<'t>(&'t mut String);

impl<'de> DeserializeSeed<'de> for Side<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Side<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
        self.0.push_str(text);
        Ok(())
    }
}

/// Split a `tokenizer.json` text; None unless it is an object whose `model`
/// is an object with a regular `vocab` object and `merges` array.
pub fn split_document(text: &str) -> Option<BpeDocument> {
    let top: RawEntries = serde_json::from_str(text).ok()?;
    let mut rest = String::with_capacity(4096);
    let (mut vocab, mut merges) = (None, None);
    rest.push('{');
    for (index, (key, value)) in top.0?.into_iter().enumerate() {
        if index > 0 {
            rest.push(',');
        }
        let _ = write!(rest, "{}:", serde_json::to_string(&key).ok()?);
        if key != "model" {
            rest.push_str(value.get());
            continue;
        }
        let model: RawEntries = serde_json::from_str(value.get()).ok()?;
        let mut kept = Vec::new();
        for (model_key, model_value) in model.0? {
            match model_key.as_str() {
                "vocab" => {
                    vocab = Some(serde_json::from_str::<VocabTable>(model_value.get()).ok()?)
                }
                "merges" => {
                    merges = Some(serde_json::from_str::<MergeList>(model_value.get()).ok()?)
                }
                _ => kept.push(format!(
                    "{}:{}",
                    serde_json::to_string(&model_key).ok()?,
                    model_value.get()
                )),
            }
        }
        let _ = write!(rest, "{{{}}}", kept.join(","));
    }
    rest.push('}');
    Some(BpeDocument {
        rest,
        vocab: vocab?,
        merges: merges?,
    })
}

/// GPT-2's byte -> character map, inverted: the byte each character below
/// U+0200 stands for (256: none).
fn byte_level_chars() -> [u16; 512] {
    let mut bytes = [256u16; 512];
    let mut next_free = 256usize;
    for byte in 0..=255u8 {
        if matches!(byte, 33..=126 | 161..=172 | 174..=255) {
            bytes[byte as usize] = byte as u16;
        } else {
            bytes[next_free] = byte as u16;
            next_free += 1;
        }
    }
    bytes
}

/// Appends the bytes a byte-level text stands for; None when a character
/// stands for none, or the text is empty.
fn push_byte_level_bytes(text: &str, chars: &[u16; 512], out: &mut Vec<u8>) -> Option<()> {
    for c in text.chars() {
        match chars.get(c as usize) {
            Some(&byte) if byte < 256 => out.push(byte as u8),
            _ => return None,
        }
    }
    (!text.is_empty()).then_some(())
}

impl BpeDocument {
    pub fn len(&self) -> usize {
        self.vocab.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vocab.entries.is_empty()
    }

    pub fn id(&self, key: &str) -> Option<u32> {
        self.vocab.get(key)
    }

    /// The tables as ids, given the specials (text -> id, every one either in
    /// the vocabulary with that id or placed outside it by the caller); None
    /// when anything is irregular, such as an id far beyond the entries
    /// ([`id_limit`]), checked before the table by id is allocated.
    pub fn tables(&self, specials: &FxHashMap<String, u32>) -> Option<ByteLevelTables> {
        let chars = byte_level_chars();
        let outside = specials
            .keys()
            .filter(|text| self.vocab.get(text).is_none())
            .count();
        let size = self
            .vocab
            .iter()
            .map(|(_, id)| id)
            .chain(specials.values().copied())
            .max()
            .map_or(0, |max| max as usize + 1);
        if size > id_limit(self.len() + outside) {
            return None;
        }
        let mut tables = ByteLevelTables {
            bytes: Vec::with_capacity(self.vocab.text.len()),
            ranges: vec![None; size],
            merges: Vec::new(),
        };
        let mut single_bytes = [false; 256];
        let mut special_ids = FxHashSet::default();
        for (key, id) in self.vocab.iter() {
            let start = tables.bytes.len();
            match specials.get(key) {
                Some(&special_id) if special_id != id => return None,
                Some(_) => {
                    tables.bytes.extend_from_slice(key.as_bytes());
                    special_ids.insert(id);
                }
                None => {
                    push_byte_level_bytes(key, &chars, &mut tables.bytes)?;
                    if let [byte] = tables.bytes[start..] {
                        single_bytes[byte as usize] = true;
                    }
                }
            }
            tables.close(id, start)?;
        }
        for (text, &id) in specials {
            if self.vocab.get(text).is_none() {
                let start = tables.bytes.len();
                tables.bytes.extend_from_slice(text.as_bytes());
                tables.close(id, start)?;
            }
        }
        if single_bytes.contains(&false) {
            return None;
        }
        let ordinary = |text: &str| self.vocab.get(text).filter(|id| !special_ids.contains(id));
        // Three string lookups a merge, each a cache miss: worth both cores.
        tables.merges = self
            .merges
            .bounds
            .par_iter()
            .map(|&bounds| {
                // Both sides end to end are the merge's result.
                ordinary(&self.merges.text[bounds.0 as usize..bounds.2 as usize])?;
                let (left, right) = self.merges.sides(bounds);
                Some((ordinary(left)?, ordinary(right)?))
            })
            .collect::<Option<_>>()?;
        let mut seen = FxHashSet::default();
        if !tables.merges.iter().all(|&pair| seen.insert(pair)) {
            return None;
        }
        Some(tables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specials(pairs: &[(&str, u32)]) -> FxHashMap<String, u32> {
        pairs.iter().map(|&(t, i)| (t.to_owned(), i)).collect()
    }

    fn document(vocab_extra: &str, merges: &str) -> String {
        let chars = byte_level_chars();
        let mut vocab: Vec<String> = (0..512u32)
            .filter(|&c| chars[c as usize] < 256)
            .map(|c| {
                let key = char::from_u32(c).unwrap().to_string();
                format!(
                    "{}:{}",
                    serde_json::to_string(&key).unwrap(),
                    chars[c as usize]
                )
            })
            .collect();
        vocab.push(vocab_extra.to_owned());
        format!(
            r#"{{"version":"1.0","model":{{"type":"BPE","vocab":{{{}}},"merges":{}}},"added_tokens":[]}}"#,
            vocab.join(","),
            merges
        )
    }

    #[test]
    fn splits_the_tables_out_and_keeps_the_rest() {
        let text = document(r#""ab":256,"<s>":257"#, r#"["a b"]"#);
        let doc = split_document(&text).expect("regular");
        let rest: serde_json::Value = serde_json::from_str(&doc.rest).unwrap();
        assert_eq!(rest["model"], serde_json::json!({"type": "BPE"}));
        assert_eq!(rest["version"], "1.0");
        let tables = doc
            .tables(&specials(&[("<s>", 257)]))
            .expect("regular tables");
        assert_eq!(tables.merges, vec![(b'a' as u32, b'b' as u32)]);
        let tokens: Vec<Option<&[u8]>> = tables.tokens().collect();
        assert_eq!(tokens.len(), 258);
        assert_eq!(tokens[256], Some(&b"ab"[..]));
        assert_eq!(tokens[257], Some(&b"<s>"[..]));
        assert_eq!(tokens[10], Some(&b"\n"[..]));
        assert_eq!(tokens[32], Some(&b" "[..]));
    }

    #[test]
    fn escapes_and_both_merge_forms_read_alike() {
        // "\u0120" is the byte-level character for a space, written escaped.
        let extra = r#""\u0120a":256,"\"b":257"#;
        let lines = document(extra, r#"["\u0120 a","\" b"]"#);
        let pairs = document(extra, r#"[["\u0120","a"],["\"","b"]]"#);
        let read = |text: &str| {
            let doc = split_document(text).expect("regular");
            assert_eq!(doc.id("Ġa"), Some(256));
            assert_eq!(doc.id("\"b"), Some(257));
            let tables = doc.tables(&specials(&[])).expect("regular tables");
            let tokens: Vec<Option<Vec<u8>>> =
                tables.tokens().map(|t| t.map(<[u8]>::to_vec)).collect();
            (tokens, tables.merges)
        };
        let (tokens, merges) = read(&lines);
        assert_eq!(tokens[256].as_deref(), Some(&b" a"[..]));
        assert_eq!(tokens[257].as_deref(), Some(&b"\"b"[..]));
        assert_eq!(merges, vec![(32, 97), (34, 98)]);
        assert_eq!(read(&pairs), (tokens, merges));
        for bad in [
            r#"[["a"]]"#,
            r#"[["a","b","c"]]"#,
            r#"[["","b"]]"#,
            "[1]",
            r#"["a  b"]"#,
        ] {
            assert!(split_document(&document("", bad)).is_none(), "{bad}");
        }
    }

    #[test]
    fn irregular_files_take_the_slow_path() {
        let ok = r#""ab":256"#;
        assert!(split_document(&document(ok, r#"["a b c"]"#)).is_none());
        assert!(split_document(&document(ok, r#"[["a", 1]]"#)).is_none());
        assert!(split_document(&document(r#""ab":-1"#, "[]")).is_none());
        assert!(
            split_document(&document(r#""a":300"#, "[]")).is_none(),
            "repeated key"
        );
        assert!(split_document("{\"model\": 1}").is_none());
        assert!(split_document("not json").is_none());
        let doc = split_document(&document(ok, r#"["a c"]"#)).unwrap();
        assert!(
            doc.tables(&specials(&[])).is_none(),
            "result not in the vocabulary"
        );
        let doc = split_document(&document(r#""ab":65"#, "[]")).unwrap();
        assert!(doc.tables(&specials(&[])).is_none(), "id given twice");
        let doc = split_document(&document(r#""€":256"#, "[]")).unwrap();
        assert!(doc.tables(&specials(&[])).is_none(), "not byte-level text");
        let doc = split_document(&document(r#""ab":4000000000"#, "[]")).unwrap();
        assert!(
            doc.tables(&specials(&[])).is_none(),
            "id far beyond the entries"
        );
        let last = id_limit(257) - 1;
        let doc = split_document(&document(&format!(r#""ab":{last}"#), "[]")).unwrap();
        assert_eq!(
            doc.tables(&specials(&[])).unwrap().tokens().count(),
            last + 1
        );
        let doc = split_document(&document(r#""ab":256"#, "[]")).unwrap();
        let far = specials(&[("<s>", 4_000_000_000)]);
        assert!(doc.tables(&far).is_none(), "special far beyond the entries");
    }
}

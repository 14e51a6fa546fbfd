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

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// A document whose `model.vocab` and `model.merges` were taken out.
pub struct BpeDocument {
    /// The document without `model.vocab` and `model.merges`, as JSON text.
    pub rest: String,
    vocab: FxHashMap<String, u32>,
    merges: Vec<(String, String)>,
}

/// A model's tables as ids: what `formats.byte_level.model_from_tables` makes.
pub struct ByteLevelTables {
    pub tokens: Vec<Option<Vec<u8>>>,
    pub merges: Vec<(u32, u32)>,
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

/// `model.vocab`: text -> id, None on a repeated key or an id that is not a u32.
struct VocabTable(Option<FxHashMap<String, u32>>);

impl<'de> serde::Deserialize<'de> for VocabTable {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = VocabTable;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
                let mut vocab = FxHashMap::default();
                vocab.reserve(map.size_hint().unwrap_or(0));
                let mut regular = true;
                while let Some((key, id)) = map.next_entry::<String, serde_json::Value>()? {
                    match id.as_u64().and_then(|id| u32::try_from(id).ok()) {
                        Some(id) if regular => regular = vocab.insert(key, id).is_none(),
                        _ => regular = false,
                    }
                }
                Ok(VocabTable(regular.then_some(vocab)))
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// `model.merges`: "left right" strings or ["left", "right"] pairs; None otherwise.
struct MergeList(Option<Vec<(String, String)>>);

impl<'de> serde::Deserialize<'de> for MergeList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MergeList;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Self::Value, S::Error> {
                let mut merges = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                let mut regular = true;
                while let Some(merge) = seq.next_element::<serde_json::Value>()? {
                    match merge_parts(merge) {
                        Some(pair) if regular => merges.push(pair),
                        _ => regular = false,
                    }
                }
                Ok(MergeList(regular.then_some(merges)))
            }
        }
        deserializer.deserialize_seq(V)
    }
}

fn merge_parts(merge: serde_json::Value) -> Option<(String, String)> {
    use serde_json::Value;
    let (left, right) = match merge {
        Value::String(line) => {
            let mut parts = line.split(' ');
            let (left, right) = (parts.next()?, parts.next()?);
            if parts.next().is_some() {
                return None;
            }
            (left.to_owned(), right.to_owned())
        }
        Value::Array(pair) => match <[Value; 2]>::try_from(pair).ok()? {
            [Value::String(left), Value::String(right)] => (left, right),
            _ => return None,
        },
        _ => return None,
    };
    (!left.is_empty() && !right.is_empty()).then_some((left, right))
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
                    vocab = serde_json::from_str::<VocabTable>(model_value.get())
                        .ok()?
                        .0
                }
                "merges" => merges = serde_json::from_str::<MergeList>(model_value.get()).ok()?.0,
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

/// The bytes a byte-level text stands for; None when a character stands for none.
fn byte_level_bytes(text: &str, chars: &[u16; 512]) -> Option<Vec<u8>> {
    text.chars()
        .map(|c| match chars.get(c as usize) {
            Some(&byte) if byte < 256 => Some(byte as u8),
            _ => None,
        })
        .collect()
}

impl BpeDocument {
    pub fn len(&self) -> usize {
        self.vocab.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vocab.is_empty()
    }

    pub fn id(&self, key: &str) -> Option<u32> {
        self.vocab.get(key).copied()
    }

    /// The tables as ids, given the specials (text -> id, every one either in
    /// the vocabulary with that id or placed outside it by the caller); None
    /// when anything is irregular.
    pub fn tables(&self, specials: &FxHashMap<String, u32>) -> Option<ByteLevelTables> {
        let chars = byte_level_chars();
        let size = self
            .vocab
            .values()
            .chain(specials.values())
            .max()
            .map_or(0, |&max| max as usize + 1);
        let mut tokens: Vec<Option<Vec<u8>>> = vec![None; size];
        let mut id_by_text: FxHashMap<&str, u32> = FxHashMap::default();
        id_by_text.reserve(self.vocab.len());
        let mut single_bytes = [false; 256];
        for (key, &id) in &self.vocab {
            let token = match specials.get(key) {
                Some(&special_id) if special_id != id => return None,
                Some(_) => key.as_bytes().to_vec(),
                None => {
                    let bytes = byte_level_bytes(key, &chars).filter(|b| !b.is_empty())?;
                    if let [byte] = bytes[..] {
                        single_bytes[byte as usize] = true;
                    }
                    id_by_text.insert(key, id);
                    bytes
                }
            };
            if tokens[id as usize].replace(token).is_some() {
                return None;
            }
        }
        for (text, &id) in specials {
            if !self.vocab.contains_key(text)
                && tokens[id as usize]
                    .replace(text.as_bytes().to_vec())
                    .is_some()
            {
                return None;
            }
        }
        if single_bytes.contains(&false) {
            return None;
        }
        // Three string lookups a merge, each a cache miss: worth both cores.
        let merges: Vec<(u32, u32)> = self
            .merges
            .par_iter()
            .map(|(left, right)| {
                let mut joined = String::with_capacity(left.len() + right.len());
                joined.push_str(left);
                joined.push_str(right);
                id_by_text.get(joined.as_str())?;
                Some((
                    *id_by_text.get(left.as_str())?,
                    *id_by_text.get(right.as_str())?,
                ))
            })
            .collect::<Option<_>>()?;
        let mut seen = FxHashSet::default();
        if !merges.iter().all(|&pair| seen.insert(pair)) {
            return None;
        }
        Some(ByteLevelTables { tokens, merges })
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
        assert_eq!(tables.tokens[256].as_deref(), Some(&b"ab"[..]));
        assert_eq!(tables.tokens[257].as_deref(), Some(&b"<s>"[..]));
        assert_eq!(tables.tokens[10].as_deref(), Some(&b"\n"[..]));
        assert_eq!(tables.tokens[32].as_deref(), Some(&b" "[..]));
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
    }
}

use std::path::PathBuf;

use base64::Engine;
use serde_json::Value;

use super::*;

fn plain_normalizer() -> SpNormalizer {
    SpNormalizer::new(b"", true, true, true, false).unwrap()
}

fn sp(
    table: &[(&str, f64, Kind)],
    algorithm: SpAlgorithm,
    byte_fallback: bool,
) -> SentencePieceEncoder {
    SentencePieceEncoder::new(
        table.iter().map(|t| t.0.to_owned()).collect(),
        table.iter().map(|t| t.1).collect(),
        table.iter().map(|t| t.2).collect(),
        algorithm,
        byte_fallback,
        plain_normalizer(),
    )
    .unwrap()
}

#[test]
fn whitespace_rules() {
    let n = plain_normalizer();
    assert_eq!(n.normalize("  a  b  "), "▁a▁b");
    assert_eq!(n.normalize("   "), "");
    assert_eq!(n.normalize(""), "");
    let keep = SpNormalizer::new(b"", true, false, true, false).unwrap();
    assert_eq!(keep.normalize(" a  b "), "▁▁a▁▁b▁");
    let suffix = SpNormalizer::new(b"", true, true, true, true).unwrap();
    assert_eq!(suffix.normalize(" a b "), "a▁b▁");
    let unescaped = SpNormalizer::new(b"", false, true, false, false).unwrap();
    assert_eq!(unescaped.normalize(" a  b "), "a b");
}

#[test]
fn corrupt_charsmaps_are_errors() {
    assert!(SpNormalizer::new(b"\x01\x00", true, true, true, false).is_err());
    assert!(SpNormalizer::new(b"\x08\x00\x00\x00\x00", true, true, true, false).is_err());
    // One unit whose offset points far outside the trie.
    let blob = [4u8, 0, 0, 0, 0, 0xFC, 0xFF, 0x7F, b'x', 0];
    assert!(SpNormalizer::new(&blob, true, true, true, false).is_err());
}

#[test]
fn unigram_picks_the_best_path_and_fuses_unknowns() {
    use Kind::*;
    let m = sp(
        &[
            ("<unk>", 0.0, Unknown),
            ("▁a", -1.0, Normal),
            ("b", -2.0, Normal),
            ("▁ab", -2.5, Normal),
            ("▁", -3.0, Normal),
            ("a", -3.0, Normal),
        ],
        SpAlgorithm::Unigram,
        false,
    );
    assert_eq!(m.encode("ab"), vec![3]);
    assert_eq!(m.encode("a b"), vec![1, 4, 2]);
    // Two unknown characters: one <unk>.
    assert_eq!(m.encode("axy"), vec![1, 0]);
    assert_eq!(m.encode(""), Vec::<u32>::new());
}

#[test]
fn byte_fallback_spells_unknowns() {
    use Kind::*;
    let mut table = vec![
        ("<unk>".to_owned(), 0.0, Unknown),
        ("▁".to_owned(), -1.0, Normal),
    ];
    for b in 0..=255u8 {
        table.push((format!("<0x{b:02X}>"), 0.0, Byte));
    }
    let m = SentencePieceEncoder::new(
        table.iter().map(|t| t.0.clone()).collect(),
        table.iter().map(|t| t.1).collect(),
        table.iter().map(|t| t.2).collect(),
        SpAlgorithm::Unigram,
        true,
        plain_normalizer(),
    )
    .unwrap();
    assert_eq!(m.encode("é"), vec![1, 2 + 0xC3, 2 + 0xA9]);
}

#[test]
fn bpe_merges_by_score_and_splits_unused() {
    use Kind::*;
    let m = sp(
        &[
            ("<unk>", 0.0, Unknown),
            ("▁", -1.0, Normal),
            ("a", -1.0, Normal),
            ("b", -1.0, Normal),
            ("▁a", -2.0, Normal),
            ("ab", -0.5, Unused),
            ("▁ab", -0.1, Normal),
        ],
        SpAlgorithm::Bpe,
        false,
    );
    // "ab" (unused) merges first, then ▁ + ab.
    assert_eq!(m.encode("ab"), vec![6]);
    // "ab" alone is split back into a + b.
    assert_eq!(m.encode("b ab"), vec![1, 3, 6]);
    assert_eq!(m.encode("xab"), vec![1, 0, 2, 3]);
}

#[test]
fn hf_pipeline_basics() {
    let pieces = ["<unk>", "▁a", "▁", "a", "b", "<x>"];
    let m = HfUnigramEncoder::new(
        pieces.iter().map(|p| p.to_string()).collect(),
        vec![0.0, -1.0, -2.0, -2.0, -2.0, 0.0],
        Some(0),
        false,
        vec![HfNormalizerStep::Replace {
            pattern: " {2,}".into(),
            content: " ".into(),
            regex: true,
        }],
        true,
        Metaspace {
            replacement: '▁',
            prepend_scheme: PrependScheme::Always,
            split: true,
        },
        vec![HfAddedToken {
            content: "<x>".into(),
            id: 5,
            normalized: false,
        }],
    )
    .unwrap();
    assert_eq!(m.encode("a  ab<x>zz").unwrap(), vec![1, 1, 4, 5, 2, 0]);
}

// ---------------------------------------------------------------------------
// Equality with the Python references on fixtures (see the report for the generator).

fn f64s(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| f64::from_bits(v.as_str().unwrap().parse::<u64>().unwrap()))
        .collect()
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

fn blob(value: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(value.as_str().unwrap())
        .unwrap()
}

fn ids(value: &Value) -> Vec<u32> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

enum Encoder {
    Sp(SentencePieceEncoder),
    Hf(HfUnigramEncoder),
}

fn encoder_of(doc: &Value) -> Encoder {
    let pieces = strings(&doc["pieces"]);
    let scores = f64s(&doc["scores"]);
    if doc["type"] == "sp" {
        let n = &doc["normalizer"];
        let normalizer = SpNormalizer::new(
            &blob(&n["charsmap"]),
            n["add_dummy_prefix"].as_bool().unwrap(),
            n["remove_extra_whitespaces"].as_bool().unwrap(),
            n["escape_whitespaces"].as_bool().unwrap(),
            n["treat_whitespace_as_suffix"].as_bool().unwrap(),
        )
        .unwrap();
        let kinds = strings(&doc["kinds"])
            .iter()
            .map(|k| Kind::parse(k).unwrap())
            .collect();
        let algorithm = match doc["algorithm"].as_str().unwrap() {
            "unigram" => SpAlgorithm::Unigram,
            _ => SpAlgorithm::Bpe,
        };
        Encoder::Sp(
            SentencePieceEncoder::new(
                pieces,
                scores,
                kinds,
                algorithm,
                doc["byte_fallback"].as_bool().unwrap(),
                normalizer,
            )
            .unwrap(),
        )
    } else {
        let steps = doc["normalizers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| match s["type"].as_str().unwrap() {
                "precompiled" => HfNormalizerStep::Precompiled(blob(&s["charsmap"])),
                _ => HfNormalizerStep::Replace {
                    pattern: s["pattern"].as_str().unwrap().to_owned(),
                    content: s["content"].as_str().unwrap().to_owned(),
                    regex: s["regex"].as_bool().unwrap(),
                },
            })
            .collect();
        let added = doc["added_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| HfAddedToken {
                content: t["content"].as_str().unwrap().to_owned(),
                id: t["id"].as_u64().unwrap() as u32,
                normalized: t["normalized"].as_bool().unwrap(),
            })
            .collect();
        Encoder::Hf(
            HfUnigramEncoder::new(
                pieces,
                scores,
                doc["unk_id"].as_u64().map(|v| v as u32),
                doc["byte_fallback"].as_bool().unwrap(),
                steps,
                doc["whitespace_split"].as_bool().unwrap(),
                Metaspace {
                    replacement: '▁',
                    prepend_scheme: PrependScheme::parse(doc["prepend_scheme"].as_str().unwrap())
                        .unwrap(),
                    split: doc["split"].as_bool().unwrap(),
                },
                added,
            )
            .unwrap(),
        )
    }
}

/// BYTEPAIR_SP_FIXTURES: a folder of JSON files written by the generator.
#[test]
#[ignore]
fn equals_the_python_references_on_fixtures() {
    let dir = PathBuf::from(std::env::var("BYTEPAIR_SP_FIXTURES").expect("BYTEPAIR_SP_FIXTURES"));
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    let mut total_mismatches = 0;
    for path in names {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let encoder = encoder_of(&doc);
        let cases = doc["cases"].as_array().unwrap();
        let mut mismatches = 0;
        for case in cases {
            let text = case["text"].as_str().unwrap();
            let expected = ids(&case["ids"]);
            let got = match &encoder {
                Encoder::Sp(e) => e.encode(text),
                Encoder::Hf(e) => e.encode(text).unwrap(),
            };
            if got != expected {
                mismatches += 1;
                if mismatches <= 5 {
                    let shown: String = text.chars().take(80).collect();
                    let first = got.iter().zip(&expected).position(|(a, b)| a != b);
                    eprintln!(
                        "{}: {shown:?}: first difference at {first:?}; got {:?} expected {:?}",
                        path.display(),
                        &got[..got.len().min(20)],
                        &expected[..expected.len().min(20)]
                    );
                }
            }
        }
        eprintln!(
            "{}: {} cases, {mismatches} mismatches",
            path.display(),
            cases.len()
        );
        total_mismatches += mismatches;
    }
    assert_eq!(total_mismatches, 0);
}

/// BYTEPAIR_SP_FIXTURES (models) and BYTEPAIR_SP_BENCH (text files, comma
/// separated): one-thread encode throughput, line by line.
#[test]
#[ignore]
fn throughput() {
    let dir = PathBuf::from(std::env::var("BYTEPAIR_SP_FIXTURES").expect("BYTEPAIR_SP_FIXTURES"));
    let files = std::env::var("BYTEPAIR_SP_BENCH").expect("BYTEPAIR_SP_BENCH");
    for name in [
        "sp_sp_test_model.json",
        "sp_llama2_tokenizer.json",
        "hf_t5-small.json",
    ] {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        let encoder = encoder_of(&doc);
        for file in files.split(',') {
            let text = std::fs::read_to_string(file).unwrap();
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let bytes: usize = lines.iter().map(|l| l.len()).sum();
            let mut best = f64::INFINITY;
            let mut count = 0;
            for _ in 0..3 {
                let start = std::time::Instant::now();
                count = 0;
                for line in &lines {
                    count += match &encoder {
                        Encoder::Sp(e) => e.encode(line).len(),
                        Encoder::Hf(e) => e.encode(line).unwrap().len(),
                    };
                }
                best = best.min(start.elapsed().as_secs_f64());
            }
            // FNV-1a over every id (u32 LE), u32::MAX after each line.
            let mut hash: u64 = 0xcbf29ce484222325;
            for line in &lines {
                let mut ids = match &encoder {
                    Encoder::Sp(e) => e.encode(line),
                    Encoder::Hf(e) => e.encode(line).unwrap(),
                };
                ids.push(u32::MAX);
                for id in ids {
                    for b in id.to_le_bytes() {
                        hash = (hash ^ b as u64).wrapping_mul(0x100000001b3);
                    }
                }
            }
            eprintln!(
                "{name} {file}: {:.1} MB/s ({} lines, {count} ids, {:.3}s, hash {hash:016x})",
                bytes as f64 / best / 1e6,
                lines.len(),
                best
            );
        }
    }
}

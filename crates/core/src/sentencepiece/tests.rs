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
fn bpe_takes_a_character_that_is_a_control_piece_as_unknown() {
    use Kind::*;
    let m = sp(
        &[
            ("<unk>", 0.0, Unknown),
            ("▁", -1.0, Normal),
            ("a", -1.0, Normal),
            ("b", -1.0, Control),
            ("▁a", -2.0, Normal),
        ],
        SpAlgorithm::Bpe,
        false,
    );
    // As sentencepiece: "b" is unknown, and a run of unknowns is one <unk>.
    assert_eq!(m.encode("ab"), vec![4, 0]);
    assert_eq!(m.encode("xb a"), vec![1, 0, 4]);
}

#[test]
fn bpe_merges_runs_no_piece_crosses_as_it_merges_the_whole_text() {
    use Kind::*;
    // Pieces across a space ("a▁b"), across other pairs ("ba", "cab"), and
    // a user-defined one (frozen), with ties of equal scores.
    let mut m = sp(
        &[
            ("<unk>", 0.0, Unknown),
            ("▁", -1.0, Normal),
            ("a", -1.0, Normal),
            ("b", -1.0, Normal),
            ("c", -1.0, Normal),
            ("▁a", -2.0, Normal),
            ("ab", -2.0, Normal),
            ("a▁", -2.0, Normal),
            ("a▁b", -1.5, Normal),
            ("ba", -3.0, Normal),
            ("cab", -0.5, Normal),
            ("▁ab", -2.5, Normal),
            ("bc", -2.0, UserDefined),
        ],
        SpAlgorithm::Bpe,
        false,
    );
    assert!(m.tables.crossings.is_some());
    let mut rng = crate::util::rng::Rng::new(11);
    let alphabet = ['a', 'b', 'c', ' ', 'x', '▁'];
    let texts: Vec<String> = (0..400)
        .map(|_| {
            let len = (rng.next_u64() % 40) as usize;
            (0..len)
                .map(|_| alphabet[(rng.next_u64() % alphabet.len() as u64) as usize])
                .collect()
        })
        .collect();
    let by_runs: Vec<Vec<u32>> = texts.iter().map(|t| m.encode(t)).collect();
    m.tables.crossings = None;
    for (text, ids) in texts.iter().zip(&by_runs) {
        assert_eq!(&m.encode(text), ids, "{text:?}");
    }
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

#[test]
fn decode_writes_sentencepiece_text() {
    use Kind::*;
    let mut table = vec![
        ("<unk>", 0.0, Unknown),
        ("<s>", 0.0, Control),
        ("▁a", -1.0, Normal),
        ("▁", -1.0, Normal),
        ("b▁c", -1.0, Normal),
    ];
    let bytes: Vec<String> = (0..=255u8).map(|b| format!("<0x{b:02X}>")).collect();
    table.extend(bytes.iter().map(|b| (b.as_str(), 0.0, Byte)));
    let m = sp(&table, SpAlgorithm::Bpe, true);
    let byte = |b: u8| 5 + b as u32;
    // The first text's leading ▁ goes; a control piece writes nothing.
    assert_eq!(m.decode(&[1, 2, 2, 4], "?", false).unwrap(), b"a ab c");
    assert_eq!(m.decode(&[0, 2], " ? ", false).unwrap(), b" ?  a");
    // Byte by byte: each byte that starts no valid character is one U+FFFD.
    let ids = [byte(0xE2), byte(0x82), byte(b'x'), byte(0xC3), byte(0xA9)];
    assert_eq!(
        String::from_utf8(m.decode(&ids, "?", false).unwrap()).unwrap(),
        "\u{FFFD}\u{FFFD}xé"
    );
    assert_eq!(m.decode(&ids, "?", true).unwrap(), b"\xE2\x82x\xC3\xA9");
    let error = m.decode(&[2, 999], "?", false).unwrap_err().to_string();
    assert!(error.contains("token id 999 at position 1"), "{error}");
}

//! Every scanner against the published regex it stands for (fancy-regex).

use super::*;
use crate::text::pretokenize::{CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, R50K_PATTERN};

fn by_regex(regex: &fancy_regex::Regex, text: &str) -> Vec<String> {
    regex
        .find_iter(text)
        .map(|m| m.unwrap().as_str().to_owned())
        .collect()
}

fn by_scanner(scanner: Scanner, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    scanner.for_each_piece(text, |p| out.push(p.to_owned()));
    out
}

/// Characters of every class that matters, and the seams between them.
const ALPHABET: &[char] = &[
    'a', 'Z', 'é', 'ß', 'ǅ', 'ʰ', '日', 'ا', '\u{301}', '\u{93f}', '1', '٣', '²', 'Ⅻ', ' ', ' ',
    '\t', '\n', '\r', '\u{3000}', '\u{85}', '\'', 's', 'S', 'ſ', 't', 'l', 'L', 'v', 'e', 'r', 'm',
    'd', 'D', '!', '.', '/', '-', '😀', '\u{200d}', '_', '$',
];

fn random_texts(seed: u64, count: usize) -> Vec<String> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let len = (next() % 24) as usize;
            (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
                .collect()
        })
        .collect()
}

fn check(scanner: Scanner, pattern: &str) {
    let regex = fancy_regex::Regex::new(pattern).unwrap();
    for text in random_texts(0x9e3779b97f4a7c15 ^ pattern.len() as u64, 20_000) {
        assert_eq!(
            by_scanner(scanner, &text),
            by_regex(&regex, &text),
            "{pattern} on {text:?}"
        );
    }
}

/// Mostly ASCII words, with now and then a character that sends the
/// fast paths to the general scanners in the middle of a run.
#[test]
fn ascii_fast_paths_equal_the_patterns_on_mostly_ascii_text() {
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        "the", " The", " HTML", "Hello", "don't", "I'M", " 12345", " ", "  ", "\n", " \n\n",
        "\r\n", "\t", "!", " ...", "/", "//\n", "'s", "'", "é", "É", "ſ", "\u{a0}", "\u{3000}",
        "٣", "ʰ", "\u{301}", "日本", "ǅ", "😀", "-", "_x",
        // Runs of eight letters and more (read eight bytes at a time),
        // and the bytes just outside the letters' ranges: @ [ ` {
        " internationalization", "XMLHttpRequest", "ABCDEFGH", "abcdefgh", "camelCaseWord",
        "DON'T", "Abcdefghijklmnop", "x@Y", "Ab[0]", "q`Z`", "{zZ}", "az@AZ[az`AZ{",
    ];
    for (scanner, pattern) in [
        (Scanner::Cl100k, CL100K_PATTERN),
        (Scanner::O200k, O200K_PATTERN),
    ] {
        let regex = fancy_regex::Regex::new(pattern).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..40_000 {
            let mut text = String::new();
            for _ in 0..(state % 12) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
            }
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            assert_eq!(
                by_scanner(scanner, &text),
                by_regex(&regex, &text),
                "{pattern} on {text:?}"
            );
        }
    }
}

/// Texts of hundreds of bytes, mostly plain ASCII, so that the starts are
/// found 64 bytes at a time, with every seam the block rules decide and
/// the characters that cut a block short. (Debug builds also check each
/// piece a block cuts against the scalar scanner.)
#[test]
fn blocks_of_ascii_equal_the_patterns() {
    #[rustfmt::skip]
    const WORDS: &[&str] = &[
        " the", " word", "Word", " CamelCase", "ABCdef", " XML", "x", " a", ",", ".", " (",
        "(", ")", " ((", "[a]", "\n", "\n\n", "\r\n", ".\n", ",\n\n", " 1", "12", "1234567",
        " 2024", "a1", "1a", "-", " --", "\"", " \"", "'", " 's", "don't", "it's", "I'M",
        " ", "  ", " \n", "\n ", "\t", "/", "//", ".\n/", "a/b", "é", " é", "\u{a0}", "...",
        ".a", "..a", " .a", "1.a", "\n.a", "a.\nb", "_", "a_b", "\x0b", "\x7f", "\x1f",
        // Indentation and blank lines, around newlines and punctuation.
        "    ", "\n    ", "   \n", " \n \n ", "\n\n  ", ";\n  ", ":\n\n    ", ". \n",
        "\r\n  ", "  x", "  1", "  (", "  \t", "\n \u{a0}",
        // Typographic punctuation, beside letters, spaces and other punctuation.
        "“", " “", "”", "”.", ".”", "’", "’s", "don’t", "—", " — ", "—a", "…", "–", "\n“",
        " “Hello,” ", "(“", "‘x’", "“\n", "1—2", "’\u{a0}", "é—", "—é", "“\t",
        // Letters of two bytes the blocks know, and some beside them they do not.
        " für", "Straße", "ÜBER", "über", "É", "ß", "×", "÷", "a×b", "1÷2", " Élan", "É1",
        " привет", "Привет", "ПРИВЕТ", "мИр", "ѠѡѢѣ", "ёЁ", " Ѿѿ", "\u{483}", "ҁ", "ǅ", "ā",
        "п.", ".п", "п\n", "п’", " п", "ý", "ÿŸ", "Ā", "çÇ",
        // Kana, ideographs and CJK punctuation, beside letters of both cases.
        "日本語", "の", "ひらがな", "カタカナ", "ー", "漢字", "。", "、", "，", "「", "」",
        "『』", "【", "（", "）", "：", "；", "？", "！", "中A", "A中", "中b", "b中", "Ab中",
        "中AB", "中Ab", " 中", "中 ", "中1", "1中", "中'", "中's", "中\n", "\n中", "㐀", "䷀",
        "鿿", "\u{3040}", "\u{3097}", "\u{3099}", "゛", "ゟ", "゠", "・", "ヿ", "ゖ", "ァ",
        "ヺ", "ヽ", "々", "〜", "。」", "「日", "日。", "Ж中", "中Ж", "中ж", "é中", "中É",
    ];
    for (scanner, pattern) in [
        (Scanner::Gpt2, GPT2_PATTERN),
        (Scanner::Cl100k, CL100K_PATTERN),
        (Scanner::O200k, O200K_PATTERN),
    ] {
        let regex = fancy_regex::Regex::new(pattern).unwrap();
        let mut rng = crate::util::rng::Rng::new(pattern.len() as u64);
        for round in 0..3000 {
            let mut text = String::new();
            // Some texts nearly all common prose, some of every word.
            let common = if round % 2 == 0 { 14 } else { WORDS.len() };
            for _ in 0..rng.next_u64() % 120 {
                text.push_str(WORDS[(rng.next_u64() % common as u64) as usize]);
            }
            assert_eq!(
                by_scanner(scanner, &text),
                by_regex(&regex, &text),
                "{pattern} on {text:?}"
            );
        }
        // Long runs of whitespace across a block's edge, at every offset.
        for shift in 0..80 {
            for run in [
                "\n{s}\nb",
                "a{s}\nb",
                ".\n{s}x",
                "a\n{s}\tb",
                "\n{s}é",
                "{s}12",
            ] {
                let spaces = " ".repeat(5 + shift % 70);
                let text = "x".repeat(shift) + &run.replace("{s}", &spaces) + " the end.";
                assert_eq!(
                    by_scanner(scanner, &text),
                    by_regex(&regex, &text),
                    "{pattern} on {text:?}"
                );
            }
        }
    }
}

#[test]
fn gpt2_scanner_equals_both_gpt2_patterns() {
    check(Scanner::Gpt2, GPT2_PATTERN);
    check(Scanner::Gpt2, R50K_PATTERN);
}

#[test]
fn cl100k_scanner_equals_the_pattern() {
    check(Scanner::Cl100k, CL100K_PATTERN);
}

#[test]
fn o200k_scanner_equals_the_pattern() {
    check(Scanner::O200k, O200K_PATTERN);
}

#[test]
fn ascii_table_equals_the_regex_tables() {
    let table = classes();
    for c in 0u8..128 {
        let cp = c as usize;
        assert_eq!(
            ASCII[cp],
            table.blocks[table.block_of[cp / BLOCK] as usize][cp % BLOCK],
            "{c}"
        );
    }
}

#[test]
fn long_runs_are_linear_and_exact() {
    for text in [
        "a".repeat(100_000),
        " ".repeat(100_000),
        "\n".repeat(50_000) + "x",
    ] {
        for scanner in [Scanner::Gpt2, Scanner::Cl100k, Scanner::O200k] {
            let pieces = by_scanner(scanner, &text);
            assert_eq!(pieces.concat(), text);
        }
    }
}

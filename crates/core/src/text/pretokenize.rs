//! Pre-tokenizers: cut text into pieces that BPE merges never cross.
//!
//! Rule for patterns: every non-empty match is a piece, text between matches
//! is a piece of its own (so no byte is ever dropped), empty matches are
//! ignored. The builtin patterns match every character, so they leave no gaps.

use fancy_regex::Regex;

use crate::error::{Error, Result};
use crate::text::scan::{self, Scanner};

/// GPT-2's published pattern (tiktoken's `gpt2`).
pub const GPT2_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// tiktoken's `r50k_base` / `p50k_base` pattern (GPT-2's, with possessive quantifiers).
pub const R50K_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// tiktoken's `cl100k_base` pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
/// tiktoken's `o200k_base` pattern.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);
/// A word with the whitespace before it at its front; trailing whitespace alone.
pub const WHITESPACE_PATTERN: &str = r"\s*\S+|\s+";

/// Which pre-tokenizer; decides where a long text may be cut for parallel work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    None,
    Whitespace,
    Gpt2,
    R50k,
    Cl100k,
    O200k,
    Regex,
}

#[derive(Clone, Debug)]
enum Engine {
    /// The whole text is one piece.
    Whole,
    /// A hand-written scanner, exact and linear (see `scan`).
    Scan(Scanner),
    Regex(Regex),
}

#[derive(Clone, Debug)]
pub struct Pretokenizer {
    kind: Kind,
    engine: Engine,
}

/// How many times one search of a user pattern may backtrack (fancy-regex's
/// default, as the `Replace` normalizer steps use). A pattern that needs more,
/// like the exponential `(?:a|a)*b(?!c)`, fails with `PatternFailed` instead of
/// running for ever. The count covers one search: every start position tried
/// from the end of the previous match up to the next match, so a pattern that
/// goes through the backtracking engine (lookaround, backreferences, possessive
/// or atomic groups) and finds no match in roughly a megabyte of text fails too.
/// Patterns without those features run on the regex crate and never backtrack.
pub const BACKTRACK_LIMIT: usize = 1_000_000;

fn compile(pattern: &str) -> Result<Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(BACKTRACK_LIMIT)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_owned(),
            message: e.to_string(),
        })
}

/// `PatternFailed` for a search that started at byte `position`.
fn pattern_failed(e: fancy_regex::Error, position: usize) -> Error {
    use fancy_regex::{Error as E, RuntimeError as R};
    let message = match e {
        E::RuntimeError(R::BacktrackLimitExceeded) => format!(
            "the pattern backtracks too much (more than {BACKTRACK_LIMIT} steps searching \
             from this byte for the next match): nested or overlapping repetition such \
             as (a|a)* or (a+)+, or lookaround or backreferences that find no match in a \
             long stretch of text"
        ),
        E::RuntimeError(R::StackOverflow) => "the pattern needs too deep a backtracking \
             stack searching from this byte (a repetition with lookaround or backreferences \
             over about a million characters, or nested repetition)"
            .to_owned(),
        other => other.to_string(),
    };
    Error::PatternFailed { position, message }
}

impl Pretokenizer {
    pub fn builtin(name: &str) -> Result<Self> {
        let (kind, engine) = match name {
            "none" => (Kind::None, Engine::Whole),
            "whitespace" => (
                Kind::Whitespace,
                Engine::Regex(compile(WHITESPACE_PATTERN)?),
            ),
            "gpt2" => (Kind::Gpt2, Engine::Scan(Scanner::Gpt2)),
            "r50k" | "p50k" => (Kind::R50k, Engine::Scan(Scanner::Gpt2)),
            "cl100k" => (Kind::Cl100k, Engine::Scan(Scanner::Cl100k)),
            "o200k" => (Kind::O200k, Engine::Scan(Scanner::O200k)),
            _ => return Err(Error::UnknownPretokenizer(name.to_owned())),
        };
        Ok(Self { kind, engine })
    }

    pub fn from_pattern(pattern: &str) -> Result<Self> {
        if pattern.is_empty() {
            return Err(Error::InvalidPattern {
                pattern: String::new(),
                message: "the pattern is empty".into(),
            });
        }
        Ok(Self {
            kind: Kind::Regex,
            engine: Engine::Regex(compile(pattern)?),
        })
    }

    /// Calls `piece` for every piece of `text`, in order.
    pub fn for_each_piece<'t>(&self, text: &'t str, mut piece: impl FnMut(&'t str)) -> Result<()> {
        let regex = match &self.engine {
            Engine::Whole => {
                if !text.is_empty() {
                    piece(text);
                }
                return Ok(());
            }
            Engine::Scan(scanner) => {
                scanner.for_each_piece(text, piece);
                return Ok(());
            }
            Engine::Regex(regex) => regex,
        };
        let mut last_end = 0;
        for found in regex.find_iter(text) {
            let found = found.map_err(|e| pattern_failed(e, last_end))?;
            if found.start() == found.end() {
                continue;
            }
            if found.start() > last_end {
                piece(&text[last_end..found.start()]);
            }
            piece(found.as_str());
            last_end = found.end();
        }
        if last_end < text.len() {
            piece(&text[last_end..]);
        }
        Ok(())
    }

    pub fn pieces<'t>(&self, text: &'t str) -> Result<Vec<&'t str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |p| out.push(p))?;
        Ok(out)
    }

    /// Cuts `text` into chunks of about `target` bytes at places where the
    /// pre-tokenizer is certain to cut too, so pre-tokenizing the chunks one by
    /// one gives exactly the pieces of the whole text. Patterns we cannot
    /// reason about (user regexes, `none`) are never cut.
    pub fn safe_chunks<'t>(&self, text: &'t str, target: usize) -> Vec<&'t str> {
        // `boundary(a, b, c)`: may the text be cut between b and c, given a before b?
        let boundary: fn(char, char, char) -> bool = match self.kind {
            // gpt2: a lone newline between two non-space characters is always
            // its own piece (`\s+(?!\S)` cannot take more than it), no
            // alternative crosses it, and the match at a position depends only
            // on the text from there on.
            Kind::Gpt2 | Kind::R50k => {
                |a, b, c| b == '\n' && !scan::is_space(a) && !scan::is_space(c)
            }
            // cl100k, o200k: the same, but a run of punctuation takes the
            // newlines after it, so the newline must follow a letter or digit.
            Kind::Cl100k | Kind::O200k => {
                |a, b, c| b == '\n' && scan::is_letter_or_number(a) && !scan::is_space(c)
            }
            // whitespace: a run of non-space characters always ends a piece.
            Kind::Whitespace => |_, b, c| !scan::is_space(b) && scan::is_space(c),
            Kind::None | Kind::Regex => return vec![text],
        };
        let mut chunks = Vec::new();
        let mut start = 0;
        while text.len() - start > target {
            let mut search_from = start + target;
            while !text.is_char_boundary(search_from) {
                search_from += 1;
            }
            let mut before = text[start..search_from].chars().rev();
            let (mut b, mut a) = (before.next(), before.next());
            let mut cut = None;
            for (offset, c) in text[search_from..].char_indices() {
                if let (Some(a), Some(b)) = (a, b) {
                    if boundary(a, b, c) {
                        cut = Some(search_from + offset);
                        break;
                    }
                }
                (a, b) = (b, Some(c));
            }
            match cut {
                Some(at) => {
                    chunks.push(&text[start..at]);
                    start = at;
                }
                None => break,
            }
        }
        if start < text.len() || chunks.is_empty() {
            chunks.push(&text[start..]);
        }
        chunks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt2_pieces_follow_the_published_pattern() {
        let p = Pretokenizer::builtin("gpt2").unwrap();
        assert_eq!(
            p.pieces("Hello world's  123 !!\n\nx").unwrap(),
            vec!["Hello", " world", "'s", " ", " 123", " !!", "\n", "\n", "x"]
        );
    }

    #[test]
    fn user_regex_keeps_the_gaps() {
        let p = Pretokenizer::from_pattern(r"\d+").unwrap();
        assert_eq!(p.pieces("ab12cd3").unwrap(), vec!["ab", "12", "cd", "3"]);
    }

    #[test]
    fn safe_chunks_give_the_same_pieces_as_the_whole_text() {
        let text = "The cat\n sat.\n\nOn the mat  \nit   slept.\nend 42\nx}\ny\n".repeat(50);
        for name in ["gpt2", "whitespace", "r50k", "cl100k", "o200k"] {
            let p = Pretokenizer::builtin(name).unwrap();
            let whole = p.pieces(&text).unwrap();
            for target in [1, 7, 64, 1000] {
                let chunks = p.safe_chunks(&text, target);
                assert_eq!(chunks.concat(), text);
                let joined: Vec<&str> = chunks.iter().flat_map(|c| p.pieces(c).unwrap()).collect();
                assert_eq!(joined, whole, "{name} target {target}");
            }
        }
    }

    #[test]
    fn bad_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::from_pattern("(("),
            Err(Error::InvalidPattern { .. })
        ));
    }

    #[test]
    fn exponential_pattern_fails_quickly_with_a_clear_error() {
        let p = Pretokenizer::from_pattern("(?:a|a)*b(?!c)").unwrap();
        let text = format!("xy{}", "a".repeat(30));
        let started = std::time::Instant::now();
        match p.pieces(&text) {
            Err(Error::PatternFailed { position, message }) => {
                assert_eq!(position, 0);
                assert!(message.contains("backtracks too much"), "{message}");
            }
            other => panic!("expected PatternFailed, got {other:?}"),
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let shown = p.pieces(&text).unwrap_err().to_string();
        assert!(shown.contains("at byte 0"), "{shown}");
    }

    #[test]
    fn error_names_where_the_failing_search_started() {
        let p = Pretokenizer::from_pattern("x|(?:a|a)*b(?!c)").unwrap();
        let text = format!("xx{}", "a".repeat(30));
        match p.pieces(&text) {
            Err(Error::PatternFailed { position, .. }) => assert_eq!(position, 2),
            other => panic!("expected PatternFailed, got {other:?}"),
        }
    }

    #[test]
    fn lookahead_pattern_handles_a_long_whitespace_run() {
        // fancy-regex's fixed stack (1_000_000 entries, one per repeated
        // character here) caps a run at just under a million characters,
        // independent of the backtrack limit.
        let run = 900_000;
        let p = Pretokenizer::from_pattern(GPT2_PATTERN).unwrap();
        let text = format!("{}x", " ".repeat(run));
        let pieces = p.pieces(&text).unwrap();
        assert_eq!(pieces, vec![&text[..run - 1], " x"]);
        let p = Pretokenizer::from_pattern(r"\s+(?!\S)|\s+|\S+").unwrap();
        let text = format!("a{}b{}", "\t ".repeat(run / 2), " ".repeat(run));
        let pieces = p.pieces(&text).unwrap();
        assert_eq!(pieces.concat(), text);
        assert_eq!(pieces.len(), 5);
        // Many long runs in one text: the limit is per search, not per text.
        let text = format!("{}x", " ".repeat(run)).repeat(4);
        assert_eq!(p.pieces(&text).unwrap().len(), 12);
        // Past the stack cap: an error, not a panic or a hang.
        let text = format!("{}x", " ".repeat(1 << 20));
        assert!(matches!(
            Pretokenizer::from_pattern(GPT2_PATTERN)
                .unwrap()
                .pieces(&text),
            Err(Error::PatternFailed { position: 0, .. })
        ));
    }

    #[test]
    fn builtin_patterns_are_unaffected_by_the_backtrack_limit() {
        let text = format!(
            "{}x{}'s {}\n",
            " ".repeat(1 << 20),
            "\n".repeat(1 << 20),
            "b".repeat(1 << 20)
        );
        for name in ["whitespace", "gpt2", "r50k", "cl100k", "o200k"] {
            let p = Pretokenizer::builtin(name).unwrap();
            assert_eq!(p.pieces(&text).unwrap().concat(), text, "{name}");
        }
    }
}

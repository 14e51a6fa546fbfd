//! Unigram training (docs/unigram.md): seeds, EM with the digamma M-step, pruning
//! by likelihood loss, the final vocabulary.
//!
//! The working table is every piece that was ever a seed, in table order
//! (sorted by text), so "table order" is id order; dropped pieces are only
//! marked dead. The words' lattices never change except by losing dead
//! pieces, so all their nodes are found once (from the seeds' suffix-array
//! intervals) and kept in flat arrays, compacted after every change of the
//! table. A piece's own lattice (for pruning) is the slice of the text at
//! one of its occurrences.
//!
//! Words are processed in parallel in blocks; every float sum is then done
//! sequentially in the reference's order, so results do not depend on the
//! number of threads.

mod em;
mod nodes;
mod prune;
mod seeds;

pub use em::digamma;

use rustc_hash::{FxHashMap, FxHashSet};

use super::lattice::UNK;
use super::progress::{Progress, Stage};
use super::{byte_piece, Kind};
use crate::error::{Error, Result};
use nodes::{Nodes, Table, Word};

const METASPACE: char = '\u{2581}';
const UNK_PIECE: &str = "<unk>";
/// Nodes per block of words handed to one thread.
const BLOCK_NODES: usize = 1 << 15;

#[derive(Clone, Debug)]
pub struct UnigramConfig {
    /// All ids: `<unk>`, the specials, the 256 byte pieces (with byte fallback) and normal pieces.
    pub vocab_size: usize,
    pub special_tokens: Vec<String>,
    /// In (0, 1]: the share of character occurrences the kept characters cover.
    pub character_coverage: f64,
    /// In characters.
    pub max_piece_length: usize,
    /// How many multi-character seeds to start from (characters come on top).
    pub seed_size: usize,
    /// In (0, 1): the share of the table a pruning keeps.
    pub shrinking_factor: f64,
    pub num_sub_iterations: usize,
    pub byte_fallback: bool,
    /// Words are metaspace words: '▁' may only start a piece.
    pub metaspace: bool,
}

impl Default for UnigramConfig {
    fn default() -> Self {
        UnigramConfig {
            vocab_size: 8000,
            special_tokens: Vec::new(),
            character_coverage: 0.9995,
            max_piece_length: 16,
            seed_size: 1_000_000,
            shrinking_factor: 0.75,
            num_sub_iterations: 2,
            byte_fallback: false,
            metaspace: true,
        }
    }
}

/// One round of the main loop: EM sub-iterations, then (except on the last
/// round) pruning.
#[derive(Clone, Debug, PartialEq)]
pub struct Round {
    pub size_at_start: usize,
    /// The E-step objective (sum of count x log Z) of each sub-iteration.
    pub objectives: Vec<f64>,
    pub size_after_em: usize,
    pub size_after_prune: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct UnigramTrained {
    /// By id: `<unk>`, the specials, `<0x00>`..`<0xFF>` with byte fallback,
    /// then the normal pieces by (score desc, piece asc). Fewer than
    /// vocab_size when the corpus has too few pieces.
    pub pieces: Vec<String>,
    /// 0.0 for every id that is not a normal piece.
    pub scores: Vec<f64>,
    pub kinds: Vec<Kind>,
    pub rounds: Vec<Round>,
}

struct Trainer {
    text: Vec<u32>,
    /// The character of each symbol (symbol 0 stands for no character).
    chars: Vec<char>,
    words: Vec<Word>,
    table: Table,
    nodes: Nodes,
}

fn invalid(message: String) -> Error {
    Error::InvalidTraining(message)
}

/// Trains a unigram vocabulary on counted words (the result does not depend
/// on their order; a word listed twice counts once with the summed count).
pub fn train(
    words: Vec<(String, u64)>,
    config: &UnigramConfig,
    progress: &mut dyn Progress,
) -> Result<UnigramTrained> {
    let n_normal = check_config(config)?;
    let words = sorted_words(words)?;
    if words.is_empty() {
        return Err(invalid("the corpus has no text to train on".into()));
    }

    // Characters: weighted counts, then the covered ones. Every other
    // integer sum (frequencies, Viterbi counts) is at most this total.
    let mut counts: FxHashMap<char, u64> = FxHashMap::default();
    let mut total: u64 = 0;
    let mut positions: usize = 0;
    for (word, count) in &words {
        for c in word.chars() {
            total = total.checked_add(*count).ok_or_else(|| {
                invalid("word counts too large: the weighted character total overflows u64".into())
            })?;
            *counts.entry(c).or_insert(0) += count;
            positions += 1;
        }
        positions += 1;
    }
    if positions >= u32::MAX as usize {
        return Err(invalid(
            "the distinct words hold more than 4G characters; count a sample".into(),
        ));
    }
    let covered = covered_chars(&counts, total, config.character_coverage);
    if covered.len() > n_normal {
        return Err(invalid(format!(
            "vocab_size {} is too small: the {} covered characters need {} normal pieces but only {} are left (lower character_coverage or raise vocab_size)",
            config.vocab_size,
            covered.len(),
            covered.len(),
            n_normal
        )));
    }

    let mut trainer = Trainer::new(&words, covered, &counts, config, progress)?;
    if !progress.report(Stage::Seeded {
        table_size: trainer.table.live.len(),
    }) {
        return Err(Error::Interrupted);
    }

    let desired = (1.1 * n_normal as f64).floor() as usize;
    let mut rounds = Vec::new();
    loop {
        let round = rounds.len();
        let size_at_start = trainer.table.live.len();
        let mut objectives = Vec::new();
        for iteration in 0..config.num_sub_iterations {
            let (expected, objective) = trainer.e_step(progress).ok_or(Error::Interrupted)?;
            trainer.m_step(&expected);
            objectives.push(objective);
            let stage = Stage::Em {
                round,
                iteration,
                table_size: trainer.table.live.len(),
                objective,
            };
            if !progress.report(stage) {
                return Err(Error::Interrupted);
            }
        }
        let size_after_em = trainer.table.live.len();
        if size_after_em <= desired {
            rounds.push(Round {
                size_at_start,
                objectives,
                size_after_em,
                size_after_prune: None,
            });
            break;
        }
        trainer
            .prune(desired, config.shrinking_factor, progress)
            .ok_or(Error::Interrupted)?;
        let table_size = trainer.table.live.len();
        rounds.push(Round {
            size_at_start,
            objectives,
            size_after_em,
            size_after_prune: Some(table_size),
        });
        if !progress.report(Stage::Pruned { round, table_size }) {
            return Err(Error::Interrupted);
        }
    }
    Ok(trainer.finish(n_normal, config, rounds))
}

/// The number of normal pieces, after checking every setting.
fn check_config(config: &UnigramConfig) -> Result<usize> {
    let specials = &config.special_tokens;
    for (i, special) in specials.iter().enumerate() {
        if special.is_empty() {
            return Err(Error::InvalidSpecialTokens(format!(
                "special_tokens[{i}] is empty; a special token needs at least one character"
            )));
        }
        if specials[..i].contains(special) {
            return Err(Error::InvalidSpecialTokens(format!(
                "special_tokens[{i}] {special:?} is a duplicate; special tokens must be distinct"
            )));
        }
        if special == UNK_PIECE {
            return Err(Error::InvalidSpecialTokens(format!(
                "{UNK_PIECE:?} is the unknown piece already (id 0)"
            )));
        }
        // These would always repeat a piece's text, which a piece file cannot hold.
        if config.byte_fallback && (0..=255u8).any(|b| byte_piece(b) == *special) {
            return Err(Error::InvalidSpecialTokens(format!(
                "special token {special:?} is the name of a byte piece of byte_fallback; \
                 choose another text"
            )));
        }
        if config.metaspace && special.chars().eq([METASPACE]) {
            return Err(Error::InvalidSpecialTokens(format!(
                "special token {special:?} is the metaspace character every word starts \
                 with, a piece of its own; choose another text"
            )));
        }
    }
    if config.vocab_size < 1 {
        return Err(invalid("vocab_size must be at least 1".into()));
    }
    if config.max_piece_length < 1 {
        return Err(invalid("max_piece_length must be at least 1".into()));
    }
    if config.num_sub_iterations < 1 {
        return Err(invalid("num_sub_iterations must be at least 1".into()));
    }
    let coverage = config.character_coverage;
    if !(coverage > 0.0 && coverage <= 1.0) {
        return Err(invalid(format!(
            "character_coverage must be in (0, 1], got {coverage}"
        )));
    }
    let factor = config.shrinking_factor;
    if !(factor > 0.0 && factor < 1.0) {
        return Err(invalid(format!(
            "shrinking_factor must be in (0, 1), got {factor}"
        )));
    }
    let n_fixed = 1 + specials.len() + if config.byte_fallback { 256 } else { 0 };
    match config.vocab_size.checked_sub(n_fixed) {
        Some(n_normal) if n_normal >= 1 => Ok(n_normal),
        _ => Err(invalid(format!(
            "vocab_size {} is too small: <unk>, the {} special tokens{} already take {} ids",
            config.vocab_size,
            specials.len(),
            if config.byte_fallback {
                " and the 256 byte pieces"
            } else {
                ""
            },
            n_fixed
        ))),
    }
}

/// The words sorted by text, each once.
fn sorted_words(mut words: Vec<(String, u64)>) -> Result<Vec<(String, u64)>> {
    for (i, (word, count)) in words.iter().enumerate() {
        if word.is_empty() {
            return Err(invalid(format!("words[{i}] is empty")));
        }
        if *count == 0 {
            return Err(invalid(format!("words[{i}] {word:?} has count 0")));
        }
    }
    words.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(String, u64)> = Vec::with_capacity(words.len());
    for (word, count) in words {
        match merged.last_mut() {
            Some(last) if last.0 == word => {
                last.1 = last
                    .1
                    .checked_add(count)
                    .ok_or_else(|| invalid(format!("the count of {word:?} overflows u64")))?;
            }
            _ => merged.push((word, count)),
        }
    }
    Ok(merged)
}

/// Characters by (count desc, char asc) until their running count reaches
/// coverage x total (compared exactly, as Python compares int and float).
fn covered_chars(counts: &FxHashMap<char, u64>, total: u64, coverage: f64) -> Vec<char> {
    let mut chars: Vec<(char, u64)> = counts.iter().map(|(&c, &n)| (c, n)).collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    // running >= threshold  <=>  running >= ceil(threshold), running being an integer
    let threshold = (coverage * total as f64).ceil() as u128;
    let mut kept = Vec::new();
    let mut running: u128 = 0;
    for (c, n) in chars {
        kept.push(c);
        running += n as u128;
        if running >= threshold {
            break;
        }
    }
    kept
}

impl Trainer {
    /// Lays the words out as symbols, finds the seeds and every word's nodes.
    fn new(
        words: &[(String, u64)],
        mut covered: Vec<char>,
        counts: &FxHashMap<char, u64>,
        config: &UnigramConfig,
        progress: &mut dyn Progress,
    ) -> Result<Self> {
        // Symbols 1..=C in code point order, so symbol order is text order.
        covered.sort_unstable();
        let symbol: FxHashMap<char, u32> = covered
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32 + 1))
            .collect();
        let mut text = Vec::new();
        let mut weights = Vec::new();
        let mut spans = Vec::with_capacity(words.len());
        let mut first_seen = vec![0u32; covered.len() + 1];
        for (word, count) in words {
            let start = text.len() as u32;
            for c in word.chars() {
                let s = symbol.get(&c).copied().unwrap_or(0);
                if first_seen[s as usize] == 0 {
                    first_seen[s as usize] = text.len() as u32 + 1;
                }
                text.push(s);
            }
            spans.push(Word {
                start,
                len: text.len() as u32 - start,
                count: *count,
            });
            text.push(0);
        }
        for span in &spans {
            let end = (span.start + span.len + 1) as usize;
            weights.resize(end, span.count);
        }
        let metaspace = if config.metaspace {
            symbol.get(&METASPACE).copied()
        } else {
            None
        };
        // The kind of each symbol's character (symbol 0: a break).
        let kinds: Vec<u8> = std::iter::once(2)
            .chain(covered.iter().map(|&c| crate::text::scan::char_kind(c)))
            .collect();
        // A special token's text is never a seed, so no normal piece repeats it.
        let excluded: FxHashSet<Vec<u32>> = config
            .special_tokens
            .iter()
            .filter_map(|t| t.chars().map(|c| symbol.get(&c).copied()).collect())
            .collect();
        let (sa, seeds) = seeds::seed_candidates(
            &text,
            &weights,
            &kinds,
            metaspace,
            config.max_piece_length,
            config.seed_size,
            &excluded,
            progress,
        )?;
        drop(weights);

        // The table: characters merged into the seeds (a character comes
        // right before the pieces it starts).
        let mut pos = Vec::new();
        let mut len = Vec::new();
        let mut seed_score = Vec::new();
        let mut interval = Vec::new(); // of each multi-character piece
        let mut char_id = vec![UNK; covered.len() + 1];
        let mut next = seeds.iter().peekable();
        for s in 1..=covered.len() as u32 {
            while let Some(seed) = next.next_if(|c| text[sa[c.start as usize] as usize] < s) {
                pos.push(sa[seed.start as usize]);
                len.push(seed.len);
                seed_score.push(seed.score);
                interval.push((pos.len() as u32 - 1, seed.start, seed.end));
            }
            char_id[s as usize] = pos.len() as u32;
            pos.push(first_seen[s as usize] - 1);
            len.push(1);
            seed_score.push(counts[&covered[s as usize - 1]]);
        }
        for seed in next {
            pos.push(sa[seed.start as usize]);
            len.push(seed.len);
            seed_score.push(seed.score);
            interval.push((pos.len() as u32 - 1, seed.start, seed.end));
        }
        let n_pieces = pos.len();
        if n_pieces >= (u32::MAX - 1) as usize {
            return Err(invalid("too many seed pieces".into()));
        }
        let mut sum = 0.0;
        for &s in &seed_score {
            sum += s as f64;
        }
        let log_sum = sum.ln();
        let score = seed_score
            .iter()
            .map(|&s| (s as f64).ln() - log_sum)
            .collect();
        let table = Table {
            pos,
            len,
            score,
            alive: vec![true; n_pieces],
            live: (0..n_pieces as u32).collect(),
        };

        // Nodes: counted per position, then filled length by length so each
        // position's list comes out length ascending.
        let mut starts = vec![0u32; text.len() + 1];
        for span in &spans {
            // a character piece or an unk node at every position
            for p in span.start..span.start + span.len {
                starts[p as usize + 1] = 1;
            }
        }
        let mut per_len: Vec<Vec<(u32, u32, u32)>> =
            vec![Vec::new(); config.max_piece_length.min(text.len()) + 1];
        for &(id, start, end) in &interval {
            for &p in &sa[start as usize..end as usize] {
                starts[p as usize + 1] += 1;
            }
            per_len[table.len[id as usize] as usize].push((id, start, end));
        }
        let mut total_nodes: u64 = 0;
        for start in &mut starts {
            total_nodes += *start as u64;
            if total_nodes >= (u32::MAX - 1) as u64 {
                return Err(invalid(
                    "the words' lattices have more than 4G nodes; count a sample".into(),
                ));
            }
            *start = total_nodes as u32;
        }
        let total_nodes = total_nodes as usize;
        let mut cursor = starts.clone();
        let mut lens = vec![0u32; total_nodes];
        let mut pieces = vec![0u32; total_nodes];
        for span in &spans {
            for p in span.start as usize..(span.start + span.len) as usize {
                let slot = cursor[p] as usize;
                lens[slot] = 1;
                pieces[slot] = char_id[text[p] as usize];
                cursor[p] += 1;
            }
        }
        for (l, group) in per_len.iter().enumerate() {
            for &(id, start, end) in group {
                for &p in &sa[start as usize..end as usize] {
                    let slot = cursor[p as usize] as usize;
                    lens[slot] = l as u32;
                    pieces[slot] = id;
                    cursor[p as usize] += 1;
                }
            }
        }
        drop(sa);
        let mut nodes = Nodes {
            starts,
            lens,
            pieces,
            scores: vec![0.0; total_nodes],
        };
        nodes.refresh(&table, table.unk_score());
        let mut chars = vec!['\0'];
        chars.extend(covered);
        Ok(Trainer {
            text,
            chars,
            words: spans,
            table,
            nodes,
        })
    }

    /// All characters plus the best multi-character pieces up to n_normal,
    /// by (score desc, piece asc), after `<unk>`, the specials and the bytes.
    fn finish(self, n_normal: usize, config: &UnigramConfig, rounds: Vec<Round>) -> UnigramTrained {
        let table = &self.table;
        let by_score = |a: &u32, b: &u32| {
            table.score[*b as usize]
                .partial_cmp(&table.score[*a as usize])
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.cmp(b))
        };
        let (mut kept, mut longer): (Vec<u32>, Vec<u32>) = table
            .live
            .iter()
            .partition(|&&p| table.len[p as usize] == 1);
        longer.sort_unstable_by(by_score);
        let room = n_normal.saturating_sub(kept.len());
        kept.extend(longer.into_iter().take(room));
        kept.sort_unstable_by(by_score);

        let mut pieces = vec![UNK_PIECE.to_string()];
        let mut kinds = vec![Kind::Unknown];
        pieces.extend(config.special_tokens.iter().cloned());
        kinds.extend(config.special_tokens.iter().map(|_| Kind::Control));
        if config.byte_fallback {
            pieces.extend((0..=255u8).map(byte_piece));
            kinds.extend([Kind::Byte; 256]);
        }
        let mut scores = vec![0.0; pieces.len()];
        for &p in &kept {
            let (pos, len) = (
                table.pos[p as usize] as usize,
                table.len[p as usize] as usize,
            );
            pieces.push(
                self.text[pos..pos + len]
                    .iter()
                    .map(|&s| self.chars[s as usize])
                    .collect(),
            );
            scores.push(table.score[p as usize]);
            kinds.push(Kind::Normal);
        }
        UnigramTrained {
            pieces,
            scores,
            kinds,
            rounds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_progress() -> impl FnMut(Stage) -> bool {
        |_: Stage| true
    }

    fn corpus() -> Vec<(String, u64)> {
        let text = "the cat sat on the mat and the hat sat on the cat then the rat ran at the cat";
        let mut counts: FxHashMap<String, u64> = FxHashMap::default();
        for word in text.split(' ') {
            *counts.entry(format!("{METASPACE}{word}")).or_insert(0) += 1;
        }
        counts.into_iter().collect()
    }

    fn config(vocab_size: usize) -> UnigramConfig {
        UnigramConfig {
            vocab_size,
            ..UnigramConfig::default()
        }
    }

    #[test]
    fn a_special_token_is_never_a_normal_piece() {
        let the = format!("{METASPACE}the");
        assert!(train(corpus(), &config(40), &mut no_progress())
            .unwrap()
            .pieces
            .contains(&the));
        let config = UnigramConfig {
            special_tokens: vec![the.clone()],
            ..config(40)
        };
        let t = train(corpus(), &config, &mut no_progress()).unwrap();
        assert_eq!(t.pieces.iter().filter(|p| **p == the).count(), 1);
        assert_eq!(t.kinds[1], Kind::Control);
    }

    #[test]
    fn ids_are_unk_specials_bytes_then_pieces_by_score() {
        let config = UnigramConfig {
            vocab_size: 1 + 2 + 256 + 20,
            special_tokens: vec!["<s>".into(), "</s>".into()],
            byte_fallback: true,
            ..UnigramConfig::default()
        };
        let t = train(corpus(), &config, &mut no_progress()).unwrap();
        assert_eq!(t.pieces.len(), 279);
        assert_eq!(&t.pieces[..3], ["<unk>", "<s>", "</s>"]);
        assert_eq!(&t.kinds[..3], [Kind::Unknown, Kind::Control, Kind::Control]);
        assert_eq!(t.pieces[3], "<0x00>");
        assert_eq!(t.pieces[258], "<0xFF>");
        assert!(t.kinds[3..259].iter().all(|&k| k == Kind::Byte));
        assert!(t.kinds[259..].iter().all(|&k| k == Kind::Normal));
        assert!(t.scores[..259].iter().all(|&s| s == 0.0));
        let normal = &t.scores[259..];
        assert!(normal.windows(2).all(|w| w[0] >= w[1]), "{normal:?}");
        for c in "▁thecasonmdr".chars() {
            assert!(t.pieces.contains(&c.to_string()), "{c}");
        }
        assert!(t.pieces.contains(&"▁the".to_string()));
        let last = t.rounds.last().unwrap();
        assert_eq!(last.size_after_prune, None);
        assert!(t.rounds.iter().all(|r| r.objectives.len() == 2));
    }

    #[test]
    fn word_order_and_repeats_do_not_matter() {
        let words = corpus();
        let mut shuffled = words.clone();
        shuffled.reverse();
        // A word listed twice counts once with the sum.
        let (word, count) = shuffled.pop().unwrap();
        shuffled.push((word.clone(), count - count / 2));
        shuffled.insert(0, (word, count / 2));
        shuffled.retain(|w| w.1 > 0);
        let a = train(words, &config(30), &mut no_progress()).unwrap();
        let b = train(shuffled, &config(30), &mut no_progress()).unwrap();
        assert_eq!(a.pieces, b.pieces);
        assert_eq!(
            a.scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
            b.scores.iter().map(|s| s.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!(a.rounds, b.rounds);
    }

    #[test]
    fn progress_is_reported_and_can_interrupt() {
        let mut stages = Vec::new();
        let t = train(corpus(), &config(25), &mut |stage: Stage| {
            stages.push(stage);
            true
        })
        .unwrap();
        let ems = stages
            .iter()
            .filter(|s| matches!(s, Stage::Em { .. }))
            .count();
        let prunes = stages
            .iter()
            .filter(|s| matches!(s, Stage::Pruned { .. }))
            .count();
        // Seeding reports only Working until the seed table is built.
        let seeded = stages
            .iter()
            .position(|s| !matches!(s, Stage::Working))
            .unwrap();
        assert!(matches!(stages[seeded], Stage::Seeded { .. }) && seeded > 0);
        // Within each EM step and pruning too, so that Ctrl-C need not wait for one.
        let working = stages
            .iter()
            .filter(|s| matches!(s, Stage::Working))
            .count();
        assert!(working >= ems + prunes, "{working} working reports");
        assert_eq!(ems, 2 * t.rounds.len());
        assert_eq!(prunes, t.rounds.len() - 1);
        for stop_at in 0..stages.len() {
            let mut seen = 0;
            let result = train(corpus(), &config(25), &mut |_: Stage| {
                seen += 1;
                seen <= stop_at
            });
            assert!(
                matches!(result, Err(Error::Interrupted)),
                "stop at {stop_at}"
            );
        }
    }

    #[test]
    fn bad_settings_and_words_are_errors() {
        let run = |words: Vec<(String, u64)>, config: UnigramConfig| {
            train(words, &config, &mut no_progress())
                .unwrap_err()
                .to_string()
        };
        let with = |change: &dyn Fn(&mut UnigramConfig)| {
            let mut c = config(100);
            change(&mut c);
            run(corpus(), c)
        };
        assert!(with(&|c| c.vocab_size = 1).contains("too small"));
        assert!(with(&|c| c.vocab_size = 3).contains("covered characters"));
        assert!(with(&|c| {
            c.byte_fallback = true;
            c.vocab_size = 257
        })
        .contains("256 byte pieces"));
        assert!(with(&|c| c.character_coverage = 0.0).contains("character_coverage"));
        assert!(with(&|c| c.character_coverage = f64::NAN).contains("character_coverage"));
        assert!(with(&|c| c.shrinking_factor = 1.0).contains("shrinking_factor"));
        assert!(with(&|c| c.max_piece_length = 0).contains("max_piece_length"));
        assert!(with(&|c| c.num_sub_iterations = 0).contains("num_sub_iterations"));
        assert!(with(&|c| c.special_tokens = vec!["<unk>".into()]).contains("unknown piece"));
        assert!(with(&|c| c.special_tokens = vec!["a".into(), "a".into()]).contains("duplicate"));
        assert!(with(&|c| c.special_tokens = vec![String::new()]).contains("empty"));
        assert!(with(&|c| {
            c.byte_fallback = true;
            c.vocab_size = 400;
            c.special_tokens = vec!["<0x41>".into()]
        })
        .contains("name of a byte piece"));
        assert!(with(&|c| c.special_tokens = vec![METASPACE.into()]).contains("metaspace"));
        assert!(run(vec![], config(100)).contains("no text"));
        assert!(run(vec![("a".into(), 0)], config(100)).contains("count 0"));
        assert!(run(vec![(String::new(), 1)], config(100)).contains("empty"));
        let huge = vec![
            ("ab".to_string(), u64::MAX / 2),
            ("ba".to_string(), u64::MAX / 2),
        ];
        assert!(run(huge, config(100)).contains("too large"));
    }

    #[test]
    fn one_character_words_and_tiny_tables_train() {
        // No multi-character seed at all; the table is the characters.
        let t = train(
            vec![("a".into(), 3), ("b".into(), 1)],
            &config(10),
            &mut no_progress(),
        )
        .unwrap();
        assert_eq!(t.pieces, ["<unk>", "a", "b"]);
        let t = train(
            vec![("abab".into(), 2)],
            &UnigramConfig {
                max_piece_length: 1,
                ..config(10)
            },
            &mut no_progress(),
        )
        .unwrap();
        assert_eq!(t.pieces, ["<unk>", "a", "b"]);
    }
}

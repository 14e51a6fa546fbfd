//! Exact BPE training with incremental pair counts. The rule: count every
//! adjacent pair of symbols in every word (times the word's count), merge
//! the most frequent pair everywhere, left to right, and repeat; ties go to
//! the pair whose (left bytes, right bytes) are smallest. The candidates
//! wait in a lazy heap (`candidates`); the state can be written to a file
//! and training resumed from it ([`checkpoint`]).
//!
//! The naive trainer recounts every pair after every merge. This one keeps
//! `pairs` (pair -> its count and the words it may occur in) and
//! after a merge touches only the words that held the winner. Candidates sit
//! in a max-heap ordered by (count desc, left bytes asc, right bytes asc);
//! entries are not updated in place but checked against `pairs` when
//! they surface, which keeps every step O(log n) and the order exact:
//!
//! invariant: every pair with a positive count has a heap entry whose count
//! is at least its current count (entries are pushed whenever a count grows).
//! So when the top entry's count equals its pair's current count, no other
//! pair can beat it, ties included.

mod candidates;
pub mod checkpoint;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::vocab::pair_key;
use candidates::Candidates;
use checkpoint::Settings;

/// Why training stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    VocabSize,
    NoPairs,
    MinFrequency,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::VocabSize => "vocab_size",
            StopReason::NoPairs => "no_pairs",
            StopReason::MinFrequency => "min_frequency",
        }
    }
}

#[derive(Clone, Debug)]
pub struct TrainConfig {
    pub vocab_size: usize,
    pub special_tokens: Vec<String>,
    pub min_frequency: u64,
    /// Stop after this many merges (subword-nmt counts merges, not tokens).
    pub max_merges: Option<usize>,
    /// Ties go to the largest (left, right) bytes instead of the smallest
    /// (subword-nmt's rule: `max(stats, key=lambda p: (stats[p], p))`).
    pub largest_ties: bool,
    /// No merge may make a token longer than this many bytes (HF's
    /// `max_token_length`, in bytes): such pairs are never candidates.
    pub max_token_length: Option<usize>,
    /// Write the trainer's state to a file now and then ([`Progress::checkpoint_due`]),
    /// when interrupted and at the end, for [`resume`].
    pub checkpoint: Option<Checkpointing>,
}

/// Where checkpoints go, and the caller's settings stored with them.
#[derive(Clone, Debug)]
pub struct Checkpointing {
    pub path: PathBuf,
    pub meta: String,
}

impl TrainConfig {
    /// The plain rule's settings: ties to the smallest pair, stop at `vocab_size`.
    pub fn new(vocab_size: usize, special_tokens: Vec<String>, min_frequency: u64) -> Self {
        Self {
            vocab_size,
            special_tokens,
            min_frequency,
            max_merges: None,
            largest_ties: false,
            max_token_length: None,
            checkpoint: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Trained {
    /// All tokens by id: specials, then the 256 bytes, then merged tokens.
    pub tokens: Vec<Vec<u8>>,
    /// Merges in rank order, as id pairs, with the count each had when it won.
    pub merges: Vec<(u32, u32)>,
    pub counts: Vec<u64>,
    pub stop: StopReason,
}

/// What the trainer reports while it works; returning false stops it with
/// [`Error::Interrupted`].
pub trait Progress {
    fn merged(&mut self, merges_done: usize, vocab_len: usize) -> bool;
    /// Asked after each merge when checkpointing: write a checkpoint now?
    fn checkpoint_due(&mut self) -> bool {
        false
    }
}

impl<F: FnMut(usize, usize) -> bool> Progress for F {
    fn merged(&mut self, merges_done: usize, vocab_len: usize) -> bool {
        self(merges_done, vocab_len)
    }
}

/// A distinct pre-token: its symbols are `symbols[start..start + len]` of the
/// trainer's arena (one buffer for all words, in word order, so that a merge
/// walking its words in id order reads memory front to back).
pub(super) struct Word {
    pub(super) start: u32,
    pub(super) len: u32,
    pub(super) count: u64,
}

struct Trainer {
    settings: Settings,
    /// `settings.max_token_length`, usize::MAX when there is none.
    max_len: usize,
    tokens: Vec<Rc<[u8]>>,
    ids_by_bytes: FxHashMap<Rc<[u8]>, u32>,
    words: Vec<Word>,
    symbols: Vec<u32>,
    pairs: FxHashMap<u64, PairStats>,
    heap: Candidates,
    merges: Vec<(u32, u32)>,
    counts: Vec<u64>,
}

/// A pair's weighted count, and the words it may occur in (words it left
/// since are skipped when met; an entry leaves the table at count zero).
/// Most pairs occur in a few words: up to four are kept without allocating.
#[derive(Default)]
struct PairStats {
    count: u64,
    words: SmallVec<[u32; 4]>,
}

fn unpack(pair: u64) -> (u32, u32) {
    ((pair >> 32) as u32, pair as u32)
}

impl Trainer {
    fn new(
        tokens: Vec<Rc<[u8]>>,
        words: Vec<Word>,
        symbols: Vec<u32>,
        settings: Settings,
    ) -> Result<Self> {
        let mut ids_by_bytes: FxHashMap<Rc<[u8]>, u32> = FxHashMap::default();
        let n_special = settings.n_special as usize;
        for (i, token) in tokens.iter().enumerate().skip(n_special) {
            if ids_by_bytes.insert(token.clone(), i as u32).is_some() {
                return Err(Error::InvalidTraining(format!(
                    "token {i} repeats the bytes of an earlier one"
                )));
            }
        }
        check_pair_total(&words)?;
        let max_len = settings
            .max_token_length
            .map_or(usize::MAX, |m| usize::try_from(m).unwrap_or(usize::MAX));
        let mut trainer = Trainer {
            heap: Candidates::new(&tokens, settings.largest_ties),
            settings,
            max_len,
            tokens,
            ids_by_bytes,
            words,
            symbols,
            pairs: FxHashMap::default(),
            merges: Vec::new(),
            counts: Vec::new(),
        };
        trainer.index();
        Ok(trainer)
    }

    /// Counts every adjacent pair of every word and fills the heap.
    fn index(&mut self) {
        for (w, word) in self.words.iter().enumerate() {
            let start = word.start as usize;
            for pair in self.symbols[start..start + word.len as usize].windows(2) {
                let stats = self.pairs.entry(pair_key(pair[0], pair[1])).or_default();
                stats.count += word.count;
                if stats.words.last() != Some(&(w as u32)) {
                    stats.words.push(w as u32);
                }
            }
        }
        let (max_len, tokens) = (self.max_len, &self.tokens);
        let initial = self
            .pairs
            .iter()
            .filter(|&(&pair, _)| eligible(tokens, max_len, pair))
            .map(|(&pair, stats)| (pair, stats.count));
        self.heap.fill(initial, tokens);
    }

    fn write_checkpoint(&self, to: &Checkpointing) -> Result<()> {
        checkpoint::write(
            &to.path,
            &checkpoint::StateRef {
                meta: &to.meta,
                settings: &self.settings,
                tokens: &self.tokens,
                merges: &self.merges,
                counts: &self.counts,
                words: &self.words,
                symbols: &self.symbols,
            },
        )
    }

    /// Merges until `config` says stop; the merges so far are in `self`.
    fn run(&mut self, config: &TrainConfig, progress: &mut dyn Progress) -> Result<StopReason> {
        let checkpoint = config.checkpoint.as_ref();
        let stop = loop {
            if self.tokens.len() >= config.vocab_size
                || config.max_merges.is_some_and(|m| self.merges.len() >= m)
            {
                break StopReason::VocabSize;
            }
            let Some((pair, count)) = self.pop_best() else {
                break StopReason::NoPairs;
            };
            if count < self.settings.min_frequency {
                break StopReason::MinFrequency;
            }
            let (left, right) = unpack(pair);
            let bytes = [
                &self.tokens[left as usize][..],
                &self.tokens[right as usize][..],
            ]
            .concat();
            let merged = self.token_id(bytes);
            self.apply(pair, merged);
            self.merges.push((left, right));
            self.counts.push(count);
            if !progress.merged(self.merges.len(), self.tokens.len()) {
                if let Some(to) = checkpoint {
                    self.write_checkpoint(to)?;
                }
                return Err(Error::Interrupted);
            }
            if let Some(to) = checkpoint {
                if progress.checkpoint_due() {
                    self.write_checkpoint(to)?;
                }
            }
        };
        if let Some(to) = checkpoint {
            self.write_checkpoint(to)?;
        }
        Ok(stop)
    }

    fn into_trained(self, stop: StopReason) -> Trained {
        Trained {
            tokens: self.tokens.iter().map(|t| t.to_vec()).collect(),
            merges: self.merges,
            counts: self.counts,
            stop,
        }
    }

    /// The best pair and its count, or None when no pair is left.
    fn pop_best(&mut self) -> Option<(u64, u64)> {
        while let Some((pair, count)) = self.heap.pop(&self.tokens) {
            let current = self.pairs.get(&pair).map_or(0, |p| p.count);
            if current == count {
                return Some((pair, current));
            }
            if current > 0 && current < count {
                self.heap.push(pair, current, &self.tokens);
            }
            // current > count: a newer entry carries it already.
        }
        None
    }

    /// The id for `bytes`, adding a token when no token has them yet.
    fn token_id(&mut self, bytes: Vec<u8>) -> u32 {
        if let Some(&id) = self.ids_by_bytes.get(bytes.as_slice()) {
            return id;
        }
        let id = self.tokens.len() as u32;
        let bytes: Rc<[u8]> = bytes.into();
        self.heap.token_added(&bytes);
        self.tokens.push(bytes.clone());
        self.ids_by_bytes.insert(bytes, id);
        id
    }

    /// Replaces every (left, right) by `merged` in the words that hold it,
    /// left to right without overlap, and updates the pair tables.
    fn apply(&mut self, pair: u64, merged: u32) {
        let (left, right) = unpack(pair);
        // The winner's own count drops to zero below, which removes its entry.
        let mut word_ids = self
            .pairs
            .get_mut(&pair)
            .map(|p| std::mem::take(&mut p.words))
            .unwrap_or_default();
        word_ids.sort_unstable();
        word_ids.dedup();
        let mut grown: Vec<u64> = Vec::new();
        let mut new_symbols = Vec::new();
        let mut merged_old = Vec::new();
        let mut merged_new = Vec::new();
        for (k, &w) in word_ids.iter().enumerate() {
            // The words are cache misses: ask early for the entries of the
            // words coming up, then (once those arrived) for their symbols.
            if let Some(&ahead) = word_ids.get(k + 2 * PREFETCH_AHEAD) {
                prefetch(&self.words[ahead as usize]);
            }
            if let Some(&ahead) = word_ids.get(k + PREFETCH_AHEAD) {
                prefetch(&self.symbols[self.words[ahead as usize].start as usize]);
            }
            let word = &self.words[w as usize];
            let (start, count) = (word.start as usize, word.count);
            let old = &self.symbols[start..start + word.len as usize];
            if old.len() < 2 {
                continue;
            }
            new_symbols.clear();
            merged_old.clear();
            merged_old.resize(old.len(), false);
            merged_new.clear();
            let mut i = 0;
            while i < old.len() {
                if i + 1 < old.len() && old[i] == left && old[i + 1] == right {
                    new_symbols.push(merged);
                    merged_new.push(true);
                    merged_old[i] = true;
                    merged_old[i + 1] = true;
                    i += 2;
                } else {
                    new_symbols.push(old[i]);
                    merged_new.push(false);
                    i += 1;
                }
            }
            if new_symbols.len() == old.len() {
                continue; // a stale entry of the index: the pair left this word earlier
            }
            // Pairs between two untouched symbols are the same before and after;
            // only pairs with a merged side change.
            for k in 0..old.len() - 1 {
                if merged_old[k] || merged_old[k + 1] {
                    let key = pair_key(old[k], old[k + 1]);
                    let stats = self.pairs.get_mut(&key).expect("counted pair");
                    stats.count -= count;
                    if stats.count == 0 {
                        self.pairs.remove(&key);
                    }
                }
            }
            for k in 0..new_symbols.len().saturating_sub(1) {
                if merged_new[k] || merged_new[k + 1] {
                    let key = pair_key(new_symbols[k], new_symbols[k + 1]);
                    let stats = self.pairs.entry(key).or_default();
                    stats.count += count;
                    if stats.words.last() != Some(&w) {
                        stats.words.push(w);
                    }
                    grown.push(key);
                }
            }
            self.symbols[start..start + new_symbols.len()].copy_from_slice(&new_symbols);
            self.words[w as usize].len = new_symbols.len() as u32;
        }
        grown.sort_unstable();
        grown.dedup();
        for key in grown {
            if !eligible(&self.tokens, self.max_len, key) {
                continue;
            }
            if let Some(count) = self.pairs.get(&key).map(|p| p.count) {
                self.heap.push(key, count, &self.tokens);
            }
        }
    }
}

/// Checks that the sum over words of count × (symbols − 1) fits in a u64.
/// That sum is the total of all pair counts, and a merge only ever lowers it
/// (a word loses at least one pair and gains none), so no pair count can
/// overflow during training once it holds at the start.
pub(super) fn check_pair_total(words: &[Word]) -> Result<()> {
    words
        .iter()
        .try_fold(0u64, |total, word| add_pairs(total, word.count, word.len))
        .map(|_| ())
        .ok_or_else(|| {
            Error::InvalidTraining(format!(
                "the pre-token counts are too large: counted over all pre-tokens, \
                 the adjacent pairs number more than {} (the largest count the trainer \
                 can hold); scale the counts down",
                u64::MAX
            ))
        })
}

/// `total` plus the pairs of a word of `len` symbols seen `count` times
/// (`count` × (`len` − 1)), if that fits in a u64.
pub(super) fn add_pairs(total: u64, count: u64, len: u32) -> Option<u64> {
    count
        .checked_mul(u64::from(len.saturating_sub(1)))
        .and_then(|pairs| total.checked_add(pairs))
}

/// Whether merging `pair` keeps within `max_len` bytes (`max_token_length`).
fn eligible(tokens: &[Rc<[u8]>], max_len: usize, pair: u64) -> bool {
    let (l, r) = unpack(pair);
    tokens[l as usize].len() + tokens[r as usize].len() <= max_len
}

/// How many words ahead of the one being merged to prefetch.
const PREFETCH_AHEAD: usize = 8;

#[inline(always)]
fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults and reads nothing into Rust.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// Trains byte-level BPE on pre-token counts (each distinct pre-token once,
/// with its multiplicity). The result is independent of the order of `pretokens`.
pub fn train<B: AsRef<[u8]>>(
    pretokens: impl IntoIterator<Item = (B, u64)>,
    config: &TrainConfig,
    progress: &mut dyn Progress,
) -> Result<Trained> {
    let n_special = config.special_tokens.len();
    if config.vocab_size < 256 + n_special {
        return Err(Error::InvalidTraining(format!(
            "vocab_size {} is below 256 bytes + {} special tokens = {}",
            config.vocab_size,
            n_special,
            256 + n_special
        )));
    }
    let bytes = (0..=255u8).map(|b| vec![b]).collect();
    let words = pretokens
        .into_iter()
        .map(|(word, count)| (word.as_ref().iter().map(|&b| u32::from(b)).collect(), count));
    train_symbols(words, bytes, config, progress)
}

/// Trains BPE over any base alphabet (byte-level: the 256 bytes; classic
/// BPE: characters and word-final characters): `base[i]` are the bytes of
/// symbol `i` (id `specials + i`), each word a sequence of symbol indices.
/// Ties compare the symbols' bytes, so they follow the alphabet's text order.
pub fn train_symbols(
    words_in: impl IntoIterator<Item = (Vec<u32>, u64)>,
    base: Vec<Vec<u8>>,
    config: &TrainConfig,
    progress: &mut dyn Progress,
) -> Result<Trained> {
    let n_special = config.special_tokens.len();
    if config.vocab_size < base.len() + n_special {
        return Err(Error::InvalidTraining(format!(
            "vocab_size {} is below the {} base symbols + {} special tokens",
            config.vocab_size,
            base.len(),
            n_special
        )));
    }
    if config.min_frequency == 0 {
        return Err(Error::InvalidTraining(
            "min_frequency must be at least 1".into(),
        ));
    }
    if config.max_token_length == Some(0) {
        return Err(Error::InvalidTraining(
            "max_token_length must be at least 1 byte".into(),
        ));
    }
    crate::text::special::SpecialTokens::new(
        config
            .special_tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect(),
    )?;

    let mut tokens: Vec<Rc<[u8]>> = config
        .special_tokens
        .iter()
        .map(|t| Rc::from(t.as_bytes()))
        .collect();
    tokens.extend(base.iter().map(|b| Rc::from(&b[..])));
    let n_base = base.len() as u32;

    let mut words = Vec::new();
    let mut symbols: Vec<u32> = Vec::new();
    for (word, count) in words_in {
        if let Some(&bad) = word.iter().find(|&&s| s >= n_base) {
            return Err(Error::InvalidTraining(format!(
                "symbol {bad} is not one of the {n_base} base symbols"
            )));
        }
        if count == 0 || word.len() < 2 {
            continue; // a single symbol has no pair; it can never change
        }
        let start = symbols.len();
        symbols.extend(word.iter().map(|&s| s + n_special as u32));
        let (Ok(start), Ok(len)) = (u32::try_from(start), u32::try_from(word.len())) else {
            return Err(Error::InvalidTraining(
                "the distinct pre-tokens hold more than 4 GiB of bytes; count a sample".into(),
            ));
        };
        words.push(Word { start, len, count });
    }
    let settings = Settings {
        n_special: n_special as u32,
        n_base,
        min_frequency: config.min_frequency,
        max_token_length: config.max_token_length.map(|m| m as u64),
        largest_ties: config.largest_ties,
    };
    let mut trainer = Trainer::new(tokens, words, symbols, settings)?;
    if let Some(to) = &config.checkpoint {
        // Counting is done: a run stopped from here on never counts again.
        trainer.write_checkpoint(to)?;
    }
    let stop = trainer.run(config, progress)?;
    Ok(trainer.into_trained(stop))
}

/// Goes on with the training a checkpoint holds, up to `vocab_size`, and
/// returns what the uninterrupted run would have returned, with the
/// checkpoint's meta. The settings that shape the merges (special tokens,
/// min_frequency, max_token_length, tie rule) are the checkpoint's; with
/// `checkpoint_meta`, new checkpoints overwrite `path` with that meta.
pub fn resume(
    path: &Path,
    vocab_size: usize,
    checkpoint_meta: Option<String>,
    progress: &mut dyn Progress,
) -> Result<(Trained, String)> {
    let state = checkpoint::read(path)?;
    if vocab_size < state.tokens.len() {
        return Err(Error::InvalidTraining(format!(
            "the checkpoint holds {} tokens already; vocab_size {vocab_size} is below that",
            state.tokens.len()
        )));
    }
    let corrupt = |problem: String| Error::CorruptCheckpoint {
        path: path.display().to_string(),
        offset: 0,
        problem,
    };
    let n_special = state.settings.n_special as usize;
    let special_tokens = state.tokens[..n_special]
        .iter()
        .map(|t| String::from_utf8(t.clone()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| corrupt("a special token is not UTF-8".into()))?;
    let config = TrainConfig {
        vocab_size,
        special_tokens,
        min_frequency: state.settings.min_frequency,
        max_merges: None,
        largest_ties: state.settings.largest_ties,
        max_token_length: state.settings.max_token_length.map(|m| m as usize),
        checkpoint: checkpoint_meta.map(|meta| Checkpointing {
            path: path.to_path_buf(),
            meta,
        }),
    };
    let tokens = state.tokens.into_iter().map(Rc::from).collect();
    let mut trainer = Trainer::new(tokens, state.words, state.symbols, state.settings)
        .map_err(|e| corrupt(e.to_string()))?;
    trainer.merges = state.merges;
    trainer.counts = state.counts;
    let stop = trainer.run(&config, progress)?;
    Ok((trainer.into_trained(stop), state.meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pretokens: &[(&str, u64)], vocab_size: usize) -> Trained {
        let config = TrainConfig::new(vocab_size, vec![], 1);
        let input = pretokens.iter().map(|(t, c)| (t.as_bytes().to_vec(), *c));
        train(input, &config, &mut |_: usize, _: usize| true).unwrap()
    }

    fn merged_bytes(t: &Trained) -> Vec<(String, u64)> {
        t.merges
            .iter()
            .zip(&t.counts)
            .map(|(&(l, r), &c)| {
                let joined = [&t.tokens[l as usize][..], &t.tokens[r as usize][..]].concat();
                (String::from_utf8(joined).unwrap(), c)
            })
            .collect()
    }

    #[test]
    fn low_lower_lowest_merge_as_the_worked_example_does() {
        let t = run(&[("low_", 5), ("lower_", 2), ("lowest_", 3)], 262);
        let expected = [
            ("lo", 10),
            ("low", 10),
            ("low_", 5),
            ("lowe", 5),
            ("lowes", 3),
            ("lowest", 3),
        ];
        let expected: Vec<(String, u64)> =
            expected.iter().map(|(s, c)| (s.to_string(), *c)).collect();
        assert_eq!(merged_bytes(&t), expected);
        assert_eq!(t.stop, StopReason::VocabSize);
    }

    #[test]
    fn overlapping_run_counts_every_pair_but_merges_left_to_right() {
        // "aaa" holds (a,a) twice; after the merge it is "aa a".
        let t = run(&[("aaa", 1)], 258);
        assert_eq!(merged_bytes(&t), vec![("aa".into(), 2), ("aaa".into(), 1)]);
    }

    #[test]
    fn input_order_does_not_matter() {
        let words = [("abab", 3), ("baba", 3), ("ab", 2), ("ba", 2), ("cab", 5)];
        let mut reversed = words;
        reversed.reverse();
        assert_eq!(run(&words, 270).merges, run(&reversed, 270).merges);
    }

    #[test]
    fn too_small_vocab_is_an_error() {
        let config = TrainConfig::new(256, vec!["<s>".into()], 1);
        let err = train(
            std::iter::empty::<(Vec<u8>, u64)>(),
            &config,
            &mut |_: usize, _: usize| true,
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("256 bytes + 1 special tokens = 257"),
            "{err}"
        );
    }

    #[test]
    fn other_alphabets_and_largest_ties() {
        // Base symbols: "a", "b", "b</w>" (a word-final b); words "ab" x2, "bab" x2.
        let base = vec![b"a".to_vec(), b"b".to_vec(), b"b</w>".to_vec()];
        let words = vec![(vec![0, 2], 2), (vec![1, 0, 2], 2)];
        let mut config = TrainConfig::new(10, vec![], 1);
        let smallest = train_symbols(words.clone(), base.clone(), &config, &mut |_, _| true);
        let smallest = smallest.unwrap();
        // (a, b</w>) 4 wins; then (b, ab</w>) 2.
        assert_eq!(smallest.tokens[3], b"ab</w>");
        assert_eq!(smallest.merges, vec![(0, 2), (1, 3)]);
        config.largest_ties = true;
        config.max_merges = Some(1);
        let words = vec![(vec![0, 1], 1), (vec![1, 0], 1)];
        let largest = train_symbols(words, base, &config, &mut |_, _| true).unwrap();
        // (a, b) and (b, a) tie at 1: the largest pair wins.
        assert_eq!(largest.merges, vec![(1, 0)]);
        assert_eq!(largest.tokens.len(), 4, "one merge only");
    }

    /// A few words of English with small counts.
    pub(super) fn corpus() -> Vec<(Vec<u8>, u64)> {
        let text = "the quick brown fox jumps over the lazy dog while the other dogs \
                    sleep; then the fox returns, quicker than before, to the den";
        let mut counts: FxHashMap<Vec<u8>, u64> = FxHashMap::default();
        for (i, word) in text.split(' ').enumerate() {
            *counts.entry(format!(" {word}").into_bytes()).or_default() += 1 + (i as u64 % 3);
        }
        counts.into_iter().collect()
    }

    #[test]
    fn max_token_length_bounds_every_merged_token() {
        let mut config = TrainConfig::new(400, vec![], 1);
        config.max_token_length = Some(3);
        let t = train(corpus(), &config, &mut |_: usize, _: usize| true).unwrap();
        assert!(t.tokens.iter().all(|token| token.len() <= 3));
        assert!(t.merges.len() > 10);
        // The same as training without the bound and dropping longer pairs' merges
        // is not true in general, but the first merges agree until one is too long.
        let free = train(
            corpus(),
            &TrainConfig::new(400, vec![], 1),
            &mut |_: usize, _: usize| true,
        );
        let free = free.unwrap();
        let first_long = free.tokens[256..].iter().position(|t| t.len() > 3).unwrap();
        assert_eq!(t.merges[..first_long], free.merges[..first_long]);
    }

    fn train_counts(pretokens: &[(&str, u64)]) -> Result<Trained> {
        let config = TrainConfig::new(300, vec![], 1);
        let input = pretokens.iter().map(|(t, c)| (t.as_bytes().to_vec(), *c));
        train(input, &config, &mut |_: usize, _: usize| true)
    }

    #[test]
    fn pair_counts_that_overflow_are_an_error() {
        let half = 1u64 << 63;
        for words in [
            vec![("ababab", half)],
            vec![("abab", half)],
            vec![("ab", u64::MAX), ("cd", 1)],
            vec![("ab", u64::MAX - 1), ("xy", 1), ("abc", 1)],
        ] {
            match train_counts(&words) {
                Err(Error::InvalidTraining(message)) => {
                    assert!(message.contains("too large"), "{message}")
                }
                other => panic!("{words:?}: expected InvalidTraining, got {other:?}"),
            }
        }
    }

    #[test]
    fn pair_counts_up_to_the_limit_train_exactly() {
        // Every pair count fits: the total is exactly u64::MAX.
        let t = train_counts(&[("ab", u64::MAX - 2), ("abc", 1)]).unwrap();
        assert_eq!(
            merged_bytes(&t)[..2],
            [("ab".to_string(), u64::MAX - 1), ("abc".to_string(), 1)]
        );
        let t = train_counts(&[("ababab", u64::MAX / 5)]).unwrap();
        assert_eq!(merged_bytes(&t)[0], ("ab".to_string(), 3 * (u64::MAX / 5)));
        // Single symbols hold no pair, however often they occur.
        let t = train_counts(&[("a", u64::MAX), ("ab", u64::MAX)]).unwrap();
        assert_eq!(merged_bytes(&t), [("ab".to_string(), u64::MAX)]);
    }
}

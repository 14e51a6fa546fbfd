//! The unigram language model (Kudo 2018, SentencePiece), ported bit for bit
//! from `bytepair.reference.unigram` (docs/unigram.md states the algorithm).
//!
//! [`train`] turns counted words into pieces and scores; [`UnigramModel`]
//! segments words with them: Viterbi, n-best, sampling, marginals. Words are
//! cut by the caller (metaspace or a pre-tokenizer); here a word is a `&str`
//! whose characters are the lattice positions.

mod decode;
pub(crate) mod lattice;
mod progress;
mod text;
mod train;

use std::cell::RefCell;
use std::ops::Range;

pub use decode::{UnigramDecoder, UNK_SURFACE};
pub use lattice::lse2;
pub use progress::{Progress, Stage};
pub use text::{UnigramTokenizer, Words};
pub use train::{digamma, train, Round, UnigramConfig, UnigramTrained};

use crate::error::{Error, Result};
use crate::util::double_array::DoubleArray;
use crate::util::rng::Rng;
use lattice::{Scratch, View, UNK};

/// What an id of a unigram vocabulary is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A piece of the lattice.
    Normal,
    /// `<unk>`: what an uncovered character encodes to without byte fallback.
    Unknown,
    /// A special token, never produced by segmentation.
    Control,
    /// `<0xXX>`: one byte of an uncovered character, with byte fallback.
    Byte,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Normal => "normal",
            Kind::Unknown => "unknown",
            Kind::Control => "control",
            Kind::Byte => "byte",
        }
    }
}

/// The name of a byte-fallback piece: `<0x0A>`.
pub fn byte_piece(value: u8) -> String {
    format!("<0x{value:02X}>")
}

/// One piece of a segmented word: its byte range in the word and its id, or
/// None for an unknown character.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub range: Range<usize>,
    pub piece: Option<u32>,
}

/// An unknown character scores this much below the worst piece.
const UNK_PENALTY: f64 = 10.0;

/// A unigram vocabulary ready to segment words.
#[derive(Clone, Debug)]
pub struct UnigramModel {
    trie: DoubleArray,
    /// By id; only normal pieces' scores are used.
    scores: Vec<f64>,
    unk_id: Option<u32>,
    unk_score: f64,
    /// The id of `<0xXX>` for each byte, with byte fallback.
    byte_ids: Option<Vec<u32>>,
    max_piece_length: usize,
}

/// A word's lattice with the byte offset of each character position.
#[derive(Default)]
struct Lattice {
    offsets: Vec<usize>,
    starts: Vec<u32>,
    lens: Vec<u32>,
    scores: Vec<f64>,
    pieces: Vec<u32>,
}

impl Lattice {
    fn view(&self) -> View<'_> {
        View {
            starts: &self.starts,
            lens: &self.lens,
            scores: &self.scores,
        }
    }
}

thread_local! {
    static BUFFERS: RefCell<(Lattice, Scratch, Vec<u32>)> = RefCell::default();
}

impl UnigramModel {
    /// `pieces`/`scores`/`kinds` by id. Only normal pieces take part in the
    /// lattice, matched up to `max_piece_length` characters; an unknown
    /// character scores min(normal scores) - 10 and encodes to `unk_id`, or
    /// with `byte_fallback` to the `<0xXX>` ids of its UTF-8 bytes.
    pub fn new(
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<Kind>,
        unk_id: Option<u32>,
        byte_fallback: bool,
        max_piece_length: usize,
    ) -> Result<Self> {
        let bad = |message: String| Err(Error::InvalidVocabulary(message));
        if pieces.len() != scores.len() || pieces.len() != kinds.len() {
            return bad(format!(
                "pieces, scores and kinds differ in length ({}, {}, {})",
                pieces.len(),
                scores.len(),
                kinds.len()
            ));
        }
        if u32::try_from(pieces.len()).map_or(true, |n| n == u32::MAX) {
            return bad(format!("{} pieces do not fit in u32 ids", pieces.len()));
        }
        if max_piece_length == 0 {
            return bad("max_piece_length must be at least 1".into());
        }
        let mut normal: Vec<(&[u8], u32)> = Vec::new();
        let mut byte_ids = vec![UNK; 256];
        for (id, ((piece, &score), &kind)) in pieces.iter().zip(&scores).zip(&kinds).enumerate() {
            if piece.is_empty() {
                return bad(format!("piece {id} is empty"));
            }
            match kind {
                Kind::Normal if !score.is_finite() => {
                    return bad(format!("piece {id} {piece:?} has the score {score}"));
                }
                Kind::Normal => normal.push((piece.as_bytes(), id as u32)),
                Kind::Byte => match parse_byte_piece(piece) {
                    Some(b) => byte_ids[b as usize] = id as u32,
                    None => return bad(format!("byte piece {id} {piece:?} is not <0xXX>")),
                },
                Kind::Unknown | Kind::Control => {}
            }
        }
        if normal.is_empty() {
            return bad("the vocabulary has no normal piece".into());
        }
        normal.sort_unstable();
        if let Some(pair) = normal.windows(2).find(|pair| pair[0].0 == pair[1].0) {
            return bad(format!(
                "pieces {} and {} are the same normal piece {:?}",
                pair[0].1,
                pair[1].1,
                String::from_utf8_lossy(pair[0].0)
            ));
        }
        let byte_ids = if byte_fallback {
            if let Some(b) = byte_ids.iter().position(|&id| id == UNK) {
                return bad(format!(
                    "byte fallback needs all 256 byte pieces; {} is missing",
                    byte_piece(b as u8)
                ));
            }
            Some(byte_ids)
        } else {
            None
        };
        match unk_id {
            Some(id) if id as usize >= pieces.len() => {
                return bad(format!("unk id {id} is not in the vocabulary"));
            }
            None if !byte_fallback => {
                return bad("without byte fallback the vocabulary needs an unk id".into());
            }
            _ => {}
        }
        let unk_score = normal
            .iter()
            .map(|&(_, id)| scores[id as usize])
            .fold(f64::INFINITY, |min, s| if s < min { s } else { min })
            - UNK_PENALTY;
        Ok(UnigramModel {
            trie: DoubleArray::build(normal),
            scores,
            unk_id,
            unk_score,
            byte_ids,
            max_piece_length,
        })
    }

    /// Appends the ids of the Viterbi segmentation of `word`.
    pub fn encode_word(&self, word: &str, out: &mut Vec<u32>) {
        BUFFERS.with(|buffers| {
            let (lattice, scratch, path) = &mut *buffers.borrow_mut();
            self.fill(word, lattice);
            lattice::viterbi(lattice.view(), scratch, path);
            self.push_ids(word, lattice, path, out);
        });
    }

    /// The Viterbi segmentation of `word`.
    pub fn viterbi(&self, word: &str) -> Vec<Segment> {
        let mut lattice = Lattice::default();
        self.fill(word, &mut lattice);
        let mut path = Vec::new();
        lattice::viterbi(lattice.view(), &mut Scratch::default(), &mut path);
        segments(&lattice, &path)
    }

    /// The `k` best segmentations as ids, with their total scores (added left
    /// to right); equal totals in Viterbi's tie order (longest last piece first).
    pub fn nbest_word(&self, word: &str, k: usize) -> Vec<(Vec<u32>, f64)> {
        let mut lattice = Lattice::default();
        self.fill(word, &mut lattice);
        lattice::nbest(lattice.view(), k)
            .into_iter()
            .map(|(path, total)| {
                let mut ids = Vec::new();
                self.push_ids(word, &lattice, &path, &mut ids);
                (ids, total)
            })
            .collect()
    }

    /// [`nbest_word`](Self::nbest_word) as segments.
    pub fn nbest(&self, word: &str, k: usize) -> Vec<(Vec<Segment>, f64)> {
        let mut lattice = Lattice::default();
        self.fill(word, &mut lattice);
        lattice::nbest(lattice.view(), k)
            .into_iter()
            .map(|(path, total)| (segments(&lattice, &path), total))
            .collect()
    }

    /// Ids of a segmentation drawn with P proportional to exp(alpha x total score).
    pub fn sample_word(&self, word: &str, alpha: f64, rng: &mut Rng) -> Vec<u32> {
        let mut ids = Vec::new();
        BUFFERS.with(|buffers| {
            let (lattice, scratch, path) = &mut *buffers.borrow_mut();
            self.fill(word, lattice);
            lattice::sample(lattice.view(), alpha, rng, scratch, path);
            self.push_ids(word, lattice, path, &mut ids);
        });
        ids
    }

    /// [`sample_word`](Self::sample_word) as segments.
    pub fn sample(&self, word: &str, alpha: f64, rng: &mut Rng) -> Vec<Segment> {
        let mut lattice = Lattice::default();
        self.fill(word, &mut lattice);
        let mut path = Vec::new();
        lattice::sample(
            lattice.view(),
            alpha,
            rng,
            &mut Scratch::default(),
            &mut path,
        );
        segments(&lattice, &path)
    }

    /// Every node of the lattice of `word` (begin ascending, then length)
    /// with its marginal probability, and log Z.
    pub fn marginals(&self, word: &str) -> (Vec<(Segment, f64)>, f64) {
        let mut lattice = Lattice::default();
        self.fill(word, &mut lattice);
        let mut out = vec![0.0; lattice.lens.len()];
        let log_z = lattice::marginals(lattice.view(), &mut Scratch::default(), &mut out);
        let nodes = (0..lattice.lens.len() as u32).collect::<Vec<_>>();
        (
            segments(&lattice, &nodes).into_iter().zip(out).collect(),
            log_z,
        )
    }

    /// Builds the lattice of `word`: the normal pieces matching at each
    /// character, shortest first, and an unk node first where no piece is
    /// one character long.
    fn fill(&self, word: &str, lattice: &mut Lattice) {
        lattice.offsets.clear();
        lattice
            .offsets
            .extend(word.char_indices().map(|(at, _)| at));
        lattice.offsets.push(word.len());
        lattice.starts.clear();
        lattice.lens.clear();
        lattice.scores.clear();
        lattice.pieces.clear();
        let bytes = word.as_bytes();
        for &begin in &lattice.offsets[..lattice.offsets.len() - 1] {
            lattice.starts.push(lattice.lens.len() as u32);
            let first = lattice.lens.len();
            let (mut state, mut chars) = (0u32, 0u32);
            for &byte in &bytes[begin..] {
                if byte & 0xC0 != 0x80 {
                    chars += 1;
                    if chars as usize > self.max_piece_length {
                        break;
                    }
                }
                let Some(next) = self.trie.step(state, byte) else {
                    break;
                };
                state = next;
                let id = self.trie.value(state);
                // Keys are whole UTF-8 strings, so a match ends on a character boundary.
                if id != UNK {
                    lattice.lens.push(chars);
                    lattice.scores.push(self.scores[id as usize]);
                    lattice.pieces.push(id);
                }
            }
            if lattice.lens.len() == first || lattice.lens[first] != 1 {
                lattice.lens.insert(first, 1);
                lattice.scores.insert(first, self.unk_score);
                lattice.pieces.insert(first, UNK);
            }
        }
        lattice.starts.push(lattice.lens.len() as u32);
    }

    /// Ids of a path; a run of unknown characters is one `<unk>` (as in
    /// SentencePiece and tokenizers), or their UTF-8 bytes with byte fallback.
    fn push_ids(&self, word: &str, lattice: &Lattice, path: &[u32], out: &mut Vec<u32>) {
        let mut pos = 0;
        let mut after_unk = false;
        for &node in path {
            let (node, len) = (node as usize, lattice.lens[node as usize] as usize);
            let piece = lattice.pieces[node];
            let unk = piece == UNK;
            if !unk {
                out.push(piece);
            } else if let Some(byte_ids) = &self.byte_ids {
                let bytes = &word.as_bytes()[lattice.offsets[pos]..lattice.offsets[pos + len]];
                out.extend(bytes.iter().map(|&b| byte_ids[b as usize]));
            } else if let (Some(unk_id), false) = (self.unk_id, after_unk) {
                out.push(unk_id);
            }
            after_unk = unk;
            pos += len;
        }
    }
}

fn segments(lattice: &Lattice, nodes: &[u32]) -> Vec<Segment> {
    // A node's begin is the position whose range holds it.
    nodes
        .iter()
        .map(|&node| {
            let begin = lattice.starts.partition_point(|&s| s <= node) - 1;
            let len = lattice.lens[node as usize] as usize;
            let piece = lattice.pieces[node as usize];
            Segment {
                range: lattice.offsets[begin]..lattice.offsets[begin + len],
                piece: (piece != UNK).then_some(piece),
            }
        })
        .collect()
}

fn parse_byte_piece(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2
        || !hex
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
    {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model of `<unk>` and `table`'s normal pieces (also for `text`'s tests).
    pub(super) fn model(table: &[(&str, f64)]) -> UnigramModel {
        let mut pieces = vec!["<unk>".to_string()];
        let mut scores = vec![0.0];
        let mut kinds = vec![Kind::Unknown];
        for &(p, s) in table {
            pieces.push(p.into());
            scores.push(s);
            kinds.push(Kind::Normal);
        }
        UnigramModel::new(pieces, scores, kinds, Some(0), false, 16).unwrap()
    }

    fn texts(word: &str, segments: &[Segment]) -> Vec<String> {
        segments
            .iter()
            .map(|s| word[s.range.clone()].to_string())
            .collect()
    }

    #[test]
    fn unhappy_is_un_happy() {
        let m = model(&[
            ("u", -5.0),
            ("n", -5.0),
            ("h", -5.0),
            ("a", -5.0),
            ("p", -5.0),
            ("y", -5.0),
            ("un", -3.0),
            ("happy", -4.0),
            ("hap", -3.5),
            ("py", -3.5),
            ("unh", -3.0),
        ]);
        let segments = m.viterbi("unhappy");
        assert_eq!(texts("unhappy", &segments), ["un", "happy"]);
        let mut ids = Vec::new();
        m.encode_word("unhappy", &mut ids);
        assert_eq!(ids, [7, 8]);
    }

    #[test]
    fn unknown_characters_become_unk_or_bytes() {
        let mut pieces = vec!["<unk>".to_string(), "<s>".into()];
        let mut kinds = vec![Kind::Unknown, Kind::Control];
        pieces.extend((0..=255u8).map(byte_piece));
        kinds.extend([Kind::Byte; 256]);
        pieces.extend(["a".to_string(), "b".into(), "ab".into()]);
        kinds.extend([Kind::Normal; 3]);
        let mut scores = vec![0.0; pieces.len()];
        let n = scores.len();
        scores[n - 3..].copy_from_slice(&[-2.0, -2.0, -1.0]);
        let plain = UnigramModel::new(
            pieces.clone(),
            scores.clone(),
            kinds.clone(),
            Some(0),
            false,
            16,
        )
        .unwrap();
        let bytes = UnigramModel::new(pieces, scores, kinds, None, true, 16).unwrap();
        let (a, b, ab) = (n as u32 - 3, n as u32 - 2, n as u32 - 1);
        let mut ids = Vec::new();
        plain.encode_word("ab€a", &mut ids);
        assert_eq!(ids, [ab, 0, a]);
        ids.clear();
        bytes.encode_word("ab€a", &mut ids);
        // '€' is E2 82 AC; byte b is id 2 + b.
        assert_eq!(ids, [ab, 2 + 0xE2, 2 + 0x82, 2 + 0xAC, a]);
        ids.clear();
        bytes.encode_word("", &mut ids);
        assert!(ids.is_empty());
        let segments = plain.viterbi("b€");
        assert_eq!(
            segments,
            [
                Segment {
                    range: 0..1,
                    piece: Some(b)
                },
                Segment {
                    range: 1..4,
                    piece: None
                }
            ]
        );
    }

    #[test]
    fn invalid_vocabularies_are_errors() {
        let normal = |n: usize| vec![Kind::Normal; n];
        let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cases = [
            UnigramModel::new(
                strings(&["a"]),
                vec![0.0, 1.0],
                normal(1),
                Some(0),
                false,
                4,
            ),
            UnigramModel::new(
                strings(&["a", "a"]),
                vec![0.0; 2],
                normal(2),
                Some(0),
                false,
                4,
            ),
            UnigramModel::new(
                strings(&["a", ""]),
                vec![0.0; 2],
                normal(2),
                Some(0),
                false,
                4,
            ),
            UnigramModel::new(
                strings(&["a"]),
                vec![f64::NAN],
                normal(1),
                Some(0),
                false,
                4,
            ),
            UnigramModel::new(strings(&["a"]), vec![0.0], normal(1), Some(1), false, 4),
            UnigramModel::new(strings(&["a"]), vec![0.0], normal(1), None, false, 4),
            UnigramModel::new(strings(&["a"]), vec![0.0], normal(1), None, true, 4),
            UnigramModel::new(strings(&["a"]), vec![0.0], normal(1), Some(0), false, 0),
            UnigramModel::new(
                strings(&["<unk>"]),
                vec![0.0],
                vec![Kind::Unknown],
                Some(0),
                false,
                4,
            ),
            UnigramModel::new(
                strings(&["<0x0g>"]),
                vec![0.0],
                vec![Kind::Byte],
                Some(0),
                false,
                4,
            ),
        ];
        for (i, case) in cases.into_iter().enumerate() {
            assert!(matches!(case, Err(Error::InvalidVocabulary(_))), "case {i}");
        }
    }

    /// Every segmentation of `word` with its total (added left to right),
    /// by brute force over the model's own lattice rule.
    fn all_segmentations(m: &UnigramModel, word: &str) -> Vec<(Vec<Segment>, f64)> {
        let offsets: Vec<usize> = word
            .char_indices()
            .map(|(i, _)| i)
            .chain([word.len()])
            .collect();
        let id_of = |s: &str| -> Option<u32> {
            let mut lattice = Lattice::default();
            m.fill(s, &mut lattice);
            // s is a piece when the node spanning all of it is a piece.
            lattice.lens[..(lattice.starts[1] as usize)]
                .iter()
                .zip(&lattice.pieces)
                .find(|(&l, &p)| l as usize == s.chars().count() && p != UNK)
                .map(|(_, &p)| p)
        };
        fn walk(
            pos: usize,
            offsets: &[usize],
            word: &str,
            m: &UnigramModel,
            id_of: &dyn Fn(&str) -> Option<u32>,
            path: &mut Vec<Segment>,
            out: &mut Vec<(Vec<Segment>, f64)>,
        ) {
            let n = offsets.len() - 1;
            if pos == n {
                let mut total = 0.0;
                for s in path.iter() {
                    total += s.piece.map_or(m.unk_score, |p| m.scores[p as usize]);
                }
                out.push((path.clone(), total));
                return;
            }
            for len in 1..=(n - pos).min(m.max_piece_length) {
                let range = offsets[pos]..offsets[pos + len];
                let piece = id_of(&word[range.clone()]);
                if piece.is_none() && len > 1 {
                    continue;
                }
                path.push(Segment { range, piece });
                walk(pos + len, offsets, word, m, id_of, path, out);
                path.pop();
            }
        }
        let mut out = Vec::new();
        walk(0, &offsets, word, m, &id_of, &mut Vec::new(), &mut out);
        out
    }

    /// Small tables over a, b, c: scores in halves (sums exact, many ties)
    /// or in tenths (sums rounded: totals tie or not by rounding).
    fn random_model(rng: &mut Rng) -> UnigramModel {
        let step = if rng.next_u64().is_multiple_of(2) {
            0.5
        } else {
            0.1
        };
        let mut table: Vec<(String, f64)> = Vec::new();
        for len in 1..=3 {
            for code in 0..3usize.pow(len) {
                let piece: String = (0..len)
                    .map(|i| ['a', 'b', 'c'][code / 3usize.pow(i) % 3])
                    .collect();
                // 'c' alone is sometimes missing: an unk node.
                if rng.next_u64().is_multiple_of(3)
                    || piece == "c" && rng.next_u64().is_multiple_of(2)
                {
                    continue;
                }
                table.push((piece, -((1 + rng.next_u64() % 7) as f64) * step));
            }
        }
        if table.is_empty() {
            table.push(("a".into(), -1.0));
        }
        let refs: Vec<(&str, f64)> = table.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        model(&refs)
    }

    fn random_word(rng: &mut Rng, max: u64) -> String {
        (0..1 + rng.next_u64() % max)
            .map(|_| ['a', 'b', 'c'][(rng.next_u64() % 3) as usize])
            .collect()
    }

    #[test]
    fn nbest_is_the_sorted_list_of_all_segmentations() {
        let mut rng = Rng::new(3);
        for _ in 0..600 {
            let m = random_model(&mut rng);
            let step = if m.scores[1..].iter().all(|s| (s * 2.0).fract() == 0.0) {
                0.5
            } else {
                0.1
            };
            let word = random_word(&mut rng, 8);
            let mut all = all_segmentations(&m, &word);
            // (total desc, then longest last piece, then the one before, ...)
            let key = |s: &[Segment]| {
                s.iter()
                    .rev()
                    .map(|x| std::cmp::Reverse(x.range.len()))
                    .collect::<Vec<_>>()
            };
            all.sort_by(|a, b| {
                b.1.partial_cmp(&a.1)
                    .unwrap()
                    .then_with(|| key(&a.0).cmp(&key(&b.0)))
            });
            for k in [0, 1, 3, all.len(), all.len() + 5] {
                let got = m.nbest(&word, k);
                let want: Vec<_> = all.iter().take(k).cloned().collect();
                assert_eq!(got, want, "{word} k={k}");
            }
            if step == 0.5 {
                // Exact sums: the best is the Viterbi path.
                assert_eq!(m.nbest(&word, 1)[0].0, m.viterbi(&word));
            }
        }
    }

    #[test]
    fn marginals_sum_to_one_at_every_position() {
        let mut rng = Rng::new(5);
        for _ in 0..100 {
            let m = random_model(&mut rng);
            let word = random_word(&mut rng, 12);
            let (nodes, log_z) = m.marginals(&word);
            for at in 0..word.len() {
                let covering: f64 = nodes
                    .iter()
                    .filter(|(s, _)| s.range.contains(&at))
                    .map(|(_, p)| p)
                    .sum();
                assert!((covering - 1.0).abs() < 1e-9, "{word} at {at}: {covering}");
            }
            // Z is the sum over all segmentations.
            let z: f64 = all_segmentations(&m, &word)
                .iter()
                .map(|(_, t)| t.exp())
                .sum();
            assert!((z.ln() - log_z).abs() < 1e-9);
        }
    }

    #[test]
    fn sampling_follows_the_exact_probabilities() {
        let mut rng = Rng::new(9);
        let m = model(&[
            ("a", -1.0),
            ("b", -1.5),
            ("ab", -1.2),
            ("ba", -2.0),
            ("aba", -2.2),
            ("bab", -3.0),
        ]);
        let word = "ababa";
        let all = all_segmentations(&m, word);
        for alpha in [1.0, 0.3, 0.0] {
            let weights: Vec<f64> = all.iter().map(|(_, t)| (alpha * t).exp()).collect();
            let norm: f64 = weights.iter().sum();
            let draws = 20_000;
            let mut seen = vec![0usize; all.len()];
            for _ in 0..draws {
                let s = m.sample(word, alpha, &mut rng);
                let i = all
                    .iter()
                    .position(|(seg, _)| *seg == s)
                    .expect("a real segmentation");
                seen[i] += 1;
            }
            for (i, w) in weights.iter().enumerate() {
                let p = w / norm;
                let sd = (p * (1.0 - p) / draws as f64).sqrt();
                let got = seen[i] as f64 / draws as f64;
                assert!(
                    (got - p).abs() < 5.0 * sd + 1e-3,
                    "alpha {alpha} path {i}: {got} vs {p}"
                );
            }
        }
        // The same seed gives the same draws; ids agree with segments.
        let (mut r1, mut r2) = (Rng::new(1), Rng::new(1));
        for _ in 0..50 {
            let ids = m.sample_word(word, 0.5, &mut r1);
            let segments = m.sample(word, 0.5, &mut r2);
            assert_eq!(
                ids,
                segments
                    .iter()
                    .map(|s| s.piece.unwrap())
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn trie_finds_exactly_the_pieces() {
        let mut rng = Rng::new(13);
        for _ in 0..50 {
            let alphabet = ['a', 'é', '€', '😀', 'z'];
            let mut table: Vec<String> = (0..1 + rng.next_u64() % 60)
                .map(|_| {
                    (0..1 + rng.next_u64() % 4)
                        .map(|_| alphabet[(rng.next_u64() % 5) as usize])
                        .collect()
                })
                .collect();
            table.sort();
            table.dedup();
            let refs: Vec<(&str, f64)> = table.iter().map(|p| (p.as_str(), -1.0)).collect();
            let m = model(&refs);
            let word: String = (0..1 + rng.next_u64() % 10)
                .map(|_| alphabet[(rng.next_u64() % 5) as usize])
                .collect();
            let (nodes, _) = m.marginals(&word);
            let got: Vec<(usize, usize, Option<u32>)> = nodes
                .iter()
                .map(|(s, _)| (s.range.start, s.range.end, s.piece))
                .collect();
            let mut want = Vec::new();
            let offsets: Vec<usize> = word
                .char_indices()
                .map(|(i, _)| i)
                .chain([word.len()])
                .collect();
            for b in 0..offsets.len() - 1 {
                let first = want.len();
                for e in b + 1..offsets.len() {
                    if let Some(i) = table
                        .iter()
                        .position(|p| *p == word[offsets[b]..offsets[e]])
                    {
                        want.push((offsets[b], offsets[e], Some(i as u32 + 1)));
                    }
                }
                if want.len() == first || want[first].1 != offsets[b + 1] {
                    want.insert(first, (offsets[b], offsets[b + 1], None));
                }
            }
            assert_eq!(got, want, "{word} in {table:?}");
        }
    }
}

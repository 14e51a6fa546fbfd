//! SentencePiece's `encode` for a loaded `.model` (sentencepiece 0.2.3,
//! exactly), and HuggingFace tokenizers' Unigram `encode` ([`HfUnigramEncoder`]) and
//! `decode` ([`HfDecoder`]).
//!
//! The pure-Python references are `bytepair.reference.sentencepiece`,
//! `bytepair.reference.normalize` and `bytepair.reference.hf_unigram`; their
//! docstrings list every rule this follows. For [`SentencePieceEncoder`]:
//!
//! 1. normalize ([`SpNormalizer`]; user-defined pieces are exempt);
//! 2. segment the whole normalized text: unigram f32 Viterbi
//!    (`unigram.rs`), or sentencepiece's BPE (`bpe.rs`);
//! 3. unknown segments become their byte pieces (byte fallback) or one
//!    `unk_id` per run.
//!
//! [`SentencePieceEncoder::sample`] draws from the same unigram lattice as
//! sentencepiece's `SampleEncode` with `nbest_size = -1` (forward filtering,
//! backward sampling): the same distribution, not sentencepiece's draws.

mod bpe;
pub(crate) mod decode;
mod hf;
mod hf_decode;
mod normalize;
mod unigram;

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::unigram::lattice::{self as unigram_lattice, View};
use crate::util::double_array::{DoubleArray, NONE};
use crate::util::rng::Rng;
pub use hf::{HfAddedToken, HfNormalizerStep, HfUnigramEncoder, Metaspace, PrependScheme};
pub use hf_decode::{HfDecoder, HfDecoderStep};
pub use normalize::{SpNormalizer, SPACE_SYMBOL};
use unigram::{Lattice, Scratch, Seg};

/// SentencePiece's piece types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl Kind {
    /// "normal", "unknown", "control", "user_defined", "unused" or "byte".
    pub fn parse(name: &str) -> Result<Kind> {
        Ok(match name {
            "normal" => Kind::Normal,
            "unknown" => Kind::Unknown,
            "control" => Kind::Control,
            "user_defined" => Kind::UserDefined,
            "unused" => Kind::Unused,
            "byte" => Kind::Byte,
            other => {
                return Err(Error::InvalidVocabulary(format!(
                    "unknown piece kind {other:?} (expected normal, unknown, control, \
                     user_defined, unused or byte)"
                )))
            }
        })
    }

    /// Kinds that segmentation can produce (sentencepiece's `pieces_`).
    fn segments(self) -> bool {
        matches!(self, Kind::Normal | Kind::UserDefined | Kind::Unused)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpAlgorithm {
    Unigram,
    Bpe,
}

/// UNK_PENALTY: the unknown node scores `min_score - 10`.
const UNK_PENALTY: f64 = 10.0;

/// The tables derived from a model.
pub(crate) struct Tables {
    kinds: Vec<Kind>,
    /// BPE merge priorities as ordered integers.
    score_keys: Vec<u64>,
    /// Normal, user-defined and unused pieces (value: the first id).
    segment_trie: DoubleArray,
    /// Unknown, control and byte pieces (first id).
    reserved: Option<DoubleArray>,
    user_trie: Option<DoubleArray>,
    unk_id: u32,
    /// The unigram candidates: the segment pieces except unused ones.
    candidate_trie: DoubleArray,
    candidate_scores: Vec<f32>,
    max_len: usize,
    unk_score: f32,
    byte_ids: Option<Box<[u32; 256]>>,
    /// For BPE: where the text splits into runs that merge on their own.
    crossings: Option<bpe::Crossings>,
}

impl Tables {
    /// sentencepiece's PieceToId: reserved pieces first, then the others, else unk_id.
    fn piece_to_id(&self, text: &[u8]) -> u32 {
        if let Some(id) = self.reserved.as_ref().and_then(|r| r.get(text)) {
            return id;
        }
        self.segment_trie.get(text).unwrap_or(self.unk_id)
    }
}

/// SentencePiece's `encode` (no BOS/EOS) for one model.
pub struct SentencePieceEncoder {
    tables: Tables,
    algorithm: SpAlgorithm,
    byte_fallback: bool,
    normalizer: SpNormalizer,
    decoder: decode::SpDecoder,
}

impl SentencePieceEncoder {
    /// `scores`: as stored in the file (float32 values, widened). `kinds`:
    /// per id, see [`Kind::parse`]. The model needs an unknown piece (the
    /// first one is `unk_id`), and with `byte_fallback` every byte must have
    /// a piece `<0xXX>` (or fall back to `unk_id`, as sentencepiece's
    /// PieceToId does).
    pub fn new(
        pieces: Vec<String>,
        scores: Vec<f64>,
        kinds: Vec<Kind>,
        algorithm: SpAlgorithm,
        byte_fallback: bool,
        normalizer: SpNormalizer,
    ) -> Result<Self> {
        if pieces.len() != scores.len() || pieces.len() != kinds.len() {
            return Err(Error::InvalidVocabulary(format!(
                "{} pieces, {} scores and {} kinds",
                pieces.len(),
                scores.len(),
                kinds.len()
            )));
        }
        if pieces.len() >= NONE as usize {
            return Err(Error::InvalidVocabulary("too many pieces".into()));
        }
        if let Some((id, _)) = scores.iter().enumerate().find(|(_, s)| s.is_nan()) {
            return Err(Error::InvalidVocabulary(format!(
                "the score of id {id} is NaN"
            )));
        }
        if let Some(id) = pieces.iter().position(|p| p.is_empty()) {
            return Err(Error::InvalidVocabulary(format!("piece {id} is empty")));
        }
        let unk_id = kinds
            .iter()
            .position(|&k| k == Kind::Unknown)
            .ok_or_else(|| {
                Error::InvalidVocabulary(
                    "no piece has kind unknown (sentencepiece needs one)".into(),
                )
            })? as u32;

        let decoder = decode::SpDecoder::new(
            &pieces,
            &kinds,
            normalizer.add_dummy_prefix,
            normalizer.remove_extra_whitespaces,
        )?;
        let mut segment_keys = Vec::new();
        let mut reserved_keys = Vec::new();
        let mut user_keys = Vec::new();
        let mut min_score = f32::MAX as f64;
        for (id, (piece, &kind)) in pieces.iter().zip(&kinds).enumerate() {
            if kind.segments() {
                segment_keys.push((piece.as_bytes(), id as u32));
            } else {
                reserved_keys.push((piece.as_bytes(), id as u32));
            }
            if kind == Kind::UserDefined {
                user_keys.push((piece.as_bytes(), id as u32));
            }
            if kind == Kind::Normal {
                min_score = min_score.min(scores[id]);
            }
        }
        let max_len = segment_keys.iter().map(|k| k.0.len()).max().unwrap_or(0);
        let segment_trie = DoubleArray::build(segment_keys.clone());
        // First id of each segment piece; unused ones are no unigram candidate.
        let candidate_keys = segment_keys
            .iter()
            .filter(|(key, id)| {
                segment_trie.get(key) == Some(*id) && kinds[*id as usize] != Kind::Unused
            })
            .copied()
            .collect();
        let candidate_trie = DoubleArray::build(candidate_keys);
        let candidate_scores = pieces
            .iter()
            .zip(&kinds)
            .zip(&scores)
            .map(|((piece, &kind), &score)| {
                if kind == Kind::UserDefined {
                    (piece.len() as f64 * 0.1 - 0.1) as f32
                } else {
                    score as f32
                }
            })
            .collect();
        let crossings = match algorithm {
            SpAlgorithm::Bpe => bpe::Crossings::new(&pieces, &kinds),
            SpAlgorithm::Unigram => None,
        };
        let user_trie = (!user_keys.is_empty()).then(|| DoubleArray::build(user_keys));
        let reserved = (!reserved_keys.is_empty()).then(|| DoubleArray::build(reserved_keys));
        let mut tables = Tables {
            kinds,
            score_keys: scores.iter().map(|&s| bpe::score_key(s)).collect(),
            segment_trie,
            reserved,
            user_trie,
            unk_id,
            candidate_trie,
            candidate_scores,
            max_len,
            unk_score: (min_score - UNK_PENALTY) as f32,
            byte_ids: None,
            crossings,
        };
        if byte_fallback {
            let mut ids = Box::new([0u32; 256]);
            for (byte, slot) in ids.iter_mut().enumerate() {
                *slot = tables.piece_to_id(format!("<0x{byte:02X}>").as_bytes());
            }
            tables.byte_ids = Some(ids);
        }
        Ok(SentencePieceEncoder {
            tables,
            algorithm,
            byte_fallback,
            normalizer,
            decoder,
        })
    }

    /// `SentencePieceProcessor.decode(ids)` as UTF-8, or (`raw_bytes`) with
    /// byte pieces as their bytes, valid UTF-8 or not; see `decode.rs`.
    pub fn decode(&self, ids: &[u32], unk_surface: &str, raw_bytes: bool) -> Result<Vec<u8>> {
        self.decoder.decode(ids, unk_surface, raw_bytes)
    }

    pub fn normalizer(&self) -> &SpNormalizer {
        &self.normalizer
    }

    /// `text` normalized as the model does it (user-defined pieces exempt).
    pub fn normalize(&self, text: &str) -> String {
        self.normalizer
            .normalize_with(text, self.tables.user_trie.as_ref())
    }

    /// The ids of `SentencePieceProcessor.encode(text)` (no BOS/EOS).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let normalized = self.normalize(text);
        let mut segments = Vec::new();
        match self.algorithm {
            SpAlgorithm::Unigram => {
                let lattice = Lattice {
                    trie: &self.tables.candidate_trie,
                    scores: &self.tables.candidate_scores,
                    max_len: self.tables.max_len,
                    unk_score: self.tables.unk_score,
                };
                lattice.best_path(&normalized, &mut Scratch::default(), &mut segments);
            }
            SpAlgorithm::Bpe => bpe::segments(&self.tables, &normalized, &mut segments),
        }
        self.segments_to_ids(normalized.as_bytes(), &segments)
    }

    pub fn encode_batch(&self, texts: &[&str]) -> Vec<Vec<u32>> {
        texts.par_iter().map(|text| self.encode(text)).collect()
    }

    /// A segmentation of a unigram model drawn with probability proportional
    /// to exp(alpha x its total score), over the candidates [`Self::encode`]'s
    /// best path weighs (pieces and the unknown character, scored as there),
    /// as sentencepiece's `SampleEncode(text, -1, alpha)` draws them.
    pub fn sample(&self, text: &str, alpha: f64, rng: &mut Rng) -> Result<Vec<u32>> {
        if self.algorithm != SpAlgorithm::Unigram {
            return Err(Error::InvalidVocabulary(
                "sampling needs a unigram model; this is SentencePiece's BPE".into(),
            ));
        }
        let normalized = self.normalize(text);
        let bytes = normalized.as_bytes();
        let tables = &self.tables;
        let mut offsets: Vec<usize> = normalized.char_indices().map(|(at, _)| at).collect();
        offsets.push(bytes.len());
        let (mut starts, mut lens, mut scores, mut pieces) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for &begin in &offsets[..offsets.len() - 1] {
            starts.push(lens.len() as u32);
            let first = lens.len();
            let (mut state, mut chars) = (0u32, 0u32);
            for &byte in &bytes[begin..] {
                if byte & 0xC0 != 0x80 {
                    chars += 1;
                }
                let Some(next) = tables.candidate_trie.step(state, byte) else {
                    break;
                };
                state = next;
                let piece = tables.candidate_trie.value(state);
                if piece != NONE {
                    lens.push(chars);
                    scores.push(tables.candidate_scores[piece as usize] as f64);
                    pieces.push(piece);
                }
            }
            // As in the best path: an unknown node where no piece is the one character.
            if lens.len() == first || lens[first] != 1 {
                lens.insert(first, 1);
                scores.insert(first, tables.unk_score as f64);
                pieces.insert(first, NONE);
            }
        }
        starts.push(lens.len() as u32);
        let view = View {
            starts: &starts,
            lens: &lens,
            scores: &scores,
        };
        let mut path = Vec::new();
        unigram_lattice::sample(view, alpha, rng, &mut Default::default(), &mut path);
        let mut segments = Vec::with_capacity(path.len());
        let mut position = 0usize;
        for node in path {
            let end = position + lens[node as usize] as usize;
            segments.push(Seg {
                start: offsets[position] as u32,
                end: offsets[end] as u32,
                id: pieces[node as usize],
            });
            position = end;
        }
        Ok(self.segments_to_ids(bytes, &segments))
    }

    /// [`Self::sample`] of many texts in parallel; text `i` draws from its own stream of `seed`.
    pub fn sample_batch(&self, texts: &[&str], alpha: f64, seed: u64) -> Result<Vec<Vec<u32>>> {
        texts
            .par_iter()
            .enumerate()
            .map(|(i, t)| self.sample(t, alpha, &mut Rng::for_item(seed, i as u64)))
            .collect()
    }

    /// sentencepiece's PopulateSentencePieceText: byte fallback, or one
    /// `unk_id` per run of unknowns.
    fn segments_to_ids(&self, text: &[u8], segments: &[Seg]) -> Vec<u32> {
        let tables = &self.tables;
        let mut ids = Vec::with_capacity(segments.len());
        let mut previous_unknown = false;
        for seg in segments {
            let unknown = seg.id == NONE || tables.kinds[seg.id as usize] == Kind::Unknown;
            if unknown {
                if let (true, Some(byte_ids)) = (self.byte_fallback, &tables.byte_ids) {
                    ids.extend(
                        text[seg.start as usize..seg.end as usize]
                            .iter()
                            .map(|&b| byte_ids[b as usize]),
                    );
                } else if !previous_unknown {
                    ids.push(tables.unk_id);
                }
            } else {
                ids.push(seg.id);
            }
            previous_unknown = unknown;
        }
        ids
    }
}

#[cfg(test)]
mod tests;

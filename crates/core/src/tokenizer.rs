//! A BPE tokenizer: encoder (vocabulary + lookup indexes) + pre-tokenizer,
//! with tiktoken's encode contract for special tokens.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::bpe::dropout::encode_piece_with_dropout;
use crate::bpe::piece_cache::{CacheKey, PieceCache};
use crate::bpe::Encoder;
use crate::error::Result;
use crate::text::normalize::Normalizer;
use crate::text::pretokenize::Pretokenizer;
use crate::text::special::{Segment, Selection};
use crate::util::rng::Rng;
use crate::vocab::Vocab;

#[derive(Debug)]
pub struct Tokenizer {
    encoder: Encoder,
    pretokenizer: Pretokenizer,
    /// Applied to the text between special tokens, before pre-tokenizing.
    normalizer: Normalizer,
    /// Names this tokenizer's piece caches (kept per thread); never reused.
    id: u64,
    /// Bumped to forget those caches.
    cache_generation: AtomicU64,
}

/// A clone is a new tokenizer with caches of its own.
impl Clone for Tokenizer {
    fn clone(&self) -> Self {
        Self::with_encoder(self.encoder.clone(), self.pretokenizer.clone())
            .with_normalizer(self.normalizer)
    }
}

impl Tokenizer {
    /// Builds the encoder of `vocab` (its lookup indexes) for `pretokenizer`.
    pub fn new(vocab: Vocab, pretokenizer: Pretokenizer) -> Self {
        Self::with_encoder(Encoder::new(vocab), pretokenizer)
    }

    /// A tokenizer over an encoder built already (a clone of one keeps its
    /// indexes and gets caches of its own).
    pub fn with_encoder(encoder: Encoder, pretokenizer: Pretokenizer) -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(0);
        Self {
            encoder,
            pretokenizer,
            normalizer: Normalizer::default(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            cache_generation: AtomicU64::new(0),
        }
    }

    pub fn with_normalizer(mut self, normalizer: Normalizer) -> Self {
        self.normalizer = normalizer;
        self
    }

    pub fn normalizer(&self) -> &Normalizer {
        &self.normalizer
    }

    /// Forgets the pieces every thread's cache learned from this tokenizer
    /// (the ids never depend on them; only the time does); each thread frees
    /// that memory at its next call.
    pub fn clear_cache(&self) {
        self.cache_generation.fetch_add(1, Ordering::Relaxed);
    }

    /// This thread's piece cache, for encoding a text of `text_len` bytes.
    fn cache(&self, text_len: usize) -> PieceCache {
        let key = CacheKey {
            tokenizer: self.id,
            generation: self.cache_generation.load(Ordering::Relaxed),
        };
        PieceCache::take(key, text_len)
    }

    pub fn vocab(&self) -> &Vocab {
        self.encoder.vocab()
    }

    pub fn encoder(&self) -> &Encoder {
        &self.encoder
    }

    /// The merge list (see [`Encoder::merges`]).
    pub fn merges(&self) -> (Vec<(u32, u32)>, Vec<u32>) {
        self.encoder.merges()
    }

    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretokenizer
    }

    // ---- Encoding ----

    fn encode_text(&self, text: &str, cache: &mut PieceCache, out: &mut Vec<u32>) -> Result<()> {
        let text = self.normalizer.apply(text);
        self.pretokenizer.for_each_piece(&text, |piece| {
            cache.encode(self.encoder.tables(), piece.as_bytes(), out)
        })
    }

    /// Encodes `text` as plain text: special-token text gets no special id.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    /// [`Self::encode_ordinary`], appending to `out`: a caller that keeps one
    /// buffer from call to call saves an allocation of 4/3 of the text's
    /// size each call.
    pub fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) -> Result<()> {
        out.reserve(text.len() / 3);
        self.encode_text(text, &mut self.cache(text.len()), out)
    }

    /// The first occurrence (byte position, text) of a special token that is
    /// not allowed; callers raise it as an error (tiktoken's contract).
    pub fn find_disallowed<'s>(
        &'s self,
        text: &str,
        disallowed: Selection,
    ) -> Result<Option<(usize, &'s str)>> {
        self.vocab().special().find(text, disallowed)
    }

    /// Encodes `text`, emitting the ids of the `allowed` special tokens.
    pub fn encode_with_special(&self, text: &str, allowed: Selection) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        self.encode_with_special_into(text, allowed, &mut out)?;
        Ok(out)
    }

    /// [`Self::encode_with_special`], appending to `out` (see
    /// [`Self::encode_ordinary_into`]).
    pub fn encode_with_special_into(
        &self,
        text: &str,
        allowed: Selection,
        out: &mut Vec<u32>,
    ) -> Result<()> {
        out.reserve(text.len() / 3);
        let mut cache = self.cache(text.len());
        self.vocab()
            .special()
            .split(text, allowed, |segment| match segment {
                Segment::Special(id) => {
                    out.push(id);
                    Ok(())
                }
                Segment::Text(t) => self.encode_text(t, &mut cache, out),
            })
    }

    /// Encodes many texts in parallel (rayon's global pool; no per-call start-up).
    pub fn encode_batch(&self, texts: &[&str], allowed: Selection) -> Result<Vec<Vec<u32>>> {
        texts
            .par_iter()
            .map(|t| self.encode_with_special(t, allowed))
            .collect()
    }

    /// Like [`Self::encode_with_special`] with BPE-dropout: each merge is
    /// skipped with probability `p`, drawn from `rng` (no cache: the same
    /// word may split differently each time). `p == 0` is the plain encoding.
    pub fn encode_with_dropout(
        &self,
        text: &str,
        allowed: Selection,
        p: f64,
        rng: &mut Rng,
    ) -> Result<Vec<u32>> {
        if p <= 0.0 {
            return self.encode_with_special(text, allowed);
        }
        let mut out = Vec::with_capacity(text.len() / 2);
        self.vocab()
            .special()
            .split(text, allowed, |segment| match segment {
                Segment::Special(id) => {
                    out.push(id);
                    Ok(())
                }
                Segment::Text(t) => {
                    let t = self.normalizer.apply(t);
                    self.pretokenizer.for_each_piece(&t, |piece| {
                        encode_piece_with_dropout(
                            self.encoder.tables(),
                            piece.as_bytes(),
                            p,
                            rng,
                            &mut out,
                        )
                    })
                }
            })?;
        Ok(out)
    }

    /// [`Self::encode_with_dropout`] over a batch in parallel; text `i` draws
    /// from its own stream of `seed`, so the result does not depend on threads.
    pub fn encode_batch_with_dropout(
        &self,
        texts: &[&str],
        allowed: Selection,
        p: f64,
        seed: u64,
    ) -> Result<Vec<Vec<u32>>> {
        texts
            .par_iter()
            .enumerate()
            .map(|(i, t)| {
                let mut rng = Rng::for_item(seed, i as u64);
                self.encode_with_dropout(t, allowed, p, &mut rng)
            })
            .collect()
    }

    // ---- Decoding ----

    pub fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>> {
        crate::decode::decode_bytes(self.vocab(), ids)
    }
}

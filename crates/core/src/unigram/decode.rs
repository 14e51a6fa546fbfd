//! Decoding a unigram model trained by bytepair; the reference is
//! `bytepair.reference.unigram.decode`, whose docstring gives the rules.

use super::Kind;
use crate::error::Result;
use crate::sentencepiece::decode::{byte_piece, for_each_part, write_like_sentencepiece, Part};
use crate::text::metaspace::METASPACE;

/// What an `<unk>` decodes to (`bytepair.reference.unigram.UNK_SURFACE`).
pub const UNK_SURFACE: &str = "\u{2047}";

/// Each piece's text, read once from the model.
#[derive(Clone, Debug)]
pub struct UnigramDecoder {
    /// The text of each piece; for a byte piece, its byte.
    texts: Vec<Box<[u8]>>,
    kinds: Vec<Kind>,
    /// Words were cut SentencePiece's way: the `▁` that starts the text and
    /// each text after a special token goes, every other `▁` is a space.
    metaspace: bool,
}

impl UnigramDecoder {
    pub fn new(pieces: &[String], kinds: &[Kind], metaspace: bool) -> Result<Self> {
        let mut texts = Vec::with_capacity(pieces.len());
        for (id, (piece, &kind)) in pieces.iter().zip(kinds).enumerate() {
            texts.push(match kind {
                Kind::Byte => Box::new([byte_piece(id, piece)?]) as Box<[u8]>,
                Kind::Unknown => UNK_SURFACE.as_bytes().into(),
                _ => piece.as_bytes().into(),
            });
        }
        Ok(Self {
            texts,
            kinds: kinds.to_vec(),
            metaspace,
        })
    }

    /// The text of `ids` as UTF-8 bytes: a special token's text as it is;
    /// runs of byte pieces joined, as sentencepiece decodes them (one U+FFFD
    /// for each byte that starts no valid character) or, `raw_bytes`, as
    /// they are (a `▁` in them is three valid bytes either way).
    pub fn decode(&self, ids: &[u32], raw_bytes: bool) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        // The next text part is the first, or follows a special token.
        let mut starts_text = true;
        let byte =
            |id: u32| (self.kinds[id as usize] == Kind::Byte).then(|| self.texts[id as usize][0]);
        for_each_part(ids, self.kinds.len(), byte, |part| match part {
            Part::Bytes(bytes) => {
                self.write_bytes(bytes, raw_bytes, starts_text, &mut out);
                starts_text = false;
            }
            Part::Piece(id) if self.kinds[id as usize] == Kind::Control => {
                out.extend_from_slice(&self.texts[id as usize]);
                starts_text = true;
            }
            Part::Piece(id) => {
                self.write_text(&self.texts[id as usize], starts_text, &mut out);
                starts_text = false;
            }
        })?;
        Ok(out)
    }

    fn write_bytes(&self, bytes: &[u8], raw_bytes: bool, starts_text: bool, out: &mut Vec<u8>) {
        if raw_bytes {
            return self.write_text(bytes, starts_text, out);
        }
        let mut decoded = Vec::with_capacity(bytes.len());
        write_like_sentencepiece(bytes, &mut decoded);
        self.write_text(&decoded, starts_text, out);
    }

    /// A part that is no special token, with its `▁`s written as spaces
    /// (the first one dropped where a text starts).
    fn write_text(&self, text: &[u8], starts_text: bool, out: &mut Vec<u8>) {
        if !self.metaspace {
            return out.extend_from_slice(text);
        }
        let space = METASPACE.as_bytes();
        let mut rest = match text.strip_prefix(space) {
            Some(after) if starts_text => after,
            _ => text,
        };
        while let Some(at) = find(rest, space) {
            out.extend_from_slice(&rest[..at]);
            out.push(b' ');
            rest = &rest[at + space.len()..];
        }
        out.extend_from_slice(rest);
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

//! SentencePiece's `decode` for a loaded `.model` (sentencepiece 0.2.3);
//! the reference is `bytepair.reference.sentencepiece.decode` and
//! `decode_bytes`, whose docstrings give the rules.

use super::normalize::SPACE_SYMBOL;
use super::Kind;
use crate::error::{Error, Result};

/// Each piece's text as decoding writes it, read once from the model.
pub(crate) struct SpDecoder {
    /// The text of each piece, `▁` as a space; for a byte piece, its byte.
    texts: Vec<Box<[u8]>>,
    kinds: Vec<Kind>,
    /// Whether the piece begins with `▁` (dropped before the first text).
    leading_space: Vec<bool>,
    /// The model adds a dummy prefix or removes extra whitespace: the
    /// leading `▁` of the first piece that writes text goes.
    strips_bos_space: bool,
    /// With remove_extra_whitespaces, the leading `▁` of every piece goes
    /// until text appears.
    remove_extra_whitespaces: bool,
}

impl SpDecoder {
    pub(crate) fn new(
        pieces: &[String],
        kinds: &[Kind],
        add_dummy_prefix: bool,
        remove_extra_whitespaces: bool,
    ) -> Result<Self> {
        let mut texts = Vec::with_capacity(pieces.len());
        for (id, (piece, &kind)) in pieces.iter().zip(kinds).enumerate() {
            let text: Box<[u8]> = match kind {
                Kind::Byte => Box::new([byte_of(piece).ok_or_else(|| {
                    Error::InvalidVocabulary(format!(
                        "piece {id} {piece:?} is a byte piece, but not <0xXX>"
                    ))
                })?]),
                _ => piece.replace(SPACE_SYMBOL, " ").into_bytes().into(),
            };
            texts.push(text);
        }
        Ok(Self {
            texts,
            kinds: kinds.to_vec(),
            leading_space: pieces.iter().map(|p| p.starts_with(SPACE_SYMBOL)).collect(),
            strips_bos_space: add_dummy_prefix || remove_extra_whitespaces,
            remove_extra_whitespaces,
        })
    }

    /// `SentencePieceProcessor.decode(ids)` as UTF-8 (`raw_bytes` false: each
    /// byte of a run of byte pieces that does not start a valid character
    /// becomes U+FFFD, as sentencepiece writes it), or with the byte pieces'
    /// bytes as they are (`raw_bytes` true). `unk_surface`: what the unknown
    /// piece writes.
    pub(crate) fn decode(
        &self,
        ids: &[u32],
        unk_surface: &str,
        raw_bytes: bool,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        let mut pending = Vec::new();
        let mut expecting_bos_space = true;
        let mut bos_space_seen = false;
        for (position, &id) in ids.iter().enumerate() {
            let Some(&kind) = self.kinds.get(id as usize) else {
                return Err(Error::UnknownId {
                    id,
                    position,
                    size: self.kinds.len(),
                });
            };
            let text = &self.texts[id as usize];
            if kind == Kind::Byte {
                pending.push(text[0]);
                continue;
            }
            flush_bytes(&mut pending, raw_bytes, &mut out);
            if bos_space_seen || !out.is_empty() {
                expecting_bos_space = false;
            }
            bos_space_seen = false;
            match kind {
                Kind::Control => continue,
                Kind::Unknown => {
                    out.extend_from_slice(unk_surface.as_bytes());
                    continue;
                }
                _ => {}
            }
            let mut text = &text[..];
            if expecting_bos_space && self.strips_bos_space && self.leading_space[id as usize] {
                text = &text[1..]; // the space `▁` became
                bos_space_seen = !self.remove_extra_whitespaces;
            }
            out.extend_from_slice(text);
        }
        flush_bytes(&mut pending, raw_bytes, &mut out);
        Ok(out)
    }
}

/// The byte of a piece `<0xXX>`.
pub(crate) fn byte_of(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u8::from_str_radix(hex, 16).ok())
        .flatten()
}

/// Writes a run of byte pieces' bytes: as they are, or as sentencepiece
/// decodes them ([`write_like_sentencepiece`]).
fn flush_bytes(pending: &mut Vec<u8>, raw_bytes: bool, out: &mut Vec<u8>) {
    if raw_bytes {
        out.extend_from_slice(pending);
    } else {
        write_like_sentencepiece(pending, out);
    }
    pending.clear();
}

/// `bytes` as sentencepiece decodes them: valid characters as they are, one
/// U+FFFD for each byte that starts none (the bytes after an invalid
/// sequence's first are continuation bytes, which start none either).
pub(crate) fn write_like_sentencepiece(bytes: &[u8], out: &mut Vec<u8>) {
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.extend_from_slice(valid.as_bytes());
                return;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                out.extend_from_slice(valid);
                let invalid = error.error_len().unwrap_or(after.len());
                for _ in 0..invalid {
                    out.extend_from_slice("\u{FFFD}".as_bytes());
                }
                rest = &after[invalid..];
            }
        }
    }
}

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
                Kind::Byte => Box::new([byte_piece(id, piece)?]),
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
        let mut expecting_bos_space = true;
        let mut bos_space_seen = false;
        let byte =
            |id: u32| (self.kinds[id as usize] == Kind::Byte).then(|| self.texts[id as usize][0]);
        for_each_part(ids, self.kinds.len(), byte, |part| {
            let id = match part {
                Part::Bytes(bytes) if raw_bytes => return out.extend_from_slice(bytes),
                Part::Bytes(bytes) => return write_like_sentencepiece(bytes, &mut out),
                Part::Piece(id) => id as usize,
            };
            if bos_space_seen || !out.is_empty() {
                expecting_bos_space = false;
            }
            bos_space_seen = false;
            match self.kinds[id] {
                Kind::Control => return,
                Kind::Unknown => return out.extend_from_slice(unk_surface.as_bytes()),
                _ => {}
            }
            let mut text = &self.texts[id][..];
            if expecting_bos_space && self.strips_bos_space && self.leading_space[id] {
                text = &text[1..]; // the space `▁` became
                bos_space_seen = !self.remove_extra_whitespaces;
            }
            out.extend_from_slice(text);
        })?;
        Ok(out)
    }
}

/// What decoding walks: a run of byte pieces, their bytes joined, or another piece.
pub(crate) enum Part<'a> {
    Bytes(&'a [u8]),
    Piece(u32),
}

/// Calls `f` with the parts of `ids` in order (`byte`: the byte of a byte
/// piece's id, None for any other); an id of `size` or more is an error
/// naming it and its position.
pub(crate) fn for_each_part(
    ids: &[u32],
    size: usize,
    byte: impl Fn(u32) -> Option<u8>,
    mut f: impl FnMut(Part<'_>),
) -> Result<()> {
    let mut pending = Vec::new();
    for (position, &id) in ids.iter().enumerate() {
        if id as usize >= size {
            return Err(Error::UnknownId { id, position, size });
        }
        if let Some(value) = byte(id) {
            pending.push(value);
            continue;
        }
        if !pending.is_empty() {
            f(Part::Bytes(&pending));
            pending.clear();
        }
        f(Part::Piece(id));
    }
    if !pending.is_empty() {
        f(Part::Bytes(&pending));
    }
    Ok(())
}

/// The byte of piece `id`, a byte piece `<0xXX>`, or an error naming it.
pub(crate) fn byte_piece(id: usize, piece: &str) -> Result<u8> {
    byte_of(piece).ok_or_else(|| {
        Error::InvalidVocabulary(format!(
            "piece {id} {piece:?} is a byte piece, but not <0xXX>"
        ))
    })
}

/// The byte of a piece `<0xXX>`.
fn byte_of(piece: &str) -> Option<u8> {
    let hex = piece.strip_prefix("<0x")?.strip_suffix('>')?;
    (hex.len() == 2 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| u8::from_str_radix(hex, 16).ok())
        .flatten()
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

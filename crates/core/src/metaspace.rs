//! SentencePiece-style words ("metaspace"), the unigram side's default way
//! to cut text: each space becomes `▁`, a `▁` goes in front of the text, and
//! a word starts at every `▁` (`"a  b"` -> `▁a`, `▁`, `▁b`).

/// SentencePiece's stand-in for a space.
pub const METASPACE: &str = "\u{2581}";

/// `text` cut before every space: `"a  b"` -> `"a"`, `" "`, `" b"`. With
/// `dummy` the text gets a `▁` in front, which starts a word of its own when
/// the text starts with a space: `" a"` -> `""`, `" a"` (the lone `▁`).
pub fn split_before_spaces(text: &str, dummy: bool) -> impl Iterator<Item = &str> {
    let mut rest = (!text.is_empty()).then_some(text);
    let mut first = true;
    std::iter::from_fn(move || {
        let current = rest?;
        // A piece's own leading space does not cut it (ASCII: 1 is a boundary).
        let from = usize::from(!(dummy && first) && current.starts_with(' '));
        first = false;
        match current[from..].find(' ') {
            Some(at) => {
                let (piece, after) = current.split_at(from + at);
                rest = Some(after);
                Some(piece)
            }
            None => {
                rest = None;
                Some(current)
            }
        }
    })
}

/// Cuts a long text into pieces of about `size` bytes, each (but the first)
/// starting at a space, so that no word is cut.
pub fn metaspace_chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut cut = rest.len();
        if rest.len() > size {
            let mut at = size;
            while !rest.is_char_boundary(at) {
                at += 1;
            }
            cut = rest[at..].find(' ').map_or(rest.len(), |i| at + i);
        }
        let (chunk, after) = rest.split_at(cut);
        rest = after;
        Some(chunk)
    })
}

/// The word a piece of [`split_before_spaces`] stands for: spaces as `▁`,
/// with the dummy `▁` in front when `dummy` (the first piece of a text).
pub fn word_of(piece: &str, dummy: bool) -> String {
    let mut word = String::with_capacity(piece.len() + 6);
    if dummy {
        word.push_str(METASPACE);
    }
    for c in piece.chars() {
        match c {
            ' ' => word.push_str(METASPACE),
            other => word.push(other),
        }
    }
    word
}

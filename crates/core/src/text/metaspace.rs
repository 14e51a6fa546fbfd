//! SentencePiece-style words ("metaspace"), the unigram side's default way
//! to cut text: each space becomes `▁`, a `▁` goes in front of the text, and
//! a word starts at every `▁`, a typed one too (`"a  b"` -> `▁a`, `▁`, `▁b`;
//! `"a▁b"` -> `▁a`, `▁b`), as SentencePiece, where both are `▁` once normalized.

/// SentencePiece's stand-in for a space.
pub const METASPACE: &str = "\u{2581}";

/// Length in bytes of the space or `▁` that `text` starts with (0 if none).
fn separator_len(text: &[u8]) -> usize {
    if text.first() == Some(&b' ') {
        1
    } else if text.starts_with(METASPACE.as_bytes()) {
        METASPACE.len()
    } else {
        0
    }
}

/// Byte position of the first space or `▁` in `text` at or after `from`.
fn next_separator(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    // Both start a character (0xE2: the lead byte of `▁`), so a match is a char boundary.
    while let Some(found) = memchr::memchr2(b' ', 0xE2, &bytes[at..]) {
        let i = at + found;
        if bytes[i] == b' ' || bytes[i..].starts_with(METASPACE.as_bytes()) {
            return Some(i);
        }
        at = i + 1;
    }
    None
}

/// `text` cut before every space and `▁`: `"a  b"` -> `"a"`, `" "`, `" b"`.
/// With `dummy` the text gets a `▁` in front, which starts a word of its own
/// when the text starts with a space or `▁`: `" a"` -> `""`, `" a"` (the lone `▁`).
pub fn split_before_spaces(text: &str, dummy: bool) -> impl Iterator<Item = &str> {
    let mut rest = (!text.is_empty()).then_some(text);
    let mut first = true;
    std::iter::from_fn(move || {
        let current = rest?;
        // A piece's own leading space or `▁` does not cut it.
        let from = if dummy && first {
            0
        } else {
            separator_len(current.as_bytes())
        };
        first = false;
        match next_separator(current, from) {
            Some(at) => {
                let (piece, after) = current.split_at(at);
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
/// starting at a space or `▁`, so that no word is cut.
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
            cut = next_separator(rest, at).unwrap_or(rest.len());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        split_before_spaces(text, true)
            .enumerate()
            .map(|(i, piece)| word_of(piece, i == 0).replace(METASPACE, "_"))
            .collect()
    }

    #[test]
    fn a_typed_metaspace_starts_a_word_like_a_space() {
        assert_eq!(words("a  b"), ["_a", "_", "_b"]);
        assert_eq!(words("▁a ▁b"), ["_", "_a", "_", "_b"]);
        assert_eq!(words("ab▁▁c▁"), ["_ab", "_", "_c", "_"]);
        assert_eq!(words(" ▁"), ["_", "_", "_"]);
        assert!(words("").is_empty());
        // Other characters led by 0xE2 (like `▁`) do not cut.
        assert_eq!(words("a—b▁c€ d⁂"), ["_a—b", "_c€", "_d⁂"]);
    }

    #[test]
    fn chunks_start_at_a_space_or_a_metaspace() {
        let text = "ab▁cdé".repeat(1000);
        let chunks: Vec<&str> = metaspace_chunks(&text, 100).collect();
        assert!(chunks.len() > 10);
        assert_eq!(chunks.concat(), text);
        assert!(chunks[1..].iter().all(|c| c.starts_with(METASPACE)));
    }
}

//! Token ids as text, for the command line: `bytepair encode` prints them
//! and `bytepair decode` reads them back. Millions of ids go through here
//! (30 MB of English is 7.4 M ids), and Python's `str()` per id and its
//! `split()` plus a check per word took five times as long as the encoding.
//!
//! Writing covers every list of ids. Reading is a fast path only: it gives
//! the ids of text in the two plain shapes (whitespace-separated decimal
//! ids, or a JSON list of them) and `None` for anything else, which the
//! caller reads the slow way, with its error messages naming what is wrong
//! and where. So whenever this gives ids they are the ones the slow way
//! gives.

/// Appends `ids` to `out` as Python's `" ".join(map(str, ids))` writes
/// them, or with `json` as `json.dumps(ids)` does (`[1, 2, 3]`).
pub fn write_ids(ids: &[u32], json: bool, out: &mut Vec<u8>) {
    out.reserve(ids.len() * 7 + 2);
    let separator: &[u8] = if json { b", " } else { b" " };
    if json {
        out.push(b'[');
    }
    for (i, &id) in ids.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(separator);
        }
        write_decimal(id, out);
    }
    if json {
        out.push(b']');
    }
}

fn write_decimal(mut value: u32, out: &mut Vec<u8>) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// The whitespace Python's `str.split()` and `str.strip()` cut at that this
/// fast path knows; other characters those cut at (U+001C-U+001F, U+0085,
/// U+00A0, ...) send the text to the slow path.
fn is_ascii_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The ids of `text` when it is whitespace-separated decimal ids (ASCII
/// digits, leading zeros allowed, as Python's `int()` reads them) or, its
/// first character past the whitespace being `[`, a JSON list of ids; each
/// id at most `u32::MAX`. `None` for anything else, including text that is
/// fine but not in these shapes (the slow path reads it).
pub fn parse_ids(text: &[u8]) -> Option<Vec<u32>> {
    let start = text.iter().position(|&b| !is_ascii_space(b));
    match start.map(|at| text[at]) {
        None => Some(Vec::new()),
        Some(b'[') => parse_json_list(&text[start?..]),
        Some(_) => parse_words(text),
    }
}

fn parse_words(text: &[u8]) -> Option<Vec<u32>> {
    let mut ids = Vec::with_capacity(text.len() / 6);
    let mut at = 0;
    while at < text.len() {
        if is_ascii_space(text[at]) {
            at += 1;
            continue;
        }
        let (id, end) = parse_number(text, at)?;
        // A word goes on to the next whitespace: "12a" is no id.
        if end < text.len() && !is_ascii_space(text[end]) {
            return None;
        }
        ids.push(id);
        at = end;
    }
    Some(ids)
}

/// JSON's whitespace, which is all `json.loads` skips inside the list.
fn skip_json_space(text: &[u8], mut at: usize) -> usize {
    while at < text.len() && matches!(text[at], b' ' | b'\t' | b'\n' | b'\r') {
        at += 1;
    }
    at
}

/// `text` starts with `[`: the list, then only whitespace.
fn parse_json_list(text: &[u8]) -> Option<Vec<u32>> {
    let mut ids = Vec::with_capacity(text.len() / 7);
    let mut at = skip_json_space(text, 1);
    if text.get(at) == Some(&b']') {
        at += 1;
    } else {
        loop {
            // JSON has no leading zeros: "01" is an error for json.loads.
            if text.get(at) == Some(&b'0') && text.get(at + 1).is_some_and(u8::is_ascii_digit) {
                return None;
            }
            let (id, end) = parse_number(text, at)?;
            ids.push(id);
            at = skip_json_space(text, end);
            match text.get(at)? {
                b',' => at = skip_json_space(text, at + 1),
                b']' => {
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    // What follows the list: whitespace only (str.strip() removes it).
    text[at..].iter().all(|&b| is_ascii_space(b)).then_some(ids)
}

/// The decimal number of ASCII digits at `text[at..]` and where it ends;
/// `None` when there is no digit there or it exceeds `u32::MAX`.
fn parse_number(text: &[u8], at: usize) -> Option<(u32, usize)> {
    // Up to 10 digits in a u64 cannot overflow it; the bound is checked once.
    let mut value: u64 = 0;
    let mut end = at;
    while end < text.len() && text[end].is_ascii_digit() {
        if end - at == 10 {
            return None;
        }
        value = value * 10 + (text[end] - b'0') as u64;
        end += 1;
    }
    let value = u32::try_from(value).ok()?;
    (end > at).then_some((value, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(ids: &[u32], json: bool) -> String {
        let mut out = Vec::new();
        write_ids(ids, json, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn ids_are_written_as_python_joins_or_dumps_them() {
        assert_eq!(written(&[], false), "");
        assert_eq!(written(&[], true), "[]");
        assert_eq!(written(&[0, 7, 10, 4294967295], false), "0 7 10 4294967295");
        assert_eq!(written(&[0, 7, 10], true), "[0, 7, 10]");
    }

    #[test]
    fn plain_shapes_are_read() {
        assert_eq!(parse_ids(b""), Some(vec![]));
        assert_eq!(parse_ids(b" \n\t"), Some(vec![]));
        assert_eq!(parse_ids(b"1 2\n\n 007\x0b3\x0c"), Some(vec![1, 2, 7, 3]));
        assert_eq!(parse_ids(b"4294967295"), Some(vec![u32::MAX]));
        assert_eq!(parse_ids(b"[]"), Some(vec![]));
        assert_eq!(parse_ids(b"\n [ 1,2 ,\n3 ] \n"), Some(vec![1, 2, 3]));
        assert_eq!(parse_ids(b"[0]"), Some(vec![0]));
    }

    #[test]
    fn anything_else_goes_to_the_slow_path() {
        for text in [
            &b"4294967296"[..],
            b"00000000007",
            b"1 x",
            b"12a",
            b"-1",
            b"1.0",
            b"1\x1c2",
            b"1\xc2\xa02",
            b"[1,]",
            b"[,1]",
            b"[1 2]",
            b"[01]",
            b"[1]]",
            b"[1] 2",
            b"[1\x0b]",
            b"[true]",
            b"[-1]",
            b"[1",
            b"[",
            b"1 [2]",
        ] {
            assert_eq!(parse_ids(text), None, "{:?}", String::from_utf8_lossy(text));
        }
    }
}

//! tiktoken's rank files (`.tiktoken`): one token a line, `<base64 bytes> <rank>`.
//! Parsed here rather than in Python because a vocabulary of 200,000 tokens
//! should load faster than tiktoken loads it.

use base64::Engine;
use rustc_hash::FxHashMap;

/// The tokens of a rank file by rank (None for ranks no line gives), or the
/// 1-based line number and what is wrong there (line 0: the whole file).
pub fn parse(data: &[u8]) -> Result<Vec<Option<Vec<u8>>>, (usize, String)> {
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    // The line each rank came from, for the message about a repeated one.
    let mut line_of_rank: Vec<u32> = Vec::new();
    let engine = &base64::engine::general_purpose::STANDARD;
    for (index, line) in data.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let mut fields = line
            .split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty());
        let (Some(encoded), Some(rank_text), None) = (fields.next(), fields.next(), fields.next())
        else {
            let count = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|f| !f.is_empty())
                .count();
            if count == 0 {
                continue; // tiktoken skips empty lines too
            }
            let problem = format!(
                "expected 'base64-token rank', found {count} field(s): {}",
                show(line)
            );
            return Err((number, problem));
        };
        let token = engine.decode(encoded).map_err(|_| {
            (
                number,
                format!("the token {} is not valid base64", show(encoded)),
            )
        })?;
        if token.is_empty() {
            return Err((number, "the token is empty".into()));
        }
        let rank = std::str::from_utf8(rank_text)
            .ok()
            .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|&r| r < u32::MAX - 1)
            .ok_or_else(|| {
                (
                    number,
                    format!("the rank {} is not a whole number >= 0", show(rank_text)),
                )
            })?;
        let slot = rank as usize;
        if tokens.len() <= slot {
            tokens.resize(slot + 1, None);
            line_of_rank.resize(slot + 1, 0);
        }
        if tokens[slot].is_some() {
            let first = line_of_rank[slot];
            return Err((
                number,
                format!("rank {rank} is given twice (first on line {first})"),
            ));
        }
        tokens[slot] = Some(token);
        line_of_rank[slot] = number as u32;
    }
    if tokens.is_empty() {
        return Err((0, "the file holds no token".into()));
    }
    // A token given twice: reported on the later of its two lines.
    let mut rank_of: FxHashMap<&[u8], usize> = FxHashMap::default();
    rank_of.reserve(tokens.len());
    let mut repeated: Option<(usize, usize)> = None;
    for (rank, token) in tokens.iter().enumerate() {
        let Some(token) = token else { continue };
        if let Some(&other) = rank_of.get(token.as_slice()) {
            let (early, late) = if line_of_rank[other] < line_of_rank[rank] {
                (other, rank)
            } else {
                (rank, other)
            };
            if repeated.is_none_or(|(_, r)| line_of_rank[late] < line_of_rank[r]) {
                repeated = Some((early, late));
            }
        } else {
            rank_of.insert(token, rank);
        }
    }
    if let Some((early, late)) = repeated {
        let token = tokens[late].as_deref().unwrap_or_default();
        return Err((
            line_of_rank[late] as usize,
            format!(
                "the token {} appears twice (first on line {}, rank {early})",
                show(token),
                line_of_rank[early]
            ),
        ));
    }
    Ok(tokens)
}

/// A short, quoted rendering of raw bytes for an error message.
fn show(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(60)]).into_owned();
    let more = if bytes.len() > 60 { "…" } else { "" };
    format!("'{}'{more}", text.escape_debug())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_place_tokens_and_leave_gaps() {
        let tokens = parse(b"YQ== 0\nYg== 2\n\n").unwrap();
        assert_eq!(tokens, vec![Some(b"a".to_vec()), None, Some(b"b".to_vec())]);
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse(b"YQ== 0\n!!! 1\n").unwrap_err().0, 2);
        assert!(parse(b"YQ== 0\nYg== 0\n")
            .unwrap_err()
            .1
            .contains("given twice (first on line 1)"));
        assert!(parse(b"YQ== 0\nYQ== 1\n")
            .unwrap_err()
            .1
            .contains("appears twice"));
        assert!(parse(b"YQ== x\n")
            .unwrap_err()
            .1
            .contains("not a whole number"));
        assert_eq!(parse(b"\n").unwrap_err().0, 0);
    }
}

//! tiktoken's rank files (`.tiktoken`): one token a line, `<base64 bytes> <rank>`.
//! Parsed here rather than in Python because a vocabulary of 200,000 tokens
//! should load faster than tiktoken loads it.

use base64::Engine;
use rustc_hash::FxHashMap;

/// How much room for unused ids to leave: 2^16 ids beyond twice the entries.
pub const ID_SLACK: usize = 1 << 16;

/// The ids of a table of `entries` tokens must be below this. A table holds a
/// slot for every id up to the largest, so one id of 4e9 would allocate
/// gigabytes; unused ids are real but few (tiktoken's files: a few dozen below
/// their specials). As many unused ids as entries, plus [`ID_SLACK`] for small
/// files, keeps a table within 3 slots an entry. Python's
/// `formats.byte_level.id_limit` is the same bound.
pub fn id_limit(entries: usize) -> usize {
    entries.saturating_mul(2).saturating_add(ID_SLACK)
}

/// The tokens of a rank file by rank (None for ranks no line gives), or the
/// 1-based line number and what is wrong there (line 0: the whole file).
pub fn parse(data: &[u8]) -> Result<Vec<Option<Vec<u8>>>, (usize, String)> {
    // (token, rank, line) in file order: their count bounds the ranks (`id_limit`)
    // before the table by rank is allocated.
    let mut entries: Vec<(Vec<u8>, u32, u32)> = Vec::new();
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
        let digits = std::str::from_utf8(rank_text)
            .ok()
            .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| {
                (
                    number,
                    format!("the rank {} is not a whole number >= 0", show(rank_text)),
                )
            })?;
        let rank = digits
            .parse::<u32>()
            .ok()
            .filter(|&r| r < u32::MAX - 1)
            .ok_or_else(|| {
                (
                    number,
                    format!(
                        "the rank {digits} is too large (ranks are token ids, below {})",
                        u32::MAX - 1
                    ),
                )
            })?;
        entries.push((token, rank, number as u32));
    }
    if entries.is_empty() {
        return Err((0, "the file holds no token".into()));
    }
    let limit = id_limit(entries.len());
    if let Some(&(_, rank, line)) = entries.iter().find(|e| e.1 as usize >= limit) {
        let problem = format!(
            "rank {rank} is far beyond the file's {} tokens (ranks must be below {limit}: \
             twice the tokens + {ID_SLACK}, room for unused ranks)",
            entries.len()
        );
        return Err((line as usize, problem));
    }
    let size = entries.iter().map(|e| e.1 as usize + 1).max().unwrap_or(0);
    let mut tokens: Vec<Option<Vec<u8>>> = vec![None; size];
    // The line each rank came from, for the message about a repeated one.
    let mut line_of_rank: Vec<u32> = vec![0; size];
    for (token, rank, line) in entries {
        let slot = rank as usize;
        if tokens[slot].is_some() {
            let first = line_of_rank[slot];
            return Err((
                line as usize,
                format!("rank {rank} is given twice (first on line {first})"),
            ));
        }
        tokens[slot] = Some(token);
        line_of_rank[slot] = line;
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
        let (line, problem) = parse(b"YQ== 0\nYg== 1099511627776\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(problem.contains("the rank 1099511627776 is too large"));
    }

    #[test]
    fn a_rank_far_beyond_the_tokens_is_refused_before_allocating() {
        let limit = id_limit(2);
        let near = format!("YQ== 0\nYg== {}\n", limit - 1);
        assert_eq!(parse(near.as_bytes()).unwrap().len(), limit);
        let (line, problem) = parse(b"YQ== 0\nYg== 4000000000\n").unwrap_err();
        assert_eq!(line, 2);
        assert!(problem.contains("rank 4000000000 is far beyond the file's 2 tokens"));
    }
}

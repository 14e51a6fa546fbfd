//! Profiling aid for single-thread encoding (not part of the library):
//!
//! `encode_profile <gpt2|cl100k|o200k> <rank file> <corpus file> [MB (0 = all, default 3)] [rounds] [ids out]`
//!
//! Loads a `.tiktoken` rank file with the named builtin pre-tokenizer, takes
//! the first MB of the corpus (cut back to a blank line, as `bench/` does),
//! encodes it `rounds` times with `encode_ordinary`, and prints the best
//! time and MB/s, the median time, the id count and a checksum; with
//! `ids out`, writes the ids as little-endian u32. Under
//! `valgrind --tool=callgrind` use one round (and see [`encode_round`]).
//!
//! With `BYTEPAIR_PROFILE_COLD=1` in the environment, 96 MB are written
//! before each round, so that the vocabulary starts out of the CPU caches
//! as in `bench/`, where the peers run between bytepair's rounds. With
//! `BYTEPAIR_PROFILE_WARM=1`, the piece cache is kept from round to round:
//! the rounds after the first time the scanning and the cache alone. With
//! `BYTEPAIR_PROFILE_DOCS=1`, each round encodes the text's blank-line
//! separated parts one call each (the ids of the separators are left out),
//! as the bench's "docs" rows do. With `BYTEPAIR_PROFILE_MERGES=1`, the
//! vocabulary ranks pairs by its derived merge list instead of by token id
//! (the way trained and HuggingFace vocabularies encode).

use std::time::Instant;

use bytepair_core::{Encoder, Pretokenizer, Ranking, Tokenizer, Vocab};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 4 {
        eprintln!(
            "usage: {} <gpt2|cl100k|o200k> <rank file> <corpus> [MB] [rounds] [ids out]",
            args[0]
        );
        std::process::exit(2);
    }
    let ranks = std::fs::read(&args[2]).expect("rank file");
    let tokens = bytepair_core::rank_file::parse(&ranks).expect("a valid rank file");
    let mut vocab =
        Vocab::new(tokens.clone(), Ranking::TokenIds, Vec::new()).expect("a valid vocabulary");
    if std::env::var_os("BYTEPAIR_PROFILE_MERGES").is_some() {
        let ranking = Ranking::Merges(Encoder::new(vocab).merges().0);
        vocab = Vocab::new(tokens, ranking, Vec::new()).expect("a valid merge list");
    }
    let tokenizer = Tokenizer::new(vocab, Pretokenizer::builtin(&args[1]).expect("a builtin"));

    let mut data = std::fs::read(&args[3]).expect("corpus");
    let mb: f64 = args.get(4).map_or(3.0, |a| a.parse().expect("MB"));
    if mb > 0.0 && ((mb * 1e6) as usize) < data.len() {
        let n = (mb * (1 << 20) as f64) as usize;
        data.truncate(n);
        if let Some(at) = data.windows(2).rposition(|w| w == b"\n\n") {
            data.truncate(at);
        }
    }
    let text = String::from_utf8(data).expect("UTF-8 text");
    let rounds: usize = args.get(5).map_or(5, |a| a.parse().expect("rounds"));

    // Builds the scanners' lazy Unicode tables outside the measured calls
    // (each round starts with an empty piece cache all the same).
    tokenizer.encode_ordinary("\u{e9}").expect("encodes");
    let mut times = Vec::new();
    let mut ids = Vec::new();
    let mut evictor = match std::env::var_os("BYTEPAIR_PROFILE_COLD") {
        Some(_) => vec![0u8; 96 << 20],
        None => Vec::new(),
    };
    let warm = std::env::var_os("BYTEPAIR_PROFILE_WARM").is_some();
    let docs: Vec<&str> = match std::env::var_os("BYTEPAIR_PROFILE_DOCS") {
        Some(_) => text.split("\n\n").filter(|d| !d.is_empty()).collect(),
        None => vec![&text],
    };
    for round in 0..rounds.max(1) {
        // Every round encodes text new to the tokenizer, unless warm.
        if !warm {
            tokenizer.clear_cache();
        }
        for line in evictor.iter_mut().step_by(64) {
            *line = line.wrapping_add(round as u8 | 1);
        }
        std::hint::black_box(&evictor);
        let start = Instant::now();
        ids.clear();
        encode_round(&tokenizer, &docs, &mut ids);
        times.push(start.elapsed().as_secs_f64());
    }
    // The bench reads medians: a round that pays for something the best
    // one skipped (page faults, say) shows here.
    times.sort_by(f64::total_cmp);
    let (best, median) = (times[0], times[times.len() / 2]);
    let checksum = ids.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &id| {
        (h ^ id as u64).wrapping_mul(0x100_0000_01b3)
    });
    println!(
        "{} {}: {} bytes in {} calls, {} ids, checksum {checksum:016x}, best {:.4} s, {:.1} MB/s, median {:.4} s",
        args[1],
        args[3],
        text.len(),
        docs.len(),
        ids.len(),
        best,
        text.len() as f64 / best / 1e6,
        median
    );
    if let Some(path) = args.get(6) {
        let bytes: Vec<u8> = ids.iter().flat_map(|id| id.to_le_bytes()).collect();
        std::fs::write(path, bytes).expect("write ids");
    }
}

/// One measured round, out of line: `valgrind --tool=callgrind
/// --toggle-collect='*encode_round*'` counts the encoding alone, whatever
/// the library's calls inline.
#[inline(never)]
fn encode_round(tokenizer: &Tokenizer, docs: &[&str], ids: &mut Vec<u32>) {
    for doc in docs {
        ids.extend(tokenizer.encode_ordinary(doc).expect("encodes"));
    }
}

//! The encoders against a plain reference loop, on every length, rank
//! skipped, and random vocabularies of both rankings.

use std::collections::BinaryHeap;

use super::linked::{merge, merge_linked, BucketQueue, HeapQueue};
use super::scan::encode_by_scan;
use super::tree::{encode_by_tree, TREE_LIMIT};
use super::windows::{encode_in_windows, kept_of_window};
use super::{encode_by_heap, encode_skipping_rank, SCAN_LIMIT};
use crate::bpe::tables::Tables;
use crate::bpe::Encoder;
use crate::vocab::{Ranking, Vocab};

/// The tables of a vocabulary, as the encoder builds them.
pub(crate) fn tables_of(vocab: Vocab) -> Tables {
    Encoder::new(vocab).into_tables()
}

/// The tables of [`merge_vocab`]`(merges)`.
pub(crate) fn vocab_with(merges: &[(&[u8], &[u8])]) -> Tables {
    tables_of(merge_vocab(merges))
}

/// Byte tokens plus the merges of `merges`, in order (the test vocabulary
/// of the encoders and of `piece_cache`'s tests).
pub(crate) fn merge_vocab(merges: &[(&[u8], &[u8])]) -> Vocab {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut pairs = Vec::new();
    for (l, r) in merges {
        let id =
            |t: &[u8], tokens: &Vec<Vec<u8>>| tokens.iter().position(|x| x == t).unwrap() as u32;
        let joined = [*l, *r].concat();
        if !tokens.contains(&joined) {
            tokens.push(joined);
        }
        pairs.push((id(l, &tokens), id(r, &tokens)));
    }
    Vocab::new(tokens.into_iter().map(Some), Ranking::Merges(pairs), vec![]).unwrap()
}

/// The plain O(n²) merge loop, for pieces of any length: the reference
/// the fast encoders are checked against.
fn scan_reference(vocab: &Tables, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    let rule = |l: u32, r: u32| vocab.merge_rule(l, r).filter(|rule| rule.rank != skip);
    let mut symbols: Vec<u32> = piece.iter().map(|&b| vocab.byte_id(b)).collect();
    // The leftmost adjacent pair of lowest rank, while there is one.
    while let Some((_, at, result)) = (0..symbols.len().saturating_sub(1))
        .filter_map(|i| rule(symbols[i], symbols[i + 1]).map(|r| (r.rank, i, r.result)))
        .min()
    {
        symbols[at] = result;
        symbols.remove(at + 1);
    }
    out.extend(symbols);
}

fn both(vocab: &Tables, text: &[u8]) -> (Vec<u32>, Vec<u32>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    scan_reference(vocab, text, u32::MAX, &mut a);
    encode_by_heap(vocab, text, u32::MAX, &mut b);
    (a, b)
}

#[test]
fn scan_tree_and_heap_agree_with_the_reference_on_every_length_and_skip() {
    let v = vocab_with(&[
        (b"a", b"b"),
        (b"b", b"a"),
        (b"ab", b"a"),
        (b"a", b"ba"),
        (b"aba", b"b"),
        (b"a", b"a"),
        (b"aa", b"aa"),
        (b"b", b"b"),
    ]);
    for seed in 0..40u32 {
        let text: Vec<u8> = (0..TREE_LIMIT as u32)
            .map(|i| {
                if (i * 7 + i / 3 + seed * 13 + i * i * seed / 5) % 3 == 0 {
                    b'b'
                } else {
                    b'a'
                }
            })
            .collect();
        for n in 2..=TREE_LIMIT {
            for skip in [u32::MAX, 0, 2, 5] {
                let piece = &text[..n];
                let (mut want, mut tree, mut heap) = (vec![7], vec![7], vec![7]);
                scan_reference(&v, piece, skip, &mut want);
                encode_by_tree(&v, piece, skip, &mut tree);
                encode_by_heap(&v, piece, skip, &mut heap);
                assert_eq!(tree, want, "n={n} skip={skip} seed={seed}");
                assert_eq!(heap, want, "n={n} skip={skip} seed={seed}");
                if n <= SCAN_LIMIT {
                    let mut scan = vec![7];
                    encode_by_scan(&v, piece, skip, &mut scan);
                    assert_eq!(scan, want, "n={n} skip={skip} seed={seed}");
                }
            }
        }
    }
}

#[test]
fn overlapping_runs_merge_left_to_right() {
    let v = vocab_with(&[(b"a", b"a")]);
    let (scan, heap) = both(&v, b"aaa");
    assert_eq!(scan, vec![256, 97]);
    assert_eq!(heap, scan);
}

#[test]
fn buckets_agree_with_the_heap_on_very_long_pieces() {
    let v = vocab_with(&[
        (b"a", b"b"),
        (b"b", b"a"),
        (b"ab", b"a"),
        (b"a", b"ba"),
        (b"aba", b"b"),
        (b"a", b"a"),
    ]);
    let text: Vec<u8> = (0..40_000u32)
        .map(|i| {
            if (i * 7 + i / 3 + i / 101) % 3 == 0 {
                b'b'
            } else {
                b'a'
            }
        })
        .collect();
    let (mut heap, mut buckets) = (Vec::new(), Vec::new());
    merge_linked(
        &v,
        &text,
        u32::MAX,
        true,
        &mut HeapQueue(BinaryHeap::new()),
        &mut heap,
    );
    merge_linked(
        &v,
        &text,
        u32::MAX,
        true,
        &mut BucketQueue::new(v.vocab().rank_count()),
        &mut buckets,
    );
    assert_eq!(heap, buckets);
    let mut scan = Vec::new();
    scan_reference(&v, &text[..3000], u32::MAX, &mut scan);
    let mut short = Vec::new();
    merge_linked(
        &v,
        &text[..3000],
        u32::MAX,
        true,
        &mut BucketQueue::new(v.vocab().rank_count()),
        &mut short,
    );
    assert_eq!(scan, short);
}

/// A random vocabulary over the bytes `a`, `b`, `c`: random merges of
/// existing tokens (any order of ranks, some bytes made twice), or for
/// tiktoken's rule random tokens in random id order.
fn random_vocab(rng: &mut crate::util::rng::Rng, token_ids: bool) -> Tables {
    let pick = |rng: &mut crate::util::rng::Rng, n: usize| (rng.next_u64() % n as u64) as usize;
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    if token_ids {
        for _ in 0..40 {
            let len = 2 + pick(rng, 5);
            let token: Vec<u8> = (0..len).map(|_| b"abc"[pick(rng, 3)]).collect();
            if !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        // Longer tokens made of shorter ones, so that merging reaches
        // tokens of 8 to 15 bytes and beyond (each length has its table).
        for _ in 0..40 {
            let parts = [pick(rng, tokens.len() - 256), pick(rng, tokens.len() - 256)];
            let token = [&tokens[256 + parts[0]][..], &tokens[256 + parts[1]][..]].concat();
            if token.len() <= 24 && !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let tokens = tokens.into_iter().map(Some);
        return tables_of(Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap());
    }
    let mut merges = Vec::new();
    let mut usable: Vec<u32> = b"abc".iter().map(|&b| b as u32).collect();
    for _ in 0..60 {
        let (l, r) = (
            usable[pick(rng, usable.len())],
            usable[pick(rng, usable.len())],
        );
        if merges.contains(&(l, r)) {
            continue;
        }
        let joined = [&tokens[l as usize][..], &tokens[r as usize][..]].concat();
        let id = match tokens.iter().position(|t| *t == joined) {
            Some(id) => id as u32,
            None => {
                tokens.push(joined);
                tokens.len() as u32 - 1
            }
        };
        merges.push((l, r));
        if tokens[id as usize].len() <= 6 && !usable.contains(&id) {
            usable.push(id);
        }
    }
    let tokens = tokens.into_iter().map(Some);
    tables_of(Vocab::new(tokens, Ranking::Merges(merges), vec![]).unwrap())
}

#[test]
fn pieces_agree_with_the_reference_on_random_vocabularies() {
    // Up to 32 bytes the scan, up to 64 symbols the tree, then the heap. First
    // runs of one letter, where every token a..a of 2 to 24 bytes is
    // made by merging (each length of span has its own lookup).
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend((2..=24).rev().map(|k| vec![b'a'; k]));
    tokens.extend((2..=24).map(|k| [b"b".repeat(k - 1), b"a".to_vec()].concat()));
    let tokens = tokens.into_iter().map(Some);
    let vocab = tables_of(Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap());
    for n in 1..=TREE_LIMIT + 16 {
        for piece in [
            b"a".repeat(n),
            [b"b".repeat(n / 2), b"a".repeat(n - n / 2)].concat(),
        ] {
            let (mut got, mut want) = (vec![], vec![]);
            encode_skipping_rank(&vocab, &piece, u32::MAX, &mut got);
            scan_reference(&vocab, &piece, u32::MAX, &mut want);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&piece));
        }
    }
    let mut rng = crate::util::rng::Rng::new(11);
    for case in 0..300 {
        let vocab = random_vocab(&mut rng, case % 2 == 1);
        for _ in 0..40 {
            let n = 1 + (rng.next_u64() % (TREE_LIMIT as u64 + 16)) as usize;
            // Random letters, or the vocabulary's own tokens end to end
            // (so that the long tokens come up).
            let piece: Vec<u8> = match rng.next_u64() % 2 {
                0 => (0..n)
                    .map(|_| b"abc"[(rng.next_u64() % 3) as usize])
                    .collect(),
                _ => {
                    let mut piece = Vec::new();
                    while piece.len() < n {
                        let id = 256 + rng.next_u64() % (vocab.vocab().len() as u64 - 256);
                        piece.extend_from_slice(vocab.token(id as u32).unwrap());
                    }
                    piece.truncate(n);
                    piece
                }
            };
            let skip = [u32::MAX, 256, 258][(rng.next_u64() % 3) as usize];
            let (mut got, mut want) = (vec![9], vec![9]);
            encode_skipping_rank(&vocab, &piece, skip, &mut got);
            scan_reference(&vocab, &piece, skip, &mut want);
            assert_eq!(got, want, "case {case}, piece {piece:?}, skip {skip}");
        }
    }
}

#[test]
fn a_character_joined_early_to_the_next_ones_first_byte_is_not_whole() {
    // "о" and the first byte of "р" are a token (256) before "р" (257)
    // and "о" (258). From the bytes, "р" forms first and "о" stays
    // apart from it; starting from a whole "о", 256 would take "р"'s
    // first byte.
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    tokens.extend([&b"\xd0\xbe\xd1"[..], b"\xd1\x80", b"\xd0\xbe"].map(<[u8]>::to_vec));
    let vocab =
        tables_of(Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap());
    let piece = "ор".as_bytes();
    assert_eq!(vocab.char_token(piece, 0), None);
    let mut ids = Vec::new();
    encode_skipping_rank(&vocab, piece, u32::MAX, &mut ids);
    assert_eq!(ids, [258, 257]);
}

#[test]
fn whole_characters_merge_as_their_bytes_would_on_random_vocabularies() {
    // Characters of two and three bytes, and ASCII beside them. The
    // tokens are random stretches of random text, so that they cut
    // characters anywhere and join them to their neighbours, at random
    // ids: some characters qualify as a first symbol, some do not.
    let units = ["п", "о", "р", "中", "文", "本", " ", "a"];
    let mut random = crate::bpe::random_text::RandomText::new(units, 5);
    let (mut whole_chars, mut pieces) = (0, 0);
    for case in 0..300 {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut new: Vec<Vec<u8>> = units.iter().map(|u| u.as_bytes().to_vec()).collect();
        for _ in 0..30 + case % 60 {
            new.push(random.token(4, 8));
        }
        // Random ids, or a character's parts mostly before it.
        let mut keyed: Vec<(usize, Vec<u8>)> = new
            .into_iter()
            .map(|t| match case % 3 {
                0 => (random.pick(64), t),
                _ => (t.len() * 4 + random.pick(12), t),
            })
            .collect();
        keyed.sort();
        let new = keyed.into_iter().map(|(_, t)| t);
        for token in new {
            if token.len() >= 2 && !tokens.contains(&token) {
                tokens.push(token);
            }
        }
        let vocab =
            tables_of(Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap());
        for _ in 0..30 {
            let n = 1 + random.pick(70);
            let piece = random.text(n);
            pieces += 1;
            whole_chars +=
                usize::from((0..piece.len()).any(|i| vocab.char_token(&piece, i).is_some()));
            let (mut got, mut want) = (vec![9], vec![9]);
            encode_skipping_rank(&vocab, &piece, u32::MAX, &mut got);
            scan_reference(&vocab, &piece, u32::MAX, &mut want);
            assert_eq!(
                got,
                want,
                "case {case}, piece {:?}",
                String::from_utf8_lossy(&piece)
            );
        }
    }
    eprintln!("whole characters in {whole_chars} of {pieces} pieces");
    assert!(whole_chars * 4 > pieces, "{whole_chars} of {pieces}");
}

#[test]
fn windows_agree_with_merging_whole_on_random_vocabularies() {
    let mut rng = crate::util::rng::Rng::new(7);
    let mut naive_wrong = 0;
    for case in 0..400 {
        let vocab = random_vocab(&mut rng, case % 2 == 1);
        let len = 50 + (rng.next_u64() % 600) as usize;
        // Long runs of one byte now and then: the hardest seams.
        let text: Vec<u8> = (0..len)
            .map(|i| match (case / 2) % 3 {
                0 => b"abc"[(rng.next_u64() % 3) as usize],
                1 => b"ab"[(rng.next_u64() % 2) as usize],
                _ => b"aab"[(i / 7 + rng.next_u64() as usize % 2) % 3],
            })
            .collect();
        let mut whole = Vec::new();
        merge(&vocab, &text, u32::MAX, &mut None, &mut whole);
        for (window, overlap) in [(3, 0), (5, 1), (8, 0), (13, 4), (40, 16), (64, 64)] {
            let mut windows = vec![9];
            encode_in_windows(&vocab, &text, window, overlap, &mut windows);
            assert_eq!(windows[0], 9);
            assert_eq!(
                windows[1..],
                whole[..],
                "case {case}, window {window}+{overlap}"
            );
            // How often the exactness checks had work to do.
            let mut first_try = Vec::new();
            let mut start = 0;
            while start < text.len() {
                let end = (start + window + overlap).min(text.len());
                let mut ids = Vec::new();
                merge(&vocab, &text[start..end], u32::MAX, &mut None, &mut ids);
                let (count, bytes) = kept_of_window(&vocab, &ids, window, end == text.len());
                first_try.extend_from_slice(&ids[..count]);
                start += bytes;
            }
            naive_wrong += usize::from(first_try != whole);
        }
    }
    // Without the seam checks, naive windows would often be wrong.
    eprintln!("naive windows wrong in {naive_wrong} of 2400 runs");
    assert!(naive_wrong > 200, "{naive_wrong}");
}

#[test]
fn scan_and_heap_agree_on_long_pieces() {
    let v = vocab_with(&[
        (b"a", b"b"),
        (b"b", b"a"),
        (b"ab", b"a"),
        (b"a", b"ba"),
        (b"aba", b"b"),
    ]);
    let text: Vec<u8> = (0..300)
        .map(|i| if (i * 7 + i / 3) % 3 == 0 { b'a' } else { b'b' })
        .collect();
    let (scan, heap) = both(&v, &text);
    assert_eq!(scan, heap);
}

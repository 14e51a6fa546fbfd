//! Philip Gage's byte pair encoding ("A New Algorithm for Data Compression",
//! C Users Journal, February 1994): lossless compression that repeatedly
//! replaces the most frequent pair of adjacent bytes with a byte value the
//! data does not use, and keeps the table of replaced pairs to undo it.
//!
//! The rules, fixed so that the output is deterministic (the pure-Python
//! `bytepair.reference.gage.compress_block` follows them literally):
//!
//! - The input is cut into blocks of [`BLOCK_SIZE`] bytes, each compressed on
//!   its own with its own table. Gage used 5 KB blocks for the memory of his
//!   day; a block can give at most 255 codes, so smaller blocks adapt the codes
//!   to local statistics while larger ones spread each table over more data.
//!   64 KiB compressed our English and Japanese corpora best of 4, 16 and 64 KiB
//!   and 1 MiB, and keeps every position and count in a `u32`.
//! - A pair's count is the number of replacements a left-to-right pass would
//!   make: occurrences of (a, b) with a != b never overlap; a run of n equal
//!   bytes x holds (x, x) n / 2 times, rounded down (`AAA` once, `AAAA` twice).
//! - The winner has the highest count, ties to the smallest (left, right).
//!   Compression stops when the winner occurs fewer than three times (Gage's
//!   `THRESHOLD`: a table entry costs 3 bytes, and a pair that occurs twice
//!   saves only 2) or when no byte value is free.
//! - The code is the smallest byte value that neither occurs in the block's
//!   input nor is a code already (a byte that merely vanished from the data
//!   is still taken: the table gives every byte one meaning).
//!
//! The container (integers little-endian):
//!
//! ```text
//! header  "GAGE"  version (1 byte, = 1)  original length (u64)
//! block   original length n (u32, 1..=65536)
//!         pair count k (1 byte)
//!         k entries (code, left, right), 3 bytes each, in replacement order
//!         payload length m (u32, 1..=n), then the m payload bytes
//!         CRC-32 (zlib's) of the block's bytes from n to the payload's end
//! ```
//!
//! Blocks follow until the original length is reached; nothing may follow
//! them. An entry may refer only to literal bytes and to codes of earlier
//! entries, so expansion always ends; the expanded length is checked against n
//! before a byte is written. Every corruption of a single byte is caught (the
//! CRC, or the header checks), and each error names the byte offset.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::error::{Error, Result};
use crate::util::crc32::crc32;

pub const MAGIC: &[u8; 4] = b"GAGE";
pub const VERSION: u8 = 1;
/// The fewest occurrences a pair needs to be replaced: its table entry
/// costs 3 bytes, so a pair that occurs twice would make the output longer.
const MIN_COUNT: u32 = 3;

/// Bytes of input per block (the last block may be shorter).
pub const BLOCK_SIZE: usize = 1 << 16;
const HEADER_LEN: usize = 13;

const NONE: u32 = u32::MAX;

#[inline]
fn key(left: u8, right: u8) -> usize {
    (left as usize) << 8 | right as usize
}

/// Compresses `data` into the container described in the module documentation.
pub fn compress(data: &[u8]) -> Vec<u8> {
    compress_until(data, |_| true).unwrap_or_default()
}

/// [`compress`], asking `go_on(bytes done)` after each block whether to
/// continue (for progress and Ctrl-C); `None` once it says no.
pub fn compress_until(data: &[u8], mut go_on: impl FnMut(usize) -> bool) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(HEADER_LEN + data.len() / 2 + 64);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    let mut compressor = Compressor::new();
    let mut done = 0;
    for chunk in data.chunks(BLOCK_SIZE) {
        let (table, payload) = compressor.compress_block(chunk);
        let start = out.len();
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.push(table.len() as u8);
        for entry in &table {
            out.extend_from_slice(entry);
        }
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        let crc = crc32(&out[start..]);
        out.extend_from_slice(&crc.to_le_bytes());
        done += chunk.len();
        if !go_on(done) {
            return None;
        }
    }
    Some(out)
}

/// One block as a doubly linked list of symbols, with exact pair counts kept
/// up to date by each replacement (only the neighbours of a replaced pair
/// change), so a block costs O(n log n), not a rescan per replacement.
///
/// Pairs of two different bytes are counted by place. Pairs of equal bytes
/// are counted by run: each maximal run of x knows its length at both of its
/// ends (`run_len`, `run_end` = the other end), and contributes length / 2 to
/// the count of (x, x). Runs only ever lose bytes at their ends or are
/// replaced whole, and two runs of an old byte never meet (what separates
/// them stays or becomes a new code), so the ends are all that must be kept.
struct Compressor {
    sym: Vec<u8>,
    next: Vec<u32>,
    prev: Vec<u32>,
    alive: Vec<bool>,
    run_len: Vec<u32>,
    run_end: Vec<u32>,
    counts: Vec<u32>,
    /// Per pair, places where it may start, in no order; entries that went
    /// stale are skipped when read. Every current occurrence is listed.
    places: Vec<Vec<u32>>,
    /// (count, pair) candidates; an entry's count is at least the pair's
    /// current count, checked when it surfaces (as in `bpe::train`).
    heap: BinaryHeap<(u32, Reverse<u16>)>,
    grown: Vec<usize>,
}

impl Compressor {
    fn new() -> Self {
        Compressor {
            sym: Vec::new(),
            next: Vec::new(),
            prev: Vec::new(),
            alive: Vec::new(),
            run_len: Vec::new(),
            run_end: Vec::new(),
            counts: vec![0; 1 << 16],
            places: vec![Vec::new(); 1 << 16],
            heap: BinaryHeap::new(),
            grown: Vec::new(),
        }
    }

    /// The pair table (code, left, right) in replacement order, and the payload.
    fn compress_block(&mut self, data: &[u8]) -> (Vec<[u8; 3]>, Vec<u8>) {
        self.load(data);
        let mut used = [false; 256];
        for &b in data {
            used[b as usize] = true;
        }
        let mut table = Vec::new();
        while let Some(code) = (0..=255u8).find(|&b| !used[b as usize]) {
            let Some((count, pair)) = self.pop_best() else {
                break;
            };
            if count < MIN_COUNT {
                break;
            }
            used[code as usize] = true;
            self.replace(pair, code);
            debug_assert_eq!(self.counts[pair], 0, "every counted occurrence replaced");
            table.push([code, (pair >> 8) as u8, pair as u8]);
        }
        let mut payload = Vec::with_capacity(data.len());
        let mut p = if data.is_empty() { NONE } else { 0 };
        while p != NONE {
            payload.push(self.sym[p as usize]);
            p = self.next[p as usize];
        }
        (table, payload)
    }

    fn load(&mut self, data: &[u8]) {
        let n = data.len();
        self.sym.clear();
        self.sym.extend_from_slice(data);
        self.next.clear();
        self.next
            .extend((1..=n as u32).map(|i| if i as usize == n { NONE } else { i }));
        self.prev.clear();
        self.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
        self.alive.clear();
        self.alive.resize(n, true);
        self.run_len.clear();
        self.run_len.resize(n, 0);
        self.run_end.clear();
        self.run_end.resize(n, 0);
        self.counts.fill(0);
        for list in &mut self.places {
            list.clear();
        }
        let mut start = 0;
        for i in 0..n {
            if i + 1 < n {
                let k = key(data[i], data[i + 1]);
                self.places[k].push(i as u32);
                if data[i] != data[i + 1] {
                    self.counts[k] += 1;
                }
            }
            if i + 1 == n || data[i + 1] != data[i] {
                let len = (i + 1 - start) as u32;
                self.set_run(start as u32, i as u32, len);
                self.counts[key(data[i], data[i])] += len / 2;
                start = i + 1;
            }
        }
        let candidates: Vec<(u32, Reverse<u16>)> = (0..1 << 16)
            .filter(|&k| self.counts[k] > 0)
            .map(|k| (self.counts[k], Reverse(k as u16)))
            .collect();
        self.heap = BinaryHeap::from(candidates);
    }

    fn pop_best(&mut self) -> Option<(u32, usize)> {
        while let Some((count, Reverse(pair))) = self.heap.pop() {
            let current = self.counts[pair as usize];
            if current == count {
                return Some((count, pair as usize));
            }
            if current > 0 && current < count {
                self.heap.push((current, Reverse(pair)));
            }
            // current > count: a newer entry carries it already.
        }
        None
    }

    fn set_run(&mut self, first: u32, last: u32, len: u32) {
        self.run_len[first as usize] = len;
        self.run_len[last as usize] = len;
        self.run_end[first as usize] = last;
        self.run_end[last as usize] = first;
    }

    /// Takes the first byte `p` off its run (before the list is relinked).
    fn shrink_left(&mut self, p: u32) {
        let len = self.run_len[p as usize];
        if len > 1 {
            let last = self.run_end[p as usize];
            self.set_run(self.next[p as usize], last, len - 1);
            let x = self.sym[p as usize];
            self.counts[key(x, x)] -= len.is_multiple_of(2) as u32;
        }
    }

    /// Takes the last byte `p` off its run (before the list is relinked).
    fn shrink_right(&mut self, p: u32) {
        let len = self.run_len[p as usize];
        if len > 1 {
            let first = self.run_end[p as usize];
            self.set_run(first, self.prev[p as usize], len - 1);
            let x = self.sym[p as usize];
            self.counts[key(x, x)] -= len.is_multiple_of(2) as u32;
        }
    }

    /// Counts an adjacency of two different bytes that disappears.
    fn drop_pair(&mut self, left: u8, right: u8) {
        if left != right {
            self.counts[key(left, right)] -= 1;
        }
    }

    /// Counts a new adjacency of two different bytes starting at `place`.
    fn add_pair(&mut self, place: u32, left: u8, right: u8) {
        let k = key(left, right);
        self.counts[k] += 1;
        self.places[k].push(place);
        self.grown.push(k);
    }

    /// Replaces every occurrence of `pair`, left to right without overlap, by `code`.
    fn replace(&mut self, pair: usize, code: u8) {
        let (a, b) = ((pair >> 8) as u8, pair as u8);
        let mut places = std::mem::take(&mut self.places[pair]);
        // Left to right, so that a run of a == b is taken two by two from its start.
        places.sort_unstable();
        for &p in &places {
            if !self.alive[p as usize] || self.sym[p as usize] != a {
                continue;
            }
            let q = self.next[p as usize];
            if q == NONE || self.sym[q as usize] != b {
                continue;
            }
            let (o, r) = (self.prev[p as usize], self.next[q as usize]);
            if o != NONE {
                self.drop_pair(self.sym[o as usize], a);
            }
            self.drop_pair(a, b);
            if r != NONE {
                self.drop_pair(b, self.sym[r as usize]);
            }
            // p ends its run of a on the right (a != b) or starts it (a == b:
            // earlier occurrences in the run are replaced already); q then
            // starts the rest of its run either way.
            if a == b {
                self.shrink_left(p);
            } else {
                self.shrink_right(p);
            }
            self.shrink_left(q);

            self.sym[p as usize] = code;
            self.next[p as usize] = r;
            if r != NONE {
                self.prev[r as usize] = p;
            }
            self.alive[q as usize] = false;

            // The code is new to the data, so it can only meet the code of
            // the occurrence just before (`ABAB` -> two codes in a row).
            if o != NONE && self.sym[o as usize] == code {
                let first = self.run_end[o as usize];
                let len = self.run_len[o as usize] + 1;
                self.set_run(first, p, len);
                let k = key(code, code);
                self.places[k].push(o);
                if len.is_multiple_of(2) {
                    self.counts[k] += 1;
                    self.grown.push(k);
                }
            } else {
                self.set_run(p, p, 1);
                if o != NONE {
                    self.add_pair(o, self.sym[o as usize], code);
                }
            }
            if r != NONE {
                self.add_pair(p, code, self.sym[r as usize]);
            }
        }
        // Keep the allocation for the next block.
        places.clear();
        self.places[pair] = places;
        self.grown.sort_unstable();
        self.grown.dedup();
        for &k in &self.grown {
            if self.counts[k] > 0 {
                self.heap.push((self.counts[k], Reverse(k as u16)));
            }
        }
        self.grown.clear();
    }
}

/// Undoes [`compress`]. Corrupt or truncated input is an
/// [`Error::CorruptCompressed`] naming the problem and its byte offset.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>> {
    let mut reader = Reader { data, pos: 0 };
    let magic = reader.take(4, "the magic bytes")?;
    if magic != MAGIC {
        return Err(corrupt(format!(
            "not Gage-compressed data: it starts with {magic:?}, not b\"GAGE\""
        )));
    }
    let version = reader.take(1, "the version")?[0];
    if version != VERSION {
        return Err(corrupt(format!(
            "format version {version} at byte 4 is not supported (only {VERSION})"
        )));
    }
    let total = reader.u64("the original length")?;
    // Each block takes at least 14 bytes and gives at most BLOCK_SIZE.
    let most = ((data.len() - HEADER_LEN) / 14) as u64 * BLOCK_SIZE as u64;
    if total > most {
        return Err(corrupt(format!(
            "the header (byte 5) claims {total} original bytes, but {} bytes of blocks can \
             hold at most {most}",
            data.len() - HEADER_LEN
        )));
    }
    // Not all of `total` up front: forged input may claim far more than it holds.
    let mut out = Vec::with_capacity(total.min(8 * data.len() as u64) as usize);
    let mut block = 0;
    while (out.len() as u64) < total {
        decode_block(&mut reader, block, total, &mut out)?;
        block += 1;
    }
    if reader.pos < data.len() {
        return Err(corrupt(format!(
            "{} unexpected bytes after the last block, at byte {}",
            data.len() - reader.pos,
            reader.pos
        )));
    }
    Ok(out)
}

fn corrupt(message: String) -> Error {
    Error::CorruptCompressed(message)
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let left = self.data.len() - self.pos;
        if left < len {
            return Err(corrupt(format!(
                "truncated at byte {}: {what} needs {len} bytes, {left} left",
                self.pos
            )));
        }
        let bytes = &self.data[self.pos..self.pos + len];
        self.pos += len;
        Ok(bytes)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let bytes = self.take(4, what)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(bytes))
    }
}

/// Marks a byte value that no entry of the table defines.
const LITERAL: usize = usize::MAX;

fn decode_block(reader: &mut Reader, block: usize, total: u64, out: &mut Vec<u8>) -> Result<()> {
    let start = reader.pos;
    let at = format!("block {block} (at byte {start})");
    let n = reader.u32(&format!("the length of {at}"))?;
    if n == 0 || n as usize > BLOCK_SIZE {
        return Err(corrupt(format!(
            "{at}: length {n} is not between 1 and {BLOCK_SIZE}"
        )));
    }
    if out.len() as u64 + n as u64 > total {
        return Err(corrupt(format!(
            "{at}: its {n} bytes would make {} in all, more than the {total} the header claims",
            out.len() as u64 + n as u64
        )));
    }
    let k = reader.take(1, &format!("the pair count of {at}"))?[0] as usize;
    let table = reader.take(3 * k, &format!("the pair table of {at}"))?;
    let m = reader.u32(&format!("the payload length of {at}"))?;
    if m == 0 || m > n {
        return Err(corrupt(format!(
            "{at}: payload length {m} at byte {} is not between 1 and the block's length {n}",
            reader.pos - 4
        )));
    }
    let payload = reader.take(m as usize, &format!("the payload of {at}"))?;
    let end = reader.pos;
    let stored = reader.u32(&format!("the checksum of {at}"))?;
    let computed = crc32(&reader.data[start..end]);
    if stored != computed {
        return Err(corrupt(format!(
            "{at}: checksum mismatch over bytes {start}..{end} (stored {stored:#010x}, \
             computed {computed:#010x})"
        )));
    }

    // Which entry defines each code; checked before anything is expanded.
    let mut entry_of = [LITERAL; 256];
    for (j, entry) in table.chunks_exact(3).enumerate() {
        let code = entry[0] as usize;
        if entry_of[code] != LITERAL {
            return Err(corrupt(format!(
                "{at}: byte {code} is defined twice in the pair table (entries {} and {j}, \
                 at bytes {} and {})",
                entry_of[code],
                start + 5 + 3 * entry_of[code],
                start + 5 + 3 * j
            )));
        }
        entry_of[code] = j;
    }
    let mut len = [1u64; 256];
    for (j, entry) in table.chunks_exact(3).enumerate() {
        for &side in &entry[1..] {
            let defined = entry_of[side as usize];
            if defined != LITERAL && defined >= j {
                return Err(corrupt(format!(
                    "{at}: pair table entry {j} (at byte {}) defines {} from {side}, which is \
                     defined by entry {defined}, not an earlier one (the table would loop)",
                    start + 5 + 3 * j,
                    entry[0]
                )));
            }
        }
        len[entry[0] as usize] = len[entry[1] as usize].saturating_add(len[entry[2] as usize]);
    }
    let expanded = payload
        .iter()
        .fold(0u64, |sum, &s| sum.saturating_add(len[s as usize]));
    if expanded != n as u64 {
        return Err(corrupt(format!(
            "{at}: the payload expands to {expanded} bytes, but the block's length is {n}"
        )));
    }

    // Bounded: `expanded` bytes exactly, and the stack is at most 256 deep
    // because every entry refers to earlier ones only.
    let mut stack: Vec<u8> = Vec::with_capacity(256);
    for &s in payload {
        stack.push(s);
        while let Some(symbol) = stack.pop() {
            let j = entry_of[symbol as usize];
            if j == LITERAL {
                out.push(symbol);
            } else {
                stack.push(table[3 * j + 2]);
                stack.push(table[3 * j + 1]);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// The algorithm as written in the module docs, recounting every pair
    /// before each replacement: what the incremental counts must equal.
    fn naive(data: &[u8]) -> (Vec<[u8; 3]>, Vec<u8>) {
        let mut symbols = data.to_vec();
        let mut used = [false; 256];
        for &b in data {
            used[b as usize] = true;
        }
        let mut table = Vec::new();
        while let Some(code) = (0..=255u8).find(|&b| !used[b as usize]) {
            let mut counts = vec![0u32; 1 << 16];
            let mut last_start: Vec<Option<usize>> = vec![None; 1 << 16];
            for i in 0..symbols.len().saturating_sub(1) {
                let k = key(symbols[i], symbols[i + 1]);
                // Skip an occurrence overlapping the one counted just before (`xxx`).
                if last_start[k].is_none_or(|s| s + 1 != i) {
                    counts[k] += 1;
                    last_start[k] = Some(i);
                }
            }
            // Highest count, ties to the smallest pair.
            let (pair, &count) = counts
                .iter()
                .enumerate()
                .max_by_key(|&(k, &c)| (c, Reverse(k)))
                .unwrap();
            if count < MIN_COUNT {
                break;
            }
            let (a, b) = ((pair >> 8) as u8, pair as u8);
            let mut replaced = Vec::with_capacity(symbols.len());
            let mut i = 0;
            while i < symbols.len() {
                if i + 1 < symbols.len() && symbols[i] == a && symbols[i + 1] == b {
                    replaced.push(code);
                    i += 2;
                } else {
                    replaced.push(symbols[i]);
                    i += 1;
                }
            }
            symbols = replaced;
            used[code as usize] = true;
            table.push([code, a, b]);
        }
        (table, symbols)
    }

    fn random_bytes(rng: &mut Rng, len: usize, alphabet: u64) -> Vec<u8> {
        (0..len)
            .map(|_| (rng.next_u64() % alphabet) as u8)
            .collect()
    }

    fn roundtrip(data: &[u8]) -> Vec<u8> {
        let packed = compress(data);
        assert_eq!(decompress(&packed).unwrap(), data);
        packed
    }

    #[test]
    fn spec_example() {
        let (table, payload) = Compressor::new().compress_block(b"ABABABCDEF");
        assert_eq!(table, vec![[0, b'A', b'B']]);
        assert_eq!(payload, b"\0\0\0CDEF");
        roundtrip(b"ABABABCDEF");
    }

    #[test]
    fn runs_count_without_overlap() {
        let mut c = Compressor::new();
        // `AAAAA` holds (A, A) twice, too few to pay for a table entry.
        assert_eq!(c.compress_block(b"AAAAA"), (vec![], b"AAAAA".to_vec()));
        assert_eq!(
            c.compress_block(b"AAAAAAA"),
            (vec![[0, b'A', b'A']], vec![0, 0, 0, b'A'])
        );
        // 2^17 bytes: 14 doublings in each 64 KiB block, four bytes of payload each.
        let packed = roundtrip(&vec![b'a'; 1 << 17]);
        assert!(
            packed.len() < 2 * (14 + 48 + 4) + HEADER_LEN,
            "{}",
            packed.len()
        );
    }

    #[test]
    fn incremental_counts_equal_recounting() {
        let mut rng = Rng::new(7);
        let mut c = Compressor::new();
        for round in 0..400 {
            let len = (rng.next_u64() % 300) as usize;
            let alphabet = [2, 3, 5, 30, 256][round % 5];
            let data = random_bytes(&mut rng, len, alphabet);
            assert_eq!(c.compress_block(&data), naive(&data), "{data:?}");
            roundtrip(&data);
        }
        let text = b"the cat sat on the mat; the dog sat on the log. aaaa bbbbbb abab".repeat(20);
        assert_eq!(c.compress_block(&text), naive(&text));
    }

    #[test]
    fn edge_inputs_roundtrip() {
        assert_eq!(roundtrip(b"").len(), HEADER_LEN);
        roundtrip(b"x");
        let all: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        let (table, _) = Compressor::new().compress_block(&all);
        assert!(table.is_empty(), "no byte value is free");
        roundtrip(&all);
        let mut rng = Rng::new(1);
        roundtrip(&random_bytes(&mut rng, 3 * BLOCK_SIZE + 17, 256));
        roundtrip(&random_bytes(&mut rng, BLOCK_SIZE, 4));
    }

    fn error_of(data: &[u8]) -> String {
        match decompress(data) {
            Err(Error::CorruptCompressed(message)) => message,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn every_truncation_and_every_flip_is_an_error() {
        let packed = compress(&b"abracadabra, abracadabra! ".repeat(4));
        for cut in 0..packed.len() {
            error_of(&packed[..cut]);
        }
        for i in 0..packed.len() {
            for flip in [0x01, 0x80, 0xff] {
                let mut bad = packed.clone();
                bad[i] ^= flip;
                error_of(&bad);
            }
        }
        let mut longer = packed.clone();
        longer.push(0);
        assert!(error_of(&longer).contains("after the last block"));
    }

    /// A block with a valid checksum around whatever table and payload.
    fn forged(n: u32, table: &[[u8; 3]], payload: &[u8]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(VERSION);
        out.extend_from_slice(&(n as u64).to_le_bytes());
        let mut block = n.to_le_bytes().to_vec();
        block.push(table.len() as u8);
        block.extend(table.iter().flatten());
        block.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        block.extend_from_slice(payload);
        let crc = crc32(&block);
        out.extend(block);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn forged_tables_are_rejected() {
        assert_eq!(
            decompress(&forged(2, &[[0, b'a', b'b']], &[0])).unwrap(),
            b"ab"
        );
        let message = error_of(&forged(2, &[[0, 0, b'b']], &[0]));
        assert!(message.contains("would loop"), "{message}");
        let message = error_of(&forged(4, &[[0, 1, 1], [1, b'a', b'b']], &[0]));
        assert!(message.contains("would loop"), "{message}");
        let message = error_of(&forged(2, &[[0, b'a', b'b'], [0, b'c', b'd']], &[0]));
        assert!(message.contains("defined twice"), "{message}");
        // 2^200 bytes claimed by a chain of doublings: refused before expanding.
        let chain: Vec<[u8; 3]> = (0..200u8)
            .map(|i| {
                if i == 0 {
                    [0, 255, 255]
                } else {
                    [i, i - 1, i - 1]
                }
            })
            .collect();
        let message = error_of(&forged(100, &chain, &[199]));
        assert!(message.contains("expands to"), "{message}");
    }

    #[test]
    fn bad_headers_name_the_problem() {
        assert!(error_of(b"GZIP\x01").contains("not Gage-compressed"));
        assert!(error_of(b"GAGE\x02").contains("version 2"));
        let mut huge = compress(b"hello hello");
        huge[5..13].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(error_of(&huge).contains("claims"));
        let mut short = compress(b"hello hello");
        short[5..13].copy_from_slice(&3u64.to_le_bytes());
        assert!(error_of(&short).contains("more than the 3"));
        assert!(error_of(&compress(b"hi")[..10]).contains("truncated at byte 5"));
    }

    #[test]
    fn several_blocks_round_trip() {
        let mut rng = Rng::new(3);
        // English-like: words from a small vocabulary, so pairs repeat.
        let words = [
            "the ", "of ", "and ", "to ", "in ", "compress", "ion ", "pair ", "byte ", "table ",
        ];
        let mut text = Vec::new();
        while text.len() < 200_000 {
            text.extend_from_slice(words[(rng.next_u64() % 10) as usize].as_bytes());
        }
        for data in [text, random_bytes(&mut rng, 200_000, 256)] {
            let packed = compress(&data);
            assert_eq!(decompress(&packed).unwrap(), data);
        }
    }
}

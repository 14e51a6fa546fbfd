//! Training checkpoints: the whole state of the BPE trainer between two
//! merges, so that a run stopped at any merge resumes to the same merges.
//!
//! The state after merge k is a function of the pre-token counts and the
//! first k merges alone: the tokens, the merges with their counts, and every
//! distinct pre-token as its current symbols with its count. The pair table
//! and the candidate heap are rebuilt from the words on resume (one pass);
//! the heap's order is total (count, then bytes), so the rebuilt heap picks
//! the same pairs as the one it replaces.
//!
//! Layout, little-endian, written to `PATH.tmp` then renamed over `PATH`:
//!
//! ```text
//! b"BPCKPT01"  u32 version (1)
//! u32 meta length, meta (UTF-8; the caller's settings, e.g. JSON)
//! u32 special tokens, u32 base symbols, u64 min_frequency,
//! u64 max_token_length (0: none), u8 largest_ties
//! u64 tokens,  each: u32 length, bytes
//! u64 merges,  each: u32 left id, u32 right id, u64 count
//! u64 words,   each: u64 count, u32 symbols
//! u64 symbols, each: u32 id (the words' symbols, word after word)
//! u32 CRC-32 of every byte before it
//! ```

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use super::{add_pairs, Word};
use crate::error::{Error, Result};
use crate::util::crc32::Crc32;

const MAGIC: &[u8; 8] = b"BPCKPT01";
const VERSION: u32 = 1;

/// The trainer's settings that a resumed run must keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub n_special: u32,
    pub n_base: u32,
    pub min_frequency: u64,
    pub max_token_length: Option<u64>,
    pub largest_ties: bool,
}

/// The trainer's state as read back.
pub(super) struct State {
    pub meta: String,
    pub settings: Settings,
    pub tokens: Vec<Vec<u8>>,
    pub merges: Vec<(u32, u32)>,
    pub counts: Vec<u64>,
    pub words: Vec<Word>,
    pub symbols: Vec<u32>,
}

/// The trainer's state as borrowed for writing (word `i`'s current symbols
/// are `symbols[start..start + len]` of its entry).
pub(super) struct StateRef<'a, T: AsRef<[u8]>> {
    pub meta: &'a str,
    pub settings: &'a Settings,
    pub tokens: &'a [T],
    pub merges: &'a [(u32, u32)],
    pub counts: &'a [u64],
    pub words: &'a [Word],
    pub symbols: &'a [u32],
}

impl<T: AsRef<[u8]>> StateRef<'_, T> {
    fn word_symbols(&self, word: &Word) -> &[u32] {
        &self.symbols[word.start as usize..(word.start + word.len) as usize]
    }
}

fn io_error(path: &Path, err: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: err.to_string(),
    }
}

/// A writer that keeps the CRC of what went through it.
struct Checked<W: Write> {
    inner: W,
    crc: Crc32,
}

impl<W: Write> Checked<W> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.crc = self.crc.update(bytes);
        self.inner.write_all(bytes)
    }
    fn u8(&mut self, v: u8) -> std::io::Result<()> {
        self.put(&[v])
    }
    fn u32(&mut self, v: u32) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) -> std::io::Result<()> {
        self.put(&v.to_le_bytes())
    }
}

fn write_body<W: Write, T: AsRef<[u8]>>(
    out: &mut Checked<W>,
    state: &StateRef<'_, T>,
) -> std::io::Result<()> {
    out.put(MAGIC)?;
    out.u32(VERSION)?;
    out.u32(state.meta.len() as u32)?;
    out.put(state.meta.as_bytes())?;
    let s = state.settings;
    out.u32(s.n_special)?;
    out.u32(s.n_base)?;
    out.u64(s.min_frequency)?;
    out.u64(s.max_token_length.unwrap_or(0))?;
    out.u8(s.largest_ties as u8)?;
    out.u64(state.tokens.len() as u64)?;
    for token in state.tokens {
        out.u32(token.as_ref().len() as u32)?;
        out.put(token.as_ref())?;
    }
    out.u64(state.merges.len() as u64)?;
    for (&(left, right), &count) in state.merges.iter().zip(state.counts) {
        out.u32(left)?;
        out.u32(right)?;
        out.u64(count)?;
    }
    out.u64(state.words.len() as u64)?;
    let mut n_symbols = 0u64;
    for word in state.words {
        out.u64(word.count)?;
        out.u32(word.len)?;
        n_symbols += word.len as u64;
    }
    out.u64(n_symbols)?;
    for word in state.words {
        for &symbol in state.word_symbols(word) {
            out.u32(symbol)?;
        }
    }
    let crc = out.crc.finish();
    out.inner.write_all(&crc.to_le_bytes())
}

/// Writes `state` to `path` through a temporary file, so that a crash while
/// writing leaves the previous checkpoint whole.
pub(super) fn write<T: AsRef<[u8]>>(path: &Path, state: &StateRef<'_, T>) -> Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = Path::new(&temporary);
    let file = File::create(temporary).map_err(|e| io_error(temporary, e))?;
    let mut out = Checked {
        inner: BufWriter::with_capacity(1 << 20, file),
        crc: Crc32::new(),
    };
    write_body(&mut out, state).map_err(|e| io_error(temporary, e))?;
    let file = out
        .inner
        .into_inner()
        .map_err(|e| io_error(temporary, e.into_error()))?;
    file.sync_all().map_err(|e| io_error(temporary, e))?;
    std::fs::rename(temporary, path).map_err(|e| io_error(path, e))
}

/// A reader that keeps the CRC and the offset of what it read, and names the
/// offset in every error.
struct Reader<'p, R: Read> {
    inner: R,
    crc: Crc32,
    offset: u64,
    path: &'p Path,
}

impl<R: Read> Reader<'_, R> {
    fn corrupt(&self, problem: impl Into<String>) -> Error {
        Error::CorruptCheckpoint {
            path: self.path.display().to_string(),
            offset: self.offset,
            problem: problem.into(),
        }
    }

    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        match self.inner.read_exact(buf) {
            Ok(()) => {
                self.crc = self.crc.update(buf);
                self.offset += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(self.corrupt("truncated: the file ends inside the checkpoint"))
            }
            Err(e) => Err(io_error(self.path, e)),
        }
    }
    fn u8(&mut self) -> Result<u8> {
        let mut b = [0u8; 1];
        self.fill(&mut b)?;
        Ok(b[0])
    }
    fn u32(&mut self) -> Result<u32> {
        let mut b = [0u8; 4];
        self.fill(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64> {
        let mut b = [0u8; 8];
        self.fill(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    /// A count of items of at least `item_bytes` bytes each, checked against
    /// the file size so that a corrupt count cannot ask for huge memory.
    fn count(&mut self, item_bytes: u64, file_len: u64, what: &str) -> Result<usize> {
        let n = self.u64()?;
        let left = file_len.saturating_sub(self.offset);
        if n.saturating_mul(item_bytes) > left {
            return Err(self.corrupt(format!(
                "{n} {what} cannot fit in the {left} bytes left: the file is truncated or damaged"
            )));
        }
        Ok(n as usize)
    }
    fn bytes(&mut self, len: usize, file_len: u64, what: &str) -> Result<Vec<u8>> {
        if len as u64 > file_len.saturating_sub(self.offset) {
            return Err(self.corrupt(format!("{what} of {len} bytes runs past the end")));
        }
        let mut buf = vec![0u8; len];
        self.fill(&mut buf)?;
        Ok(buf)
    }
}

/// The settings and caller's meta of a checkpoint, read from its head alone.
pub fn read_head(path: &Path) -> Result<(String, Settings, usize)> {
    let (mut reader, file_len) = open(path)?;
    let (meta, settings) = head(&mut reader, file_len)?;
    // The number of merges sits after the tokens: skip those.
    let n_tokens = reader.count(4, file_len, "tokens")?;
    for _ in 0..n_tokens {
        let len = reader.u32()? as usize;
        reader.bytes(len, file_len, "a token")?;
    }
    let n_merges = reader.count(16, file_len, "merges")?;
    Ok((meta, settings, n_merges))
}

fn open(path: &Path) -> Result<(Reader<'_, BufReader<File>>, u64)> {
    let file = File::open(path).map_err(|e| io_error(path, e))?;
    let file_len = file.metadata().map_err(|e| io_error(path, e))?.len();
    let reader = Reader {
        inner: BufReader::with_capacity(1 << 20, file),
        crc: Crc32::new(),
        offset: 0,
        path,
    };
    Ok((reader, file_len))
}

fn head<R: Read>(reader: &mut Reader<'_, R>, file_len: u64) -> Result<(String, Settings)> {
    let mut magic = [0u8; 8];
    reader.fill(&mut magic)?;
    if &magic != MAGIC {
        reader.offset = 0;
        return Err(reader.corrupt("not a bytepair training checkpoint (bad magic)"));
    }
    let version = reader.u32()?;
    if version != VERSION {
        return Err(reader.corrupt(format!(
            "checkpoint version {version}; this bytepair reads version {VERSION}"
        )));
    }
    let meta_len = reader.u32()? as usize;
    let meta = reader.bytes(meta_len, file_len, "the settings")?;
    let meta = String::from_utf8(meta).map_err(|_| reader.corrupt("settings are not UTF-8"))?;
    let n_special = reader.u32()?;
    let n_base = reader.u32()?;
    let min_frequency = reader.u64()?;
    if min_frequency == 0 {
        return Err(reader.corrupt("min_frequency is 0; training needs at least 1"));
    }
    let max_token_length = Some(reader.u64()?).filter(|&m| m > 0);
    let largest_ties = match reader.u8()? {
        0 => false,
        1 => true,
        other => return Err(reader.corrupt(format!("tie rule flag {other} is not 0 or 1"))),
    };
    let settings = Settings {
        n_special,
        n_base,
        min_frequency,
        max_token_length,
        largest_ties,
    };
    Ok((meta, settings))
}

/// Checks a whole checkpoint: structure, id ranges and checksum.
pub fn verify(path: &Path) -> Result<()> {
    read(path).map(drop)
}

/// Reads and checks a whole checkpoint: structure, id ranges and checksum.
pub(super) fn read(path: &Path) -> Result<State> {
    let (mut reader, file_len) = open(path)?;
    let (meta, settings) = head(&mut reader, file_len)?;
    let n_tokens = reader.count(4, file_len, "tokens")?;
    let n_fixed = settings.n_special as usize + settings.n_base as usize;
    if n_tokens < n_fixed {
        return Err(reader.corrupt(format!(
            "{n_tokens} tokens, fewer than the {n_fixed} special and base symbols"
        )));
    }
    let mut tokens = Vec::with_capacity(n_tokens);
    for _ in 0..n_tokens {
        let len = reader.u32()? as usize;
        tokens.push(reader.bytes(len, file_len, "a token")?);
    }
    let n_merges = reader.count(16, file_len, "merges")?;
    let mut merges = Vec::with_capacity(n_merges);
    let mut counts = Vec::with_capacity(n_merges);
    for rank in 0..n_merges {
        let (left, right, count) = (reader.u32()?, reader.u32()?, reader.u64()?);
        if left as usize >= n_tokens || right as usize >= n_tokens {
            return Err(reader.corrupt(format!("merge {rank} names a token past {n_tokens}")));
        }
        merges.push((left, right));
        counts.push(count);
    }
    let n_words = reader.count(12, file_len, "words")?;
    let mut words = Vec::with_capacity(n_words);
    let mut total = 0u64;
    // Sum over words of count × (symbols − 1): the total of all pair counts,
    // which the trainer holds in u64s (see `train::check_pair_total`).
    let mut pair_total = 0u64;
    for w in 0..n_words {
        let (count, len) = (reader.u64()?, reader.u32()?);
        if count == 0 {
            return Err(reader.corrupt(format!("word {w} has count 0; every word occurs")));
        }
        pair_total = match add_pairs(pair_total, count, len) {
            Some(t) => t,
            None => {
                return Err(reader.corrupt(format!(
                    "up to word {w}, the pair counts add up to more than {}",
                    u64::MAX
                )))
            }
        };
        let Ok(start) = u32::try_from(total) else {
            return Err(reader.corrupt("the words hold more than 4 Gi symbols"));
        };
        total += len as u64;
        words.push(Word { start, len, count });
    }
    let n_symbols = reader.count(4, file_len, "symbols")?;
    if n_symbols as u64 != total {
        return Err(reader.corrupt(format!("{n_symbols} symbols, but the words hold {total}")));
    }
    let mut symbols = Vec::with_capacity(n_symbols);
    let mut buf = vec![0u8; 4 << 16];
    let mut left = n_symbols;
    while left > 0 {
        let take = left.min(1 << 16);
        let chunk = &mut buf[..4 * take];
        reader.fill(chunk)?;
        for raw in chunk.chunks_exact(4) {
            let id = u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]);
            if (id as usize) < settings.n_special as usize || id as usize >= n_tokens {
                return Err(reader.corrupt(format!("symbol id {id} is not a mergeable token")));
            }
            symbols.push(id);
        }
        left -= take;
    }
    let expected = reader.crc.finish();
    let mut stored = [0u8; 4];
    reader
        .inner
        .read_exact(&mut stored)
        .map_err(|_| reader.corrupt("truncated: the checksum is missing"))?;
    if u32::from_le_bytes(stored) != expected {
        return Err(reader.corrupt("checksum mismatch: the checkpoint was changed or damaged"));
    }
    if reader
        .inner
        .read(&mut [0u8; 1])
        .map_err(|e| io_error(path, e))?
        != 0
    {
        return Err(reader.corrupt("bytes after the checksum"));
    }
    Ok(State {
        meta,
        settings,
        tokens,
        merges,
        counts,
        words,
        symbols,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::corpus;
    use super::super::{resume, train, Checkpointing, TrainConfig};
    use super::*;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("bytepair-ckpt-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// Writes a checkpoint of the 256 byte tokens, no merges, and `words`
    /// (count, symbols) with no special tokens; returns where the words start.
    fn write_state(path: &Path, min_frequency: u64, words: &[(u64, &[u32])]) -> u64 {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut symbols = Vec::new();
        let mut entries = Vec::new();
        for &(count, word) in words {
            let (start, len) = (symbols.len() as u32, word.len() as u32);
            entries.push(Word { start, len, count });
            symbols.extend_from_slice(word);
        }
        let settings = Settings {
            n_special: 0,
            n_base: 256,
            min_frequency,
            max_token_length: None,
            largest_ties: false,
        };
        write(
            path,
            &StateRef {
                meta: "",
                settings: &settings,
                tokens: &tokens,
                merges: &[],
                counts: &[],
                words: &entries,
                symbols: &symbols,
            },
        )
        .unwrap();
        // head (41 bytes with no meta), tokens, merges, the number of words.
        41 + 8 + 256 * 5 + 8 + 8
    }

    fn corrupt_at(path: &Path) -> (u64, String) {
        match read(path) {
            Err(Error::CorruptCheckpoint {
                offset, problem, ..
            }) => (offset, problem),
            Err(other) => panic!("expected CorruptCheckpoint, got {other}"),
            Ok(_) => panic!("expected CorruptCheckpoint, got a state"),
        }
    }

    fn resume_err(path: &Path) -> Error {
        resume(path, 300, None, &mut |_: usize, _: usize| true).unwrap_err()
    }

    #[test]
    fn a_good_state_reads_back() {
        let path = scratch("good.bpck");
        write_state(&path, 2, &[(5, &[97, 98, 97, 98]), (3, &[98, 97])]);
        let state = read(&path).unwrap();
        assert_eq!(state.settings.min_frequency, 2);
        assert_eq!(state.words.len(), 2);
        assert_eq!(state.symbols, [97, 98, 97, 98, 98, 97]);
    }

    #[test]
    fn min_frequency_zero_is_corrupt() {
        let path = scratch("min-frequency-0.bpck");
        write_state(&path, 0, &[(5, &[97, 98, 97, 98])]);
        let (offset, problem) = corrupt_at(&path);
        assert_eq!(offset, 32, "just after min_frequency");
        assert!(problem.contains("min_frequency is 0"), "{problem}");
        assert!(matches!(resume_err(&path), Error::CorruptCheckpoint { .. }));
        assert!(read_head(&path).is_err());
    }

    #[test]
    fn a_word_with_count_zero_is_corrupt() {
        let path = scratch("count-0.bpck");
        let words_at = write_state(&path, 1, &[(5, &[97, 98, 97]), (0, &[97, 98, 97, 98])]);
        let (offset, problem) = corrupt_at(&path);
        assert_eq!(offset, words_at + 2 * 12, "just after word 1's entry");
        assert!(problem.contains("word 1 has count 0"), "{problem}");
        let shown = resume_err(&path).to_string();
        assert!(shown.contains(&format!("byte {offset}")), "{shown}");
    }

    #[test]
    fn pair_counts_past_u64_are_corrupt() {
        let path = scratch("overflow.bpck");
        let words_at = write_state(&path, 1, &[(1, &[97, 98]), (1 << 63, &[97, 98, 97, 98])]);
        let (offset, problem) = corrupt_at(&path);
        assert_eq!(offset, words_at + 2 * 12);
        assert!(problem.contains("pair counts add up"), "{problem}");
        assert!(matches!(resume_err(&path), Error::CorruptCheckpoint { .. }));
        // Just within the bound: reads and resumes.
        write_state(
            &path,
            1,
            &[(1, &[97, 98]), ((u64::MAX - 1) / 3, &[97, 98, 97, 98])],
        );
        read(&path).unwrap();
        resume(&path, 258, None, &mut |_: usize, _: usize| true).unwrap();
    }

    #[test]
    fn interrupted_then_resumed_equals_uninterrupted() {
        let config = TrainConfig::new(340, vec!["<s>".into()], 1);
        let whole = train(corpus(), &config, &mut |_: usize, _: usize| true).unwrap();
        for stop_at in [1, 7, 40] {
            let path = scratch(&format!("run-{stop_at}.bpck"));
            let mut config = config.clone();
            config.checkpoint = Some(Checkpointing {
                path: path.clone(),
                meta: "{\"x\": 1}".into(),
            });
            let stopped = train(corpus(), &config, &mut |done: usize, _: usize| {
                done < stop_at
            });
            assert!(matches!(stopped, Err(Error::Interrupted)));
            let (head_meta, _, merges_done) = read_head(&path).unwrap();
            assert_eq!((head_meta.as_str(), merges_done), ("{\"x\": 1}", stop_at));
            let (resumed, meta) = resume(
                &path,
                340,
                Some("{\"x\": 1}".into()),
                &mut |_: usize, _: usize| true,
            )
            .unwrap();
            assert_eq!(meta, "{\"x\": 1}");
            assert_eq!(resumed.merges, whole.merges);
            assert_eq!(resumed.counts, whole.counts);
            assert_eq!(resumed.tokens, whole.tokens);
            assert_eq!(resumed.stop, whole.stop);
        }
    }

    #[test]
    fn a_finished_checkpoint_extends_to_a_larger_vocabulary() {
        let path = scratch("extend.bpck");
        let mut config = TrainConfig::new(300, vec![], 1);
        config.checkpoint = Some(Checkpointing {
            path: path.clone(),
            meta: String::new(),
        });
        train(corpus(), &config, &mut |_: usize, _: usize| true).unwrap();
        let (more, _) = resume(&path, 330, None, &mut |_: usize, _: usize| true).unwrap();
        let direct = train(
            corpus(),
            &TrainConfig::new(330, vec![], 1),
            &mut |_: usize, _: usize| true,
        );
        assert_eq!(more.merges, direct.unwrap().merges);
        let err = resume(&path, 299, None, &mut |_: usize, _: usize| true).unwrap_err();
        assert!(err.to_string().contains("holds 300 tokens"), "{err}");
    }

    #[test]
    fn damaged_checkpoints_are_named_errors() {
        let path = scratch("damaged.bpck");
        let mut config = TrainConfig::new(290, vec![], 1);
        config.checkpoint = Some(Checkpointing {
            path: path.clone(),
            meta: String::new(),
        });
        train(corpus(), &config, &mut |_: usize, _: usize| true).unwrap();
        let good = std::fs::read(&path).unwrap();
        let mut flipped = good.clone();
        let middle = flipped.len() / 2;
        flipped[middle] ^= 0x40;
        std::fs::write(&path, &flipped).unwrap();
        let err = resume(&path, 300, None, &mut |_: usize, _: usize| true).unwrap_err();
        assert!(matches!(err, Error::CorruptCheckpoint { .. }), "{err}");
        for cut in [0, 5, 30, good.len() - 3] {
            std::fs::write(&path, &good[..cut]).unwrap();
            let err = resume(&path, 300, None, &mut |_: usize, _: usize| true).unwrap_err();
            assert!(
                matches!(err, Error::CorruptCheckpoint { .. }),
                "cut {cut}: {err}"
            );
        }
    }
}

//! Encoding by merge rank (SPEC §2): start from the bytes of a piece and
//! repeatedly merge the adjacent pair of lowest rank, leftmost first, until no
//! adjacent pair has a rank.
//!
//! Short pieces (almost all of them) use a plain scan, O(n²) but with n tiny
//! the cache locality wins. Medium pieces (up to 64 symbols: long words of
//! non-ASCII letters, runs of CJK) keep their symbols in place and find the
//! lowest pair with a tournament tree, O(log n) a merge. Long pieces use a
//! min-heap of candidate merges over a linked list of symbols, O(n log n),
//! so a megabyte without spaces stays fast.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::rng::Rng;
use crate::vocab::{MergeRule, Vocab};

/// Pieces up to this long (in bytes) use the plain scan.
const SCAN_LIMIT: usize = 32;

/// Appends the ids of one pre-token to `out`.
pub fn encode_piece(vocab: &Vocab, piece: &[u8], out: &mut Vec<u32>) {
    match piece.len() {
        0 => {}
        1 => out.push(vocab.byte_id(piece[0])),
        _ => match vocab.whole_piece(piece) {
            Some(id) => out.push(id),
            None => encode_skipping_rank(vocab, piece, u32::MAX, out),
        },
    }
}

/// Merges by rank, never applying the merges of rank `skip` (u32::MAX skips
/// none). Encoding a token's bytes while skipping its own rank stops at the
/// two parts its last merge joins.
pub fn encode_skipping_rank(vocab: &Vocab, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    match piece.len() {
        0 => {}
        n if n <= SCAN_LIMIT => encode_by_scan(vocab, piece, skip, out),
        n if n <= TREE_BYTES_LIMIT => encode_by_tree(vocab, piece, skip, out),
        _ => encode_by_heap(vocab, piece, skip, out),
    }
}

/// The symbol merging starts from at `piece[at..]`, and its length in
/// bytes: a whole character's token where [`Vocab::char_token`] allows it
/// (`whole_chars`: not when a rank is skipped, which needs every merge),
/// else the byte's.
#[inline(always)]
fn first_symbol(vocab: &Vocab, piece: &[u8], at: usize, whole_chars: bool) -> (u32, usize) {
    let byte = piece[at];
    // Only the lead byte of a character of two or three bytes starts one
    // (checked here first: most bytes are ASCII).
    if whole_chars && (0xc2..0xf0).contains(&byte) {
        if let Some(symbol) = vocab.char_token(piece, at) {
            return symbol;
        }
    }
    (vocab.byte_id(byte), 1)
}

/// The rule of two adjacent first symbols `left`, `right` that together
/// hold `piece[start..end]` (none of rank `skip`): two single bytes read
/// the table of byte pairs, any other pair is looked up.
#[inline(always)]
fn first_pair_rule(
    vocab: &Vocab,
    piece: &[u8],
    start: usize,
    end: usize,
    left: u32,
    right: u32,
    skip: u32,
) -> Option<MergeRule> {
    let rule = match end - start {
        2 => vocab.byte_pair_rule(piece[start], piece[start + 1]),
        _ => vocab.adjacent_rule(left, right, &piece[start..end]),
    };
    rule.filter(|rule| rule.rank != skip)
}

/// Short pieces: symbols, pair ranks and pair results in small fixed
/// arrays, so that finding the lowest rank is a plain scan of integers and
/// closing the gap after a merge a short loop, not a call. Only the two
/// pairs beside a merge change, so each merge costs two lookups.
fn encode_by_scan(vocab: &Vocab, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    const NO_RANK: u32 = u32::MAX;
    let n = piece.len();
    debug_assert!((1..=SCAN_LIMIT).contains(&n));
    let whole_chars = skip == u32::MAX;
    let mut symbols = [0u32; SCAN_LIMIT];
    // Symbol i holds piece[starts[i]..starts[i + 1]].
    let mut starts = [0u8; SCAN_LIMIT + 1];
    let mut len = 0;
    let mut at = 0;
    while at < n {
        let (id, width) = first_symbol(vocab, piece, at, whole_chars);
        (symbols[len], starts[len]) = (id, at as u8);
        len += 1;
        at += width;
    }
    starts[len] = n as u8;
    let mut ranks = [NO_RANK; SCAN_LIMIT];
    let mut results = [0u32; SCAN_LIMIT];
    let rule_at = |symbols: &[u32; SCAN_LIMIT], starts: &[u8; SCAN_LIMIT + 1], i: usize| {
        let span = &piece[starts[i] as usize..starts[i + 2] as usize];
        match vocab.adjacent_rule(symbols[i], symbols[i + 1], span) {
            Some(rule) if rule.rank != skip => (rule.rank, rule.result),
            _ => (NO_RANK, 0),
        }
    };
    for i in 0..len.saturating_sub(1) {
        let (start, end) = (starts[i] as usize, starts[i + 2] as usize);
        (ranks[i], results[i]) =
            match first_pair_rule(vocab, piece, start, end, symbols[i], symbols[i + 1], skip) {
                Some(rule) => (rule.rank, rule.result),
                None => (NO_RANK, 0),
            };
    }
    // The pairs beside the last merge, (index, rank, result): their ranks go
    // in `ranks` only once the lowest of the others is found, and are then
    // compared with it. The next merge is rarely one of them, so the branch
    // predictor lets the next merge start while their lookups are under
    // way, rather than the scan waiting for them. At first, pair 0 stands
    // in (comparing it with itself changes nothing).
    let mut fresh = [(0, ranks[0], results[0]); 2];
    while len >= 2 {
        // The leftmost adjacent pair of lowest rank.
        let (mut lowest, mut at) = (NO_RANK, 0);
        for (i, &rank) in ranks[..len - 1].iter().enumerate() {
            if rank < lowest {
                (lowest, at) = (rank, i);
            }
        }
        for (i, rank, result) in fresh {
            (ranks[i], results[i]) = (rank, result);
            if rank < lowest || (rank == lowest && i < at) {
                (lowest, at) = fresh_pair_first(rank, i);
            }
        }
        if lowest == NO_RANK {
            break;
        }
        symbols[at] = results[at];
        for k in at + 1..len - 1 {
            symbols[k] = symbols[k + 1];
            ranks[k] = ranks[k + 1];
            results[k] = results[k + 1];
        }
        for k in at + 1..len {
            starts[k] = starts[k + 1];
        }
        len -= 1;
        let right = match at + 1 < len {
            true => rule_at(&symbols, &starts, at),
            false => (NO_RANK, 0),
        };
        fresh[1] = (at, right.0, right.1);
        fresh[0] = match at {
            0 => fresh[1],
            _ => {
                let (rank, result) = rule_at(&symbols, &starts, at - 1);
                (at - 1, rank, result)
            }
        };
        ranks[at] = NO_RANK;
        if at > 0 {
            ranks[at - 1] = NO_RANK;
        }
    }
    out.extend_from_slice(&symbols[..len]);
}

/// A pair beside the last merge goes first: out of line, so that the
/// comparison stays a (well predicted) branch.
#[cold]
#[inline(never)]
fn fresh_pair_first(rank: u32, index: usize) -> (u32, usize) {
    (rank, index)
}

/// Pieces of up to this many symbols go to the tree encoder (a bit set of
/// live symbols fits one u64), longer ones to the heap encoder.
const TREE_LIMIT: usize = 64;
/// ... so a piece longer than this many bytes (no first symbol is longer
/// than 3) goes to the heap encoder without counting them.
const TREE_BYTES_LIMIT: usize = 3 * TREE_LIMIT;

/// Medium pieces: symbols stay at the index where they start (a bit set
/// marks the live ones, so a neighbour is one bit scan), and a tournament
/// tree over the indices holds the lowest `(rank, index)` key at its root:
/// each merge updates three leaves, O(log n), with no shifting of arrays.
/// A piece of more than [`TREE_LIMIT`] first symbols goes to the heap
/// encoder.
fn encode_by_tree(vocab: &Vocab, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    const NO_KEY: u64 = u64::MAX;
    let n = piece.len();
    debug_assert!((2..=TREE_BYTES_LIMIT).contains(&n));
    let mut symbols = [0u32; TREE_LIMIT];
    // Symbol i holds piece[starts[i]..starts[the next live symbol]], or to n.
    let mut starts = [0u8; TREE_LIMIT + 1];
    let mut count = 0;
    let mut at = 0;
    while at < n {
        if count == TREE_LIMIT {
            return encode_by_heap(vocab, piece, skip, out);
        }
        let (id, width) = first_symbol(vocab, piece, at, skip == u32::MAX);
        (symbols[count], starts[count]) = (id, at as u8);
        count += 1;
        at += width;
    }
    starts[count] = n as u8;
    let leaves = count.next_power_of_two();
    let mut results = [0u32; TREE_LIMIT];
    // tree[1] is the root, tree[leaves + i] the pair starting at symbol i.
    let mut tree = [NO_KEY; 2 * TREE_LIMIT];
    for i in 0..count - 1 {
        let (start, end) = (starts[i] as usize, starts[i + 2] as usize);
        let rule = first_pair_rule(vocab, piece, start, end, symbols[i], symbols[i + 1], skip);
        if let Some(rule) = rule {
            tree[leaves + i] = (rule.rank as u64) << 32 | i as u64;
            results[i] = rule.result;
        }
    }
    for k in (1..leaves).rev() {
        tree[k] = tree[2 * k].min(tree[2 * k + 1]);
    }
    let mut live: u64 = u64::MAX >> (64 - count);
    // The first live symbol after `i`, if any.
    let next = |live: u64, i: usize| {
        let after = live & !((2u64 << i).wrapping_sub(1));
        (after != 0).then(|| after.trailing_zeros() as usize)
    };
    // Where the bytes of live symbol `i` end.
    let end = |live: u64, i: usize| starts[next(live, i).unwrap_or(count)] as usize;
    let key_of = |rule: Option<MergeRule>, i: usize| match rule {
        Some(rule) if rule.rank != skip => ((rule.rank as u64) << 32 | i as u64, rule.result),
        _ => (NO_KEY, 0),
    };
    loop {
        let top = tree[1];
        if top == NO_KEY {
            break;
        }
        let at = top as u32 as usize;
        let right = next(live, at).expect("a pair starts at `at`");
        symbols[at] = results[at];
        live &= !(1u64 << right);
        tree[leaves + right] = NO_KEY;
        (tree[leaves + at], results[at]) = match next(live, at) {
            Some(after) => {
                let span = &piece[starts[at] as usize..end(live, after)];
                key_of(vocab.adjacent_rule(symbols[at], symbols[after], span), at)
            }
            None => (NO_KEY, 0),
        };
        // The leaves that changed: `first..=right`, ancestors shared once
        // their paths meet (the three are neighbours, so within a level or two).
        let before = live & ((1u64 << at) - 1);
        let first = if before != 0 {
            let p = 63 - before.leading_zeros() as usize;
            let span = &piece[starts[p] as usize..end(live, at)];
            (tree[leaves + p], results[p]) =
                key_of(vocab.adjacent_rule(symbols[p], symbols[at], span), p);
            p
        } else {
            at
        };
        let (mut low, mut mid, mut high) = (
            (leaves + first) >> 1,
            (leaves + at) >> 1,
            (leaves + right) >> 1,
        );
        while low > 0 {
            tree[low] = tree[2 * low].min(tree[2 * low + 1]);
            if mid != low {
                tree[mid] = tree[2 * mid].min(tree[2 * mid + 1]);
            }
            if high != mid {
                tree[high] = tree[2 * high].min(tree[2 * high + 1]);
            }
            (low, mid, high) = (low >> 1, mid >> 1, high >> 1);
        }
    }
    let mut rest = live;
    while rest != 0 {
        out.push(symbols[rest.trailing_zeros() as usize]);
        rest &= rest - 1;
    }
}

const NONE: u32 = u32::MAX;

/// Candidate merges of a long piece: yields (rank, left position), lowest
/// rank first, then leftmost.
trait MergeQueue {
    fn push(&mut self, rank: u32, position: u32);
    fn pop(&mut self) -> Option<(u32, u32)>;
}

/// A binary min-heap: O(log n) a step, for pieces of moderate length.
struct HeapQueue(BinaryHeap<Reverse<(u32, u32)>>);

impl MergeQueue for HeapQueue {
    fn push(&mut self, rank: u32, position: u32) {
        self.0.push(Reverse((rank, position)));
    }
    fn pop(&mut self) -> Option<(u32, u32)> {
        self.0.pop().map(|Reverse(entry)| entry)
    }
}

/// One bucket per rank, visited in rank order, each sorted by position when
/// its turn comes: for very long pieces, where a heap's cache misses
/// dominate. A merge never creates a candidate of its own rank (the new pair
/// makes longer bytes), so a bucket does not grow while it is read; the rare
/// candidate of a lower rank than the current bucket waits in a small heap
/// and goes first, which keeps the order exactly (rank, position). Only
/// ranks that occur get a bucket, and emptied buckets are kept for reuse (one
/// queue serves every window of a piece).
struct BucketQueue {
    /// Rank -> 1 + index of its bucket, 0 for none: zeroed memory, so the
    /// pages of ranks that never occur are not even touched.
    bucket_of_rank: Vec<u32>,
    /// The ranks that have a bucket, lowest first.
    waiting_ranks: BinaryHeap<Reverse<u32>>,
    buckets: Vec<Vec<u32>>,
    free_buckets: Vec<u32>,
    /// The bucket being read (sorted), its rank and read position.
    current: Vec<u32>,
    current_rank: u32,
    cursor: usize,
    lower: BinaryHeap<Reverse<(u32, u32)>>,
}

impl BucketQueue {
    fn new(ranks: usize) -> Self {
        Self {
            bucket_of_rank: vec![0; ranks],
            waiting_ranks: BinaryHeap::new(),
            buckets: Vec::new(),
            free_buckets: Vec::new(),
            current: Vec::new(),
            current_rank: 0,
            cursor: 0,
            lower: BinaryHeap::new(),
        }
    }

    /// Makes the lowest waiting bucket current; false when none is left.
    fn next_bucket(&mut self) -> bool {
        let Some(Reverse(rank)) = self.waiting_ranks.pop() else {
            return false;
        };
        let slot = std::mem::take(&mut self.bucket_of_rank[rank as usize]) - 1;
        // The emptied current bucket keeps its memory for a later rank.
        self.current.clear();
        std::mem::swap(&mut self.current, &mut self.buckets[slot as usize]);
        self.free_buckets.push(slot);
        self.current.sort_unstable();
        self.current_rank = rank;
        self.cursor = 0;
        true
    }
}

impl MergeQueue for BucketQueue {
    fn push(&mut self, rank: u32, position: u32) {
        match self.bucket_of_rank.get_mut(rank as usize) {
            Some(slot) if rank > self.current_rank => {
                if *slot == 0 {
                    *slot = 1 + self.free_buckets.pop().unwrap_or_else(|| {
                        self.buckets.push(Vec::new());
                        self.buckets.len() as u32 - 1
                    });
                    self.waiting_ranks.push(Reverse(rank));
                }
                self.buckets[*slot as usize - 1].push(position);
            }
            _ => self.lower.push(Reverse((rank, position))),
        }
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        while self.cursor == self.current.len() && self.next_bucket() {}
        let from_bucket = self
            .current
            .get(self.cursor)
            .map(|&position| (self.current_rank, position));
        match (self.lower.peek().map(|Reverse(entry)| *entry), from_bucket) {
            (Some(low), Some(next)) if low <= next => self.lower.pop().map(|Reverse(e)| e),
            (_, Some(next)) => {
                self.cursor += 1;
                Some(next)
            }
            (Some(_), None) => self.lower.pop().map(|Reverse(e)| e),
            (None, None) => {
                // Empty: ready for the next window.
                self.current_rank = 0;
                None
            }
        }
    }
}

/// Pieces at least this long use the bucket queue.
const BUCKET_MIN: usize = 1 << 14;

fn encode_by_heap(vocab: &Vocab, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
    if skip == u32::MAX && piece.len() > WINDOW + WINDOW_OVERLAP {
        return encode_in_windows(vocab, piece, WINDOW, WINDOW_OVERLAP, out);
    }
    merge(vocab, piece, skip, &mut None, out)
}

/// Merges a piece with the queue that suits its length; `buckets` keeps a
/// bucket queue for reuse, made when first needed (it has a slot per rank).
fn merge(
    vocab: &Vocab,
    piece: &[u8],
    skip: u32,
    buckets: &mut Option<BucketQueue>,
    out: &mut Vec<u32>,
) {
    if piece.len() >= BUCKET_MIN {
        let queue = buckets.get_or_insert_with(|| BucketQueue::new(vocab.rank_count()));
        merge_linked(vocab, piece, skip, skip == u32::MAX, queue, out)
    } else {
        let mut queue = HeapQueue(BinaryHeap::with_capacity(piece.len()));
        merge_linked(vocab, piece, skip, skip == u32::MAX, &mut queue, out)
    }
}

/// Pieces longer than a window and its overlap are encoded window by window
/// (in bytes), so that the merge state of a megabyte piece stays in cache.
const WINDOW: usize = 1 << 16;
const WINDOW_OVERLAP: usize = 1 << 12;
/// Seams that may move back before a piece is merged whole instead.
const SEAM_RETRIES: usize = 8;

/// Encodes a very long piece window by window, exactly. BPE's answer is the
/// only way to cut a piece into tokens that each encode to themselves and
/// whose every adjacent pair `a, b` encodes to exactly `[a, b]`
/// ([`pair_is_stable`]): had the whole piece's merging ever joined bytes
/// across one of the cuts, the first such merge would also happen when
/// merging the two tokens beside it alone. Each window's answer has both
/// properties, so only the seams need a check. A window's last `overlap`
/// bytes are encoded but not kept: merges there lack their right-hand
/// context. A seam that fails check moves back one token; after
/// `SEAM_RETRIES` the whole piece is merged in one go.
fn encode_in_windows(
    vocab: &Vocab,
    piece: &[u8],
    window: usize,
    overlap: usize,
    out: &mut Vec<u32>,
) {
    let first = out.len();
    let mut start = 0;
    let mut ids = Vec::new();
    let mut buckets = None;
    let mut retries = 0;
    while start < piece.len() {
        let end = (start + window + overlap).min(piece.len());
        ids.clear();
        merge(vocab, &piece[start..end], u32::MAX, &mut buckets, &mut ids);
        if out.len() > first && !pair_is_stable(vocab, out[out.len() - 1], ids[0]) {
            retries += 1;
            if retries > SEAM_RETRIES {
                out.truncate(first);
                return merge(vocab, piece, u32::MAX, &mut buckets, out);
            }
            let back = out.pop().expect("a token of this piece");
            start -= token_len(vocab, back);
            continue;
        }
        let (count, bytes) = kept_of_window(vocab, &ids, window, end == piece.len());
        out.extend_from_slice(&ids[..count]);
        start += bytes;
    }
}

/// How many of a window's ids to keep, and their bytes: those within its
/// first `window` bytes (at least one), or all of them in the piece's last.
fn kept_of_window(vocab: &Vocab, ids: &[u32], window: usize, last: bool) -> (usize, usize) {
    let mut bytes = 0;
    for (count, &id) in ids.iter().enumerate() {
        let len = token_len(vocab, id);
        if !last && count > 0 && bytes + len > window {
            return (count, bytes);
        }
        bytes += len;
    }
    (ids.len(), bytes)
}

fn token_len(vocab: &Vocab, id: u32) -> usize {
    vocab.token(id).map_or(0, <[u8]>::len)
}

/// Whether the bytes of `left` and `right` together merge to exactly these
/// two tokens.
fn pair_is_stable(vocab: &Vocab, left: u32, right: u32) -> bool {
    let (Some(l), Some(r)) = (vocab.token(left), vocab.token(right)) else {
        return false;
    };
    let mut ids = Vec::with_capacity(2);
    merge(vocab, &[l, r].concat(), u32::MAX, &mut None, &mut ids);
    ids == [left, right]
}

/// A symbol of a long piece, named by the byte position where it starts:
/// its id (NONE once a merge absorbed it) and the live symbols beside it.
/// One record per position, so a merge touches one or two cache lines
/// rather than one in each of three arrays.
#[derive(Clone, Copy)]
struct Node {
    id: u32,
    next: u32,
    prev: u32,
}

/// Merging over a linked list of symbols; `queue` orders the candidates.
/// With `whole_chars`, merging starts from whole characters where
/// [`Vocab::char_token`] allows (not under dropout, which may skip any merge).
fn merge_linked(
    vocab: &Vocab,
    piece: &[u8],
    skip: u32,
    whole_chars: bool,
    queue: &mut impl MergeQueue,
    out: &mut Vec<u32>,
) {
    let rule_of = |l: u32, r: u32| vocab.merge_rule(l, r).filter(|rule| rule.rank != skip);
    let n = piece.len();
    let absorbed = Node {
        id: NONE,
        next: NONE,
        prev: NONE,
    };
    let mut nodes = vec![absorbed; n];
    let (mut at, mut prev) = (0, NONE);
    while at < n {
        let (id, width) = first_symbol(vocab, piece, at, whole_chars);
        let next = if at + width < n {
            (at + width) as u32
        } else {
            NONE
        };
        nodes[at] = Node { id, next, prev };
        prev = at as u32;
        at += width;
    }
    let mut left = 0;
    while nodes[left].next != NONE {
        let right = nodes[left].next as usize;
        let end = match nodes[right].next {
            NONE => n,
            end => end as usize,
        };
        let (l, r) = (nodes[left].id, nodes[right].id);
        if let Some(rule) = first_pair_rule(vocab, piece, left, end, l, r, skip) {
            queue.push(rule.rank, left as u32);
        }
        left = right;
    }
    while let Some((rank, left)) = queue.pop() {
        let l = left as usize;
        let Node { id, next, prev } = nodes[l];
        if id == NONE || next == NONE {
            continue;
        }
        let r = next as usize;
        let right = nodes[r];
        // Stale entry: the pair at this place changed since it was pushed.
        let merged = match rule_of(id, right.id) {
            Some(rule) if rule.rank == rank => rule.result,
            _ => continue,
        };
        nodes[r].id = NONE;
        nodes[l] = Node {
            id: merged,
            next: right.next,
            prev,
        };
        if right.next != NONE {
            nodes[right.next as usize].prev = left;
            if let Some(rule) = rule_of(merged, nodes[right.next as usize].id) {
                queue.push(rule.rank, left);
            }
        }
        if prev != NONE {
            if let Some(rule) = rule_of(nodes[prev as usize].id, merged) {
                queue.push(rule.rank, prev);
            }
        }
    }
    let mut i = 0u32;
    while i != NONE {
        out.push(nodes[i as usize].id);
        i = nodes[i as usize].next;
    }
}

/// Merge rules over any alphabet (classic character BPE, whose symbols are
/// not bytes): pair of symbol ids -> (rank, result id).
#[derive(Clone, Debug, Default)]
pub struct SymbolRules(FxHashMap<u64, (u32, u32)>);

impl SymbolRules {
    /// `rules`: (left, right, result) in rank order; a repeated pair keeps its first rank.
    pub fn new(rules: impl IntoIterator<Item = (u32, u32, u32)>) -> Self {
        let mut map = FxHashMap::default();
        for (rank, (left, right, result)) in rules.into_iter().enumerate() {
            map.entry(crate::vocab::pair_key(left, right))
                .or_insert((rank as u32, result));
        }
        Self(map)
    }

    /// The adjacent pair of lowest rank, leftmost first, merges until no
    /// pair has a rule — SPEC §2's rule, as for bytes.
    pub fn merge(&self, symbols: &mut Vec<u32>) {
        merge_symbols(symbols, &self.0)
    }
}

/// Words of up to this many symbols merge by a plain scan; longer ones with
/// a heap over a linked list, so that a long word without spaces (unspaced
/// CJK, minified code) costs O(n log n), not O(n²).
const SYMBOL_SCAN_LIMIT: usize = 64;

fn merge_symbols(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    match symbols.len() > SYMBOL_SCAN_LIMIT {
        true => merge_symbols_by_heap(symbols, rules),
        false => merge_symbols_by_scan(symbols, rules),
    }
}

fn merge_symbols_by_scan(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    let rule_at = |s: &[u32], i: usize| rules.get(&crate::vocab::pair_key(s[i], s[i + 1]));
    loop {
        let mut best: Option<(usize, u32, u32)> = None;
        for i in 0..symbols.len().saturating_sub(1) {
            if let Some(&(rank, result)) = rule_at(symbols, i) {
                if best.is_none_or(|(_, r, _)| rank < r) {
                    best = Some((i, rank, result));
                }
            }
        }
        let Some((at, _, result)) = best else {
            return;
        };
        symbols[at] = result;
        symbols.remove(at + 1);
    }
}

/// [`merge_symbols`] for long words. Symbols keep the index they started at,
/// so ordering candidates by (rank, left index) is the rule's order (lowest
/// rank, leftmost). A popped candidate whose pair no longer has that rank
/// is stale and skipped; every live pair has an entry of its current rank.
fn merge_symbols_by_heap(symbols: &mut Vec<u32>, rules: &FxHashMap<u64, (u32, u32)>) {
    const END: u32 = u32::MAX;
    let n = symbols.len();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    next[n - 1] = END;
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = END;
    let mut alive = vec![true; n];
    let rank_of = |ids: &[u32], left: usize, right: u32| {
        rules
            .get(&crate::vocab::pair_key(ids[left], ids[right as usize]))
            .map(|&(rank, _)| rank)
    };
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = (0..n - 1)
        .filter_map(|i| rank_of(symbols, i, i as u32 + 1).map(|r| Reverse((r, i as u32))))
        .collect();
    while let Some(Reverse((rank, left))) = heap.pop() {
        let left = left as usize;
        let right = next[left];
        if !alive[left] || right == END || rank_of(symbols, left, right) != Some(rank) {
            continue;
        }
        let (_, result) = rules[&crate::vocab::pair_key(symbols[left], symbols[right as usize])];
        symbols[left] = result;
        alive[right as usize] = false;
        let after = next[right as usize];
        next[left] = after;
        if after != END {
            prev[after as usize] = left as u32;
            if let Some(r) = rank_of(symbols, left, after) {
                heap.push(Reverse((r, left as u32)));
            }
        }
        let before = prev[left];
        if before != END {
            if let Some(r) = rank_of(symbols, before as usize, left as u32) {
                heap.push(Reverse((r, before)));
            }
        }
    }
    let mut at = 0u32;
    let mut merged = Vec::with_capacity(n);
    while at != END {
        merged.push(symbols[at as usize]);
        at = next[at as usize];
    }
    *symbols = merged;
}

/// BPE-dropout (Provilkov et al. 2020) as HuggingFace tokenizers does it:
/// each candidate merge, when its turn comes, is skipped with probability
/// `p`; skipped candidates come back after the next merge, and merging stops
/// when every remaining candidate was skipped in a row.
struct DropoutQueue<'r> {
    inner: HeapQueue,
    skipped: Vec<(u32, u32)>,
    p: f64,
    rng: &'r mut Rng,
}

impl MergeQueue for DropoutQueue<'_> {
    fn push(&mut self, rank: u32, position: u32) {
        self.inner.push(rank, position);
    }

    fn pop(&mut self) -> Option<(u32, u32)> {
        while let Some(entry) = self.inner.pop() {
            if self.rng.next_f64() < self.p {
                self.skipped.push(entry);
            } else {
                // Back in the queue: after this merge they get a new draw.
                for (rank, position) in self.skipped.drain(..) {
                    self.inner.push(rank, position);
                }
                return Some(entry);
            }
        }
        None
    }
}

/// Appends the ids of one pre-token encoded with BPE-dropout; `p == 0` is
/// exactly [`encode_piece`].
pub fn encode_piece_with_dropout(
    vocab: &Vocab,
    piece: &[u8],
    p: f64,
    rng: &mut Rng,
    out: &mut Vec<u32>,
) {
    if p <= 0.0 || piece.len() < 2 {
        return encode_piece(vocab, piece, out);
    }
    // No whole-piece lookup: a word that is a token must be able to split.
    let mut queue = DropoutQueue {
        inner: HeapQueue(BinaryHeap::with_capacity(piece.len())),
        skipped: Vec::new(),
        p,
        rng,
    };
    merge_linked(vocab, piece, u32::MAX, false, &mut queue, out)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn long_symbol_words_merge_by_heap_as_by_scan() {
        // Rules over a small alphabet, results made by earlier rules too, and
        // ranks that rise and fall along a chain: every order the rule allows.
        let mut rng = Rng::new(11);
        for round in 0..200 {
            let alphabet = 2 + (rng.next_u64() % 4) as u32;
            let count = (rng.next_u64() % 40) as u32;
            let mut rules = Vec::new();
            for result in alphabet..alphabet + count {
                let left = (rng.next_u64() % result as u64) as u32;
                let right = (rng.next_u64() % result as u64) as u32;
                rules.push((left, right, result));
            }
            let table = SymbolRules::new(rules.iter().copied());
            let length = 65 + (rng.next_u64() % 400) as usize;
            let word: Vec<u32> = (0..length)
                .map(|_| (rng.next_u64() % alphabet as u64) as u32)
                .collect();
            let (mut by_heap, mut by_scan) = (word.clone(), word.clone());
            merge_symbols_by_heap(&mut by_heap, &table.0);
            merge_symbols_by_scan(&mut by_scan, &table.0);
            assert_eq!(by_heap, by_scan, "round {round}");
        }
    }

    use crate::vocab::Ranking;

    /// Byte tokens plus the merges of `merges`, in order (the test vocabulary
    /// of this module and of `piece_cache`'s tests).
    pub(crate) fn vocab_with(merges: &[(&[u8], &[u8])]) -> Vocab {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut pairs = Vec::new();
        for (l, r) in merges {
            let id = |t: &[u8], tokens: &Vec<Vec<u8>>| {
                tokens.iter().position(|x| x == t).unwrap() as u32
            };
            let joined = [*l, *r].concat();
            if !tokens.contains(&joined) {
                tokens.push(joined);
            }
            pairs.push((id(l, &tokens), id(r, &tokens)));
        }
        Vocab::new(tokens.into_iter().map(Some), Ranking::Merges(pairs), vec![]).unwrap()
    }

    #[test]
    fn symbol_rules_merge_lowest_rank_leftmost() {
        // Symbols 0 = a, 1 = b; rules: (a, a) -> 2 at rank 0, (2, b) -> 3 at rank 1.
        let rules = SymbolRules::new([(0, 0, 2), (2, 1, 3), (0, 0, 9)]);
        let mut word = vec![0, 0, 0, 1];
        rules.merge(&mut word);
        assert_eq!(
            word,
            vec![2, 0, 1],
            "a a a b -> aa a b: left to right, no overlap"
        );
        let mut word = vec![0, 0, 1];
        rules.merge(&mut word);
        assert_eq!(word, vec![3]);
        let mut unknown = vec![7, 8];
        rules.merge(&mut unknown);
        assert_eq!(unknown, vec![7, 8]);
    }

    #[test]
    fn dropout_zero_is_plain_one_is_bytes_and_between_varies_by_seed() {
        let vocab = vocab_with(&[(b"a", b"b"), (b"ab", b"c"), (b"abc", b"d"), (b"d", b"e")]);
        let text = b"abcdeabcde";
        let mut plain = Vec::new();
        encode_piece(&vocab, text, &mut plain);
        let with = |p: f64, seed: u64| {
            let mut out = Vec::new();
            encode_piece_with_dropout(&vocab, text, p, &mut Rng::new(seed), &mut out);
            out
        };
        assert_eq!(with(0.0, 1), plain);
        let bytes: Vec<u32> = text.iter().map(|&b| vocab.byte_id(b)).collect();
        assert_eq!(with(1.0, 1), bytes);
        let outcomes: std::collections::HashSet<Vec<u32>> =
            (0..200).map(|s| with(0.3, s)).collect();
        assert!(
            outcomes.len() > 3 && outcomes.contains(&plain),
            "{outcomes:?}"
        );
        assert_eq!(with(0.3, 5), with(0.3, 5));
        for ids in outcomes {
            let decoded: Vec<u8> = ids
                .iter()
                .flat_map(|&id| vocab.token(id).unwrap().to_vec())
                .collect();
            assert_eq!(decoded, text);
        }
    }

    /// The plain O(n²) merge loop, for pieces of any length: the reference
    /// the fast encoders are checked against.
    fn scan_reference(vocab: &Vocab, piece: &[u8], skip: u32, out: &mut Vec<u32>) {
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

    fn both(vocab: &Vocab, text: &[u8]) -> (Vec<u32>, Vec<u32>) {
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
            &mut BucketQueue::new(v.rank_count()),
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
            &mut BucketQueue::new(v.rank_count()),
            &mut short,
        );
        assert_eq!(scan, short);
    }

    /// A random vocabulary over the bytes `a`, `b`, `c`: random merges of
    /// existing tokens (any order of ranks, some bytes made twice), or for
    /// tiktoken's rule random tokens in random id order.
    fn random_vocab(rng: &mut crate::rng::Rng, token_ids: bool) -> Vocab {
        let pick = |rng: &mut crate::rng::Rng, n: usize| (rng.next_u64() % n as u64) as usize;
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
            return Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
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
        Vocab::new(tokens, Ranking::Merges(merges), vec![]).unwrap()
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
        let vocab = Vocab::new(tokens, Ranking::TokenIds, vec![]).unwrap();
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
        let mut rng = crate::rng::Rng::new(11);
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
                            let id = 256 + rng.next_u64() % (vocab.len() as u64 - 256);
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
        let vocab = Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap();
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
                Vocab::new(tokens.into_iter().map(Some), Ranking::TokenIds, vec![]).unwrap();
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
        let mut rng = crate::rng::Rng::new(7);
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
}

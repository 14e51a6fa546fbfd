//! Long pieces: a queue of candidate merges over a linked list of symbols.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{first_pair_rule, first_symbol};
use crate::bpe::tables::Tables;

const NONE: u32 = u32::MAX;

/// Candidate merges of a long piece: yields (rank, left position), lowest
/// rank first, then leftmost.
pub(crate) trait MergeQueue {
    fn push(&mut self, rank: u32, position: u32);
    fn pop(&mut self) -> Option<(u32, u32)>;
}

/// A binary min-heap: O(log n) a step, for pieces of moderate length.
pub(crate) struct HeapQueue(pub(crate) BinaryHeap<Reverse<(u32, u32)>>);

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
pub(super) struct BucketQueue {
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
    pub(super) fn new(ranks: usize) -> Self {
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

/// Merges a piece with the queue that suits its length; `buckets` keeps a
/// bucket queue for reuse, made when first needed (it has a slot per rank).
pub(super) fn merge(
    tables: &Tables,
    piece: &[u8],
    skip: u32,
    buckets: &mut Option<BucketQueue>,
    out: &mut Vec<u32>,
) {
    if piece.len() >= BUCKET_MIN {
        let queue = buckets.get_or_insert_with(|| BucketQueue::new(tables.rank_count()));
        merge_linked(tables, piece, skip, skip == u32::MAX, queue, out)
    } else {
        let mut queue = HeapQueue(BinaryHeap::with_capacity(piece.len()));
        merge_linked(tables, piece, skip, skip == u32::MAX, &mut queue, out)
    }
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
/// [`Tables::char_token`] allows (not under dropout, which may skip any merge).
pub(crate) fn merge_linked(
    tables: &Tables,
    piece: &[u8],
    skip: u32,
    whole_chars: bool,
    queue: &mut impl MergeQueue,
    out: &mut Vec<u32>,
) {
    let rule_of = |l: u32, r: u32| tables.merge_rule(l, r).filter(|rule| rule.rank != skip);
    let n = piece.len();
    let absorbed = Node {
        id: NONE,
        next: NONE,
        prev: NONE,
    };
    let mut nodes = vec![absorbed; n];
    let (mut at, mut prev) = (0, NONE);
    while at < n {
        let (id, width) = first_symbol(tables, piece, at, whole_chars);
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
        if let Some(rule) = first_pair_rule(tables, piece, left, end, l, r, skip) {
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

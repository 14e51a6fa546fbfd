//! A large batch encoded in groups of texts by a thread pool and by the
//! calling thread together, each finished group handed to the caller on the
//! calling thread as soon as it is done (the Python glue builds its lists
//! there, with the GIL, while the pool goes on encoding).
//!
//! The calling thread takes groups from the front, the pool's threads but one
//! from the back, so that each thread meets the words of one stretch of the
//! batch and learns fewer of them twice (its piece cache is its own). Between
//! its groups the calling thread hands over the groups done so far. On failure
//! the error is that of the first failing text, as on one thread; no group
//! after a failed one is handed over.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

use crate::error::Error;

/// Why a pipelined batch stopped.
#[derive(Debug)]
pub enum Failure<E> {
    /// The error of the first text that failed.
    Text(Error),
    /// Encoding a group panicked, with this message.
    Panic(String),
    /// The caller's `take` failed.
    Take(E),
}

/// The texts of `texts` cut into groups of about `group_bytes` bytes.
fn groups(texts: &[&str], group_bytes: usize) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, text) in texts.iter().enumerate() {
        bytes += text.len();
        if bytes >= group_bytes || i + 1 == texts.len() {
            groups.push(start..i + 1);
            (start, bytes) = (i + 1, 0);
        }
    }
    groups
}

/// A group's ids, its first failure, or the message of its panic.
type Slot = OnceLock<Result<Result<Vec<Vec<u32>>, Error>, String>>;

/// Encodes `texts` with `encode` in groups of about `group_bytes` bytes, on
/// `pool` and on this thread, and calls `take(first text's index, the
/// group's ids)` on this thread for each group, in any order. `release`
/// runs the work it is given (encoding a group, or waiting for one) after
/// letting go of whatever this thread holds that others need: the glue
/// releases the GIL there.
pub fn encode_in_groups<E>(
    pool: &rayon::ThreadPool,
    texts: &[&str],
    group_bytes: usize,
    encode: impl Fn(&str) -> Result<Vec<u32>, Error> + Sync,
    mut take: impl FnMut(usize, &[Vec<u32>]) -> Result<(), E>,
    release: impl Fn(&mut (dyn FnMut() + Send)),
) -> Result<(), Failure<E>> {
    let groups = groups(texts, group_bytes);
    let slots: Vec<Slot> = groups.iter().map(|_| OnceLock::new()).collect();
    let (lock, done) = (Mutex::new(()), Condvar::new());
    // The groups not yet taken, `front..back`, packed in one word so that
    // both ends are claimed atomically; the first group that failed (none
    // after it is encoded); how many groups are encoded, and how many of
    // the pool's tasks have ended.
    let untaken = AtomicU64::new(groups.len() as u64);
    let (first_failed, encoded, ended) = (
        AtomicUsize::new(usize::MAX),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    // Encodes the group at the front (or back) not yet taken; false when
    // none is left.
    let encode_next = |from_front: bool| {
        let claimed = untaken.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |packed| {
            let (front, back) = (packed >> 32, packed & u32::MAX as u64);
            (front < back).then(|| match from_front {
                true => (front + 1) << 32 | back,
                false => front << 32 | (back - 1),
            })
        });
        let Ok(packed) = claimed else {
            return false;
        };
        let at = match from_front {
            true => (packed >> 32) as usize,
            false => (packed & u32::MAX as u64) as usize - 1,
        };
        let encoded_group = if at > first_failed.load(Ordering::Acquire) {
            // Not needed: an earlier group failed.
            Ok(Ok(Vec::new()))
        } else {
            catch_unwind(AssertUnwindSafe(|| {
                texts[groups[at].clone()]
                    .iter()
                    .map(|text| encode(text))
                    .collect()
            }))
            .map_err(|panic| panic_message(&*panic))
        };
        let failed = !matches!(encoded_group, Ok(Ok(_)));
        let _ = slots[at].set(encoded_group);
        if failed {
            // After the set: whoever sees this index finds its error.
            first_failed.fetch_min(at, Ordering::AcqRel);
        }
        // Under the lock, so a waiter cannot miss it.
        let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
        encoded.fetch_add(1, Ordering::Release);
        done.notify_all();
        true
    };
    let tasks = pool.current_num_threads().saturating_sub(1);
    pool.in_place_scope(|scope| {
        // Tasks, not a broadcast: a pool thread busy with other work
        // leaves its task to the others.
        for _ in 0..tasks {
            scope.spawn(|_| {
                while encode_next(false) {}
                let _guard = lock.lock().unwrap_or_else(|p| p.into_inner());
                ended.fetch_add(1, Ordering::Relaxed);
                done.notify_all();
            });
        }
        // Waits, released, until `ready()`.
        let wait_for = |ready: &(dyn Fn() -> bool + Sync)| {
            release(&mut || {
                let mut guard = lock.lock().unwrap_or_else(|p| p.into_inner());
                while !ready() {
                    guard = done.wait(guard).unwrap_or_else(|p| p.into_inner());
                }
            })
        };
        // The groups handed over are `..front` and `back..`: this thread
        // encodes the front in order and the pool the back, so each end
        // advances over groups as they come done (each looked at once,
        // however many groups the batch has). Groups after a failed one
        // are not handed over.
        let done_at = |at: usize| match slots[at].get() {
            Some(Ok(Ok(group))) => Some(group),
            _ => None,
        };
        let mut hand_over = || {
            let (mut front, mut back) = (0, groups.len());
            loop {
                let seen = encoded.load(Ordering::Acquire);
                let failed = first_failed.load(Ordering::Acquire);
                while front < back.min(failed) {
                    let Some(group) = done_at(front) else { break };
                    take(groups[front].start, group).map_err(Failure::Take)?;
                    front += 1;
                }
                while back > front && back - 1 < failed {
                    let Some(group) = done_at(back - 1) else {
                        break;
                    };
                    take(groups[back - 1].start, group).map_err(Failure::Take)?;
                    back -= 1;
                }
                if front == back {
                    return Ok(());
                }
                if front == failed {
                    return Err(match slots[failed].get() {
                        Some(Ok(Err(e))) => Failure::Text(e.clone()),
                        Some(Err(what)) => Failure::Panic(what.clone()),
                        _ => Failure::Panic("a failed group lost its error".into()),
                    });
                }
                let mut more = false;
                release(&mut || more = encode_next(true));
                if !more {
                    wait_for(&|| encoded.load(Ordering::Acquire) > seen);
                }
            }
        };
        let result = hand_over();
        // The scope waits for the tasks as it ends, so wait here, released.
        // An error stops them at their next group.
        if result.is_err() {
            first_failed.store(0, Ordering::Release);
        }
        wait_for(&|| ended.load(Ordering::Relaxed) == tasks);
        result
    })
}

/// The message a panic carried.
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Each text's ids: its bytes; a text "fail" fails, "panic" panics.
    fn encode(text: &str) -> Result<Vec<u32>, Error> {
        match text {
            "fail" => Err(Error::InvalidTraining("fail".into())),
            "panic" => panic!("a test panic"),
            _ => Ok(text.bytes().map(u32::from).collect()),
        }
    }

    /// Each text's ids if they were handed over.
    type HandedOver = Vec<Option<Vec<u32>>>;

    /// The ids handed over, by text index (each at most once), and the result.
    fn run(
        pool: &rayon::ThreadPool,
        texts: &[&str],
        group_bytes: usize,
    ) -> (HandedOver, Result<(), Failure<()>>) {
        let mut ids = vec![None; texts.len()];
        let result = encode_in_groups(
            pool,
            texts,
            group_bytes,
            encode,
            |first, group| {
                for (slot, one) in ids[first..].iter_mut().zip(group) {
                    assert!(slot.is_none(), "a text handed over twice");
                    *slot = Some(one.clone());
                }
                Ok(())
            },
            |work| work(),
        );
        (ids, result)
    }

    #[test]
    fn every_text_is_handed_over_once_with_its_ids() {
        let texts: Vec<String> = (0..500)
            .map(|i| format!("text {i} ").repeat(i % 7))
            .collect();
        let texts: Vec<&str> = texts.iter().map(|t| t.as_str()).collect();
        for threads in [1, 2, 4] {
            for group_bytes in [1, 16, 1000, 1 << 20] {
                let (ids, result) = run(&pool(threads), &texts, group_bytes);
                assert!(result.is_ok());
                for (text, got) in texts.iter().zip(ids) {
                    assert_eq!(got.unwrap(), encode(text).unwrap());
                }
            }
        }
    }

    #[test]
    fn the_first_failing_text_decides_the_error() {
        let mut texts = vec!["ok"; 300];
        texts[120] = "panic";
        texts[40] = "fail";
        for threads in [1, 2, 4] {
            for group_bytes in [1, 10, 100] {
                let (ids, result) = run(&pool(threads), &texts, group_bytes);
                // Groups done before the failure was seen may be handed over, never it.
                assert!(ids[40].is_none());
                assert!(
                    matches!(result, Err(Failure::Text(Error::InvalidTraining(ref m))) if m == "fail")
                );
            }
            texts[40] = "ok";
            let (_, result) = run(&pool(threads), &texts, 10);
            assert!(matches!(result, Err(Failure::Panic(ref m)) if m == "a test panic"));
            texts[40] = "fail";
        }
    }

    #[test]
    fn a_failing_take_stops_the_batch() {
        let texts = vec!["abc"; 100];
        let mut calls = 0;
        let result = encode_in_groups(
            &pool(2),
            &texts,
            3,
            encode,
            |_, _| {
                calls += 1;
                if calls == 5 {
                    Err("enough")
                } else {
                    Ok(())
                }
            },
            |work| work(),
        );
        assert!(matches!(result, Err(Failure::Take("enough"))));
        assert_eq!(calls, 5);
    }
}

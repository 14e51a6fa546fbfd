//! A byte trie in a double array (darts' layout) for the piece tables of the
//! unigram and SentencePiece models: state `s` moves on byte `c` to
//! `t = base[s] + c` when `check[t] == s`, one array read per byte.

/// No key ends at a state.
pub(crate) const NONE: u32 = u32::MAX;
const FREE: u32 = u32::MAX;
const ROOT_CHECK: u32 = u32::MAX - 1;
/// How far behind the highest state a base is looked for.
const SEARCH_WINDOW: usize = 1024;

#[derive(Clone, Copy, Debug)]
struct Unit {
    base: u32,
    check: u32,
    value: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct DoubleArray {
    units: Vec<Unit>,
}

impl DoubleArray {
    /// `keys`: any order, non-empty; for a repeated key the first value stays.
    pub(crate) fn build(mut keys: Vec<(&[u8], u32)>) -> Self {
        keys.sort_by(|a, b| a.0.cmp(b.0));
        // A stable sort keeps the first value of a repeated key first.
        keys.dedup_by(|later, earlier| later.0 == earlier.0);
        keys.retain(|k| !k.0.is_empty());
        let mut units = vec![Unit {
            base: 0,
            check: ROOT_CHECK,
            value: NONE,
        }];
        let mut next_check = 1usize;
        // One past the highest state placed: the search for a base starts at
        // most SEARCH_WINDOW before it (free slots further back are given up,
        // as darts-clone closes old blocks), so that states whose children
        // fit none of the holes left behind cannot make the build quadratic.
        let mut frontier = 1usize;
        let mut tasks = vec![(0u32, 0usize, 0usize, keys.len())];
        let mut children: Vec<(u8, usize, usize)> = Vec::new();
        while let Some((state, depth, mut lo, hi)) = tasks.pop() {
            if lo < hi && keys[lo].0.len() == depth {
                units[state as usize].value = keys[lo].1;
                lo += 1;
            }
            children.clear();
            for (i, key) in keys.iter().enumerate().take(hi).skip(lo) {
                let c = key.0[depth];
                match children.last_mut() {
                    Some(last) if last.0 == c => last.2 = i + 1,
                    _ => children.push((c, i, i + 1)),
                }
            }
            let Some(&(first, _, _)) = children.first() else {
                continue;
            };
            let mut pos = next_check
                .max(frontier.saturating_sub(SEARCH_WINDOW))
                .max(first as usize + 1);
            let mut occupied = 0usize;
            let mut first_free = None;
            let base = loop {
                if units.len() < pos + 257 {
                    units.resize(
                        pos + 257,
                        Unit {
                            base: 0,
                            check: FREE,
                            value: NONE,
                        },
                    );
                }
                if units[pos].check != FREE {
                    occupied += 1;
                    pos += 1;
                    continue;
                }
                first_free.get_or_insert(pos);
                let base = pos - first as usize;
                if children
                    .iter()
                    .all(|&(c, _, _)| units[base + c as usize].check == FREE)
                {
                    break base;
                }
                pos += 1;
            };
            let start = first_free.unwrap_or(pos);
            next_check = start;
            if occupied as f64 >= 0.95 * (pos - start + 1) as f64 {
                next_check = pos;
            }
            units[state as usize].base = base as u32;
            for &(c, lo, hi) in &children {
                let t = base + c as usize;
                units[t].check = state;
                frontier = frontier.max(t + 1);
                tasks.push((t as u32, depth + 1, lo, hi));
            }
        }
        DoubleArray { units }
    }

    #[inline]
    pub(crate) fn step(&self, state: u32, byte: u8) -> Option<u32> {
        let t = self.units[state as usize].base as usize + byte as usize;
        match self.units.get(t) {
            Some(unit) if unit.check == state => Some(t as u32),
            _ => None,
        }
    }

    /// The value of the key ending at `state`, or [`NONE`].
    #[inline]
    pub(crate) fn value(&self, state: u32) -> u32 {
        self.units[state as usize].value
    }

    /// The value of exactly `key`, if it is a key.
    pub(crate) fn get(&self, key: &[u8]) -> Option<u32> {
        let mut state = 0;
        for &b in key {
            state = self.step(state, b)?;
        }
        let v = self.value(state);
        (v != NONE).then_some(v)
    }

    /// The length of the longest key that is a prefix of `data`, or 0.
    pub(crate) fn longest_prefix(&self, data: &[u8]) -> usize {
        let (mut state, mut best) = (0, 0);
        for (i, &b) in data.iter().enumerate() {
            match self.step(state, b) {
                Some(next) => state = next,
                None => break,
            }
            if self.value(state) != NONE {
                best = i + 1;
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_and_prefixes() {
        let keys: Vec<(&[u8], u32)> = vec![
            (b"ab", 1),
            (b"a", 2),
            (b"abc", 3),
            (b"b", 4),
            (b"a", 9),
            ("▁x".as_bytes(), 5),
        ];
        let t = DoubleArray::build(keys);
        assert_eq!(t.get(b"a"), Some(2));
        assert_eq!(t.get(b"ab"), Some(1));
        assert_eq!(t.get(b"abc"), Some(3));
        assert_eq!(t.get(b"abcd"), None);
        assert_eq!(t.get(b"c"), None);
        assert_eq!(t.get("▁x".as_bytes()), Some(5));
        assert_eq!(t.get("▁".as_bytes()), None);
        assert_eq!(t.longest_prefix(b"abz"), 2);
        assert_eq!(t.longest_prefix(b"zz"), 0);
    }

    #[test]
    fn keys_whose_children_fit_no_hole_build_in_linear_time() {
        // Every state has the children 0x01 and 0x7f: the holes it leaves
        // fit no later state, which made each search walk all of them.
        let keys: Vec<Vec<u8>> = (0..60_000u32)
            .flat_map(|i| {
                let c = char::from_u32(0x10000 + i)
                    .unwrap()
                    .to_string()
                    .into_bytes();
                [1u8, 0x7f].map(|b| [c.clone(), vec![b]].concat())
            })
            .collect();
        let started = std::time::Instant::now();
        let t = DoubleArray::build(keys.iter().zip(0..).map(|(k, v)| (&k[..], v)).collect());
        let seconds = started.elapsed().as_secs_f64();
        for (v, k) in keys.iter().enumerate() {
            assert_eq!(t.get(k), Some(v as u32));
        }
        // Quadratic took 5 s here in release (minutes in debug); linear takes milliseconds.
        assert!(seconds < 3.0, "{seconds} s to build");
        assert!(t.units.len() < 8 * keys.len(), "{} units", t.units.len());
    }
}

//! Tests' random text over a few characters of one, two and three bytes,
//! and random tokens cut from it (so that they split and join characters).

use crate::util::rng::Rng;

pub(crate) struct RandomText {
    units: [&'static str; 8],
    rng: Rng,
}

impl RandomText {
    pub(crate) fn new(units: [&'static str; 8], seed: u64) -> Self {
        Self {
            units,
            rng: Rng::new(seed),
        }
    }

    /// A number below `n`.
    pub(crate) fn pick(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n as u64) as usize
    }

    /// The bytes of `n` random units.
    pub(crate) fn text(&mut self, n: usize) -> Vec<u8> {
        (0..n)
            .flat_map(|_| self.units[self.pick(self.units.len())].bytes())
            .collect()
    }

    /// A stretch of 2 to `max_len` bytes of a text of `units` units.
    pub(crate) fn token(&mut self, units: usize, max_len: usize) -> Vec<u8> {
        let text = self.text(units);
        let start = self.pick(text.len() - 1);
        let len = 2 + self.pick((text.len() - start - 1).min(max_len - 1));
        text[start..start + len].to_vec()
    }
}

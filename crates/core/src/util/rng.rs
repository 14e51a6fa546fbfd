//! A small seeded random number generator (SplitMix64), so that BPE-dropout
//! and unigram sampling give the same result for the same seed on every
//! machine and thread count. Not for cryptography.

#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// An independent stream for item `index` of a batch (each text of a
    /// batch gets its own, so the result does not depend on scheduling).
    pub fn for_item(seed: u64, index: u64) -> Self {
        let mut mixer = Self(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Self(mixer.next_u64())
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_roughly_uniform() {
        let draws: Vec<f64> = (0..10_000)
            .map({
                let mut rng = Rng::new(7);
                move |_| rng.next_f64()
            })
            .collect();
        let again: Vec<f64> = (0..10_000)
            .map({
                let mut rng = Rng::new(7);
                move |_| rng.next_f64()
            })
            .collect();
        assert_eq!(draws, again);
        assert!(draws.iter().all(|&x| (0.0..1.0).contains(&x)));
        let below_half = draws.iter().filter(|&&x| x < 0.5).count();
        assert!((4_700..5_300).contains(&below_half), "{below_half}");
        assert_ne!(
            Rng::for_item(7, 0).next_u64(),
            Rng::for_item(7, 1).next_u64()
        );
    }
}

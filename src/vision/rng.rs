//! Seeded randomness without thread-order dependence: a small sequential generator for
//! choosing scenes and cameras, and stateless hashes for per-pixel and per-texel values,
//! so a pixel's noise depends only on (seed, x, y) and never on which thread drew it.

/// SplitMix64: tiny, fast, and good enough for procedural content.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
        }
    }

    /// An independent stream for one purpose, so adding draws to one part of the generator
    /// does not shift every other part.
    pub fn stream(seed: u64, purpose: &str) -> Rng {
        let mut h = seed;
        for b in purpose.bytes() {
            h = mix(h ^ u64::from(b));
        }
        Rng::new(h)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.state)
    }

    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }

    /// Uniform integer in [lo, hi] (inclusive).
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    /// Standard normal (Box-Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f64().max(1e-300);
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[(self.next_u64() % items.len() as u64) as usize]
    }
}

/// The SplitMix64 finaliser: a good 64-bit avalanche.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of a seed and two integer coordinates.
pub fn hash2(seed: u64, x: i64, y: i64) -> u64 {
    mix(mix(seed ^ (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
}

/// A hash of a seed and three integer coordinates.
pub fn hash3(seed: u64, x: i64, y: i64, z: i64) -> u64 {
    mix(hash2(seed, x, y) ^ (z as u64).wrapping_mul(0x1656_67B1_9E37_79F9))
}

/// Maps a hash to [0, 1).
pub fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A standard normal value from a hash (Box-Muller on two halves of a second hash).
pub fn normal_from(h: u64) -> f64 {
    let u1 = unit(h).max(1e-300);
    let u2 = unit(mix(h));
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::stream(7, "cam").next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(
            Rng::stream(7, "cam").next_u64(),
            Rng::stream(7, "scene").next_u64()
        );
        let mut r = Rng::new(1);
        let mean = (0..10_000).map(|_| r.f64()).sum::<f64>() / 10_000.0;
        assert!((mean - 0.5).abs() < 0.02);
    }
}

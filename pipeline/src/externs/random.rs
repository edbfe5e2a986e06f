//! Seeded deterministic random numbers for `Random<W>.get()`, RANDOM hashes and RED/ECN
//! marking in the queue model.
//!
//! Hand-rolled xoshiro256** (Blackman & Vigna) seeded through SplitMix64: twenty lines, no
//! dependency, and — the reason it is not `rand_xoshiro` — a sequence that can never change
//! under us with a crate upgrade, which the "same input, same output pcap" rule needs.

/// xoshiro256** generator. Same seed, same sequence, on every platform.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Random {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Random {
    pub fn new(seed: u64) -> Random {
        let mut st = seed;
        let s = [
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
            splitmix64(&mut st),
        ];
        // SplitMix64 never yields four zero words in a row, so the state is valid.
        Random { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform value of `width` bits (0..=128; 0 gives 0), as `Random<bit<W>>.get()`.
    #[inline]
    pub fn bits(&mut self, width: u16) -> u128 {
        match width {
            0 => 0,
            1..=64 => u128::from(self.next_u64() >> (64 - width)),
            _ => {
                let hi = u128::from(self.next_u64());
                let lo = u128::from(self.next_u64());
                let v = (hi << 64) | lo;
                if width >= 128 {
                    v
                } else {
                    v >> (128 - width)
                }
            }
        }
    }

    /// True with probability `p` (clamped to 0..=1; NaN counts as 0).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        if p.is_nan() || p <= 0.0 {
            return false;
        }
        if p >= 1.0 {
            return true;
        }
        // 53 random bits → a uniform f64 in [0, 1).
        let u = (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        u < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_different_seed_differs() {
        let mut a = Random::new(42);
        let mut b = Random::new(42);
        let mut c = Random::new(43);
        let xa: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..8).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..8).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn splitmix_reference_value() {
        // First SplitMix64 output for seed 0 (published reference value).
        let mut s = 0u64;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn bits_stay_in_width_and_cover_it() {
        let mut r = Random::new(1);
        let mut or = 0u128;
        for _ in 0..200 {
            let v = r.bits(13);
            assert!(v < 1 << 13);
            or |= v;
        }
        assert_eq!(or, (1 << 13) - 1);
        assert_eq!(r.bits(0), 0);
        let _ = r.bits(128);
        assert!(r.bits(100) < 1u128 << 100);
    }

    #[test]
    fn chance_is_roughly_p() {
        let mut r = Random::new(7);
        let hits = (0..100_000).filter(|_| r.chance(0.25)).count();
        assert!((23_000..27_000).contains(&hits), "{hits}");
        assert!(!r.chance(0.0));
        assert!(r.chance(1.0));
        assert!(!r.chance(f64::NAN));
    }
}

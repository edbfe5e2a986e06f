//! The YCSB-load workload of Figure 9: a stream of writes of `value_size`-byte values to
//! keys drawn from `records` records with YCSB's scrambled zipfian distribution (θ = 0.99),
//! the same stream for every system measured (Acuerdo's hash table, etcd, ZooKeeper).
//!
//! The zipfian generator is the one YCSB uses (Gray et al., "Quickly generating
//! billion-record synthetic databases", SIGMOD 1994); scrambling hashes the drawn rank so
//! the popular keys spread over the key space.

/// A deterministic 64-bit generator (SplitMix64).
#[derive(Debug, Clone)]
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Ranks 0..n with P(i) ∝ 1/(i+1)^θ.
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Zipf {
    /// `n` ranks (at least 2), exponent `theta` in (0, 1).
    pub fn new(n: u64, theta: f64) -> Zipf {
        let n = n.max(2);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2, theta);
        Zipf {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    /// The next rank.
    pub fn next(&self, rng: &mut SplitMix) -> u64 {
        let u = rng.next_f64();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        ((self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64).min(self.n - 1)
    }
}

/// FNV-1a of a rank: YCSB's scrambling.
fn fnv(x: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The workload's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ycsb {
    /// Distinct records.
    pub records: u64,
    /// Bytes per value.
    pub value_size: usize,
    /// Zipf exponent.
    pub theta: f64,
    /// Seed.
    pub seed: u64,
}

impl Ycsb {
    /// YCSB-load's shape: 10,000 records, 100-byte values, θ = 0.99.
    pub fn load() -> Ycsb {
        Ycsb {
            records: 10_000,
            value_size: 100,
            theta: 0.99,
            seed: 1,
        }
    }

    /// The first `ops` writes: (key, value); each value starts with its op number.
    pub fn ops(&self, ops: usize) -> Vec<(u64, Vec<u8>)> {
        let z = Zipf::new(self.records, self.theta);
        let mut rng = SplitMix(self.seed);
        (0..ops)
            .map(|i| {
                let key = fnv(z.next(&mut rng)) % (self.records * 16);
                let mut v = vec![b'v'; self.value_size.max(8)];
                v[..8].copy_from_slice(&(i as u64).to_le_bytes());
                (key, v)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_099_is_skewed_and_the_stream_is_deterministic() {
        let w = Ycsb::load();
        let ops = w.ops(20_000);
        assert_eq!(ops, w.ops(20_000));
        let mut counts = std::collections::HashMap::new();
        for (k, _) in &ops {
            *counts.entry(*k).or_insert(0u32) += 1;
        }
        let mut c: Vec<u32> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        // The most popular key takes several percent of the writes; many keys appear.
        assert!(c[0] as usize > ops.len() / 50, "top {}", c[0]);
        assert!(counts.len() > 2_000, "{} keys", counts.len());
    }
}

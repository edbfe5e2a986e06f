//! Fault injection: the per-direction fault settings ([`FaultConfig`]), probabilities as
//! exact fixed-point thresholds ([`Prob`]), the seeded decision maker ([`FaultInjector`]) and
//! the counters of what was injected ([`FaultStats`]).
//!
//! Randomness comes from ChaCha8 (rand_chacha): its output for a seed is specified and
//! portable, so a run with the same seed injects the same faults on every machine, and it is
//! fast enough to draw once per frame per enabled fault.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

use crate::time::Nanos;

/// A probability stored as a threshold on a uniform 32-bit draw: an event fires when
/// `draw < threshold`, with `threshold = round(p * 2^32)`. 0 never fires; 1 always does.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Prob(u64);

/// A probability outside `[0, 1]` (or NaN).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("probability {0} is not between 0 and 1")]
pub struct BadProbability(pub f64);

impl Prob {
    /// Never.
    pub const NEVER: Prob = Prob(0);
    /// Always.
    pub const ALWAYS: Prob = Prob(1 << 32);

    /// From a probability in `[0, 1]`.
    pub fn new(p: f64) -> Result<Prob, BadProbability> {
        if !(0.0..=1.0).contains(&p) {
            return Err(BadProbability(p));
        }
        Ok(Prob((p * 4_294_967_296.0).round() as u64))
    }
    /// The probability as a float.
    pub fn get(self) -> f64 {
        self.0 as f64 / 4_294_967_296.0
    }
    /// Whether it can ever fire.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// Draws once from `rng` (no draw at all when zero, so disabled faults cost nothing and
    /// do not shift the random sequence of the others).
    #[inline]
    pub fn sample(self, rng: &mut ChaCha8Rng) -> bool {
        self.0 != 0 && u64::from(rng.next_u32()) < self.0
    }
}

/// Faults applied to one direction of a link. Probabilities are per frame.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FaultConfig {
    /// Probability that a frame is lost.
    pub loss: f64,
    /// Probability that a frame is delivered twice.
    pub duplicate: f64,
    /// Probability that a frame is held back by `reorder_delay_ns`, letting later frames
    /// overtake it.
    pub reorder: f64,
    /// How long a reordered frame is held back, in nanoseconds.
    pub reorder_delay_ns: u64,
    /// Probability that one random bit of a frame is flipped. The frame is still delivered
    /// (the FCS is not modelled), so checksums and the RoCEv2 ICRC above it see the damage.
    pub corrupt: f64,
    /// The link is down: every frame is dropped.
    pub link_down: bool,
}

impl FaultConfig {
    /// Checks the probabilities.
    pub fn validate(&self) -> Result<(), BadProbability> {
        for p in [self.loss, self.duplicate, self.reorder, self.corrupt] {
            Prob::new(p)?;
        }
        Ok(())
    }
    /// Whether no fault is configured.
    pub fn is_none(&self) -> bool {
        !self.link_down
            && self.loss == 0.0
            && self.duplicate == 0.0
            && self.reorder == 0.0
            && self.corrupt == 0.0
    }
}

/// Counts of injected faults, one direction.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Frames dropped by the loss fault.
    pub lost: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Frames held back to reorder them.
    pub reordered: u64,
    /// Frames with a flipped bit.
    pub corrupted: u64,
    /// Frames dropped because the link was down.
    pub down_dropped: u64,
    /// Frames dropped because the link's queue (rate limiter backlog) was full.
    pub queue_dropped: u64,
}

/// What to do with one frame.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Drop it (loss).
    pub drop: bool,
    /// Deliver it twice.
    pub duplicate: bool,
    /// Flip this bit (index into the frame's bits).
    pub flip_bit: Option<usize>,
    /// Extra delay (reordering).
    pub extra_delay: Nanos,
}

/// Compiled fault settings plus the seeded random source.
#[derive(Clone, Debug)]
pub struct FaultInjector {
    rng: ChaCha8Rng,
    loss: Prob,
    duplicate: Prob,
    reorder: Prob,
    reorder_delay: Nanos,
    corrupt: Prob,
    link_down: bool,
    any: bool,
}

impl FaultInjector {
    /// No faults yet, random source seeded with `seed`.
    pub fn new(seed: u64) -> FaultInjector {
        FaultInjector {
            rng: ChaCha8Rng::seed_from_u64(seed),
            loss: Prob::NEVER,
            duplicate: Prob::NEVER,
            reorder: Prob::NEVER,
            reorder_delay: Nanos::ZERO,
            corrupt: Prob::NEVER,
            link_down: false,
            any: false,
        }
    }

    /// Applies new settings; the random sequence continues.
    pub fn configure(&mut self, c: &FaultConfig) -> Result<(), BadProbability> {
        self.loss = Prob::new(c.loss)?;
        self.duplicate = Prob::new(c.duplicate)?;
        self.reorder = Prob::new(c.reorder)?;
        self.corrupt = Prob::new(c.corrupt)?;
        self.reorder_delay = Nanos(c.reorder_delay_ns);
        self.link_down = c.link_down;
        self.any = !c.is_none();
        Ok(())
    }

    /// Whether any fault is configured.
    pub fn is_active(&self) -> bool {
        self.any
    }

    /// Whether the link is down.
    pub fn link_down(&self) -> bool {
        self.link_down
    }

    /// Decides the fate of one frame of `len` bytes.
    #[inline]
    pub fn decide(&mut self, len: usize) -> Verdict {
        let mut v = Verdict::default();
        if !self.any {
            return v;
        }
        if self.loss.sample(&mut self.rng) {
            v.drop = true;
            return v;
        }
        v.duplicate = self.duplicate.sample(&mut self.rng);
        if self.reorder.sample(&mut self.rng) {
            v.extra_delay = self.reorder_delay;
        }
        if len > 0 && self.corrupt.sample(&mut self.rng) {
            let bits = (len as u64) * 8;
            // Multiply-shift maps a uniform u32 onto [0, bits) without modulo bias worth
            // caring about at frame sizes.
            v.flip_bit = Some(((u64::from(self.rng.next_u32()) * bits) >> 32) as usize);
        }
        v
    }
}

/// Flips bit `bit` (0 = most significant bit of byte 0) of `data`; out-of-range does nothing.
pub fn flip_bit(data: &mut [u8], bit: usize) {
    if let Some(b) = data.get_mut(bit / 8) {
        *b ^= 0x80 >> (bit % 8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prob_bounds() {
        assert!(Prob::new(-0.1).is_err());
        assert!(Prob::new(1.5).is_err());
        assert!(Prob::new(f64::NAN).is_err());
        assert_eq!(Prob::new(1.0).unwrap(), Prob::ALWAYS);
        assert_eq!(Prob::new(0.0).unwrap(), Prob::NEVER);
        assert!((Prob::new(0.25).unwrap().get() - 0.25).abs() < 1e-9);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!((0..1000).all(|_| Prob::ALWAYS.sample(&mut rng)));
        assert!((0..1000).all(|_| !Prob::NEVER.sample(&mut rng)));
    }

    #[test]
    fn same_seed_same_decisions() {
        let cfg = FaultConfig {
            loss: 0.1,
            duplicate: 0.1,
            reorder: 0.1,
            reorder_delay_ns: 500,
            corrupt: 0.1,
            link_down: false,
        };
        let run = |seed| {
            let mut f = FaultInjector::new(seed);
            f.configure(&cfg).unwrap();
            (0..500).map(|_| f.decide(100)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
        let v = run(7);
        assert!(v.iter().any(|v| v.drop));
        assert!(v.iter().any(|v| v.duplicate));
        assert!(v.iter().any(|v| v.extra_delay == Nanos(500)));
        assert!(v.iter().all(|v| v.flip_bit.is_none_or(|b| b < 800)));
    }

    #[test]
    fn no_faults_no_effect() {
        let mut f = FaultInjector::new(3);
        f.configure(&FaultConfig::default()).unwrap();
        assert!(!f.is_active());
        assert!((0..100).all(|_| f.decide(64) == Verdict::default()));
    }

    #[test]
    fn bad_config_rejected() {
        let mut f = FaultInjector::new(3);
        let cfg = FaultConfig {
            loss: 2.0,
            ..FaultConfig::default()
        };
        assert_eq!(f.configure(&cfg), Err(BadProbability(2.0)));
        assert!(cfg.validate().is_err());
    }

    #[test]
    fn flip_bit_flips_exactly_one() {
        let mut d = vec![0u8; 4];
        flip_bit(&mut d, 0);
        flip_bit(&mut d, 31);
        flip_bit(&mut d, 32);
        assert_eq!(d, vec![0x80, 0, 0, 0x01]);
    }
}

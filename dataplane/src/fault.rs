//! Fault injection: the per-direction fault settings ([`FaultConfig`]), probabilities as
//! exact fixed-point thresholds ([`Prob`]), the seeded decision maker ([`FaultInjector`]) and
//! the counters of what was injected ([`FaultStats`]).
//!
//! Besides random faults, a direction can lose every frame that matches: frames whose IPv4
//! destination is one address ([`FaultConfig::drop_ipv4_dst`], `drop_to=` in the link
//! syntax), a path that is broken while the link itself stays up. Matching takes no random
//! draw, so it never shifts the random sequence of the other faults.
//!
//! Randomness comes from ChaCha8 (rand_chacha): its output for a seed is specified and
//! portable, so a run with the same seed injects the same faults on every machine, and it is
//! fast enough to draw once per frame per enabled fault.

use std::net::Ipv4Addr;

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
    /// Frames whose IPv4 destination is this address are lost (counted as
    /// [`FaultStats::lost`]); everything else passes. An Ethernet frame matches when its
    /// EtherType (after at most one 802.1Q tag) is IPv4 and its destination address is this
    /// one.
    pub drop_ipv4_dst: Option<Ipv4Addr>,
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
            && self.drop_ipv4_dst.is_none()
            && self.loss == 0.0
            && self.duplicate == 0.0
            && self.reorder == 0.0
            && self.corrupt == 0.0
    }
}

/// Counts of injected faults, one direction.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Frames dropped by the loss fault, or because they matched
    /// [`FaultConfig::drop_ipv4_dst`].
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
    /// Frames the link model still held when its port was closed (a stop that came before
    /// they were due).
    pub stop_dropped: u64,
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
    drop_ipv4_dst: Option<[u8; 4]>,
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
            drop_ipv4_dst: None,
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
        self.drop_ipv4_dst = c.drop_ipv4_dst.map(|a| a.octets());
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

    /// Whether `frame` matches a match-based drop ([`FaultConfig::drop_ipv4_dst`]). Takes no
    /// random draw.
    #[inline]
    pub fn matches_drop(&self, frame: &[u8]) -> bool {
        match self.drop_ipv4_dst {
            Some(dst) => ipv4_dst(frame) == Some(dst),
            None => false,
        }
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

/// The IPv4 destination address of an Ethernet frame (EtherType IPv4 directly or after one
/// 802.1Q / 802.1ad tag); None for anything else or a frame too short to hold it.
pub fn ipv4_dst(frame: &[u8]) -> Option<[u8; 4]> {
    let ethertype = |o: usize| {
        frame
            .get(o..o + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut l3 = 14;
    let mut et = ethertype(12)?;
    if et == 0x8100 || et == 0x88a8 {
        et = ethertype(16)?;
        l3 = 18;
    }
    if et != 0x0800 || frame.get(l3).is_none_or(|v| v >> 4 != 4) {
        return None;
    }
    let b = frame.get(l3 + 16..l3 + 20)?;
    Some([b[0], b[1], b[2], b[3]])
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
            drop_ipv4_dst: None,
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

    fn ipv4_frame(src: [u8; 4], dst: [u8; 4], vlan: bool) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        if vlan {
            f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let mut ip = vec![0u8; 20];
        ip[0] = 0x45;
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        f.extend_from_slice(&ip);
        f.extend_from_slice(&[0u8; 26]);
        f
    }

    #[test]
    fn drop_ipv4_dst_matches_only_that_destination() {
        let mut f = FaultInjector::new(3);
        let cfg = FaultConfig {
            drop_ipv4_dst: Some(Ipv4Addr::new(10, 0, 0, 100)),
            ..FaultConfig::default()
        };
        assert!(!cfg.is_none());
        f.configure(&cfg).unwrap();
        assert!(f.is_active());
        let (h1, h2, sw) = ([10, 0, 0, 1], [10, 0, 0, 2], [10, 0, 0, 100]);
        assert!(f.matches_drop(&ipv4_frame(h1, sw, false)));
        assert!(f.matches_drop(&ipv4_frame(h1, sw, true)));
        assert!(!f.matches_drop(&ipv4_frame(h1, h2, false)));
        // From that address is not to it; a frame cut before the address does not match.
        assert!(!f.matches_drop(&ipv4_frame(sw, h1, false)));
        assert!(!f.matches_drop(&ipv4_frame(h1, sw, false)[..33]));
        let mut arp = ipv4_frame(h1, sw, false);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert!(!f.matches_drop(&arp));
        assert!(!f.matches_drop(&[0u8; 10]));
        // Nothing else is injected, and matching draws nothing.
        assert!((0..100).all(|_| f.decide(64) == Verdict::default()));
        f.configure(&FaultConfig::default()).unwrap();
        assert!(!f.matches_drop(&ipv4_frame(h1, sw, false)));
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

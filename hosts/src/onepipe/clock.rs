//! A host clock: the true (lab) time seen through a per-host offset and drift, synchronised by
//! a PTP-like offset exchange, and monotonic: corrections never make it go backwards, and two
//! readings are never equal (a sender's timestamps strictly increase, which the barriers rely
//! on).

/// A host's clock.
#[derive(Debug, Clone)]
pub struct HostClock {
    /// Nanoseconds this clock is ahead of true time at true time 0.
    skew_ns: i64,
    /// Parts per million it runs fast.
    drift_ppm: f64,
    /// The correction learned from synchronisation, added to the raw reading.
    correction_ns: i64,
    last: u64,
}

/// The offset (`clock - master`) a PTP exchange measures: the request leaves at `t1` (this
/// clock), reaches the master at `t2`, the reply leaves at `t3` (master) and arrives at `t4`.
pub fn ptp_offset(t1: u64, t2: u64, t3: u64, t4: u64) -> i64 {
    ((t1 as i64 - t2 as i64) + (t4 as i64 - t3 as i64)) / 2
}

impl HostClock {
    pub fn new(skew_ns: i64, drift_ppm: f64) -> Self {
        HostClock {
            skew_ns,
            drift_ppm,
            correction_ns: 0,
            last: 0,
        }
    }

    fn raw(&self, true_ns: u64) -> i64 {
        true_ns as i64 + self.skew_ns + (true_ns as f64 * self.drift_ppm * 1e-6) as i64
    }

    /// The clock at true time `true_ns`: 48 bits, strictly after every earlier reading.
    pub fn read(&mut self, true_ns: u64) -> u64 {
        let v = (self.raw(true_ns) + self.correction_ns).max(0) as u64;
        let v = v.max(self.last + 1);
        self.last = v;
        v & super::ts::MASK
    }

    /// The clock without advancing it (a lower bound of the next reading).
    pub fn peek(&self, true_ns: u64) -> u64 {
        let v = (self.raw(true_ns) + self.correction_ns).max(0) as u64;
        v.max(self.last + 1) & super::ts::MASK
    }

    /// The last reading (every later one is above it).
    pub fn last(&self) -> u64 {
        self.last & super::ts::MASK
    }

    /// Applies a measured offset from the master (see [`ptp_offset`]).
    pub fn correct(&mut self, offset_ns: i64) {
        self.correction_ns -= offset_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skewed_clocks_converge_by_offset_exchange_and_stay_monotonic() {
        let mut c = HostClock::new(5_000, 10.0);
        let t1 = c.read(1_000_000);
        // symmetric 700 ns paths to a master at true time
        let (t2, t3) = (1_000_700, 1_000_800);
        let t4 = c.read(1_001_500);
        let off = ptp_offset(t1, t2, t3, t4);
        assert!((off - 5_010).abs() <= 1, "{off}");
        c.correct(off);
        let after = c.read(1_002_000);
        assert!(after > t4, "never backwards: {after} vs {t4}");
        let later = c.read(2_000_000);
        assert!((later as i64 - 2_000_000).abs() < 100, "{later}");
        assert!(c.read(2_000_000) > later, "strictly increasing");
    }
}

//! Time as the endpoint sees it: an `Instant` is nanoseconds since an epoch the caller
//! chooses (virtual in tests, a monotonic clock in production). The endpoint never
//! reads a clock itself.

use std::ops::Add;
use std::time::Duration;

/// A point in time, in nanoseconds since the caller's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);

    /// From nanoseconds since the epoch.
    pub const fn from_nanos(ns: u64) -> Instant {
        Instant(ns)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        let ns = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        Instant(self.0.saturating_add(ns))
    }
}

/// Local ACK timeout of an RC QP: 4.096 us * 2^timeout; `None` for 0 (infinite).
pub fn ack_timeout(timeout: u8) -> Option<Duration> {
    if timeout == 0 {
        None
    } else {
        Some(Duration::from_nanos(4096u64 << u32::from(timeout.min(31))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ack_timeout_table() {
        assert_eq!(ack_timeout(0), None);
        assert_eq!(ack_timeout(1), Some(Duration::from_nanos(8192)));
        assert_eq!(ack_timeout(14).unwrap().as_micros(), 67_108);
        assert_eq!(ack_timeout(18).unwrap().as_millis(), 1073);
    }

    #[test]
    fn add_saturates() {
        let t = Instant::from_nanos(u64::MAX - 1) + Duration::from_secs(1);
        assert_eq!(t.as_nanos(), u64::MAX);
        assert_eq!(
            Instant::from_nanos(5).saturating_duration_since(Instant::from_nanos(9)),
            Duration::ZERO
        );
    }
}

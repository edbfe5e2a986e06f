//! Time for the whole project: [`Nanos`], a point in time or a span in nanoseconds, and the
//! [`Clock`] trait with a hand-driven [`VirtualClock`] (tests, deterministic runs) and a
//! [`WallClock`] (production).
//!
//! Nothing in the packet path reads a clock by itself: callers pass `now` in, so the same code
//! runs under virtual time in tests and wall time in production.

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Nanoseconds: a point in time (since the clock's epoch) or a span.
///
/// Arithmetic saturates instead of wrapping or panicking, so a huge configured delay can never
/// make time run backwards.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Time zero (a clock's epoch) or an empty span.
    pub const ZERO: Nanos = Nanos(0);
    /// The far future; used as "never".
    pub const MAX: Nanos = Nanos(u64::MAX);

    /// From whole seconds (saturating).
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s.saturating_mul(1_000_000_000))
    }
    /// From milliseconds (saturating).
    pub const fn from_millis(ms: u64) -> Nanos {
        Nanos(ms.saturating_mul(1_000_000))
    }
    /// From microseconds (saturating).
    pub const fn from_micros(us: u64) -> Nanos {
        Nanos(us.saturating_mul(1_000))
    }
    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Nanos {
        Nanos(ns)
    }
    /// The raw count of nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// As (fractional) seconds, for reports.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// `self + rhs`, saturating at [`Nanos::MAX`].
    pub const fn saturating_add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_add(rhs.0))
    }
    /// `self - rhs`, saturating at zero.
    pub const fn saturating_sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(rhs.0))
    }
    /// As a [`Duration`].
    pub const fn to_duration(self) -> Duration {
        Duration::from_nanos(self.0)
    }
}

impl From<Duration> for Nanos {
    fn from(d: Duration) -> Nanos {
        Nanos(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<Nanos> for Duration {
    fn from(n: Nanos) -> Duration {
        n.to_duration()
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, rhs: Nanos) -> Nanos {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Nanos {
    fn add_assign(&mut self, rhs: Nanos) {
        *self = *self + rhs;
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, rhs: Nanos) -> Nanos {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Nanos {
    fn sub_assign(&mut self, rhs: Nanos) {
        *self = *self - rhs;
    }
}

impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Nanos;
}

/// A clock that only moves when told to. Clones share the same time, so a test can hold one
/// handle and give another to the code under test.
#[derive(Clone, Debug, Default)]
pub struct VirtualClock {
    now: Arc<AtomicU64>,
}

impl VirtualClock {
    /// A clock at time zero.
    pub fn new() -> VirtualClock {
        VirtualClock::default()
    }
    /// A clock starting at `start`.
    pub fn starting_at(start: Nanos) -> VirtualClock {
        VirtualClock {
            now: Arc::new(AtomicU64::new(start.0)),
        }
    }
    /// Moves time forward by `by` (saturating) and returns the new time.
    pub fn advance(&self, by: Nanos) -> Nanos {
        let mut cur = self.now.load(Ordering::Acquire);
        loop {
            let next = cur.saturating_add(by.0);
            match self
                .now
                .compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Nanos(next),
                Err(seen) => cur = seen,
            }
        }
    }
    /// Moves time to `t` if `t` is later than now; time never goes backwards.
    pub fn advance_to(&self, t: Nanos) -> Nanos {
        Nanos(self.now.fetch_max(t.0, Ordering::AcqRel).max(t.0))
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Nanos {
        Nanos(self.now.load(Ordering::Acquire))
    }
}

/// Wall time: nanoseconds since the Unix epoch, read from a monotonic clock anchored once at
/// construction (so it never jumps backwards when the system clock is adjusted).
#[derive(Clone, Debug)]
pub struct WallClock {
    anchor: Instant,
    anchor_epoch: Nanos,
}

impl WallClock {
    /// A wall clock anchored at the current system time.
    pub fn new() -> WallClock {
        let anchor_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(Nanos::from)
            .unwrap_or(Nanos::ZERO);
        WallClock {
            anchor: Instant::now(),
            anchor_epoch,
        }
    }
}

impl Default for WallClock {
    fn default() -> Self {
        WallClock::new()
    }
}

impl Clock for WallClock {
    fn now(&self) -> Nanos {
        self.anchor_epoch + Nanos::from(self.anchor.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        assert_eq!(Nanos::MAX + Nanos(5), Nanos::MAX);
        assert_eq!(Nanos(3) - Nanos(5), Nanos::ZERO);
        assert_eq!(
            Nanos::from_secs(2) + Nanos::from_millis(5),
            Nanos(2_005_000_000)
        );
        assert_eq!(Nanos::from_micros(7).as_nanos(), 7_000);
        assert_eq!(Nanos::from(Duration::from_millis(3)), Nanos(3_000_000));
        assert_eq!(Duration::from(Nanos(1_500)), Duration::from_nanos(1_500));
    }

    #[test]
    fn display_shows_seconds_and_nanos() {
        assert_eq!(Nanos(1_000_000_042).to_string(), "1.000000042s");
    }

    #[test]
    fn virtual_clock_is_shared_and_monotonic() {
        let c = VirtualClock::new();
        let d = c.clone();
        assert_eq!(c.now(), Nanos::ZERO);
        c.advance(Nanos(10));
        assert_eq!(d.now(), Nanos(10));
        d.advance_to(Nanos(4));
        assert_eq!(c.now(), Nanos(10), "advance_to must not go backwards");
        d.advance_to(Nanos(40));
        assert_eq!(c.now(), Nanos(40));
    }

    #[test]
    fn wall_clock_moves_forward() {
        let c = WallClock::new();
        let a = c.now();
        std::thread::sleep(Duration::from_millis(2));
        let b = c.now();
        assert!(b > a);
        assert!(a > Nanos::from_secs(1_600_000_000), "epoch-based");
    }
}

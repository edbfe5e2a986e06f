//! Errors of the host port loop.

use dataplane::PortError;

/// What stopped a host loop.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The port failed as a whole (not a per-frame drop).
    #[error(transparent)]
    Port(#[from] PortError),
    /// `run_until` reached its deadline before the condition held.
    #[error("deadline reached after {:?} before the condition held", duration(.waited_ns))]
    Deadline {
        /// How long the loop ran, in nanoseconds.
        waited_ns: u64,
    },
    /// A virtual network has nothing left to do (no frame in flight, no timer armed) and the
    /// condition still does not hold: it would wait forever.
    #[error(
        "virtual network is idle at {:?} (virtual time) and the condition does not hold",
        duration(.at_ns)
    )]
    Stalled {
        /// Virtual time at which it stalled.
        at_ns: u64,
    },
}

/// Nanoseconds as a duration a person reads (`5s`, `1.25ms`).
fn duration(ns: &u64) -> std::time::Duration {
    std::time::Duration::from_nanos(*ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_durations() {
        let e = HostError::Deadline {
            waited_ns: 5_000_000_000,
        };
        assert_eq!(
            e.to_string(),
            "deadline reached after 5s before the condition held"
        );
        let e = HostError::Stalled { at_ns: 1_250_000 };
        assert!(e.to_string().contains("idle at 1.25ms"), "{e}");
    }
}

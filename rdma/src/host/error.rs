//! Errors of the host port loop.

use dataplane::PortError;

/// What stopped a host loop.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The port failed as a whole (not a per-frame drop).
    #[error(transparent)]
    Port(#[from] PortError),
    /// `run_until` reached its deadline before the condition held.
    #[error("deadline reached after {waited_ns} ns before the condition held")]
    Deadline {
        /// How long the loop ran, in nanoseconds.
        waited_ns: u64,
    },
    /// A virtual network has nothing left to do (no frame in flight, no timer armed) and the
    /// condition still does not hold: it would wait forever.
    #[error("virtual network is idle at {at_ns} ns and the condition does not hold")]
    Stalled {
        /// Virtual time at which it stalled.
        at_ns: u64,
    },
}

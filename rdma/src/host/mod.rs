//! Binding the sans-I/O endpoint to real ports: [`Host`] is the port loop (receive a batch,
//! feed the endpoint, run due timers, drain its frames into a send batch), [`Host::run_until`]
//! blocks on a clock until a condition holds, and [`VirtualNet`] steps several hosts in
//! virtual time for deterministic tests.

mod capture;
mod error;
pub mod perf;
mod port_loop;
mod virtual_net;

pub use capture::{CaptureCounts, CapturePort};
pub use error::HostError;
pub use port_loop::{Host, Progress, HOST_BATCH};
pub use virtual_net::VirtualNet;

use dataplane::Nanos;

use crate::verbs::Instant;

/// The endpoint's view of a dataplane time.
pub fn instant(now: Nanos) -> Instant {
    Instant::from_nanos(now.as_nanos())
}

/// The dataplane's view of an endpoint time.
pub fn nanos(t: Instant) -> Nanos {
    Nanos(t.as_nanos())
}

#[cfg(test)]
mod tests;

//! `dataplane`: packet I/O for pisa.
//!
//! - [`port`]: the one [`Port`] trait (batched receive/send with timestamps), [`FrameBatch`],
//!   statistics ([`PortStats`], [`StatsHandle`]) and [`PortError`].
//! - [`time`]: [`Nanos`] and the [`Clock`]s ([`VirtualClock`], [`WallClock`]) used project-wide.
//! - [`spec`]: [`PortSpec`], the `KIND:ARG` strings users type.
//! - Backends: [`mem`] (in-memory links), [`pcap`] (replay/capture files).
pub mod fault;
pub mod link;
pub mod mem;
pub mod pcap;
pub mod port;
pub mod spec;
pub mod time;

pub use port::{DropReason, Frame, FrameBatch, Port, PortError, PortStats, StatsHandle};
pub use spec::{PortSpec, PortSpecError};
pub use time::{Clock, Nanos, VirtualClock, WallClock};

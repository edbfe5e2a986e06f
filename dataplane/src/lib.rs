//! `dataplane`: packet I/O for pisa.
//!
//! - [`port`]: the one [`Port`] trait (batched receive/send with timestamps), [`FrameBatch`],
//!   statistics ([`PortStats`], [`StatsHandle`]) and [`PortError`].
//! - [`time`]: [`Nanos`] and the [`Clock`]s ([`VirtualClock`], [`WallClock`]) used project-wide.
//! - [`spec`]: [`PortSpec`], the `KIND:ARG` strings users type; [`open_port`] turns one into a
//!   port.
//! - Backends: [`mem`] (in-memory links), [`pcap`] (replay/capture files), [`afpacket`]
//!   (AF_PACKET sockets), `afxdp` (AF_XDP sockets, cargo feature `afxdp`).
//! - [`link`] + [`fault`]: a wrapper port with a link model (rate, delay, queue) and seeded
//!   fault injection, controlled at run time through [`LinkControl`].
//! - [`runtime`]: runs a [`runtime::Pipeline`] on ports (threads, I/O modes, control calls,
//!   statistics, metrics); [`switch`]: pisa's switch on it, the one pipeline every user of a
//!   switch (`pisa run`, labs, tests) starts.
//! - [`lab`] + [`netns`]: lab topologies of hosts in network namespaces wired by veth pairs.

pub mod afpacket;
#[cfg(feature = "afxdp")]
pub mod afxdp;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod fault;
pub mod lab;
pub mod link;
pub mod mem;
pub mod netns;
pub mod open;
pub mod pcap;
pub mod port;
#[cfg(feature = "switch")]
pub mod runtime;
pub mod spec;
#[cfg(feature = "switch")]
pub mod switch;
#[cfg(feature = "dpdk")]
pub mod swx;
pub mod swx_spec;
pub mod time;

pub use afpacket::{AfPacketConfig, AfPacketPort};
#[cfg(feature = "afxdp")]
pub use afxdp::AfXdpPort;
pub use fault::{FaultConfig, FaultStats};
pub use lab::{lab_down, lab_exec, lab_up, Lab, LabError, LabState};
pub use link::{LinkConfig, LinkControl, LinkPort};
pub use mem::{MemHub, MemPort};
pub use open::open_port;
pub use pcap::PcapPort;
pub use port::{DropReason, Frame, FrameBatch, Port, PortError, PortStats, StatsHandle};
pub use spec::{PortSpec, PortSpecError};
pub use time::{Clock, Nanos, VirtualClock, WallClock};

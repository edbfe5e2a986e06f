//! P4CE labs: a switch running `p4/programs/p4ce.p4` with its agent (`control::p4ce`), a leader
//! and 1..=4 replicas running the host side (`hosts::p4ce`, `hosts::mu`), wired together.
//!
//! - [`mem`]: in memory, in virtual time (deterministic, no root): the switch as
//!   `dataplane::switch::SwitchPipeline`, hosts on in-memory links with the link model; the
//!   tests, `pisa consensus bench` and `pisa demo p4ce` run on it.
//! - [`netns`]: in network namespaces, in wall-clock time (root): the switch on
//!   `dataplane::switch::SwitchRuntime` with AF_PACKET ports, each node on its own thread in
//!   its namespace (`hosts::p4ce::thread`).
//!
//! Both labs break the switch's P4CE path the same way, through the dataplane's fault model:
//! frames addressed to the switch's IP are lost on the switch's host-facing ports
//! (`dataplane::FaultConfig::drop_ipv4_dst` on their receive side); plain L2 forwarding between
//! hosts goes on.

pub mod mem;
pub mod netns;

pub use mem::{compile_p4ce, Lab, LabConfig, LabError};

/// The switch's CPU port: CM MADs to the switch's IP end there, at the agent's endpoint.
pub const CPU_PORT: u16 = 64;

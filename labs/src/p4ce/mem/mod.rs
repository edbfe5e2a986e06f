//! A P4CE lab in memory: a switch running `p4ce.p4` as [`dataplane::switch::SwitchPipeline`]
//! (the pipeline `pisa run` forwards with), a leader and 1..=4 replicas, each an
//! [`rdma::verbs::Endpoint`] on an in-memory link ([`dataplane::mem::pair`], the host's end
//! wrapped in a [`dataplane::LinkPort`] that models rate, delay and loss in both directions,
//! the switch's end in a pass-through one that carries the switch-side faults), driven in
//! virtual time by [`Lab::step`]. The P4CE agent ([`control::p4ce::Agent`]) programs the
//! group; the connections are set up the way the RDMA CM would leave them (QPNs, PSNs, R_keys
//! exchanged), directly, or (with `LabConfig::via_cm`) through real RDMA CM exchanges between
//! the hosts' CM steps ([`hosts::p4ce::node`]) and the agent's endpoint on the switch's CPU
//! port ([`control::p4ce::SwitchCm`]).
//!
//! - [`lab`]: [`Lab`], [`LabConfig`], fault switches (crash a replica, break the switch path).
//! - `failover`: heartbeats read over RDMA, the lowest live id leads, write permissions
//!   follow the leader, and a new leader recovers the log and takes the switch path.
//! - [`failtime`]: fail-over times (replica, leader, switch crashes) in virtual time.
//! - [`bench`](mod@bench): the consensus benchmark ([`bench::run`]) behind `pisa consensus bench`.

pub mod bench;
mod failover;
pub mod failtime;
pub mod lab;

pub use bench::{BenchConfig, BenchReport};
pub use failover::FailoverEvent;
pub use lab::{compile_p4ce, Lab, LabConfig, LabError};

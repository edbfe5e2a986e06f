//! A P4CE lab in memory: a [`pipeline::switch::Switch`] running `p4ce.p4`, a leader and 2..=4 replicas, each an
//! [`rdma::verbs::Endpoint`] on an in-memory link ([`dataplane::mem::pair`] wrapped in a [`dataplane::LinkPort`] that
//! models rate, delay and loss in both directions), driven in virtual time by [`Lab::step`].
//! The P4CE agent ([`control::p4ce::Agent`]) programs the group; the connections are set up
//! the way the RDMA CM would leave them (QPNs, PSNs, R_keys exchanged), directly, or (with
//! `LabConfig::via_cm`) through real RDMA CM exchanges with the agent's endpoint on the
//! switch's CPU port ([`crate::p4ce_cm`]).
//!
//! - [`lab`]: [`Lab`], [`LabConfig`], fault switches (crash a replica, break the switch path).
//! - `failover`: heartbeats read over RDMA, the lowest live id leads, write permissions
//!   follow the leader, and a new leader recovers the log and takes the switch path.
//! - [`failtime`]: fail-over times (replica, leader, switch crashes) in virtual time.
//! - [`bench`]: the consensus benchmark ([`bench::run`]) behind `pisa consensus bench`.

pub mod bench;
mod failover;
pub mod failtime;
pub mod lab;
pub mod node;

pub use bench::{BenchConfig, BenchReport};
pub use failover::FailoverEvent;
pub use lab::{compile_p4ce, Lab, LabConfig, LabError};

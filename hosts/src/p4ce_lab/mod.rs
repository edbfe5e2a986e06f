//! A P4CE lab in memory: a [`pipeline::switch::Switch`] running `p4ce.p4`, a leader and 2..=4 replicas, each an
//! [`rdma::verbs::Endpoint`] on an in-memory link ([`dataplane::mem::pair`] wrapped in a [`dataplane::LinkPort`] that
//! models rate, delay and loss in both directions), driven in virtual time by [`Lab::step`].
//! The P4CE agent ([`control::p4ce::Agent`]) programs the group; the connections are set up
//! the way the RDMA CM would leave them (QPNs, PSNs, R_keys exchanged), directly.
//!
//! - [`lab`]: [`Lab`], [`LabConfig`], fault switches (crash a replica, break the switch path).
//! - [`bench`]: the consensus benchmark ([`bench::run`]) behind `pisa consensus bench`.

pub mod bench;
pub mod lab;

pub use bench::{BenchConfig, BenchReport};
pub use lab::{compile_p4ce, Lab, LabConfig, LabError};

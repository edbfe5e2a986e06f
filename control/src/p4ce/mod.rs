//! The P4CE agent (Dulong et al., ICDCS 2024, §IV-A): the control plane of
//! `p4/programs/p4ce.p4`. It turns a communication group (a leader, its replicas with their
//! connection parameters, f) into table entries, register writes and a multicast group through
//! the runtime API, and undoes them: teardown, a replica removed or added on a view change,
//! several groups at once. It never touches packets; the switch program does all of that.
//!
//! - [`spec`]: what a group is made of ([`GroupSpec`], [`LeaderConn`], [`ReplicaConn`]).
//! - [`agent`]: [`Agent`], which programs and unprograms groups on a [`pipeline::switch::Switch`].
//! - [`wire`]: the private data of the RDMA CM messages that set a group up (the leader's
//!   request, the replicas' offers, the agent's reply); the CM endpoint itself lives with the
//!   RDMA code (`hosts::p4ce_cm`).

pub mod agent;
pub mod spec;
pub mod wire;

pub use agent::{Agent, AgentConfig, P4ceError};
pub use spec::{GroupSpec, LeaderConn, ReplicaConn, MAX_REPLICAS};
pub use wire::{GroupReply, GroupRequest, ReplicaAddr, ReplicaOffer, WireError, P4CE_SERVICE_PORT};

#[cfg(test)]
mod tests;

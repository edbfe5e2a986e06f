//! The P4CE agent (Dulong et al., ICDCS 2024, §IV-A): the control plane of
//! `p4/programs/p4ce.p4`. It turns a communication group (a leader, its replicas with their
//! connection parameters, f) into table entries, register writes and a multicast group through
//! the runtime API, and undoes them: teardown, a replica removed or added on a view change,
//! several groups at once. It never touches packets; the switch program does all of that.
//!
//! - [`spec`]: what a group is made of ([`GroupSpec`], [`LeaderConn`], [`ReplicaConn`]).
//! - [`agent`]: [`Agent`], which programs and unprograms groups on a [`pipeline::switch::Switch`].
//! - [`cm`]: the agent's RDMA CM half ([`SwitchCm`]), an RDMA endpoint on the switch's CPU
//!   port that sets groups up at the leader's request. The private data of its messages (the
//!   leader's request, the replicas' offers, its reply) is the hosts' format
//!   ([`hosts::p4ce::wire`]): the one thing both sides share.

pub mod agent;
pub mod cm;
pub mod spec;

pub use agent::{Agent, AgentConfig, P4ceError};
pub use cm::{Attachment, CmAgentEvent, SwitchCm};
pub use spec::{GroupSpec, LeaderConn, ReplicaConn, MAX_REPLICAS};

#[cfg(test)]
mod tests;

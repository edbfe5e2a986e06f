//! MC-RDMA's switch control plane (Huang et al., seed 001, §IV-A/B, §VI-A): the control plane
//! of `p4/programs/mcrdma.p4`. The hosts' CMD (`hosts::mcrdma`) connects the QPs of a group;
//! this module decides where the fabric replicates (Algorithm 1, [`bifurcation()`] in
//! [`mod@bifurcation`]) and writes it into the switches through the runtime API ([`agent`], one
//! switch; [`controller`], the fabric), and redoes it on a route change, a leave or a join. It
//! never touches packets.

pub mod agent;
pub mod bifurcation;
pub mod controller;
pub mod spec;

use std::net::Ipv4Addr;

pub use bifurcation::{bifurcation, Branch, Fabric, Link, Node, Plan, SwitchId, SwitchRules};
pub use controller::{Controller, Switches};
pub use spec::{GroupKey, GroupSpec, ReceiverSpec};

/// A refused control-plane request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum McError {
    /// The switch refused a runtime-API request (the program is not mcrdma.p4, a bad port, ...).
    #[error("runtime API: {0}")]
    Api(#[from] pipeline::api::ApiError),
    #[error("bifurcation: {0}")]
    Bifurcation(#[from] bifurcation::BifurcationError),
    #[error("{receivers} receivers, but the sender's ToR merges ACKs of at most {slots} (mcrdma.p4's MCRDMA_MAX_RECEIVERS)")]
    TooManyReceivers { receivers: usize, slots: usize },
    #[error("no more {0} on a switch")]
    OutOfIds(&'static str),
    #[error("group {0} exists")]
    Exists(GroupKey),
    #[error("no group {0}")]
    NoGroup(GroupKey),
    #[error("group {0} has no receiver {1}")]
    NoReceiver(GroupKey, Ipv4Addr),
    #[error("group {0} already has receiver {1}")]
    AlreadyMember(GroupKey, Ipv4Addr),
    #[error("group {0}: the last receiver cannot leave (remove the group)")]
    LastReceiver(GroupKey),
    #[error("host {0} is attached to no switch")]
    NoTor(Ipv4Addr),
    #[error("the sender's ToR {0} does not run mcrdma.p4: nothing would merge the ACKs")]
    NotProgrammable(String),
}

#[cfg(test)]
mod tests;

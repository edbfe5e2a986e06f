//! The host side of P4CE (Dulong et al., ICDCS 2024): what a leader and its replicas do to get
//! and use a P4CE switch's group, over the wire only (RDMA CM to the switch agent, RDMA WRITEs
//! to the switch's BCast QP); the switch side (p4ce.p4, its agent) is none of its business.
//!
//! - [`wire`]: the private data of the RDMA CM messages that set a group up (the leader's
//!   request, the replicas' offers, the agent's reply), shared with the agent
//!   (`control::p4ce::cm`).
//! - [`node`]: one node's endpoint, log and QPs ([`node::build_node`]), the addressing
//!   ([`node::host_mac`], [`node::host_ip`]) and the RDMA CM steps every node takes: a replica
//!   answering with its log ([`node::replica_accept`]), the leader asking the switch agent for
//!   the group ([`node::leader_request_group`]) and reading its answer
//!   ([`node::switch_path_from_reply`]).
//! - [`machine`]: a node as an I/O-free state machine ([`machine::Node`]: frames in and out
//!   through its endpoint, time passed in): the leader (connections through RDMA CM, the
//!   switch path, appends, commit latencies) or a replica (accepting, applying), fail-over
//!   and take-over included. Both labs run it: in memory as a host application of the
//!   in-memory driver, in namespaces on its own thread.
//! - [`thread`]: a [`machine::Node`] on its own thread in wall-clock time, on AF_PACKET in a
//!   network namespace ([`thread::NodeHandle`]).
//! - [`failover`]: leader fail-over, each node on its own: heartbeats read over RDMA, view
//!   changes, a new leader's recovery ([`failover::Failover`]).
//! - [`bench`](mod@bench): the consensus benchmark's figures and report ([`bench::Meter`],
//!   [`bench::BenchReport`], tables) that every lab measures with.
//! - [`integrity`]: the log-integrity check every bench run ends with (digests of what the
//!   leader appended and each replica applied).
//! - [`snapshot`]: the snapshot a leader offers a replica that joins the running log more
//!   than a lap of the ring behind (digests and recorded values of the entries it lacks).
//! - [`cpu`]: per-thread CPU time from procfs.
//!
//! The labs that put these nodes around a switch are in `pisa-labs` (`labs::p4ce`).

pub mod bench;
pub mod cpu;
pub mod failover;
pub mod integrity;
pub mod machine;
pub mod node;
pub mod snapshot;
pub mod thread;
pub mod wire;

use std::net::Ipv4Addr;

pub use bench::{BenchConfig, BenchReport, Meter};
pub use wire::{GroupReply, GroupRequest, ReplicaAddr, ReplicaOffer, WireError, P4CE_SERVICE_PORT};

/// Replicas in a group at most: p4ce.p4 keeps this many MinCredit slots per group
/// (`credit0..credit3`), and the group request has room for no more.
pub const MAX_REPLICAS: usize = 4;

/// Un-acknowledged packets (PSNs) of a group p4ce.p4 aggregates at a time: NumRecv has 256
/// cells per group, indexed by the PSN's low byte (§IV-C: "up to 256 un-acknowledged packets
/// on the fly per connection"); the leader keeps its switch path within them.
pub const PSN_WINDOW: u32 = 256;

/// The switch's MAC address (its RDMA CM agent and BCast/Aggr QPs answer for it).
pub const SWITCH_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];
/// The switch's IPv4 address.
pub const SWITCH_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 100);
/// The group index the leader asks for.
pub const GROUP: u8 = 1;
/// The rdma_cm port replicas listen on (for the switch agent and for leaders).
pub const REPLICA_CM_PORT: u16 = 7471;

/// A node could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A bad setting.
    #[error("bad setting: {0}")]
    Config(String),
    /// Setting up failed.
    #[error("{0}")]
    Setup(String),
    /// A node failed or did not answer.
    #[error("node {0}: {1}")]
    Node(u16, String),
    /// Entering a namespace.
    #[error(transparent)]
    Cmd(#[from] dataplane::netns::CmdError),
    /// A port.
    #[error("port: {0}")]
    Port(#[from] dataplane::PortError),
    /// The log.
    #[error("log: {0}")]
    Mu(#[from] crate::mu::MuError),
    /// An endpoint refused a verb.
    #[error("RDMA: {0}")]
    Verbs(#[from] rdma::verbs::VerbsError),
    /// The endpoint's port loop.
    #[error("host: {0}")]
    Host(#[from] rdma::host::HostError),
}

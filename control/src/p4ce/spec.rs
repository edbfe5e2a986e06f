//! A P4CE communication group as the agent programs it: the per-group metadata of the paper's
//! Table II (BCast QP, Aggr QP, multicast group, quorum) and a connection structure (Table III)
//! per endpoint, with the PSN offsets the switch uses to move packets between PSN spaces.

use std::net::Ipv4Addr;

/// MinCredit slots per group in `p4ce.p4` (`credit0..credit3`): at most this many replicas
/// (the hosts' group request has room for no more).
pub use hosts::p4ce::MAX_REPLICAS;

/// The leader's connection to the switch (Table III, the source endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaderConn {
    /// Endpoint identifier (8-bit in the paper; the PRE's RID space is 16 bits).
    pub ep: u16,
    /// The leader's MAC address.
    pub mac: [u8; 6],
    /// The leader's IPv4 address (only WRITEs from it are scattered).
    pub ip: Ipv4Addr,
    /// The leader's QPN (forwarded ACKs go to it).
    pub qpn: u32,
    /// The first PSN the leader sends on its QP to the switch.
    pub start_psn: u32,
    /// The switch port the leader hangs off.
    pub port: u16,
}

/// A replica's connection (Table III, a destination endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaConn {
    /// Endpoint identifier, also the RID of its multicast node.
    pub ep: u16,
    /// The replica's MAC address.
    pub mac: [u8; 6],
    /// The replica's IPv4 address.
    pub ip: Ipv4Addr,
    /// The replica's QPN (scattered copies go to it).
    pub qpn: u32,
    /// The first PSN the replica's QP expects.
    pub start_psn: u32,
    /// Base address of the replica's log.
    pub va: u64,
    /// Size of the replica's log in bytes.
    pub size: u64,
    /// The replica log's R_key.
    pub rkey: u32,
    /// The switch port the replica hangs off.
    pub port: u16,
}

impl ReplicaConn {
    /// The replica's PSN for the leader's PSN 0: `replica = leader + delta (mod 2^24)`.
    pub fn psn_delta(&self, leader: &LeaderConn) -> u32 {
        self.start_psn.wrapping_sub(leader.start_psn) & 0xFF_FFFF
    }
}

/// One communication group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    /// Group index (NumRecv and the credit registers are indexed by it).
    pub group: u8,
    /// Multicast group id in the PRE.
    pub mgid: u16,
    /// The BCast QP the leader writes to.
    pub bcast_qp: u32,
    /// The Aggr QP the replicas answer to.
    pub aggr_qp: u32,
    /// The virtual R_key handed to the leader.
    pub vrkey: u32,
    /// Replica ACKs needed before one goes to the leader (f: f replicas + the leader are a
    /// majority).
    pub f: u8,
    /// The leader.
    pub leader: LeaderConn,
    /// The replicas.
    pub replicas: Vec<ReplicaConn>,
}

impl GroupSpec {
    /// The virtual buffer the leader sees: as large as the smallest replica log.
    pub fn vsize(&self) -> u64 {
        self.replicas.iter().map(|r| r.size).min().unwrap_or(0)
    }
}

//! What an MC-RDMA group is made of, as the CMD hands it to the switches' control plane
//! (§IV-A): the multicast key <SRC, MC_ID>, the sender's QP and buffer, and per receiver its
//! address, QPN and registered memory.

use std::net::Ipv4Addr;

/// The multicast key <SRC, MC_ID>.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKey {
    pub sender: Ipv4Addr,
    pub mc_id: u32,
}

impl std::fmt::Display for GroupKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{}, {:#x}>", self.sender, self.mc_id)
    }
}

/// One receiver QP and the memory the sender writes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverSpec {
    pub ip: Ipv4Addr,
    pub qpn: u32,
    /// Start of the receiver's registered region.
    pub va: u64,
    pub rkey: u32,
}

/// A multicast connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupSpec {
    pub key: GroupKey,
    /// The sender QP's number (ACKs, NAKs and CNPs of the receivers carry it).
    pub sender_qpn: u32,
    /// DST_1: the address the sender's QP is connected to (data packets carry it).
    pub address: Ipv4Addr,
    /// The one initial PSN of every QP of the group.
    pub psn: u32,
    /// The sender's buffer: WRITEs to `[sender_va, sender_va + len)` are translated.
    pub sender_va: u64,
    pub len: u64,
    pub receivers: Vec<ReceiverSpec>,
}

impl GroupSpec {
    /// The receivers' addresses, in order (Algorithm 1's destination vector).
    pub fn dsts(&self) -> Vec<Ipv4Addr> {
        self.receivers.iter().map(|r| r.ip).collect()
    }
}

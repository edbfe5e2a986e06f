//! The packet replication engine (PRE): multicast groups → L1 nodes → L2 ports, with pruning.
//!
//! Model (TNA app note §5.7.3, BfRt `$pre.mgid` / `$pre.node` / `$pre.lag` / `$pre.prune`):
//! - a multicast group (MGID, 16 b) holds an ordered list of L1 nodes, each membership with
//!   an optional L1 exclusion id (`L1_XID` + valid);
//! - an L1 node (node id, 32 b) has a RID (16 b), a list of dev ports and a list of LAG ids;
//!   a node belongs to at most one group at a time (as in the driver);
//! - a LAG (id 0..=254) is a port set (a bitmap, as `$pre.lag` keeps `$DEV_PORT`): member
//!   `level2_mcast_hash % n` of its `n` ports in ascending order is picked, whatever order the
//!   ports were listed in (tofino-model `PacketReplicationEngine::get_lag_member` counts set bits);
//! - the L2 prune table maps an L2 XID (0..=287) to a port set.
//!
//! For a packet with `mcast_grp_a` and/or `mcast_grp_b` (both replicate, A first):
//! - **L1 prune**: a node is skipped when its membership has a valid XID equal to the
//!   packet's `level1_exclusion_id`;
//! - **L2 prune**: a port is skipped when `pkt.rid == node.rid` and the port is in the prune
//!   set of `pkt.level2_exclusion_id` (an L2 XID of 288 or more names no set: no pruning);
//! - each copy gets `port`, `rid` = the node's RID, and `rid_first`.
//!
//! `rid_first` (the app note leaves it to a "future revision"): true on the first copy this
//! packet produces for a given RID value, across both groups; every later copy with the same
//! RID has it false. Output order: group A then B, nodes in membership order, the node's dev
//! ports ascending, then its LAGs in the order given.

use std::collections::BTreeMap;

/// Largest dev port number (9 bits: pipe[8:7] | port[6:0]).
pub const MAX_DEV_PORT: u16 = 511;
/// L2 exclusion ids are 0..L2_XID_COUNT (`$pre.prune` has 288 entries).
pub const L2_XID_COUNT: u16 = 288;
/// LAG ids are 0..LAG_COUNT (`$pre.lag` has 255 entries).
pub const LAG_COUNT: u16 = 255;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PreError {
    #[error("multicast group {0} already exists")]
    GroupExists(u16),
    #[error("multicast group {0} does not exist")]
    GroupNotFound(u16),
    #[error("L1 node {0} already exists")]
    NodeExists(u32),
    #[error("L1 node {0} does not exist")]
    NodeNotFound(u32),
    #[error("L1 node {node} is already a member of group {mgid}")]
    NodeAlreadyAssociated { node: u32, mgid: u16 },
    #[error("L1 node {node} is not a member of group {mgid}")]
    NodeNotInGroup { node: u32, mgid: u16 },
    #[error("L1 node {node} is still a member of group {mgid}")]
    NodeInUse { node: u32, mgid: u16 },
    #[error("dev port {0} is above {MAX_DEV_PORT}")]
    PortOutOfRange(u16),
    #[error("LAG id {0} is outside 0..{LAG_COUNT}")]
    LagOutOfRange(u16),
    #[error("L2 exclusion id {0} is outside 0..{L2_XID_COUNT}")]
    XidOutOfRange(u16),
}

/// A set of dev ports 0..=511 as a bitmap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PortSet([u64; 8]);

impl PortSet {
    pub fn from_ports(ports: &[u16]) -> Result<PortSet, PreError> {
        let mut s = PortSet::default();
        for p in ports {
            if *p > MAX_DEV_PORT {
                return Err(PreError::PortOutOfRange(*p));
            }
            s.0[usize::from(*p / 64)] |= 1 << (p % 64);
        }
        Ok(s)
    }

    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        port <= MAX_DEV_PORT && self.0[usize::from(port / 64)] & (1 << (port % 64)) != 0
    }

    /// Members in ascending order.
    pub fn ports(&self) -> impl Iterator<Item = u16> + '_ {
        (0..=MAX_DEV_PORT).filter(|p| self.contains(*p))
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// An L1 node as configured (`$pre.node`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct L1Node {
    pub rid: u16,
    /// Dev ports, ascending, no duplicates.
    pub ports: Vec<u16>,
    /// LAG ids in the order given.
    pub lags: Vec<u8>,
    /// The group this node is a member of, if any.
    pub mgid: Option<u16>,
}

/// One node membership of a group (`$pre.mgid` lists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupMember {
    pub node: u32,
    pub l1_xid: Option<u16>,
}

/// What the ingress deparser handed the TM for replication (from `ig_intr_md_for_tm`).
/// A group is `None` when its valid bit is off; `level1_mcast_hash` is unused (no ECMP L1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplicationRequest {
    pub mcast_grp_a: Option<u16>,
    pub mcast_grp_b: Option<u16>,
    pub level1_exclusion_id: u16,
    pub level2_exclusion_id: u16,
    pub rid: u16,
    pub level1_mcast_hash: u16,
    pub level2_mcast_hash: u16,
}

/// One copy to send to egress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    pub port: u16,
    pub rid: u16,
    pub rid_first: bool,
    /// The group that produced it.
    pub mgid: u16,
}

/// The PRE's configuration and its replication function.
#[derive(Debug, Clone)]
pub struct Pre {
    groups: BTreeMap<u16, Vec<GroupMember>>,
    nodes: BTreeMap<u32, L1Node>,
    lags: Vec<Vec<u16>>,
    prune: Vec<PortSet>,
}

impl Default for Pre {
    fn default() -> Self {
        Pre::new()
    }
}

fn check_ports(ports: &[u16]) -> Result<Vec<u16>, PreError> {
    let set = PortSet::from_ports(ports)?;
    Ok(set.ports().collect())
}

fn check_lags(lags: &[u8]) -> Result<Vec<u8>, PreError> {
    for l in lags {
        if u16::from(*l) >= LAG_COUNT {
            return Err(PreError::LagOutOfRange(u16::from(*l)));
        }
    }
    Ok(lags.to_vec())
}

impl Pre {
    pub fn new() -> Pre {
        Pre {
            groups: BTreeMap::new(),
            nodes: BTreeMap::new(),
            lags: vec![Vec::new(); usize::from(LAG_COUNT)],
            prune: vec![PortSet::default(); usize::from(L2_XID_COUNT)],
        }
    }

    // ---- $pre.mgid ----

    pub fn group_create(&mut self, mgid: u16) -> Result<(), PreError> {
        if self.groups.contains_key(&mgid) {
            return Err(PreError::GroupExists(mgid));
        }
        self.groups.insert(mgid, Vec::new());
        Ok(())
    }

    /// Deletes a group; its nodes stay and become free to join another group.
    pub fn group_destroy(&mut self, mgid: u16) -> Result<(), PreError> {
        let members = self
            .groups
            .remove(&mgid)
            .ok_or(PreError::GroupNotFound(mgid))?;
        for m in members {
            if let Some(n) = self.nodes.get_mut(&m.node) {
                n.mgid = None;
            }
        }
        Ok(())
    }

    /// Appends a node to a group, with an optional L1 exclusion id.
    pub fn group_add_node(
        &mut self,
        mgid: u16,
        node: u32,
        l1_xid: Option<u16>,
    ) -> Result<(), PreError> {
        if !self.groups.contains_key(&mgid) {
            return Err(PreError::GroupNotFound(mgid));
        }
        let n = self
            .nodes
            .get_mut(&node)
            .ok_or(PreError::NodeNotFound(node))?;
        if let Some(other) = n.mgid {
            return Err(PreError::NodeAlreadyAssociated { node, mgid: other });
        }
        n.mgid = Some(mgid);
        if let Some(g) = self.groups.get_mut(&mgid) {
            g.push(GroupMember { node, l1_xid });
        }
        Ok(())
    }

    pub fn group_remove_node(&mut self, mgid: u16, node: u32) -> Result<(), PreError> {
        let g = self
            .groups
            .get_mut(&mgid)
            .ok_or(PreError::GroupNotFound(mgid))?;
        let at = g
            .iter()
            .position(|m| m.node == node)
            .ok_or(PreError::NodeNotInGroup { node, mgid })?;
        g.remove(at);
        if let Some(n) = self.nodes.get_mut(&node) {
            n.mgid = None;
        }
        Ok(())
    }

    pub fn group_get(&self, mgid: u16) -> Option<&[GroupMember]> {
        self.groups.get(&mgid).map(Vec::as_slice)
    }

    /// All groups in MGID order.
    pub fn groups(&self) -> impl Iterator<Item = (u16, &[GroupMember])> + '_ {
        self.groups.iter().map(|(k, v)| (*k, v.as_slice()))
    }

    // ---- $pre.node ----

    pub fn node_create(
        &mut self,
        node: u32,
        rid: u16,
        ports: &[u16],
        lags: &[u8],
    ) -> Result<(), PreError> {
        if self.nodes.contains_key(&node) {
            return Err(PreError::NodeExists(node));
        }
        let ports = check_ports(ports)?;
        let lags = check_lags(lags)?;
        self.nodes.insert(
            node,
            L1Node {
                rid,
                ports,
                lags,
                mgid: None,
            },
        );
        Ok(())
    }

    /// Replaces a node's RID and L2 lists; its group membership stays.
    pub fn node_update(
        &mut self,
        node: u32,
        rid: u16,
        ports: &[u16],
        lags: &[u8],
    ) -> Result<(), PreError> {
        let ports = check_ports(ports)?;
        let lags = check_lags(lags)?;
        let n = self
            .nodes
            .get_mut(&node)
            .ok_or(PreError::NodeNotFound(node))?;
        n.rid = rid;
        n.ports = ports;
        n.lags = lags;
        Ok(())
    }

    /// Deletes a node; refused while a group holds it.
    pub fn node_destroy(&mut self, node: u32) -> Result<(), PreError> {
        let n = self.nodes.get(&node).ok_or(PreError::NodeNotFound(node))?;
        if let Some(mgid) = n.mgid {
            return Err(PreError::NodeInUse { node, mgid });
        }
        self.nodes.remove(&node);
        Ok(())
    }

    pub fn node_get(&self, node: u32) -> Option<&L1Node> {
        self.nodes.get(&node)
    }

    /// All nodes in id order.
    pub fn nodes(&self) -> impl Iterator<Item = (u32, &L1Node)> + '_ {
        self.nodes.iter().map(|(k, v)| (*k, v))
    }

    // ---- $pre.prune / $pre.lag ----

    /// Sets the port set of an L2 exclusion id (an empty list clears it).
    pub fn prune_set(&mut self, xid: u16, ports: &[u16]) -> Result<(), PreError> {
        let set = PortSet::from_ports(ports)?;
        let slot = self
            .prune
            .get_mut(usize::from(xid))
            .ok_or(PreError::XidOutOfRange(xid))?;
        *slot = set;
        Ok(())
    }

    pub fn prune_get(&self, xid: u16) -> Result<Vec<u16>, PreError> {
        self.prune
            .get(usize::from(xid))
            .map(|s| s.ports().collect())
            .ok_or(PreError::XidOutOfRange(xid))
    }

    /// Sets a LAG's member ports. The LAG is a port bitmap: duplicates collapse and the members
    /// are kept in ascending port order, so member `i` (chosen by `hash % len == i`) is the
    /// `i`-th set bit, as in the hardware, not the `i`-th port as listed.
    pub fn lag_set(&mut self, lag: u8, ports: &[u16]) -> Result<(), PreError> {
        let set = PortSet::from_ports(ports)?;
        let slot = self
            .lags
            .get_mut(usize::from(lag))
            .ok_or(PreError::LagOutOfRange(u16::from(lag)))?;
        *slot = set.ports().collect();
        Ok(())
    }

    /// A LAG's member ports, ascending.
    pub fn lag_get(&self, lag: u8) -> Result<&[u16], PreError> {
        self.lags
            .get(usize::from(lag))
            .map(Vec::as_slice)
            .ok_or(PreError::LagOutOfRange(u16::from(lag)))
    }

    // ---- packet path ----

    /// Appends the copies for `req` to `out` (existing contents are kept). Unknown groups
    /// replicate nothing. Allocates only if `out` must grow.
    pub fn replicate(&self, req: &ReplicationRequest, out: &mut Vec<Replica>) {
        let start = out.len();
        for mgid in [req.mcast_grp_a, req.mcast_grp_b].into_iter().flatten() {
            let Some(members) = self.groups.get(&mgid) else {
                continue;
            };
            for m in members {
                if m.l1_xid == Some(req.level1_exclusion_id) {
                    continue;
                }
                let Some(node) = self.nodes.get(&m.node) else {
                    continue;
                };
                let prune = if req.rid == node.rid {
                    self.prune.get(usize::from(req.level2_exclusion_id))
                } else {
                    None
                };
                let mut first = !out[start..].iter().any(|r| r.rid == node.rid);
                let lag_ports = node.lags.iter().filter_map(|l| {
                    let members = self.lags.get(usize::from(*l))?;
                    if members.is_empty() {
                        return None;
                    }
                    members
                        .get(usize::from(req.level2_mcast_hash) % members.len())
                        .copied()
                });
                for port in node.ports.iter().copied().chain(lag_ports) {
                    if prune.is_some_and(|s| s.contains(port)) {
                        continue;
                    }
                    out.push(Replica {
                        port,
                        rid: node.rid,
                        rid_first: first,
                        mgid,
                    });
                    first = false;
                }
            }
        }
    }
}

//! Algorithm 1 of MC-RDMA (§IV-B, with §VI-A's ECMP variant): where a multicast group's packets
//! are replicated, and how each copy is addressed.
//!
//! Starting at the sender's ToR, the destinations are split into next-hop groups `D_vv`: two
//! destinations share a group only if their *sets* of next hops (ECMP) are equal. A switch with
//! more than one group replicates, one copy per group, addressed to the group's first
//! destination, with the receiver's QPN where the group is one receiver (its last replication
//! point); the algorithm then continues on every next hop of each group that is a switch.
//!
//! Two cases the paper's pseudo-code leaves out are covered the same way, by a rule where the
//! packets would otherwise arrive wrongly addressed: a group of one receiver (no switch ever
//! bifurcates, yet the receiver's QPN must be written), and a group whose first receiver left
//! (the sender still addresses DST_1). A switch needs a rule when it bifurcates, when the packets
//! reach it addressed to another host than its first group's first destination, or when that
//! group is a single receiver whose QPN nobody has written yet.
//!
//! The copy of a next-hop group goes out on one of its equal-cost links, chosen by MC_ID (so
//! the groups of a sender spread over parallel links); the rules are computed on every switch
//! of the next-hop set, as the paper's ECMP variant does.

use std::collections::{BTreeSet, HashSet};
use std::net::Ipv4Addr;

/// A switch, by its index in the fabric.
pub type SwitchId = usize;

/// A neighbour: a switch, or the host with this address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    Switch(SwitchId),
    Host(Ipv4Addr),
}

/// One equal-cost way out of a switch: the neighbour, the port, the neighbour's MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub node: Node,
    pub port: u16,
    pub mac: [u8; 6],
}

/// What Algorithm 1 needs to know about the network (the lab implements it from its topology
/// and the links that are up).
pub trait Fabric {
    /// Every equal-cost link from `switch` towards host `dst` (empty: unreachable).
    fn next_hops(&self, switch: SwitchId, dst: Ipv4Addr) -> Vec<Link>;
    /// The switch host `host` is attached to.
    fn tor_of(&self, host: Ipv4Addr) -> Option<SwitchId>;
    /// Whether the switch runs mcrdma.p4 (a fixed-function switch cannot replicate).
    fn programmable(&self, switch: SwitchId) -> bool;
    /// The switch's router MAC (the source MAC of the copies it sends).
    fn mac(&self, switch: SwitchId) -> [u8; 6];
    /// The switch's name, for errors.
    fn name(&self, switch: SwitchId) -> String;
}

/// One copy a bifurcation switch makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Branch {
    /// The copy's destination IP: its next-hop group's first destination.
    pub dst: Ipv4Addr,
    /// Index of the receiver (in the group's destination list) when the copy is for that one
    /// receiver: its QPN, VA and R_key are written here.
    pub receiver: Option<usize>,
    /// The link it leaves on.
    pub port: u16,
    /// The next hop's MAC.
    pub dmac: [u8; 6],
}

/// The rules of one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchRules {
    pub switch: SwitchId,
    pub branches: Vec<Branch>,
}

/// Algorithm 1's output: the switches that replicate, in the order it visited them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub rules: Vec<SwitchRules>,
}

impl Plan {
    /// The rules of switch `s`, if it has any.
    pub fn at(&self, s: SwitchId) -> Option<&SwitchRules> {
        self.rules.iter().find(|r| r.switch == s)
    }
}

/// Why no plan exists.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BifurcationError {
    #[error("host {0} is attached to no switch")]
    NoTor(Ipv4Addr),
    #[error("switch {switch} has no route to {dst}")]
    NoRoute { switch: String, dst: Ipv4Addr },
    #[error(
        "the group would have to be replicated at switch {0}, which does not run mcrdma.p4 (§V-A)"
    )]
    NotProgrammable(String),
    #[error("a destination is listed twice: {0}")]
    Duplicate(Ipv4Addr),
    #[error("the group has no receiver")]
    Empty,
}

struct Walk<'a> {
    fabric: &'a dyn Fabric,
    dsts: &'a [Ipv4Addr],
    mc_id: u32,
    plan: Plan,
    seen: HashSet<(SwitchId, Vec<usize>)>,
}

/// Algorithm 1 for the group of sender `src` whose data packets are addressed to `address`
/// (DST_1) with QPN `mc_id`, towards `dsts`.
pub fn bifurcation(
    fabric: &dyn Fabric,
    src: Ipv4Addr,
    address: Ipv4Addr,
    mc_id: u32,
    dsts: &[Ipv4Addr],
) -> Result<Plan, BifurcationError> {
    if dsts.is_empty() {
        return Err(BifurcationError::Empty);
    }
    let mut uniq = BTreeSet::new();
    for d in dsts {
        if !uniq.insert(*d) {
            return Err(BifurcationError::Duplicate(*d));
        }
    }
    let start = fabric.tor_of(src).ok_or(BifurcationError::NoTor(src))?;
    let mut w = Walk {
        fabric,
        dsts,
        mc_id,
        plan: Plan::default(),
        seen: HashSet::new(),
    };
    w.visit(start, (0..dsts.len()).collect(), address, false)?;
    Ok(w.plan)
}

impl Walk<'_> {
    /// Function Bifurcation(<dst_1, ...>, s): `group` indexes `dsts`; the packets reach `s`
    /// addressed to `addr`, with the receiver's QPN already written when `rewritten`.
    fn visit(
        &mut self,
        s: SwitchId,
        group: Vec<usize>,
        addr: Ipv4Addr,
        rewritten: bool,
    ) -> Result<(), BifurcationError> {
        if !self.seen.insert((s, group.clone())) {
            return Ok(());
        }
        // Lines 2-15: next-hop groups, by equal sets of next hops.
        let mut dvv: Vec<(BTreeSet<Node>, Vec<Link>, Vec<usize>)> = Vec::new();
        for i in group {
            let links = self.fabric.next_hops(s, self.dsts[i]);
            if links.is_empty() {
                return Err(BifurcationError::NoRoute {
                    switch: self.fabric.name(s),
                    dst: self.dsts[i],
                });
            }
            let set: BTreeSet<Node> = links.iter().map(|l| l.node).collect();
            match dvv.iter_mut().find(|(k, _, _)| *k == set) {
                Some((_, _, d)) => d.push(i),
                None => dvv.push((set, links, vec![i])),
            }
        }
        let first = &dvv[0].2;
        let needs_rule =
            dvv.len() > 1 || addr != self.dsts[first[0]] || (first.len() == 1 && !rewritten);
        if needs_rule {
            // Lines 16-25.
            if !self.fabric.programmable(s) {
                return Err(BifurcationError::NotProgrammable(self.fabric.name(s)));
            }
            let branches = dvv
                .iter()
                .map(|(_, links, d)| {
                    let l = links[self.mc_id as usize % links.len()];
                    Branch {
                        dst: self.dsts[d[0]],
                        receiver: (d.len() == 1).then_some(d[0]),
                        port: l.port,
                        dmac: l.mac,
                    }
                })
                .collect();
            self.plan.rules.push(SwitchRules {
                switch: s,
                branches,
            });
        }
        // Lines 26-29: on to every next hop that is a switch.
        for (set, _, d) in dvv {
            let (next_addr, next_rewritten) = if needs_rule {
                (self.dsts[d[0]], d.len() == 1)
            } else {
                (addr, rewritten)
            };
            for n in set {
                if let Node::Switch(t) = n {
                    self.visit(t, d.clone(), next_addr, next_rewritten)?;
                }
            }
        }
        Ok(())
    }
}

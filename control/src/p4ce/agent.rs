//! [`Agent`]: programs P4CE communication groups into a switch running `p4ce.p4` with the
//! runtime API's verbs (table add/delete, register write, multicast node/group), keeps what it
//! programmed so it can tear a group down or change its replica set.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use pipeline::api::{ApiError, PipeSel};
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;

use super::spec::{GroupSpec, ReplicaConn, MAX_REPLICAS};

const SWITCH_QP: &str = "SwitchIngress.switch_qp";
const AGGR_REPLICA: &str = "SwitchIngress.aggr_replica";
const CONN_LEADER: &str = "SwitchIngress.conn_leader";
const CONN_REPLICA: &str = "SwitchEgress.conn_replica";
const L2_FORWARD: &str = "SwitchIngress.l2_forward";
const NUM_RECV: &str = "SwitchIngress.num_recv";
/// Per replica slot: which replicas acknowledged a PSN (NumRecv counts each once).
const ACKED_REGS: [&str; MAX_REPLICAS] = [
    "SwitchIngress.acked0",
    "SwitchIngress.acked1",
    "SwitchIngress.acked2",
    "SwitchIngress.acked3",
];
const CREDIT_REGS: [&str; MAX_REPLICAS] = [
    "SwitchIngress.credit0",
    "SwitchIngress.credit1",
    "SwitchIngress.credit2",
    "SwitchIngress.credit3",
];
/// The neutral credit code ("unlimited") unused MinCredit slots hold.
const CREDIT_UNLIMITED: Value = 31;
/// PSNs of a group NumRecv tracks (index = group ++ PSN[7:0]).
const PSNS_PER_GROUP: u32 = 256;
/// The CM's QP.
const QP1: u32 = 1;

/// A refused agent request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum P4ceError {
    /// The switch refused a runtime-API request (the program is not p4ce.p4, a bad port, ...).
    #[error("runtime API: {0}")]
    Api(#[from] ApiError),
    /// A group with this index or multicast group id already exists.
    #[error("group {group} (mgid {mgid}) already exists")]
    GroupExists {
        /// Group index.
        group: u8,
        /// Multicast group id.
        mgid: u16,
    },
    /// No such group.
    #[error("no group {0}")]
    NoGroup(u8),
    /// Too many or too few replicas, or an f the replica count cannot give.
    #[error("group {group}: {reason}")]
    BadGroup {
        /// Group index.
        group: u8,
        /// What is wrong.
        reason: String,
    },
    /// The replica is not (or already) in the group.
    #[error("group {group}: replica endpoint {ep} {what}")]
    Replica {
        /// Group index.
        group: u8,
        /// Endpoint id.
        ep: u16,
        /// "is not in the group" / "is already in the group".
        what: &'static str,
    },
}

/// Switch-wide settings of the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentConfig {
    /// The switch's IPv4 address (groups live behind it).
    pub switch_ip: Ipv4Addr,
    /// The port ConnectRequests to the switch go to (the CPU port).
    pub cpu_port: u16,
}

#[derive(Debug, Clone)]
struct Group {
    spec: GroupSpec,
    /// Credit slot per replica endpoint.
    slots: BTreeMap<u16, u8>,
}

/// The P4CE agent (see the module docs).
#[derive(Debug)]
pub struct Agent {
    cfg: AgentConfig,
    groups: BTreeMap<u8, Group>,
}

use crate::value::{ipv4_value as ip, mac_value as mac};

fn node_id(group: u8, ep: u16) -> u32 {
    (u32::from(group) << 16) | u32::from(ep)
}

fn udp_sport(ep: u16) -> Value {
    Value::from(0xC000 | (ep & 0x3FFF))
}

impl Agent {
    /// An agent with no groups.
    pub fn new(cfg: AgentConfig) -> Agent {
        Agent {
            cfg,
            groups: BTreeMap::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    /// Indices of the groups programmed now.
    pub fn groups(&self) -> Vec<u8> {
        self.groups.keys().copied().collect()
    }

    /// The spec of a group as programmed now (after view changes).
    pub fn group(&self, group: u8) -> Option<&GroupSpec> {
        self.groups.get(&group).map(|g| &g.spec)
    }

    /// Programs what does not depend on groups: CM MADs to the switch IP go to the CPU port,
    /// and plain L2 forwarding for the hosts (`(mac, port)`).
    pub fn install_base(
        &mut self,
        sw: &mut Switch,
        hosts: &[([u8; 6], u16)],
    ) -> Result<(), P4ceError> {
        sw.table_add(
            PipeSel::All,
            SWITCH_QP,
            &[
                ("hdr.ipv4.dst_addr", KeyMatch::Exact(ip(self.cfg.switch_ip))),
                ("hdr.bth.dst_qp", KeyMatch::Exact(Value::from(QP1))),
            ],
            None,
            "to_cpu",
            &[("cpu_port", Value::from(self.cfg.cpu_port))],
        )?;
        for (m, port) in hosts {
            self.l2_add(sw, *m, *port)?;
        }
        Ok(())
    }

    /// Adds one L2 forwarding entry.
    pub fn l2_add(&mut self, sw: &mut Switch, m: [u8; 6], port: u16) -> Result<(), P4ceError> {
        sw.table_add(
            PipeSel::All,
            L2_FORWARD,
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(mac(m)))],
            None,
            "l2_port",
            &[("port", Value::from(port))],
        )?;
        Ok(())
    }

    fn check(spec: &GroupSpec) -> Result<(), P4ceError> {
        let bad = |reason: String| P4ceError::BadGroup {
            group: spec.group,
            reason,
        };
        let n = spec.replicas.len();
        if n == 0 || n > MAX_REPLICAS {
            return Err(bad(format!("{n} replicas (1 to {MAX_REPLICAS} supported)")));
        }
        if spec.f == 0 || usize::from(spec.f) > n {
            return Err(bad(format!("f = {} with {n} replicas", spec.f)));
        }
        if spec.bcast_qp == spec.aggr_qp || spec.bcast_qp <= QP1 || spec.aggr_qp <= QP1 {
            return Err(bad("BCast and Aggr QPs must differ and be above QP1".into()));
        }
        let mut eps: Vec<u16> = spec.replicas.iter().map(|r| r.ep).collect();
        eps.push(spec.leader.ep);
        eps.sort_unstable();
        eps.dedup();
        if eps.len() != n + 1 {
            return Err(bad("endpoint ids must be distinct".into()));
        }
        Ok(())
    }

    /// Creates a group: switch_qp (BCast and Aggr), conn_leader, one aggr_replica and one
    /// conn_replica entry per replica, the multicast group with one node per replica
    /// (RID = endpoint id), NumRecv cells of the group zeroed, credit slots reset.
    pub fn create_group(&mut self, sw: &mut Switch, spec: &GroupSpec) -> Result<(), P4ceError> {
        Self::check(spec)?;
        if self.groups.contains_key(&spec.group)
            || self.groups.values().any(|g| g.spec.mgid == spec.mgid)
        {
            return Err(P4ceError::GroupExists {
                group: spec.group,
                mgid: spec.mgid,
            });
        }
        let mut g = Group {
            spec: GroupSpec {
                replicas: Vec::new(),
                ..spec.clone()
            },
            slots: BTreeMap::new(),
        };
        let sip = ip(self.cfg.switch_ip);
        let l = spec.leader;
        if let Some(o) = self.groups.values().find(|o| {
            o.spec
                .replicas
                .iter()
                .any(|r| spec.replicas.iter().any(|x| x.ep == r.ep))
                || (o.spec.leader.ep == l.ep && o.spec.leader != l)
        }) {
            return Err(P4ceError::BadGroup {
                group: spec.group,
                reason: format!(
                    "endpoint ids are switch-wide: one is already used by group {}",
                    o.spec.group
                ),
            });
        }
        let leader_known = self.groups.values().any(|o| o.spec.leader.ep == l.ep);
        sw.mc_group_create(spec.mgid)?;
        if !leader_known {
            sw.table_add(
                PipeSel::All,
                CONN_LEADER,
                &[("ig_md.leader_ep", KeyMatch::Exact(Value::from(l.ep)))],
                None,
                "to_leader",
                &[
                    ("mac", mac(l.mac)),
                    ("ip", ip(l.ip)),
                    ("qpn", Value::from(l.qpn)),
                    ("udp_sport", udp_sport(l.ep)),
                    ("port", Value::from(l.port)),
                ],
            )?;
        }
        for cell in 0..PSNS_PER_GROUP {
            for reg in std::iter::once(NUM_RECV).chain(ACKED_REGS) {
                sw.register_write(
                    PipeSel::All,
                    reg,
                    (u32::from(spec.group) << 8) | cell,
                    0,
                    None,
                )?;
            }
        }
        for reg in CREDIT_REGS {
            sw.register_write(
                PipeSel::All,
                reg,
                u32::from(spec.group),
                CREDIT_UNLIMITED,
                None,
            )?;
        }
        for r in &spec.replicas {
            Self::add_replica_entries(sw, &mut g, r)?;
        }
        sw.table_add(
            PipeSel::All,
            SWITCH_QP,
            &[
                ("hdr.ipv4.dst_addr", KeyMatch::Exact(sip)),
                ("hdr.bth.dst_qp", KeyMatch::Exact(Value::from(spec.aggr_qp))),
            ],
            None,
            "aggr",
            &[
                ("group", Value::from(spec.group)),
                ("quorum", Value::from(spec.f)),
                ("leader_ep", Value::from(l.ep)),
            ],
        )?;
        Self::add_bcast(sw, sip, &g.spec)?;
        self.groups.insert(spec.group, g);
        Ok(())
    }

    fn add_bcast(sw: &mut Switch, sip: Value, spec: &GroupSpec) -> Result<(), P4ceError> {
        sw.table_add(
            PipeSel::All,
            SWITCH_QP,
            &[
                ("hdr.ipv4.dst_addr", KeyMatch::Exact(sip)),
                (
                    "hdr.bth.dst_qp",
                    KeyMatch::Exact(Value::from(spec.bcast_qp)),
                ),
            ],
            None,
            "bcast",
            &[
                ("group", Value::from(spec.group)),
                ("mgid", Value::from(spec.mgid)),
                ("leader_ip", ip(spec.leader.ip)),
                ("vrkey", Value::from(spec.vrkey)),
                ("vsize", Value::from(spec.vsize())),
            ],
        )?;
        Ok(())
    }

    fn add_replica_entries(
        sw: &mut Switch,
        g: &mut Group,
        r: &ReplicaConn,
    ) -> Result<(), P4ceError> {
        let spec = &g.spec;
        let Some(slot) = (0..MAX_REPLICAS as u8).find(|s| !g.slots.values().any(|x| x == s)) else {
            return Err(P4ceError::BadGroup {
                group: spec.group,
                reason: format!("no free credit slot for replica {}", r.ep),
            });
        };
        let delta = Value::from(r.psn_delta(&spec.leader));
        sw.table_add(
            PipeSel::All,
            AGGR_REPLICA,
            &[
                ("hdr.bth.dst_qp", KeyMatch::Exact(Value::from(spec.aggr_qp))),
                ("hdr.ipv4.src_addr", KeyMatch::Exact(ip(r.ip))),
            ],
            None,
            "from_replica",
            &[
                ("slot", Value::from(slot)),
                ("psn_delta", delta),
                ("msn_delta", 0),
            ],
        )?;
        sw.table_add(
            PipeSel::All,
            CONN_REPLICA,
            &[("eg_intr_md.egress_rid", KeyMatch::Exact(Value::from(r.ep)))],
            None,
            "to_replica",
            &[
                ("mac", mac(r.mac)),
                ("ip", ip(r.ip)),
                ("qpn", Value::from(r.qpn)),
                ("udp_sport", udp_sport(r.ep)),
                ("psn_delta", delta),
                ("va", Value::from(r.va)),
                ("rkey", Value::from(r.rkey)),
            ],
        )?;
        let node = node_id(spec.group, r.ep);
        sw.mc_node_create(node, r.ep, &[r.port], &[])?;
        sw.mc_group_add_node(spec.mgid, node, None)?;
        sw.register_write(
            PipeSel::All,
            CREDIT_REGS[usize::from(slot)],
            u32::from(spec.group),
            CREDIT_UNLIMITED,
            None,
        )?;
        g.slots.insert(r.ep, slot);
        g.spec.replicas.push(*r);
        Ok(())
    }

    fn remove_replica_entries(sw: &mut Switch, g: &mut Group, ep: u16) -> Result<(), P4ceError> {
        let spec = &g.spec;
        let Some(pos) = spec.replicas.iter().position(|r| r.ep == ep) else {
            return Err(P4ceError::Replica {
                group: spec.group,
                ep,
                what: "is not in the group",
            });
        };
        let r = spec.replicas[pos];
        let node = node_id(spec.group, ep);
        sw.mc_group_remove_node(spec.mgid, node)?;
        sw.mc_node_destroy(node)?;
        sw.table_delete(
            PipeSel::All,
            CONN_REPLICA,
            &[("eg_intr_md.egress_rid", KeyMatch::Exact(Value::from(ep)))],
            None,
        )?;
        sw.table_delete(
            PipeSel::All,
            AGGR_REPLICA,
            &[
                ("hdr.bth.dst_qp", KeyMatch::Exact(Value::from(spec.aggr_qp))),
                ("hdr.ipv4.src_addr", KeyMatch::Exact(ip(r.ip))),
            ],
            None,
        )?;
        if let Some(slot) = g.slots.remove(&ep) {
            sw.register_write(
                PipeSel::All,
                CREDIT_REGS[usize::from(slot)],
                u32::from(g.spec.group),
                CREDIT_UNLIMITED,
                None,
            )?;
        }
        g.spec.replicas.remove(pos);
        Ok(())
    }

    /// View change: a replica leaves the group (its node, connection and credit slot go; the
    /// slot is reset to the neutral credit). The quorum f stays; refused if fewer than f
    /// replicas would remain. The virtual buffer size is recomputed.
    pub fn remove_replica(&mut self, sw: &mut Switch, group: u8, ep: u16) -> Result<(), P4ceError> {
        let sip = ip(self.cfg.switch_ip);
        let g = self
            .groups
            .get_mut(&group)
            .ok_or(P4ceError::NoGroup(group))?;
        if g.spec.replicas.len() <= usize::from(g.spec.f) {
            return Err(P4ceError::BadGroup {
                group,
                reason: format!("removing a replica would leave fewer than f = {}", g.spec.f),
            });
        }
        Self::remove_replica_entries(sw, g, ep)?;
        Self::refresh_bcast(sw, sip, &g.spec)
    }

    /// View change: a replica joins the group.
    pub fn add_replica(
        &mut self,
        sw: &mut Switch,
        group: u8,
        r: &ReplicaConn,
    ) -> Result<(), P4ceError> {
        let sip = ip(self.cfg.switch_ip);
        let g = self
            .groups
            .get_mut(&group)
            .ok_or(P4ceError::NoGroup(group))?;
        if g.spec.replicas.iter().any(|x| x.ep == r.ep) || g.spec.leader.ep == r.ep {
            return Err(P4ceError::Replica {
                group,
                ep: r.ep,
                what: "is already in the group",
            });
        }
        Self::add_replica_entries(sw, g, r)?;
        Self::refresh_bcast(sw, sip, &g.spec)
    }

    fn refresh_bcast(sw: &mut Switch, sip: Value, spec: &GroupSpec) -> Result<(), P4ceError> {
        sw.table_delete(
            PipeSel::All,
            SWITCH_QP,
            &[
                ("hdr.ipv4.dst_addr", KeyMatch::Exact(sip)),
                (
                    "hdr.bth.dst_qp",
                    KeyMatch::Exact(Value::from(spec.bcast_qp)),
                ),
            ],
            None,
        )?;
        Self::add_bcast(sw, sip, spec)
    }

    /// Tears a group down: after this, WRITEs to its BCast QP and ACKs to its Aggr QP are
    /// dropped by the switch (no entry), and its ids can be reused.
    pub fn teardown(&mut self, sw: &mut Switch, group: u8) -> Result<(), P4ceError> {
        let sip = ip(self.cfg.switch_ip);
        let mut g = self
            .groups
            .remove(&group)
            .ok_or(P4ceError::NoGroup(group))?;
        for qp in [g.spec.bcast_qp, g.spec.aggr_qp] {
            sw.table_delete(
                PipeSel::All,
                SWITCH_QP,
                &[
                    ("hdr.ipv4.dst_addr", KeyMatch::Exact(sip)),
                    ("hdr.bth.dst_qp", KeyMatch::Exact(Value::from(qp))),
                ],
                None,
            )?;
        }
        let eps: Vec<u16> = g.spec.replicas.iter().map(|r| r.ep).collect();
        for ep in eps {
            Self::remove_replica_entries(sw, &mut g, ep)?;
        }
        // Another group may share the leader's endpoint id; keep its entry then.
        let leader_ep = g.spec.leader.ep;
        if !self.groups.values().any(|o| o.spec.leader.ep == leader_ep) {
            sw.table_delete(
                PipeSel::All,
                CONN_LEADER,
                &[("ig_md.leader_ep", KeyMatch::Exact(Value::from(leader_ep)))],
                None,
            )?;
        }
        sw.mc_group_destroy(g.spec.mgid)?;
        Ok(())
    }
}

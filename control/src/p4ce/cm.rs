//! [`SwitchCm`]: the RDMA CM half of the P4CE agent. It is an RDMA endpoint with the
//! switch's MAC and IP that sits on the switch's CPU port (p4ce.p4's `switch_qp` sends CM
//! MADs to the switch IP's QP1 there); the lab that runs the switch feeds it the CPU port's
//! frames and sends what it transmits into the switch from the CPU port. A leader's
//! ConnectRequest to [`P4CE_SERVICE_PORT`] carries a [`GroupRequest`]; the agent connects to each
//! named replica on behalf of the group's Aggr QP (learning each replica's QPN and starting
//! PSN from the REP, its log's VA, size and R_key from the REP's [`ReplicaOffer`]), programs the
//! group with [`Agent::create_group`], then answers the leader with one ConnectReply on behalf
//! of the BCast QP carrying a [`GroupReply`] (virtual VA 0, virtual R_key). The leader
//! disconnecting tears the group down (and disconnects the replicas); a replica disconnecting
//! is a view change. No data-path packet ever reaches it.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use hosts::p4ce::wire::{GroupReply, GroupRequest, ReplicaOffer, P4CE_SERVICE_PORT};
use pipeline::switch::Switch;
use rdma::verbs::{CmEvent, ConnId, Endpoint, EndpointConfig, Instant};

use super::{Agent, GroupSpec, LeaderConn, ReplicaConn};

/// Where a host hangs off the switch: its port and MAC, or, when the switch hangs off a routed
/// fabric (one-armed, as a service switch), the port of its cable into the fabric and the
/// router MAC of the switch at the other end (what the switch sends the host is routed from
/// there by IP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attachment {
    /// The destination MAC of frames to the host: its own, or the next hop's.
    pub mac: [u8; 6],
    /// The switch port.
    pub port: u16,
}

/// Something the CM agent did (for logs and tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmAgentEvent {
    /// A group is programmed and the leader answered.
    GroupUp(u8),
    /// A group was torn down (the leader disconnected).
    GroupDown(u8),
    /// A leader's request was refused.
    Refused {
        /// The leader.
        leader: Ipv4Addr,
        /// Why.
        reason: String,
    },
    /// A replica left a group (view change).
    ReplicaLeft {
        /// Group.
        group: u8,
        /// Endpoint id.
        ep: u16,
    },
}

#[derive(Debug)]
struct Pending {
    leader_conn: ConnId,
    leader_ip: Ipv4Addr,
    req: GroupRequest,
    /// Per replica (in request order): its CM connection and, once up, its connection.
    replicas: Vec<(ConnId, Option<ReplicaConn>)>,
}

#[derive(Debug)]
struct Live {
    leader_conn: ConnId,
    replica_conns: BTreeMap<ConnId, u16>,
}

/// The CM agent (see the module docs).
pub struct SwitchCm {
    ep: Endpoint,
    ip: Ipv4Addr,
    hosts: BTreeMap<Ipv4Addr, Attachment>,
    pending: BTreeMap<u8, Pending>,
    live: BTreeMap<u8, Live>,
    rng: u64,
    events: Vec<CmAgentEvent>,
}

/// Per-group addresses the agent derives from the group index.
pub fn group_qps(group: u8) -> (u32, u32, u16) {
    (
        0x100 + u32::from(group),
        0x200 + u32::from(group),
        u16::from(group),
    )
}

impl SwitchCm {
    /// An agent endpoint with `cfg` (the switch's MAC and IP), listening on the P4CE port;
    /// `hosts` says where each host hangs off the switch (what a real agent reads from its L2
    /// and ARP tables).
    pub fn new(
        cfg: EndpointConfig,
        hosts: BTreeMap<Ipv4Addr, Attachment>,
    ) -> Result<SwitchCm, rdma::verbs::VerbsError> {
        let ip = cfg.device.ipv4;
        let rng = cfg.seed | 1;
        let mut ep = Endpoint::new(cfg);
        for (hip, a) in &hosts {
            ep.add_neighbour(IpAddr::V4(*hip), a.mac);
        }
        ep.listen(P4CE_SERVICE_PORT)?;
        Ok(SwitchCm {
            ep,
            ip,
            hosts,
            pending: BTreeMap::new(),
            live: BTreeMap::new(),
            rng,
            events: Vec::new(),
        })
    }

    /// The agent's endpoint (the driver feeds it the CPU port's frames and sends what it
    /// transmits into the switch from the CPU port).
    pub fn endpoint(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    /// The agent's endpoint, read only (timers).
    pub fn endpoint_ref(&self) -> &Endpoint {
        &self.ep
    }

    /// What happened since the last call.
    pub fn take_events(&mut self) -> Vec<CmAgentEvent> {
        std::mem::take(&mut self.events)
    }

    fn random(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }

    fn refuse(&mut self, now: Instant, conn: ConnId, leader: Ipv4Addr, reason: String) {
        let _ = self.ep.reject(
            now,
            conn,
            reason.as_bytes().get(..40).unwrap_or(reason.as_bytes()),
        );
        self.events.push(CmAgentEvent::Refused { leader, reason });
    }

    /// Handles every pending CM event: requests, replica answers, disconnects.
    pub fn poll(&mut self, now: Instant, sw: &mut Switch, agent: &mut Agent) {
        while let Some(ev) = self.ep.poll_cm_event() {
            match ev {
                CmEvent::ConnectRequest {
                    conn,
                    peer,
                    port,
                    private_data,
                    ..
                } => self.on_request(now, conn, peer, port, &private_data, sw, agent),
                CmEvent::Established {
                    conn, private_data, ..
                } => self.on_established(now, conn, &private_data, sw, agent),
                CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn } => {
                    self.on_failed(now, conn, "a replica refused or did not answer")
                }
                CmEvent::Disconnected { conn } => self.on_disconnected(now, conn, sw, agent),
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_request(
        &mut self,
        now: Instant,
        conn: ConnId,
        peer: IpAddr,
        port: u16,
        pd: &[u8],
        sw: &mut Switch,
        agent: &mut Agent,
    ) {
        let IpAddr::V4(leader_ip) = peer else {
            let _ = self.ep.reject(now, conn, b"IPv4 only");
            return;
        };
        if port != P4CE_SERVICE_PORT {
            self.refuse(now, conn, leader_ip, format!("port {port}"));
            return;
        }
        let req = match GroupRequest::parse(pd) {
            Ok(r) => r,
            Err(e) => return self.refuse(now, conn, leader_ip, e.to_string()),
        };
        if self.pending.contains_key(&req.group) {
            return self.refuse(now, conn, leader_ip, format!("group {} busy", req.group));
        }
        if let Some(l) = self.live.get(&req.group) {
            let same = self
                .ep
                .cm_conn_info(l.leader_conn)
                .is_some_and(|i| i.peer == IpAddr::V4(leader_ip));
            // Only a member of the group can take it over (a new leader Mu's view change
            // elected among the replicas); anyone else finds it busy.
            let member = agent
                .group(req.group)
                .is_some_and(|g| g.replicas.iter().any(|r| r.ip == leader_ip));
            if same || !member {
                return self.refuse(now, conn, leader_ip, format!("group {} busy", req.group));
            }
            // A new leader (Mu's view change elected it): the old leader's group goes.
            self.retire(now, req.group, sw, agent);
        }
        if req.f == 0 || usize::from(req.f) > req.replicas.len() {
            return self.refuse(now, conn, leader_ip, format!("f = {}", req.f));
        }
        for r in &req.replicas {
            if !self.hosts.contains_key(&r.ip) {
                return self.refuse(now, conn, leader_ip, format!("unknown replica {}", r.ip));
            }
        }
        let (_, aggr, _) = group_qps(req.group);
        let mut replicas = Vec::new();
        for r in &req.replicas {
            let psn = self.random() as u32 & 0xFF_FFFF;
            match self
                .ep
                .connect_proxy(now, aggr, psn, IpAddr::V4(r.ip), r.port, &[req.group])
            {
                Ok(c) => replicas.push((c, None)),
                Err(e) => {
                    for (c, _) in &replicas {
                        let _ = self.ep.disconnect(now, *c);
                    }
                    return self.refuse(now, conn, leader_ip, e.to_string());
                }
            }
        }
        self.pending.insert(
            req.group,
            Pending {
                leader_conn: conn,
                leader_ip,
                req,
                replicas,
            },
        );
    }

    fn on_established(
        &mut self,
        now: Instant,
        conn: ConnId,
        pd: &[u8],
        sw: &mut Switch,
        agent: &mut Agent,
    ) {
        let Some(group) = self
            .pending
            .iter()
            .find(|(_, p)| p.replicas.iter().any(|(c, _)| *c == conn))
            .map(|(g, _)| *g)
        else {
            // The leader's RTU (or a stray event): nothing to do.
            return;
        };
        let offer = ReplicaOffer::parse(pd);
        let info = self.ep.cm_conn_info(conn);
        let Some(p) = self.pending.get_mut(&group) else {
            return;
        };
        let Some(idx) = p.replicas.iter().position(|(c, _)| *c == conn) else {
            return;
        };
        let (Ok(offer), Some(info)) = (offer, info) else {
            return self.on_failed(now, conn, "a replica's offer does not parse");
        };
        let addr = p.req.replicas[idx];
        let Some(at) = self.hosts.get(&addr.ip) else {
            return self.on_failed(now, conn, "unknown replica");
        };
        p.replicas[idx].1 = Some(ReplicaConn {
            ep: addr.ep,
            mac: at.mac,
            ip: addr.ip,
            qpn: info.remote_qpn,
            start_psn: info.remote_psn,
            va: offer.va,
            size: offer.size,
            rkey: offer.rkey,
            port: at.port,
        });
        if p.replicas.iter().all(|(_, r)| r.is_some()) {
            self.finish(now, group, sw, agent);
        }
    }

    fn finish(&mut self, now: Instant, group: u8, sw: &mut Switch, agent: &mut Agent) {
        let Some(p) = self.pending.remove(&group) else {
            return;
        };
        let Some(linfo) = self.ep.cm_conn_info(p.leader_conn) else {
            return;
        };
        let Some(at) = self.hosts.get(&p.leader_ip).copied() else {
            return;
        };
        let (bcast, aggr, mgid) = group_qps(group);
        let lpsn = self.random() as u32 & 0xFF_FFFF;
        let vrkey = (self.random() as u32) | 1;
        let spec = GroupSpec {
            group,
            mgid,
            bcast_qp: bcast,
            aggr_qp: aggr,
            vrkey,
            f: p.req.f,
            leader: LeaderConn {
                ep: p.req.leader_ep,
                mac: at.mac,
                ip: p.leader_ip,
                qpn: linfo.remote_qpn,
                start_psn: lpsn,
                port: at.port,
            },
            replicas: p.replicas.iter().filter_map(|(_, r)| *r).collect(),
        };
        let conns: BTreeMap<ConnId, u16> = p
            .replicas
            .iter()
            .filter_map(|(c, r)| r.map(|r| (*c, r.ep)))
            .collect();
        if let Err(e) = agent.create_group(sw, &spec) {
            for c in conns.keys() {
                let _ = self.ep.disconnect(now, *c);
            }
            return self.refuse(now, p.leader_conn, p.leader_ip, e.to_string());
        }
        let reply = GroupReply {
            group,
            vrkey,
            va: 0,
            size: spec.vsize(),
        };
        if let Err(e) = self
            .ep
            .accept_proxy(now, p.leader_conn, bcast, lpsn, &reply.to_bytes())
        {
            let _ = agent.teardown(sw, group);
            for c in conns.keys() {
                let _ = self.ep.disconnect(now, *c);
            }
            self.events.push(CmAgentEvent::Refused {
                leader: p.leader_ip,
                reason: e.to_string(),
            });
            return;
        }
        self.live.insert(
            group,
            Live {
                leader_conn: p.leader_conn,
                replica_conns: conns,
            },
        );
        self.events.push(CmAgentEvent::GroupUp(group));
    }

    fn on_failed(&mut self, now: Instant, conn: ConnId, why: &str) {
        let Some(group) = self
            .pending
            .iter()
            .find(|(_, p)| p.replicas.iter().any(|(c, _)| *c == conn))
            .map(|(g, _)| *g)
        else {
            return;
        };
        if let Some(p) = self.pending.remove(&group) {
            for (c, r) in &p.replicas {
                if *c != conn && r.is_some() {
                    let _ = self.ep.disconnect(now, *c);
                }
            }
            self.refuse(now, p.leader_conn, p.leader_ip, why.to_string());
        }
    }

    /// Tears a live group down: its entries, the CM connections to its replicas and to its
    /// leader.
    fn retire(&mut self, now: Instant, group: u8, sw: &mut Switch, agent: &mut Agent) {
        if let Some(l) = self.live.remove(&group) {
            let _ = agent.teardown(sw, group);
            for c in l.replica_conns.keys() {
                let _ = self.ep.disconnect(now, *c);
            }
            let _ = self.ep.disconnect(now, l.leader_conn);
            self.events.push(CmAgentEvent::GroupDown(group));
        }
    }

    fn on_disconnected(&mut self, now: Instant, conn: ConnId, sw: &mut Switch, agent: &mut Agent) {
        if let Some(group) = self
            .live
            .iter()
            .find(|(_, l)| l.leader_conn == conn)
            .map(|(g, _)| *g)
        {
            self.retire(now, group, sw, agent);
            return;
        }
        let hit = self
            .live
            .iter_mut()
            .find_map(|(g, l)| l.replica_conns.remove(&conn).map(|ep| (*g, ep)));
        if let Some((group, ep)) = hit {
            // Refused when fewer than f would remain: the leader has no quorum then anyway.
            let _ = agent.remove_replica(sw, group, ep);
            self.events.push(CmAgentEvent::ReplicaLeft { group, ep });
        }
    }

    /// The switch IP the agent answers for.
    pub fn ip(&self) -> Ipv4Addr {
        self.ip
    }
}

//! [`Lab`]: the topology, its setup and the virtual-time driver (see the module docs of
//! [`super`]).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path as FsPath;
use std::sync::Arc;
use std::time::Duration;

use control::p4ce::{
    Agent, AgentConfig, Attachment, CmAgentEvent, GroupSpec, LeaderConn, P4ceError, ReplicaConn,
    SwitchCm,
};
use dataplane::link::DirectionConfig;
use dataplane::runtime::Pipeline;
use dataplane::switch::SwitchPipeline;
use dataplane::{FaultConfig, FrameBatch, LinkConfig, LinkPort, MemPort, Nanos, Port, PortError};
use hosts::mu::{
    Leader, LeaderConfig, LeaderEvent, LogGeometry, MuError, Path, Replica, ReplicaPath, SwitchPath,
};
use hosts::p4ce::node::{
    build_node, host_ip, host_mac, leader_request_group, replica_accept, switch_path_from_reply,
    NodeParts, NodeSpec,
};
use hosts::p4ce::{NodeError, GROUP, MAX_REPLICAS, REPLICA_CM_PORT, SWITCH_IP, SWITCH_MAC};
use pipeline::ir::Program;
use pipeline::switch::{Switch, SwitchConfig, SwitchError};
use rdma::verbs::{
    AccessFlags, CmEvent, ConnId, CqHandle, Endpoint, EndpointConfig, Instant, MrInfo, Mtu,
    PdHandle, QpAttr, QpState, VerbsError,
};

use crate::p4ce::CPU_PORT;

pub(crate) const MGID: u16 = 1;
const BCAST_QP: u32 = 0x100;
const AGGR_QP: u32 = 0x200;
const VRKEY: u32 = 0xcafe_f00d;
/// ACK timeout code of the lab's QPs: 4.096 µs × 2^8 ≈ 1 ms.
pub(crate) const ACK_TIMEOUT: u8 = 8;

/// A lab could not be built or driven.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// p4ce.p4 did not compile.
    #[error("p4ce.p4: {0}")]
    Compile(String),
    /// The switch refused the program.
    #[error("switch: {0}")]
    Switch(#[from] SwitchError),
    /// The agent refused the group.
    #[error("P4CE agent: {0}")]
    Agent(#[from] P4ceError),
    /// An endpoint refused a verb.
    #[error("RDMA: {0}")]
    Verbs(#[from] VerbsError),
    /// The log refused an operation.
    #[error("log: {0}")]
    Mu(#[from] MuError),
    /// A port failed.
    #[error("port: {0}")]
    Port(#[from] PortError),
    /// A node's host side refused.
    #[error(transparent)]
    Node(#[from] NodeError),
    /// A bad setting.
    #[error("bad lab setting: {0}")]
    Config(String),
}

/// Compiles `p4ce.p4` for Tofino 1.
pub fn compile_p4ce(path: &FsPath) -> Result<Arc<Program>, LabError> {
    let opts = p4::compile::CompileOptions::default();
    p4::compile::compile_file(path, &opts)
        .map(|c| Arc::new(c.program))
        .map_err(|e| LabError::Compile(e.render()))
}

/// Lab settings.
#[derive(Debug, Clone)]
pub struct LabConfig {
    /// Replicas (1..=4).
    pub replicas: usize,
    /// Replica ACKs per commit.
    pub f: usize,
    /// Start on the switch path (P4CE) or unicast only (Mu).
    pub mode: Path,
    /// Largest value.
    pub max_value: usize,
    /// Log slots.
    pub slots: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Rate of every host link, each direction, bit/s (0 = unlimited).
    pub link_rate_bps: u64,
    /// Propagation delay of every host link, ns.
    pub link_delay_ns: u64,
    /// Loss probability on every host link, each direction.
    pub loss: f64,
    /// Seed (PSNs, link faults).
    pub seed: u64,
    /// Switch path timeout of the leader.
    pub switch_timeout: Duration,
    /// Delay before the leader tries the switch path again.
    pub switch_retry: Duration,
    /// Keep every applied value (tests); off for benchmarks.
    pub record: bool,
    /// How often the leader reads the replicas' status words.
    pub probe_every: Duration,
    /// Set the switch path up through RDMA CM (the leader's ConnectRequest to the switch
    /// IP, the agent on the CPU port connecting the replicas) instead of programming it
    /// directly.
    pub via_cm: bool,
    /// Leader fail-over: heartbeats every tenth of this, a node silent this long is dead,
    /// the lowest live id leads (None: off, the leader never changes).
    pub leader_timeout: Option<Duration>,
}

impl LabConfig {
    /// Defaults: 10 Gb/s links with 1 µs delay, no loss, 64 slots.
    pub fn new(mode: Path, replicas: usize) -> LabConfig {
        LabConfig {
            replicas,
            f: replicas.div_ceil(2).max(1),
            mode,
            max_value: 4096,
            slots: 64,
            outstanding: 8,
            link_rate_bps: 10_000_000_000,
            link_delay_ns: 1_000,
            loss: 0.0,
            seed: 1,
            switch_timeout: Duration::from_micros(500),
            switch_retry: Duration::from_millis(5),
            record: true,
            probe_every: Duration::from_millis(1),
            via_cm: false,
            leader_timeout: None,
        }
    }
}

/// One host: its endpoint and its end of the link to the switch.
pub struct Host {
    /// Id (1 = the leader).
    pub id: u16,
    /// MAC address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// The RDMA endpoint.
    pub ep: Endpoint,
    /// The host end of its link.
    pub port: LinkPort<MemPort>,
    /// Crashed hosts neither send nor receive.
    pub alive: bool,
    /// Its log MR.
    pub log: MrInfo,
    /// Its CQ.
    pub cq: CqHandle,
    /// The protection domain of its log and QPs.
    pub pd: PdHandle,
    /// Replicas (with fail-over on): a QP to each other replica, `(host index, qpn)`.
    pub mesh: Vec<(usize, u32)>,
    /// Leader: its switch QP. Replica: its QP towards the switch's Aggr QP.
    pub switch_qp: u32,
    /// Leader: one QP per replica. Replica: one QP, towards the leader.
    pub uni_qps: Vec<u32>,
    /// Replicas: applied values (when recording).
    pub applied: Vec<Vec<u8>>,
}

/// The lab (see the module docs of [`super`]).
pub struct Lab {
    pub(super) cfg: LabConfig,
    pub(super) now: u64,
    /// The switch, run as `pisa run` runs it.
    pub(super) pipeline: SwitchPipeline,
    /// The switch's end of each host link: pass-through link ports whose receive side carries
    /// the switch-side faults (a broken switch path).
    sw_ports: Vec<LinkPort<MemPort>>,
    pub(super) agent: Agent,
    /// Hosts: index 0 is the leader, then the replicas.
    pub hosts: Vec<Host>,
    pub(super) leader: Leader,
    /// The host that leads now (0 until a fail-over).
    pub(super) lead: usize,
    /// Per host: its replica role (None for the leader).
    pub(super) replicas: Vec<Option<Replica>>,
    /// Heartbeats and leader fail-over (`LabConfig::leader_timeout`).
    pub(super) failover: Option<super::failover::Failover>,
    /// Values the leader appended (when recording), by index.
    pub appended: Vec<Vec<u8>>,
    rng: u64,
    batch: FrameBatch,
    /// What the switch sent, by device port, before it goes out.
    out: Vec<(u16, Vec<u8>)>,
    /// Frames the switch sent to the CPU port.
    pub to_cpu: u64,
    events: Vec<LeaderEvent>,
    /// The agent's CM endpoint on the CPU port (`via_cm`).
    cm: Option<SwitchCm>,
    /// The leader's CM connection to the switch.
    pub(super) leader_cm: Option<ConnId>,
    /// What the CM agent did, and CM failures the leader saw.
    pub cm_log: Vec<CmAgentEvent>,
    /// Virtual time the leader's switch path last came up through CM.
    pub cm_up_at: Option<u64>,
    /// CM events of hosts the lab did not handle itself, `(host index, event)`.
    pub cm_unclaimed: Vec<(usize, CmEvent)>,
}

fn rc_init() -> QpAttr {
    QpAttr {
        state: Some(QpState::Init),
        access: Some(AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ),
        ..Default::default()
    }
}

/// Moves a QP to RTS towards (`ip`, `dest_qp`), expecting `rq_psn` and sending from
/// `sq_psn`: what the RDMA CM handshake leaves behind.
pub(super) fn connect(
    ep: &mut Endpoint,
    qpn: u32,
    ip: Ipv4Addr,
    dest_qp: u32,
    rq_psn: u32,
    sq_psn: u32,
) -> Result<(), VerbsError> {
    if ep.qp_state(qpn)? != QpState::Reset {
        ep.modify_qp(
            qpn,
            &QpAttr {
                state: Some(QpState::Reset),
                ..Default::default()
            },
        )?;
    }
    ep.modify_qp(qpn, &rc_init())?;
    ep.modify_qp(
        qpn,
        &QpAttr {
            state: Some(QpState::Rtr),
            path_mtu: Some(Mtu::M1024),
            dest_qp_num: Some(dest_qp),
            remote_ip: Some(IpAddr::V4(ip)),
            rq_psn: Some(rq_psn),
            min_rnr_timer: Some(1),
            ..Default::default()
        },
    )?;
    ep.modify_qp(
        qpn,
        &QpAttr {
            state: Some(QpState::Rts),
            sq_psn: Some(sq_psn),
            timeout: Some(ACK_TIMEOUT),
            retry_cnt: Some(7),
            rnr_retry: Some(7),
            ..Default::default()
        },
    )
}

impl Lab {
    /// Builds the lab: switch with `program` (p4ce.p4), hosts, links, connections, and (in
    /// P4CE mode) the communication group.
    pub fn new(program: Arc<Program>, cfg: LabConfig) -> Result<Lab, LabError> {
        if cfg.replicas == 0 || cfg.replicas > MAX_REPLICAS {
            return Err(LabError::Config(format!(
                "{} replicas (1 to 4)",
                cfg.replicas
            )));
        }
        let geometry = LogGeometry::for_values(cfg.max_value, cfg.slots);
        geometry.validate()?;
        let mut switch = Switch::new(program, SwitchConfig::new(1).with_cpu_port(CPU_PORT))?;
        let mut agent = Agent::new(AgentConfig {
            switch_ip: SWITCH_IP,
            cpu_port: CPU_PORT,
        });
        let n = cfg.replicas + 1;
        let ids: Vec<u16> = (1..=n as u16).collect();
        let l2: Vec<([u8; 6], u16)> = ids.iter().map(|id| (host_mac(*id), id - 1)).collect();
        agent.install_base(&mut switch, &l2)?;
        let mut hosts = Vec::new();
        let mut sw_ports = Vec::new();
        for (i, id) in ids.iter().enumerate() {
            let (host_end, sw_end) = dataplane::mem::pair(&format!("h{id}"), &format!("sw{i}"));
            let dir = DirectionConfig {
                rate_bps: cfg.link_rate_bps,
                delay_ns: cfg.link_delay_ns,
                faults: FaultConfig {
                    loss: cfg.loss,
                    ..Default::default()
                },
                ..Default::default()
            };
            let link = LinkConfig {
                tx: dir.clone(),
                rx: dir,
                seed: cfg.seed.wrapping_mul(31).wrapping_add(u64::from(*id)),
            };
            let port =
                LinkPort::new(host_end, link).map_err(|e| LabError::Config(e.to_string()))?;
            let parts = build_node(&NodeSpec {
                id: *id,
                ids: ids.clone(),
                leader: i == 0,
                geometry,
                replicas: cfg.replicas,
                seed: cfg.seed,
                listen: i > 0 && cfg.via_cm,
                mesh: if i > 0 && cfg.leader_timeout.is_some() {
                    cfg.replicas - 1
                } else {
                    0
                },
                ack_timeout: ACK_TIMEOUT,
                cm_response_timeout: Duration::from_millis(2),
            })?;
            let NodeParts {
                ep,
                pd,
                log,
                cq,
                switch_qp,
                uni_qps,
                mesh,
            } = parts;
            let mesh = mesh.into_iter().map(|q| (usize::MAX, q)).collect();
            hosts.push(Host {
                id: *id,
                mac: host_mac(*id),
                ip: host_ip(*id),
                ep,
                port,
                alive: true,
                log,
                cq,
                switch_qp,
                uni_qps,
                mesh,
                pd,
                applied: Vec::new(),
            });
            sw_ports.push(
                LinkPort::new(sw_end, LinkConfig::default())
                    .map_err(|e| LabError::Config(e.to_string()))?,
            );
        }
        let mut rng = cfg.seed | 1;
        // Unicast connections leader <-> replica i.
        let mut paths = Vec::new();
        for r in 1..n {
            let (lp, rp) = (next_psn(&mut rng), next_psn(&mut rng));
            let (lq, rq) = (hosts[0].uni_qps[r - 1], hosts[r].uni_qps[0]);
            let (lip, rip) = (hosts[0].ip, hosts[r].ip);
            connect(&mut hosts[0].ep, lq, rip, rq, rp, lp)?;
            connect(&mut hosts[r].ep, rq, lip, lq, lp, rp)?;
            paths.push(ReplicaPath {
                id: hosts[r].id,
                qpn: lq,
                va: hosts[r].log.addr,
                rkey: hosts[r].log.rkey,
            });
        }
        // With fail-over: a connection between every two replicas (a future leader's unicast
        // path; also what recovery READs logs over).
        if cfg.leader_timeout.is_some() {
            for a in 1..n {
                for b in a + 1..n {
                    let (pa, pb) = (next_psn(&mut rng), next_psn(&mut rng));
                    let ka = hosts[a].mesh.iter().position(|(p, _)| *p == usize::MAX);
                    let kb = hosts[b].mesh.iter().position(|(p, _)| *p == usize::MAX);
                    let (Some(ka), Some(kb)) = (ka, kb) else {
                        return Err(LabError::Config("mesh QPs".into()));
                    };
                    let (qa, qb) = (hosts[a].mesh[ka].1, hosts[b].mesh[kb].1);
                    let (ipa, ipb) = (hosts[a].ip, hosts[b].ip);
                    connect(&mut hosts[a].ep, qa, ipb, qb, pb, pa)?;
                    connect(&mut hosts[b].ep, qb, ipa, qa, pa, pb)?;
                    hosts[a].mesh[ka].0 = b;
                    hosts[b].mesh[kb].0 = a;
                }
            }
        }
        let lcfg = LeaderConfig {
            f: cfg.f,
            geometry,
            max_outstanding: cfg.outstanding,
            switch_timeout: cfg.switch_timeout,
            switch_retry: cfg.switch_retry,
            probe_every: cfg.probe_every,
        };
        let leader = Leader::new(lcfg, hosts[0].log, hosts[0].cq, paths, None)?;
        let mut replicas = vec![None];
        for h in &hosts[1..] {
            replicas.push(Some(Replica::new(geometry, h.log.lkey)?));
        }
        let failover = match cfg.leader_timeout {
            Some(t) => Some(super::failover::Failover::new(&mut hosts, t, &mut rng)?),
            None => None,
        };
        let cm = if cfg.via_cm {
            let mut ecfg = EndpointConfig::new(SWITCH_MAC, SWITCH_IP);
            ecfg.seed ^= cfg.seed.rotate_left(7);
            ecfg.cm.response_timeout = Duration::from_millis(2);
            let at: BTreeMap<Ipv4Addr, Attachment> = hosts
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    (
                        h.ip,
                        Attachment {
                            mac: h.mac,
                            port: i as u16,
                        },
                    )
                })
                .collect();
            Some(SwitchCm::new(ecfg, at)?)
        } else {
            None
        };
        let mut lab = Lab {
            cfg: cfg.clone(),
            now: 0,
            pipeline: SwitchPipeline { sw: switch },
            sw_ports,
            agent,
            hosts,
            leader,
            lead: 0,
            replicas,
            failover,
            appended: Vec::new(),
            rng,
            batch: FrameBatch::new(256),
            out: Vec::new(),
            to_cpu: 0,
            events: Vec::new(),
            cm,
            leader_cm: None,
            cm_log: Vec::new(),
            cm_up_at: None,
            cm_unclaimed: Vec::new(),
        };
        if cfg.mode == Path::Switch {
            lab.connect_switch()?;
            if cfg.via_cm {
                // The handshake: REQ to the agent, the agent's REQs to the replicas, their
                // REPs, the agent's REP to the leader, RTUs.
                let deadline = lab.now + 50_000_000;
                while lab.cm_up_at.is_none() && lab.now < deadline {
                    lab.advance(deadline)?;
                }
                if lab.cm_up_at.is_none() {
                    return Err(LabError::Config(format!(
                        "the switch path did not come up through CM: {:?}",
                        lab.cm_log
                    )));
                }
            }
        }
        Ok(lab)
    }

    /// (Re)creates the P4CE group and the connections through it (what the leader's
    /// ConnectRequest to the switch and the agent's connections to the replicas set up), and
    /// gives the leader the switch path.
    pub fn connect_switch(&mut self) -> Result<(), LabError> {
        if self.cm.is_some() {
            return self.connect_switch_cm();
        }
        if self.agent.group(GROUP).is_some() {
            self.agent.teardown(&mut self.pipeline.sw, GROUP)?;
        }
        let lpsn = next_psn(&mut self.rng);
        let lead = self.lead;
        let l = &mut self.hosts[lead];
        connect(&mut l.ep, l.switch_qp, SWITCH_IP, BCAST_QP, lpsn, lpsn)?;
        let leader = LeaderConn {
            ep: l.id,
            mac: l.mac,
            ip: l.ip,
            qpn: l.switch_qp,
            start_psn: lpsn,
            port: 0,
        };
        let geometry_len = LogGeometry::for_values(self.cfg.max_value, self.cfg.slots).len();
        let mut replicas = Vec::new();
        for (i, h) in self.hosts.iter_mut().enumerate() {
            if !h.alive || i == lead {
                continue;
            }
            let rpsn = next_psn(&mut self.rng);
            connect(&mut h.ep, h.switch_qp, SWITCH_IP, AGGR_QP, rpsn, rpsn)?;
            replicas.push(ReplicaConn {
                ep: h.id,
                mac: h.mac,
                ip: h.ip,
                qpn: h.switch_qp,
                start_psn: rpsn,
                va: h.log.addr,
                size: geometry_len as u64,
                rkey: h.log.rkey,
                port: i as u16,
            });
        }
        if replicas.len() < self.cfg.f {
            return Err(LabError::Config("fewer live replicas than f".into()));
        }
        let spec = GroupSpec {
            group: GROUP,
            mgid: MGID,
            bcast_qp: BCAST_QP,
            aggr_qp: AGGR_QP,
            vrkey: VRKEY,
            f: self.cfg.f as u8,
            leader,
            replicas,
        };
        self.agent.create_group(&mut self.pipeline.sw, &spec)?;
        self.leader.attach_switch(SwitchPath {
            qpn: self.hosts[lead].switch_qp,
            vrkey: VRKEY,
        });
        Ok(())
    }

    /// The leader asks the switch for the group through RDMA CM (its earlier connection, if
    /// any, is disconnected first, which tears the old group down). Asynchronous: the leader
    /// gets the switch path when the agent's ConnectReply arrives (see `cm_up_at`).
    pub fn connect_switch_cm(&mut self) -> Result<(), LabError> {
        let now = Instant::from_nanos(self.now);
        let lead = self.lead;
        let replicas: Vec<(Ipv4Addr, u16)> = self
            .hosts
            .iter()
            .enumerate()
            .filter(|(i, h)| h.alive && *i != lead)
            .map(|(_, h)| (h.ip, h.id))
            .collect();
        let l = &mut self.hosts[lead];
        let conn = leader_request_group(
            &mut l.ep,
            now,
            l.switch_qp,
            self.leader_cm.take(),
            self.cfg.f,
            l.id,
            &replicas,
        )?;
        self.leader_cm = Some(conn);
        self.cm_up_at = None;
        Ok(())
    }

    /// The leader closes its CM connection to the switch (the agent tears the group down).
    pub fn disconnect_switch_cm(&mut self) -> Result<(), LabError> {
        let now = Instant::from_nanos(self.now);
        if let Some(c) = self.leader_cm.take() {
            self.hosts[self.lead].ep.disconnect(now, c)?;
        }
        Ok(())
    }

    /// Handles the hosts' CM events: replicas accept the agent's requests with their switch
    /// QP and offer their log; the leader takes the switch path when the agent answers.
    fn host_cm(&mut self, now: Instant) -> Result<bool, LabError> {
        let mut work = false;
        let geometry = LogGeometry::for_values(self.cfg.max_value, self.cfg.slots);
        let lead = self.lead;
        for (i, h) in self.hosts.iter_mut().enumerate() {
            if !h.alive {
                continue;
            }
            while let Some(ev) = h.ep.poll_cm_event() {
                work = true;
                match ev {
                    CmEvent::ConnectRequest {
                        conn, peer, port, ..
                    } if i != lead => {
                        if peer != IpAddr::V4(SWITCH_IP) || port != REPLICA_CM_PORT {
                            h.ep.reject(now, conn, b"not the switch agent")?;
                            continue;
                        }
                        replica_accept(&mut h.ep, now, conn, h.switch_qp, h.log, geometry)?;
                    }
                    CmEvent::Established {
                        conn, private_data, ..
                    } if i == lead && Some(conn) == self.leader_cm => {
                        match switch_path_from_reply(h.switch_qp, &private_data) {
                            Ok(sp) => {
                                self.leader.attach_switch(sp);
                                self.cm_up_at = Some(self.now);
                            }
                            Err(reason) => self.cm_log.push(CmAgentEvent::Refused {
                                leader: h.ip,
                                reason,
                            }),
                        }
                    }
                    CmEvent::Rejected {
                        conn, private_data, ..
                    } if i == lead && Some(conn) == self.leader_cm => {
                        self.leader_cm = None;
                        self.cm_log.push(CmAgentEvent::Refused {
                            leader: h.ip,
                            reason: String::from_utf8_lossy(&private_data)
                                .trim_end_matches('\0')
                                .to_string(),
                        });
                    }
                    CmEvent::Unreachable { conn } if i == lead && Some(conn) == self.leader_cm => {
                        self.leader_cm = None;
                        self.cm_log.push(CmAgentEvent::Refused {
                            leader: h.ip,
                            reason: "switch agent unreachable".into(),
                        });
                    }
                    other => self.cm_unclaimed.push((i, other)),
                }
            }
        }
        Ok(work)
    }

    /// Virtual time now, ns.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The host index that leads now (0 until a leader fail-over).
    pub fn leader_host(&self) -> usize {
        self.lead
    }

    /// The leader.
    pub fn leader(&self) -> &Leader {
        &self.leader
    }

    /// The switch (counters, registers).
    pub fn switch(&self) -> &Switch {
        &self.pipeline.sw
    }

    /// The switch and the agent, to reconfigure by hand.
    pub fn switch_and_agent(&mut self) -> (&mut Switch, &mut Agent) {
        (&mut self.pipeline.sw, &mut self.agent)
    }

    /// The group's virtual R_key, BCast QP and the switch IP.
    pub fn group_addresses(&self) -> (u32, u32, Ipv4Addr) {
        match self.agent.group(GROUP) {
            Some(g) => (g.vrkey, g.bcast_qp, SWITCH_IP),
            None => (VRKEY, BCAST_QP, SWITCH_IP),
        }
    }

    /// Leader events seen since the last call.
    pub fn take_events(&mut self) -> Vec<LeaderEvent> {
        std::mem::take(&mut self.events)
    }

    /// Crashes replica `r` (1-based host index): it stops sending, receiving and applying.
    pub fn crash_host(&mut self, host: usize) {
        if let Some(h) = self.hosts.get_mut(host) {
            h.alive = false;
        }
    }

    /// Pauses (or resumes) host `host`: while paused it neither sends nor receives (what
    /// reaches it is lost, as on a stalled machine); resuming does not restore what it missed.
    pub fn set_host_paused(&mut self, host: usize, paused: bool) {
        if let Some(h) = self.hosts.get_mut(host) {
            h.alive = !paused;
        }
    }

    /// Breaks (or heals) the switch's P4CE path: frames to the switch's IP are lost on the
    /// switch's host-facing ports (the dataplane's match-based drop on their receive side,
    /// [`FaultConfig::drop_ipv4_dst`], counted as loss); plain L2 forwarding between hosts
    /// keeps working (the "other route").
    pub fn set_switch_path_broken(&mut self, broken: bool) {
        let dst = broken.then_some(SWITCH_IP);
        for sp in &self.sw_ports {
            // Cannot fail: no probability changes.
            let _ = sp.control().update(|c| c.rx.faults.drop_ipv4_dst = dst);
        }
    }

    /// Frames the switch's host-facing ports lost on receive (their link model's faults: a
    /// broken switch path).
    pub fn switch_rx_lost(&self) -> u64 {
        self.sw_ports
            .iter()
            .map(|p| p.control().rx_stats().lost)
            .sum()
    }

    /// Appends a value if the window allows; returns its index.
    pub fn append(&mut self, value: &[u8]) -> Result<Option<u64>, LabError> {
        if !self.leader.can_append() || !self.hosts[self.lead].alive {
            return Ok(None);
        }
        let now = Instant::from_nanos(self.now);
        let n = self
            .leader
            .append(&mut self.hosts[self.lead].ep, now, value)?;
        if self.cfg.record {
            self.appended.push(value.to_vec());
        }
        Ok(Some(n))
    }

    /// One pass of the driver at the current time; returns whether anything happened.
    pub fn step(&mut self) -> Result<bool, LabError> {
        let now = Instant::from_nanos(self.now);
        let tnow = Nanos(self.now);
        let mut work = false;
        // Hosts transmit.
        for h in self.hosts.iter_mut() {
            if h.alive {
                if h.ep.poll_timeout().is_some_and(|t| t <= now) {
                    h.ep.handle_timeout(now);
                }
                while let Some(f) = h.ep.poll_transmit(now) {
                    if !self.batch.push(&f, tnow) {
                        h.port.send_batch(&mut self.batch, tnow)?;
                        self.batch.push(&f, tnow);
                    }
                    work = true;
                }
                if !self.batch.is_empty() {
                    h.port.send_batch(&mut self.batch, tnow)?;
                }
            }
            h.port.flush(tnow)?;
        }
        // The switch, as `pisa run` runs it: the agent's frames from the CPU port, then each
        // host port's; every frame's buffer goes back to the switch's pool, what leaves goes
        // out on its port (or to the agent on the CPU port).
        self.out.clear();
        let out = &mut self.out;
        if let Some(cm) = self.cm.as_mut() {
            let ep = cm.endpoint();
            if ep.poll_timeout().is_some_and(|t| t <= now) {
                ep.handle_timeout(now);
            }
            while let Some(f) = ep.poll_transmit(now) {
                self.pipeline
                    .process(CPU_PORT, &f, tnow, &mut |p, b| out.push((p, b)));
                self.pipeline.recycle(f);
                work = true;
            }
        }
        for (p, sp) in self.sw_ports.iter_mut().enumerate() {
            loop {
                self.batch.clear();
                let got = sp.recv_batch(&mut self.batch, tnow)?;
                if got == 0 {
                    break;
                }
                work = true;
                for i in 0..got {
                    let Some(f) = self.batch.take_data(i) else {
                        break;
                    };
                    self.pipeline
                        .process(p as u16, &f, tnow, &mut |o, b| out.push((o, b)));
                    self.pipeline.recycle(f);
                }
            }
        }
        self.batch.clear();
        for (port, bytes) in self.out.drain(..) {
            match self.sw_ports.get_mut(port as usize) {
                Some(sp) => {
                    match self.batch.push_owned(bytes, tnow) {
                        Ok(spare) => {
                            if let Some(b) = spare {
                                self.pipeline.recycle(b);
                            }
                        }
                        // Never: the batch is empty.
                        Err(b) => self.pipeline.recycle(b),
                    }
                    sp.send_batch(&mut self.batch, tnow)?;
                    self.batch.clear();
                }
                None => {
                    self.to_cpu += 1;
                    if port == CPU_PORT {
                        if let Some(cm) = self.cm.as_mut() {
                            cm.endpoint().handle_frame(now, &bytes);
                        }
                    }
                    self.pipeline.recycle(bytes);
                }
            }
        }
        // Hosts receive.
        for h in self.hosts.iter_mut() {
            loop {
                self.batch.clear();
                let got = h.port.recv_batch(&mut self.batch, tnow)?;
                if got == 0 {
                    break;
                }
                work = true;
                if h.alive {
                    for f in self.batch.iter() {
                        h.ep.handle_frame(now, &f.data);
                    }
                }
            }
        }
        self.batch.clear();
        // RDMA CM: the agent, then the hosts.
        if let Some(cm) = self.cm.as_mut() {
            cm.poll(now, &mut self.pipeline.sw, &mut self.agent);
            let evs = cm.take_events();
            work |= !evs.is_empty();
            self.cm_log.extend(evs);
        }
        work |= self.host_cm(now)?;
        // The log.
        if self.hosts[self.lead].alive {
            self.leader.poll(&mut self.hosts[self.lead].ep, now)?;
            while let Some(ev) = self.leader.poll_event() {
                if ev == LeaderEvent::SwitchRetryDue && self.cfg.mode == Path::Switch {
                    self.connect_switch()?;
                }
                if let LeaderEvent::ReplicaLost(id) = ev {
                    // View change: the switch stops replicating to it (refused when fewer
                    // than f would remain; the leader then has no quorum anyway).
                    if self.agent.group(GROUP).is_some() {
                        let _ = self.agent.remove_replica(&mut self.pipeline.sw, GROUP, id);
                    }
                }
                self.events.push(ev);
            }
        }
        let record = self.cfg.record;
        for (r, h) in self.replicas.iter_mut().zip(self.hosts.iter_mut()) {
            let Some(r) = r.as_mut() else {
                continue;
            };
            if h.alive {
                let applied = &mut h.applied;
                let n = r.poll_apply(&mut h.ep, |_, v| {
                    if record {
                        applied.push(v.to_vec());
                    }
                })?;
                work |= n > 0;
            }
        }
        work |= self.failover_step(now)?;
        Ok(work)
    }

    /// The next instant something is due (endpoint timers, link releases, leader timers).
    pub fn next_due(&self) -> Option<u64> {
        let mut t: Option<u64> = None;
        let mut take = |x: Option<u64>| {
            if let Some(x) = x {
                t = Some(t.map_or(x, |y| y.min(x)));
            }
        };
        if let Some(cm) = self.cm.as_ref() {
            take(cm.endpoint_ref().poll_timeout().map(|i| i.as_nanos()));
        }
        for h in &self.hosts {
            if h.alive {
                take(h.ep.poll_timeout().map(|i| i.as_nanos()));
            }
            take(h.port.poll_timeout().map(|n| n.as_nanos()));
        }
        for sp in &self.sw_ports {
            take(sp.poll_timeout().map(|n| n.as_nanos()));
        }
        if let Some(f) = self.failover.as_ref() {
            take(Some(f.next_tick()));
        }
        if self.hosts[self.lead].alive {
            take(self.leader.poll_timeout().map(|i| i.as_nanos()));
        }
        t
    }

    /// Runs steps until nothing more happens at the current time (time does not move).
    pub fn settle(&mut self) -> Result<(), LabError> {
        let mut spins = 0;
        while self.step()? {
            spins += 1;
            if spins > 10_000 {
                return Err(LabError::Config("driver does not settle".into()));
            }
        }
        Ok(())
    }

    /// Runs steps until nothing happens at the current time, then jumps to the next due
    /// instant (at most `until`). Returns false when nothing is left to do before `until`.
    pub fn advance(&mut self, until: u64) -> Result<bool, LabError> {
        self.settle()?;
        match self.next_due() {
            Some(t) if t <= until => {
                self.now = t.max(self.now + 1);
                Ok(true)
            }
            _ => {
                self.now = until.max(self.now);
                Ok(false)
            }
        }
    }

    /// Drives the lab until virtual time `until` (ns), with no new appends.
    pub fn run_until(&mut self, until: u64) -> Result<(), LabError> {
        while self.now < until {
            self.advance(until)?;
        }
        Ok(())
    }

    /// Appends `values` as fast as the window allows and drives the lab until all are
    /// committed or `deadline` (ns) passes. Returns how many were committed.
    pub fn replicate_all(&mut self, values: &[Vec<u8>], deadline: u64) -> Result<u64, LabError> {
        let start = self.leader.committed();
        let target = self.leader.next_index() + values.len() as u64;
        let mut next = 0;
        while self.now < deadline && self.leader.committed() < target {
            while next < values.len() {
                match self.append(&values[next])? {
                    Some(_) => next += 1,
                    None => break,
                }
            }
            self.advance(deadline)?;
        }
        // Let the replicas catch up on what is in flight.
        let settle = self.now + 200_000;
        self.run_until(settle.min(deadline.max(self.now)))?;
        Ok(self.leader.committed() - start)
    }
}

pub(super) fn next_psn(rng: &mut u64) -> u32 {
    let mut x = *rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *rng = x;
    (x >> 20) as u32 & 0xFF_FFFF
}

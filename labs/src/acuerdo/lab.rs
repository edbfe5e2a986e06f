//! The Acuerdo lab: the topology of [`super::topology`] on a lab driver ([`Driver`]: in memory,
//! [`crate::MemLab`], the default, or in namespaces, [`crate::NetnsApps`]), each host an Acuerdo node ([`NodeApp`]) on its RoCEv2 endpoint, the
//! QPs connected out of band when the lab is built (the paper does it over TCP). A
//! [`Client`] keeps `window` messages in flight at whichever node leads (it follows a new
//! leader after an election, forgetting what it had in flight at the old one, as a client
//! that timed out would) and meters commit latency at the leader.

use std::any::Any;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use dataplane::{FaultConfig, Nanos};
use hdrhistogram::Histogram;
use hosts::acuerdo::kv::{self, KvLayout, Op, Update};
use hosts::acuerdo::node::{Node, NodeConfig, PeerInfo};
use hosts::acuerdo::{AcuerdoError, Entry, Epoch, Event, MsgHdr, Pid};
use hosts::p4ce::integrity::{digest, stamp};
use hosts::p4ce::node::p4ce_endpoint;
use hosts::p4ce::MAX_REPLICAS;
use rdma::verbs::{AccessFlags, Endpoint, MrInfo};

use crate::driver::{Driver, DriverError};
use crate::host::{HostApp, RdmaHost};
use crate::mem::{MemLab, MemLabError};
use crate::p4ce::mem::lab::CM_RESPONSE_TIMEOUT;
use crate::p4ce::mem::{compile_p4ce, P4ceSwitch};
use crate::topology::{Topology, TopologyError};

/// Why the lab failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The topology.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The driver.
    #[error(transparent)]
    Mem(#[from] MemLabError),
    /// The driver.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// A node could not be built.
    #[error(transparent)]
    Acuerdo(#[from] AcuerdoError),
    /// A node failed while running.
    #[error("node {0}: {1}")]
    Node(usize, String),
    /// The P4CE switch of switch mode.
    #[error(transparent)]
    P4ce(#[from] crate::p4ce::LabError),
    /// No leader in time.
    #[error("no leader after {0} µs of virtual time")]
    NoLeader(u64),
    /// A bad setting.
    #[error("bad setting: {0}")]
    Config(String),
}

/// Lab settings.
#[derive(Debug, Clone)]
pub struct LabConfig {
    /// Nodes (2..=9).
    pub nodes: usize,
    /// Bytes per client message (at least 8: it starts with its client sequence number).
    pub size: usize,
    /// Client messages in flight at most.
    pub window: usize,
    /// Bytes of each incoming ring.
    pub ring_bytes: usize,
    /// Heartbeat (Commit_SST push) period, ns.
    pub heartbeat_ns: u64,
    /// Failure-detection timeout, ns.
    pub timeout_ns: u64,
    /// The QPs' ACK timeout code (4.096 µs × 2^code; 7 retries before a peer is lost).
    pub ack_timeout: u8,
    /// Faults on every host link, both directions.
    pub faults: Option<FaultConfig>,
    /// Run the replicated hash table: every node applies delivered updates to a table of
    /// this shape in an MR of its endpoint.
    pub kv: Option<KvLayout>,
    /// Switch mode (in memory only, 2 to 5 nodes): the switch runs `p4ce.p4` with the P4CE
    /// agent on its CPU port instead of `fabric.p4`, and each leader broadcasts through a
    /// P4CE group it asks the agent for ([`NodeConfig::switch_timeout_ns`]: a quarter of the
    /// failure timeout, so a member that lost a copy costs the quorum less than a suspicion).
    pub switch: bool,
}

impl LabConfig {
    /// `nodes` nodes, `size`-byte messages, window `window`, 1 MiB rings, heartbeat 20 µs,
    /// timeout 200 µs.
    pub fn new(nodes: usize, size: usize, window: usize) -> LabConfig {
        LabConfig {
            nodes,
            size,
            window,
            ring_bytes: 1 << 20,
            heartbeat_ns: 20_000,
            timeout_ns: 200_000,
            ack_timeout: NodeConfig::new(0, 2).ack_timeout,
            faults: None,
            kv: None,
            switch: false,
        }
    }
}

/// One delivered message, as the log files and the checker see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Logged {
    /// Position in the node's delivered sequence.
    pub pos: u64,
    /// Header.
    pub hdr: MsgHdr,
    /// Client sequence number (the payload's first 8 bytes).
    pub id: u64,
    /// Digest of the payload.
    pub digest: u64,
}

/// The client: a window of messages at the leader.
pub struct Client {
    /// Messages in flight at most.
    pub window: usize,
    /// Bytes per message.
    pub size: usize,
    /// Whether it sends.
    pub on: bool,
    next_id: u64,
    at: Option<(Pid, Epoch)>,
    started: HashMap<u64, u64>,
    /// Commit latencies (ns) at the leader.
    pub latency: Histogram<u64>,
    /// Messages it saw committed.
    pub committed: u64,
    /// Digests of everything it broadcast.
    pub sent: HashSet<u64>,
    /// Writes to send instead of bench messages (YCSB), as hash-table updates; the client
    /// stops after the last.
    pub writes: Option<Vec<(u64, Vec<u8>)>>,
}

impl Client {
    fn new(window: usize, size: usize) -> Result<Client, LabError> {
        Ok(Client {
            window,
            size,
            on: false,
            next_id: 0,
            at: None,
            started: HashMap::new(),
            latency: Histogram::new_with_bounds(1, 60_000_000_000, 3)
                .map_err(|e| LabError::Config(e.to_string()))?,
            committed: 0,
            sent: HashSet::new(),
            writes: None,
        })
    }

    /// Keeps the window full at leader `node`.
    fn fill(&mut self, node: &mut Node, now: u64) -> Result<(), AcuerdoError> {
        let key = (node.core.me(), node.core.epoch());
        if self.at != Some(key) {
            self.at = Some(key);
            self.started.clear();
        }
        while self.on && self.started.len() < self.window {
            let p = match &self.writes {
                Some(w) => {
                    let Some((key, value)) = w.get(self.next_id as usize) else {
                        break;
                    };
                    Update {
                        seq: self.next_id,
                        op: Op::Set(*key, value.clone()),
                    }
                    .encode()
                }
                None => {
                    let mut p = vec![0u8; self.size.max(8)];
                    stamp(&mut p, self.next_id);
                    p
                }
            };
            self.sent.insert(digest(&p));
            node.broadcast(p)?;
            self.started.insert(self.next_id, now);
            self.next_id += 1;
        }
        Ok(())
    }

    /// The leader delivered client message `id` at `now`.
    fn delivered(&mut self, id: u64, now: u64) {
        if let Some(t0) = self.started.remove(&id) {
            let _ = self.latency.record(now.saturating_sub(t0).max(1));
            self.committed += 1;
        }
    }
}

/// An Acuerdo node on a lab host. A crashed host ([`NodeApp::crash`]) neither receives,
/// sends nor runs.
pub struct NodeApp {
    /// The node.
    pub node: Node,
    /// What it delivered, in order.
    pub log: Vec<Logged>,
    /// Protocol events with their times.
    pub events: Vec<Event>,
    alive: bool,
    /// CPU stalled: the NIC answers, the protocol does not run.
    stalled: bool,
    error: Option<String>,
    client: Arc<Mutex<Client>>,
    kv: Option<(KvLayout, MrInfo)>,
}

/// The client, whoever holds it (a poisoned lock still holds a usable client).
fn lock(c: &Mutex<Client>) -> MutexGuard<'_, Client> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

impl NodeApp {
    /// The replicated hash table's bytes at this node, if it runs one.
    pub fn kv_bytes(&self) -> Option<&[u8]> {
        let (_, mr) = self.kv?;
        self.node.endpoint().mr_bytes(mr.lkey).ok()
    }

    /// Crashes the node for good.
    pub fn crash(&mut self) {
        self.alive = false;
    }
    /// Whether it runs.
    pub fn alive(&self) -> bool {
        self.alive
    }
    /// Stalls the node's CPU (`true`: a slow node, descheduled) or lets it run again; its
    /// NIC goes on meanwhile, so what peers WRITE waits in its memory for the next batch.
    pub fn stall(&mut self, stalled: bool) {
        self.stalled = stalled;
    }

    fn turn(&mut self, now: u64) -> Result<(), AcuerdoError> {
        self.node.poll(now)?;
        let leads = self.node.core.is_leader();
        while let Some(d) = self.node.poll_delivery() {
            let mut id = [0u8; 8];
            let k = d.payload.len().min(8);
            id[..k].copy_from_slice(&d.payload[..k]);
            let id = u64::from_le_bytes(id);
            if leads {
                lock(&self.client).delivered(id, now);
            }
            if let Some((lay, mr)) = self.kv {
                // A payload that is no update is refused alike at every replica.
                if let Ok(u) = Update::decode(&d.payload) {
                    let mem = self.node.endpoint_mut().mr_bytes_mut(mr.lkey)?;
                    kv::apply(mem, lay, &u.op);
                }
            }
            self.log.push(Logged {
                pos: d.pos,
                hdr: d.hdr,
                id,
                digest: digest(&d.payload),
            });
        }
        self.events.extend(self.node.core.take_events());
        if leads {
            lock(&self.client).fill(&mut self.node, now)?;
        }
        Ok(())
    }
}

impl HostApp for NodeApp {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        if self.alive {
            self.node.handle_frame(now.as_nanos(), frame);
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        if !self.alive {
            return;
        }
        if self.stalled {
            self.node.nic_only(now.as_nanos());
        } else if let Err(e) = self.turn(now.as_nanos()) {
            self.error = Some(e.to_string());
            self.alive = false;
            return;
        }
        while let Some(f) = self.node.poll_transmit(now.as_nanos()) {
            out(f);
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        if !self.alive {
            return None;
        }
        if self.stalled {
            return self
                .node
                .endpoint()
                .poll_timeout()
                .map(|t| Nanos(t.as_nanos()));
        }
        self.node.next_wakeup().map(Nanos)
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Slots one get READs from the key's home slot on.
pub const GET_PROBE: usize = 8;

/// A QP pair for gets: host `from`'s QP, CQ and landing MR, READing replica `to`'s table.
struct ReadPath {
    qpn: u32,
    cq: rdma::verbs::CqHandle,
    local: MrInfo,
}

/// The lab (see the module docs) on driver `D`.
pub struct Lab<D: Driver = MemLab> {
    mem: D,
    cfg: LabConfig,
    client: Arc<Mutex<Client>>,
    reads: HashMap<(usize, usize), ReadPath>,
}

impl Lab<MemLab> {
    /// Builds the topology in memory, a node on every host and every QP between them.
    pub fn new(cfg: LabConfig) -> Result<Lab, LabError> {
        Lab::build(cfg)
    }

    /// Switch mode: the P4CE topology (one switch running `p4ce.p4`, hosts at the P4CE
    /// addresses, the Acuerdo lab's links) with the P4CE agent on the switch's CPU port
    /// ([`crate::p4ce::mem::P4ceSwitch`]), the nodes on P4CE endpoints.
    fn build_switch(cfg: LabConfig) -> Result<Lab, LabError> {
        let n = cfg.nodes;
        if !(2..=MAX_REPLICAS + 1).contains(&n) {
            return Err(LabError::Config(format!(
                "switch mode: {n} nodes; 2 to {} (a P4CE group holds at most {MAX_REPLICAS} followers)",
                MAX_REPLICAS + 1
            )));
        }
        let program = compile_p4ce(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/p4ce.p4"),
        )?;
        let mut topo = crate::p4ce::topology(n, &crate::p4ce::repo_labs_dir())?;
        // The Acuerdo lab's cables (25 Gbit/s, 1 µs), so both modes run on the same links.
        let link = super::topology(n)?.links[0].config.clone();
        for l in &mut topo.links {
            l.config = link.clone();
        }
        apply_faults(&mut topo, &cfg.faults);
        let ids: Vec<u16> = (1..=n as u16).collect();
        let sw = P4ceSwitch::build(program, topo, &ids, 0)?;
        let mut mem = sw.mem;
        // ICRC checking off everywhere: any node may be a member, and members get the
        // switch's scattered WRITEs with the leader's ICRC (see hosts::p4ce::node).
        let eps = ids
            .iter()
            .zip(&sw.gateways)
            .map(|(id, gw)| {
                p4ce_endpoint(
                    *id,
                    &ids,
                    false,
                    0,
                    cfg.ack_timeout,
                    CM_RESPONSE_TIMEOUT,
                    *gw,
                )
            })
            .collect();
        let client = attach_nodes(&mut mem, &cfg, eps)?;
        Ok(Lab {
            mem,
            cfg,
            client,
            reads: HashMap::new(),
        })
    }

    /// Node `h`'s application.
    pub fn app(&mut self, h: usize) -> &mut NodeApp {
        self.mem
            .app_mut::<NodeApp>(h)
            .expect("every lab host runs a NodeApp")
    }
}

/// Puts `faults` on every link of `topo`, both directions.
fn apply_faults(topo: &mut Topology, faults: &Option<FaultConfig>) {
    if let Some(f) = faults {
        // Each end sends with the faults (end a with `tx`, end b with `rx`).
        for l in &mut topo.links {
            l.config.tx.faults = f.clone();
            l.config.rx.faults = f.clone();
        }
    }
}

/// Builds a node on each endpoint (`eps[h]` is host `h`'s), connects every QP between them
/// and runs each on its host of `mem`; returns the client they share.
fn attach_nodes<D: Driver>(
    mem: &mut D,
    cfg: &LabConfig,
    eps: Vec<Endpoint>,
) -> Result<Arc<Mutex<Client>>, LabError> {
    let client = Arc::new(Mutex::new(Client::new(cfg.window, cfg.size)?));
    let mut nodes = Vec::with_capacity(cfg.nodes);
    for (h, ep) in eps.into_iter().enumerate() {
        let mut nc = NodeConfig::new(h as Pid, cfg.nodes);
        nc.ring_bytes = cfg.ring_bytes;
        nc.core.heartbeat_ns = cfg.heartbeat_ns;
        nc.core.timeout_ns = cfg.timeout_ns;
        nc.ack_timeout = cfg.ack_timeout;
        nc.poll_every_ns = (cfg.heartbeat_ns / 4).max(1);
        nc.switch_timeout_ns = cfg.switch.then_some(cfg.timeout_ns / 4);
        nodes.push(Node::new(nc, ep)?);
    }
    let infos: Vec<PeerInfo> = nodes.iter().map(|n| n.info()).collect();
    for (h, mut node) in nodes.into_iter().enumerate() {
        node.connect(&infos)?;
        let kv = match cfg.kv {
            Some(lay) => {
                let ep = node.endpoint_mut();
                let pd = ep.alloc_pd();
                let mr = ep
                    .reg_mr(pd, lay.len(), AccessFlags::ALL)
                    .map_err(AcuerdoError::from)?;
                Some((lay, mr))
            }
            None => None,
        };
        let app = NodeApp {
            node,
            log: Vec::new(),
            events: Vec::new(),
            alive: true,
            stalled: false,
            error: None,
            client: client.clone(),
            kv,
        };
        mem.attach(h, Box::new(app))?;
    }
    Ok(client)
}

impl<D: Driver> Lab<D> {
    /// Builds the topology on driver `D`, a node on every host and every QP between them.
    pub fn build(cfg: LabConfig) -> Result<Lab<D>, LabError> {
        if cfg.window == 0 || cfg.size == 0 {
            return Err(LabError::Config(
                "window and size must be at least 1".into(),
            ));
        }
        if cfg.switch {
            // Switch mode is built on the in-memory driver only.
            let lab: Box<dyn Any> = Box::new(Lab::build_switch(cfg)?);
            return lab.downcast::<Lab<D>>().map(|l| *l).map_err(|_| {
                LabError::Config("switch mode runs on the in-memory driver only".into())
            });
        }
        let mut topo = super::topology(cfg.nodes)?;
        apply_faults(&mut topo, &cfg.faults);
        let mut mem = D::build(topo.clone())?;
        let eps = (0..cfg.nodes)
            .map(|h| RdmaHost::new(&topo, h).endpoint)
            .collect();
        let client = attach_nodes(&mut mem, &cfg, eps)?;
        Ok(Lab {
            mem,
            cfg,
            client,
            reads: HashMap::new(),
        })
    }

    /// Settings.
    pub fn config(&self) -> &LabConfig {
        &self.cfg
    }
    /// Virtual time now, ns.
    pub fn now(&self) -> u64 {
        self.mem.now().as_nanos()
    }
    /// The driver.
    pub fn mem(&mut self) -> &mut D {
        &mut self.mem
    }
    /// Runs `f` on node `h`'s application (between two of its turns).
    pub fn with<R>(&mut self, h: usize, f: impl FnOnce(&mut NodeApp) -> R) -> Result<R, LabError> {
        self.mem
            .with_app(h, f)
            .ok_or_else(|| LabError::Node(h, "runs no Acuerdo node".into()))
    }
    /// The client.
    pub fn client(&self) -> MutexGuard<'_, Client> {
        lock(&self.client)
    }

    /// Runs until the lab's time `t` (ns); a node that failed is an error.
    pub fn run_until(&mut self, t: u64) -> Result<(), LabError> {
        self.mem.run_to(Nanos(t))?;
        for h in 0..self.cfg.nodes {
            if let Some(e) = self.with(h, |a| a.error.clone())? {
                return Err(LabError::Node(h, e));
            }
        }
        Ok(())
    }

    /// Ends the run (in namespaces: the threads stop and the namespaces go down); the nodes
    /// stay, to read.
    pub fn finish(&mut self) -> Result<(), LabError> {
        Ok(self.mem.finish()?)
    }

    /// The live node that leads its epoch and has committed its diff, if any.
    pub fn leader(&mut self) -> Option<usize> {
        (0..self.cfg.nodes).find(|&h| {
            self.with(h, |a| {
                a.alive
                    && a.node.core.is_leader()
                    && a.node.core.committed().e == a.node.core.epoch()
            })
            .unwrap_or(false)
        })
    }

    /// Runs until a leader is in place (at most `limit_ns` more); returns it.
    pub fn wait_leader(&mut self, limit_ns: u64) -> Result<usize, LabError> {
        let end = self.now() + limit_ns;
        // Steps of the lab's time; in wall-clock time a millisecond (each step looks at every
        // node, taking it from its thread for a moment).
        let step = if D::WALL_CLOCK { 1_000_000 } else { 10_000 };
        while self.now() < end {
            let t = self.now() + step;
            self.run_until(t)?;
            if let Some(l) = self.leader() {
                return Ok(l);
            }
        }
        Err(LabError::NoLeader(limit_ns / 1_000))
    }

    /// Switch mode: runs until leader `l` broadcasts through the switch's group (at most
    /// `limit_ns` more).
    pub fn wait_switch(&mut self, l: usize, limit_ns: u64) -> Result<(), LabError> {
        let end = self.now() + limit_ns;
        while !self.with(l, |a| a.node.switch_attached())? {
            if self.now() >= end {
                let st = self.with(l, |a| a.node.stats())?;
                return Err(LabError::Config(format!(
                    "node {l}: no switch group after {} µs ({} refused)",
                    limit_ns / 1_000,
                    st.group_refusals
                )));
            }
            let t = self.now() + 10_000;
            self.run_until(t)?;
        }
        Ok(())
    }

    /// Every node's delivered log, for [`hosts::acuerdo::check`] (crashed nodes included:
    /// what they delivered must be a prefix too).
    pub fn logs(&mut self) -> Vec<(u32, Vec<Entry>)> {
        (0..self.cfg.nodes)
            .map(|h| {
                let log = self
                    .with(h, |a| {
                        a.log
                            .iter()
                            .map(|l| Entry {
                                hdr: l.hdr,
                                digest: l.digest,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (h as u32, log)
            })
            .collect()
    }
}

impl Lab<MemLab> {
    /// A get as §4.3 does it: host `from` READs the slots of `key` straight from replica
    /// `to`'s table over RDMA (a QP pair of their own, set up on first use), without going
    /// through Acuerdo; a torn read is read again.
    pub fn get(&mut self, from: usize, to: usize, key: u64) -> Result<kv::Lookup, LabError> {
        let (lay, table) = self
            .app(to)
            .kv
            .ok_or_else(|| LabError::Config("the lab runs no hash table".into()))?;
        if !self.reads.contains_key(&(from, to)) {
            let path = self.read_path(from, to, lay, table)?;
            self.reads.insert((from, to), path);
        }
        let (qpn, cq, local) = {
            let p = &self.reads[&(from, to)];
            (p.qpn, p.cq, p.local)
        };
        let (at, len) = kv::read_span(lay, key, GET_PROBE);
        for _ in 0..16 {
            let wr = rdma::verbs::SendWr::new(
                key,
                rdma::verbs::SendOp::Read {
                    remote_addr: table.addr + at as u64,
                    rkey: table.rkey,
                },
                rdma::verbs::Sge {
                    addr: local.addr,
                    length: len as u32,
                    lkey: local.lkey,
                },
            );
            self.app(from)
                .node
                .endpoint_mut()
                .post_send(qpn, wr)
                .map_err(AcuerdoError::from)?;
            self.mem.poll_host(from);
            let deadline = self.now() + 10_000_000;
            let wc = loop {
                let ep = self.app(from).node.endpoint_mut();
                if let Some(wc) = ep.poll_cq(cq, 1).map_err(AcuerdoError::from)?.pop() {
                    break wc;
                }
                if self.now() > deadline {
                    return Err(LabError::Config(format!("get of {key}: no completion")));
                }
                let t = self.now() + 1_000;
                self.run_until(t)?;
            };
            if wc.status != rdma::verbs::WcStatus::Success {
                return Err(LabError::Config(format!("get of {key}: {:?}", wc.status)));
            }
            let bytes = self
                .app(from)
                .node
                .endpoint()
                .mr_bytes(local.lkey)
                .map_err(AcuerdoError::from)?[..len]
                .to_vec();
            match kv::lookup(&bytes, lay, key) {
                kv::Lookup::Torn => continue,
                found => return Ok(found),
            }
        }
        Ok(kv::Lookup::Torn)
    }

    /// Connects a QP on `from` to a QP on `to` in the PD of `to`'s table, by hand.
    fn read_path(
        &mut self,
        from: usize,
        to: usize,
        lay: KvLayout,
        table: MrInfo,
    ) -> Result<ReadPath, LabError> {
        use rdma::verbs::{Mtu, QpAttr, QpInitAttr, QpState, QpType};
        let ips: Vec<std::net::IpAddr> = [from, to]
            .iter()
            .map(|h| std::net::IpAddr::V4(self.mem.topology().hosts[*h].ip))
            .collect();
        let mut made = Vec::new();
        for (k, h) in [from, to].into_iter().enumerate() {
            let ep = self.app(h).node.endpoint_mut();
            let pd = if k == 0 { ep.alloc_pd() } else { table.pd };
            let cq = ep.create_cq(64);
            let local = ep
                .reg_mr(pd, GET_PROBE * lay.slot(), AccessFlags::LOCAL_WRITE)
                .map_err(AcuerdoError::from)?;
            let qpn = ep
                .create_qp(QpInitAttr {
                    pd,
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    max_send_wr: 64,
                    max_recv_wr: 1,
                })
                .map_err(AcuerdoError::from)?;
            made.push((qpn, cq, local));
        }
        for (k, h) in [from, to].into_iter().enumerate() {
            let (qpn, peer) = (made[k].0, made[1 - k].0);
            let psn = |a: usize| 0x7000 + a as u32;
            let attrs = [
                QpAttr {
                    state: Some(QpState::Init),
                    access: Some(AccessFlags::REMOTE_READ),
                    ..Default::default()
                },
                QpAttr {
                    state: Some(QpState::Rtr),
                    path_mtu: Some(Mtu::M1024),
                    dest_qp_num: Some(peer),
                    remote_ip: Some(ips[1 - k]),
                    rq_psn: Some(psn(1 - k)),
                    min_rnr_timer: Some(1),
                    ..Default::default()
                },
                QpAttr {
                    state: Some(QpState::Rts),
                    sq_psn: Some(psn(k)),
                    timeout: Some(8),
                    retry_cnt: Some(7),
                    rnr_retry: Some(7),
                    ..Default::default()
                },
            ];
            let ep = self.app(h).node.endpoint_mut();
            for a in &attrs {
                ep.modify_qp(qpn, a).map_err(AcuerdoError::from)?;
            }
        }
        Ok(ReadPath {
            qpn: made[0].0,
            cq: made[0].1,
            local: made[0].2,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hosts::acuerdo::check;

    #[test]
    fn nodes_around_one_switch_commit_a_window_and_survive_a_leader_crash_on_lossy_links() {
        let mut cfg = LabConfig::new(3, 32, 4);
        cfg.faults = Some(FaultConfig {
            loss: 0.02,
            duplicate: 0.02,
            reorder: 0.02,
            reorder_delay_ns: 3_000,
            ..FaultConfig::default()
        });
        let mut lab = Lab::new(cfg).unwrap();
        let l = lab.wait_leader(20_000_000).unwrap();
        lab.client().on = true;
        let t = lab.now() + 300_000;
        lab.run_until(t).unwrap();
        let before = lab.client().committed;
        assert!(before > 20, "committed {before}");
        lab.app(l).crash();
        let m = lab.wait_leader(20_000_000).unwrap();
        assert_ne!(m, l);
        let t = lab.now() + 300_000;
        lab.run_until(t).unwrap();
        lab.client().on = false;
        let t = lab.now() + 2_000_000;
        lab.run_until(t).unwrap();
        assert!(lab.client().committed > before + 20);
        let sent = lab.client().sent.clone();
        let v = check(&lab.logs(), Some(&sent));
        assert!(v.ok, "{v}");
        let live: Vec<u64> = v
            .delivered
            .iter()
            .filter(|(id, _)| *id as usize != l)
            .map(|d| d.1)
            .collect();
        assert!(live.iter().all(|n| *n == v.longest), "{v}");
        assert!(lab
            .app(m)
            .events
            .iter()
            .any(|e| matches!(e, Event::DiffCommitted { .. })));
    }

    #[test]
    fn a_crashed_follower_is_lost_over_rdma_and_the_rest_go_on_through_5_percent_faults() {
        let mut cfg = LabConfig::new(5, 16, 2);
        cfg.faults = Some(FaultConfig {
            loss: 0.05,
            duplicate: 0.05,
            reorder: 0.05,
            reorder_delay_ns: 5_000,
            ..FaultConfig::default()
        });
        let mut lab = Lab::new(cfg).unwrap();
        let l = lab.wait_leader(20_000_000).unwrap();
        let f = (l + 1) % 5;
        lab.app(f).crash();
        lab.client().on = true;
        // Long enough for the leader's QP to the dead follower to run out of retries.
        let t = lab.now() + 10_000_000;
        lab.run_until(t).unwrap();
        lab.client().on = false;
        let t = lab.now() + 2_000_000;
        lab.run_until(t).unwrap();
        assert_eq!(
            lab.leader(),
            Some(l),
            "no election: the leader kept its quorum"
        );
        assert!(
            lab.app(l).node.lost(f as Pid),
            "the dead follower's QP failed"
        );
        assert!(lab.client().committed > 500);
        let sent = lab.client().sent.clone();
        let v = check(&lab.logs(), Some(&sent));
        assert!(v.ok, "{v}");
        let live: Vec<u64> = v
            .delivered
            .iter()
            .filter(|(id, _)| *id as usize != f)
            .map(|d| d.1)
            .collect();
        assert!(live.iter().all(|n| *n == v.longest), "{v}");
    }

    #[test]
    fn a_stalled_follower_catches_up_in_one_batch_from_what_its_nic_took() {
        let mut lab = Lab::new(LabConfig::new(3, 16, 8)).unwrap();
        let l = lab.wait_leader(20_000_000).unwrap();
        let slow = (l + 1) % 3;
        lab.client().on = true;
        let t = lab.now() + 100_000;
        lab.run_until(t).unwrap();
        let before = lab.app(slow).node.stats().records;
        lab.app(slow).stall(true);
        // Stalled for 150 us (under the 200 us failure timeout): the others commit on.
        let t = lab.now() + 150_000;
        lab.run_until(t).unwrap();
        assert_eq!(lab.app(slow).node.stats().records, before);
        let batches = lab.app(slow).node.stats().batches;
        lab.app(slow).stall(false);
        lab.mem().poll_host(slow);
        let st = lab.app(slow).node.stats();
        assert_eq!(st.batches, batches + 1);
        assert!(
            st.records - before > 100,
            "one batch took {}",
            st.records - before
        );
        lab.client().on = false;
        let t = lab.now() + 2_000_000;
        lab.run_until(t).unwrap();
        assert_eq!(lab.leader(), Some(l));
        let sent = lab.client().sent.clone();
        let v = check(&lab.logs(), Some(&sent));
        assert!(v.ok && v.delivered.iter().all(|d| d.1 == v.longest), "{v}");
    }
}

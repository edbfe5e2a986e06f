//! An MC-RDMA lab on [`MemLab`]: a topology (the paper's Figure 3 testbed) whose ToRs run
//! `mcrdma.p4` and whose other switches keep their program (fabric.p4: the paper's
//! non-programmable aggregation switch), one sender and N receivers running the replication
//! workload ([`hosts::mcrdma::Node`]) on pisa's RDMA endpoint, connected by the CMD's steps in
//! MC-RDMA mode (switches programmed by [`Controller`]) or as plain RC QPs for the fanout and
//! chain baselines. The lab is written against [`Driver`]: the same code runs in memory
//! ([`MemLab`], the default) and in network namespaces ([`crate::NetnsApps`]); the switches are
//! programmed while the lab is set up, before the run starts.

use std::any::Any;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use control::mcrdma::{Controller, GroupKey, GroupSpec, McError, ReceiverSpec, Switches};
use dataplane::Nanos;
use hosts::mcrdma::cmd::{self, HandshakeReply, McIdAllocator, RcSettings};
use hosts::mcrdma::{Hop, Mode, Node, Region, Role, Sender, Target};
use pipeline::switch::Switch;
use rdma::verbs::{AccessFlags, Endpoint, MrInfo, QpInitAttr, QpType, VerbsError};

use super::fabric::LabFabric;
use crate::driver::{Driver, DriverError};
use crate::host::{HostApp, RdmaHost};
use crate::mem::{MemLab, MemLabError};
use crate::topology::Topology;

/// A lab could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum McLabError {
    #[error(transparent)]
    Lab(#[from] MemLabError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("no host {0:?} in the topology")]
    NoHost(String),
    #[error("host {0} is not an RDMA host (rdma: true)")]
    NotRdma(String),
    #[error("RDMA endpoint: {0}")]
    Verbs(#[from] VerbsError),
    #[error("MC-RDMA control plane: {0}")]
    Control(#[from] McError),
    #[error("{0}")]
    Config(String),
}

/// What to build.
#[derive(Debug, Clone)]
pub struct LabConfig {
    pub mode: Mode,
    pub sender: String,
    pub receivers: Vec<String>,
    /// Bytes per operation.
    pub size: u64,
    pub iodepth: usize,
    /// The group's initial PSN (every QP starts there).
    pub psn: u32,
}

/// The workload host on a lab host.
pub struct McHost(pub Node);

impl HostApp for McHost {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        self.0.receive(now.0, frame);
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        self.0.poll(now.0, out);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.0.next_wakeup().map(Nanos)
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The lab's switches for the controller.
struct LabSwitches<'a>(Vec<&'a mut Switch>);

impl Switches for LabSwitches<'_> {
    fn switch_mut(&mut self, s: usize) -> &mut Switch {
        self.0[s]
    }
}

/// One flow of a lab: a sender and its receivers in one mode.
#[derive(Debug, Clone)]
pub struct Flow {
    pub mode: Mode,
    /// Host indexes.
    pub sender: usize,
    pub receivers: Vec<usize>,
    /// The multicast key (MC-RDMA mode).
    pub key: Option<GroupKey>,
    /// Which of the sender host's sender roles is this flow's.
    pub sender_role: usize,
    /// The flow's region on each of its hosts.
    pub regions: BTreeMap<usize, MrInfo>,
    pub size: u64,
}

/// A running MC-RDMA lab on driver `D`.
pub struct McLab<D: Driver = MemLab> {
    pub lab: D,
    pub fabric: LabFabric,
    pub ctl: Controller,
    pub flows: Vec<Flow>,
    /// Flow 0's mode, sender and receivers (host indexes) and key.
    pub mode: Mode,
    pub sender: usize,
    pub receivers: Vec<usize>,
    pub key: Option<GroupKey>,
    size: u64,
    /// Every QP's RC settings (the path MTU that fits the topology's links).
    rc: RcSettings,
}

/// Switches with hosts (the ToRs) that run fabric.p4 get mcrdma.p4 from the same directory.
fn tors_run_mcrdma(topo: &mut Topology) -> Vec<bool> {
    let tors: Vec<usize> = (0..topo.hosts.len())
        .filter_map(|h| topo.host_attachment(h).map(|(s, _)| s))
        .collect();
    topo.switches
        .iter_mut()
        .enumerate()
        .map(|(i, s)| {
            if tors.contains(&i) && s.program.file_name().is_some_and(|n| n == "fabric.p4") {
                s.program = s.program.with_file_name("mcrdma.p4");
            }
            s.program.file_name().is_some_and(|n| n == "mcrdma.p4")
        })
        .collect()
}

/// Bytes around an RC payload on the wire: Ethernet, IPv4, UDP, BTH, RETH, immediate, ICRC.
const ROCE_OVERHEAD: u32 = 14 + 20 + 8 + 12 + 16 + 4 + 4;

/// RC settings whose path MTU is the largest that fits the links' MTU (a frame larger than
/// the MTU does not pass a veth; in memory the same MTU keeps the figures comparable). In
/// wall-clock time the ACK timeout is 16.8 ms instead of 1 ms: threads sharing a loaded
/// machine's cores stall for milliseconds, which would read as losses.
fn rc_settings(link_mtu: u32, wall_clock: bool) -> RcSettings {
    use rdma::verbs::Mtu;
    let mtu = [Mtu::M4096, Mtu::M2048, Mtu::M1024, Mtu::M512]
        .into_iter()
        .find(|m| m.bytes() as u32 + ROCE_OVERHEAD <= link_mtu)
        .unwrap_or(Mtu::M256);
    let d = RcSettings::default();
    RcSettings {
        mtu,
        timeout: if wall_clock { 12 } else { d.timeout },
        ..d
    }
}

/// One host's endpoint, protection domain and CQ (shared by the flows it takes part in).
struct Parts {
    ep: Endpoint,
    pd: rdma::verbs::PdHandle,
    cq: rdma::verbs::CqHandle,
}

/// Every host's parts and the workload roles given to it so far.
struct Hosts {
    parts: BTreeMap<usize, Parts>,
    roles: BTreeMap<usize, Vec<Role>>,
}

impl Hosts {
    fn get(&mut self, topo: &Topology, h: usize) -> &mut Parts {
        self.parts.entry(h).or_insert_with(|| {
            let mut ep = RdmaHost::new(topo, h).endpoint;
            let pd = ep.alloc_pd();
            let cq = ep.create_cq(1 << 15);
            Parts { ep, pd, cq }
        })
    }

    fn qp(&mut self, topo: &Topology, h: usize) -> Result<u32, McLabError> {
        let p = self.get(topo, h);
        Ok(p.ep.create_qp(QpInitAttr {
            pd: p.pd,
            qp_type: QpType::Rc,
            send_cq: p.cq,
            recv_cq: p.cq,
            max_send_wr: 4096,
            max_recv_wr: 4096,
        })?)
    }

    fn mr(&mut self, topo: &Topology, h: usize, len: usize) -> Result<MrInfo, McLabError> {
        let p = self.get(topo, h);
        Ok(p.ep.reg_mr(p.pd, len, AccessFlags::ALL)?)
    }

    fn ep(&mut self, topo: &Topology, h: usize) -> &mut Endpoint {
        &mut self.get(topo, h).ep
    }

    /// Gives host `h` a role; returns its index among the host's sender roles.
    fn add_role(&mut self, h: usize, role: Role) -> usize {
        let roles = self.roles.entry(h).or_default();
        let senders = roles
            .iter()
            .filter(|r| matches!(r, Role::Sender(_)))
            .count();
        roles.push(role);
        senders
    }
}

/// The ends of one flow: its sender's and receivers' host indexes.
type Ends = (usize, Vec<usize>);

/// Host indexes of a flow, checked.
fn ends(topo: &Topology, cfg: &LabConfig) -> Result<Ends, McLabError> {
    let find = |n: &str| {
        let h = topo
            .host_index(n)
            .ok_or_else(|| McLabError::NoHost(n.into()))?;
        if topo.hosts[h].rdma {
            Ok(h)
        } else {
            Err(McLabError::NotRdma(n.into()))
        }
    };
    let sender = find(&cfg.sender)?;
    let receivers = cfg
        .receivers
        .iter()
        .map(|r| find(r))
        .collect::<Result<Vec<_>, _>>()?;
    if receivers.is_empty() || receivers.contains(&sender) {
        return Err(McLabError::Config(
            "the receivers must be one or more hosts other than the sender".into(),
        ));
    }
    Ok((sender, receivers))
}

impl<D: Driver> McLab<D> {
    /// Builds the lab, connects the QPs for `cfg.mode` and attaches the hosts; the sender
    /// starts posting at once.
    pub fn new(topo: Topology, cfg: &LabConfig) -> Result<McLab<D>, McLabError> {
        McLab::with_flows(topo, std::slice::from_ref(cfg))
    }

    /// A lab running several flows at once (a host may be in several); every sender starts
    /// posting at once unless the caller stops it ([`McLab::sender_of`]).
    pub fn with_flows(topo: Topology, cfgs: &[LabConfig]) -> Result<McLab<D>, McLabError> {
        McLab::with_flows_started(topo, cfgs, &vec![true; cfgs.len()])
    }

    /// [`McLab::with_flows`], with only the flows whose `started` is true posting from the
    /// start (start the others by setting their sender's `running`).
    pub fn with_flows_started(
        mut topo: Topology,
        cfgs: &[LabConfig],
        started: &[bool],
    ) -> Result<McLab<D>, McLabError> {
        let programmable = tors_run_mcrdma(&mut topo);
        let all: Vec<Ends> = cfgs
            .iter()
            .map(|c| ends(&topo, c))
            .collect::<Result<_, _>>()?;
        let first = cfgs
            .first()
            .ok_or_else(|| McLabError::Config("no flow".into()))?;
        let fabric = LabFabric::new(&topo, programmable);
        let topo_mtu = topo.mtu;
        let lab = D::build(topo)?;
        let mut me = McLab {
            lab,
            fabric,
            ctl: Controller::new(),
            flows: Vec::new(),
            mode: first.mode,
            sender: all[0].0,
            receivers: all[0].1.clone(),
            key: None,
            size: first.size.max(1),
            rc: rc_settings(topo_mtu, D::WALL_CLOCK),
        };
        let mut hosts = Hosts {
            parts: BTreeMap::new(),
            roles: BTreeMap::new(),
        };
        let mut mc_ids: BTreeMap<usize, McIdAllocator> = BTreeMap::new();
        for (i, (cfg, (sender, receivers))) in cfgs.iter().zip(all).enumerate() {
            let on = started.get(i).copied().unwrap_or(true);
            let flow = me.connect(cfg, sender, receivers, &mut hosts, &mut mc_ids, on)?;
            me.flows.push(flow);
        }
        me.key = me.flows[0].key;
        for (h, p) in std::mem::take(&mut hosts.parts) {
            let mut node = Node::new(p.ep, p.cq);
            node.roles = hosts.roles.remove(&h).unwrap_or_default();
            node.post_chain_recvs()?;
            me.lab.attach(h, Box::new(McHost(node)))?;
        }
        Ok(me)
    }

    /// The region: at least twice the IO depth in slots, and at least 64 KiB.
    fn region_len(cfg: &LabConfig) -> usize {
        let slots = (2 * cfg.iodepth as u64).max(4);
        (cfg.size.max(1) * slots).max(64 << 10) as usize
    }

    fn ip(&self, h: usize) -> Ipv4Addr {
        self.lab.topology().hosts[h].ip
    }

    /// One flow's regions and QPs, connected for its mode; its roles go to `hosts`.
    fn connect(
        &mut self,
        cfg: &LabConfig,
        sender: usize,
        receivers: Vec<usize>,
        hosts: &mut Hosts,
        mc_ids: &mut BTreeMap<usize, McIdAllocator>,
        started: bool,
    ) -> Result<Flow, McLabError> {
        let topo = self.lab.topology().clone();
        let len = Self::region_len(cfg);
        let mut regions = BTreeMap::new();
        for &h in std::iter::once(&sender).chain(&receivers) {
            regions.insert(h, hosts.mr(&topo, h, len)?);
        }
        let ends = (sender, receivers);
        let (role, key) = match cfg.mode {
            Mode::Mcrdma => {
                let ids = mc_ids.entry(sender).or_default();
                let (r, k) = self.multicast(cfg, &ends, &regions, hosts, ids, &topo)?;
                (r, Some(k))
            }
            Mode::Fanout => (self.fanout(cfg, &ends, &regions, hosts, &topo)?, None),
            Mode::Chain => (self.chain(cfg, &ends, &regions, hosts, &topo)?, None),
        };
        let mut role = role;
        role.running = started;
        let sender_role = hosts.add_role(sender, Role::Sender(Box::new(role)));
        Ok(Flow {
            mode: cfg.mode,
            sender,
            receivers: ends.1,
            key,
            sender_role,
            regions,
            size: cfg.size.max(1),
        })
    }

    /// MC-RDMA: the CMD's steps and the switches' rules.
    fn multicast(
        &mut self,
        cfg: &LabConfig,
        (sender, receivers): &Ends,
        regions: &BTreeMap<usize, MrInfo>,
        hosts: &mut Hosts,
        ids: &mut McIdAllocator,
        topo: &Topology,
    ) -> Result<(Sender, GroupKey), McLabError> {
        let rc = self.rc;
        let (sip, smr) = (self.ip(*sender), regions[sender]);
        let rips: Vec<Ipv4Addr> = receivers.iter().map(|&h| self.ip(h)).collect();
        let sq = hosts.qp(topo, *sender)?;
        let mc_id = ids
            .allocate()
            .ok_or_else(|| McLabError::Config("no MC_ID left".into()))?;
        let mut specs = Vec::new();
        for (&h, ip) in receivers.iter().zip(&rips) {
            // Rewritten copies carry a stale ICRC: a receiver's check is off (see mcrdma.p4).
            hosts.ep(topo, h).set_icrc_check(false);
            let q = hosts.qp(topo, h)?;
            cmd::accept(hosts.ep(topo, h), q, sip, sq, cfg.psn, rc)?;
            specs.push(ReceiverSpec {
                ip: *ip,
                qpn: q,
                va: regions[&h].addr,
                rkey: regions[&h].rkey,
            });
        }
        let key = GroupKey { sender: sip, mc_id };
        let spec = GroupSpec {
            key,
            sender_qpn: sq,
            address: rips[0],
            psn: cfg.psn,
            sender_va: smr.addr,
            len: smr.len as u64,
            receivers: specs,
        };
        let mut sw = LabSwitches(self.lab.switches_mut()?);
        self.ctl.create(&self.fabric, &mut sw, spec)?;
        let reply = HandshakeReply {
            dst1: rips[0],
            mc_id,
            psn: cfg.psn,
        };
        cmd::connect_sender(hosts.ep(topo, *sender), sq, &reply, rc)?;
        let t = Target {
            qpn: sq,
            va: smr.addr,
            rkey: 0,
        };
        let s = Sender::new(
            Mode::Mcrdma,
            vec![t],
            None,
            Region::new(smr, cfg.size),
            cfg.iodepth,
        )
        .map_err(|e| McLabError::Config(e.to_string()))?;
        Ok((s, key))
    }

    /// Fanout: one RC connection per receiver.
    fn fanout(
        &self,
        cfg: &LabConfig,
        (sender, receivers): &Ends,
        regions: &BTreeMap<usize, MrInfo>,
        hosts: &mut Hosts,
        topo: &Topology,
    ) -> Result<Sender, McLabError> {
        let rc = self.rc;
        let sip = self.ip(*sender);
        let mut targets = Vec::new();
        for &h in receivers {
            let (a, b) = (hosts.qp(topo, *sender)?, hosts.qp(topo, h)?);
            cmd::connect_rc(hosts.ep(topo, *sender), a, self.ip(h), b, cfg.psn, rc)?;
            cmd::connect_rc(hosts.ep(topo, h), b, sip, a, cfg.psn, rc)?;
            targets.push(Target {
                qpn: a,
                va: regions[&h].addr,
                rkey: regions[&h].rkey,
            });
        }
        let region = Region::new(regions[sender], cfg.size);
        Sender::new(Mode::Fanout, targets, None, region, cfg.iodepth)
            .map_err(|e| McLabError::Config(e.to_string()))
    }

    /// Chain: sender → r1 → … → rN, and rN → sender for the notifications.
    fn chain(
        &self,
        cfg: &LabConfig,
        (sender, receivers): &Ends,
        regions: &BTreeMap<usize, MrInfo>,
        hosts: &mut Hosts,
        topo: &Topology,
    ) -> Result<Sender, McLabError> {
        let rc = self.rc;
        let n = receivers.len();
        let hop_ip = |i: usize| self.ip(if i == 0 { *sender } else { receivers[i - 1] });
        let hop_host = |i: usize| if i == 0 { *sender } else { receivers[i - 1] };
        // up[i]: r_i's QP from its predecessor; down[i]: the predecessor's QP to r_i.
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for (i, &r) in receivers.iter().enumerate() {
            let d = hosts.qp(topo, hop_host(i))?;
            let u = hosts.qp(topo, r)?;
            cmd::connect_rc(hosts.ep(topo, hop_host(i)), d, self.ip(r), u, cfg.psn, rc)?;
            cmd::connect_rc(hosts.ep(topo, r), u, hop_ip(i), d, cfg.psn, rc)?;
            up.push(u);
            down.push(d);
        }
        let tail = receivers[n - 1];
        let (back_s, back_t) = (hosts.qp(topo, *sender)?, hosts.qp(topo, tail)?);
        cmd::connect_rc(
            hosts.ep(topo, *sender),
            back_s,
            self.ip(tail),
            back_t,
            cfg.psn,
            rc,
        )?;
        cmd::connect_rc(
            hosts.ep(topo, tail),
            back_t,
            self.ip(*sender),
            back_s,
            cfg.psn,
            rc,
        )?;
        for (i, &r) in receivers.iter().enumerate() {
            let next = (i + 1 < n).then(|| Target {
                qpn: down[i + 1],
                va: regions[&receivers[i + 1]].addr,
                rkey: regions[&receivers[i + 1]].rkey,
            });
            let hop = Hop {
                up: up[i],
                down: next,
                notify: (i + 1 == n).then_some(back_t),
                region: Region::new(regions[&r], cfg.size),
            };
            hosts.add_role(r, Role::ChainHop(hop));
        }
        let first = Target {
            qpn: down[0],
            va: regions[&receivers[0]].addr,
            rkey: regions[&receivers[0]].rkey,
        };
        let region = Region::new(regions[sender], cfg.size);
        Sender::new(Mode::Chain, vec![first], Some(back_s), region, cfg.iodepth)
            .map_err(|e| McLabError::Config(e.to_string()))
    }

    /// Runs `f` on host `h`'s workload node (between two of its turns).
    pub fn with_node<R>(
        &mut self,
        h: usize,
        f: impl FnOnce(&mut Node) -> R,
    ) -> Result<R, McLabError> {
        self.lab
            .with_app::<McHost, R>(h, |m| f(&mut m.0))
            .ok_or_else(|| McLabError::Config(format!("host {h} runs no workload")))
    }

    /// Runs `f` on flow `f`'s sender.
    pub fn with_sender<R>(
        &mut self,
        flow: usize,
        f: impl FnOnce(&mut Sender) -> R,
    ) -> Result<R, McLabError> {
        let (h, i) = (self.flows[flow].sender, self.flows[flow].sender_role);
        self.with_node(h, |n| n.sender(i).map(f))?
            .ok_or_else(|| McLabError::Config(format!("host {h} has no sender role {i}")))
    }

    /// Operations in flight over every flow.
    pub fn outstanding(&mut self) -> Result<usize, McLabError> {
        let mut n = 0;
        for f in 0..self.flows.len() {
            n += self.with_sender(f, |s| s.outstanding())?;
        }
        Ok(n)
    }

    /// Bytes per operation.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Runs the lab up to `until` (in memory: or until nothing is in flight).
    pub fn run_to(&mut self, until: Nanos) -> Result<(), McLabError> {
        for f in 0..self.flows.len() {
            // Lets every sender run now (it may have been given work).
            self.with_sender(f, |_| ())?;
        }
        Ok(self.lab.run_to(until)?)
    }

    /// Stops posting and runs until every operation in flight completed (or `limit` ns of the
    /// lab's time passed); true when none is left.
    pub fn drain(&mut self, limit: u64) -> Result<bool, McLabError> {
        for f in 0..self.flows.len() {
            self.with_sender(f, |s| s.running = false)?;
        }
        let deadline = Nanos(self.lab.now().0 + limit);
        while self.outstanding()? > 0 && self.lab.now() < deadline {
            // In wall-clock time a millisecond: each step reads every sender.
            let dt = if D::WALL_CLOCK { 1_000_000 } else { 100_000 };
            let step = Nanos((self.lab.now().0 + dt).min(deadline.0));
            self.run_to(step)?;
            if self.lab.quiescent() && self.outstanding()? > 0 {
                return Ok(false);
            }
        }
        // Let the last ACKs and chain forwards settle.
        let settle = Nanos(self.lab.now().0 + 1_000_000);
        self.run_to(settle)?;
        Ok(self.outstanding()? == 0)
    }

    /// The bytes of flow `f`'s region on host `h` (empty if `h` is not in the flow).
    pub fn flow_region(&mut self, f: usize, h: usize) -> Result<Vec<u8>, McLabError> {
        let Some(mr) = self.flows[f].regions.get(&h).copied() else {
            return Ok(Vec::new());
        };
        self.with_node(h, |n| {
            n.endpoint
                .mr_bytes(mr.lkey)
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        })
    }

    /// The bytes of flow 0's region on host `h`.
    pub fn region(&mut self, h: usize) -> Result<Vec<u8>, McLabError> {
        self.flow_region(0, h)
    }

    /// Bytes the sender's ToR received from the sender so far.
    pub fn sender_uplink_bytes(&self) -> u64 {
        let Some((s, port)) = self.lab.topology().host_attachment(self.sender) else {
            return 0;
        };
        self.lab.switch_counters()[s]
            .ports
            .iter()
            .find(|p| p.devport == port)
            .map_or(0, |p| p.rx_bytes)
    }

    /// Every switch port gets a TM queue at its link's rate with DCQCN's ECN marking (seed 001,
    /// §VII-C: Kmin 50 KB, Kmax 500 KB, Pmax 0.01) and the link's queue size: the congestion
    /// points DCQCN needs (the link model does the queueing; the TM queue decides the marks).
    /// In namespaces: before the run.
    pub fn enable_ecn(&mut self) -> Result<(), McLabError> {
        let topo = self.lab.topology().clone();
        for (i, l) in topo.links.iter().enumerate() {
            for (k, end) in [l.a, l.b].into_iter().enumerate() {
                let crate::topology::End::Switch { switch, devport } = end else {
                    continue;
                };
                let dir = if k == 0 { &l.config.tx } else { &l.config.rx };
                if dir.rate_bps == 0 {
                    continue;
                }
                let cfg = pipeline::tm::queue::QueueConfig {
                    rate_bps: Some(dir.rate_bps),
                    capacity_bytes: dir.queue_bytes,
                    ecn: Some(pipeline::tm::queue::EcnConfig::DCQCN_100G),
                    seed: (i * 2 + k) as u64 + 1,
                };
                self.lab
                    .switch_mut(switch)?
                    .port_queue_set(devport, cfg)
                    .map_err(|e| McLabError::Control(McError::Api(e)))?;
            }
        }
        Ok(())
    }
}

impl McLab<MemLab> {
    /// The workload node of host `h`.
    pub fn node(&mut self, h: usize) -> &mut Node {
        &mut self
            .lab
            .app_mut::<McHost>(h)
            .expect("every lab host of the group runs the workload")
            .0
    }

    /// Flow `f`'s sender.
    pub fn sender_of(&mut self, f: usize) -> &mut Sender {
        let (h, i) = (self.flows[f].sender, self.flows[f].sender_role);
        self.node(h)
            .sender(i)
            .expect("every flow's sender host runs its sender role")
    }

    /// Flow 0's sender.
    pub fn sender(&mut self) -> &mut Sender {
        self.sender_of(0)
    }

    /// Receiver `ip` leaves the MC-RDMA group (its QP stays as it is: it just gets nothing).
    pub fn leave(&mut self, ip: Ipv4Addr) -> Result<(), McLabError> {
        let key = self
            .key
            .ok_or_else(|| McLabError::Config("not MC-RDMA".into()))?;
        let mut sw = LabSwitches(self.lab.switches_mut());
        self.ctl.leave(&self.fabric, &mut sw, key, ip)?;
        Ok(())
    }

    /// Takes link `link` down (or up) and lets the control plane react: the unicast ECMP
    /// buckets of every switch move off it, then Algorithm 1 re-runs for every group.
    pub fn set_link_up(&mut self, link: usize, up: bool) -> Result<usize, McLabError> {
        self.lab.set_link_up(link, up);
        self.fabric.set_link_up(link, up);
        for s in 0..self.lab.topology().switches.len() {
            self.fabric
                .repair_ecmp(s, self.lab.switch_mut(s))
                .map_err(|e| McLabError::Control(McError::Api(e)))?;
        }
        let mut sw = LabSwitches(self.lab.switches_mut());
        Ok(self.ctl.reroute(&self.fabric, &mut sw)?)
    }
}

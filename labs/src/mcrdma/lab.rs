//! An MC-RDMA lab on [`MemLab`]: a topology (the paper's Figure 3 testbed) whose ToRs run
//! `mcrdma.p4` and whose other switches keep their program (fabric.p4: the paper's
//! non-programmable aggregation switch), one sender and N receivers running the replication
//! workload ([`hosts::mcrdma::Node`]) on pisa's RDMA endpoint, connected by the CMD's steps in
//! MC-RDMA mode (switches programmed by [`Controller`]) or as plain RC QPs for the fanout and
//! chain baselines.

use std::any::Any;
use std::net::Ipv4Addr;

use control::mcrdma::{Controller, GroupKey, GroupSpec, McError, ReceiverSpec, Switches};
use dataplane::Nanos;
use hosts::mcrdma::cmd::{self, HandshakeReply, McIdAllocator, RcSettings};
use hosts::mcrdma::{Hop, Mode, Node, Role, Sender, Target};
use pipeline::switch::Switch;
use rdma::verbs::{AccessFlags, Endpoint, QpInitAttr, QpType, VerbsError};

use super::fabric::LabFabric;
use crate::host::{HostApp, RdmaHost};
use crate::mem::{MemLab, MemLabError};
use crate::topology::Topology;

/// A lab could not be set up or run.
#[derive(Debug, thiserror::Error)]
pub enum McLabError {
    #[error(transparent)]
    Lab(#[from] MemLabError),
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
struct LabSwitches<'a>(&'a mut MemLab);

impl Switches for LabSwitches<'_> {
    fn switch_mut(&mut self, s: usize) -> &mut Switch {
        self.0.switch_mut(s)
    }
}

/// A running MC-RDMA lab.
pub struct McLab {
    pub lab: MemLab,
    pub fabric: LabFabric,
    pub ctl: Controller,
    pub mode: Mode,
    /// Host indexes.
    pub sender: usize,
    pub receivers: Vec<usize>,
    /// The multicast key (MC-RDMA mode).
    pub key: Option<GroupKey>,
    size: u64,
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

/// One host's endpoint, CQ and region.
struct Parts {
    ep: Endpoint,
    pd: rdma::verbs::PdHandle,
    cq: rdma::verbs::CqHandle,
    mr: rdma::verbs::MrInfo,
}

fn parts(topo: &Topology, h: usize, region: usize) -> Result<Parts, McLabError> {
    let mut ep = RdmaHost::new(topo, h).endpoint;
    let pd = ep.alloc_pd();
    let cq = ep.create_cq(1 << 14);
    let mr = ep.reg_mr(pd, region, AccessFlags::ALL)?;
    Ok(Parts { ep, pd, cq, mr })
}

fn qp(p: &mut Parts) -> Result<u32, McLabError> {
    Ok(p.ep.create_qp(QpInitAttr {
        pd: p.pd,
        qp_type: QpType::Rc,
        send_cq: p.cq,
        recv_cq: p.cq,
        max_send_wr: 4096,
        max_recv_wr: 4096,
    })?)
}

impl McLab {
    /// Builds the lab, connects the QPs for `cfg.mode` and attaches the hosts; the sender
    /// starts posting at once.
    pub fn new(mut topo: Topology, cfg: &LabConfig) -> Result<McLab, McLabError> {
        let programmable = tors_run_mcrdma(&mut topo);
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
        let fabric = LabFabric::new(&topo, programmable);
        let lab = MemLab::new(topo)?;
        let mut me = McLab {
            lab,
            fabric,
            ctl: Controller::new(),
            mode: cfg.mode,
            sender,
            receivers,
            key: None,
            size: cfg.size.max(1),
        };
        let nodes = me.connect(cfg)?;
        for (h, node) in nodes {
            me.lab.attach(h, Box::new(McHost(node)));
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

    /// The QPs of the mode, connected; returns every host's workload node.
    fn connect(&mut self, cfg: &LabConfig) -> Result<Vec<(usize, Node)>, McLabError> {
        let topo = self.lab.topology().clone();
        let region = Self::region_len(cfg);
        let rc = RcSettings::default();
        let mut s = parts(&topo, self.sender, region)?;
        let mut rs: Vec<Parts> = self
            .receivers
            .iter()
            .map(|&h| parts(&topo, h, region))
            .collect::<Result<_, _>>()?;
        let (sip, rips): (Ipv4Addr, Vec<Ipv4Addr>) = (
            self.ip(self.sender),
            self.receivers.iter().map(|&h| self.ip(h)).collect(),
        );
        let mut roles: Vec<Role> = Vec::new();
        let sender_role = match cfg.mode {
            Mode::Mcrdma => {
                let sq = qp(&mut s)?;
                let mc_id = McIdAllocator::default()
                    .allocate()
                    .ok_or_else(|| McLabError::Config("no MC_ID left".into()))?;
                let mut receivers = Vec::new();
                for (r, ip) in rs.iter_mut().zip(&rips) {
                    // Rewritten copies carry a stale ICRC: a receiver's check is off (§ICRC).
                    r.ep.set_icrc_check(false);
                    let q = qp(r)?;
                    cmd::accept(&mut r.ep, q, sip, sq, cfg.psn, rc)?;
                    receivers.push(ReceiverSpec {
                        ip: *ip,
                        qpn: q,
                        va: r.mr.addr,
                        rkey: r.mr.rkey,
                    });
                    roles.push(Role::Passive);
                }
                let key = GroupKey { sender: sip, mc_id };
                let spec = GroupSpec {
                    key,
                    sender_qpn: sq,
                    address: rips[0],
                    psn: cfg.psn,
                    sender_va: s.mr.addr,
                    len: s.mr.len as u64,
                    receivers,
                };
                self.ctl
                    .create(&self.fabric, &mut LabSwitches(&mut self.lab), spec)?;
                self.key = Some(key);
                let reply = HandshakeReply {
                    dst1: rips[0],
                    mc_id,
                    psn: cfg.psn,
                };
                cmd::connect_sender(&mut s.ep, sq, &reply, rc)?;
                let t = Target {
                    qpn: sq,
                    va: s.mr.addr,
                    rkey: 0,
                };
                Sender::new(Mode::Mcrdma, vec![t], None, cfg.size, cfg.iodepth)
            }
            Mode::Fanout => {
                let mut targets = Vec::new();
                for (r, ip) in rs.iter_mut().zip(&rips) {
                    let (a, b) = (qp(&mut s)?, qp(r)?);
                    cmd::connect_rc(&mut s.ep, a, *ip, b, cfg.psn, rc)?;
                    cmd::connect_rc(&mut r.ep, b, sip, a, cfg.psn, rc)?;
                    targets.push(Target {
                        qpn: a,
                        va: r.mr.addr,
                        rkey: r.mr.rkey,
                    });
                    roles.push(Role::Passive);
                }
                Sender::new(Mode::Fanout, targets, None, cfg.size, cfg.iodepth)
            }
            Mode::Chain => self.chain(cfg, &mut s, &mut rs, &rips, &mut roles)?,
        }
        .map_err(|e| McLabError::Config(e.to_string()))?;
        let mut out = vec![(
            self.sender,
            Node::new(
                s.ep,
                s.cq,
                s.mr,
                cfg.size,
                Role::Sender(Box::new(sender_role)),
            ),
        )];
        for ((h, r), role) in self.receivers.iter().zip(rs).zip(roles) {
            out.push((*h, Node::new(r.ep, r.cq, r.mr, cfg.size, role)));
        }
        for (_, n) in &mut out {
            n.post_chain_recvs()?;
        }
        Ok(out)
    }

    /// Chain: sender → r1 → … → rN, and rN → sender for the notifications.
    fn chain(
        &self,
        cfg: &LabConfig,
        s: &mut Parts,
        rs: &mut [Parts],
        rips: &[Ipv4Addr],
        roles: &mut Vec<Role>,
    ) -> Result<Result<Sender, hosts::p4ce::NodeError>, McLabError> {
        let rc = RcSettings::default();
        let sip = self.ip(self.sender);
        let n = rs.len();
        // up[i]: r_i's QP from its predecessor; down[i]: the predecessor's QP to r_i.
        let mut up = Vec::new();
        let mut down = Vec::new();
        for i in 0..n {
            let d = if i == 0 { qp(s)? } else { qp(&mut rs[i - 1])? };
            let u = qp(&mut rs[i])?;
            let (prev_ip, prev_ep) = if i == 0 {
                (sip, &mut s.ep)
            } else {
                (rips[i - 1], &mut rs[i - 1].ep)
            };
            cmd::connect_rc(prev_ep, d, rips[i], u, cfg.psn, rc)?;
            cmd::connect_rc(&mut rs[i].ep, u, prev_ip, d, cfg.psn, rc)?;
            up.push(u);
            down.push(d);
        }
        let (back_s, back_t) = (qp(s)?, qp(&mut rs[n - 1])?);
        cmd::connect_rc(&mut s.ep, back_s, rips[n - 1], back_t, cfg.psn, rc)?;
        cmd::connect_rc(&mut rs[n - 1].ep, back_t, sip, back_s, cfg.psn, rc)?;
        for i in 0..n {
            let next = (i + 1 < n).then(|| Target {
                qpn: down[i + 1],
                va: rs[i + 1].mr.addr,
                rkey: rs[i + 1].mr.rkey,
            });
            roles.push(Role::ChainHop(Hop {
                up: up[i],
                down: next,
                notify: (i + 1 == n).then_some(back_t),
            }));
        }
        let first = Target {
            qpn: down[0],
            va: rs[0].mr.addr,
            rkey: rs[0].mr.rkey,
        };
        Ok(Sender::new(
            Mode::Chain,
            vec![first],
            Some(back_s),
            cfg.size,
            cfg.iodepth,
        ))
    }

    /// The workload node of host `h`.
    pub fn node(&mut self, h: usize) -> &mut Node {
        &mut self
            .lab
            .app_mut::<McHost>(h)
            .expect("every lab host of the group runs the workload")
            .0
    }

    /// The sender's workload state.
    pub fn sender(&mut self) -> &mut Sender {
        let s = self.sender;
        match &mut self.node(s).role {
            Role::Sender(s) => s,
            _ => unreachable!("the sender's role is Sender"),
        }
    }

    /// Bytes per operation.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Runs virtual time up to `until` (or until nothing is in flight).
    pub fn run_to(&mut self, until: Nanos) {
        let s = self.sender;
        self.lab.poll_host(s);
        while self.lab.now() < until {
            self.lab.run_until(Some(until));
            if self.lab.next_due().is_none() {
                break;
            }
        }
    }

    /// Stops posting and runs until every operation in flight completed (or `limit` of
    /// virtual time passed); true when none is left.
    pub fn drain(&mut self, limit: u64) -> bool {
        self.sender().running = false;
        let deadline = Nanos(self.lab.now().0 + limit);
        while self.sender().outstanding() > 0 && self.lab.now() < deadline {
            let step = Nanos((self.lab.now().0 + 100_000).min(deadline.0));
            self.run_to(step);
            if self.lab.next_due().is_none() && self.sender().outstanding() > 0 {
                return false;
            }
        }
        // Let the last ACKs and chain forwards settle.
        let settle = Nanos(self.lab.now().0 + 1_000_000);
        self.run_to(settle);
        self.sender().outstanding() == 0
    }

    /// The bytes of host `h`'s registered region.
    pub fn region(&mut self, h: usize) -> Vec<u8> {
        let n = self.node(h);
        n.endpoint
            .mr_bytes(n.region.lkey)
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
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

    /// Receiver `ip` leaves the MC-RDMA group (its QP stays as it is: it just gets nothing).
    pub fn leave(&mut self, ip: Ipv4Addr) -> Result<(), McLabError> {
        let key = self
            .key
            .ok_or_else(|| McLabError::Config("not MC-RDMA".into()))?;
        self.ctl
            .leave(&self.fabric, &mut LabSwitches(&mut self.lab), key, ip)?;
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
        Ok(self
            .ctl
            .reroute(&self.fabric, &mut LabSwitches(&mut self.lab))?)
    }
}

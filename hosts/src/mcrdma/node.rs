//! A host of the replication workload, I/O-free (frames in, frames out, a wake-up time): the
//! sender keeps `iodepth` operations of `size` bytes in flight, each one replicated to every
//! receiver by one of three schemes over unmodified RC QPs (§II-A, §VII):
//! - [`Mode::Mcrdma`]: one RDMA WRITE on the one sender QP of the multicast connection; the
//!   fabric replicates, its completion means every receiver has it;
//! - [`Mode::Fanout`]: one WRITE per receiver on one QP each; done when all complete;
//! - [`Mode::Chain`]: WRITE WITH IMMEDIATE to the first receiver, each receiver forwards it to
//!   the next when its receive completes, the last one sends a zero-byte SEND WITH IMMEDIATE
//!   back to the sender: done when that arrives.
//!
//! A host may run several of these at once (a sender of one flow, a hop of another): each role
//! has its own QPs and its own registered region, and the host's completions go to the role
//! whose QP they belong to.
//!
//! Operation `k` writes slot `k mod slots` of the flow's registered region (`slots` at least twice the
//! IO depth, so a slot is never rewritten while an operation on it is in flight), at the same
//! offset on every host. The sender's CPU time is what its posting and completion handling
//! take on this machine's clock (the endpoint's protocol work, the "NIC", is not counted), and
//! its verbs calls (work requests posted, completions polled, receives re-posted) are counted:
//! the part of that cost that does not depend on the machine.

use std::collections::VecDeque;
use std::time::{Duration, Instant as WallClock};

use rdma::verbs::{
    CqHandle, Endpoint, Instant, MrInfo, RecvWr, SendOp, SendWr, Sge, VerbsError, WcStatus,
    WorkCompletion,
};

use crate::p4ce::bench::Meter;

/// How operations are replicated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Mcrdma,
    Fanout,
    Chain,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Mcrdma => "mcrdma",
            Mode::Fanout => "fanout",
            Mode::Chain => "chain",
        }
    }
}

/// A QP and where its WRITEs land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub qpn: u32,
    /// The remote address of the region's first byte (for MC-RDMA: the sender's own region,
    /// which the switches translate).
    pub va: u64,
    pub rkey: u32,
}

/// A flow's registered region on one host, cut into slots of the operation size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub mr: MrInfo,
    pub size: u64,
    /// Slots of the region (operations at most this many apart share none).
    pub slots: u64,
}

impl Region {
    pub fn new(mr: MrInfo, size: u64) -> Region {
        let size = size.max(1);
        Region {
            mr,
            size,
            slots: (mr.len as u64 / size).max(1),
        }
    }

    /// The byte offset of operation `op`'s slot.
    pub fn offset(&self, op: u64) -> u64 {
        (op % self.slots) * self.size
    }

    fn sge(&self, op: u64) -> Sge {
        Sge {
            addr: self.mr.addr + self.offset(op),
            length: self.size as u32,
            lkey: self.mr.lkey,
        }
    }
}

/// The sender's side of a flow.
pub struct Sender {
    pub mode: Mode,
    /// MC-RDMA and chain: one; fanout: one per receiver.
    pub targets: Vec<Target>,
    /// Chain: the QP the tail's notifications arrive on.
    pub ack_qp: Option<u32>,
    pub region: Region,
    pub iodepth: usize,
    /// Post new operations (false: only finish those in flight).
    pub running: bool,
    posted: u64,
    done: u64,
    /// Completions each in-flight operation still waits for, oldest first.
    waiting: VecDeque<usize>,
    meter: Meter,
    /// Work completions that counted towards an operation (one per operation and target).
    pub completions: u64,
    /// Operations that completed with an error status.
    pub errors: u64,
    /// CPU time spent posting and handling completions.
    pub cpu: Duration,
    /// Verbs calls that did work: work requests posted, completions taken, receives re-posted.
    pub verbs_calls: u64,
}

/// A chain hop: receives on `up` into `region`, forwards to `down` (None: the tail, which
/// notifies the sender on `notify`).
#[derive(Debug, Clone, Copy)]
pub struct Hop {
    pub up: u32,
    pub down: Option<Target>,
    pub notify: Option<u32>,
    pub region: Region,
}

/// A workload a host runs (a receiver of MC-RDMA or fanout runs none: its NIC does all).
pub enum Role {
    Sender(Box<Sender>),
    ChainHop(Hop),
}

impl Role {
    /// Whether a completion of QP `qpn` is this role's.
    fn owns(&self, qpn: u32) -> bool {
        match self {
            Role::Sender(s) => s.ack_qp == Some(qpn) || s.targets.iter().any(|t| t.qpn == qpn),
            Role::ChainHop(h) => h.up == qpn,
        }
    }
}

/// One host.
pub struct Node {
    pub endpoint: Endpoint,
    pub cq: CqHandle,
    pub roles: Vec<Role>,
}

/// Receive WQEs a chain QP keeps posted.
const RECVS: usize = 256;

fn at(now_ns: u64) -> Instant {
    Instant::from_nanos(now_ns)
}

fn recv(wr_id: u64) -> RecvWr {
    RecvWr {
        wr_id,
        sg_list: Vec::new(),
    }
}

impl Node {
    /// A host with no workload yet (see [`Node::roles`]).
    pub fn new(endpoint: Endpoint, cq: CqHandle) -> Node {
        Node {
            endpoint,
            cq,
            roles: Vec::new(),
        }
    }

    /// The `i`-th sender role of this host.
    pub fn sender(&mut self, i: usize) -> Option<&mut Sender> {
        self.roles
            .iter_mut()
            .filter_map(|r| match r {
                Role::Sender(s) => Some(s.as_mut()),
                Role::ChainHop(_) => None,
            })
            .nth(i)
    }

    /// Posts the receives the chain QPs need (call once they are connected).
    pub fn post_chain_recvs(&mut self) -> Result<(), VerbsError> {
        let qps: Vec<u32> = self
            .roles
            .iter()
            .filter_map(|r| match r {
                Role::ChainHop(h) => Some(h.up),
                Role::Sender(s) => s.ack_qp,
            })
            .collect();
        for q in qps {
            for i in 0..RECVS {
                self.endpoint.post_recv(q, recv(i as u64))?;
            }
        }
        Ok(())
    }

    /// A frame arrived.
    pub fn receive(&mut self, now_ns: u64, frame: &[u8]) {
        self.endpoint.handle_frame(at(now_ns), frame);
    }

    /// Timers, completions, new operations; every frame to send goes to `out`.
    pub fn poll(&mut self, now_ns: u64, out: &mut dyn FnMut(Vec<u8>)) {
        let t = at(now_ns);
        if self.endpoint.poll_timeout().is_some_and(|d| d <= t) {
            self.endpoint.handle_timeout(t);
        }
        self.work(now_ns);
        while let Some(f) = self.endpoint.poll_transmit(t) {
            out(f);
        }
    }

    /// When [`Node::poll`] is next due without a frame arriving.
    pub fn next_wakeup(&self) -> Option<u64> {
        self.endpoint.poll_timeout().map(|t| t.as_nanos())
    }

    fn work(&mut self, now_ns: u64) {
        if self.roles.is_empty() {
            return;
        }
        let t0 = WallClock::now();
        let wcs = self.endpoint.poll_cq(self.cq, 1024).unwrap_or_default();
        let poll = t0.elapsed();
        for role in &mut self.roles {
            let mine: Vec<&WorkCompletion> = wcs.iter().filter(|w| role.owns(w.qp_num)).collect();
            match role {
                Role::ChainHop(h) => chain_work(&mut self.endpoint, h, &mine),
                Role::Sender(s) => {
                    s.cpu += poll;
                    sender_work(&mut self.endpoint, s, &mine, now_ns);
                }
            }
        }
    }
}

/// A hop forwards what it received (WRITE WITH IMMEDIATE = operation index).
fn chain_work(ep: &mut Endpoint, hop: &Hop, wcs: &[&WorkCompletion]) {
    for wc in wcs {
        if wc.status != WcStatus::Success {
            continue;
        }
        let Some(op) = wc.imm_data else { continue };
        let _ = ep.post_recv(hop.up, recv(wc.wr_id));
        let off = hop.region.offset(u64::from(op));
        let wr = match (hop.down, hop.notify) {
            (Some(d), _) => Some((
                d.qpn,
                SendWr::new(
                    u64::from(op),
                    SendOp::WriteWithImm {
                        remote_addr: d.va + off,
                        rkey: d.rkey,
                        imm: op,
                    },
                    hop.region.sge(u64::from(op)),
                ),
            )),
            (None, Some(n)) => Some((
                n,
                SendWr {
                    sg_list: Vec::new(),
                    ..SendWr::new(
                        u64::from(op),
                        SendOp::SendWithImm(op),
                        Sge {
                            addr: 0,
                            length: 0,
                            lkey: 0,
                        },
                    )
                },
            )),
            (None, None) => None,
        };
        if let Some((qpn, wr)) = wr {
            let _ = ep.post_send(qpn, wr);
        }
    }
}

fn sender_work(ep: &mut Endpoint, s: &mut Sender, wcs: &[&WorkCompletion], now_ns: u64) {
    let t0 = WallClock::now();
    s.completions_of(ep, wcs, now_ns);
    let mut fills = Vec::new();
    while s.running && s.waiting.len() < s.iodepth {
        let op = s.posted;
        s.posted += 1;
        s.waiting.push_back(match s.mode {
            Mode::Fanout => s.targets.len(),
            Mode::Mcrdma | Mode::Chain => 1,
        });
        s.meter.appended(now_ns);
        fills.push(op);
    }
    let mut cpu = t0.elapsed();
    for op in fills {
        // The application's data (not counted as the replication's CPU time).
        fill(ep, &s.region, op);
        let t1 = WallClock::now();
        s.post_op(ep, op);
        cpu += t1.elapsed();
    }
    s.cpu += cpu;
}

/// The bytes operation `op` writes: its index and position, so that a byte in the wrong place
/// or from the wrong operation shows.
fn fill(ep: &mut Endpoint, region: &Region, op: u64) {
    let off = region.offset(op) as usize;
    let size = region.size as usize;
    if let Ok(buf) = ep.mr_bytes_mut(region.mr.lkey) {
        for (i, b) in buf[off..off + size].iter_mut().enumerate() {
            *b = (op.wrapping_mul(131) as usize).wrapping_add(i * 7) as u8;
        }
    }
}

impl Sender {
    pub fn new(
        mode: Mode,
        targets: Vec<Target>,
        ack_qp: Option<u32>,
        region: Region,
        iodepth: usize,
    ) -> Result<Sender, crate::p4ce::NodeError> {
        Ok(Sender {
            mode,
            targets,
            ack_qp,
            region,
            iodepth: iodepth.max(1),
            running: true,
            posted: 0,
            done: 0,
            waiting: VecDeque::new(),
            meter: Meter::new(0)?,
            completions: 0,
            errors: 0,
            cpu: Duration::ZERO,
            verbs_calls: 0,
        })
    }

    fn post_op(&mut self, ep: &mut Endpoint, op: u64) {
        let off = self.region.offset(op);
        let sge = self.region.sge(op);
        for t in &self.targets {
            let kind = match self.mode {
                Mode::Chain => SendOp::WriteWithImm {
                    remote_addr: t.va + off,
                    rkey: t.rkey,
                    imm: op as u32,
                },
                Mode::Mcrdma | Mode::Fanout => SendOp::Write {
                    remote_addr: t.va + off,
                    rkey: t.rkey,
                },
            };
            let ok = ep.post_send(t.qpn, SendWr::new(op, kind, sge)).is_ok();
            self.verbs_calls += 1;
            self.errors += u64::from(!ok);
        }
    }

    fn completions_of(&mut self, ep: &mut Endpoint, wcs: &[&WorkCompletion], now_ns: u64) {
        for wc in wcs {
            self.verbs_calls += 1;
            if wc.status != WcStatus::Success {
                self.errors += 1;
                continue;
            }
            let counts = match (self.mode, self.ack_qp) {
                (Mode::Chain, Some(a)) => wc.qp_num == a,
                (Mode::Chain, None) => false,
                _ => true,
            };
            if !counts {
                continue;
            }
            if self.mode == Mode::Chain {
                self.verbs_calls += 1;
                let _ = ep.post_recv(wc.qp_num, recv(wc.wr_id));
            }
            let op = match self.mode {
                Mode::Chain => u64::from(wc.imm_data.unwrap_or(0)),
                _ => wc.wr_id,
            };
            // Completions of one QP come in order; an operation is the (op - done)-th waiting.
            if let Some(w) = op
                .checked_sub(self.done)
                .and_then(|i| self.waiting.get_mut(i as usize))
            {
                *w = w.saturating_sub(1);
                self.completions += 1;
            }
            while self.waiting.front() == Some(&0) {
                self.waiting.pop_front();
                self.done += 1;
            }
        }
        self.meter.committed(self.done, now_ns);
    }

    /// Operations completed.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Operations posted.
    pub fn posted(&self) -> u64 {
        self.posted
    }

    /// Operations in flight.
    pub fn outstanding(&self) -> usize {
        self.waiting.len()
    }

    /// Request latency p50, p99, p999 (ns, virtual time).
    pub fn latency(&self) -> (u64, u64, u64) {
        self.meter.percentiles()
    }
}

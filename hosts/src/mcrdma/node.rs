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
//! Operation `k` writes slot `k mod slots` of the registered region (`slots` at least twice the
//! IO depth, so a slot is never rewritten while an operation on it is in flight), at the same
//! offset on every host. The sender's CPU time is what its posting and completion handling
//! take on this machine's clock (the endpoint's protocol work, the "NIC", is not counted), and
//! its verbs calls (work requests posted, completions polled, receives re-posted) are counted:
//! the part of that cost that does not depend on the machine.

use std::collections::VecDeque;
use std::time::{Duration, Instant as WallClock};

use rdma::verbs::{
    CqHandle, Endpoint, Instant, MrInfo, RecvWr, SendOp, SendWr, Sge, VerbsError, WcStatus,
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

/// The sender's side of the workload.
pub struct Sender {
    pub mode: Mode,
    /// MC-RDMA and chain: one; fanout: one per receiver.
    pub targets: Vec<Target>,
    /// Chain: the QP the tail's notifications arrive on.
    pub ack_qp: Option<u32>,
    pub size: u64,
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

/// A chain hop: receives on `up`, forwards to `down` (None: the tail, which notifies the
/// sender on `notify`).
#[derive(Debug, Clone, Copy)]
pub struct Hop {
    pub up: u32,
    pub down: Option<Target>,
    pub notify: Option<u32>,
}

/// What a host does.
pub enum Role {
    /// A receiver of MC-RDMA or fanout: its NIC does everything.
    Passive,
    Sender(Box<Sender>),
    ChainHop(Hop),
}

/// One host.
pub struct Node {
    pub endpoint: Endpoint,
    pub cq: CqHandle,
    pub region: MrInfo,
    pub role: Role,
    /// Slots of the region (operations at most this many apart share none).
    pub slots: u64,
    size: u64,
}

/// Receive WQEs a chain QP keeps posted.
const RECVS: usize = 256;

fn at(now_ns: u64) -> Instant {
    Instant::from_nanos(now_ns)
}

impl Node {
    /// A host whose region has `slots` slots of `size` bytes.
    pub fn new(endpoint: Endpoint, cq: CqHandle, region: MrInfo, size: u64, role: Role) -> Node {
        let slots = (region.len as u64 / size.max(1)).max(1);
        Node {
            endpoint,
            cq,
            region,
            role,
            slots,
            size,
        }
    }

    /// The byte offset of operation `op`'s slot.
    pub fn offset(&self, op: u64) -> u64 {
        (op % self.slots) * self.size
    }

    /// Posts the receives a chain QP needs (call once it is connected).
    pub fn post_chain_recvs(&mut self) -> Result<(), VerbsError> {
        let qps: Vec<u32> = match &self.role {
            Role::ChainHop(h) => vec![h.up],
            Role::Sender(s) => s.ack_qp.into_iter().collect(),
            Role::Passive => Vec::new(),
        };
        for q in qps {
            for i in 0..RECVS {
                self.endpoint.post_recv(
                    q,
                    RecvWr {
                        wr_id: i as u64,
                        sg_list: Vec::new(),
                    },
                )?;
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
        match &self.role {
            Role::Passive => {}
            Role::ChainHop(_) => self.chain_work(),
            Role::Sender(_) => self.sender_work(now_ns),
        }
    }

    fn chain_work(&mut self) {
        let Role::ChainHop(hop) = self.role else {
            return;
        };
        let Ok(wcs) = self.endpoint.poll_cq(self.cq, 64) else {
            return;
        };
        for wc in wcs {
            if wc.qp_num != hop.up || wc.status != WcStatus::Success {
                continue;
            }
            let Some(op) = wc.imm_data else { continue };
            let _ = self.endpoint.post_recv(
                hop.up,
                RecvWr {
                    wr_id: wc.wr_id,
                    sg_list: Vec::new(),
                },
            );
            let off = self.offset(u64::from(op));
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
                        Sge {
                            addr: self.region.addr + off,
                            length: self.size as u32,
                            lkey: self.region.lkey,
                        },
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
                let _ = self.endpoint.post_send(qpn, wr);
            }
        }
    }

    fn sender_work(&mut self, now_ns: u64) {
        let t0 = WallClock::now();
        self.sender_completions(now_ns);
        let mut fills = Vec::new();
        loop {
            let Role::Sender(s) = &mut self.role else {
                return;
            };
            if !s.running || s.waiting.len() >= s.iodepth {
                break;
            }
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
            self.fill(op);
            let t1 = WallClock::now();
            self.post_op(op);
            cpu += t1.elapsed();
        }
        if let Role::Sender(s) = &mut self.role {
            s.cpu += cpu;
        }
    }

    /// The bytes operation `op` writes: its index and position, so that a byte in the wrong
    /// place or from the wrong operation shows.
    fn fill(&mut self, op: u64) {
        let off = self.offset(op) as usize;
        let size = self.size as usize;
        if let Ok(buf) = self.endpoint.mr_bytes_mut(self.region.lkey) {
            for (i, b) in buf[off..off + size].iter_mut().enumerate() {
                *b = (op.wrapping_mul(131) as usize).wrapping_add(i * 7) as u8;
            }
        }
    }

    fn post_op(&mut self, op: u64) {
        let off = self.offset(op);
        let sge = Sge {
            addr: self.region.addr + off,
            length: self.size as u32,
            lkey: self.region.lkey,
        };
        let Role::Sender(s) = &self.role else { return };
        let wrs: Vec<(u32, SendWr)> = s
            .targets
            .iter()
            .map(|t| {
                let op_kind = match s.mode {
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
                (t.qpn, SendWr::new(op, op_kind, sge))
            })
            .collect();
        for (qpn, wr) in wrs {
            let ok = self.endpoint.post_send(qpn, wr).is_ok();
            if let Role::Sender(s) = &mut self.role {
                s.verbs_calls += 1;
                s.errors += u64::from(!ok);
            }
        }
    }

    fn sender_completions(&mut self, now_ns: u64) {
        let Ok(wcs) = self.endpoint.poll_cq(self.cq, 256) else {
            return;
        };
        let Role::Sender(s) = &mut self.role else {
            return;
        };
        for wc in wcs {
            s.verbs_calls += 1;
            if wc.status != WcStatus::Success {
                s.errors += 1;
                continue;
            }
            let counts = match (s.mode, s.ack_qp) {
                (Mode::Chain, Some(a)) => wc.qp_num == a,
                (Mode::Chain, None) => false,
                _ => true,
            };
            if !counts {
                continue;
            }
            if s.mode == Mode::Chain {
                s.verbs_calls += 1;
                let _ = self.endpoint.post_recv(
                    wc.qp_num,
                    RecvWr {
                        wr_id: wc.wr_id,
                        sg_list: Vec::new(),
                    },
                );
            }
            let op = match s.mode {
                Mode::Chain => u64::from(wc.imm_data.unwrap_or(0)),
                _ => wc.wr_id,
            };
            // Completions of one QP come in order; an operation is the (op - done)-th waiting.
            if let Some(w) = op
                .checked_sub(s.done)
                .and_then(|i| s.waiting.get_mut(i as usize))
            {
                *w = w.saturating_sub(1);
                s.completions += 1;
            }
            while s.waiting.front() == Some(&0) {
                s.waiting.pop_front();
                s.done += 1;
            }
        }
        s.meter.committed(s.done, now_ns);
    }
}

impl Sender {
    pub fn new(
        mode: Mode,
        targets: Vec<Target>,
        ack_qp: Option<u32>,
        size: u64,
        iodepth: usize,
    ) -> Result<Sender, crate::p4ce::NodeError> {
        Ok(Sender {
            mode,
            targets,
            ack_qp,
            size,
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

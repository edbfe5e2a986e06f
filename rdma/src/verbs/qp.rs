//! Queue pairs: types, attributes and the IBA state machine (RESET → INIT → RTR → RTS,
//! SQD, ERR). The RC requester and responder halves live in `requester.rs` and
//! `responder.rs`, UD in `ud.rs`; this file holds what they share.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::time::Duration;

use super::cq::{CqHandle, CqTable, WcOpcode, WcStatus, WorkCompletion};
use super::dcqcn::{Dcqcn, DcqcnConfig};
use super::mr::{AccessFlags, MrTable, PdHandle, Sge};
use super::{Instant, Stats, VerbsError};
use crate::wire::RoceHeaders;

/// Transport service of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QpType {
    /// Reliable connected.
    Rc,
    /// Unreliable datagram.
    Ud,
}

/// QP state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum QpState {
    /// Just created or reset.
    Reset,
    /// Initialised: receives may be posted.
    Init,
    /// Ready to receive.
    Rtr,
    /// Ready to send.
    Rts,
    /// Send queue drained: no new requests start.
    Sqd,
    /// Error: everything is flushed.
    Err,
}

/// Path MTU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mtu {
    /// 256 bytes.
    M256,
    /// 512 bytes.
    M512,
    /// 1024 bytes.
    M1024,
    /// 2048 bytes.
    M2048,
    /// 4096 bytes.
    M4096,
}

impl Mtu {
    /// Payload bytes.
    pub fn bytes(self) -> usize {
        match self {
            Mtu::M256 => 256,
            Mtu::M512 => 512,
            Mtu::M1024 => 1024,
            Mtu::M2048 => 2048,
            Mtu::M4096 => 4096,
        }
    }
    /// The IB enum value (1..=5) used in CM messages.
    pub fn ib_enum(self) -> u8 {
        match self {
            Mtu::M256 => 1,
            Mtu::M512 => 2,
            Mtu::M1024 => 3,
            Mtu::M2048 => 4,
            Mtu::M4096 => 5,
        }
    }
    /// From the IB enum value.
    pub fn from_ib_enum(v: u8) -> Option<Mtu> {
        Some(match v {
            1 => Mtu::M256,
            2 => Mtu::M512,
            3 => Mtu::M1024,
            4 => Mtu::M2048,
            5 => Mtu::M4096,
            _ => return None,
        })
    }
}

/// Creation attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpInitAttr {
    /// Protection domain.
    pub pd: PdHandle,
    /// Transport.
    pub qp_type: QpType,
    /// CQ for send completions.
    pub send_cq: CqHandle,
    /// CQ for receive completions.
    pub recv_cq: CqHandle,
    /// Send queue depth.
    pub max_send_wr: usize,
    /// Receive queue depth.
    pub max_recv_wr: usize,
}

/// Attributes for `modify_qp`; `None` leaves a value unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QpAttr {
    /// Target state.
    pub state: Option<QpState>,
    /// Path MTU (RC; required for INIT→RTR).
    pub path_mtu: Option<Mtu>,
    /// Remote QPN (RC; required for INIT→RTR).
    pub dest_qp_num: Option<u32>,
    /// Remote address (RC; required for INIT→RTR).
    pub remote_ip: Option<IpAddr>,
    /// First PSN expected from the peer (RC; INIT→RTR).
    pub rq_psn: Option<u32>,
    /// First PSN we send (RC; RTR→RTS).
    pub sq_psn: Option<u32>,
    /// Q_Key (UD).
    pub qkey: Option<u32>,
    /// Local ACK timeout exponent (0 = infinite).
    pub timeout: Option<u8>,
    /// Transport retry count (0..=7).
    pub retry_cnt: Option<u8>,
    /// RNR retry count (0..=7, 7 = infinite).
    pub rnr_retry: Option<u8>,
    /// RNR timer code we advertise in RNR NAKs.
    pub min_rnr_timer: Option<u8>,
    /// Remote access the QP allows (REMOTE_READ / WRITE / ATOMIC).
    pub access: Option<AccessFlags>,
}

/// Destination of a UD send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UdDest {
    /// Peer address.
    pub ip: IpAddr,
    /// Peer QPN.
    pub qpn: u32,
    /// Peer Q_Key.
    pub qkey: u32,
}

/// Operation of a send work request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SendOp {
    /// SEND.
    Send,
    /// SEND with immediate data.
    SendWithImm(u32),
    /// SEND that invalidates an rkey at the responder.
    SendWithInv(u32),
    /// RDMA WRITE.
    Write {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// RDMA WRITE with immediate data.
    WriteWithImm {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Immediate data.
        imm: u32,
    },
    /// RDMA READ into the local SGEs.
    Read {
        /// Remote virtual address.
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
    },
    /// 64-bit compare and swap; the old value lands in the (8-byte) local SGE.
    CompareSwap {
        /// Remote virtual address (8-byte aligned).
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Compare value.
        compare: u64,
        /// Swap value.
        swap: u64,
    },
    /// 64-bit fetch and add; the old value lands in the (8-byte) local SGE.
    FetchAdd {
        /// Remote virtual address (8-byte aligned).
        remote_addr: u64,
        /// Remote key.
        rkey: u32,
        /// Addend.
        add: u64,
    },
}

/// A send work request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Operation.
    pub op: SendOp,
    /// Local buffers (gathered for SEND/WRITE, scattered for READ/atomics).
    pub sg_list: Vec<Sge>,
    /// Produce a completion on success.
    pub signaled: bool,
    /// Set the solicited-event bit.
    pub solicited: bool,
    /// Destination (UD only).
    pub ud: Option<UdDest>,
}

impl SendWr {
    /// A signaled request with one SGE.
    pub fn new(wr_id: u64, op: SendOp, sge: Sge) -> SendWr {
        SendWr {
            wr_id,
            op,
            sg_list: vec![sge],
            signaled: true,
            solicited: false,
            ud: None,
        }
    }
}

/// A receive work request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvWr {
    /// Returned in the completion.
    pub wr_id: u64,
    /// Buffers to scatter into.
    pub sg_list: Vec<Sge>,
}

/// Transport settings shared by all QPs of an endpoint (ConnectX-like options).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TransportConfig {
    /// Set AckReq at least every this many packets inside long messages.
    pub ack_req_every: u32,
    /// Maximum unacknowledged PSNs in flight per QP.
    pub max_inflight_pkts: u32,
    /// Advertise end-to-end credits in ACKs (else always "unlimited", as rxe).
    pub advertise_credits: bool,
    /// Responses remembered for duplicate atomics (responder resources).
    pub atomic_cache: usize,
    /// Outstanding RDMA READ / atomic requests per QP (initiator depth); keep it at
    /// or below the peer's `atomic_cache`, or lost atomic responses cannot be replayed.
    pub max_rd_atomic: usize,
    /// DCQCN.
    pub dcqcn: DcqcnConfig,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            ack_req_every: 64,
            max_inflight_pkts: 1024,
            advertise_credits: true,
            atomic_cache: 32,
            max_rd_atomic: 16,
            dcqcn: DcqcnConfig::default(),
        }
    }
}

/// A packet a QP wants to send.
#[derive(Debug, Clone)]
pub(crate) struct OutPacket {
    pub(crate) headers: RoceHeaders,
    pub(crate) payload: Vec<u8>,
    pub(crate) dst: IpAddr,
    pub(crate) cnp: bool,
}

/// What QP code needs from the endpoint while it runs.
pub(crate) struct Ctx<'a> {
    pub(crate) now: Instant,
    pub(crate) mrs: &'a mut MrTable,
    pub(crate) cqs: &'a mut CqTable,
    pub(crate) cfg: &'a TransportConfig,
    pub(crate) stats: &'a mut Stats,
}

/// What a send WQE does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WqeKind {
    Send,
    Write,
    Read,
    CmpSwap,
    FetchAdd,
}

/// A posted send request and its transport progress.
#[derive(Debug, Clone)]
pub(crate) struct SendWqe {
    pub(crate) wr_id: u64,
    pub(crate) kind: WqeKind,
    pub(crate) signaled: bool,
    pub(crate) solicited: bool,
    pub(crate) data: Vec<u8>,
    pub(crate) local: Vec<Sge>,
    pub(crate) len: u32,
    pub(crate) remote_addr: u64,
    pub(crate) rkey: u32,
    pub(crate) imm: Option<u32>,
    pub(crate) inv_rkey: Option<u32>,
    pub(crate) compare: u64,
    pub(crate) swap_add: u64,
    pub(crate) ud: Option<UdDest>,
    pub(crate) started: bool,
    pub(crate) first_psn: u32,
    pub(crate) npkts: u32,
    pub(crate) ssn: u32,
    pub(crate) read_done: u32,
    /// Packet index the last READ request (re)started at: responses restart there.
    pub(crate) read_req_at: u32,
    pub(crate) atomic_done: bool,
}

impl SendWqe {
    pub(crate) fn wc_opcode(&self) -> WcOpcode {
        match self.kind {
            WqeKind::Send => WcOpcode::Send,
            WqeKind::Write => WcOpcode::RdmaWrite,
            WqeKind::Read => WcOpcode::RdmaRead,
            WqeKind::CmpSwap => WcOpcode::CompSwap,
            WqeKind::FetchAdd => WcOpcode::FetchAdd,
        }
    }

    /// Whether it consumes a receive WQE at the responder (credit-gated).
    pub(crate) fn needs_rwqe(&self) -> bool {
        self.kind == WqeKind::Send || (self.kind == WqeKind::Write && self.imm.is_some())
    }
}

/// A posted receive request.
#[derive(Debug, Clone)]
pub(crate) struct RecvWqe {
    pub(crate) wr_id: u64,
    pub(crate) sges: Vec<Sge>,
}

/// A queue pair.
pub(crate) struct Qp {
    pub(crate) qpn: u32,
    pub(crate) qp_type: QpType,
    pub(crate) state: QpState,
    pub(crate) pd: PdHandle,
    pub(crate) send_cq: CqHandle,
    pub(crate) recv_cq: CqHandle,
    pub(crate) max_send_wr: usize,
    pub(crate) max_recv_wr: usize,
    pub(crate) mtu: usize,
    pub(crate) dest_qpn: u32,
    pub(crate) remote_ip: Option<IpAddr>,
    pub(crate) qkey: u32,
    pub(crate) timeout: u8,
    pub(crate) retry_cnt: u8,
    pub(crate) rnr_retry: u8,
    pub(crate) min_rnr_timer: u8,
    pub(crate) access: AccessFlags,
    pub(crate) udp_sport: u16,
    pub(crate) rq: VecDeque<RecvWqe>,
    pub(crate) req: super::requester::Requester,
    pub(crate) resp: super::responder::Responder,
    pub(crate) dcqcn: Dcqcn,
    pub(crate) last_cnp_sent: Option<Instant>,
    pub(crate) cnp_pending: bool,
    /// Set while the DCQCN pacer alone holds back the next packet.
    pub(crate) paced_until: Option<Instant>,
}

impl Qp {
    pub(crate) fn new(qpn: u32, attr: &QpInitAttr, dcqcn: DcqcnConfig) -> Qp {
        // rxe: 0xC000 + 14-bit hash of the QPN; any per-QP constant spreads flows.
        let hash = qpn.wrapping_mul(0x9E37_79B9) >> 18;
        Qp {
            qpn,
            qp_type: attr.qp_type,
            state: QpState::Reset,
            pd: attr.pd,
            send_cq: attr.send_cq,
            recv_cq: attr.recv_cq,
            max_send_wr: attr.max_send_wr,
            max_recv_wr: attr.max_recv_wr,
            mtu: 1024,
            dest_qpn: 0,
            remote_ip: None,
            qkey: 0,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            access: AccessFlags::NONE,
            udp_sport: 0xC000 | (hash as u16 & 0x3FFF),
            rq: VecDeque::new(),
            req: super::requester::Requester::default(),
            resp: super::responder::Responder::default(),
            dcqcn: Dcqcn::new(dcqcn),
            last_cnp_sent: None,
            cnp_pending: false,
            paced_until: None,
        }
    }

    pub(crate) fn ack_timeout(&self) -> Option<Duration> {
        super::time::ack_timeout(self.timeout)
    }

    /// Applies `modify_qp`.
    pub(crate) fn modify(&mut self, a: &QpAttr, cqs: &mut CqTable) -> Result<(), VerbsError> {
        let to = a.state.unwrap_or(self.state);
        let from = self.state;
        let ok = matches!(
            (from, to),
            (_, QpState::Reset)
                | (_, QpState::Err)
                | (QpState::Reset, QpState::Init)
                | (QpState::Init, QpState::Init)
                | (QpState::Init, QpState::Rtr)
                | (QpState::Rtr, QpState::Rts)
                | (QpState::Rts, QpState::Rts)
                | (QpState::Rts, QpState::Sqd)
                | (QpState::Sqd, QpState::Rts)
                | (QpState::Sqd, QpState::Sqd)
        );
        if !ok {
            return Err(VerbsError::BadTransition {
                qpn: self.qpn,
                from,
                to,
            });
        }
        for (v, name) in [(a.retry_cnt, "retry_cnt"), (a.rnr_retry, "rnr_retry")] {
            if v.is_some_and(|v| v > 7) {
                return Err(VerbsError::InvalidAttr(name));
            }
        }
        if a.timeout.is_some_and(|v| v > 31) {
            return Err(VerbsError::InvalidAttr("timeout"));
        }
        if a.min_rnr_timer.is_some_and(|v| v > 31) {
            return Err(VerbsError::InvalidAttr("min_rnr_timer"));
        }
        for (v, name) in [
            (a.dest_qp_num, "dest_qp_num"),
            (a.rq_psn, "rq_psn"),
            (a.sq_psn, "sq_psn"),
        ] {
            if v.is_some_and(|v| v > 0xFF_FFFF) {
                return Err(VerbsError::InvalidAttr(name));
            }
        }
        if from == QpState::Init && to == QpState::Rtr && self.qp_type == QpType::Rc {
            if a.dest_qp_num.is_none() && self.dest_qpn == 0 {
                return Err(VerbsError::MissingAttr("dest_qp_num"));
            }
            if a.remote_ip.is_none() && self.remote_ip.is_none() {
                return Err(VerbsError::MissingAttr("remote_ip"));
            }
            if a.rq_psn.is_none() {
                return Err(VerbsError::MissingAttr("rq_psn"));
            }
        }
        if from == QpState::Rtr
            && to == QpState::Rts
            && self.qp_type == QpType::Rc
            && a.sq_psn.is_none()
        {
            return Err(VerbsError::MissingAttr("sq_psn"));
        }
        if let Some(m) = a.path_mtu {
            self.mtu = m.bytes();
        }
        if let Some(v) = a.dest_qp_num {
            self.dest_qpn = v;
        }
        if let Some(v) = a.remote_ip {
            self.remote_ip = Some(v);
        }
        if let Some(v) = a.qkey {
            self.qkey = v;
        }
        if let Some(v) = a.timeout {
            self.timeout = v;
        }
        if let Some(v) = a.retry_cnt {
            self.retry_cnt = v;
            self.req.retry_left = v;
        }
        if let Some(v) = a.rnr_retry {
            self.rnr_retry = v;
            self.req.rnr_left = v;
        }
        if let Some(v) = a.min_rnr_timer {
            self.min_rnr_timer = v;
        }
        if let Some(v) = a.access {
            self.access = v;
        }
        if let Some(p) = a.rq_psn {
            self.resp.reset(p);
        }
        if let Some(p) = a.sq_psn {
            self.req.reset(p, self.retry_cnt, self.rnr_retry);
        }
        match to {
            QpState::Reset if from != QpState::Reset => {
                self.req.sq.clear();
                self.rq.clear();
                self.req = super::requester::Requester::default();
                self.resp = super::responder::Responder::default();
            }
            QpState::Err if from != QpState::Err => {
                self.state = QpState::Err;
                self.flush(cqs);
            }
            _ => {}
        }
        self.state = to;
        Ok(())
    }

    /// Moves to the error state and flushes both queues.
    pub(crate) fn enter_error(&mut self, cqs: &mut CqTable) {
        if self.state != QpState::Err {
            self.state = QpState::Err;
            self.flush(cqs);
        }
    }

    fn flush(&mut self, cqs: &mut CqTable) {
        for w in self.req.sq.drain(..) {
            let wc = WorkCompletion::new(w.wr_id, WcStatus::WrFlushErr, w.wc_opcode(), self.qpn);
            cqs.push(self.send_cq, wc);
        }
        self.req.cur = 0;
        self.req.cur_pkt = 0;
        self.req.ack_deadline = None;
        self.req.rnr_until = None;
        self.req.recover_at = None;
        for r in self.rq.drain(..) {
            let wc = WorkCompletion::new(r.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, self.qpn);
            cqs.push(self.recv_cq, wc);
        }
        if let Some(w) = self.resp.cur_recv.take() {
            let wc = WorkCompletion::new(w.wr_id, WcStatus::WrFlushErr, WcOpcode::Recv, self.qpn);
            cqs.push(self.recv_cq, wc);
        }
        self.resp.drop_pending_reads();
    }

    /// Posts a receive request.
    pub(crate) fn post_recv(&mut self, wr: RecvWr, mrs: &MrTable) -> Result<(), VerbsError> {
        if self.state == QpState::Reset {
            return Err(VerbsError::BadState {
                qpn: self.qpn,
                state: self.state,
                what: "post_recv",
            });
        }
        if self.rq.len() >= self.max_recv_wr {
            return Err(VerbsError::QueueFull(self.qpn));
        }
        mrs.check_sges(self.pd, &wr.sg_list, true)?;
        self.rq.push_back(RecvWqe {
            wr_id: wr.wr_id,
            sges: wr.sg_list,
        });
        Ok(())
    }

    /// Completes a send WQE.
    pub(crate) fn complete_send(&self, cqs: &mut CqTable, w: &SendWqe, status: WcStatus) {
        if status == WcStatus::Success && !w.signaled {
            return;
        }
        let mut wc = WorkCompletion::new(w.wr_id, status, w.wc_opcode(), self.qpn);
        wc.byte_len = w.len;
        cqs.push(self.send_cq, wc);
    }

    /// Next timer deadline of this QP.
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        [
            self.req.ack_deadline,
            self.req.rnr_until,
            self.req.recover_at,
            self.dcqcn.next_timer(),
            self.paced_until,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Asks the DCQCN pacer; remembers when to wake up if it says no.
    pub(crate) fn pacing_allows(&mut self, now: Instant) -> bool {
        if self.dcqcn.can_send(now) {
            self.paced_until = None;
            true
        } else {
            self.paced_until = self.dcqcn.next_send_time();
            false
        }
    }

    /// Allows the NP to send a CNP for a CE-marked packet.
    pub(crate) fn note_congestion(&mut self, now: Instant, interval: Duration) {
        let due = self
            .last_cnp_sent
            .is_none_or(|t| now.saturating_duration_since(t) >= interval);
        if due && self.remote_ip.is_some() {
            self.last_cnp_sent = Some(now);
            self.cnp_pending = true;
        }
    }
}

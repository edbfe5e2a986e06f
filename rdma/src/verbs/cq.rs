//! Completion queues and work completions, shaped like ibverbs' `ibv_wc`.

use std::collections::VecDeque;
use std::net::IpAddr;

/// A completion queue handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CqHandle(pub u32);

/// Completion status (`enum ibv_wc_status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcStatus {
    /// Success.
    Success,
    /// Local length error (receive buffer too small).
    LocLenErr,
    /// Local QP operation error.
    LocQpOpErr,
    /// Local protection error (bad lkey / bounds on a local SGE).
    LocProtErr,
    /// Flushed because the QP entered the error state.
    WrFlushErr,
    /// Bad response (unexpected opcode or length from the responder).
    BadRespErr,
    /// Remote invalid request (NAK 0x61).
    RemInvReqErr,
    /// Remote access error (NAK 0x62).
    RemAccessErr,
    /// Remote operational error (NAK 0x63).
    RemOpErr,
    /// Transport retry counter exceeded.
    RetryExcErr,
    /// RNR retry counter exceeded.
    RnrRetryExcErr,
}

/// Completed operation (`enum ibv_wc_opcode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WcOpcode {
    /// SEND (any variant).
    Send,
    /// RDMA WRITE (with or without immediate).
    RdmaWrite,
    /// RDMA READ.
    RdmaRead,
    /// Compare and swap.
    CompSwap,
    /// Fetch and add.
    FetchAdd,
    /// A received SEND.
    Recv,
    /// A received RDMA WRITE with immediate.
    RecvRdmaWithImm,
}

/// One work completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkCompletion {
    /// The WR id given at post time.
    pub wr_id: u64,
    /// Status.
    pub status: WcStatus,
    /// Operation.
    pub opcode: WcOpcode,
    /// Bytes received (receive side) or transferred.
    pub byte_len: u32,
    /// Immediate data, if any.
    pub imm_data: Option<u32>,
    /// R_Key invalidated by SEND_WITH_INVALIDATE.
    pub invalidated_rkey: Option<u32>,
    /// Local QP number.
    pub qp_num: u32,
    /// Source QP (UD receives).
    pub src_qp: u32,
    /// Source IP address (receives).
    pub src_ip: Option<IpAddr>,
}

impl WorkCompletion {
    pub(crate) fn new(wr_id: u64, status: WcStatus, opcode: WcOpcode, qp_num: u32) -> Self {
        WorkCompletion {
            wr_id,
            status,
            opcode,
            byte_len: 0,
            imm_data: None,
            invalidated_rkey: None,
            qp_num,
            src_qp: 0,
            src_ip: None,
        }
    }
}

/// A completion queue; completions beyond its capacity are counted and dropped (a real
/// CQ overrun would move the QP to error; we keep going and report it).
#[derive(Debug, Default)]
pub(crate) struct CompletionQueue {
    pub(crate) entries: VecDeque<WorkCompletion>,
    pub(crate) capacity: usize,
    pub(crate) overruns: u64,
}

impl CompletionQueue {
    pub(crate) fn push(&mut self, wc: WorkCompletion) {
        if self.entries.len() >= self.capacity {
            self.overruns += 1;
        } else {
            self.entries.push_back(wc);
        }
    }
}

/// All CQs of an endpoint.
#[derive(Debug, Default)]
pub(crate) struct CqTable {
    pub(crate) cqs: Vec<CompletionQueue>,
}

impl CqTable {
    pub(crate) fn push(&mut self, cq: CqHandle, wc: WorkCompletion) {
        if let Some(q) = self.cqs.get_mut(cq.0 as usize) {
            q.push(wc);
        }
    }
}

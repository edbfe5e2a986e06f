//! The RC responder: checks PSNs against ePSN (NAK-sequence once, duplicates re-ACKed
//! or replayed), opcode sequence and lengths, executes SEND / RDMA WRITE / RDMA READ /
//! atomics against the endpoint's memory with rkey and bounds checks, tracks MSN,
//! advertises credits from posted receive WQEs, and queues responses in PSN order
//! (ACKs coalesced, READ responses produced packet by packet).

use std::collections::VecDeque;

use super::cq::{WcOpcode, WcStatus, WorkCompletion};
use super::mr::AccessFlags;
use super::qp::{Ctx, OutPacket, Qp, QpState, RecvWqe};
use crate::wire::psn;
use crate::wire::{
    credit_code_for, AethRepr, AtomicAckEthRepr, BthRepr, NakCode, Opcode, Operation, RoceHeaders,
    Syndrome, CREDITS_UNLIMITED,
};

/// A queued response.
#[derive(Debug, Clone)]
pub(crate) enum Resp {
    /// ACK / NAK / RNR NAK.
    Ack {
        psn: u32,
        msn: u32,
        syndrome: AckKind,
    },
    /// An RDMA READ response stream.
    Read {
        first_psn: u32,
        lkey: u32,
        off: usize,
        len: usize,
        sent: u32,
        total: u32,
        msn: u32,
    },
    /// Atomic acknowledge.
    Atomic { psn: u32, orig: u64, msn: u32 },
}

/// Kind of an ACK-type response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckKind {
    Ack,
    Rnr(u8),
    Nak(NakCode),
}

/// A message being received over several packets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteCtx {
    lkey: u32,
    off: usize,
    remaining: u64,
    total: u32,
}

/// Responder state of an RC QP.
#[derive(Debug, Default)]
pub(crate) struct Responder {
    pub(crate) epsn: u32,
    pub(crate) msn: u32,
    nak_sent: bool,
    /// The receive WQE of a multi-packet SEND in progress, and its fill.
    pub(crate) cur_recv: Option<RecvWqe>,
    recv_off: usize,
    write: Option<WriteCtx>,
    pub(crate) out: VecDeque<Resp>,
    atomics: VecDeque<(u32, u64)>,
}

impl Responder {
    pub(crate) fn reset(&mut self, rq_psn: u32) {
        *self = Responder {
            epsn: rq_psn,
            ..Responder::default()
        };
    }

    pub(crate) fn drop_pending_reads(&mut self) {
        self.out.retain(|r| matches!(r, Resp::Ack { .. }));
        self.write = None;
        self.recv_off = 0;
    }

    fn queue_ack(&mut self, psn: u32, msn: u32) {
        if let Some(Resp::Ack {
            psn: p,
            msn: m,
            syndrome: AckKind::Ack,
        }) = self.out.back_mut()
        {
            *p = psn;
            *m = msn;
            return;
        }
        self.out.push_back(Resp::Ack {
            psn,
            msn,
            syndrome: AckKind::Ack,
        });
    }
}

/// Outcome of executing one request packet.
enum Exec {
    /// Done; advance ePSN by this many PSNs; ACK if AckReq.
    Done(u32),
    /// No receive WQE: RNR NAK, ePSN unchanged.
    Rnr,
    /// Fatal: NAK with this code and move to the error state.
    Fatal(NakCode),
}

impl Qp {
    /// Handles a request packet addressed to this QP.
    pub(crate) fn resp_handle_request(
        &mut self,
        ctx: &mut Ctx<'_>,
        h: &RoceHeaders,
        payload: &[u8],
        src_ip: std::net::IpAddr,
    ) {
        if !matches!(self.state, QpState::Rtr | QpState::Rts | QpState::Sqd) {
            ctx.stats.rx_dropped_state += 1;
            return;
        }
        if self.remote_ip.is_some_and(|ip| ip != src_ip) {
            ctx.stats.rx_dropped_state += 1;
            return;
        }
        let p = h.bth.psn;
        let d = psn::diff(p, self.resp.epsn);
        if d > 0 {
            // One NAK per gap, as IBA asks, and again for a packet that asks for a response
            // (AckReq) while the gap is open: the NAK or the head of the retransmission may
            // have been lost (the requester sets AckReq on the first packet it resends).
            // Without this a second loss waits for the requester's ACK timeout, which
            // costs a ConnectX-like link tens of milliseconds.
            let renak = self.resp.nak_sent && h.bth.ack_req;
            if !self.resp.nak_sent || renak {
                self.resp.nak_sent = true;
                ctx.stats.seq_naks_sent += 1;
                let (epsn, msn) = (self.resp.epsn, self.resp.msn);
                self.resp.out.push_back(Resp::Ack {
                    psn: epsn,
                    msn,
                    syndrome: AckKind::Nak(NakCode::PsnSequenceError),
                });
            }
            return;
        }
        if d < 0 {
            ctx.stats.duplicates += 1;
            self.duplicate(ctx, h, p);
            return;
        }
        match self.execute(ctx, h, payload, src_ip) {
            Exec::Done(n) => {
                self.resp.epsn = psn::add(self.resp.epsn, n);
                self.resp.nak_sent = false;
                let op = h.bth.opcode.operation();
                let own_response = matches!(
                    op,
                    Operation::ReadRequest | Operation::CompareSwap | Operation::FetchAdd
                );
                if h.bth.ack_req && !own_response {
                    let msn = self.resp.msn;
                    self.resp.queue_ack(p, msn);
                }
            }
            Exec::Rnr => {
                ctx.stats.rnr_naks_sent += 1;
                let msn = self.resp.msn;
                self.resp.out.push_back(Resp::Ack {
                    psn: p,
                    msn,
                    syndrome: AckKind::Rnr(self.min_rnr_timer),
                });
            }
            Exec::Fatal(code) => {
                ctx.stats.fatal_naks_sent += 1;
                let msn = self.resp.msn;
                self.resp.out.push_back(Resp::Ack {
                    psn: p,
                    msn,
                    syndrome: AckKind::Nak(code),
                });
                self.enter_error(ctx.cqs);
            }
        }
    }

    fn duplicate(&mut self, ctx: &mut Ctx<'_>, h: &RoceHeaders, p: u32) {
        match h.bth.opcode.operation() {
            Operation::ReadRequest => {
                // The requester went back to `p` in a READ whose responses are still
                // queued: it asks again from there, so the rest of the old stream is
                // stale. Dropping it lets the replay start now instead of after the rest
                // of the old stream (up to a whole message of READ responses).
                self.resp.out.retain(|r| match *r {
                    Resp::Read {
                        first_psn, total, ..
                    } => {
                        let d = psn::diff(p, first_psn);
                        !(d >= 0 && d < total as i32)
                    }
                    _ => true,
                });
                // Replay from memory, for the range asked for now.
                let Some(reth) = h.reth else { return };
                let len = reth.dma_len as usize;
                let lkey_off = if len == 0 {
                    Ok((0, 0))
                } else {
                    ctx.mrs.remote(
                        self.pd,
                        reth.rkey,
                        reth.va,
                        u64::from(reth.dma_len),
                        AccessFlags::REMOTE_READ,
                    )
                };
                if let Ok((lkey, off)) = lkey_off {
                    let total = len.div_ceil(self.mtu).max(1) as u32;
                    let msn = self.resp.msn;
                    self.resp.out.push_back(Resp::Read {
                        first_psn: p,
                        lkey,
                        off,
                        len,
                        sent: 0,
                        total,
                        msn,
                    });
                }
            }
            Operation::CompareSwap | Operation::FetchAdd => {
                if let Some(&(_, orig)) = self.resp.atomics.iter().find(|(q, _)| *q == p) {
                    let msn = self.resp.msn;
                    self.resp.out.push_back(Resp::Atomic { psn: p, orig, msn });
                }
            }
            _ => {
                let last = psn::add(self.resp.epsn, 0xFF_FFFF);
                let msn = self.resp.msn;
                self.resp.queue_ack(last, msn);
            }
        }
    }

    fn execute(
        &mut self,
        ctx: &mut Ctx<'_>,
        h: &RoceHeaders,
        payload: &[u8],
        src_ip: std::net::IpAddr,
    ) -> Exec {
        let op = h.bth.opcode;
        let mtu = self.mtu;
        let len = payload.len();
        // Payload length per position (rxe check_length).
        let len_ok = if op.is_first() || op.is_middle() {
            len == mtu
        } else if op.is_last() {
            len >= 1 && len <= mtu
        } else {
            len <= mtu
        };
        match op.operation() {
            Operation::SendFirst
            | Operation::SendMiddle
            | Operation::SendLast
            | Operation::SendLastImm
            | Operation::SendOnly
            | Operation::SendOnlyImm
            | Operation::SendLastInv
            | Operation::SendOnlyInv => {
                let starts = op.is_first() || op.is_only();
                if starts != self.resp.cur_recv.is_none() || self.resp.write.is_some() {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                if !len_ok {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                if starts {
                    let Some(w) = self.rq.pop_front() else {
                        return Exec::Rnr;
                    };
                    self.resp.cur_recv = Some(w);
                    self.resp.recv_off = 0;
                }
                let Some(w) = self.resp.cur_recv.take() else {
                    return Exec::Fatal(NakCode::InvalidRequest);
                };
                if !ctx
                    .mrs
                    .scatter(self.pd, &w.sges, self.resp.recv_off, payload)
                {
                    let wc =
                        WorkCompletion::new(w.wr_id, WcStatus::LocLenErr, WcOpcode::Recv, self.qpn);
                    ctx.cqs.push(self.recv_cq, wc);
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                self.resp.recv_off += len;
                if op.is_last() || op.is_only() {
                    let mut wc =
                        WorkCompletion::new(w.wr_id, WcStatus::Success, WcOpcode::Recv, self.qpn);
                    wc.byte_len = self.resp.recv_off as u32;
                    wc.imm_data = h.imm;
                    wc.src_qp = self.dest_qpn;
                    wc.src_ip = Some(src_ip);
                    if let Some(k) = h.ieth {
                        if ctx.mrs.invalidate_rkey(k) {
                            wc.invalidated_rkey = Some(k);
                        }
                    }
                    ctx.cqs.push(self.recv_cq, wc);
                    self.resp.msn = psn::add(self.resp.msn, 1);
                    self.resp.recv_off = 0;
                } else {
                    self.resp.cur_recv = Some(w);
                }
                Exec::Done(1)
            }
            Operation::WriteFirst
            | Operation::WriteMiddle
            | Operation::WriteLast
            | Operation::WriteLastImm
            | Operation::WriteOnly
            | Operation::WriteOnlyImm => {
                let starts = op.is_first() || op.is_only();
                if starts != self.resp.write.is_none() || self.resp.cur_recv.is_some() {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                if !len_ok {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                let needs_rwqe = h.imm.is_some();
                if needs_rwqe && self.rq.is_empty() {
                    return Exec::Rnr;
                }
                let mut wctx = if starts {
                    let Some(reth) = h.reth else {
                        return Exec::Fatal(NakCode::InvalidRequest);
                    };
                    if !self.access.contains(AccessFlags::REMOTE_WRITE) {
                        return Exec::Fatal(NakCode::RemoteAccessError);
                    }
                    let total = u64::from(reth.dma_len);
                    let (lkey, off) = if total == 0 {
                        (0, 0)
                    } else {
                        match ctx.mrs.remote(
                            self.pd,
                            reth.rkey,
                            reth.va,
                            total,
                            AccessFlags::REMOTE_WRITE,
                        ) {
                            Ok(v) => v,
                            Err(_) => return Exec::Fatal(NakCode::RemoteAccessError),
                        }
                    };
                    WriteCtx {
                        lkey,
                        off,
                        remaining: total,
                        total: reth.dma_len,
                    }
                } else {
                    match self.resp.write {
                        Some(w) => w,
                        None => return Exec::Fatal(NakCode::InvalidRequest),
                    }
                };
                let ends = op.is_last() || op.is_only();
                let fits = if ends {
                    len as u64 == wctx.remaining
                } else {
                    (len as u64) < wctx.remaining
                };
                if !fits {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                if len > 0 {
                    match ctx.mrs.bytes_mut(wctx.lkey) {
                        Ok(buf) if wctx.off + len <= buf.len() => {
                            buf[wctx.off..wctx.off + len].copy_from_slice(payload)
                        }
                        _ => return Exec::Fatal(NakCode::RemoteAccessError),
                    }
                }
                wctx.off += len;
                wctx.remaining -= len as u64;
                if ends {
                    self.resp.write = None;
                    self.resp.msn = psn::add(self.resp.msn, 1);
                    if let Some(imm) = h.imm {
                        if let Some(w) = self.rq.pop_front() {
                            let mut wc = WorkCompletion::new(
                                w.wr_id,
                                WcStatus::Success,
                                WcOpcode::RecvRdmaWithImm,
                                self.qpn,
                            );
                            wc.byte_len = wctx.total;
                            wc.imm_data = Some(imm);
                            wc.src_qp = self.dest_qpn;
                            wc.src_ip = Some(src_ip);
                            ctx.cqs.push(self.recv_cq, wc);
                        }
                    }
                } else {
                    self.resp.write = Some(wctx);
                }
                Exec::Done(1)
            }
            Operation::ReadRequest => {
                if self.resp.write.is_some() || self.resp.cur_recv.is_some() {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                let Some(reth) = h.reth else {
                    return Exec::Fatal(NakCode::InvalidRequest);
                };
                if !self.access.contains(AccessFlags::REMOTE_READ) {
                    return Exec::Fatal(NakCode::RemoteAccessError);
                }
                let len = reth.dma_len as usize;
                if len > (1 << 31) || len.div_ceil(mtu) > (1 << 22) {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                let (lkey, off) = if len == 0 {
                    (0, 0)
                } else {
                    match ctx.mrs.remote(
                        self.pd,
                        reth.rkey,
                        reth.va,
                        u64::from(reth.dma_len),
                        AccessFlags::REMOTE_READ,
                    ) {
                        Ok(v) => v,
                        Err(_) => return Exec::Fatal(NakCode::RemoteAccessError),
                    }
                };
                let total = len.div_ceil(mtu).max(1) as u32;
                self.resp.msn = psn::add(self.resp.msn, 1);
                let msn = self.resp.msn;
                self.resp.out.push_back(Resp::Read {
                    first_psn: h.bth.psn,
                    lkey,
                    off,
                    len,
                    sent: 0,
                    total,
                    msn,
                });
                Exec::Done(total)
            }
            Operation::CompareSwap | Operation::FetchAdd => {
                if self.resp.write.is_some() || self.resp.cur_recv.is_some() {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                let Some(a) = h.atomic_eth else {
                    return Exec::Fatal(NakCode::InvalidRequest);
                };
                if a.va % 8 != 0 {
                    return Exec::Fatal(NakCode::InvalidRequest);
                }
                if !self.access.contains(AccessFlags::REMOTE_ATOMIC) {
                    return Exec::Fatal(NakCode::RemoteAccessError);
                }
                let Ok((lkey, off)) =
                    ctx.mrs
                        .remote(self.pd, a.rkey, a.va, 8, AccessFlags::REMOTE_ATOMIC)
                else {
                    return Exec::Fatal(NakCode::RemoteAccessError);
                };
                let Ok(buf) = ctx.mrs.bytes_mut(lkey) else {
                    return Exec::Fatal(NakCode::RemoteAccessError);
                };
                let mut cur = [0u8; 8];
                cur.copy_from_slice(&buf[off..off + 8]);
                let orig = u64::from_le_bytes(cur);
                let new = if op.operation() == Operation::CompareSwap {
                    if orig == a.compare {
                        a.swap_add
                    } else {
                        orig
                    }
                } else {
                    orig.wrapping_add(a.swap_add)
                };
                buf[off..off + 8].copy_from_slice(&new.to_le_bytes());
                if self.resp.atomics.len() >= ctx.cfg.atomic_cache.max(1) {
                    self.resp.atomics.pop_front();
                }
                self.resp.atomics.push_back((h.bth.psn, orig));
                self.resp.msn = psn::add(self.resp.msn, 1);
                let msn = self.resp.msn;
                self.resp.out.push_back(Resp::Atomic {
                    psn: h.bth.psn,
                    orig,
                    msn,
                });
                Exec::Done(1)
            }
            _ => Exec::Fatal(NakCode::InvalidRequest),
        }
    }

    fn ack_syndrome(&self, ctx: &Ctx<'_>, kind: AckKind) -> Syndrome {
        match kind {
            AckKind::Ack => Syndrome::Ack {
                credit_code: if ctx.cfg.advertise_credits {
                    credit_code_for(self.rq.len() as u32)
                } else {
                    CREDITS_UNLIMITED
                },
            },
            AckKind::Rnr(t) => Syndrome::RnrNak { timer_code: t },
            AckKind::Nak(c) => Syndrome::Nak(c),
        }
    }

    /// Produces the next response packet.
    pub(crate) fn resp_next_packet(&mut self, ctx: &mut Ctx<'_>) -> Option<OutPacket> {
        let dst = self.remote_ip?;
        let mtu = self.mtu;
        let dest_qp = self.dest_qpn;
        loop {
            let front = self.resp.out.front()?.clone();
            let (headers, payload, pop) = match front {
                Resp::Ack { psn, msn, syndrome } => {
                    let mut h =
                        RoceHeaders::new(BthRepr::new(Opcode::RC_ACKNOWLEDGE, dest_qp, psn));
                    h.aeth = Some(AethRepr {
                        syndrome: self.ack_syndrome(ctx, syndrome),
                        msn,
                    });
                    (h, Vec::new(), true)
                }
                Resp::Atomic { psn, orig, msn } => {
                    let mut h =
                        RoceHeaders::new(BthRepr::new(Opcode::RC_ATOMIC_ACKNOWLEDGE, dest_qp, psn));
                    h.aeth = Some(AethRepr {
                        syndrome: self.ack_syndrome(ctx, AckKind::Ack),
                        msn,
                    });
                    h.atomic_ack = Some(AtomicAckEthRepr { orig });
                    (h, Vec::new(), true)
                }
                Resp::Read {
                    first_psn,
                    lkey,
                    off,
                    len,
                    sent,
                    total,
                    msn,
                } => {
                    if self.state == QpState::Err {
                        self.resp.out.pop_front();
                        continue;
                    }
                    let a = sent as usize * mtu;
                    let b = (a + mtu).min(len);
                    let data = if len == 0 {
                        Vec::new()
                    } else {
                        match ctx.mrs.bytes(lkey) {
                            Ok(buf) if off + b <= buf.len() => buf[off + a..off + b].to_vec(),
                            _ => {
                                // The MR went away under the response: stop it.
                                self.resp.out.pop_front();
                                continue;
                            }
                        }
                    };
                    let op = if total == 1 {
                        Opcode::RC_RDMA_READ_RESPONSE_ONLY
                    } else if sent == 0 {
                        Opcode::RC_RDMA_READ_RESPONSE_FIRST
                    } else if sent + 1 == total {
                        Opcode::RC_RDMA_READ_RESPONSE_LAST
                    } else {
                        Opcode::RC_RDMA_READ_RESPONSE_MIDDLE
                    };
                    let mut h =
                        RoceHeaders::new(BthRepr::new(op, dest_qp, psn::add(first_psn, sent)));
                    if op != Opcode::RC_RDMA_READ_RESPONSE_MIDDLE {
                        h.aeth = Some(AethRepr {
                            syndrome: self.ack_syndrome(ctx, AckKind::Ack),
                            msn,
                        });
                    }
                    let done = sent + 1 == total;
                    if let Some(Resp::Read { sent: s, .. }) = self.resp.out.front_mut() {
                        *s += 1;
                    }
                    (h, data, done)
                }
            };
            if pop {
                self.resp.out.pop_front();
            }
            return Some(OutPacket {
                headers,
                payload,
                dst,
                cnp: false,
            });
        }
    }
}

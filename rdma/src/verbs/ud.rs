//! UD queue pairs: one packet per message (UD SEND_ONLY with DETH carrying our Q_Key
//! check value and source QP), no acknowledgements; receives check the Q_Key and put a
//! 40-byte GRH area in front of the data, as verbs does (for IPv4 the IPv4 header goes
//! in its last 20 bytes, like ConnectX).

use std::net::IpAddr;

use super::cq::{WcOpcode, WcStatus, WorkCompletion};
use super::mr::{sge_len, MrTable};
use super::qp::{Ctx, OutPacket, Qp, QpState, SendOp, SendWqe, SendWr, WqeKind};
use super::VerbsError;
use crate::wire::psn;
use crate::wire::{BthRepr, DethRepr, Opcode, RoceHeaders};

/// Size of the GRH area at the start of every UD receive buffer.
pub const GRH_LEN: usize = 40;

impl Qp {
    /// Validates and queues a UD send.
    pub(crate) fn post_send_ud(&mut self, wr: SendWr, mrs: &MrTable) -> Result<(), VerbsError> {
        if self.state != QpState::Rts {
            return Err(VerbsError::BadState {
                qpn: self.qpn,
                state: self.state,
                what: "post_send",
            });
        }
        if self.req.sq.len() >= self.max_send_wr {
            return Err(VerbsError::QueueFull(self.qpn));
        }
        let dest = wr.ud.ok_or(VerbsError::MissingAttr("ud destination"))?;
        if dest.qpn > 0xFF_FFFF {
            return Err(VerbsError::InvalidAttr("ud destination qpn"));
        }
        let imm = match wr.op {
            SendOp::Send => None,
            SendOp::SendWithImm(i) => Some(i),
            _ => return Err(VerbsError::Unsupported("UD supports SEND only")),
        };
        let total = sge_len(&wr.sg_list) as usize;
        if total > self.mtu {
            return Err(VerbsError::TooLong {
                len: total,
                max: self.mtu,
            });
        }
        let data = mrs.gather(self.pd, &wr.sg_list)?;
        self.req.sq.push_back(SendWqe {
            wr_id: wr.wr_id,
            kind: WqeKind::Send,
            signaled: wr.signaled,
            solicited: wr.solicited,
            len: data.len() as u32,
            data,
            local: Vec::new(),
            remote_addr: 0,
            rkey: 0,
            imm,
            inv_rkey: None,
            compare: 0,
            swap_add: 0,
            ud: Some(dest),
            started: false,
            first_psn: 0,
            npkts: 1,
            ssn: 0,
            read_done: 0,
            read_req_at: 0,
            atomic_done: false,
        });
        Ok(())
    }

    /// Sends the next UD message; completes it as soon as it is on the wire.
    pub(crate) fn ud_next_packet(&mut self, ctx: &mut Ctx<'_>) -> Option<OutPacket> {
        if self.state != QpState::Rts || self.req.sq.is_empty() || !self.pacing_allows(ctx.now) {
            return None;
        }
        let w = self.req.sq.pop_front()?;
        self.req.cur = 0;
        let dest = w.ud?;
        let op = if w.imm.is_some() {
            Opcode::UD_SEND_ONLY_WITH_IMMEDIATE
        } else {
            Opcode::UD_SEND_ONLY
        };
        let mut b = BthRepr::new(op, dest.qpn, self.req.next_psn);
        b.solicited = w.solicited;
        self.req.next_psn = psn::add(self.req.next_psn, 1);
        let mut h = RoceHeaders::new(b);
        h.deth = Some(DethRepr {
            qkey: dest.qkey,
            src_qp: self.qpn,
        });
        h.imm = w.imm;
        self.complete_send(ctx.cqs, &w, WcStatus::Success);
        self.dcqcn.on_send(ctx.now, w.data.len() + 66);
        Some(OutPacket {
            headers: h,
            payload: w.data,
            dst: dest.ip,
            cnp: false,
        })
    }

    /// Delivers a UD packet; `ip_header` is the raw IP header for the GRH area.
    pub(crate) fn ud_receive(
        &mut self,
        ctx: &mut Ctx<'_>,
        h: &RoceHeaders,
        payload: &[u8],
        src_ip: IpAddr,
        ip_header: &[u8],
    ) {
        if !matches!(self.state, QpState::Rtr | QpState::Rts | QpState::Sqd) {
            ctx.stats.rx_dropped_state += 1;
            return;
        }
        let Some(deth) = h.deth else { return };
        if deth.qkey != self.qkey {
            ctx.stats.rx_bad_qkey += 1;
            return;
        }
        let Some(w) = self.rq.pop_front() else {
            ctx.stats.rx_no_rwqe += 1;
            return;
        };
        let mut grh = [0u8; GRH_LEN];
        match ip_header.len() {
            20 => grh[20..].copy_from_slice(ip_header),
            40 => grh.copy_from_slice(ip_header),
            _ => {}
        }
        let needed = (GRH_LEN + payload.len()) as u64;
        let mut wc = WorkCompletion::new(w.wr_id, WcStatus::Success, WcOpcode::Recv, self.qpn);
        if sge_len(&w.sges) < needed
            || !ctx.mrs.scatter(self.pd, &w.sges, 0, &grh)
            || !ctx.mrs.scatter(self.pd, &w.sges, GRH_LEN, payload)
        {
            wc.status = WcStatus::LocLenErr;
        }
        wc.byte_len = needed as u32;
        wc.imm_data = h.imm;
        wc.src_qp = deth.src_qp;
        wc.src_ip = Some(src_ip);
        ctx.cqs.push(self.recv_cq, wc);
    }
}

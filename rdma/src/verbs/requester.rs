//! The RC requester: segments send WQEs into packets by path MTU, assigns PSNs, sets
//! AckReq, honours the responder's credits and DCQCN pacing, and processes responses:
//! coalesced ACKs, READ responses, atomic ACKs, NAK PSN sequence error (go-back-N),
//! RNR NAK (wait, then resend), fatal NAKs, and the local ACK timeout with retry_cnt.

use std::collections::VecDeque;

use super::cq::WcStatus;
use super::mr::sge_len;
use super::qp::{Ctx, OutPacket, Qp, QpState, SendOp, SendWqe, SendWr, WqeKind};
use super::{Instant, VerbsError};
use crate::wire::psn;
use crate::wire::{
    credits_for_code, rnr_timer_ns, AethRepr, AtomicEthRepr, BthRepr, NakCode, Opcode, Operation,
    RethRepr, RoceHeaders, Syndrome,
};

/// Requester state of an RC QP.
#[derive(Debug, Default)]
pub(crate) struct Requester {
    /// WQEs not yet completed, in order.
    pub(crate) sq: VecDeque<SendWqe>,
    /// PSN for the next new WQE.
    pub(crate) next_psn: u32,
    /// Index into `sq` of the WQE being (re)transmitted.
    pub(crate) cur: usize,
    /// Packet index within it.
    pub(crate) cur_pkt: u32,
    /// Oldest unacknowledged PSN.
    pub(crate) una: u32,
    /// Send sequence number of the next new WQE.
    pub(crate) next_ssn: u32,
    /// Limit sequence number from the responder's credits (`None` = unlimited).
    pub(crate) lsn: Option<u32>,
    pub(crate) retry_left: u8,
    pub(crate) rnr_left: u8,
    pub(crate) ack_deadline: Option<Instant>,
    pub(crate) rnr_until: Option<Instant>,
    rnr_psn: u32,
    pkts_since_ackreq: u32,
    rewound_to: Option<u32>,
    /// The highest PSN sent so far.
    sent_high: Option<u32>,
    /// The highest PSN of an out-of-order READ response since the last go-back: a lower
    /// one means the replay started and lost its head too, so go back again.
    read_ooo_high: Option<u32>,
    /// An AckReq packet being timed (PSN, sent at) for the round-trip estimate.
    rtt_probe: Option<(u32, Instant)>,
    /// Smoothed round-trip time from ACKs of AckReq packets (not retransmitted ones).
    pub(crate) srtt: Option<std::time::Duration>,
    rttvar: std::time::Duration,
    /// The last go-back on a NAK sequence error: the PSN and when.
    nak_rewind: Option<(u32, Instant)>,
    /// After a go-back on a NAK or a lost READ response: when to go back again if `una`
    /// has not moved by then (the NAK, the retransmission's head or the re-issued READ
    /// request was lost as well). After `rtt_bound`, doubling each time; the
    /// ACK timeout stays the last resort and alone counts against retry_cnt.
    pub(crate) recover_at: Option<Instant>,
    recover_backoff: u32,
    /// Set AckReq on the next packet: the head of a retransmission asks for its ACK, so
    /// recovery shows progress within a round trip.
    ackreq_next: bool,
    /// NAK sequence errors this QP received, stale ones included (a ConnectX's per-QP
    /// `packet_seq_err` counter, [`crate::verbs::Endpoint::qp_seq_naks`]).
    pub(crate) seq_naks: u64,
}

impl Requester {
    pub(crate) fn reset(&mut self, sq_psn: u32, retry: u8, rnr: u8) {
        self.next_psn = sq_psn;
        self.una = sq_psn;
        self.next_ssn = 1;
        self.lsn = None;
        self.retry_left = retry;
        self.rnr_left = rnr;
    }

    /// Takes a round-trip sample when a response covers the probed PSN.
    fn rtt_sample(&mut self, p: u32, now: Instant) {
        if let Some((probe, at)) = self.rtt_probe {
            if psn::diff(p, probe) >= 0 {
                let sample = now.saturating_duration_since(at);
                // As TCP does (RFC 6298): a smoothed mean and mean deviation.
                match self.srtt {
                    None => {
                        self.srtt = Some(sample);
                        self.rttvar = sample / 2;
                    }
                    Some(s) => {
                        let dev = s.abs_diff(sample);
                        self.rttvar = (self.rttvar * 3 + dev) / 4;
                        self.srtt = Some((s * 7 + sample) / 8);
                    }
                }
                self.rtt_probe = None;
            }
        }
    }

    /// How long a response to a packet sent now may take: the smoothed round trip plus
    /// four mean deviations (RFC 6298's RTO without its one-second floor), at least two
    /// round trips.
    fn rtt_bound(&self) -> Option<std::time::Duration> {
        self.srtt.map(|s| {
            (s + self.rttvar * 4)
                .max(s * 2)
                .max(std::time::Duration::from_micros(1))
        })
    }

    fn outstanding(&self) -> bool {
        self.sq.front().is_some_and(|w| w.started)
    }
}

fn npkts(len: u32, mtu: usize) -> u32 {
    (len as usize).div_ceil(mtu).max(1) as u32
}

impl Qp {
    /// Validates and queues a send WR on an RC QP.
    pub(crate) fn post_send_rc(
        &mut self,
        wr: SendWr,
        mrs: &super::mr::MrTable,
    ) -> Result<(), VerbsError> {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) {
            return Err(VerbsError::BadState {
                qpn: self.qpn,
                state: self.state,
                what: "post_send",
            });
        }
        if self.req.sq.len() >= self.max_send_wr {
            return Err(VerbsError::QueueFull(self.qpn));
        }
        // IBA caps messages at 2^31 bytes; we also keep a READ's response stream well
        // inside the 2^23 PSN window.
        let total = sge_len(&wr.sg_list);
        let max = (1u64 << 31).min((self.mtu as u64) << 22);
        if total > max {
            return Err(VerbsError::TooLong {
                len: total as usize,
                max: max as usize,
            });
        }
        let len = total as u32;
        let mut w = SendWqe {
            wr_id: wr.wr_id,
            kind: WqeKind::Send,
            signaled: wr.signaled,
            solicited: wr.solicited,
            data: Vec::new(),
            local: Vec::new(),
            len,
            remote_addr: 0,
            rkey: 0,
            imm: None,
            inv_rkey: None,
            compare: 0,
            swap_add: 0,
            ud: None,
            started: false,
            first_psn: 0,
            npkts: 0,
            ssn: 0,
            read_done: 0,
            read_req_at: 0,
            atomic_done: false,
        };
        match wr.op {
            SendOp::Send => {}
            SendOp::SendWithImm(i) => w.imm = Some(i),
            SendOp::SendWithInv(k) => w.inv_rkey = Some(k),
            SendOp::Write { remote_addr, rkey } => {
                w.kind = WqeKind::Write;
                (w.remote_addr, w.rkey) = (remote_addr, rkey);
            }
            SendOp::WriteWithImm {
                remote_addr,
                rkey,
                imm,
            } => {
                w.kind = WqeKind::Write;
                (w.remote_addr, w.rkey, w.imm) = (remote_addr, rkey, Some(imm));
            }
            SendOp::Read { remote_addr, rkey } => {
                w.kind = WqeKind::Read;
                (w.remote_addr, w.rkey) = (remote_addr, rkey);
            }
            SendOp::CompareSwap {
                remote_addr,
                rkey,
                compare,
                swap,
            } => {
                w.kind = WqeKind::CmpSwap;
                (w.remote_addr, w.rkey, w.compare, w.swap_add) = (remote_addr, rkey, compare, swap);
            }
            SendOp::FetchAdd {
                remote_addr,
                rkey,
                add,
            } => {
                w.kind = WqeKind::FetchAdd;
                (w.remote_addr, w.rkey, w.swap_add) = (remote_addr, rkey, add);
            }
        }
        match w.kind {
            WqeKind::Send | WqeKind::Write => {
                w.data = mrs.gather(self.pd, &wr.sg_list)?;
                w.npkts = npkts(len, self.mtu);
            }
            WqeKind::Read => {
                mrs.check_sges(self.pd, &wr.sg_list, true)?;
                w.local = wr.sg_list;
                w.npkts = npkts(len, self.mtu);
            }
            WqeKind::CmpSwap | WqeKind::FetchAdd => {
                if len != 8 {
                    return Err(VerbsError::InvalidAttr("atomic needs one 8-byte SGE"));
                }
                mrs.check_sges(self.pd, &wr.sg_list, true)?;
                w.local = wr.sg_list;
                w.npkts = 1;
                w.len = 8;
            }
        }
        self.req.sq.push_back(w);
        Ok(())
    }

    /// Produces the next request packet, if the window, credits, RNR wait and pacing allow.
    pub(crate) fn req_next_packet(&mut self, ctx: &mut Ctx<'_>) -> Option<OutPacket> {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) {
            return None;
        }
        let now = ctx.now;
        if self.req.rnr_until.is_some_and(|t| now < t) {
            return None;
        }
        if !self.pacing_allows(now) {
            return None;
        }
        let dst = self.remote_ip?;
        loop {
            let outstanding = self.req.outstanding();
            let idx = self.req.cur;
            let (started, kind, needs_rwqe) = {
                let w = self.req.sq.get(idx)?;
                (w.started, w.kind, w.needs_rwqe())
            };
            if !started {
                if self.state == QpState::Sqd {
                    return None;
                }
                if psn::diff(self.req.next_psn, self.req.una) >= ctx.cfg.max_inflight_pkts as i32
                    && outstanding
                {
                    return None;
                }
                let rd_atomic = |k: WqeKind| k != WqeKind::Send && k != WqeKind::Write;
                if rd_atomic(kind) {
                    // Initiator depth: READ/atomic WQEs ahead of this one are all in flight.
                    let ahead = self
                        .req
                        .sq
                        .iter()
                        .take(idx)
                        .filter(|o| rd_atomic(o.kind))
                        .count();
                    if ahead >= ctx.cfg.max_rd_atomic.max(1) {
                        return None;
                    }
                }
                if needs_rwqe && outstanding {
                    if let Some(lsn) = self.req.lsn {
                        if psn::diff(self.req.next_ssn, lsn) > 0 {
                            return None;
                        }
                    }
                }
            }
            let (next_psn, next_ssn) = (self.req.next_psn, self.req.next_ssn);
            let w = self.req.sq.get_mut(idx)?;
            if !started {
                w.started = true;
                w.first_psn = next_psn;
                w.ssn = next_ssn;
                self.req.next_ssn = psn::add(next_ssn, 1);
                self.req.next_psn = psn::add(next_psn, w.npkts);
                self.req.cur_pkt = 0;
            }
            if self.req.cur_pkt >= w.npkts {
                self.req.cur += 1;
                self.req.cur_pkt = 0;
                continue;
            }
            let i = self.req.cur_pkt;
            let p = psn::add(w.first_psn, i);
            if psn::diff(p, self.req.una) >= ctx.cfg.max_inflight_pkts as i32 {
                return None;
            }
            let mtu = self.mtu;
            if w.kind == WqeKind::Read {
                w.read_req_at = i;
            }
            let (headers, payload, next) = build_request(w, i, mtu, self.dest_qpn, p);
            let mut headers = headers;
            self.req.pkts_since_ackreq += 1;
            if self.req.pkts_since_ackreq >= ctx.cfg.ack_req_every || self.req.ackreq_next {
                self.req.ackreq_next = false;
                headers.bth.ack_req = true;
            }
            // Time only packets sent for the first time (Karn).
            let last = psn::add(w.first_psn, next - 1);
            let fresh = self.req.sent_high.is_none_or(|h| psn::diff(last, h) > 0);
            if fresh {
                self.req.sent_high = Some(last);
            }
            if headers.bth.ack_req {
                self.req.pkts_since_ackreq = 0;
                // Before the first sample, a retransmission may be timed too: better an
                // estimate that may be short than none.
                if self.req.rtt_probe.is_none() && (fresh || self.req.srtt.is_none()) {
                    self.req.rtt_probe = Some((p, now));
                }
            }
            self.req.cur_pkt = next;
            if self.req.ack_deadline.is_none() {
                self.req.ack_deadline = self.ack_timeout().map(|d| now + d);
            }
            self.dcqcn.on_send(now, payload.len() + 58);
            return Some(OutPacket {
                headers,
                payload,
                dst,
                cnp: false,
            });
        }
    }

    /// Where to resume after a NAK for PSN `p`: at `p`, or earlier when a READ or
    /// atomic before it still lacks its response (the responder executed it, the
    /// response was lost), since `una` never passes such a WQE.
    fn resend_from(&self, p: u32) -> u32 {
        if psn::diff(self.req.una, p) < 0 {
            self.req.una
        } else {
            p
        }
    }

    fn restart_timer(&mut self, now: Instant) {
        self.req.ack_deadline = if self.req.outstanding() {
            self.ack_timeout().map(|d| now + d)
        } else {
            None
        };
    }

    fn progress(&mut self, now: Instant) {
        self.req.recover_at = None;
        self.req.recover_backoff = 0;
        self.req.retry_left = self.retry_cnt;
        self.req.rnr_left = self.rnr_retry;
        self.req.rewound_to = None;
        self.restart_timer(now);
    }

    /// Rewinds transmission to PSN `p` (go-back-N).
    fn go_back(&mut self, ctx: &mut Ctx<'_>, p: u32) {
        ctx.stats.retransmissions += 1;
        self.req.rtt_probe = None;
        self.req.read_ooo_high = None;
        self.req.ackreq_next = true;
        self.req.recover_at = self
            .req
            .rtt_bound()
            .map(|wait| ctx.now + wait * (1u32 << self.req.recover_backoff.min(16)));
        for (i, w) in self.req.sq.iter().enumerate() {
            if !w.started {
                self.req.cur = i;
                self.req.cur_pkt = 0;
                return;
            }
            let d = psn::diff(p, w.first_psn);
            if d >= 0 && d < w.npkts as i32 {
                self.req.cur = i;
                // READs restart at the first response not yet received.
                self.req.cur_pkt = if w.kind == WqeKind::Read {
                    (d as u32).max(w.read_done)
                } else {
                    d as u32
                };
                return;
            }
        }
        self.req.cur = self.req.sq.len();
        self.req.cur_pkt = 0;
    }

    /// Completes every WQE fully covered by PSN `p` (inclusive). READ and atomic WQEs
    /// without their responses trigger a retransmission instead (implied NAK).
    fn ack_through(&mut self, ctx: &mut Ctx<'_>, p: u32) {
        let mut progressed = false;
        // How far `una` may move: not past a READ/atomic still missing its response.
        let mut acked_to = psn::add(p, 1);
        while let Some(w) = self.req.sq.front() {
            if !w.started {
                break;
            }
            let last = psn::add(w.first_psn, w.npkts - 1);
            if psn::diff(last, p) > 0 {
                // Partly covered: a READ is acknowledged only as far as its responses.
                if w.kind == WqeKind::Read {
                    let got = psn::add(w.first_psn, w.read_done);
                    if psn::diff(acked_to, got) > 0 {
                        acked_to = got;
                    }
                }
                break;
            }
            let missing = match w.kind {
                WqeKind::Read => w.read_done < w.npkts,
                WqeKind::CmpSwap | WqeKind::FetchAdd => !w.atomic_done,
                _ => false,
            };
            if missing {
                let at = psn::add(w.first_psn, w.read_done);
                acked_to = at;
                if self.req.rewound_to != Some(at) {
                    self.req.rewound_to = Some(at);
                    self.go_back(ctx, at);
                }
                break;
            }
            if let Some(w) = self.req.sq.pop_front() {
                self.complete_send(ctx.cqs, &w, WcStatus::Success);
            }
            if self.req.cur > 0 {
                self.req.cur -= 1;
            } else {
                self.req.cur_pkt = 0;
            }
            progressed = true;
        }
        if psn::diff(acked_to, self.req.una) > 0 {
            self.req.una = acked_to;
            progressed = true;
        }
        if progressed {
            self.progress(ctx.now);
        }
    }

    fn fail(&mut self, ctx: &mut Ctx<'_>, status: WcStatus) {
        if let Some(w) = self.req.sq.pop_front() {
            self.complete_send(ctx.cqs, &w, status);
        }
        self.enter_error(ctx.cqs);
    }

    /// Takes the credits of an ACK-type AETH that is not older than what we know.
    fn update_credits(&mut self, p: u32, aeth: &AethRepr) {
        if psn::diff(psn::add(p, 1), self.req.una) < 0 {
            return;
        }
        if let Syndrome::Ack { credit_code } = aeth.syndrome {
            self.req.lsn = credits_for_code(credit_code).map(|c| psn::add(aeth.msn, c));
        }
    }

    /// Handles a response packet (ACK, NAK, READ response, atomic ACK) for this QP.
    pub(crate) fn req_handle_response(
        &mut self,
        ctx: &mut Ctx<'_>,
        h: &RoceHeaders,
        payload: &[u8],
    ) {
        if !matches!(self.state, QpState::Rts | QpState::Sqd) {
            return;
        }
        let p = h.bth.psn;
        // Responses must refer to PSNs we sent: [una - 2^23, next_psn).
        if psn::diff(p, self.req.next_psn) >= 0 {
            ctx.stats.rx_ghost_responses += 1;
            return;
        }
        match h.bth.opcode.operation() {
            Operation::Acknowledge => {
                let Some(aeth) = h.aeth else { return };
                match aeth.syndrome {
                    Syndrome::Ack { .. } => {
                        self.req.rtt_sample(p, ctx.now);
                        self.update_credits(p, &aeth);
                        self.ack_through(ctx, p);
                    }
                    Syndrome::RnrNak { timer_code } => {
                        self.ack_through(ctx, psn::add(p, 0xFF_FFFF));
                        if self.state != QpState::Rts && self.state != QpState::Sqd {
                            return;
                        }
                        if self.rnr_retry != 7 {
                            if self.req.rnr_left == 0 {
                                return self.fail(ctx, WcStatus::RnrRetryExcErr);
                            }
                            self.req.rnr_left -= 1;
                        }
                        ctx.stats.rnr_naks_received += 1;
                        self.req.rnr_until = Some(
                            ctx.now + std::time::Duration::from_nanos(rnr_timer_ns(timer_code)),
                        );
                        self.req.rnr_psn = p;
                        self.req.ack_deadline = None;
                        let from = self.resend_from(p);
                        self.go_back(ctx, from);
                    }
                    Syndrome::Nak(NakCode::PsnSequenceError) => {
                        if self.req.rnr_until.is_some() && p == self.req.rnr_psn {
                            return;
                        }
                        ctx.stats.seq_naks_received += 1;
                        self.req.seq_naks += 1;
                        // A NAK for a PSN below `una` is older than an ACK already taken
                        // (delayed, duplicated): acting on it would only burn a retry.
                        if psn::diff(p, self.req.una) < 0 {
                            ctx.stats.duplicates += 1;
                            return;
                        }
                        // The responder NAKs again when a retransmission lost its head or
                        // the requester asks for a response; a repeat that comes back
                        // sooner than a round trip after going back to the same PSN was
                        // caused by packets sent before that, and is stale.
                        // Without an estimate yet, every repeat counts as stale (the
                        // recovery timer and the ACK timeout still stand behind it).
                        if let Some((q, at)) = self.req.nak_rewind {
                            let since = ctx.now.saturating_duration_since(at);
                            if q == p && self.req.rtt_bound().is_none_or(|b| since < b) {
                                return;
                            }
                        }
                        self.ack_through(ctx, psn::add(p, 0xFF_FFFF));
                        if self.state != QpState::Rts && self.state != QpState::Sqd {
                            return;
                        }
                        // A NAK beyond the last one shows the responder moved on, even
                        // where `una` waits for a READ response: that is progress.
                        if self
                            .req
                            .nak_rewind
                            .is_some_and(|(q, _)| psn::diff(p, q) > 0)
                        {
                            self.req.retry_left = self.retry_cnt;
                        }
                        if self.req.retry_left == 0 {
                            return self.fail(ctx, WcStatus::RetryExcErr);
                        }
                        self.req.retry_left -= 1;
                        let from = self.resend_from(p);
                        self.go_back(ctx, from);
                        self.req.nak_rewind = Some((p, ctx.now));
                        self.restart_timer(ctx.now);
                    }
                    Syndrome::Nak(code) => {
                        self.ack_through(ctx, psn::add(p, 0xFF_FFFF));
                        let status = match code {
                            NakCode::RemoteAccessError => WcStatus::RemAccessErr,
                            NakCode::RemoteOperationalError => WcStatus::RemOpErr,
                            _ => WcStatus::RemInvReqErr,
                        };
                        self.fail(ctx, status);
                    }
                    Syndrome::Reserved(_) => {}
                }
            }
            Operation::ReadResponseFirst
            | Operation::ReadResponseMiddle
            | Operation::ReadResponseLast
            | Operation::ReadResponseOnly => self.on_read_response(ctx, h, payload),
            Operation::AtomicAcknowledge => {
                if psn::diff(p, self.req.una) > 0 {
                    self.ack_through(ctx, psn::add(p, 0xFF_FFFF));
                }
                self.req.rtt_sample(p, ctx.now);
                let Some(orig) = h.atomic_ack else { return };
                let pd = self.pd;
                let Some(w) = self.req.sq.front_mut() else {
                    return;
                };
                if !matches!(w.kind, WqeKind::CmpSwap | WqeKind::FetchAdd)
                    || !w.started
                    || w.first_psn != p
                    || w.atomic_done
                {
                    return;
                }
                w.atomic_done = true;
                let local = w.local.clone();
                if !ctx.mrs.scatter(pd, &local, 0, &orig.orig.to_le_bytes()) {
                    return self.fail(ctx, WcStatus::LocProtErr);
                }
                if let Some(aeth) = h.aeth {
                    self.update_credits(p, &aeth);
                }
                self.ack_through(ctx, p);
            }
            _ => {}
        }
    }

    fn on_read_response(&mut self, ctx: &mut Ctx<'_>, h: &RoceHeaders, payload: &[u8]) {
        let p = h.bth.psn;
        self.req.rtt_sample(p, ctx.now);
        if psn::diff(p, self.req.una) > 0 {
            self.ack_through(ctx, psn::add(p, 0xFF_FFFF));
        }
        let mtu = self.mtu;
        let pd = self.pd;
        let Some(w) = self.req.sq.front_mut() else {
            return;
        };
        if w.kind != WqeKind::Read || !w.started {
            return;
        }
        let expected = psn::add(w.first_psn, w.read_done);
        let d = psn::diff(p, expected);
        if d < 0 {
            ctx.stats.duplicates += 1;
            return;
        }
        if d > 0 {
            // A response was lost: ask again from the missing one at once, and again when
            // the PSNs go backwards (the replay started, and its head was lost too).
            let replay_lost = self.req.read_ooo_high.is_some_and(|h| psn::diff(p, h) < 0);
            if self.req.rewound_to != Some(expected) || replay_lost {
                self.req.rewound_to = Some(expected);
                self.go_back(ctx, expected);
            }
            if self
                .req
                .read_ooo_high
                .is_none_or(|h| psn::diff(p, h) > 0 || replay_lost)
            {
                self.req.read_ooo_high = Some(p);
            }
            return;
        }
        let i = w.read_done;
        let n = w.npkts;
        let op = h.bth.opcode.operation();
        // The position of packet i in a response stream that started at packet `from`.
        let position = |from: u32| {
            if from + 1 == n {
                Operation::ReadResponseOnly
            } else if i == from {
                Operation::ReadResponseFirst
            } else if i + 1 == n {
                Operation::ReadResponseLast
            } else {
                Operation::ReadResponseMiddle
            }
        };
        // Either the original stream or the one of a re-issued request may deliver it.
        let op_ok = op == position(0) || (w.read_req_at <= i && op == position(w.read_req_at));
        let off = i as usize * mtu;
        let want_len = (w.len as usize - off.min(w.len as usize)).min(mtu);
        if !op_ok || payload.len() != want_len {
            return self.fail(ctx, WcStatus::BadRespErr);
        }
        let local = w.local.clone();
        w.read_done += 1;
        let done = w.read_done == n;
        if !ctx.mrs.scatter(pd, &local, off, payload) {
            return self.fail(ctx, WcStatus::LocProtErr);
        }
        if let Some(aeth) = h.aeth {
            self.update_credits(p, &aeth);
        }
        if done {
            self.ack_through(ctx, p);
        } else {
            self.req.una = psn::add(p, 1);
            self.progress(ctx.now);
        }
    }

    /// Handles the ACK timeout and the end of an RNR wait.
    pub(crate) fn req_handle_timeout(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        if self.req.recover_at.is_some_and(|t| now >= t) {
            self.req.recover_at = None;
            if self.req.outstanding() && self.req.rnr_until.is_none() {
                ctx.stats.recoveries += 1;
                self.req.recover_backoff += 1;
                let una = self.req.una;
                self.go_back(ctx, una);
            }
        }
        if self.req.rnr_until.is_some_and(|t| now >= t) {
            self.req.rnr_until = None;
            self.restart_timer(now);
        }
        if self.req.ack_deadline.is_some_and(|t| now >= t) {
            if !self.req.outstanding() {
                self.req.ack_deadline = None;
                return;
            }
            ctx.stats.timeouts += 1;
            if self.req.retry_left == 0 {
                return self.fail(ctx, WcStatus::RetryExcErr);
            }
            self.req.retry_left -= 1;
            let una = self.req.una;
            self.go_back(ctx, una);
            self.req.ack_deadline = self.ack_timeout().map(|d| now + d);
        }
    }
}

/// Builds request packet `i` of a WQE; returns headers, payload and the next packet index.
fn build_request(
    w: &SendWqe,
    i: u32,
    mtu: usize,
    dest_qp: u32,
    p: u32,
) -> (RoceHeaders, Vec<u8>, u32) {
    let n = w.npkts;
    let first = i == 0;
    let last = i + 1 == n;
    let mk = |op: Opcode| {
        let mut b = BthRepr::new(op, dest_qp, p);
        b.ack_req = last;
        RoceHeaders::new(b)
    };
    let slice = |i: u32| {
        let a = (i as usize * mtu).min(w.data.len());
        let b = (a + mtu).min(w.data.len());
        w.data[a..b].to_vec()
    };
    let reth = RethRepr {
        va: w.remote_addr,
        rkey: w.rkey,
        dma_len: w.len,
    };
    match w.kind {
        WqeKind::Send => {
            let op = match (first, last, w.imm, w.inv_rkey) {
                (true, true, Some(_), _) => Opcode::RC_SEND_ONLY_WITH_IMMEDIATE,
                (true, true, None, Some(_)) => Opcode::RC_SEND_ONLY_WITH_INVALIDATE,
                (true, true, None, None) => Opcode::RC_SEND_ONLY,
                (true, false, _, _) => Opcode::RC_SEND_FIRST,
                (false, false, _, _) => Opcode::RC_SEND_MIDDLE,
                (false, true, Some(_), _) => Opcode::RC_SEND_LAST_WITH_IMMEDIATE,
                (false, true, None, Some(_)) => Opcode::RC_SEND_LAST_WITH_INVALIDATE,
                (false, true, None, None) => Opcode::RC_SEND_LAST,
            };
            let mut h = mk(op);
            h.bth.solicited = last && w.solicited;
            h.imm = w.imm;
            h.ieth = w.inv_rkey;
            (h, slice(i), i + 1)
        }
        WqeKind::Write => {
            let op = match (first, last, w.imm) {
                (true, true, Some(_)) => Opcode::RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
                (true, true, None) => Opcode::RC_RDMA_WRITE_ONLY,
                (true, false, _) => Opcode::RC_RDMA_WRITE_FIRST,
                (false, false, _) => Opcode::RC_RDMA_WRITE_MIDDLE,
                (false, true, Some(_)) => Opcode::RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
                (false, true, None) => Opcode::RC_RDMA_WRITE_LAST,
            };
            let mut h = mk(op);
            h.bth.solicited = last && w.solicited && w.imm.is_some();
            h.reth = Some(reth);
            h.imm = w.imm;
            (h, slice(i), i + 1)
        }
        WqeKind::Read => {
            let mut h = mk(Opcode::RC_RDMA_READ_REQUEST);
            h.bth.ack_req = true;
            let done = (i as u64 * mtu as u64).min(u64::from(w.len));
            h.reth = Some(RethRepr {
                va: w.remote_addr.wrapping_add(done),
                rkey: w.rkey,
                dma_len: w.len - done as u32,
            });
            (h, Vec::new(), n)
        }
        WqeKind::CmpSwap | WqeKind::FetchAdd => {
            let op = if w.kind == WqeKind::CmpSwap {
                Opcode::RC_COMPARE_SWAP
            } else {
                Opcode::RC_FETCH_ADD
            };
            let mut h = mk(op);
            h.bth.ack_req = true;
            h.atomic_eth = Some(AtomicEthRepr {
                va: w.remote_addr,
                rkey: w.rkey,
                swap_add: w.swap_add,
                compare: w.compare,
            });
            (h, Vec::new(), 1)
        }
    }
}

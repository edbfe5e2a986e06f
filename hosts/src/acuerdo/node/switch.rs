//! Switch mode (beyond the paper): the leader broadcasts each payload as one RDMA WRITE to a
//! P4CE switch's group (`p4/programs/p4ce.p4`), which replicates it into every member's
//! group ring: one more ring in each node's MR, at the same offset everywhere
//! ([`super::Layout::group_ring`]), written only by the current leader through the switch.
//! The switch is reached over the wire only, with the P4CE host side ([`crate::p4ce::node`]).
//!
//! - The group: a node that becomes leader of an epoch asks the switch's agent for a group
//!   over RDMA CM ([`leader_request_group`]): its live followers (at most
//!   [`MAX_REPLICAS`]) as members, f = ⌊n/2⌋ member ACKs per completion (with the leader, a
//!   majority). Each member's agent connection offers its group ring (VA, size, R_key); the
//!   switch turns the leader's WRITE to virtual address `position` into a WRITE to each
//!   member's ring at `position`. A member resets its group ring (zeroed, read from 0) when
//!   the switch connects for a new group, before the leader learns the group is up, so every
//!   group starts on empty rings; an old leader's group is gone at the switch by then (the
//!   agent retires it before it connects the new one). Members are the followers neither
//!   lost nor suspected; a refused request is made again after the timeout (with the then
//!   live followers), until a group is up or the epoch fell back to unicast.
//! - Credits: each member WRITEs how far it read its group ring into a per-follower word of
//!   the leader's MR ([`super::Layout::group_credit`]); the leader's free space is bounded
//!   by the slowest live member (a lost one no longer counts).
//! - Ordering: diffs (count 0) always go by unicast, payloads of the epoch through the group
//!   once it is up (by unicast before). The core accepts a payload only right after the
//!   previous one of its epoch (the rings were FIFO); a follower therefore takes a group
//!   record only when it is the next one: the count after its last accepted header, in the
//!   same epoch. A later one (the diff of its epoch still on the unicast ring, or an earlier
//!   payload re-sent by unicast) waits in the ring. A record already accepted (sent both ways
//!   around a fall-back) is dropped, on either ring.
//! - Fall-back (as `hosts::mu`): an error completion on the switch QP, a group WRITE not
//!   completed within the timeout, the group ring full for that long, or a live member whose
//!   Accept_SST row stayed behind the leader's for that long (the switch completes a WRITE at
//!   f member ACKs: a copy lost on the way to another member is never resent, and that
//!   member's group ring waits for it for good), moves the QP to the error state and re-sends
//!   by unicast every record a live member has neither reported taking nor accepting (its
//!   Accept_SST row: a burst of the whole unacknowledged ring would stall the unicast QPs
//!   under loss), then everything that waited. The epoch stays on unicast (the group stays
//!   at the switch, unused, until a later leader's request replaces it); the next leader
//!   asks for a group again.

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::Arc;

use rdma::verbs::{
    CmEvent, ConnId, CqHandle, Endpoint, Instant, PdHandle, QpAttr, QpInitAttr, QpState, QpType,
    SendOp, SendWr, Sge, VerbsError, WcStatus, WorkCompletion,
};

use super::Node;
use crate::acuerdo::error::AcuerdoError;
use crate::acuerdo::ring::{Reader, Writer};
use crate::acuerdo::types::{Epoch, MsgHdr, Pid, HDR_LEN};
use crate::mu::SwitchPath;
use crate::p4ce::node::{accept_on, leader_request_group, switch_path_from_reply};
use crate::p4ce::wire::ReplicaOffer;
use crate::p4ce::{MAX_REPLICAS, REPLICA_CM_PORT, SWITCH_IP};

/// A node's switch-mode state: its leader side (the group it asked for, the group ring's
/// writer) and its member side (the group ring's reader).
pub(super) struct Group {
    timeout: u64,
    /// Leader: the QP connected to the switch's BCast QP.
    switch_qp: u32,
    /// Member: the QP the switch's Aggr QP connects to.
    member_qp: u32,
    /// The epoch a group was last asked for.
    asked: Option<Epoch>,
    conn: Option<ConnId>,
    /// When to ask again after a refusal.
    retry_at: Option<u64>,
    path: Option<SwitchPath>,
    members: Vec<Pid>,
    writer: Writer,
    backlog: VecDeque<Arc<Vec<u8>>>,
    /// Records written and not yet reported taken by every member: (end position, record).
    sent: VecDeque<(u64, Arc<Vec<u8>>)>,
    /// What each member reported taking.
    credits: Vec<u64>,
    /// Each member's Accept_SST row while behind the leader, and since when it has not moved.
    lag: Vec<(MsgHdr, u64)>,
    full_since: Option<u64>,
    /// When each uncompleted group WRITE was posted.
    inflight: VecDeque<u64>,
    reader: Reader,
    credit_sent: u64,
}

/// Whether ring record `body` is a payload this node already accepted (`acc`: its last
/// accepted header).
fn duplicate(acc: MsgHdr, body: &[u8]) -> bool {
    body.len() >= HDR_LEN && {
        let h = MsgHdr::get(body);
        h.cnt != 0 && h.e == acc.e && h.cnt <= acc.cnt
    }
}

/// Whether group record `body` must wait: a payload past the one after `acc` (its epoch's
/// diff, or an earlier payload, has not been accepted yet).
fn early(acc: MsgHdr, body: &[u8]) -> bool {
    body.len() >= HDR_LEN && {
        let h = MsgHdr::get(body);
        h.cnt != 0 && (h.e > acc.e || (h.e == acc.e && h.cnt > acc.cnt.saturating_add(1)))
    }
}

impl Group {
    /// The QPs of both roles on `ep`, and the CM port the switch's agent connects to.
    pub(super) fn new(
        ep: &mut Endpoint,
        pd: PdHandle,
        cq: CqHandle,
        timeout: u64,
        n: usize,
        cap: usize,
    ) -> Result<Group, AcuerdoError> {
        let mut qp = |max_send_wr| {
            ep.create_qp(QpInitAttr {
                pd,
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr,
                max_recv_wr: 1,
            })
        };
        let switch_qp = qp(1 << 16)?;
        let member_qp = qp(1)?;
        ep.listen(REPLICA_CM_PORT)?;
        Ok(Group {
            timeout,
            switch_qp,
            member_qp,
            asked: None,
            conn: None,
            retry_at: None,
            path: None,
            members: Vec::new(),
            writer: Writer::new(cap),
            backlog: VecDeque::new(),
            sent: VecDeque::new(),
            credits: vec![0; n],
            lag: vec![(MsgHdr::default(), 0); n],
            full_since: None,
            inflight: VecDeque::new(),
            reader: Reader::default(),
            credit_sent: 0,
        })
    }

    /// Forgets the switch path and what waited for it.
    fn clear(&mut self) {
        self.path = None;
        self.backlog.clear();
        self.sent.clear();
        self.inflight.clear();
        self.full_since = None;
    }
}

impl Node {
    /// Whether this node, as leader, broadcasts through the switch right now.
    pub fn switch_attached(&self) -> bool {
        self.group.as_ref().is_some_and(|g| g.path.is_some())
    }

    /// Whether ring record `body` was accepted already.
    pub(super) fn duplicate(&self, body: &[u8]) -> bool {
        duplicate(self.core.accepted(), body)
    }

    /// Takes a completion of the switch QP (true), or leaves it to the caller (false).
    pub(super) fn switch_completion(&mut self, wc: &WorkCompletion) -> Result<bool, AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(false);
        };
        if wc.qp_num != g.switch_qp && wc.qp_num != g.member_qp {
            return Ok(false);
        }
        if wc.qp_num == g.switch_qp && g.path.is_some() {
            if wc.status == WcStatus::Success {
                g.inflight.pop_front();
            } else {
                self.fall_back()?;
            }
        }
        Ok(true)
    }

    /// The RDMA CM: the switch's agent connecting this node as a member of a new group, the
    /// answer to this node's own request.
    pub(super) fn switch_cm(&mut self, now: u64) -> Result<(), AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(());
        };
        let t = Instant::from_nanos(now);
        let mut failed = false;
        while let Some(ev) = self.ep.poll_cm_event() {
            match ev {
                CmEvent::ConnectRequest {
                    conn, peer, port, ..
                } => {
                    // A refusal or an accept that fails (the request gone meanwhile) is the
                    // asker's problem: the agent refuses the group, the leader stays on unicast.
                    if port != REPLICA_CM_PORT || peer != IpAddr::V4(SWITCH_IP) {
                        let _ = self.ep.reject(t, conn, b"not an Acuerdo group");
                        continue;
                    }
                    // A new group: its ring starts empty.
                    let at = self.lay.group_ring();
                    self.ep.mr_bytes_mut(self.mr.lkey)?[at..at + self.lay.group].fill(0);
                    g.reader = Reader::default();
                    g.credit_sent = 0;
                    let offer = ReplicaOffer {
                        rkey: self.mr.rkey,
                        va: self.mr.addr + at as u64,
                        size: self.lay.group as u64,
                    };
                    let _ = accept_on(&mut self.ep, t, conn, g.member_qp, &offer.to_bytes());
                }
                CmEvent::Established {
                    conn, private_data, ..
                } if g.conn == Some(conn) => {
                    match switch_path_from_reply(g.switch_qp, &private_data) {
                        Ok(sp) if g.asked == Some(self.core.epoch()) && self.core.is_leader() => {
                            g.clear();
                            g.path = Some(sp);
                            g.writer = Writer::new(self.lay.group);
                            g.credits.fill(0);
                            g.lag.fill((MsgHdr::default(), now));
                            let c = self.lay.group_credit(0);
                            self.ep.mr_bytes_mut(self.mr.lkey)?[c..c + 8 * self.lay.n].fill(0);
                            self.stats.groups += 1;
                        }
                        _ => {
                            self.stats.group_refusals += 1;
                            g.conn = None;
                            g.retry_at = Some(now + g.timeout);
                            let _ = self.ep.disconnect(t, conn);
                        }
                    }
                }
                CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn }
                    if g.conn == Some(conn) =>
                {
                    self.stats.group_refusals += 1;
                    g.conn = None;
                    g.retry_at = Some(now + g.timeout);
                }
                CmEvent::Disconnected { conn } if g.conn == Some(conn) => failed = true,
                _ => {}
            }
        }
        if failed {
            self.fall_back()?;
        }
        Ok(())
    }

    /// The leader side's timers: a group asked for at each epoch this node leads, dropped
    /// when it no longer leads, a fall-back when the switch path timed out.
    pub(super) fn switch_watch(&mut self, now: u64) -> Result<(), AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(());
        };
        let t = Instant::from_nanos(now);
        let (leads, e, me) = (self.core.is_leader(), self.core.epoch(), self.cfg.core.me);
        let retry = g.asked == Some(e)
            && g.conn.is_none()
            && g.path.is_none()
            && g.retry_at.is_some_and(|r| now >= r);
        if leads && (g.asked != Some(e) || retry) {
            g.clear();
            g.asked = Some(e);
            g.retry_at = None;
            let core = &self.core;
            let members: Vec<Pid> = (0..self.lay.n as Pid)
                .filter(|&j| j != me && !self.down[j as usize] && self.peers[j as usize].is_some())
                .filter(|&j| !core.suspected(j, now))
                .take(MAX_REPLICAS)
                .collect();
            let f = self.lay.n / 2;
            if f >= 1 && members.len() >= f {
                let replicas: Vec<_> = members
                    .iter()
                    .map(|&j| (self.ips[j as usize], j as u16 + 1))
                    .collect();
                let old = g.conn.take();
                match leader_request_group(
                    &mut self.ep,
                    t,
                    g.switch_qp,
                    old,
                    f,
                    me as u16 + 1,
                    &replicas,
                ) {
                    Ok(c) => {
                        g.conn = Some(c);
                        g.members = members;
                    }
                    Err(_) => {
                        self.stats.group_refusals += 1;
                        g.retry_at = Some(now + g.timeout);
                    }
                }
            }
        } else if !leads && (g.path.is_some() || g.conn.is_some()) {
            // Deposed: the switch path goes with the epoch.
            g.clear();
            if let Some(c) = g.conn.take() {
                let _ = self.ep.disconnect(t, c);
            }
        }
        let late = |since: u64| now.saturating_sub(since) > g.timeout;
        if g.path.is_none() {
            return Ok(());
        }
        // A member that stopped accepting while behind lost a copy the switch sent it (the
        // switch completes a WRITE at f member ACKs, so nobody resends it): its group ring
        // waits for it for good.
        let top = self.core.accepted();
        let mut stuck = false;
        for &j in &g.members {
            let row = self.core.accept_row(j);
            let lag = &mut g.lag[j as usize];
            if self.down[j as usize] || row >= top || row != lag.0 {
                *lag = (row, now);
            } else if late(lag.1) {
                stuck = true;
            }
        }
        if stuck || g.full_since.is_some_and(late) || g.inflight.front().is_some_and(|&p| late(p)) {
            self.fall_back()?;
        }
        Ok(())
    }

    /// Whether the leader sends `msg` to `to` through the group (queued once for all
    /// members) rather than on `to`'s unicast ring.
    pub(super) fn group_takes(&mut self, to: Pid, msg: &Arc<Vec<u8>>) -> bool {
        let Some(g) = self.group.as_mut() else {
            return false;
        };
        if g.path.is_none()
            || !g.members.contains(&to)
            || msg.len() < HDR_LEN
            || MsgHdr::get(msg).cnt == 0
        {
            return false;
        }
        if !g.backlog.back().is_some_and(|b| Arc::ptr_eq(b, msg)) {
            g.backlog.push_back(msg.clone());
        }
        true
    }

    /// The leader's members' credits (each one's group-ring read position).
    pub(super) fn read_group_credits(&mut self) -> Result<(), AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(());
        };
        if g.path.is_none() {
            return Ok(());
        }
        let mem = self.ep.mr_bytes(self.mr.lkey)?;
        for &j in &g.members {
            let k = self.lay.group_credit(j);
            let mut w = [0u8; 8];
            w.copy_from_slice(&mem[k..k + 8]);
            let c = u64::from_le_bytes(w);
            if c <= g.writer.wpos {
                g.credits[j as usize] = g.credits[j as usize].max(c);
            }
        }
        Ok(())
    }

    /// Writes what waits for the group ring while the slowest live member leaves room: one
    /// WRITE per record (and wrap marker) to the switch.
    pub(super) fn send_group(&mut self) -> Result<(), AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(());
        };
        let Some(sp) = g.path else {
            return Ok(());
        };
        let min = g
            .members
            .iter()
            .filter(|&&j| !self.down[j as usize])
            .map(|&j| g.credits[j as usize])
            .min()
            .unwrap_or(g.writer.wpos);
        g.writer.set_credit(min);
        while g.sent.front().is_some_and(|s| s.0 <= min) {
            g.sent.pop_front();
        }
        let mut failed = false;
        while let Some(m) = g.backlog.front().cloned() {
            let Some(puts) = g.writer.append(&m) else {
                g.full_since.get_or_insert(self.now);
                self.stats.ring_full += 1;
                break;
            };
            g.full_since = None;
            g.backlog.pop_front();
            for p in puts {
                let local = self.lay.group_outgoing() + p.at;
                self.ep.mr_bytes_mut(self.mr.lkey)?[local..local + p.bytes.len()]
                    .copy_from_slice(&p.bytes);
                let wr = SendWr::new(
                    u64::MAX,
                    SendOp::Write {
                        remote_addr: p.at as u64,
                        rkey: sp.vrkey,
                    },
                    Sge {
                        addr: self.mr.addr + local as u64,
                        length: p.bytes.len() as u32,
                        lkey: self.mr.lkey,
                    },
                );
                match self.ep.post_send(sp.qpn, wr) {
                    Ok(()) => {
                        self.stats.switch_writes += 1;
                        g.inflight.push_back(self.now);
                    }
                    Err(VerbsError::QueueFull(_) | VerbsError::BadState { .. }) => failed = true,
                    Err(e) => return Err(e.into()),
                }
            }
            g.sent.push_back((g.writer.wpos, m));
            if failed {
                break;
            }
        }
        if failed {
            self.fall_back()?;
        }
        Ok(())
    }

    /// Leaves the switch path: the QP to the error state, the group torn down, and every
    /// record a live member has not reported taking, then what waited, on its unicast ring.
    pub(super) fn fall_back(&mut self) -> Result<(), AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(());
        };
        let Some(sp) = g.path.take() else {
            return Ok(());
        };
        let _ = self.ep.modify_qp(
            sp.qpn,
            &QpAttr {
                state: Some(QpState::Err),
                ..Default::default()
            },
        );
        self.stats.fallbacks += 1;
        for &j in &g.members {
            let j = j as usize;
            if self.down[j] {
                continue;
            }
            // What it reported taking, or accepting, it has.
            let (taken, row) = (g.credits[j], self.core.accept_row(j as Pid));
            let resend = g
                .sent
                .iter()
                .filter(|s| s.0 > taken && MsgHdr::get(&s.1) > row)
                .map(|s| &s.1);
            self.backlog[j].extend(resend.chain(&g.backlog).cloned());
        }
        g.clear();
        Ok(())
    }

    /// A member drains its group ring: every record that is the next one for the core (see
    /// the module docs), in one batch, and reports how far it read to the leader.
    pub(super) fn drain_group(&mut self) -> Result<bool, AcuerdoError> {
        let Some(g) = self.group.as_mut() else {
            return Ok(false);
        };
        let (at, cap) = (self.lay.group_ring(), self.lay.group);
        let ldr = self.core.epoch().ldr;
        let mut batch = 0;
        loop {
            let mem = self.ep.mr_bytes_mut(self.mr.lkey)?;
            let ring = &mut mem[at..at + cap];
            let body = match g.reader.peek(ring) {
                Ok(Some(b)) => b,
                Ok(None) => break,
                Err(e) => return Err(AcuerdoError::Malformed(format!("group ring: {e}"))),
            };
            let acc = self.core.accepted();
            if early(acc, &body) {
                break;
            }
            let _ = g.reader.take(ring);
            batch += 1;
            if duplicate(acc, &body) {
                self.stats.duplicates += 1;
            } else {
                self.core.receive(ldr, &body);
            }
        }
        if batch == 0 {
            return Ok(false);
        }
        self.stats.records += batch;
        self.stats.group_records += batch;
        self.stats.batches += 1;
        let rpos = g.reader.rpos;
        let me = self.cfg.core.me;
        if ldr != me && rpos - g.credit_sent >= (cap / 8) as u64 {
            g.credit_sent = rpos;
            let o = self.lay.group_credit_out();
            self.ep.mr_bytes_mut(self.mr.lkey)?[o..o + 8].copy_from_slice(&rpos.to_le_bytes());
            self.write(ldr as usize, o, self.lay.group_credit(me), 8)?;
            self.stats.credits += 1;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(round: u32, cnt: u32) -> Vec<u8> {
        let mut b = Vec::new();
        MsgHdr {
            e: Epoch { round, ldr: 0 },
            cnt,
        }
        .put(&mut b);
        b.extend_from_slice(b"payload");
        b
    }

    #[test]
    fn group_records_wait_for_their_turn_and_accepted_ones_are_duplicates() {
        let acc = MsgHdr {
            e: Epoch { round: 2, ldr: 0 },
            cnt: 4,
        };
        // The next one goes; later ones and a newer epoch's payloads wait; diffs never do.
        assert!(!early(acc, &rec(2, 5)));
        assert!(early(acc, &rec(2, 6)));
        assert!(early(acc, &rec(3, 1)));
        assert!(!early(acc, &rec(3, 0)));
        // Older epochs go (the core refuses them as stale).
        assert!(!early(acc, &rec(1, 9)));
        assert!(duplicate(acc, &rec(2, 4)));
        assert!(duplicate(acc, &rec(2, 1)));
        assert!(!duplicate(acc, &rec(2, 5)));
        assert!(!duplicate(acc, &rec(1, 3)));
        assert!(!duplicate(acc, b"short"));
    }
}

//! Leader fail-over in the lab, as Mu does it on top of P4CE:
//!
//! - Every host bumps a heartbeat counter in a small MR; every non-leader READs the others'
//!   counters over RDMA each tenth of the leader timeout ([`Liveness`]). The lowest live id
//!   leads.
//! - When a replica finds itself the lowest live id it asks the other live replicas for write
//!   permission (in Mu a small RDMA message to their permission thread; here the lab hands
//!   the request over directly): each of them grants writes on its QP to the new leader only,
//!   revokes them from the old leader's QPs and from its switch QP (until the agent connects
//!   it again for the new leader), and forgets entries it holds but has not applied.
//! - The new leader READs every follower's applied count, READs the whole log of the one
//!   that is furthest ahead if it is ahead of itself, and adopts the longest complete prefix:
//!   every entry the old leader committed is on f replicas, so it is in that prefix, in
//!   order. It then leads from the end of that prefix ([`Leader::resume_at`]; lagging
//!   followers are caught up by the leader's probes) and, in P4CE mode, asks the switch
//!   for the group on a fresh QP (through RDMA CM with `via_cm`: the agent replaces the old
//!   leader's group).

use std::time::Duration;

use hosts::mu::{
    recovery_source, Leader, LeaderConfig, Liveness, LogGeometry, Path, Replica, ReplicaPath,
};
use rdma::verbs::{
    AccessFlags, CqHandle, Instant, MrInfo, QpInitAttr, QpType, SendOp, SendWr, Sge, WcStatus,
};

use super::lab::{connect, next_psn, Host, Lab, LabError};

/// What fail-over did, with the virtual time (ns) it happened at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailoverEvent {
    /// Host index `host` follows leader id `leader` (write permissions moved).
    Follows {
        /// Host index.
        host: usize,
        /// Id of the leader it follows.
        leader: u16,
        /// When.
        at: u64,
    },
    /// Host index `host` found itself the lowest live id and started recovery.
    Recovering {
        /// Host index.
        host: usize,
        /// When.
        at: u64,
    },
    /// Host index `host` leads from entry `from` (adopted from replica id `source`); the old
    /// leader had committed `old_committed`.
    Leads {
        /// Host index.
        host: usize,
        /// First entry it appends.
        from: u64,
        /// What the old leader had committed (the lab knows; for checks).
        old_committed: u64,
        /// Id of the replica whose log was adopted.
        source: u16,
        /// When.
        at: u64,
    },
    /// Recovery could not finish.
    Failed {
        /// Host index.
        host: usize,
        /// Why.
        reason: String,
    },
}

struct HbHost {
    /// 8 bytes: own counter; then 8 bytes per host: the last value read from it.
    mr: MrInfo,
    cq: CqHandle,
    /// (peer host index, QP) and whether a READ is outstanding on it.
    qps: Vec<(usize, u32, bool)>,
    live: Liveness,
    believed: u16,
}

enum Recovery {
    Status {
        x: usize,
        followers: Vec<usize>,
        applied: Vec<Option<u64>>,
        waiting: usize,
    },
    Log {
        x: usize,
        followers: Vec<usize>,
        source: u16,
    },
}

const RECOVER: u64 = 1 << 61;
const LOG_READ: u64 = 1 << 60;

/// Heartbeat and recovery state of a lab (see the module docs).
pub(crate) struct Failover {
    hb: Vec<HbHost>,
    every: u64,
    next: u64,
    recovery: Option<Recovery>,
    pub(crate) events: Vec<FailoverEvent>,
}

fn data_qp(hosts: &[Host], h: usize, peer: usize) -> Option<u32> {
    if h == 0 {
        return hosts[0].uni_qps.get(peer.checked_sub(1)?).copied();
    }
    if peer == 0 {
        return hosts[h].uni_qps.first().copied();
    }
    hosts[h]
        .mesh
        .iter()
        .find(|(p, _)| *p == peer)
        .map(|(_, q)| *q)
}

impl Failover {
    /// Heartbeat MRs, CQs and a QP between every two hosts.
    pub(crate) fn new(
        hosts: &mut [Host],
        timeout: Duration,
        rng: &mut u64,
    ) -> Result<Failover, LabError> {
        let n = hosts.len();
        let ids: Vec<u16> = hosts.iter().map(|h| h.id).collect();
        let mut hb = Vec::new();
        for h in hosts.iter_mut() {
            let pd = h.ep.alloc_pd();
            let mr = h.ep.reg_mr(
                pd,
                8 + 8 * n,
                AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
            )?;
            let cq = h.ep.create_cq(1024);
            let mut qps = Vec::new();
            for _ in 1..n {
                let q = h.ep.create_qp(QpInitAttr {
                    pd,
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    max_send_wr: 64,
                    max_recv_wr: 1,
                })?;
                qps.push((usize::MAX, q, false));
            }
            hb.push(HbHost {
                mr,
                cq,
                qps,
                live: Liveness::new(h.id, &ids, timeout, Instant::ZERO),
                believed: ids[0],
            });
        }
        for a in 0..n {
            for b in a + 1..n {
                let ka = hb[a].qps.iter().position(|q| q.0 == usize::MAX);
                let kb = hb[b].qps.iter().position(|q| q.0 == usize::MAX);
                let (Some(ka), Some(kb)) = (ka, kb) else {
                    return Err(LabError::Config("heartbeat QPs".into()));
                };
                let (qa, qb) = (hb[a].qps[ka].1, hb[b].qps[kb].1);
                let (pa, pb) = (next_psn(rng), next_psn(rng));
                let (ipa, ipb) = (hosts[a].ip, hosts[b].ip);
                connect(&mut hosts[a].ep, qa, ipb, qb, pb, pa)?;
                connect(&mut hosts[b].ep, qb, ipa, qa, pa, pb)?;
                hb[a].qps[ka].0 = b;
                hb[b].qps[kb].0 = a;
            }
        }
        let every = Liveness::period(timeout).as_nanos() as u64;
        Ok(Failover {
            hb,
            every,
            next: every,
            recovery: None,
            events: Vec::new(),
        })
    }

    /// The next heartbeat tick, ns.
    pub(crate) fn next_tick(&self) -> u64 {
        self.next
    }
}

impl Lab {
    /// Heartbeats, view changes and recovery; part of [`Lab::step`].
    pub(super) fn failover_step(&mut self, now: Instant) -> Result<bool, LabError> {
        let Some(mut fo) = self.failover.take() else {
            return Ok(false);
        };
        let r = self.failover_inner(&mut fo, now);
        self.failover = Some(fo);
        r
    }

    /// What fail-over did so far.
    pub fn failover_events(&self) -> &[FailoverEvent] {
        self.failover.as_ref().map_or(&[], |f| &f.events)
    }

    fn failover_inner(&mut self, fo: &mut Failover, now: Instant) -> Result<bool, LabError> {
        let mut work = false;
        let n = self.hosts.len();
        if self.now >= fo.next {
            fo.next = self.now + fo.every;
            work = true;
            for (h, host) in self.hosts.iter_mut().enumerate() {
                if !host.alive {
                    continue;
                }
                let me = &mut fo.hb[h];
                let b = host.ep.mr_bytes_mut(me.mr.lkey)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[..8]);
                b[..8].copy_from_slice(&(u64::from_le_bytes(a) + 1).to_le_bytes());
            }
            let mrs: Vec<MrInfo> = fo.hb.iter().map(|x| x.mr).collect();
            for (h, host) in self.hosts.iter_mut().enumerate() {
                if !host.alive {
                    continue;
                }
                let me = &mut fo.hb[h];
                for (k, (peer, qpn, pending)) in me.qps.iter_mut().enumerate() {
                    if *pending || *peer >= n {
                        continue;
                    }
                    let sge = Sge {
                        addr: me.mr.addr + 8 + 8 * *peer as u64,
                        length: 8,
                        lkey: me.mr.lkey,
                    };
                    let op = SendOp::Read {
                        remote_addr: mrs[*peer].addr,
                        rkey: mrs[*peer].rkey,
                    };
                    if host
                        .ep
                        .post_send(*qpn, SendWr::new(k as u64, op, sge))
                        .is_ok()
                    {
                        *pending = true;
                    }
                }
            }
        }
        // Heartbeat READs that completed.
        let ids: Vec<u16> = self.hosts.iter().map(|x| x.id).collect();
        for (h, host) in self.hosts.iter_mut().enumerate() {
            if !host.alive {
                continue;
            }
            let me = &mut fo.hb[h];
            for wc in host.ep.poll_cq(me.cq, 256)? {
                let Some(q) = me.qps.get_mut(wc.wr_id as usize) else {
                    continue;
                };
                q.2 = false;
                if wc.status != WcStatus::Success {
                    continue;
                }
                let peer = q.0;
                let b = host.ep.mr_bytes(me.mr.lkey)?;
                let o = 8 + 8 * peer;
                let mut a = [0u8; 8];
                a.copy_from_slice(&b[o..o + 8]);
                if let Some(id) = ids.get(peer) {
                    me.live.observe(*id, u64::from_le_bytes(a), now);
                }
            }
        }
        // The leader stops waiting for followers whose heartbeat stopped (Mu's leader does
        // not wait for the transport to give up on them).
        if self.hosts[self.lead].alive {
            let lead_live = &fo.hb[self.lead].live;
            let lost: Vec<u16> = self
                .leader
                .live_replicas()
                .into_iter()
                .filter(|id| !lead_live.is_alive(*id, now))
                .collect();
            for id in lost {
                work |= self.leader.mark_lost(id);
            }
        }
        // View changes: a host that finds itself the lowest live id takes over.
        if fo.recovery.is_none() {
            for h in 0..n {
                if !self.hosts[h].alive || h == self.lead {
                    continue;
                }
                let l = fo.hb[h].live.leader(now);
                if l == self.hosts[h].id && l != fo.hb[h].believed {
                    work = true;
                    self.start_recovery(fo, h, now)?;
                    break;
                }
            }
        }
        work |= self.recovery_progress(fo, now)?;
        Ok(work)
    }

    /// Host `h` follows leader host `li`: writes only from `li`'s QP, none through the old
    /// group's switch QP, unapplied entries forgotten.
    fn follow(&mut self, fo: &mut Failover, h: usize, li: usize) -> Result<(), LabError> {
        let n = self.hosts.len();
        let mut grant = Vec::new();
        let mut others = vec![self.hosts[h].switch_qp];
        for p in (0..n).filter(|p| *p != h) {
            if let Some(q) = data_qp(&self.hosts, h, p) {
                if p == li {
                    grant.push(q);
                } else {
                    others.push(q);
                }
            }
        }
        match self.replicas[h].as_mut() {
            Some(r) => {
                r.follow(&mut self.hosts[h].ep, &grant, &others)?;
            }
            None => Replica::grant_writes(&mut self.hosts[h].ep, &grant, &others)?,
        }
        let leader = self.hosts[li].id;
        let old = self.hosts[self.lead].id;
        fo.hb[h].believed = leader;
        fo.hb[h]
            .live
            .declare_dead(old, Instant::from_nanos(self.now));
        fo.events.push(FailoverEvent::Follows {
            host: h,
            leader,
            at: self.now,
        });
        Ok(())
    }

    fn start_recovery(
        &mut self,
        fo: &mut Failover,
        x: usize,
        now: Instant,
    ) -> Result<(), LabError> {
        fo.events.push(FailoverEvent::Recovering {
            host: x,
            at: self.now,
        });
        let n = self.hosts.len();
        let old = self.lead;
        let followers: Vec<usize> = (0..n)
            .filter(|j| *j != x && *j != old && fo.hb[x].live.is_alive(self.hosts[*j].id, now))
            .collect();
        // The permission requests: every live follower moves to the new leader.
        for &j in &followers {
            if self.hosts[j].alive {
                self.follow(fo, j, x)?;
            }
        }
        // The new leader stops taking writes from anyone.
        self.follow(fo, x, x)?;
        let g = LogGeometry::for_values(self.cfg.max_value, self.cfg.slots);
        let glen = g.len();
        let xlog = self.hosts[x].log;
        let mut waiting = 0;
        for (k, &j) in followers.iter().enumerate() {
            let Some(qpn) = data_qp(&self.hosts, x, j) else {
                continue;
            };
            let rlog = self.hosts[j].log;
            let sge = Sge {
                addr: xlog.addr + (glen + 16 + 8 * k) as u64,
                length: 8,
                lkey: xlog.lkey,
            };
            let op = SendOp::Read {
                remote_addr: rlog.addr + glen as u64,
                rkey: rlog.rkey,
            };
            self.hosts[x]
                .ep
                .post_send(qpn, SendWr::new(RECOVER | k as u64, op, sge))?;
            waiting += 1;
        }
        fo.recovery = Some(Recovery::Status {
            x,
            applied: vec![None; followers.len()],
            followers,
            waiting,
        });
        Ok(())
    }

    fn recovery_progress(&mut self, fo: &mut Failover, now: Instant) -> Result<bool, LabError> {
        let Some(rec) = fo.recovery.take() else {
            return Ok(false);
        };
        let x = match &rec {
            Recovery::Status { x, .. } | Recovery::Log { x, .. } => *x,
        };
        let g = LogGeometry::for_values(self.cfg.max_value, self.cfg.slots);
        let glen = g.len();
        let xcq = self.hosts[x].cq;
        let wcs = self.hosts[x].ep.poll_cq(xcq, 256)?;
        let work = !wcs.is_empty();
        match rec {
            Recovery::Status {
                x,
                followers,
                mut applied,
                mut waiting,
            } => {
                for wc in wcs {
                    if wc.wr_id & RECOVER == 0 {
                        continue;
                    }
                    let k = (wc.wr_id & 0xFFFF) as usize;
                    waiting = waiting.saturating_sub(1);
                    if wc.status == WcStatus::Success && k < applied.len() {
                        let b = self.hosts[x].ep.mr_bytes(self.hosts[x].log.lkey)?;
                        let o = glen + 16 + 8 * k;
                        let mut a = [0u8; 8];
                        a.copy_from_slice(&b[o..o + 8]);
                        applied[k] = Some(u64::from_le_bytes(a));
                    }
                }
                if waiting > 0 {
                    fo.recovery = Some(Recovery::Status {
                        x,
                        followers,
                        applied,
                        waiting,
                    });
                    return Ok(work);
                }
                let own = self.replicas[x].as_ref().map_or(0, |r| r.applied());
                let best = recovery_source(own, &applied);
                let live: Vec<usize> = followers
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| applied[*k].is_some())
                    .map(|(_, j)| *j)
                    .collect();
                match best {
                    Some(k) => {
                        let j = followers[k];
                        let Some(qpn) = data_qp(&self.hosts, x, j) else {
                            return Ok(work);
                        };
                        let (xlog, rlog) = (self.hosts[x].log, self.hosts[j].log);
                        let sge = Sge {
                            addr: xlog.addr,
                            length: glen as u32,
                            lkey: xlog.lkey,
                        };
                        let op = SendOp::Read {
                            remote_addr: rlog.addr,
                            rkey: rlog.rkey,
                        };
                        self.hosts[x]
                            .ep
                            .post_send(qpn, SendWr::new(RECOVER | LOG_READ, op, sge))?;
                        fo.recovery = Some(Recovery::Log {
                            x,
                            followers: live,
                            source: self.hosts[j].id,
                        });
                    }
                    _ => {
                        let id = self.hosts[x].id;
                        self.take_over(fo, x, live, id, now)?;
                    }
                }
            }
            Recovery::Log {
                x,
                followers,
                source,
            } => {
                let mut done = None;
                for wc in wcs {
                    if wc.wr_id == RECOVER | LOG_READ {
                        done = Some(wc.status == WcStatus::Success);
                    }
                }
                match done {
                    None => {
                        fo.recovery = Some(Recovery::Log {
                            x,
                            followers,
                            source,
                        });
                        return Ok(work);
                    }
                    Some(ok) => {
                        if !ok {
                            fo.events.push(FailoverEvent::Failed {
                                host: x,
                                reason: "log READ failed; adopting own log".into(),
                            });
                        }
                        let src = if ok { source } else { self.hosts[x].id };
                        self.take_over(fo, x, followers, src, now)?;
                    }
                }
            }
        }
        Ok(true)
    }

    fn take_over(
        &mut self,
        fo: &mut Failover,
        x: usize,
        followers: Vec<usize>,
        source: u16,
        now: Instant,
    ) -> Result<(), LabError> {
        let record = self.cfg.record;
        // Apply what was adopted.
        if let Some(r) = self.replicas[x].as_mut() {
            let h = &mut self.hosts[x];
            let applied = &mut h.applied;
            r.poll_apply(&mut h.ep, |_, v| {
                if record {
                    applied.push(v.to_vec());
                }
            })?;
        }
        let end = self.replicas[x].as_ref().map_or(0, |r| r.applied());
        let old_committed = self.leader.committed();
        if record {
            self.appended = self.hosts[x].applied.clone();
        }
        let paths: Vec<ReplicaPath> = followers
            .iter()
            .filter_map(|&j| {
                data_qp(&self.hosts, x, j).map(|qpn| ReplicaPath {
                    id: self.hosts[j].id,
                    qpn,
                    va: self.hosts[j].log.addr,
                    rkey: self.hosts[j].log.rkey,
                })
            })
            .collect();
        if paths.len() < self.cfg.f {
            fo.events.push(FailoverEvent::Failed {
                host: x,
                reason: format!("{} live followers, f = {}", paths.len(), self.cfg.f),
            });
            return Ok(());
        }
        let lcfg = LeaderConfig {
            f: self.cfg.f,
            geometry: LogGeometry::for_values(self.cfg.max_value, self.cfg.slots),
            max_outstanding: self.cfg.outstanding,
            switch_timeout: self.cfg.switch_timeout,
            switch_retry: self.cfg.switch_retry,
            probe_every: self.cfg.probe_every,
        };
        let h = &self.hosts[x];
        let mut leader = Leader::new(lcfg, h.log, h.cq, paths, None)?;
        leader.resume_at(end)?;
        self.leader = leader;
        self.lead = x;
        self.replicas[x] = None;
        fo.events.push(FailoverEvent::Leads {
            host: x,
            from: end,
            old_committed,
            source,
            at: self.now,
        });
        let _ = now;
        if self.cfg.mode == Path::Switch {
            // A fresh QP towards the switch's BCast QP (the old one is the replica side of
            // the old group).
            let h = &mut self.hosts[x];
            h.switch_qp = h.ep.create_qp(QpInitAttr {
                pd: h.pd,
                qp_type: QpType::Rc,
                send_cq: h.cq,
                recv_cq: h.cq,
                max_send_wr: 4096,
                max_recv_wr: 1,
            })?;
            self.leader_cm = None;
            self.connect_switch()?;
        }
        Ok(())
    }
}

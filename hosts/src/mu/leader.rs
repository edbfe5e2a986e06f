//! The leader of the replicated log. It owns a log MR on its endpoint (its own copy of every
//! entry, which is also what it WRITEs from) and QPs: one to the P4CE switch's BCast QP (the
//! switch path, optional) and one per replica (the unicast path, exactly Mu).
//!
//! - Switch path: entry `n` is one RDMA WRITE to virtual address `offset(n)` with the group's
//!   virtual R_key; its completion means the switch forwarded the f-th replica ACK: committed.
//! - Unicast path: one WRITE per live replica to `va + offset(n)`; the leader counts the
//!   completions itself and commits at f.
//! - Fallback (§III-A of the P4CE paper): a failed completion on the switch QP, or an entry on
//!   the switch path older than `switch_timeout`, moves the QP to the error state, re-sends
//!   every uncommitted entry by unicast and keeps replicating by unicast; after
//!   `switch_retry` the leader asks (through [`LeaderEvent::SwitchRetryDue`]) for a new switch
//!   path, which [`Leader::attach_switch`] installs.
//!
//! Entries commit in index order.

use std::collections::VecDeque;
use std::time::Duration;

use rdma::verbs::{
    CqHandle, Endpoint, Instant, MrInfo, QpAttr, QpState, SendOp, SendWr, Sge, WcStatus,
};

use super::slot::LogGeometry;
use super::MuError;

/// How the leader replicates right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// One WRITE to the P4CE switch.
    Switch,
    /// One WRITE per replica.
    Unicast,
}

/// The leader's connection to the switch's BCast QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SwitchPath {
    /// The leader's QP connected to the BCast QP.
    pub qpn: u32,
    /// The group's virtual R_key (the virtual VA is 0).
    pub vrkey: u32,
}

/// The leader's connection to one replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaPath {
    /// Replica id.
    pub id: u16,
    /// The leader's QP connected to the replica.
    pub qpn: u32,
    /// Base address of the replica's log.
    pub va: u64,
    /// The replica log's R_key.
    pub rkey: u32,
}

/// Leader settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LeaderConfig {
    /// Replica acknowledgements needed (f replicas + the leader are a majority).
    pub f: usize,
    /// Log shape (the same on every node).
    pub geometry: LogGeometry,
    /// Most entries in flight (uncommitted) at once.
    pub max_outstanding: usize,
    /// An entry on the switch path not committed after this: the switch path is considered
    /// broken.
    pub switch_timeout: Duration,
    /// After a fallback, ask for the switch path again after this.
    pub switch_retry: Duration,
}

/// Something the leader tells its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderEvent {
    /// Entries below this index are committed.
    Committed(u64),
    /// The switch path failed (error completion or timeout); the leader replicates by
    /// unicast now.
    FellBack {
        /// Why: `true` for a timeout, `false` for an error completion (a NAK).
        timeout: bool,
    },
    /// A replica's QP failed: it is left out of unicast replication.
    ReplicaLost(u16),
    /// Time to try the switch path again ([`Leader::attach_switch`]).
    SwitchRetryDue,
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LeaderStats {
    /// Entries appended.
    pub appended: u64,
    /// Entries committed.
    pub committed: u64,
    /// WRITEs posted on the switch path.
    pub switch_writes: u64,
    /// WRITEs posted on the unicast path.
    pub unicast_writes: u64,
    /// Fallbacks to unicast.
    pub fallbacks: u64,
    /// Entries re-sent by unicast after a fallback.
    pub resent: u64,
}

#[derive(Debug, Clone)]
struct Inflight {
    index: u64,
    len: usize,
    posted_at: Instant,
    via_switch: bool,
    /// Bit i: replica path i acknowledged.
    acks: u32,
    done: bool,
}

/// The leader (see the module docs).
#[derive(Debug)]
pub struct Leader {
    cfg: LeaderConfig,
    log: MrInfo,
    cq: CqHandle,
    switch: Option<SwitchPath>,
    replicas: Vec<ReplicaPath>,
    live: Vec<bool>,
    next: u64,
    commit: u64,
    inflight: VecDeque<Inflight>,
    retry_at: Option<Instant>,
    events: VecDeque<LeaderEvent>,
    stats: LeaderStats,
    mode_pref: Path,
}

impl Leader {
    /// A leader writing from `log` (an MR of `cfg.geometry.len()` bytes on the endpoint),
    /// whose QPs complete into `cq`. `replicas` are the unicast paths; `switch` the P4CE
    /// path, if any.
    pub fn new(
        cfg: LeaderConfig,
        log: MrInfo,
        cq: CqHandle,
        replicas: Vec<ReplicaPath>,
        switch: Option<SwitchPath>,
    ) -> Result<Leader, MuError> {
        cfg.geometry.validate()?;
        if log.len < cfg.geometry.len() {
            return Err(MuError::Config(format!(
                "log MR of {} bytes for a log of {}",
                log.len,
                cfg.geometry.len()
            )));
        }
        if cfg.f == 0 || cfg.f > replicas.len() || replicas.len() > 32 {
            return Err(MuError::Config(format!(
                "f = {} with {} replicas",
                cfg.f,
                replicas.len()
            )));
        }
        if cfg.max_outstanding == 0 || cfg.max_outstanding > cfg.geometry.slots {
            return Err(MuError::Config(format!(
                "max_outstanding {} must be within 1..={} (the slots)",
                cfg.max_outstanding, cfg.geometry.slots
            )));
        }
        let live = vec![true; replicas.len()];
        Ok(Leader {
            cfg,
            log,
            cq,
            mode_pref: if switch.is_some() {
                Path::Switch
            } else {
                Path::Unicast
            },
            switch,
            replicas,
            live,
            next: 0,
            commit: 0,
            inflight: VecDeque::new(),
            retry_at: None,
            events: VecDeque::new(),
            stats: LeaderStats::default(),
        })
    }

    /// The path new entries take.
    pub fn path(&self) -> Path {
        if self.switch.is_some() {
            Path::Switch
        } else {
            Path::Unicast
        }
    }

    /// The path this leader was created for.
    pub fn preferred_path(&self) -> Path {
        self.mode_pref
    }

    /// Entries below this index are committed.
    pub fn committed(&self) -> u64 {
        self.commit
    }

    /// The index the next appended entry gets.
    pub fn next_index(&self) -> u64 {
        self.next
    }

    /// Entries in flight.
    pub fn outstanding(&self) -> usize {
        self.inflight.len()
    }

    /// Whether `append` would accept an entry now.
    pub fn can_append(&self) -> bool {
        self.inflight.len() < self.cfg.max_outstanding
    }

    /// Counters.
    pub fn stats(&self) -> LeaderStats {
        self.stats
    }

    /// Replica ids still replicated to by unicast.
    pub fn live_replicas(&self) -> Vec<u16> {
        self.replicas
            .iter()
            .zip(&self.live)
            .filter(|(_, l)| **l)
            .map(|(r, _)| r.id)
            .collect()
    }

    /// Takes the next event.
    pub fn poll_event(&mut self) -> Option<LeaderEvent> {
        self.events.pop_front()
    }

    /// Appends `value`: writes entry `next_index()` into the leader's own log, then
    /// replicates it on the current path. Returns its index.
    pub fn append(&mut self, ep: &mut Endpoint, now: Instant, value: &[u8]) -> Result<u64, MuError> {
        if !self.can_append() {
            return Err(MuError::WindowFull(self.inflight.len()));
        }
        let g = self.cfg.geometry;
        let n = self.next;
        let off = g.offset(n);
        let buf = ep.mr_bytes_mut(self.log.lkey)?;
        let len = g.encode(n, value, &mut buf[off..])?;
        let mut e = Inflight {
            index: n,
            len,
            posted_at: now,
            via_switch: false,
            acks: 0,
            done: false,
        };
        match self.switch {
            Some(sp) => {
                self.post_switch(ep, sp, &e)?;
                e.via_switch = true;
            }
            None => {
                self.post_unicast(ep, &e)?;
            }
        }
        self.next += 1;
        self.stats.appended += 1;
        self.inflight.push_back(e);
        Ok(n)
    }

    fn sge(&self, e: &Inflight) -> Sge {
        Sge {
            addr: self.log.addr + self.cfg.geometry.offset(e.index) as u64,
            length: e.len as u32,
            lkey: self.log.lkey,
        }
    }

    fn post_switch(&mut self, ep: &mut Endpoint, sp: SwitchPath, e: &Inflight) -> Result<(), MuError> {
        let op = SendOp::Write {
            remote_addr: self.cfg.geometry.offset(e.index) as u64,
            rkey: sp.vrkey,
        };
        ep.post_send(sp.qpn, SendWr::new(e.index, op, self.sge(e)))?;
        self.stats.switch_writes += 1;
        Ok(())
    }

    fn post_unicast(&mut self, ep: &mut Endpoint, e: &Inflight) -> Result<(), MuError> {
        let live = self.live.iter().filter(|l| **l).count();
        if live < self.cfg.f {
            return Err(MuError::NoQuorum {
                live,
                f: self.cfg.f,
            });
        }
        let sge = self.sge(e);
        for (i, r) in self.replicas.iter().enumerate() {
            if !self.live[i] || e.acks & (1 << i) != 0 {
                continue;
            }
            let op = SendOp::Write {
                remote_addr: r.va + self.cfg.geometry.offset(e.index) as u64,
                rkey: r.rkey,
            };
            ep.post_send(r.qpn, SendWr::new(e.index, op, sge))?;
            self.stats.unicast_writes += 1;
        }
        Ok(())
    }

    /// Installs a (new) switch path: later entries go through the switch.
    pub fn attach_switch(&mut self, sp: SwitchPath) {
        self.switch = Some(sp);
        self.retry_at = None;
    }

    /// The earliest instant at which `poll` has timed work (switch timeout, retry).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let t = self
            .inflight
            .iter()
            .find(|e| e.via_switch && !e.done)
            .filter(|_| self.switch.is_some())
            .map(|e| e.posted_at + self.cfg.switch_timeout);
        t.into_iter().chain(self.retry_at).min()
    }

    fn fall_back(&mut self, ep: &mut Endpoint, now: Instant, timeout: bool) -> Result<(), MuError> {
        let Some(sp) = self.switch.take() else {
            return Ok(());
        };
        // Stop the switch QP: its outstanding WRITEs flush (their completions are ignored).
        let _ = ep.modify_qp(
            sp.qpn,
            &QpAttr {
                state: Some(QpState::Err),
                ..Default::default()
            },
        );
        self.stats.fallbacks += 1;
        self.events.push_back(LeaderEvent::FellBack { timeout });
        self.retry_at = Some(now + self.cfg.switch_retry);
        let pending: Vec<Inflight> = self
            .inflight
            .iter()
            .filter(|e| e.via_switch && !e.done)
            .cloned()
            .collect();
        for e in pending {
            self.post_unicast(ep, &e)?;
            self.stats.resent += 1;
            if let Some(x) = self.inflight.iter_mut().find(|x| x.index == e.index) {
                x.via_switch = false;
                x.posted_at = now;
            }
        }
        Ok(())
    }

    /// Processes completions and timers; call after the endpoint handled frames or when
    /// `poll_timeout` is due. Events come out of `poll_event`.
    pub fn poll(&mut self, ep: &mut Endpoint, now: Instant) -> Result<(), MuError> {
        loop {
            let wcs = ep.poll_cq(self.cq, 256)?;
            if wcs.is_empty() {
                break;
            }
            for wc in wcs {
                let from_switch = self.switch.is_some_and(|s| s.qpn == wc.qp_num);
                if from_switch {
                    if wc.status == WcStatus::Success {
                        if let Some(e) = self.inflight.iter_mut().find(|e| e.index == wc.wr_id) {
                            if e.via_switch {
                                e.done = true;
                            }
                        }
                    } else {
                        self.fall_back(ep, now, false)?;
                    }
                    continue;
                }
                let Some(ri) = self.replicas.iter().position(|r| r.qpn == wc.qp_num) else {
                    // A completion of a switch QP given up earlier.
                    continue;
                };
                if wc.status != WcStatus::Success {
                    if self.live[ri] {
                        self.live[ri] = false;
                        self.events
                            .push_back(LeaderEvent::ReplicaLost(self.replicas[ri].id));
                    }
                    continue;
                }
                let f = self.cfg.f;
                if let Some(e) = self.inflight.iter_mut().find(|e| e.index == wc.wr_id) {
                    e.acks |= 1 << ri;
                    if !e.via_switch && e.acks.count_ones() as usize >= f {
                        e.done = true;
                    }
                }
            }
        }
        if let Some(first) = self.inflight.iter().find(|e| e.via_switch && !e.done) {
            if self.switch.is_some() && now >= first.posted_at + self.cfg.switch_timeout {
                self.fall_back(ep, now, true)?;
            }
        }
        if self.retry_at.is_some_and(|t| now >= t) {
            self.retry_at = None;
            self.events.push_back(LeaderEvent::SwitchRetryDue);
        }
        let before = self.commit;
        while self.inflight.front().is_some_and(|e| e.done) {
            self.inflight.pop_front();
            self.commit += 1;
        }
        if self.commit != before {
            self.stats.committed += self.commit - before;
            self.events.push_back(LeaderEvent::Committed(self.commit));
        }
        Ok(())
    }
}

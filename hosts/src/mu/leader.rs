//! The leader of the replicated log. It owns a log MR on its endpoint (its own copy of every
//! entry, which is also what it WRITEs from) and QPs: one to the P4CE switch's BCast QP (the
//! switch path, optional) and one per replica (the unicast path, exactly Mu).
//!
//! - Switch path: entry `n` is one RDMA WRITE to virtual address `offset(n)` with the group's
//!   virtual R_key; its completion means the switch forwarded the f-th replica ACK: committed.
//! - Unicast path: one WRITE per live replica to `va + offset(n)`; the leader counts the
//!   completions itself and commits at f.
//! - Fallback (§III-A of the P4CE paper): a NAK the switch forwards (a replica missed a
//!   packet: the switch QP's NAK sequence error counter rose, stale NAKs included, which the
//!   RC requester itself ignores once the other replicas' ACKs moved it past that PSN), a
//!   failed completion on the switch QP, or an entry on the switch path older than
//!   `switch_timeout` moves the QP to the error state, re-sends every uncommitted entry by
//!   unicast and keeps replicating by unicast; every live replica is probed at once and
//!   re-sent the switch-path entries it lacks (a replica that missed a scattered WRITE
//!   lacks the entries after it, committed ones too). After `switch_retry` the leader asks
//!   (through [`LeaderEvent::SwitchRetryDue`]) for a new switch path, which
//!   [`Leader::attach_switch`] installs; a path that fails again before carrying a ring's
//!   worth of entries doubles that wait (errors keep coming: stay on unicast longer).
//! - The switch aggregates ACKs of [`SwitchPath::psn_window`] PSNs at a time (p4ce.p4's
//!   NumRecv: 256 per group, §IV-C): on the switch path the leader keeps at most that many
//!   un-acknowledged packets in flight (an entry takes one packet per path MTU).
//!
//! - Joining ([`super::join`]): [`Leader::add_replica`] takes a replica that was absent or
//!   lost; a probe finds what it lacks, the leader re-WRITEs it from its ring or asks its
//!   owner for a snapshot ([`LeaderEvent::SnapshotNeeded`], [`Leader::offer_snapshot`]) and
//!   holds the window meanwhile; [`LeaderEvent::Joined`] when it is live again.
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
    /// Un-acknowledged packets (PSNs) the switch can aggregate at a time: a later PSN with
    /// the same counter cell would reset an earlier one's count.
    pub psn_window: u32,
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
    /// Read every replica's status word (applied count, heartbeat) this often, and re-send
    /// what a replica that stopped progressing misses (Mu's catch-up).
    pub probe_every: Duration,
}

/// Something the leader tells its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderEvent {
    /// Entries below this index are committed.
    Committed(u64),
    /// The switch path failed (error completion or timeout); the leader replicates by
    /// unicast now.
    FellBack {
        /// Why: `true` for a timeout, `false` for a NAK the switch forwarded or an error
        /// completion.
        timeout: bool,
    },
    /// A replica's QP failed: it is left out of unicast replication.
    ReplicaLost(u16),
    /// Time to try the switch path again ([`Leader::attach_switch`]).
    SwitchRetryDue,
    /// A joining replica lacks entries the log no longer holds: its owner makes a snapshot
    /// of entries `[from, to)` and offers it ([`Leader::offer_snapshot`]); the window holds
    /// at `to` meanwhile ([`super::join`]).
    SnapshotNeeded {
        /// The replica.
        id: u16,
        /// Its applied count.
        from: u64,
        /// Where the snapshot ends and the log takes over.
        to: u64,
    },
    /// A joining replica has every entry up to the log's end (or is being sent the rest):
    /// it is replicated to from now on.
    Joined {
        /// The replica.
        id: u16,
        /// Its applied count when it joined (from the log or from a snapshot).
        from: u64,
    },
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
    /// Status probes (RDMA READs) posted.
    pub probes: u64,
    /// Entries re-sent to a lagging replica.
    pub caught_up: u64,
    /// Replicas that joined the running log.
    pub joined: u64,
    /// Snapshots asked for (joining replicas more than a lap behind).
    pub snapshots: u64,
}

/// wr_id bit marking a status probe (the low bits are the replica index).
const PROBE: u64 = 1 << 63;
/// wr_id bit marking a catch-up WRITE (its completion is not an acknowledgement of an
/// in-flight entry's quorum, though it is one of that replica's NIC).
const CATCH_UP: u64 = 1 << 62;
/// wr_id bit marking the WRITE of a join offer (the low bits are the replica index).
const OFFER: u64 = 1 << 61;
/// Probe periods a joining replica has to install its snapshot before the leader gives it
/// up (and stops holding the window for it).
const JOIN_PATIENCE: u32 = 200;
/// The switch retry waits at most this many times `switch_retry` (see `retry_delay`).
const MAX_RETRY_BACKOFF: u32 = 64;

/// Where a joining replica is ([`super::join`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Join {
    /// Waiting for its applied count.
    Probing,
    /// Asked for a snapshot ending at `to` at `at`; the window holds at `to`.
    Snapshot { to: u64, at: Instant },
}

#[derive(Debug, Clone)]
struct Inflight {
    index: u64,
    len: usize,
    posted_at: Instant,
    via_switch: bool,
    /// Packets (PSNs) it took on the switch path.
    psns: u32,
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
    /// The switch QP's path MTU (while `switch` is set).
    switch_mtu: usize,
    /// The switch QP's NAK sequence error count when it was attached.
    switch_naks: u64,
    replicas: Vec<ReplicaPath>,
    live: Vec<bool>,
    next: u64,
    commit: u64,
    inflight: VecDeque<Inflight>,
    retry_at: Option<Instant>,
    /// The wait before the next switch retry: `switch_retry`, doubled (up to
    /// [`MAX_RETRY_BACKOFF`] times) each time a switch path failed before carrying a ring's
    /// worth of entries ("if no further errors are received", §III-A).
    retry_delay: Duration,
    /// Entries posted on the current switch path.
    switch_carried: u64,
    events: VecDeque<LeaderEvent>,
    stats: LeaderStats,
    probe_at: Option<Instant>,
    /// Per replica: applied count at the last probe and when it last changed.
    seen_applied: Vec<(u64, Instant)>,
    probe_pending: Vec<bool>,
    /// Per replica: joining (not live yet), and how far.
    joining: Vec<Option<Join>>,
    /// Per replica: it refused this leader's access (it follows another leader).
    fenced: Vec<bool>,
    /// Per replica: after a fallback, re-send what its next probe shows it lacks below
    /// `resync_to` (the entries the switch path carried).
    resync: Vec<bool>,
    resync_to: u64,
}

impl Leader {
    /// A leader writing from `log` (an MR of `cfg.geometry.len()` bytes on the endpoint),
    /// whose QPs complete into `cq`. `replicas` are the unicast paths; it replicates by
    /// unicast until [`Leader::attach_switch`] gives it a P4CE path.
    pub fn new(
        cfg: LeaderConfig,
        log: MrInfo,
        cq: CqHandle,
        replicas: Vec<ReplicaPath>,
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
        let need = super::slot::status_area(cfg.geometry, replicas.len());
        if log.len < need {
            return Err(MuError::Config(format!(
                "leader log MR of {} bytes, {need} needed (log + status words)",
                log.len
            )));
        }
        let live = vec![true; replicas.len()];
        let n = replicas.len();
        Ok(Leader {
            probe_at: Some(Instant::ZERO + cfg.probe_every),
            seen_applied: vec![(0, Instant::ZERO); n],
            probe_pending: vec![false; n],
            joining: vec![None; n],
            fenced: vec![false; n],
            resync: vec![false; n],
            resync_to: 0,
            cfg,
            log,
            cq,
            switch: None,
            switch_mtu: 0,
            switch_naks: 0,
            replicas,
            live,
            next: 0,
            commit: 0,
            inflight: VecDeque::new(),
            retry_at: None,
            retry_delay: cfg.switch_retry,
            switch_carried: 0,
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

    /// Whether `append` would accept an entry now: the window has room, and the entry's
    /// slot is free on every live replica (it applied the entry a lap before, as far as the
    /// last status probe says: Mu's log recycling).
    /// On the switch path, the switch must also have room for a full slot's packets
    /// among the PSNs it aggregates ([`SwitchPath::psn_window`]).
    pub fn can_append(&self) -> bool {
        self.inflight.len() < self.cfg.max_outstanding
            && self.next < self.min_applied() + self.cfg.geometry.slots as u64
            && self.switch.is_none_or(|sp| {
                self.switch_psns() + self.packets(self.cfg.geometry.slot_size) <= sp.psn_window
            })
    }

    /// Packets (PSNs) a WRITE of `len` bytes takes on the switch path.
    fn packets(&self, len: usize) -> u32 {
        len.div_ceil(self.switch_mtu.max(1)).max(1) as u32
    }

    /// Un-acknowledged packets in flight on the switch path.
    fn switch_psns(&self) -> u32 {
        self.inflight
            .iter()
            .filter(|e| e.via_switch && !e.done)
            .map(|e| e.psns)
            .sum()
    }

    /// The lowest applied count any live replica reported.
    fn min_applied(&self) -> u64 {
        let holds = self.joining.iter().filter_map(|j| match j {
            Some(Join::Snapshot { to, .. }) => Some(*to),
            _ => None,
        });
        self.seen_applied
            .iter()
            .zip(&self.live)
            .filter(|(_, l)| **l)
            .map(|((a, _), _)| *a)
            .chain(holds)
            .min()
            .unwrap_or(self.next)
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
    pub fn append(
        &mut self,
        ep: &mut Endpoint,
        now: Instant,
        value: &[u8],
    ) -> Result<u64, MuError> {
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
            psns: 0,
            acks: 0,
            done: false,
        };
        let switched = match self.switch {
            Some(sp) => self.post_switch(ep, sp, &e).is_ok(),
            None => false,
        };
        if switched {
            e.via_switch = true;
            e.psns = self.packets(len);
            self.switch_carried += 1;
        } else {
            // No switch path, or its QP failed without a completion telling (its connection
            // was torn down): then fall back first.
            self.fall_back(ep, now, false)?;
            self.post_unicast(ep, &e)?;
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

    fn post_switch(
        &mut self,
        ep: &mut Endpoint,
        sp: SwitchPath,
        e: &Inflight,
    ) -> Result<(), MuError> {
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
            if ep.post_send(r.qpn, SendWr::new(e.index, op, sge)).is_err() {
                // Its QP failed (no completion said so yet): the replica is lost.
                self.live[i] = false;
                self.events.push_back(LeaderEvent::ReplicaLost(r.id));
                continue;
            }
            self.stats.unicast_writes += 1;
        }
        Ok(())
    }

    /// Stops replicating to replica `id` (its heartbeat stopped): it no longer holds the
    /// window back; [`LeaderEvent::ReplicaLost`] follows. Returns whether it was live.
    pub fn mark_lost(&mut self, id: u16) -> bool {
        let Some(ri) = self.replicas.iter().position(|r| r.id == id) else {
            return false;
        };
        if !self.live[ri] {
            return false;
        }
        self.live[ri] = false;
        self.events.push_back(LeaderEvent::ReplicaLost(id));
        true
    }

    /// Joins replica `path.id` to the running log ([`super::join`]): a replica absent when
    /// the leader started, or one lost since and reconnected (its new connection replaces the
    /// old). It is probed at the next [`Leader::poll`] and is not live (it counts for no
    /// quorum) until [`LeaderEvent::Joined`]. The caller makes sure it follows this leader
    /// (it is no longer counted as fenced).
    pub fn add_replica(&mut self, path: ReplicaPath) -> Result<(), MuError> {
        let known = self.replicas.iter().position(|r| r.id == path.id);
        let n = self.replicas.len() + usize::from(known.is_none());
        let need = super::slot::status_area(self.cfg.geometry, n);
        if self.log.len < need || n > 32 {
            return Err(MuError::Config(format!(
                "leader log MR of {} bytes for {n} replicas ({need} needed, 32 at most)",
                self.log.len
            )));
        }
        let ri = match known {
            Some(ri) => {
                self.replicas[ri] = path;
                ri
            }
            None => {
                self.replicas.push(path);
                self.live.push(false);
                self.seen_applied.push((0, Instant::ZERO));
                self.probe_pending.push(false);
                self.joining.push(None);
                self.fenced.push(false);
                self.resync.push(false);
                self.replicas.len() - 1
            }
        };
        self.live[ri] = false;
        self.probe_pending[ri] = false;
        // Asked again, it follows this leader (its owner made sure): no longer fenced.
        self.fenced[ri] = false;
        self.joining[ri] = Some(Join::Probing);
        self.probe_at = Some(Instant::ZERO);
        Ok(())
    }

    /// Whether replica `id` refused this leader's access (a remote access error: it took
    /// write permission away, following another leader): Mu's sign that this leader was
    /// deposed; it must not be asked to join again.
    pub fn fenced(&self, id: u16) -> bool {
        self.replicas
            .iter()
            .position(|r| r.id == id)
            .is_some_and(|ri| self.fenced[ri])
    }

    /// Replica ids joining (probed or waiting for a snapshot), not yet live.
    pub fn joining_replicas(&self) -> Vec<u16> {
        self.replicas
            .iter()
            .zip(&self.joining)
            .filter(|(_, j)| j.is_some())
            .map(|(r, _)| r.id)
            .collect()
    }

    /// Offers replica `id` the snapshot it was asked for ([`LeaderEvent::SnapshotNeeded`]):
    /// `mr` (remote-readable, on this endpoint) holds the snapshot's `len` bytes from offset
    /// `OFFER_LEN`; its first `OFFER_LEN` bytes take the offer, which is WRITten into the
    /// replica's join word. Keep the MR until the replica joined or was lost.
    pub fn offer_snapshot(
        &mut self,
        ep: &mut Endpoint,
        id: u16,
        mr: MrInfo,
        len: u64,
    ) -> Result<(), MuError> {
        use super::join::{join_word, JoinOffer, OFFER_LEN};
        let Some(ri) = self.replicas.iter().position(|r| r.id == id) else {
            return Err(MuError::Config(format!("no replica {id}")));
        };
        let Some(Join::Snapshot { to, .. }) = self.joining[ri] else {
            return Err(MuError::Config(format!("replica {id} needs no snapshot")));
        };
        if (mr.len as u64) < OFFER_LEN as u64 + len {
            return Err(MuError::Config("snapshot MR too small".into()));
        }
        let offer = JoinOffer {
            from: self.seen_applied[ri].0,
            to,
            va: mr.addr + OFFER_LEN as u64,
            len,
            rkey: mr.rkey,
        };
        ep.mr_bytes_mut(mr.lkey)?[..OFFER_LEN].copy_from_slice(&offer.encode());
        let r = self.replicas[ri];
        let sge = Sge {
            addr: mr.addr,
            length: OFFER_LEN as u32,
            lkey: mr.lkey,
        };
        let op = SendOp::Write {
            remote_addr: r.va + join_word(self.cfg.geometry) as u64,
            rkey: r.rkey,
        };
        ep.post_send(r.qpn, SendWr::new(OFFER | ri as u64, op, sge))?;
        Ok(())
    }

    /// The applied count in replica `ri`'s status word, as the last probe left it.
    fn probed(&self, ep: &Endpoint, ri: usize) -> Result<Option<u64>, MuError> {
        let off = self.cfg.geometry.len() + 16 * ri;
        let word = ep.mr_bytes(self.log.lkey)?;
        Ok(word.get(off..off + 8).map(|b| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        }))
    }

    /// A joining replica's status word arrived (see [`super::join`]).
    fn on_join_probe(&mut self, ep: &mut Endpoint, ri: usize, now: Instant) -> Result<(), MuError> {
        let Some(applied) = self.probed(ep, ri)? else {
            return Ok(());
        };
        let id = self.replicas[ri].id;
        let slots = self.cfg.geometry.slots as u64;
        if applied > self.next {
            // It holds entries this leader never appended (another leader's): not ours to fix.
            self.joining[ri] = None;
            self.events.push_back(LeaderEvent::ReplicaLost(id));
            return Ok(());
        }
        if self.next - applied <= slots {
            self.joining[ri] = None;
            self.live[ri] = true;
            self.seen_applied[ri] = (applied, now);
            let to = self.next;
            self.rewrite(ep, ri, applied, to)?;
            self.stats.joined += 1;
            self.events
                .push_back(LeaderEvent::Joined { id, from: applied });
            return Ok(());
        }
        match self.joining[ri] {
            Some(Join::Snapshot { at, .. }) => {
                if now >= at + self.cfg.probe_every * JOIN_PATIENCE {
                    // It never installed the snapshot: stop holding the window for it.
                    self.joining[ri] = None;
                    self.events.push_back(LeaderEvent::ReplicaLost(id));
                }
            }
            _ => {
                // Entries from the commit point on are in the ring (at most a window of
                // them); the rest is the snapshot.
                let to = self.commit.max(applied + 1);
                self.seen_applied[ri] = (applied, now);
                self.joining[ri] = Some(Join::Snapshot { to, at: now });
                self.stats.snapshots += 1;
                self.events.push_back(LeaderEvent::SnapshotNeeded {
                    id,
                    from: applied,
                    to,
                });
            }
        }
        Ok(())
    }

    /// Continues a log whose entries before `next` are already in this leader's log MR (a
    /// new leader after recovery adopted them): they count as committed, the next append is
    /// entry `next`, and replicas that lack some of them are caught up by the probes. Only
    /// before the first append; refused after.
    pub fn resume_at(&mut self, next: u64) -> Result<(), MuError> {
        if self.next != 0 || !self.inflight.is_empty() {
            return Err(MuError::Config("resume_at after appends".into()));
        }
        self.next = next;
        self.commit = next;
        Ok(())
    }

    /// Installs a (new) switch path on the endpoint's QP `sp.qpn`: later entries go through
    /// the switch. Refused (the leader stays on unicast) when one entry alone would take
    /// more packets at the QP's path MTU than the switch aggregates.
    pub fn attach_switch(&mut self, ep: &Endpoint, sp: SwitchPath) -> Result<(), MuError> {
        let mtu = ep.qp_path_mtu(sp.qpn)?;
        let need = self.cfg.geometry.slot_size.div_ceil(mtu.max(1));
        if need > sp.psn_window as usize {
            return Err(MuError::Config(format!(
                "an entry of up to {} bytes takes {need} packets of {mtu} bytes; the switch \
                 aggregates {} PSNs at a time",
                self.cfg.geometry.slot_size, sp.psn_window
            )));
        }
        self.switch_naks = ep.qp_seq_naks(sp.qpn)?;
        self.switch_mtu = mtu;
        self.switch_carried = 0;
        self.switch = Some(sp);
        self.retry_at = None;
        Ok(())
    }

    /// The earliest instant at which `poll` has timed work (switch timeout, retry).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let t = self
            .inflight
            .iter()
            .find(|e| e.via_switch && !e.done)
            .filter(|_| self.switch.is_some())
            .map(|e| e.posted_at + self.cfg.switch_timeout);
        t.into_iter()
            .chain(self.retry_at)
            .chain(self.probe_at)
            .min()
    }

    /// Leaves the switch path on purpose (its group is about to be rebuilt, e.g. with a
    /// replica that joined): what is in flight on it is re-sent by unicast, and new entries
    /// go by unicast until [`Leader::attach_switch`].
    pub fn leave_switch(&mut self, ep: &mut Endpoint, now: Instant) -> Result<(), MuError> {
        self.switch_to_unicast(ep, now)?;
        Ok(())
    }

    fn fall_back(&mut self, ep: &mut Endpoint, now: Instant, timeout: bool) -> Result<(), MuError> {
        // Entries below the first one re-sent by unicast went by the switch path alone.
        let resync_to = self
            .inflight
            .iter()
            .find(|e| e.via_switch && !e.done)
            .map_or(self.next, |e| e.index);
        if !self.switch_to_unicast(ep, now)? {
            return Ok(());
        }
        self.stats.fallbacks += 1;
        self.events.push_back(LeaderEvent::FellBack { timeout });
        self.retry_delay = if self.switch_carried < self.cfg.geometry.slots as u64 {
            (self.retry_delay * 2).min(self.cfg.switch_retry * MAX_RETRY_BACKOFF)
        } else {
            self.cfg.switch_retry
        };
        self.retry_at = Some(now + self.retry_delay);
        // A replica that missed a scattered WRITE NAKed (and dropped) everything after it:
        // probe every replica now and re-send what it lacks (see `on_probe`).
        self.resync_to = resync_to;
        for (i, live) in self.live.iter().enumerate() {
            self.resync[i] = *live;
        }
        self.probe_at = Some(now);
        Ok(())
    }

    /// Whether the switch forwarded a NAK since the switch path was attached (§III-A: a
    /// replica lost or reordered a packet; the leader reverts to unicast).
    fn switch_nak_seen(&self, ep: &Endpoint) -> bool {
        self.switch
            .is_some_and(|sp| ep.qp_seq_naks(sp.qpn).is_ok_and(|n| n > self.switch_naks))
    }

    /// Stops the switch path and re-sends its uncommitted entries by unicast; false if
    /// there was no switch path.
    fn switch_to_unicast(&mut self, ep: &mut Endpoint, now: Instant) -> Result<bool, MuError> {
        let Some(sp) = self.switch.take() else {
            return Ok(false);
        };
        // Stop the switch QP: its outstanding WRITEs flush (their completions are ignored).
        let _ = ep.modify_qp(
            sp.qpn,
            &QpAttr {
                state: Some(QpState::Err),
                ..Default::default()
            },
        );
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
        Ok(true)
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
                if wc.wr_id & PROBE != 0 {
                    self.probe_pending[ri] = false;
                    if wc.status == WcStatus::Success {
                        if self.joining[ri].is_some() {
                            self.on_join_probe(ep, ri, now)?;
                        } else {
                            self.on_probe(ep, ri, now)?;
                        }
                        continue;
                    }
                }
                if wc.wr_id & OFFER != 0 && wc.status == WcStatus::Success {
                    continue;
                }
                if wc.status != WcStatus::Success {
                    if wc.status == WcStatus::RemAccessErr {
                        self.fenced[ri] = true;
                    }
                    if self.joining[ri].take().is_some() {
                        self.events
                            .push_back(LeaderEvent::ReplicaLost(self.replicas[ri].id));
                    }
                    if self.live[ri] {
                        self.live[ri] = false;
                        self.events
                            .push_back(LeaderEvent::ReplicaLost(self.replicas[ri].id));
                    }
                    continue;
                }
                let f = self.cfg.f;
                let index = wc.wr_id & !CATCH_UP;
                if let Some(e) = self.inflight.iter_mut().find(|e| e.index == index) {
                    e.acks |= 1 << ri;
                    if !e.via_switch && e.acks.count_ones() as usize >= f {
                        e.done = true;
                    }
                }
            }
        }
        if self.switch_nak_seen(ep) {
            self.fall_back(ep, now, false)?;
        }
        if let Some(first) = self.inflight.iter().find(|e| e.via_switch && !e.done) {
            if self.switch.is_some() && now >= first.posted_at + self.cfg.switch_timeout {
                self.fall_back(ep, now, true)?;
            }
        }
        // Probe on a timer (stalled replicas), and early when half the log is in use.
        let half = self.cfg.geometry.slots as u64 / 2;
        if self.probe_at.is_some_and(|t| now >= t) || self.next >= self.min_applied() + half {
            self.probe_at = Some(now + self.cfg.probe_every);
            self.post_probes(ep)?;
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

    fn post_probes(&mut self, ep: &mut Endpoint) -> Result<(), MuError> {
        let g = self.cfg.geometry;
        for (i, r) in self.replicas.iter().enumerate() {
            if !(self.live[i] || self.joining[i].is_some()) || self.probe_pending[i] {
                continue;
            }
            let sge = Sge {
                addr: self.log.addr + (g.len() + 16 * i) as u64,
                length: 16,
                lkey: self.log.lkey,
            };
            let op = SendOp::Read {
                remote_addr: r.va + g.len() as u64,
                rkey: r.rkey,
            };
            ep.post_send(r.qpn, SendWr::new(PROBE | i as u64, op, sge))?;
            self.probe_pending[i] = true;
            self.stats.probes += 1;
        }
        Ok(())
    }

    /// A replica's status word arrived: if it made no progress since the previous probe and
    /// lags what was sent, re-send what it misses by unicast (within one lap of the log).
    fn on_probe(&mut self, ep: &mut Endpoint, ri: usize, now: Instant) -> Result<(), MuError> {
        let g = self.cfg.geometry;
        let Some(applied) = self.probed(ep, ri)? else {
            return Ok(());
        };
        if std::mem::take(&mut self.resync[ri])
            && applied < self.resync_to
            && self.next - applied <= g.slots as u64
        {
            // After a fallback: what the switch path carried and this replica lacks.
            self.rewrite(ep, ri, applied, self.resync_to)?;
        }
        let (prev, since) = self.seen_applied[ri];
        if applied != prev {
            self.seen_applied[ri] = (applied, now);
            return Ok(());
        }
        let stalled = applied < self.commit && now >= since + self.cfg.probe_every;
        if !stalled {
            return Ok(());
        }
        // Re-send at most once per probe period.
        self.seen_applied[ri].1 = now;
        if self.next - applied > g.slots as u64 {
            // More than a lap behind: the slots were reused; only a state transfer helps.
            if self.live[ri] {
                self.live[ri] = false;
                self.events
                    .push_back(LeaderEvent::ReplicaLost(self.replicas[ri].id));
            }
            return Ok(());
        }
        let to = self.next;
        self.rewrite(ep, ri, applied, to)
    }

    /// Re-WRITEs entries `from..to` from the leader's log to replica `ri` (all within one
    /// lap of the ring).
    fn rewrite(&mut self, ep: &mut Endpoint, ri: usize, from: u64, to: u64) -> Result<(), MuError> {
        let g = self.cfg.geometry;
        let r = self.replicas[ri];
        for idx in from..to {
            let buf = ep.mr_bytes(self.log.lkey)?;
            let o = g.offset(idx);
            // The entry's length from its header in the leader's own log.
            let Some(h) = buf.get(o + 8..o + 12) else {
                continue;
            };
            let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize
                + super::slot::HEADER
                + super::slot::CANARY;
            let sge = Sge {
                addr: self.log.addr + o as u64,
                length: len.min(g.slot_size) as u32,
                lkey: self.log.lkey,
            };
            let op = SendOp::Write {
                remote_addr: r.va + o as u64,
                rkey: r.rkey,
            };
            ep.post_send(r.qpn, SendWr::new(CATCH_UP | idx, op, sge))?;
            self.stats.caught_up += 1;
        }
        Ok(())
    }
}

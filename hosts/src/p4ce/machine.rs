//! A P4CE node, the leader or a replica, as an I/O-free state machine: frames go in and out
//! through its [`Endpoint`], time is passed in, and nothing here owns a thread, a socket or a
//! clock. The namespace lab runs one on its own thread over AF_PACKET in wall-clock time
//! ([`super::thread`]); the in-memory lab runs the same one as a host application of the
//! in-memory driver in virtual time (`labs::p4ce::mem`).
//!
//! A driver feeds the node what arrives ([`Node::handle_frame`]), lets it run a turn
//! ([`Node::poll`]: due endpoint timers, then the role's work), sends what the endpoint has
//! to send ([`Node::poll_transmit`]) and comes back at [`Node::next_wakeup`] at the latest.
//!
//! - A replica answers ConnectRequests (the leader's on its unicast QP, the switch agent's on
//!   its switch QP, both with its log in the reply) and applies entries in order; offered a
//!   snapshot in its join word, it READs and installs it.
//! - The leader connects to every replica through RDMA CM, builds its [`Leader`], asks the
//!   switch agent for the group (P4CE mode; again after each fallback, when the leader's
//!   retry is due), appends what it is given (its queue, one value over and over for the
//!   bench, or [`Node::try_append`]) and measures commit latencies ([`Meter`]). A replica
//!   missing when the log starts (f answered) or lost since is asked again every
//!   millisecond and joins the running log when it answers ([`crate::mu::join`]: the ring's
//!   entries re-written, or first a snapshot of the node's digests and recorded values that
//!   the replica READs); in P4CE mode the leader then asks the agent for the group again,
//!   with it. Not a replica that fenced the leader off (a remote access error) or refused
//!   it because it follows another leader ([`FOLLOWS_ANOTHER`]). A node that took over
//!   leads on its mesh QPs: its fail-over reconnects the mesh to a replica that comes back,
//!   and once that replica follows it ([`Failover::joiners`]) it joins the same way.
//! - With fail-over configured ([`NodeFailover`]), every node also bumps its heartbeat and
//!   each replica runs [`Failover`] (mesh connections, heartbeat READs, view changes); a
//!   replica that recovers the log becomes the leader (a take-over: a fresh QP towards the
//!   switch and, in P4CE mode, a request for the group at once).

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};

use dataplane::Nanos;
use rdma::verbs::{
    AccessFlags, CmEvent, ConnId, CqHandle, Endpoint, Instant, MrInfo, PdHandle, SendOp, SendWr,
    Sge,
};

use super::bench::Meter;
use super::failover::{
    offer_heartbeat, Failover, FailoverSetup, TakeOver, Watched, FOLLOWS_ANOTHER,
};
use super::integrity::{digest, stamp};
use super::node::{
    accept_on, build_node, host_ip, leader_request_group, replica_accept, replica_offer, reset_qp,
    switch_path_from_reply, NodeSpec,
};
use super::snapshot;
use super::wire::ReplicaOffer;
use super::{NodeError, REPLICA_CM_PORT, SWITCH_IP};
use crate::mu::join::OFFER_LEN;
use crate::mu::{
    JoinOffer, Leader, LeaderConfig, LeaderEvent, LeaderStats, LogGeometry, Path, Replica,
    ReplicaPath,
};

/// Called by the leader when a replica is lost (the lab tells the switch's agent).
pub type LostHook = Box<dyn Fn(u16) + Send>;

/// How long the leader waits before it asks the replicas again after every unicast
/// connection attempt failed.
const UNICAST_RETRY: Nanos = Nanos::from_millis(20);

/// The same once the log runs without some replicas: a missing replica is asked again this
/// soon after an attempt failed (one ConnectRequest per CM response timeout reaches it
/// meanwhile), so it joins soon after it is back.
const REJOIN_RETRY: Nanos = Nanos::from_millis(1);

/// The largest snapshot a joining replica READs (bytes).
const MAX_SNAPSHOT: u64 = 1 << 30;

/// wr_id of a joining replica's snapshot READ (the snapshot's trailer says it arrived; its
/// MR is freed once the READ completed).
const JOIN_READ: u64 = 1 << 53;

/// Snapshot MRs a replica keeps at most while their READs are outstanding (more only when
/// READs never complete: a QP reset under them).
const MAX_RETIRED: usize = 4;

/// CM events about connections a node did not open that it keeps for its owner
/// ([`Node::unclaimed`]) at most.
const MAX_UNCLAIMED: usize = 256;

/// What a node is and does.
pub struct NodeConfig {
    /// Its spec (id, geometry, ...).
    pub spec: NodeSpec,
    /// The leader's settings (None: a replica).
    pub leader: Option<LeaderSetup>,
    /// Keep every applied value (replicas) and every appended one (the leader).
    pub record: bool,
    /// Heartbeats and leader fail-over (None: the first leader leads for good).
    pub failover: Option<NodeFailover>,
}

/// A node's fail-over part of a [`NodeConfig`].
pub struct NodeFailover {
    /// Timeout and the log settings of a new leader.
    pub setup: FailoverSetup,
    /// The path a new leader replicates on.
    pub mode: Path,
    /// Told when a replica is lost while this node leads.
    pub on_lost: Option<LostHook>,
}

/// The leader's part of a [`NodeConfig`].
pub struct LeaderSetup {
    /// Log settings.
    pub cfg: LeaderConfig,
    /// P4CE or unicast.
    pub mode: Path,
    /// `(IP, id)` of every replica.
    pub replicas: Vec<(Ipv4Addr, u16)>,
    /// Told when a replica is lost.
    pub on_lost: Option<LostHook>,
}

/// The leader's state.
pub struct LeaderState {
    /// The log (None until every unicast connection is up).
    pub leader: Option<Leader>,
    /// P4CE or unicast.
    pub mode: Path,
    /// Values waiting to be appended.
    pub queue: VecDeque<Vec<u8>>,
    /// Appended again and again while set (the bench).
    pub repeat: Option<Vec<u8>>,
    /// Commit latencies of what is appended.
    pub meter: Option<Meter>,
    /// Values appended (when recording), by index; a new leader starts with the log it
    /// recovered.
    pub appended: Vec<Vec<u8>>,
    /// Digests of every entry appended, by index, recording or not
    /// ([`crate::p4ce::integrity`]); a new leader starts with those it applied.
    pub digests: Vec<u64>,
    /// Leader events so far (commits left out).
    pub events: Vec<LeaderEvent>,
    /// Why the switch agent refused the leader's requests for the group (or did not
    /// answer), in order.
    pub switch_refusals: Vec<String>,
    /// When the switch path last came up.
    pub switch_up_at: Option<Nanos>,
    setup: LeaderSetup,
    pending: Vec<(ConnId, usize)>,
    paths: Vec<Option<ReplicaPath>>,
    /// Per replica: where its heartbeat counter is, from its answer (fail-over on).
    heartbeats: Vec<Option<(u64, u32)>>,
    switch_cm: Option<ConnId>,
    cm_retry_at: Option<Nanos>,
    uni_retry_at: Option<Nanos>,
    record: bool,
    /// Snapshots offered to joining replicas, by replica id (deregistered once it joined).
    snapshots: Vec<(u16, MrInfo)>,
    /// Lost replicas are asked to join again on the unicast QPs (the first leader, which
    /// has one per replica). A node that took over leads on its mesh QPs: its fail-over
    /// reconnects them and offers the replicas that follow it ([`Failover::joiners`]).
    rejoin: bool,
    /// Per replica (as `setup.replicas`): it refused this leader because it follows
    /// another ([`FOLLOWS_ANOTHER`]); it is not asked again.
    refused: Vec<bool>,
    /// Heartbeats of replicas joining a node that took over, watched once they joined.
    joiner_watch: Vec<Watched>,
}

impl LeaderState {
    /// The leader's CM connection to the switch agent (P4CE mode, once asked).
    pub fn switch_conn(&self) -> Option<ConnId> {
        self.switch_cm
    }

    /// Forgets the CM connection to the switch agent and returns it (to close it).
    pub fn take_switch_conn(&mut self) -> Option<ConnId> {
        self.switch_cm.take()
    }

    /// Settings of the log.
    pub fn config(&self) -> &LeaderConfig {
        &self.setup.cfg
    }
}

/// A replica's state.
pub struct ReplicaState {
    /// Its log.
    pub replica: Replica,
    /// Applied values (when recording).
    pub applied: Vec<Vec<u8>>,
    /// Digests of every entry applied, by index, recording or not.
    pub digests: Vec<u64>,
    record: bool,
    /// What it needs to lead after a fail-over.
    takeover: Option<(Path, Option<LostHook>)>,
    /// A snapshot being READ from the leader (joining the running log), where it lands,
    /// and whether its READ completed.
    join: Option<(JoinOffer, MrInfo, bool)>,
    /// Snapshot MRs done with (installed or superseded) whose READ has not completed yet,
    /// oldest first: a late response landing in a deregistered MR would fail the QP.
    retired: VecDeque<MrInfo>,
}

/// A node's role.
pub enum Role {
    /// The leader.
    Leader(Box<LeaderState>),
    /// A replica.
    Replica(Box<ReplicaState>),
}

/// What a node says about itself (a driver shows it to others without stopping the node).
#[derive(Debug, Clone, Default)]
pub struct NodeStatus {
    /// Set up (leader: unicast paths up and, in P4CE mode, the switch path once; replica
    /// with fail-over: heartbeats armed).
    pub ready: bool,
    /// Why its driver stopped it, if it failed.
    pub error: Option<String>,
    /// Leader: entries committed.
    pub committed: u64,
    /// Leader: counters.
    pub stats: LeaderStats,
    /// Leader: the path new entries take.
    pub path: Option<Path>,
    /// It leads (the first leader, or a replica after fail-over).
    pub leading: bool,
    /// Replica: entries applied.
    pub applied: u64,
    /// Turns of the node's loop (its driver counts them).
    pub turns: u64,
    /// Turns that ended waiting (nothing to do).
    pub idle_turns: u64,
    /// Turns in which endpoint timers ran.
    pub timer_turns: u64,
}

/// What one [`Node::poll`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Turn {
    /// Something happened (a frame to send, an event, a state change): poll again soon.
    pub work: bool,
    /// Endpoint timers were due and ran.
    pub timers_ran: bool,
}

/// A P4CE node (see the module docs).
pub struct Node {
    /// Its id.
    pub id: u16,
    ep: Endpoint,
    /// Protection domain.
    pub pd: PdHandle,
    /// Its log MR.
    pub log: MrInfo,
    /// Its CQ.
    pub cq: CqHandle,
    /// Its switch QP.
    pub switch_qp: u32,
    /// Its unicast QPs.
    pub uni_qps: Vec<u32>,
    /// The log's geometry.
    pub geometry: LogGeometry,
    /// What it does.
    pub role: Role,
    /// Heartbeats and fail-over (when configured).
    pub failover: Option<Failover>,
    /// The time of the current (or last) turn.
    pub now: Nanos,
    /// What it says about itself.
    pub status: NodeStatus,
    /// CM events about connections the node did not open (someone else used its endpoint:
    /// a test's own connection), oldest first, at most a few hundred.
    pub unclaimed: Vec<CmEvent>,
}

fn instant(t: Nanos) -> Instant {
    Instant::from_nanos(t.as_nanos())
}

fn earliest(a: Option<Nanos>, b: Option<Nanos>) -> Option<Nanos> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

impl Node {
    /// Builds the node (endpoint, log, QPs, fail-over state) at time `now`.
    pub fn new(cfg: NodeConfig, now: Nanos) -> Result<Node, NodeError> {
        let mut parts = build_node(&cfg.spec)?;
        let geometry = cfg.spec.geometry;
        let (failover, takeover) = match cfg.failover {
            Some(nf) => {
                let ids = &cfg.spec.ids;
                let fo = Failover::new(
                    &mut parts.ep,
                    parts.pd,
                    &nf.setup,
                    cfg.spec.id,
                    ids[0],
                    parts.uni_qps.first().copied(),
                    ids.get(1..).unwrap_or_default(),
                    &parts.mesh,
                    parts.log,
                    parts.cq,
                    parts.switch_qp,
                )?;
                (Some(fo), Some((nf.mode, nf.on_lost)))
            }
            None => (None, None),
        };
        let role = match cfg.leader {
            Some(ls) => {
                let n = ls.replicas.len();
                Role::Leader(Box::new(LeaderState {
                    leader: None,
                    mode: ls.mode,
                    queue: VecDeque::new(),
                    repeat: None,
                    meter: None,
                    appended: Vec::new(),
                    digests: Vec::new(),
                    events: Vec::new(),
                    switch_refusals: Vec::new(),
                    switch_up_at: None,
                    setup: ls,
                    pending: Vec::new(),
                    paths: vec![None; n],
                    heartbeats: vec![None; n],
                    switch_cm: None,
                    cm_retry_at: None,
                    uni_retry_at: Some(Nanos::ZERO),
                    record: cfg.record,
                    snapshots: Vec::new(),
                    rejoin: true,
                    refused: vec![false; n],
                    joiner_watch: Vec::new(),
                }))
            }
            None => Role::Replica(Box::new(ReplicaState {
                replica: Replica::new(geometry, parts.log.lkey)?,
                applied: Vec::new(),
                digests: Vec::new(),
                record: cfg.record,
                takeover,
                join: None,
                retired: VecDeque::new(),
            })),
        };
        let mut node = Node {
            id: cfg.spec.id,
            ep: parts.ep,
            pd: parts.pd,
            log: parts.log,
            cq: parts.cq,
            switch_qp: parts.switch_qp,
            uni_qps: parts.uni_qps,
            geometry,
            role,
            failover,
            now,
            status: NodeStatus::default(),
            unclaimed: Vec::new(),
        };
        if matches!(node.role, Role::Replica(_)) && node.failover.is_none() {
            node.status.ready = true;
        }
        Ok(node)
    }

    /// Its endpoint.
    pub fn ep(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    /// Its endpoint, to read.
    pub fn endpoint(&self) -> &Endpoint {
        &self.ep
    }

    /// The leader's state (None on a replica).
    pub fn leader(&mut self) -> Option<&mut LeaderState> {
        match &mut self.role {
            Role::Leader(l) => Some(l),
            Role::Replica(_) => None,
        }
    }

    /// The leader's state, to read (None on a replica).
    pub fn leader_ref(&self) -> Option<&LeaderState> {
        match &self.role {
            Role::Leader(l) => Some(l),
            Role::Replica(_) => None,
        }
    }

    /// The replica's state (None on the leader).
    pub fn replica(&mut self) -> Option<&mut ReplicaState> {
        match &mut self.role {
            Role::Replica(r) => Some(r),
            Role::Leader(_) => None,
        }
    }

    /// The replica's state, to read (None on the leader).
    pub fn replica_ref(&self) -> Option<&ReplicaState> {
        match &self.role {
            Role::Replica(r) => Some(r),
            Role::Leader(_) => None,
        }
    }

    /// Whether it leads (the first leader, or a replica after a take-over).
    pub fn leading(&self) -> bool {
        matches!(self.role, Role::Leader(_))
    }

    /// A frame arrived at `now`.
    pub fn handle_frame(&mut self, now: Nanos, frame: &[u8]) {
        self.ep.handle_frame(instant(now), frame);
    }

    /// The next frame to send at `now`, if any.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Vec<u8>> {
        self.ep.poll_transmit(instant(now))
    }

    /// One turn at `now`: due endpoint timers, then the role's work (CM events, the log,
    /// appends, fail-over). Frames it produces wait in the endpoint
    /// ([`Node::poll_transmit`]). When the turn did work, poll again before waiting.
    pub fn poll(&mut self, now: Nanos) -> Result<Turn, NodeError> {
        self.now = now;
        let t = instant(now);
        let mut turn = Turn::default();
        if self.ep.poll_timeout().is_some_and(|d| d <= t) {
            self.ep.handle_timeout(t);
            turn.timers_ran = true;
            turn.work = true;
        }
        let mut work = false;
        match self.role {
            Role::Leader(_) => self.leader_turn(&mut work)?,
            Role::Replica(_) => self.replica_turn(&mut work)?,
        }
        turn.work |= work;
        Ok(turn)
    }

    /// The latest time the node must be polled again without a frame arriving: its
    /// endpoint's timers, the leader's (switch timeout, retries, probes), heartbeat ticks
    /// and recovery steps.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        let mut t = self.ep.poll_timeout().map(|i| Nanos(i.as_nanos()));
        if let Role::Leader(l) = &self.role {
            match &l.leader {
                Some(ld) => {
                    t = earliest(t, ld.poll_timeout().map(|i| Nanos(i.as_nanos())));
                    t = earliest(t, l.cm_retry_at);
                }
                None => t = earliest(t, l.uni_retry_at),
            }
        }
        if let Some(fo) = &self.failover {
            t = earliest(t, Some(fo.next_wakeup()));
        }
        t
    }

    /// The leader appends `value` now if its window allows (bypassing its queue); returns
    /// the entry's index. None on a replica, before the log is up, or with a full window.
    pub fn try_append(&mut self, now: Nanos, value: &[u8]) -> Result<Option<u64>, NodeError> {
        let Role::Leader(l) = &mut self.role else {
            return Ok(None);
        };
        let Some(leader) = l.leader.as_mut() else {
            return Ok(None);
        };
        if !leader.can_append() {
            return Ok(None);
        }
        let i = leader.append(&mut self.ep, instant(now), value)?;
        if let Some(m) = l.meter.as_mut() {
            m.appended(now.as_nanos());
        }
        l.digests.push(digest(value));
        if l.record {
            l.appended.push(value.to_vec());
        }
        Ok(Some(i))
    }

    fn replica_turn(&mut self, work: &mut bool) -> Result<(), NodeError> {
        let t = instant(self.now);
        let (log, geometry, switch_qp, uni) =
            (self.log, self.geometry, self.switch_qp, self.uni_qps[0]);
        while let Some(ev) = self.ep.poll_cm_event() {
            *work = true;
            if let Some(fo) = self.failover.as_mut() {
                if fo.on_cm(&mut self.ep, t, &ev)? {
                    continue;
                }
            }
            if let CmEvent::ConnectRequest {
                conn, peer, port, ..
            } = ev
            {
                let ep = &mut self.ep;
                if port != REPLICA_CM_PORT {
                    ep.reject(t, conn, b"not a P4CE log port")?;
                } else if peer == IpAddr::V4(SWITCH_IP) {
                    replica_accept(ep, t, conn, switch_qp, log, geometry)?;
                } else {
                    // A leader's unicast connection (the replica serves the current leader: a
                    // new connection replaces the old one); with fail-over, the answer says
                    // where this node's heartbeat is, for the leader to watch.
                    let offer = replica_offer(log, geometry);
                    let reply = match self.failover.as_ref() {
                        Some(fo) => fo.offer(&offer),
                        None => offer.to_bytes(),
                    };
                    accept_on(ep, t, conn, uni, &reply)?;
                }
            }
        }
        let Role::Replica(r) = &mut self.role else {
            return Ok(());
        };
        let record = r.record;
        let applied = &mut r.applied;
        let digests = &mut r.digests;
        let n = r.replica.poll_apply(&mut self.ep, |_, v| {
            digests.push(digest(v));
            if record {
                applied.push(v.to_vec());
            }
        })?;
        if n > 0 {
            *work = true;
        }
        // The snapshot is READ from the leader it follows: the first leader on the unicast
        // QP, one that took over on the mesh.
        let to_leader = self
            .failover
            .as_ref()
            .and_then(Failover::believed_qp)
            .unwrap_or(uni);
        let wcs = match self.failover.as_mut() {
            Some(fo) => fo.take_others(),
            None => self.ep.poll_cq(self.cq, 256)?,
        };
        let reads_done = wcs.iter().filter(|w| w.wr_id == JOIN_READ).count();
        Self::join_reads_done(&mut self.ep, r, reads_done)?;
        *work |= Self::replica_join(&mut self.ep, self.pd, to_leader, r)?;
        self.status.applied = r.replica.applied();
        let Some(fo) = self.failover.as_mut() else {
            return Ok(());
        };
        let ep = &mut self.ep;
        let now = self.now;
        *work |= fo.connect_mesh(ep, t, now)?;
        *work |= fo.tick(ep, now, true)?;
        if fo.armed() {
            self.status.ready = true;
        }
        let applied = &mut r.applied;
        let digests = &mut r.digests;
        let (w, took) = fo.replica_step(ep, now, &mut r.replica, |v| {
            digests.push(digest(v));
            if record {
                applied.push(v.to_vec());
            }
        })?;
        *work |= w;
        self.status.applied = r.replica.applied();
        if let Some(to) = took {
            self.take_over(to)?;
            *work = true;
        }
        Ok(())
    }

    /// A replica joining the running log ([`crate::mu::join`]): when the leader's offer
    /// appears in its join word, READs the snapshot on `uni` (its QP to that leader) into a
    /// fresh MR; once
    /// the snapshot's trailer is there, keeps its entries and installs it. Returns whether it
    /// did something.
    fn replica_join(
        ep: &mut Endpoint,
        pd: PdHandle,
        uni: u32,
        r: &mut ReplicaState,
    ) -> Result<bool, NodeError> {
        let offer = r.replica.join_offer(ep, MAX_SNAPSHOT)?;
        if let Some((o, mr, done)) = r.join {
            if offer != Some(o) {
                // Superseded (or installed): a new offer replaces it.
                Self::retire(ep, r, mr, done)?;
                r.join = None;
            } else {
                let b = ep.mr_bytes(mr.lkey)?;
                if !snapshot::arrived(b, o.to) {
                    return Ok(false);
                }
                let entries = snapshot::decode(b, o.to - o.from, o.to)
                    .map_err(|e| NodeError::Setup(format!("leader's snapshot: {e}")))?;
                for (d, v) in entries {
                    r.digests.push(d);
                    if r.record {
                        r.applied.push(v);
                    }
                }
                r.replica.install(ep, o.to)?;
                Self::retire(ep, r, mr, done)?;
                r.join = None;
                return Ok(true);
            }
        }
        let Some(o) = offer else {
            return Ok(false);
        };
        let mr = ep.reg_mr(pd, o.len as usize, AccessFlags::LOCAL_WRITE)?;
        let sge = Sge {
            addr: mr.addr,
            length: o.len as u32,
            lkey: mr.lkey,
        };
        let op = SendOp::Read {
            remote_addr: o.va,
            rkey: o.rkey,
        };
        ep.post_send(uni, SendWr::new(JOIN_READ, op, sge))?;
        r.join = Some((o, mr, false));
        Ok(true)
    }

    /// `n` snapshot READs completed (in the order they were posted): the oldest retired
    /// MRs are freed, then the current READ counts as done.
    fn join_reads_done(ep: &mut Endpoint, r: &mut ReplicaState, n: usize) -> Result<(), NodeError> {
        for _ in 0..n {
            if let Some(mr) = r.retired.pop_front() {
                ep.dereg_mr(mr.lkey)?;
            } else if let Some((_, _, done)) = r.join.as_mut() {
                *done = true;
            }
        }
        Ok(())
    }

    /// A snapshot MR is no longer needed: freed now if its READ completed, else once it has.
    fn retire(
        ep: &mut Endpoint,
        r: &mut ReplicaState,
        mr: MrInfo,
        read_done: bool,
    ) -> Result<(), NodeError> {
        if read_done {
            ep.dereg_mr(mr.lkey)?;
            return Ok(());
        }
        r.retired.push_back(mr);
        while r.retired.len() > MAX_RETIRED {
            if let Some(old) = r.retired.pop_front() {
                ep.dereg_mr(old.lkey)?;
            }
        }
        Ok(())
    }

    /// A replica that recovered the log becomes the leader: a fresh QP towards the switch
    /// (its old switch QP is the replica side of the old group) and, in P4CE mode, a request
    /// for the group through the agent at once.
    fn take_over(&mut self, to: TakeOver) -> Result<(), NodeError> {
        let Role::Replica(r) = &mut self.role else {
            return Ok(());
        };
        let (mode, on_lost) = r.takeover.take().unwrap_or((Path::Unicast, None));
        let appended = std::mem::take(&mut r.applied);
        let digests = std::mem::take(&mut r.digests);
        let record = r.record;
        let cfg = to.cfg;
        let n = to.followers.len();
        if mode == Path::Switch {
            let (pd, cq) = (self.pd, self.cq);
            self.switch_qp = self.ep.create_qp(rdma::verbs::QpInitAttr {
                pd,
                qp_type: rdma::verbs::QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr: 4096,
                max_recv_wr: 1,
            })?;
        }
        self.role = Role::Leader(Box::new(LeaderState {
            leader: Some(to.leader),
            mode,
            queue: VecDeque::new(),
            repeat: None,
            meter: None,
            appended,
            digests,
            events: Vec::new(),
            switch_refusals: Vec::new(),
            switch_up_at: None,
            setup: LeaderSetup {
                cfg,
                mode,
                replicas: to.followers,
                on_lost,
            },
            pending: Vec::new(),
            paths: vec![None; n],
            heartbeats: vec![None; n],
            switch_cm: None,
            cm_retry_at: (mode == Path::Switch).then_some(self.now),
            uni_retry_at: None,
            record,
            snapshots: Vec::new(),
            rejoin: false,
            refused: vec![false; n],
            joiner_watch: Vec::new(),
        }));
        self.status.ready = false;
        Ok(())
    }

    fn note_unclaimed(&mut self, ev: CmEvent) {
        if self.unclaimed.len() < MAX_UNCLAIMED {
            self.unclaimed.push(ev);
        }
    }

    fn leader_turn(&mut self, work: &mut bool) -> Result<(), NodeError> {
        let now = self.now;
        let t = instant(now);
        let id = self.id;
        let (switch_qp, log, cq) = (self.switch_qp, self.log, self.cq);
        let mut lost = Vec::new();
        if let Some(fo) = self.failover.as_mut() {
            if fo.tick(&mut self.ep, now, false)? {
                *work = true;
                lost = fo.lost_followers(now);
            }
            // A node that took over reconnects the mesh to replicas that come back.
            *work |= fo.connect_mesh(&mut self.ep, t, now)?;
        }
        let Role::Leader(l) = &mut self.role else {
            return Ok(());
        };
        let ep = &mut self.ep;
        // Unicast connections to the replicas, through RDMA CM: all of them at the start;
        // once the log runs, those missing (absent at the start, or lost since), which join
        // the running log when they answer.
        if l.pending.is_empty() && l.uni_retry_at.is_some_and(|r| now >= r) {
            l.uni_retry_at = None;
            let hello = self
                .failover
                .as_ref()
                .map_or_else(|| b"mu".to_vec(), |f| f.hello(false).to_bytes());
            for (i, (ip, _)) in l.setup.replicas.iter().enumerate() {
                if l.paths[i].is_none() && !l.refused[i] {
                    let Some(&qpn) = self.uni_qps.get(i) else {
                        continue;
                    };
                    reset_qp(ep, qpn)?;
                    let c = ep.connect(t, qpn, IpAddr::V4(*ip), REPLICA_CM_PORT, &hello)?;
                    l.pending.push((c, i));
                }
            }
            *work = true;
        }
        let mut unclaimed = Vec::new();
        while let Some(ev) = ep.poll_cm_event() {
            *work = true;
            if let Some(fo) = self.failover.as_mut() {
                // Mesh connections (a node that took over keeps them up).
                if fo.on_cm(ep, t, &ev)? {
                    continue;
                }
            }
            match ev {
                CmEvent::Established {
                    conn, private_data, ..
                } if Some(conn) == l.switch_cm => {
                    match switch_path_from_reply(switch_qp, &private_data) {
                        Ok(sp) => match l.leader.as_mut().map(|ld| ld.attach_switch(ep, sp)) {
                            Some(Err(e)) => l.switch_refusals.push(e.to_string()),
                            _ => l.switch_up_at = Some(now),
                        },
                        Err(reason) => l.switch_refusals.push(reason),
                    }
                }
                CmEvent::Established {
                    conn, private_data, ..
                } if l.pending.iter().any(|(c, _)| *c == conn) => {
                    let k = l.pending.iter().position(|(c, _)| *c == conn).unwrap_or(0);
                    let (_, i) = l.pending.swap_remove(k);
                    let offer = ReplicaOffer::parse(&private_data)
                        .map_err(|e| NodeError::Setup(format!("replica's offer: {e}")))?;
                    l.paths[i] = Some(ReplicaPath {
                        id: l.setup.replicas[i].1,
                        qpn: self.uni_qps[i],
                        va: offer.va,
                        rkey: offer.rkey,
                    });
                    l.heartbeats[i] = offer_heartbeat(&private_data);
                    if let (Some(ld), Some(p)) = (l.leader.as_mut(), l.paths[i]) {
                        ld.add_replica(p)?;
                    }
                    if l.pending.is_empty() && l.paths.iter().any(Option::is_none) {
                        // The round is over with replicas missing: ask those again later.
                        l.uni_retry_at = Some(now + retry_gap(l.leader.is_some()));
                    }
                }
                CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn }
                    if Some(conn) == l.switch_cm =>
                {
                    l.switch_cm = None;
                    l.switch_refusals
                        .push("the switch agent refused or did not answer".into());
                    l.cm_retry_at = Some(now + Nanos::from(l.setup.cfg.switch_retry));
                }
                CmEvent::Rejected {
                    conn,
                    ref private_data,
                    ..
                } if private_data.starts_with(FOLLOWS_ANOTHER)
                    && l.pending.iter().any(|(c, _)| *c == conn) =>
                {
                    // It follows another leader: this one was deposed (Mu's fencing).
                    if let Some(k) = l.pending.iter().position(|(c, _)| *c == conn) {
                        let (_, i) = l.pending.swap_remove(k);
                        l.refused[i] = true;
                    }
                }
                CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn }
                    if l.pending.iter().any(|(c, _)| *c == conn) =>
                {
                    l.pending.retain(|(c, _)| *c != conn);
                    if l.pending.is_empty() {
                        l.uni_retry_at = Some(now + retry_gap(l.leader.is_some()));
                    }
                }
                ev @ (CmEvent::Established { .. }
                | CmEvent::Rejected { .. }
                | CmEvent::Unreachable { .. }) => unclaimed.push(ev),
                _ => {}
            }
        }
        // The log starts once every replica is connected, or once every attempt of a round
        // has been answered (connected, refused or unreachable) and at least f are
        // connected: f replicas are a quorum, the leader goes on with the ones it has.
        let up = l.paths.iter().flatten().count();
        let round_done = l.pending.is_empty() && l.uni_retry_at.is_some();
        if l.leader.is_none() && (up == l.paths.len() || (round_done && up >= l.setup.cfg.f)) {
            let paths: Vec<ReplicaPath> = l.paths.iter().flatten().copied().collect();
            if let Some(fo) = self.failover.as_mut() {
                fo.lead(&watched(&l.paths, &l.heartbeats), now);
            }
            l.leader = Some(Leader::new(l.setup.cfg, log, cq, paths)?);
            if l.pending.is_empty() && l.paths.iter().any(Option::is_none) {
                // Those missing are asked again soon: they join when they are back.
                l.uni_retry_at = Some(now + REJOIN_RETRY);
            }
            if l.mode == Path::Switch {
                l.cm_retry_at = Some(now);
            }
        }
        let Some(leader) = l.leader.as_mut() else {
            for ev in unclaimed {
                self.note_unclaimed(ev);
            }
            return Ok(());
        };
        if l.cm_retry_at.is_some_and(|r| now >= r) {
            l.cm_retry_at = None;
            let live: Vec<(Ipv4Addr, u16)> = {
                let ids = leader.live_replicas();
                l.setup
                    .replicas
                    .iter()
                    .filter(|(_, rid)| ids.contains(rid))
                    .copied()
                    .collect()
            };
            if live.len() >= l.setup.cfg.f {
                l.switch_cm = Some(leader_request_group(
                    ep,
                    t,
                    switch_qp,
                    l.switch_cm.take(),
                    l.setup.cfg.f,
                    id,
                    &live,
                )?);
            } else {
                // Too few replicas for a group: ask again later (unicast cannot commit either).
                l.cm_retry_at = Some(now + Nanos::from(l.setup.cfg.switch_retry));
            }
            *work = true;
        }
        // Followers whose heartbeat stopped: the log stops waiting for them.
        for id in lost {
            *work |= leader.mark_lost(id);
        }
        leader.poll(ep, t)?;
        while let Some(ev) = leader.poll_event() {
            *work = true;
            match ev {
                LeaderEvent::SwitchRetryDue if l.mode == Path::Switch => l.cm_retry_at = Some(now),
                LeaderEvent::ReplicaLost(r) => {
                    if let Some(h) = &l.setup.on_lost {
                        h(r);
                    }
                    // Ask it again later (the first leader, on its unicast QPs; not one the
                    // replica fenced off): it joins the running log if it answers.
                    let again = l.rejoin && !leader.fenced(r);
                    if let Some(i) = l
                        .setup
                        .replicas
                        .iter()
                        .position(|(_, id)| *id == r)
                        .filter(|_| again)
                    {
                        l.paths[i] = None;
                        if l.pending.is_empty() && l.uni_retry_at.is_none() {
                            l.uni_retry_at = Some(now + REJOIN_RETRY);
                        }
                    }
                    drop_snapshot(ep, &mut l.snapshots, r)?;
                }
                LeaderEvent::SnapshotNeeded { id: r, from, to } => {
                    let (from_i, to_i) = (from as usize, to as usize);
                    let bytes = snapshot::encode(
                        l.digests.get(from_i..to_i).unwrap_or_default(),
                        l.record.then(|| l.appended.get(from_i..to_i)).flatten(),
                        to,
                    );
                    drop_snapshot(ep, &mut l.snapshots, r)?;
                    let mr = ep.reg_mr(
                        self.pd,
                        OFFER_LEN + bytes.len(),
                        AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
                    )?;
                    ep.mr_bytes_mut(mr.lkey)?[OFFER_LEN..].copy_from_slice(&bytes);
                    leader.offer_snapshot(ep, r, mr, bytes.len() as u64)?;
                    l.snapshots.push((r, mr));
                }
                LeaderEvent::Joined { id: r, .. } => {
                    drop_snapshot(ep, &mut l.snapshots, r)?;
                    if l.mode == Path::Switch {
                        // The group is rebuilt with it (the agent connects to it again);
                        // unicast meanwhile.
                        leader.leave_switch(ep, t)?;
                        l.cm_retry_at = Some(now);
                    }
                    // Its heartbeat is watched from now on.
                    let w = watched(&l.paths, &l.heartbeats)
                        .into_iter()
                        .chain(l.joiner_watch.iter().copied())
                        .find(|w| w.id == r);
                    if let (Some(fo), Some(w)) = (self.failover.as_mut(), w) {
                        fo.watch_also(w, now);
                    }
                }
                _ => {}
            }
            if !matches!(ev, LeaderEvent::Committed(_)) {
                l.events.push(ev);
            }
        }
        if let (Some(fo), false) = (self.failover.as_mut(), l.rejoin) {
            // A node that took over: replicas that came back and follow it join its log.
            let mut members = leader.live_replicas();
            members.extend(leader.joining_replicas());
            for j in fo.joiners(ep, &members)? {
                let id = j.path.id;
                leader.add_replica(j.path)?;
                if !l.setup.replicas.iter().any(|(_, r)| *r == id) {
                    l.setup.replicas.push((host_ip(id), id));
                    l.paths.push(None);
                    l.heartbeats.push(None);
                    l.refused.push(false);
                }
                l.joiner_watch.retain(|w| w.id != id);
                l.joiner_watch.push(j.watch);
                *work = true;
            }
        }
        while leader.can_append() {
            let v = match (l.queue.pop_front(), &l.repeat) {
                (Some(v), _) => v,
                (None, Some(r)) => {
                    // Each repeated value carries its index: the logs' digests then tell
                    // entries apart (the integrity check).
                    let mut v = r.clone();
                    stamp(&mut v, leader.next_index());
                    v
                }
                (None, None) => break,
            };
            leader.append(ep, t, &v)?;
            l.digests.push(digest(&v));
            if let Some(m) = l.meter.as_mut() {
                m.appended(now.as_nanos());
            }
            if l.record {
                l.appended.push(v);
            }
            *work = true;
        }
        let committed = leader.committed();
        if let Some(m) = l.meter.as_mut() {
            m.committed(committed, now.as_nanos());
        }
        let s = &mut self.status;
        s.ready = l.mode == Path::Unicast || l.switch_up_at.is_some();
        s.committed = committed;
        s.stats = leader.stats();
        s.path = Some(leader.path());
        s.leading = true;
        for ev in unclaimed {
            self.note_unclaimed(ev);
        }
        Ok(())
    }
}

/// How long the leader waits before it asks missing replicas again (`running`: the log
/// runs without them).
fn retry_gap(running: bool) -> Nanos {
    if running {
        REJOIN_RETRY
    } else {
        UNICAST_RETRY
    }
}

/// Heartbeats of the connected replicas that said where theirs is.
fn watched(paths: &[Option<ReplicaPath>], heartbeats: &[Option<(u64, u32)>]) -> Vec<Watched> {
    paths
        .iter()
        .zip(heartbeats)
        .filter_map(|(p, hb)| {
            let p = p.as_ref()?;
            hb.map(|(hb_va, hb_rkey)| Watched {
                id: p.id,
                qpn: p.qpn,
                hb_va,
                hb_rkey,
            })
        })
        .collect()
}

/// Deregisters the snapshot offered to replica `id`, if any.
fn drop_snapshot(
    ep: &mut Endpoint,
    snapshots: &mut Vec<(u16, MrInfo)>,
    id: u16,
) -> Result<(), NodeError> {
    if let Some(k) = snapshots.iter().position(|(r, _)| *r == id) {
        let (_, mr) = snapshots.swap_remove(k);
        ep.dereg_mr(mr.lkey)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The node without any lab: three nodes whose frames this test moves by hand (by
    //! destination MAC, 1 µs later) in virtual time, unicast mode (no switch): the log
    //! commits, and when the leader falls silent the lowest live replica takes over on its
    //! own and goes on committing.

    use std::time::Duration;

    use super::*;
    use crate::mu::LeaderConfig;
    use crate::p4ce::failover::FailoverSetup;
    use crate::p4ce::node::host_ip;

    struct Wire {
        nodes: Vec<Node>,
        alive: Vec<bool>,
        /// Frames to and from these nodes are lost (they still run).
        cut: Vec<bool>,
        now: Nanos,
        in_flight: Vec<(Nanos, usize, Vec<u8>)>,
    }

    impl Wire {
        fn new(timeout: Duration) -> Wire {
            Wire::with(Some(timeout))
        }

        /// Three nodes, with fail-over (its leader timeout) or without.
        fn with(timeout: Option<Duration>) -> Wire {
            let ids = vec![1u16, 2, 3];
            let geometry = LogGeometry::for_values(256, 32);
            let cfg = LeaderConfig {
                f: 1,
                geometry,
                max_outstanding: 4,
                switch_timeout: Duration::from_millis(1),
                switch_retry: Duration::from_millis(5),
                probe_every: Duration::from_millis(1),
            };
            let nodes = ids
                .iter()
                .map(|&id| {
                    let spec = NodeSpec {
                        id,
                        ids: ids.clone(),
                        leader: id == 1,
                        geometry,
                        replicas: 2,
                        seed: 5,
                        listen: id != 1,
                        mesh: if id == 1 { 0 } else { 1 },
                        ack_timeout: 8,
                        cm_response_timeout: Duration::from_millis(2),
                        gateway: None,
                    };
                    let leader = (id == 1).then(|| LeaderSetup {
                        cfg,
                        mode: Path::Unicast,
                        replicas: vec![(host_ip(2), 2), (host_ip(3), 3)],
                        on_lost: None,
                    });
                    let failover = timeout.map(|timeout| NodeFailover {
                        setup: FailoverSetup {
                            timeout,
                            leader: cfg,
                        },
                        mode: Path::Unicast,
                        on_lost: None,
                    });
                    let cfg = NodeConfig {
                        spec,
                        leader,
                        record: true,
                        failover,
                    };
                    Node::new(cfg, Nanos::ZERO).unwrap()
                })
                .collect();
            Wire {
                nodes,
                alive: vec![true; 3],
                cut: vec![false; 3],
                now: Nanos::ZERO,
                in_flight: Vec::new(),
            }
        }

        /// Runs every live node at `now`, then moves time to the next thing due.
        fn step(&mut self) {
            let now = self.now;
            let (due, later): (Vec<_>, Vec<_>) =
                self.in_flight.drain(..).partition(|(t, _, _)| *t <= now);
            self.in_flight = later;
            for (_, to, f) in due {
                if self.alive[to] {
                    self.nodes[to].handle_frame(now, &f);
                }
            }
            for i in 0..self.nodes.len() {
                if !self.alive[i] {
                    continue;
                }
                for _ in 0..16 {
                    if !self.nodes[i].poll(now).unwrap().work {
                        break;
                    }
                }
                while let Some(f) = self.nodes[i].poll_transmit(now) {
                    // Node N has MAC 02:00:00:00:00:0N.
                    let to = usize::from(f[5]).wrapping_sub(1);
                    if to < self.nodes.len() && !self.cut[i] && !self.cut[to] {
                        self.in_flight.push((now + Nanos::from_micros(1), to, f));
                    }
                }
            }
            let next = self
                .in_flight
                .iter()
                .map(|(t, _, _)| *t)
                .chain(
                    (0..self.nodes.len())
                        .filter(|i| self.alive[*i])
                        .filter_map(|i| self.nodes[i].next_wakeup()),
                )
                .min()
                .unwrap_or(now + Nanos::from_millis(1));
            self.now = next.max(now + Nanos(1));
        }

        fn run_until(&mut self, t: Nanos, mut done: impl FnMut(&mut Wire) -> bool) -> bool {
            while self.now < t {
                if done(self) {
                    return true;
                }
                self.step();
            }
            done(self)
        }
    }

    fn applied(n: &Node) -> Vec<Vec<u8>> {
        match &n.role {
            Role::Leader(l) => l.appended.clone(),
            Role::Replica(r) => r.applied.clone(),
        }
    }

    /// Appends `values[*next..upto]` as the window allows until the leader committed `upto`.
    fn commit_all(w: &mut Wire, values: &[Vec<u8>], next: &mut usize, upto: usize) {
        let t = w.now + Nanos::from_millis(200);
        let ok = w.run_until(t, |w| {
            while *next < upto {
                let now = w.now;
                if w.nodes[0]
                    .try_append(now, &values[*next])
                    .unwrap()
                    .is_none()
                {
                    break;
                }
                *next += 1;
            }
            w.nodes[0].status.committed >= upto as u64
        });
        assert!(ok, "{:?}", w.nodes[0].status);
    }

    /// Runs until node `i` applied `n` entries.
    fn applies(w: &mut Wire, i: usize, n: usize) {
        let t = w.now + Nanos::from_millis(200);
        let ok = w.run_until(t, |w| applied(&w.nodes[i]).len() >= n);
        assert!(
            ok,
            "node {} applied {} of {n}; leader {:?}",
            i + 1,
            applied(&w.nodes[i]).len(),
            w.nodes[0].leader_ref().map(|l| l.events.clone())
        );
    }

    fn values(n: usize) -> Vec<Vec<u8>> {
        (0..n).map(|i| vec![i as u8; 1 + (i * 13) % 200]).collect()
    }

    /// Issue 13: a replica not started when the leader starts (f = 1 lets the leader go on
    /// without it) joins once it runs: the leader connects to it again, re-writes what its
    /// ring still holds (few entries) or offers a snapshot of the rest (more than a lap of
    /// the 32-slot ring), and replicates to it from then on.
    #[test]
    fn a_replica_absent_at_the_start_joins_and_gets_the_committed_prefix() {
        for before in [10usize, 100] {
            let mut w = Wire::with(None);
            w.alive[2] = false;
            let vals = values(before + 30);
            let mut next = 0;
            commit_all(&mut w, &vals, &mut next, before);
            assert!(applied(&w.nodes[2]).is_empty());
            assert_eq!(
                w.nodes[0]
                    .leader_ref()
                    .unwrap()
                    .leader
                    .as_ref()
                    .unwrap()
                    .live_replicas(),
                vec![2]
            );
            w.alive[2] = true;
            applies(&mut w, 2, before);
            assert_eq!(applied(&w.nodes[2]), vals[..before], "{before}");
            // From now on it follows new appends.
            commit_all(&mut w, &vals, &mut next, before + 30);
            applies(&mut w, 2, before + 30);
            let st = w.nodes[0].status.stats;
            assert_eq!(st.joined, 1, "{before}: {st:?}");
            assert_eq!(st.snapshots, u64::from(before > 32), "{before}: {st:?}");
            assert_eq!(applied(&w.nodes[2]), vals, "{before}");
            assert_eq!(applied(&w.nodes[1]), vals, "{before}");
            let digests = &w.nodes[2].replica_ref().unwrap().digests;
            assert_eq!(digests, &w.nodes[0].leader_ref().unwrap().digests);
        }
    }

    /// A replica cut off long enough for the leader to give it up (its QP's retries run out)
    /// catches up the same way when the cut heals.
    #[test]
    fn a_replica_cut_off_during_the_run_catches_up_when_it_heals() {
        let mut w = Wire::with(None);
        let vals = values(200);
        let mut next = 0;
        commit_all(&mut w, &vals, &mut next, 20);
        applies(&mut w, 2, 20);
        w.cut[2] = true;
        commit_all(&mut w, &vals, &mut next, 150);
        let t = w.now + Nanos::from_millis(30);
        w.run_until(t, |_| false);
        let events = w.nodes[0].leader_ref().unwrap().events.clone();
        assert!(events.contains(&LeaderEvent::ReplicaLost(3)), "{events:?}");
        assert!(applied(&w.nodes[2]).len() < 150);
        w.cut[2] = false;
        applies(&mut w, 2, 150);
        commit_all(&mut w, &vals, &mut next, 200);
        applies(&mut w, 2, 200);
        assert_eq!(applied(&w.nodes[2]), vals);
        let events = w.nodes[0].leader_ref().unwrap().events.clone();
        assert!(
            events
                .iter()
                .any(|e| matches!(e, LeaderEvent::Joined { id: 3, .. })),
            "{events:?}"
        );
        // It missed more than the 32-slot ring holds: a snapshot brought the prefix.
        assert!(w.nodes[0].status.stats.snapshots >= 1, "{events:?}");
        let digests = &w.nodes[2].replica_ref().unwrap().digests;
        assert_eq!(digests, &w.nodes[0].leader_ref().unwrap().digests);
    }

    #[test]
    fn three_nodes_commit_and_a_replica_takes_over_when_the_leader_falls_silent() {
        let mut w = Wire::new(Duration::from_millis(1));
        let end = Nanos::from_millis(50);
        assert!(
            w.run_until(end, |w| w.nodes.iter().all(|n| n.status.ready)),
            "not ready: {:?}",
            w.nodes.iter().map(|n| n.status.clone()).collect::<Vec<_>>()
        );
        let values: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 1 + usize::from(i) * 5]).collect();
        let mut next = 0;
        let t = w.now + Nanos::from_millis(20);
        let ok = w.run_until(t, |w| {
            while next < 20 {
                let now = w.now;
                match w.nodes[0].try_append(now, &values[next]).unwrap() {
                    Some(i) => assert_eq!(i, next as u64),
                    None => break,
                }
                next += 1;
            }
            w.nodes[0].status.committed >= 20
        });
        assert!(ok, "{:?}", w.nodes[0].status);
        let t = w.now + Nanos::from_millis(1);
        w.run_until(t, |_| false);
        for r in 1..3 {
            assert_eq!(applied(&w.nodes[r]), values[..20], "node {}", r + 1);
        }
        // The leader falls silent: node 2 (the lowest live id) recovers and leads.
        w.alive[0] = false;
        let t = w.now + Nanos::from_millis(20);
        assert!(
            w.run_until(t, |w| w.nodes[1].leading() && w.nodes[1].status.ready),
            "{:?}",
            w.nodes[1].failover.as_ref().map(|f| f.events.clone())
        );
        let events = w.nodes[1].failover.as_ref().unwrap().events.clone();
        assert!(
            events.iter().any(|e| matches!(
                e,
                crate::p4ce::failover::FailoverEvent::Leads { from: 20, followers, .. } if followers == &[3]
            )),
            "{events:?}"
        );
        let t = w.now + Nanos::from_millis(20);
        let ok = w.run_until(t, |w| {
            while next < 40 {
                let now = w.now;
                if w.nodes[1].try_append(now, &values[next]).unwrap().is_none() {
                    break;
                }
                next += 1;
            }
            w.nodes[1].status.committed >= 40
        });
        assert!(ok, "{:?}", w.nodes[1].status);
        let t = w.now + Nanos::from_millis(1);
        w.run_until(t, |_| false);
        assert_eq!(applied(&w.nodes[1]), values);
        assert_eq!(applied(&w.nodes[2]), values);
    }
}

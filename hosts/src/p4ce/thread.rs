//! A P4CE node on its own thread, the leader or a replica, as the namespace lab runs them
//! (`labs::p4ce::netns`). Each opens AF_PACKET on its namespace's interface, builds its node
//! as the in-memory lab does ([`super::node::build_node`]), binds the endpoint to the port
//! with [`rdma::host::Host`] and runs its loop in wall-clock time:
//!
//! - a replica answers ConnectRequests (the leader's on its unicast QP, the switch agent's on
//!   its switch QP, both with its log in the reply) and applies entries in order;
//! - the leader connects to every replica through RDMA CM, builds its [`Leader`], asks the
//!   switch agent for the group (P4CE mode; again after each fallback, when the leader's
//!   retry is due), appends what it is given (or one value over and over, for the bench) and
//!   measures commit latencies ([`Meter`]);
//! - with fail-over configured ([`NodeFailover`]), every node also bumps its heartbeat and
//!   each replica runs [`Failover`] (mesh connections, heartbeat READs, view changes); a
//!   replica that recovers the log becomes the leader on its own thread (`take_over`).
//!
//! Anyone can run a closure on a node's thread between two turns of its loop
//! ([`NodeHandle::exec`]): the bench reads its figures that way, tests post rogue WRITEs.

use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use dataplane::{AfPacketPort, Clock, LinkConfig, LinkPort, Nanos, WallClock};
use rdma::host::Host;
use rdma::verbs::{CmEvent, ConnId, CqHandle, Endpoint, Instant, MrInfo, PdHandle};

use super::bench::Meter;
use super::cpu::ThreadCpu;
use super::failover::{Failover, FailoverSetup, TakeOver};
use super::node::{
    build_node, leader_request_group, replica_accept, reset_qp, switch_path_from_reply, NodeSpec,
};
use super::wire::ReplicaOffer;
use super::{NodeError, REPLICA_CM_PORT, SWITCH_IP};
use crate::mu::{
    Leader, LeaderConfig, LeaderEvent, LeaderStats, LogGeometry, Path, Replica, ReplicaPath,
};

/// Longest idle wait of a node loop.
const MAX_IDLE: Nanos = Nanos::from_millis(2);

/// Shortest idle wait: the port's wait (poll(2)) counts whole milliseconds, so a shorter one
/// returns at once and an idle node would spin, taking the CPU the switch's threads need. A
/// frame arriving ends the wait early; only the node's own timers (ms-scale) may fire up to
/// a millisecond late.
const MIN_IDLE: Nanos = Nanos::from_millis(1);

/// Longest nap while an endpoint timer is less than [`MIN_IDLE`] away (how late a frame
/// arriving meanwhile may be seen).
const SHORT_NAP: Duration = Duration::from_micros(50);

/// A wait on the port shorter than this found nothing: the port woke up for no frame.
const SPURIOUS: Nanos = Nanos::from_micros(20);

/// A closure run on a node's thread.
pub type Job = Box<dyn FnOnce(&mut NodeCtx) + Send>;

/// Called by the leader thread when a replica is lost (the lab tells the switch's agent).
pub type LostHook = Box<dyn Fn(u16) + Send>;

/// What a node is: where it runs and what it does.
pub struct NodeSetup {
    /// Its spec (id, geometry, ...).
    pub spec: NodeSpec,
    /// Its network namespace.
    pub netns: String,
    /// The interface in it.
    pub ifname: String,
    /// The leader's settings (None: a replica).
    pub leader: Option<LeaderSetup>,
    /// Keep every applied value (replicas).
    pub record: bool,
    /// The model of its link (rate, delay), applied at the host's end as the in-memory lab
    /// does, so that the node's own loop waits for held frames.
    pub link: LinkConfig,
    /// Heartbeats and leader fail-over (None: the first leader leads for good).
    pub failover: Option<NodeFailover>,
}

/// A node's fail-over part of a [`NodeSetup`].
pub struct NodeFailover {
    /// Timeout and the log settings of a new leader.
    pub setup: FailoverSetup,
    /// The path a new leader replicates on.
    pub mode: Path,
    /// Told when a replica is lost while this node leads.
    pub on_lost: Option<LostHook>,
}

/// The leader's part of a [`NodeSetup`].
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

/// The leader's state, reachable from jobs.
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
    /// Values appended (when recording), by index.
    pub appended: Vec<Vec<u8>>,
    /// Leader events so far.
    pub events: Vec<LeaderEvent>,
    /// Why the switch agent refused the leader's requests for the group (or did not
    /// answer), in order.
    pub switch_refusals: Vec<String>,
    /// When the switch path last came up.
    pub switch_up_at: Option<Nanos>,
    setup: LeaderSetup,
    pending: Vec<(ConnId, usize)>,
    paths: Vec<Option<ReplicaPath>>,
    switch_cm: Option<ConnId>,
    cm_retry_at: Option<Nanos>,
    uni_retry_at: Option<Nanos>,
    record: bool,
}

/// A replica's state, reachable from jobs.
pub struct ReplicaState {
    /// Its log.
    pub replica: Replica,
    /// Applied values (when recording).
    pub applied: Vec<Vec<u8>>,
    record: bool,
    /// What it needs to lead after a fail-over.
    takeover: Option<(Path, Option<LostHook>)>,
}

/// A node's role.
pub enum Role {
    /// The leader.
    Leader(Box<LeaderState>),
    /// A replica.
    Replica(ReplicaState),
}

/// A node as its thread holds it.
pub struct NodeCtx {
    /// Its id.
    pub id: u16,
    /// The endpoint on its port.
    pub host: Host,
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
    /// The time of this turn of the loop.
    pub now: Nanos,
}

impl NodeCtx {
    /// Its endpoint.
    pub fn ep(&mut self) -> &mut Endpoint {
        self.host.endpoint_mut()
    }

    /// The leader's state (None on a replica).
    pub fn leader(&mut self) -> Option<&mut LeaderState> {
        match &mut self.role {
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
}

/// What the lab sees of a running node without asking its thread.
#[derive(Debug, Clone, Default)]
pub struct NodeStatus {
    /// Set up (leader: unicast paths up and, in P4CE mode, the switch path once).
    pub ready: bool,
    /// Why its thread stopped, if it failed.
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
    /// Turns of the node's loop.
    pub turns: u64,
    /// Turns that ended waiting on the port (nothing to do).
    pub idle_turns: u64,
    /// Turns in which endpoint timers ran.
    pub timer_turns: u64,
}

/// A running node thread.
pub struct NodeHandle {
    /// Its id.
    pub id: u16,
    stop: Arc<AtomicBool>,
    jobs: Sender<Job>,
    status: Arc<Mutex<NodeStatus>>,
    join: Option<JoinHandle<Option<NodeCtx>>>,
    /// Its CPU time.
    pub cpu: Arc<Mutex<Option<ThreadCpu>>>,
}

impl NodeHandle {
    /// Starts a node thread inside its namespace.
    pub fn start(setup: NodeSetup, clock: WallClock) -> Result<NodeHandle, NodeError> {
        let stop = Arc::new(AtomicBool::new(false));
        let status = Arc::new(Mutex::new(NodeStatus::default()));
        let cpu = Arc::new(Mutex::new(None));
        let (jobs, rx) = channel::<Job>();
        let id = setup.spec.id;
        let (s, st, c) = (stop.clone(), status.clone(), cpu.clone());
        let join = std::thread::Builder::new()
            .name(format!("p4ce-node{id}"))
            .spawn(move || {
                let ns = setup.netns.clone();
                let st2 = st.clone();
                let r = dataplane::netns::in_netns(&ns, move || {
                    if let Ok(mut g) = c.lock() {
                        *g = ThreadCpu::current();
                    }
                    node_main(setup, &clock, &s, &rx, &st2)
                });
                let r = r.map_err(NodeError::from).and_then(|r| r);
                match r {
                    Ok(ctx) => Some(ctx),
                    Err(e) => {
                        if let Ok(mut g) = st.lock() {
                            g.error = Some(e.to_string());
                        }
                        None
                    }
                }
            })
            .map_err(|e| NodeError::Setup(format!("node thread: {e}")))?;
        Ok(NodeHandle {
            id,
            stop,
            jobs,
            status,
            join: Some(join),
            cpu,
        })
    }

    /// A snapshot of its status.
    pub fn status(&self) -> NodeStatus {
        self.status.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Whether its thread still runs.
    pub fn running(&self) -> bool {
        self.join.as_ref().is_some_and(|j| !j.is_finished())
    }

    /// Runs `f` on the node's thread and returns its result (waiting at most `timeout`).
    pub fn exec<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut NodeCtx) -> R + Send + 'static,
    ) -> Result<R, NodeError> {
        let (tx, rx) = channel();
        let job: Job = Box::new(move |ctx| {
            let _ = tx.send(f(ctx));
        });
        self.jobs
            .send(job)
            .map_err(|_| NodeError::Node(self.id, "not running".into()))?;
        rx.recv_timeout(timeout)
            .map_err(|_| NodeError::Node(self.id, format!("no answer within {timeout:?}")))
    }

    /// Stops the thread (a crash, as far as the others can tell: it stops sending and
    /// receiving at once) and returns its final state.
    pub fn stop(&mut self) -> Option<NodeCtx> {
        self.stop.store(true, Ordering::Release);
        self.join.take().and_then(|j| j.join().ok()).flatten()
    }
}

impl Drop for NodeHandle {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn set_status(status: &Mutex<NodeStatus>, f: impl FnOnce(&mut NodeStatus)) {
    if let Ok(mut g) = status.lock() {
        f(&mut g);
    }
}

fn node_main(
    setup: NodeSetup,
    clock: &WallClock,
    stop: &AtomicBool,
    jobs: &Receiver<Job>,
    status: &Mutex<NodeStatus>,
) -> Result<NodeCtx, NodeError> {
    let port = AfPacketPort::open(&setup.ifname)?;
    let port = LinkPort::new(port, setup.link.clone())
        .map_err(|e| NodeError::Setup(format!("link model: {e}")))?;
    let mut parts = build_node(&setup.spec)?;
    let geometry = setup.spec.geometry;
    let (failover, takeover) = match setup.failover {
        Some(nf) => {
            let ids = &setup.spec.ids;
            let fo = Failover::new(
                &mut parts.ep,
                parts.pd,
                &nf.setup,
                setup.spec.id,
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
    let role = match setup.leader {
        Some(ls) => {
            let n = ls.replicas.len();
            Role::Leader(Box::new(LeaderState {
                leader: None,
                mode: ls.mode,
                queue: VecDeque::new(),
                repeat: None,
                meter: None,
                appended: Vec::new(),
                events: Vec::new(),
                switch_refusals: Vec::new(),
                switch_up_at: None,
                setup: ls,
                pending: Vec::new(),
                paths: vec![None; n],
                switch_cm: None,
                cm_retry_at: None,
                uni_retry_at: Some(Nanos::ZERO),
                record: setup.record,
            }))
        }
        None => Role::Replica(ReplicaState {
            replica: Replica::new(geometry, parts.log.lkey)?,
            applied: Vec::new(),
            record: setup.record,
            takeover,
        }),
    };
    let mut ctx = NodeCtx {
        id: setup.spec.id,
        host: Host::new(parts.ep, Box::new(port)),
        pd: parts.pd,
        log: parts.log,
        cq: parts.cq,
        switch_qp: parts.switch_qp,
        uni_qps: parts.uni_qps,
        geometry,
        role,
        failover,
        now: clock.now(),
    };
    if matches!(ctx.role, Role::Replica(_)) && ctx.failover.is_none() {
        set_status(status, |s| s.ready = true);
    }
    let (mut turns, mut idle_turns, mut timer_turns) = (0u64, 0u64, 0u64);
    let mut quick = 0u32;
    while !stop.load(Ordering::Acquire) {
        while let Ok(job) = jobs.try_recv() {
            ctx.now = clock.now();
            job(&mut ctx);
        }
        ctx.now = clock.now();
        let progress = ctx.host.poll(ctx.now)?;
        let mut work = !progress.is_idle();
        if work {
            quick = 0;
        }
        turns += 1;
        timer_turns += u64::from(progress.timers_ran);
        let wake = match ctx.role {
            Role::Leader(_) => leader_turn(&mut ctx, &mut work, status)?,
            Role::Replica(_) => replica_turn(&mut ctx, &mut work, status)?,
        };
        if !work {
            let until = wake
                .unwrap_or(ctx.now + MAX_IDLE)
                .min(ctx.now + MAX_IDLE)
                .max(ctx.now + MIN_IDLE);
            match ctx.host.next_wakeup() {
                // A timer (the endpoint's or the port's) less than a millisecond away, or one
                // the port keeps due: the port's wait cannot block that briefly, so nap in
                // short steps instead of spinning.
                Some(d) if d < ctx.now + MIN_IDLE => {
                    let left = d.saturating_sub(ctx.now).to_duration();
                    std::thread::sleep(if left.is_zero() {
                        SHORT_NAP
                    } else {
                        left.min(SHORT_NAP)
                    });
                }
                _ => {
                    let t0 = clock.now();
                    ctx.host.wait(clock, until)?;
                    // A port that keeps saying "readable" with nothing to receive (an error
                    // pending on the socket, say) would make this loop spin: after a few
                    // such wake-ups in a row, nap instead.
                    if clock.now().saturating_sub(t0) < SPURIOUS {
                        quick += 1;
                        if quick > 4 {
                            std::thread::sleep(SHORT_NAP);
                        }
                    } else {
                        quick = 0;
                    }
                }
            }
            idle_turns += 1;
        }
        if turns % 256 == 0 {
            set_status(status, |s| {
                s.turns = turns;
                s.idle_turns = idle_turns;
                s.timer_turns = timer_turns;
            });
        }
    }
    Ok(ctx)
}

fn replica_turn(
    ctx: &mut NodeCtx,
    work: &mut bool,
    status: &Mutex<NodeStatus>,
) -> Result<Option<Nanos>, NodeError> {
    let t = Instant::from_nanos(ctx.now.as_nanos());
    let (log, geometry, switch_qp, uni) = (ctx.log, ctx.geometry, ctx.switch_qp, ctx.uni_qps[0]);
    while let Some(ev) = ctx.host.endpoint_mut().poll_cm_event() {
        *work = true;
        if let Some(fo) = ctx.failover.as_mut() {
            if fo.on_cm(ctx.host.endpoint_mut(), t, &ev)? {
                continue;
            }
        }
        if let CmEvent::ConnectRequest {
            conn, peer, port, ..
        } = ev
        {
            let ep = ctx.host.endpoint_mut();
            if port != REPLICA_CM_PORT {
                ep.reject(t, conn, b"not a P4CE log port")?;
            } else if peer == IpAddr::V4(SWITCH_IP) {
                replica_accept(ep, t, conn, switch_qp, log, geometry)?;
            } else {
                // A leader's unicast connection (the replica serves the current leader: a
                // new connection replaces the old one).
                replica_accept(ep, t, conn, uni, log, geometry)?;
            }
        }
    }
    let Role::Replica(r) = &mut ctx.role else {
        return Ok(None);
    };
    let record = r.record;
    let applied = &mut r.applied;
    let n = r.replica.poll_apply(ctx.host.endpoint_mut(), |_, v| {
        if record {
            applied.push(v.to_vec());
        }
    })?;
    if n > 0 {
        *work = true;
        let a = r.replica.applied();
        set_status(status, |s| s.applied = a);
    }
    let Some(fo) = ctx.failover.as_mut() else {
        return Ok(None);
    };
    let ep = ctx.host.endpoint_mut();
    let now = ctx.now;
    *work |= fo.connect_mesh(ep, t, now)?;
    *work |= fo.tick(ep, now, true)?;
    if fo.armed() {
        set_status(status, |s| s.ready = true);
    }
    let applied = &mut r.applied;
    let (w, took) = fo.replica_step(ep, now, &mut r.replica, |v| {
        if record {
            applied.push(v.to_vec());
        }
    })?;
    *work |= w;
    if let Some(to) = took {
        take_over(ctx, to)?;
        *work = true;
    }
    Ok(None)
}

/// A replica that recovered the log becomes the leader: a fresh QP towards the switch (its
/// old switch QP is the replica side of the old group) and, in P4CE mode, a request for
/// the group through the agent at once.
fn take_over(ctx: &mut NodeCtx, to: TakeOver) -> Result<(), NodeError> {
    let Role::Replica(r) = &mut ctx.role else {
        return Ok(());
    };
    let (mode, on_lost) = r.takeover.take().unwrap_or((Path::Unicast, None));
    let appended = std::mem::take(&mut r.applied);
    let record = r.record;
    let cfg = to.cfg;
    let n = to.followers.len();
    if mode == Path::Switch {
        let (pd, cq) = (ctx.pd, ctx.cq);
        ctx.switch_qp = ctx.host.endpoint_mut().create_qp(rdma::verbs::QpInitAttr {
            pd,
            qp_type: rdma::verbs::QpType::Rc,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: 4096,
            max_recv_wr: 1,
        })?;
    }
    ctx.role = Role::Leader(Box::new(LeaderState {
        leader: Some(to.leader),
        mode,
        queue: VecDeque::new(),
        repeat: None,
        meter: None,
        appended,
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
        switch_cm: None,
        cm_retry_at: (mode == Path::Switch).then_some(ctx.now),
        uni_retry_at: None,
        record,
    }));
    Ok(())
}

fn leader_turn(
    ctx: &mut NodeCtx,
    work: &mut bool,
    status: &Mutex<NodeStatus>,
) -> Result<Option<Nanos>, NodeError> {
    let now = ctx.now;
    let t = Instant::from_nanos(now.as_nanos());
    let id = ctx.id;
    let switch_qp = ctx.switch_qp;
    let uni_qps = ctx.uni_qps.clone();
    let log = ctx.log;
    let cq = ctx.cq;
    let hello = ctx
        .failover
        .as_ref()
        .map_or_else(|| b"mu".to_vec(), |f| f.hello(false).to_bytes());
    if let Some(fo) = ctx.failover.as_mut() {
        *work |= fo.tick(ctx.host.endpoint_mut(), now, false)?;
    }
    let Role::Leader(l) = &mut ctx.role else {
        return Ok(None);
    };
    let ep = ctx.host.endpoint_mut();
    // Unicast connections to the replicas, through RDMA CM.
    if l.leader.is_none() && l.pending.is_empty() && l.uni_retry_at.is_some_and(|r| now >= r) {
        l.uni_retry_at = None;
        for (i, (ip, _)) in l.setup.replicas.iter().enumerate() {
            if l.paths[i].is_none() {
                reset_qp(ep, uni_qps[i])?;
                let c = ep.connect(t, uni_qps[i], IpAddr::V4(*ip), REPLICA_CM_PORT, &hello)?;
                l.pending.push((c, i));
            }
        }
        *work = true;
    }
    while let Some(ev) = ep.poll_cm_event() {
        *work = true;
        match ev {
            CmEvent::Established {
                conn, private_data, ..
            } => {
                if Some(conn) == l.switch_cm {
                    match switch_path_from_reply(switch_qp, &private_data) {
                        Ok(sp) => {
                            if let Some(ld) = l.leader.as_mut() {
                                ld.attach_switch(sp);
                            }
                            l.switch_up_at = Some(now);
                        }
                        Err(reason) => l.switch_refusals.push(reason),
                    }
                } else if let Some(k) = l.pending.iter().position(|(c, _)| *c == conn) {
                    let (_, i) = l.pending.swap_remove(k);
                    let offer = ReplicaOffer::parse(&private_data)
                        .map_err(|e| NodeError::Setup(format!("replica's offer: {e}")))?;
                    l.paths[i] = Some(ReplicaPath {
                        id: l.setup.replicas[i].1,
                        qpn: uni_qps[i],
                        va: offer.va,
                        rkey: offer.rkey,
                    });
                }
            }
            CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn } => {
                if Some(conn) == l.switch_cm {
                    l.switch_cm = None;
                    l.switch_refusals
                        .push("the switch agent refused or did not answer".into());
                    l.cm_retry_at = Some(now + Nanos::from(l.setup.cfg.switch_retry));
                } else if let Some(k) = l.pending.iter().position(|(c, _)| *c == conn) {
                    l.pending.swap_remove(k);
                    if l.pending.is_empty() {
                        l.uni_retry_at = Some(now + Nanos::from_millis(20));
                    }
                }
            }
            _ => {}
        }
    }
    if l.leader.is_none() && l.paths.iter().all(Option::is_some) {
        let paths = l.paths.iter().flatten().copied().collect();
        l.leader = Some(Leader::new(l.setup.cfg, log, cq, paths, None)?);
        if l.mode == Path::Switch {
            l.cm_retry_at = Some(now);
        }
    }
    let Some(leader) = l.leader.as_mut() else {
        return Ok(l.uni_retry_at);
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
    leader.poll(ep, t)?;
    while let Some(ev) = leader.poll_event() {
        *work = true;
        match ev {
            LeaderEvent::SwitchRetryDue if l.mode == Path::Switch => l.cm_retry_at = Some(now),
            LeaderEvent::ReplicaLost(r) => {
                if let Some(h) = &l.setup.on_lost {
                    h(r);
                }
            }
            _ => {}
        }
        if !matches!(ev, LeaderEvent::Committed(_)) {
            l.events.push(ev);
        }
    }
    while leader.can_append() {
        let v = match (l.queue.pop_front(), &l.repeat) {
            (Some(v), _) => v,
            (None, Some(r)) => r.clone(),
            (None, None) => break,
        };
        leader.append(ep, t, &v)?;
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
    let ready = l.mode == Path::Unicast || l.switch_up_at.is_some();
    let (stats, path) = (leader.stats(), leader.path());
    set_status(status, |s| {
        s.ready = ready;
        s.committed = committed;
        s.stats = stats;
        s.path = Some(path);
        s.leading = true;
    });
    let wake = leader.poll_timeout().map(|i| Nanos(i.as_nanos()));
    Ok(match (wake, l.cm_retry_at) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    })
}

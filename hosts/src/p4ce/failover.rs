//! Leader fail-over, each node on its own, over the wire only (no lab hands anything over),
//! with Mu's rules from [`crate::mu`]: [`Liveness`], [`Replica::follow`], [`recovery_source`],
//! [`Leader::resume_at`]. Every node of both labs runs it ([`super::machine::Node`]):
//!
//! - Connections: besides the leader's unicast connection to each replica, every two
//!   replicas connect through RDMA CM (the lower id asks, on its mesh QP for that peer). The
//!   ConnectRequests (and the mesh replies) carry a [`Hello`]: the sender's id, its log
//!   (VA, size, R_key) and its heartbeat MR.
//! - Heartbeats: every node bumps a counter in its heartbeat MR each tenth of the leader
//!   timeout; every replica READs the others' counters over the connections above
//!   ([`Liveness`]): the leader's through its unicast QP, the other replicas' through the
//!   mesh. The lowest live id leads. The leader READs its followers' counters too (the first
//!   leader learns where they are from the replicas' answers to its unicast connections,
//!   [`offer_heartbeat`]) and stops waiting for one whose counter stopped
//!   ([`Failover::lost_followers`], `Leader::mark_lost`), as Mu's leader does, rather than
//!   waiting for its QP's retries to run out.
//! - A replica that finds another node leading follows it ([`Replica::follow`]: writes only
//!   on that node's QP, none through the old group's switch QP, unapplied entries
//!   forgotten) and publishes whom it follows in its heartbeat MR.
//! - A replica that finds itself leading follows itself (takes writes from nobody), READs
//!   each live follower's "follows" word and applied count until every follower follows it
//!   (Mu's permission request, here answered by the follower's own detection; one that does
//!   not within a leader timeout is left out of the view), READs the log of the one furthest
//!   ahead if it is ahead of itself, applies it and leads from its end ([`TakeOver`]); the
//!   node then asks the switch's agent for the group on a fresh QP (a view change:
//!   the agent connects to the followers again).
//! - Coming back: a replica arms once the first leader's connection is up and watches the
//!   other replicas as their connections come up, so one that is cut off keeps nobody from
//!   arming. Broken mesh connections are asked for again (the lower id asks). A replica
//!   accepts a leader's connection only from the leader it follows ([`FOLLOWS_ANOTHER`]
//!   otherwise), and each (re)connected mesh QP gets the view's access, so a deposed leader
//!   never gets write access back. A replica that could not lead (too few followers) follows
//!   a lower live id once it sees one again. A node that took over READs the "follows" word
//!   of each reconnected replica outside its log and adds those that follow it
//!   ([`Failover::joiners`]): they catch up as any joining replica does ([`crate::mu::join`]).

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use dataplane::Nanos;
use rdma::verbs::{
    AccessFlags, CmEvent, ConnId, CqHandle, Endpoint, Instant, MrInfo, PdHandle, QpState, SendOp,
    SendWr, Sge, WcStatus, WorkCompletion,
};

use super::node::{host_ip, reset_qp};
use super::wire::{ReplicaOffer, OFFER_LEN};
use super::{NodeError, REPLICA_CM_PORT};
use crate::mu::{
    recovery_source, Leader, LeaderConfig, Liveness, LogGeometry, Replica, ReplicaPath,
};

/// wr_id bit of a heartbeat READ (low bits: the peer's index).
const HB: u64 = 1 << 59;
/// wr_id bit of a recovery READ (with one of the next three).
const RECOVER: u64 = 1 << 58;
/// Recovery READ of a follower's "follows" word.
const FOLLOWS: u64 = 1 << 57;
/// Recovery READ of a follower's applied count.
const APPLIED: u64 = 1 << 56;
/// Recovery READ of the adopted log.
const LOG: u64 = 1 << 55;
/// wr_id bit of a leader's heartbeat READ of a follower (low bits: its slot). The leader's
/// log consumes these completions and ignores them; the value is taken from where it lands.
const WATCH: u64 = 1 << 54;

/// wr_id bit of a leader's READ of a would-be joiner's "follows" word (low bits: its peer
/// index). Like [`WATCH`], the leader's log ignores the completion.
const JOIN_CHECK: u64 = 1 << 52;

/// Heartbeat MR: own counter, whom this node follows, then where READs land.
const HB_MR_LEN: usize = 384;
/// Offset of the heartbeat READ of peer k (8 bytes each).
const HB_READS: usize = 64;
/// Offset of the recovery READs of peer k (16 bytes each: follows, applied).
const REC_READS: usize = 128;
/// Offset of the leader's heartbeat READ of follower slot k (8 bytes each).
const WATCH_READS: usize = 256;
/// Offset of a leader's READ of peer k's "follows" word (8 bytes each).
const JOIN_READS: usize = 320;
/// Followers a leader watches at most.
const WATCH_SLOTS: usize = (JOIN_READS - WATCH_READS) / 8;

/// What a replica answers a leader it does not follow that asks it to connect (the leader
/// was deposed, or never led it): the leader stops asking.
pub const FOLLOWS_ANOTHER: &[u8] = b"follows another leader";

/// Bytes a replica appends to its log offer when it answers a leader's unicast connection
/// with fail-over on: its heartbeat MR's address and R_key ([`offer_heartbeat`]).
pub const OFFER_HEARTBEAT_LEN: usize = 12;

/// A replica's answer to a leader's unicast connection with fail-over on: its log offer,
/// then where its heartbeat counter is (VA, R_key; big-endian), so the leader can watch it.
pub fn offer_with_heartbeat(offer: &ReplicaOffer, hb_va: u64, hb_rkey: u32) -> Vec<u8> {
    let mut b = offer.to_bytes();
    b.extend_from_slice(&hb_va.to_be_bytes());
    b.extend_from_slice(&hb_rkey.to_be_bytes());
    b
}

/// The heartbeat MR (VA, R_key) a replica's answer names after its log offer, if it names
/// one (fail-over on).
pub fn offer_heartbeat(private_data: &[u8]) -> Option<(u64, u32)> {
    let b = private_data.get(OFFER_LEN..OFFER_LEN + OFFER_HEARTBEAT_LEN)?;
    let mut va = [0u8; 8];
    va.copy_from_slice(&b[..8]);
    let va = u64::from_be_bytes(va);
    let rkey = u32::from_be_bytes([b[8], b[9], b[10], b[11]]);
    (va != 0).then_some((va, rkey))
}

/// A follower the leader watches: its id, the leader's QP to it and its heartbeat MR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    /// Its id.
    pub id: u16,
    /// The leader's QP connected to it.
    pub qpn: u32,
    /// Address of its heartbeat MR.
    pub hb_va: u64,
    /// R_key of its heartbeat MR.
    pub hb_rkey: u32,
}

/// Completions of the node's own that a replica's fail-over keeps for it at most.
const MAX_OTHERS: usize = 256;

/// How long a mesh connection attempt waits before it is made again.
const MESH_RETRY: Nanos = Nanos::from_millis(20);

/// Encoded length of a [`Hello`].
pub const HELLO_LEN: usize = 4 + OFFER_LEN + 12;

/// What a node tells a peer when they connect (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The sender's id.
    pub id: u16,
    /// A replica-to-replica (mesh) connection; else the leader's unicast connection.
    pub mesh: bool,
    /// The sender's log.
    pub log: ReplicaOffer,
    /// Address of its heartbeat MR.
    pub hb_va: u64,
    /// R_key of its heartbeat MR.
    pub hb_rkey: u32,
}

impl Hello {
    /// Encodes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![b'H', if self.mesh { b'M' } else { b'L' }];
        b.extend_from_slice(&self.id.to_be_bytes());
        b.extend_from_slice(&self.log.to_bytes());
        b.extend_from_slice(&self.hb_va.to_be_bytes());
        b.extend_from_slice(&self.hb_rkey.to_be_bytes());
        b
    }

    /// Decodes (None: not a hello; private data may be padded).
    pub fn parse(b: &[u8]) -> Option<Hello> {
        if b.len() < HELLO_LEN || b[0] != b'H' || !matches!(b[1], b'L' | b'M') {
            return None;
        }
        let log = ReplicaOffer::parse(&b[4..28]).ok()?;
        let mut va = [0u8; 8];
        va.copy_from_slice(&b[28..36]);
        let mut rk = [0u8; 4];
        rk.copy_from_slice(&b[36..40]);
        Some(Hello {
            id: u16::from_be_bytes([b[2], b[3]]),
            mesh: b[1] == b'M',
            log,
            hb_va: u64::from_be_bytes(va),
            hb_rkey: u32::from_be_bytes(rk),
        })
    }
}

/// What fail-over did on a node, with the node's time (wall-clock in namespaces, virtual in
/// memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailoverEvent {
    /// Every connection up: heartbeats are read and judged from here on.
    Armed {
        /// When.
        at: Nanos,
    },
    /// This node follows node `leader` (write permissions moved).
    Follows {
        /// Whom.
        leader: u16,
        /// When.
        at: Nanos,
    },
    /// This node found itself the lowest live id and started recovery.
    Recovering {
        /// When.
        at: Nanos,
    },
    /// This node leads from entry `from`, adopting node `source`'s log, with `followers`.
    Leads {
        /// First entry it appends.
        from: u64,
        /// Whose log it adopted (itself when none was ahead).
        source: u16,
        /// Its followers' ids.
        followers: Vec<u16>,
        /// When.
        at: Nanos,
    },
    /// Recovery left a follower out or could not finish.
    Failed {
        /// Why.
        reason: String,
    },
}

/// A new leader's state right after recovery: the node makes it its leader role.
pub struct TakeOver {
    /// The log, continuing after the adopted entries.
    pub leader: Leader,
    /// `(IP, id)` of each follower.
    pub followers: Vec<(Ipv4Addr, u16)>,
    /// Its settings.
    pub cfg: LeaderConfig,
}

/// The fail-over settings of a node.
pub struct FailoverSetup {
    /// A node whose heartbeat does not change for this long counts as dead.
    pub timeout: Duration,
    /// The settings of the log it leads if it comes to lead.
    pub leader: LeaderConfig,
}

#[derive(Debug, Clone)]
struct Peer {
    id: u16,
    /// Its QP on this node: the unicast QP (the first leader) or the mesh QP.
    qpn: u32,
    /// Whether this node asks for the connection (mesh peers with a higher id).
    asks: bool,
    conn: Option<ConnId>,
    /// The connection was established (a QP that is not ready to send since is broken).
    up: bool,
    retry_at: Nanos,
    hello: Option<Hello>,
    pending: bool,
}

impl Peer {
    fn new(id: u16, qpn: u32, asks: bool) -> Peer {
        Peer {
            id,
            qpn,
            asks,
            conn: None,
            up: false,
            retry_at: Nanos::ZERO,
            hello: None,
            pending: false,
        }
    }

    /// A new connection on its QP (asked for or accepted): nothing in flight on it.
    fn connecting(&mut self, conn: ConnId) {
        self.conn = Some(conn);
        self.up = false;
        self.pending = false;
    }
}

/// A replica that may join the log of a node that took over: connected again and following
/// it ([`Failover::joiners`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Joiner {
    /// The leader's path to its log (on the mesh QP).
    pub path: ReplicaPath,
    /// Its heartbeat, to watch.
    pub watch: Watched,
}

#[derive(Debug)]
struct Recovery {
    started: Nanos,
    /// Peer indexes of the followers still in the view.
    followers: Vec<usize>,
    waiting: usize,
    follows: Vec<Option<u64>>,
    applied: Vec<Option<u64>>,
    again_at: Option<Nanos>,
    /// The peer whose log is being read.
    reading: Option<usize>,
    /// Too few followers: this node stays a replica (what it saw is in the events).
    gave_up: bool,
}

/// Heartbeats, view changes and recovery of one node (see the module docs).
pub struct Failover {
    me: u16,
    /// The first leader's id (it is never asked to join a log: it leads or is deposed).
    first: u16,
    timeout: Duration,
    every: Nanos,
    next: Nanos,
    hb: MrInfo,
    log: MrInfo,
    cq: CqHandle,
    geometry: LogGeometry,
    cfg: LeaderConfig,
    switch_qp: u32,
    peers: Vec<Peer>,
    live: Option<Liveness>,
    believed: u16,
    recovery: Option<Recovery>,
    /// While this node leads: the followers it watches, and what it saw of them.
    watch: Vec<Watched>,
    watch_live: Option<Liveness>,
    /// While this node leads after a take-over: the replicas its log has (live or
    /// joining); the others are candidates to join ([`Failover::joiners`]).
    members: Vec<u16>,
    /// Completions on a replica's CQ that are not fail-over's ([`Failover::take_others`]).
    others: Vec<WorkCompletion>,
    /// What it did so far.
    pub events: Vec<FailoverEvent>,
}

impl Failover {
    /// Node `me`'s fail-over state: `leader` is the first leader (watched through
    /// `uni_qp` unless `me` is it), `replicas` the other replicas' ids, watched through
    /// `mesh` (one QP each, in that order).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ep: &mut Endpoint,
        pd: PdHandle,
        setup: &FailoverSetup,
        me: u16,
        leader: u16,
        uni_qp: Option<u32>,
        replicas: &[u16],
        mesh: &[u32],
        log: MrInfo,
        cq: CqHandle,
        switch_qp: u32,
    ) -> Result<Failover, NodeError> {
        let hb = ep.reg_mr(
            pd,
            HB_MR_LEN,
            AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ,
        )?;
        let mut peers = Vec::new();
        if me != leader {
            if let Some(q) = uni_qp {
                peers.push(Peer::new(leader, q, false));
            }
            let others: Vec<u16> = replicas.iter().copied().filter(|r| *r != me).collect();
            if others.len() > mesh.len() || peers.len() + others.len() > (REC_READS - HB_READS) / 8
            {
                return Err(NodeError::Setup(format!(
                    "node {me}: {} mesh QPs for {} replicas",
                    mesh.len(),
                    others.len()
                )));
            }
            for (r, q) in others.iter().zip(mesh) {
                peers.push(Peer::new(*r, *q, *r > me));
            }
        }
        let every = Nanos::from(Liveness::period(setup.timeout));
        Ok(Failover {
            me,
            first: leader,
            timeout: setup.timeout,
            every,
            next: Nanos::ZERO,
            hb,
            log,
            cq,
            geometry: setup.leader.geometry,
            cfg: setup.leader,
            switch_qp,
            peers,
            live: None,
            believed: leader,
            recovery: None,
            watch: Vec::new(),
            watch_live: None,
            members: Vec::new(),
            others: Vec::new(),
            events: Vec::new(),
        })
    }

    /// This node's answer to a leader's unicast connection: `offer` and its heartbeat MR
    /// ([`offer_with_heartbeat`]).
    pub fn offer(&self, offer: &ReplicaOffer) -> Vec<u8> {
        offer_with_heartbeat(offer, self.hb.addr, self.hb.rkey)
    }

    /// This node leads `followers` from `now` on: its ticks READ their heartbeat counters
    /// (through the leader's QPs), and one whose counter stops changing for the timeout is
    /// reported by [`Failover::lost_followers`]. At most a few followers are watched.
    pub fn lead(&mut self, followers: &[Watched], now: Nanos) {
        self.watch = followers.iter().take(WATCH_SLOTS).copied().collect();
        let ids: Vec<u16> = self.watch.iter().map(|w| w.id).collect();
        self.watch_live = Some(Liveness::new(
            self.me,
            &ids,
            self.timeout,
            Instant::from_nanos(now.as_nanos()),
        ));
    }

    /// While this node leads: watches `w` too (a replica that joined its log), or afresh
    /// (one that joined again, on a new connection); what was seen of the others is kept.
    pub fn watch_also(&mut self, w: Watched, now: Nanos) {
        match self.watch.iter().position(|x| x.id == w.id) {
            Some(k) => self.watch[k] = w,
            None if self.watch.len() < WATCH_SLOTS => self.watch.push(w),
            None => return,
        }
        if let Some(l) = self.watch_live.as_mut() {
            l.watch(w.id, Instant::from_nanos(now.as_nanos()));
        }
    }

    /// While this node leads after a take-over: the replicas that may join its log now
    /// (Mu's permission check before the leader writes to them): a mesh peer, never the
    /// first leader (it leads or was deposed, and a deposed leader is no replica), that is
    /// connected and whose "follows" word, READ at the last tick, names this node (it
    /// granted this node write access and took it from everyone else). `members` are the
    /// replicas the log has already (live or joining); the ticks READ the others' words.
    pub fn joiners(
        &mut self,
        ep: &mut Endpoint,
        members: &[u16],
    ) -> Result<Vec<Joiner>, NodeError> {
        self.members = members.to_vec();
        if self.watch_live.is_none() {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for k in self.join_candidates(ep) {
            let o = JOIN_READS + 8 * k;
            let b = ep.mr_bytes_mut(self.hb.lkey)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            if u64::from_le_bytes(a) != u64::from(self.me) {
                continue;
            }
            b[o..o + 8].fill(0);
            let p = &self.peers[k];
            let Some(h) = p.hello else { continue };
            out.push(Joiner {
                path: ReplicaPath {
                    id: p.id,
                    qpn: p.qpn,
                    va: h.log.va,
                    rkey: h.log.rkey,
                },
                watch: Watched {
                    id: p.id,
                    qpn: p.qpn,
                    hb_va: h.hb_va,
                    hb_rkey: h.hb_rkey,
                },
            });
        }
        Ok(out)
    }

    /// Peer indexes of the replicas that could join this leader's log (see
    /// [`Failover::joiners`]), at most the READ area's slots.
    fn join_candidates(&self, ep: &Endpoint) -> Vec<usize> {
        self.peers
            .iter()
            .enumerate()
            .take((HB_MR_LEN - JOIN_READS) / 8)
            .filter(|(_, p)| {
                p.id != self.first
                    && p.up
                    && p.hello.is_some()
                    && !self.members.contains(&p.id)
                    && Self::qp_up(ep, p.qpn)
            })
            .map(|(k, _)| k)
            .collect()
    }

    /// A leader's tick: READs the "follows" word of each replica that could join (into a
    /// zeroed landing word, so an old answer is never taken for a new one; one naming this
    /// node is left for [`Failover::joiners`]).
    fn join_tick(&mut self, ep: &mut Endpoint) -> Result<(), NodeError> {
        let me = u64::from(self.me).to_le_bytes();
        for k in self.join_candidates(ep) {
            let o = JOIN_READS + 8 * k;
            let b = ep.mr_bytes_mut(self.hb.lkey)?;
            if b[o..o + 8] == me {
                continue;
            }
            b[o..o + 8].fill(0);
            let Some(h) = self.peers[k].hello else {
                continue;
            };
            let sge = Sge {
                addr: self.hb.addr + o as u64,
                length: 8,
                lkey: self.hb.lkey,
            };
            let op = SendOp::Read {
                remote_addr: h.hb_va + 8,
                rkey: h.hb_rkey,
            };
            // A full or failed QP: it is asked at a later tick.
            let _ = ep.post_send(
                self.peers[k].qpn,
                SendWr::new(JOIN_CHECK | k as u64, op, sge),
            );
        }
        Ok(())
    }

    /// While this node leads: the followers whose heartbeat stopped (the leader stops
    /// waiting for them).
    pub fn lost_followers(&self, now: Nanos) -> Vec<u16> {
        let t = Instant::from_nanos(now.as_nanos());
        match &self.watch_live {
            Some(l) => self
                .watch
                .iter()
                .map(|w| w.id)
                .filter(|id| !l.is_alive(*id, t))
                .collect(),
            None => Vec::new(),
        }
    }

    /// A leader's tick: what its last READs of the followers' counters brought, then new
    /// READs. Nobody waits for their completions (the leader's log takes them from the
    /// shared CQ); a dead follower's READs fail with its QP, which the log notices too.
    fn watch_tick(&mut self, ep: &mut Endpoint, now: Nanos) -> Result<(), NodeError> {
        let Some(live) = self.watch_live.as_mut() else {
            return Ok(());
        };
        let t = Instant::from_nanos(now.as_nanos());
        let b = ep.mr_bytes(self.hb.lkey)?;
        for (k, w) in self.watch.iter().enumerate() {
            let o = WATCH_READS + 8 * k;
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            live.observe(w.id, u64::from_le_bytes(a), t);
        }
        for (k, w) in self.watch.iter().enumerate() {
            if !Self::qp_up(ep, w.qpn) {
                continue;
            }
            let sge = Sge {
                addr: self.hb.addr + (WATCH_READS + 8 * k) as u64,
                length: 8,
                lkey: self.hb.lkey,
            };
            let op = SendOp::Read {
                remote_addr: w.hb_va,
                rkey: w.hb_rkey,
            };
            // A full or failed QP: the follower is as good as lost; its heartbeat says so.
            let _ = ep.post_send(w.qpn, SendWr::new(WATCH | k as u64, op, sge));
        }
        Ok(())
    }

    /// The hello this node sends (`mesh`: to a replica; else as the leader).
    pub fn hello(&self, mesh: bool) -> Hello {
        Hello {
            id: self.me,
            mesh,
            log: ReplicaOffer {
                rkey: self.log.rkey,
                va: self.log.addr,
                size: self.geometry.len() as u64,
            },
            hb_va: self.hb.addr,
            hb_rkey: self.hb.rkey,
        }
    }

    /// The latest time this node's fail-over must run again: its next heartbeat tick, the
    /// next status READs of a recovery, a mesh connection to ask for again.
    pub fn next_wakeup(&self) -> Nanos {
        let mut t = self.next;
        if let Some(at) = self
            .recovery
            .as_ref()
            .filter(|r| !r.gave_up)
            .and_then(|r| r.again_at)
        {
            t = t.min(at);
        }
        for p in &self.peers {
            if p.asks && p.conn.is_none() {
                t = t.min(p.retry_at);
            }
        }
        t
    }

    /// Whether heartbeats are judged: the first leader's connection is up (a replica then
    /// watches every peer connected to it, and those that connect later as they do).
    pub fn armed(&self) -> bool {
        self.live.is_some()
    }

    /// Whether this node judges `peer`'s heartbeat (armed, and connected to it at least
    /// once since).
    pub fn watches(&self, peer: u16) -> bool {
        self.live.as_ref().is_some_and(|l| l.watches(peer))
    }

    /// The completions a replica's fail-over took from the shared CQ that are not its own
    /// (the node's snapshot READ), oldest first.
    pub fn take_others(&mut self) -> Vec<WorkCompletion> {
        std::mem::take(&mut self.others)
    }

    /// The node this one follows (itself once it leads).
    pub fn believed(&self) -> u16 {
        self.believed
    }

    /// This node's QP connected to the node it follows (the unicast QP for the first
    /// leader, a mesh QP for one that took over), if that is a peer.
    pub fn believed_qp(&self) -> Option<u32> {
        self.peers
            .iter()
            .find(|p| p.id == self.believed)
            .map(|p| p.qpn)
    }

    /// A CM event on a node: takes mesh requests and replies, and notes the first leader's
    /// hello (the caller still accepts the leader's request, on a replica). A leader's
    /// request is refused ([`FOLLOWS_ANOTHER`]) unless this node follows that leader: a
    /// deposed leader that reconnects must not get write access back (a replica only ever
    /// grants it to the leader it follows). Returns whether the event was handled here.
    pub fn on_cm(
        &mut self,
        ep: &mut Endpoint,
        t: Instant,
        ev: &CmEvent,
    ) -> Result<bool, NodeError> {
        match ev {
            CmEvent::ConnectRequest {
                conn,
                port,
                private_data,
                ..
            } if *port == REPLICA_CM_PORT => {
                let Some(h) = Hello::parse(private_data) else {
                    return Ok(false);
                };
                let Some(k) = self.peers.iter().position(|p| p.id == h.id) else {
                    if h.mesh {
                        ep.reject(t, *conn, b"not a peer")?;
                        return Ok(true);
                    }
                    return Ok(false);
                };
                if !h.mesh {
                    if h.id != self.first || h.id != self.believed {
                        ep.reject(t, *conn, FOLLOWS_ANOTHER)?;
                        return Ok(true);
                    }
                    let p = &mut self.peers[k];
                    p.hello = Some(h);
                    p.connecting(*conn);
                    return Ok(false);
                }
                self.peers[k].hello = Some(h);
                let qpn = self.peers[k].qpn;
                reset_qp(ep, qpn)?;
                let reply = self.hello(true).to_bytes();
                ep.accept(t, *conn, qpn, &reply)?;
                self.peers[k].connecting(*conn);
                self.view_access(ep, k)?;
                Ok(true)
            }
            CmEvent::Established {
                conn, private_data, ..
            } => {
                let Some(k) = self.peers.iter().position(|p| p.conn == Some(*conn)) else {
                    return Ok(false);
                };
                self.peers[k].up = true;
                if self.peers[k].id != self.first {
                    self.view_access(ep, k)?;
                }
                if self.peers[k].asks {
                    match Hello::parse(private_data) {
                        Some(h) if h.mesh && h.id == self.peers[k].id => {
                            self.peers[k].hello = Some(h);
                        }
                        _ => {
                            return Err(NodeError::Node(
                                self.me,
                                format!("bad mesh reply from {}", self.peers[k].id),
                            ))
                        }
                    }
                }
                Ok(true)
            }
            CmEvent::Rejected { conn, .. } | CmEvent::Unreachable { conn } => {
                let Some(k) = self.peers.iter().position(|p| p.conn == Some(*conn)) else {
                    return Ok(false);
                };
                let p = &mut self.peers[k];
                if p.asks {
                    // Asked again at its retry time.
                    p.conn = None;
                    p.up = false;
                    if self.live.is_none() {
                        p.hello = None;
                    }
                }
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// A node asks its mesh peers with higher ids for a connection: again after a refusal
    /// or no answer, and again when an established one broke (its QP failed: the peer was
    /// cut off or crashed), at most every 20 ms. A replica that comes back this way
    /// is heartbeat-watched again and may join a new leader's log. Returns whether it sent
    /// anything.
    pub fn connect_mesh(
        &mut self,
        ep: &mut Endpoint,
        t: Instant,
        now: Nanos,
    ) -> Result<bool, NodeError> {
        let hello = self.hello(true).to_bytes();
        let mut sent = false;
        for p in self.peers.iter_mut() {
            if !p.asks {
                continue;
            }
            if p.conn.is_some() && p.up && !Self::qp_up(ep, p.qpn) {
                p.conn = None;
                p.up = false;
            }
            if p.conn.is_none() && now >= p.retry_at {
                reset_qp(ep, p.qpn)?;
                let c = ep.connect(t, p.qpn, IpAddr::V4(host_ip(p.id)), REPLICA_CM_PORT, &hello)?;
                p.connecting(c);
                p.retry_at = now + MESH_RETRY;
                sent = true;
            }
        }
        Ok(sent)
    }

    fn qp_up(ep: &Endpoint, qpn: u32) -> bool {
        matches!(ep.qp_state(qpn), Ok(QpState::Rts))
    }

    /// Bumps the own counter when a tick is due and, on a replica (`reads`), READs the
    /// peers' counters; arms once every connection is up. Returns whether it did anything.
    pub fn tick(&mut self, ep: &mut Endpoint, now: Nanos, reads: bool) -> Result<bool, NodeError> {
        if now < self.next {
            return Ok(false);
        }
        // This thread itself stalled (the scheduler, a loaded machine): the others' silence
        // meanwhile is not theirs to answer for.
        if self.next > Nanos::ZERO && now > self.next + Nanos::from(self.timeout / 2) {
            let stalled = now.saturating_sub(self.next).to_duration();
            for l in [self.live.as_mut(), self.watch_live.as_mut()]
                .into_iter()
                .flatten()
            {
                l.excuse(stalled);
            }
        }
        self.next = now + self.every;
        let b = ep.mr_bytes_mut(self.hb.lkey)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        b[..8].copy_from_slice(&u64::from_le_bytes(a).wrapping_add(1).to_le_bytes());
        if !reads {
            self.watch_tick(ep, now)?;
            self.join_tick(ep)?;
            return Ok(true);
        }
        self.arm(ep, now)?;
        for (k, p) in self.peers.iter_mut().enumerate() {
            let Some(h) = p.hello else { continue };
            if p.pending || !Self::qp_up(ep, p.qpn) {
                continue;
            }
            let sge = Sge {
                addr: self.hb.addr + (HB_READS + 8 * k) as u64,
                length: 8,
                lkey: self.hb.lkey,
            };
            let op = SendOp::Read {
                remote_addr: h.hb_va,
                rkey: h.hb_rkey,
            };
            if ep
                .post_send(p.qpn, SendWr::new(HB | k as u64, op, sge))
                .is_ok()
            {
                p.pending = true;
            }
        }
        Ok(true)
    }

    /// A (re)connected mesh QP gets the access of the current view (the CM grants writes):
    /// writes only from the node this one follows.
    fn view_access(&self, ep: &mut Endpoint, k: usize) -> Result<(), NodeError> {
        let p = &self.peers[k];
        if p.id == self.believed {
            Replica::grant_writes(ep, &[p.qpn], &[])?;
        } else {
            Replica::grant_writes(ep, &[], &[p.qpn])?;
        }
        Ok(())
    }

    /// A replica arms once the first leader's connection is up (with every peer connected
    /// by then; waiting for all of them would keep a replica whose peer is cut off from
    /// ever judging the leader), and afterwards watches each peer whose connection comes up.
    fn arm(&mut self, ep: &mut Endpoint, now: Nanos) -> Result<(), NodeError> {
        let t = Instant::from_nanos(now.as_nanos());
        let connected = |p: &Peer, ep: &Endpoint| p.hello.is_some() && Self::qp_up(ep, p.qpn);
        if self.live.is_none() {
            let leader_up = self
                .peers
                .iter()
                .filter(|p| p.id == self.first)
                .all(|p| connected(p, ep));
            if !leader_up {
                return Ok(());
            }
            self.live = Some(Liveness::new(self.me, &[], self.timeout, t));
            self.events.push(FailoverEvent::Armed { at: now });
        }
        if let Some(l) = self.live.as_mut() {
            for p in &self.peers {
                if !l.watches(p.id) && connected(p, ep) {
                    l.watch(p.id, t);
                }
            }
        }
        Ok(())
    }

    /// Takes a replica's completions (heartbeat and recovery READs).
    fn completions(
        &mut self,
        ep: &mut Endpoint,
        now: Nanos,
    ) -> Result<Vec<WorkCompletion>, NodeError> {
        let mut rec = Vec::new();
        let t = Instant::from_nanos(now.as_nanos());
        for wc in ep.poll_cq(self.cq, 256)? {
            if wc.wr_id & RECOVER != 0 {
                rec.push(wc);
                continue;
            }
            if wc.wr_id & HB == 0 {
                // Not fail-over's (the node's own READs): kept for the node.
                if self.others.len() < MAX_OTHERS {
                    self.others.push(wc);
                }
                continue;
            }
            let k = (wc.wr_id & 0xFF) as usize;
            let Some(p) = self.peers.get_mut(k) else {
                continue;
            };
            p.pending = false;
            if wc.status != WcStatus::Success {
                continue;
            }
            let b = ep.mr_bytes(self.hb.lkey)?;
            let o = HB_READS + 8 * k;
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            if let Some(l) = self.live.as_mut() {
                l.observe(p.id, u64::from_le_bytes(a), t);
            }
        }
        Ok(rec)
    }

    /// This node follows `leader` (see the module docs).
    fn follow(
        &mut self,
        ep: &mut Endpoint,
        replica: &mut Replica,
        leader: u16,
        now: Nanos,
    ) -> Result<(), NodeError> {
        let mut grant = Vec::new();
        let mut others = vec![self.switch_qp];
        for p in &self.peers {
            if p.id == leader {
                grant.push(p.qpn);
            } else {
                others.push(p.qpn);
            }
        }
        // Only connected QPs have permissions to change.
        grant.retain(|q| Self::qp_up(ep, *q));
        others.retain(|q| Self::qp_up(ep, *q));
        replica.follow(ep, &grant, &others)?;
        let old = self.believed;
        self.believed = leader;
        if let Some(l) = self.live.as_mut() {
            l.declare_dead(old, Instant::from_nanos(now.as_nanos()));
        }
        let b = ep.mr_bytes_mut(self.hb.lkey)?;
        b[8..16].copy_from_slice(&u64::from(leader).to_le_bytes());
        self.events.push(FailoverEvent::Follows { leader, at: now });
        Ok(())
    }

    fn post_status_reads(
        &mut self,
        ep: &mut Endpoint,
        rec: &mut Recovery,
    ) -> Result<(), NodeError> {
        let glen = self.geometry.len() as u64;
        rec.waiting = 0;
        let mut gone = Vec::new();
        for &k in &rec.followers {
            let p = &self.peers[k];
            let Some(h) = p.hello else { continue };
            let at = self.hb.addr + (REC_READS + 16 * k) as u64;
            let reads = [
                (FOLLOWS, at, h.hb_va + 8, h.hb_rkey),
                (APPLIED, at + 8, h.log.va + glen, h.log.rkey),
            ];
            for (tag, local, remote, rkey) in reads {
                let sge = Sge {
                    addr: local,
                    length: 8,
                    lkey: self.hb.lkey,
                };
                let op = SendOp::Read {
                    remote_addr: remote,
                    rkey,
                };
                if ep
                    .post_send(p.qpn, SendWr::new(RECOVER | tag | k as u64, op, sge))
                    .is_err()
                {
                    // Its QP failed meanwhile (the follower died): out of the view.
                    gone.push(k);
                    break;
                }
                rec.waiting += 1;
            }
            rec.follows[k] = None;
            rec.applied[k] = None;
        }
        for k in gone {
            rec.followers.retain(|f| *f != k);
            self.events.push(FailoverEvent::Failed {
                reason: format!("node {} unreachable during recovery", self.peers[k].id),
            });
        }
        Ok(())
    }

    /// A replica's turn: completions, view changes, recovery. `apply` sees every entry the
    /// replica applies (recovery applies the adopted ones). Returns whether it did anything
    /// and, when this node has just recovered, its leader.
    pub fn replica_step(
        &mut self,
        ep: &mut Endpoint,
        now: Nanos,
        replica: &mut Replica,
        mut apply: impl FnMut(&[u8]),
    ) -> Result<(bool, Option<TakeOver>), NodeError> {
        let wcs = self.completions(ep, now)?;
        let mut work = !wcs.is_empty();
        let t = Instant::from_nanos(now.as_nanos());
        let Some(live) = self.live.as_ref() else {
            return Ok((work, None));
        };
        let l = live.leader(t);
        if l != self.me && self.recovery.as_ref().is_some_and(|r| r.gave_up) {
            // It could not lead (too few followers: it was cut off, say); now that it sees a
            // lower live id again, it follows that node.
            self.recovery = None;
        }
        if self.recovery.is_none() && l != self.believed {
            work = true;
            replica.poll_apply(ep, |_, v| apply(v))?;
            self.follow(ep, replica, l, now)?;
            if l == self.me {
                self.events.push(FailoverEvent::Recovering { at: now });
                let followers: Vec<usize> = self
                    .peers
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| live_now(&self.live, p.id, t) && p.hello.is_some())
                    .map(|(k, _)| k)
                    .collect();
                let n = self.peers.len();
                let mut rec = Recovery {
                    started: now,
                    followers,
                    waiting: 0,
                    follows: vec![None; n],
                    applied: vec![None; n],
                    again_at: None,
                    reading: None,
                    gave_up: false,
                };
                self.post_status_reads(ep, &mut rec)?;
                self.recovery = Some(rec);
            }
        }
        let Some(mut rec) = self.recovery.take() else {
            return Ok((work, None));
        };
        let r = self.recover(ep, now, replica, &mut rec, wcs, &mut apply);
        match r {
            Ok(Some(to)) => Ok((true, Some(to))),
            Ok(None) => {
                self.recovery = Some(rec);
                Ok((work, None))
            }
            Err(e) => Err(e),
        }
    }

    fn recover(
        &mut self,
        ep: &mut Endpoint,
        now: Nanos,
        replica: &mut Replica,
        rec: &mut Recovery,
        wcs: Vec<WorkCompletion>,
        apply: &mut impl FnMut(&[u8]),
    ) -> Result<Option<TakeOver>, NodeError> {
        if rec.gave_up {
            return Ok(None);
        }
        let mut log_done = None;
        for wc in wcs {
            let k = (wc.wr_id & 0xFF) as usize;
            if wc.wr_id & LOG != 0 {
                log_done = Some(wc.status == WcStatus::Success);
                continue;
            }
            rec.waiting = rec.waiting.saturating_sub(1);
            if wc.status != WcStatus::Success {
                if rec.followers.contains(&k) {
                    rec.followers.retain(|f| *f != k);
                    self.events.push(FailoverEvent::Failed {
                        reason: format!("node {} did not answer recovery", self.peers[k].id),
                    });
                }
                continue;
            }
            let b = ep.mr_bytes(self.hb.lkey)?;
            let o = REC_READS + 16 * k + if wc.wr_id & APPLIED != 0 { 8 } else { 0 };
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            let v = u64::from_le_bytes(a);
            if wc.wr_id & APPLIED != 0 {
                rec.applied[k] = Some(v);
            } else {
                rec.follows[k] = Some(v);
            }
        }
        if let Some(src) = rec.reading {
            let Some(ok) = log_done else {
                return Ok(None);
            };
            let source = if ok {
                self.peers[src].id
            } else {
                self.events.push(FailoverEvent::Failed {
                    reason: "log READ failed; adopting own log".into(),
                });
                self.me
            };
            return self.take_over(ep, now, replica, rec, source, apply);
        }
        if rec.waiting > 0 {
            return Ok(None);
        }
        let me = u64::from(self.me);
        let lagging: Vec<usize> = rec
            .followers
            .iter()
            .copied()
            .filter(|k| rec.follows[*k] != Some(me))
            .collect();
        if !lagging.is_empty() {
            if now < rec.started + Nanos::from(self.timeout) {
                // Not every follower has moved yet: ask again a tick later.
                match rec.again_at {
                    None => rec.again_at = Some(now + self.every),
                    Some(at) if now >= at => {
                        rec.again_at = None;
                        self.post_status_reads(ep, rec)?;
                    }
                    Some(_) => {}
                }
                return Ok(None);
            }
            for k in &lagging {
                self.events.push(FailoverEvent::Failed {
                    reason: format!("node {} does not follow; left out", self.peers[*k].id),
                });
            }
            rec.followers.retain(|k| !lagging.contains(k));
        }
        let applied: Vec<Option<u64>> = rec.followers.iter().map(|k| rec.applied[*k]).collect();
        match recovery_source(replica.applied(), &applied) {
            Some(i) => {
                let k = rec.followers[i];
                let Some(h) = self.peers[k].hello else {
                    return Ok(None);
                };
                let sge = Sge {
                    addr: self.log.addr,
                    length: self.geometry.len() as u32,
                    lkey: self.log.lkey,
                };
                let op = SendOp::Read {
                    remote_addr: h.log.va,
                    rkey: h.log.rkey,
                };
                let wr = SendWr::new(RECOVER | LOG | k as u64, op, sge);
                if ep.post_send(self.peers[k].qpn, wr).is_err() {
                    self.events.push(FailoverEvent::Failed {
                        reason: "log READ refused; adopting own log".into(),
                    });
                    let me = self.me;
                    rec.followers.retain(|f| *f != k);
                    return self.take_over(ep, now, replica, rec, me, apply);
                }
                rec.reading = Some(k);
                Ok(None)
            }
            None => {
                let me = self.me;
                self.take_over(ep, now, replica, rec, me, apply)
            }
        }
    }

    fn take_over(
        &mut self,
        ep: &mut Endpoint,
        now: Nanos,
        replica: &mut Replica,
        rec: &mut Recovery,
        source: u16,
        apply: &mut impl FnMut(&[u8]),
    ) -> Result<Option<TakeOver>, NodeError> {
        replica.poll_apply(ep, |_, v| apply(v))?;
        let end = replica.applied();
        let mut paths = Vec::new();
        let mut followers = Vec::new();
        let mut watch = Vec::new();
        for &k in &rec.followers {
            let p = &self.peers[k];
            if let Some(h) = p.hello {
                paths.push(ReplicaPath {
                    id: p.id,
                    qpn: p.qpn,
                    va: h.log.va,
                    rkey: h.log.rkey,
                });
                followers.push((host_ip(p.id), p.id));
                watch.push(Watched {
                    id: p.id,
                    qpn: p.qpn,
                    hb_va: h.hb_va,
                    hb_rkey: h.hb_rkey,
                });
            }
        }
        if paths.len() < self.cfg.f {
            self.events.push(FailoverEvent::Failed {
                reason: format!(
                    "recovery: {} live followers, f = {}; not leading",
                    paths.len(),
                    self.cfg.f
                ),
            });
            rec.gave_up = true;
            return Ok(None);
        }
        let mut leader = Leader::new(self.cfg, self.log, self.cq, paths)?;
        leader.resume_at(end)?;
        self.lead(&watch, now);
        self.events.push(FailoverEvent::Leads {
            from: end,
            source,
            followers: followers.iter().map(|(_, id)| *id).collect(),
            at: now,
        });
        Ok(Some(TakeOver {
            leader,
            followers,
            cfg: self.cfg,
        }))
    }
}

fn live_now(live: &Option<Liveness>, id: u16, t: Instant) -> bool {
    live.as_ref().is_some_and(|l| l.is_alive(id, t))
}

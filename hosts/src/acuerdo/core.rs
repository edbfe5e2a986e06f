//! The protocol of the paper's Figures 4–7 as an I/O-free state machine: messages and SST
//! rows go in ([`Core::receive`], [`Core::set_accept`], [`Core::set_commit`],
//! [`Core::set_vote`]), time is passed in ([`Core::tick`]), and what to send comes out as
//! [`Output`]s (ring messages, SST pushes) the caller carries: over RDMA in
//! [`super::node`], directly in the tests. Variables keep the paper's names.
//!
//! Where the figures leave a detail open this file decides, and says so:
//! - a follower commits a normal message only once it holds it (Figure 6, line 79 would
//!   otherwise skip it);
//! - committing a diff sets `Committed` to the diff's own header `(E_cur, 0)`, so the
//!   leader's Commit_SST row shows the new epoch and followers can commit the diff too;
//! - failure detection (the paper's "heartbeat timeout") is a counter in each node's
//!   Commit_SST row, pushed every `heartbeat`; a node whose counter has not moved for
//!   `timeout` is suspected. `timed_out` in Figure 7 is: the follower's leader is
//!   suspected, the best candidate is suspected, or the election made no progress for
//!   `timeout`;
//! - the leader's Commit_SST row goes out when it changed, at most every `commit_push_ns`;
//!   every node's goes out with each heartbeat (the paper pushes it "periodically"; the
//!   followers' rows serve diffs and liveness only);
//! - committed entries older than the last `keep` are dropped from the Log; a node whose
//!   last commit is older than that gets no diff (it cannot catch up without a snapshot);
//! - a node that missed an election (it started late, or its election timer ran out just
//!   as the others agreed) votes for a larger epoch than the winner's, so its promise
//!   refuses the winner's diff and the figures leave it electing alone for ever. The
//!   leader, seeing a vote above its own epoch, runs the election again (it votes for
//!   itself with a still larger epoch, as after a timeout); its followers join a new vote
//!   of their own leader, and so does the late node (the leader is at least as up to date),
//!   so the new epoch's diffs reach every node. One short election, no lost message.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use super::error::AcuerdoError;
use super::msg::{Body, Diff, Message};
use super::types::{Epoch, MsgHdr, Pid, Vote};

/// Settings of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// This node (`Self`).
    pub me: Pid,
    /// Nodes `0..nodes` (`NodeIDs`); 2f+1 of them.
    pub nodes: usize,
    /// Push the Commit_SST row (the heartbeat) at least this often, in nanoseconds.
    pub heartbeat_ns: u64,
    /// Suspect a node whose heartbeat has not moved for this long, in nanoseconds.
    pub timeout_ns: u64,
    /// Committed Log entries kept for diffs.
    pub keep: usize,
    /// Push a changed Commit_SST row at most this often, ns (Figure 6, line 93: the commit
    /// reaches followers periodically, off the critical path); 0: at every change.
    pub commit_push_ns: u64,
}

impl Config {
    /// Node `me` of `nodes` with heartbeat 100 µs, timeout 1 ms and 2^16 entries kept.
    pub fn new(me: Pid, nodes: usize) -> Config {
        Config {
            me,
            nodes,
            heartbeat_ns: 100_000,
            timeout_ns: 1_000_000,
            keep: 1 << 16,
            commit_push_ns: 2_000,
        }
    }
}

/// The node's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Role {
    /// In an election.
    Electing,
    /// Leading `E_cur`.
    Leader,
    /// Following `E_cur.ldr`.
    Follower,
}

/// A shared state table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Accept_SST: the last header each node accepted.
    Accept,
    /// Commit_SST: the last header each node committed, and its heartbeat.
    Commit,
    /// Vote_SST: each node's vote.
    Vote,
}

/// A row of the Commit_SST: the last committed header and the heartbeat counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommitRow {
    /// `Committed`.
    pub committed: MsgHdr,
    /// Bumped at every push.
    pub hb: u64,
}

/// Something to carry to other nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Put an encoded message on the outgoing ring to node `to`.
    Send {
        /// Destination.
        to: Pid,
        /// The encoded [`Message`] (shared between destinations).
        msg: Arc<Vec<u8>>,
    },
    /// Push this node's row of `table` to node `to`.
    Push {
        /// Table.
        table: Table,
        /// Destination.
        to: Pid,
    },
}

/// A delivered message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Position in the delivered sequence (0, 1, ...), the same message at every node.
    pub pos: u64,
    /// Its header.
    pub hdr: MsgHdr,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// Something that happened, with the time it was seen (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Event {
    /// This node suspected its leader `ldr` and fell into an election.
    Suspected {
        /// The leader.
        ldr: Pid,
        /// When.
        at: u64,
    },
    /// This node won the election of `epoch` and sent its diffs.
    Elected {
        /// The new epoch.
        epoch: Epoch,
        /// When.
        at: u64,
    },
    /// This node, leader of `epoch`, committed its diff: a quorum joined.
    DiffCommitted {
        /// The epoch.
        epoch: Epoch,
        /// When.
        at: u64,
    },
    /// This leader saw node `node` vote above its epoch (it missed the election) and runs
    /// the election again.
    Reelect {
        /// The node.
        node: Pid,
        /// When.
        at: u64,
    },
    /// Node `node` was too far behind for a diff (its commits are older than the Log).
    LeftBehind {
        /// The node.
        node: Pid,
        /// When.
        at: u64,
    },
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoreStats {
    /// Messages accepted (Figure 5, line 47).
    pub accepted: u64,
    /// Diffs accepted (line 54).
    pub diffs: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// Messages refused: an older epoch, or a diff-less message of a newer one.
    pub stale: u64,
    /// Messages that did not decode.
    pub malformed: u64,
    /// Votes cast.
    pub votes: u64,
}

/// One node of the protocol (see the module docs).
#[derive(Debug)]
pub struct Core {
    cfg: Config,
    e_cur: Epoch,
    e_new: Epoch,
    accepted: MsgHdr,
    committed: MsgHdr,
    next: MsgHdr,
    count: u32,
    role: Role,
    accept_sst: Vec<MsgHdr>,
    commit_sst: Vec<CommitRow>,
    vote_sst: Vec<Vote>,
    log: BTreeMap<MsgHdr, Vec<u8>>,
    /// Largest header dropped from the Log.
    gc_upto: MsgHdr,
    out: VecDeque<Output>,
    deliveries: VecDeque<Delivery>,
    events: Vec<Event>,
    pos: u64,
    accept_dirty: bool,
    commit_dirty: bool,
    /// Per node: its last heartbeat and when it last moved.
    seen: Vec<(u64, u64)>,
    last_tick: Option<u64>,
    next_hb: u64,
    /// When the Commit_SST row was last pushed.
    last_commit_push: u64,
    /// When this node last changed its vote (or entered the election).
    vote_at: u64,
    /// Whether the first election (start-up) is still to run.
    startup: bool,
    stats: CoreStats,
}

impl Core {
    /// A node at start-up: electing.
    pub fn new(cfg: Config) -> Result<Core, AcuerdoError> {
        if cfg.nodes == 0 || cfg.me as usize >= cfg.nodes || cfg.nodes > 64 {
            return Err(AcuerdoError::Config(format!(
                "node {} of {} (1 to 64 nodes)",
                cfg.me, cfg.nodes
            )));
        }
        if cfg.heartbeat_ns == 0 || cfg.timeout_ns <= cfg.heartbeat_ns || cfg.keep == 0 {
            return Err(AcuerdoError::Config(format!(
                "heartbeat {} ns, timeout {} ns, keep {}: the timeout must exceed the heartbeat",
                cfg.heartbeat_ns, cfg.timeout_ns, cfg.keep
            )));
        }
        let n = cfg.nodes;
        Ok(Core {
            cfg,
            e_cur: Epoch::default(),
            e_new: Epoch::default(),
            accepted: MsgHdr::default(),
            committed: MsgHdr::default(),
            next: MsgHdr::default(),
            count: 0,
            role: Role::Electing,
            accept_sst: vec![MsgHdr::default(); n],
            commit_sst: vec![CommitRow::default(); n],
            vote_sst: vec![Vote::default(); n],
            log: BTreeMap::new(),
            gc_upto: MsgHdr::default(),
            out: VecDeque::new(),
            deliveries: VecDeque::new(),
            events: Vec::new(),
            pos: 0,
            accept_dirty: false,
            commit_dirty: false,
            seen: vec![(0, 0); n],
            last_tick: None,
            next_hb: 0,
            last_commit_push: 0,
            vote_at: 0,
            startup: true,
            stats: CoreStats::default(),
        })
    }

    fn majority(&self) -> usize {
        self.cfg.nodes / 2 + 1
    }

    /// This node's id.
    pub fn me(&self) -> Pid {
        self.cfg.me
    }
    /// Settings.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// The role.
    pub fn role(&self) -> Role {
        self.role
    }
    /// `E_cur`.
    pub fn epoch(&self) -> Epoch {
        self.e_cur
    }
    /// `E_new`.
    pub fn new_epoch(&self) -> Epoch {
        self.e_new
    }
    /// `Accepted`.
    pub fn accepted(&self) -> MsgHdr {
        self.accepted
    }
    /// `Committed`.
    pub fn committed(&self) -> MsgHdr {
        self.committed
    }
    /// When a held-back Commit_SST push falls due (ns), if one is pending.
    pub fn commit_push_at(&self) -> Option<u64> {
        (self.commit_dirty && self.role == Role::Leader)
            .then_some(self.last_commit_push + self.cfg.commit_push_ns)
    }
    /// Messages delivered so far.
    pub fn delivered(&self) -> u64 {
        self.pos
    }
    /// Counters.
    pub fn stats(&self) -> CoreStats {
        self.stats
    }
    /// Whether this node leads an epoch it has joined (its diff accepted): it may broadcast.
    pub fn is_leader(&self) -> bool {
        self.role == Role::Leader && self.e_cur == self.e_new && self.e_cur.ldr == self.cfg.me
    }

    /// This node's row of `table`, as pushed.
    pub fn my_accept(&self) -> MsgHdr {
        self.accept_sst[self.cfg.me as usize]
    }
    /// Node `j`'s Accept_SST row as this node last read it (its own: its `Accepted`).
    pub fn accept_row(&self, j: Pid) -> MsgHdr {
        self.accept_sst.get(j as usize).copied().unwrap_or_default()
    }
    /// This node's Commit_SST row.
    pub fn my_commit(&self) -> CommitRow {
        self.commit_sst[self.cfg.me as usize]
    }
    /// This node's Vote_SST row.
    pub fn my_vote(&self) -> Vote {
        self.vote_sst[self.cfg.me as usize]
    }

    /// Node `j`'s Accept_SST row arrived (an RDMA WRITE landed).
    pub fn set_accept(&mut self, j: Pid, v: MsgHdr) {
        if j != self.cfg.me && (j as usize) < self.cfg.nodes {
            self.accept_sst[j as usize] = v;
        }
    }
    /// Node `j`'s Commit_SST row arrived.
    pub fn set_commit(&mut self, j: Pid, v: CommitRow) {
        if j != self.cfg.me && (j as usize) < self.cfg.nodes {
            self.commit_sst[j as usize] = v;
        }
    }
    /// Node `j`'s Vote_SST row arrived.
    pub fn set_vote(&mut self, j: Pid, v: Vote) {
        if j != self.cfg.me && (j as usize) < self.cfg.nodes {
            self.vote_sst[j as usize] = v;
        }
    }

    /// The next thing to send.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.out.pop_front()
    }
    /// The next delivered message.
    pub fn poll_delivery(&mut self) -> Option<Delivery> {
        self.deliveries.pop_front()
    }
    /// Events since the last call.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    fn push_all(&mut self, table: Table) {
        for j in 0..self.cfg.nodes as Pid {
            if j != self.cfg.me {
                self.out.push_back(Output::Push { table, to: j });
            }
        }
    }

    /// Figure 4: the leader broadcasts a client payload; returns its header.
    pub fn broadcast(&mut self, pyld: Vec<u8>) -> Result<MsgHdr, AcuerdoError> {
        if !self.is_leader() {
            return Err(AcuerdoError::NotLeader(self.cfg.me));
        }
        self.count += 1;
        let hdr = MsgHdr {
            e: self.e_new,
            cnt: self.count,
        };
        let msg = Message {
            hdr,
            body: Body::Payload(pyld),
        };
        let bytes = Arc::new(msg.encode());
        for j in 0..self.cfg.nodes as Pid {
            if j != self.cfg.me {
                self.out.push_back(Output::Send {
                    to: j,
                    msg: bytes.clone(),
                });
            }
        }
        self.accept(msg);
        Ok(hdr)
    }

    /// A message arrived on the ring from node `from` (its bytes, as [`Message::encode`]
    /// wrote them). A batch is a run of these before the next [`Core::tick`], which pushes
    /// one acceptance for the whole batch.
    pub fn receive(&mut self, _from: Pid, bytes: &[u8]) {
        match Message::decode(bytes) {
            // An epoch led by no node of this group is refused like a malformed message.
            Ok(m) if (m.hdr.e.ldr as usize) < self.cfg.nodes => self.accept(m),
            _ => self.stats.malformed += 1,
        }
    }

    /// Figure 5: accepting.
    fn accept(&mut self, m: Message) {
        let e = m.hdr.e;
        if e == self.e_new && e == self.e_cur {
            // Normal message acceptance (a second diff of the epoch cannot come: dropped).
            let Body::Payload(p) = m.body else {
                self.stats.stale += 1;
                return;
            };
            self.log.insert(m.hdr, p);
            self.accepted = m.hdr;
            self.accept_sst[self.cfg.me as usize] = m.hdr;
            self.accept_dirty = true;
            self.stats.accepted += 1;
        } else if self.e_new <= e {
            // Diff acceptance and transition into broadcast; a newer epoch always starts
            // with its diff (FIFO rings), so anything else is refused.
            let Body::Diff(d) = m.body else {
                self.stats.stale += 1;
                return;
            };
            self.e_new = e;
            self.e_cur = e;
            if e.ldr != self.cfg.me {
                self.role = Role::Follower;
            }
            self.apply_diff(d);
            self.accepted = m.hdr;
            self.accept_sst[self.cfg.me as usize] = m.hdr;
            self.accept_dirty = true;
            self.next = MsgHdr { e, cnt: 0 };
            self.stats.diffs += 1;
        } else {
            self.stats.stale += 1;
        }
    }

    /// Line 62–63: drop the uncommitted entries (all newer than the diff's start, which is
    /// at most this node's `Committed`) and take the diff's.
    fn apply_diff(&mut self, d: Diff) {
        let committed = self.committed;
        let stale: Vec<MsgHdr> = self.log.range(committed..).map(|(h, _)| *h).collect();
        for h in stale {
            if h > committed {
                self.log.remove(&h);
            }
        }
        for (h, n) in d.entries {
            if h > committed {
                self.log.insert(h, n);
            }
        }
    }

    /// Runs what is due at `now` (ns): failure detection, the election (Figure 7),
    /// committing (Figure 6), the batch's acceptance push and the Commit_SST push.
    pub fn tick(&mut self, now: u64) {
        self.watch(now);
        match self.role {
            Role::Follower if self.suspected(self.e_cur.ldr, now) => {
                self.events.push(Event::Suspected {
                    ldr: self.e_cur.ldr,
                    at: now,
                });
                self.elect(now, true);
            }
            Role::Leader => {
                if let Some(node) = self.missed_election() {
                    self.events.push(Event::Reelect { node, at: now });
                    self.elect(now, true);
                }
            }
            Role::Follower if self.vote_sst[self.e_cur.ldr as usize].e_new > self.e_cur => {
                // The leader runs the election again (see the module docs): join it.
                self.elect(now, false);
            }
            Role::Electing => {
                let timed_out = self.startup || self.election_stuck(now);
                self.startup = false;
                self.elect(now, timed_out);
            }
            _ => {}
        }
        self.commit(now);
        if self.accept_dirty {
            self.accept_dirty = false;
            let ldr = self.e_cur.ldr;
            if ldr != self.cfg.me && self.role != Role::Electing {
                self.out.push_back(Output::Push {
                    table: Table::Accept,
                    to: ldr,
                });
            }
        }
        // The leader's row is what followers commit by: pushed soon after it changes.
        // Followers' rows serve diffs and liveness only: they go with the heartbeat.
        let push_due = now >= self.last_commit_push + self.cfg.commit_push_ns;
        let leads = self.role == Role::Leader;
        if (self.commit_dirty && push_due && leads) || now >= self.next_hb {
            self.commit_dirty = false;
            self.last_commit_push = now;
            self.next_hb = now + self.cfg.heartbeat_ns;
            let me = self.cfg.me as usize;
            self.commit_sst[me].committed = self.committed;
            self.commit_sst[me].hb += 1;
            self.push_all(Table::Commit);
        }
        self.gc();
    }

    /// Heartbeats: when each node's counter last moved. A node that itself stalled for
    /// half a timeout excuses everyone's silence meanwhile.
    fn watch(&mut self, now: u64) {
        if self
            .last_tick
            .is_some_and(|t| now.saturating_sub(t) > self.cfg.timeout_ns / 2)
        {
            for s in &mut self.seen {
                s.1 = now;
            }
        }
        if self.last_tick.is_none() {
            for s in &mut self.seen {
                s.1 = now;
            }
        }
        self.last_tick = Some(now);
        for (j, row) in self.commit_sst.iter().enumerate() {
            if row.hb != self.seen[j].0 {
                self.seen[j] = (row.hb, now);
            }
        }
    }

    /// A node, other than this leader, voting for an epoch above the current one.
    fn missed_election(&self) -> Option<Pid> {
        let me = self.cfg.me as usize;
        (0..self.cfg.nodes)
            .find(|&j| j != me && self.vote_sst[j].e_new > self.e_cur)
            .map(|j| j as Pid)
    }

    /// Whether node `j` is suspected.
    pub fn suspected(&self, j: Pid, now: u64) -> bool {
        j != self.cfg.me
            && self
                .seen
                .get(j as usize)
                .is_none_or(|s| now.saturating_sub(s.1) > self.cfg.timeout_ns)
    }

    /// Figure 7's `timed_out` while electing: the best candidate is suspected, or the
    /// election made no progress for a timeout (staggered by id, so not all re-vote at once).
    fn election_stuck(&self, now: u64) -> bool {
        let mx = self.max_vote();
        if mx.e_new.ldr != self.cfg.me && self.suspected(mx.e_new.ldr, now) {
            return true;
        }
        let stagger = self.cfg.timeout_ns * u64::from(self.cfg.me) / self.cfg.nodes as u64;
        now.saturating_sub(self.vote_at) > self.cfg.timeout_ns + stagger
    }

    fn max_vote(&self) -> Vote {
        self.vote_sst.iter().copied().max().unwrap_or_default()
    }

    /// Figure 7: one step of the fixed-point election.
    fn elect(&mut self, now: u64, timed_out: bool) {
        let me = self.cfg.me as usize;
        if self.role != Role::Electing {
            self.vote_at = now;
        }
        self.role = Role::Electing;
        let mx = self.max_vote();
        if timed_out || self.accepted > mx.acpt {
            // Vote for self with a bigger epoch.
            self.e_new = Epoch {
                round: self.e_new.round.max(mx.e_new.round) + 1,
                ldr: self.cfg.me,
            };
            self.vote_sst[me] = Vote {
                e_new: self.e_new,
                acpt: self.accepted,
            };
            self.push_all(Table::Vote);
            self.vote_at = now;
            self.stats.votes += 1;
        } else if mx > self.vote_sst[me] && self.accepted <= mx.acpt {
            // Join the largest vote.
            self.e_new = mx.e_new;
            self.vote_sst[me] = Vote {
                e_new: self.e_new,
                acpt: mx.acpt,
            };
            self.push_all(Table::Vote);
            self.vote_at = now;
            self.stats.votes += 1;
        }
        let mine = self.vote_sst[me];
        let votes = self.vote_sst.iter().filter(|v| **v == mine).count();
        if votes >= self.majority() && mine.e_new.ldr == self.cfg.me {
            self.lead(now);
        }
    }

    /// Figure 7, lines 117–126: the winner sends every node (itself included) its diff.
    fn lead(&mut self, now: u64) {
        self.role = Role::Leader;
        self.count = 0;
        self.events.push(Event::Elected {
            epoch: self.e_new,
            at: now,
        });
        let comm_cpy: Vec<MsgHdr> = self.commit_sst.iter().map(|r| r.committed).collect();
        let hdr = MsgHdr {
            e: self.e_new,
            cnt: 0,
        };
        let me = self.cfg.me;
        for j in 0..self.cfg.nodes as Pid {
            let from = if j == me {
                self.committed
            } else {
                comm_cpy[j as usize]
            };
            if from < self.gc_upto {
                self.events.push(Event::LeftBehind { node: j, at: now });
                continue;
            }
            // (A node's commit beyond this leader's last accepted header cannot happen in
            // the protocol; should a row say so, it gets an empty diff, not a panic.)
            let entries = if from <= self.accepted {
                self.log
                    .range(from..=self.accepted)
                    .map(|(h, m)| (*h, m.clone()))
                    .collect()
            } else {
                Vec::new()
            };
            let msg = Message {
                hdr,
                body: Body::Diff(Diff {
                    from: Some(from),
                    entries,
                }),
            };
            if j == me {
                self.accept(msg);
            } else {
                self.out.push_back(Output::Send {
                    to: j,
                    msg: Arc::new(msg.encode()),
                });
            }
        }
    }

    /// Figure 6: commit while the leader's quorum (or the leader's Commit_SST row) allows.
    fn commit(&mut self, now: u64) {
        loop {
            let next = self.next;
            let ok = match self.role {
                Role::Leader => {
                    self.accept_sst
                        .iter()
                        .filter(|a| **a >= next && a.e == self.e_cur)
                        .count()
                        >= self.majority()
                }
                Role::Follower => {
                    let c = self.commit_sst[self.e_cur.ldr as usize].committed;
                    c >= next && c.e == self.e_cur
                }
                Role::Electing => false,
            };
            if !ok {
                return;
            }
            if next.cnt != 0 {
                let Some(m) = self.log.get(&next) else {
                    return; // not here yet
                };
                let payload = m.clone();
                self.deliver(next, payload);
            } else {
                let d: Vec<MsgHdr> = if self.committed < next {
                    self.log
                        .range(self.committed..next)
                        .map(|(h, _)| *h)
                        .filter(|h| *h > self.committed)
                        .collect()
                } else {
                    Vec::new()
                };
                for h in d {
                    let payload = self.log[&h].clone();
                    self.deliver(h, payload);
                }
                self.committed = self.committed.max(next);
                if self.role == Role::Leader {
                    self.events.push(Event::DiffCommitted {
                        epoch: next.e,
                        at: now,
                    });
                }
            }
            self.commit_dirty = true;
            self.next.cnt += 1;
        }
    }

    fn deliver(&mut self, hdr: MsgHdr, payload: Vec<u8>) {
        self.committed = hdr;
        self.deliveries.push_back(Delivery {
            pos: self.pos,
            hdr,
            payload,
        });
        self.pos += 1;
        self.stats.delivered += 1;
    }

    /// Drops committed entries beyond the last `keep`.
    fn gc(&mut self) {
        while self.log.len() > self.cfg.keep {
            let Some((&h, _)) = self.log.first_key_value() else {
                return;
            };
            if h > self.committed {
                return;
            }
            self.log.remove(&h);
            self.gc_upto = h;
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod refusals {
    use super::*;

    #[test]
    fn a_diff_of_an_epoch_led_by_no_node_of_the_group_is_refused() {
        let mut c = Core::new(Config::new(0, 3)).unwrap();
        let m = Message {
            hdr: MsgHdr {
                e: Epoch { round: 9, ldr: 7 },
                cnt: 0,
            },
            body: Body::Diff(Diff::default()),
        };
        c.receive(1, &m.encode());
        c.tick(1_000);
        assert_eq!(c.stats().malformed, 1);
        assert_eq!(c.epoch(), Epoch::default());
    }
}

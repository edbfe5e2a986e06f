//! The state machine on a direct network: every output reaches its node after a fixed
//! delay per channel (FIFO, like an RC QP), SST rows are read at push time; nodes crash
//! (nothing more to or from them) or pause (what reaches them waits, as RDMA WRITEs wait in
//! memory, and they run no timers). Every test ends with the atomic-broadcast checker.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

use super::*;
use crate::acuerdo::check::{check, Entry};
use crate::p4ce::integrity::digest;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Carry {
    Msg(Vec<u8>),
    Accept(MsgHdr),
    Commit(u64, MsgHdr),
    Vote(Vote),
}

/// Due time, sequence number (FIFO among equal times), to, from, what.
type InFlight = Reverse<(u64, u64, Pid, Pid, Carry)>;

#[derive(PartialEq, Eq)]
enum State {
    Up,
    Paused,
    Crashed,
}

struct Net {
    cores: Vec<Core>,
    state: Vec<State>,
    now: u64,
    /// Delay of everything node j sends or receives, ns.
    delay: Vec<u64>,
    flight: BinaryHeap<InFlight>,
    held: Vec<Vec<(Pid, Carry)>>,
    seq: u64,
    logs: Vec<Vec<Entry>>,
    sent: HashSet<u64>,
    next_id: u64,
}

impl Net {
    fn new(n: usize) -> Net {
        Net {
            cores: (0..n)
                .map(|i| {
                    let mut c = Config::new(i as Pid, n);
                    c.heartbeat_ns = 20_000;
                    c.timeout_ns = 200_000;
                    Core::new(c).unwrap()
                })
                .collect(),
            state: (0..n).map(|_| State::Up).collect(),
            now: 0,
            delay: vec![1_000; n],
            flight: BinaryHeap::new(),
            held: vec![Vec::new(); n],
            seq: 0,
            logs: vec![Vec::new(); n],
            sent: HashSet::new(),
            next_id: 0,
        }
    }

    fn apply(&mut self, to: Pid, from: Pid, c: Carry) {
        let core = &mut self.cores[to as usize];
        match c {
            Carry::Msg(b) => core.receive(from, &b),
            Carry::Accept(h) => core.set_accept(from, h),
            Carry::Commit(hb, h) => core.set_commit(from, CommitRow { committed: h, hb }),
            Carry::Vote(v) => core.set_vote(from, v),
        }
    }

    fn drain(&mut self, i: usize) {
        while let Some(o) = self.cores[i].poll_output() {
            let (to, carry) = match o {
                Output::Send { to, msg } => (to, Carry::Msg(msg.to_vec())),
                Output::Push { table, to } => {
                    let c = &self.cores[i];
                    let carry = match table {
                        Table::Accept => Carry::Accept(c.my_accept()),
                        Table::Commit => Carry::Commit(c.my_commit().hb, c.my_commit().committed),
                        Table::Vote => Carry::Vote(c.my_vote()),
                    };
                    (to, carry)
                }
            };
            let due = self.now + self.delay[i] + self.delay[to as usize];
            self.seq += 1;
            self.flight
                .push(Reverse((due, self.seq, to, i as Pid, carry)));
        }
        while let Some(d) = self.cores[i].poll_delivery() {
            self.logs[i].push(Entry {
                hdr: d.hdr,
                digest: digest(&d.payload),
            });
        }
    }

    /// Runs for `ns` in 1 µs steps.
    fn run(&mut self, ns: u64) {
        let end = self.now + ns;
        while self.now < end {
            self.now += 1_000;
            while let Some(Reverse((t, _, _, _, _))) = self.flight.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, _, to, from, c)) = self.flight.pop().unwrap();
                match self.state[to as usize] {
                    State::Up => self.apply(to, from, c),
                    State::Paused => self.held[to as usize].push((from, c)),
                    State::Crashed => {}
                }
            }
            for i in 0..self.cores.len() {
                if self.state[i] == State::Up {
                    self.cores[i].tick(self.now);
                    self.drain(i);
                }
            }
        }
    }

    fn leader(&self) -> Option<usize> {
        (0..self.cores.len()).find(|&i| self.state[i] == State::Up && self.cores[i].is_leader())
    }

    fn run_until_leader(&mut self, limit: u64) -> usize {
        let end = self.now + limit;
        while self.now < end {
            self.run(10_000);
            if let Some(l) = self.leader() {
                if self.cores[l].committed().e == self.cores[l].epoch() {
                    return l;
                }
            }
        }
        panic!("no leader after {limit} ns");
    }

    fn broadcast(&mut self, l: usize, k: usize) {
        for _ in 0..k {
            let mut p = vec![0u8; 24];
            crate::p4ce::integrity::stamp(&mut p, self.next_id);
            self.next_id += 1;
            self.sent.insert(digest(&p));
            self.cores[l].broadcast(p).unwrap();
        }
        self.drain(l);
    }

    /// Node `i` crashes; of what it has in flight only what goes to `keep` arrives.
    fn crash(&mut self, i: usize, keep: &[Pid]) {
        self.state[i] = State::Crashed;
        let flight = std::mem::take(&mut self.flight);
        self.flight = flight
            .into_iter()
            .filter(|Reverse((_, _, to, from, _))| *from != i as Pid || keep.contains(to))
            .collect();
    }

    fn resume(&mut self, i: usize) {
        self.state[i] = State::Up;
        for (from, c) in std::mem::take(&mut self.held[i]) {
            self.apply(i as Pid, from, c);
        }
    }

    fn verdict(&self, live: &[usize]) -> crate::acuerdo::check::Agreement {
        let logs: Vec<(u32, Vec<Entry>)> = live
            .iter()
            .map(|&i| (i as u32, self.logs[i].clone()))
            .collect();
        check(&logs, Some(&self.sent))
    }
}

#[test]
fn a_leader_is_elected_and_every_node_delivers_the_same_order() {
    let mut net = Net::new(3);
    let l = net.run_until_leader(5_000_000);
    net.broadcast(l, 100);
    net.run(200_000);
    let v = net.verdict(&[0, 1, 2]);
    assert!(v.ok, "{v}");
    assert_eq!(v.delivered, vec![(0, 100), (1, 100), (2, 100)], "{v}");
    // Start-up elects the largest vote's node with no message yet.
    assert_eq!(l, 2);
}

#[test]
fn leader_crash_elects_the_up_to_date_node_and_loses_no_committed_message() {
    let mut net = Net::new(5);
    let l = net.run_until_leader(5_000_000);
    net.broadcast(l, 20);
    net.run(100_000);
    assert!(net.logs.iter().all(|g| g.len() == 20));
    // Five more reach only node `x` before the leader dies: accepted there, committed
    // nowhere (a quorum needs 3).
    let x = (l + 1) % 5;
    net.broadcast(l, 5);
    net.crash(l, &[x as Pid]);
    let m = net.run_until_leader(5_000_000);
    assert_eq!(
        m, x,
        "the only node holding the five is the up-to-date candidate"
    );
    let events: Vec<Event> = net.cores[m].take_events();
    assert!(events
        .iter()
        .any(|e| matches!(e, Event::DiffCommitted { .. })));
    net.broadcast(m, 10);
    net.run(200_000);
    let live: Vec<usize> = (0..5).filter(|&i| i != l).collect();
    let v = net.verdict(&live);
    assert!(v.ok, "{v}");
    for &i in &live {
        assert_eq!(net.logs[i].len(), 35, "{v}");
    }
    // The crashed leader's log is a prefix of the rest.
    let mut all = live.clone();
    all.push(l);
    assert!(net.verdict(&all).ok);
}

#[test]
fn a_deposed_leader_drops_its_uncommitted_messages_when_it_comes_back() {
    let mut net = Net::new(3);
    let l = net.run_until_leader(5_000_000);
    net.broadcast(l, 10);
    net.run(50_000);
    // The leader pauses with 4 messages written to nobody but itself.
    net.broadcast(l, 4);
    net.crash(l, &[]);
    net.state[l] = State::Paused;
    let m = net.run_until_leader(5_000_000);
    assert_ne!(m, l);
    net.broadcast(m, 6);
    net.run(100_000);
    net.resume(l);
    net.run(1_000_000);
    assert_eq!(net.cores[l].role(), Role::Follower);
    assert_eq!(net.cores[l].epoch(), net.cores[m].epoch());
    net.broadcast(m, 3);
    net.run(200_000);
    let v = net.verdict(&[0, 1, 2]);
    assert!(v.ok, "{v}");
    assert_eq!(
        v.delivered.iter().map(|d| d.1).collect::<Vec<_>>(),
        vec![19; 3]
    );
}

#[test]
fn a_crashed_follower_and_a_slow_one_do_not_stop_the_quorum() {
    let mut net = Net::new(5);
    let l = net.run_until_leader(5_000_000);
    let (dead, slow) = ((l + 1) % 5, (l + 2) % 5);
    net.crash(dead, &[]);
    net.delay[slow] = 50_000;
    for _ in 0..20 {
        net.broadcast(l, 10);
        net.run(5_000);
    }
    net.run(500_000);
    assert_eq!(
        net.leader(),
        Some(l),
        "no election: the leader's heartbeats arrive"
    );
    let live: Vec<usize> = (0..5).filter(|&i| i != dead).collect();
    let v = net.verdict(&live);
    assert!(v.ok, "{v}");
    assert_eq!(net.logs[slow].len(), 200, "the slow node caught up: {v}");
}

#[test]
fn a_node_that_missed_the_election_is_brought_in_by_a_new_one() {
    // Node 1 starts late: the other two elect a leader and commit without it; when it
    // comes up it campaigns for epochs nobody else votes for (its promise refuses the
    // leader's older epoch), until the leader, seeing a vote above its epoch, runs the
    // election again and wins it with every node.
    let mut net = Net::new(3);
    net.state[1] = State::Crashed;
    let l = net.run_until_leader(5_000_000);
    net.broadcast(l, 10);
    net.run(100_000);
    net.state[1] = State::Up;
    net.run(3_000_000);
    let l = net.leader().expect("a leader");
    net.broadcast(l, 10);
    net.run(200_000);
    assert_eq!(net.cores[1].role(), Role::Follower);
    let v = net.verdict(&[0, 1, 2]);
    assert!(v.ok, "{v}");
    assert_eq!(v.delivered, vec![(0, 20), (1, 20), (2, 20)], "{v}");
}

//! Liveness as in Mu: every node bumps a heartbeat counter in its memory; the others READ it
//! over RDMA and call a node alive while its counter keeps changing. The leader is the live
//! node with the lowest id; a leader this node stopped following (another took over) never
//! counts as alive again. This module is the bookkeeping; reading is the caller's RDMA READ.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use rdma::verbs::Instant;

#[derive(Debug, Clone, Copy)]
struct Seen {
    counter: u64,
    changed_at: Instant,
}

/// Heartbeat observations of the other nodes (see the module docs).
#[derive(Debug, Clone)]
pub struct Liveness {
    me: u16,
    timeout: Duration,
    seen: BTreeMap<u16, Seen>,
    /// Leaders this node stopped following: dead for good (see [`Liveness::declare_dead`]).
    deposed: BTreeSet<u16>,
}

impl Liveness {
    /// Node `me` watching `peers`, which count as dead after `timeout` without a change.
    /// Peers start alive as of `now`.
    pub fn new(me: u16, peers: &[u16], timeout: Duration, now: Instant) -> Liveness {
        let seen = peers
            .iter()
            .filter(|p| **p != me)
            .map(|p| {
                (
                    *p,
                    Seen {
                        counter: 0,
                        changed_at: now,
                    },
                )
            })
            .collect();
        Liveness {
            me,
            timeout,
            seen,
            deposed: BTreeSet::new(),
        }
    }

    /// How often a node bumps its counter and READs the others': a tenth of `timeout` (at
    /// least a microsecond), so a live node is seen changing several times per timeout.
    pub fn period(timeout: Duration) -> Duration {
        (timeout / 10).max(Duration::from_micros(1))
    }

    /// Whether this node is armed with `peer` (it watches it).
    pub fn watches(&self, peer: u16) -> bool {
        self.seen.contains_key(&peer)
    }

    /// Starts watching `peer` (a connection to it came up after this node armed, or came
    /// up again): it counts as alive as of `now`, whatever was seen of it before.
    pub fn watch(&mut self, peer: u16, now: Instant) {
        if peer != self.me {
            self.seen.insert(
                peer,
                Seen {
                    counter: 0,
                    changed_at: now,
                },
            );
        }
    }

    /// Records a heartbeat value read from `peer` at `now`.
    pub fn observe(&mut self, peer: u16, counter: u64, now: Instant) {
        if let Some(s) = self.seen.get_mut(&peer) {
            if s.counter != counter {
                s.counter = counter;
                s.changed_at = now;
            }
        }
    }

    /// Counts `peer` dead for good: this node stopped following it (it was the leader and
    /// another took over). A deposed leader that runs again (it was stalled, not dead) and
    /// bumps its counter must not be followed again: it would lead from its old log, without
    /// the recovery a new leader runs, over entries the new leader committed.
    pub fn declare_dead(&mut self, peer: u16, now: Instant) {
        if peer != self.me {
            self.deposed.insert(peer);
        }
        if let Some(s) = self.seen.get_mut(&peer) {
            s.changed_at = Instant::from_nanos(
                now.as_nanos()
                    .saturating_sub(self.timeout.as_nanos() as u64),
            );
        }
    }

    /// This node could not read for `stalled` (its own thread stalled): every peer's
    /// silence counts that much shorter. A peer declared dead stays dead.
    pub fn excuse(&mut self, stalled: Duration) {
        let d = stalled.as_nanos() as u64;
        for s in self.seen.values_mut() {
            s.changed_at = Instant::from_nanos(s.changed_at.as_nanos().saturating_add(d));
        }
    }

    /// Whether `peer` looks alive at `now` (this node always is; a deposed leader never).
    pub fn is_alive(&self, peer: u16, now: Instant) -> bool {
        peer == self.me
            || (!self.deposed.contains(&peer)
                && self
                    .seen
                    .get(&peer)
                    .is_some_and(|s| now.saturating_duration_since(s.changed_at) < self.timeout))
    }

    /// The live node with the lowest id.
    pub fn leader(&self, now: Instant) -> u16 {
        self.seen
            .keys()
            .copied()
            .filter(|p| self.is_alive(*p, now))
            .chain(std::iter::once(self.me))
            .min()
            .unwrap_or(self.me)
    }
}

/// Recovery's choice of the log to adopt: the index of the follower that applied the most
/// entries (`applied`: what each follower's status word said, None when it could not be
/// read), if that is more than the new leader's own `own`. Every entry the old leader
/// committed is on f replicas, so the furthest log holds all of them, in order.
pub fn recovery_source(own: u64, applied: &[Option<u64>]) -> Option<usize> {
    applied
        .iter()
        .enumerate()
        .filter_map(|(k, a)| a.map(|a| (a, k)))
        .max()
        .filter(|(a, _)| *a > own)
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Instant {
        Instant::from_nanos(us * 1000)
    }

    #[test]
    fn lowest_live_id_leads_and_stale_heartbeats_depose() {
        let mut l = Liveness::new(3, &[1, 2, 3], Duration::from_micros(500), at(0));
        assert_eq!(l.leader(at(100)), 1);
        // Node 1 stops bumping; node 2 keeps going.
        for t in (100..2000).step_by(100) {
            l.observe(2, t, at(t));
        }
        assert!(!l.is_alive(1, at(1900)));
        assert!(l.is_alive(2, at(1900)));
        assert_eq!(l.leader(at(1900)), 2);
        // A peer watched later starts alive, and again when it is watched again.
        let mut w = Liveness::new(3, &[1], Duration::from_micros(500), at(0));
        assert!(!w.watches(2));
        w.watch(2, at(1000));
        assert!(w.watches(2) && w.is_alive(2, at(1400)) && !w.is_alive(2, at(1500)));
        w.watch(2, at(1600));
        assert!(w.is_alive(2, at(2000)));
        // Node 1 comes back.
        l.observe(1, 7, at(2000));
        assert_eq!(l.leader(at(2000)), 1);
        // Everyone else silent: this node leads.
        assert_eq!(l.leader(at(10_000)), 3);
        // Unless this node itself stalled that long: then nobody is blamed...
        let mut s = l.clone();
        s.excuse(Duration::from_micros(8_000));
        assert_eq!(s.leader(at(10_000)), 1);
        // ...except a peer declared dead.
        let mut d = l.clone();
        d.declare_dead(1, at(2_100));
        d.excuse(Duration::from_micros(100));
        assert_eq!(d.leader(at(2_300)), 2);
        // ...and one declared dead stays dead when its counter moves again (a deposed
        // leader that was only stalled).
        d.observe(1, 8, at(2_400));
        assert!(!d.is_alive(1, at(2_400)));
        assert_eq!(d.leader(at(2_400)), 2);
    }

    #[test]
    fn recovery_adopts_the_furthest_log_only_when_ahead() {
        assert_eq!(
            recovery_source(5, &[Some(3), None, Some(9), Some(7)]),
            Some(2)
        );
        assert_eq!(recovery_source(9, &[Some(3), Some(9)]), None);
        assert_eq!(recovery_source(0, &[None, None]), None);
    }
}

//! The transactional key-value store of the 1Pipe paper (§2.2.3, §7.3.1), write-only
//! transactions over keys sharded by `key % shards`, sans I/O, two ways:
//!
//! - over 1Pipe a transaction is one scattering (a message to each shard it touches, holding
//!   that shard's keys): shards apply in delivery order, so transactions are serializable
//!   without locks ([`txn_scattering`], [`parse_writes`]);
//! - the baseline ([`LockNode`]) takes locks shard by shard in shard order (no deadlock), then
//!   commits everywhere: a shard applies the writes and releases, granting waiters in arrival
//!   order. Every process is a client and a shard, as in the paper.

use std::collections::{HashMap, VecDeque};

use super::process::ProcessId;

/// The UDP port of the lock baseline's packets.
pub const UDP_PORT: u16 = 20306;

const LOCK: u8 = 1;
const GRANT: u8 = 2;
const COMMIT: u8 = 3;

/// A packet could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    #[error("key-value packet of {0} bytes, shorter than its header or its keys")]
    Short(usize),
    #[error("key-value packet of unknown kind {0}")]
    Kind(u8),
}

/// Transaction `seq` of `client`: `keys` distinct keys out of `space`, from a small
/// deterministic generator (the same under 1Pipe and locking).
pub fn txn_keys(client: ProcessId, seq: u64, keys: usize, space: u64) -> Vec<u64> {
    let mut x = (u64::from(client) << 40 ^ seq).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut out: Vec<u64> = Vec::new();
    while out.len() < keys.min(space as usize) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = x % space.max(1);
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out
}

/// The shard of `key` among `shards` (processes `members[key % shards]`).
pub fn shard_of(key: u64, members: &[ProcessId]) -> ProcessId {
    members[(key % members.len() as u64) as usize]
}

/// A transaction as a 1Pipe scattering: per shard touched, its id and its keys.
pub fn txn_scattering(id: u64, keys: &[u64], members: &[ProcessId]) -> Vec<(ProcessId, Vec<u8>)> {
    let mut by: Vec<(ProcessId, Vec<u8>)> = Vec::new();
    for &k in keys {
        let s = shard_of(k, members);
        let i = match by.iter().position(|(d, _)| *d == s) {
            Some(i) => i,
            None => {
                by.push((s, id.to_be_bytes().to_vec()));
                by.len() - 1
            }
        };
        by[i].1.extend_from_slice(&k.to_be_bytes());
    }
    by
}

/// A shard's part of a transaction: its id and keys.
pub fn parse_writes(b: &[u8]) -> Result<(u64, Vec<u64>), KvError> {
    if b.len() < 8 || !b.len().is_multiple_of(8) {
        return Err(KvError::Short(b.len()));
    }
    let words: Vec<u64> = b
        .chunks(8)
        .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")))
        .collect();
    Ok((words[0], words[1..].to_vec()))
}

/// A packet of the lock baseline to `dst`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub dst: ProcessId,
    pub bytes: Vec<u8>,
}

fn encode(kind: u8, txn: u64, keys: &[u64]) -> Vec<u8> {
    let mut b = vec![kind];
    b.extend_from_slice(&txn.to_be_bytes());
    for k in keys {
        b.extend_from_slice(&k.to_be_bytes());
    }
    b
}

/// A transaction this node runs as a client: its shards in lock order, how far it got.
struct Running {
    id: u64,
    started: u64,
    shards: Vec<(ProcessId, Vec<u64>)>,
    granted: usize,
}

/// A lock request waiting at a shard.
struct Waiting {
    txn: u64,
    client: ProcessId,
    keys: Vec<u64>,
}

/// One process of the lock baseline: a client with up to `window` transactions at a time and
/// a shard.
pub struct LockNode {
    me: ProcessId,
    members: Vec<ProcessId>,
    window: usize,
    running: Vec<Running>,
    /// Shard: who holds each locked key; waiters in arrival order; held keys per transaction.
    held: HashMap<u64, u64>,
    waiting: VecDeque<Waiting>,
    holds: HashMap<u64, Vec<u64>>,
    /// Shard: transactions applied here (with the keys they wrote here), in order.
    pub applied: Vec<(u64, Vec<u64>)>,
    /// Client: (transaction, started, committed) of each one committed.
    pub committed: Vec<(u64, u64, u64)>,
    out: VecDeque<Outgoing>,
}

impl LockNode {
    pub fn new(me: ProcessId, members: Vec<ProcessId>, window: usize) -> Self {
        LockNode {
            me,
            members,
            window: window.max(1),
            running: Vec::new(),
            held: HashMap::new(),
            waiting: VecDeque::new(),
            holds: HashMap::new(),
            applied: Vec::new(),
            committed: Vec::new(),
            out: VecDeque::new(),
        }
    }

    /// Whether the client can start another transaction.
    pub fn can_start(&self) -> bool {
        self.running.len() < self.window
    }

    /// Starts transaction `id` writing `keys`: asks its first shard for the locks.
    pub fn start(&mut self, now: u64, id: u64, keys: &[u64]) {
        let mut shards: Vec<(ProcessId, Vec<u64>)> = Vec::new();
        for (s, msg) in txn_scattering(id, keys, &self.members) {
            let (_, ks) = parse_writes(&msg).expect("built here");
            shards.push((s, ks));
        }
        shards.sort_by_key(|(s, _)| *s);
        let (s, ks) = shards[0].clone();
        self.out.push_back(Outgoing {
            dst: s,
            bytes: encode(LOCK, id, &ks),
        });
        self.running.push(Running {
            id,
            started: now,
            shards,
            granted: 0,
        });
    }

    /// A packet from process `src`.
    pub fn on_packet(&mut self, now: u64, src: ProcessId, b: &[u8]) -> Result<(), KvError> {
        if b.len() < 9 || !(b.len() - 9).is_multiple_of(8) {
            return Err(KvError::Short(b.len()));
        }
        let txn = u64::from_be_bytes(b[1..9].try_into().expect("8 bytes"));
        let keys: Vec<u64> = b[9..]
            .chunks(8)
            .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")))
            .collect();
        match b[0] {
            LOCK => {
                self.waiting.push_back(Waiting {
                    txn,
                    client: src,
                    keys,
                });
                self.grant();
            }
            GRANT => self.granted(now, txn),
            COMMIT => {
                let keys = self.holds.remove(&txn).unwrap_or_default();
                for k in &keys {
                    self.held.remove(k);
                }
                self.applied.push((txn, keys));
                self.grant();
            }
            k => return Err(KvError::Kind(k)),
        }
        Ok(())
    }

    /// Shard: grants every waiter whose keys are all free, in arrival order.
    fn grant(&mut self) {
        let mut i = 0;
        while i < self.waiting.len() {
            let w = &self.waiting[i];
            if w.keys.iter().any(|k| self.held.contains_key(k)) || self.holds.contains_key(&w.txn) {
                i += 1;
                continue;
            }
            let w = self.waiting.remove(i).expect("in range");
            for &k in &w.keys {
                self.held.insert(k, w.txn);
            }
            self.holds.insert(w.txn, w.keys);
            self.out.push_back(Outgoing {
                dst: w.client,
                bytes: encode(GRANT, w.txn, &[]),
            });
        }
    }

    /// Client: one more shard granted; the next one asked, or everything committed.
    fn granted(&mut self, now: u64, txn: u64) {
        let Some(i) = self.running.iter().position(|r| r.id == txn) else {
            return;
        };
        let r = &mut self.running[i];
        r.granted += 1;
        if let Some((s, ks)) = r.shards.get(r.granted) {
            self.out.push_back(Outgoing {
                dst: *s,
                bytes: encode(LOCK, txn, ks),
            });
            return;
        }
        let r = self.running.remove(i);
        for (s, _) in &r.shards {
            self.out.push_back(Outgoing {
                dst: *s,
                bytes: encode(COMMIT, txn, &[]),
            });
        }
        self.committed.push((txn, r.started, now));
    }

    pub fn poll_transmit(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    /// This process's id.
    pub fn id(&self) -> ProcessId {
        self.me
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scattering_holds_each_shards_keys() {
        let members = [0, 1, 2];
        let keys = txn_keys(1, 7, 4, 10);
        assert_eq!(keys.len(), 4);
        let s = txn_scattering(42, &keys, &members);
        let mut all = Vec::new();
        for (d, m) in &s {
            let (id, ks) = parse_writes(m).unwrap();
            assert_eq!(id, 42);
            assert!(ks.iter().all(|&k| shard_of(k, &members) == *d));
            all.extend(ks);
        }
        all.sort_unstable();
        let mut want = keys.clone();
        want.sort_unstable();
        assert_eq!(all, want);
        assert_eq!(parse_writes(&[1, 2, 3]), Err(KvError::Short(3)));
    }

    #[test]
    fn conflicting_transactions_wait_for_the_lock_and_apply_in_one_order() {
        let members = vec![0, 1];
        let mut n: Vec<LockNode> = (0..2)
            .map(|i| LockNode::new(i, members.clone(), 2))
            .collect();
        // Both write keys 0 (shard 0) and 1 (shard 1).
        n[0].start(0, 100, &[0, 1]);
        n[1].start(0, 200, &[1, 0]);
        for t in 1..50 {
            for i in 0..2 {
                while let Some(o) = n[i].poll_transmit() {
                    n[usize::from(o.dst)]
                        .on_packet(t, i as u16, &o.bytes)
                        .unwrap();
                }
            }
        }
        assert_eq!(n[0].committed.len() + n[1].committed.len(), 2);
        let order = |n: &LockNode| n.applied.iter().map(|(t, _)| *t).collect::<Vec<_>>();
        assert_eq!(order(&n[0]), order(&n[1]), "one order on both shards");
        assert_eq!(n[0].on_packet(0, 1, &[9; 9]), Err(KvError::Kind(9)));
    }
}

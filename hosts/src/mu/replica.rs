//! A replica of the log: it only reads its own memory (the leader's WRITEs fill it) and
//! applies entries in index order. It decides who may write: only QPs connected to the
//! current leader (directly, or through the P4CE switch on the leader's behalf) keep the
//! remote-write permission, so a deposed leader's WRITEs fail with a remote access error.

use rdma::verbs::{AccessFlags, Endpoint, QpAttr};

use super::join::{join_word, replica_area, JoinOffer, OFFER_LEN};
use super::slot::LogGeometry;
use super::MuError;

/// A replica (see the module docs).
#[derive(Debug)]
pub struct Replica {
    geometry: LogGeometry,
    lkey: u32,
    next: u64,
}

impl Replica {
    /// A replica whose log is the MR `lkey` (at least `geometry.len()` bytes).
    pub fn new(geometry: LogGeometry, lkey: u32) -> Result<Replica, MuError> {
        geometry.validate()?;
        Ok(Replica {
            geometry,
            lkey,
            next: 0,
        })
    }

    /// The next entry to apply (= entries applied so far).
    pub fn applied(&self) -> u64 {
        self.next
    }

    /// Applies every complete entry after the last applied one, in order, calling `apply`
    /// with each index and value. Returns how many were applied.
    /// The applied count is published in the status word after the log (the leader READs
    /// it to find lagging replicas), next to the heartbeat.
    pub fn poll_apply(
        &mut self,
        ep: &mut Endpoint,
        mut apply: impl FnMut(u64, &[u8]),
    ) -> Result<u64, MuError> {
        let log = ep.mr_bytes(self.lkey)?;
        if log.len() < super::slot::status_area(self.geometry, 1) {
            return Err(MuError::Config(
                "replica log MR lacks the status word".into(),
            ));
        }
        let start = self.next;
        // At most one lap per call: a slot beyond it would be the same slot again.
        for _ in 0..self.geometry.slots {
            match self.geometry.decode(self.next, log) {
                Some(v) => {
                    apply(self.next, v);
                    self.next += 1;
                }
                None => break,
            }
        }
        let done = self.next - start;
        let g = self.geometry.len();
        let words = ep.mr_bytes_mut(self.lkey)?;
        words[g..g + 8].copy_from_slice(&self.next.to_le_bytes());
        Ok(done)
    }

    /// Forgets every entry in the log that is not applied yet (zeroes the tag of each slot
    /// holding an index at or past the applied count): on a view change, what a deposed
    /// leader left half-sent must not be applied after the new leader's entries fill the
    /// gap before it. Returns how many slots were cleared.
    pub fn discard_unapplied(&mut self, ep: &mut Endpoint) -> Result<usize, MuError> {
        let g = self.geometry;
        let log = ep.mr_bytes_mut(self.lkey)?;
        let mut cleared = 0;
        for s in 0..g.slots {
            let off = s * g.slot_size;
            let Some(tag) = log.get_mut(off..off + 8) else {
                break;
            };
            let mut a = [0u8; 8];
            a.copy_from_slice(tag);
            let t = u64::from_le_bytes(a);
            if t > self.next {
                tag.fill(0);
                cleared += 1;
            }
        }
        Ok(cleared)
    }

    /// The snapshot a leader offers this replica in its join word, if any (see
    /// [`super::join`]); offers longer than `max_len` bytes are ignored.
    pub fn join_offer(&self, ep: &Endpoint, max_len: u64) -> Result<Option<JoinOffer>, MuError> {
        let log = ep.mr_bytes(self.lkey)?;
        let o = join_word(self.geometry);
        Ok(log
            .get(o..)
            .and_then(|b| JoinOffer::decode(b, max_len))
            .filter(|j| j.from == self.next))
    }

    /// The application installed a snapshot of every entry before `to` (a state transfer,
    /// [`super::join`]): the replica applies from `to` on, publishes that, and clears its
    /// join word. Refused if `to` is not past what it applied.
    pub fn install(&mut self, ep: &mut Endpoint, to: u64) -> Result<(), MuError> {
        if to <= self.next {
            return Err(MuError::Config(format!(
                "snapshot up to {to}, {} already applied",
                self.next
            )));
        }
        let g = self.geometry.len();
        let w = join_word(self.geometry);
        let mem = ep.mr_bytes_mut(self.lkey)?;
        if mem.len() < replica_area(self.geometry) {
            return Err(MuError::Config("replica log MR lacks the join word".into()));
        }
        self.next = to;
        mem[w..w + OFFER_LEN].fill(0);
        mem[g..g + 8].copy_from_slice(&self.next.to_le_bytes());
        Ok(())
    }

    /// Bumps the heartbeat counter in the status word (others READ it).
    pub fn beat(&mut self, ep: &mut Endpoint) -> Result<u64, MuError> {
        let g = self.geometry.len();
        let words = ep.mr_bytes_mut(self.lkey)?;
        let Some(w) = words.get_mut(g + 8..g + 16) else {
            return Err(MuError::Config(
                "replica log MR lacks the status word".into(),
            ));
        };
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        let v = u64::from_le_bytes(a).wrapping_add(1);
        w.copy_from_slice(&v.to_le_bytes());
        Ok(v)
    }

    /// Follows a new leader (the view change of a replica in Mu): remote writes only on
    /// `leader_qps`, reads only on `other_qps` (the old leader's QPs, the switch QP of the
    /// old group, the other replicas), and every entry not applied yet forgotten (what a
    /// deposed leader left half-sent). Apply what is complete first. Returns how many slots
    /// were cleared.
    pub fn follow(
        &mut self,
        ep: &mut Endpoint,
        leader_qps: &[u32],
        other_qps: &[u32],
    ) -> Result<usize, MuError> {
        Self::grant_writes(ep, leader_qps, other_qps)?;
        self.discard_unapplied(ep)
    }

    /// Grants remote write (and read) on `leader_qps` and read only on `other_qps`: the
    /// permission change of a view change.
    pub fn grant_writes(
        ep: &mut Endpoint,
        leader_qps: &[u32],
        other_qps: &[u32],
    ) -> Result<(), MuError> {
        for (qps, access) in [
            (
                leader_qps,
                AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ,
            ),
            (other_qps, AccessFlags::REMOTE_READ),
        ] {
            for q in qps {
                ep.modify_qp(
                    *q,
                    &QpAttr {
                        access: Some(access),
                        ..Default::default()
                    },
                )?;
            }
        }
        Ok(())
    }
}

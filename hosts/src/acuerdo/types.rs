//! The protocol's value types (Figure 4 of the paper, lines 1–7): process ids, epochs
//! `(round, leader)`, message headers `(epoch, count)` and votes `(new epoch, accepted
//! header)`. Tuples are ordered left to right, which is what `#[derive(Ord)]` does with the
//! fields in declaration order. Each has a fixed little-endian encoding, used in ring records
//! and SST rows.

use serde::Serialize;

/// A process id (`pid`): nodes are `0..n`.
pub type Pid = u32;

/// An epoch: a round number and its leader; ordered by round, then leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Epoch {
    /// Round number.
    pub round: u32,
    /// The leader of the epoch.
    pub ldr: Pid,
}

/// A message header: the epoch the message was proposed in and its count in that epoch
/// (count 0 is the new leader's diff).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct MsgHdr {
    /// Epoch.
    pub e: Epoch,
    /// Count within the epoch.
    pub cnt: u32,
}

/// A vote: the epoch the voter wants to join and the candidate's last accepted header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct Vote {
    /// The proposed epoch (its `ldr` is the candidate).
    pub e_new: Epoch,
    /// The candidate's last accepted message.
    pub acpt: MsgHdr,
}

/// Bytes of an encoded [`Epoch`].
pub const EPOCH_LEN: usize = 8;
/// Bytes of an encoded [`MsgHdr`].
pub const HDR_LEN: usize = 12;
/// Bytes of an encoded [`Vote`].
pub const VOTE_LEN: usize = 20;

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

impl Epoch {
    /// Appends the encoding.
    pub fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.round.to_le_bytes());
        out.extend_from_slice(&self.ldr.to_le_bytes());
    }
    /// Decodes from the first [`EPOCH_LEN`] bytes of `b` (the caller checked the length).
    pub fn get(b: &[u8]) -> Epoch {
        Epoch {
            round: u32_at(b, 0),
            ldr: u32_at(b, 4),
        }
    }
}

impl MsgHdr {
    /// Appends the encoding.
    pub fn put(&self, out: &mut Vec<u8>) {
        self.e.put(out);
        out.extend_from_slice(&self.cnt.to_le_bytes());
    }
    /// Decodes from the first [`HDR_LEN`] bytes of `b` (the caller checked the length).
    pub fn get(b: &[u8]) -> MsgHdr {
        MsgHdr {
            e: Epoch::get(b),
            cnt: u32_at(b, EPOCH_LEN),
        }
    }
}

impl Vote {
    /// Appends the encoding.
    pub fn put(&self, out: &mut Vec<u8>) {
        self.e_new.put(out);
        self.acpt.put(out);
    }
    /// Decodes from the first [`VOTE_LEN`] bytes of `b` (the caller checked the length).
    pub fn get(b: &[u8]) -> Vote {
        Vote {
            e_new: Epoch::get(b),
            acpt: MsgHdr::get(&b[EPOCH_LEN..]),
        }
    }
}

impl std::fmt::Display for MsgHdr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "(({},{}),{})", self.e.round, self.e.ldr, self.cnt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_order_left_to_right_and_round_trip() {
        let a = MsgHdr {
            e: Epoch { round: 0, ldr: 9 },
            cnt: 100,
        };
        let b = MsgHdr {
            e: Epoch { round: 1, ldr: 0 },
            cnt: 0,
        };
        assert!(a < b);
        let v = Vote {
            e_new: b.e,
            acpt: a,
        };
        let w = Vote {
            e_new: b.e,
            acpt: MsgHdr { cnt: 101, ..a },
        };
        assert!(v < w);
        let mut buf = Vec::new();
        v.put(&mut buf);
        assert_eq!(buf.len(), VOTE_LEN);
        assert_eq!(Vote::get(&buf), v);
    }
}

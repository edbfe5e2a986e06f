//! A replica joining a running log (Mu's catch-up of a replica that was absent or fell
//! behind): the leader learns the replica's applied count from a status probe, then
//!
//! - if every entry the replica lacks is still in the leader's log (within one lap of the
//!   ring), the leader re-WRITEs those slots and replicates to it from then on;
//! - otherwise the prefix the ring no longer holds is a state transfer: the leader offers a
//!   snapshot of the entries `[from, to)` (what the application keeps of them) by WRITEing a
//!   [`JoinOffer`] into the replica's join word, the replica READs the snapshot from the
//!   leader's memory and installs it ([`super::Replica::install`]); meanwhile the leader's
//!   window holds at `to` (Mu's log recycling: the slots from `to` on stay until the replica
//!   has them), and the first probe that finds the replica at `to` lets it catch up from the
//!   ring as above.
//!
//! The join word follows a replica's status word (applied count, heartbeat) in its log MR;
//! the offer is written there by a remote node, so [`JoinOffer::decode`] takes nothing on
//! trust.

use super::slot::LogGeometry;

/// Bytes of an encoded [`JoinOffer`].
pub const OFFER_LEN: usize = 40;
/// Tag of a valid offer ("JOIN").
const MAGIC: u32 = 0x4a4f_494e;

/// Offset of the join word in a replica's log MR (after the log and its status word).
pub fn join_word(g: LogGeometry) -> usize {
    g.len() + 16
}

/// Bytes a replica's log MR needs: the log, its status word and its join word.
pub fn replica_area(g: LogGeometry) -> usize {
    join_word(g) + OFFER_LEN
}

/// The leader's offer of a snapshot to a joining replica (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JoinOffer {
    /// First entry the snapshot holds (the replica's applied count when it was made).
    pub from: u64,
    /// Entries below this index are in the snapshot; the replica goes on from here.
    pub to: u64,
    /// Where the snapshot is in the leader's memory.
    pub va: u64,
    /// Its length in bytes.
    pub len: u64,
    /// R_key of the leader's snapshot MR.
    pub rkey: u32,
}

impl JoinOffer {
    /// Encodes (little-endian, `OFFER_LEN` bytes).
    pub fn encode(&self) -> [u8; OFFER_LEN] {
        let mut b = [0u8; OFFER_LEN];
        b[..4].copy_from_slice(&MAGIC.to_le_bytes());
        b[4..8].copy_from_slice(&self.rkey.to_le_bytes());
        b[8..16].copy_from_slice(&self.from.to_le_bytes());
        b[16..24].copy_from_slice(&self.to.to_le_bytes());
        b[24..32].copy_from_slice(&self.va.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    /// Decodes a join word: None when it holds no offer (zeroed, half written, or
    /// inconsistent: `to` not after `from`, a length over `max_len`).
    pub fn decode(b: &[u8], max_len: u64) -> Option<JoinOffer> {
        let b = b.get(..OFFER_LEN)?;
        let u64_at = |o: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[o..o + 8]);
            u64::from_le_bytes(a)
        };
        if u32::from_le_bytes([b[0], b[1], b[2], b[3]]) != MAGIC {
            return None;
        }
        let o = JoinOffer {
            rkey: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            from: u64_at(8),
            to: u64_at(16),
            va: u64_at(24),
            len: u64_at(32),
        };
        (o.to > o.from && o.len > 0 && o.len <= max_len).then_some(o)
    }
}

/// Fuzz entry: an arbitrary join word decodes to a consistent offer or to nothing, and an
/// offer re-encodes to the same bytes.
pub fn fuzz_join_word(data: &[u8]) {
    if let Some(o) = JoinOffer::decode(data, 1 << 31) {
        assert!(o.to > o.from && o.len > 0);
        assert_eq!(&o.encode()[..], &data[..OFFER_LEN]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_roundtrip_and_junk_is_no_offer() {
        let o = JoinOffer {
            from: 3,
            to: 900,
            va: 0x1000,
            len: 4096,
            rkey: 77,
        };
        let b = o.encode();
        assert_eq!(JoinOffer::decode(&b, 1 << 20), Some(o));
        assert_eq!(JoinOffer::decode(&b, 100), None, "longer than allowed");
        assert_eq!(JoinOffer::decode(&[0u8; OFFER_LEN], 1 << 20), None);
        assert_eq!(JoinOffer::decode(&b[..20], 1 << 20), None);
        let mut bad = b;
        bad[16..24].copy_from_slice(&3u64.to_le_bytes());
        assert_eq!(JoinOffer::decode(&bad, 1 << 20), None, "empty range");
        fuzz_join_word(&b);
        fuzz_join_word(&bad);
    }
}

//! The replicated hash table of §4.3: updates (create, set, delete) go through Acuerdo and
//! every replica applies them, in delivery order, to its own copy; gets read a replica's copy
//! directly, as RDMA READs would, since the table lives in memory laid out for that:
//!
//! ```text
//! slot (SLOT bytes, `buckets` of them, open addressing, linear probing):
//! | version (8) | key (8) | state (4) | len (4) | value (value_max) | version (8) |
//! ```
//!
//! A replica bumps the version to odd before it changes a slot and to even after, writing
//! it at both ends; a READ that sees the same even version at both ends read a whole slot
//! ([`lookup`] says `Torn` otherwise, and the reader retries). State 0 is empty, 1 holds a
//! key, 2 is a deleted key (a tombstone: probing goes on past it).
//!
//! An update travels as an Acuerdo payload: `| client seq (8) | op (1) | key (8) | len (4) |
//! value |` ([`Update`]); the client sequence number makes every payload distinct.

use super::error::AcuerdoError;

/// An update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Insert a key that is absent.
    Create(u64, Vec<u8>),
    /// Insert or overwrite.
    Set(u64, Vec<u8>),
    /// Remove.
    Delete(u64),
}

/// An update with the client's sequence number, as broadcast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Update {
    /// Client sequence number.
    pub seq: u64,
    /// The update.
    pub op: Op,
}

impl Update {
    /// The payload.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, key, v): (u8, u64, &[u8]) = match &self.op {
            Op::Create(k, v) => (1, *k, v),
            Op::Set(k, v) => (2, *k, v),
            Op::Delete(k) => (3, *k, &[]),
        };
        let mut b = Vec::with_capacity(21 + v.len());
        b.extend_from_slice(&self.seq.to_le_bytes());
        b.push(kind);
        b.extend_from_slice(&key.to_le_bytes());
        b.extend_from_slice(&(v.len() as u32).to_le_bytes());
        b.extend_from_slice(v);
        b
    }

    /// Decodes a payload.
    pub fn decode(b: &[u8]) -> Result<Update, AcuerdoError> {
        if b.len() < 21 {
            return Err(AcuerdoError::Malformed(format!(
                "update of {} bytes",
                b.len()
            )));
        }
        let u64_at = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let (seq, key) = (u64_at(0), u64_at(9));
        let len = u32::from_le_bytes([b[17], b[18], b[19], b[20]]) as usize;
        if b.len() != 21 + len {
            return Err(AcuerdoError::Malformed(format!(
                "update value of {len} bytes in {} bytes",
                b.len()
            )));
        }
        let v = b[21..].to_vec();
        let op = match b[8] {
            1 => Op::Create(key, v),
            2 => Op::Set(key, v),
            3 if len == 0 => Op::Delete(key),
            k => return Err(AcuerdoError::Malformed(format!("update kind {k}"))),
        };
        Ok(Update { seq, op })
    }
}

/// The table's shape (the same at every replica).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvLayout {
    /// Slots.
    pub buckets: usize,
    /// Largest value.
    pub value_max: usize,
}

const HEAD: usize = 24;

impl KvLayout {
    /// Bytes per slot.
    pub fn slot(&self) -> usize {
        HEAD + self.value_max.div_ceil(8) * 8 + 8
    }
    /// Bytes of the table.
    pub fn len(&self) -> usize {
        self.slot() * self.buckets
    }
    /// Whether the table has no slots.
    pub fn is_empty(&self) -> bool {
        self.buckets == 0
    }
    /// The first slot key `key` probes.
    pub fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17) as usize % self.buckets
    }
}

/// What an update did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// It changed the table.
    Done,
    /// Create of a present key, delete of an absent one: nothing changed.
    NoOp,
    /// No free slot (or the value is too long): refused at every replica alike.
    Full,
}

fn rd64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

fn rd32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// One replica's copy: applies delivered updates to `mem` (an MR's bytes, `lay.len()` long).
pub fn apply(mem: &mut [u8], lay: KvLayout, op: &Op) -> Applied {
    let key = match op {
        Op::Create(k, _) | Op::Set(k, _) | Op::Delete(k) => *k,
    };
    let s = lay.slot();
    let mut found = None;
    let mut free = None;
    for i in 0..lay.buckets {
        let b = (lay.home(key) + i) % lay.buckets;
        let at = b * s;
        match rd32(mem, at + 16) {
            0 => {
                free = free.or(Some(b));
                break;
            }
            1 if rd64(mem, at + 8) == key => {
                found = Some(b);
                break;
            }
            2 => free = free.or(Some(b)),
            _ => {}
        }
    }
    let (target, state, value): (usize, u32, &[u8]) = match (op, found, free) {
        (Op::Create(..), Some(_), _) | (Op::Delete(_), None, _) => return Applied::NoOp,
        (Op::Delete(_), Some(b), _) => (b, 2, &[]),
        (Op::Set(_, v), Some(b), _) => (b, 1, v),
        (Op::Create(_, v) | Op::Set(_, v), None, Some(b)) => (b, 1, v),
        (_, None, None) => return Applied::Full,
    };
    if value.len() > lay.value_max {
        return Applied::Full;
    }
    let at = target * s;
    let ver = rd64(mem, at);
    let end = at + s - 8;
    mem[at..at + 8].copy_from_slice(&(ver + 1).to_le_bytes());
    mem[end..end + 8].copy_from_slice(&(ver + 1).to_le_bytes());
    mem[at + 8..at + 16].copy_from_slice(&key.to_le_bytes());
    mem[at + 16..at + 20].copy_from_slice(&state.to_le_bytes());
    mem[at + 20..at + 24].copy_from_slice(&(value.len() as u32).to_le_bytes());
    mem[at + HEAD..at + HEAD + value.len()].copy_from_slice(value);
    mem[at..at + 8].copy_from_slice(&(ver + 2).to_le_bytes());
    mem[end..end + 8].copy_from_slice(&(ver + 2).to_le_bytes());
    Applied::Done
}

/// What a get found in the slots a READ returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// The value.
    Found(Vec<u8>),
    /// The key is not in the table.
    Absent,
    /// A slot was being changed while it was read: read again.
    Torn,
    /// The key may be further on: read the slots after these.
    More,
}

/// Looks `key` up in `slots`: consecutive slots from `key`'s home slot on (what one READ of
/// `slots.len()` bytes from the home slot returned).
pub fn lookup(slots: &[u8], lay: KvLayout, key: u64) -> Lookup {
    let s = lay.slot();
    for at in (0..slots.len() / s).map(|i| i * s) {
        let (v0, v1) = (rd64(slots, at), rd64(slots, at + s - 8));
        if v0 != v1 || v0 % 2 == 1 {
            return Lookup::Torn;
        }
        match rd32(slots, at + 16) {
            0 => return Lookup::Absent,
            1 if rd64(slots, at + 8) == key => {
                let len = (rd32(slots, at + 20) as usize).min(lay.value_max);
                return Lookup::Found(slots[at + HEAD..at + HEAD + len].to_vec());
            }
            _ => {}
        }
    }
    Lookup::More
}

/// The bytes to READ for a get of `key`: offset in the table and length (`probe` slots
/// from its home slot, fewer at the table's end).
pub fn read_span(lay: KvLayout, key: u64, probe: usize) -> (usize, usize) {
    let h = lay.home(key);
    let n = probe.min(lay.buckets - h).max(1);
    (h * lay.slot(), n * lay.slot())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_round_trip_apply_in_order_and_gets_read_whole_slots() {
        let lay = KvLayout {
            buckets: 8,
            value_max: 16,
        };
        let mut mem = vec![0u8; lay.len()];
        for u in [
            Update {
                seq: 1,
                op: Op::Create(5, b"five".to_vec()),
            },
            Update {
                seq: 2,
                op: Op::Delete(9),
            },
        ] {
            assert_eq!(Update::decode(&u.encode()).unwrap(), u);
        }
        assert!(Update::decode(&[1, 2, 3]).is_err());
        assert_eq!(
            apply(&mut mem, lay, &Op::Create(5, b"five".to_vec())),
            Applied::Done
        );
        assert_eq!(
            apply(&mut mem, lay, &Op::Create(5, b"5".to_vec())),
            Applied::NoOp
        );
        // Keys that share a home slot probe on; a tombstone keeps the chain.
        let mut same = (6..10_000u64).filter(|k| lay.home(*k) == lay.home(5));
        let (a, b) = (same.next().unwrap(), same.next().unwrap());
        assert_eq!(
            apply(&mut mem, lay, &Op::Set(a, b"a".to_vec())),
            Applied::Done
        );
        assert_eq!(
            apply(&mut mem, lay, &Op::Set(b, b"b".to_vec())),
            Applied::Done
        );
        assert_eq!(apply(&mut mem, lay, &Op::Delete(a)), Applied::Done);
        let get = |mem: &[u8], k: u64| {
            let (at, len) = read_span(lay, k, lay.buckets);
            let mut span = mem[at..at + len].to_vec();
            span.extend_from_slice(&mem[..at]);
            lookup(&span, lay, k)
        };
        assert_eq!(get(&mem, 5), Lookup::Found(b"five".to_vec()));
        assert_eq!(get(&mem, a), Lookup::Absent);
        assert_eq!(get(&mem, b), Lookup::Found(b"b".to_vec()));
        assert_eq!(
            apply(&mut mem, lay, &Op::Set(5, b"FIVE".to_vec())),
            Applied::Done
        );
        assert_eq!(get(&mem, 5), Lookup::Found(b"FIVE".to_vec()));
        // A slot caught mid-update reads as torn.
        let at = read_span(lay, 5, 1).0;
        let mut torn = mem.clone();
        torn[at] ^= 1;
        assert_eq!(get(&torn, 5), Lookup::Torn);
        assert_eq!(
            apply(&mut mem, lay, &Op::Set(1, vec![0; 17])),
            Applied::Full
        );
    }
}

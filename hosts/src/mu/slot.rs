//! The log layout shared by leader and replicas: the log is `slots` fixed-size slots; entry
//! `n` (from 0) lives in slot `n % slots`:
//!
//! ```text
//! offset 0        8        12            12+len      12+len+8
//!        | n + 1  |  len   |   value     |  n + 1   |   (all little-endian)
//! ```
//!
//! The tag `n + 1` (never 0, so zeroed memory is "empty") is written first and repeated as a
//! canary after the value. An RDMA WRITE places its bytes in order, so a replica that sees the
//! header and the canary of entry `n` knows the whole entry arrived; a slot still holding an
//! older lap's entry has another tag.

use super::MuError;

/// Bytes of the header (tag + length).
pub const HEADER: usize = 12;
/// Bytes of the trailing canary.
pub const CANARY: usize = 8;

/// Bytes an MR needs for a log of shape `g` followed by `words` 16-byte status words (a
/// replica's: its applied count and heartbeat; the leader's: one landing word per replica
/// for its probes).
pub fn status_area(g: LogGeometry, words: usize) -> usize {
    g.len() + 16 * words
}

/// Shape of a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogGeometry {
    /// Bytes per slot (a multiple of 8, at least `HEADER + CANARY`).
    pub slot_size: usize,
    /// Number of slots.
    pub slots: usize,
}

impl LogGeometry {
    /// A log of `slots` slots for values up to `max_value` bytes.
    pub fn for_values(max_value: usize, slots: usize) -> LogGeometry {
        let slot_size = (HEADER + max_value + CANARY).div_ceil(8) * 8;
        LogGeometry { slot_size, slots }
    }

    /// Checks the shape.
    pub fn validate(&self) -> Result<(), MuError> {
        if self.slots == 0 || self.slot_size < HEADER + CANARY || !self.slot_size.is_multiple_of(8)
        {
            return Err(MuError::Config(format!("bad log geometry {self:?}")));
        }
        Ok(())
    }

    /// Bytes of the whole log.
    pub fn len(&self) -> usize {
        self.slot_size * self.slots
    }

    /// Whether the log has no slots.
    pub fn is_empty(&self) -> bool {
        self.slots == 0
    }

    /// The largest value a slot holds.
    pub fn max_value(&self) -> usize {
        self.slot_size.saturating_sub(HEADER + CANARY)
    }

    /// Byte offset of entry `n`'s slot.
    pub fn offset(&self, n: u64) -> usize {
        (n % self.slots as u64) as usize * self.slot_size
    }

    /// Encodes entry `n` into `buf` (at least `HEADER + value.len() + CANARY` bytes); returns
    /// the bytes used.
    pub fn encode(&self, n: u64, value: &[u8], buf: &mut [u8]) -> Result<usize, MuError> {
        let max = self.max_value();
        if value.len() > max {
            return Err(MuError::ValueTooLarge {
                len: value.len(),
                max,
            });
        }
        let used = HEADER + value.len() + CANARY;
        let Some(out) = buf.get_mut(..used) else {
            return Err(MuError::Config("encode buffer too small".into()));
        };
        let tag = n.wrapping_add(1).to_le_bytes();
        out[..8].copy_from_slice(&tag);
        out[8..12].copy_from_slice(&(value.len() as u32).to_le_bytes());
        out[HEADER..HEADER + value.len()].copy_from_slice(value);
        out[HEADER + value.len()..].copy_from_slice(&tag);
        Ok(used)
    }

    /// Decodes entry `n` from the whole log `log`: the value if the slot holds all of entry
    /// `n`, `None` if it holds something else (not yet written, half written, another lap).
    pub fn decode<'a>(&self, n: u64, log: &'a [u8]) -> Option<&'a [u8]> {
        let off = self.offset(n);
        let slot = log.get(off..off.checked_add(self.slot_size)?)?;
        let tag = n.wrapping_add(1).to_le_bytes();
        if slot[..8] != tag {
            return None;
        }
        let len = u32::from_le_bytes([slot[8], slot[9], slot[10], slot[11]]) as usize;
        if len > self.max_value() {
            return None;
        }
        let canary = slot.get(HEADER + len..HEADER + len + CANARY)?;
        if canary != tag {
            return None;
        }
        Some(&slot[HEADER..HEADER + len])
    }
}

/// Fuzz entry: arbitrary log memory (what remote WRITEs left) with a geometry and an index
/// taken from the first bytes; decoding returns a value or nothing, never panics, and a value
/// decoded re-encodes to the same bytes.
pub fn fuzz_decode(data: &[u8]) {
    let Some((head, log)) = data.split_first_chunk::<4>() else {
        return;
    };
    let g = LogGeometry::for_values(usize::from(head[0]) * 4, usize::from(head[1] % 8) + 1);
    let n = u64::from(u16::from_le_bytes([head[2], head[3]]));
    if let Some(v) = g.decode(n, log) {
        let mut buf = vec![0u8; g.slot_size];
        let used = g.encode(n, v, &mut buf).unwrap_or(0);
        let off = g.offset(n);
        assert_eq!(&buf[..used], &log[off..off + used]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn roundtrip_and_laps() {
        let g = LogGeometry::for_values(100, 4);
        assert_eq!(g.slot_size % 8, 0);
        let mut log = vec![0u8; g.len()];
        assert_eq!(g.decode(0, &log), None, "zeroed memory is empty");
        for n in 0..10u64 {
            let v = vec![n as u8; (n as usize * 7) % 100];
            let off = g.offset(n);
            let used = g.encode(n, &v, &mut log[off..]).unwrap();
            assert_eq!(used, HEADER + v.len() + CANARY);
            assert_eq!(g.decode(n, &log), Some(&v[..]));
            // The slot now belongs to lap n/4: entry n - 4 is gone from it.
            if n >= 4 {
                assert_eq!(g.decode(n - 4, &log), None);
            }
        }
    }

    #[test]
    fn half_written_entry_is_not_applied() {
        let g = LogGeometry::for_values(64, 2);
        let mut full = vec![0u8; g.slot_size];
        let used = g.encode(0, &[7; 40], &mut full).unwrap();
        let mut log = vec![0u8; g.len()];
        // Only the first packet's worth arrived: header and part of the value.
        log[..30].copy_from_slice(&full[..30]);
        assert_eq!(g.decode(0, &log), None);
        log[..used].copy_from_slice(&full[..used]);
        assert_eq!(g.decode(0, &log), Some(&[7u8; 40][..]));
    }

    #[test]
    fn too_large_values_are_refused() {
        let g = LogGeometry::for_values(16, 2);
        // 12 + 16 + 8 rounded up to 40: room for 20 bytes.
        assert_eq!(g.max_value(), 20);
        let mut buf = vec![0u8; 1024];
        assert!(g.encode(0, &[0; 20], &mut buf).is_ok());
        assert!(matches!(
            g.encode(0, &[0; 21], &mut buf),
            Err(MuError::ValueTooLarge { len: 21, max: 20 })
        ));
        assert!(LogGeometry {
            slot_size: 12,
            slots: 1
        }
        .validate()
        .is_err());
    }

    proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300), n in any::<u64>()) {
            let g = LogGeometry::for_values(40, 3);
            let _ = g.decode(n, &bytes);
            fuzz_decode(&bytes);
        }
    }
}

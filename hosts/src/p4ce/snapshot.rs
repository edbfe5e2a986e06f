//! The snapshot a P4CE leader offers a replica joining the running log (the state transfer of
//! [`crate::mu::join`]): what the node's application keeps of entries `[from, to)`, their
//! digests ([`super::integrity`]) and, when recording, their values. The replica READs it
//! from the leader's memory; its last 8 bytes are `to + 1`, so the reader knows the whole
//! snapshot arrived (an RDMA READ response lands in order), as a log slot's canary does.
//!
//! ```text
//! per entry: digest u64 | value length u32 | value     then: to + 1 u64   (little-endian)
//! ```

/// A snapshot that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    /// The bytes end inside an entry or before the trailer.
    #[error("snapshot truncated at byte {0}")]
    Truncated(usize),
    /// The trailer does not close the expected range.
    #[error("snapshot trailer {found}, expected {expected}")]
    Trailer {
        /// Found.
        found: u64,
        /// Expected (`to + 1`).
        expected: u64,
    },
    /// Bytes left after the entries.
    #[error("{0} bytes after the snapshot's entries")]
    Trailing(usize),
}

/// Encodes entries with `digests` (and `values`, if recorded: as many) as the snapshot of
/// everything before `to`.
pub fn encode(digests: &[u64], values: Option<&[Vec<u8>]>, to: u64) -> Vec<u8> {
    let vlen: usize = values.map_or(0, |v| v.iter().map(Vec::len).sum());
    let mut b = Vec::with_capacity(digests.len() * 12 + vlen + 8);
    for (i, d) in digests.iter().enumerate() {
        let v = values.and_then(|v| v.get(i)).map_or(&[][..], |v| &v[..]);
        b.extend_from_slice(&d.to_le_bytes());
        b.extend_from_slice(&(v.len() as u32).to_le_bytes());
        b.extend_from_slice(v);
    }
    b.extend_from_slice(&to.wrapping_add(1).to_le_bytes());
    b
}

/// Whether `b` (where a READ of a snapshot ending at `to` lands) holds all of it.
pub fn arrived(b: &[u8], to: u64) -> bool {
    b.len() >= 8 && b[b.len() - 8..] == to.wrapping_add(1).to_le_bytes()
}

/// Decodes `count` entries `(digest, value)` of a snapshot ending at `to`.
pub fn decode(b: &[u8], count: u64, to: u64) -> Result<Vec<(u64, Vec<u8>)>, SnapshotError> {
    let mut out = Vec::new();
    let mut o = 0usize;
    let u64_at = |o: usize| -> Result<u64, SnapshotError> {
        let w = b.get(o..o + 8).ok_or(SnapshotError::Truncated(o))?;
        let mut a = [0u8; 8];
        a.copy_from_slice(w);
        Ok(u64::from_le_bytes(a))
    };
    for _ in 0..count {
        let d = u64_at(o)?;
        let l = b.get(o + 8..o + 12).ok_or(SnapshotError::Truncated(o))?;
        let len = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
        let v = b
            .get(o + 12..(o + 12).saturating_add(len))
            .ok_or(SnapshotError::Truncated(o))?;
        out.push((d, v.to_vec()));
        o += 12 + len;
    }
    let t = u64_at(o)?;
    if t != to.wrapping_add(1) {
        return Err(SnapshotError::Trailer {
            found: t,
            expected: to.wrapping_add(1),
        });
    }
    if b.len() > o + 8 {
        return Err(SnapshotError::Trailing(b.len() - o - 8));
    }
    Ok(out)
}

/// Fuzz entry: arbitrary bytes (the count and end taken from the first ones) decode to
/// entries or an error, never a panic; what decodes re-encodes to the same bytes.
pub fn fuzz_decode(data: &[u8]) {
    let Some((head, rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    let (count, to) = (u64::from(head[0] % 16), u64::from(head[1]));
    if let Ok(es) = decode(rest, count, to) {
        let d: Vec<u64> = es.iter().map(|e| e.0).collect();
        let v: Vec<Vec<u8>> = es.into_iter().map(|e| e.1).collect();
        assert_eq!(encode(&d, Some(&v), to), rest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_with_and_without_values_and_bad_input_is_an_error() {
        let d = [7u64, 9, 11];
        let v = vec![vec![1u8, 2], vec![], vec![3; 30]];
        let b = encode(&d, Some(&v), 12);
        assert!(arrived(&b, 12));
        assert!(!arrived(&b, 13));
        let es = decode(&b, 3, 12).unwrap();
        assert_eq!(es[2], (11, vec![3; 30]));
        let b = encode(&d, None, 5);
        assert_eq!(decode(&b, 3, 5).unwrap()[1], (9, vec![]));
        assert_eq!(decode(&b, 4, 5), Err(SnapshotError::Truncated(36)));
        assert!(matches!(
            decode(&b, 2, 5),
            Err(SnapshotError::Trailer { .. })
        ));
        assert_eq!(decode(&b[..20], 3, 5), Err(SnapshotError::Truncated(12)));
        fuzz_decode(&[3, 5]);
        let mut f = vec![3, 5];
        f.extend_from_slice(&b);
        fuzz_decode(&f);
    }
}

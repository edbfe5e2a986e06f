//! The log-integrity check every consensus bench run ends with: each node keeps a 64-bit
//! digest of every entry it appended (the leader) or applied (a replica), in index order
//! ([`digest`]; kept always, 8 bytes an entry, unlike the values themselves). After the run
//! [`check_logs`] compares them: every replica's log must be a prefix of what the leader
//! appended (same entries, same order: nothing reordered, corrupted or skipped), and at least
//! f replicas must hold every entry the leader counts as committed (nothing committed lost).
//! Replicas that are behind or cut off are fine as long as what they hold is a prefix.

use serde::Serialize;

/// A 64-bit digest of a log entry's value (its length and every byte), fast enough to take
/// of every entry a bench commits.
pub fn digest(v: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = (v.len() as u64).wrapping_mul(K) ^ 0x243f_6a88_85a3_08d3;
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(K).rotate_left(29);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(w) ^ 0xff)
            .wrapping_mul(K)
            .rotate_left(29);
    }
    h ^ (h >> 31)
}

/// Writes `index` into the first (up to 8) bytes of `value`: the bench's values differ entry
/// by entry, so a lost, duplicated or reordered entry changes the digests.
pub fn stamp(value: &mut [u8], index: u64) {
    let b = index.to_le_bytes();
    let n = value.len().min(8);
    value[..n].copy_from_slice(&b[..n]);
}

/// The outcome of [`check_logs`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Integrity {
    /// Whether the logs pass.
    pub ok: bool,
    /// Entries the leader appended.
    pub appended: u64,
    /// Entries the leader counts as committed.
    pub committed: u64,
    /// Per replica `(id, entries held)`.
    pub replicas: Vec<(u16, u64)>,
    /// Replicas that hold every committed entry.
    pub complete: usize,
    /// What differs (empty when ok).
    pub problems: Vec<String>,
}

impl std::fmt::Display for Integrity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<String> = self
            .replicas
            .iter()
            .map(|(id, n)| format!("r{id} {n}"))
            .collect();
        write!(
            f,
            "{}: leader appended {} committed {}; replicas hold {}",
            if self.ok { "ok" } else { "FAILED" },
            self.appended,
            self.committed,
            held.join(", ")
        )?;
        for p in &self.problems {
            write!(f, "; {p}")?;
        }
        Ok(())
    }
}

/// Checks the logs at the end of a run: `appended` the leader's digests by index,
/// `committed` its commit count, `replicas` each replica's id and digests by index, `f` the
/// replicas every commit needs.
pub fn check_logs(
    appended: &[u64],
    committed: u64,
    replicas: &[(u16, &[u64])],
    f: usize,
) -> Integrity {
    let mut problems = Vec::new();
    if committed > appended.len() as u64 {
        problems.push(format!(
            "the leader counts {committed} entries committed but appended only {}",
            appended.len()
        ));
    }
    let mut complete = 0;
    for (id, log) in replicas {
        if log.len() > appended.len() {
            problems.push(format!(
                "replica {id} holds {} entries, more than the {} the leader appended",
                log.len(),
                appended.len()
            ));
        }
        if let Some(i) = log.iter().zip(appended).position(|(a, b)| a != b) {
            let moved = appended.iter().position(|d| *d == log[i]);
            problems.push(match moved {
                Some(j) => format!(
                    "replica {id}: entry {i} is the leader's entry {j} (reordered, lost or duplicated)"
                ),
                None => format!("replica {id}: entry {i} differs from the leader's (corrupted)"),
            });
        } else if log.len() as u64 >= committed {
            complete += 1;
        }
    }
    if complete < f && committed > 0 {
        problems.push(format!(
            "only {complete} replicas hold the {committed} committed entries intact; f = {f}"
        ));
    }
    Integrity {
        ok: problems.is_empty(),
        appended: appended.len() as u64,
        committed,
        replicas: replicas
            .iter()
            .map(|(id, l)| (*id, l.len() as u64))
            .collect(),
        complete,
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| {
                let mut v = vec![0x5a; 64];
                stamp(&mut v, i);
                digest(&v)
            })
            .collect()
    }

    #[test]
    fn prefixes_pass_and_the_quorum_counts() {
        let l = log(10);
        let r = check_logs(&l, 8, &[(2, &l[..10]), (3, &l[..3])], 1);
        assert!(r.ok, "{r}");
        assert_eq!(r.complete, 1);
        let r = check_logs(&l, 8, &[(2, &l[..7]), (3, &l[..3])], 1);
        assert!(!r.ok);
        assert!(r.problems[0].contains("committed"), "{r}");
    }

    #[test]
    fn reordered_lost_and_corrupted_entries_fail() {
        let l = log(10);
        let mut swapped = l.clone();
        swapped.swap(4, 5);
        let r = check_logs(&l, 10, &[(2, &swapped), (3, &l)], 1);
        assert!(!r.ok);
        assert!(
            r.problems[0].contains("entry 4 is the leader's entry 5"),
            "{r}"
        );
        let mut lost = l.clone();
        lost.remove(3);
        let r = check_logs(&l, 9, &[(2, &lost)], 1);
        assert!(!r.ok, "{r}");
        let mut bad = l.clone();
        bad[7] ^= 1;
        let r = check_logs(&l, 10, &[(2, &bad)], 1);
        assert!(r.to_string().contains("corrupted"), "{r}");
    }

    #[test]
    fn digests_see_every_byte() {
        let a = vec![1u8; 100];
        let mut b = a.clone();
        b[99] = 2;
        assert_ne!(digest(&a), digest(&b));
        assert_ne!(digest(&a[..99]), digest(&a));
    }
}

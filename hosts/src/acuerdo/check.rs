//! The atomic-broadcast checker every test and bench run ends with (§2.2 of the paper):
//! over every node's delivered log, **total order** (each log is a prefix of the longest;
//! the same message at the same position everywhere), **no duplication** (no digest twice
//! in one log; bench messages carry their client sequence number, so equal digests mean the
//! same message) and **integrity** (every delivered digest was broadcast), plus headers
//! strictly increasing along each log (a deposed leader's uncommitted message never comes
//! after a committed one of a later epoch).

use std::collections::HashSet;

use serde::Serialize;

use super::types::MsgHdr;

/// One delivered message as the checker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Entry {
    /// Its header.
    pub hdr: MsgHdr,
    /// A digest of its payload ([`crate::p4ce::integrity::digest`]).
    pub digest: u64,
}

/// The checker's verdict.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Agreement {
    /// Whether every property holds.
    pub ok: bool,
    /// Messages in the longest log.
    pub longest: u64,
    /// Per node `(id, messages delivered)`.
    pub delivered: Vec<(u32, u64)>,
    /// What failed (empty when ok).
    pub problems: Vec<String>,
}

impl std::fmt::Display for Agreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: Vec<String> = self
            .delivered
            .iter()
            .map(|(id, n)| format!("n{id} {n}"))
            .collect();
        write!(
            f,
            "{}: delivered {}",
            if self.ok { "ok" } else { "FAILED" },
            held.join(", ")
        )?;
        for p in self.problems.iter().take(5) {
            write!(f, "; {p}")?;
        }
        Ok(())
    }
}

/// Checks `logs` (node id, delivered entries in order); `broadcast` is every digest a
/// client broadcast (None: integrity is not checked).
pub fn check(logs: &[(u32, Vec<Entry>)], broadcast: Option<&HashSet<u64>>) -> Agreement {
    let mut problems = Vec::new();
    let longest = logs
        .iter()
        .max_by_key(|(_, l)| l.len())
        .map(|(_, l)| l.as_slice())
        .unwrap_or(&[]);
    for (id, log) in logs {
        if let Some(i) = log.iter().zip(longest).position(|(a, b)| a != b) {
            problems.push(format!(
                "node {id}: position {i} holds {} (digest {:016x}), another node {} ({:016x})",
                log[i].hdr, log[i].digest, longest[i].hdr, longest[i].digest
            ));
        }
        let mut seen = HashSet::with_capacity(log.len());
        for (i, e) in log.iter().enumerate() {
            if !seen.insert(e.digest) {
                problems.push(format!(
                    "node {id}: position {i} delivers {:016x} again",
                    e.digest
                ));
                break;
            }
            if broadcast.is_some_and(|b| !b.contains(&e.digest)) {
                problems.push(format!(
                    "node {id}: position {i} ({:016x}) was never broadcast",
                    e.digest
                ));
                break;
            }
            if i > 0 && log[i - 1].hdr >= e.hdr {
                problems.push(format!(
                    "node {id}: position {i}'s header {} is not after {}",
                    e.hdr,
                    log[i - 1].hdr
                ));
                break;
            }
        }
    }
    Agreement {
        ok: problems.is_empty(),
        longest: longest.len() as u64,
        delivered: logs.iter().map(|(id, l)| (*id, l.len() as u64)).collect(),
        problems,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::acuerdo::types::Epoch;

    fn e(cnt: u32, d: u64) -> Entry {
        Entry {
            hdr: MsgHdr {
                e: Epoch { round: 1, ldr: 0 },
                cnt,
            },
            digest: d,
        }
    }

    #[test]
    fn prefixes_pass_and_forks_duplicates_and_strangers_fail() {
        let a = vec![e(1, 10), e(2, 20), e(3, 30)];
        assert!(check(&[(0, a.clone()), (1, a[..1].to_vec())], None).ok);
        let fork = vec![e(1, 10), e(2, 21)];
        let r = check(&[(0, a.clone()), (1, fork)], None);
        assert!(!r.ok && r.problems[0].contains("position 1"), "{r}");
        let dup = vec![e(1, 10), e(2, 10)];
        assert!(!check(&[(0, dup)], None).ok);
        let known: HashSet<u64> = [10, 20].into_iter().collect();
        assert!(!check(&[(0, a.clone())], Some(&known)).ok);
        let back = vec![e(2, 10), e(1, 20)];
        assert!(!check(&[(0, back)], None).ok);
    }
}

//! Which earlier units can depend on a unit, found through the bytes they touch.
//!
//! A dependency between two units needs them to touch one location (one writes what the other
//! reads or writes) or one to run under the other's outcome. Indexing every unit's reads and
//! writes by PHV byte, validity bit and temporary gives, for a later unit, the earlier units
//! worth comparing: a superset of its dependencies, each pair then judged exactly by
//! [`super::units`]. Long programs of independent statements so avoid comparing every pair.

use std::collections::HashMap;

use pipeline::ir::HeaderId;

use super::effects::Loc;

/// What a location is indexed under (coarser than [`Loc`]: a byte for a bit range).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Byte(u32),
    Valid(HeaderId),
    Temp(u32),
}

/// Calls `f` with every key `l` touches. An empty bit range `start..start` overlaps the ranges
/// that strictly contain `start`, so it keys the bytes on both sides of it.
fn keys(l: &Loc, mut f: impl FnMut(Key)) {
    match *l {
        Loc::Bits { start, end } => {
            let first = if end > start {
                start
            } else {
                start.saturating_sub(1)
            };
            let last = end.max(start + 1) - 1;
            (first / 8..=last / 8).for_each(|b| f(Key::Byte(b)));
        }
        Loc::Valid(h) => f(Key::Valid(h)),
        Loc::Temp(t) => f(Key::Temp(t)),
    }
}

/// The units added so far, by what they write and what they read.
#[derive(Default)]
pub(crate) struct DepIndex {
    writers: HashMap<Key, Vec<usize>>,
    readers: HashMap<Key, Vec<usize>>,
    /// Per unit added, the number of the last query that listed it (so a query lists each
    /// unit once without sorting duplicates away); queries are numbered from 1.
    seen: Vec<usize>,
    queries: usize,
}

impl DepIndex {
    /// Records unit `u`, which writes `writes` (every branch's) and reads `reads`.
    pub fn add<'a>(
        &mut self,
        u: usize,
        writes: impl IntoIterator<Item = &'a Loc>,
        reads: impl IntoIterator<Item = &'a Loc>,
    ) {
        if self.seen.len() <= u {
            self.seen.resize(u + 1, 0);
        }
        let put = |map: &mut HashMap<Key, Vec<usize>>, l: &Loc| {
            keys(l, |k| {
                let v = map.entry(k).or_default();
                if v.last() != Some(&u) {
                    v.push(u);
                }
            })
        };
        writes.into_iter().for_each(|l| put(&mut self.writers, l));
        reads.into_iter().for_each(|l| put(&mut self.readers, l));
    }

    /// The units added so far that write what a unit touches (`touches`: its reads and
    /// writes) or read what it writes (`writes`), ascending, each once.
    pub fn candidates<'a>(
        &mut self,
        touches: impl IntoIterator<Item = &'a Loc>,
        writes: impl IntoIterator<Item = &'a Loc>,
    ) -> Vec<usize> {
        self.queries += 1;
        let (stamp, seen) = (self.queries, &mut self.seen);
        let mut out = Vec::new();
        let mut take = |map: &HashMap<Key, Vec<usize>>, l: &Loc| {
            keys(l, |k| {
                for &u in map.get(&k).into_iter().flatten() {
                    if seen[u] != stamp {
                        seen[u] = stamp;
                        out.push(u);
                    }
                }
            })
        };
        touches.into_iter().for_each(|l| take(&self.writers, l));
        writes.into_iter().for_each(|l| take(&self.readers, l));
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(start: u32, end: u32) -> Loc {
        Loc::Bits { start, end }
    }

    #[test]
    fn overlapping_ranges_are_always_candidates() {
        let ranges = [
            (0, 8),
            (3, 5),
            (7, 9),
            (8, 8),
            (5, 5),
            (16, 40),
            (39, 40),
            (0, 0),
        ];
        for (i, &(a0, a1)) in ranges.iter().enumerate() {
            let mut idx = DepIndex::default();
            idx.add(i, [&bits(a0, a1)], []);
            for &(b0, b1) in &ranges {
                let found = idx.candidates([&bits(b0, b1)], []).contains(&i);
                if bits(a0, a1).overlaps(&bits(b0, b1)) {
                    assert!(found, "{a0}..{a1} against {b0}..{b1}");
                }
            }
        }
    }

    #[test]
    fn readers_answer_writes_and_writers_answer_both() {
        let mut idx = DepIndex::default();
        idx.add(0, [&bits(0, 8)], [&Loc::Temp(3)]);
        idx.add(1, [&Loc::Valid(HeaderId(2))], [&bits(8, 16)]);
        assert_eq!(idx.candidates([&bits(4, 6)], []), vec![0]);
        assert_eq!(idx.candidates([], [&Loc::Temp(3)]), vec![0]);
        assert_eq!(idx.candidates([&bits(8, 9)], []), Vec::<usize>::new());
        assert_eq!(idx.candidates([], [&bits(8, 9)]), vec![1]);
        assert_eq!(
            idx.candidates([&Loc::Valid(HeaderId(2)), &bits(0, 1)], []),
            vec![0, 1]
        );
    }
}

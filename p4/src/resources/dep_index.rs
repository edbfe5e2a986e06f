//! Which earlier units can depend on a unit, found through the bytes they touch.
//!
//! A dependency between two units needs them to touch one location (one writes what the other
//! reads or writes) or one to run under the other's outcome. Indexing every unit's reads and
//! writes by PHV byte, validity bit and temporary gives, for a later unit, the earlier units
//! worth comparing: a superset of its dependencies, each pair then judged exactly by
//! [`super::units`]. Long programs of independent statements so avoid comparing every pair,
//! and covers ([`DepIndex`]) keep a long chain of rewrites of one field to one edge a link.

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

/// The bits of a key a location covers: bit `i` for bit `i` of a byte (a validity bit or a
/// temporary covers all eight), or [`PINNED`] for an empty bit range, which overlaps what
/// strictly contains its point rather than any bit, so no write covers it.
type Mask = u16;
const FULL: Mask = 0xff;
const PINNED: Mask = 0x100;

/// Calls `f` with every key `l` touches and the bits of it. An empty bit range
/// `start..start` overlaps the ranges that strictly contain `start`, so it keys the bytes on
/// both sides of it.
fn keys(l: &Loc, mut f: impl FnMut(Key, Mask)) {
    match *l {
        Loc::Bits { start, end } if end > start => {
            for b in start / 8..=(end - 1) / 8 {
                let lo = start.max(b * 8) - b * 8;
                let hi = end.min(b * 8 + 8) - b * 8;
                f(Key::Byte(b), (FULL >> (8 - (hi - lo))) << lo);
            }
        }
        Loc::Bits { start, .. } => {
            (start.saturating_sub(1) / 8..=start / 8).for_each(|b| f(Key::Byte(b), PINNED))
        }
        Loc::Valid(h) => f(Key::Valid(h), FULL),
        Loc::Temp(t) => f(Key::Temp(t), FULL),
    }
}

/// The units added so far, by what they write and what they read, each with the bits of the
/// key it touches.
///
/// A unit added as a *cover* (one with no branches of its own and no
/// `@ignore_table_dependency`) takes the earlier units out of the lists of the bits it writes,
/// where their touch of the key lies wholly within those bits, for as long as the units added
/// run whenever the cover does (they are in its branch: their branch path extends the cover's;
/// a cover outside every branch takes them out for good). For any such later unit B that
/// touches those bits, the edge from an earlier unit A is implied by A → cover (a write after
/// A's write is an output dependency, after A's read an anti one; A is not on a branch
/// exclusive with the cover, or it would be exclusive with B too) then cover → B (B reads or
/// writes what the cover wrote: a stage-adding dependency), and implied strictly (A's stage
/// plus its gap to B is less than the cover's stage plus one), so the placement, its reasons
/// and the chains it prints are the same without it. A chain of statements that each rewrite
/// one field so gets one edge per statement, not one per pair.
#[derive(Default)]
pub(crate) struct DepIndex {
    writers: HashMap<Key, Vec<(usize, Mask)>>,
    readers: HashMap<Key, Vec<(usize, Mask)>>,
    /// Entries taken out by covers inside branches, per branch path (each a prefix of the
    /// next), put back when the units added leave that branch.
    scopes: Vec<Scope>,
    /// Per unit added, the number of the last query that listed it (so a query lists each
    /// unit once without sorting duplicates away); queries are numbered from 1.
    seen: Vec<usize>,
    queries: usize,
}

/// A branch path and the entries covers in it took out: (from the writers' lists, key,
/// entry).
struct Scope {
    path: Vec<(usize, u32)>,
    taken: Vec<(bool, Key, (usize, Mask))>,
}

impl DepIndex {
    /// Before the queries and the addition of a unit on branch path `path` (units come in
    /// program order): puts back what covers of the branches it is not in took out.
    pub fn enter(&mut self, path: &[(usize, u32)]) {
        while let Some(top) = self.scopes.last() {
            if path.starts_with(&top.path) {
                break;
            }
            let Some(scope) = self.scopes.pop() else {
                break;
            };
            for (writer, k, e) in scope.taken {
                let map = if writer {
                    &mut self.writers
                } else {
                    &mut self.readers
                };
                map.entry(k).or_default().push(e);
            }
        }
    }

    /// Records unit `u`, which writes `writes` (every branch's) and reads `reads`; `cover`:
    /// its branch path when it is a cover (see [`DepIndex`]), after [`Self::enter`] with it.
    pub fn add<'a>(
        &mut self,
        u: usize,
        writes: impl IntoIterator<Item = &'a Loc> + Clone,
        reads: impl IntoIterator<Item = &'a Loc>,
        cover: Option<&[(usize, u32)]>,
    ) {
        if self.seen.len() <= u {
            self.seen.resize(u + 1, 0);
        }
        if let Some(path) = cover {
            self.cover(path, writes.clone());
        }
        let put = |map: &mut HashMap<Key, Vec<(usize, Mask)>>, l: &Loc| {
            keys(l, |k, m| {
                let v = map.entry(k).or_default();
                match v.last_mut() {
                    Some((last, mv)) if *last == u => *mv |= m,
                    _ => v.push((u, m)),
                }
            })
        };
        writes.into_iter().for_each(|l| put(&mut self.writers, l));
        reads.into_iter().for_each(|l| put(&mut self.readers, l));
    }

    /// Takes out the entries within the bits `writes` covers, for good outside every branch,
    /// else into the scope of `path`.
    fn cover<'a>(&mut self, path: &[(usize, u32)], writes: impl IntoIterator<Item = &'a Loc>) {
        let mut covered: HashMap<Key, Mask> = HashMap::new();
        writes
            .into_iter()
            .for_each(|l| keys(l, |k, m| *covered.entry(k).or_default() |= m & FULL));
        let mut taken = Vec::new();
        for (k, m) in covered {
            let inside = |&(_, mv): &(usize, Mask)| mv & PINNED == 0 && mv & !m == 0;
            for (writer, map) in [(true, &mut self.writers), (false, &mut self.readers)] {
                if let Some(v) = map.get_mut(&k) {
                    v.retain(|e| {
                        let out = inside(e);
                        if out && !path.is_empty() {
                            taken.push((writer, k, *e));
                        }
                        !out
                    });
                }
            }
        }
        if taken.is_empty() {
            return;
        }
        match self.scopes.last_mut() {
            Some(top) if top.path == path => top.taken.extend(taken),
            _ => self.scopes.push(Scope {
                path: path.to_vec(),
                taken,
            }),
        }
    }

    /// The units added so far that write what a unit touches (`touches`: its reads and
    /// writes) or read what it writes (`writes`), ascending, each once; a superset of those
    /// it depends on but for the edges a cover implies (see [`DepIndex`]).
    pub fn candidates<'a>(
        &mut self,
        touches: impl IntoIterator<Item = &'a Loc>,
        writes: impl IntoIterator<Item = &'a Loc>,
    ) -> Vec<usize> {
        self.queries += 1;
        let (stamp, seen) = (self.queries, &mut self.seen);
        let mut out = Vec::new();
        let mut take = |map: &HashMap<Key, Vec<(usize, Mask)>>, l: &Loc| {
            if matches!(l, Loc::Bits { start, end } if start == end) {
                // An empty range overlaps what strictly contains its point, which no cover's
                // bits need to: every unit is a candidate.
                for (u, s) in seen.iter_mut().enumerate() {
                    if *s != stamp {
                        *s = stamp;
                        out.push(u);
                    }
                }
                return;
            }
            keys(l, |k, _| {
                for &(u, _) in map.get(&k).into_iter().flatten() {
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
            idx.add(i, [&bits(a0, a1)], [], None);
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
        idx.add(0, [&bits(0, 8)], [&Loc::Temp(3)], None);
        idx.add(1, [&Loc::Valid(HeaderId(2))], [&bits(8, 16)], None);
        assert_eq!(idx.candidates([&bits(4, 6)], []), vec![0]);
        assert_eq!(idx.candidates([], [&Loc::Temp(3)]), vec![0]);
        assert_eq!(idx.candidates([&bits(8, 9)], []), Vec::<usize>::new());
        assert_eq!(idx.candidates([], [&bits(8, 9)]), vec![1]);
        assert_eq!(
            idx.candidates([&Loc::Valid(HeaderId(2)), &bits(0, 1)], []),
            vec![0, 1]
        );
    }

    #[test]
    fn a_cover_drops_what_it_rewrites_wholly() {
        let mut idx = DepIndex::default();
        // 0 writes bits 0..4, 1 reads 2..6, 2 writes 8..12 (another byte), 3 an empty range.
        idx.add(0, [&bits(0, 4)], [], None);
        idx.add(1, [], [&bits(2, 6)], None);
        idx.add(2, [&bits(8, 12)], [], None);
        idx.add(3, [], [&bits(4, 4)], None);
        // Not a cover: everything stays.
        idx.add(4, [&bits(0, 8)], [], None);
        assert_eq!(
            idx.candidates([&bits(0, 16)], [&bits(0, 16)]),
            vec![0, 1, 2, 3, 4]
        );
        // Covers bits 0..5: drops unit 0 (0..4) but not 1 (reads 5), 2 (another byte), 3
        // (empty ranges stay) or 4 (writes 5..8 too).
        idx.add(5, [&bits(0, 5)], [], Some(&[]));
        assert_eq!(
            idx.candidates([&bits(0, 16)], [&bits(0, 16)]),
            vec![1, 2, 3, 4, 5]
        );
        // A whole byte: only the empty range and the other byte's writer stay.
        idx.add(6, [&bits(0, 3), &bits(3, 8)], [], Some(&[]));
        assert_eq!(
            idx.candidates([&bits(0, 16)], [&bits(0, 16)]),
            vec![2, 3, 6]
        );
        // An empty range asks about every unit.
        assert_eq!(idx.candidates([&bits(8, 8)], []), vec![0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn a_cover_in_a_branch_holds_while_in_it() {
        let mut idx = DepIndex::default();
        idx.add(0, [&bits(0, 8)], [], None);
        // Unit 1 is in branch 0 of unit 9 (say), and covers byte 0 there.
        let inside = [(9, 0)];
        idx.enter(&inside);
        idx.add(1, [&bits(0, 8)], [], Some(&inside));
        // Deeper in that branch: still covered.
        idx.enter(&[(9, 0), (10, 1)]);
        assert_eq!(idx.candidates([&bits(0, 8)], []), vec![1]);
        // In the other branch, and after the `if`: unit 0 is back.
        idx.enter(&[(9, 1)]);
        assert_eq!(idx.candidates([&bits(0, 8)], []), vec![0, 1]);
        idx.enter(&[]);
        assert_eq!(idx.candidates([&bits(0, 8)], []), vec![0, 1]);
    }
}

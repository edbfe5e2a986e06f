//! TCAM-style index for tables with ternary or range keys (or several LPM keys): rows sorted
//! by match priority, first matching row wins.
//!
//! Priority direction follows BfRt's `$MATCH_PRIORITY` (Tofino's TCAM convention): a
//! **numerically lower priority wins**; entries of equal priority are ordered by insertion (the
//! older entry wins), which is also what the `const entries` order gives when the lowering
//! numbers them 0, 1, 2, ... An LPM field in such a table is a prefix mask with no implied
//! preference for longer prefixes, as on the hardware and in BMv2.
//!
//! Lookup uses tuple-space search: rows are grouped by their mask tuple (the masks of all
//! value/mask fields; range fields are checked per row), each group is a hash map from the
//! masked key to its rows in priority order, and groups are visited best-first so the search
//! stops as soon as no remaining group can beat the best hit. Typical ACLs have a handful of
//! distinct mask tuples; when a table has many (more than 16 and more than a quarter of its
//! rows) a plain priority-ordered scan is used instead. Both give the same answer.
//!
//! When the key's fields fit one `u128` together (an IPv4 ACL: port, addresses, protocol, L4
//! port), the groups key their maps by the packed masked key ([`KeyPacker`]): a lookup packs
//! the key once and each group costs an AND and a one-word hash probe, instead of masking and
//! hashing a slice of 128-bit values per group.

use std::mem::MaybeUninit;

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::ir::{KeyMatch, Value};

use super::exact::{KeyPacker, MAX_WIDE_FIELDS};
use super::key::{shr, width_mask, FieldTest};

#[derive(Debug, Clone)]
struct Row {
    priority: u32,
    seq: u64,
    handle: u32,
    tests: Box<[FieldTest]>,
}

/// A row as stored in a tuple bucket: only its range tests remain to be checked.
#[derive(Debug, Clone)]
struct BucketRow {
    order: (u32, u64),
    handle: u32,
    ranges: Ranges,
}

/// The first row of `bucket` (in priority order) better than `best` whose ranges hold, the
/// key's field `i` (masked to its width) being `field(i)`.
#[inline]
fn scan_bucket(
    bucket: &[BucketRow],
    field: impl Fn(usize) -> Value,
    best: Option<((u32, u64), u32)>,
) -> Option<((u32, u64), u32)> {
    for r in bucket {
        if best.is_some_and(|(b, _)| r.order >= b) {
            break;
        }
        if r.ranges.iter().all(|(i, lo, hi)| {
            let k = field(*i);
            *lo <= k && k <= *hi
        }) {
            return Some((r.order, r.handle));
        }
    }
    best
}

#[derive(Debug, Clone)]
struct Tuple {
    /// Per field: the mask of a value/mask test, 0 for a range field.
    masks: Box<[Value]>,
    /// The best (lowest) (priority, seq) of the tuple's rows.
    best: (u32, u64),
    /// Wide keys: the masked field values → rows in priority order.
    buckets: HashMap<Box<[Value]>, Vec<BucketRow>, FixedState>,
    /// Packed keys: `masks` packed (the AND that masks a packed key to this tuple).
    packed_mask: u128,
    /// Packed keys: the packed masked key → rows in priority order.
    packed: HashMap<u128, Vec<BucketRow>, FixedState>,
}

impl Tuple {
    fn recompute_best(&mut self) {
        self.best = self
            .buckets
            .values()
            .chain(self.packed.values())
            .filter_map(|b| b.first().map(|r| r.order))
            .min()
            .unwrap_or((u32::MAX, u64::MAX));
    }

    fn is_empty(&self) -> bool {
        self.buckets.is_empty() && self.packed.is_empty()
    }
}

#[derive(Debug, Clone)]
pub struct TcamIndex {
    masks: Box<[Value]>,
    widths: Box<[u16]>,
    rows: Vec<Row>,
    /// Sorted by `best`.
    tuples: Vec<Tuple>,
    /// Keys of at most 128 bits in all: how they pack (the tuples use their `packed` maps).
    packer: Option<KeyPacker>,
}

/// Where a row goes in the tuple maps.
enum Slot {
    Wide(Box<[Value]>),
    Packed(u128),
    /// A value bit outside its field's width under the mask: the row never matches (a key's
    /// fields never have such bits), so no map holds it.
    Never,
}

/// Range tests left to check per row: (field, lo, hi).
type Ranges = Box<[(usize, Value, Value)]>;

/// A row's mask tuple, its masked values (the bucket key) and its range tests.
fn tuple_of(tests: &[FieldTest]) -> (Box<[Value]>, Box<[Value]>, Ranges) {
    let mut masks = Vec::with_capacity(tests.len());
    let mut values = Vec::with_capacity(tests.len());
    let mut ranges = Vec::new();
    for (i, t) in tests.iter().enumerate() {
        match *t {
            FieldTest::Mask { value, mask } => {
                masks.push(mask);
                values.push(value & mask);
            }
            FieldTest::Range { lo, hi } => {
                masks.push(0);
                values.push(0);
                ranges.push((i, lo, hi));
            }
        }
    }
    (masks.into(), values.into(), ranges.into())
}

impl TcamIndex {
    pub fn new(widths: &[u16]) -> TcamIndex {
        let packer = KeyPacker::new(widths);
        TcamIndex {
            masks: widths.iter().map(|w| width_mask(*w)).collect(),
            widths: widths.into(),
            rows: Vec::new(),
            tuples: Vec::new(),
            packer: packer.narrow().then_some(packer),
        }
    }

    /// A row's mask tuple (as the tuples are keyed), its slot and its range tests.
    fn placed(&self, tests: &[FieldTest]) -> (Box<[Value]>, Slot, Ranges) {
        let (tmasks, values, ranges) = tuple_of(tests);
        let Some(p) = &self.packer else {
            return (tmasks, Slot::Wide(values), ranges);
        };
        // Mask bits above a field's width select nothing a key has: cut them, so tuples
        // that differ only there are one.
        let tmasks: Box<[Value]> = tmasks.iter().zip(&self.masks).map(|(m, w)| m & w).collect();
        let never = values.iter().zip(&self.masks).any(|(v, w)| v & !w != 0);
        let slot = if never {
            Slot::Never
        } else {
            Slot::Packed(p.pack(&values))
        };
        (tmasks, slot, ranges)
    }

    fn sort_tuples(&mut self) {
        self.tuples.sort_by_key(|t| t.best);
    }

    pub fn insert(&mut self, keys: &[KeyMatch], priority: u32, seq: u64, handle: u32) {
        let tests: Box<[FieldTest]> = keys
            .iter()
            .zip(self.widths.iter())
            .map(|(m, w)| FieldTest::from_match(m, *w))
            .collect();
        let (tmasks, slot, ranges) = self.placed(&tests);
        let order = (priority, seq);
        if !matches!(slot, Slot::Never) {
            let ti = self.tuple_index(tmasks, order);
            let t = &mut self.tuples[ti];
            let bucket = match slot {
                Slot::Wide(values) => t.buckets.entry(values).or_default(),
                Slot::Packed(k) => t.packed.entry(k).or_default(),
                Slot::Never => unreachable!("no slot for a row that never matches"),
            };
            let at = bucket.partition_point(|r| r.order < order);
            bucket.insert(
                at,
                BucketRow {
                    order,
                    handle,
                    ranges,
                },
            );
            t.best = t.best.min(order);
            self.sort_tuples();
        }

        let at = self
            .rows
            .partition_point(|r| (r.priority, r.seq) < (priority, seq));
        self.rows.insert(
            at,
            Row {
                priority,
                seq,
                handle,
                tests,
            },
        );
    }

    /// The tuple of masks `tmasks`, made (with best `order`) when there is none.
    fn tuple_index(&mut self, tmasks: Box<[Value]>, order: (u32, u64)) -> usize {
        if let Some(i) = self.tuples.iter().position(|t| t.masks == tmasks) {
            return i;
        }
        let packed_mask = self.packer.as_ref().map_or(0, |p| p.pack(&tmasks));
        self.tuples.push(Tuple {
            masks: tmasks,
            best: order,
            buckets: HashMap::with_hasher(FixedState::default()),
            packed_mask,
            packed: HashMap::with_hasher(FixedState::default()),
        });
        self.tuples.len() - 1
    }

    pub fn remove(&mut self, priority: u32, seq: u64) {
        let at = self
            .rows
            .partition_point(|r| (r.priority, r.seq) < (priority, seq));
        if !self
            .rows
            .get(at)
            .is_some_and(|r| r.priority == priority && r.seq == seq)
        {
            return;
        }
        let row = self.rows.remove(at);
        let (tmasks, slot, _) = self.placed(&row.tests);
        if let Some(ti) = self.tuples.iter().position(|t| t.masks == tmasks) {
            let t = &mut self.tuples[ti];
            let gone = |b: &mut Vec<BucketRow>| {
                b.retain(|r| r.order != (priority, seq));
                b.is_empty()
            };
            match slot {
                Slot::Wide(values) => {
                    if t.buckets.get_mut(&values).is_some_and(gone) {
                        t.buckets.remove(&values);
                    }
                }
                Slot::Packed(k) => {
                    if t.packed.get_mut(&k).is_some_and(gone) {
                        t.packed.remove(&k);
                    }
                }
                Slot::Never => {}
            }
            if t.is_empty() {
                self.tuples.remove(ti);
            } else {
                t.recompute_best();
            }
            self.sort_tuples();
        }
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.tuples.clear();
    }

    fn use_tuples(&self) -> bool {
        let n = self.tuples.len();
        self.masks.len() <= MAX_WIDE_FIELDS && (n <= 16 || n * 4 <= self.rows.len())
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
        if key.len() != self.masks.len() {
            return None;
        }
        if self.use_tuples() {
            self.lookup_search(key)
        } else {
            self.lookup_scan(key)
        }
    }

    fn lookup_scan(&self, key: &[Value]) -> Option<u32> {
        self.rows
            .iter()
            .find(|r| {
                r.tests
                    .iter()
                    .zip(key.iter().zip(self.masks.iter()))
                    .all(|(t, (k, m))| t.matches(k & m))
            })
            .map(|r| r.handle)
    }

    /// The tuple-space search, on packed keys where the key packs into one word.
    #[inline]
    fn lookup_search(&self, key: &[Value]) -> Option<u32> {
        match &self.packer {
            Some(p) => self.lookup_packed(p, key),
            None => self.lookup_tuples(key),
        }
    }

    /// [`Self::lookup_tuples`] for keys that pack into one word.
    fn lookup_packed(&self, p: &KeyPacker, key: &[Value]) -> Option<u32> {
        self.search_packed(p.pack(key), |i| key[i] & self.masks[i])
    }

    /// The lookup of a key already packed by the index's packer (`packed`, as
    /// [`KeyPacker::pack`] makes it: what native code computes in line): `Some` with the
    /// answer when the index searches packed keys (its fields fit one `u128` and it searches
    /// its tuples, not its rows), `None` when [`Self::lookup`] must answer.
    #[inline]
    pub fn lookup_packed_key(&self, packed: u128) -> Option<Option<u32>> {
        let p = self.packer.as_ref()?;
        // A field's bits, masked to its width, are the field's value as `lookup` masks it.
        let field = |i: usize| shr(packed, p.shift(i)) & self.masks[i];
        self.use_tuples().then(|| self.search_packed(packed, field))
    }

    /// The tuple-space search on the packed key `packed`, the key's field `i` (masked to its
    /// width) being `field(i)` (for the rows' range tests).
    #[inline]
    fn search_packed(&self, packed: u128, field: impl Fn(usize) -> Value + Copy) -> Option<u32> {
        let mut best: Option<((u32, u64), u32)> = None;
        for t in &self.tuples {
            if best.is_some_and(|(b, _)| t.best >= b) {
                break;
            }
            let Some(bucket) = t.packed.get(&(packed & t.packed_mask)) else {
                continue;
            };
            best = scan_bucket(bucket, field, best);
        }
        best.map(|(_, h)| h)
    }

    fn lookup_tuples(&self, key: &[Value]) -> Option<u32> {
        let n = key.len();
        // Not zeroed first: a zeroed array of `MAX_WIDE_FIELDS` 128-bit values was a
        // 512-byte `memset` call per lookup; only the first `n` are written and read.
        let mut buf = [MaybeUninit::<Value>::uninit(); MAX_WIDE_FIELDS];
        let mut best: Option<((u32, u64), u32)> = None;
        for t in &self.tuples {
            if best.is_some_and(|(b, _)| t.best >= b) {
                break;
            }
            for i in 0..n {
                buf[i].write(key[i] & self.masks[i] & t.masks[i]);
            }
            // SAFETY: the loop above wrote `buf[0..n]` (it indexes `buf[i]` for every
            // `i < n`, so `n` ≤ `MAX_WIDE_FIELDS` or it panicked), and `MaybeUninit<Value>`
            // has `Value`'s layout.
            let masked = unsafe { std::slice::from_raw_parts(buf.as_ptr().cast::<Value>(), n) };
            let Some(bucket) = t.buckets.get(masked) else {
                continue;
            };
            best = scan_bucket(bucket, |i| key[i] & self.masks[i], best);
        }
        best.map(|(_, h)| h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn next(s: &mut u64) -> u64 {
        *s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *s >> 33
    }

    /// The tuple-space search and the plain scan agree on random tables, through inserts
    /// and removals, with few and with many distinct mask tuples, on keys that pack into one
    /// word (the first field 8 bits wide) and on wider ones (the first field 120 bits: the
    /// maps keyed by value slices).
    #[test]
    fn tuple_search_equals_scan() {
        let mut s = 9u64;
        for (mask_choices, first) in [(2u64, 8u16), (3, 8), (200, 8), (2, 120), (3, 120)] {
            let mut ix = TcamIndex::new(&[first, 8, 6]);
            assert_eq!(ix.packer.is_some(), first == 8);
            let mut live = Vec::new();
            for seq in 0..300u64 {
                let m = |s: &mut u64| match next(s) % mask_choices {
                    0 => 0,
                    1 => 0xff,
                    x => (x as Value * 37) & 0xff,
                };
                let keys = [
                    KeyMatch::Ternary {
                        value: next(&mut s) as Value & 0xff,
                        mask: m(&mut s),
                    }
                    .normalised(),
                    KeyMatch::Ternary {
                        value: next(&mut s) as Value & 0xff,
                        mask: m(&mut s),
                    }
                    .normalised(),
                    {
                        let a = next(&mut s) as Value % 64;
                        let b = next(&mut s) as Value % 64;
                        KeyMatch::Range {
                            lo: a.min(b),
                            hi: a.max(b),
                        }
                    },
                ];
                let prio = (next(&mut s) % 50) as u32;
                ix.insert(&keys, prio, seq, seq as u32);
                live.push((prio, seq));
                if next(&mut s).is_multiple_of(4) {
                    let (p, q) = live.swap_remove((next(&mut s) as usize) % live.len());
                    ix.remove(p, q);
                }
                for _ in 0..20 {
                    let key = [
                        next(&mut s) as Value & 0xff,
                        next(&mut s) as Value & 0xff,
                        next(&mut s) as Value % 64,
                    ];
                    assert_eq!(ix.lookup_search(&key), ix.lookup_scan(&key), "{key:?}");
                }
            }
        }
    }

    /// A row whose value has bits outside its field under the mask never matches, on the
    /// packed path as on the scan, and the rows behind it still do; masks differing only above
    /// a field's width are one tuple.
    #[test]
    fn packed_rows_outside_the_width() {
        let mut ix = TcamIndex::new(&[8, 16]);
        assert!(ix.packer.is_some());
        let t = |value, mask| KeyMatch::Ternary { value, mask };
        ix.insert(&[t(0x1ff, 0x1ff), t(0, 0)], 1, 0, 10);
        ix.insert(&[t(0x0ff, 0x1ff), t(0, 0)], 2, 1, 11);
        ix.insert(&[t(0x0f0, 0x0f0), t(5, 0xffff)], 0, 2, 12);
        assert_eq!(ix.tuples.len(), 2, "0x1ff and 0xff are one mask on 8 bits");
        for key in [[0xff, 0], [0xff, 5], [0xf3, 5], [0x0f, 5], [0x1ff, 7]] {
            assert_eq!(ix.lookup_search(&key), ix.lookup_scan(&key), "{key:x?}");
        }
        assert_eq!(ix.lookup(&[0xff, 0]), Some(11));
        assert_eq!(ix.lookup(&[0xf0, 5]), Some(12));
        ix.remove(1, 0);
        ix.remove(0, 2);
        assert_eq!(ix.lookup(&[0xf0, 5]), None);
        assert_eq!(ix.lookup(&[0xff, 5]), Some(11));
    }

    trait Normalise {
        fn normalised(self) -> KeyMatch;
    }

    impl Normalise for KeyMatch {
        fn normalised(self) -> KeyMatch {
            match self {
                KeyMatch::Ternary { value, mask } => KeyMatch::Ternary {
                    value: value & mask,
                    mask,
                },
                other => other,
            }
        }
    }
}

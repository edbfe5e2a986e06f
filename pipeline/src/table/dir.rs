//! A DIR-24-8-style multibit trie for LPM tables whose only key field is one LPM field of at
//! most 32 bits (IPv4 routes): a lookup is one to three array reads instead of one hash probe
//! per installed prefix length.
//!
//! Strides are 16-8-8 (a 65,536-slot first level, allocated at the first insert, then 256-slot
//! chunks made on demand for prefixes longer than /16 and /24), so an empty table costs nothing
//! and one with routes 256 KiB plus 1 KiB per /16 or /24 block that holds a longer prefix.
//! Field values are left-aligned to 32 bits, so narrower fields work the same way.
//!
//! Routes are leaf-pushed: every slot holds the handle of the longest route covering it. To keep
//! that exact under updates, the route length of each handle is kept (`lens`), an insert only
//! overwrites slots held by a route no longer than itself, and a delete puts back the covering
//! route, which the caller finds in its per-length index (the source of truth, see [`super::lpm`]).
//! A chunk whose slots all become the same route again is folded back into its parent.

/// Slot value: 0 = no route; `CHILD | i` = chunk `i` of the next level; else handle + 1.
type Slot = u32;
const CHILD: Slot = 1 << 31;
const CHUNK: usize = 256;
/// First bit (from the top of the 32-bit address) and width of each level's index.
const LEVELS: [(u32, u32); 3] = [(0, 16), (16, 8), (24, 8)];

/// Largest handle the slot encoding holds (handle + 1 must stay below [`CHILD`]).
pub const MAX_HANDLE: u32 = CHILD - 2;

#[derive(Debug, Default)]
pub struct DirIndex {
    /// Field width in bits (≤ 32); values are shifted left by `32 - width`.
    width: u32,
    pub(super) top: Vec<Slot>,
    /// Chunks of levels 1 and 2, `CHUNK` slots each, with their free lists.
    pub(super) chunks: [Vec<Slot>; 2],
    pub(super) free: [Vec<u32>; 2],
    /// Prefix length of the route behind each live handle (indexed by handle).
    lens: Vec<u8>,
    /// Where native code finds the levels ([`DirLayout`]); every method that may reallocate
    /// them (`insert`, `remove`, `clear`, `clone`) sets it again.
    view: View,
}

/// The levels' addresses (the first null when it is not allocated: no route).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct View {
    top: *const Slot,
    chunks: [*const Slot; 2],
}

impl Default for View {
    fn default() -> View {
        View {
            top: std::ptr::null(),
            chunks: [std::ptr::null(); 2],
        }
    }
}

// SAFETY: the view holds addresses Rust code never dereferences (only native code reads
// through them, while the index is borrowed by the running pass); it is as thread-safe as the
// vectors it describes.
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

impl Clone for DirIndex {
    fn clone(&self) -> DirIndex {
        let mut d = DirIndex {
            width: self.width,
            top: self.top.clone(),
            chunks: self.chunks.clone(),
            free: self.free.clone(),
            lens: self.lens.clone(),
            view: View::default(),
        };
        d.sync_view();
        d
    }
}

/// Byte offsets and constants native code reads a [`DirIndex`] with (a lookup as
/// [`DirIndex::lookup`] does it): the view's level addresses (`u32` slots), the child flag of a
/// slot and the slots per chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DirLayout {
    pub top: usize,
    pub chunks: [usize; 2],
    pub child: u32,
    pub chunk: usize,
}

impl DirLayout {
    pub(crate) const fn get() -> DirLayout {
        use std::mem::offset_of;
        let view = offset_of!(DirIndex, view);
        DirLayout {
            top: view + offset_of!(View, top),
            chunks: [
                view + offset_of!(View, chunks),
                view + offset_of!(View, chunks) + std::mem::size_of::<*const Slot>(),
            ],
            child: CHILD,
            chunk: CHUNK,
        }
    }
}

/// What an update does to the slots a prefix covers.
#[derive(Clone, Copy)]
enum Op {
    /// Install `slot` (of length `len`) where the holder is no longer than `len`.
    Insert { slot: Slot, len: u8 },
    /// Replace every slot holding `old` by `new` (the covering route, or none).
    Delete { old: Slot, new: Slot },
}

impl DirIndex {
    /// An index for one LPM field of `width` bits (1..=32).
    pub fn new(width: u16) -> DirIndex {
        let mut d = DirIndex {
            width: u32::from(width.clamp(1, 32)),
            ..DirIndex::default()
        };
        d.sync_view();
        d
    }

    /// Sets the view to the levels as they are now.
    fn sync_view(&mut self) {
        self.view = View {
            top: if self.top.is_empty() {
                std::ptr::null()
            } else {
                self.top.as_ptr()
            },
            chunks: [self.chunks[0].as_ptr(), self.chunks[1].as_ptr()],
        };
    }

    /// Whether the view describes the levels as they are now.
    #[cfg(test)]
    pub(super) fn view_in_sync(&self) -> bool {
        let top = if self.top.is_empty() {
            std::ptr::null()
        } else {
            self.top.as_ptr()
        };
        let chunks = [self.chunks[0].as_ptr(), self.chunks[1].as_ptr()];
        self.view.top == top && self.view.chunks == chunks
    }

    /// The field value (masked to `width` bits) left-aligned in 32 bits.
    #[inline]
    fn align(&self, value: u128) -> u32 {
        ((value & ((1u128 << self.width) - 1)) as u32) << (32 - self.width)
    }

    /// The handle of the longest prefix matching `value`, if any.
    #[inline]
    pub fn lookup(&self, value: u128) -> Option<u32> {
        let a = self.align(value);
        let mut s = *self.top.get((a >> 16) as usize)?;
        if s & CHILD != 0 {
            s = self.chunks[0][((s & !CHILD) as usize) * CHUNK + ((a >> 8) & 0xff) as usize];
            if s & CHILD != 0 {
                s = self.chunks[1][((s & !CHILD) as usize) * CHUNK + (a & 0xff) as usize];
            }
        }
        s.checked_sub(1)
    }

    /// Adds route `value/len` (value masked to the prefix) with `handle` (≤ [`MAX_HANDLE`]).
    pub fn insert(&mut self, value: u128, len: u16, handle: u32) {
        if self.top.is_empty() {
            self.top = vec![0; 1 << 16];
        }
        let h = handle as usize;
        if self.lens.len() <= h {
            self.lens.resize(h + 1, 0);
        }
        let len = len.min(self.width as u16) as u8;
        self.lens[h] = len;
        let slot = handle + 1;
        self.update(self.align(value), len, Op::Insert { slot, len }, 0, 0);
        self.sync_view();
    }

    /// Removes route `value/len` held by `handle`; `covering` is the handle of the longest
    /// remaining route shorter than `len` that covers it.
    pub fn remove(&mut self, value: u128, len: u16, handle: u32, covering: Option<u32>) {
        if self.top.is_empty() {
            return;
        }
        let len = len.min(self.width as u16) as u8;
        let new = covering.map_or(0, |c| c + 1);
        let op = Op::Delete {
            old: handle + 1,
            new,
        };
        self.update(self.align(value), len, op, 0, 0);
        self.sync_view();
    }

    pub fn clear(&mut self) {
        *self = DirIndex::new(self.width as u16);
    }

    /// Applies `op` to every slot that prefix `a/len` covers, from `level`'s `chunk` down.
    fn update(&mut self, a: u32, len: u8, op: Op, level: usize, chunk: usize) {
        let (start, bits) = LEVELS[level];
        let end = start + bits;
        let idx = ((a << start) >> (32 - bits)) as usize;
        if u32::from(len) <= end {
            // The prefix ends in this level: it covers a run of this level's slots. Level 2
            // ends at bit 32, so the recursion below always stops by then.
            let free_bits = end - u32::from(len);
            let first = idx & !((1usize << free_bits) - 1);
            for i in first..first + (1usize << free_bits) {
                self.apply(level, chunk, i, op);
            }
            return;
        }
        let s = self.slot(level, chunk, idx);
        let child = if s & CHILD != 0 {
            (s & !CHILD) as usize
        } else if let Op::Insert { .. } = op {
            let c = self.new_chunk(level, s);
            self.set(level, chunk, idx, CHILD | c as u32);
            c
        } else {
            // A delete of a longer prefix where no chunk exists: the route is not here.
            return;
        };
        self.update(a, len, op, level + 1, child);
        if let Op::Delete { .. } = op {
            self.fold((level, chunk, idx));
        }
    }

    /// Applies `op` to one slot, and to the whole subtree when the slot points at a chunk.
    fn apply(&mut self, level: usize, chunk: usize, i: usize, op: Op) {
        let s = self.slot(level, chunk, i);
        if s & CHILD != 0 {
            let c = (s & !CHILD) as usize;
            for j in 0..CHUNK {
                self.apply(level + 1, c, j, op);
            }
            if let Op::Delete { .. } = op {
                self.fold((level, chunk, i));
            }
            return;
        }
        match op {
            Op::Insert { slot, len } => {
                if s == 0 || self.lens[(s - 1) as usize] <= len {
                    self.set(level, chunk, i, slot);
                }
            }
            Op::Delete { old, new } => {
                if s == old {
                    self.set(level, chunk, i, new);
                }
            }
        }
    }

    /// If the chunk behind a parent slot now holds one route (no sub-chunks) everywhere,
    /// puts that route in the parent slot and frees the chunk.
    fn fold(&mut self, (level, chunk, i): (usize, usize, usize)) {
        let s = self.slot(level, chunk, i);
        if s & CHILD == 0 {
            return;
        }
        let c = (s & !CHILD) as usize;
        let slots = &self.chunks[level][c * CHUNK..(c + 1) * CHUNK];
        let first = slots[0];
        if first & CHILD == 0 && slots.iter().all(|x| *x == first) {
            self.set(level, chunk, i, first);
            self.free[level].push(c as u32);
        }
    }

    fn slot(&self, level: usize, chunk: usize, i: usize) -> Slot {
        match level {
            0 => self.top[i],
            l => self.chunks[l - 1][chunk * CHUNK + i],
        }
    }

    fn set(&mut self, level: usize, chunk: usize, i: usize, s: Slot) {
        match level {
            0 => self.top[i] = s,
            l => self.chunks[l - 1][chunk * CHUNK + i] = s,
        }
    }

    /// A chunk for the level below `level`, every slot set to `fill`; returns its index.
    fn new_chunk(&mut self, level: usize, fill: Slot) -> usize {
        let (store, free) = (&mut self.chunks[level], &mut self.free[level]);
        match free.pop() {
            Some(c) => {
                let c = c as usize;
                store[c * CHUNK..(c + 1) * CHUNK].fill(fill);
                c
            }
            None => {
                store.resize(store.len() + CHUNK, fill);
                store.len() / CHUNK - 1
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::{Index, MatchTable};
    use crate::ir::{ActionCall, ActionId, KeyMatch, MatchKind, Value};

    /// One control-plane write: insert (or modify if present) or delete `value/len`.
    #[derive(Debug, Clone)]
    struct Write {
        insert: bool,
        value: u32,
        len: u16,
    }

    /// Writes on a few clustered bases so prefixes overlap and nest at every level.
    fn writes(width: u16) -> impl Strategy<Value = Vec<Write>> {
        let bases = [0u32, 0x0a00_0000, 0x0a01_0200, 0xc0a8_01ff, 0xffff_ffff];
        let one = (
            any::<bool>(),
            0..bases.len(),
            any::<u32>(),
            0..=width,
            0u8..4,
        )
            .prop_map(move |(insert, b, noise, len, spread)| {
                // Low noise keeps values near the base; some writes spread further.
                let noise = noise >> (8 * (4 - u32::from(spread)) % 32).min(31);
                let v = (bases[b] ^ noise) >> (32 - u32::from(width));
                Write {
                    insert: insert || spread == 0,
                    value: v,
                    len,
                }
            });
        prop::collection::vec(one, 1..120)
    }

    fn key(w: &Write, width: u16) -> KeyMatch {
        let keep = !0u128 << (width - w.len.min(width)) & ((1u128 << width) - 1);
        KeyMatch::Lpm {
            value: Value::from(w.value) & keep,
            prefix_len: w.len,
        }
    }

    /// The longest live route matching `a` (brute force over the entries).
    fn reference(t: &MatchTable, a: Value, width: u16) -> Option<u32> {
        t.iter()
            .filter_map(|(h, k, _, _)| match k[0] {
                KeyMatch::Lpm { value, prefix_len } => {
                    let m = !0u128 << (width - prefix_len) & ((1u128 << width) - 1);
                    (a & m == value).then_some((prefix_len, h.0))
                }
                _ => None,
            })
            .max()
            .map(|x| x.1)
    }

    fn check(t: &MatchTable, probes: &[Value], width: u16) -> Result<(), TestCaseError> {
        let Index::Lpm(ix) = &t.index else {
            return Err(TestCaseError::fail("not an LPM index"));
        };
        prop_assert!(ix.uses_dir());
        let d = ix.dir.as_deref().expect("a trie");
        prop_assert!(
            d.view_in_sync() && d.clone().view_in_sync(),
            "native code's view is stale"
        );
        for a in probes {
            let a = a & ((1u128 << width) - 1);
            let got = t.lookup(&[a]).map(|h| h.0);
            prop_assert_eq!(got, ix.lookup_hashed(&[a]), "trie vs hash maps at {:#x}", a);
            prop_assert_eq!(
                got,
                reference(t, a, width),
                "trie vs brute force at {:#x}",
                a
            );
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Interleaved inserts, modifies and deletes keep the trie equal to the per-length
        /// hash maps and to a brute-force longest match, at route boundaries and random points.
        #[test]
        fn trie_equals_hash_maps(
            width in prop_oneof![Just(32u16), Just(20), Just(9)],
            ws in writes(32),
            extra in prop::collection::vec(any::<u32>(), 16),
        ) {
            let mut t = MatchTable::new(&[(MatchKind::Lpm, width)], 64);
            let ws: Vec<Write> = ws
                .into_iter()
                .map(|w| Write { value: w.value >> (32 - width), len: w.len.min(width), ..w })
                .collect();
            let mut probes: Vec<Value> = extra.iter().map(|x| Value::from(*x)).collect();
            for w in &ws {
                let v = Value::from(w.value);
                probes.extend([v, v ^ 1, v.wrapping_sub(1), v + 1, v | 0xff, v | 0xffff]);
            }
            for (n, w) in ws.iter().enumerate() {
                let k = [key(w, width)];
                let call = ActionCall { action: ActionId(n as u32), args: vec![] };
                if w.insert {
                    if t.insert(&k, None, call.clone()).is_err() {
                        let _ = t.modify(&k, None, call);
                    }
                } else {
                    let _ = t.delete(&k, None);
                }
                if n % 8 == 0 {
                    check(&t, &probes, width)?;
                }
            }
            check(&t, &probes, width)?;
            // Deleting everything leaves no route and no chunk behind.
            let all: Vec<KeyMatch> = t.iter().map(|(_, k, _, _)| k[0]).collect();
            for k in all {
                prop_assert!(t.delete(&[k], None).is_ok());
            }
            check(&t, &probes, width)?;
            if let Index::Lpm(ix) = &t.index {
                let d = ix.dir.as_ref().unwrap();
                prop_assert!(d.top.iter().all(|s| *s == 0));
                for l in 0..2 {
                    prop_assert_eq!(d.free[l].len() * super::CHUNK, d.chunks[l].len());
                }
            }
        }
    }

    #[test]
    fn only_single_narrow_lpm_tables_use_the_trie() {
        let uses = |keys: &[(MatchKind, u16)]| match MatchTable::new(keys, 4).index {
            Index::Lpm(ix) => ix.uses_dir(),
            _ => false,
        };
        assert!(uses(&[(MatchKind::Lpm, 32)]));
        assert!(uses(&[(MatchKind::Lpm, 8)]));
        assert!(!uses(&[(MatchKind::Lpm, 33)]));
        assert!(!uses(&[(MatchKind::Lpm, 128)]));
        assert!(!uses(&[(MatchKind::Exact, 16), (MatchKind::Lpm, 32)]));
    }
}

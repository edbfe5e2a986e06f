//! Open-addressing hash table for exact keys packed into at most 64 bits, with each entry's
//! action record ([`HotAction`]) stored beside its key: a hit reads one cache-line-aligned
//! 64-byte bucket instead of a hash-map slot and then the table's action array.
//!
//! Linear probing over a power-of-two array kept at most half full; deletes shift the
//! following run back (no tombstones), so a lookup stops at the first empty bucket. The hash is
//! a fixed multiplicative one (deterministic runs). The table's own entry store stays the
//! source of truth: [`MatchTable`](super::MatchTable) writes every record change here too.

use super::HotAction;

#[derive(Debug, Clone)]
#[repr(align(64))]
struct Bucket {
    key: u64,
    /// Entry handle + 1; 0 marks an empty bucket.
    slot: u32,
    hot: HotAction,
}

const EMPTY: Bucket = Bucket {
    key: 0,
    slot: 0,
    hot: HotAction::NONE,
};

/// The multiplier of the hash (a bucket's home is the top bits of `key * HASH_MUL`).
pub(crate) const HASH_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// Where native code finds the buckets ([`OpenLayout`]): their address (null when there are
/// none), the index mask and the hash's right shift. `OpenMap` keeps it equal to its bucket
/// vector: every method that replaces the vector (`grow`, `clear`, `clone`) sets it again, and
/// nothing else reallocates the vector (inserts grow through `grow`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct View {
    buckets: *const Bucket,
    mask: u64,
    shift: u64,
}

impl Default for View {
    fn default() -> View {
        View {
            buckets: std::ptr::null(),
            mask: 0,
            shift: 0,
        }
    }
}

// SAFETY: the view is an address Rust code never dereferences (only native code reads
// through it, while the map is borrowed by the running pass); it is as thread-safe as the
// vector it describes.
unsafe impl Send for View {}
// SAFETY: as above.
unsafe impl Sync for View {}

#[derive(Debug, Default)]
pub struct OpenMap {
    buckets: Vec<Bucket>,
    len: usize,
    view: View,
}

impl Clone for OpenMap {
    fn clone(&self) -> OpenMap {
        let mut m = OpenMap {
            buckets: self.buckets.clone(),
            len: self.len,
            view: View::default(),
        };
        m.sync_view();
        m
    }
}

/// Byte offsets native code reads an [`OpenMap`] and its buckets at (a lookup's hash and
/// probe, as [`OpenMap::get`] does them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenLayout {
    /// In the map: the buckets' address (null: none), the index mask, the hash's shift.
    pub buckets: usize,
    pub mask: usize,
    pub shift: usize,
    /// Bytes per bucket, and in a bucket: the packed key (`u64`), the handle + 1 (`u32`, 0:
    /// empty) and the action record ([`super::HotLayout`]).
    pub bucket: usize,
    pub key: usize,
    pub slot: usize,
    pub hot: usize,
}

impl OpenLayout {
    pub(crate) const fn get() -> OpenLayout {
        use std::mem::offset_of;
        let view = offset_of!(OpenMap, view);
        OpenLayout {
            buckets: view + offset_of!(View, buckets),
            mask: view + offset_of!(View, mask),
            shift: view + offset_of!(View, shift),
            bucket: std::mem::size_of::<Bucket>(),
            key: offset_of!(Bucket, key),
            slot: offset_of!(Bucket, slot),
            hot: offset_of!(Bucket, hot),
        }
    }
}

impl OpenMap {
    #[inline]
    fn home(&self, key: u64) -> usize {
        let bits = self.buckets.len().trailing_zeros();
        (key.wrapping_mul(HASH_MUL) >> (64 - bits)) as usize
    }

    /// Whether the view describes the bucket vector as it is now.
    #[cfg(test)]
    fn view_in_sync(&self) -> bool {
        let mut now = self.clone();
        now.sync_view();
        let (a, b) = (self.view, now.view);
        now.buckets.is_empty() == a.buckets.is_null()
            && (a.buckets.is_null() || a.buckets == self.buckets.as_ptr())
            && (a.mask, a.shift) == (b.mask, b.shift)
    }

    /// Sets the view to the bucket vector as it is now.
    fn sync_view(&mut self) {
        let n = self.buckets.len();
        self.view = if n == 0 {
            View::default()
        } else {
            View {
                buckets: self.buckets.as_ptr(),
                mask: (n - 1) as u64,
                shift: u64::from(64 - n.trailing_zeros()),
            }
        };
    }

    /// The bucket index holding `key`, if any.
    #[inline]
    fn find(&self, key: u64) -> Option<usize> {
        if self.buckets.is_empty() {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let mut i = self.home(key);
        loop {
            let b = &self.buckets[i];
            if b.slot == 0 {
                return None;
            }
            if b.key == key {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The handle and action record stored for `key`.
    #[inline]
    pub(super) fn get(&self, key: u64) -> Option<(u32, &HotAction)> {
        let b = &self.buckets[self.find(key)?];
        Some((b.slot - 1, &b.hot))
    }

    /// Adds or replaces `key` (handle < `u32::MAX`).
    pub(super) fn insert(&mut self, key: u64, handle: u32, hot: HotAction) {
        if let Some(i) = self.find(key) {
            self.buckets[i].slot = handle + 1;
            self.buckets[i].hot = hot;
            return;
        }
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        let mask = self.buckets.len() - 1;
        let mut i = self.home(key);
        while self.buckets[i].slot != 0 {
            i = (i + 1) & mask;
        }
        self.buckets[i] = Bucket {
            key,
            slot: handle + 1,
            hot,
        };
        self.len += 1;
    }

    /// Replaces the action record of `key`, if present.
    pub(super) fn set_hot(&mut self, key: u64, hot: HotAction) {
        if let Some(i) = self.find(key) {
            self.buckets[i].hot = hot;
        }
    }

    pub fn remove(&mut self, key: u64) {
        let Some(mut hole) = self.find(key) else {
            return;
        };
        let mask = self.buckets.len() - 1;
        self.buckets[hole] = EMPTY;
        self.len -= 1;
        // Backward shift: move each later bucket of the run into the hole if its home is not
        // (cyclically) between the hole and itself.
        let mut i = (hole + 1) & mask;
        while self.buckets[i].slot != 0 {
            let home = self.home(self.buckets[i].key);
            if (i.wrapping_sub(home) & mask) >= (i.wrapping_sub(hole) & mask) {
                self.buckets.swap(hole, i);
                hole = i;
            }
            i = (i + 1) & mask;
        }
    }

    pub fn clear(&mut self) {
        *self = OpenMap::default();
    }

    fn grow(&mut self) {
        let cap = (self.buckets.len() * 2).max(8);
        let old = std::mem::replace(&mut self.buckets, vec![EMPTY; cap]);
        self.sync_view();
        self.len = 0;
        for b in old.into_iter().filter(|b| b.slot != 0) {
            self.insert(b.key, b.slot - 1, b.hot);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;
    use crate::ir::ActionId;

    fn hot(a: u32) -> HotAction {
        HotAction {
            action: ActionId(a),
            len: 1,
            args: [u64::from(a), 0, 0],
        }
    }

    proptest! {
        /// Inserts, record updates and deletes (few keys, many collisions) agree with std's map.
        #[test]
        fn open_map_equals_hash_map(ops in prop::collection::vec((0u8..3, 0u64..40, any::<u32>()), 1..300)) {
            let mut m = OpenMap::default();
            let mut r: HashMap<u64, (u32, u32)> = HashMap::new();
            for (op, k, a) in ops {
                let k = k << 20; // keys differing only high up collide in small tables
                let h = a % 1000;
                match op {
                    0 => { m.insert(k, h, hot(a)); r.insert(k, (h, a)); }
                    1 => { m.set_hot(k, hot(a)); if let Some(e) = r.get_mut(&k) { e.1 = a; } }
                    _ => { m.remove(k); r.remove(&k); }
                }
                prop_assert!(m.view_in_sync());
                prop_assert!(m.clone().view_in_sync());
                for probe in 0u64..40 {
                    let p = probe << 20;
                    let got = m.get(p).map(|(h, x)| (h, x.action.0));
                    prop_assert_eq!(got, r.get(&p).copied());
                }
            }
        }
    }
}

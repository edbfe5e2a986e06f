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

#[derive(Debug, Clone, Default)]
pub struct OpenMap {
    buckets: Vec<Bucket>,
    len: usize,
}

impl OpenMap {
    #[inline]
    fn home(&self, key: u64) -> usize {
        let bits = self.buckets.len().trailing_zeros();
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
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
                for probe in 0u64..40 {
                    let p = probe << 20;
                    let got = m.get(p).map(|(h, x)| (h, x.action.0));
                    prop_assert_eq!(got, r.get(&p).copied());
                }
            }
        }
    }
}

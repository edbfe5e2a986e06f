//! The hash map behind narrow (≤ 128-bit) packed keys of exact and LPM tables.
//!
//! Keys of at most 64 bits (MAC addresses, IPv4 addresses, ports, next-hop ids — most tables)
//! are stored as `u64`: half the memory per slot of a `u128` key, so a large table keeps more
//! of itself in cache, and a cheaper hash. Wider packed keys keep `u128`. Both use foldhash's
//! fast hasher with a fixed seed (deterministic runs).

use std::collections::HashMap;

use foldhash::fast::FixedState;

/// A map from a packed key (`< 2^bits`) to an entry handle.
#[derive(Debug, Clone)]
pub enum PackedMap {
    W64(HashMap<u64, u32, FixedState>),
    W128(HashMap<u128, u32, FixedState>),
}

impl PackedMap {
    /// A map for packed keys of `bits` bits.
    pub fn new(bits: u32) -> PackedMap {
        if bits <= 64 {
            PackedMap::W64(HashMap::with_hasher(FixedState::default()))
        } else {
            PackedMap::W128(HashMap::with_hasher(FixedState::default()))
        }
    }

    #[inline]
    pub fn get(&self, k: u128) -> Option<u32> {
        match self {
            // Packed keys of a 64-bit map never have bits above 63 (`new` chose it so).
            PackedMap::W64(m) => m.get(&(k as u64)).copied(),
            PackedMap::W128(m) => m.get(&k).copied(),
        }
    }

    pub fn insert(&mut self, k: u128, handle: u32) {
        match self {
            PackedMap::W64(m) => {
                m.insert(k as u64, handle);
            }
            PackedMap::W128(m) => {
                m.insert(k, handle);
            }
        }
    }

    /// Removes a key; returns the handle it had.
    pub fn remove(&mut self, k: u128) -> Option<u32> {
        match self {
            PackedMap::W64(m) => m.remove(&(k as u64)),
            PackedMap::W128(m) => m.remove(&k),
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            PackedMap::W64(m) => m.is_empty(),
            PackedMap::W128(m) => m.is_empty(),
        }
    }

    pub fn clear(&mut self) {
        match self {
            PackedMap::W64(m) => m.clear(),
            PackedMap::W128(m) => m.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_widths_store_and_find() {
        for (bits, k) in [(48u32, 0xffff_ffff_ffffu128), (96, 1u128 << 90)] {
            let mut m = PackedMap::new(bits);
            assert_eq!(m.get(k), None);
            m.insert(k, 7);
            assert_eq!(m.get(k), Some(7));
            assert!(!m.is_empty());
            m.remove(k);
            assert_eq!(m.get(k), None);
            m.insert(k, 1);
            m.clear();
            assert!(m.is_empty());
        }
    }
}

//! Longest-prefix-match index for tables with one LPM field and any number of exact fields.
//!
//! One hash map per prefix length present in the table, kept sorted longest first; a lookup
//! masks the LPM field to each length in turn and probes, so the first hit is the longest
//! matching prefix. With IPv4 routes that is at most 33 probes of a one-word hash map, and in
//! practice as many as there are distinct prefix lengths installed.
//!
//! When the LPM field is the only key field and at most 32 bits wide (IPv4 routes), lookups go
//! to a [`DirIndex`] multibit trie kept equal to the hash maps, which stay the source of truth
//! for updates (a delete asks them for the covering route).
//!
//! When exact fields sit beside an LPM field of at most 32 bits (VRF + route), lookups go to
//! one such trie per value of the exact fields (`Vrfs`: a one-word hash probe for the VRF, then
//! one to three array reads), for as many as [`MAX_VRF_TRIES`] values, once routes of two or
//! more prefix lengths are installed (with one, a single hash probe is cheaper); a table with
//! more VRFs falls back to the hash maps for good.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::ir::{KeyMatch, Value};

use super::dir::{DirIndex, MAX_HANDLE};
use super::exact::{match_value, KeyPacker, MAX_WIDE_FIELDS};
use super::key::{prefix_mask, shl, width_mask};
use super::packed::PackedMap;

#[derive(Debug, Clone)]
struct Level {
    prefix_len: u16,
    /// Narrow keys: the packed key ANDed with this clears the LPM bits past the prefix.
    keep: u128,
    /// Wide keys: the mask for the LPM field's value.
    lpm_mask: Value,
    narrow_map: PackedMap,
    wide_map: HashMap<Box<[Value]>, u32, FixedState>,
}

impl Level {
    fn is_empty(&self) -> bool {
        self.narrow_map.is_empty() && self.wide_map.is_empty()
    }
}

#[derive(Debug, Clone)]
pub struct LpmIndex {
    packer: KeyPacker,
    lpm_field: usize,
    /// Sorted by prefix length, longest first.
    levels: Vec<Level>,
    /// The lookup path of single-field tables of ≤ 32 bits (dropped, falling back to the
    /// hash maps, if a handle ever exceeds what it encodes).
    pub(super) dir: Option<Box<DirIndex>>,
    /// The lookup path of exact + LPM tables whose LPM field is at most 32 bits wide (dropped
    /// as `dir` is, or when the exact fields take more than [`MAX_VRF_TRIES`] values).
    vrfs: Option<Box<Vrfs>>,
}

/// Most distinct exact-field values (VRFs) given a trie of their own: each trie's first level
/// is 256 KiB once it holds a route.
pub const MAX_VRF_TRIES: usize = 16;

/// One trie per value of the exact fields of an exact + LPM table.
#[derive(Debug, Clone)]
struct Vrfs {
    /// The LPM field's bits in the packed key (cleared, the rest is the exact fields' part).
    lpm_bits: u128,
    /// Where the LPM field starts in the packed key.
    lpm_shift: u32,
    /// The LPM field's width.
    width: u16,
    tries: HashMap<u128, DirIndex, FixedState>,
}

impl Vrfs {
    /// Adds `packed/len`: false when that needs a trie past [`MAX_VRF_TRIES`].
    fn insert(&mut self, packed: u128, len: u16, handle: u32) -> bool {
        let vrf = packed & !self.lpm_bits;
        if !self.tries.contains_key(&vrf) && self.tries.len() >= MAX_VRF_TRIES {
            return false;
        }
        let width = self.width;
        let trie = self
            .tries
            .entry(vrf)
            .or_insert_with(|| DirIndex::new(width));
        trie.insert(packed >> self.lpm_shift, len, handle);
        true
    }

    /// Removes `packed/len` held by `handle` (`covering` as [`DirIndex::remove`] takes it).
    fn remove(&mut self, packed: u128, len: u16, handle: u32, covering: Option<u32>) {
        if let Some(t) = self.tries.get_mut(&(packed & !self.lpm_bits)) {
            t.remove(packed >> self.lpm_shift, len, handle, covering);
        }
    }

    #[inline]
    fn lookup(&self, packed: u128) -> Option<u32> {
        let trie = self.tries.get(&(packed & !self.lpm_bits))?;
        trie.lookup(packed >> self.lpm_shift)
    }
}

// Native code reads the trie's address as a pointer, null for `None`.
const _: () =
    assert!(std::mem::size_of::<Option<Box<DirIndex>>>() == std::mem::size_of::<*const DirIndex>());

impl LpmIndex {
    /// Offset of the trie's address (`Option<Box<DirIndex>>`: null when there is none),
    /// which native code reads.
    pub(super) const DIR: usize = std::mem::offset_of!(LpmIndex, dir);

    pub fn new(widths: &[u16], lpm_field: usize) -> LpmIndex {
        LpmIndex {
            packer: KeyPacker::new(widths),
            lpm_field,
            levels: Vec::new(),
            dir: match widths {
                [w] if *w <= 32 => Some(Box::new(DirIndex::new(*w))),
                _ => None,
            },
            vrfs: None,
        }
        .with_vrfs(widths)
    }

    /// Gives an exact + LPM table with a narrow key and an LPM field of at most 32 bits its
    /// per-VRF tries.
    fn with_vrfs(mut self, widths: &[u16]) -> LpmIndex {
        let w = widths.get(self.lpm_field).copied().unwrap_or(0);
        if widths.len() >= 2 && self.packer.narrow() && (1..=32).contains(&w) {
            let lpm_shift = self.packer.shift(self.lpm_field);
            self.vrfs = Some(Box::new(Vrfs {
                lpm_bits: shl(width_mask(w), lpm_shift),
                lpm_shift,
                width: w,
                tries: HashMap::with_hasher(FixedState::default()),
            }));
        }
        self
    }

    fn prefix_of(&self, keys: &[KeyMatch]) -> u16 {
        match keys.get(self.lpm_field) {
            Some(KeyMatch::Lpm { prefix_len, .. }) => *prefix_len,
            _ => self.packer.width(self.lpm_field).min(128),
        }
    }

    fn level_index(&mut self, prefix_len: u16) -> usize {
        match self
            .levels
            .binary_search_by(|l| prefix_len.cmp(&l.prefix_len))
        {
            Ok(i) => i,
            Err(i) => {
                let w = self.packer.width(self.lpm_field);
                let field = width_mask(w);
                let pm = prefix_mask(prefix_len, w);
                let s = self.packer.shift(self.lpm_field);
                self.levels.insert(
                    i,
                    Level {
                        prefix_len,
                        keep: !shl(field, s) | shl(pm, s),
                        lpm_mask: pm,
                        narrow_map: PackedMap::new(self.packer.bits()),
                        wide_map: HashMap::with_hasher(FixedState::default()),
                    },
                );
                i
            }
        }
    }

    pub fn insert(&mut self, keys: &[KeyMatch], handle: u32) {
        let vals: Vec<Value> = keys.iter().map(match_value).collect();
        let i = self.level_index(self.prefix_of(keys));
        if self.packer.narrow() {
            let k = self.packer.pack(&vals);
            self.levels[i].narrow_map.insert(k, handle);
            if handle > MAX_HANDLE {
                self.dir = None;
                self.vrfs = None;
            }
            let len = self.levels[i].prefix_len;
            if let Some(d) = &mut self.dir {
                d.insert(k, len, handle);
            }
            if self
                .vrfs
                .as_mut()
                .is_some_and(|v| !v.insert(k, len, handle))
            {
                self.vrfs = None;
            }
        } else {
            self.levels[i]
                .wide_map
                .insert(vals.into_boxed_slice(), handle);
        }
    }

    pub fn remove(&mut self, keys: &[KeyMatch]) {
        let vals: Vec<Value> = keys.iter().map(match_value).collect();
        let p = self.prefix_of(keys);
        let Ok(i) = self.levels.binary_search_by(|l| p.cmp(&l.prefix_len)) else {
            return;
        };
        if self.packer.narrow() {
            let k = self.packer.pack(&vals);
            let removed = self.levels[i].narrow_map.remove(k);
            let tries = self.dir.is_some() || self.vrfs.is_some();
            if let (Some(h), true) = (removed, tries) {
                // The longest remaining route shorter than this one that covers it (in the
                // same VRF: `keep` clears LPM bits only).
                let covering = self.levels[i + 1..]
                    .iter()
                    .find_map(|l| l.narrow_map.get(k & l.keep));
                if let Some(d) = &mut self.dir {
                    d.remove(k, p, h, covering);
                }
                if let Some(v) = &mut self.vrfs {
                    v.remove(k, p, h, covering);
                }
            }
        } else {
            self.levels[i].wide_map.remove(vals.as_slice());
        }
        if self.levels[i].is_empty() {
            self.levels.remove(i);
        }
    }

    pub fn clear(&mut self) {
        self.levels.clear();
        if let Some(d) = &mut self.dir {
            d.clear();
        }
        if let Some(v) = &mut self.vrfs {
            v.tries.clear();
        }
    }

    /// Whether lookups go to per-VRF tries.
    pub fn uses_vrf_tries(&self) -> bool {
        self.vrfs.is_some()
    }

    /// Whether lookups go to the multibit trie.
    pub fn uses_dir(&self) -> bool {
        self.dir.is_some()
    }

    /// Lookup through the per-length hash maps only (the reference for the trie).
    pub fn lookup_hashed(&self, key: &[Value]) -> Option<u32> {
        let packed = self.packer.pack(key);
        self.levels
            .iter()
            .find_map(|l| l.narrow_map.get(packed & l.keep))
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
        if let (Some(d), [v]) = (&self.dir, key) {
            return d.lookup(*v);
        }
        if self.packer.narrow() {
            let packed = self.packer.pack(key);
            // With one prefix length installed the hash maps take one probe: the tries
            // (a VRF probe, then the trie's levels) pay from two lengths on.
            if let (Some(v), true) = (&self.vrfs, self.levels.len() > 1) {
                return v.lookup(packed);
            }
            self.levels
                .iter()
                .find_map(|l| l.narrow_map.get(packed & l.keep))
        } else {
            let mut buf = [0; MAX_WIDE_FIELDS];
            let k = self.packer.copy_masked(key, &mut buf);
            let full = k.get(self.lpm_field).copied()?;
            for l in &self.levels {
                k[self.lpm_field] = full & l.lpm_mask;
                if let Some(h) = l.wide_map.get(&*k) {
                    return Some(*h);
                }
            }
            None
        }
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

    /// A route of `vrfs` VRFs: nested prefixes (/0, /8, /16, /20, /24, /28, /32) of a few
    /// addresses, so routes cover each other within a VRF and across the trie's levels.
    fn route(s: &mut u64, vrfs: u64) -> (Value, Value, u16) {
        const LENS: [u16; 7] = [0, 8, 16, 20, 24, 28, 32];
        let vrf = Value::from(next(s) % vrfs);
        let addr =
            Value::from(0x0a00_0000 | ((next(s) % 4) << 16) | ((next(s) % 4) << 8) | (next(s) % 4));
        let len = LENS[(next(s) % 7) as usize];
        (vrf, addr & prefix_mask(len, 32), len)
    }

    fn keys((vrf, addr, len): (Value, Value, u16)) -> [KeyMatch; 2] {
        [
            KeyMatch::Exact(vrf),
            KeyMatch::Lpm {
                value: addr,
                prefix_len: len,
            },
        ]
    }

    /// The longest live route of the key's VRF covering its address, by brute force.
    fn reference(live: &[((Value, Value, u16), u32)], key: &[Value]) -> Option<u32> {
        live.iter()
            .filter(|((v, a, l), _)| *v == key[0] && key[1] & prefix_mask(*l, 32) == *a)
            .max_by_key(|((_, _, l), _)| *l)
            .map(|(_, h)| *h)
    }

    /// Exact + LPM (VRF + IPv4 route): the per-VRF tries answer what the per-length hash maps
    /// and a brute-force longest match answer, through inserts and deletes of nested routes
    /// in several VRFs, misses (an unknown VRF, an address no route covers) included; past
    /// `MAX_VRF_TRIES` VRFs the table falls back to the hash maps and still answers the same.
    #[test]
    fn vrf_tries_equal_hash_maps_and_brute_force() {
        let mut s = 5u64;
        for vrfs in [1u64, 3, 6, MAX_VRF_TRIES as u64 + 4] {
            let mut ix = LpmIndex::new(&[12, 32], 1);
            assert!(ix.uses_vrf_tries());
            let mut live: Vec<((Value, Value, u16), u32)> = Vec::new();
            for handle in 0..400u32 {
                let r = route(&mut s, vrfs);
                if let Some(i) = live.iter().position(|(x, _)| *x == r) {
                    ix.remove(&keys(r));
                    live.swap_remove(i);
                } else {
                    ix.insert(&keys(r), handle);
                    live.push((r, handle));
                }
                if next(&mut s).is_multiple_of(5) && !live.is_empty() {
                    let (r, _) = live.swap_remove((next(&mut s) as usize) % live.len());
                    ix.remove(&keys(r));
                }
                for _ in 0..12 {
                    let vrf = Value::from(next(&mut s) % (vrfs + 1));
                    let addr = Value::from(
                        0x0a00_0000 | ((next(&mut s) % 5) << 16) | ((next(&mut s) % 5) << 8),
                    ) | Value::from(next(&mut s) % 5);
                    let addr = if next(&mut s).is_multiple_of(9) {
                        addr ^ 0xff00_0000
                    } else {
                        addr
                    };
                    let key = [vrf, addr];
                    let want = reference(&live, &key);
                    assert_eq!(ix.lookup_hashed(&key), want, "hash maps at {key:x?}");
                    assert_eq!(ix.lookup(&key), want, "lookup at {key:x?}");
                }
            }
            assert_eq!(
                ix.uses_vrf_tries(),
                vrfs <= MAX_VRF_TRIES as u64,
                "{vrfs} VRFs"
            );
        }
    }

    /// Only exact + LPM tables with an LPM field of at most 32 bits get per-VRF tries.
    #[test]
    fn which_tables_get_vrf_tries() {
        assert!(!LpmIndex::new(&[32], 0).uses_vrf_tries());
        assert!(LpmIndex::new(&[16, 32], 1).uses_vrf_tries());
        assert!(LpmIndex::new(&[32, 8], 0).uses_vrf_tries());
        assert!(!LpmIndex::new(&[16, 128], 1).uses_vrf_tries());
        assert!(!LpmIndex::new(&[120, 24], 1).uses_vrf_tries());
    }
}

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
        }
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
            }
            if let Some(d) = &mut self.dir {
                d.insert(k, self.levels[i].prefix_len, handle);
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
            if let (Some(d), Some(h)) = (&mut self.dir, removed) {
                // The longest remaining route shorter than this one that covers it.
                let covering = self.levels[i + 1..]
                    .iter()
                    .find_map(|l| l.narrow_map.get(k & l.keep));
                d.remove(k, p, h, covering);
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

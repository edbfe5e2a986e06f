//! Longest-prefix-match index for tables with one LPM field and any number of exact fields.
//!
//! One hash map per prefix length present in the table, kept sorted longest first; a lookup
//! masks the LPM field to each length in turn and probes, so the first hit is the longest
//! matching prefix. With IPv4 routes that is at most 33 probes of a one-word hash map, and in
//! practice as many as there are distinct prefix lengths installed.

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::ir::{KeyMatch, Value};

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
}

impl LpmIndex {
    pub fn new(widths: &[u16], lpm_field: usize) -> LpmIndex {
        LpmIndex {
            packer: KeyPacker::new(widths),
            lpm_field,
            levels: Vec::new(),
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
            self.levels[i].narrow_map.remove(k);
        } else {
            self.levels[i].wide_map.remove(vals.as_slice());
        }
        if self.levels[i].is_empty() {
            self.levels.remove(i);
        }
    }

    pub fn clear(&mut self) {
        self.levels.clear();
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
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

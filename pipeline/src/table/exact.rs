//! Exact-match index: a hash map from the packed key to the entry handle.
//!
//! When the key fields fit in 128 bits together they are packed into one `u128` (first key
//! field in the high bits), which makes hashing and comparing one word. Wider keys use a
//! boxed slice of masked field values, looked up through a stack copy so a lookup never
//! allocates. Packed keys of at most 64 bits are stored as `u64` ([`PackedMap`]). The hasher is
//! foldhash's fast hasher with a fixed seed (deterministic runs).

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::ir::{KeyMatch, Value};

use super::key::{shl, width_mask};
use super::packed::PackedMap;

/// Most key fields a wide (over 128 bits) exact or LPM key may have; wider tables with more
/// fields fall back to the TCAM-style index, which has no such limit.
pub const MAX_WIDE_FIELDS: usize = 32;

/// How a multi-field key is turned into a hash-map key.
#[derive(Debug, Clone)]
pub struct KeyPacker {
    widths: Box<[u16]>,
    masks: Box<[Value]>,
    /// Bit position of each field's LSB inside the packed `u128` (narrow keys only).
    shifts: Box<[u32]>,
    /// Total key bits (each field capped at 128).
    total: u32,
    narrow: bool,
}

impl KeyPacker {
    pub fn new(widths: &[u16]) -> KeyPacker {
        let total: u32 = widths.iter().map(|w| u32::from((*w).min(128))).sum();
        let mut shifts = vec![0u32; widths.len()];
        let mut acc = 0u32;
        for (i, w) in widths.iter().enumerate().rev() {
            shifts[i] = acc;
            acc += u32::from((*w).min(128));
        }
        KeyPacker {
            widths: widths.into(),
            masks: widths.iter().map(|w| width_mask(*w)).collect(),
            shifts: shifts.into(),
            total,
            narrow: total <= 128,
        }
    }

    pub fn narrow(&self) -> bool {
        self.narrow
    }

    /// Total key bits (each field capped at 128).
    pub fn bits(&self) -> u32 {
        self.total
    }

    pub fn width(&self, field: usize) -> u16 {
        self.widths[field]
    }

    pub fn shift(&self, field: usize) -> u32 {
        self.shifts[field]
    }

    /// Packs masked field values into one word (narrow keys only).
    #[inline]
    pub fn pack(&self, key: &[Value]) -> u128 {
        let mut acc = 0u128;
        for ((v, m), s) in key.iter().zip(self.masks.iter()).zip(self.shifts.iter()) {
            acc |= shl(v & m, *s);
        }
        acc
    }

    /// Copies masked field values into `buf` (wide keys); returns the used part.
    #[inline]
    pub fn copy_masked<'b>(
        &self,
        key: &[Value],
        buf: &'b mut [Value; MAX_WIDE_FIELDS],
    ) -> &'b mut [Value] {
        let n = key.len().min(MAX_WIDE_FIELDS);
        for i in 0..n {
            buf[i] = key[i] & self.masks[i];
        }
        &mut buf[..n]
    }
}

/// The stored value of a normalised exact-like field (exact value, or LPM value already masked).
pub fn match_value(m: &KeyMatch) -> Value {
    match *m {
        KeyMatch::Exact(v) => v,
        KeyMatch::Lpm { value, .. } => value,
        KeyMatch::Ternary { value, .. } => value,
        KeyMatch::Range { lo, .. } => lo,
    }
}

/// Hash index for tables whose keys are all exact.
#[derive(Debug, Clone)]
pub struct ExactIndex {
    packer: KeyPacker,
    narrow_map: PackedMap,
    wide_map: HashMap<Box<[Value]>, u32, FixedState>,
}

impl ExactIndex {
    pub fn new(widths: &[u16]) -> ExactIndex {
        let packer = KeyPacker::new(widths);
        ExactIndex {
            narrow_map: PackedMap::new(packer.bits()),
            packer,
            wide_map: HashMap::with_hasher(FixedState::default()),
        }
    }

    fn values(keys: &[KeyMatch]) -> Vec<Value> {
        keys.iter().map(match_value).collect()
    }

    pub fn insert(&mut self, keys: &[KeyMatch], handle: u32) {
        let vals = Self::values(keys);
        if self.packer.narrow() {
            self.narrow_map.insert(self.packer.pack(&vals), handle);
        } else {
            self.wide_map.insert(vals.into_boxed_slice(), handle);
        }
    }

    pub fn remove(&mut self, keys: &[KeyMatch]) {
        let vals = Self::values(keys);
        if self.packer.narrow() {
            self.narrow_map.remove(self.packer.pack(&vals));
        } else {
            self.wide_map.remove(vals.as_slice());
        }
    }

    pub fn clear(&mut self) {
        self.narrow_map.clear();
        self.wide_map.clear();
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
        if self.packer.narrow() {
            self.narrow_map.get(self.packer.pack(key))
        } else {
            let mut buf = [0; MAX_WIDE_FIELDS];
            let k = self.packer.copy_masked(key, &mut buf);
            self.wide_map.get(&*k).copied()
        }
    }
}

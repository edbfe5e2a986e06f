//! Exact-match index: a hash map from the packed key to the entry handle.
//!
//! When the key fields fit in 128 bits together they are packed into one `u128` (first key
//! field in the high bits), which makes hashing and comparing one word. Wider keys use a
//! boxed slice of masked field values, looked up through a stack copy so a lookup never
//! allocates. Packed keys of at most 64 bits go to an open-addressing table holding each entry's
//! action record beside its key ([`OpenMap`]), so a hit reads one cache line; wider packed keys
//! to a [`PackedMap`]. The hasher is foldhash's fast hasher with a fixed seed (deterministic
//! runs).

use std::collections::HashMap;

use foldhash::fast::FixedState;

use crate::ir::{KeyMatch, Value};

use super::key::{shl, width_mask};
use super::open::OpenMap;
use super::packed::PackedMap;
use super::HotAction;

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
    /// Packed keys of at most 64 bits, with the action records inline.
    small_map: OpenMap,
    narrow_map: PackedMap,
    wide_map: HashMap<Box<[Value]>, u32, FixedState>,
}

impl ExactIndex {
    /// Offset of the inline map (keys of at most 64 bits) in an index.
    pub(super) const SMALL_MAP: usize = std::mem::offset_of!(ExactIndex, small_map);

    pub fn new(widths: &[u16]) -> ExactIndex {
        let packer = KeyPacker::new(widths);
        ExactIndex {
            small_map: OpenMap::default(),
            narrow_map: PackedMap::new(packer.bits()),
            packer,
            wide_map: HashMap::with_hasher(FixedState::default()),
        }
    }

    fn values(keys: &[KeyMatch]) -> Vec<Value> {
        keys.iter().map(match_value).collect()
    }

    fn small(&self) -> bool {
        self.packer.bits() <= 64
    }

    pub(super) fn insert(&mut self, keys: &[KeyMatch], handle: u32, hot: HotAction) {
        let vals = Self::values(keys);
        if self.small() {
            self.small_map
                .insert(self.packer.pack(&vals) as u64, handle, hot);
        } else if self.packer.narrow() {
            self.narrow_map.insert(self.packer.pack(&vals), handle);
        } else {
            self.wide_map.insert(vals.into_boxed_slice(), handle);
        }
    }

    /// A new action record for the entry with these keys (after a modify).
    pub(super) fn set_hot(&mut self, keys: &[KeyMatch], hot: HotAction) {
        if self.small() {
            let vals = Self::values(keys);
            self.small_map.set_hot(self.packer.pack(&vals) as u64, hot);
        }
    }

    pub fn remove(&mut self, keys: &[KeyMatch]) {
        let vals = Self::values(keys);
        if self.small() {
            self.small_map.remove(self.packer.pack(&vals) as u64);
        } else if self.packer.narrow() {
            self.narrow_map.remove(self.packer.pack(&vals));
        } else {
            self.wide_map.remove(vals.as_slice());
        }
    }

    pub fn clear(&mut self) {
        self.small_map.clear();
        self.narrow_map.clear();
        self.wide_map.clear();
    }

    /// The handle and, for keys of at most 64 bits, the action record stored beside the key.
    /// Always inlined: with two callers (the flat engine's `lookup_call`, the native engine's
    /// `lookup_inline`) the compiler stopped inlining it into the flat engine's hot path.
    #[inline(always)]
    pub(super) fn lookup_record(&self, key: &[Value]) -> Option<(u32, Option<&HotAction>)> {
        if self.small() {
            let (h, hot) = self.small_map.get(self.packer.pack(key) as u64)?;
            Some((h, Some(hot)))
        } else {
            self.lookup(key).map(|h| (h, None))
        }
    }

    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<u32> {
        if self.small() {
            self.small_map
                .get(self.packer.pack(key) as u64)
                .map(|x| x.0)
        } else if self.packer.narrow() {
            self.narrow_map.get(self.packer.pack(key))
        } else {
            let mut buf = [0; MAX_WIDE_FIELDS];
            let k = self.packer.copy_masked(key, &mut buf);
            self.wide_map.get(&*k).copied()
        }
    }
}

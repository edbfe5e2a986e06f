//! Match tables: the entry store behind every P4 table (exact, LPM, ternary, range).
//!
//! [`MatchTable`] keeps the control-plane view (entries with their keys, priority and action
//! data, validated and normalised, see [`key`]) and one index chosen from the key kinds:
//! - all keys exact → a hash map ([`exact`]);
//! - exactly one LPM key, the rest exact → per-prefix-length hash maps, longest first ([`lpm`]);
//! - anything else (a ternary or range key, or several LPM keys) → priority-ordered rows like a
//!   TCAM ([`tcam`]). Such tables need a match priority on every entry; the others refuse one.
//!
//! **Priority direction**: as BfRt's `$MATCH_PRIORITY` on Tofino, the numerically *lower*
//! priority wins (P4Runtime is the opposite; a P4Runtime front end must convert). Ties go to
//! the older entry.
//!
//! The packet path calls [`MatchTable::lookup`] (no allocation) and then
//! [`MatchTable::entry_action`]. An [`EntryHandle`] is a dense index below the table size
//! for as long as its entry lives, so direct counters, meters and registers index by it; a
//! deleted entry's handle is reused by a later insert.

pub mod dir;
mod error;
pub mod exact;
pub mod idle;
pub mod key;
pub mod lpm;
mod open;
pub mod packed;
pub mod profile;
pub mod selector;
pub mod tcam;

use std::collections::HashMap;
use std::fmt;

use foldhash::fast::FixedState;

use crate::ir::{ActionCall, ActionId, ConstEntry, KeyMatch, MatchKind, Value};
use crate::state::RegisterState;

pub use error::TableError;
use exact::{ExactIndex, MAX_WIDE_FIELDS};
use lpm::LpmIndex;
use tcam::TcamIndex;

/// A live entry's dense index (`< size`). Stable while the entry lives; reused after delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntryHandle(pub u32);

impl EntryHandle {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for EntryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Which index a table uses (decided by its key kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableShape {
    Exact,
    Lpm,
    Tcam,
}

/// `repr(C, u8)`: the variant is a byte at offset 0 (0 for `Exact`, 1 for `Lpm`), which
/// native code checks before it reads an exact or LPM index ([`InlineLayout`]).
#[derive(Debug, Clone)]
#[repr(C, u8)]
enum Index {
    Exact(ExactIndex),
    Lpm(LpmIndex),
    Tcam(TcamIndex),
}

#[derive(Debug, Clone)]
struct Entry {
    keys: Box<[KeyMatch]>,
    priority: Option<u32>,
    action: ActionCall,
    seq: u64,
}

type EntryId = (Box<[KeyMatch]>, Option<u32>);

/// Returned by [`MatchTable::entry_action`] for a handle that holds no entry (a caller bug;
/// never produced by `lookup`). Action 0 with no data.
static NO_ENTRY_ACTION: ActionCall = ActionCall {
    action: ActionId(0),
    args: Vec::new(),
};

/// Action data values kept inline in the packet path's dense action array (longer action
/// data, or values over 64 bits, are read from the entry itself).
/// The top of the range a "largest wins" priority (P4Runtime's, a program's `priority = N` under
/// `largest_priority_wins`) maps into: `p` becomes `LARGEST_WINS_TOP - p`, so both kinds compare
/// alike in one table.
pub const LARGEST_WINS_TOP: u32 = 0x8000_0000;

/// A "largest wins" priority `p` (0..=2^31-1) as pisa's (smaller wins); `None` past the range.
pub fn priority_from_largest_wins(p: u32) -> Option<u32> {
    (p < LARGEST_WINS_TOP).then(|| LARGEST_WINS_TOP - p)
}

/// pisa's priority as a "largest wins" one (the inverse of [`priority_from_largest_wins`],
/// clamped to 0..=2^31-1).
pub fn priority_to_largest_wins(p: u32) -> u32 {
    LARGEST_WINS_TOP.saturating_sub(p).min(LARGEST_WINS_TOP - 1)
}

pub const INLINE_ARGS: usize = 3;

/// Where native code finds, in a [`MatchTable`], the open-addressing map of an exact table
/// whose packed key fits 64 bits (the map [`MatchTable::lookup_inline`] reads), to look it up
/// itself: the byte telling the index's kind and its value for an exact index, the map's
/// offset (valid when the byte says exact) and the map's own layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InlineLayout {
    pub kind: usize,
    pub exact: u8,
    pub map: usize,
    pub open: open::OpenLayout,
    pub hash_mul: u64,
    /// An LPM index: the kind byte's value, the offset of its trie's address (a `Box`, null
    /// when the index has no trie) and the trie's layout.
    pub lpm: u8,
    pub dir: usize,
    pub trie: dir::DirLayout,
    /// The dense action array's address ([`HotArray`]) and bytes per record.
    pub hot: usize,
    pub hot_size: usize,
}

impl InlineLayout {
    pub(crate) fn get() -> InlineLayout {
        // The exact variant's payload offset inside `Index`, measured on a value of it (the
        // same for every value of the type).
        let ix = Index::Exact(ExactIndex::new(&[8]));
        let payload = match &ix {
            Index::Exact(e) => (e as *const ExactIndex as usize) - (&ix as *const Index as usize),
            _ => unreachable!("built as exact"),
        };
        let lx = Index::Lpm(LpmIndex::new(&[8], 0));
        let lpm_payload = match &lx {
            Index::Lpm(l) => (l as *const LpmIndex as usize) - (&lx as *const Index as usize),
            _ => unreachable!("built as LPM"),
        };
        let index = std::mem::offset_of!(MatchTable, index);
        InlineLayout {
            kind: index,
            exact: 0,
            map: index + payload + ExactIndex::SMALL_MAP,
            open: open::OpenLayout::get(),
            hash_mul: open::HASH_MUL,
            // `repr(C, u8)` tags count variants in declaration order.
            lpm: 1,
            dir: index + lpm_payload + LpmIndex::DIR,
            trie: dir::DirLayout::get(),
            hot: std::mem::offset_of!(MatchTable, hot)
                + std::mem::offset_of!(HotArray, at)
                + std::mem::offset_of!(HotAt, 0),
            hot_size: std::mem::size_of::<HotAction>(),
        }
    }
}

/// For a table with these key fields (as [`MatchTable::new`] takes them), how a lookup packs
/// the key values into the 64-bit key of its inline map — per field the mask and the left
/// shift, the packed key being the OR of `(value & mask) << shift` — or `None` when the
/// table has no such map (not all exact, or more than 64 key bits).
pub(crate) fn inline_packing(keys: &[(MatchKind, u16)]) -> Option<Vec<(u64, u32)>> {
    if !keys.iter().all(|k| k.0 == MatchKind::Exact) {
        return None;
    }
    let widths: Vec<u16> = keys.iter().map(|k| k.1.min(128)).collect();
    let packer = exact::KeyPacker::new(&widths);
    if packer.bits() > 64 {
        return None;
    }
    Some(
        widths
            .iter()
            .enumerate()
            .map(|(i, w)| (key::width_mask(*w) as u64, packer.shift(i)))
            .collect(),
    )
}

/// Which index a table with these key fields (as [`MatchTable::new`] takes them) uses.
fn shape_of(keys: &[(MatchKind, u16)]) -> TableShape {
    let total: u32 = keys.iter().map(|k| u32::from(k.1.min(128))).sum();
    let fits_hash = total <= 128 || keys.len() <= MAX_WIDE_FIELDS;
    let lpms = keys.iter().filter(|k| k.0 == MatchKind::Lpm).count();
    let all_exact_or_lpm = keys
        .iter()
        .all(|k| matches!(k.0, MatchKind::Exact | MatchKind::Lpm));
    match (all_exact_or_lpm && fits_hash, lpms) {
        (true, 0) => TableShape::Exact,
        (true, 1) => TableShape::Lpm,
        _ => TableShape::Tcam,
    }
}

/// For a table with these key fields (as [`MatchTable::new`] takes them), how its TCAM index
/// packs the key values into the `u128` it searches by ([`MatchTable::lookup_tcam_packed`])
/// — per field the mask and the left shift, the packed key being the OR of
/// `(value & mask) << shift` — or `None` when the table has no TCAM index or its key fields
/// do not fit 128 bits together.
pub(crate) fn tcam_packing(keys: &[(MatchKind, u16)]) -> Option<Vec<(u128, u32)>> {
    if shape_of(keys) != TableShape::Tcam {
        return None;
    }
    let widths: Vec<u16> = keys.iter().map(|k| k.1.min(128)).collect();
    let packer = exact::KeyPacker::new(&widths);
    packer.narrow().then(|| {
        widths
            .iter()
            .enumerate()
            .map(|(i, w)| (key::width_mask(*w), packer.shift(i)))
            .collect()
    })
}

/// An entry's action as the packet path reads it: one dense array indexed by handle with the
/// data inline (32 bytes a slot), so running a hit's action touches one small slot instead of
/// the entry and then its heap-allocated data.
#[derive(Debug, Clone)]
pub(crate) struct HotAction {
    action: ActionId,
    /// Number of inline values; above [`INLINE_ARGS`] when the data lives only in the entry
    /// (too long, too wide, or no live entry).
    len: u32,
    args: [u64; INLINE_ARGS],
}

impl HotAction {
    const NONE: HotAction = HotAction {
        action: ActionId(0),
        len: u32::MAX,
        args: [0; INLINE_ARGS],
    };

    pub(crate) fn of(call: &ActionCall) -> HotAction {
        let spilled = HotAction {
            action: call.action,
            ..HotAction::NONE
        };
        if call.args.len() > INLINE_ARGS {
            return spilled;
        }
        let mut args = [0; INLINE_ARGS];
        for (slot, v) in args.iter_mut().zip(call.args.iter()) {
            match u64::try_from(*v) {
                Ok(x) => *slot = x,
                Err(_) => return spilled,
            }
        }
        HotAction {
            action: call.action,
            len: call.args.len() as u32,
            args,
        }
    }
}

/// Byte offsets native code reads a [`HotAction`] at: the action id (`u32`), the number of
/// inline values (`u32`, above [`INLINE_ARGS`]: not inline) and the values (`u64`s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HotLayout {
    pub action: usize,
    pub len: usize,
    pub args: usize,
}

impl HotLayout {
    pub(crate) const fn get() -> HotLayout {
        use std::mem::offset_of;
        HotLayout {
            action: offset_of!(HotAction, action.0),
            len: offset_of!(HotAction, len),
            args: offset_of!(HotAction, args),
        }
    }
}

/// The dense action array ([`HotAction`] by handle) with its address, which native code reads
/// (`InlineLayout::hot`): only `push` grows the vector, and it and `clone` set the address
/// again; everything else changes it as a slice.
#[derive(Debug, Default)]
struct HotArray {
    v: Vec<HotAction>,
    at: HotAt,
}

/// [`HotArray`]'s vector's address.
#[derive(Debug, Clone, Copy)]
struct HotAt(*const HotAction);

impl Default for HotAt {
    fn default() -> HotAt {
        HotAt(std::ptr::null())
    }
}

// SAFETY: the address is never dereferenced by Rust code (only by native code, while the
// table is borrowed by the running pass); it is as thread-safe as the vector it describes.
unsafe impl Send for HotAt {}
// SAFETY: as above.
unsafe impl Sync for HotAt {}

impl Clone for HotArray {
    fn clone(&self) -> HotArray {
        let v = self.v.clone();
        HotArray {
            at: HotAt(v.as_ptr()),
            v,
        }
    }
}

impl HotArray {
    fn push(&mut self, a: HotAction) {
        self.v.push(a);
        self.at = HotAt(self.v.as_ptr());
    }

    fn clear(&mut self) {
        self.v.clear();
    }
}

impl std::ops::Deref for HotArray {
    type Target = [HotAction];
    fn deref(&self) -> &[HotAction] {
        &self.v
    }
}

impl std::ops::DerefMut for HotArray {
    fn deref_mut(&mut self) -> &mut [HotAction] {
        &mut self.v
    }
}

/// The entries of one P4 table with its lookup index.
#[derive(Debug, Clone)]
pub struct MatchTable {
    kinds: Box<[MatchKind]>,
    widths: Box<[u16]>,
    shape: TableShape,
    size: u32,
    slots: Vec<Option<Entry>>,
    /// Parallel to `slots`: each live entry's action for the packet path.
    hot: HotArray,
    free: Vec<u32>,
    len: u32,
    next_seq: u64,
    ids: HashMap<EntryId, u32, FixedState>,
    index: Index,
    /// With an action profile / selector: the members and groups entries point at.
    profile: Option<Box<profile::Profile>>,
}

/// An entry's rank in the TCAM index (lower wins): its priority; without one, in an LPM table
/// whose key is too wide for the prefix index (kept in the TCAM), the longer prefix first, as
/// the driver ranks the entries of an LPM table laid out as a ternary one.
fn tcam_rank(keys: &[KeyMatch], priority: Option<u32>) -> u32 {
    priority.unwrap_or_else(|| {
        keys.iter()
            .find_map(|k| match k {
                KeyMatch::Lpm { prefix_len, .. } => Some(128 - u32::from(*prefix_len).min(128)),
                _ => None,
            })
            .unwrap_or(0)
    })
}

impl MatchTable {
    /// A table with these key fields (kind, width in bits; widths above 128 count as 128) and
    /// room for `size` entries.
    pub fn new(keys: &[(MatchKind, u16)], size: u32) -> MatchTable {
        let kinds: Box<[MatchKind]> = keys.iter().map(|k| k.0).collect();
        let widths: Box<[u16]> = keys.iter().map(|k| k.1.min(128)).collect();
        let shape = shape_of(keys);
        let index = match shape {
            TableShape::Exact => Index::Exact(ExactIndex::new(&widths)),
            TableShape::Lpm => {
                let lpm = kinds.iter().position(|k| *k == MatchKind::Lpm);
                Index::Lpm(LpmIndex::new(&widths, lpm.unwrap_or_default()))
            }
            TableShape::Tcam => Index::Tcam(TcamIndex::new(&widths)),
        };
        MatchTable {
            kinds,
            widths,
            shape,
            size,
            slots: Vec::new(),
            hot: HotArray::default(),
            free: Vec::new(),
            len: 0,
            next_seq: 0,
            ids: HashMap::with_hasher(FixedState::default()),
            index,
            profile: None,
        }
    }

    /// The table as the implementation of an action profile (and selector): its entries point
    /// at the profile's members or groups ([`profile::EntryRef`]); the selector key values
    /// come after the matched ones in every lookup key.
    pub fn with_profile(mut self, p: profile::Profile) -> MatchTable {
        self.profile = Some(Box::new(p));
        self
    }

    /// The action profile behind the table, if it has one.
    pub fn profile(&self) -> Option<&profile::Profile> {
        self.profile.as_deref()
    }

    /// The profile for a member or group write; entries' references are checked by the caller.
    pub fn profile_mut(&mut self) -> Option<&mut profile::Profile> {
        self.profile.as_deref_mut()
    }

    /// Whether an entry points at `r` (a member or group may not be removed while one does).
    pub fn references(&self, r: profile::EntryRef) -> bool {
        self.slots
            .iter()
            .flatten()
            .any(|e| profile::EntryRef::of(&e.action) == Some(r))
    }

    /// Which index the key kinds selected.
    pub fn shape(&self) -> TableShape {
        self.shape
    }

    /// Whether entries must carry a match priority (ternary/range tables).
    pub fn needs_priority(&self) -> bool {
        self.kinds
            .iter()
            .any(|k| matches!(k, MatchKind::Ternary | MatchKind::Range))
            || self.kinds.iter().filter(|k| **k == MatchKind::Lpm).count() > 1
    }

    /// Key fields as given to `new` (widths capped at 128).
    pub fn key_fields(&self) -> impl Iterator<Item = (MatchKind, u16)> + '_ {
        self.kinds.iter().copied().zip(self.widths.iter().copied())
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> u32 {
        self.size
    }

    /// Validates and normalises a request's key and priority into the stored form.
    fn check(&self, keys: &[KeyMatch], priority: Option<u32>) -> Result<EntryId, TableError> {
        if keys.len() != self.kinds.len() {
            return Err(TableError::KeyCount {
                expected: self.kinds.len(),
                got: keys.len(),
            });
        }
        let norm = keys
            .iter()
            .enumerate()
            .map(|(i, m)| key::normalize(i, self.kinds[i], self.widths[i], m))
            .collect::<Result<Box<[KeyMatch]>, TableError>>()?;
        match (self.needs_priority(), priority) {
            (true, None) => Err(TableError::PriorityMissing),
            (false, Some(_)) => Err(TableError::PriorityForbidden),
            _ => Ok((norm, priority)),
        }
    }

    /// Adds an entry. Errors: bad key/priority (see [`TableError`]), `Duplicate`, `Full`.
    pub fn insert(
        &mut self,
        keys: &[KeyMatch],
        priority: Option<u32>,
        action: ActionCall,
    ) -> Result<EntryHandle, TableError> {
        let id = self.check(keys, priority)?;
        if let Some(h) = self.ids.get(&id) {
            return Err(TableError::Duplicate(EntryHandle(*h)));
        }
        if self.len >= self.size {
            return Err(TableError::Full {
                capacity: self.size,
            });
        }
        let handle = match self.free.pop() {
            Some(h) => h,
            None => {
                // len < size and no free slot means slots.len() == len < size: fits in u32.
                let h = u32::try_from(self.slots.len()).map_err(|_| TableError::Full {
                    capacity: self.size,
                })?;
                self.slots.push(None);
                self.hot.push(HotAction::NONE);
                h
            }
        };
        let seq = self.next_seq;
        self.next_seq += 1;
        match &mut self.index {
            Index::Exact(ix) => ix.insert(&id.0, handle, HotAction::of(&action)),
            Index::Lpm(ix) => ix.insert(&id.0, handle),
            Index::Tcam(ix) => ix.insert(&id.0, tcam_rank(&id.0, id.1), seq, handle),
        }
        self.hot[handle as usize] = HotAction::of(&action);
        self.slots[handle as usize] = Some(Entry {
            keys: id.0.clone(),
            priority: id.1,
            action,
            seq,
        });
        self.ids.insert(id, handle);
        self.len += 1;
        Ok(EntryHandle(handle))
    }

    /// Loads one of the program's `const entries`: its priority is used only by tables that
    /// take one (the lowering numbers entries in source order when no `@priority` is given,
    /// and exact/LPM tables have no priority at all).
    pub fn insert_const_entry(&mut self, entry: &ConstEntry) -> Result<EntryHandle, TableError> {
        let priority = if self.needs_priority() {
            entry.priority
        } else {
            None
        };
        self.insert(&entry.keys, priority, entry.action.clone())
    }

    /// Replaces the action (and data) of an existing entry; its handle stays.
    pub fn modify(
        &mut self,
        keys: &[KeyMatch],
        priority: Option<u32>,
        action: ActionCall,
    ) -> Result<EntryHandle, TableError> {
        let id = self.check(keys, priority)?;
        let h = *self.ids.get(&id).ok_or(TableError::NotFound)?;
        match self.slots.get_mut(h as usize) {
            Some(Some(e)) => {
                self.hot[h as usize] = HotAction::of(&action);
                if let Index::Exact(ix) = &mut self.index {
                    ix.set_hot(&id.0, HotAction::of(&action));
                }
                e.action = action;
                Ok(EntryHandle(h))
            }
            _ => Err(TableError::NotFound),
        }
    }

    /// Removes an entry; returns the handle it had (free for reuse from now on).
    pub fn delete(
        &mut self,
        keys: &[KeyMatch],
        priority: Option<u32>,
    ) -> Result<EntryHandle, TableError> {
        let id = self.check(keys, priority)?;
        let h = self.ids.remove(&id).ok_or(TableError::NotFound)?;
        let Some(entry) = self.slots.get_mut(h as usize).and_then(Option::take) else {
            return Err(TableError::NotFound);
        };
        match &mut self.index {
            Index::Exact(ix) => ix.remove(&entry.keys),
            Index::Lpm(ix) => ix.remove(&entry.keys),
            Index::Tcam(ix) => ix.remove(tcam_rank(&entry.keys, entry.priority), entry.seq),
        }
        self.hot[h as usize] = HotAction::NONE;
        self.free.push(h);
        self.len -= 1;
        Ok(EntryHandle(h))
    }

    /// The entry with exactly this key and priority (after normalisation), if any.
    pub fn get(
        &self,
        keys: &[KeyMatch],
        priority: Option<u32>,
    ) -> Option<(EntryHandle, &ActionCall)> {
        let id = self.check(keys, priority).ok()?;
        let h = *self.ids.get(&id)?;
        let e = self.slots.get(h as usize)?.as_ref()?;
        Some((EntryHandle(h), &e.action))
    }

    /// The stored entry behind a handle, if it is live.
    pub fn entry(&self, h: EntryHandle) -> Option<(&[KeyMatch], Option<u32>, &ActionCall)> {
        let e = self.slots.get(h.index())?.as_ref()?;
        Some((&e.keys, e.priority, &e.action))
    }

    /// Removes every entry (handles restart from 0).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.hot.clear();
        self.free.clear();
        self.ids.clear();
        self.len = 0;
        match &mut self.index {
            Index::Exact(ix) => ix.clear(),
            Index::Lpm(ix) => ix.clear(),
            Index::Tcam(ix) => ix.clear(),
        }
    }

    /// Live entries in handle order: (handle, normalised keys, priority, action).
    pub fn iter(
        &self,
    ) -> impl Iterator<Item = (EntryHandle, &[KeyMatch], Option<u32>, &ActionCall)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            s.as_ref()
                .map(|e| (EntryHandle(i as u32), &*e.keys, e.priority, &e.action))
        })
    }

    /// Packet path: the winning entry for these key field values (one per key field, in key
    /// order; bits above a field's width are ignored). `None` on a miss or a wrong field count.
    #[inline]
    pub fn lookup(&self, key: &[Value]) -> Option<EntryHandle> {
        self.lookup_in(key, &[])
    }

    /// [`MatchTable::lookup`] with the registers that hold a selector's member-status bits.
    #[inline]
    pub fn lookup_in(&self, key: &[Value], regs: &[RegisterState]) -> Option<EntryHandle> {
        let n = self.kinds.len();
        let matched = match &self.profile {
            None if key.len() == n => key,
            // Selector key values follow the matched ones.
            Some(_) if key.len() >= n => &key[..n],
            _ => return None,
        };
        let h = match &self.index {
            Index::Exact(ix) => ix.lookup(matched),
            Index::Lpm(ix) => ix.lookup(matched),
            Index::Tcam(ix) => ix.lookup(matched),
        }?;
        if let Some(p) = &self.profile {
            // A hit on an empty group (or a member deleted since) is a miss.
            let e = self.slots.get(h as usize)?.as_ref()?;
            let r = profile::EntryRef::of(&e.action)?;
            p.resolve(r, &key[n..], regs)?;
        }
        Some(EntryHandle(h))
    }

    /// Packet path of exact tables with keys of at most 64 bits and no action profile, whose
    /// entries keep their action record beside the key: `Some` with the lookup's answer — a
    /// hit's handle, action and inline data (as stored, one `u64` a value), or `None` for a
    /// miss — when the answer is such a record; `None` when the table is not such a table or
    /// the hit's data is not inline (then [`MatchTable::lookup_call`] answers). Saves the
    /// widening copy of the data that [`MatchTable::lookup_call`] makes.
    #[inline]
    #[allow(clippy::type_complexity)]
    pub fn lookup_inline(&self, key: &[Value]) -> Option<Option<(EntryHandle, ActionId, &[u64])>> {
        let (None, Index::Exact(ix), true) =
            (&self.profile, &self.index, key.len() == self.kinds.len())
        else {
            return None;
        };
        let Some((h, hot)) = ix.lookup_record(key) else {
            return Some(None);
        };
        let a = hot.filter(|a| a.len as usize <= INLINE_ARGS)?;
        Some(Some((EntryHandle(h), a.action, &a.args[..a.len as usize])))
    }

    /// Packet path of tables with a TCAM index and no action profile, the key already packed
    /// as [`tcam_packing`] says (what native code computes in line): `Some` with the lookup's
    /// answer (the hit's handle, `None` on a miss) when the index searches packed keys, `None`
    /// when [`MatchTable::lookup`] must answer (another index, an action profile, a key too
    /// wide, an index scanning its rows).
    #[inline]
    pub fn lookup_tcam_packed(&self, packed: u128) -> Option<Option<EntryHandle>> {
        let (None, Index::Tcam(ix)) = (&self.profile, &self.index) else {
            return None;
        };
        Some(ix.lookup_packed_key(packed)?.map(EntryHandle))
    }

    /// Packet path: [`MatchTable::lookup`] and then [`MatchTable::hit_call`] in one step; exact
    /// tables with keys of at most 64 bits read the action record stored beside the key.
    #[inline]
    pub fn lookup_call<'a>(
        &'a self,
        key: &[Value],
        buf: &'a mut [Value; INLINE_ARGS],
        regs: &[RegisterState],
    ) -> Option<(EntryHandle, ActionId, &'a [Value])> {
        if let (None, Index::Exact(ix), true) =
            (&self.profile, &self.index, key.len() == self.kinds.len())
        {
            let (h, hot) = ix.lookup_record(key)?;
            if let Some(a) = hot.filter(|a| a.len as usize <= INLINE_ARGS) {
                for (b, x) in buf.iter_mut().zip(a.args.iter()) {
                    *b = Value::from(*x);
                }
                return Some((EntryHandle(h), a.action, &buf[..a.len as usize]));
            }
            let c = self.entry_action(EntryHandle(h));
            return Some((EntryHandle(h), c.action, &c.args));
        }
        let h = self.lookup_in(key, regs)?;
        let (a, args) = self.hit_call(h, key, buf, regs);
        Some((h, a, args))
    }

    /// Packet path, for a hit `h` of `key`: the action and data to run — the entry's own, or
    /// with an action profile the member it points at (a group's member chosen by the
    /// selector's hash of the selector key values in `key`).
    #[inline]
    pub fn hit_call<'a>(
        &'a self,
        h: EntryHandle,
        key: &[Value],
        buf: &'a mut [Value; INLINE_ARGS],
        regs: &[RegisterState],
    ) -> (ActionId, &'a [Value]) {
        match &self.profile {
            None => self.entry_call(h, buf),
            Some(_) => {
                let c = self.hit_action(h, key, regs);
                (c.action, &c.args)
            }
        }
    }

    /// [`MatchTable::hit_call`] as the stored [`ActionCall`].
    pub fn hit_action(&self, h: EntryHandle, key: &[Value], regs: &[RegisterState]) -> &ActionCall {
        let own = self.entry_action(h);
        let Some(p) = &self.profile else {
            return own;
        };
        let sel = key.get(self.kinds.len()..).unwrap_or(&[]);
        profile::EntryRef::of(own)
            .and_then(|r| p.resolve(r, sel, regs))
            .unwrap_or(&NO_ENTRY_ACTION)
    }

    /// Packet path: the action and action data of the entry `lookup` returned, read from the
    /// dense action array (the data is widened into `buf`). Same answer as
    /// [`MatchTable::entry_action`] for every handle.
    #[inline]
    pub fn entry_call<'a>(
        &'a self,
        h: EntryHandle,
        buf: &'a mut [Value; INLINE_ARGS],
    ) -> (ActionId, &'a [Value]) {
        match self.hot.get(h.index()) {
            Some(a) if a.len as usize <= INLINE_ARGS => {
                for (b, x) in buf.iter_mut().zip(a.args.iter()) {
                    *b = Value::from(*x);
                }
                (a.action, &buf[..a.len as usize])
            }
            _ => {
                let c = self.entry_action(h);
                (c.action, &c.args)
            }
        }
    }

    /// The action of a live entry. A dead handle (never returned by `lookup`) yields action 0
    /// with no data instead of panicking; use [`MatchTable::entry`] to tell the difference.
    #[inline]
    pub fn entry_action(&self, h: EntryHandle) -> &ActionCall {
        match self.slots.get(h.index()) {
            Some(Some(e)) => &e.action,
            _ => &NO_ENTRY_ACTION,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(a: u32) -> ActionCall {
        ActionCall {
            action: ActionId(a),
            args: vec![],
        }
    }

    #[test]
    fn shapes_follow_key_kinds() {
        assert_eq!(
            MatchTable::new(&[(MatchKind::Exact, 48)], 4).shape(),
            TableShape::Exact
        );
        assert_eq!(
            MatchTable::new(&[(MatchKind::Exact, 8), (MatchKind::Lpm, 32)], 4).shape(),
            TableShape::Lpm
        );
        assert_eq!(
            MatchTable::new(&[(MatchKind::Lpm, 32), (MatchKind::Lpm, 32)], 4).shape(),
            TableShape::Tcam
        );
        assert_eq!(
            MatchTable::new(&[(MatchKind::Exact, 8), (MatchKind::Range, 16)], 4).shape(),
            TableShape::Tcam
        );
    }

    /// An LPM table too wide for the prefix index (33 fields over 128 bits) keeps its entries
    /// in the TCAM: without priorities, the longest prefix still wins, whatever the order
    /// they were added in, and a removed entry leaves the shorter one matching.
    #[test]
    fn wide_lpm_tables_in_the_tcam_rank_by_prefix() {
        let mut kinds = vec![(MatchKind::Exact, 8); 32];
        kinds.push((MatchKind::Lpm, 8));
        let mut t = MatchTable::new(&kinds, 8);
        assert_eq!(t.shape(), TableShape::Tcam);
        let entry = |len: u16| -> Vec<KeyMatch> {
            let mut k = vec![KeyMatch::Exact(0); 32];
            k.push(KeyMatch::Lpm {
                value: 0xc0 & !(0xffu128 >> len),
                prefix_len: len,
            });
            k
        };
        let short = t.insert(&entry(1), None, act(1)).unwrap();
        let long = t.insert(&entry(2), None, act(2)).unwrap();
        let mut key = vec![0; 33];
        key[32] = 0xc5;
        assert_eq!(t.lookup(&key), Some(long));
        assert_eq!(t.delete(&entry(2), None), Ok(long));
        assert_eq!(t.lookup(&key), Some(short));
    }

    #[test]
    fn handle_reuse_after_delete() {
        let mut t = MatchTable::new(&[(MatchKind::Exact, 8)], 2);
        let a = t.insert(&[KeyMatch::Exact(1)], None, act(1)).unwrap();
        let b = t.insert(&[KeyMatch::Exact(2)], None, act(2)).unwrap();
        assert_eq!((a, b), (EntryHandle(0), EntryHandle(1)));
        assert_eq!(
            t.insert(&[KeyMatch::Exact(3)], None, act(3)),
            Err(TableError::Full { capacity: 2 })
        );
        assert_eq!(t.delete(&[KeyMatch::Exact(1)], None), Ok(a));
        let c = t.insert(&[KeyMatch::Exact(3)], None, act(3)).unwrap();
        assert_eq!(c, a);
        assert_eq!(t.lookup(&[3]), Some(c));
        assert_eq!(t.lookup(&[1]), None);
        assert_eq!(t.entry_action(EntryHandle(7)).action, ActionId(0));
        let mut buf = [0; INLINE_ARGS];
        assert_eq!(
            t.entry_call(EntryHandle(7), &mut buf),
            (ActionId(0), &[][..])
        );
    }

    #[test]
    fn entry_call_matches_entry_action_through_changes() {
        let mut t = MatchTable::new(&[(MatchKind::Exact, 8)], 8);
        // Data of 0..5 values, some wider than 64 bits (kept in the entry only).
        let call = |a: u32, n: usize| ActionCall {
            action: ActionId(a),
            args: (0..n as u128).map(|i| (i * 3 + 1) << (i * 30)).collect(),
        };
        let check = |t: &MatchTable| {
            for h in 0..8 {
                let h = EntryHandle(h);
                let c = t.entry_action(h);
                let mut buf = [0; INLINE_ARGS];
                assert_eq!(t.entry_call(h, &mut buf), (c.action, &c.args[..]), "{h}");
            }
        };
        for n in 0..6u8 {
            t.insert(&[KeyMatch::Exact(n.into())], None, call(n.into(), n.into()))
                .unwrap();
        }
        check(&t);
        t.modify(&[KeyMatch::Exact(2)], None, call(9, 5)).unwrap();
        t.modify(&[KeyMatch::Exact(4)], None, call(8, 1)).unwrap();
        t.delete(&[KeyMatch::Exact(1)], None).unwrap();
        check(&t);
        t.insert(&[KeyMatch::Exact(7)], None, call(7, 2)).unwrap();
        check(&t);
        t.clear();
        check(&t);
    }

    proptest::proptest! {
        /// `lookup_call` (the record stored in the index) answers what `lookup` and the entry
        /// store answer, through inserts, modifies and deletes, for exact keys packed in one
        /// word, in two words, and LPM tables.
        #[test]
        fn lookup_call_equals_lookup_then_entry(
            shape in 0usize..4,
            ops in proptest::collection::vec((0u8..3, 0u64..24, 0usize..6, 0u32..9), 1..150),
        ) {
            let keys: &[(MatchKind, u16)] = match shape {
                0 => &[(MatchKind::Exact, 48), (MatchKind::Exact, 12)],
                1 => &[(MatchKind::Exact, 9)],
                2 => &[(MatchKind::Exact, 64), (MatchKind::Exact, 32)],
                _ => &[(MatchKind::Lpm, 32)],
            };
            let mut t = MatchTable::new(keys, 16);
            let key_of = |k: u64| -> Vec<Value> {
                keys.iter().enumerate().map(|(i, (_, w))| {
                    Value::from(k.wrapping_mul(0x9e37_79b9 + i as u64)) & key::width_mask(*w)
                }).collect()
            };
            let call = |a: u32, n: usize| ActionCall {
                action: ActionId(a),
                // Some data over 64 bits, which only the entry store holds.
                args: (0..n as u128).map(|i| (i + 1) << (a as u128 * 9 + i * 13)).collect(),
            };
            for (op, k, n, a) in ops {
                let m: Vec<KeyMatch> = key_of(k).into_iter().map(KeyMatch::Exact).collect();
                let _ = match op {
                    0 => t.insert(&m, None, call(a, n)),
                    1 => t.modify(&m, None, call(a, n)),
                    _ => t.delete(&m, None),
                };
                for probe in 0u64..24 {
                    let key = key_of(probe);
                    let mut buf = [0; INLINE_ARGS];
                    let got = t.lookup_call(&key, &mut buf, &[]).map(|(h, a, d)| (h, a, d.to_vec()));
                    let want = t.lookup(&key).map(|h| {
                        let c = t.entry_action(h);
                        (h, c.action, c.args.clone())
                    });
                    proptest::prop_assert_eq!(got, want);
                }
            }
        }
    }

    #[test]
    fn const_entries_drop_priority_only_where_none_is_taken() {
        let e = ConstEntry {
            keys: vec![KeyMatch::Exact(4)],
            priority: Some(0),
            action: act(2),
        };
        let mut exact = MatchTable::new(&[(MatchKind::Exact, 8)], 4);
        assert_eq!(exact.insert_const_entry(&e), Ok(EntryHandle(0)));
        assert_eq!(exact.entry(EntryHandle(0)).map(|x| x.1), Some(None));
        let mut tern = MatchTable::new(&[(MatchKind::Ternary, 8)], 4);
        assert_eq!(tern.insert_const_entry(&e), Ok(EntryHandle(0)));
        assert_eq!(tern.entry(EntryHandle(0)).map(|x| x.1), Some(Some(0)));
        let no_prio = ConstEntry {
            priority: None,
            ..e
        };
        assert_eq!(
            tern.insert_const_entry(&no_prio),
            Err(TableError::PriorityMissing)
        );
    }
}

//! Per-pipe state: everything a hardware pipe owns (table entries and default actions, register
//! arrays, counters, meters, register params, the random generator), instantiated once per pipe
//! from the pipe's [`ir::Pipeline`]. Pipes never see each other's state, as on Tofino.

use crate::externs::filter::FilterArray;
use crate::externs::hash::Hasher;
use crate::externs::meter::MeterArray;
use crate::externs::random::Random;
use crate::ir::{self, ActionCall, CounterKind, Pipeline, Value};
use crate::phv::mask;
use crate::table::profile::{Profile, SelectorUnit};
use crate::table::selector::SelectorAlu;
use crate::table::MatchTable;

/// One table of one pipe: its entries, its current default action, and how often a lookup
/// hit or missed (`Cell`s: the executor holds the table state shared while it runs a packet).
#[derive(Debug, Clone)]
pub struct TableState {
    pub table: MatchTable,
    /// The default action ([`TableState::default`]; set through [`TableState::set_default`],
    /// which keeps `hot_default` in step).
    default: ActionCall,
    /// The default action as native code reads it on a miss (`super::exec::native`): id and
    /// data inline, or a length above `INLINE_ARGS` when the data does not fit.
    hot_default: crate::table::HotAction,
    pub hits: std::cell::Cell<u64>,
    pub misses: std::cell::Cell<u64>,
    /// Entries' TTLs and last hits, for a table with `idle_timeout = true`.
    pub idle: Option<crate::table::idle::IdleState>,
}

impl TableState {
    /// Offset of the default action's inline record, which native code reads on a miss.
    pub(crate) const HOT_DEFAULT: usize = std::mem::offset_of!(TableState, hot_default);

    /// The action a miss runs.
    pub fn default(&self) -> &ActionCall {
        &self.default
    }

    /// Makes `call` the action a miss runs.
    pub fn set_default(&mut self, call: ActionCall) {
        self.hot_default = crate::table::HotAction::of(&call);
        self.default = call;
    }

    /// Counts a lookup's hit or miss; a hit of a table with idle timeouts stamps the entry
    /// with `now`. Every engine records its lookups here.
    #[inline]
    pub fn record(&self, hit: Option<crate::table::EntryHandle>, now: u64) {
        let counter = if hit.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.set(counter.get().wrapping_add(1));
        if let (Some(h), Some(idle)) = (hit, &self.idle) {
            idle.touch(h, now);
        }
    }
}

/// A register array: the low word of every cell, and the high word for paired registers.
#[derive(Debug, Clone)]
pub struct RegisterState {
    pub lo: Vec<u64>,
    pub hi: Vec<u64>,
    /// The stateful ALU's counter: the log's next cell (`size` once full), the stack's top, or
    /// the FIFO's tail; a FIFO's pointers count modulo `2 * size` (full: `size` apart).
    pub log: u64,
    /// The FIFO's head (`dequeue`), modulo `2 * size`.
    pub head: u64,
}

/// Packet and byte counts of a counter array. The counts never change length (only their
/// values change: [`CounterState::packets_mut`] lends slices), so native code adds to them
/// through a view of their addresses ([`CounterState::VIEW`]), kept equal to the vectors by
/// the constructor and `clone`.
#[derive(Debug)]
pub struct CounterState {
    packets: Vec<u64>,
    bytes: Vec<u64>,
    view: CounterView,
}

/// Where native code finds a counter array's counts: their addresses and lengths (a kind the
/// counter does not count has length 0).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct CounterView {
    pub packets: *mut u64,
    pub npackets: u64,
    pub bytes: *mut u64,
    pub nbytes: u64,
}

// SAFETY: the view holds addresses Rust code never dereferences; native code writes through
// them only while the running pass borrows the pipe's state mutably. It is as thread-safe as
// the vectors it describes.
unsafe impl Send for CounterView {}
// SAFETY: as above.
unsafe impl Sync for CounterView {}

impl Clone for CounterState {
    fn clone(&self) -> CounterState {
        CounterState::new(self.packets.clone(), self.bytes.clone())
    }
}

impl CounterState {
    /// Offset of the view native code reads ([`CounterView`]).
    pub(crate) const VIEW: usize = std::mem::offset_of!(CounterState, view);

    /// Counts (`packets`, `bytes`: empty for a kind not counted).
    pub fn new(mut packets: Vec<u64>, mut bytes: Vec<u64>) -> CounterState {
        let view = CounterView {
            packets: packets.as_mut_ptr(),
            npackets: packets.len() as u64,
            bytes: bytes.as_mut_ptr(),
            nbytes: bytes.len() as u64,
        };
        CounterState {
            packets,
            bytes,
            view,
        }
    }

    /// Packet counts by index (empty when the counter counts bytes only).
    pub fn packets(&self) -> &[u64] {
        &self.packets
    }

    /// Byte counts by index (empty when the counter counts packets only).
    pub fn bytes(&self) -> &[u64] {
        &self.bytes
    }

    /// Packet counts to change.
    pub fn packets_mut(&mut self) -> &mut [u64] {
        &mut self.packets
    }

    /// Byte counts to change.
    pub fn bytes_mut(&mut self) -> &mut [u64] {
        &mut self.bytes
    }
}

/// The entries of a parser value set: per entry a value and a mask for each of the set's
/// fields, flattened (`fields` pairs per entry).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValueSetState {
    pub fields: usize,
    pub entries: Vec<(Value, Value)>,
}

impl ValueSetState {
    pub fn new(vs: &ir::ValueSet) -> ValueSetState {
        ValueSetState {
            fields: vs.fields.len(),
            entries: Vec::new(),
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len().checked_div(self.fields).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Each entry's (value, mask) pairs.
    pub fn iter(&self) -> impl Iterator<Item = &[(Value, Value)]> {
        self.entries.chunks(self.fields.max(1))
    }

    /// Some entry matches `keys` (one key per field).
    #[inline]
    pub fn matches(&self, keys: &[Value]) -> bool {
        keys.len() == self.fields
            && self.iter().any(|e| {
                e.iter()
                    .zip(keys)
                    .all(|((value, mask), k)| k & mask == value & mask)
            })
    }
}

/// Mutable run-time state that actions touch while tables are read.
#[derive(Debug, Clone)]
pub struct PipeRuntime {
    pub registers: Vec<RegisterState>,
    pub register_params: Vec<Value>,
    pub counters: Vec<CounterState>,
    pub meters: Vec<MeterArray>,
    pub rng: Random,
    /// Packet-pass number, bumped for every gress pass; see `reg_stamp`.
    pub epoch: u64,
    /// Per register: the `epoch` of its last access (one access per pass is allowed).
    pub reg_stamp: Vec<u64>,
    /// Parser value sets' entries (`Pipeline::value_sets` order).
    pub value_sets: Vec<ValueSetState>,
    /// LPF and WRED cells (`Pipeline::filters` order).
    pub filters: Vec<FilterArray>,
}

/// Everything one hardware pipe owns.
#[derive(Debug, Clone)]
pub struct PipeState {
    /// Index into `Program::pipelines` this pipe runs.
    pub pipeline: usize,
    pub tables: Vec<TableState>,
    pub rt: PipeRuntime,
}

/// Index of a counter/register/meter/filter cell as the hardware addresses it: the MAU has no
/// modulo unit, the index's bits pick a RAM word, so an index past the array is masked to the
/// array's power-of-two address space ([`cells_allocated`]) and, in an array whose size is not
/// a power of two, lands in a cell the control plane never sees (index 13 of a 10-cell array is
/// cell 13, not 3: bf-p4c allocates whole RAMs). Returns the cell and whether the index was out
/// of the declared range (counted as an index wrap).
#[inline]
pub fn wrap_index(index: Value, size: u32) -> (u32, bool) {
    if size == 0 {
        return (0, true);
    }
    let space = (size as u64).next_power_of_two() as Value;
    ((index & (space - 1)) as u32, index >= size as Value)
}

/// Cells an indexed array of `size` cells holds: its power-of-two address space, the cells from
/// `size` on reachable by the data plane ([`wrap_index`]) but not by the control plane.
#[inline]
pub fn cells_allocated(size: u32) -> usize {
    if size == 0 {
        0
    } else {
        (size as u64).next_power_of_two() as usize
    }
}

/// The matched key fields (selector keys are hash inputs, not matched).
pub(crate) fn table_shape(t: &ir::Table) -> Vec<(ir::MatchKind, u16)> {
    t.keys
        .iter()
        .filter(|k| k.kind != ir::MatchKind::Selector)
        .map(|k| (k.kind, k.expr.width()))
        .collect()
}

/// The action profile (or selector) of `pl` that table `tid` is an implementation of, if any.
pub(crate) fn profile_of(pl: &Pipeline, tid: usize) -> Option<&ir::ActionProfile> {
    pl.action_profiles
        .iter()
        .find(|p| p.tables.iter().any(|x| x.index() == tid))
}

/// The action profile (and selector) table `tid` of `pl` is the implementation of, if any.
fn table_profile(pl: &Pipeline, tid: usize, t: &ir::Table) -> Option<Profile> {
    let ap = profile_of(pl, tid)?;
    let selector = ap.selector.as_ref().and_then(|sel| {
        let unit = pl.hashes.get(sel.hash.index())?;
        Some(SelectorUnit {
            hasher: Hasher::new(unit.algorithm, crate::table::selector::HASH_BITS).ok()?,
            alu: SelectorAlu {
                mode: sel.mode,
                scramble: sel.scramble,
            },
            widths: t
                .keys
                .iter()
                .filter(|k| k.kind == ir::MatchKind::Selector)
                .map(|k| k.expr.width())
                .collect(),
            max_groups: sel.num_groups,
            max_group_size: sel.max_group_size,
            status: sel.status.map(|r| r.index()),
        })
    });
    Some(Profile::new(ap.size, selector))
}

/// A fresh [`MatchTable`] for table `tid` of `pl` holding its `const entries`.
pub fn new_table_state(
    pl: &Pipeline,
    tid: usize,
    t: &ir::Table,
) -> Result<TableState, crate::table::TableError> {
    let mut table = MatchTable::new(&table_shape(t), t.size.max(1));
    if let Some(p) = table_profile(pl, tid, t) {
        table = table.with_profile(p);
    }
    let needs = table.needs_priority();
    let mut idle = t.idle_timeout.then(crate::table::idle::IdleState::default);
    for (i, e) in t.const_entries.iter().enumerate() {
        // Without `@priority`, const entries match in program order: first = highest, and
        // the table's numerically lower priority wins.
        let prio = needs.then(|| e.priority.unwrap_or(i as u32));
        let h = table.insert(&e.keys, prio, e.action.clone())?;
        if let Some(idle) = &mut idle {
            idle.reset(h, 0);
        }
    }
    Ok(TableState {
        table,
        default: t.default_action.clone(),
        hot_default: crate::table::HotAction::of(&t.default_action),
        hits: std::cell::Cell::new(0),
        misses: std::cell::Cell::new(0),
        idle,
    })
}

/// A register array at its initial values.
pub fn new_register_state(r: &ir::Register) -> RegisterState {
    let lo = (r.initial_lo & mask(r.width)) as u64;
    let hi = (r.initial_hi & mask(r.width)) as u64;
    let n = match r.direct_table {
        Some(_) => r.size as usize,
        None => cells_allocated(r.size),
    };
    RegisterState {
        lo: vec![lo; n],
        hi: if r.paired { vec![hi; n] } else { Vec::new() },
        log: 0,
        head: 0,
    }
}

/// The cell of a table's direct counter that belongs to its default entry: after the cells of
/// its entries (one per entry the table holds). It counts the packets that miss and run a
/// default action that counts: Tofino's miss path addresses a stats cell of its own.
pub fn default_entry_cell(t: &ir::Table) -> usize {
    t.size.max(1) as usize
}

/// An indexed counter's cells, or a direct counter's: one per entry of its table, then the
/// default entry's ([`default_entry_cell`]).
fn counter_size(pl: &Pipeline, c: &ir::Counter) -> usize {
    match c.direct_table {
        Some(t) => match pl.tables.get(t.index()) {
            Some(t) => default_entry_cell(t) + 1,
            None => c.size as usize,
        },
        None => cells_allocated(c.size),
    }
}

fn meter_size(pl: &Pipeline, m: &ir::Meter) -> usize {
    match m.direct_table {
        Some(t) => pl.tables.get(t.index()).map(|t| t.size).unwrap_or(m.size) as usize,
        None => cells_allocated(m.size),
    }
}

impl PipeRuntime {
    /// One packet of `bytes` bytes on cell `index` of counter `counter` (a packets-only or
    /// bytes-only counter keeps its one number).
    #[inline]
    pub fn add_count(&mut self, counter: usize, index: usize, bytes: u32) {
        if let Some(st) = self.counters.get_mut(counter) {
            if let Some(p) = st.packets_mut().get_mut(index) {
                *p += 1;
            }
            if let Some(b) = st.bytes_mut().get_mut(index) {
                *b += u64::from(bytes);
            }
        }
    }

    /// Fresh run-time state for `pl`, with the random generator seeded by `seed`.
    pub fn new(pl: &Pipeline, seed: u64) -> PipeRuntime {
        PipeRuntime {
            registers: pl.registers.iter().map(new_register_state).collect(),
            register_params: pl
                .register_params
                .iter()
                .map(|p| p.initial & mask(p.width))
                .collect(),
            counters: pl
                .counters
                .iter()
                .map(|c| {
                    let n = counter_size(pl, c);
                    let of = |counted: bool| if counted { vec![0; n] } else { Vec::new() };
                    CounterState::new(
                        of(c.kind != CounterKind::Bytes),
                        of(c.kind != CounterKind::Packets),
                    )
                })
                .collect(),
            meters: pl
                .meters
                .iter()
                .map(|m| {
                    let mut a = MeterArray::new(m.kind, meter_size(pl, m) as u32);
                    // The compiler loads the negated `adjust_byte_count` (at most
                    // `MAX_ADJUST`, so in range: the clamp only keeps a malformed IR safe).
                    let adjust = u32::from(m.bytes.adjust).min(ir::ByteAccounting::MAX_ADJUST);
                    let _ = a.set_byte_adjust(-(adjust as i32));
                    a
                })
                .collect(),
            rng: Random::new(seed),
            epoch: 1,
            reg_stamp: vec![0; pl.registers.len()],
            value_sets: pl.value_sets.iter().map(ValueSetState::new).collect(),
            filters: pl
                .filters
                .iter()
                .map(|f| {
                    let n = match f.direct_table {
                        Some(t) => pl.tables.get(t.index()).map_or(f.size, |t| t.size),
                        None => cells_allocated(f.size) as u32,
                    };
                    FilterArray::new(n)
                })
                .collect(),
        }
    }
}

impl PipeState {
    /// Instantiate pipe state for `pipeline` (an index into `prog.pipelines`).
    pub fn new(
        prog: &ir::Program,
        pipeline: usize,
        seed: u64,
    ) -> Result<PipeState, crate::table::TableError> {
        let pl = &prog.pipelines[pipeline];
        let tables = pl
            .tables
            .iter()
            .enumerate()
            .map(|(i, t)| new_table_state(pl, i, t))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PipeState {
            pipeline,
            tables,
            rt: PipeRuntime::new(pl, seed),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_index_masks_like_hardware_with_no_modulo() {
        assert_eq!(wrap_index(5, 8), (5, false));
        assert_eq!(wrap_index(9, 8), (1, true));
        assert_eq!(wrap_index(1 << 40, 8), (0, true));
        // Not a power of two: masked to 16, no modulo: index 13 is cell 13 (one the control
        // plane does not see), 21 is cell 5.
        assert_eq!(wrap_index(13, 10), (13, true));
        assert_eq!(wrap_index(21, 10), (5, true));
        assert_eq!(wrap_index(9, 10), (9, false));
        assert_eq!(wrap_index(0, 0), (0, true));
        assert_eq!([0, 1, 8, 10, 16].map(cells_allocated), [0, 1, 8, 16, 16]);
    }
}

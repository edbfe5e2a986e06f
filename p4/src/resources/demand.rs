//! What one unit needs from the stage it lands in: logical table slots, SRAM/TCAM blocks,
//! stateful and statistics ALUs, hash bits and input-crossbar bytes.
//!
//! Memory sizing follows bf-p4c's layout rules, in [`sizing`]. Besides:
//! - ternary / LPM / range: TCAM blocks = the TCAMs a row of the key's PHV bytes needs (one up
//!   to 6 bytes, a pair per 11; a range field's bytes count twice: bf-p4c encodes ranges in
//!   4-bit groups) × ⌈lines / 512⌉, as bf-p4c's estimate counts them by container bytes; lines
//!   = the size, or with range keys the lines their entries take ([`range`]).
//! - keyless tables keep their action data in the action instruction (immediate), so they use
//!   no memory.
//! - counters: two (packets and bytes) or four entries per 128-bit word; meters one entry per
//!   word.
//! - hash: a register's address takes ⌈log2 size⌉ bits of the hash distribution; a `Hash.get`
//!   takes its width.
//! - crossbar: the PHV bytes a unit's keys / conditions / hash and SALU inputs cover (fields
//!   used twice in a stage share their bytes); a header's validity bit counts as a byte.

use std::collections::BTreeSet;

use pipeline::ir::{
    CounterId, CounterKind, MatchKind, MeterId, PhvLayout, Pipeline, RegisterId, Table, TableId,
};

use super::effects::{Collector, Effects, Loc, Mode};
use super::layout::{Hints, Sizing};
use super::profile::Profile;
use super::units::{Unit, UnitKind};

mod range;
mod sizing;

use sizing::{
    action_data_bits, action_data_bits_of, atcam_demand, ceil_div, ceil_log2, exact_layout,
    instr_bits, register_sram, sat32, sram_for, tcam_width, ternary_sram, ExactShape,
};

/// A stateful object living in one stage: registers and meters (they share the meter ALUs),
/// counters (statistics ALUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Stateful {
    Register(RegisterId),
    Meter(MeterId),
    Filter(pipeline::ir::FilterId),
    Counter(CounterId),
    /// Not state, but pinned the same way: a table applied in several exclusive places (a
    /// control instance applied in several branches, or applies the lowering duplicates for
    /// short-circuit conditions) is one table in one stage.
    Table(TableId),
}

/// One crossbar input: a PHV byte, a validity bit, a temporary, or a field narrower than a
/// byte that lies inside one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum XKey {
    Byte(u32),
    Valid(u32),
    Temp(u32),
    /// Bits `start..end` of one byte.
    Bits(u32, u32),
}

/// The crossbar bytes a set of inputs takes. Fields narrower than a byte count by their bits,
/// packed eight to a byte, unless their byte is on the crossbar anyway: bf-p4c's PHV
/// allocation packs small metadata fields (flags, colours, 2-bit types) into shared container
/// bytes, and the crossbar carries container bytes. Validity bits pack the same way (they live
/// in POV containers).
pub(crate) fn xbar_bytes(keys: &BTreeSet<XKey>) -> u32 {
    let mut whole = 0u32;
    let mut small_bits = 0u32;
    let mut valid_bits = 0u32;
    for k in keys {
        match k {
            XKey::Byte(_) | XKey::Temp(_) => whole += 1,
            XKey::Valid(_) => valid_bits += 1,
            XKey::Bits(start, end) => {
                if !keys.contains(&XKey::Byte(start / 8)) {
                    small_bits += end - start;
                }
            }
        }
    }
    whole + small_bits.div_ceil(8) + valid_bits.div_ceil(8)
}

fn xkeys(loc: Loc, out: &mut BTreeSet<XKey>) {
    match loc {
        Loc::Bits { start, end }
            if end > start && end - start < 8 && start / 8 == (end - 1) / 8 =>
        {
            out.insert(XKey::Bits(start, end));
        }
        Loc::Bits { start, end } if end > start => {
            for b in start / 8..=(end - 1) / 8 {
                out.insert(XKey::Byte(b));
            }
        }
        Loc::Bits { .. } => {}
        Loc::Valid(h) => {
            out.insert(XKey::Valid(h.0));
        }
        Loc::Temp(t) => {
            out.insert(XKey::Temp(t));
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Demand {
    /// The table this is an apply of: a second apply in the same stage costs nothing more.
    pub table: Option<TableId>,
    pub logical: u32,
    pub ternary: u32,
    pub gateways: u32,
    pub sram: u32,
    pub tcam: u32,
    /// Stateful objects with the SRAM blocks each takes (counted once per stage).
    pub stateful: Vec<(Stateful, u32)>,
    pub hash_bits: u32,
    pub exact_xbar: BTreeSet<XKey>,
    pub ternary_xbar: BTreeSet<XKey>,
    /// Its TCAM blocks are an ALPM's pre-classifier: when the table is split over stages they
    /// go with the first part, not the last.
    pub tcam_first: bool,
    /// An ATCAM's SRAM blocks per logical table (0: not an ATCAM): a part split off takes a
    /// logical table id per this many blocks.
    pub sram_per_logical: u32,
    /// The table's `@pack(n)` leaves no layout within a match row's 8 RAMs (bf-p4c then has
    /// no layout option for it): `n`.
    pub unfit_pack: Option<u32>,
    /// `@use_hash_action(1)` on a table that cannot be a hash-action table: bf-p4c's reason.
    pub unfit_hash_action: Option<&'static str>,
    /// A range key covering more PHV nibbles than bf-p4c's range match takes: (its name, its
    /// nibbles).
    pub range_too_wide: Option<(String, u32)>,
    /// `@entries_with_ranges(n)` larger than the table's size (which bf-p4c uses instead, with
    /// a warning): (n, size).
    pub range_entries_over_size: Option<(u32, u32)>,
}

/// Memories and crossbar of a table (without its actions' externs).
fn table_demand(
    t: &Table,
    phv_col: &mut Collector<'_>,
    p: &Profile,
    sizing: Sizing,
    d: &mut Demand,
) {
    let size = u64::from(t.size.max(1));
    let ternary = t.keys.iter().any(|k| {
        matches!(
            k.kind,
            MatchKind::Ternary | MatchKind::Lpm | MatchKind::Range
        )
    });
    let mut key_bits: u64 = 0;
    let mut key_fx = Effects::default();
    for k in &t.keys {
        let w = u64::from(k.expr.width());
        key_bits += match k.kind {
            MatchKind::Range => 2 * w,
            // An action selector's hash inputs: crossbar bytes and hash bits, no match memory.
            MatchKind::Selector => {
                d.hash_bits += sat32(w.min(64));
                0
            }
            _ => w,
        };
        phv_col.expr(&k.expr, &mut key_fx, Mode::Match);
    }
    let xbar = if ternary {
        &mut d.ternary_xbar
    } else {
        &mut d.exact_xbar
    };
    for l in &key_fx.match_reads {
        xkeys(*l, xbar);
    }
    if ternary {
        d.ternary = 1;
    }
    if key_bits == 0 {
        return;
    }
    let adb_bits = action_data_bits(phv_col, t);
    let mut sram = 0u64;
    if ternary {
        // bf-p4c sizes a TCAM row by the PHV bytes of the key, not its bits
        // (mau/table_layout.cpp `determine_byte_impacts`: "the input xbar allocates by
        // container bytes"; a range field's bytes count twice), then
        // mau/resource_estimate.cpp `options_to_ternary_entries` ([`tcam_width`]).
        let mut key_x = BTreeSet::new();
        let mut range_x = BTreeSet::new();
        let mut range_lines = None;
        for k in &t.keys {
            let mut fx = Effects::default();
            phv_col.expr(&k.expr, &mut fx, Mode::Match);
            let out = if k.kind == MatchKind::Range {
                let n = range::nibbles(&fx.match_reads);
                if n > range::MAX_RANGE_NIBBLES && d.range_too_wide.is_none() {
                    d.range_too_wide = Some((k.name.clone(), n));
                }
                range_lines = range_lines.max(Some(range::lines_per_entry(n)));
                &mut range_x
            } else {
                &mut key_x
            };
            for l in &fx.match_reads {
                xkeys(*l, out);
            }
        }
        let bytes = u64::from(xbar_bytes(&key_x)) + 2 * u64::from(xbar_bytes(&range_x));
        let lines = match range_lines {
            Some(per_entry) => {
                let asked = sizing.entries_with_ranges;
                if let Some(n) = asked.filter(|&n| u64::from(n) > size) {
                    d.range_entries_over_size = Some((n, sat32(size)));
                }
                range::tcam_lines(size, per_entry, asked)
            }
            None => size,
        };
        let rows = ceil_div(lines, u64::from(p.tcam_depth));
        d.tcam = sat32(tcam_width(bytes) * rows);
        sram += ternary_sram(p, rows * u64::from(p.tcam_depth), instr_bits(t), adb_bits);
    } else {
        let mut key_x = BTreeSet::new();
        for l in &key_fx.match_reads {
            xkeys(*l, &mut key_x);
        }
        let shape = ExactShape {
            key_bits,
            // The key's PHV bytes, less the byte the ghost bits stand for.
            match_bytes: u64::from(xbar_bytes(&key_x)).saturating_sub(1),
            instr: instr_bits(t),
            adb_bits,
            default_adb_bits: action_data_bits_of(phv_col, t, |a| !a.table_only),
            direct: t.direct_counter.is_some() || t.direct_meter.is_some() || t.idle_timeout,
            idle_timeout: t.idle_timeout,
            single_action: t.actions.len() <= 1,
        };
        let lay = exact_layout(p, size, &shape, sizing);
        if lay.wide {
            d.unfit_pack = sizing.pack;
        }
        d.unfit_hash_action = lay.unfit_hash_action;
        sram += lay.sram;
        d.hash_bits += sat32(lay.hash_bits);
    }
    d.sram = d.sram.saturating_add(sat32(sram));
}

/// The demand of every unit.
pub(crate) fn demands(
    pipe: &Pipeline,
    phv: &PhvLayout,
    units: &[Unit],
    p: &Profile,
    hints: &Hints,
) -> Vec<Demand> {
    let mut col = Collector::new(pipe, phv);
    units
        .iter()
        .map(|u| {
            let mut d = Demand::default();
            match &u.kind {
                UnitKind::Table(id) => {
                    d.logical = 1;
                    d.table = Some(*id);
                    d.stateful.push((Stateful::Table(*id), 0));
                    if let Some(t) = pipe.tables.get(id.index()) {
                        let sizing = hints
                            .sizing
                            .iter()
                            .find(|(s, _)| s == id)
                            .map_or_else(Sizing::default, |(_, s)| *s);
                        table_demand(t, &mut col, p, sizing, &mut d);
                        if let Some((_, lay)) = hints.layouts.iter().find(|(l, _)| l == id) {
                            atcam_demand(&mut col, t, lay, p, &mut d);
                        }
                    }
                }
                UnitKind::Gateway(_) => d.gateways = 1,
                UnitKind::Statements => d.logical = 1,
            }
            for l in &u.fx.xbar {
                xkeys(*l, &mut d.exact_xbar);
            }
            let mut hashes: Vec<_> = u.fx.hashes.clone();
            hashes.sort();
            hashes.dedup_by_key(|h| h.0);
            d.hash_bits += hashes.iter().map(|h| u32::from(h.1)).sum::<u32>();
            let mut seen = BTreeSet::new();
            for ra in &u.fx.register_actions {
                if let Some(r) = pipe.register_actions.get(ra.index()) {
                    if seen.insert(Stateful::Register(r.register)) {
                        // The SALU's address comes from the hash distribution unit.
                        let size = pipe.registers.get(r.register.index()).map_or(1, |x| x.size);
                        d.hash_bits += ceil_log2(u64::from(size));
                        d.stateful.push((
                            Stateful::Register(r.register),
                            register_sram(pipe, r.register, p),
                        ));
                    }
                }
            }
            for m in &u.fx.meters {
                if seen.insert(Stateful::Meter(*m)) {
                    let size = pipe.meters.get(m.index()).map_or(1, |m| m.size.max(1));
                    d.stateful.push((
                        Stateful::Meter(*m),
                        sat32(sram_for(p, u64::from(size), 128)),
                    ));
                }
            }
            for f in &u.fx.filters {
                if seen.insert(Stateful::Filter(*f)) {
                    let size = pipe.filters.get(f.index()).map_or(1, |f| f.size.max(1));
                    d.stateful.push((
                        Stateful::Filter(*f),
                        sat32(sram_for(p, u64::from(size), 128)),
                    ));
                }
            }
            for c in &u.fx.counters {
                if seen.insert(Stateful::Counter(*c)) {
                    let (size, bits) = match pipe.counters.get(c.index()) {
                        Some(c) => (
                            c.size.max(1),
                            if c.kind == CounterKind::PacketsAndBytes {
                                64
                            } else {
                                32
                            },
                        ),
                        None => (1, 32),
                    };
                    d.stateful.push((
                        Stateful::Counter(*c),
                        sat32(sram_for(p, u64::from(size), bits)),
                    ));
                }
            }
            d
        })
        .collect()
}

/// The crossbar bytes of `have` with `more` added, `now` being `have`'s (no copy when `more`
/// adds nothing).
fn with_keys(have: &BTreeSet<XKey>, more: &BTreeSet<XKey>, now: u32) -> u32 {
    if more.is_subset(have) {
        return now;
    }
    xbar_bytes(&have.union(more).copied().collect())
}

/// What one stage uses, counted as the profile's limits are.
struct Totals {
    logical: u32,
    ternary: u32,
    gateways: u32,
    sram: u32,
    tcam: u32,
    salus: u32,
    stats: u32,
    hash_bits: u32,
    exact_bytes: u32,
    ternary_bytes: u32,
}

impl Totals {
    /// The first resource over `p`'s limits, in the order placement reports them.
    fn first_over(&self, p: &Profile) -> Option<&'static str> {
        let checks = [
            (self.logical > p.logical_tables, "logical tables"),
            (self.ternary > p.ternary_tables, "ternary tables"),
            (self.gateways > p.gateways, "gateways"),
            (self.sram > p.sram_blocks, "SRAM blocks"),
            (self.tcam > p.tcam_blocks, "TCAM blocks"),
            (self.salus > p.stateful_alus, "stateful ALUs"),
            (self.stats > p.stats_alus, "statistics ALUs"),
            (self.hash_bits > p.hash_bits(), "hash bits"),
            (
                self.exact_bytes > p.exact_xbar_bytes,
                "exact crossbar bytes",
            ),
            (
                self.ternary_bytes > p.ternary_xbar_bytes,
                "ternary crossbar bytes",
            ),
        ];
        checks
            .into_iter()
            .find_map(|(over, what)| over.then_some(what))
    }
}

/// Per-stage usage while placing.
#[derive(Debug, Clone, Default)]
pub(crate) struct StageUse {
    pub logical: u32,
    pub ternary: u32,
    pub gateways: u32,
    pub sram: u32,
    pub tcam: u32,
    pub stateful: BTreeSet<Stateful>,
    pub hash_bits: u32,
    pub exact_xbar: BTreeSet<XKey>,
    pub ternary_xbar: BTreeSet<XKey>,
    pub units: Vec<usize>,
}

impl StageUse {
    fn salus(&self) -> u32 {
        self.stateful
            .iter()
            .filter(|s| matches!(s, Stateful::Register(_) | Stateful::Meter(_)))
            .count() as u32
    }

    fn stats(&self) -> u32 {
        self.stateful
            .iter()
            .filter(|s| matches!(s, Stateful::Counter(_)))
            .count() as u32
    }

    /// The first resource that would overflow if `d` were added (None: it fits). Counted
    /// without copying the stage: placement asks this of every candidate in every stage it
    /// tries, and a copy of the stage's sets made long programs' placement cubic.
    pub fn refuse(&self, d: &Demand, p: &Profile) -> Option<&'static str> {
        if d.table
            .is_some_and(|t| self.stateful.contains(&Stateful::Table(t)))
        {
            return self.over(p);
        }
        let mut t = self.totals();
        t.logical += d.logical;
        t.ternary += d.ternary;
        t.gateways += d.gateways;
        t.sram = t.sram.saturating_add(d.sram);
        t.tcam = t.tcam.saturating_add(d.tcam);
        let mut new_objects = BTreeSet::new();
        for (s, sram) in &d.stateful {
            if !self.stateful.contains(s) && new_objects.insert(*s) {
                t.sram = t.sram.saturating_add(*sram);
                match s {
                    Stateful::Register(_) | Stateful::Meter(_) => t.salus += 1,
                    Stateful::Counter(_) => t.stats += 1,
                    _ => {}
                }
            }
        }
        t.hash_bits = t.hash_bits.saturating_add(d.hash_bits);
        t.exact_bytes = with_keys(&self.exact_xbar, &d.exact_xbar, t.exact_bytes);
        t.ternary_bytes = with_keys(&self.ternary_xbar, &d.ternary_xbar, t.ternary_bytes);
        t.first_over(p)
    }

    /// The first resource over the profile's limits.
    pub fn over(&self, p: &Profile) -> Option<&'static str> {
        self.totals().first_over(p)
    }

    fn totals(&self) -> Totals {
        Totals {
            logical: self.logical,
            ternary: self.ternary,
            gateways: self.gateways,
            sram: self.sram,
            tcam: self.tcam,
            salus: self.salus(),
            stats: self.stats(),
            hash_bits: self.hash_bits,
            exact_bytes: xbar_bytes(&self.exact_xbar),
            ternary_bytes: xbar_bytes(&self.ternary_xbar),
        }
    }

    pub fn add(&mut self, d: &Demand, unit: usize) {
        if unit != usize::MAX {
            self.units.push(unit);
        }
        if let Some(t) = d.table {
            if self.stateful.contains(&Stateful::Table(t)) {
                return;
            }
        }
        self.logical += d.logical;
        self.ternary += d.ternary;
        self.gateways += d.gateways;
        self.sram = self.sram.saturating_add(d.sram);
        self.tcam = self.tcam.saturating_add(d.tcam);
        for (s, sram) in &d.stateful {
            if self.stateful.insert(*s) {
                self.sram = self.sram.saturating_add(*sram);
            }
        }
        self.hash_bits = self.hash_bits.saturating_add(d.hash_bits);
        self.exact_xbar.extend(d.exact_xbar.iter().copied());
        self.ternary_xbar.extend(d.ternary_xbar.iter().copied());
    }

    pub fn salu_count(&self) -> u32 {
        self.salus()
    }

    pub fn stats_count(&self) -> u32 {
        self.stats()
    }
}

//! What one unit needs from the stage it lands in: logical table slots, SRAM/TCAM blocks,
//! stateful and statistics ALUs, hash bits and input-crossbar bytes.
//!
//! Memory sizing (an approximation of bf-p4c's allocation, documented so the numbers can be
//! checked by hand):
//! - exact match: an entry is key bits + action-selector bits (⌈log2 #actions⌉) + 4 version /
//!   valid bits; entries are packed into 128-bit words (wide entries span words); blocks =
//!   ⌈size / (1024 × entries per word)⌉ × words per entry. Hash: up to 4 ways, each taking 10
//!   bits (the row within a block) plus the bits to select a block of its way.
//! - ternary / LPM / range: TCAM blocks = ⌈key bits / 44⌉ × ⌈size / 512⌉ (range keys count
//!   twice: bf-p4c encodes ranges in 4-bit groups); plus one SRAM of ternary indirection per
//!   16384 entries.
//! - action data (tables with keys): the widest action's parameters, rounded up to a power of
//!   two ≥ 8 bits, packed into 128-bit words. Keyless tables keep their data in the action
//!   instruction (immediate), so they use no memory.
//! - registers: size × word width (× 2 when paired) bits in 128-bit words; counters two
//!   (packets and bytes) or four entries per word; meters one entry per word.
//! - hash: a register's address takes ⌈log2 size⌉ bits of the hash distribution; a `Hash.get`
//!   takes its width.
//! - crossbar: the PHV bytes a unit's keys / conditions / hash and SALU inputs cover (fields
//!   used twice in a stage share their bytes); a header's validity bit counts as a byte.

use std::collections::BTreeSet;

use pipeline::ir::{
    CounterId, CounterKind, MatchKind, MeterId, PhvLayout, Pipeline, RegisterId, Table, TableId,
};

use super::effects::{Collector, Effects, Loc, Mode};
use super::layout::AtcamLayout;
use super::profile::Profile;
use super::units::{Unit, UnitKind};

/// A stateful object living in one stage: registers and meters (they share the meter ALUs),
/// counters (statistics ALUs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Stateful {
    Register(RegisterId),
    Meter(MeterId),
    Filter(pipeline::ir::FilterId),
    Counter(CounterId),
    /// Not state, but pinned the same way: a table applied in several places (the lowering
    /// duplicates applies for short-circuit conditions) is one table in one stage.
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
}

fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

fn sat32(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// SRAM blocks for `entries` items of `bits` each, packed into `p.sram_width`-bit words.
fn sram_for(p: &Profile, entries: u64, bits: u64) -> u64 {
    let w = u64::from(p.sram_width);
    let depth = u64::from(p.sram_depth);
    if bits == 0 || entries == 0 {
        return 0;
    }
    if bits <= w {
        let per_word = (w / bits).max(1);
        ceil_div(entries, depth * per_word)
    } else {
        ceil_div(entries, depth) * ceil_div(bits, w)
    }
}

/// Memories and crossbar of a table (without its actions' externs).
fn table_demand(
    pipe: &Pipeline,
    t: &Table,
    phv_col: &mut Collector<'_>,
    p: &Profile,
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
    let action_bits = u64::from(ceil_log2(t.actions.len() as u64));
    let adb_bits = action_data_bits(pipe, t);
    let mut sram = 0u64;
    if ternary {
        let tcam =
            ceil_div(key_bits, u64::from(p.tcam_width)) * ceil_div(size, u64::from(p.tcam_depth));
        d.tcam = sat32(tcam);
        sram += ceil_div(size, u64::from(p.sram_depth) * 16);
    } else {
        let entry = key_bits + action_bits + 4;
        let rams = sram_for(p, size, entry);
        sram += rams;
        let words = ceil_div(entry, u64::from(p.sram_width)).max(1);
        let blocks_per_word_col = (rams / words).max(1);
        let ways = blocks_per_word_col.min(4);
        let per_way = ceil_div(blocks_per_word_col, ways);
        d.hash_bits += sat32(ways * (10 + u64::from(ceil_log2(per_way))));
    }
    sram += action_data_sram(p, size, adb_bits);
    d.sram = d.sram.saturating_add(sat32(sram));
}

/// SRAM blocks of a table's action data: `size` entries of the widest action's `adb_bits`.
/// Bits of action data of `t`'s widest action (its parameters).
fn action_data_bits(pipe: &Pipeline, t: &Table) -> u64 {
    t.actions
        .iter()
        .filter_map(|a| pipe.actions.get(a.action.index()))
        .map(|a| a.params.iter().map(|x| u64::from(x.width)).sum::<u64>())
        .max()
        .unwrap_or(0)
}

fn action_data_sram(p: &Profile, size: u64, adb_bits: u64) -> u64 {
    if adb_bits == 0 {
        return 0;
    }
    let w = u64::from(p.sram_width);
    let bits = if adb_bits > w {
        adb_bits
    } else {
        adb_bits.max(8).next_power_of_two()
    };
    sram_for(p, size, bits)
}

/// Entries of one SRAM word an ATCAM partition holds at most (bf-p4c: 5 per RAM row).
const ATCAM_ENTRIES_PER_WORD: u64 = 5;

/// Memories of a table laid out as an ATCAM (`Atcam`) or ALPM (`Alpm`: an ATCAM plus the
/// pre-classifier TCAM that picks the partition), replacing the plain-TCAM sizing of
/// [`table_demand`], which still gives the crossbar. ATCAM entries live in SRAM match words:
/// each ternary (prefix) bit takes two bits, an exact bit one, plus the action index and a
/// few bits of overhead; ALPM's `atcam_subset_width` shortens the stored prefix.
fn atcam_demand(pipe: &Pipeline, t: &Table, lay: &AtcamLayout, p: &Profile, d: &mut Demand) {
    let size = u64::from(t.size.max(1));
    let (mut exact, mut prefix) = (0u64, 0u64);
    for k in &t.keys {
        let w = u64::from(k.expr.width());
        match k.kind {
            MatchKind::Exact => exact += w,
            MatchKind::Ternary | MatchKind::Lpm => prefix += w,
            MatchKind::Range => prefix += 2 * w,
            MatchKind::Selector => {}
        }
    }
    let stored = lay
        .subset_width
        .map_or(prefix, |s| u64::from(s).min(prefix));
    let action_bits = u64::from(ceil_log2(t.actions.len() as u64));
    let entry = (exact + 2 * stored + action_bits + 4).max(1);
    let per_word = (u64::from(p.sram_width) / entry).clamp(1, ATCAM_ENTRIES_PER_WORD);
    let words = if entry > u64::from(p.sram_width) {
        ceil_div(entry, u64::from(p.sram_width))
    } else {
        1
    };
    let mut sram = ceil_div(size, u64::from(p.sram_depth) * per_word) * words;
    let adb_bits = action_data_bits(pipe, t);
    sram += action_data_sram(p, size, adb_bits);
    let mut tcam = 0u64;
    if let Some(subtrees) = lay.subtrees {
        // The pre-classifier: the whole key, ternary, one entry per subtree of each
        // partition; its action data is the partition index.
        let entries = u64::from(lay.partitions.max(1)) * u64::from(subtrees.max(1));
        tcam = ceil_div((exact + prefix).max(1), u64::from(p.tcam_width))
            * ceil_div(entries, u64::from(p.tcam_depth));
        sram += ceil_div(entries, u64::from(p.sram_depth) * 16);
        sram += sram_for(
            p,
            entries,
            u64::from(ceil_log2(u64::from(lay.partitions.max(2)))),
        );
    }
    d.sram = sat32(sram);
    d.tcam = sat32(tcam);
}

fn register_sram(pipe: &Pipeline, r: RegisterId, p: &Profile) -> u32 {
    match pipe.registers.get(r.index()) {
        Some(reg) => {
            let bits = u64::from(reg.width.max(1)) * if reg.paired { 2 } else { 1 };
            sat32(sram_for(p, u64::from(reg.size.max(1)), bits))
        }
        None => 0,
    }
}

/// The demand of every unit.
pub(crate) fn demands(
    pipe: &Pipeline,
    phv: &PhvLayout,
    units: &[Unit],
    p: &Profile,
    layouts: &[(TableId, AtcamLayout)],
) -> Vec<Demand> {
    let mut col = Collector::new(pipe, phv);
    let copies = super::units::shared_copies(pipe, units);
    units
        .iter()
        .map(|u| {
            let mut d = Demand::default();
            match &u.kind {
                UnitKind::Table(id) => {
                    let one = copies.get(id).copied().unwrap_or(*id);
                    d.logical = 1;
                    d.table = Some(one);
                    d.stateful.push((Stateful::Table(one), 0));
                    if let Some(t) = pipe.tables.get(id.index()) {
                        table_demand(pipe, t, &mut col, p, &mut d);
                        if let Some((_, lay)) = layouts.iter().find(|(l, _)| l == id) {
                            atcam_demand(pipe, t, lay, p, &mut d);
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

    /// The first resource that would overflow if `d` were added (None: it fits).
    pub fn refuse(&self, d: &Demand, p: &Profile) -> Option<&'static str> {
        let mut after = self.clone();
        after.add(d, usize::MAX);
        after.over(p)
    }

    /// The first resource over the profile's limits.
    pub fn over(&self, p: &Profile) -> Option<&'static str> {
        if self.logical > p.logical_tables {
            Some("logical tables")
        } else if self.ternary > p.ternary_tables {
            Some("ternary tables")
        } else if self.gateways > p.gateways {
            Some("gateways")
        } else if self.sram > p.sram_blocks {
            Some("SRAM blocks")
        } else if self.tcam > p.tcam_blocks {
            Some("TCAM blocks")
        } else if self.salus() > p.stateful_alus {
            Some("stateful ALUs")
        } else if self.stats() > p.stats_alus {
            Some("statistics ALUs")
        } else if self.hash_bits > p.hash_bits() {
            Some("hash bits")
        } else if xbar_bytes(&self.exact_xbar) > p.exact_xbar_bytes {
            Some("exact crossbar bytes")
        } else if xbar_bytes(&self.ternary_xbar) > p.ternary_xbar_bytes {
            Some("ternary crossbar bytes")
        } else {
            None
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

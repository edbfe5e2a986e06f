//! What one unit needs from the stage it lands in: logical table slots, SRAM/TCAM blocks,
//! stateful and statistics ALUs, hash bits and input-crossbar bytes.
//!
//! Memory sizing follows bf-p4c's layout rules (the functions below name the bf-p4c file and
//! function each rule comes from; worked examples in `p4/tests/placement/*_sizing.p4`):
//! - exact match ([`exact_layout`]): an entry is its key less 10 ghost bits, 4 version bits and
//!   its overhead (instruction bits, action data when immediate); 1 to 9 entries a row over up to
//!   8 RAMs; at least 4 RAMs deep (one per hash way) unless the key addresses its rows directly;
//!   a hash-action table (one action, a row per key value) has no match RAMs. Hash: up to 4
//!   ways, each taking 10 bits (the row within a block) plus the bits to select a block of its
//!   way.
//! - `@pack(n)` fixes the entries a match row packs to n (the only layout tried), `@ways(n)`
//!   cuts the table's RAMs into n hash ways ([`ways_sizes`]).
//! - ternary / LPM / range: TCAM blocks = ⌈key bits / 44⌉ × ⌈size / 512⌉ (range keys count
//!   twice: bf-p4c encodes ranges in 4-bit groups); SRAM ([`ternary_sram`]): the ternary
//!   indirection holding each slot's instruction and immediate action data, or an action data
//!   table.
//! - ALPM / ATCAM ([`atcam_demand`]): an ATCAM in SRAM match words behind the ALPM's
//!   pre-classifier TCAM.
//! - action data (tables with keys): the widest action's parameters that its body reads,
//!   rounded up to a power of two ≥ 8 bits, packed into 128-bit words, unless immediate.
//!   Keyless tables keep their data in the action instruction (immediate), so they use no
//!   memory.
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
use super::layout::{AtcamLayout, Hints, Sizing};
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
        let tcam =
            ceil_div(key_bits, u64::from(p.tcam_width)) * ceil_div(size, u64::from(p.tcam_depth));
        d.tcam = sat32(tcam);
        let rows = ceil_div(size, u64::from(p.tcam_depth));
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
            single_action: t.actions.len() <= 1,
        };
        let lay = exact_layout(p, size, &shape, sizing);
        if lay.wide {
            d.unfit_pack = sizing.pack;
        }
        sram += lay.sram;
        d.hash_bits += sat32(lay.hash_bits);
    }
    d.sram = d.sram.saturating_add(sat32(sram));
}

/// SRAM blocks of a ternary table with `entries` TCAM slots, the cheaper of bf-p4c's two
/// layouts (mau/table_layout.cpp `setup_ternary_layout_options`, mau/resource_estimate.cpp
/// `TernaryIndirectPerWord` / `calculate_attached_rams`): each TCAM slot's result (instruction
/// bits, plus the action data when it rides immediate: ≤ 32 bits) sits in a ternary indirection
/// RAM, `128 >> max(3, ⌈log2 bits⌉)` results a word (none when the result is empty); action
/// data not immediate goes to an action data table with a slot for every TCAM slot.
fn ternary_sram(p: &Profile, entries: u64, instr: u64, adb_bits: u64) -> u64 {
    let mut best = u64::MAX;
    for immediate in [true, false] {
        if immediate && adb_bits > IMMEDIATE_MAX_BITS {
            continue;
        }
        let overhead = instr + if immediate { adb_bits } else { 0 };
        let tind = if overhead == 0 {
            0
        } else {
            let per_word = u64::from(p.sram_width) >> u64::from(ceil_log2(overhead)).max(3);
            ceil_div(entries, u64::from(p.sram_depth) * per_word.max(1))
        };
        let ad = if immediate {
            0
        } else {
            action_data_sram(p, entries, adb_bits)
        };
        best = best.min(tind + ad);
    }
    best
}

/// An exact-match table's layout: its SRAM blocks (match and action data) and how many RAMs
/// deep its match is (the RAMs one hash way picks from, across all ways).
struct ExactLayout {
    sram: u64,
    deep: u64,
    /// Hash bits of its ways: each 10 bits of row plus the bits selecting a RAM of its way.
    hash_bits: u64,
    /// No layout fits a match row: this is the one-entry-a-row stand-in.
    wide: bool,
}

impl ExactLayout {
    /// A layout `deep` RAMs deep with bf-p4c's default ways: up to 4, the RAMs shared evenly.
    fn new(sram: u64, deep: u64) -> Self {
        let ways = deep.clamp(1, MIN_WAYS);
        let per_way = ceil_div(deep.max(1), ways);
        let hash_bits = ways * (GHOST_BITS + u64::from(ceil_log2(per_way)));
        ExactLayout {
            sram,
            deep,
            hash_bits,
            wide: false,
        }
    }
}

/// Bits of an exact key bf-p4c does not store (mau/table_layout.cpp `setup_match_layout`,
/// `get_ram_ghost_bits`): the hash that picks the RAM row (10 bits for 1024 rows) stands for
/// them, so an entry holds its key less these bits.
const GHOST_BITS: u64 = 10;
/// Most entries one match row packs, across all its RAMs, and the widest row (RAMs).
const MAX_PACK: u64 = 9;
/// PHV bytes one RAM of a match row compares (mau/table_layout.cpp `setup_exact_match`:
/// `SINGLE_RAM_BYTES`).
const MATCH_BYTES_PER_RAM: u64 = 16;
const MAX_ROW_RAMS: u64 = 8;

/// The cheapest of bf-p4c's exact-match layouts (mau/table_layout.cpp `setup_exact_match`,
/// mau/resource_estimate.cpp `options_to_ways` / `calculate_attached_rams`): an entry is its
/// key less the ghost bits, 4 version bits and its overhead (instruction bits, plus the action
/// data when it rides immediate: ≤ 32 bits); a row packs 1 to 9 entries over as many RAMs as
/// its bits (128 a RAM), its key bytes (16 a RAM), its overhead (64 a RAM) and its entry count
/// (5 a RAM) need, at most 8;
/// the table is `⌈size / (entries per row × 1024)⌉` rows deep. With action data in a table,
/// that table has an entry for every match slot laid out.
fn exact_layout(p: &Profile, size: u64, x: &ExactShape, sizing: Sizing) -> ExactLayout {
    let depth = u64::from(p.sram_depth);
    let w = u64::from(p.sram_width);
    let (key_bits, instr, adb_bits) = (x.key_bits, x.instr, x.adb_bits);
    // A hash-action table: every key value has its row, found by the key itself; no match
    // RAMs, only the action data.
    if key_bits < 64 && size == 1u64 << key_bits && x.single_action && !x.direct && instr == 0 {
        return ExactLayout::new(action_data_sram(p, size, adb_bits), 0);
    }
    let mut best = ExactLayout::new(u64::MAX, 1);
    let packs = match sizing.pack {
        Some(n) => u64::from(n)..=u64::from(n),
        None => 1..=MAX_PACK,
    };
    for immediate in [true, false] {
        if immediate && adb_bits > IMMEDIATE_MAX_BITS {
            continue;
        }
        let overhead = instr + if immediate { adb_bits } else { 0 };
        let entry = key_bits.saturating_sub(GHOST_BITS) + VERSION_BITS + overhead;
        // The miss entry needs no reserved row when the default action keeps its data (if
        // any) in the entry and uses no direct resource (identity hashing allowed).
        let identity_ok = !x.direct && (immediate || x.default_adb_bits == 0);
        for pack in packs.clone() {
            let width = ceil_div(pack * entry, w)
                .max(ceil_div(pack * overhead, OVERHEAD_BITS_PER_WORD))
                .max(ceil_div(pack, MAX_ENTRIES_PER_WORD))
                .max(ceil_div(pack * x.match_bytes, MATCH_BYTES_PER_RAM));
            if width > MAX_ROW_RAMS {
                break;
            }
            let rows = ceil_div(size, pack * depth);
            let lay = match sizing.ways {
                Some(n) => ways_sizes(rows, key_bits, pack, identity_ok, u64::from(n)),
                None => ExactLayout::new(0, way_depth(rows, key_bits, pack, identity_ok)),
            };
            let mut sram = lay.deep * width;
            if !immediate {
                sram += action_data_sram(p, lay.deep * pack * depth, adb_bits);
            }
            if sram < best.sram {
                best = ExactLayout { sram, ..lay };
            }
        }
    }
    if best.sram == u64::MAX {
        // An entry wider than a match row can be (bf-p4c has no layout for it: the crossbar
        // check reports the key): one entry a row, as many RAMs wide as its bits.
        let entry = key_bits.saturating_sub(GHOST_BITS) + VERSION_BITS + instr;
        let deep = ceil_div(size, depth).max(MIN_WAYS);
        best = ExactLayout {
            wide: true,
            ..ExactLayout::new(
                deep * ceil_div(entry, w) + action_data_sram(p, size, adb_bits),
                deep,
            )
        };
    }
    best
}

/// What [`exact_layout`] needs to know of a table.
struct ExactShape {
    key_bits: u64,
    /// PHV bytes an entry stores (a RAM compares at most [`MATCH_BYTES_PER_RAM`]).
    match_bytes: u64,
    instr: u64,
    /// Action data bits of the widest action, and of the widest that may be the default.
    adb_bits: u64,
    default_adb_bits: u64,
    /// A direct counter, meter or idle timeout (the miss entry then needs its own row).
    direct: bool,
    single_action: bool,
}

/// Hash ways of an exact table with enough RAMs: bf-p4c gives a cuckoo table at least 4
/// RAMs deep (one per way) so that 4 independent hash lookups place ~90% of the entries.
const MIN_WAYS: u64 = 4;

/// RAMs deep a table `rows` rows deep takes once bf-p4c has chosen its hash ways
/// (mau/resource_estimate.cpp `calculate_way_sizes`, `can_be_identity_hash`): a key no wider
/// than a RAM's row address fits one RAM; otherwise at least [`MIN_WAYS`] RAMs, unless the key
/// is narrow enough to address its rows directly (at most 8 bits beyond the 10 of a row, the
/// RAMs for every key value rounded up to a power of two and no more than that minimum) and the
/// miss entry needs no reserved row (`identity_ok`).
fn way_depth(rows: u64, key_bits: u64, pack: u64, identity_ok: bool) -> u64 {
    if key_bits < GHOST_BITS && rows <= 1 {
        return 1;
    }
    let deep = rows.max(MIN_WAYS);
    if identity_ok && key_bits <= GHOST_BITS + 8 {
        let extra = key_bits.saturating_sub(GHOST_BITS);
        let needed = ceil_div(1 << extra, pack).next_power_of_two();
        if needed <= deep {
            return needed;
        }
    }
    deep
}

/// The RAMs of a table `rows` rows deep cut into the `ways` hash ways `@ways` asks for
/// (mau/resource_estimate.cpp `ways_provided`): one way may address its rows by the key
/// (as in [`way_depth`], within `rows`); otherwise way i takes its share of the rows still
/// needed (at most a stage's 80 RAMs), rounded up to a power of two, at least one RAM each.
fn ways_sizes(rows: u64, key_bits: u64, pack: u64, identity_ok: bool, ways: u64) -> ExactLayout {
    if ways == 1 && identity_ok && key_bits <= GHOST_BITS + 8 {
        let extra = key_bits.saturating_sub(GHOST_BITS);
        let needed = ceil_div(1 << extra, pack).next_power_of_two();
        if needed <= rows {
            return ExactLayout {
                sram: 0,
                deep: needed,
                hash_bits: GHOST_BITS + u64::from(ceil_log2(needed)),
                wide: false,
            };
        }
    }
    let mut left = rows.min(STAGE_SRAMS);
    let (mut deep, mut hash_bits) = (0, 0);
    for i in 0..ways {
        let size = ceil_div(left.max(1), ways - i).next_power_of_two();
        left = left.saturating_sub(size);
        deep += size;
        hash_bits += GHOST_BITS + u64::from(ceil_log2(size));
    }
    ExactLayout {
        sram: 0,
        deep,
        hash_bits,
        wide: false,
    }
}

/// SRAM blocks of a Tofino stage (mau/mau_spec.h `StageUse::MAX_SRAMS`), the most RAMs
/// `@ways` spreads.
const STAGE_SRAMS: u64 = 80;

/// Bits of action data of `t`'s widest action: the parameters its body reads (bf-p4c lays out
/// action data from the action's instructions, so a parameter nothing reads takes no space).
fn action_data_bits(col: &mut Collector<'_>, t: &Table) -> u64 {
    action_data_bits_of(col, t, |_| true)
}

/// Like [`action_data_bits`], over the actions `keep` accepts.
fn action_data_bits_of(
    col: &mut Collector<'_>,
    t: &Table,
    keep: impl Fn(&pipeline::ir::ActionRef) -> bool,
) -> u64 {
    let pipe = col.pipe;
    t.actions
        .iter()
        .filter(|a| keep(a))
        .filter_map(|a| pipe.actions.get(a.action.index()).map(|x| (a.action, x)))
        .map(|(id, a)| {
            let mut fx = Effects::default();
            col.action(id, &mut fx);
            let used: BTreeSet<u16> = fx.params.into_iter().collect();
            a.params
                .iter()
                .enumerate()
                .filter(|(i, _)| used.contains(&(*i as u16)))
                .map(|(_, x)| u64::from(x.width))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

/// SRAM blocks of a table's action data: `size` entries of the widest action's `adb_bits`.
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

/// bf-p4c's match-entry constants (mau/table_format.h, mau/table_layout.cpp): version / valid
/// bits of an entry, most entries in one RAM word, overhead bits a word may carry (the match
/// result bus), and the widest action data that rides in the overhead as immediate.
const VERSION_BITS: u64 = 4;
const MAX_ENTRIES_PER_WORD: u64 = 5;
const OVERHEAD_BITS_PER_WORD: u64 = 64;
const IMMEDIATE_MAX_BITS: u64 = 32;

/// Overhead bits that pick the action of a hit (mau/table_layout.cpp `setup_instr_and_next`):
/// log2 of the actions a hit may run (all but `@defaultonly` ones), up to 8; past 8 the full
/// instruction address (7 bits, inferred: 6 address bits and a colour bit).
fn instr_bits(t: &Table) -> u64 {
    let hit = t.actions.iter().filter(|a| !a.default_only).count() as u64;
    if hit <= 8 {
        u64::from(ceil_log2(hit))
    } else {
        7
    }
}

/// One ATCAM layout's SRAM blocks, the cheapest of bf-p4c's options (mau/table_layout.cpp
/// `setup_exact_match`, mau/resource_estimate.cpp `options_to_atcam_entries`): for action data
/// immediate (in the entry's overhead, ≤ 32 bits) or in an action data table, and 1 to 5 entries
/// per RAM word, with all entries' overhead on one result bus (≤ 64 bits a word). Each
/// partition is one RAM row (`ceil(partitions / 1024)` ways of RAMs), `⌈size / partitions⌉`
/// entries deep: `⌈that / entries per word⌉` RAMs per way, times the words an entry row spans.
/// The action data table holds an entry for every match slot laid out.
fn atcam_sram(
    p: &Profile,
    size: u64,
    partitions: u64,
    match_bits: u64,
    instr: u64,
    adb_bits: u64,
) -> (u64, u64) {
    let depth = u64::from(p.sram_depth);
    let ways = ceil_div(partitions.max(1), depth);
    let per_partition = ceil_div(size, partitions.max(1)).max(1);
    let mut best = (u64::MAX, 1);
    for immediate in [true, false] {
        if immediate && adb_bits > IMMEDIATE_MAX_BITS {
            continue;
        }
        let overhead = instr + if immediate { adb_bits } else { 0 };
        let entry = match_bits + VERSION_BITS + overhead;
        for per_word in 1..=MAX_ENTRIES_PER_WORD {
            if per_word * overhead > OVERHEAD_BITS_PER_WORD {
                break;
            }
            let width = ceil_div(per_word * entry, u64::from(p.sram_width));
            let rams_deep = ceil_div(per_partition, per_word);
            let mut sram = rams_deep * width * ways;
            if !immediate {
                sram += action_data_sram(p, rams_deep * ways * per_word * depth, adb_bits);
            }
            if sram < best.0 {
                best = (sram, atcam_logical_tables(rams_deep, partitions));
            }
        }
    }
    best
}

/// RAMs deep one logical table of an ATCAM holds at most (mau/memories.h
/// `MAX_PARTITION_RAMS_PER_ROW`).
const MAX_PARTITION_RAMS: u64 = 5;

/// Logical tables an ATCAM `rams_deep` RAMs deep is cut into (mau/resource_estimate.cpp
/// `calculate_partition_sizes`): one per [`MAX_PARTITION_RAMS`] RAMs of depth, or one per RAM
/// past 4096 partitions. Each takes a logical table id of the stage it lands in.
fn atcam_logical_tables(rams_deep: u64, partitions: u64) -> u64 {
    if partitions > 4096 {
        rams_deep.max(1)
    } else {
        ceil_div(rams_deep, MAX_PARTITION_RAMS).max(1)
    }
}

/// TCAM blocks of one row of a ternary match `bytes` wide (mau/resource_estimate.cpp
/// `options_to_ternary_entries`): a pair of TCAMs matches 11 bytes (two 44-bit halves plus the
/// shared nibbles), one TCAM up to 6 bytes.
fn tcam_width(bytes: u64) -> u64 {
    let (mut rest, mut width) = (bytes, 0);
    while rest > 11 {
        rest -= 11;
        width += 2;
    }
    if rest > 6 {
        width += 2;
    } else if rest > 0 || width == 0 {
        width += 1;
    }
    width
}

/// Memories of a table laid out as an ATCAM (`Atcam`) or ALPM (`Alpm`), replacing the
/// plain-TCAM sizing of [`table_demand`], which still gives the crossbar.
///
/// bf-p4c's rules (midend/alpm.cpp `SplitAlpm`, mau/table_layout.cpp, mau/resource_estimate.cpp):
/// - an ATCAM entry stores each ternary / lpm bit twice and each exact bit once; the partition
///   index is the RAM row, not stored. A plain `Atcam`'s partition index is one of its exact
///   keys, `⌈log2 partitions⌉` bits (the key pisa cannot tell apart; taken off the exact bits);
/// - ALPM splits the table into a pre-classifier TCAM (the whole key, `partitions × subtrees`
///   entries, whose actions set the partition index, the subtree id and the partition key) and
///   an ATCAM. With `atcam_subset_width` narrower than the lpm key, the ATCAM's key is only the
///   subtree id (`⌈log2 subtrees⌉` bits, exact) and the `atcam_subset_width`-bit slice of the
///   prefix (lpm): the exact fields are matched by the pre-classifier alone. Otherwise the ATCAM
///   keeps the table's key;
/// - the pre-classifier's result (instruction + partition index + subtree id) sits in a
///   ternary indirection RAM, `128 >> max(3, ⌈log2 bits⌉)` results a word.
fn atcam_demand(
    col: &mut Collector<'_>,
    t: &Table,
    lay: &AtcamLayout,
    p: &Profile,
    d: &mut Demand,
) {
    let size = u64::from(t.size.max(1));
    let partitions = u64::from(lay.partitions.max(1));
    let (mut exact, mut prefix, mut lpm_width, mut key_bytes) = (0u64, 0u64, 0u64, 0u64);
    for k in &t.keys {
        let w = u64::from(k.expr.width());
        match k.kind {
            MatchKind::Exact => exact += w,
            MatchKind::Lpm => {
                prefix += w;
                lpm_width = w;
            }
            MatchKind::Ternary => prefix += w,
            MatchKind::Range => prefix += 2 * w,
            MatchKind::Selector => continue,
        }
        key_bytes += w.div_ceil(8);
    }
    let index_bits = u64::from(ceil_log2(partitions));
    let subtree_bits = lay
        .subtrees
        .map_or(0, |s| u64::from(ceil_log2(u64::from(s))));
    // The pre-classifier's actions: one per shift of the subset window over the lpm key.
    let subset = lay.subset_width.map(u64::from).filter(|s| *s < lpm_width);
    let shift = lay.shift_granularity.map_or(lpm_width, u64::from).max(1);
    let classifier_actions = subset.map_or(1, |s| (lpm_width - s) / shift + 1);
    let match_bits = match (lay.subtrees, subset) {
        (Some(_), Some(s)) if classifier_actions > 1 => subtree_bits + 2 * s,
        (Some(_), _) => exact + 2 * prefix,
        (None, _) => exact.saturating_sub(index_bits) + 2 * prefix,
    };
    let adb_bits = action_data_bits(col, t);
    let (mut sram, logical) = atcam_sram(p, size, partitions, match_bits, instr_bits(t), adb_bits);
    // The ATCAM's logical tables, plus the pre-classifier's.
    d.logical = sat32(logical + u64::from(lay.subtrees.is_some()));
    d.sram_per_logical = sat32(ceil_div(sram, logical));
    let mut tcam = 0u64;
    if let Some(subtrees) = lay.subtrees {
        let entries = partitions * u64::from(subtrees.max(1));
        let rows = ceil_div(entries, u64::from(p.tcam_depth));
        tcam = tcam_width(key_bytes) * rows;
        let result = u64::from(ceil_log2(classifier_actions))
            + index_bits
            + if classifier_actions > 1 {
                subtree_bits
            } else {
                0
            };
        let per_word = u64::from(p.sram_width) >> u64::from(ceil_log2(result)).max(3);
        sram += ceil_div(
            rows * u64::from(p.tcam_depth),
            u64::from(p.sram_depth) * per_word.max(1),
        );
    }
    d.sram = sat32(sram);
    d.tcam = sat32(tcam);
    d.tcam_first = lay.subtrees.is_some();
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

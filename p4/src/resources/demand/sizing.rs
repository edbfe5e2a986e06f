//! Memory sizing: how many SRAM and TCAM blocks, hash bits and logical table ids a table or
//! register takes, following bf-p4c's layout rules (each function names the bf-p4c file and
//! function its rule comes from; worked examples in `p4/tests/placement/*_sizing.p4`):
//! - exact match ([`exact_layout`]): an entry is its key less 10 ghost bits, 4 version bits and
//!   its overhead (instruction bits, action data when immediate); 1 to 9 entries a row over up to
//!   8 RAMs; at least 4 RAMs deep (one per hash way) unless the key addresses its rows directly;
//!   a hash-action table (one action, a row per key value) has no match RAMs. Hash: up to 4
//!   ways, each taking 10 bits (the row within a block) plus the bits to select a block of its
//!   way.
//! - `@pack(n)` fixes the entries a match row packs to n (the only layout tried), `@ways(n)`
//!   cuts the table's RAMs into n hash ways ([`ways_sizes`]).
//! - ternary / LPM / range ([`ternary_sram`]): the ternary indirection holding each TCAM slot's
//!   instruction and immediate action data, or an action data table.
//! - ALPM / ATCAM ([`atcam_demand`]): an ATCAM in SRAM match words behind the ALPM's
//!   pre-classifier TCAM.
//! - action data (tables with keys, [`action_data_bits`]): the widest action's parameters that
//!   its body reads, rounded up to a power of two ≥ 8 bits, packed into 128-bit words, unless
//!   immediate.
//! - registers ([`register_sram`]): size × word width (× 2 when paired) bits in 128-bit words.

use std::collections::BTreeSet;

use pipeline::ir::{MatchKind, Pipeline, RegisterId, Table};

use super::super::effects::{Collector, Effects};
use super::super::layout::{AtcamLayout, Sizing};
use super::super::profile::Profile;
use super::Demand;

pub(super) fn ceil_div(a: u64, b: u64) -> u64 {
    if b == 0 {
        0
    } else {
        a.div_ceil(b)
    }
}

pub(super) fn ceil_log2(n: u64) -> u32 {
    if n <= 1 {
        0
    } else {
        64 - (n - 1).leading_zeros()
    }
}

pub(super) fn sat32(x: u64) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// SRAM blocks for `entries` items of `bits` each, packed into `p.sram_width`-bit words.
pub(super) fn sram_for(p: &Profile, entries: u64, bits: u64) -> u64 {
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

/// SRAM blocks of a ternary table with `entries` TCAM slots, the cheaper of bf-p4c's two
/// layouts (mau/table_layout.cpp `setup_ternary_layout_options`, mau/resource_estimate.cpp
/// `TernaryIndirectPerWord` / `calculate_attached_rams`): each TCAM slot's result (instruction
/// bits, plus the action data when it rides immediate: ≤ 32 bits) sits in a ternary indirection
/// RAM, `128 >> max(3, ⌈log2 bits⌉)` results a word (none when the result is empty); action
/// data not immediate goes to an action data table with a slot for every TCAM slot.
pub(super) fn ternary_sram(p: &Profile, entries: u64, instr: u64, adb_bits: u64) -> u64 {
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
pub(super) struct ExactLayout {
    pub(super) sram: u64,
    pub(super) deep: u64,
    /// Hash bits of its ways: each 10 bits of row plus the bits selecting a RAM of its way.
    pub(super) hash_bits: u64,
    /// No layout fits a match row: this is the one-entry-a-row stand-in.
    pub(super) wide: bool,
    /// `@use_hash_action(1)` on a table that cannot be one: bf-p4c's reason.
    pub(super) unfit_hash_action: Option<&'static str>,
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
            unfit_hash_action: None,
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
pub(super) fn exact_layout(p: &Profile, size: u64, x: &ExactShape, sizing: Sizing) -> ExactLayout {
    let depth = u64::from(p.sram_depth);
    let w = u64::from(p.sram_width);
    let (key_bits, instr, adb_bits) = (x.key_bits, x.instr, x.adb_bits);
    // A hash-action table: every key value has its row, found by the key itself; no match
    // RAMs, only the action data. `@use_hash_action(1)` forces it (refused where it cannot
    // be), `(0)` rules it out.
    let blocker = hash_action_blocker(size, x);
    let hash_action = match sizing.hash_action {
        Some(forced) => forced && blocker.is_none(),
        None => blocker.is_none() && !x.direct,
    };
    if hash_action {
        return ExactLayout::new(action_data_sram(p, size, adb_bits), 0);
    }
    let unfit_hash_action = blocker.filter(|_| sizing.hash_action == Some(true));
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
            let lay = match (sizing.ways, sizing.simul_lookups) {
                (Some(n), _) => ways_sizes(rows, key_bits, pack, identity_ok, u64::from(n), false),
                (None, Some(n)) => {
                    ways_sizes(rows, key_bits, pack, identity_ok, u64::from(n), true)
                }
                (None, None) => ExactLayout::new(0, way_depth(rows, key_bits, pack, identity_ok)),
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
    best.unfit_hash_action = unfit_hash_action;
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

/// Why an exact table cannot be a hash-action table (mau/table_layout.cpp
/// `can_be_hash_action`), or `None` when it can: its size must be 2^(key bits), with one
/// action and no match overhead (instruction bits), and no idle timeout. (bf-p4c also allows
/// direct counters and meters there, addressed by the hash; pisa chooses the layout for such
/// a table only when `@use_hash_action(1)` asks for it.)
fn hash_action_blocker(size: u64, x: &ExactShape) -> Option<&'static str> {
    if x.key_bits >= 64 || size != 1u64 << x.key_bits {
        Some("the size is not 2^(key bits)")
    } else if !x.single_action {
        Some("the table has multiple actions")
    } else if x.instr > 0 {
        Some("the table requires match overhead")
    } else if x.idle_timeout {
        Some("the table has idletime requirements")
    } else {
        None
    }
}

/// What [`exact_layout`] needs to know of a table.
pub(super) struct ExactShape {
    pub(super) key_bits: u64,
    /// PHV bytes an entry stores (a RAM compares at most [`MATCH_BYTES_PER_RAM`]).
    pub(super) match_bytes: u64,
    pub(super) instr: u64,
    /// Action data bits of the widest action, and of the widest that may be the default.
    pub(super) adb_bits: u64,
    pub(super) default_adb_bits: u64,
    /// A direct counter, meter or idle timeout (the miss entry then needs its own row).
    pub(super) direct: bool,
    pub(super) idle_timeout: bool,
    pub(super) single_action: bool,
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
/// `shared`: `@simul_lookups`, whose lookups may share hash bits ("making an individual way
/// deeper"): one way's 10 row bits serve all, each adding the bits selecting its RAM.
fn ways_sizes(
    rows: u64,
    key_bits: u64,
    pack: u64,
    identity_ok: bool,
    ways: u64,
    shared: bool,
) -> ExactLayout {
    if ways == 1 && identity_ok && key_bits <= GHOST_BITS + 8 {
        let extra = key_bits.saturating_sub(GHOST_BITS);
        let needed = ceil_div(1 << extra, pack).next_power_of_two();
        if needed <= rows {
            return ExactLayout {
                sram: 0,
                deep: needed,
                hash_bits: GHOST_BITS + u64::from(ceil_log2(needed)),
                wide: false,
                unfit_hash_action: None,
            };
        }
    }
    let mut left = rows.min(STAGE_SRAMS);
    let (mut deep, mut hash_bits) = (0, 0);
    for i in 0..ways {
        let size = ceil_div(left.max(1), ways - i).next_power_of_two();
        left = left.saturating_sub(size);
        deep += size;
        let row_bits = if shared && i > 0 { 0 } else { GHOST_BITS };
        hash_bits += row_bits + u64::from(ceil_log2(size));
    }
    ExactLayout {
        sram: 0,
        deep,
        hash_bits,
        wide: false,
        unfit_hash_action: None,
    }
}

/// SRAM blocks of a Tofino stage (mau/mau_spec.h `StageUse::MAX_SRAMS`), the most RAMs
/// `@ways` spreads.
const STAGE_SRAMS: u64 = 80;

/// Bits of action data of `t`'s widest action: the parameters its body reads (bf-p4c lays out
/// action data from the action's instructions, so a parameter nothing reads takes no space).
pub(super) fn action_data_bits(col: &mut Collector<'_>, t: &Table) -> u64 {
    action_data_bits_of(col, t, |_| true)
}

/// Like [`action_data_bits`], over the actions `keep` accepts.
pub(super) fn action_data_bits_of(
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
pub(super) fn instr_bits(t: &Table) -> u64 {
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
pub(super) fn tcam_width(bytes: u64) -> u64 {
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
pub(super) fn atcam_demand(
    col: &mut Collector<'_>,
    t: &Table,
    lay: &AtcamLayout,
    p: &Profile,
    d: &mut Demand,
) {
    let size = u64::from(t.size.max(1));
    let partitions = u64::from(lay.partitions.max(1));
    let (mut exact, mut prefix, mut lpm_width) = (0u64, 0u64, 0u64);
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
        // The whole key's PHV bytes, as [`super::table_demand`] counted them for the crossbar
        // (bf-p4c sizes TCAM rows by container bytes).
        let key_bytes = u64::from(super::xbar_bytes(&d.ternary_xbar));
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

pub(super) fn register_sram(pipe: &Pipeline, r: RegisterId, p: &Profile) -> u32 {
    match pipe.registers.get(r.index()) {
        Some(reg) => {
            let bits = u64::from(reg.width.max(1)) * if reg.paired { 2 } else { 1 };
            sat32(sram_for(p, u64::from(reg.size.max(1)), bits))
        }
        None => 0,
    }
}

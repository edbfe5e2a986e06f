//! Where the program tells the placement to put a table: `@stage` and the string form of
//! `@placement_priority`, honoured as bf-p4c honours them.
//!
//! What bf-p4c documents and does (sources: its pragma help texts, common/pragma/
//! all_pragmas.cpp `PragmaStage` / `PragmaPlacementPriority`, and the placement code that reads
//! them, mau/table_placement.cpp, mau/table_summary.cpp, ir/mau.cpp `get_provided_stage`):
//!
//! - `@stage(n)`: "the associated match table must be placed in the indicated stage". The
//!   table's placement starts at stage `n` (its start stage is the later of `n` and what its
//!   dependencies allow: `initial_stage_and_entries`), so it is never earlier than `n`, and
//!   the tables that depend on it move later with it. Where the dependencies (or full stages)
//!   put it later, bf-p4c places it there and warns: "The stage specified for T is n, but we
//!   could not place it until stage m" (a warning, `addPlacementWarnError`); pisa gives the
//!   same warning, with the reason. Among tables that can start in one stage, one whose
//!   `@stage` asks for that stage goes first, and of two such the lower stage asked
//!   (`is_better`, `PROV_STAGE`, before `PRIORITY`).
//! - `@stage(n)` with `n` at or past the target's stage count ("For Tofino allowed stage
//!   numbers are 0 to 11"): bf-p4c places the table there and then fails for needing more
//!   stages than the device has; pisa refuses it with an error that names the table, the stage
//!   and the stage count, and places the rest without the pin.
//! - `@stage(n, entries)`: bf-p4c puts that many entries in stage `n` and the rest in later
//!   stages (`try_place_table`: `requested_stage_entries`, then `need_more`). pisa splits the
//!   table in two parts the same way ([`split_entries`]): the first with `entries / size` of
//!   the table's match memories (rounded up to whole blocks) starting in stage `n`, the rest,
//!   with the table's result, after it. Where that cannot be modelled (several `@stage`s on one
//!   table, each with its entries; a table already split by memory; an ALPM or ATCAM layout),
//!   the table starts in the lowest stage asked and is split by memory only, and a warning says
//!   so. The `"immediate"` / `"noimmediate"` flags choose the action data layout, which pisa
//!   does not model; they have no effect.
//! - `@placement_priority("other", ...)`: of two tables that can start in one stage (and tie
//!   on `@stage`), the one naming the other goes first, before the numeric priorities are
//!   compared (`is_better`, `PRIORITY`). A name matching no table is warned about ("cannot find
//!   the associated table"); two tables naming each other are an error ("prioritized over each
//!   other, which is nonsensical"): `CheckPlacementPriorities` in mau/table_layout.cpp.
//!
//! - A gateway (an `if`) takes the lowest `@stage` of the units first in its branches (those
//!   that depend on no earlier unit of their branch), or none when one of those has no
//!   `@stage` (ir/mau.cpp `get_provided_stage` of a gateway-only table): it starts no earlier
//!   than that stage and, in it, goes before unpinned units ([`gateway_pins`]).

use std::collections::BTreeSet;

use pipeline::ir::{Gress, Pipeline, TableId};

use super::demand::Demand;
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::layout::Hints;
use super::profile::Profile;
use super::schedule::Placement;
use super::units::{DepKind, Unit, UnitKind};

/// Per unit of one gress: the stage its `@stage` pins its start to, and the tables its
/// `@placement_priority("...")` puts it before.
#[derive(Debug, Default)]
pub(crate) struct Pins {
    pub stage: Vec<Option<usize>>,
    pub before: Vec<Vec<TableId>>,
    /// Per unit, the entries its table's single `@stage(n, entries)` puts in stage `n`.
    pub entries: Vec<Option<u32>>,
    /// Tables whose `@stage` entries [`split_entries`] cannot model: (table, stage, entries).
    unmodelled: Vec<(TableId, usize, u32)>,
}

fn table_name(pipe: &Pipeline, t: TableId) -> &str {
    pipe.tables.get(t.index()).map_or("?", |t| t.name.as_str())
}

/// The pins of `gress`'s tables; the issues of annotations that cannot be honoured.
pub(crate) fn resolve(
    pi: usize,
    pipe: &Pipeline,
    gress: Gress,
    units: &[Unit],
    hints: &Hints,
    p: &Profile,
    issues: &mut Vec<ResourceIssue>,
) -> Pins {
    let in_gress = |t: TableId| pipe.tables.get(t.index()).is_some_and(|x| x.gress == gress);
    let mut stage_of_table: Vec<(TableId, usize)> = Vec::new();
    let mut entries_of_table: Vec<(TableId, usize, u32)> = Vec::new();
    let mut several: BTreeSet<TableId> = BTreeSet::new();
    for pin in hints.stage_pins.iter().filter(|s| in_gress(s.table)) {
        let name = table_name(pipe, pin.table);
        let stage = pin.stage as usize;
        if stage >= usize::from(p.stages) {
            issues.push(
                ResourceIssue::error(
                    IssueKind::StagePin,
                    ObjectRef::Table(pi, pin.table),
                    format!(
                        "table `{name}` is pinned to stage {stage} by `@stage({stage})`, but {} \
                         has {} stages (0 to {})",
                        p.name(),
                        p.stages,
                        p.stages - 1
                    ),
                )
                .with_help("pin it to a stage the target has, or remove `@stage`"),
            );
            continue;
        }
        if let Some(n) = pin.entries {
            entries_of_table.push((pin.table, stage, n));
        }
        match stage_of_table.iter_mut().find(|(t, _)| *t == pin.table) {
            Some((_, s)) => {
                *s = (*s).min(stage);
                several.insert(pin.table);
            }
            None => stage_of_table.push((pin.table, stage)),
        }
    }
    let before_of_table = priorities(pi, pipe, gress, hints, issues);
    let of = |u: &Unit| match u.kind {
        UnitKind::Table(t) => Some(t),
        _ => None,
    };
    let single = |t: TableId| {
        entries_of_table
            .iter()
            .find(|(x, _, _)| *x == t && !several.contains(&t))
            .map(|(_, _, n)| *n)
    };
    let unmodelled = entries_of_table
        .iter()
        .filter(|(t, _, _)| several.contains(t))
        .copied()
        .collect();
    let mut stage: Vec<Option<usize>> = units
        .iter()
        .map(|u| {
            let t = of(u)?;
            stage_of_table
                .iter()
                .find(|(x, _)| *x == t)
                .map(|(_, s)| *s)
        })
        .collect();
    gateway_pins(units, &mut stage);
    Pins {
        entries: units.iter().map(|u| of(u).and_then(single)).collect(),
        unmodelled,
        stage,
        before: units
            .iter()
            .map(|u| {
                of(u).map_or_else(Vec::new, |t| {
                    before_of_table
                        .iter()
                        .filter(|(a, _)| *a == t)
                        .map(|(_, b)| *b)
                        .collect()
                })
            })
            .collect(),
    }
}

/// Gives each gateway the stage bf-p4c's `get_provided_stage` gives a gateway-only table: the
/// lowest pin of the units first in its branches, none when one of them has no pin. Nested
/// gateways come later in program order, so going backwards sees their pins first.
fn gateway_pins(units: &[Unit], stage: &mut [Option<usize>]) {
    for g in (0..units.len()).rev() {
        if matches!(units[g].kind, UnitKind::Gateway(_)) {
            stage[g] = gateway_pin(units, stage, g);
        }
    }
}

/// The pin of gateway `g` (see [`gateway_pins`]). A unit of a branch that depends (through
/// data) on an earlier unit of the same branch does not count, as bf-p4c skips the tables of
/// a next-table sequence that depend on earlier ones.
fn gateway_pin(units: &[Unit], stage: &[Option<usize>], g: usize) -> Option<usize> {
    let branch = |u: &Unit| u.path.last().map(|(_, b)| *b);
    let mut lowest: Option<usize> = None;
    for (v, u) in units
        .iter()
        .enumerate()
        .filter(|(_, u)| u.parent == Some(g))
    {
        let after_sibling = u.deps.iter().any(|d| {
            d.kind != DepKind::Control
                && units[d.on].parent == Some(g)
                && branch(&units[d.on]) == branch(u)
        });
        if after_sibling {
            continue;
        }
        let s = stage[v]?;
        lowest = Some(lowest.map_or(s, |l| l.min(s)));
    }
    lowest
}

/// `@placement_priority("other")` of `gress`'s tables as (table, table it goes before) pairs,
/// warning about names that match no table and refusing two tables that name each other.
fn priorities(
    pi: usize,
    pipe: &Pipeline,
    gress: Gress,
    hints: &Hints,
    issues: &mut Vec<ResourceIssue>,
) -> Vec<(TableId, TableId)> {
    let mut out: Vec<(TableId, TableId)> = Vec::new();
    for (t, other) in &hints.priority_over {
        if pipe.tables.get(t.index()).is_none_or(|x| x.gress != gress) {
            continue;
        }
        let name = table_name(pipe, *t);
        let found = super::ignore::named(pipe, gress, hints, other);
        if found.is_empty() {
            issues.push(ResourceIssue::warning(
                IssueKind::EmulatorOnly,
                ObjectRef::Table(pi, *t),
                format!(
                    "`@placement_priority(\"{other}\")` on table `{name}` names no {gress} table; \
                     ignored"
                ),
            ));
        }
        for o in found {
            if table_name(pipe, o) != name && !out.contains(&(*t, o)) {
                out.push((*t, o));
            }
        }
    }
    for &(a, b) in &out {
        if a < b && out.contains(&(b, a)) {
            issues.push(
                ResourceIssue::error(
                    IssueKind::StagePin,
                    ObjectRef::Table(pi, a),
                    format!(
                        "tables `{}` and `{}` are each given `@placement_priority` over the \
                         other",
                        table_name(pipe, a),
                        table_name(pipe, b)
                    ),
                )
                .with_note("bf-p4c refuses this: neither can go first")
                .with_help("keep the annotation on one of the two"),
            );
        }
    }
    out
}

/// `@stage(n, entries)`: splits each such table's demand in `demands` into a first part of
/// `entries` (pushed onto its `prefix_parts`, placed from stage `n` on) and the rest; warns
/// where it cannot (see the module doc).
pub(crate) fn split_entries(
    pi: usize,
    pipe: &Pipeline,
    units: &[Unit],
    pins: &Pins,
    demands: &mut [Demand],
    prefix_parts: &mut [Vec<Demand>],
    issues: &mut Vec<ResourceIssue>,
) {
    let mut unmodelled = pins.unmodelled.clone();
    for (u, unit) in units.iter().enumerate() {
        let (UnitKind::Table(t), Some(n)) = (&unit.kind, pins.entries.get(u).copied().flatten())
        else {
            continue;
        };
        let size = pipe.tables.get(t.index()).map_or(0, |x| x.size);
        let d = &demands[u];
        let plain = d.sram_per_logical == 0 && !d.tcam_first && prefix_parts[u].is_empty();
        if n >= size {
            continue;
        }
        if !plain {
            let stage = pins.stage[u].unwrap_or(0);
            if !unmodelled.iter().any(|(x, _, _)| x == t) {
                unmodelled.push((*t, stage, n));
            }
            continue;
        }
        if let Some((first, rest)) = entries_part(d, n, size) {
            prefix_parts[u] = vec![first];
            demands[u] = rest;
        }
    }
    let mut seen: BTreeSet<TableId> = BTreeSet::new();
    for (t, stage, n) in unmodelled {
        if !seen.insert(t) {
            continue;
        }
        issues.push(ResourceIssue::warning(
            IssueKind::EmulatorOnly,
            ObjectRef::Table(pi, t),
            format!(
                "`@stage({stage}, {n})` on table `{}`: pisa starts the table in stage {stage} but \
                 does not place {n} entries there and the rest later as bf-p4c does (several \
                 `@stage`s on one table, a table split by memory, or an ALPM / ATCAM layout); \
                 it splits the table over stages only where a stage's memory runs out",
                table_name(pipe, t)
            ),
        ));
    }
}

/// Table demand `d` (of a table of `size` entries) as a first part holding `entries` of them
/// and the rest, each with its share of the match memories in whole blocks (the first rounded
/// up, the rest at least one block of each kind the table uses, as every part of a split table
/// has its own RAMs); the rest keeps the table's result and stateful objects. `None` when the
/// table has no match memories (nothing to divide).
fn entries_part(d: &Demand, entries: u32, size: u32) -> Option<(Demand, Demand)> {
    let state: u32 = d.stateful.iter().map(|(_, s)| *s).sum();
    let share = |total: u32| {
        let n = u64::from(total) * u64::from(entries);
        u32::try_from(n.div_ceil(u64::from(size.max(1)))).unwrap_or(total)
    };
    let sram = d.sram.saturating_sub(state);
    let first = Demand {
        table: None,
        sram: share(sram).min(sram),
        tcam: share(d.tcam).min(d.tcam),
        stateful: Vec::new(),
        ..d.clone()
    };
    if first.sram + first.tcam == 0 {
        return None;
    }
    let rest_of = |total: u32, taken: u32| (total - taken).max(total.min(1));
    let rest = Demand {
        sram: rest_of(sram, first.sram) + state,
        tcam: rest_of(d.tcam, first.tcam),
        ..d.clone()
    };
    Some((first, rest))
}

/// Warnings for pinned tables that could not start in the stage asked, as bf-p4c warns.
pub(crate) fn unmet(
    pi: usize,
    units: &[Unit],
    pins: &Pins,
    pl: &Placement,
    why: impl Fn(usize) -> Option<String>,
) -> Vec<ResourceIssue> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<TableId> = BTreeSet::new();
    for (u, unit) in units.iter().enumerate() {
        let (UnitKind::Table(t), Some(want)) = (&unit.kind, pins.stage.get(u).copied().flatten())
        else {
            continue;
        };
        let start = pl.parts_of[u].first().copied().unwrap_or(pl.stage_of[u]);
        if start == want || !seen.insert(*t) {
            continue;
        }
        let mut w = ResourceIssue::warning(
            IssueKind::StagePin,
            ObjectRef::Table(pi, *t),
            format!(
                "the stage specified for `{}` is {want}, but it could not be placed until stage \
                 {start}",
                unit.label
            ),
        );
        if let Some(r) = why(u) {
            w = w.with_note(r);
        }
        out.push(w.with_note("bf-p4c places it later too, and warns the same"));
    }
    out
}

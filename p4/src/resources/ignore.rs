//! `@ignore_table_dependency("other")`: the placement drops the data dependencies between a
//! table and the table it names, in both directions, as bf-p4c does (mau/table_mutex.cpp,
//! `IgnoreTableDeps`: the name is looked up as the table's internal name, its external name,
//! or that name with a leading `.`; a name matching no table is warned about and skipped).
//!
//! pisa runs tables in program order, so where the dropped dependency lets the two tables
//! share a stage, the later one sees what the earlier one wrote, while on the hardware it
//! would read the value from before the stage: that case is warned about.

use std::collections::BTreeSet;

use pipeline::ir::{Gress, Pipeline, TableId};

use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::layout::Hints;
use super::names::Names;
use super::schedule::Placement;
use super::units::{IgnorePairs, Unit, UnitKind};

/// The tables of `gress` named `name`, by their runtime name or the name they are declared
/// under (copies of one table share its name).
pub(crate) fn named(pipe: &Pipeline, gress: Gress, hints: &Hints, name: &str) -> Vec<TableId> {
    let bare = name.strip_prefix('.').unwrap_or(name);
    pipe.tables
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            let declared = hints
                .declared_names
                .iter()
                .any(|(id, n)| id.index() == *i && n == bare);
            t.gress == gress && (t.name == name || t.name == bare || declared)
        })
        .map(|(i, _)| TableId(i as u32))
        .collect()
}

/// Resolves the annotations of `gress`'s tables to pairs, warning about names that match no
/// table (once per annotated table name and value).
pub(crate) fn pairs(
    pi: usize,
    pipe: &Pipeline,
    gress: Gress,
    hints: &Hints,
    issues: &mut Vec<ResourceIssue>,
) -> IgnorePairs {
    let mut out = IgnorePairs::new();
    let mut warned: BTreeSet<(String, String)> = BTreeSet::new();
    for d in &hints.ignore_deps {
        let Some(t) = pipe.tables.get(d.table.index()) else {
            continue;
        };
        if t.gress != gress {
            continue;
        }
        let others = named(pipe, gress, hints, &d.other);
        if others.is_empty() {
            if warned.insert((t.name.clone(), d.other.clone())) {
                let on = if d.on_control {
                    " (on the control declaring it)"
                } else {
                    ""
                };
                issues.push(ResourceIssue::warning(
                    IssueKind::EmulatorOnly,
                    ObjectRef::Table(pi, d.table),
                    format!(
                        "`@ignore_table_dependency(\"{}\")`{on} on table `{}` names no {gress} table; ignored",
                        d.other, t.name
                    ),
                ));
            }
            continue;
        }
        // A table naming itself (a control's annotation reaching the table it names) drops
        // nothing, not even between copies of that table.
        for o in others {
            if pipe.tables.get(o.index()).is_some_and(|x| x.name != t.name) {
                out.insert((d.table, o));
                out.insert((o, d.table));
            }
        }
    }
    out
}

/// Warnings for dropped dependencies whose two tables ended up in one stage.
pub(crate) fn same_stage(
    pi: usize,
    units: &[Unit],
    names: &Names<'_>,
    pl: &Placement,
) -> Vec<ResourceIssue> {
    let mut out = Vec::new();
    let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (b, u) in units.iter().enumerate() {
        for d in &u.ignored {
            let (Some(sa), Some(sb)) = (pl.stage_of.get(d.on), pl.stage_of.get(b)) else {
                continue;
            };
            if sa != sb || !seen.insert((d.on, b)) {
                continue;
            }
            let UnitKind::Table(t) = u.kind else {
                continue;
            };
            let loc = d.loc.map(|l| names.loc(l)).unwrap_or_default();
            out.push(
                ResourceIssue::warning(
                    IssueKind::EmulatorOnly,
                    ObjectRef::Table(pi, t),
                    format!(
                        "`{}` shares stage {sa} with `{}` although it has a {} dependency on it through `{loc}`, dropped by `@ignore_table_dependency`",
                        u.label,
                        units[d.on].label,
                        d.kind.word()
                    ),
                )
                .with_note("pisa runs the two tables in program order, so the second sees what the first wrote; on the hardware, tables of one stage read the values from before the stage"),
            );
        }
    }
    out
}

//! An action profile shared by tables that can both run for one packet. Intel's SDE supports
//! sharing a profile only between mutually exclusive tables (its `tna_action_profile`
//! example): the profile's action data sits in one stage and is read once per packet. pisa runs
//! such a program, so it is a warning.

use pipeline::ir::{Pipeline, TableId};

use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::units::{exclusive, Unit, UnitKind};

/// Warns, per profile, about its first two tables applied on one path through the units.
pub(crate) fn check(pipe: &Pipeline, pi: usize, units: &[Unit]) -> Vec<ResourceIssue> {
    let name = |t: TableId| pipe.tables.get(t.index()).map_or("?", |t| t.name.as_str());
    let mut out = Vec::new();
    for ap in pipe.action_profiles.iter().filter(|ap| ap.tables.len() > 1) {
        let applies: Vec<(TableId, usize)> = units
            .iter()
            .enumerate()
            .filter_map(|(i, u)| match u.kind {
                UnitKind::Table(t) if ap.tables.contains(&t) => Some((t, i)),
                _ => None,
            })
            .collect();
        let pair = applies.iter().enumerate().find_map(|(x, &(ta, a))| {
            applies[x + 1..]
                .iter()
                .find(|&&(tb, b)| tb != ta && !exclusive(&units[a], &units[b]))
                .map(|&(tb, _)| (ta, tb))
        });
        if let Some((ta, tb)) = pair {
            out.push(
                ResourceIssue::warning(
                    IssueKind::EmulatorOnly,
                    ObjectRef::Table(pi, tb),
                    format!(
                        "action profile `{}` is shared by tables `{}` and `{}`, which can both \
                         run for one packet",
                        ap.name,
                        name(ta),
                        name(tb)
                    ),
                )
                .with_note("Intel's SDE supports sharing an action profile only between mutually exclusive tables: its action data lives in one stage; pisa runs both lookups")
                .with_help("apply the tables in exclusive branches, or give each its own profile"),
            );
        }
    }
    out
}

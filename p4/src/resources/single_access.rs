//! One access per register per packet pass: a Tofino register sits behind one stateful ALU,
//! which runs one RegisterAction per packet, so two `execute`s of one register may not both be
//! reachable on one path through a gress.
//!
//! Accesses in mutually exclusive places are fine: the then/else of one `if`, different
//! outcomes of one table, different actions of one table. Inside one action or one run of
//! control statements, two executes of one register are a conflict (if/else *inside* an action
//! is not told apart; bf-p4c rejects most of those anyway).

use std::collections::BTreeMap;

use pipeline::ir::{Pipeline, RegisterActionId, RegisterId};

use super::effects::{Collector, Effects};
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::units::{exclusive, Unit, UnitKind};

fn register_of(pipe: &Pipeline, ra: RegisterActionId) -> Option<RegisterId> {
    pipe.register_actions.get(ra.index()).map(|r| r.register)
}

fn ra_name(pipe: &Pipeline, ra: RegisterActionId) -> String {
    pipe.register_actions
        .get(ra.index())
        .map_or_else(|| format!("RegisterAction#{}", ra.0), |r| r.name.clone())
}

fn issue(
    pipe: &Pipeline,
    pi: usize,
    reg: RegisterId,
    first: (RegisterActionId, &str),
    second: (RegisterActionId, &str),
) -> ResourceIssue {
    let rname = pipe
        .registers
        .get(reg.index())
        .map_or_else(|| format!("register#{}", reg.0), |r| r.name.clone());
    ResourceIssue::error(
        IssueKind::RegisterAccessedTwice,
        ObjectRef::RegisterAction(pi, second.0),
        format!(
            "register `{rname}` is accessed twice in one pass: by `{}` in {} and by `{}` in {}",
            ra_name(pipe, first.0),
            first.1,
            ra_name(pipe, second.0),
            second.1
        ),
    )
    .with_note("a Tofino register is served by one stateful ALU, which runs one RegisterAction per packet; the emulator counts a second access as a program error")
    .with_help("merge the two RegisterActions into one, or make the accesses mutually exclusive (if/else branches, or different actions of one table)")
}

/// Registers each unit accesses (first RegisterAction seen), reporting conflicts inside units.
fn unit_accesses(
    pipe: &Pipeline,
    pi: usize,
    col: &mut Collector<'_>,
    u: &Unit,
    out: &mut Vec<ResourceIssue>,
) -> BTreeMap<RegisterId, RegisterActionId> {
    let mut acc = BTreeMap::new();
    let seq = |list: &[RegisterActionId],
               acc: &mut BTreeMap<RegisterId, RegisterActionId>,
               out: &mut Vec<ResourceIssue>,
               whole: &mut BTreeMap<RegisterId, RegisterActionId>| {
        for ra in list {
            let Some(r) = register_of(pipe, *ra) else {
                continue;
            };
            if let Some(prev) = acc.get(&r) {
                let at = format!("`{}`", u.label);
                out.push(issue(pipe, pi, r, (*prev, &at), (*ra, &at)));
            } else {
                acc.insert(r, *ra);
            }
            whole.entry(r).or_insert(*ra);
        }
    };
    match &u.kind {
        UnitKind::Table(t) => {
            let Some(table) = pipe.tables.get(t.index()) else {
                return acc;
            };
            let mut whole = BTreeMap::new();
            for a in &table.actions {
                let mut fx = Effects::default();
                col.action(a.action, &mut fx);
                let mut one = BTreeMap::new();
                seq(&fx.register_actions, &mut one, out, &mut whole);
            }
            whole
        }
        _ => {
            let mut whole = BTreeMap::new();
            seq(&u.fx.register_actions, &mut acc, out, &mut whole);
            whole
        }
    }
}

/// Reports every register executed twice on one path through the units of one gress.
pub(crate) fn check(
    pipe: &Pipeline,
    phv: &pipeline::ir::PhvLayout,
    pi: usize,
    units: &[Unit],
) -> Vec<ResourceIssue> {
    let mut out = Vec::new();
    let mut col = Collector::new(pipe, phv);
    let per_unit: Vec<_> = units
        .iter()
        .map(|u| unit_accesses(pipe, pi, &mut col, u, &mut out))
        .collect();
    // Only units that access one register are compared: per register, its first pair of
    // accesses on one path (by the later unit, then the earlier), reported in that order.
    let mut by_register: BTreeMap<RegisterId, Vec<usize>> = BTreeMap::new();
    for (u, acc) in per_unit.iter().enumerate() {
        for r in acc.keys() {
            by_register.entry(*r).or_default().push(u);
        }
    }
    let mut found: Vec<(usize, usize, RegisterId)> = by_register
        .iter()
        .filter_map(|(r, users)| {
            users.iter().enumerate().find_map(|(i, &b)| {
                users[..i]
                    .iter()
                    .find(|&&a| !exclusive(&units[a], &units[b]))
                    .map(|&a| (b, a, *r))
            })
        })
        .collect();
    found.sort_unstable();
    for (b, a, r) in found {
        let (la, lb) = (
            format!("`{}`", units[a].label),
            format!("`{}`", units[b].label),
        );
        out.push(issue(
            pipe,
            pi,
            r,
            (per_unit[a][&r], &la),
            (per_unit[b][&r], &lb),
        ));
    }
    out
}

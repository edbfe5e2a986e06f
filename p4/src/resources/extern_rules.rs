//! Rules bf-p4c enforces on how externs are used, beyond stage resources:
//! - a register has at most four RegisterActions (its stateful ALU holds four instructions;
//!   a Tofino 2 overflow or underflow handler takes one too);
//! - an indirect counter is addressed the same way by every `count` (its statistics ALU takes
//!   its address from one source: one field, or one action-data / hash index).

use std::collections::{BTreeMap, BTreeSet};

use pipeline::ir::{CounterId, Expr, Pipeline, RegisterId, Stmt, TableBranches};

use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::names::Names;
use super::units::Unit;

/// RegisterActions a stateful ALU holds.
const MAX_REGISTER_ACTIONS: usize = 4;

/// Registers executed through more RegisterActions than a stateful ALU holds (by the units of
/// one gress).
pub(crate) fn register_actions(pipe: &Pipeline, pi: usize, units: &[Unit]) -> Vec<ResourceIssue> {
    let mut per_reg: BTreeMap<RegisterId, BTreeSet<u32>> = BTreeMap::new();
    for u in units {
        for ra in &u.fx.register_actions {
            if let Some(r) = pipe.register_actions.get(ra.index()) {
                per_reg.entry(r.register).or_default().insert(ra.0);
            }
        }
    }
    // Each overflow / underflow handler is an instruction of its own (bf-asm
    // `slog_overflow_instruction` names one of the ALU's instructions).
    let handlers = |i: &u32| {
        pipe.register_actions.get(*i as usize).map_or(0, |x| {
            usize::from(x.overflow.is_some()) + usize::from(x.underflow.is_some())
        })
    };
    per_reg
        .into_iter()
        .filter(|(_, ras)| ras.len() + ras.iter().map(handlers).sum::<usize>() > MAX_REGISTER_ACTIONS)
        .map(|(r, ras)| {
            let name = pipe.registers.get(r.index()).map_or("?", |x| x.name.as_str());
            let ra_names: Vec<&str> = ras
                .iter()
                .filter_map(|i| pipe.register_actions.get(*i as usize))
                .map(|x| x.name.as_str())
                .collect();
            let extra = ras.iter().map(handlers).sum::<usize>();
            let with = if extra > 0 {
                format!(" and {extra} overflow/underflow handler(s)")
            } else {
                String::new()
            };
            ResourceIssue::error(
                IssueKind::SaluTooComplex,
                ObjectRef::Register(pi, r),
                format!(
                    "register `{name}` is used by {} RegisterActions ({}){with}; a stateful ALU holds {MAX_REGISTER_ACTIONS}",
                    ras.len(),
                    ra_names.join(", ")
                ),
            )
            .with_help("merge RegisterActions that differ only in a constant (pass it in the index or a field)")
        })
        .collect()
}

/// Every `count(index)` of every indirect counter, in the actions and control bodies.
fn counts<'a>(b: &'a [Stmt], out: &mut Vec<(CounterId, &'a Expr)>) {
    for s in b {
        match s {
            Stmt::Count { counter, index } => out.push((*counter, index)),
            Stmt::If { then, els, .. } => {
                counts(then, out);
                counts(els, out);
            }
            Stmt::ApplyTable { branches, .. } => match branches {
                TableBranches::None => {}
                TableBranches::HitMiss { hit, miss } => {
                    counts(hit, out);
                    counts(miss, out);
                }
                TableBranches::ActionRun { cases, default } => {
                    for (_, c) in cases {
                        counts(c, out);
                    }
                    counts(default, out);
                }
            },
            _ => {}
        }
    }
}

/// Indirect counters indexed by different expressions in different places.
pub(crate) fn counter_addressing(pipe: &Pipeline, pi: usize) -> Vec<ResourceIssue> {
    let mut all = Vec::new();
    for a in &pipe.actions {
        counts(&a.body, &mut all);
    }
    counts(&pipe.ingress.control.body, &mut all);
    counts(&pipe.egress.control.body, &mut all);
    let mut first: BTreeMap<CounterId, &Expr> = BTreeMap::new();
    let mut issues = Vec::new();
    let mut reported = BTreeSet::new();
    for (c, index) in all {
        let f = *first.entry(c).or_insert(index);
        // Constants are action data: any mix of them is one source.
        let both_const = matches!(f, Expr::Const { .. }) && matches!(index, Expr::Const { .. });
        if f == index || both_const || !reported.insert(c) {
            continue;
        }
        let Some(counter) = pipe.counters.get(c.index()) else {
            continue;
        };
        let names = Names::new(pipe, &pipe.ingress.phv);
        issues.push(
            ResourceIssue::error(
                IssueKind::SaluTooComplex,
                ObjectRef::Counter(pi, c),
                format!(
                    "counter `{}` is indexed by `{}` in one place and by `{}` in another; its \
                     statistics ALU takes its address from one source",
                    counter.name,
                    names.expr(f),
                    names.expr(index)
                ),
            )
            .with_help(
                "index it the same way everywhere (copy the index into one metadata field first)",
            ),
        );
    }
    issues
}

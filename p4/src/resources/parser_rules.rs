//! Rules of Tofino's parser that bf-p4c enforces: on Tofino 1 a parser writes a field at most
//! once on any path through the parse graph (its extractors deposit into a PHV container once
//! per packet; Tofino 2 can overwrite). Writes of the constant 0 are not counted: metadata
//! starts at zero, and bf-p4c drops such initialisations. A write inside a loop (a header stack
//! parsed state by state) is left alone: bf-p4c unrolls those loops and may place the writes
//! apart, which is not modelled here, and refusing what bf-p4c accepts would be wrong too.
//! A `ParserCounter` (lowered onto a word named `<instance>.$counter`) is the parser's own
//! counter, written as often as the program likes. A later write of the all-ones constant
//! (`flag = true` after the field was extracted) is allowed: the Tofino 1 extractors OR into
//! the container, and OR with all ones gives what an overwrite would (bf-p4c accepts it; the
//! SDE switch program's egress parser does this with `bypass_egress`).

use std::collections::BTreeSet;

use pipeline::ir::{Expr, FieldRef, Gress, NextState, Parser, Place, Stmt, Target, Transition};

use super::effects::Loc;
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::names::Names;

/// A field as an ordered key (offset, width).
type Key = (u32, u16);

fn key(f: FieldRef) -> Key {
    (f.offset, f.width)
}

/// The field a statement writes, unless it writes the constant 0.
fn written(s: &Stmt) -> Option<Key> {
    match s {
        Stmt::Assign {
            value: Expr::Const { value: 0, .. },
            ..
        } => None,
        Stmt::Assign {
            dst: Place::Field(f),
            ..
        } => Some(key(*f)),
        Stmt::Assign {
            dst: Place::FieldSlice { field, .. },
            ..
        } => Some(key(*field)),
        _ => None,
    }
}

/// True when a statement writes the all-ones constant into the whole place it writes.
fn writes_ones(s: &Stmt) -> bool {
    let Stmt::Assign {
        dst,
        value: Expr::Const { value, .. },
    } = s
    else {
        return false;
    };
    let width = match dst {
        Place::Field(f) => f.width,
        Place::FieldSlice { hi, lo, .. } => hi.saturating_sub(*lo) + 1,
        _ => return false,
    };
    let ones = if width >= 128 {
        u128::MAX
    } else {
        (1u128 << width) - 1
    };
    *value == ones
}

/// The fields a state's body writes.
fn writes(body: &[Stmt]) -> BTreeSet<Key> {
    body.iter().filter_map(written).collect()
}

/// The fields a state's body writes with a value other than all ones: a write that follows
/// another write of the field is exact only when it writes all ones.
fn overwrites(body: &[Stmt]) -> BTreeSet<Key> {
    body.iter()
        .filter(|s| !writes_ones(s))
        .filter_map(written)
        .collect()
}

fn successors(p: &Parser, s: usize) -> Vec<usize> {
    let Some(st) = p.states.get(s) else {
        return Vec::new();
    };
    let next: Vec<&NextState> = match &st.transition {
        Transition::Direct(n) => vec![n],
        Transition::Select { cases, default, .. } => {
            cases.iter().map(|c| &c.next).chain([default]).collect()
        }
    };
    next.into_iter()
        .filter_map(|n| match n {
            NextState::State(id) => Some(id.index()),
            _ => None,
        })
        .collect()
}

/// Per state, the states reachable from it by one or more transitions.
fn reach(p: &Parser) -> Vec<BTreeSet<usize>> {
    let n = p.states.len();
    let mut out = Vec::with_capacity(n);
    for s in 0..n {
        let mut seen = BTreeSet::new();
        let mut todo = successors(p, s);
        while let Some(x) = todo.pop() {
            if x < n && seen.insert(x) {
                todo.extend(successors(p, x));
            }
        }
        out.push(seen);
    }
    out
}

/// Tofino 1: fields a parser can write twice on one path (one issue per field).
pub(crate) fn check(
    pi: usize,
    gress: Gress,
    p: &Parser,
    names: &Names<'_>,
    target: Target,
) -> Vec<ResourceIssue> {
    if target != Target::Tofino1 {
        return Vec::new();
    }
    let w: Vec<BTreeSet<Key>> = p.states.iter().map(|s| writes(&s.body)).collect();
    let ow: Vec<BTreeSet<Key>> = p.states.iter().map(|s| overwrites(&s.body)).collect();
    let r = reach(p);
    let mut reported = BTreeSet::new();
    let mut issues = Vec::new();
    for (a, wa) in w.iter().enumerate() {
        // Twice within one state's body.
        let mut seen = BTreeSet::new();
        let mut pairs: Vec<(Key, usize)> = Vec::new();
        for st in &p.states[a].body {
            if let Some(f) = written(st) {
                if !seen.insert(f) && !writes_ones(st) {
                    pairs.push((f, a));
                }
            }
        }
        for b in r[a].iter().filter(|b| **b != a) {
            pairs.extend(wa.intersection(&ow[*b]).map(|f| (*f, *b)));
        }
        for (f, b) in pairs {
            let name = names.loc(Loc::field(FieldRef {
                offset: f.0,
                width: f.1,
            }));
            // A ParserCounter's word is the parser's counter, not a PHV container.
            if name.ends_with(".$counter") || !reported.insert(f) {
                continue;
            }
            let (sa, sb) = (&p.states[a].name, &p.states[b].name);
            let wher = if a == b {
                format!("twice in state `{sa}`")
            } else {
                format!("in state `{sa}` and again in `{sb}`, which follows it")
            };
            issues.push(
                ResourceIssue::error(
                    IssueKind::ParserRule,
                    ObjectRef::ParserState {
                        pipeline: pi,
                        gress,
                        state: b,
                    },
                    format!(
                        "the {gress} parser writes `{name}` {wher}: a Tofino 1 parser writes a field at most once per packet",
                    ),
                )
                .with_help("write it once (compute the value in the control), or target Tofino 2"),
            );
        }
    }
    issues
}

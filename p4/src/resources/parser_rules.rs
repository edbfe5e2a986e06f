//! Rules of Tofino's parser that bf-p4c enforces: on Tofino 1 a parser writes a field at most
//! once on any path through the parse graph (its extractors deposit into a PHV container once
//! per packet; Tofino 2 can overwrite). Writes of the constant 0 are not counted: metadata
//! starts at zero, and bf-p4c drops such initialisations. A write inside a loop (a header stack
//! parsed state by state) is left alone: bf-p4c unrolls those loops and may place the writes
//! apart, which is not modelled here, and refusing what bf-p4c accepts would be wrong too.
//! A `ParserCounter` (lowered onto a word named `<instance>.$counter`) is the parser's own
//! counter, written as often as the program likes.

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

/// The fields a state's body writes.
fn writes(body: &[Stmt]) -> BTreeSet<Key> {
    body.iter().filter_map(written).collect()
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
    let r = reach(p);
    let mut reported = BTreeSet::new();
    let mut issues = Vec::new();
    for (a, wa) in w.iter().enumerate() {
        // Twice within one state's body.
        let twice_here = p.states[a].body.iter().filter_map(written);
        let mut seen = BTreeSet::new();
        let mut pairs: Vec<(Key, usize)> = twice_here
            .filter(|f| !seen.insert(*f))
            .map(|f| (f, a))
            .collect();
        for b in r[a].iter().filter(|b| **b != a) {
            pairs.extend(wa.intersection(&w[*b]).map(|f| (*f, *b)));
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

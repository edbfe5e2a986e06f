//! The parse depth limit bf-p4c enforces (its ParserEnforceDepthReq pass): on Tofino 1 the
//! egress parser may not read more than 160 bytes along any path from `start` (the hardware's
//! egress parse window; the ingress parser and Tofino 2 have no such limit). A state counts the
//! bytes it extracts (a header with a varbit field at its largest) and advances by a constant;
//! a state that extracts into a header stack on a loop counts once per element, as bf-p4c
//! counts a loop by its depth. An advance by a run-time amount cannot be bounded, which
//! bf-p4c refuses too. A parser that reads nothing is bypassed and not checked.

use pipeline::ir::{Expr, Gress, NextState, Parser, PhvLayout, Stmt, Target, Transition};

use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use crate::diag::Severity;

/// The longest path the Tofino 1 egress parser may take, in bytes.
pub const TOFINO1_EGRESS_MAX_DEPTH: u64 = 160;

/// Most state visits of the walk (it recurses once per visit, so this also bounds its stack);
/// a parser is far smaller (Tofino's parser TCAM has 256 rows), a larger one is measured
/// along the paths visited first.
const MAX_VISITS: usize = 4096;

/// The states a transition out of `s` may enter (with repeats, in case order).
pub(super) fn next_states(p: &Parser, s: usize) -> Vec<usize> {
    let Some(st) = p.states.get(s) else {
        return Vec::new();
    };
    let next: Vec<NextState> = match &st.transition {
        Transition::Direct(n) => vec![*n],
        Transition::Select { cases, default, .. } => {
            cases.iter().map(|c| c.next).chain([*default]).collect()
        }
    };
    next.into_iter()
        .filter_map(|n| match n {
            NextState::State(id) if id.index() < p.states.len() => Some(id.index()),
            _ => None,
        })
        .collect()
}

/// Bits a state's body reads and whether it extracts into a stack; `Err` with the first
/// advance by a run-time amount.
fn state_bits(body: &[Stmt], phv: &PhvLayout) -> Result<(u64, Option<u64>), ()> {
    let header = |h: usize| phv.headers.get(h).map_or(0, |i| u64::from(i.byte_len) * 8);
    let mut bits = 0;
    let mut stack = None;
    for s in body {
        bits += match s {
            Stmt::Extract(h) | Stmt::ExtractVarbit { header: h, .. } => header(h.index()),
            Stmt::ExtractNext(st) => {
                let info = phv.stacks.get(st.index());
                stack = info.map(|i| i.elements.len() as u64);
                info.and_then(|i| i.elements.first())
                    .map_or(0, |h| header(h.index()))
            }
            Stmt::Advance(Expr::Const { value, .. }) => u64::try_from(*value).unwrap_or(u64::MAX),
            Stmt::Advance(_) => return Err(()),
            _ => 0,
        };
    }
    Ok((bits, stack))
}

/// Longest path in bytes from `s`, loops taken once (a stack state's loop by its depth).
fn longest(
    p: &Parser,
    s: usize,
    size: &[u64],
    on_path: &mut Vec<bool>,
    memo: &mut Vec<Option<(u64, usize)>>,
    budget: &mut usize,
) -> (u64, usize) {
    if let Some(m) = memo[s] {
        return m;
    }
    on_path[s] = true;
    let mut best = (0, s);
    for n in next_states(p, s) {
        if on_path[n] || *budget == 0 {
            continue;
        }
        *budget -= 1;
        let (d, last) = longest(p, n, size, on_path, memo, budget);
        if d > best.0 {
            best = (d, last);
        }
    }
    on_path[s] = false;
    let r = (size[s].saturating_add(best.0), best.1);
    memo[s] = Some(r);
    r
}

/// Tofino 1's egress parse depth: an issue when the longest path is deeper than 160 bytes, or
/// when a state advances by a run-time amount. With `disabled` (bf-p4c's
/// `--disable-parse-depth-limit`) the issue is a warning.
pub(crate) fn check(
    pi: usize,
    gress: Gress,
    p: &Parser,
    phv: &PhvLayout,
    target: Target,
    disabled: bool,
) -> Vec<ResourceIssue> {
    let mut issues = over_limit(pi, gress, p, phv, target);
    if disabled {
        for i in &mut issues {
            i.severity = Severity::Warning;
            i.help.clear();
            i.notes.push("not enforced: --disable-parse-depth-limit, as bf-p4c's flag of that name (the SDE's Tofino 1 switch profiles are built with it); pisa parses every path as written".into());
        }
    }
    issues
}

fn over_limit(
    pi: usize,
    gress: Gress,
    p: &Parser,
    phv: &PhvLayout,
    target: Target,
) -> Vec<ResourceIssue> {
    if target != Target::Tofino1 || gress != Gress::Egress || p.states.is_empty() {
        return Vec::new();
    }
    let object = |state| ObjectRef::ParserState {
        pipeline: pi,
        gress,
        state,
    };
    let mut size = Vec::with_capacity(p.states.len());
    let mut reads = false;
    for (i, st) in p.states.iter().enumerate() {
        let Ok((bits, stack)) = state_bits(&st.body, phv) else {
            return vec![ResourceIssue::error(
                IssueKind::ParserRule,
                object(i),
                format!(
                    "state `{}` of the egress parser advances by a run-time amount: a Tofino 1 egress parser reads at most {TOFINO1_EGRESS_MAX_DEPTH} bytes, which bf-p4c must be able to bound",
                    st.name
                ),
            )
            .with_help("advance by a constant, or parse the variable part with a select on its length")];
        };
        reads |= st.body.iter().any(|s| {
            matches!(
                s,
                Stmt::Extract(_)
                    | Stmt::ExtractVarbit { .. }
                    | Stmt::ExtractNext(_)
                    | Stmt::Advance(_)
            )
        });
        // A stack state on a loop runs once per element.
        let loops = stack.filter(|_| next_states(p, i).contains(&i) || on_cycle(p, i));
        size.push(bits.div_ceil(8).saturating_mul(loops.unwrap_or(1)));
    }
    if !reads {
        return Vec::new();
    }
    let n = p.states.len();
    let start = p.start.index().min(n - 1);
    let mut budget = MAX_VISITS;
    let (depth, last) = longest(
        p,
        start,
        &size,
        &mut vec![false; n],
        &mut vec![None; n],
        &mut budget,
    );
    if depth <= TOFINO1_EGRESS_MAX_DEPTH {
        return Vec::new();
    }
    vec![ResourceIssue::error(
        IssueKind::ParserRule,
        object(last),
        format!(
            "the egress parser's longest path, from `{}` to `{}`, reads {depth} bytes: a Tofino 1 egress parser reads at most {TOFINO1_EGRESS_MAX_DEPTH}",
            p.states[start].name, p.states[last].name
        ),
    )
    .with_help("parse fewer headers in egress (bridge what egress needs from ingress), or target Tofino 2")]
}

/// Whether state `s` can reach itself.
fn on_cycle(p: &Parser, s: usize) -> bool {
    let mut seen = vec![false; p.states.len()];
    let mut todo = next_states(p, s);
    while let Some(x) = todo.pop() {
        if x == s {
            return true;
        }
        if !std::mem::replace(&mut seen[x], true) {
            todo.extend(next_states(p, x));
        }
    }
    false
}

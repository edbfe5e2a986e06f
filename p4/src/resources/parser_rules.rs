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

/// Per state, the states reachable from it by one or more transitions, one bit set per state
/// (a chain of thousands of states stays a few megabytes, where sets of indices grew with the
/// square of its length).
struct Reach {
    words: usize,
    bits: Vec<u64>,
}

impl Reach {
    fn new(p: &Parser) -> Reach {
        let n = p.states.len();
        let succ: Vec<Vec<usize>> = (0..n)
            .map(|s| successors(p, s).into_iter().filter(|x| *x < n).collect())
            .collect();
        Reach::of_graph(&succ)
    }

    /// From each state's successors (all below `succ.len()`).
    fn of_graph(succ: &[Vec<usize>]) -> Reach {
        let n = succ.len();
        let words = n.div_ceil(64);
        let mut r = Reach {
            words,
            bits: vec![0; n * words],
        };
        match successors_first(succ) {
            // Without loops: a state reaches its successors and all they reach.
            Some(order) => {
                for s in order {
                    for &x in &succ[s] {
                        r.set(s, x);
                        r.or_row(s, x);
                    }
                }
            }
            // With loops (header stacks): a search from each state.
            None => {
                for s in 0..n {
                    let mut todo = succ[s].clone();
                    while let Some(x) = todo.pop() {
                        if !r.has(s, x) {
                            r.set(s, x);
                            todo.extend(&succ[x]);
                        }
                    }
                }
            }
        }
        r
    }

    fn has(&self, s: usize, x: usize) -> bool {
        self.bits[s * self.words + x / 64] & (1 << (x % 64)) != 0
    }

    fn set(&mut self, s: usize, x: usize) {
        self.bits[s * self.words + x / 64] |= 1 << (x % 64);
    }

    /// Row `s` |= row `x`.
    fn or_row(&mut self, s: usize, x: usize) {
        for w in 0..self.words {
            self.bits[s * self.words + w] |= self.bits[x * self.words + w];
        }
    }

    /// The states `s` reaches, ascending.
    fn of(&self, s: usize) -> impl Iterator<Item = usize> + '_ {
        self.bits[s * self.words..(s + 1) * self.words]
            .iter()
            .enumerate()
            .flat_map(|(w, &bits)| {
                (0..64)
                    .filter(move |b| bits & (1 << b) != 0)
                    .map(move |b| w * 64 + b)
            })
    }
}

/// The states ordered so that each comes after every state it can go to; `None` when the
/// transitions loop.
fn successors_first(succ: &[Vec<usize>]) -> Option<Vec<usize>> {
    let n = succ.len();
    let mut pending: Vec<usize> = succ.iter().map(Vec::len).collect();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (s, next) in succ.iter().enumerate() {
        for &x in next {
            preds[x].push(s);
        }
    }
    let mut ready: Vec<usize> = (0..n).filter(|s| pending[*s] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(s) = ready.pop() {
        order.push(s);
        for &q in &preds[s] {
            pending[q] -= 1;
            if pending[q] == 0 {
                ready.push(q);
            }
        }
    }
    (order.len() == n).then_some(order)
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
    let r = Reach::new(p);
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
        for b in r.of(a).filter(|b| *b != a) {
            pairs.extend(wa.intersection(&ow[b]).map(|f| (*f, b)));
        }
        for (f, b) in pairs {
            let name = names.loc(Loc::field(FieldRef {
                offset: f.0,
                width: f.1,
            }));
            // A ParserCounter's word is the parser's counter, not a PHV container.
            // The hidden `$nextIndex` of a stack is the parser's own count too (bf-p4c resolves
            // `.next` to constant indices or strides the state): pisa sets it per state.
            if name.ends_with(".$counter") || name.ends_with(".$nextIndex") || !reported.insert(f) {
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

#[cfg(test)]
mod tests {
    use super::Reach;

    /// The bit sets agree with a plain search from every state, with and without loops.
    #[test]
    fn reach_matches_a_search_from_every_state() {
        let mut seed = 7u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        for case in 0..60 {
            let n = 1 + next() % 150;
            let succ: Vec<Vec<usize>> = (0..n)
                .map(|s| {
                    (0..next() % 3)
                        .map(|_| {
                            let x = next() % n;
                            // Half the graphs only go forward (no loops).
                            if case % 2 == 0 && x <= s {
                                (s + 1 + x) % n.max(s + 2)
                            } else {
                                x
                            }
                        })
                        .filter(|x| *x < n)
                        .collect()
                })
                .collect();
            let r = Reach::of_graph(&succ);
            for s in 0..n {
                let mut seen = std::collections::BTreeSet::new();
                let mut todo = succ[s].clone();
                while let Some(x) = todo.pop() {
                    if seen.insert(x) {
                        todo.extend(&succ[x]);
                    }
                }
                assert_eq!(
                    r.of(s).collect::<Vec<_>>(),
                    seen.into_iter().collect::<Vec<_>>()
                );
            }
        }
    }
}

//! Header and stack indices resolved per parser state, as bf-p4c resolves them before it lowers
//! a parser (`parde/extract_parser.cpp`, `createBackendParser` and `convertState`/`convertBody`).
//!
//! - A plain header counts as a stack of one. A state that extracts a header already extracted
//!   by a state before it on the parse path is dropped: the transition into it ends the parse,
//!   the header keeps its first value and the bytes stay payload.
//! - In a parse graph without loops, `stack.next` and `stack.last` become one constant index per
//!   state, from the states that precede it (the closest extract of the stack on the graph, not
//!   the packet's path). Where different indices reach a state, bf-p4c strides it and the index
//!   is counted at run time (pisa's `$nextIndex`). A state whose index falls outside the stack
//!   (`.next` on a full stack, `.last` before any extract) is dropped as above; bf-p4c then
//!   retries it from the states of the path it is converting, first path first.
//!
//! The constant index is given to the run-time counter at the state's entry, so `extract(.next)`
//! and `.last` of every engine use it; the dropped states become `reject` edges (the end of the
//! parse with no error, as a full stack ends it at run time). Graphs with loops keep the
//! run-time count (bf-p4c unrolls them), only the plain-header rule applies to them.

use pipeline::ir::{self, Expr, FieldRef, HeaderId, NextState, Place, Stmt, Target, Transition};

use super::Lowerer;
use crate::diag::Diagnostic;
use crate::source::Span;

/// A stack as the parser sees it: its counter and size (union member stacks share a counter).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stack {
    next_index: FieldRef,
    size: u32,
}

/// What one state does with one stack.
#[derive(Clone, Copy)]
struct StackUse {
    stack: usize,
    /// `extract(stack.next)` calls.
    nexts: u32,
    /// `.last` (a read of the counter) before the first `.next`, or in the select with none.
    last_first: bool,
    /// Any read of the counter (`.last`, `.lastIndex`).
    reads: bool,
    /// The highest element extracted by a constant index.
    const_max: Option<u32>,
}

impl StackUse {
    /// The element index bf-p4c's `GetHeaderStackIndex` finds in the state once its first
    /// `.next` is `k` (-1: the state does not touch the stack).
    fn rv(&self, k: i64) -> i64 {
        let mut rv = -1;
        if self.nexts > 0 {
            rv = k + i64::from(self.nexts) - 1;
        } else if self.reads {
            rv = k - 1;
        }
        rv.max(self.const_max.map_or(-1, i64::from))
    }

    /// Whether index `k` keeps every reference inside the stack.
    fn fits(&self, k: i64, size: u32) -> bool {
        let top = k + i64::from(self.nexts) - 1;
        !(self.nexts > 0 && top >= i64::from(size) || self.last_first && k < 1)
    }
}

/// What a state extracts.
#[derive(Default, Clone)]
struct Uses {
    plain: Vec<HeaderId>,
    stacks: Vec<StackUse>,
}

impl Uses {
    fn stack(&self, s: usize) -> Option<&StackUse> {
        self.stacks.iter().find(|u| u.stack == s)
    }
}

/// Why a state was dropped.
enum Dropped {
    Again(HeaderId, usize),
    Full(usize),
    LastEmpty(usize),
}

struct Graph<'p> {
    stacks: Vec<Stack>,
    uses: Vec<Uses>,
    succs: Vec<Vec<usize>>,
    layout: &'p ir::PhvLayout,
}

/// Parsers with more states than this are not resolved per state (see [`resolve`]).
const MAX_RESOLVED_STATES: usize = 1024;

/// Resolves `parser` as bf-p4c does (see the module doc), warning where that differs from P4.
pub(super) fn resolve(
    l: &mut Lowerer<'_>,
    parser: &mut ir::Parser,
    layout: &ir::PhvLayout,
    spans: &[Span],
) {
    let mut stacks: Vec<Stack> = Vec::new();
    let mut elem_of = std::collections::HashMap::new();
    for st in &layout.stacks {
        let s = Stack {
            next_index: st.next_index,
            size: st.elements.len() as u32,
        };
        let i = stacks.iter().position(|x| *x == s).unwrap_or_else(|| {
            stacks.push(s);
            stacks.len() - 1
        });
        for (k, h) in st.elements.iter().enumerate() {
            elem_of.insert(*h, (i, k as u32));
        }
    }
    let n = parser.states.len();
    if n > MAX_RESOLVED_STATES {
        // The static pass is quadratic in the states (and the conversion recurses per state);
        // a parser this large is far past a Tofino's 256 parser TCAM rows: P4's run-time
        // counting is kept, and the resource check refuses it.
        return;
    }
    let uses: Vec<Uses> = parser
        .states
        .iter()
        .map(|s| state_uses(s, &stacks, &elem_of, layout))
        .collect();
    let succs: Vec<Vec<usize>> = parser.states.iter().map(succs_of).collect();
    let g = Graph {
        stacks,
        uses,
        succs,
        layout,
    };
    let start = parser.start.index();
    if start >= n {
        return;
    }
    let topo = topo_order(&g.succs, start);
    let mut fixed: Vec<Option<Vec<(usize, i64)>>> = vec![None; n];
    let mut strided = vec![false; n];
    if let Some(topo) = &topo {
        static_pass(&g, topo, &mut fixed, &mut strided);
    }
    let mut dfs = Dfs {
        g: &g,
        loops: topo.is_none(),
        fixed,
        strided,
        converted: vec![false; n],
        path: Vec::new(),
        dropped: Vec::new(),
        why: (0..n).map(|_| None).collect(),
    };
    dfs.convert(start);
    let Dfs {
        fixed,
        dropped,
        why,
        converted,
        ..
    } = dfs;
    for (from, slot) in &dropped {
        set_edge(
            &mut parser.states[*from].transition,
            *slot,
            NextState::Reject,
        );
    }
    for (s, why) in why.iter().enumerate() {
        if let Some(why) = why {
            warn_dropped(l, parser, &g, s, why, spans);
        }
    }
    for (s, f) in fixed.iter().enumerate() {
        let Some(f) = f.as_ref().filter(|_| converted[s]) else {
            continue;
        };
        // Only where the state counts (`.next`, `.last`): constant indices leave it alone.
        let counts = |k: usize| g.uses[s].stack(k).is_some_and(|u| u.nexts > 0 || u.reads);
        let mut pre: Vec<Stmt> = f
            .iter()
            .filter(|(k, _)| counts(*k))
            .map(|&(k, v)| {
                let ni = g.stacks[k].next_index;
                Stmt::Assign {
                    dst: Place::Field(ni),
                    value: Expr::constant(v as u128, ni.width),
                }
            })
            .collect();
        if !pre.is_empty() {
            pre.append(&mut parser.states[s].body);
            parser.states[s].body = pre;
        }
    }
    if topo.is_some() {
        warn_paths(l, parser, &g, &fixed, &converted, spans);
    }
}

/// The states after `s`, in the order bf-p4c converts them (cases, then the default).
fn succs_of(s: &ir::ParserState) -> Vec<usize> {
    let mut v = Vec::new();
    let mut push = |n: &NextState| {
        if let NextState::State(t) = n {
            v.push(t.index());
        }
    };
    match &s.transition {
        Transition::Direct(n) => push(n),
        Transition::Select { cases, default, .. } => {
            cases.iter().for_each(|c| push(&c.next));
            push(default);
        }
    }
    v
}

/// Sets the `slot`th state target of a transition (in [`succs_of`] order) to `to`.
fn set_edge(t: &mut Transition, slot: usize, to: NextState) {
    let mut i = 0;
    let mut set = |n: &mut NextState| {
        if matches!(n, NextState::State(_)) {
            if i == slot {
                *n = to;
            }
            i += 1;
        }
    };
    match t {
        Transition::Direct(n) => set(n),
        Transition::Select { cases, default, .. } => {
            cases.iter_mut().for_each(|c| set(&mut c.next));
            set(default);
        }
    }
}

/// The states reachable from `start` in a topological order, or `None` when the graph loops.
fn topo_order(succs: &[Vec<usize>], start: usize) -> Option<Vec<usize>> {
    // 0 unseen, 1 on the stack, 2 done.
    let mut mark = vec![0u8; succs.len()];
    let mut post = Vec::new();
    let mut stack = vec![(start, 0usize)];
    mark[start] = 1;
    while let Some((s, i)) = stack.pop() {
        if let Some(&t) = succs[s].get(i) {
            stack.push((s, i + 1));
            match mark.get(t) {
                Some(0) => {
                    mark[t] = 1;
                    stack.push((t, 0));
                }
                Some(1) => return None,
                _ => {}
            }
        } else {
            mark[s] = 2;
            post.push(s);
        }
    }
    post.reverse();
    Some(post)
}

/// Step 2 of `createBackendParser`: in topological order, each state's index from the
/// resolved states before it; a state out of bounds stays unresolved.
fn static_pass(
    g: &Graph<'_>,
    topo: &[usize],
    fixed: &mut [Option<Vec<(usize, i64)>>],
    strided: &mut [bool],
) {
    let n = g.succs.len();
    let mut preds = vec![Vec::new(); n];
    for &s in topo {
        for &t in &g.succs[s] {
            preds[t].push(s);
        }
    }
    let mut anc: Vec<Vec<bool>> = vec![vec![false; n]; n];
    for &s in topo {
        let mut a = vec![false; n];
        for &p in &preds[s] {
            a[p] = true;
            for (x, v) in anc[p].iter().enumerate() {
                a[x] |= *v;
            }
        }
        anc[s] = a;
    }
    let mut resolved = vec![false; n];
    for &s in topo {
        let in_set: Vec<bool> = (0..n).map(|a| anc[s][a] && resolved[a]).collect();
        let set: Vec<usize> = (0..n).filter(|&a| in_set[a]).collect();
        let u = &g.uses[s];
        let mut ok = u
            .plain
            .iter()
            .all(|h| !set.iter().any(|&a| g.uses[a].plain.contains(h)));
        let mut ks = Vec::new();
        for su in &u.stacks {
            let rv = |a: usize| rv_of(g, fixed, strided, a, su.stack);
            let mut reach = std::collections::BTreeMap::<i64, Vec<usize>>::new();
            // After a state whose index is counted at run time, the count stays a run-time
            // one (a constant index here would overwrite what the paths bring).
            let counted = set
                .iter()
                .any(|&a| strided[a] && g.uses[a].stack(su.stack).is_some());
            if counted {
                strided[s] = true;
                continue;
            }
            for &a in &set {
                let r = rv(a);
                if r < 0 {
                    continue;
                }
                let inside: Vec<usize> =
                    g.succs[a].iter().copied().filter(|&t| in_set[t]).collect();
                if inside.is_empty() || inside.iter().any(|&t| rv(t) < 0) {
                    reach.entry(r).or_default().push(a);
                }
            }
            if reach.len() > 1 {
                // Strided: the index is counted at run time from here on.
                for a in reach.values().flatten() {
                    strided[*a] = true;
                }
                strided[s] = true;
                continue;
            }
            let k = reach.keys().next().map_or(0, |r| r + 1);
            ok &= su.fits(k, g.stacks[su.stack].size);
            ks.push((su.stack, k));
        }
        if ok {
            resolved[s] = true;
            fixed[s] = Some(ks);
        }
    }
    for (s, st) in strided.iter().enumerate() {
        if *st {
            fixed[s] = None;
        }
    }
}

/// The element index state `a` references last in stack `k`, as resolved so far.
fn rv_of(
    g: &Graph<'_>,
    fixed: &[Option<Vec<(usize, i64)>>],
    strided: &[bool],
    a: usize,
    k: usize,
) -> i64 {
    let Some(u) = g.uses[a].stack(k) else {
        return -1;
    };
    let base = match (&fixed[a], strided[a]) {
        (_, true) | (None, _) => 0,
        (Some(f), false) => f.iter().find(|(s, _)| *s == k).map_or(0, |(_, v)| *v),
    };
    u.rv(base)
}

/// Step 3: the depth-first conversion from `start`, each state converted on the first path
/// that reaches it with its indices in bounds.
struct Dfs<'g, 'p> {
    g: &'g Graph<'p>,
    loops: bool,
    fixed: Vec<Option<Vec<(usize, i64)>>>,
    strided: Vec<bool>,
    converted: Vec<bool>,
    path: Vec<usize>,
    /// Edges (state, slot) whose target was dropped.
    dropped: Vec<(usize, usize)>,
    /// Why a state was dropped (the last time).
    why: Vec<Option<Dropped>>,
}

impl Dfs<'_, '_> {
    fn convert(&mut self, s: usize) -> bool {
        if self.converted[s] || self.path.contains(&s) {
            return true;
        }
        if let Some(why) = self.check(s) {
            self.why[s] = Some(why);
            return false;
        }
        self.converted[s] = true;
        self.path.push(s);
        let succs = self.g.succs[s].clone();
        for (slot, t) in succs.into_iter().enumerate() {
            if !self.convert(t) {
                self.dropped.push((s, slot));
            }
        }
        self.path.pop();
        true
    }

    /// Why `s` cannot be converted on the current path, resolving its indices when step 2
    /// left them open.
    fn check(&mut self, s: usize) -> Option<Dropped> {
        let u = &self.g.uses[s];
        for h in &u.plain {
            if let Some(&a) = self
                .path
                .iter()
                .find(|&&a| self.g.uses[a].plain.contains(h))
            {
                return Some(Dropped::Again(*h, a));
            }
        }
        if self.loops || self.strided[s] || self.fixed[s].is_some() {
            return None;
        }
        let mut ks = Vec::new();
        for su in &u.stacks {
            let top = self
                .path
                .iter()
                .map(|&a| rv_of(self.g, &self.fixed, &self.strided, a, su.stack))
                .max()
                .unwrap_or(-1);
            let k = top + 1;
            if !su.fits(k, self.g.stacks[su.stack].size) {
                return Some(if su.last_first && k < 1 {
                    Dropped::LastEmpty(su.stack)
                } else {
                    Dropped::Full(su.stack)
                });
            }
            ks.push((su.stack, k));
        }
        self.fixed[s] = Some(ks);
        None
    }
}

/// What state `s` extracts, and how it uses each stack.
fn state_uses(
    s: &ir::ParserState,
    stacks: &[Stack],
    elem_of: &std::collections::HashMap<HeaderId, (usize, u32)>,
    layout: &ir::PhvLayout,
) -> Uses {
    let mut u = Uses::default();
    let at = |u: &mut Uses, k: usize| -> usize {
        if let Some(i) = u.stacks.iter().position(|x| x.stack == k) {
            return i;
        }
        u.stacks.push(StackUse {
            stack: k,
            nexts: 0,
            last_first: false,
            reads: false,
            const_max: None,
        });
        u.stacks.len() - 1
    };
    let stack_of = |id: ir::StackId| {
        let st = layout.stacks.get(id.index())?;
        let s = Stack {
            next_index: st.next_index,
            size: st.elements.len() as u32,
        };
        stacks.iter().position(|x| *x == s)
    };
    let mut walk = Vec::new();
    flatten(&s.body, &mut walk);
    for st in walk {
        match st {
            Stmt::Extract(h) => match elem_of.get(h) {
                Some(&(k, e)) => {
                    let i = at(&mut u, k);
                    let c = &mut u.stacks[i].const_max;
                    *c = Some(c.map_or(e, |m| m.max(e)));
                }
                None => {
                    if !u.plain.contains(h) {
                        u.plain.push(*h);
                    }
                }
            },
            Stmt::ExtractNext(id) => {
                if let Some(k) = stack_of(*id) {
                    let i = at(&mut u, k);
                    u.stacks[i].nexts += 1;
                }
            }
            other => {
                for (k, stk) in stacks.iter().enumerate() {
                    if stmt_reads(other, stk.next_index) {
                        let i = at(&mut u, k);
                        let su = &mut u.stacks[i];
                        su.reads = true;
                        su.last_first |= su.nexts == 0;
                    }
                }
            }
        }
    }
    if let Transition::Select { keys, .. } = &s.transition {
        for (k, stk) in stacks.iter().enumerate() {
            if keys.iter().any(|e| expr_reads(e, stk.next_index)) {
                let i = at(&mut u, k);
                let su = &mut u.stacks[i];
                su.reads = true;
                su.last_first |= su.nexts == 0;
            }
        }
    }
    u
}

/// The statements of a parser body, those under `if` included, in order.
fn flatten<'b>(body: &'b [Stmt], out: &mut Vec<&'b Stmt>) {
    for s in body {
        if let Stmt::If { then, els, .. } = s {
            out.push(s);
            flatten(then, out);
            flatten(els, out);
        } else {
            out.push(s);
        }
    }
}

/// Whether a parser statement (its own expressions, not nested blocks) reads `f`.
fn stmt_reads(s: &Stmt, f: FieldRef) -> bool {
    match s {
        Stmt::Assign { value, .. } => expr_reads(value, f),
        Stmt::If { cond, .. } => expr_reads(cond, f),
        Stmt::Advance(e) | Stmt::CounterRange { cond: e } => expr_reads(e, f),
        Stmt::ExtractVarbit { bits, .. } => expr_reads(bits, f),
        Stmt::ChecksumAdd { inputs, .. } | Stmt::ChecksumSubtract { inputs, .. } => {
            inputs.iter().any(|e| expr_reads(e, f))
        }
        _ => false,
    }
}

fn expr_reads(e: &Expr, f: FieldRef) -> bool {
    match e {
        Expr::Field(g) => {
            g.offset < f.offset + u32::from(f.width) && f.offset < g.offset + u32::from(g.width)
        }
        Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => {
            expr_reads(arg, f)
        }
        Expr::Binary { a, b, .. } => expr_reads(a, f) || expr_reads(b, f),
        Expr::Concat { hi, lo, .. } => expr_reads(hi, f) || expr_reads(lo, f),
        Expr::Ternary {
            cond, then, els, ..
        } => expr_reads(cond, f) || expr_reads(then, f) || expr_reads(els, f),
        _ => false,
    }
}

fn stack_name(g: &Graph<'_>, k: usize) -> String {
    let ni = g.stacks[k].next_index;
    g.layout
        .stacks
        .iter()
        .find(|s| s.next_index == ni)
        .map_or_else(|| "the stack".into(), |s| s.name.clone())
}

fn header_name(g: &Graph<'_>, h: HeaderId) -> String {
    g.layout
        .headers
        .get(h.index())
        .map_or_else(|| "the header".into(), |i| i.name.clone())
}

fn short(parser: &ir::Parser, s: usize) -> &str {
    let n = &parser.states[s].name;
    n.strip_prefix(&format!("{}.", parser.name)).unwrap_or(n)
}

fn warn_dropped(
    l: &mut Lowerer<'_>,
    parser: &ir::Parser,
    g: &Graph<'_>,
    s: usize,
    why: &Dropped,
    spans: &[Span],
) {
    let Some(&span) = spans.get(s) else { return };
    let name = short(parser, s);
    let (msg, note) = match why {
        Dropped::Again(h, a) => (
            format!(
                "state `{name}` extracts `{}` again, after state `{}`: bf-p4c drops the state",
                header_name(g, *h),
                short(parser, *a)
            ),
            "bf-p4c counts a header as a stack of one: a second extract on the path is out of \
             bounds, so the transition into this state ends the parse; the header keeps its \
             first value and the bytes stay payload (P4 would extract it again)"
                .to_string(),
        ),
        Dropped::Full(k) => (
            format!(
                "state `{name}` extracts `{}.next` past the stack's end: bf-p4c drops the state",
                stack_name(g, *k)
            ),
            "the transition into it ends the parse; none of the state's statements run, those \
             before the `.next` included"
                .to_string(),
        ),
        Dropped::LastEmpty(k) => (
            format!(
                "state `{name}` reads `{}.last` before any element is extracted: bf-p4c drops \
                 the state",
                stack_name(g, *k)
            ),
            "the index resolves to -1, out of bounds: the transition into the state ends the \
             parse and none of its statements run"
                .to_string(),
        ),
    };
    l.warn(
        Diagnostic::warning(msg)
            .with_primary(span, "dropped on Tofino")
            .with_note(note),
    );
}

/// Warnings where bf-p4c's resolution differs from P4 on some path: a constant stack index
/// that some path reaches with another count, and (Tofino 1) a header extracted again on a path
/// where the state survived.
fn warn_paths(
    l: &mut Lowerer<'_>,
    parser: &ir::Parser,
    g: &Graph<'_>,
    fixed: &[Option<Vec<(usize, i64)>>],
    converted: &[bool],
    spans: &[Span],
) {
    let n = parser.states.len();
    let Some(topo) = topo_order(
        &parser.states.iter().map(succs_of).collect::<Vec<_>>(),
        parser.start.index(),
    ) else {
        return;
    };
    // Per state: the counts each stack may have on entry, and the plain headers extracted
    // before it on some path.
    let ns = g.stacks.len();
    let mut counts: Vec<Vec<std::collections::BTreeSet<i64>>> =
        vec![vec![Default::default(); ns]; n];
    let mut before: Vec<Vec<HeaderId>> = vec![Vec::new(); n];
    counts[parser.start.index()].iter_mut().for_each(|c| {
        c.insert(0);
    });
    let mut warned = std::collections::HashSet::new();
    let mut differ: Vec<Vec<(usize, i64, String)>> = vec![Vec::new(); ns];
    for &s in &topo {
        if !converted[s] {
            continue;
        }
        let u = &g.uses[s];
        let mut out = counts[s].clone();
        if let Some(f) = &fixed[s] {
            for &(k, v) in f {
                let su = u.stack(k).copied();
                let entry = &counts[s][k];
                if entry.iter().any(|c| *c != v) {
                    let got: Vec<String> = entry.iter().map(|c| c.to_string()).collect();
                    differ[k].push((s, v, got.join(" or ")));
                }
                out[k] = [v + i64::from(su.map_or(0, |x| x.nexts))].into();
            }
        } else {
            for su in &u.stacks {
                out[su.stack] = counts[s][su.stack]
                    .iter()
                    .map(|c| c + i64::from(su.nexts))
                    .collect();
            }
        }
        for h in &u.plain {
            if before[s].contains(h)
                && l.target == Target::Tofino1
                && warned.insert((s, n + h.index()))
            {
                if let Some(&span) = spans.get(s) {
                    l.warn(
                        Diagnostic::warning(format!(
                            "`{}` is extracted in state `{}` but some paths extracted it before: \
                             this re-assignment is not supported by Tofino",
                            header_name(g, *h),
                            short(parser, s)
                        ))
                        .with_primary(span, "a second extract on some paths")
                        .with_note(
                            "bf-p4c keeps this state (it converted it first on a path without \
                             the earlier extract) and only warns on Tofino 1, whose extractors \
                             OR into a container already written; pisa overwrites the header",
                        ),
                    );
                }
            }
        }
        let mut b = before[s].clone();
        for h in &u.plain {
            if !b.contains(h) {
                b.push(*h);
            }
        }
        for t in succs_of(&parser.states[s]) {
            for (k, c) in out.iter().enumerate() {
                counts[t][k].extend(c.iter().copied());
            }
            for h in &b {
                if !before[t].contains(h) {
                    before[t].push(*h);
                }
            }
        }
    }
    for (k, states) in differ.iter().enumerate() {
        let Some(&(first, _, _)) = states.first() else {
            continue;
        };
        let Some(&span) = spans.get(first) else {
            continue;
        };
        let shown: Vec<String> = states
            .iter()
            .take(3)
            .map(|(s, v, got)| {
                format!(
                    "`{}` uses index {v} where paths bring {got}",
                    short(parser, *s)
                )
            })
            .collect();
        let more = match states.len() {
            0..=3 => String::new(),
            n => format!(", and {} more state(s)", n - 3),
        };
        l.warn(
            Diagnostic::warning(format!(
                "bf-p4c resolves `{}.next` to one index per state, the same on every path",
                stack_name(g, k)
            ))
            .with_primary(span, "paths reach this state with different counts")
            .with_note(format!(
                "in a parser without loops bf-p4c takes the index from the closest extracts \
                 before the state on the graph, not from the packet's path (P4 would take the \
                 next free element); pisa does as bf-p4c: {}{more}",
                shown.join("; ")
            )),
        );
    }
}

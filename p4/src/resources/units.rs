//! The placement units of one gress and the dependencies between them.
//!
//! A *unit* is what takes a slot in a stage: a table apply, a gateway (`Stmt::If`), or a run of
//! standalone statements in the control body (bf-p4c wraps those in a keyless `tbl_act` table).
//! Units are listed in program order (pre-order over the control body).
//!
//! Dependency model (an approximation of bf-p4c's table dependency graph, after Jose et al.'s
//! RMT compiler paper), for a later unit B and an earlier unit A that can both run for one packet:
//! - match: B reads through the crossbar (key, condition, hash/SALU input) what A writes → B is
//!   at least one stage after A;
//! - action: B's actions read what A writes → one stage after;
//! - output: both write one location → one stage after (the later write must win);
//! - anti: B writes what A reads → same stage allowed (reads happen before writes);
//! - control: B runs only under an outcome of A (a gateway's true/false, a table's hit/miss or
//!   action) → same stage allowed: the next-table result of A predicates B within the stage,
//!   B with the later logical id. bf-p4c (mau/table_dependency_graph.cpp, the min-stage pass of
//!   `finalize_dependence_graph`) adds a stage only for match (`IXBAR_READ`), action
//!   (`ACTION_READ`) and output edges; control and anti edges keep the stage.
//!
//! Units in mutually exclusive branches (then/else of one `if`, different outcomes of one
//! table) have no dependencies between them (bf-p4c's data dependencies follow the control
//! flow, so accesses on another branch never reach them).

use std::collections::{BTreeMap, BTreeSet};

use pipeline::ir::{Expr, Gress, Pipeline, Stmt, TableBranches, TableId};

use super::dep_index::DepIndex;
use super::effects::{overlap, Collector, Effects, Loc, Mode};
use super::names::Names;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UnitKind {
    Table(TableId),
    /// Pre-order index of the `Stmt::If` (see `ObjectRef::Gateway`).
    Gateway(usize),
    /// Standalone statements (or the externs of a gateway's condition).
    Statements,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DepKind {
    Match,
    Action,
    Output,
    Anti,
    Control,
}

impl DepKind {
    /// The name bf-p4c's dependency graph gives the kind.
    pub fn word(self) -> &'static str {
        match self {
            DepKind::Match => "match",
            DepKind::Action => "action",
            DepKind::Output => "output",
            DepKind::Anti => "anti",
            DepKind::Control => "control",
        }
    }
}

/// Pairs of tables whose data dependencies are dropped (`@ignore_table_dependency`), both
/// orders listed.
pub(crate) type IgnorePairs = BTreeSet<(TableId, TableId)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dep {
    pub on: usize,
    /// Minimum stage distance: 0 (same stage allowed) or 1.
    pub gap: u16,
    pub kind: DepKind,
    pub loc: Option<Loc>,
}

#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub kind: UnitKind,
    /// For messages and reports: a table's name, `if (cond)`, or the first statement.
    pub label: String,
    /// Branch choices leading here: (branching unit, branch number).
    pub path: Vec<(usize, u32)>,
    pub parent: Option<usize>,
    pub fx: Effects,
    /// A gateway's condition.
    pub cond: Option<Expr>,
    /// Of a table with branches: per branch (hit, miss; or each `action_run` case, then
    /// `default`), what the actions that lead into it write.
    pub branch_writes: Vec<Vec<Loc>>,
    pub deps: Vec<Dep>,
    /// Data dependencies dropped by `@ignore_table_dependency` (match, action or output).
    pub ignored: Vec<Dep>,
}

impl Unit {
    /// What this unit writes as seen from unit `b`: inside one of this table's branches only
    /// the writes of the actions that lead there (bf-p4c visits each next-table sequence with
    /// the flow of those actions only: `Table::visit_match_table` in ir/mau.cpp).
    fn writes_seen_by(&self, me: usize, b: &Unit) -> &[Loc] {
        // A path lists its branching units in the order they were built: ascending.
        let branch = b
            .path
            .binary_search_by_key(&me, |(u, _)| *u)
            .ok()
            .map(|i| b.path[i].1);
        match branch.and_then(|k| self.branch_writes.get(k as usize)) {
            Some(w) => w,
            None => &self.fx.writes,
        }
    }
}

/// Whether two units are on mutually exclusive branches: where their paths first differ,
/// they take different branches of one unit. Two paths that agree at one position agree
/// before it (a branching unit has one path to it), so that position is found by bisection:
/// logarithmic in the nesting, which an `else if` chain makes as deep as it is long.
pub(crate) fn exclusive(a: &Unit, b: &Unit) -> bool {
    let (mut same, mut hi) = (0, a.path.len().min(b.path.len()));
    while same < hi {
        let mid = (same + hi) / 2;
        if a.path[mid] == b.path[mid] {
            same = mid + 1;
        } else {
            hi = mid;
        }
    }
    match (a.path.get(same), b.path.get(same)) {
        (Some(x), Some(y)) => x.0 == y.0,
        _ => false,
    }
}

/// Builds the units of `gress` of `pipe`, with their dependencies (none between the tables
/// of an `ignore` pair but control ones).
pub(crate) fn build(pipe: &Pipeline, gress: Gress, ignore: &IgnorePairs) -> Vec<Unit> {
    let g = match gress {
        Gress::Ingress => &pipe.ingress,
        Gress::Egress => &pipe.egress,
    };
    let mut b = Builder {
        col: Collector::new(pipe, &g.phv),
        names: Names::new(pipe, &g.phv),
        units: Vec::new(),
        next_gateway: 0,
        next_temp: 0,
    };
    b.block(&g.control.body, &[], None);
    let mut units = b.units;
    compute_deps(&mut units, ignore);
    units
}

struct Group {
    fx: Effects,
    label: String,
    count: usize,
}

struct Builder<'a> {
    col: Collector<'a>,
    names: Names<'a>,
    units: Vec<Unit>,
    next_gateway: usize,
    next_temp: u32,
}

impl Builder<'_> {
    fn push(
        &mut self,
        kind: UnitKind,
        label: String,
        path: &[(usize, u32)],
        parent: Option<usize>,
        fx: Effects,
    ) -> usize {
        self.units.push(Unit {
            kind,
            label,
            path: path.to_vec(),
            parent,
            fx,
            cond: None,
            branch_writes: Vec::new(),
            deps: Vec::new(),
            ignored: Vec::new(),
        });
        self.units.len() - 1
    }

    fn flush(&mut self, group: &mut Option<Group>, path: &[(usize, u32)], parent: Option<usize>) {
        if let Some(g) = group.take() {
            let label = if g.count > 1 {
                format!("{} (+{} more)", g.label, g.count - 1)
            } else {
                g.label
            };
            self.push(UnitKind::Statements, label, path, parent, g.fx);
        }
    }

    fn stmt_label(&self, s: &Stmt) -> String {
        match s {
            Stmt::Assign { dst, value } => {
                let d = match dst {
                    pipeline::ir::Place::Field(f) => self.names.loc(Loc::field(*f)),
                    pipeline::ir::Place::FieldSlice { field, hi, lo } => {
                        format!("{}[{hi}:{lo}]", self.names.loc(Loc::field(*field)))
                    }
                    _ => "rv".into(),
                };
                format!("{d} = {}", self.names.expr(value))
            }
            Stmt::CallAction { action, .. } => match self.col.pipe.actions.get(action.index()) {
                Some(a) => format!("{}()", a.name),
                None => "action call".into(),
            },
            Stmt::Count { counter, .. } => match self.col.pipe.counters.get(counter.index()) {
                Some(c) => format!("{}.count(..)", c.name),
                None => "counter.count(..)".into(),
            },
            Stmt::RegisterExecute { action, .. } => {
                match self.col.pipe.register_actions.get(action.index()) {
                    Some(ra) => format!("{}.execute(..)", ra.name),
                    None => "RegisterAction.execute(..)".into(),
                }
            }
            Stmt::RegisterClear { register, .. } => {
                match self.col.pipe.registers.get(register.index()) {
                    Some(r) => format!("{}.clear(..)", r.name),
                    None => "Register.clear(..)".into(),
                }
            }
            Stmt::CopyHeader { dst, src } => {
                let name = |h: &pipeline::ir::HeaderId| {
                    let v = self.names.loc(Loc::Valid(*h));
                    v.trim_end_matches(".isValid()").to_string()
                };
                format!("{} = {}", name(dst), name(src))
            }
            Stmt::SetValid { header, valid } => {
                let h = self.names.loc(Loc::Valid(*header));
                let h = h.trim_end_matches(".isValid()");
                if *valid {
                    format!("{h}.setValid()")
                } else {
                    format!("{h}.setInvalid()")
                }
            }
            _ => "statement".into(),
        }
    }

    fn block(&mut self, stmts: &[Stmt], path: &[(usize, u32)], parent: Option<usize>) {
        let mut group: Option<Group> = None;
        for s in stmts {
            match s {
                Stmt::If {
                    cond, then, els, ..
                } => {
                    self.flush(&mut group, path, parent);
                    let index = self.next_gateway;
                    self.next_gateway += 1;
                    let mut fx = Effects::default();
                    let mut externs = Vec::new();
                    cond_externs(cond, &mut externs);
                    if !externs.is_empty() {
                        // bf-p4c runs the externs in a table before the gateway and tests the
                        // result; model that as a statements unit writing a temporary.
                        let mut efx = Effects::default();
                        for e in &externs {
                            self.col.expr(e, &mut efx, Mode::Action);
                        }
                        let t = Loc::Temp(self.next_temp);
                        self.next_temp += 1;
                        efx.writes.push(t);
                        let label =
                            format!("externs of if #{index}: {}", self.names.expr(externs[0]));
                        self.push(UnitKind::Statements, label, path, parent, efx);
                        fx.match_reads.push(t);
                        fx.xbar.push(t);
                    }
                    self.cond_reads(cond, &mut fx);
                    let label = format!("if ({})", self.names.expr(cond));
                    let u = self.push(UnitKind::Gateway(index), label, path, parent, fx);
                    self.units[u].cond = Some(cond.clone());
                    let mut p = path.to_vec();
                    p.push((u, 0));
                    self.block(then, &p, Some(u));
                    p.pop();
                    p.push((u, 1));
                    self.block(els, &p, Some(u));
                }
                Stmt::ApplyTable { table, branches } => {
                    self.flush(&mut group, path, parent);
                    let mut fx = Effects::default();
                    let label = match self.col.pipe.tables.get(table.index()) {
                        Some(t) => {
                            for k in &t.keys {
                                self.col.expr(&k.expr, &mut fx, Mode::Match);
                            }
                            // Keys ride their own crossbar (accounted by the demand); keep
                            // only extern inputs in `xbar`.
                            fx.xbar.clear();
                            for k in &t.keys {
                                let mut kfx = Effects::default();
                                self.col.expr(&k.expr, &mut kfx, Mode::Match);
                                if !kfx.hashes.is_empty() || !kfx.register_actions.is_empty() {
                                    fx.xbar.extend(kfx.xbar);
                                }
                            }
                            for a in &t.actions {
                                self.col.action(a.action, &mut fx);
                            }
                            if let Some(c) = t.direct_counter {
                                fx.counters.push(c);
                            }
                            if let Some(m) = t.direct_meter {
                                fx.meters.push(m);
                            }
                            fx.filters.extend(
                                self.col
                                    .pipe
                                    .filters
                                    .iter()
                                    .enumerate()
                                    .filter(|(_, f)| f.direct_table == Some(*table))
                                    .map(|(i, _)| pipeline::ir::FilterId(i as u32)),
                            );
                            t.name.clone()
                        }
                        None => {
                            fx.malformed
                                .push(format!("table id {} out of range", table.0));
                            format!("table#{}", table.0)
                        }
                    };
                    let u = self.push(UnitKind::Table(*table), label, path, parent, fx);
                    self.units[u].branch_writes = self.branch_writes(*table, branches);
                    let mut p = path.to_vec();
                    match branches {
                        TableBranches::None => {}
                        TableBranches::HitMiss { hit, miss } => {
                            p.push((u, 0));
                            self.block(hit, &p, Some(u));
                            p.pop();
                            p.push((u, 1));
                            self.block(miss, &p, Some(u));
                        }
                        TableBranches::ActionRun { cases, default } => {
                            for (i, (_, b)) in cases.iter().enumerate() {
                                p.push((u, i as u32));
                                self.block(b, &p, Some(u));
                                p.pop();
                            }
                            p.push((u, cases.len() as u32));
                            self.block(default, &p, Some(u));
                        }
                    }
                }
                Stmt::Exit | Stmt::Return => self.flush(&mut group, path, parent),
                other => {
                    let mut sfx = Effects::default();
                    self.col.stmt(other, &mut sfx);
                    // A statement reading what its group already wrote needs the next stage
                    // (action instructions of one stage run in parallel).
                    // Each stateful extern gets its own `tbl_act`, as bf-p4c attaches every
                    // register / meter / counter to a table of its own.
                    if let Some(g) = &group {
                        if overlap(&sfx.all_reads(), &g.fx.writes).is_some()
                            || (uses_state(&sfx) && uses_state(&g.fx))
                        {
                            self.flush(&mut group, path, parent);
                        }
                    }
                    match &mut group {
                        Some(g) => {
                            g.fx.merge(sfx);
                            g.count += 1;
                        }
                        None => {
                            group = Some(Group {
                                fx: sfx,
                                label: self.stmt_label(other),
                                count: 1,
                            })
                        }
                    }
                }
            }
        }
        self.flush(&mut group, path, parent);
    }

    /// Per branch of `branches`, the writes of the table's actions that can lead into it: the
    /// hit branch is reached by every action but `@defaultonly` ones, the miss branch by the
    /// actions that may be the default (not `@tableonly`; with a `const default_action`, that
    /// one only, as bf-p4c's `SetupActionProperties` in mau/extract_maupipe.cpp disallows the
    /// others as default), an `action_run` case by its action, `default` by the actions
    /// without a case.
    fn branch_writes(&mut self, table: TableId, branches: &TableBranches) -> Vec<Vec<Loc>> {
        let Some(t) = self.col.pipe.tables.get(table.index()) else {
            return Vec::new();
        };
        let actions = t.actions.clone();
        let const_default = t.default_action_const.then_some(t.default_action.action);
        let mut writes_of = |pick: &dyn Fn(&pipeline::ir::ActionRef) -> bool| {
            let mut fx = Effects::default();
            for a in actions.iter().filter(|a| pick(a)) {
                self.col.action(a.action, &mut fx);
            }
            fx.writes
        };
        match branches {
            TableBranches::None => Vec::new(),
            TableBranches::HitMiss { .. } => vec![
                writes_of(&|a| !a.default_only),
                writes_of(&|a| !a.table_only && const_default.is_none_or(|d| d == a.action)),
            ],
            TableBranches::ActionRun { cases, .. } => {
                let mut out: Vec<Vec<Loc>> = cases
                    .iter()
                    .map(|(id, _)| writes_of(&|a| a.action == *id))
                    .collect();
                out.push(writes_of(&|a| cases.iter().all(|(id, _)| *id != a.action)));
                out
            }
        }
    }

    /// Crossbar reads of a gateway condition, skipping externs (they ran before).
    fn cond_reads(&mut self, e: &Expr, fx: &mut Effects) {
        match e {
            Expr::RegisterExecute { .. }
            | Expr::MeterExecute { .. }
            | Expr::FilterExecute { .. }
            | Expr::Random { .. } => {}
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Slice { arg, .. }
                if !is_leafish(e) =>
            {
                self.cond_reads(arg, fx)
            }
            Expr::Binary { a, b, .. } => {
                self.cond_reads(a, fx);
                self.cond_reads(b, fx);
            }
            Expr::Concat { hi, lo, .. } => {
                self.cond_reads(hi, fx);
                self.cond_reads(lo, fx);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.cond_reads(cond, fx);
                self.cond_reads(then, fx);
                self.cond_reads(els, fx);
            }
            other => self.col.expr(other, fx, Mode::Match),
        }
    }
}

fn uses_state(fx: &Effects) -> bool {
    !(fx.register_actions.is_empty()
        && fx.meters.is_empty()
        && fx.filters.is_empty()
        && fx.counters.is_empty())
}

fn is_leafish(e: &Expr) -> bool {
    matches!(e, Expr::Slice { arg, .. } if matches!(arg.as_ref(), Expr::Field(_)))
}

/// The outermost externs with side effects inside a condition.
fn cond_externs<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::RegisterExecute { .. }
        | Expr::MeterExecute { .. }
        | Expr::FilterExecute { .. }
        | Expr::Random { .. } => out.push(e),
        Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => {
            cond_externs(arg, out)
        }
        Expr::Binary { a, b, .. } => {
            cond_externs(a, out);
            cond_externs(b, out);
        }
        Expr::Concat { hi, lo, .. } => {
            cond_externs(hi, out);
            cond_externs(lo, out);
        }
        Expr::Ternary {
            cond, then, els, ..
        } => {
            cond_externs(cond, out);
            cond_externs(then, out);
            cond_externs(els, out);
        }
        _ => {}
    }
}

fn table_of(u: &Unit) -> Option<TableId> {
    match u.kind {
        UnitKind::Table(t) => Some(t),
        _ => None,
    }
}

#[cfg(test)]
thread_local! {
    /// Tests turn covers off to compare the placement with and without them.
    static COVERS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether [`DepIndex`] covers may drop implied edges (always, but in a test comparing).
fn covers_enabled() -> bool {
    #[cfg(test)]
    {
        !COVERS_OFF.with(|c| c.get())
    }
    #[cfg(not(test))]
    {
        true
    }
}

fn compute_deps(units: &mut [Unit], ignore: &IgnorePairs) {
    let all_reads: Vec<Vec<Loc>> = units.iter().map(|u| u.fx.all_reads()).collect();
    let mut index = DepIndex::default();
    for b in 0..units.len() {
        let mut deps = Vec::new();
        let mut ignored = Vec::new();
        let ub = &units[b];
        index.enter(&ub.path);
        let mut candidates =
            index.candidates(all_reads[b].iter().chain(&ub.fx.writes), &ub.fx.writes);
        if let Some(p) = ub
            .parent
            .filter(|p| *p < b && candidates.binary_search(p).is_err())
        {
            let at = candidates.partition_point(|&a| a < p);
            candidates.insert(at, p);
        }
        // A unit without branches, whose edges are all kept, covers what it writes for the
        // units after it in its branch.
        let cover = (covers_enabled()
            && ub.branch_writes.is_empty()
            && table_of(ub).is_none_or(|t| !ignore.iter().any(|&(x, _)| x == t)))
        .then_some(ub.path.as_slice());
        index.add(
            b,
            ub.fx.writes.iter().chain(ub.branch_writes.iter().flatten()),
            &all_reads[b],
            cover,
        );
        for a in candidates {
            let (ua, ub) = (&units[a], &units[b]);
            if exclusive(ua, ub) {
                continue;
            }
            let dep = |kind, gap, loc| {
                Some(Dep {
                    on: a,
                    gap,
                    kind,
                    loc,
                })
            };
            let a_writes = ua.writes_seen_by(a, ub);
            let d = if let Some(l) = overlap(&ub.fx.match_reads, a_writes) {
                dep(DepKind::Match, 1, Some(l))
            } else if let Some(l) = overlap(&ub.fx.action_reads, a_writes) {
                dep(DepKind::Action, 1, Some(l))
            } else if let Some(l) = overlap(&ub.fx.writes, a_writes) {
                dep(DepKind::Output, 1, Some(l))
            } else if ub.parent == Some(a) {
                dep(DepKind::Control, 0, None)
            } else if let Some(l) = overlap(&ub.fx.writes, &all_reads[a]) {
                dep(DepKind::Anti, 0, Some(l))
            } else {
                None
            };
            let pair = table_of(&units[a]).zip(table_of(&units[b]));
            match d {
                Some(d)
                    if d.kind != DepKind::Control && pair.is_some_and(|p| ignore.contains(&p)) =>
                {
                    if d.kind != DepKind::Anti {
                        ignored.push(d);
                    }
                    // A table applied only under the other's outcome keeps that dependency.
                    if units[b].parent == Some(a) {
                        deps.push(Dep {
                            on: a,
                            gap: 0,
                            kind: DepKind::Control,
                            loc: None,
                        });
                    }
                }
                _ => deps.extend(d),
            }
        }
        units[b].deps = deps;
        units[b].ignored = ignored;
    }
}

/// Tables applied twice on one path through the gress: a table is one match unit, looked up at
/// most once per packet, so bf-p4c keeps a table applied in several places as one table only
/// when those places are mutually exclusive (mau/table_dependency_graph.cpp: one vertex per
/// table). Gives each such table with the units of its first two non-exclusive applies.
pub(crate) fn applied_twice(units: &[Unit]) -> Vec<(TableId, usize, usize)> {
    let mut by_table: BTreeMap<TableId, Vec<usize>> = BTreeMap::new();
    for (i, u) in units.iter().enumerate() {
        if let UnitKind::Table(t) = u.kind {
            by_table.entry(t).or_default().push(i);
        }
    }
    by_table
        .into_iter()
        .filter_map(|(t, applies)| {
            applies.iter().enumerate().find_map(|(x, &a)| {
                applies[x + 1..]
                    .iter()
                    .find(|&&b| !exclusive(&units[a], &units[b]))
                    .map(|&b| (t, a, b))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;

//! Local copy propagation over a lowered MAU control body, as p4c's midend
//! (`LocalCopyPropagation`, then the removal of unused locals) does before bf-p4c places
//! anything: a control-local variable that holds a plain copy of a field (`bit<32> src =
//! lkp.ip_src_addr[95:64];`, `bool v = hdr.x.isValid();`) is read as that field where the copy
//! reaches unchanged, and the copy itself goes when no read of the local is left. Without it
//! the copy is a statement of its own, a stage ahead of the hash or gateway that reads it.
//!
//! A use is rewritten only where, on every path from the copy to it, neither the local nor any
//! bit of its source is written (by a statement, an action a table or call runs, or an extern's
//! `out`); a local written on one branch only, or read after its source changes, keeps its
//! value in its own storage. Table keys are rewritten only for a table applied at one place.
//! Reads inside actions are never rewritten: such a local keeps its copy.

use std::collections::HashSet;
use std::ops::Range;

use pipeline::ir::{
    Block, Expr, FieldRef, Gress, GressProgram, PhvLayout, Pipeline, Place, Stmt, TableBranches,
    TableId,
};

use super::aliasing::{branch_arms, branch_arms_mut};
use crate::resources::effects::{Collector, Effects, Loc, Mode};

/// The control-local scalars of one gress and the actions lowered for it.
#[derive(Debug, Default, Clone)]
pub(crate) struct GressLocals {
    pub fields: Vec<FieldRef>,
    pub actions: Range<usize>,
}

/// A copy that holds at a point: `local` has `value`, which reads `reads`.
#[derive(Debug, Clone, PartialEq)]
struct Avail {
    local: FieldRef,
    value: Expr,
    reads: Vec<Loc>,
}

/// The copies that hold at a point; `None` where no path reaches it (after `exit`).
type State = Option<Vec<Avail>>;

/// Propagates the copies of both gresses' control locals in `pipe` (see the module doc).
pub(crate) fn run(pipe: &mut Pipeline, ingress: &GressLocals, egress: &GressLocals) {
    for (gress, locals) in [(Gress::Ingress, ingress), (Gress::Egress, egress)] {
        if locals.fields.is_empty() {
            continue;
        }
        let mut body = std::mem::take(&mut gress_of(pipe, gress).control.body);
        let keys = {
            let g = gress_of_ref(pipe, gress);
            let mut p = Prop::new(pipe, &g.phv, &locals.fields, &body);
            p.block(&mut body, Some(Vec::new()));
            p.keys
        };
        for (t, k, e) in keys {
            pipe.tables[t.index()].keys[k].expr = e;
        }
        let dead = {
            let g = gress_of_ref(pipe, gress);
            dead_locals(pipe, g, &body, gress, locals)
        };
        remove_copies(&mut body, &dead);
        gress_of(pipe, gress).control.body = body;
    }
}

fn gress_of(pipe: &mut Pipeline, g: Gress) -> &mut GressProgram {
    match g {
        Gress::Ingress => &mut pipe.ingress,
        Gress::Egress => &mut pipe.egress,
    }
}

fn gress_of_ref(pipe: &Pipeline, g: Gress) -> &GressProgram {
    match g {
        Gress::Ingress => &pipe.ingress,
        Gress::Egress => &pipe.egress,
    }
}

/// A value that may be propagated: a field, a constant slice of one, or a header's validity.
fn is_copy(e: &Expr) -> bool {
    match e {
        Expr::Field(_) | Expr::Valid(_) => true,
        // (A slice of a field wider than a value stays a local's: pisa computes on at most
        // MAX_VALUE_WIDTH bits.)
        Expr::Slice { arg, .. } => {
            matches!(**arg, Expr::Field(f) if f.width <= pipeline::ir::MAX_VALUE_WIDTH)
        }
        _ => false,
    }
}

/// The walk that rewrites uses; table keys to rewrite are collected in `keys`.
struct Prop<'p> {
    col: Collector<'p>,
    pipe: &'p Pipeline,
    locals: HashSet<FieldRef>,
    /// Tables applied at exactly one place of the body.
    single: HashSet<TableId>,
    keys: Vec<(TableId, usize, Expr)>,
}

impl<'p> Prop<'p> {
    fn new(pipe: &'p Pipeline, phv: &'p PhvLayout, locals: &[FieldRef], body: &Block) -> Self {
        let mut seen = Vec::new();
        count_applies(body, &mut seen);
        let single = seen
            .iter()
            .filter(|t| seen.iter().filter(|u| u == t).count() == 1)
            .copied()
            .collect();
        Prop {
            col: Collector::new(pipe, phv),
            pipe,
            locals: locals.iter().copied().collect(),
            single,
            keys: Vec::new(),
        }
    }

    fn block(&mut self, b: &mut [Stmt], mut st: State) -> State {
        for s in b {
            st = self.stmt(s, st);
        }
        st
    }

    fn stmt(&mut self, s: &mut Stmt, st: State) -> State {
        let mut avail = st?;
        match s {
            Stmt::Assign { dst, value } => {
                subst(value, &avail);
                let w = place_loc(dst);
                kill(&mut avail, w.as_slice());
                if let Place::Field(l) = dst {
                    let reads = self.reads(value);
                    if self.locals.contains(l)
                        && is_copy(value)
                        && value.width() == l.width
                        && !reads.iter().any(|r| r.overlaps(&Loc::field(*l)))
                    {
                        avail.push(Avail {
                            local: *l,
                            value: value.clone(),
                            reads,
                        });
                    }
                }
                Some(avail)
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                subst(cond, &avail);
                let a = self.block(then, Some(avail.clone()));
                let b = self.block(els, Some(avail));
                meet(a, b)
            }
            Stmt::ApplyTable { table, branches } => self.apply(*table, branches, avail),
            Stmt::CallAction { action, args } => {
                for a in args.iter_mut() {
                    subst(a, &avail);
                }
                let mut fx = Effects::default();
                self.col.action(*action, &mut fx);
                kill_fx(&mut avail, &fx);
                Some(avail)
            }
            Stmt::Count { index, .. } => {
                subst(index, &avail);
                Some(avail)
            }
            Stmt::RegisterExecute { index, outs, .. } => {
                subst(index, &avail);
                let w: Vec<Loc> = outs.iter().flatten().flat_map(place_loc).collect();
                kill(&mut avail, &w);
                Some(avail)
            }
            Stmt::Exit | Stmt::Return => None,
            other => {
                let mut fx = Effects::default();
                self.col.stmt(other, &mut fx);
                kill_fx(&mut avail, &fx);
                Some(avail)
            }
        }
    }

    /// A table apply: its keys read the copies, its actions' writes end them, its branches
    /// meet.
    fn apply(
        &mut self,
        table: TableId,
        branches: &mut TableBranches,
        mut avail: Vec<Avail>,
    ) -> State {
        self.table_keys(table, &avail);
        let mut fx = Effects::default();
        if let Some(t) = self.pipe.tables.get(table.index()) {
            for a in t.actions.iter().map(|a| a.action) {
                self.col.action(a, &mut fx);
            }
            self.col.action(t.default_action.action, &mut fx);
        } else {
            fx.malformed.push("table".into());
        }
        kill_fx(&mut avail, &fx);
        if matches!(branches, TableBranches::None) {
            return Some(avail);
        }
        let mut out: State = None;
        for arm in branch_arms_mut(branches) {
            let a = self.block(arm, Some(avail.clone()));
            out = meet(out, a);
        }
        out
    }

    /// Rewrites the keys of `table` when it is applied only here.
    fn table_keys(&mut self, table: TableId, avail: &[Avail]) {
        if !self.single.contains(&table) {
            return;
        }
        let Some(t) = self.pipe.tables.get(table.index()) else {
            return;
        };
        for (k, key) in t.keys.iter().enumerate() {
            let mut e = key.expr.clone();
            subst(&mut e, avail);
            if e != key.expr {
                self.keys.push((table, k, e));
            }
        }
    }

    fn reads(&mut self, e: &Expr) -> Vec<Loc> {
        let mut fx = Effects::default();
        self.col.expr(e, &mut fx, Mode::Action);
        fx.all_reads()
    }
}

fn count_applies(b: &[Stmt], seen: &mut Vec<TableId>) {
    for s in b {
        match s {
            Stmt::If { then, els, .. } => {
                count_applies(then, seen);
                count_applies(els, seen);
            }
            Stmt::ApplyTable { table, branches } => {
                seen.push(*table);
                for arm in branch_arms(branches) {
                    count_applies(arm, seen);
                }
            }
            _ => {}
        }
    }
}

fn place_loc(p: &Place) -> Option<Loc> {
    match p {
        Place::Field(f) => Some(Loc::field(*f)),
        Place::FieldSlice { field, hi, lo } => Some(Loc::slice(*field, *hi, *lo)),
        Place::RegValue(_) | Place::RegOutput | Place::RegOutputN(_) => None,
    }
}

/// Drops the copies whose local or source overlaps a location in `writes`.
fn kill(avail: &mut Vec<Avail>, writes: &[Loc]) {
    avail.retain(|a| {
        let l = Loc::field(a.local);
        !writes
            .iter()
            .any(|w| w.overlaps(&l) || a.reads.iter().any(|r| r.overlaps(w)))
    });
}

fn kill_fx(avail: &mut Vec<Avail>, fx: &Effects) {
    if fx.malformed.is_empty() {
        kill(avail, &fx.writes);
    } else {
        avail.clear();
    }
}

/// The copies that hold on both paths.
fn meet(a: State, b: State) -> State {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(a.into_iter().filter(|x| b.contains(x)).collect()),
    }
}

/// Reads `avail`'s locals in `e` as the values they hold.
fn subst(e: &mut Expr, avail: &[Avail]) {
    if avail.is_empty() {
        return;
    }
    if let Expr::Field(f) = e {
        if let Some(a) = avail.iter().find(|a| a.local == *f) {
            *e = a.value.clone();
        }
        return;
    }
    for c in children(e) {
        subst(c, avail);
    }
    // A slice of a propagated slice is one slice of the source.
    if let Expr::Slice { arg, hi, lo } = e {
        if let Expr::Slice {
            arg: inner,
            lo: ilo,
            ..
        } = arg.as_mut()
        {
            let (h, l) = (*ilo + *hi, *ilo + *lo);
            let inner = std::mem::replace(inner.as_mut(), Expr::Random { width: 0 });
            *e = Expr::Slice {
                arg: Box::new(inner),
                hi: h,
                lo: l,
            };
        }
    }
}

/// The sub-expressions of `e`.
pub(super) fn children(e: &mut Expr) -> Vec<&mut Expr> {
    match e {
        Expr::Unary { arg, .. }
        | Expr::Slice { arg, .. }
        | Expr::Cast { arg, .. }
        | Expr::MathUnit { input: arg, .. } => vec![arg.as_mut()],
        Expr::Binary { a, b, .. } => vec![a.as_mut(), b.as_mut()],
        Expr::Concat { hi, lo, .. } => vec![hi.as_mut(), lo.as_mut()],
        Expr::Ternary {
            cond, then, els, ..
        } => vec![cond.as_mut(), then.as_mut(), els.as_mut()],
        Expr::RegisterExecute { index, .. } => vec![index.as_mut()],
        Expr::Hash { inputs, .. }
        | Expr::SaluPredicate { conds: inputs, .. }
        | Expr::ChecksumUpdate { inputs, .. } => inputs.iter_mut().collect(),
        Expr::MinMax { value, mask, .. } => vec![value.as_mut(), mask.as_mut()],
        Expr::MeterExecute { index, color, .. } => [index, color]
            .into_iter()
            .flatten()
            .map(|x| x.as_mut())
            .collect(),
        Expr::FilterExecute { value, index, .. } => std::iter::once(value)
            .chain(index.iter_mut())
            .map(|x| x.as_mut())
            .collect(),
        Expr::Const { .. }
        | Expr::Field(_)
        | Expr::Valid(_)
        | Expr::Param { .. }
        | Expr::Lookahead { .. }
        | Expr::RegValue(_)
        | Expr::RegInput(_)
        | Expr::RegisterParam(_)
        | Expr::Random { .. }
        | Expr::SaluCounter { .. }
        | Expr::SaluAddress { .. }
        | Expr::ChecksumVerify(_)
        | Expr::ChecksumGet(_) => Vec::new(),
    }
}

/// The locals of `locals` that nothing in the gress reads any more: not the control body
/// (conditions, keys, operands), its actions, any RegisterAction, or the deparser.
fn dead_locals(
    pipe: &Pipeline,
    g: &GressProgram,
    body: &Block,
    gress: Gress,
    locals: &GressLocals,
) -> HashSet<FieldRef> {
    let mut col = Collector::new(pipe, &g.phv);
    let mut fx = Effects::default();
    body_reads(&mut col, body, &mut fx);
    for t in pipe.tables.iter().filter(|t| t.gress == gress) {
        for k in &t.keys {
            col.expr(&k.expr, &mut fx, Mode::Match);
        }
    }
    for a in pipe.actions.get(locals.actions.clone()).unwrap_or(&[]) {
        col.block(&a.body, &mut fx);
    }
    for b in pipe.register_actions.iter().flat_map(|ra| ra.bodies()) {
        col.block(b, &mut fx);
    }
    body_reads(&mut col, &g.deparser.body, &mut fx);
    if !fx.malformed.is_empty() {
        return HashSet::new();
    }
    let reads = read_bits(&fx.all_reads());
    locals
        .fields
        .iter()
        .filter(|f| {
            let Loc::Bits { start, end } = Loc::field(**f) else {
                return true;
            };
            // The first read interval ending after `start`: read if it begins before `end`.
            let i = reads.partition_point(|&(_, e)| e <= start);
            reads.get(i).is_none_or(|&(s, _)| s >= end)
        })
        .copied()
        .collect()
}

/// The bit ranges of `reads` as sorted, disjoint `start..end` intervals, so that whether a
/// local is read is a bisection, not a scan of every read (thousands of locals).
fn read_bits(reads: &[Loc]) -> Vec<(u32, u32)> {
    let mut bits: Vec<(u32, u32)> = reads
        .iter()
        .filter_map(|r| match r {
            Loc::Bits { start, end } => Some((*start, *end)),
            _ => None,
        })
        .collect();
    bits.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::with_capacity(bits.len());
    for (s, e) in bits {
        match merged.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// Reads of a control body, through the blocks under ifs and table applies (the collector
/// leaves tables to the caller).
fn body_reads(col: &mut Collector<'_>, b: &[Stmt], fx: &mut Effects) {
    for s in b {
        match s {
            Stmt::If {
                cond, then, els, ..
            } => {
                col.expr(cond, fx, Mode::Match);
                body_reads(col, then, fx);
                body_reads(col, els, fx);
            }
            Stmt::ApplyTable { branches, .. } => {
                for arm in branch_arms(branches) {
                    body_reads(col, arm, fx);
                }
            }
            other => col.stmt(other, fx),
        }
    }
}

/// Drops the copies into `dead` locals from the body, and the self-assignments propagation
/// made (`x = local` where the local held `x`), as p4c drops an assignment that its
/// propagation turns into one.
fn remove_copies(b: &mut Block, dead: &HashSet<FieldRef>) {
    b.retain(|s| match s {
        Stmt::Assign {
            dst: Place::Field(f),
            value,
        } => !(dead.contains(f) && is_copy(value) || *value == Expr::Field(*f)),
        _ => true,
    });
    for s in b {
        match s {
            Stmt::If { then, els, .. } => {
                remove_copies(then, dead);
                remove_copies(els, dead);
            }
            Stmt::ApplyTable { branches, .. } => {
                for arm in branch_arms_mut(branches) {
                    remove_copies(arm, dead);
                }
            }
            _ => {}
        }
    }
}

impl super::Lowerer<'_> {
    /// Records the scalars of a control-local variable at `loc` (struct locals field by field)
    /// while the gress's MAU control is being lowered.
    pub(super) fn note_local(&mut self, loc: &super::phv::Loc) {
        use super::phv::Loc as L;
        if !self.locals_on || self.ctx != super::Ctx::Control {
            return;
        }
        match loc {
            L::Field { f, .. } => {
                let k = usize::from(self.gress == Gress::Egress);
                self.control_locals[k].fields.push(*f);
            }
            L::Struct { fields, .. } => {
                for f in fields {
                    self.note_local(f);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: u32, width: u16) -> FieldRef {
        FieldRef { offset, width }
    }

    fn copy(local: FieldRef, value: Expr) -> Avail {
        Avail {
            local,
            value,
            reads: Vec::new(),
        }
    }

    #[test]
    fn a_slice_of_a_propagated_slice_is_one_slice_of_the_source() {
        let (src, local) = (field(0, 128), field(200, 32));
        let avail = [copy(
            local,
            Expr::Slice {
                arg: Box::new(Expr::Field(src)),
                hi: 95,
                lo: 64,
            },
        )];
        let mut e = Expr::Slice {
            arg: Box::new(Expr::Field(local)),
            hi: 7,
            lo: 0,
        };
        subst(&mut e, &avail);
        assert_eq!(
            e,
            Expr::Slice {
                arg: Box::new(Expr::Field(src)),
                hi: 71,
                lo: 64,
            }
        );
    }

    #[test]
    fn paths_meet_by_intersection_and_an_ended_path_adds_nothing() {
        let a = copy(field(8, 8), Expr::Field(field(0, 8)));
        let b = copy(field(16, 8), Expr::Field(field(0, 8)));
        let both = meet(Some(vec![a.clone(), b.clone()]), Some(vec![b.clone()]));
        assert_eq!(both, Some(vec![b.clone()]));
        assert_eq!(meet(None, Some(vec![a.clone()])), Some(vec![a]));
        assert_eq!(meet(None, None), None);
    }

    #[test]
    fn a_write_to_the_source_or_the_local_ends_the_copy() {
        let (src, local) = (field(0, 16), field(32, 16));
        let mut avail = vec![Avail {
            local,
            value: Expr::Field(src),
            reads: vec![Loc::field(src)],
        }];
        kill(&mut avail, &[Loc::slice(field(0, 16), 3, 0)]);
        assert!(avail.is_empty());
        let mut avail = vec![copy(local, Expr::Field(src))];
        kill(&mut avail, &[Loc::field(local)]);
        assert!(avail.is_empty());
        let mut avail = vec![copy(local, Expr::Field(src))];
        kill(&mut avail, &[Loc::field(field(64, 8))]);
        assert_eq!(avail.len(), 1);
    }
}

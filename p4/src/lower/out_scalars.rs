//! `out` parameters that are not headers (P4_16 §6.8: uninitialized at the call). pisa binds
//! an `out` parameter to its argument's storage instead of copying, so the parameter starts
//! with the argument's value, and a path that never writes it leaves the argument as it was.
//! p4c copies an uninitialized temporary back (on bf-p4c an unspecified value, often 0). The
//! two agree where the body writes every field of the parameter before reading it, on every
//! path: elsewhere the lowering warns that pisa differs.
//!
//! The walk is over the lowered body: a table runs any of its actions (or its default), so
//! after it a field counts as written only when every one of them writes it.

use std::rc::Rc;

use pipeline::ir::{self, Expr, FieldRef, Place, Stmt};

use super::{Binding, Lowerer, PipeObjs, V};
use crate::ast::{self, Direction};
use crate::diag::Diagnostic;
use crate::source::Span;

/// What a body does with an `out` parameter's fields.
#[derive(Default)]
struct Use {
    read_first: bool,
    unwritten: bool,
}

struct Walk<'p> {
    fields: Vec<FieldRef>,
    pipe: &'p PipeObjs,
    found: Use,
    /// Actions on the current call chain (P4 has no recursion; this only bounds the walk).
    depth: usize,
}

/// Per field of the parameter: written on every path so far.
type Written = Vec<bool>;

fn covers(w: FieldRef, f: FieldRef) -> bool {
    w.offset <= f.offset && f.offset + u32::from(f.width) <= w.offset + u32::from(w.width)
}

fn overlaps(a: FieldRef, b: FieldRef) -> bool {
    a.offset < b.offset + u32::from(b.width) && b.offset < a.offset + u32::from(a.width)
}

impl Walk<'_> {
    fn expr(&mut self, e: &Expr, w: &Written) {
        match e {
            Expr::Field(g) => {
                let unwritten = self
                    .fields
                    .iter()
                    .zip(w)
                    .any(|(f, &ok)| !ok && overlaps(*f, *g));
                self.found.read_first |= unwritten;
            }
            Expr::Unary { arg, .. } | Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => {
                self.expr(arg, w)
            }
            Expr::Binary { a, b, .. } | Expr::Concat { hi: a, lo: b, .. } => {
                self.expr(a, w);
                self.expr(b, w);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => [cond, then, els].iter().for_each(|x| self.expr(x, w)),
            Expr::RegisterExecute { index, .. } => self.expr(index, w),
            Expr::Hash { inputs, .. } | Expr::ChecksumUpdate { inputs, .. } => {
                inputs.iter().for_each(|x| self.expr(x, w))
            }
            Expr::MinMax { value, mask, .. } => {
                self.expr(value, w);
                self.expr(mask, w);
            }
            Expr::MathUnit { input, .. } => self.expr(input, w),
            Expr::MeterExecute { index, color, .. } => index
                .iter()
                .chain(color.iter())
                .for_each(|x| self.expr(x, w)),
            Expr::FilterExecute { value, index, .. } => {
                self.expr(value, w);
                index.iter().for_each(|x| self.expr(x, w));
            }
            _ => {}
        }
    }

    fn write(&self, p: &Place, w: &mut Written) {
        if let Place::Field(d) = p {
            for (f, ok) in self.fields.iter().zip(w.iter_mut()) {
                *ok |= covers(*d, *f);
            }
        }
    }

    fn block(&mut self, b: &[Stmt], w: &mut Written) {
        for s in b {
            self.stmt(s, w);
        }
    }

    /// `w` after running `b` from `w`, each of `branches` from that.
    fn meet<'b>(&mut self, w: &mut Written, branches: impl Iterator<Item = &'b [Stmt]>) {
        let mut all: Option<Written> = None;
        for b in branches {
            let mut x = w.clone();
            self.block(b, &mut x);
            all = Some(match all {
                None => x,
                Some(a) => a.iter().zip(&x).map(|(p, q)| *p && *q).collect(),
            });
        }
        if let Some(a) = all {
            *w = a;
        }
    }

    fn action(&mut self, a: ir::ActionId, w: &mut Written) {
        let Some(act) = self.pipe.actions.get(a.index()) else {
            return;
        };
        if self.depth < 8 {
            self.depth += 1;
            self.block(&act.body, w);
            self.depth -= 1;
        }
    }

    fn table(&mut self, t: ir::TableId, branches: &ir::TableBranches, w: &mut Written) {
        let Some(table) = self.pipe.tables.get(t.index()) else {
            return;
        };
        table.keys.iter().for_each(|k| self.expr(&k.expr, w));
        let mut ids: Vec<ir::ActionId> = table.actions.iter().map(|a| a.action).collect();
        ids.push(table.default_action.action);
        let mut all: Option<Written> = None;
        for id in ids {
            let mut x = w.clone();
            self.action(id, &mut x);
            all = Some(match all {
                None => x,
                Some(a) => a.iter().zip(&x).map(|(p, q)| *p && *q).collect(),
            });
        }
        if let Some(a) = all {
            *w = a;
        }
        match branches {
            ir::TableBranches::None => {}
            ir::TableBranches::HitMiss { hit, miss } => {
                self.meet(w, [hit.as_slice(), miss.as_slice()].into_iter())
            }
            ir::TableBranches::ActionRun { cases, default } => self.meet(
                w,
                cases
                    .iter()
                    .map(|(_, b)| b.as_slice())
                    .chain(std::iter::once(default.as_slice())),
            ),
        }
    }

    fn stmt(&mut self, s: &Stmt, w: &mut Written) {
        match s {
            Stmt::Assign { dst, value } => {
                self.expr(value, w);
                self.write(dst, w);
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond, w);
                self.meet(w, [then.as_slice(), els.as_slice()].into_iter());
            }
            Stmt::ApplyTable { table, branches } => self.table(*table, branches, w),
            Stmt::CallAction { action, args } => {
                args.iter().for_each(|a| self.expr(a, w));
                self.action(*action, w);
            }
            Stmt::Count { index, .. } => self.expr(index, w),
            Stmt::RegisterExecute { index, outs, .. } => {
                self.expr(index, w);
                outs.iter().flatten().for_each(|p| self.write(p, w));
            }
            Stmt::Exit | Stmt::Return => {
                self.found.unwritten |= w.iter().any(|ok| !ok);
                w.iter_mut().for_each(|ok| *ok = true);
            }
            Stmt::MirrorEmit { session, header } => {
                self.expr(session, w);
                header.iter().for_each(|x| self.expr(x, w));
            }
            Stmt::ResubmitEmit { header: xs }
            | Stmt::PktgenEmit { header: xs }
            | Stmt::DigestPack { fields: xs, .. } => xs.iter().for_each(|x| self.expr(x, w)),
            _ => {}
        }
    }
}

impl<'a> Lowerer<'a> {
    /// Warns for each `out` parameter without headers, bound to its argument's storage (not
    /// in `copied`), that `body` may read before writing or may leave unwritten.
    pub(super) fn warn_out_scalars(
        &mut self,
        what: &str,
        params: &'a [ast::Param],
        frame: &std::collections::HashMap<String, Binding<'a>>,
        copied: &dyn Fn(&str) -> bool,
        body: &[Stmt],
        span: Span,
    ) {
        for p in params.iter().filter(|p| p.direction == Direction::Out) {
            let Some(Binding::Val(V::Loc(loc))) = frame.get(&p.name.name) else {
                continue;
            };
            if copied(&p.name.name) || self.dont_cares.iter().any(|d| Rc::ptr_eq(d, loc)) {
                continue;
            }
            let mut headers = Vec::new();
            loc.headers(&mut headers);
            let mut fields = Vec::new();
            loc.field_refs(&mut fields);
            if !headers.is_empty() || fields.is_empty() {
                continue;
            }
            let n = fields.len();
            let mut walk = Walk {
                fields,
                pipe: &self.pipe,
                found: Use::default(),
                depth: 0,
            };
            let mut w = vec![false; n];
            walk.block(body, &mut w);
            let found = Use {
                read_first: walk.found.read_first,
                unwritten: walk.found.unwritten || w.iter().any(|ok| !ok),
            };
            if let Some(d) = out_scalar_warning(what, p, &found, span) {
                self.warn(d);
            }
        }
    }
}

fn out_scalar_warning(what: &str, p: &ast::Param, u: &Use, span: Span) -> Option<Diagnostic> {
    let how = match (u.read_first, u.unwritten) {
        (false, false) => return None,
        (true, false) => "may be read before it is written",
        (false, true) => "is not written on every path",
        (true, true) => "may be read before it is written, and is not written on every path",
    };
    Some(
        Diagnostic::warning(format!(
            "`out` parameter `{}` of {what} {how}: pisa passes it by reference, so it starts \
             with the argument's value and keeps it where unwritten; P4 leaves an `out` \
             parameter uninitialized and p4c copies that unspecified value back",
            p.name.name
        ))
        .with_primary(span, "called here")
        .with_secondary(p.span, "parameter declared here")
        .with_help("write the parameter before reading it on every path, or declare it `inout`"),
    )
}

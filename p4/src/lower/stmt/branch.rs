//! `if` statements whose conditions may apply tables (`t.apply().hit && ...`).

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self};

use crate::ast::{self, BinOp, ExprKind};
use crate::diag::Diagnostic;
use crate::lower::expr::{path_of, Resolved};
use crate::lower::{Binding, Ctx, Lowerer, Res};

/// What to run on one side of a condition that applies a table (`t.apply().hit && ...`).
pub(super) enum Cont<'c, 'a> {
    Stmt(Option<&'a ast::Stmt>),
    If(&'a ast::Expr, &'c Cont<'c, 'a>, &'c Cont<'c, 'a>),
}

/// True when `e` contains a table `apply()` call.
pub(super) fn contains_apply(e: &ast::Expr) -> bool {
    match &e.kind {
        ExprKind::Call { callee, args, .. } => {
            matches!(&callee.kind, ExprKind::Member { member, .. } if member.name == "apply")
                || contains_apply(callee)
                || args.iter().any(|a| contains_apply(&a.value))
        }
        ExprKind::Member { base, .. } => contains_apply(base),
        ExprKind::Unary { operand, .. } => contains_apply(operand),
        ExprKind::Binary { lhs, rhs, .. } => contains_apply(lhs) || contains_apply(rhs),
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => contains_apply(cond) || contains_apply(then_expr) || contains_apply(else_expr),
        _ => false,
    }
}

/// `t.apply().<what>`: the table expression and `what`.
pub(super) fn table_apply_member(e: &ast::Expr) -> Option<(&ast::Expr, &ast::Ident)> {
    let ExprKind::Member { base, member } = &e.kind else {
        return None;
    };
    let ExprKind::Call { callee, .. } = &base.kind else {
        return None;
    };
    let ExprKind::Member {
        base: table,
        member: apply,
    } = &callee.kind
    else {
        return None;
    };
    (apply.name == "apply").then_some((&**table, member))
}

impl<'a> Lowerer<'a> {
    /// An if statement whose condition may apply tables.
    pub(super) fn branch(
        &mut self,
        cond: &'a ast::Expr,
        t: &Cont<'_, 'a>,
        f: &Cont<'_, 'a>,
        out: &mut ir::Block,
    ) -> Res<()> {
        if !contains_apply(cond) {
            let c = self.cond(cond);
            // A condition known at compile time (a constant, a constructor parameter) takes
            // one branch, as p4c folds it: only that one is lowered, so a table applied on both
            // sides of `if (param)` is applied (and placed) once.
            if let Ok(ir::Expr::Const { value, .. }) = &c {
                // p4c folds the `if` away before bf-p4c reads the deparser: what it holds is
                // not under it (see `deparser_rules`).
                let folded = self
                    .deparser_conds
                    .last()
                    .is_some_and(|c| std::ptr::eq(*c, cond))
                    .then(|| self.deparser_conds.pop())
                    .flatten();
                let taken = self.run_cont(if *value != 0 { t } else { f });
                self.deparser_conds.extend(folded);
                out.extend(taken?);
                return Ok(());
            }
            if matches!(self.ctx, Ctx::Control | Ctx::Deparser)
                || (self.ctx == Ctx::Action && self.inline_action > 0)
            {
                self.ifs.push(cond.span);
            }
            if let Ok(c) = &c {
                self.check_action_condition(c, cond.span);
            }
            let tb = self.run_cont(t);
            let fb = self.run_cont(f);
            if let (Ok(c), Ok(tb), Ok(fb)) = (&c, &tb, &fb) {
                self.check_action_if_branches(c, tb, fb, cond.span);
            }
            out.push(ir::Stmt::If {
                cond: c?,
                then: tb?,
                els: fb?,
                stage: 0,
            });
            return Ok(());
        }
        match &cond.kind {
            ExprKind::Unary {
                op: ast::UnOp::Not,
                operand,
            } => self.branch(operand, f, t, out),
            ExprKind::Binary {
                op: BinOp::And,
                lhs,
                rhs,
            } => {
                let inner = Cont::If(rhs, t, f);
                self.branch(lhs, &inner, f, out)
            }
            ExprKind::Binary {
                op: BinOp::Or,
                lhs,
                rhs,
            } => {
                let inner = Cont::If(rhs, t, f);
                self.branch(lhs, t, &inner, out)
            }
            _ => self.table_condition(cond, t, f, out),
        }
    }

    pub(super) fn run_cont(&mut self, c: &Cont<'_, 'a>) -> Res<ir::Block> {
        let mut b = Vec::new();
        match c {
            Cont::Stmt(Some(s)) => {
                self.scopes.push(HashMap::new());
                let r = self.stmt_res(s, &mut b);
                self.scopes.pop();
                r?;
            }
            Cont::Stmt(None) => {}
            Cont::If(e, t, f) => self.branch(e, t, f, &mut b)?,
        }
        Ok(b)
    }

    /// The table a `t` in `t.apply()` names.
    pub(super) fn table_of(&mut self, e: &'a ast::Expr) -> Res<Rc<crate::lower::TableSlot>> {
        match self.resolve(e)? {
            Resolved::Obj(Binding::Table(t)) => Ok(t),
            _ => Err(self.err(
                Diagnostic::error(format!(
                    "`{}` is not a table",
                    path_of(e).unwrap_or_default()
                ))
                .with_primary(e.span, "`apply()` here needs a table"),
            )),
        }
    }

    /// A condition that is `t.apply().hit` or `.miss`: the table applied with the two sides
    /// as its hit and miss branches.
    fn table_condition(
        &mut self,
        cond: &'a ast::Expr,
        t: &Cont<'_, 'a>,
        f: &Cont<'_, 'a>,
        out: &mut ir::Block,
    ) -> Res<()> {
        let Some((table, what)) = table_apply_member(cond) else {
            return Err(self.err(
                crate::check::unsupported(
                    cond.span,
                    "a table apply inside this expression",
                    "table results other than `.hit`, `.miss` and `.action_run`",
                )
                .with_help(
                    "write `if (t.apply().hit) { ... }` or `switch (t.apply().action_run) { ... }`",
                ),
            ));
        };
        let slot = self.table_of(table)?;
        let (hit, miss) = match what.name.as_str() {
            "hit" => (t, f),
            "miss" => (f, t),
            other => {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "`apply()` result has no `{other}` usable in a condition"
                    ))
                    .with_primary(what.span, "expected `hit` or `miss`")
                    .with_help("use `.hit` or `.miss` here; `.action_run` goes in a `switch`"),
                ))
            }
        };
        if self.ctx != Ctx::Control {
            return Err(self.err(
                Diagnostic::error(format!(
                    "tables cannot be applied in {}",
                    self.ctx.describe()
                ))
                .with_primary(cond.span, "here"),
            ));
        }
        let hb = self.run_cont(hit);
        let mb = self.run_cont(miss);
        out.push(ir::Stmt::ApplyTable {
            table: slot.id,
            branches: ir::TableBranches::HitMiss {
                hit: hb?,
                miss: mb?,
            },
        });
        Ok(())
    }
}

//! `switch` statements: on a table's `apply().action_run`, or on a value (an if/else chain).

use std::rc::Rc;

use pipeline::ir::{self, ActionId};

use super::*;
use crate::ast::{self, ExprKind};
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, TableSlot};
use crate::source::Span;

/// The labels of a table switch grouped by body, and the default's body.
type ActionGroups<'a> = (Vec<(Vec<ActionId>, &'a ast::Block)>, Option<&'a ast::Block>);

impl<'a> Lowerer<'a> {
    pub(super) fn switch(
        &mut self,
        subject: &'a ast::Expr,
        cases: &'a [ast::SwitchCase],
        _span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        match table_apply_member(subject) {
            Some((table, what)) => self.table_switch(subject, table, what, cases, out),
            None => self.value_switch(subject, cases, out),
        }
    }

    /// `switch (t.apply().action_run) { a: {...} default: {...} }`.
    fn table_switch(
        &mut self,
        subject: &'a ast::Expr,
        table: &'a ast::Expr,
        what: &'a ast::Ident,
        cases: &'a [ast::SwitchCase],
        out: &mut ir::Block,
    ) -> Res<()> {
        if what.name != "action_run" {
            return Err(self.err(
                Diagnostic::error(format!("cannot switch on `apply().{}`", what.name))
                    .with_primary(what.span, "expected `action_run`")
                    .with_help("use `if (t.apply().hit)` for hit/miss"),
            ));
        }
        if self.ctx != Ctx::Control {
            return Err(self.err(
                Diagnostic::error(format!(
                    "tables cannot be applied in {}",
                    self.ctx.describe()
                ))
                .with_primary(subject.span, "here"),
            ));
        }
        let slot = self.table_of(table)?;
        let (groups, default_body) = self.action_groups(&slot, cases)?;
        // Bodies in IR order (cases, then default) so gateway spans stay in pre-order.
        let mut arms: Vec<(ActionId, ir::Block)> = Vec::new();
        for (labels, b) in groups {
            let mut blk = Vec::new();
            let first_if = self.ifs.len();
            self.block_stmts(&b.stmts, &mut blk);
            // Each extra label gets a copy of the body: its gateways appear again.
            let body_ifs: Vec<Span> = self.ifs[first_if..].to_vec();
            for (k, a) in labels.into_iter().enumerate() {
                if k > 0 {
                    self.ifs.extend_from_slice(&body_ifs);
                }
                arms.push((a, blk.clone()));
            }
        }
        let mut default = Vec::new();
        if let Some(b) = default_body {
            self.block_stmts(&b.stmts, &mut default);
        }
        out.push(ir::Stmt::ApplyTable {
            table: slot.id,
            branches: ir::TableBranches::ActionRun {
                cases: arms,
                default,
            },
        });
        Ok(())
    }

    /// The actions of a table switch's labels, grouped by the body they fall through to.
    fn action_groups(
        &mut self,
        slot: &Rc<TableSlot>,
        cases: &'a [ast::SwitchCase],
    ) -> Res<ActionGroups<'a>> {
        let mut pending: Vec<ActionId> = Vec::new();
        let mut pending_default = false;
        let mut groups = Vec::new();
        let mut default_body = None;
        let mut seen: Vec<ActionId> = Vec::new();
        let mut failed = false;
        for c in cases {
            match &c.label {
                ast::SwitchLabel::Default => pending_default = true,
                ast::SwitchLabel::Expr(e) => match self.action_label(slot, e, &seen) {
                    Some(a) => {
                        seen.push(a);
                        pending.push(a);
                    }
                    None => failed = true,
                },
            }
            if let Some(b) = &c.body {
                if !pending.is_empty() {
                    groups.push((std::mem::take(&mut pending), b));
                }
                if pending_default {
                    default_body = Some(b);
                    pending_default = false;
                }
            }
        }
        if failed {
            return Err(crate::lower::Reported);
        }
        Ok((groups, default_body))
    }

    /// The action a table switch label names (reported and `None` when it names none, or
    /// one already `seen`).
    fn action_label(
        &mut self,
        slot: &TableSlot,
        e: &'a ast::Expr,
        seen: &[ActionId],
    ) -> Option<ActionId> {
        let ExprKind::Name(id) = &e.kind else {
            self.err(
                Diagnostic::error("a table switch label must be an action name")
                    .with_primary(e.span, "not an action name"),
            );
            return None;
        };
        let Some((_, a)) = slot.actions.iter().find(|(n, _)| *n == id.name) else {
            let names: Vec<&str> = slot.actions.iter().map(|(n, _)| n.as_str()).collect();
            self.err(
                Diagnostic::error(format!(
                    "`{}` is not an action of table `{}`",
                    id.name, slot.name
                ))
                .with_primary(id.span, "not in the table's `actions`")
                .with_help(format!(
                    "actions of `{}` are: {}",
                    slot.name,
                    names.join(", ")
                )),
            );
            return None;
        };
        if seen.contains(a) {
            self.err(
                Diagnostic::error(format!("action `{}` appears twice in this switch", id.name))
                    .with_primary(id.span, "duplicate label"),
            );
            return None;
        }
        Some(*a)
    }

    /// A switch on a value: an if/else chain, `default` last wherever it is written.
    fn value_switch(
        &mut self,
        subject: &'a ast::Expr,
        cases: &'a [ast::SwitchCase],
        out: &mut ir::Block,
    ) -> Res<()> {
        let (subj, ty) = self.scalar(subject, None)?;
        let width = ty.scalar_width().unwrap_or(1);
        let mut groups: Vec<(ir::Expr, &'a ast::Block, Span)> = Vec::new();
        let mut default_body: Option<&'a ast::Block> = None;
        let mut pending: Vec<ir::Expr> = Vec::new();
        let mut is_default = false;
        for c in cases {
            match &c.label {
                ast::SwitchLabel::Default => is_default = true,
                ast::SwitchLabel::Expr(e) => {
                    let v = self.const_value(e, &ty)?;
                    pending.push(ir::Expr::Binary {
                        op: ir::BinOp::Eq,
                        a: Box::new(subj.clone()),
                        b: Box::new(ir::Expr::constant(v, width)),
                        width: 1,
                        signed: false,
                    });
                }
            }
            if let Some(b) = &c.body {
                let cond = pending.drain(..).reduce(|a, b| ir::Expr::Binary {
                    op: ir::BinOp::LOr,
                    a: Box::new(a),
                    b: Box::new(b),
                    width: 1,
                    signed: false,
                });
                if let Some(cond) = cond {
                    groups.push((cond, b, c.span));
                }
                if is_default {
                    default_body = Some(b);
                    is_default = false;
                }
            }
        }
        self.if_chain(groups, default_body, out);
        Ok(())
    }

    /// `if (c1) b1 else if (c2) b2 ... else default`, each condition a gateway in controls.
    fn if_chain(
        &mut self,
        groups: Vec<(ir::Expr, &'a ast::Block, Span)>,
        default_body: Option<&'a ast::Block>,
        out: &mut ir::Block,
    ) {
        let gateway = matches!(self.ctx, Ctx::Control | Ctx::Deparser);
        let mut lowered = Vec::new();
        for (cond, b, cspan) in groups {
            if gateway {
                self.ifs.push(cspan);
            }
            let mut blk = Vec::new();
            self.block_stmts(&b.stmts, &mut blk);
            lowered.push((cond, blk));
        }
        let mut tail: ir::Block = Vec::new();
        if let Some(b) = default_body {
            self.block_stmts(&b.stmts, &mut tail);
        }
        for (cond, blk) in lowered.into_iter().rev() {
            tail = vec![ir::Stmt::If {
                cond,
                then: blk,
                els: tail,
                stage: 0,
            }];
        }
        out.extend(tail);
    }
}

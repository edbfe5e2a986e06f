//! Statements: the dispatcher over statement kinds, blocks and locals. Assignments,
//! conditions, switches, calls, actions and nested applies live in the submodules.

use std::collections::HashMap;

use pipeline::ir::{self};

use crate::ast::{self, StmtKind};
use crate::diag::Diagnostic;
use crate::lower::{Binding, Ctx, Lowerer, Res, V};

mod action;
mod args;
mod assign;
mod branch;
mod builtin;
mod call;
mod packet_in;
pub(crate) mod slice_args;
mod switch;

pub(crate) use assign::{wide_copy, Dest};
use branch::{table_apply_member, Cont};

impl<'a> Lowerer<'a> {
    /// Lowers statements in a new block scope.
    pub fn block_stmts(&mut self, stmts: &'a [ast::Stmt], out: &mut ir::Block) {
        self.scopes.push(HashMap::new());
        for s in stmts {
            self.stmt(s, out);
        }
        self.scopes.pop();
    }

    /// Lowers one statement; errors are reported and lowering goes on with the next one.
    pub fn stmt(&mut self, s: &'a ast::Stmt, out: &mut ir::Block) {
        let _ = self.stmt_res(s, out);
    }

    pub(super) fn stmt_res(&mut self, s: &'a ast::Stmt, out: &mut ir::Block) -> Res<()> {
        match &s.kind {
            StmtKind::Assign { lhs, op, rhs } => self.assign(lhs, *op, rhs, s.span, out),
            StmtKind::Call(e) => {
                self.call(e, Some(out))?;
                Ok(())
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => self.if_stmt(s, cond, then_branch, else_branch.as_deref(), out),
            StmtKind::Switch { subject, cases } => self.switch(subject, cases, s.span, out),
            StmtKind::Block(b) => {
                self.block_stmts(&b.stmts, out);
                Ok(())
            }
            StmtKind::Variable(v) => {
                if self.redeclared(&v.name) {
                    return Err(crate::lower::Reported);
                }
                let r = self.local_var(v, out);
                if r.is_err() {
                    self.bind(&v.name.name, Binding::Poison);
                }
                r
            }
            StmtKind::Const(c) => {
                if self.redeclared(&c.name) {
                    return Err(crate::lower::Reported);
                }
                let v = self.const_decl_value(c)?;
                self.bind(&c.name.name, Binding::Val(v));
                Ok(())
            }
            StmtKind::Return(val) => self.return_stmt(s, val.as_ref(), out),
            StmtKind::Exit => self.exit_stmt(s, out),
            StmtKind::Empty => Ok(()),
            StmtKind::Unsupported { what } => {
                Err(self.err(crate::check::unsupported(s.span, what, "this statement")))
            }
        }
    }

    /// `if (cond) then_branch else else_branch` (not in parsers: they branch by `select`).
    fn if_stmt(
        &mut self,
        s: &'a ast::Stmt,
        cond: &'a ast::Expr,
        then_branch: &'a ast::Stmt,
        else_branch: Option<&'a ast::Stmt>,
        out: &mut ir::Block,
    ) -> Res<()> {
        if self.ctx == Ctx::Parser {
            return Err(self.err(
                crate::check::unsupported(
                    s.span,
                    "`if` in a parser state",
                    "conditionals in parsers",
                )
                .with_help("branch with `transition select(...)` instead"),
            ));
        }
        let t = Cont::Stmt(Some(then_branch));
        let f = Cont::Stmt(else_branch);
        let deparser = self.ctx == Ctx::Deparser;
        self.deparser_ifs += u32::from(deparser);
        if deparser {
            self.deparser_conds.push(cond);
        }
        let r = self.branch(cond, &t, &f, out);
        if deparser {
            self.deparser_conds.pop();
        }
        self.deparser_ifs -= u32::from(deparser);
        r
    }

    /// `return;` in an action, a register action or a top-level control.
    fn return_stmt(
        &mut self,
        s: &'a ast::Stmt,
        val: Option<&'a ast::Expr>,
        out: &mut ir::Block,
    ) -> Res<()> {
        if let Some(v) = val {
            return Err(self.err(
                crate::check::unsupported(v.span, "returning a value", "functions with results")
                    .with_help("write the result to an `out` parameter"),
            ));
        }
        match self.ctx {
            Ctx::Action | Ctx::RegAction => {}
            Ctx::Control if self.depth <= 1 => {}
            Ctx::Control => {
                return Err(self.err(
                    crate::check::unsupported(
                        s.span,
                        "`return` in a nested control",
                        "early return from an inlined control",
                    )
                    .with_help("restructure with if/else"),
                ))
            }
            _ => {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "`return` is not allowed in {}",
                        self.ctx.describe()
                    ))
                    .with_primary(s.span, "here"),
                ))
            }
        }
        out.push(ir::Stmt::Return);
        Ok(())
    }

    /// `exit;` in a control or an action.
    fn exit_stmt(&mut self, s: &'a ast::Stmt, out: &mut ir::Block) -> Res<()> {
        if !matches!(self.ctx, Ctx::Control | Ctx::Action) {
            return Err(self.err(
                Diagnostic::error(format!("`exit` is not allowed in {}", self.ctx.describe()))
                    .with_primary(s.span, "here")
                    .with_help("`exit` ends an ingress or egress control"),
            ));
        }
        out.push(ir::Stmt::Exit);
        Ok(())
    }

    /// `T x [= e];` inside a body.
    pub(super) fn local_var(&mut self, v: &'a ast::VariableDecl, out: &mut ir::Block) -> Res<()> {
        let ty = self.resolve_type(&v.ty)?;
        self.tmp += 1;
        let name = if self.ctx == Ctx::Action {
            format!("{}.{}${}", self.prefix, v.name.name, self.tmp)
        } else {
            self.join(&v.name.name)
        };
        let loc = self.alloc(&name, &ty, v.name.span)?;
        self.note_local(&loc);
        self.bind(&v.name.name, Binding::Val(V::Loc(loc.clone())));
        if let Some(init) = &v.init {
            self.assign_to(Dest::from_loc(&loc), init, v.name.span, out)?;
        }
        Ok(())
    }
}

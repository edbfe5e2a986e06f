//! Statements: assignments, method and function calls, if/switch (including table
//! `apply().hit/.miss/.action_run`), blocks, locals, exit/return; direct action calls and
//! nested control applications (inlined, parameters aliased to the arguments' storage).

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, ActionId, Place};

use super::expr::{path_of, Resolved};
use super::phv::Loc;
use super::{ActionSlot, Binding, BlockInst, Ctx, Lowerer, Res, V};
use crate::ast::{self, BinOp, DeclKind, Direction, ExprKind, StmtKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

/// An assignable place.
pub(crate) enum Dest {
    Scalar(Place, Ty),
    Agg(Rc<Loc>),
}

/// What to run on one side of a condition that applies a table (`t.apply().hit && ...`).
enum Cont<'c, 'a> {
    Stmt(Option<&'a ast::Stmt>),
    If(&'a ast::Expr, &'c Cont<'c, 'a>, &'c Cont<'c, 'a>),
}

/// True when `e` contains a table `apply()` call.
fn contains_apply(e: &ast::Expr) -> bool {
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
fn table_apply_member(e: &ast::Expr) -> Option<(&ast::Expr, &ast::Ident)> {
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

    fn stmt_res(&mut self, s: &'a ast::Stmt, out: &mut ir::Block) -> Res<()> {
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
            } => {
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
                let f = Cont::Stmt(else_branch.as_deref());
                let deparser = self.ctx == Ctx::Deparser;
                self.deparser_ifs += u32::from(deparser);
                let r = self.branch(cond, &t, &f, out);
                self.deparser_ifs -= u32::from(deparser);
                r
            }
            StmtKind::Switch { subject, cases } => self.switch(subject, cases, s.span, out),
            StmtKind::Block(b) => {
                self.block_stmts(&b.stmts, out);
                Ok(())
            }
            StmtKind::Variable(v) => {
                if self.redeclared(&v.name) {
                    return Err(super::Reported);
                }
                let r = self.local_var(v, out);
                if r.is_err() {
                    self.bind(&v.name.name, Binding::Poison);
                }
                r
            }
            StmtKind::Const(c) => {
                if self.redeclared(&c.name) {
                    return Err(super::Reported);
                }
                let v = self.const_decl_value(c)?;
                self.bind(&c.name.name, Binding::Val(v));
                Ok(())
            }
            StmtKind::Return(val) => {
                if let Some(v) = val {
                    return Err(self.err(
                        crate::check::unsupported(
                            v.span,
                            "returning a value",
                            "functions with results",
                        )
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
            StmtKind::Exit => {
                if !matches!(self.ctx, Ctx::Control | Ctx::Action) {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`exit` is not allowed in {}",
                            self.ctx.describe()
                        ))
                        .with_primary(s.span, "here")
                        .with_help("`exit` ends an ingress or egress control"),
                    ));
                }
                out.push(ir::Stmt::Exit);
                Ok(())
            }
            StmtKind::Empty => Ok(()),
            StmtKind::Unsupported { what } => {
                Err(self.err(crate::check::unsupported(s.span, what, "this statement")))
            }
        }
    }

    /// `T x [= e];` inside a body.
    fn local_var(&mut self, v: &'a ast::VariableDecl, out: &mut ir::Block) -> Res<()> {
        let ty = self.resolve_type(&v.ty)?;
        self.tmp += 1;
        let name = if self.ctx == Ctx::Action {
            format!("{}.{}${}", self.prefix, v.name.name, self.tmp)
        } else {
            self.join(&v.name.name)
        };
        let loc = self.alloc(&name, &ty, v.name.span)?;
        self.bind(&v.name.name, Binding::Val(V::Loc(loc.clone())));
        if let Some(init) = &v.init {
            self.assign_to(Dest::from_loc(&loc), init, v.name.span, out)?;
        }
        Ok(())
    }

    pub(crate) fn dest(&mut self, lhs: &'a ast::Expr) -> Res<Dest> {
        if let ExprKind::Slice { base, hi, lo } = &lhs.kind {
            let d = self.dest(base)?;
            let Dest::Scalar(Place::Field(f), ty) = d else {
                return Err(self.err(
                    Diagnostic::error("only a field's bits can be assigned through a slice")
                        .with_primary(base.span, "not a PHV field"),
                ));
            };
            let w = ty.scalar_width().unwrap_or(0);
            let h = self.const_int(hi)?;
            let l = self.const_int(lo)?;
            if !(0 <= l && l <= h && h < i128::from(w)) {
                return Err(self.err(
                    Diagnostic::error(format!("slice [{h}:{l}] out of range for `{ty}`"))
                        .with_primary(lhs.span, "bad slice bounds")
                        .with_help(format!(
                            "use [hi:lo] with {} >= hi >= lo >= 0",
                            w.saturating_sub(1)
                        )),
                ));
            }
            return Ok(Dest::Scalar(
                Place::FieldSlice {
                    field: f,
                    hi: h as u16,
                    lo: l as u16,
                },
                Ty::Bit((h - l + 1) as u16),
            ));
        }
        // Writing through an `in` parameter is an error.
        let mut root = lhs;
        while let ExprKind::Member { base, .. } | ExprKind::Index { base, .. } = &root.kind {
            root = base;
        }
        if let ExprKind::Name(id) = &root.kind {
            if let Some(Binding::In(_)) = self.lookup_scoped(&id.name) {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "cannot assign to `{}`: `{}` is an `in` parameter",
                        path_of(lhs).unwrap_or_default(),
                        id.name
                    ))
                    .with_primary(lhs.span, "read-only")
                    .with_help("declare the parameter `inout` or `out` to write it"),
                ));
            }
        }
        match self.resolve(lhs)? {
            Resolved::V(V::Loc(loc)) => Ok(Dest::from_loc(&loc)),
            Resolved::V(V::Scalar(ir::Expr::Param { .. }, _)) => Err(self.err(
                Diagnostic::error(format!("cannot assign to action parameter `{}`", path_of(lhs).unwrap_or_default()))
                    .with_primary(lhs.span, "action data is read-only")
                    .with_help("copy it into a local variable or metadata field first"),
            )),
            _ => Err(self.err(
                Diagnostic::error("cannot assign to this expression")
                    .with_primary(lhs.span, "not a variable, field or header")
                    .with_help("the left side of `=` must be a field, a header, a struct or a local variable"),
            )),
        }
    }

    fn assign(
        &mut self,
        lhs: &'a ast::Expr,
        op: Option<BinOp>,
        rhs: &'a ast::Expr,
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        let dest = self.dest(lhs)?;
        match op {
            None => self.assign_to(dest, rhs, lhs.span, out),
            Some(op) => {
                let Dest::Scalar(place, ty) = dest else {
                    return Err(self.err(
                        Diagnostic::error(format!("`{}=` on an aggregate", op.as_str()))
                            .with_primary(lhs.span, "not a scalar"),
                    ));
                };
                let v = self.binary(span, op, lhs, rhs, Some(&ty))?;
                let (e, _) = self.scalar_of_value(v, Some(&ty), span)?;
                out.push(ir::Stmt::Assign {
                    dst: place,
                    value: e,
                });
                Ok(())
            }
        }
    }

    fn assign_to(
        &mut self,
        dest: Dest,
        rhs: &'a ast::Expr,
        lhs: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        match dest {
            Dest::Scalar(ir::Place::Field(d), _) if d.width > ir::MAX_VALUE_WIDTH => {
                // A field wider than a value: only a whole field of the same width copies in.
                let v = self.expr(rhs, None)?;
                match &v {
                    V::Loc(loc) => match &**loc {
                        Loc::Field { f, .. } if f.width == d.width => {
                            wide_copy(d, *f, out);
                            Ok(())
                        }
                        _ => Err(self.wide_value(d.width, rhs.span)),
                    },
                    _ => Err(self.wide_value(d.width, rhs.span)),
                }
            }
            Dest::Scalar(place, ty) => {
                // Saved and restored: lowering `rhs` may lower statements of its own.
                let outer_rhs = self.whole_rhs.replace(uncast(rhs).span);
                let outer_hoisted = std::mem::take(&mut self.hoisted);
                let r = self.scalar(rhs, Some(&ty));
                self.whole_rhs = outer_rhs;
                let mut hoisted = std::mem::replace(&mut self.hoisted, outer_hoisted);
                let (e, _) = r?;
                self.checksum_destination(&place, &ty, &e, lhs)?;
                if self.shadowed_checksum_update(&place, &e, lhs) {
                    return Ok(());
                }
                if into_execute(&mut hoisted, &place, &e) {
                    out.extend(hoisted);
                    return Ok(());
                }
                out.extend(hoisted);
                // `x = x` (two names of one field, `@pa_alias`) does nothing; bf-p4c drops it.
                if matches!((&place, &e), (ir::Place::Field(d), ir::Expr::Field(s)) if d == s) {
                    return Ok(());
                }
                out.push(ir::Stmt::Assign {
                    dst: place,
                    value: e,
                });
                Ok(())
            }
            Dest::Agg(loc) => {
                // Special right-hand sides that produce aggregates.
                if let ExprKind::Call {
                    callee,
                    type_args,
                    args,
                } = &rhs.kind
                {
                    if let ExprKind::Name(f) = &callee.kind {
                        if f.name == "port_metadata_unpack" {
                            return self.port_metadata_unpack(&loc, type_args, args, rhs.span, out);
                        }
                    }
                    if let ExprKind::Member { base, member } = &callee.kind {
                        if member.name == "lookahead" {
                            if let Ok(Resolved::Obj(Binding::Packet { out: false })) =
                                self.resolve(base)
                            {
                                return self.lookahead_into(&loc, rhs.span, out);
                            }
                        }
                    }
                }
                let want = loc.ty();
                let v = self.expr(rhs, Some(&want))?;
                self.copy_into(&loc, v, rhs.span, out)
            }
        }
    }

    /// Copies a value into aggregate storage.
    fn copy_into(&mut self, dst: &Rc<Loc>, v: V, vspan: Span, out: &mut ir::Block) -> Res<()> {
        match v {
            V::Loc(src) => {
                if src.ty() != dst.ty() {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "mismatched types: expected `{}`, found `{}`",
                            dst.ty(),
                            src.ty()
                        ))
                        .with_primary(vspan, format!("this is a `{}`", src.ty())),
                    ));
                }
                self.copy_loc(dst, &src, out);
                Ok(())
            }
            V::List(items) => {
                let fields: Vec<Rc<Loc>> = match &**dst {
                    Loc::Header { fields, .. } | Loc::Struct { fields, .. } => fields.clone(),
                    _ => Vec::new(),
                };
                if fields.len() != items.len() {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`{}` has {} fields, the initializer {}",
                            dst.ty(),
                            fields.len(),
                            items.len()
                        ))
                        .with_primary(vspan, "wrong number of values"),
                    ));
                }
                for (f, (item, ispan)) in fields.iter().zip(items) {
                    match Dest::from_loc(f) {
                        Dest::Scalar(place, ty) => {
                            let (e, _) = self.scalar_of_value(item, Some(&ty), ispan)?;
                            out.push(ir::Stmt::Assign {
                                dst: place,
                                value: e,
                            });
                        }
                        Dest::Agg(l) => self.copy_into(&l, item, ispan, out)?,
                    }
                }
                if let Loc::Header { id, .. } = &**dst {
                    out.push(ir::Stmt::SetValid {
                        header: *id,
                        valid: true,
                    });
                }
                Ok(())
            }
            other => Err(self.err(
                Diagnostic::error(format!(
                    "mismatched types: expected `{}`, found `{}`",
                    dst.ty(),
                    other.ty()
                ))
                .with_primary(vspan, "cannot be assigned to an aggregate"),
            )),
        }
    }

    /// Field-by-field copy between two storages of the same type (headers as a whole).
    pub(super) fn copy_loc(&mut self, dst: &Rc<Loc>, src: &Rc<Loc>, out: &mut ir::Block) {
        match (&**dst, &**src) {
            (
                Loc::Header {
                    id: d, fields: df, ..
                },
                Loc::Header {
                    id: s, fields: sf, ..
                },
            ) => {
                if d != s {
                    out.push(ir::Stmt::CopyHeader { dst: *d, src: *s });
                    // The bytes carry the varbit's bits; its length lives beside them.
                    for (d, s) in df.iter().zip(sf) {
                        if let (Loc::Varbit { len: dl, .. }, Loc::Varbit { len: sl, .. }) =
                            (&**d, &**s)
                        {
                            out.push(ir::Stmt::Assign {
                                dst: Place::Field(*dl),
                                value: ir::Expr::Field(*sl),
                            });
                        }
                    }
                }
            }
            (
                Loc::Varbit {
                    f: d,
                    len: dl,
                    max: dm,
                },
                Loc::Varbit {
                    f: s,
                    len: sl,
                    max: sm,
                },
            ) if dm == sm => {
                wide_copy(*d, *s, out);
                out.push(ir::Stmt::Assign {
                    dst: Place::Field(*dl),
                    value: ir::Expr::Field(*sl),
                });
            }
            (Loc::Struct { fields: df, .. }, Loc::Struct { fields: sf, .. }) => {
                for (d, s) in df.iter().zip(sf) {
                    self.copy_loc(d, s, out);
                }
            }
            (
                Loc::Stack {
                    elems: df,
                    next_index: dn,
                    ..
                },
                Loc::Stack {
                    elems: sf,
                    next_index: sn,
                    ..
                },
            ) => {
                for (d, s) in df.iter().zip(sf) {
                    self.copy_loc(d, s, out);
                }
                // The next index is part of a stack's value: it travels with the elements.
                if dn != sn {
                    out.push(ir::Stmt::Assign {
                        dst: Place::Field(*dn),
                        value: ir::Expr::Field(*sn),
                    });
                }
            }
            (Loc::Field { f: d, .. }, Loc::Field { f: s, .. })
                if d.width > ir::MAX_VALUE_WIDTH && d.width == s.width =>
            {
                wide_copy(*d, *s, out)
            }
            _ => {
                if let (Dest::Scalar(place, _), Some(e)) = (Dest::from_loc(dst), scalar_of(src)) {
                    out.push(ir::Stmt::Assign {
                        dst: place,
                        value: e,
                    });
                }
            }
        }
    }

    fn port_metadata_unpack(
        &mut self,
        loc: &Rc<Loc>,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error("`port_metadata_unpack` is only allowed in the ingress parser")
                    .with_primary(span, "here"),
            ));
        }
        if let Some(t) = type_args.first() {
            let ty = self.resolve_type(t)?;
            if ty != loc.ty() {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "`port_metadata_unpack<{ty}>` assigned to a `{}`",
                        loc.ty()
                    ))
                    .with_primary(span, "types differ"),
                ));
            }
        }
        if args.len() != 1 {
            return Err(self.err(
                Diagnostic::error("`port_metadata_unpack` takes the packet")
                    .with_primary(span, "write `port_metadata_unpack<T>(pkt)`"),
            ));
        }
        self.lookahead_into(loc, span, out)?;
        let bits = super::intrinsics::port_metadata_bits(self.target);
        out.push(ir::Stmt::Advance(ir::Expr::constant(u128::from(bits), 32)));
        Ok(())
    }

    /// `x = pkt.lookahead<T>()` for an aggregate `x`: each field from the bits ahead.
    fn lookahead_into(&mut self, loc: &Rc<Loc>, span: Span, out: &mut ir::Block) -> Res<()> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error("`lookahead` is only allowed in a parser")
                    .with_primary(span, "here"),
            ));
        }
        let mut fields = Vec::new();
        loc.field_refs(&mut fields);
        let mut at = 0u32;
        for f in fields {
            out.push(ir::Stmt::Assign {
                dst: Place::Field(f),
                value: ir::Expr::Lookahead {
                    offset_bits: at,
                    width: f.width,
                },
            });
            at += u32::from(f.width);
        }
        let mut hs = Vec::new();
        loc.headers(&mut hs);
        for h in hs {
            out.push(ir::Stmt::SetValid {
                header: h,
                valid: true,
            });
        }
        Ok(())
    }

    /// An if statement whose condition may apply tables.
    fn branch(
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
                let taken = self.run_cont(if *value != 0 { t } else { f })?;
                out.extend(taken);
                return Ok(());
            }
            if matches!(self.ctx, Ctx::Control | Ctx::Deparser)
                || (self.ctx == Ctx::Action && self.inline_action > 0)
            {
                self.ifs.push(cond.span);
            }
            let tb = self.run_cont(t);
            let fb = self.run_cont(f);
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
            _ => {
                let Some((table, what)) = table_apply_member(cond) else {
                    return Err(self.err(
                        crate::check::unsupported(cond.span, "a table apply inside this expression", "table results other than `.hit`, `.miss` and `.action_run`")
                            .with_help("write `if (t.apply().hit) { ... }` or `switch (t.apply().action_run) { ... }`"),
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
                            .with_help(
                                "use `.hit` or `.miss` here; `.action_run` goes in a `switch`",
                            ),
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
    }

    fn run_cont(&mut self, c: &Cont<'_, 'a>) -> Res<ir::Block> {
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
    fn table_of(&mut self, e: &'a ast::Expr) -> Res<Rc<super::TableSlot>> {
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

    fn switch(
        &mut self,
        subject: &'a ast::Expr,
        cases: &'a [ast::SwitchCase],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        if let Some((table, what)) = table_apply_member(subject) {
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
            let mut arms: Vec<(ActionId, ir::Block)> = Vec::new();
            let mut default = Vec::new();
            let mut pending: Vec<ActionId> = Vec::new();
            let mut pending_default = false;
            let mut groups: Vec<(Vec<ActionId>, &'a ast::Block)> = Vec::new();
            let mut default_body: Option<&'a ast::Block> = None;
            let mut seen: Vec<ActionId> = Vec::new();
            let mut failed = false;
            for c in cases {
                match &c.label {
                    ast::SwitchLabel::Default => pending_default = true,
                    ast::SwitchLabel::Expr(e) => {
                        let ExprKind::Name(id) = &e.kind else {
                            self.err(
                                Diagnostic::error("a table switch label must be an action name")
                                    .with_primary(e.span, "not an action name"),
                            );
                            failed = true;
                            continue;
                        };
                        match slot.actions.iter().find(|(n, _)| *n == id.name) {
                            Some((_, a)) => {
                                if seen.contains(a) {
                                    self.err(
                                        Diagnostic::error(format!(
                                            "action `{}` appears twice in this switch",
                                            id.name
                                        ))
                                        .with_primary(id.span, "duplicate label"),
                                    );
                                    failed = true;
                                }
                                seen.push(*a);
                                pending.push(*a);
                            }
                            None => {
                                let names: Vec<&str> =
                                    slot.actions.iter().map(|(n, _)| n.as_str()).collect();
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
                                failed = true;
                            }
                        }
                    }
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
                return Err(super::Reported);
            }
            // Bodies in IR order (cases, then default) so gateway spans stay in pre-order.
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
            return Ok(());
        }
        // A switch on a value: an if/else chain, `default` last wherever it is written.
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
        let _ = span;
        out.extend(tail);
        Ok(())
    }

    /// A call. In statement position `out` receives the statements; in an expression it is
    /// `None` and the call must yield a value.
    pub fn call(&mut self, e: &'a ast::Expr, mut out: Option<&mut ir::Block>) -> Res<Option<V>> {
        let ExprKind::Call {
            callee,
            type_args,
            args,
        } = &e.kind
        else {
            return Err(self.err(Diagnostic::error("expected a call").with_primary(e.span, "here")));
        };
        match &callee.kind {
            ExprKind::Member { base, member } => {
                let b = self.resolve(base)?;
                match b {
                    Resolved::Obj(Binding::Packet { out: false }) => {
                        self.packet_in_call(member, type_args, args, e.span, out)
                    }
                    Resolved::Obj(Binding::Packet { out: true }) => {
                        if member.name != "emit" {
                            return Err(self.no_method("packet_out", member, "emit"));
                        }
                        if self.ctx != Ctx::Deparser {
                            return Err(self.err(
                                Diagnostic::error(format!(
                                    "`emit` is not allowed in {}",
                                    self.ctx.describe()
                                ))
                                .with_primary(e.span, "here")
                                .with_help("headers are emitted in the deparser"),
                            ));
                        }
                        let [a] = args.as_slice() else {
                            return Err(self.arg_count("emit", 1, args.len(), e.span));
                        };
                        let v = self.expr(&a.value, None)?;
                        let V::Loc(loc) = v else {
                            return Err(self.err(
                                Diagnostic::error(
                                    "`emit` takes a header, a header stack or a struct of headers",
                                )
                                .with_primary(a.span, "not a header"),
                            ));
                        };
                        let mut hs = Vec::new();
                        loc.headers(&mut hs);
                        let o = self.need_stmt(out, e.span, "emit")?;
                        o.extend(hs.into_iter().map(ir::Stmt::Emit));
                        Ok(None)
                    }
                    Resolved::Obj(Binding::Extern(x)) => {
                        self.extern_method(&x, base, member, type_args, args, e.span, out)
                    }
                    Resolved::Obj(Binding::Table(t)) => {
                        if member.name != "apply" {
                            return Err(self.no_method("table", member, "apply"));
                        }
                        if self.ctx != Ctx::Control {
                            return Err(self.err(
                                Diagnostic::error(format!(
                                    "tables cannot be applied in {}",
                                    self.ctx.describe()
                                ))
                                .with_primary(e.span, "here")
                                .with_help("apply tables in the apply block of a control"),
                            ));
                        }
                        let o = self.need_stmt(out, e.span, "apply")?;
                        o.push(ir::Stmt::ApplyTable {
                            table: t.id,
                            branches: ir::TableBranches::None,
                        });
                        Ok(None)
                    }
                    Resolved::Obj(Binding::Block(b)) => {
                        if member.name != "apply" {
                            return Err(self.no_method("control", member, "apply"));
                        }
                        match &b.decl.kind {
                            DeclKind::Control(_)
                                if self.ctx == Ctx::Control || self.ctx == Ctx::Deparser =>
                            {
                                let o = self.need_stmt(out.as_deref_mut(), e.span, "apply")?;
                                let mut body = Vec::new();
                                self.inline_control(&b, args, e.span, &mut body)?;
                                o.extend(body);
                                Ok(None)
                            }
                            DeclKind::Parser(_) => Err(self.err(
                                Diagnostic::error(
                                    "a sub-parser can only be applied in a parser state",
                                )
                                .with_primary(e.span, "here"),
                            )),
                            _ => Err(self.err(
                                Diagnostic::error(format!(
                                    "`{}` cannot be applied in {}",
                                    b.name,
                                    self.ctx.describe()
                                ))
                                .with_primary(e.span, "here"),
                            )),
                        }
                    }
                    Resolved::V(V::Loc(loc)) => self.loc_method(&loc, member, args, e.span, out),
                    Resolved::Type(t) => Err(self.err(
                        Diagnostic::error(format!("type `{t}` has no method `{}`", member.name))
                            .with_primary(member.span, "unknown method"),
                    )),
                    _ => Err(self.err(
                        Diagnostic::error(format!("no method `{}` here", member.name))
                            .with_primary(member.span, "unknown method"),
                    )),
                }
            }
            ExprKind::Name(id) => match self.lookup_name(id)? {
                Resolved::Obj(Binding::Action(slot)) => {
                    if !matches!(self.ctx, Ctx::Control | Ctx::Action) {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "actions cannot be called in {}",
                                self.ctx.describe()
                            ))
                            .with_primary(e.span, "here"),
                        ));
                    }
                    let o = self.need_stmt(out, e.span, &id.name)?;
                    self.call_action(&slot, args, e.span, o)?;
                    Ok(None)
                }
                Resolved::Func(f) => self.builtin_fn(f, type_args, args, e.span, out),
                _ => Err(self.err(
                    Diagnostic::error(format!("`{}` is not a function or action", id.name))
                        .with_primary(callee.span, "cannot be called"),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error("this expression cannot be called")
                    .with_primary(callee.span, "not callable"),
            )),
        }
    }

    pub fn need_stmt<'o>(
        &mut self,
        out: Option<&'o mut ir::Block>,
        span: Span,
        what: &str,
    ) -> Res<&'o mut ir::Block> {
        match out {
            Some(o) => Ok(o),
            None => Err(self.err(
                Diagnostic::error(format!("`{what}` does not return a value"))
                    .with_primary(span, "used as a value")
                    .with_help("call it as a statement"),
            )),
        }
    }

    pub fn no_method(&mut self, what: &str, m: &ast::Ident, have: &str) -> super::Reported {
        self.err(
            Diagnostic::error(format!("{what} has no method `{}`", m.name))
                .with_primary(m.span, "unknown method")
                .with_help(format!("available: {have}")),
        )
    }

    pub fn arg_count(
        &mut self,
        what: &str,
        want: usize,
        got: usize,
        span: Span,
    ) -> super::Reported {
        self.err(
            Diagnostic::error(format!("`{what}` takes {want} argument(s), {got} given"))
                .with_primary(span, "wrong number of arguments"),
        )
    }

    fn packet_in_call(
        &mut self,
        member: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error(format!("`{}` is only allowed in a parser", member.name))
                    .with_primary(span, "here"),
            ));
        }
        match member.name.as_str() {
            "extract" => {
                let a = match args {
                    [a] => a,
                    [h, bits] => return self.extract_varbit(h, bits, span, out),
                    _ => return Err(self.arg_count("extract", 1, args.len(), span)),
                };
                let stmt = if let ExprKind::Member { base, member: m } = &a.value.kind {
                    if m.name == "next" {
                        match self.resolve(base)? {
                            Resolved::V(V::Loc(l)) => match &*l {
                                Loc::Stack { id, .. } => Some(ir::Stmt::ExtractNext(*id)),
                                _ => None,
                            },
                            _ => None,
                        }
                    } else {
                        None
                    }
                } else {
                    None
                };
                let stmt = match stmt {
                    Some(s) => s,
                    None => match self.expr(&a.value, None)? {
                        V::Loc(l) => match &*l {
                            Loc::Header { ty, .. } if Ty::Header(ty.clone()).has_varbit() => {
                                return Err(self.err(
                                    Diagnostic::error(format!(
                                        "`{}` has a varbit field: extract it with its length",
                                        ty.name
                                    ))
                                    .with_primary(a.span, "one-argument extract")
                                    .with_help(
                                        "write `pkt.extract(hdr.x, (bit<32>)length_in_bits)`",
                                    ),
                                ))
                            }
                            Loc::Header { id, .. } => ir::Stmt::Extract(*id),
                            _ => {
                                return Err(self.err(
                                    Diagnostic::error(format!(
                                        "`extract` takes a header, found `{}`",
                                        l.ty()
                                    ))
                                    .with_primary(a.span, "not a header")
                                    .with_help("extract each header of a struct separately"),
                                ))
                            }
                        },
                        v => {
                            return Err(self.err(
                                Diagnostic::error(format!(
                                    "`extract` takes a header, found `{}`",
                                    v.ty()
                                ))
                                .with_primary(a.span, "not a header"),
                            ))
                        }
                    },
                };
                self.need_stmt(out, span, "extract")?.push(stmt);
                Ok(None)
            }
            "advance" => {
                let [a] = args else {
                    return Err(self.arg_count("advance", 1, args.len(), span));
                };
                let e = match self.expr(&a.value, None)? {
                    V::Int(i) if i >= 0 => ir::Expr::constant(i as u128, 32),
                    v => self.scalar_of_value(v, None, a.span)?.0,
                };
                self.need_stmt(out, span, "advance")?
                    .push(ir::Stmt::Advance(e));
                Ok(None)
            }
            "lookahead" => {
                let [t] = type_args else {
                    return Err(self.err(
                        Diagnostic::error("`lookahead` needs one type argument")
                            .with_primary(span, "write `pkt.lookahead<bit<16>>()`"),
                    ));
                };
                let ty = self.resolve_type(t)?;
                let Some(w) = ty.scalar_width() else {
                    return Err(self.err(
                        Diagnostic::error(format!("`lookahead<{ty}>` can only be assigned to a `{ty}` variable"))
                            .with_primary(span, "aggregate lookahead")
                            .with_help("assign it directly: `hdr.x = pkt.lookahead<T>();`, or look ahead at a `bit<W>`"),
                    ));
                };
                Ok(Some(V::Scalar(
                    ir::Expr::Lookahead {
                        offset_bits: 0,
                        width: w,
                    },
                    ty,
                )))
            }
            "length" => Err(self.err(crate::check::unsupported(
                span,
                "`packet_in.length()`",
                "packet length in the parser",
            ))),
            _ => Err(self.no_method("packet_in", member, "extract, advance, lookahead")),
        }
    }

    fn loc_method(
        &mut self,
        loc: &Rc<Loc>,
        member: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if let "minSizeInBits" | "minSizeInBytes" | "maxSizeInBits" | "maxSizeInBytes" =
            member.name.as_str()
        {
            let bits = loc.ty().flat_width().unwrap_or(0);
            let v = if member.name.ends_with("Bytes") {
                bits.div_ceil(8)
            } else {
                bits
            };
            return Ok(Some(V::Int(i128::from(v))));
        }
        match &**loc {
            Loc::Header { id, .. } => match member.name.as_str() {
                "isValid" => Ok(Some(V::Scalar(ir::Expr::Valid(*id), Ty::Bool))),
                "setValid" | "setInvalid" => {
                    if self.ctx == Ctx::RegAction {
                        return Err(self.err(
                            Diagnostic::error("headers cannot be changed in a RegisterAction")
                                .with_primary(span, "here"),
                        ));
                    }
                    let valid = member.name == "setValid";
                    self.need_stmt(out, span, &member.name)?
                        .push(ir::Stmt::SetValid { header: *id, valid });
                    Ok(None)
                }
                _ => Err(self.no_method("a header", member, "isValid, setValid, setInvalid")),
            },
            Loc::Stack { id, elems, .. } => match member.name.as_str() {
                "push_front" | "pop_front" => {
                    let [a] = args else {
                        return Err(self.arg_count(&member.name, 1, args.len(), span));
                    };
                    let n = self.const_int(&a.value)?;
                    if n < 0 || n as usize > elems.len() {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "cannot shift a stack of {} by {n}",
                                elems.len()
                            ))
                            .with_primary(a.span, "out of range"),
                        ));
                    }
                    let push = member.name == "push_front";
                    self.need_stmt(out, span, &member.name)?
                        .push(ir::Stmt::StackShift {
                            stack: *id,
                            count: n as u16,
                            push,
                        });
                    Ok(None)
                }
                _ => Err(self.no_method("a header stack", member, "push_front, pop_front")),
            },
            Loc::Struct { .. } if member.name == "isValid" => Err(self.err(
                Diagnostic::error("`isValid` on a struct")
                    .with_primary(span, "structs have no validity")
                    .with_help("call `isValid()` on a header"),
            )),
            _ => Err(self.err(
                Diagnostic::error(format!("`{}` has no method `{}`", loc.ty(), member.name))
                    .with_primary(member.span, "unknown method"),
            )),
        }
    }

    fn builtin_fn(
        &mut self,
        f: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        match f.name.as_str() {
            "verify" => {
                if self.ctx != Ctx::Parser {
                    return Err(self.err(
                        Diagnostic::error("`verify` is only allowed in a parser")
                            .with_primary(span, "here"),
                    ));
                }
                let [c, er] = args else {
                    return Err(self.arg_count("verify", 2, args.len(), span));
                };
                let cond = self.cond(&c.value)?;
                let v = self.const_value(&er.value, &Ty::Error)?;
                self.need_stmt(out, span, "verify")?.push(ir::Stmt::Verify {
                    cond,
                    error: v as u16,
                });
                Ok(None)
            }
            "min" | "max" => {
                let [a, b] = args else {
                    return Err(self.arg_count(&f.name, 2, args.len(), span));
                };
                let va = self.expr(&a.value, None)?;
                let vb = self.expr(&b.value, None)?;
                let (ta, tb) = (va.ty(), vb.ty());
                let target = if ta == Ty::InfInt {
                    tb.clone()
                } else {
                    ta.clone()
                };
                if !target.is_bits() || (ta != tb && ta != Ty::InfInt && tb != Ty::InfInt) {
                    return Err(self.err(
                        Diagnostic::error(format!("`{}` needs two values of one `bit<W>`/`int<W>` type, found `{ta}` and `{tb}`", f.name))
                            .with_primary(span, "invalid arguments"),
                    ));
                }
                let (ea, _) = self.scalar_of_value(va, Some(&target), a.span)?;
                let (eb, _) = self.scalar_of_value(vb, Some(&target), b.span)?;
                let op = if f.name == "min" {
                    ir::BinOp::Min
                } else {
                    ir::BinOp::Max
                };
                let width = target.scalar_width().unwrap_or(1);
                Ok(Some(V::Scalar(
                    super::expr::fold_node(ir::Expr::Binary {
                        op,
                        a: Box::new(ea),
                        b: Box::new(eb),
                        width,
                        signed: target.is_signed(),
                    }),
                    target,
                )))
            }
            "sizeInBits" | "sizeInBytes" => {
                let ty = if let Some(t) = type_args.first() {
                    self.resolve_type(t)?
                } else if let [a] = args {
                    match &a.value.kind {
                        ExprKind::Type(t) => self.resolve_type(t)?,
                        _ => match self.resolve(&a.value)? {
                            Resolved::V(v) => v.ty(),
                            Resolved::Type(t) => t,
                            _ => {
                                return Err(self.err(
                                    Diagnostic::error("`sizeInBits` needs a value or a type")
                                        .with_primary(a.span, "here"),
                                ))
                            }
                        },
                    }
                } else {
                    return Err(self.arg_count(&f.name, 1, args.len(), span));
                };
                if let Some(v) = self.varbit_size(&f.name, args)? {
                    return Ok(Some(v));
                }
                let Some(bits) = ty.flat_width() else {
                    return Err(self.err(
                        Diagnostic::error(format!("`{ty}` has no fixed size"))
                            .with_primary(span, "here"),
                    ));
                };
                let bits = i128::from(bits);
                Ok(Some(V::Int(if f.name == "sizeInBits" {
                    bits
                } else {
                    (bits + 7) / 8
                })))
            }
            "funnel_shift_right" => {
                let [dst, hi, lo, amount] = args else {
                    return Err(self.arg_count("funnel_shift_right", 4, args.len(), span));
                };
                let Dest::Scalar(place, ty) = self.dest(&dst.value)? else {
                    return Err(self.err(
                        Diagnostic::error("`funnel_shift_right` writes a bit string")
                            .with_primary(dst.span, "not a scalar field"),
                    ));
                };
                let w = match ty {
                    Ty::Bit(w) if 2 * u32::from(w) <= crate::check::types::MAX_WIDTH => w,
                    _ => {
                        return Err(self.err(
                            Diagnostic::error(format!("`funnel_shift_right` on `{ty}`"))
                                .with_primary(dst.span, "unsupported width")
                                .with_help("pisa supports bit<W> with W <= 64 here"),
                        ))
                    }
                };
                let (a, _) = self.scalar(&hi.value, Some(&ty))?;
                let (b, _) = self.scalar(&lo.value, Some(&ty))?;
                let n = self.const_int(&amount.value)?;
                if !(0..=i128::from(w)).contains(&n) {
                    return Err(self.err(
                        Diagnostic::error(format!("shift amount {n} out of range for `{ty}`"))
                            .with_primary(amount.span, "out of range"),
                    ));
                }
                let joined = ir::Expr::Concat {
                    hi: Box::new(a),
                    lo: Box::new(b),
                    width: 2 * w,
                };
                let shifted = ir::Expr::Binary {
                    op: ir::BinOp::Shr,
                    a: Box::new(joined),
                    b: Box::new(ir::Expr::constant(n as u128, 8)),
                    width: 2 * w,
                    signed: false,
                };
                let value = super::expr::fold_node(ir::Expr::Slice {
                    arg: Box::new(shifted),
                    hi: w - 1,
                    lo: 0,
                });
                self.need_stmt(out, span, "funnel_shift_right")?
                    .push(ir::Stmt::Assign { dst: place, value });
                Ok(None)
            }
            "port_metadata_unpack" => Err(self.err(
                Diagnostic::error("`port_metadata_unpack` must be assigned to a struct")
                    .with_primary(span, "here")
                    .with_help("write `meta.port_md = port_metadata_unpack<port_md_t>(pkt);`"),
            )),
            other => Err(self.err(crate::check::unsupported(
                span,
                &format!("the function `{other}`"),
                &format!("`{other}`"),
            ))),
        }
    }

    /// Lowers an action used by a table or called directly (once per control instance).
    pub fn lower_action(&mut self, slot: &Rc<ActionSlot<'a>>) -> Res<ActionId> {
        if let Some(id) = slot.id.get() {
            return Ok(id);
        }
        if slot.failed.get() {
            return Err(super::Reported);
        }
        let r = self.lower_action_body(slot);
        if r.is_err() {
            slot.failed.set(true);
        }
        r
    }

    fn lower_action_body(&mut self, slot: &Rc<ActionSlot<'a>>) -> Res<ActionId> {
        self.lower_action_with(slot, &[], slot.decl.name.span)
    }

    /// Lowers an action listed by a table with its leading directional parameters bound to
    /// `bound` (P4_16 §14.2.1.2: `actions = { fib_hit(local_md); }`; the directionless ones
    /// stay action data). One action per instance, action and binding text.
    pub fn lower_bound_action(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        bound: &'a [ast::Argument],
        span: Span,
    ) -> Res<ActionId> {
        if bound.is_empty() {
            return self.lower_action(slot);
        }
        let text: Vec<String> = bound.iter().map(|a| self.env.text_of(a.span)).collect();
        let key = (
            self.prefix.clone(),
            Rc::as_ptr(slot) as usize,
            text.join(","),
        );
        if let Some(&id) = self.bound_actions.get(&key) {
            return Ok(id);
        }
        let id = self.lower_action_with(slot, bound, span)?;
        self.bound_actions.insert(key, id);
        Ok(id)
    }

    /// The number of leading directional parameters of `decl` (those a table's action list
    /// binds); the rest are action data.
    pub fn directional_prefix(decl: &ast::ActionDecl) -> usize {
        decl.params
            .iter()
            .take_while(|p| p.direction != Direction::None)
            .count()
    }

    fn lower_action_with(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        bound: &'a [ast::Argument],
        span: Span,
    ) -> Res<ActionId> {
        let decl = slot.decl;
        let n_bound = bound.len();
        if n_bound > 0 && n_bound != Self::directional_prefix(decl) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` is listed with {} argument(s); its directional parameters are {}",
                    decl.name.name,
                    n_bound,
                    Self::directional_prefix(decl)
                ))
                .with_primary(span, "bind exactly the directional parameters")
                .with_secondary(decl.name.span, "action declared here")
                .with_help("the control plane supplies the directionless parameters"),
            ));
        }
        let mut frame = if n_bound > 0 {
            self.bind_args(&decl.params[..n_bound], bound, span)?
        } else {
            HashMap::new()
        };
        let mut params = Vec::new();
        for (i, p) in decl.params.iter().enumerate().skip(n_bound) {
            let i = i - n_bound;
            if p.direction != Direction::None {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "action `{}` has directional parameter `{}` and cannot be run by a table",
                        decl.name.name, p.name.name
                    ))
                    .with_primary(p.span, "directional parameter")
                    .with_help(
                        "table actions take action data only (parameters without `in`/`out`); \
                         bind the directional ones in the table's action list: `actions = { a(arg); }`",
                    ),
                ));
            }
            let ty = self.resolve_type(&p.ty)?;
            let Some(width) = ty.scalar_width() else {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "action parameter `{}` has type `{ty}`",
                        p.name.name
                    ))
                    .with_primary(p.ty.span, "not a scalar")
                    .with_help(
                        "action data must be `bit<W>`, `int<W>`, `bool` or a serializable enum",
                    ),
                ));
            };
            frame.insert(
                p.name.name.clone(),
                Binding::Val(V::Scalar(
                    ir::Expr::Param {
                        index: i as u16,
                        width,
                    },
                    ty,
                )),
            );
            params.push(ir::ActionParam {
                name: p.name.name.clone(),
                width,
            });
        }
        let saved_ctx = std::mem::replace(&mut self.ctx, super::Ctx::Action);
        let saved_ifs = std::mem::take(&mut self.ifs);
        let saved_inline = std::mem::replace(&mut self.inline_action, 0);
        let keep = slot.scope_depth.min(self.scopes.len());
        let call_site_frames = self.scopes.split_off(keep);
        self.scopes.push(frame);
        let mut body = Vec::new();
        let errs = self.diags.error_count();
        self.block_stmts(&decl.body.stmts, &mut body);
        self.scopes.pop();
        self.scopes.extend(call_site_frames);
        self.ctx = saved_ctx;
        self.ifs = saved_ifs;
        self.inline_action = saved_inline;
        if self.diags.error_count() > errs {
            return Err(super::Reported);
        }
        let id = ActionId(self.pipe.actions.len() as u32);
        self.pipe.actions.push(ir::Action {
            name: slot.name.clone(),
            params,
            body,
        });
        self.spans.actions.push(decl.name.span);
        if n_bound == 0 {
            slot.id.set(Some(id));
        }
        Ok(id)
    }

    /// A direct action call: `CallAction` with the data arguments, or, when the action has
    /// directional parameters, its body inlined with those bound to the arguments.
    fn call_action(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        let decl = slot.decl;
        if args.len() != decl.params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` takes {} argument(s), {} given",
                    decl.name.name,
                    decl.params.len(),
                    args.len()
                ))
                .with_primary(span, "wrong number of arguments")
                .with_secondary(decl.name.span, "action declared here"),
            ));
        }
        let directional = decl.params.iter().any(|p| p.direction != Direction::None);
        if !directional {
            let id = self.lower_action(slot)?;
            // Called from a table's action (P4_16 §14.1: the call is inlined into it), a
            // direct counter or meter counts that table's matched entry, as bf-p4c does.
            let from_table_action = self.ctx == Ctx::Action && self.inline_action == 0;
            let direct = !from_table_action
                && self
                    .pipe
                    .actions
                    .get(id.index())
                    .is_some_and(|a| uses_direct(&a.body, &self.pipe.actions));
            if direct {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "action `{}` uses a direct counter or meter and cannot be called directly",
                        decl.name.name
                    ))
                    .with_primary(span, "called here")
                    .with_help("direct externs count the matched entry: run the action from the table that owns them"),
                ));
            }
            let mut vals = Vec::new();
            for (p, a) in decl.params.iter().zip(args) {
                let ty = self.resolve_type(&p.ty)?;
                vals.push(self.scalar(&a.value, Some(&ty))?.0);
            }
            out.push(ir::Stmt::CallAction {
                action: id,
                args: vals,
            });
            return Ok(());
        }
        if contains_return(&decl.body.stmts) {
            return Err(self.err(crate::check::unsupported(
                span,
                "`return` in an action with directional parameters",
                "early return from an inlined action",
            )));
        }
        self.check_depth(span)?;
        let frame = self.bind_args(&decl.params, args, span)?;
        let saved_ctx = self.ctx;
        let inlined_into_control = self.ctx == Ctx::Control || self.inline_action > 0;
        if self.ctx == Ctx::Control {
            self.ctx = Ctx::Action;
        }
        if inlined_into_control {
            self.inline_action += 1;
        }
        // The body sees the frames of its declaration, not the call site's block locals.
        let keep = slot.scope_depth.min(self.scopes.len());
        let call_site_frames = self.scopes.split_off(keep);
        self.scopes.push(frame);
        self.depth += 1;
        self.block_stmts(&decl.body.stmts, out);
        self.depth -= 1;
        if inlined_into_control {
            self.inline_action -= 1;
        }
        self.scopes.pop();
        self.scopes.extend(call_site_frames);
        self.ctx = saved_ctx;
        Ok(())
    }

    /// Binds a block's or action's parameters to call arguments (aliasing storage).
    pub fn bind_args(
        &mut self,
        params: &'a [ast::Param],
        args: &'a [ast::Argument],
        span: Span,
    ) -> Res<HashMap<String, Binding<'a>>> {
        let mut frame = HashMap::new();
        if args.len() > params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "{} argument(s) given, {} expected",
                    args.len(),
                    params.len()
                ))
                .with_primary(span, "too many arguments"),
            ));
        }
        let named = args.iter().any(|a| a.name.is_some());
        for (i, p) in params.iter().enumerate() {
            let arg = if named {
                args.iter()
                    .find(|a| a.name.as_ref().is_some_and(|n| n.name == p.name.name))
            } else {
                args.get(i)
            };
            let Some(arg) = arg else {
                return Err(self.err(
                    Diagnostic::error(format!("missing argument for parameter `{}`", p.name.name))
                        .with_primary(span, "in this call")
                        .with_secondary(p.span, "parameter declared here"),
                ));
            };
            let ty = self.resolve_type(&p.ty)?;
            if let Ty::Extern { name, .. } = &ty {
                if name == "packet_in" || name == "packet_out" {
                    match self.resolve(&arg.value)? {
                        Resolved::Obj(b @ Binding::Packet { .. }) => {
                            frame.insert(p.name.name.clone(), b);
                            continue;
                        }
                        _ => {
                            return Err(self.err(
                                Diagnostic::error(format!(
                                    "parameter `{}` needs the packet",
                                    p.name.name
                                ))
                                .with_primary(arg.span, "not a packet"),
                            ))
                        }
                    }
                }
            }
            let binding = match p.direction {
                Direction::Out | Direction::InOut => {
                    if matches!(arg.value.kind, ExprKind::DontCare) && p.direction == Direction::Out
                    {
                        let loc = self.alloc(&format!("$dontcare{}", self.tmp), &ty, arg.span)?;
                        self.tmp += 1;
                        Binding::Val(V::Loc(loc))
                    } else {
                        let d = self.dest(&arg.value)?;
                        let loc = match d {
                            Dest::Agg(l) => l,
                            Dest::Scalar(Place::Field(f), t) => Rc::new(Loc::Field { f, ty: t }),
                            Dest::Scalar(Place::RegValue(w), t) => Rc::new(Loc::RegWord(w, t)),
                            Dest::Scalar(Place::RegOutput, t) => Rc::new(Loc::RegOut(1, t)),
                            Dest::Scalar(Place::RegOutputN(k), t) => Rc::new(Loc::RegOut(k, t)),
                            Dest::Scalar(Place::FieldSlice { .. }, _) => {
                                return Err(self.err(crate::check::unsupported(
                                    arg.span,
                                    "a slice as an `out` argument",
                                    "partial-field aliasing",
                                )))
                            }
                        };
                        if loc.ty() != ty {
                            return Err(self.err(
                                Diagnostic::error(format!(
                                    "mismatched types: parameter `{}` is `{ty}`, argument is `{}`",
                                    p.name.name,
                                    loc.ty()
                                ))
                                .with_primary(arg.span, "wrong type"),
                            ));
                        }
                        Binding::Val(V::Loc(loc))
                    }
                }
                Direction::In | Direction::None => {
                    let v = self.expr(&arg.value, Some(&ty))?;
                    match v {
                        V::Loc(l) if !l.ty().is_scalar() => {
                            if l.ty() != ty {
                                return Err(self.err(
                                    Diagnostic::error(format!("mismatched types: parameter `{}` is `{ty}`, argument is `{}`", p.name.name, l.ty()))
                                        .with_primary(arg.span, "wrong type"),
                                ));
                            }
                            Binding::In(V::Loc(l))
                        }
                        v => {
                            let (e, t) = self.scalar_of_value(v, Some(&ty), arg.span)?;
                            Binding::In(V::Scalar(e, t))
                        }
                    }
                }
            };
            frame.insert(p.name.name.clone(), binding);
        }
        Ok(frame)
    }

    /// Inlines a nested control's body.
    fn inline_control(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        self.check_depth(span)?;
        let DeclKind::Control(c) = &b.decl.kind else {
            return Err(self.err(Diagnostic::error("not a control").with_primary(span, "here")));
        };
        let types = self.infer_types(b.decl, &c.params, args, &b.types)?;
        let body = self.with_types(types.clone(), |l| {
            let frame = l.bind_args(&c.params, args, span)?;
            let path = l.join(&b.name);
            l.apply_instance(b, &c.params, frame, path, &types, span)
        })?;
        out.extend(body);
        Ok(())
    }
}

impl Dest {
    pub(super) fn from_loc(loc: &Rc<Loc>) -> Dest {
        match &**loc {
            Loc::Field { f, ty } => Dest::Scalar(Place::Field(*f), ty.clone()),
            Loc::RegWord(w, ty) => Dest::Scalar(Place::RegValue(*w), ty.clone()),
            Loc::RegOut(1, ty) => Dest::Scalar(Place::RegOutput, ty.clone()),
            Loc::RegOut(k, ty) => Dest::Scalar(Place::RegOutputN(*k), ty.clone()),
            _ => Dest::Agg(loc.clone()),
        }
    }
}

fn scalar_of(l: &Loc) -> Option<ir::Expr> {
    match l {
        Loc::Field { f, .. } => Some(ir::Expr::Field(*f)),
        Loc::RegWord(w, _) => Some(ir::Expr::RegValue(*w)),
        _ => None,
    }
}

fn contains_return(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(b) => contains_return(&b.stmts),
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            contains_return(std::slice::from_ref(then_branch))
                || else_branch
                    .as_deref()
                    .is_some_and(|e| contains_return(std::slice::from_ref(e)))
        }
        _ => false,
    })
}

/// True when a body, or an action it calls, uses a direct counter or meter (which need a
/// matched table entry). P4 forbids recursive action calls, so the walk ends.
fn uses_direct(b: &[ir::Stmt], actions: &[ir::Action]) -> bool {
    fn expr(e: &ir::Expr) -> bool {
        match e {
            ir::Expr::MeterExecute { index: None, .. }
            | ir::Expr::FilterExecute { index: None, .. } => true,
            ir::Expr::Unary { arg, .. }
            | ir::Expr::Slice { arg, .. }
            | ir::Expr::Cast { arg, .. } => expr(arg),
            ir::Expr::Binary { a, b, .. } => expr(a) || expr(b),
            ir::Expr::Concat { hi, lo, .. } => expr(hi) || expr(lo),
            ir::Expr::Ternary {
                cond, then, els, ..
            } => expr(cond) || expr(then) || expr(els),
            _ => false,
        }
    }
    b.iter().any(|s| match s {
        ir::Stmt::CountDirect { .. } => true,
        ir::Stmt::Assign { value, .. } => expr(value),
        ir::Stmt::If {
            cond, then, els, ..
        } => expr(cond) || uses_direct(then, actions) || uses_direct(els, actions),
        ir::Stmt::CallAction { action, .. } => actions
            .get(action.index())
            .is_some_and(|a| uses_direct(&a.body, actions)),
        _ => false,
    })
}

/// `dst = $tmp` right after an `execute` that wrote `rv1` into `$tmp`: the execute writes
/// `dst` itself (as the hardware's output would), and no copy is needed.
fn into_execute(hoisted: &mut [ir::Stmt], dst: &Place, e: &ir::Expr) -> bool {
    let Some(ir::Stmt::RegisterExecute { outs, .. }) = hoisted.last_mut() else {
        return false;
    };
    let (ir::Expr::Field(t), Some(Place::Field(o)), Place::Field(d)) = (e, outs[0], dst) else {
        return false;
    };
    if *t != o || t.width != d.width {
        return false;
    }
    outs[0] = Some(*dst);
    true
}

/// `e` without the casts around it: `(bit<16>) ra.execute(i, rv2)` assigns the call's value.
fn uncast(e: &ast::Expr) -> &ast::Expr {
    match &e.kind {
        ExprKind::Cast { expr, .. } => uncast(expr),
        _ => e,
    }
}

/// `dst = src` for fields wider than a value: piece by piece (the same bits).
pub(super) fn wide_copy(dst: ir::FieldRef, src: ir::FieldRef, out: &mut ir::Block) {
    for ((d, _, _), (s, _, _)) in dst.chunks().zip(src.chunks()) {
        out.push(ir::Stmt::Assign {
            dst: ir::Place::Field(d),
            value: ir::Expr::Field(s),
        });
    }
}

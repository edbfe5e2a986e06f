//! Assignments: destinations (`Dest`), scalar and aggregate copies, wide fields.

use std::rc::Rc;

use pipeline::ir::{self, Place};

use crate::ast::{self, BinOp, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::{path_of, Resolved};
use crate::lower::phv::Loc;
use crate::lower::{Binding, Ctx, Lowerer, Res, V};
use crate::source::Span;

/// An assignable place.
pub(crate) enum Dest {
    Scalar(Place, Ty),
    Agg(Rc<Loc>),
}

impl Dest {
    pub(in crate::lower) fn from_loc(loc: &Rc<Loc>) -> Dest {
        match &**loc {
            Loc::Field { f, ty } => Dest::Scalar(Place::Field(*f), ty.clone()),
            Loc::RegWord(w, ty) => Dest::Scalar(Place::RegValue(*w), ty.clone()),
            Loc::RegOut(1, ty) => Dest::Scalar(Place::RegOutput, ty.clone()),
            Loc::RegOut(k, ty) => Dest::Scalar(Place::RegOutputN(*k), ty.clone()),
            _ => Dest::Agg(loc.clone()),
        }
    }
}

pub(super) fn scalar_of(l: &Loc) -> Option<ir::Expr> {
    match l {
        Loc::Field { f, .. } => Some(ir::Expr::Field(*f)),
        Loc::RegWord(w, _) => Some(ir::Expr::RegValue(*w)),
        _ => None,
    }
}

/// `dst = $tmp` right after an `execute` that wrote `rv1` into `$tmp`: the execute writes
/// `dst` itself (as the hardware's output would), and no copy is needed.
pub(super) fn into_execute(hoisted: &mut [ir::Stmt], dst: &Place, e: &ir::Expr) -> bool {
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
pub(super) fn uncast(e: &ast::Expr) -> &ast::Expr {
    match &e.kind {
        ExprKind::Cast { expr, .. } => uncast(expr),
        _ => e,
    }
}

/// `dst = src` for fields wider than a value: piece by piece (the same bits).
pub(crate) fn wide_copy(dst: ir::FieldRef, src: ir::FieldRef, out: &mut ir::Block) {
    for ((d, _, _), (s, _, _)) in dst.chunks().zip(src.chunks()) {
        out.push(ir::Stmt::Assign {
            dst: ir::Place::Field(d),
            value: ir::Expr::Field(s),
        });
    }
}

impl<'a> Lowerer<'a> {
    pub(crate) fn dest(&mut self, lhs: &'a ast::Expr) -> Res<Dest> {
        if let ExprKind::Slice { base, hi, lo } = &lhs.kind {
            return self.slice_dest(lhs, base, hi, lo);
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

    /// `f[hi:lo]` as a destination: a slice of a PHV field.
    fn slice_dest(
        &mut self,
        lhs: &'a ast::Expr,
        base: &'a ast::Expr,
        hi: &'a ast::Expr,
        lo: &'a ast::Expr,
    ) -> Res<Dest> {
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
        if let Some(what) = crate::lower::expr::slice_problem(h, l, w, &ty) {
            return Err(self.err(
                Diagnostic::error(what)
                    .with_primary(lhs.span, "bad slice bounds")
                    .with_help(format!(
                        "use [hi:lo] with {} >= hi >= lo >= 0",
                        w.saturating_sub(1)
                    )),
            ));
        }
        Ok(Dest::Scalar(
            Place::FieldSlice {
                field: f,
                hi: h as u16,
                lo: l as u16,
            },
            Ty::Bit((h - l + 1) as u16),
        ))
    }

    pub(super) fn assign(
        &mut self,
        lhs: &'a ast::Expr,
        op: Option<BinOp>,
        rhs: &'a ast::Expr,
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        let dest = self.dest(lhs)?;
        self.deparser_assignment(&dest, rhs, span)?;
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

    /// Refuses, as bf-p4c does, an assignment to a header field in a deparser that is neither a
    /// method's result (`Checksum.update()`) nor under an `if` (`parde/extract_deparser.cpp`,
    /// `ExtractDeparser::preorder(AssignmentStatement)`; under an `if`, bf-p4c's check of the
    /// condition is not modelled).
    fn deparser_assignment(&mut self, dest: &Dest, rhs: &ast::Expr, span: Span) -> Res<()> {
        let mut src = rhs;
        while let ExprKind::Cast { expr, .. } = &src.kind {
            src = expr;
        }
        if self.ctx != Ctx::Deparser
            || !self.deparser_conds.is_empty()
            || matches!(src.kind, ExprKind::Call { .. })
        {
            return Ok(());
        }
        let field = match dest {
            Dest::Scalar(ir::Place::Field(f), _) => *f,
            Dest::Scalar(ir::Place::FieldSlice { field, .. }, _) => *field,
            _ => return Ok(()),
        };
        let in_header = self.phv.layout.headers.iter().any(|h| {
            let lo = h.byte_offset * 8;
            (lo..lo + h.byte_len * 8).contains(&field.offset)
        });
        if !in_header {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error(
                "assignment to a header field in the deparser is only allowed when the source is \
                 checksum update, mirror, resubmit or learning digest",
            )
            .with_primary(span, "an assignment in the deparser")
            .with_note("bf-p4c refuses it: Tofino's deparser only emits what the PHV holds")
            .with_help("move the assignment into the control flow (the ingress or egress control)"),
        ))
    }

    pub(super) fn assign_to(
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
            Dest::Scalar(_, ty) if matches!(rhs.kind, ExprKind::InvalidHeader) => {
                Err(self.invalid_not_of(&ty, rhs.span))
            }
            Dest::Scalar(place, ty) => self.assign_scalar(place, ty, rhs, lhs, out),
            Dest::Agg(loc) if matches!(rhs.kind, ExprKind::InvalidHeader) => {
                self.assign_invalid(&loc, rhs.span, out)
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
                                self.lookahead_into(&loc, rhs.span, out)?;
                                self.after_member_write(&loc, out);
                                return Ok(());
                            }
                        }
                    }
                }
                let want = loc.ty();
                let v = self.expr(rhs, Some(&want))?;
                self.copy_into(&loc, v, rhs.span, out)?;
                self.after_member_write(&loc, out);
                self.warn_varbit_assign(&want, rhs.span);
                Ok(())
            }
        }
    }

    /// `dst = {#}` (or `T dst = {#};`): the header, or every header of the union, made
    /// invalid (P4_16 1.2.2 "Invalid header expression"); a union member's peers too, as for
    /// any header written into a member.
    fn assign_invalid(&mut self, dst: &Rc<Loc>, span: Span, out: &mut ir::Block) -> Res<()> {
        match dst.ty() {
            Ty::Header(_) => {}
            Ty::Struct(s) if s.union => {}
            other => return Err(self.invalid_not_of(&other, span)),
        }
        let mut headers = Vec::new();
        dst.headers(&mut headers);
        out.extend(headers.into_iter().map(|header| ir::Stmt::SetValid {
            header,
            valid: false,
        }));
        self.after_member_write(dst, out);
        Ok(())
    }

    /// `{#}` where a value of type `ty`, not a header or union, is expected.
    fn invalid_not_of(&mut self, ty: &Ty, span: Span) -> crate::lower::Reported {
        self.err(
            Diagnostic::error(format!("`{{#}}` is not a value of type `{ty}`"))
                .with_primary(span, "the invalid header")
                .with_help("`{#}` goes into a header or a header union"),
        )
    }

    /// `place = rhs` for a scalar place: hoisted statements of `rhs` (register executes)
    /// first, an execute writing `place` itself where it can.
    fn assign_scalar(
        &mut self,
        place: Place,
        ty: Ty,
        rhs: &'a ast::Expr,
        lhs: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        // Saved and restored: lowering `rhs` may lower statements of its own.
        let outer_rhs = self.whole_rhs.replace(uncast(rhs).span);
        let outer_hoisted = std::mem::take(&mut self.hoisted);
        let r = self.scalar(rhs, Some(&ty));
        self.whole_rhs = outer_rhs;
        let mut hoisted = std::mem::replace(&mut self.hoisted, outer_hoisted);
        let (e, _) = r?;
        self.checksum_destination(&place, &ty, &e, lhs)?;
        if let (ir::Place::Field(dst), Some(checksum)) = (&place, residual_get(&e)) {
            // `field = ck.get()` is the residual deposit bf-p4c makes of it, as
            // `subtract_all_and_deposit(field)` (`parde/extract_parser.cpp`).
            out.extend(hoisted);
            out.push(ir::Stmt::ChecksumDeposit {
                checksum,
                dst: *dst,
            });
            return Ok(());
        }
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
        self.check_action_assign(&place, &e, rhs.span);
        out.push(ir::Stmt::Assign {
            dst: place,
            value: e,
        });
        Ok(())
    }

    /// Copies a value into aggregate storage.
    pub(super) fn copy_into(
        &mut self,
        dst: &Rc<Loc>,
        v: V,
        vspan: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
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
                if matches!(&**dst, Loc::Struct { ty, .. } if ty.union) {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "a list cannot initialise the header union `{}`",
                            dst.ty()
                        ))
                        .with_primary(vspan, "a list expression")
                        .with_help("assign one member header: `u.member = h;`"),
                    ));
                }
                let (fields, what) = match &**dst {
                    Loc::Header { fields, .. } | Loc::Struct { fields, .. } => {
                        (fields.clone(), "fields")
                    }
                    // A stack-valued list (`hs = { h0, h1 }`, P4_16 1.2.2): element by
                    // element, as p4c expands it; the next index is left as it is.
                    Loc::Stack { elems, .. } => (elems.clone(), "elements"),
                    _ => (Vec::new(), "fields"),
                };
                if fields.len() != items.len() {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`{}` has {} {what}, the initializer {}",
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
    pub(in crate::lower) fn copy_loc(&mut self, dst: &Rc<Loc>, src: &Rc<Loc>, out: &mut ir::Block) {
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
}

/// The checksum whose `get()` is `e` (possibly cast to the destination's width).
fn residual_get(e: &ir::Expr) -> Option<ir::ChecksumId> {
    match e {
        ir::Expr::ChecksumGet(c) => Some(*c),
        ir::Expr::Cast { arg, .. } => residual_get(arg),
        _ => None,
    }
}

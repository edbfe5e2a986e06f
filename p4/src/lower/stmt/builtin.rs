//! Built-in functions: `verify` (removed, as bf-p4c does), `static_assert` (evaluated), `min`/`max`, `sizeInBits`, `funnel_shift_right`, `invalidate`/`is_validated` (in `externs::field_validity`).

use pipeline::ir::{self};

use super::*;
use crate::ast::{self, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::{Ctx, Lowerer, Res, V};
use crate::source::Span;

impl<'a> Lowerer<'a> {
    pub(super) fn builtin_fn(
        &mut self,
        f: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        match f.name.as_str() {
            "verify" => self.verify_fn(args, span, out),
            "static_assert" => self.static_assert(args, span),
            "min" | "max" => self.min_max(f, args, span),
            "sizeInBits" | "sizeInBytes" => self.size_of(f, type_args, args, span),
            "funnel_shift_right" => self.funnel_shift_right(args, span, out),
            "port_metadata_unpack" => Err(self.err(
                Diagnostic::error("`port_metadata_unpack` must be assigned to a struct")
                    .with_primary(span, "here")
                    .with_help("write `meta.port_md = port_metadata_unpack<port_md_t>(pkt);`"),
            )),
            "invalidate" | "is_validated" => self.field_validity(&f.name, args, span, out),
            other => Err(self.err(crate::check::unsupported(
                span,
                &format!("the function `{other}`"),
                &format!("`{other}`"),
            ))),
        }
    }

    /// `static_assert(check[, message])` (p4c's core.p4): `check` is evaluated at compile time;
    /// false is an error carrying the message. The value is `true`.
    fn static_assert(&mut self, args: &'a [ast::Argument], span: Span) -> Res<Option<V>> {
        let (check, message) = match args {
            [c] => (c, None),
            [c, m] => (c, Some(m)),
            _ => return Err(self.arg_count("static_assert", 2, args.len(), span)),
        };
        if self.const_value(&check.value, &Ty::Bool)? == 0 {
            let what = match message.map(|m| &m.value.kind) {
                Some(ExprKind::String(s)) => format!("static assertion failed: {s}"),
                _ => "static assertion failed".to_string(),
            };
            return Err(
                self.err(Diagnostic::error(what).with_primary(check.span, "evaluates to false"))
            );
        }
        Ok(Some(V::Scalar(ir::Expr::constant(1, 1), Ty::Bool)))
    }

    /// `verify(cond, error)` in a parser: checked, then removed with a warning, as bf-p4c
    /// does (`parde/extract_parser.cpp` drops it from TNA parsers, and its varbit pass no
    /// longer folds a `verify` into the extract's branches): it has no effect on Tofino.
    fn verify_fn(
        &mut self,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error("`verify` is only allowed in a parser")
                    .with_primary(span, "here"),
            ));
        }
        let [c, er] = args else {
            return Err(self.arg_count("verify", 2, args.len(), span));
        };
        self.cond(&c.value)?;
        self.const_value(&er.value, &Ty::Error)?;
        self.need_stmt(out, span, "verify")?;
        self.warn(
            Diagnostic::warning("bf-p4c removes `verify` from a TNA parser: it has no effect on Tofino")
                .with_primary(span, "removed")
                .with_note("bf-p4c warns `Parser \"verify\" is currently unsupported` and drops the statement: the packet is parsed on, with no parser error")
                .with_help("test the condition in the control to act on it"),
        );
        Ok(None)
    }

    /// `min(a, b)` / `max(a, b)` of one `bit<W>`/`int<W>` type.
    fn min_max(
        &mut self,
        f: &'a ast::Ident,
        args: &'a [ast::Argument],
        span: Span,
    ) -> Res<Option<V>> {
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
                Diagnostic::error(format!(
                    "`{}` needs two values of one `bit<W>`/`int<W>` type, found `{ta}` and `{tb}`",
                    f.name
                ))
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
            crate::lower::expr::fold_node(ir::Expr::Binary {
                op,
                a: Box::new(ea),
                b: Box::new(eb),
                width,
                signed: target.is_signed(),
            }),
            target,
        )))
    }

    /// `sizeInBits(x)` / `sizeInBytes(x)` (of a value or a type): a compile-time integer.
    fn size_of(
        &mut self,
        f: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
    ) -> Res<Option<V>> {
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
                Diagnostic::error(format!("`{ty}` has no fixed size")).with_primary(span, "here"),
            ));
        };
        let bits = i128::from(bits);
        Ok(Some(V::Int(if f.name == "sizeInBits" {
            bits
        } else {
            (bits + 7) / 8
        })))
    }

    /// `funnel_shift_right(dst, hi, lo, n)`: `dst = (hi ++ lo) >> n`, the low half.
    fn funnel_shift_right(
        &mut self,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
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
        let value = crate::lower::expr::fold_node(ir::Expr::Slice {
            arg: Box::new(shifted),
            hi: w - 1,
            lo: 0,
        });
        self.need_stmt(out, span, "funnel_shift_right")?
            .push(ir::Stmt::Assign { dst: place, value });
        Ok(None)
    }
}

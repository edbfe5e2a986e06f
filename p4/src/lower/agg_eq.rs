//! `==`/`!=` on structs and headers (P4_16 "Operations on structs" / "on headers"), split into
//! field comparisons as p4c's `SimplifyComparisons` does: structs are equal when every field
//! is; headers when both are invalid, or both valid with every field equal.

use std::rc::Rc;

use pipeline::ir::{self, BinOp as IrOp, UnOp as IrUn};

use super::phv::Loc;
use super::{Lowerer, Res, V};
use crate::diag::Diagnostic;
use crate::source::Span;

fn bin(op: IrOp, a: ir::Expr, b: ir::Expr) -> ir::Expr {
    ir::Expr::Binary {
        op,
        a: Box::new(a),
        b: Box::new(b),
        width: 1,
        signed: false,
    }
}

fn all(parts: Vec<ir::Expr>) -> ir::Expr {
    parts
        .into_iter()
        .reduce(|a, b| bin(IrOp::LAnd, a, b))
        .unwrap_or_else(|| ir::Expr::constant(1, 1))
}

/// Whether `v` is a struct or header (compared field by field).
pub(super) fn is_aggregate(v: &V) -> bool {
    matches!(v, V::Loc(l) if matches!(**l, Loc::Struct { .. } | Loc::Header { .. } | Loc::Stack { .. }))
}

impl Lowerer<'_> {
    /// `a == b` (`ne`: `a != b`) on two structs or headers of one type.
    pub(super) fn aggregate_eq(&mut self, a: V, b: V, ne: bool, span: Span) -> Res<V> {
        let eq = match (&a, &b) {
            (V::Loc(la), V::Loc(lb)) => self.loc_eq(la, lb, span)?,
            // A tuple or struct against a list expression (`t == {x, y}`).
            (V::Loc(l), V::List(items)) | (V::List(items), V::Loc(l)) => {
                self.loc_eq_list(l, items, span)?
            }
            _ => return Err(self.mismatch(&a.ty(), &b.ty(), span)),
        };
        let e = if ne {
            ir::Expr::Unary {
                op: IrUn::LNot,
                arg: Box::new(eq),
                width: 1,
            }
        } else {
            eq
        };
        Ok(V::Scalar(
            super::expr::fold_node(e),
            crate::check::types::Ty::Bool,
        ))
    }

    fn mismatch(
        &mut self,
        ta: &crate::check::types::Ty,
        tb: &crate::check::types::Ty,
        span: Span,
    ) -> super::Reported {
        self.err(
            Diagnostic::error(format!("cannot compare a `{ta}` with a `{tb}`"))
                .with_primary(span, "operands of different types"),
        )
    }

    fn loc_eq(&mut self, a: &Rc<Loc>, b: &Rc<Loc>, span: Span) -> Res<ir::Expr> {
        if a.ty() != b.ty() {
            return Err(self.mismatch(&a.ty(), &b.ty(), span));
        }
        match (&**a, &**b) {
            (Loc::Struct { fields: fa, .. }, Loc::Struct { fields: fb, .. }) => {
                self.fields_eq(fa, fb, span)
            }
            (Loc::Stack { elems: fa, .. }, Loc::Stack { elems: fb, .. }) => {
                self.fields_eq(fa, fb, span)
            }
            (
                Loc::Header {
                    id: ia, fields: fa, ..
                },
                Loc::Header {
                    id: ib, fields: fb, ..
                },
            ) => {
                let (va, vb) = (ir::Expr::Valid(*ia), ir::Expr::Valid(*ib));
                let same_validity = bin(IrOp::Eq, va.clone(), vb);
                let invalid = ir::Expr::Unary {
                    op: IrUn::LNot,
                    arg: Box::new(va),
                    width: 1,
                };
                let fields = self.fields_eq(fa, fb, span)?;
                Ok(bin(
                    IrOp::LAnd,
                    same_validity,
                    bin(IrOp::LOr, invalid, fields),
                ))
            }
            _ => {
                let (ea, _) = self.scalar_of_value(V::Loc(a.clone()), None, span)?;
                let (eb, _) = self.scalar_of_value(V::Loc(b.clone()), None, span)?;
                Ok(bin(IrOp::Eq, ea, eb))
            }
        }
    }

    /// A struct or tuple equals a list expression when each field equals its item.
    fn loc_eq_list(&mut self, l: &Rc<Loc>, items: &[(V, Span)], span: Span) -> Res<ir::Expr> {
        let fields = match &**l {
            Loc::Struct { fields, ty } if !ty.union && fields.len() == items.len() => fields,
            _ => {
                let list = V::List(items.to_vec());
                return Err(self.mismatch(&l.ty(), &list.ty(), span));
            }
        };
        let mut parts = Vec::with_capacity(fields.len());
        for (f, (item, ispan)) in fields.iter().zip(items) {
            parts.push(match item {
                V::Loc(il) => self.loc_eq(f, il, *ispan)?,
                V::List(sub) => self.loc_eq_list(f, sub, *ispan)?,
                _ => {
                    let ty = f.ty();
                    let (ef, _) = self.scalar_of_value(V::Loc(f.clone()), None, *ispan)?;
                    let (ei, _) = self.scalar_of_value(item.clone(), Some(&ty), *ispan)?;
                    bin(IrOp::Eq, ef, ei)
                }
            });
        }
        Ok(all(parts))
    }

    fn fields_eq(&mut self, fa: &[Rc<Loc>], fb: &[Rc<Loc>], span: Span) -> Res<ir::Expr> {
        let mut parts = Vec::with_capacity(fa.len());
        for (x, y) in fa.iter().zip(fb) {
            parts.push(self.loc_eq(x, y, span)?);
        }
        Ok(all(parts))
    }
}

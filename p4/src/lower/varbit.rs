//! `varbit<N>` header fields (P4_16 §7.1.6): the two-argument `extract` that sets a varbit's
//! length for this packet, and `sizeInBits`/`sizeInBytes` of a header holding one (its fixed
//! bits plus the current length, computed at run time). Storage is in [`super::phv`] (the N
//! bits reserved in the header, the length in a hidden `$length` field); emit, copies and
//! `setInvalid` need nothing of their own beyond what [`super::stmt`] does for headers.

use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;
use pipeline::ir::{self, BinOp, FieldRef};

/// The fixed bits of a header with a varbit field, and the varbit's length field.
fn varbit_parts(l: &Loc) -> Option<(u32, FieldRef)> {
    let Loc::Header { ty, fields, .. } = l else {
        return None;
    };
    let len = fields.iter().find_map(|f| match &**f {
        Loc::Varbit { len, .. } => Some(*len),
        _ => None,
    })?;
    let all = Ty::Header(ty.clone()).max_flat_width()?;
    let max = ty.fields.iter().find_map(|(_, t)| match t {
        Ty::Varbit(n) => Some(u32::from(*n)),
        _ => None,
    })?;
    Some((all - max, len))
}

impl<'a> Lowerer<'a> {
    /// `pkt.extract(hdr, bits)`: a header with a varbit field and its length in bits, a
    /// `bit<32>`.
    pub(super) fn extract_varbit(
        &mut self,
        h: &'a ast::Argument,
        bits: &'a ast::Argument,
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let header = match self.expr(&h.value, None)? {
            V::Loc(l) => match &*l {
                Loc::Header { id, .. } if varbit_parts(&l).is_some() => Some(*id),
                _ => None,
            },
            _ => None,
        };
        let Some(header) = header else {
            return Err(self.err(
                Diagnostic::error("two-argument `extract` takes a header with a varbit field")
                    .with_primary(h.span, "no varbit field here")
                    .with_help("extract a fixed-size header with `pkt.extract(hdr.x)`"),
            ));
        };
        let (e, _) = self.scalar(&bits.value, Some(&Ty::Bit(32)))?;
        let mut fields = Vec::new();
        if !enumerable(&e, &mut fields) || fields.len() > 1 {
            self.warn(
                Diagnostic::warning(
                    "bf-p4c derives a varbit's length from one extracted field with constant arithmetic; pisa evaluates this length as written",
                )
                .with_primary(bits.span, "length expression")
                .with_note("bf-p4c turns the length into parser states, one per value of that field"),
            );
        }
        self.need_stmt(out, span, "extract")?
            .push(ir::Stmt::ExtractVarbit { header, bits: e });
        Ok(None)
    }

    /// `sizeInBits(h)` / `sizeInBytes(h)` (or `h.sizeInBits()`) of a header `h` with a varbit
    /// field: its fixed bits plus the varbit's current length, a `bit<32>`. `None` for any
    /// other argument (sized at compile time by the caller).
    pub(super) fn varbit_size(&mut self, which: &str, args: &'a [ast::Argument]) -> Res<Option<V>> {
        let [a] = args else { return Ok(None) };
        if matches!(a.value.kind, ast::ExprKind::Type(_)) {
            return Ok(None);
        }
        let Ok(Resolved::V(V::Loc(l))) = self.resolve(&a.value) else {
            return Ok(None);
        };
        Ok(varbit_parts(&l)
            .map(|(fixed, len)| V::Scalar(size_expr(which, fixed, len), Ty::Bit(32))))
    }
}

/// Whether `e` is constant arithmetic (+, −, ×, shifts, casts, slices) over header fields,
/// the fields collected: what bf-p4c can enumerate into parser states.
fn enumerable(e: &ir::Expr, fields: &mut Vec<FieldRef>) -> bool {
    match e {
        ir::Expr::Const { .. } => true,
        ir::Expr::Field(f) => {
            if !fields.contains(f) {
                fields.push(*f);
            }
            true
        }
        ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } => enumerable(arg, fields),
        ir::Expr::Binary { op, a, b, .. } => {
            matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl | BinOp::Shr
            ) && enumerable(a, fields)
                && enumerable(b, fields)
        }
        _ => false,
    }
}

/// `fixed + length` bits, or that divided by 8 for `sizeInBytes`, as a `bit<32>`.
fn size_expr(which: &str, fixed: u32, len: FieldRef) -> ir::Expr {
    let bits = ir::Expr::Binary {
        op: BinOp::Add,
        a: Box::new(ir::Expr::constant(u128::from(fixed), 32)),
        b: Box::new(ir::Expr::Cast {
            arg: Box::new(ir::Expr::Field(len)),
            width: 32,
            sign_extend: false,
        }),
        width: 32,
        signed: false,
    };
    if which == "sizeInBytes" {
        ir::Expr::Binary {
            op: BinOp::Shr,
            a: Box::new(bits),
            b: Box::new(ir::Expr::constant(3, 32)),
            width: 32,
            signed: false,
        }
    } else {
        bits
    }
}

//! `varbit<N>` header fields (P4_16 §7.1.6): the two-argument `extract` that sets a varbit's
//! length for this packet, and `sizeInBits`/`sizeInBytes` of a header holding one (its fixed
//! bits plus the current length, computed at run time). Storage is in [`super::phv`] (the N
//! bits reserved in the header, the length in a hidden `$length` field); emit, copies and
//! `setInvalid` need nothing of their own beyond what [`super::stmt`] does for headers.
//! A length bf-p4c can enumerate (one field or slice of at most 10 bits, with constant
//! arithmetic) is checked for every value of that variable as bf-p4c's
//! `midend/desugar_varbit_extract.cpp` does: whole bytes within the field, a value past the
//! field being a `reject` branch (the run time's reject); a constant one likewise, and a
//! constant 0 drops the extract.

use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Lowerer, Res, V};
use crate::source::Span;
use pipeline::ir::{self, BinOp, FieldRef};

/// The fixed bits of a header with a varbit field, the varbit's length field and its size.
fn varbit_parts(l: &Loc) -> Option<(u32, FieldRef, u32)> {
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
    Some((all - max, len, max))
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
            V::Loc(l) => match (&*l, varbit_parts(&l)) {
                (Loc::Header { id, .. }, Some((_, _, max))) => Some((*id, max)),
                _ => None,
            },
            _ => None,
        };
        let Some((header, max)) = header else {
            return Err(self.err(
                Diagnostic::error("two-argument `extract` takes a header with a varbit field")
                    .with_primary(h.span, "no varbit field here")
                    .with_help("extract a fixed-size header with `pkt.extract(hdr.x)`"),
            ));
        };
        let (e, _) = self.scalar(&bits.value, Some(&Ty::Bit(32)))?;
        if let ir::Expr::Const { value, .. } = e {
            if value == 0 {
                // bf-p4c's RemoveZeroVarbitExtract drops `extract(h, 0)`: nothing is extracted.
                self.need_stmt(out, span, "extract")?;
                return Ok(None);
            }
            self.constant_length(value, max, bits.span)?;
        } else if let Some(var) = length_var(&e) {
            self.enumerate_length(&e, var, max, bits.span)?;
        } else {
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
            .map(|(fixed, len, _)| V::Scalar(size_expr(which, fixed, len), Ty::Bit(32))))
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

/// Most values of a varbit length's variable bf-p4c makes parser branches for.
const MAX_BRANCHES: u128 = 1024;

impl Lowerer<'_> {
    /// A constant varbit length (not 0), as bf-p4c's `check_compile_time_constant` takes it:
    /// whole bytes, at most the field's `max` bits.
    fn constant_length(&mut self, bits: u128, max: u32, span: Span) -> Res<()> {
        let what = if !bits.is_multiple_of(8) {
            format!("Varbit field size expression evaluates to non byte-aligned value {bits}")
        } else if bits > u128::from(max) {
            format!("{bits} exceeds varbit field size {max}")
        } else {
            return Ok(());
        };
        Err(self.err(
            Diagnostic::error(what)
                .with_primary(span, "the varbit's length")
                .with_note("bf-p4c refuses a constant varbit length that is not whole bytes or is past the field"),
        ))
    }

    /// bf-p4c's `enumerate_varbit_field_values`: the length `bits` for every value of its
    /// variable `var` (`width` bits); more than 1024 values are refused, and a length within
    /// the field (`max` bits) must be whole bytes (one past the field is a `reject` branch,
    /// what the extract does at run time).
    fn enumerate_length(
        &mut self,
        bits: &ir::Expr,
        (var, width): (ir::Expr, u16),
        max: u32,
        span: Span,
    ) -> Res<()> {
        let values = 1u128 << width.min(100);
        if values > MAX_BRANCHES {
            return Err(self.err(
                Diagnostic::error("Varbit extract requires too many parser branches to implement")
                    .with_primary(span, format!("its variable has {width} bits: {values} values, one parser branch each"))
                    .with_note("bf-p4c makes a parser branch for every value of the length's variable, at most 1024")
                    .with_help("compute the length from a field or slice of at most 10 bits"),
            ));
        }
        for v in 0..values {
            let Some(n) = at_value(bits, &var, v, width) else {
                continue;
            };
            if n <= u128::from(max) && !n.is_multiple_of(8) {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "Varbit field size expression evaluates to non byte-aligned value {n}"
                    ))
                    .with_primary(span, format!("{n} bits when its variable is {v}"))
                    .with_note("bf-p4c computes the length for every value of its variable; Tofino extracts whole bytes")
                    .with_help("make the length a multiple of 8 bits for every value"),
                ));
            }
        }
        Ok(())
    }
}

/// The one variable of an enumerable, non-constant length (a field, or one slice of it
/// wherever the field appears, as bf-p4c takes a member or a slice) and its width; `None` for
/// more than one field or what bf-p4c cannot enumerate.
fn length_var(bits: &ir::Expr) -> Option<(ir::Expr, u16)> {
    let mut fields = Vec::new();
    if !enumerable(bits, &mut fields) {
        return None;
    }
    let [f] = fields[..] else { return None };
    let mut uses = Vec::new();
    var_uses(bits, f, &mut uses);
    match uses[..] {
        [first @ Some((hi, lo)), ..] if uses.iter().all(|u| *u == first) => Some((
            ir::Expr::Slice {
                arg: Box::new(ir::Expr::Field(f)),
                hi,
                lo,
            },
            hi - lo + 1,
        )),
        _ => Some((ir::Expr::Field(f), f.width)),
    }
}

/// How `e` reads `f`: whole (`None`) or through a slice (its bounds), one entry per use.
fn var_uses(e: &ir::Expr, f: FieldRef, out: &mut Vec<Option<(u16, u16)>>) {
    match e {
        ir::Expr::Field(g) if *g == f => out.push(None),
        ir::Expr::Slice { arg, hi, lo } if **arg == ir::Expr::Field(f) => {
            out.push(Some((*hi, *lo)))
        }
        ir::Expr::Cast { arg, .. } | ir::Expr::Slice { arg, .. } => var_uses(arg, f, out),
        ir::Expr::Binary { a, b, .. } => {
            var_uses(a, f, out);
            var_uses(b, f, out);
        }
        _ => {}
    }
}

/// `e` with `var` replaced by `value`, folded: its value where `var` is its only variable.
fn at_value(e: &ir::Expr, var: &ir::Expr, value: u128, width: u16) -> Option<u128> {
    fn subst(e: &mut ir::Expr, var: &ir::Expr, c: &ir::Expr) {
        if e == var {
            *e = c.clone();
            return;
        }
        for ch in super::copy_prop::children(e) {
            subst(ch, var, c);
        }
    }
    let mut e = e.clone();
    subst(&mut e, var, &ir::Expr::constant(value, width));
    match super::expr::fold(e) {
        ir::Expr::Const { value, .. } => Some(value),
        _ => None,
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

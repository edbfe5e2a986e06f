//! `MathUnit<T>`: the stateful ALU's table-driven math (`execute(x)` inside a RegisterAction
//! body), configured by its table (`invert, shift, scale, {16 × bit<8>}`, entry 15 first) or by
//! a function and a constant (`MathOp_t op, factor` or `op, A, B` for A/B), which bf-p4c turns
//! into a table: [`pipeline::externs::math_unit`] has both and the hardware's lookup.

use pipeline::externs::math_unit::{MathOp, MathUnit};
use pipeline::ir;

use super::{enum_member, Call, Ctor, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `MathUnit`.
pub(super) struct MathUnits;

impl ExternType for MathUnits {
    fn names(&self) -> &'static [&'static str] {
        &["MathUnit"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        c.arity(l, 2, 4)?;
        let Some(ty) = c.targ(0).filter(Ty::is_bits) else {
            return Err(l.err(
                Diagnostic::error("`MathUnit` needs a `bit<W>` or `int<W>` type")
                    .with_primary(c.inst.ty.span, "write `MathUnit<bit<32>>(...)`"),
            ));
        };
        let unit = if c.args.len() == 4 {
            table_form(l, c)?
        } else {
            op_form(l, c)?
        };
        Ok(Kind::MathUnit {
            unit: Box::new(unit),
            ty,
        })
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        _out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        match (&c.x.kind, c.m) {
            (Kind::MathUnit { unit, ty }, "execute") => {
                l.only_in(&[Ctx::RegAction], "MathUnit.execute", c.span)?;
                let [a] = c.args else {
                    return Err(l.arg_count("execute", 1, c.args.len(), c.span));
                };
                let (input, _) = l.scalar(&a.value, Some(ty))?;
                let width = ty.scalar_width().unwrap_or(32);
                let e = ir::Expr::MathUnit {
                    unit: unit.clone(),
                    input: Box::new(input),
                    width,
                };
                Ok(Some(V::Scalar(e, ty.clone())))
            }
            _ => l.no_method_of(c),
        }
    }
}

/// `MathUnit(invert, shift, scale, {entry 15, ..., entry 0})`.
fn table_form<'a>(l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<MathUnit> {
    let invert = l.const_value(c.args[0], &Ty::Bool)? != 0;
    let shift = l.const_int(c.args[1])?;
    let scale = l.const_int(c.args[2])?;
    let bad = |l: &mut Lowerer<'a>, k: usize, what: &str| {
        let label = if k == 3 {
            "16 entries, entry 15 first"
        } else {
            "out of range"
        };
        l.err(Diagnostic::error(format!("MathUnit {what}")).with_primary(c.args[k].span, label))
    };
    if !(-1..=1).contains(&shift) {
        return Err(bad(l, 1, "shift is −1 (square root), 0 or 1 (square)"));
    }
    if !(-32..=31).contains(&scale) {
        return Err(bad(l, 2, "scale is an int<6>: −32 to 31"));
    }
    let V::List(items) = l.expr(c.args[3], None)? else {
        return Err(bad(l, 3, "table is a list of 16 bit<8> values"));
    };
    if items.len() != 16 {
        return Err(bad(l, 3, "table is a list of 16 bit<8> values"));
    }
    let mut table = [0u8; 16];
    for (k, (v, span)) in items.into_iter().enumerate() {
        let (e, _) = l.scalar_of_value(v, Some(&Ty::Bit(8)), span)?;
        let ir::Expr::Const { value, .. } = crate::lower::expr::fold(e) else {
            return Err(l.err(
                Diagnostic::error("MathUnit table entries are constants")
                    .with_primary(span, "not a constant"),
            ));
        };
        table[15 - k] = value as u8;
    }
    Ok(MathUnit {
        invert,
        shift: shift as i8,
        scale: scale as i8,
        table,
    })
}

/// `MathUnit(op, factor)` or `MathUnit(op, A, B)`, tabulated as bf-p4c does.
fn op_form<'a>(l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<MathUnit> {
    let name = enum_member(l, c.args[0], "MathOp_t")?;
    let op = MathOp::from_name(&name).unwrap_or(MathOp::Mul);
    let mut nums = Vec::new();
    for e in &c.args[1..] {
        let n = l.const_int(e)?;
        let Ok(n) = u64::try_from(n) else {
            return Err(l.err(
                Diagnostic::error(format!("MathUnit factor {n} is negative"))
                    .with_primary(e.span, "a non-negative constant"),
            ));
        };
        nums.push(n);
    }
    // Two or three constructor arguments: the factor, and a divisor in the second form.
    let factor = nums.first().copied().unwrap_or(0);
    let divisor = nums.get(1).copied().unwrap_or(1);
    let Some((unit, capped)) = MathUnit::from_op(op, factor, divisor) else {
        return Err(l.err(
            Diagnostic::error("MathUnit divisor 0")
                .with_primary(c.args[c.args.len() - 1].span, "divides by zero"),
        ));
    };
    if capped {
        l.warn(
            Diagnostic::warning(format!(
                "MathUnit scale out of range, capped at {} as bf-p4c does",
                unit.scale
            ))
            .with_primary(c.inst.name.span, "its table saturates"),
        );
    }
    Ok(unit)
}

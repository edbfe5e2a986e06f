//! Tofino 2's `MinMaxAction` (and `MinMaxAction2/3/4`): a RegisterAction whose `apply` sees the
//! whole 128-bit memory word of a register of 8- or 16-bit cells (16 or 8 of them: cell
//! `index * n + i` in lane i, `execute`'s index picking the word), and whose `this.min8`,
//! `max8`, `min16`, `max16` pick the smallest or largest lane enabled by a mask, with the lane's
//! number through an optional `out`. The word is read only: the min/max unit's `postmod`
//! (a write back to the chosen lane) is not modelled and refused.

use std::rc::Rc;

use pipeline::ir::{self, RegisterActionId};

use super::register_action::{
    address, apply_outputs, predicate, register_action_body, RegisterActions,
};
use super::{Call, Ctor, ExternInst, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::stmt::Dest;
use crate::lower::{Binding, Ctx, Lowerer, Res, V};

/// `MinMaxAction`, `MinMaxAction2`, `MinMaxAction3`, `MinMaxAction4`.
pub(super) struct MinMaxActions;

impl ExternType for MinMaxActions {
    fn names(&self) -> &'static [&'static str] {
        &[
            "MinMaxAction",
            "MinMaxAction2",
            "MinMaxAction3",
            "MinMaxAction4",
        ]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        c.arity(l, 1, 1)?;
        let (rid, lane) = word_register(l, c)?;
        let typed_outs = tname
            .strip_prefix("MinMaxAction")
            .and_then(|n| n.parse::<usize>().ok());
        let out = c.targ(2);
        let want: Vec<Ty> = match typed_outs {
            Some(n) => (2..2 + n).filter_map(|k| c.targ(k)).collect(),
            None => out.iter().cloned().collect(),
        };
        let this = Rc::new(ExternInst {
            name: c.name.clone(),
            type_name: tname.clone(),
            kind: Kind::MinMaxUnit {
                lane,
                out: want.first().cloned(),
            },
        });
        let max_outs = apply_outputs(l, tname);
        let (body, more) = register_action_body(
            l,
            c.inst,
            &Ty::Bit(128),
            &want,
            typed_outs.is_some(),
            max_outs,
            Some(Binding::Extern(this)),
        )?;
        if writes_word(&body) {
            return Err(l.err(
                Diagnostic::error("a MinMaxAction writes its 128-bit word")
                    .with_primary(c.inst.name.span, "not modelled")
                    .with_help("update the cells with a RegisterAction on the same register"),
            ));
        }
        let id = RegisterActionId(l.pipe.register_actions.len() as u32);
        l.pipe.register_actions.push(ir::RegisterAction {
            name: c.name.clone(),
            register: rid,
            body,
            output_width: out.as_ref().and_then(Ty::scalar_width).unwrap_or(0),
            wide: true,
            overflow: None,
            underflow: None,
        });
        l.spans.register_actions.push(c.inst.name.span);
        Ok(Kind::RegisterAction {
            id,
            out,
            more,
            direct: false,
            index: c.targ(1).filter(|t| t.is_bits()),
        })
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        match (&c.x.kind, c.m) {
            (Kind::RegisterAction { .. }, "execute") => RegisterActions.method(l, c, out),
            (Kind::MinMaxUnit { lane, .. }, "min8" | "max8" | "min16" | "max16") => {
                min_max(l, c, *lane, out)
            }
            // The stateful ALU's address output: the 128-bit word's bit address (word × 128).
            (Kind::MinMaxUnit { out: ot, .. }, "address") => {
                l.only_in(&[Ctx::RegAction], "address", c.span)?;
                address(l, &c.xname, c.args, ot.as_ref(), c.span)
            }
            (Kind::MinMaxUnit { out: ot, .. }, "predicate") => {
                l.only_in(&[Ctx::RegAction], "predicate", c.span)?;
                predicate(l, &c.xname, c.args, ot.as_ref(), 4, c.span)
            }
            _ => l.no_method_of(c),
        }
    }
}

/// The register a MinMaxAction reads: an indexed one of 8- or 16-bit cells (the lane width).
fn word_register<'a>(l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<(ir::RegisterId, u16)> {
    let arg = c.args[0];
    let reg = match l.resolve(arg)? {
        Resolved::Obj(Binding::Extern(x)) => x,
        _ => {
            return Err(l.err(
                Diagnostic::error(format!("`{}` needs a register instance", c.tname))
                    .with_primary(arg.span, "not a register"),
            ))
        }
    };
    match &reg.kind {
        Kind::Register {
            id,
            direct: false,
            value: Ty::Bit(w @ (8 | 16)),
            ..
        } => Ok((*id, *w)),
        _ => Err(l.err(
            Diagnostic::error(format!(
                "`{}` needs a `Register` of `bit<8>` or `bit<16>` cells",
                c.tname
            ))
            .with_primary(arg.span, "the min/max unit works on 8- or 16-bit lanes")
            .with_help("declare the register as `Register<bit<16>, _>(n)` (or `bit<8>`)"),
        )),
    }
}

/// Whether a body assigns the memory word.
fn writes_word(b: &[ir::Stmt]) -> bool {
    b.iter().any(|s| match s {
        ir::Stmt::Assign { dst, .. } => matches!(dst, ir::Place::RegValue(_)),
        ir::Stmt::If { then, els, .. } => writes_word(then) || writes_word(els),
        _ => false,
    })
}

/// `this.min8/max8/min16/max16(value, mask[, index[, postmod]])`.
fn min_max<'a>(
    l: &mut Lowerer<'a>,
    c: &Call<'a, '_>,
    unit_lane: u16,
    out: Option<&mut ir::Block>,
) -> Res<Option<V>> {
    let (m, span, args) = (c.m, c.span, c.args);
    l.only_in(&[Ctx::RegAction], m, span)?;
    let lane: u16 = if m.ends_with("16") { 16 } else { 8 };
    if lane != unit_lane {
        return Err(l.err(
            Diagnostic::error(format!("`{m}` on a register of {unit_lane}-bit cells"))
                .with_primary(span, "lane width differs")
                .with_help(format!(
                    "use `{}{unit_lane}`",
                    if m.starts_with("max") { "max" } else { "min" }
                )),
        ));
    }
    if !(2..=4).contains(&args.len()) {
        return Err(l.arg_count(m, 2, args.len(), span));
    }
    if let Some(p) = args.get(3) {
        return Err(l.err(
            crate::check::unsupported(p.span, "`postmod`", "the min/max unit's post-modify")
                .with_help("update the chosen cell with a RegisterAction"),
        ));
    }
    let (value, _) = l.scalar(&args[0].value, Some(&Ty::Bit(128)))?;
    let n_lanes = 128 / lane;
    let (mask, _) = l.scalar(&args[1].value, Some(&Ty::Bit(n_lanes)))?;
    let e = |index: bool| ir::Expr::MinMax {
        max: m.starts_with("max"),
        lane,
        value: Box::new(value.clone()),
        mask: Box::new(mask.clone()),
        index,
    };
    let mut stmts = Vec::new();
    if let Some(a) = args.get(2) {
        let Dest::Scalar(dst, t) = l.dest(&a.value)? else {
            return Err(l.err(
                Diagnostic::error("the lane index goes to a `bit<W>` output")
                    .with_primary(a.span, "not a scalar"),
            ));
        };
        let need = e(true).width();
        let Some(w) = t.scalar_width().filter(|w| *w >= need && t.is_bits()) else {
            return Err(l.err(
                Diagnostic::error(format!("the lane index needs `bit<{need}>`, `{t}` given"))
                    .with_primary(a.span, "too narrow"),
            ));
        };
        stmts.push(ir::Stmt::Assign {
            dst,
            value: ir::Expr::Cast {
                arg: Box::new(e(true)),
                width: w,
                sign_extend: false,
            },
        });
    }
    match out {
        Some(o) => {
            o.extend(stmts);
            Ok(None)
        }
        None => {
            if !stmts.is_empty() && l.whole_rhs != Some(span) {
                return Err(l.err(
                    Diagnostic::error(format!("`{m}` with an index output inside an expression"))
                        .with_primary(span, "its index is written in the middle of an expression")
                        .with_help(format!(
                            "assign it first: `rv = this.{m}(value, mask, idx);`"
                        )),
                ));
            }
            l.hoisted.extend(stmts);
            Ok(Some(V::Scalar(e(false), Ty::Bit(lane))))
        }
    }
}

//! `Meter` and `DirectMeter`, with the program's colour values.

use pipeline::ir::{self, MeterId};

use super::byte_count::{true_egress_accounting, Measured};
use super::{enum_member, Call, Ctor, ExternType, Kind};
use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `Meter`, `DirectMeter`.
pub(super) struct Meters;

impl ExternType for Meters {
    fn names(&self) -> &'static [&'static str] {
        &["Meter", "DirectMeter"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let name = &c.name;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            "Meter" | "DirectMeter" => {
                let direct = tname == "DirectMeter";
                let (size, type_arg) = if direct {
                    c.arity(l, 1, 5)?;
                    (0, args[0])
                } else {
                    c.arity(l, 2, 6)?;
                    (c.size(l, 0, "meter")?, args[1])
                };
                let kind = match enum_member(l, type_arg, "MeterType_t")?.as_str() {
                    "PACKETS" => ir::MeterKind::Packets,
                    "BYTES" => ir::MeterKind::Bytes,
                    other => {
                        return Err(l.err(
                            Diagnostic::error(format!("unknown meter type `{other}`"))
                                .with_primary(type_arg.span, "here"),
                        ))
                    }
                };
                // After the type: `red, yellow, green` (custom colour values), then the optional
                // `true_egress_accounting`.
                let rest = &args[if direct { 1 } else { 2 }..];
                let (colors, tea) = match rest {
                [r, y, g, tea @ ..] => {
                    let mut c = [0u8; 3];
                    for (slot, e) in c.iter_mut().zip([r, y, g]) {
                        *slot = l.const_value(e, &Ty::Bit(8))? as u8;
                    }
                    (
                        ir::MeterColors {
                            red: c[0],
                            yellow: c[1],
                            green: c[2],
                        },
                        tea.first(),
                    )
                }
                [tea] => (ir::MeterColors::default(), Some(tea)),
                [] => (ir::MeterColors::default(), None),
                [_, extra, ..] => {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{tname}` takes either `red, yellow, green` colour values or `true_egress_accounting` after its type"
                        ))
                        .with_primary(extra.span, "unexpected argument"),
                    ))
                }
            };
                let true_egress = match tea {
                    Some(tea) => {
                        true_egress_accounting(l, tname, tea, kind == ir::MeterKind::Bytes)?
                    }
                    None => false,
                };
                let id = MeterId(l.pipe.meters.len() as u32);
                l.pipe.meters.push(ir::Meter {
                    name: name.clone(),
                    kind,
                    size,
                    direct_table: None,
                    colors,
                    bytes: ir::ByteAccounting {
                        adjust: 0,
                        true_egress,
                    },
                });
                l.spans.meters.push(span);
                Kind::Meter {
                    id,
                    direct,
                    index: c.targ(0).filter(|t| t.is_bits()),
                }
            }
            _ => return Err(c.unsupported(l)),
        };
        Ok(kind)
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        _out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (x, m) = (c.x, c.m);
        let xname = c.xname.clone();
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        let value = |e: ir::Expr, t: Ty| -> Res<Option<V>> { Ok(Some(V::Scalar(e, t))) };
        match (&x.kind, m) {
            (
                Kind::Meter {
                    id,
                    direct,
                    index: ity,
                },
                "execute",
            ) => {
                l.only_in(&[Ctx::Control, Ctx::Action], "execute", span)?;
                let (index, rest) = if *direct {
                    l.only_in(&[Ctx::Action], "execute", span)?;
                    l.not_inlined(&xname, span)?;
                    (None, args)
                } else {
                    let Some(a) = args.first() else {
                        return Err(l.arg_count("execute", 1, nargs, span));
                    };
                    (Some(Box::new(l.index_expr(a, ity.as_ref())?)), &args[1..])
                };
                // After the index: an optional `MeterColor_t` pre-colour, then an optional
                // `bit<32>` adjust_byte_count (`execute(i, adjust)` has no colour).
                let mut color = None;
                let mut adjust = None;
                for (k, c) in rest.iter().enumerate() {
                    // An unsized literal or a named `adjust_byte_count` is the adjustment;
                    // otherwise the argument's type tells.
                    let named = c.name.as_ref().map(|n| n.name.as_str());
                    let unsized_int =
                        matches!(&c.value.kind, ast::ExprKind::Int(i) if i.width.is_none());
                    let pre = if named == Some("adjust_byte_count") || unsized_int {
                        None
                    } else {
                        let (e, t) = l.scalar(&c.value, None)?;
                        matches!(&t, Ty::Enum(en) if en.name == "MeterColor_t").then_some(e)
                    };
                    match (k, pre.is_some()) {
                        (0, true) => color = pre.map(Box::new),
                        (0 | 1, false) if adjust.is_none() => adjust = Some(&c.value),
                        _ => {
                            return Err(l.arg_count(
                                "execute",
                                if *direct { 2 } else { 3 },
                                nargs,
                                span,
                            ))
                        }
                    }
                }
                if let Some(adj) = adjust {
                    l.adjust_byte_count(Measured::Meter(*id), &xname, adj)?;
                }
                value(
                    ir::Expr::MeterExecute {
                        meter: *id,
                        index,
                        color,
                    },
                    Ty::Bit(8),
                )
            }
            _ => l.no_method_of(c),
        }
    }
}

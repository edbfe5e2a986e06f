//! `RegisterAction`, `DirectRegisterAction` (the stateful ALU program lowered from the `apply`
//! body) and `RegisterParam`. On Tofino 2 (t2na.p4) the stateful ALU has four output words:
//! `apply` may write `rv1..rv4` and `execute` hands `rv2..rv4` back through `out` arguments;
//! `RegisterAction2/3/4` (and the direct ones) give each output its own type.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, RegWord, RegisterActionId, RegisterParamId, Target};

use super::{Call, Ctor, ExternInst, ExternType, Kind};
use crate::ast::{self, DeclKind, Direction};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::stmt::Dest;
use crate::lower::{Binding, Ctx, Lowerer, Res, V};

/// `RegisterAction`, `DirectRegisterAction`, `RegisterParam`.
pub(super) struct RegisterActions;

impl ExternType for RegisterActions {
    fn names(&self) -> &'static [&'static str] {
        &[
            "RegisterAction",
            "DirectRegisterAction",
            "RegisterAction2",
            "RegisterAction3",
            "RegisterAction4",
            "DirectRegisterAction2",
            "DirectRegisterAction3",
            "DirectRegisterAction4",
            "RegisterParam",
        ]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let i = c.inst;
        let name = &c.name;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            t if t.contains("RegisterAction") => {
                let direct = tname.starts_with("Direct");
                // RegisterActionN: N outputs, each with its own type argument.
                let typed_outs = t
                    .strip_prefix("Direct")
                    .unwrap_or(t)
                    .strip_prefix("RegisterAction")
                    .and_then(|n| n.parse::<usize>().ok());
                c.arity(l, 1, 1)?;
                let reg = match l.resolve(args[0])? {
                    Resolved::Obj(Binding::Extern(x)) => x,
                    _ => {
                        return Err(l.err(
                            Diagnostic::error(format!("`{tname}` needs a register instance"))
                                .with_primary(args[0].span, "not a register"),
                        ))
                    }
                };
                let Kind::Register {
                    id: rid,
                    direct: rdirect,
                    value,
                    index: _,
                } = &reg.kind
                else {
                    return Err(l.err(
                        Diagnostic::error(format!("`{}` is not a register", reg.name))
                            .with_primary(args[0].span, "expected a Register instance"),
                    ));
                };
                if *rdirect != direct {
                    let want = if direct { "DirectRegister" } else { "Register" };
                    return Err(l.err(
                        Diagnostic::error(format!("`{tname}` needs a `{want}`")).with_primary(
                            args[0].span,
                            format!("`{}` is the other kind of register", reg.name),
                        ),
                    ));
                }
                // Intel's TNA declares `RegisterAction(Register<_, _> reg)`: the action's index type
                // need not be the register's (a `bit<8>` index into a `bit<32>`-indexed
                // register); its value addresses the cell as it is.
                if let Some(t0) = c.targ(0) {
                    if t0 != *value {
                        return Err(l.err(
                            Diagnostic::error(format!(
                                "`{tname}<{t0}, ...>` on a register of `{value}`"
                            ))
                            .with_primary(i.ty.span, "value types differ")
                            .with_help(format!("declare it as `{tname}<{value}, ...>`")),
                        ));
                    }
                }
                let first_out = if direct { 1 } else { 2 };
                let out = c.targ(first_out);
                let typed: Option<Vec<Ty>> = typed_outs.map(|n| {
                    (first_out..first_out + n)
                        .filter_map(|k| c.targ(k))
                        .collect()
                });
                let want: Vec<Ty> = match &typed {
                    Some(ts) => ts.clone(),
                    None => out.iter().cloned().collect(),
                };
                let max_outs = apply_outputs(l, tname);
                let this = Rc::new(ExternInst {
                    name: name.clone(),
                    type_name: tname.clone(),
                    kind: Kind::SaluThis {
                        out: want.first().cloned(),
                        conds: if l.target == Target::Tofino2 { 4 } else { 2 },
                    },
                });
                let SaluProgram {
                    body,
                    more,
                    overflow,
                    underflow,
                } = register_action_program(
                    l,
                    tname,
                    i,
                    value,
                    &want,
                    typed.is_some(),
                    max_outs,
                    Some(Binding::Extern(this)),
                )?;
                let output_width = out.as_ref().and_then(Ty::scalar_width).unwrap_or(0);
                let id = RegisterActionId(l.pipe.register_actions.len() as u32);
                l.pipe.register_actions.push(ir::RegisterAction {
                    name: name.clone(),
                    register: *rid,
                    body,
                    output_width,
                    wide: false,
                    overflow,
                    underflow,
                });
                l.spans.register_actions.push(span);
                Kind::RegisterAction {
                    id,
                    out,
                    more,
                    direct,
                    index: if direct {
                        None
                    } else {
                        c.targ(1).filter(|t| t.is_bits())
                    },
                }
            }
            "RegisterParam" => {
                c.arity(l, 1, 1)?;
                let Some(t) = c.targ(0).filter(Ty::is_scalar) else {
                    return Err(l.err(
                        Diagnostic::error("`RegisterParam` needs a `bit<W>` type")
                            .with_primary(i.ty.span, "here"),
                    ));
                };
                let v = l.const_value(args[0], &t)?;
                let id = RegisterParamId(l.pipe.register_params.len() as u32);
                l.pipe.register_params.push(ir::RegisterParam {
                    name: name.clone(),
                    width: t.scalar_width().unwrap_or(1),
                    initial: v,
                });
                Kind::RegisterParam { id, ty: t }
            }
            _ => return Err(c.unsupported(l)),
        };
        Ok(kind)
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (x, m) = (c.x, c.m);
        let xname = c.xname.clone();
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        let value = |e: ir::Expr, t: Ty| -> Res<Option<V>> { Ok(Some(V::Scalar(e, t))) };
        match (&x.kind, m) {
            (
                Kind::RegisterAction {
                    id,
                    out: ot,
                    more,
                    direct,
                    index: ity,
                },
                m @ ("execute" | "execute_log" | "enqueue" | "dequeue" | "push" | "pop"),
            ) => {
                l.only_in(&[Ctx::Control, Ctx::Action], m, span)?;
                if *direct && m != "execute" {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{xname}.{m}`: a DirectRegisterAction has no stateful counter"
                        ))
                        .with_primary(span, "only a RegisterAction on an indexed Register has one")
                        .with_help("a direct register's cell is the matched entry's; use an indexed Register"),
                    ));
                }
                positional_args(l, &xname, m, *direct, args)?;
                let (index, out_args) = if *direct {
                    (ir::Expr::constant(0, 1), args)
                } else if m != "execute" {
                    (counter_index(l, *id, m, span)?, args)
                } else {
                    let Some((a, rest)) = args.split_first() else {
                        return Err(l.err(
                            Diagnostic::error(format!(
                                "`{xname}.execute()` without an index on an indexed Register"
                            ))
                            .with_primary(span, "the stateful ALU has no address")
                            .with_note("t2na.p4 declares the index @optional, but bf-p4c refuses an indexed RegisterAction or MinMaxAction run without one (`StatefulAttachmentSetup`: \"Indirect attached object ... requires an index to address, as it isn't directly addressed from the match entry\"); only the Direct* actions and the counter-addressed execute_log/enqueue/dequeue/push/pop take none")
                            .with_help("pass the cell's index: `execute(i)`, or use a DirectRegister with a DirectRegisterAction for a per-entry cell"),
                        ));
                    };
                    (l.index_expr(a, ity.as_ref())?, rest)
                };
                // RegisterActionN (and the direct and min/max ones): every output is an
                // argument t2na.p4 declares without @optional.
                if x.type_name.ends_with(|ch: char| ch.is_ascii_digit())
                    && out_args.len() != more.len()
                {
                    return Err(l.err(
                        Diagnostic::error(format!(
                            "`{xname}.execute` takes {} output argument(s), {} given",
                            more.len(),
                            out_args.len()
                        ))
                        .with_primary(span, "outputs missing")
                        .with_help(format!(
                            "`{}`'s outputs rv2.. are not optional: pass a field for each (or `_`)",
                            x.type_name
                        )),
                    ));
                }
                let t = ot.clone().unwrap_or(Ty::Bit(1));
                let width = t.scalar_width().unwrap_or(1);
                if !out_args.is_empty() {
                    let outs = extra_outputs(l, &xname, out_args, more, span)?;
                    return execute_outputs(l, *id, index, outs, &t, span, out);
                }
                let e = ir::Expr::RegisterExecute {
                    action: *id,
                    index: Box::new(index),
                    width,
                };
                match out {
                    // As a statement: run it for its effect, result to a scratch field.
                    Some(o) => {
                        let tmp = l.temp(width, span)?;
                        o.push(ir::Stmt::Assign {
                            dst: ir::Place::Field(tmp),
                            value: e,
                        });
                        Ok(None)
                    }
                    None => {
                        if ot.is_none() {
                            return Err(l.err(
                                Diagnostic::error(format!("`{xname}.execute` returns nothing"))
                                    .with_primary(span, "used as a value")
                                    .with_help("declare the RegisterAction with an output type and an `out` parameter"),
                            ));
                        }
                        value(e, t)
                    }
                }
            }
            (Kind::RegisterAction { id, out: ot, .. }, "sweep") => {
                l.only_in(&[Ctx::Control, Ctx::Action], m, span)?;
                if nargs > 1 {
                    return Err(l.arg_count("sweep", 1, nargs, span));
                }
                if let Some(b) = args.first() {
                    let t = ot.clone().unwrap_or(Ty::Bit(1));
                    l.const_value(&b.value, &t)?;
                    l.warn(
                        Diagnostic::warning(format!(
                            "`{xname}.sweep`: busy value accepted, not modelled: pisa runs the action on every cell at once, so no access sees a sweep in progress"
                        ))
                        .with_primary(b.span, "busy"),
                    );
                }
                let index = counter_index(l, *id, m, span)?;
                let tmp = l.temp(1, span)?;
                l.need_stmt(out, span, "sweep")?.push(ir::Stmt::Assign {
                    dst: ir::Place::Field(tmp),
                    value: ir::Expr::RegisterExecute {
                        action: *id,
                        index: Box::new(index),
                        width: 1,
                    },
                });
                Ok(None)
            }
            (Kind::SaluThis { .. }, mm @ ("min8" | "max8" | "min16" | "max16")) => Err(l.err(
                Diagnostic::error(format!("`this.{mm}` in a RegisterAction's `apply`"))
                    .with_primary(span, "not modelled here")
                    .with_note("the min/max unit reads the 128-bit memory word of 8- or 16-bit lanes; pisa models it in Tofino 2's MinMaxAction, whose `apply` sees that word")
                    .with_help(format!("declare `MinMaxAction<bit<16>, I, U>(reg)` (or bit<8> cells) and call `this.{mm}` in its `apply`")),
            )),
            (Kind::SaluThis { out: ot, conds }, "predicate") => {
                l.only_in(&[Ctx::RegAction], "predicate", span)?;
                predicate(l, &xname, args, ot.as_ref(), *conds, span)
            }
            (Kind::RegisterAction { .. }, m @ ("predicate" | "address")) => Err(l.err(
                Diagnostic::error(format!(
                    "`{xname}.{m}` outside its `apply`: it is the stateful ALU's own output"
                ))
                .with_primary(span, "called from outside the RegisterAction")
                .with_help(format!(
                    "write `rv = this.{m}(..);` inside the RegisterAction's `apply` and read it through `execute`"
                )),
            )),
            (Kind::SaluThis { out: ot, .. }, "address") => {
                l.only_in(&[Ctx::RegAction], "address", span)?;
                address(l, &xname, args, ot.as_ref(), span)
            }
            (Kind::RegisterParam { id, ty }, "read") => {
                value(ir::Expr::RegisterParam(*id), ty.clone())
            }
            _ => l.no_method_of(c),
        }
    }
}

/// The index of `execute_log`/`enqueue`/`dequeue`/`push`/`pop`: the register's stateful-ALU
/// counter, whose function (log, fifo, stack) every call on the register must share.
fn counter_index(
    l: &mut Lowerer<'_>,
    id: RegisterActionId,
    m: &str,
    span: crate::source::Span,
) -> Res<ir::Expr> {
    let (op, function) = match m {
        "execute_log" => (
            ir::CounterOp::Log {
                stop_when_full: l.target == Target::Tofino2,
            },
            "log",
        ),
        "enqueue" => (ir::CounterOp::Enqueue, "fifo"),
        "dequeue" => (ir::CounterOp::Dequeue, "fifo"),
        "push" => (ir::CounterOp::Push, "stack"),
        "sweep" => (ir::CounterOp::Sweep, "sweep"),
        _ => (ir::CounterOp::Pop, "stack"),
    };
    let register = l.pipe.register_actions[id.index()].register;
    match l.pipe.salu_counters.get(&register).copied() {
        Some((f, first)) if f != function => {
            let name = l.pipe.registers[register.index()].name.clone();
            return Err(l.err(
                Diagnostic::error(format!(
                    "register `{name}`'s stateful counter used as a {function} and as a {f}"
                ))
                .with_primary(span, format!("`{m}` makes it a {function}"))
                .with_secondary(first, format!("a {f} here"))
                .with_help(
                    "the stateful ALU has one counter per register: give each use its own register",
                ),
            ));
        }
        Some(_) => {}
        None => {
            l.pipe.salu_counters.insert(register, (function, span));
        }
    }
    Ok(ir::Expr::SaluCounter { register, op })
}

/// `this.predicate(c0, ..)` in a RegisterAction's `apply`: the one-hot output of its compare
/// units (bit `c0 | c1 << 1 | ..` set). Each argument is one comparison (or `true`/`false`),
/// as bf-p4c requires; an omitted one is false.
/// The low bits of the stateful ALU's address output that the program fixes: RAM line and
/// bit offset (see [`ir::Expr::SaluAddress`]).
const SALU_ADDRESS_FIXED_BITS: u16 = 17;

/// `this.address([subword])` inside a Tofino 2 RegisterAction: the stateful ALU's address
/// output (bf-asm's `address` output source, tofino-model `kOutSAddr`, Tofino 2 only).
pub(super) fn address<'a>(
    l: &mut Lowerer<'a>,
    xname: &str,
    args: &'a [ast::Argument],
    out: Option<&Ty>,
    span: crate::source::Span,
) -> Res<Option<V>> {
    if l.target != Target::Tofino2 {
        return Err(l.err(
            Diagnostic::error(format!("`{xname}.address`: Tofino 1's stateful ALU has no address output"))
                .with_primary(span, "Tofino 2 only")
                .with_note("tna.p4 declares `address` for Tofino 2 (t2na.p4) only; on Tofino 1 the address output source does not exist (tofino-model: `kOutSAddr` is illegal on Tofino)")
                .with_help("pass the index into the RegisterAction's caller instead"),
        ));
    }
    if args.len() > 1 {
        return Err(l.arg_count("address", 1, args.len(), span));
    }
    if let Some(a) = args.first() {
        match l.const_int(&a.value)? {
            0 => {}
            1 => {
                return Err(l.err(crate::check::unsupported(
                    a.span,
                    "`this.address(1)`",
                    "the subword bit bf-p4c adds to the address under the output's condition (JBAY-2631, its `lmatch` output option)",
                )
                .with_help("use `this.address()` (subword 0)")))
            }
            _ => {
                return Err(l.err(
                    Diagnostic::error(format!("`{xname}.address` argument must be 0 or 1"))
                        .with_primary(a.span, "the subword flag"),
                ))
            }
        }
    }
    let Some(t) = out.filter(|t| t.is_bits()) else {
        return Err(l.err(
            Diagnostic::error("`address` returns the RegisterAction's output type")
                .with_primary(span, "no `bit<W>` output type to return")
                .with_help("declare the RegisterAction as `RegisterAction<T, I, bit<W>>`"),
        ));
    };
    let width = t.scalar_width().unwrap_or(1);
    if width > SALU_ADDRESS_FIXED_BITS {
        l.warn(
            Diagnostic::warning(format!(
                "`{xname}.address()`: pisa gives the low {SALU_ADDRESS_FIXED_BITS} bits as the hardware does, not the {width}-bit output's upper bits"
            ))
            .with_primary(span, "the cell's bit address: index × cell bits")
            .with_note(format!(
                "the stateful ALU outputs its meter address: bits below {SALU_ADDRESS_FIXED_BITS} are the RAM line and the cell's bit offset, the bits above are the register's RAM page (bf-p4c's placement; pisa counts pages from 0), the per-flow enable bit and the address type (0 in pisa)"
            ))
            .with_help(format!(
                "use only the low {SALU_ADDRESS_FIXED_BITS} bits (mask the result where it is used, or declare a narrower output)"
            )),
        );
    }
    Ok(Some(V::Scalar(ir::Expr::SaluAddress { width }, t.clone())))
}

pub(super) fn predicate<'a>(
    l: &mut Lowerer<'a>,
    xname: &str,
    args: &'a [ast::Argument],
    out: Option<&Ty>,
    units: usize,
    span: crate::source::Span,
) -> Res<Option<V>> {
    if args.len() > units {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{xname}.predicate` takes at most {units} conditions, {} given",
                args.len()
            ))
            .with_primary(span, "more conditions than compare units")
            .with_help(if units == 2 {
                "Tofino 1's stateful ALU has two compare units (cmplo, cmphi)"
            } else {
                "Tofino 2's stateful ALU has four compare units (cmp0..cmp3)"
            }),
        ));
    }
    let Some(t) = out.filter(|t| t.is_bits()) else {
        return Err(l.err(
            Diagnostic::error("`predicate` returns the RegisterAction's output type")
                .with_primary(span, "no `bit<W>` output type to return")
                .with_help("declare the RegisterAction as `RegisterAction<T, I, bit<W>>`"),
        ));
    };
    let mut conds = Vec::new();
    for a in args {
        let (c, _) = l.scalar(&a.value, Some(&Ty::Bool))?;
        let one = match &c {
            ir::Expr::Const { .. } | ir::Expr::Field(_) => true,
            ir::Expr::Binary { op, .. } => matches!(
                op,
                ir::BinOp::Eq
                    | ir::BinOp::Ne
                    | ir::BinOp::Lt
                    | ir::BinOp::Le
                    | ir::BinOp::Gt
                    | ir::BinOp::Ge
            ),
            _ => false,
        };
        if !one {
            return Err(l.err(
                Diagnostic::error("predicate too complex for a stateful ALU")
                    .with_primary(a.span, "one comparison per argument")
                    .with_help("each argument is one compare unit: a single `a REL b` (combine the outputs' bits instead of the conditions)"),
            ));
        }
        conds.push(c);
    }
    let width = t.scalar_width().unwrap_or(1);
    Ok(Some(V::Scalar(
        ir::Expr::SaluPredicate { conds, width },
        t.clone(),
    )))
}

/// How many outputs the architecture's `apply` of extern `tname` declares: 1 on Tofino 1, 4 in
/// t2na.p4.
pub(super) fn apply_outputs(l: &Lowerer<'_>, tname: &str) -> usize {
    let Some(d) = l.env.lookup(tname) else {
        return 1;
    };
    let DeclKind::Extern(e) = &d.kind else {
        return 1;
    };
    e.members
        .iter()
        .find_map(|m| match &m.kind {
            ast::ExternMemberKind::AbstractMethod(f) if f.name.name == "apply" => Some(
                f.params
                    .iter()
                    .filter(|p| p.direction == Direction::Out)
                    .count(),
            ),
            _ => None,
        })
        .unwrap_or(1)
}

/// Checks that named arguments of `method` sit where pisa reads them (by position): the
/// index first (none for a Direct* action or a counter-addressed method), then `rv2`, `rv3`,
/// `rv4` as t2na.p4 names them. `execute(rv2 = x)` would otherwise take `x` for the index.
fn positional_args(
    l: &mut Lowerer<'_>,
    xname: &str,
    method: &str,
    direct: bool,
    args: &[ast::Argument],
) -> Res<()> {
    let with_index = !direct && method == "execute";
    let names = ["index", "rv2", "rv3", "rv4"];
    let names = if with_index { &names[..] } else { &names[1..] };
    for (i, a) in args.iter().enumerate() {
        let Some(n) = &a.name else { continue };
        if names.get(i) == Some(&n.name.as_str()) {
            continue;
        }
        let missing_index = with_index && i == 0 && names[1..].contains(&n.name.as_str());
        let d = if missing_index {
            Diagnostic::error(format!(
                "`{xname}.execute` without an index on an indexed Register"
            ))
            .with_primary(a.span, "the first argument is not the index")
            .with_note("bf-p4c refuses an indexed RegisterAction run without an index (\"requires an index to address, as it isn't directly addressed from the match entry\")")
            .with_help("pass the cell's index first: `execute(i, rv2 = ...)`")
        } else {
            Diagnostic::error(format!(
                "`{xname}.{method}`: argument `{}` out of place",
                n.name
            ))
            .with_primary(a.span, "named argument out of order")
            .with_help(format!(
                "pass the arguments in the order `{}`",
                names.join(", ")
            ))
        };
        return Err(l.err(d));
    }
    Ok(())
}

/// The places `execute` writes `rv2..` to (its `out` arguments after the index).
pub(super) fn extra_outputs<'a>(
    l: &mut Lowerer<'a>,
    xname: &str,
    out_args: &'a [ast::Argument],
    more: &[Ty],
    span: crate::source::Span,
) -> Res<Vec<Option<ir::Place>>> {
    if out_args.len() > more.len() {
        let help = if more.is_empty() {
            "its `apply` has one output: declare `out U rv2` (Tofino 2, t2na.p4) to return more"
                .to_string()
        } else {
            format!("its `apply` declares {} extra output(s)", more.len())
        };
        return Err(l.err(
            Diagnostic::error(format!(
                "`{xname}.execute` given {} output argument(s)",
                out_args.len()
            ))
            .with_primary(span, "more outputs than the RegisterAction has")
            .with_help(help),
        ));
    }
    let mut places = Vec::new();
    for (a, want) in out_args.iter().zip(more) {
        if matches!(a.value.kind, ast::ExprKind::DontCare) {
            places.push(None);
            continue;
        }
        match l.dest(&a.value)? {
            Dest::Scalar(p @ (ir::Place::Field(_) | ir::Place::FieldSlice { .. }), t)
                if t == *want =>
            {
                places.push(Some(p))
            }
            Dest::Scalar(_, t) if t != *want => {
                return Err(l.err(
                    Diagnostic::error(format!(
                        "output argument has type `{t}`, the RegisterAction outputs `{want}`"
                    ))
                    .with_primary(a.span, "types differ"),
                ))
            }
            _ => {
                return Err(l.err(
                    Diagnostic::error("a RegisterAction output goes to a header or metadata field")
                        .with_primary(a.span, "not a field"),
                ))
            }
        }
    }
    Ok(places)
}

/// `execute` with extra outputs: one statement that writes every output. As a value it runs
/// just before the assignment whose whole right-hand side it is, `rv1` through a temporary.
#[allow(clippy::too_many_arguments)]
fn execute_outputs<'a>(
    l: &mut Lowerer<'a>,
    action: RegisterActionId,
    index: ir::Expr,
    extra: Vec<Option<ir::Place>>,
    t: &Ty,
    span: crate::source::Span,
    out: Option<&mut ir::Block>,
) -> Res<Option<V>> {
    let mut outs = [None; 4];
    for (k, p) in extra.into_iter().enumerate().take(3) {
        outs[k + 1] = p;
    }
    match out {
        Some(o) => {
            o.push(ir::Stmt::RegisterExecute {
                action,
                index,
                outs,
            });
            Ok(None)
        }
        None => {
            if l.whole_rhs != Some(span) {
                return Err(l.err(
                    Diagnostic::error("`execute` with output arguments inside an expression")
                        .with_primary(span, "runs in the middle of an expression")
                        .with_help("assign it first: `x = ra.execute(i, rv2);`, then use `x`"),
                ));
            }
            let tmp = l.temp(t.scalar_width().unwrap_or(1), span)?;
            outs[0] = Some(ir::Place::Field(tmp));
            l.hoisted.push(ir::Stmt::RegisterExecute {
                action,
                index,
                outs,
            });
            Ok(Some(V::Scalar(ir::Expr::Field(tmp), t.clone())))
        }
    }
}

/// What a RegisterAction's initializer lowers to: `apply`'s body and the types of its extra
/// outputs (`rv2..`), and Tofino 2's `overflow` / `underflow` handlers where the extern
/// declares them and the program writes them.
pub(super) struct SaluProgram {
    pub body: ir::Block,
    pub more: Vec<Ty>,
    pub overflow: Option<ir::Block>,
    pub underflow: Option<ir::Block>,
}

/// Lowers the `apply` body of a RegisterAction initializer: the body and the types of its
/// extra outputs (`rv2..`). `want`: the output types of the extern's type arguments (all of
/// them required for a `RegisterActionN`); `max_outs`: what the architecture allows.
pub(super) fn register_action_body<'a>(
    l: &mut Lowerer<'a>,
    i: &'a ast::Instantiation,
    value: &Ty,
    want: &[Ty],
    all_required: bool,
    max_outs: usize,
    this: Option<Binding<'a>>,
) -> Res<(ir::Block, Vec<Ty>)> {
    let p = register_action_program(l, "", i, value, want, all_required, max_outs, this)?;
    Ok((p.body, p.more))
}

/// Whether extern type `tname` declares abstract method `m` (t2na.p4's `overflow` and
/// `underflow` on the RegisterActions that have FIFO/stack access).
fn declares_abstract(l: &Lowerer<'_>, tname: &str, m: &str) -> bool {
    let Some(DeclKind::Extern(e)) = l.env.lookup(tname).map(|d| &d.kind) else {
        return false;
    };
    e.members
        .iter()
        .any(|x| matches!(&x.kind, ast::ExternMemberKind::AbstractMethod(f) if f.name.name == m))
}

/// [`register_action_body`] for extern type `tname`, with its `overflow` / `underflow`
/// handlers: each is a stateful-ALU program of its own (the hardware runs it in `apply`'s
/// place on a full push or an empty pop), over the same value and outputs, its `value`
/// parameter optional as t2na.p4 declares it.
#[allow(clippy::too_many_arguments)]
pub(super) fn register_action_program<'a>(
    l: &mut Lowerer<'a>,
    tname: &str,
    i: &'a ast::Instantiation,
    value: &Ty,
    want: &[Ty],
    all_required: bool,
    max_outs: usize,
    this: Option<Binding<'a>>,
) -> Res<SaluProgram> {
    let Some(decls) = &i.initializer else {
        return Err(l.err(
            Diagnostic::error("RegisterAction without a body").with_primary(
                i.name.span,
                "missing `= { void apply(inout T value, ...) { ... } }`",
            ),
        ));
    };
    let mut apply = None;
    let mut handlers: [Option<&'a ast::FunctionDecl>; 2] = [None, None];
    for d in decls {
        match &d.kind {
            DeclKind::Function(f) if f.proto.name.name == "apply" => apply = Some(f),
            DeclKind::Function(f)
                if matches!(f.proto.name.name.as_str(), "overflow" | "underflow")
                    && declares_abstract(l, tname, &f.proto.name.name) =>
            {
                handlers[usize::from(f.proto.name.name == "underflow")] = Some(f);
            }
            _ => {
                let span = d.name().map(|n| n.span).unwrap_or(d.span);
                return Err(l.err(crate::check::unsupported(
                    span,
                    "declarations other than `apply` in a RegisterAction",
                    "extra RegisterAction members",
                )));
            }
        }
    }
    let Some(f) = apply else {
        return Err(l.err(
            Diagnostic::error("RegisterAction has no `apply` method")
                .with_primary(i.name.span, "add `void apply(inout T value) { ... }`"),
        ));
    };
    let ps = &f.proto.params;
    if ps.is_empty() || ps[0].direction != Direction::InOut {
        return Err(l.err(
            Diagnostic::error(
                "RegisterAction `apply` must be `apply(inout T value[, out U rv, ...])`",
            )
            .with_primary(f.proto.name.span, "unexpected signature"),
        ));
    }
    let outs = &ps[1..];
    if outs.len() > max_outs {
        let d = if max_outs == 1 {
            Diagnostic::error(format!(
                "Tofino 1's stateful ALU has one output; `apply` declares {}",
                outs.len()
            ))
            .with_primary(outs[1].span, "a second output")
            .with_help("outputs rv2..rv4 are Tofino 2's: include <t2na.p4> and compile with --target tofino2")
        } else {
            Diagnostic::error(format!(
                "the stateful ALU has {max_outs} outputs; `apply` declares {}",
                outs.len()
            ))
            .with_primary(outs[max_outs].span, "one too many")
        };
        return Err(l.err(d));
    }
    if all_required && outs.len() != want.len() {
        return Err(l.err(
            Diagnostic::error(format!(
                "this RegisterAction has {} outputs; `apply` declares {}",
                want.len(),
                outs.len()
            ))
            .with_primary(f.proto.name.span, "outputs missing")
            .with_help("declare `out U1 rv1, out U2 rv2, ...` for each output type"),
        ));
    }
    let (body, more) = salu_function(l, i, f, value, want, all_required, this.clone())?;
    let mut lowered = [None, None];
    for (k, h) in handlers.iter().enumerate() {
        if let Some(h) = h {
            lowered[k] = Some(salu_function(l, i, h, value, want, all_required, this.clone())?.0);
        }
    }
    let [overflow, underflow] = lowered;
    Ok(SaluProgram {
        body,
        more,
        overflow,
        underflow,
    })
}

/// One stateful-ALU program of a RegisterAction (`apply`, or a handler `f` whose `inout`
/// value parameter may be left out): its body and the types of its outputs after the first.
fn salu_function<'a>(
    l: &mut Lowerer<'a>,
    i: &'a ast::Instantiation,
    f: &'a ast::FunctionDecl,
    value: &Ty,
    want: &[Ty],
    all_required: bool,
    this: Option<Binding<'a>>,
) -> Res<(ir::Block, Vec<Ty>)> {
    let all = &f.proto.params;
    let has_value = all.first().is_some_and(|p| p.direction == Direction::InOut);
    let vparam = all.first().filter(|_| has_value);
    let outs = &all[usize::from(has_value)..];
    if outs.len() > 4 {
        return Err(l.err(
            Diagnostic::error(format!(
                "the stateful ALU has 4 outputs; `{}` declares {}",
                f.proto.name.name,
                outs.len()
            ))
            .with_primary(outs[4].span, "one too many"),
        ));
    }
    let fname = &f.proto.name.name;
    if let Some(vp) = vparam {
        let pty = l.resolve_type(&vp.ty)?;
        if pty != *value {
            return Err(l.err(
                Diagnostic::error(format!("`{fname}` takes `{pty}`, its value is a `{value}`"))
                    .with_primary(vp.ty.span, "type differs from the register's"),
            ));
        }
    }
    let value_loc = match value {
        Ty::Struct(s) => Rc::new(Loc::Struct {
            ty: s.clone(),
            fields: vec![
                Rc::new(Loc::RegWord(RegWord::Lo, s.fields[0].1.clone())),
                Rc::new(Loc::RegWord(RegWord::Hi, s.fields[1].1.clone())),
            ],
        }),
        t => Rc::new(Loc::RegWord(RegWord::Lo, t.clone())),
    };
    let mut frame = HashMap::new();
    if let Some(vp) = vparam {
        frame.insert(vp.name.name.clone(), Binding::Val(V::Loc(value_loc)));
    }
    if let Some(b) = this {
        frame.insert("this".into(), b);
    }
    let mut more = Vec::new();
    for (k, p) in outs.iter().enumerate() {
        if p.direction != Direction::Out {
            return Err(l.err(
                Diagnostic::error("a RegisterAction output parameter must be `out`")
                    .with_primary(p.span, "here"),
            ));
        }
        let t = l.resolve_type(&p.ty)?;
        // RegisterAction<T, H, U>: every output is a U.
        let w = want
            .get(k)
            .or(if all_required { None } else { want.first() });
        if let Some(o) = w {
            if *o != t {
                return Err(l.err(
                    Diagnostic::error(format!(
                        "`apply` outputs `{t}`, the RegisterAction declares `{o}`"
                    ))
                    .with_primary(p.ty.span, "types differ"),
                ));
            }
        }
        if k > 0 {
            more.push(t.clone());
        }
        frame.insert(
            p.name.name.clone(),
            Binding::Val(V::Loc(Rc::new(Loc::RegOut(k as u8 + 1, t)))),
        );
    }
    let saved_ctx = std::mem::replace(&mut l.ctx, Ctx::RegAction);
    let saved_ifs = std::mem::take(&mut l.ifs);
    l.scopes.push(frame);
    let errs = l.diags.error_count();
    let mut body = Vec::new();
    l.block_stmts(&f.body.stmts, &mut body);
    l.scopes.pop();
    l.ctx = saved_ctx;
    l.ifs = saved_ifs;
    if l.diags.error_count() > errs {
        return Err(crate::lower::Reported);
    }
    let found = super::salu_reads::hardware_reads(&mut body);
    let word_name = |w: RegWord| {
        let v = vparam.map_or("value", |p| p.name.name.as_str());
        match value {
            Ty::Struct(s) => format!("{v}.{}", s.fields[usize::from(w == RegWord::Hi)].0),
            _ => v.to_string(),
        }
    };
    let ra = &i.name.name;
    if let Some(d) = found.double.first() {
        let what = match &d.dst {
            ir::Place::RegValue(w) => word_name(*w),
            ir::Place::RegOutputN(k) => outs
                .get(usize::from(*k).saturating_sub(1))
                .map_or_else(|| format!("rv{k}"), |p| p.name.name.clone()),
            _ => outs
                .first()
                .map_or_else(|| "rv".to_string(), |p| p.name.name.clone()),
        };
        return Err(l.err(
            Diagnostic::error(format!(
                "two or more assignments of `{what}` inside the register action `{ra}` are not mutually exclusive and thus cannot be implemented in a Tofino stateful ALU"
            ))
            .with_primary(i.name.span, "assigned more than once on one path")
            .with_help(
                "rewrite the body so that the value is assigned no more than once in all cases (bf-p4c's rule; e.g. compute `value + 1` and its wrap in one if/else)",
            ),
        ));
    }
    for r in &found.late {
        let what = word_name(r.word);
        let place = match r.place {
            super::salu_reads::ReadPlace::Condition => "a condition",
            super::salu_reads::ReadPlace::Update => "a value written back",
            super::salu_reads::ReadPlace::Output => "a computed output",
        };
        l.warn(
            Diagnostic::warning(format!(
                "RegisterAction `{ra}` reads `{what}` in {place} after writing it: the stateful ALU reads the register's memory word there, before this update"
            ))
            .with_primary(i.name.span, "runs on one stateful ALU")
            .with_note("bf-p4c compiles such a read to the memory input (its compare units and ALUs all read the word before the update); pisa does the same, unlike P4's sequential reading")
            .with_help(format!(
                "read `{what}` before writing it, or compute the new value's condition from the old one (e.g. `value >= N - 1` instead of `value + 1 >= N`)"
            )),
        );
    }
    Ok((body, more))
}

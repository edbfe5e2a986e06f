//! `RegisterAction`, `DirectRegisterAction` (the stateful ALU program lowered from the `apply` body) and `RegisterParam`.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, RegWord, RegisterActionId, RegisterParamId};

use super::{Call, Ctor, ExternType, Kind};
use crate::ast::{self, DeclKind, Direction};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Binding, Ctx, Lowerer, Res, V};

/// `RegisterAction`, `DirectRegisterAction`, `RegisterParam`.
pub(super) struct RegisterActions;

impl ExternType for RegisterActions {
    fn names(&self) -> &'static [&'static str] {
        &["RegisterAction", "DirectRegisterAction", "RegisterParam"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let i = c.inst;
        let name = &c.name;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            "RegisterAction" | "DirectRegisterAction" => {
                let direct = tname == "DirectRegisterAction";
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
                    index: rindex,
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
                if let (false, Some(ri), Some(ai)) =
                    (direct, rindex, c.targ(1).filter(|t| t.is_bits()))
                {
                    if *ri != ai {
                        return Err(l.err(
                            Diagnostic::error(format!(
                                "`{tname}` indexes with `{ai}`, its register `{}` with `{ri}`",
                                reg.name
                            ))
                            .with_primary(i.ty.span, "index types differ")
                            .with_help(format!("declare it as `{tname}<{value}, {ri}, ...>`")),
                        ));
                    }
                }
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
                let out = if direct { c.targ(1) } else { c.targ(2) };
                let body = register_action_body(l, i, value, out.as_ref())?;
                let output_width = out.as_ref().and_then(Ty::scalar_width).unwrap_or(0);
                let id = RegisterActionId(l.pipe.register_actions.len() as u32);
                l.pipe.register_actions.push(ir::RegisterAction {
                    name: name.clone(),
                    register: *rid,
                    body,
                    output_width,
                });
                l.spans.register_actions.push(span);
                Kind::RegisterAction {
                    id,
                    out,
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
                    direct,
                    index: ity,
                },
                "execute",
            ) => {
                l.only_in(&[Ctx::Control, Ctx::Action], "execute", span)?;
                let index = if *direct {
                    if nargs != 0 {
                        return Err(l.arg_count("execute", 0, nargs, span));
                    }
                    ir::Expr::constant(0, 1)
                } else {
                    let [a] = args else {
                        return Err(l.arg_count("execute", 1, nargs, span));
                    };
                    l.index_expr(a, ity.as_ref())?
                };
                let t = ot.clone().unwrap_or(Ty::Bit(1));
                let width = t.scalar_width().unwrap_or(1);
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
            (Kind::RegisterParam { id, ty }, "read") => {
                value(ir::Expr::RegisterParam(*id), ty.clone())
            }
            _ => l.no_method_of(c),
        }
    }
}

/// Lowers the `apply` body of a RegisterAction initializer.
fn register_action_body<'a>(
    l: &mut Lowerer<'a>,
    i: &'a ast::Instantiation,
    value: &Ty,
    out: Option<&Ty>,
) -> Res<ir::Block> {
    let Some(decls) = &i.initializer else {
        return Err(l.err(
            Diagnostic::error("RegisterAction without a body").with_primary(
                i.name.span,
                "missing `= { void apply(inout T value, ...) { ... } }`",
            ),
        ));
    };
    let mut apply = None;
    for d in decls {
        match &d.kind {
            DeclKind::Function(f) if f.proto.name.name == "apply" => apply = Some(f),
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
    if ps.is_empty() || ps.len() > 2 || ps[0].direction != Direction::InOut {
        return Err(l.err(
            Diagnostic::error("RegisterAction `apply` must be `apply(inout T value[, out U rv])`")
                .with_primary(f.proto.name.span, "unexpected signature")
                .with_help("a second output (`out U rv2`) is not modelled"),
        ));
    }
    let pty = l.resolve_type(&ps[0].ty)?;
    if pty != *value {
        return Err(l.err(
            Diagnostic::error(format!(
                "`apply` takes `{pty}`, the register holds `{value}`"
            ))
            .with_primary(ps[0].ty.span, "type differs from the register's"),
        ));
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
    frame.insert(ps[0].name.name.clone(), Binding::Val(V::Loc(value_loc)));
    if let Some(p) = ps.get(1) {
        if p.direction != Direction::Out {
            return Err(l.err(
                Diagnostic::error("the second `apply` parameter must be `out`")
                    .with_primary(p.span, "here"),
            ));
        }
        let t = l.resolve_type(&p.ty)?;
        if let Some(o) = out {
            if *o != t {
                return Err(l.err(
                    Diagnostic::error(format!(
                        "`apply` outputs `{t}`, the RegisterAction declares `{o}`"
                    ))
                    .with_primary(p.ty.span, "types differ"),
                ));
            }
        }
        frame.insert(
            p.name.name.clone(),
            Binding::Val(V::Loc(Rc::new(Loc::RegOut(t)))),
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
    Ok(body)
}

//! `Register` and `DirectRegister`: the register array, its value layout (one word or a pair), and the `read`/`write` methods bf-p4c turns into implicit RegisterActions.

use pipeline::ir::{self, RegisterActionId, RegisterId};

use super::{Call, Ctor, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};
use crate::source::Span;

/// `Register`, `DirectRegister`.
pub(super) struct Registers;

impl ExternType for Registers {
    fn names(&self) -> &'static [&'static str] {
        &["Register", "DirectRegister"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let i = c.inst;
        let name = &c.name;
        let gress = c.gress;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            "Register" | "DirectRegister" => {
                let direct = tname == "DirectRegister";
                let Some(vt) = c.targ(0) else {
                    return Err(l.err(
                        Diagnostic::error(format!("`{tname}` needs its value type")).with_primary(
                            i.ty.span,
                            format!(
                                "write `{tname}<bit<32>{}>`",
                                if direct { "" } else { ", bit<16>" }
                            ),
                        ),
                    ));
                };
                let (size, init) = if direct {
                    c.arity(l, 0, 1)?;
                    (0u32, args.first().copied())
                } else {
                    c.arity(l, 1, 2)?;
                    (c.size(l, 0, "register")?, args.get(1).copied())
                };
                let (width, word_names) = register_layout(l, &vt, i.ty.span)?;
                let (lo, hi) = match init {
                    Some(e) => {
                        const_cell(l, &vt, word_names.is_some(), e, "register initial value")?
                    }
                    None => (0, 0),
                };
                let id = RegisterId(l.pipe.registers.len() as u32);
                l.pipe.registers.push(ir::Register {
                    name: name.clone(),
                    gress,
                    size,
                    width,
                    paired: word_names.is_some(),
                    word_names,
                    initial_lo: lo,
                    initial_hi: hi,
                    direct_table: None,
                    stage: 0,
                });
                l.spans.registers.push(span);
                Kind::Register {
                    id,
                    direct,
                    value: vt,
                    index: if direct {
                        None
                    } else {
                        c.targ(1).filter(|t| t.is_bits())
                    },
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
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let (x, m) = (c.x, c.m);
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        let value = |e: ir::Expr, t: Ty| -> Res<Option<V>> { Ok(Some(V::Scalar(e, t))) };
        match (&x.kind, m) {
            (
                Kind::Register {
                    id,
                    direct,
                    value: vt,
                    index: ity,
                },
                "read" | "write",
            ) => {
                l.only_in(&[Ctx::Control, Ctx::Action], m, span)?;
                let Some(width) = vt.scalar_width() else {
                    return Err(l.err(
                        crate::check::unsupported(
                            span,
                            &format!("`{m}` on a register pair"),
                            "implicit register actions on pairs",
                        )
                        .with_help("write a RegisterAction for paired registers"),
                    ));
                };
                let want = if *direct { 0 } else { 1 } + usize::from(m == "write");
                if nargs != want {
                    return Err(l.arg_count(m, want, nargs, span));
                }
                let index = if *direct {
                    ir::Expr::constant(0, 1)
                } else {
                    l.index_expr(&args[0], ity.as_ref())?
                };
                // bf-p4c turns read/write into an implicit RegisterAction; so does pisa.
                let (body, output_width, suffix) = if m == "read" {
                    (
                        vec![ir::Stmt::Assign {
                            dst: ir::Place::RegOutput,
                            value: ir::Expr::RegValue(ir::RegWord::Lo),
                        }],
                        width,
                        "$read",
                    )
                } else {
                    let (v, _) = l.scalar(&args[want - 1].value, Some(vt))?;
                    if out.is_none() {
                        // Tofino 2's `T write` as a value: bf-p4c's implicit RegisterAction
                        // (`value = v; rv = value;`, register_read_write.cpp) outputs the value
                        // written.
                        (
                            vec![
                                ir::Stmt::Assign {
                                    dst: ir::Place::RegValue(ir::RegWord::Lo),
                                    value: v.clone(),
                                },
                                ir::Stmt::Assign {
                                    dst: ir::Place::RegOutput,
                                    value: v,
                                },
                            ],
                            width,
                            "$write",
                        )
                    } else {
                        if matches!(l.ctx, Ctx::Action | Ctx::Control) {
                            let prev = out.as_deref().map(Vec::as_slice);
                            match read_to_merge(l, prev, *id, &index, &v) {
                                Merge::Join(ra) => {
                                    merge_write(l, ra, v);
                                    return Ok(None);
                                }
                                Merge::OtherIndex => return Err(other_index(l, c)),
                                Merge::Alone => {}
                            }
                        }
                        (
                            vec![ir::Stmt::Assign {
                                dst: ir::Place::RegValue(ir::RegWord::Lo),
                                value: v,
                            }],
                            0,
                            "$write",
                        )
                    }
                };
                let ra = RegisterActionId(l.pipe.register_actions.len() as u32);
                l.pipe.register_actions.push(ir::RegisterAction {
                    name: format!("{}.{suffix}{}", x.name, ra.0),
                    register: *id,
                    body,
                    output_width,
                    wide: false,
                    overflow: None,
                    underflow: None,
                });
                l.spans.register_actions.push(span);
                if m == "read" || out.is_none() {
                    let e = ir::Expr::RegisterExecute {
                        action: ra,
                        index: Box::new(index),
                        width,
                    };
                    return value(e, vt.clone());
                }
                // A write yields nothing: run it for its effect into a scratch bit.
                let tmp = l.temp(1, span)?;
                l.need_stmt(out, span, "write")?.push(ir::Stmt::Assign {
                    dst: ir::Place::Field(tmp),
                    value: ir::Expr::RegisterExecute {
                        action: ra,
                        index: Box::new(index),
                        width: 1,
                    },
                });
                Ok(None)
            }
            (Kind::Register { id, value: vt, .. }, "clear") => {
                l.only_in(&[Ctx::Control, Ctx::Action], m, span)?;
                if !declares(l, &x.type_name, "clear") {
                    return Err(l.err(
                        Diagnostic::error(format!("`{}.clear` is a Tofino 2 method", c.xname))
                            .with_primary(span, "Tofino 1's registers have no clear")
                            .with_help("include <t2na.p4> and compile with --target tofino2"),
                    ));
                }
                if !(1..=2).contains(&nargs) {
                    return Err(l.arg_count(m, 1, nargs, span));
                }
                let paired = matches!(vt, Ty::Struct(_));
                let (lo, hi) = const_cell(l, vt, paired, &args[0].value, "`clear`'s value")?;
                if let Some(b) = args.get(1) {
                    const_cell(l, vt, paired, &b.value, "`clear`'s busy value")?;
                    l.warn(
                        Diagnostic::warning(format!(
                            "`{}.clear`: busy value accepted, not modelled: pisa clears every cell at once, so no access sees a clear in progress",
                            c.xname
                        ))
                        .with_primary(b.span, "busy"),
                    );
                }
                l.need_stmt(out, span, "clear")?
                    .push(ir::Stmt::RegisterClear {
                        register: *id,
                        lo,
                        hi,
                    });
                Ok(None)
            }
            _ => l.no_method_of(c),
        }
    }
}

/// What a `write` does with an earlier implicit `$read` of its register (bf-p4c's
/// `RegisterReadWrite` midend pass, see [`read_to_merge`]).
enum Merge {
    /// Joins the read: one RegisterAction (the read's, whose result lands in the field).
    Join((RegisterActionId, ir::FieldRef)),
    /// The read it would join indexes the register differently: bf-p4c refuses that.
    OtherIndex,
    /// No read to join: the write is a RegisterAction of its own.
    Alone,
}

/// The implicit `$read` RegisterAction of register `reg` that a `write(index, v)` joins, as
/// bf-p4c's `RegisterReadWrite` midend pass merges a `read()` and a `write()` of one register
/// in one action into one RegisterAction. In an action, the read is any earlier one whose
/// result went straight into a field of `out`, when nothing since wrote that field or what
/// `index` and `v` read. In a control's `apply`, bf-p4c's action synthesis puts a write into
/// the read's synthesized action only when it is the very next statement
/// (`ActionSynthesisPolicy::isRegisterWriteAfterRead`), so the read must be the last statement
/// so far. Either way `v` must be plain arithmetic on fields and constants (what a stateful ALU
/// computes from its PHV inputs and the cell), and the indexes the same expression (bf-p4c:
/// "uses of all registers within a single action have to use the same addressing").
fn read_to_merge(
    l: &Lowerer<'_>,
    out: Option<&[ir::Stmt]>,
    reg: RegisterId,
    index: &ir::Expr,
    v: &ir::Expr,
) -> Merge {
    let Some(out) = out else {
        return Merge::Alone;
    };
    let is_read = |ra: &RegisterActionId| {
        l.pipe
            .register_actions
            .get(ra.index())
            .is_some_and(|r| r.register == reg && r.name.contains(".$read") && r.body.len() == 1)
    };
    let found = out.iter().enumerate().rev().find_map(|(i, s)| match s {
        ir::Stmt::Assign {
            dst: ir::Place::Field(f),
            value: ir::Expr::RegisterExecute {
                action, index: ix, ..
            },
        } if is_read(action) => Some((i, *action, *f, ix.as_ref())),
        _ => None,
    });
    let Some((at, ra, dst, ix)) = found else {
        return Merge::Alone;
    };
    if l.ctx == Ctx::Control && at + 1 != out.len() {
        return Merge::Alone;
    }
    if ix != index {
        return Merge::OtherIndex;
    }
    let mut reads = vec![dst];
    if !plain_fields(index, &mut reads) || !plain_fields(v, &mut reads) {
        return Merge::Alone;
    }
    let overlaps = |a: &ir::FieldRef, b: &ir::FieldRef| {
        a.offset < b.offset + u32::from(b.width) && b.offset < a.offset + u32::from(a.width)
    };
    let untouched = out[at + 1..].iter().all(|s| match s {
        ir::Stmt::Assign {
            dst: ir::Place::Field(g),
            ..
        } => !reads.iter().any(|f| overlaps(f, g)),
        _ => false,
    });
    if untouched {
        Merge::Join((ra, dst))
    } else {
        Merge::Alone
    }
}

/// bf-p4c's refusal of a read and a write of one register, in one action, at different
/// indexes.
fn other_index(l: &mut Lowerer<'_>, c: &Call<'_, '_>) -> crate::lower::Reported {
    let place = if l.ctx == Ctx::Control {
        "a `read` and the `write` right after it in `apply`, which bf-p4c puts into one synthesized action,"
    } else {
        "a `read` and a `write` in one action"
    };
    l.err(
        Diagnostic::error(format!(
            "`{}`: {place} index the register differently",
            c.x.name
        ))
        .with_primary(c.span, "another index than the read's")
        .with_note("bf-p4c merges them into one RegisterAction and refuses this: \"uses of all registers within a single action have to use the same addressing\"")
        .with_help("read and write the same index (the same expression), or use a RegisterAction"),
    )
}

/// Collects the fields `e` reads into `out`; false when `e` is more than arithmetic on fields,
/// parameters and constants.
fn plain_fields(e: &ir::Expr, out: &mut Vec<ir::FieldRef>) -> bool {
    use ir::Expr as E;
    match e {
        E::Const { .. } | E::Param { .. } => true,
        E::Field(f) => {
            out.push(*f);
            true
        }
        E::Unary { arg, .. } | E::Slice { arg, .. } | E::Cast { arg, .. } => plain_fields(arg, out),
        E::Binary { a, b, .. } => plain_fields(a, out) && plain_fields(b, out),
        E::Concat { hi, lo, .. } => plain_fields(hi, out) && plain_fields(lo, out),
        E::Ternary {
            cond, then, els, ..
        } => plain_fields(cond, out) && plain_fields(then, out) && plain_fields(els, out),
        _ => false,
    }
}

/// Makes the read RegisterAction `ra` (whose result lands in `dst`) also store `v`, with `dst`
/// read as the cell's old value: one RegisterAction doing the read and the write.
fn merge_write(l: &mut Lowerer<'_>, (ra, dst): (RegisterActionId, ir::FieldRef), mut v: ir::Expr) {
    fn old_value(e: &mut ir::Expr, dst: ir::FieldRef) {
        if *e == ir::Expr::Field(dst) {
            *e = ir::Expr::RegValue(ir::RegWord::Lo);
            return;
        }
        for c in crate::lower::copy_prop::children(e) {
            old_value(c, dst);
        }
    }
    old_value(&mut v, dst);
    if let Some(r) = l.pipe.register_actions.get_mut(ra.index()) {
        r.name = r.name.replace(".$read", ".$readwrite");
        r.body.push(ir::Stmt::Assign {
            dst: ir::Place::RegValue(ir::RegWord::Lo),
            value: v,
        });
    }
}

/// Whether the architecture declares method `m` on extern type `tname` (t2na.p4 has
/// Tofino 2's extra methods).
fn declares(l: &Lowerer<'_>, tname: &str, m: &str) -> bool {
    l.env.lookup(tname).is_some_and(|d| match &d.kind {
        crate::ast::DeclKind::Extern(e) => e.members.iter().any(
            |mb| matches!(&mb.kind, crate::ast::ExternMemberKind::Method(f) if f.name.name == m),
        ),
        _ => false,
    })
}

/// A constant cell value (`what`: where it appears): a scalar, or `{lo, hi}` for a pair.
fn const_cell<'a>(
    l: &mut Lowerer<'a>,
    vt: &Ty,
    paired: bool,
    e: &'a crate::ast::Expr,
    what: &str,
) -> Res<(ir::Value, ir::Value)> {
    let not_const = |l: &mut Lowerer<'a>, sp: Span| {
        l.err(
            Diagnostic::error(format!("{what} must be a constant"))
                .with_primary(sp, "not constant"),
        )
    };
    match (vt, paired) {
        (Ty::Struct(s), true) => match l.expr(e, Some(vt))? {
            V::List(items) if items.len() == 2 => {
                let mut vals = Vec::new();
                for ((v, sp), (_, fty)) in items.into_iter().zip(&s.fields) {
                    let (x, _) = l.scalar_of_value(v, Some(fty), sp)?;
                    match crate::lower::expr::fold(x) {
                        ir::Expr::Const { value, .. } => vals.push(value),
                        _ => return Err(not_const(l, sp)),
                    }
                }
                Ok((vals[0], vals[1]))
            }
            _ => Err(l.err(
                Diagnostic::error(format!("{what} of a `{vt}` register must be a pair"))
                    .with_primary(e.span, "expected `{lo, hi}`"),
            )),
        },
        _ => {
            let (x, _) = l.scalar(e, Some(vt))?;
            match crate::lower::expr::fold(x) {
                ir::Expr::Const { value, .. } => Ok((value, 0)),
                _ => Err(not_const(l, e.span)),
            }
        }
    }
}

/// Word width and, for a paired register, the names of its two words.
fn register_layout<'a>(
    l: &mut Lowerer<'a>,
    vt: &Ty,
    span: Span,
) -> Res<(u16, Option<(String, String)>)> {
    let ok_width = |w: u16| [1, 8, 16, 32, 64].contains(&w);
    match vt {
        Ty::Bit(w) | Ty::Int(w) if ok_width(*w) => Ok((*w, None)),
        Ty::Struct(s) if s.fields.len() == 2 => {
            let (a, ta) = &s.fields[0];
            let (b, tb) = &s.fields[1];
            // bf-p4c's stateful ALU specs: a pair (MaxDualSize) is 64 bits on Tofino 1 and 128
            // on Tofino 2 (`JBayDevice::getStatefulAluSpec`), so two 64-bit words on Tofino 2.
            let pair_widths: &[u16] = match l.target {
                ir::Target::Tofino1 => &[8, 16, 32],
                ir::Target::Tofino2 => &[8, 16, 32, 64],
            };
            let shown = |w: &[u16]| w.iter().map(|x| format!("bit<{x}>")).collect::<Vec<_>>().join(", ");
            match (ta.scalar_width(), tb.scalar_width()) {
                (Some(x), Some(y)) if x == y && pair_widths.contains(&x) && ta.is_bits() && tb.is_bits() => {
                    Ok((x, Some((a.clone(), b.clone()))))
                }
                (Some(x), Some(y)) if x == y && ta.is_bits() && tb.is_bits() => Err(l.err(
                    Diagnostic::error(format!(
                        "register pair `{}` has two {x}-bit fields; a {} register pair holds two words of {}",
                        s.name,
                        l.target.name(),
                        shown(pair_widths)
                    ))
                    .with_primary(span, "unsupported register value type")
                    .with_note("bf-p4c stateful ALU spec: a pair is at most 64 bits on Tofino 1, 128 on Tofino 2"),
                )),
                _ => Err(l.err(
                    Diagnostic::error(format!("register pair `{}` needs two `bit<W>` fields of one width", s.name))
                        .with_primary(span, "unsupported register value type")
                        .with_help(format!("use two fields of one of {}", shown(pair_widths))),
                )),
            }
        }
        other => Err(l.err(
            Diagnostic::error(format!("register value type `{other}` is not supported"))
                .with_primary(span, "unsupported register value type")
                .with_help("registers hold bit<1>, bit<8>, bit<16>, bit<32> (bit<64>), or a struct of two equal-width fields"),
        )),
    }
}

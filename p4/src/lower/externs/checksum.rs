//! `Checksum`: verify, residual and deposit in parsers, `update` in deparsers.

use pipeline::ir::{self, ChecksumId};

use super::{Call, Ctor, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::phv::Loc;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `Checksum`.
pub(super) struct Checksums;

impl ExternType for Checksums {
    fn names(&self) -> &'static [&'static str] {
        &["Checksum"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let name = &c.name;
        let gress = c.gress;
        let kind = match tname.as_str() {
            "Checksum" => {
                let id = ChecksumId(l.pipe.checksums.len() as u32);
                l.pipe.checksums.push(ir::Checksum {
                    name: name.clone(),
                    gress,
                });
                Kind::Checksum { id }
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
        let member = c.member;
        let nargs = c.args.len();
        let value = |e: ir::Expr, t: Ty| -> Res<Option<V>> { Ok(Some(V::Scalar(e, t))) };
        match (&x.kind, m) {
            (Kind::Checksum { id }, "add" | "subtract") if l.ctx == Ctx::Parser => {
                let [a] = args else { return Err(l.arg_count(m, 1, nargs, span)) };
                let inputs = l.checksum_inputs(a)?;
                let s = if m == "add" {
                    ir::Stmt::ChecksumAdd { checksum: *id, inputs }
                } else {
                    ir::Stmt::ChecksumSubtract { checksum: *id, inputs }
                };
                l.need_stmt(out, span, m)?.push(s);
                Ok(None)
            }
            (Kind::Checksum { id }, "verify") if l.ctx == Ctx::Parser => value(ir::Expr::ChecksumVerify(*id), Ty::Bool),
            (Kind::Checksum { id }, "get") if l.ctx == Ctx::Parser => value(ir::Expr::ChecksumGet(*id), Ty::Bit(16)),
            (Kind::Checksum { id }, "subtract_all_and_deposit") if l.ctx == Ctx::Parser => {
                let [a] = args else { return Err(l.arg_count(m, 1, nargs, span)) };
                let V::Loc(loc) = l.expr(&a.value, None)? else {
                    return Err(l.err(Diagnostic::error("`subtract_all_and_deposit` needs a field").with_primary(a.span, "not a field")));
                };
                let Loc::Field { f, .. } = &*loc else {
                    return Err(l.err(Diagnostic::error("`subtract_all_and_deposit` needs a field").with_primary(a.span, "not a field")));
                };
                let f = *f;
                l.residual_destination(f.width, a.span)?;
                l.need_stmt(out, span, m)?.push(ir::Stmt::ChecksumDeposit { checksum: *id, dst: f });
                Ok(None)
            }
            (Kind::Checksum { id }, "update") if l.ctx == Ctx::Deparser => {
                let Some(a) = args.first() else { return Err(l.arg_count("update", 1, nargs, span)) };
                if nargs > 2 {
                    return Err(l.arg_count("update", 2, nargs, span));
                }
                let inputs = l.checksum_inputs(a)?;
                let sum = ir::Expr::ChecksumUpdate { checksum: *id, inputs };
                // `zeros_as_ones`: the deparser's checksum unit sends a computed 0x0000 as 0xFFFF
                // (UDP's rule). The checksum is a pure function of the fields, so testing it and
                // then using it computes the same value twice.
                let zeros_as_ones = match args.get(1) {
                    Some(z) => crate::lower::expr::fold(l.cond(&z.value)?),
                    None => ir::Expr::constant(0, 1),
                };
                let e = match zeros_as_ones {
                    ir::Expr::Const { value: 0, .. } => sum,
                    z => {
                        let is_zero = ir::Expr::Binary {
                            op: ir::BinOp::Eq,
                            a: Box::new(sum.clone()),
                            b: Box::new(ir::Expr::constant(0, 16)),
                            width: 1,
                            signed: false,
                        };
                        let cond = match z {
                            ir::Expr::Const { .. } => is_zero,
                            z => ir::Expr::Binary {
                                op: ir::BinOp::LAnd,
                                a: Box::new(z),
                                b: Box::new(is_zero),
                                width: 1,
                                signed: false,
                            },
                        };
                        ir::Expr::Ternary {
                            cond: Box::new(cond),
                            then: Box::new(ir::Expr::constant(0xffff, 16)),
                            els: Box::new(sum),
                            width: 16,
                        }
                    }
                };
                value(e, Ty::Bit(16))
            }
            (Kind::Checksum { .. }, _) => Err(l.err(
                Diagnostic::error(format!("`Checksum.{m}` is not allowed in {}", l.ctx.describe()))
                    .with_primary(member.span, "here")
                    .with_help("parsers use add/subtract/verify/get/subtract_all_and_deposit; deparsers use update"),
            )),
            _ => l.no_method_of(c),
        }
    }
}

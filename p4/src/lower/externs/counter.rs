//! `Counter` and `DirectCounter`.

use pipeline::ir::{self, CounterId};

use super::byte_count::{true_egress_accounting, Measured};
use super::{enum_member, Call, Ctor, ExternType, Kind};
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `Counter`, `DirectCounter`.
pub(super) struct Counters;

impl ExternType for Counters {
    fn names(&self) -> &'static [&'static str] {
        &["Counter", "DirectCounter"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let tname = &c.tname;
        let name = &c.name;
        let args = &c.args;
        let span = c.inst.name.span;
        let kind = match tname.as_str() {
            "Counter" | "DirectCounter" => {
                let direct = tname == "DirectCounter";
                let (size, type_arg) = if direct {
                    c.arity(l, 1, 2)?;
                    (0, args[0])
                } else {
                    c.arity(l, 2, 3)?;
                    (c.size(l, 0, "counter")?, args[1])
                };
                let kind = match enum_member(l, type_arg, "CounterType_t")?.as_str() {
                    "PACKETS" => ir::CounterKind::Packets,
                    "BYTES" => ir::CounterKind::Bytes,
                    "PACKETS_AND_BYTES" => ir::CounterKind::PacketsAndBytes,
                    other => {
                        return Err(l.err(
                            Diagnostic::error(format!("unknown counter type `{other}`"))
                                .with_primary(type_arg.span, "here"),
                        ))
                    }
                };
                let true_egress = match args.get(if direct { 1 } else { 2 }) {
                    Some(tea) => {
                        true_egress_accounting(l, tname, tea, kind != ir::CounterKind::Packets)?
                    }
                    None => false,
                };
                let id = CounterId(l.pipe.counters.len() as u32);
                l.pipe.counters.push(ir::Counter {
                    name: name.clone(),
                    kind,
                    size,
                    direct_table: None,
                    bytes: ir::ByteAccounting {
                        adjust: 0,
                        true_egress,
                    },
                });
                l.spans.counters.push(span);
                Kind::Counter {
                    id,
                    direct,
                    index: c.targ(1).filter(|t| t.is_bits()),
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
        let xname = c.xname.clone();
        let args = c.args;
        let span = c.span;
        let nargs = c.args.len();
        match (&x.kind, m) {
            (
                Kind::Counter {
                    id,
                    direct: false,
                    index: ity,
                },
                "count",
            ) => {
                l.only_in(&[Ctx::Control, Ctx::Action], "count", span)?;
                let (a, adjust) = match args {
                    [a] => (a, None),
                    [a, adj] => (a, Some(adj)),
                    _ => return Err(l.arg_count("count", 1, nargs, span)),
                };
                if let Some(adj) = adjust {
                    l.adjust_byte_count(Measured::Counter(*id), &xname, &adj.value)?;
                }
                let index = l.index_expr(a, ity.as_ref())?;
                l.need_stmt(out, span, "count")?.push(ir::Stmt::Count {
                    counter: *id,
                    index,
                });
                Ok(None)
            }
            (
                Kind::Counter {
                    id, direct: true, ..
                },
                "count",
            ) => {
                l.only_in(&[Ctx::Action], "count", span)?;
                l.not_inlined(&xname, span)?;
                if nargs > 1 {
                    return Err(l.arg_count("count", 0, nargs, span));
                }
                if let Some(adj) = args.first() {
                    l.adjust_byte_count(Measured::Counter(*id), &xname, &adj.value)?;
                }
                l.need_stmt(out, span, "count")?
                    .push(ir::Stmt::CountDirect { counter: *id });
                Ok(None)
            }
            _ => l.no_method_of(c),
        }
    }
}

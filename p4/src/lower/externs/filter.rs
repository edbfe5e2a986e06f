//! `Lpf`, `DirectLpf`, `Wred` and `DirectWred`: the MAU's filters (model in
//! `pipeline::externs::filter`). A direct one is attached to a table with `filters = x;` and
//! executes on the matched entry's cell.

use pipeline::ir::{self, FilterId, FilterKind};

use super::{Call, Ctor, ExternType, Kind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res, V};

/// `Lpf`, `DirectLpf`, `Wred`, `DirectWred`.
pub(super) struct Filters;

impl ExternType for Filters {
    fn names(&self) -> &'static [&'static str] {
        &["Lpf", "DirectLpf", "Wred", "DirectWred"]
    }

    fn instantiate<'a>(&self, l: &mut Lowerer<'a>, c: &Ctor<'a>) -> Res<Kind> {
        let t = c.tname.as_str();
        let direct = t.starts_with("Direct");
        let Some(value) = c
            .targs
            .first()
            .cloned()
            .filter(|v| v.scalar_width().is_some())
        else {
            return Err(l.err(
                Diagnostic::error(format!(
                    "`{t}` needs the type it filters, e.g. `{t}<bit<32>{}>`",
                    if direct { "" } else { ", bit<10>" }
                ))
                .with_primary(c.inst.ty.span, "missing or not bits"),
            ));
        };
        let (size, rest) = if direct {
            (0, 0)
        } else {
            (c.size(l, 0, "filter")?, 1)
        };
        let kind = if t.ends_with("Lpf") {
            c.arity(l, rest, rest)?;
            FilterKind::Lpf
        } else {
            c.arity(l, rest + 2, rest + 2)?;
            FilterKind::Wred {
                drop_value: byte(l, c.args[rest], "drop_value")?,
                no_drop_value: byte(l, c.args[rest + 1], "no_drop_value")?,
            }
        };
        let id = FilterId(l.pipe.filters.len() as u32);
        l.pipe.filters.push(ir::Filter {
            name: c.name.clone(),
            kind,
            size,
            direct_table: None,
        });
        Ok(Kind::Filter {
            id,
            direct,
            value,
            index: c.targs.get(1).cloned().filter(|t| t.is_bits()),
        })
    }

    fn method<'a>(
        &self,
        l: &mut Lowerer<'a>,
        c: &Call<'a, '_>,
        _out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let Kind::Filter {
            id,
            direct,
            value: vt,
            index: ity,
        } = &c.x.kind
        else {
            return Err(crate::lower::Reported);
        };
        if c.m != "execute" {
            return l.no_method_of(c);
        }
        let (span, nargs) = (c.span, c.args.len());
        l.only_in(&[Ctx::Control, Ctx::Action], "execute", span)?;
        let want = if *direct { 1 } else { 2 };
        if nargs != want {
            return Err(l.arg_count("execute", want, nargs, span));
        }
        let index = if *direct {
            l.only_in(&[Ctx::Action], "execute", span)?;
            l.not_inlined(&c.xname, span)?;
            None
        } else {
            Some(Box::new(l.index_expr(&c.args[1], ity.as_ref())?))
        };
        let (value, _) = l.scalar(&c.args[0].value, Some(vt))?;
        let lpf = matches!(l.pipe.filters.get(id.index()), Some(f) if f.kind == FilterKind::Lpf);
        let (width, ty) = if lpf {
            (vt.scalar_width().unwrap_or(32), vt.clone())
        } else {
            (8, Ty::Bit(8))
        };
        let e = ir::Expr::FilterExecute {
            filter: *id,
            value: Box::new(value),
            index,
            width,
        };
        Ok(Some(V::Scalar(e, ty)))
    }
}

/// A WRED drop / no-drop value: a constant byte.
fn byte<'a>(l: &mut Lowerer<'a>, e: &'a crate::ast::Expr, what: &str) -> Res<u8> {
    let v = l.const_int(e)?;
    u8::try_from(v).map_err(|_| {
        l.err(
            Diagnostic::error(format!("`{what}` is {v}; WRED answers a bit<8>"))
                .with_primary(e.span, "out of range"),
        )
    })
}

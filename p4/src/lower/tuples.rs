//! Tuples (P4_16 §7.2.8, "Tuple types"): `tuple<T1, T2>` locals and constants are stored as a
//! struct of fields `0`, `1`, ... ([`phv::tuple_shape`](super::phv::tuple_shape)), so
//! assignment from a list expression, `==`/`!=` and passing them whole to an extern (hash,
//! digest, checksum) work as on structs; `t[i]` with a compile-time `i` names element `i`.

use pipeline::ir;

use super::expr::{fold, Resolved};
use super::phv::{Loc, TUPLE};
use super::{Lowerer, Res, V};
use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

impl<'a> Lowerer<'a> {
    /// `base[index]` when `base` is a tuple (stored or a list expression): its element, the
    /// index a compile-time constant in range. `None` when `base` is not a tuple.
    pub(super) fn tuple_element(
        &mut self,
        b: &Resolved<'a>,
        index: &'a ast::Expr,
    ) -> Res<Option<V>> {
        let elems: Vec<V> = match b {
            Resolved::V(V::Loc(l)) => match &**l {
                Loc::Struct { ty, fields } if ty.name == TUPLE => {
                    fields.iter().map(|f| V::Loc(f.clone())).collect()
                }
                _ => return Ok(None),
            },
            Resolved::V(V::List(items)) => items.iter().map(|(v, _)| v.clone()).collect(),
            _ => return Ok(None),
        };
        let i = self.const_int(index)?;
        let n = elems.len();
        match usize::try_from(i).ok().and_then(|i| elems.get(i)) {
            Some(v) => Ok(Some(v.clone())),
            None => Err(self.err(
                Diagnostic::error(format!("index {i} out of bounds for a tuple of {n}"))
                    .with_primary(index.span, "out of bounds")
                    .with_help(format!("valid indices are 0..={}", n.saturating_sub(1))),
            )),
        }
    }

    /// A `const tuple<...>` declaration's value: each element folded to a constant of its type.
    pub(super) fn const_tuple(
        &mut self,
        c: &'a ast::ConstDecl,
        tys: &[Ty],
        items: Vec<(V, Span)>,
    ) -> Res<V> {
        if tys.len() != items.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{}` is a tuple of {}, its value has {}",
                    c.name.name,
                    tys.len(),
                    items.len()
                ))
                .with_primary(c.value.span, "wrong number of values"),
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (ty, (v, span)) in tys.iter().zip(items) {
            let (e, t) = self.scalar_of_value(v, Some(ty), span)?;
            let e = fold(e);
            if !matches!(e, ir::Expr::Const { .. }) {
                return Err(self.err(
                    Diagnostic::error(format!("`{}` is not a compile-time constant", c.name.name))
                        .with_primary(span, "not constant"),
                ));
            }
            out.push((V::Scalar(e, t), span));
        }
        Ok(V::List(out))
    }
}

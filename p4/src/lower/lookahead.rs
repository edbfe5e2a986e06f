//! `pkt.lookahead<T>().field` (and `.a.b` into nested structs): a field of a header or struct
//! that is not extracted, read from the packet at its offset within `T` — the bits the parser
//! would extract into it.

use crate::ast::{self, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::{Binding, Lowerer, Res, V};
use pipeline::ir;

/// The `lookahead<T>()` call at the root of a member chain, and the members from it outwards.
/// The pieces of a member chain rooted at `pkt.lookahead<T>()`.
type Chain<'e> = (&'e ast::Expr, &'e [ast::Type], Vec<&'e ast::Ident>);

fn chain(e: &ast::Expr) -> Option<Chain<'_>> {
    let mut members = Vec::new();
    let mut cur = e;
    loop {
        match &cur.kind {
            ExprKind::Member { base, member } => {
                members.push(member);
                cur = base;
            }
            ExprKind::Call {
                callee,
                type_args,
                args,
            } if args.is_empty() && !members.is_empty() => {
                let ExprKind::Member { base, member } = &callee.kind else {
                    return None;
                };
                if member.name != "lookahead" {
                    return None;
                }
                members.reverse();
                return Some((base, type_args.as_slice(), members));
            }
            _ => return None,
        }
    }
}

impl<'a> Lowerer<'a> {
    /// `e` when it is `pkt.lookahead<T>().f...` on a `packet_in`: the field's bits as a scalar.
    pub(crate) fn lookahead_member(&mut self, e: &'a ast::Expr) -> Option<Res<Resolved<'a>>> {
        let (pkt, type_args, members) = chain(e)?;
        if !matches!(
            self.resolve(pkt),
            Ok(Resolved::Obj(Binding::Packet { out: false }))
        ) {
            return None;
        }
        Some(self.lookahead_field(e, type_args, &members))
    }

    fn lookahead_field(
        &mut self,
        e: &'a ast::Expr,
        type_args: &'a [ast::Type],
        members: &[&'a ast::Ident],
    ) -> Res<Resolved<'a>> {
        let [t] = type_args else {
            return Err(self.err(
                Diagnostic::error("`lookahead` needs one type argument")
                    .with_primary(e.span, "write `pkt.lookahead<H>().field`"),
            ));
        };
        let mut ty = self.resolve_type(t)?;
        let mut offset = 0u32;
        for m in members {
            let (Ty::Header(s) | Ty::Struct(s)) = &ty else {
                return Err(self.err(
                    Diagnostic::error(format!("`{ty}` has no field `{}`", m.name))
                        .with_primary(m.span, "not a header or struct"),
                ));
            };
            let mut found = None;
            let mut at = 0u32;
            for (name, fty) in &s.fields {
                if *name == m.name {
                    found = Some(fty.clone());
                    break;
                }
                at += fty.flat_width().unwrap_or(0);
            }
            let Some(fty) = found else {
                return Err(self.err(
                    Diagnostic::error(format!("`{}` has no field `{}`", s.name, m.name))
                        .with_primary(m.span, "no such field"),
                ));
            };
            offset += at;
            ty = fty;
        }
        let Some(width) = ty.scalar_width() else {
            return Err(self.err(
                Diagnostic::error(format!("a lookahead of `{ty}` must end at a scalar field"))
                    .with_primary(e.span, "an aggregate")
                    .with_help("name one of its fields, or assign the whole header"),
            ));
        };
        Ok(Resolved::V(V::Scalar(
            ir::Expr::Lookahead {
                offset_bits: offset,
                width,
            },
            ty,
        )))
    }
}

//! Header unions (P4_16 §7.2.4, §8.20): a union is stored as its member headers side by side
//! (a struct of headers, as p4c's `FlattenHeaderUnion` lays it out), and the lowering keeps
//! the union's invariant that at most one member is valid: every statement that changes a
//! member's validity — `setValid()`, `setInvalid()`, `extract`, an assignment to the member —
//! also makes the union's other members invalid. `u.isValid()` is true when any member is;
//! emitting a union emits its members in order, so only the valid one reaches the wire.
//! A stack of unions (§8.21) is indexed with constants (`u[0].h1`) or, in a parser, through its
//! cursor: `extract(u.next.h1)` extracts member `h1` of element `u.nextIndex`, makes that
//! element's other members invalid, and moves `nextIndex` on, as `extract(stack.next)` does on
//! a header stack (§8.18: on a full stack the parse ends as there); `u.lastIndex` is
//! `nextIndex - 1`. Each member has an IR stack of its own over the elements, all sharing the
//! one `nextIndex` (`phv.rs`). `.next` elsewhere, `.last`, `push_front` and `pop_front` on a
//! union stack are refused with the reason.

use std::rc::Rc;

use pipeline::ir::{self, BinOp as IrOp, HeaderId};

use super::expr::Resolved;
use super::phv::Loc;
use super::{Lowerer, Res, V};
use crate::ast::{self, ExprKind};
use crate::diag::Diagnostic;
use crate::source::Span;

impl<'a> Lowerer<'a> {
    /// `pkt.extract(u.next.h)` on a stack of header unions `u`: the extract of member `h` of
    /// element `nextIndex` (which moves the shared cursor on), then the statements that make
    /// that element's other members invalid. `None` when `e` is not of that shape.
    pub(super) fn extract_union_next(
        &mut self,
        e: &'a ast::Expr,
    ) -> Res<Option<(ir::Stmt, ir::Block)>> {
        let ExprKind::Member { base, member } = &e.kind else {
            return Ok(None);
        };
        let ExprKind::Member {
            base: stack,
            member: next,
        } = &base.kind
        else {
            return Ok(None);
        };
        if next.name != "next" {
            return Ok(None);
        }
        let Resolved::V(V::Loc(l)) = self.resolve(stack)? else {
            return Ok(None);
        };
        let Loc::Stack {
            id: None,
            elems,
            next_index,
            unions,
            ..
        } = &*l
        else {
            return Ok(None);
        };
        let Some(&(_, st)) = unions.iter().find(|(m, _)| *m == member.name) else {
            return Err(self.err(
                Diagnostic::error(format!("the union has no member `{}`", member.name))
                    .with_primary(member.span, "no such member")
                    .with_help(format!(
                        "its members: {}",
                        unions
                            .iter()
                            .map(|(m, _)| m.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
            ));
        };
        // After the extract `nextIndex` is i + 1 for the element i it filled.
        let mut after = Vec::new();
        for (i, el) in elems.iter().enumerate() {
            let Loc::Struct { fields, .. } = &**el else {
                continue;
            };
            let k = unions.iter().position(|(m, _)| *m == member.name);
            let peers: ir::Block = fields
                .iter()
                .enumerate()
                .filter(|(j, _)| Some(*j) != k)
                .filter_map(|(_, f)| match &**f {
                    Loc::Header { id, .. } => Some(ir::Stmt::SetValid {
                        header: *id,
                        valid: false,
                    }),
                    _ => None,
                })
                .collect();
            if peers.is_empty() {
                continue;
            }
            after.push(ir::Stmt::If {
                cond: ir::Expr::Binary {
                    op: IrOp::Eq,
                    a: Box::new(ir::Expr::Field(*next_index)),
                    b: Box::new(ir::Expr::constant(i as u128 + 1, next_index.width)),
                    width: 1,
                    signed: false,
                },
                then: peers,
                els: Vec::new(),
                stage: 0,
            });
        }
        Ok(Some((ir::Stmt::ExtractNext(st), after)))
    }
}

impl Lowerer<'_> {
    /// Makes the other members of the union `header` belongs to (if any) invalid.
    pub(super) fn invalidate_union_peers(&self, header: HeaderId, out: &mut ir::Block) {
        if let Some(peers) = self.phv.union_peers.get(&header) {
            out.extend(peers.iter().map(|&p| ir::Stmt::SetValid {
                header: p,
                valid: false,
            }));
        }
    }

    /// The union members' validity statements for an assignment to `dst`, when `dst` is a
    /// member header of a union.
    pub(super) fn after_member_write(&self, dst: &Rc<Loc>, out: &mut ir::Block) {
        if let Loc::Header { id, .. } = &**dst {
            self.invalidate_union_peers(*id, out);
        }
    }
}

/// `u.isValid()` on a header union (the struct of its members): any member valid.
pub(super) fn union_is_valid(members: &[Rc<Loc>]) -> ir::Expr {
    let mut ids = Vec::new();
    members.iter().for_each(|m| m.headers(&mut ids));
    ids.into_iter()
        .map(ir::Expr::Valid)
        .reduce(|a, b| ir::Expr::Binary {
            op: IrOp::LOr,
            a: Box::new(a),
            b: Box::new(b),
            width: 1,
            signed: false,
        })
        .unwrap_or_else(|| ir::Expr::constant(0, 1))
}

/// The refusal of a stack cursor operation (`next`, `last`, `lastIndex`, `push_front`,
/// `pop_front`) on a stack of header unions.
pub(super) fn union_stack_op(span: Span, op: &str) -> Diagnostic {
    crate::check::unsupported(
        span,
        &format!("`{op}` on a stack of header unions"),
        "the run-time cursor of header union stacks beyond `extract(u.next.member)` and `lastIndex`",
    )
    .with_help("index the stack with constants, e.g. `hdr.u[0].h1`, or extract `hdr.u.next.h1` in a parser")
}

/// `minSizeInBits()` (`max` false) or `maxSizeInBits()` (`max` true) of a value of type `ty`,
/// as p4c's `TypeMap::widthBits` computes it: a header union is as wide as its widest member
/// (its members share the wire), a struct or header the sum of its fields, a `varbit<N>` 0
/// bits at least and N at most.
pub(crate) fn size_in_bits(ty: &crate::check::types::Ty, max: bool) -> u32 {
    use crate::check::types::Ty;
    match ty {
        Ty::Varbit(n) => u32::from(*n) * u32::from(max),
        Ty::Header(s) | Ty::Struct(s) => {
            let widths = s.fields.iter().map(|(_, t)| size_in_bits(t, max));
            if s.union {
                widths.max().unwrap_or(0)
            } else {
                widths.sum()
            }
        }
        Ty::Stack(elem, n) => size_in_bits(elem, max) * n,
        Ty::Tuple(ts) => ts.iter().map(|t| size_in_bits(t, max)).sum(),
        other => other.scalar_width().map(u32::from).unwrap_or(0),
    }
}

//! `packet_in` in a parser: extract, advance, lookahead (scalar and into aggregates),
//! `port_metadata_unpack`.

use std::rc::Rc;

use pipeline::ir::{self, Place};

use crate::ast::{self, ExprKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::phv::Loc;
use crate::lower::{Ctx, Lowerer, Res, V};
use crate::source::Span;

impl<'a> Lowerer<'a> {
    pub(super) fn port_metadata_unpack(
        &mut self,
        loc: &Rc<Loc>,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error("`port_metadata_unpack` is only allowed in the ingress parser")
                    .with_primary(span, "here"),
            ));
        }
        if let Some(t) = type_args.first() {
            let ty = self.resolve_type(t)?;
            if ty != loc.ty() {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "`port_metadata_unpack<{ty}>` assigned to a `{}`",
                        loc.ty()
                    ))
                    .with_primary(span, "types differ"),
                ));
            }
        }
        if args.len() != 1 {
            return Err(self.err(
                Diagnostic::error("`port_metadata_unpack` takes the packet")
                    .with_primary(span, "write `port_metadata_unpack<T>(pkt)`"),
            ));
        }
        self.phase0_fits(loc, span)?;
        self.lookahead_into(loc, span, out)?;
        let bits = crate::lower::intrinsics::port_metadata_bits(self.target);
        out.push(ir::Stmt::Advance(ir::Expr::constant(u128::from(bits), 32)));
        Ok(())
    }

    /// Refuses a `port_metadata_unpack` type wider than the chip's phase-0 word, as bf-p4c
    /// does (its phase-0 output: "Phase 0 type is %1%b, but its size must be exactly %2%b";
    /// `PardeSpec::bytePhase0Size()`: 8 bytes on Tofino 1, 16 on Tofino 2). A narrower one
    /// reads the word's first bits.
    fn phase0_fits(&mut self, loc: &Rc<Loc>, span: Span) -> Res<()> {
        let mut fields = Vec::new();
        loc.field_refs(&mut fields);
        let bits: u32 = fields.iter().map(|f| u32::from(f.width)).sum();
        let max = crate::lower::intrinsics::phase0_bits(self.target);
        if bits <= max {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error(format!(
                "Phase 0 type is {bits}b, but its size must be at most {max}b on {}",
                self.target.name()
            ))
            .with_primary(span, format!("`{}` is {bits} bits", loc.ty()))
            .with_note("bf-p4c: the port metadata is the parser's phase-0 word (`PardeSpec::bytePhase0Size()`, parde/parde_spec.h)")
            .with_help(format!("keep the port metadata type within {max} bits")),
        ))
    }

    /// `x = pkt.lookahead<T>()` for an aggregate `x`: each field from the bits ahead.
    pub(super) fn lookahead_into(
        &mut self,
        loc: &Rc<Loc>,
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error("`lookahead` is only allowed in a parser")
                    .with_primary(span, "here"),
            ));
        }
        let mut fields = Vec::new();
        loc.field_refs(&mut fields);
        let mut at = 0u32;
        for f in fields {
            out.push(ir::Stmt::Assign {
                dst: Place::Field(f),
                value: ir::Expr::Lookahead {
                    offset_bits: at,
                    width: f.width,
                },
            });
            at += u32::from(f.width);
        }
        let mut hs = Vec::new();
        loc.headers(&mut hs);
        for h in hs {
            out.push(ir::Stmt::SetValid {
                header: h,
                valid: true,
            });
        }
        Ok(())
    }

    pub(super) fn packet_in_call(
        &mut self,
        member: &'a ast::Ident,
        type_args: &'a [ast::Type],
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        if self.ctx != Ctx::Parser {
            return Err(self.err(
                Diagnostic::error(format!("`{}` is only allowed in a parser", member.name))
                    .with_primary(span, "here"),
            ));
        }
        match member.name.as_str() {
            "extract" => self.extract(args, span, out),
            "advance" => {
                let [a] = args else {
                    return Err(self.arg_count("advance", 1, args.len(), span));
                };
                let e = match self.expr(&a.value, None)? {
                    V::Int(i) if i >= 0 => ir::Expr::constant(i as u128, 32),
                    v => self.scalar_of_value(v, None, a.span)?.0,
                };
                if !matches!(e, ir::Expr::Const { .. }) {
                    // bf-p4c: `rewriteAdvance` in `parde/extract_parser.cpp` (a fatal error).
                    return Err(self.err(
                        Diagnostic::error(
                            "advancing by a non-constant distance is not supported on Tofino",
                        )
                        .with_primary(a.span, "a run-time distance")
                        .with_note(
                            "the parser's shift is fixed per state: bf-p4c refuses a distance \
                             it cannot fold to a constant",
                        )
                        .with_help(
                            "select on the length and advance by a constant in each state, or \
                             extract the variable part as a varbit field",
                        ),
                    ));
                }
                self.need_stmt(out, span, "advance")?
                    .push(ir::Stmt::Advance(e));
                Ok(None)
            }
            "lookahead" => self.lookahead_scalar(type_args, span),
            "length" => Err(self.err(crate::check::unsupported(
                span,
                "`packet_in.length()`",
                "packet length in the parser",
            ))),
            _ => Err(self.no_method("packet_in", member, "extract, advance, lookahead")),
        }
    }

    /// `pkt.extract(h)` (a header, `stack.next`) or `pkt.extract(h, len)` (a varbit header).
    fn extract(
        &mut self,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let a = match args {
            [a] => a,
            [h, bits] => return self.extract_varbit(h, bits, span, out),
            _ => return Err(self.arg_count("extract", 1, args.len(), span)),
        };
        self.varbit_extracted_last(span)?;
        if let Some((stmt, peers)) = self.extract_union_next(&a.value)? {
            let block = self.need_stmt(out, span, "extract")?;
            block.push(stmt);
            block.extend(peers);
            return Ok(None);
        }
        let stmt = self.extract_next(&a.value)?;
        let stmt = match stmt {
            Some(s) => s,
            None => match self.expr(&a.value, None)? {
                V::Loc(l) => match &*l {
                    Loc::Header { ty, .. } if Ty::Header(ty.clone()).has_varbit() => {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "`{}` has a varbit field: extract it with its length",
                                ty.name
                            ))
                            .with_primary(a.span, "one-argument extract")
                            .with_help("write `pkt.extract(hdr.x, (bit<32>)length_in_bits)`"),
                        ))
                    }
                    Loc::Header { id, .. } => ir::Stmt::Extract(*id),
                    _ => {
                        return Err(self.err(
                            Diagnostic::error(format!(
                                "`extract` takes a header, found `{}`",
                                l.ty()
                            ))
                            .with_primary(a.span, "not a header")
                            .with_help("extract each header of a struct separately"),
                        ))
                    }
                },
                v => {
                    return Err(self.err(
                        Diagnostic::error(format!("`extract` takes a header, found `{}`", v.ty()))
                            .with_primary(a.span, "not a header"),
                    ))
                }
            },
        };
        let extracted = match &stmt {
            ir::Stmt::Extract(id) => Some(*id),
            _ => None,
        };
        let block = self.need_stmt(out, span, "extract")?;
        block.push(stmt);
        if let Some(id) = extracted {
            self.invalidate_union_peers(id, block);
        }
        Ok(None)
    }

    /// `pkt.lookahead<bit<W>>()` as a value.
    fn lookahead_scalar(&mut self, type_args: &'a [ast::Type], span: Span) -> Res<Option<V>> {
        let [t] = type_args else {
            return Err(self.err(
                Diagnostic::error("`lookahead` needs one type argument")
                    .with_primary(span, "write `pkt.lookahead<bit<16>>()`"),
            ));
        };
        let ty = self.resolve_type(t)?;
        let Some(w) = ty.scalar_width() else {
            return Err(self.err(
                Diagnostic::error(format!("`lookahead<{ty}>` can only be assigned to a `{ty}` variable"))
                    .with_primary(span, "aggregate lookahead")
                    .with_help("assign it directly: `hdr.x = pkt.lookahead<T>();`, or look ahead at a `bit<W>`"),
            ));
        };
        Ok(Some(V::Scalar(
            ir::Expr::Lookahead {
                offset_bits: 0,
                width: w,
            },
            ty,
        )))
    }

    /// `pkt.extract(stack.next)`: the stack's next element.
    fn extract_next(&mut self, e: &'a ast::Expr) -> Res<Option<ir::Stmt>> {
        let ExprKind::Member { base, member } = &e.kind else {
            return Ok(None);
        };
        if member.name != "next" {
            return Ok(None);
        }
        Ok(match self.resolve(base)? {
            Resolved::V(V::Loc(l)) => match &*l {
                Loc::Stack { id: Some(id), .. } => Some(ir::Stmt::ExtractNext(*id)),
                _ => None,
            },
            _ => None,
        })
    }
}

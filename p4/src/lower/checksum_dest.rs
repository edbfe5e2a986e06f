//! Where a checksum's result may be written, as bf-p4c rules it (Tofino 1 and 2 alike): a
//! deparser `update()` goes into a 16-bit field of a header, starting on a byte boundary of the
//! header (its checksum engine writes whole bytes of the packet; a metadata field, a local or
//! another width is refused), and a parser `verify()` into a single bit (a `bool` or `bit<1>`:
//! the parser deposits the verification's one-bit result), and a parser residual into an 8- or
//! 16-bit field (bf-asm writes it as one whole container, never a 32-bit one). Checked on
//! assignments and deposits. A conditional deparser update of a field an unconditional update
//! already writes is deleted with a warning, as bf-p4c deletes it.

use pipeline::ir::{self, FieldRef, Place};

use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Ctx, Lowerer, Res};
use crate::source::Span;

/// Whether `e` is, or (through a `zeros_as_ones` choice or a cast) holds, an `update()`.
fn holds(e: &ir::Expr, what: fn(&ir::Expr) -> bool) -> bool {
    if what(e) {
        return true;
    }
    match e {
        ir::Expr::Ternary { then, els, .. } => holds(then, what) || holds(els, what),
        ir::Expr::Cast { arg, .. } => holds(arg, what),
        _ => false,
    }
}

impl Lowerer<'_> {
    /// Refuses a checksum result written where bf-p4c refuses it (see the module doc).
    pub(super) fn checksum_destination(
        &mut self,
        place: &Place,
        ty: &Ty,
        value: &ir::Expr,
        lhs: Span,
    ) -> Res<()> {
        if holds(value, |e| matches!(e, ir::Expr::ChecksumUpdate { .. })) {
            if let Some(why) = self.update_destination_problem(place) {
                return Err(self.err(
                    Diagnostic::error(format!("`Checksum.update` result written to {why}"))
                        .with_primary(lhs, "checksum destination")
                        .with_note("bf-p4c: the deparser's checksum engine writes a 16-bit field of a header, byte-aligned in it")
                        .with_help("assign it to the header's 16-bit checksum field"),
                ));
            }
        }
        if holds(value, |e| matches!(e, ir::Expr::ChecksumGet(_))) {
            let width = match place {
                Place::Field(f) => f.width,
                _ => ty.flat_width().unwrap_or(0) as u16,
            };
            self.residual_destination(width, lhs)?;
        }
        if holds(value, |e| matches!(e, ir::Expr::ChecksumVerify(_)))
            && !matches!(ty, Ty::Bool | Ty::Bit(1))
        {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`Checksum.verify` result written to a `{ty}`: the parser deposits it as a single bit"
                ))
                .with_primary(lhs, "checksum verification destination")
                .with_help("write it to a `bool` or `bit<1>` field"),
            ));
        }
        Ok(())
    }

    /// A parser residual (`subtract_all_and_deposit`, or the deprecated `get()`) into a field
    /// of `width` bits: bf-asm has the checksum unit write one whole PHV container, never a
    /// 32-bit one, so only an 8- or 16-bit field can take it. (Whether PHV allocation then
    /// gives the field a container of its own is not checked: that needs the allocation.)
    pub(super) fn residual_destination(&mut self, width: u16, span: Span) -> Res<()> {
        if width == 8 || width == 16 {
            return Ok(());
        }
        Err(self.err(
            Diagnostic::error(format!(
                "residual checksum written to a {width}-bit field: the parser's checksum unit writes a whole 8- or 16-bit container"
            ))
            .with_primary(span, "residual checksum destination")
            .with_note("bf-asm: a residual checksum must write a whole container, and a checksum unit cannot write a 32-bit one")
            .with_help("deposit it into a `bit<16>` field"),
        ))
    }

    /// A deparser `Checksum.update` into a field an unconditional update already wrote: when
    /// this one is conditional, bf-p4c deletes it (the unconditional update always wins) and
    /// so does pisa, with a warning (true: drop the assignment). Records unconditional ones.
    pub(super) fn shadowed_checksum_update(
        &mut self,
        place: &Place,
        value: &ir::Expr,
        lhs: Span,
    ) -> bool {
        let (Ctx::Deparser, Place::Field(f)) = (self.ctx, place) else {
            return false;
        };
        if !holds(value, |e| matches!(e, ir::Expr::ChecksumUpdate { .. })) {
            return false;
        }
        let earlier = self
            .csum_updates
            .iter()
            .find(|(g, _)| g == f)
            .map(|(_, s)| *s);
        match (self.deparser_ifs, earlier) {
            (0, _) => {
                self.csum_updates.push((*f, lhs));
                false
            }
            (_, Some(at)) => {
                self.warn(
                    Diagnostic::warning(
                        "conditional `Checksum.update` of a field an unconditional update already writes: deleted, as bf-p4c deletes it",
                    )
                    .with_primary(lhs, "never written")
                    .with_secondary(at, "this unconditional update always wins")
                    .with_note("bf-p4c: the field has an unconditional update checksum operation, so its other conditional update checksums are deleted"),
                );
                true
            }
            (_, None) => false,
        }
    }

    /// Why `place` cannot take an `update()` result, if it cannot.
    fn update_destination_problem(&self, place: &Place) -> Option<String> {
        let Place::Field(f) = place else {
            return Some("part of a field".into());
        };
        let FieldRef { offset, width } = *f;
        let header = self.phv.layout.headers.iter().find(|h| {
            let start = h.byte_offset * 8;
            offset >= start && offset < start + h.byte_len * 8
        });
        let Some(h) = header else {
            return Some("a field that is not a header field (metadata or a local)".into());
        };
        if width != 16 {
            return Some(format!("a {width}-bit field: it is 16 bits"));
        }
        let at = offset - h.byte_offset * 8;
        if at % 8 != 0 {
            return Some(format!(
                "a field {at} bits into `{}`, not on a byte boundary",
                h.name
            ));
        }
        None
    }
}

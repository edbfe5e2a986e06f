//! Where a checksum's result may be written, as bf-p4c rules it (Tofino 1 and 2 alike): a
//! deparser `update()` goes into a 16-bit field of a header, starting on a byte boundary of the
//! header (its checksum engine writes whole bytes of the packet; a metadata field, a local or
//! another width is refused), and a parser `verify()` into a single bit (a `bool` or `bit<1>`:
//! the parser deposits the verification's one-bit result). Checked on assignments, the only
//! way a checksum result reaches a field.

use pipeline::ir::{self, FieldRef, Place};

use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::{Lowerer, Res};
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

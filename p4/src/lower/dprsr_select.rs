//! The deparser's select fields that the architecture leaves invalid until written: on
//! Tofino, `ig_intr_md_for_dprsr.resubmit_type`, `.digest_type` and
//! `eg_intr_md_for_dprsr.mirror_type` start a pass invalid (bf-p4c's hardware-constrained
//! fields: "invalidate from arch"), and the deparser resubmits, learns or mirrors only when
//! the match-action stage wrote the field, whatever its value. A program may thus use 0 as a
//! type (`if (resubmit_type == 0) resubmit.emit(..)`), and a packet whose pass never set the
//! field is neither resubmitted nor learnt. (`ig_intr_md_for_dprsr.mirror_type` is different:
//! the architecture initialises it to 0, valid.)
//!
//! pisa keeps a hidden one-bit "written" flag per such field, set by every assignment to the
//! field, and guards the deparser's `Resubmit.emit` / `Digest.pack` / egress `Mirror.emit`
//! with it.

use pipeline::ir::{self, Expr, FieldRef, Intrinsic, Place, Stmt};

use super::{Lowerer, Res};
use crate::diag::Diagnostic;
use crate::source::Span;

/// The select fields that start invalid, with the hidden name of their flag.
const INVALID_UNTIL_WRITTEN: [(Intrinsic, &str); 3] = [
    (Intrinsic::IgDprsrResubmitType, "$written.resubmit_type"),
    (Intrinsic::IgDprsrDigestType, "$written.digest_type"),
    (Intrinsic::EgDprsrMirrorType, "$written.mirror_type"),
];

/// One select field and its flag (allocated when the program first writes the field or
/// guards a request with it, so a program without either gets no extra PHV).
#[derive(Debug, Clone, Copy)]
pub(crate) struct WrittenFlag {
    pub which: Intrinsic,
    pub name: &'static str,
    pub field: FieldRef,
    pub flag: Option<FieldRef>,
}

impl Lowerer<'_> {
    /// Notes the select fields this gress binds (before its blocks lower).
    pub(crate) fn bind_written_flags(&mut self, bindings: &ir::IntrinsicBindings) {
        self.written_flags.clear();
        for (which, name) in INVALID_UNTIL_WRITTEN {
            if let Some(field) = bindings.get(which) {
                self.written_flags.push(WrittenFlag {
                    which,
                    name,
                    field,
                    flag: None,
                });
            }
        }
    }

    /// The flag of entry `i`, allocated on first use.
    fn written_flag(&mut self, i: usize, span: Span) -> Res<FieldRef> {
        if let Some(f) = self.written_flags[i].flag {
            return Ok(f);
        }
        let f = self
            .phv
            .hidden(self.written_flags[i].name, 1)
            .map_err(|m| self.err(Diagnostic::error(m).with_primary(span, "here")))?;
        self.written_flags[i].flag = Some(f);
        Ok(f)
    }

    /// After an assignment to `place`: the statement that marks its select field written.
    pub(crate) fn mark_written(&mut self, place: &Place, span: Span) -> Res<Option<Stmt>> {
        let f = match place {
            Place::Field(f) | Place::FieldSlice { field: f, .. } => *f,
            _ => return Ok(None),
        };
        let Some(i) = self
            .written_flags
            .iter()
            .position(|w| w.field.offset == f.offset)
        else {
            return Ok(None);
        };
        Ok(Some(Stmt::Assign {
            dst: Place::Field(self.written_flag(i, span)?),
            value: Expr::Const { value: 1, width: 1 },
        }))
    }

    /// `stmt` (a deparser resubmit, digest or mirror request) guarded by its select field's
    /// flag, when that field starts invalid; `stmt` itself otherwise.
    pub(crate) fn when_written(&mut self, which: Intrinsic, stmt: Stmt, span: Span) -> Res<Stmt> {
        let Some(i) = self.written_flags.iter().position(|w| w.which == which) else {
            return Ok(stmt);
        };
        let cond = Expr::Field(self.written_flag(i, span)?);
        // The deparser's conditions are recorded with their spans, in program order.
        self.ifs.push(span);
        Ok(Stmt::If {
            cond,
            then: vec![stmt],
            els: Vec::new(),
            stage: 0,
        })
    }
}

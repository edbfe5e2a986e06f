//! `invalidate(field)` and `is_validated(field)` (tna.p4 / t2na.p4 free functions): a PHV
//! container's own validity bit, apart from the header validity P4 keeps.
//!
//! What the hardware does (open-p4studio's tofino-model, `instr.cpp` and the chips' feature
//! headers; bf-p4c's `instruction_selection.cpp` turns `invalidate(f)` into the action ALU's
//! `invalidate` instruction on `f`'s container):
//! - Tofino 1: a container starts each pass invalid and becomes valid when the parser or an
//!   action writes it; `invalidate` clears the bit. Reads of an invalid container still return
//!   its value (the model no longer turns them into no-ops); the deparser resubmits, learns or
//!   mirrors only when the container of its select field is valid (`dprsr_select`).
//! - Tofino 2: every container starts valid and `invalidate` is an illegal instruction, so
//!   neither function has a Tofino 2 meaning; pisa rejects both there.
//!
//! pisa keeps the bit per field, not per container: the field's "written" flag of
//! `dprsr_select` (the same flag the deparser's select fields use, so `invalidate` of
//! `ig_dprsr_md.resubmit_type` cancels the resubmit as on the chip). `invalidate` clears it,
//! `is_validated` reads it, and every write of the field (an assignment, an extract or copy of
//! its header, an extern's result) sets it. Two approximations, each warned once per call:
//! a write of another field that shares the container does not validate this one, and the
//! deparser emits an invalidated field of a valid header with its value.

use pipeline::ir::{self, Expr, Place, Stmt};

use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::dprsr_select::WrittenFlag;
use crate::lower::phv::Loc;
use crate::lower::{Ctx, Lowerer, Res, V};
use crate::source::Span;

impl<'a> Lowerer<'a> {
    /// `invalidate(f)` (a statement) or `is_validated(f)` (a `bool`).
    pub(crate) fn field_validity(
        &mut self,
        name: &str,
        args: &'a [ast::Argument],
        span: Span,
        out: Option<&mut ir::Block>,
    ) -> Res<Option<V>> {
        let [arg] = args else {
            return Err(self.arg_count(name, 1, args.len(), span));
        };
        if self.target == ir::Target::Tofino2 {
            return Err(self.err(
                Diagnostic::error(format!("`{name}` has no meaning on Tofino 2"))
                    .with_primary(span, "here")
                    .with_note("Tofino 2 starts every PHV container valid and its action ALUs have no `invalidate` instruction (the open-p4studio model treats it as an error)")
                    .with_help("keep the state in a field of its own (a `bit<1>` flag), or build for `--target tofino1`"),
            ));
        }
        if !matches!(self.ctx, Ctx::Control | Ctx::Action) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`{name}` is a match-action instruction: call it in a control or an action"
                ))
                .with_primary(span, "here"),
            ));
        }
        let field = self.validity_field(name, arg)?;
        let i = match self.written_flags.iter().position(|w| w.field == field) {
            Some(i) => i,
            None => {
                self.written_flags.push(WrittenFlag {
                    which: None,
                    name: "field",
                    field,
                    flag: None,
                });
                self.written_flags.len() - 1
            }
        };
        let flag = self.written_flag(i, span)?;
        self.warn_validity_approx(name, span);
        if name == "is_validated" {
            return Ok(Some(V::Scalar(Expr::Field(flag), Ty::Bool)));
        }
        let out = self.need_stmt(out, span, name)?;
        out.push(Stmt::Assign {
            dst: Place::Field(flag),
            value: Expr::Const { value: 0, width: 1 },
        });
        Ok(None)
    }

    /// The field `arg` names (a whole scalar field: a container holds whole fields).
    fn validity_field(&mut self, name: &str, arg: &'a ast::Argument) -> Res<ir::FieldRef> {
        let v = self.expr(&arg.value, None)?;
        let field = match &v {
            V::Scalar(Expr::Field(f), _) => Some(*f),
            V::Loc(l) => match &**l {
                Loc::Field { f, .. } => Some(*f),
                _ => None,
            },
            _ => None,
        };
        match field {
            Some(f) => Ok(f),
            _ => Err(self.err(
                Diagnostic::error(format!("`{name}` takes one header or metadata field"))
                    .with_primary(arg.span, "not a field")
                    .with_help("pass the field itself, e.g. `meta.x` (not a slice, an expression or a whole header)"),
            )),
        }
    }

    /// The warning that says where pisa's per-field validity differs from the chip's.
    fn warn_validity_approx(&mut self, name: &str, span: Span) {
        self.warn(
            Diagnostic::warning(format!(
                "pisa models `{name}` per field, the chip per PHV container"
            ))
            .with_primary(span, "approximated")
            .with_note("on Tofino 1 a write of any field sharing the container validates it, and the deparser's handling of an invalidated field of a valid header is not modelled (pisa emits the field's value)")
            .with_note("exact: a write or extract of the field validates it, `invalidate` clears it, and an invalidated resubmit/digest/mirror select field cancels the request"),
        );
    }
}

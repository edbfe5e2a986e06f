//! Tofino 2's ghost thread: the seventh `Pipeline` argument, a control
//! `(in ghost_intrinsic_metadata_t gmd)` the traffic manager runs on each queue-depth update
//! (see `pipeline::exec::ghost`). It is lowered like an ingress control over a PHV of its own
//! (only `gmd` and its locals) and shares the ingress's objects: a top-level `Register` used by
//! both is one register. It has no packet, so bf-p4c's rule that a ghost control changes only
//! registers holds by construction for headers and metadata. The externs bf-p4c allows in a
//! ghost control (`arch/check_extern_invocation.cpp`, `CheckT2NAExternInvocation::
//! initPipeConstraints`, `validInGhost`: counters, meters, LPF/WRED, hashes, `Random`,
//! registers and their actions, action profiles and selectors, `MathUnit`) run there with
//! their ordinary semantics, on a pass with no packet (what a ghost-run counter counts on the
//! chip is not public: here a packet counter counts updates and a byte counter adds 0 bytes);
//! the deparser's packet emits are refused, and so is a call of a Tofino 2 stateful extra
//! `validInGhost` leaves out (`MinMaxAction*`, `LearnAction*`), with bf-p4c's message.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, Gress};

use super::phv::{Loc, PhvAlloc};
use super::{control, intrinsics, Binding, BlockInst, Ctx, Lowerer, Res, V};
use crate::ast;
use crate::check::types::Ty;
use crate::diag::Diagnostic;

/// The metadata type of the ghost control's parameter.
pub const GHOST_MD: &str = "ghost_intrinsic_metadata_t";

/// Extern types a ghost control may not use, and why (those bf-p4c's `validInGhost` leaves
/// out, `arch/check_extern_invocation.cpp`).
pub(super) fn refused_in_ghost(tname: &str) -> Option<&'static str> {
    match tname {
        "Mirror" | "Resubmit" | "Digest" | "Pktgen" => Some("there is no packet to emit"),
        _ => None,
    }
}

/// Whether a method call on an instance of `tname` is refused in a ghost control although
/// the instance itself may be declared there: the Tofino 2 stateful extras bf-p4c lists for
/// the ingress and egress MAU only (`CheckT2NAExternInvocation::initPipeConstraints`, not in
/// `validInGhost`; its check looks at calls, not declarations, though the calls include
/// `this.min16(...)` in the instance's own `apply`).
pub(super) fn call_refused_in_ghost(tname: &str) -> bool {
    ["MinMaxAction", "LearnAction"].iter().any(|p| {
        tname
            .strip_prefix(p)
            .is_some_and(|n| matches!(n, "" | "2" | "3" | "4"))
    })
}

/// The error for a call of `xname` (an instance of `tname`, a `call_refused_in_ghost` type)
/// in ghost control `control`, worded as bf-p4c's `checkPipeConstraints`.
pub(super) fn call_refusal(
    span: crate::source::Span,
    tname: &str,
    xname: &str,
    control: &str,
) -> Diagnostic {
    Diagnostic::error(format!(
        "{tname} {xname} cannot be used in the {control} control (MAU)"
    ))
    .with_primary(span, "called in the ghost control")
    .with_note(format!("bf-p4c (`CheckT2NAExternInvocation`) allows `{tname}` in the ingress and egress controls only: it is not among the externs valid in a ghost thread"))
    .with_help("use a `RegisterAction` in the ghost control, or run the min/max in the ingress control")
}

/// The error for extern `tname` used in a ghost control.
pub(super) fn refusal(span: crate::source::Span, tname: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "`{tname}` cannot be used in a ghost control: the ghost thread runs on queue updates, not packets ({why})"
    ))
    .with_primary(span, "in the ghost control")
    .with_help("a ghost control reads `ghost_intrinsic_metadata_t` and updates registers the ingress control reads")
}

/// Lowers the ghost control `b` of the pipeline being lowered.
pub(super) fn lower_ghost<'a>(l: &mut Lowerer<'a>, b: &Rc<BlockInst<'a>>) -> Res<ir::GressProgram> {
    l.gress = Gress::Ingress;
    l.phv = PhvAlloc::new();
    l.tmp = 0;
    l.ifs.clear();
    let ast::DeclKind::Control(c) = &b.decl.kind else {
        return Err(l.err(
            Diagnostic::error(format!("the ghost argument `{}` is not a control", b.name))
                .with_primary(
                    b.span,
                    "expected `control (in ghost_intrinsic_metadata_t gmd)`",
                ),
        ));
    };
    let mut frame = HashMap::new();
    let mut bindings = ir::IntrinsicBindings::default();
    for p in &c.params {
        let ty = l.resolve_type(&p.ty)?;
        let ok = matches!(&ty, Ty::Header(s) | Ty::Struct(s) if s.name == GHOST_MD)
            && p.direction == ast::Direction::In;
        if !ok {
            return Err(l.err(
                Diagnostic::error(format!(
                    "ghost control parameter `{}` is not `in {GHOST_MD}`",
                    p.name.name
                ))
                .with_primary(p.span, "the ghost thread binds nothing else")
                .with_help(format!(
                    "declare the control as `control {}(in {GHOST_MD} gmd)`",
                    b.name
                )),
            ));
        }
        let loc = l.alloc(&p.name.name, &ty, p.span)?;
        bind_fields(&loc, &mut bindings);
        frame.insert(p.name.name.clone(), Binding::In(V::Loc(loc)));
    }
    l.ctx = Ctx::Control;
    l.ghost = Some(b.name.clone());
    let body = l.with_types(b.types.clone(), |l| {
        control::lower_control_inst(l, b, frame, b.name.clone())
    });
    l.ghost = None;
    l.ifs.clear();
    let body = body?;
    let phv = std::mem::take(&mut l.phv).finish();
    Ok(ir::GressProgram {
        phv,
        prefix: ir::PrefixLayout::default(),
        intrinsics: bindings,
        parser: ir::Parser {
            name: format!("{}$parser", b.name),
            start: ir::StateId(0),
            states: vec![ir::ParserState {
                name: format!("{}$parser.start", b.name),
                body: Vec::new(),
                transition: ir::Transition::Direct(ir::NextState::Accept),
            }],
        },
        control: ir::Control {
            name: b.name.clone(),
            body,
        },
        deparser: ir::Control {
            name: format!("{}$deparser", b.name),
            body: Vec::new(),
        },
    })
}

/// Binds the fields of a `ghost_intrinsic_metadata_t` at `loc` to their intrinsics.
pub(super) fn bind_fields(loc: &Loc, bindings: &mut ir::IntrinsicBindings) {
    if let Loc::Header { fields, ty: st, .. } | Loc::Struct { fields, ty: st } = loc {
        for ((fname, _), f) in st.fields.iter().zip(fields) {
            if let (Some(i), Loc::Field { f, .. }) = (intrinsics::intrinsic(GHOST_MD, fname), &**f)
            {
                bindings.fields.push((i, *f));
            }
        }
    }
}

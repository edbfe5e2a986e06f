//! The deparser's emit list as bf-p4c builds it (`parde/extract_deparser.cpp`,
//! `ExtractDeparser::generateEmits` and `end_apply`): emits are grouped by header, and by stack
//! for the elements of a stack, in the order each group is first emitted; a later emit of a
//! header or stack already seen joins that first group instead of taking its own place.
//! The emit list is one list of the deparser, whatever statements the program writes around
//! it: a `Checksum.update()` written after the `emit` of its destination still fills the
//! emitted field (`parde/deparser_checksum_update.cpp` substitutes every update's destination
//! in the emit list), so the emits run after the deparser's other statements.

use pipeline::ir::{Expr, FieldRef, HeaderId, PhvLayout, Stmt};

use super::Lowerer;
use crate::diag::Diagnostic;
use crate::source::Span;

/// What an emit groups under: its stack (by the stack's counter, which the member stacks of a
/// stack of unions share) or the header itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    Stack(FieldRef),
    Header(HeaderId),
}

fn group(layout: &PhvLayout, h: HeaderId) -> Group {
    layout
        .stacks
        .iter()
        .find(|s| s.elements.contains(&h))
        .map_or(Group::Header(h), |s| Group::Stack(s.next_index))
}

/// Regroups the top-level emits of deparser `body` in place (their slots keep their places
/// among the other statements); warns at `span` when that changes the order written.
pub(super) fn group_emits(l: &mut Lowerer<'_>, body: &mut [Stmt], layout: &PhvLayout, span: Span) {
    let slots: Vec<usize> = (0..body.len())
        .filter(|&i| matches!(body[i], Stmt::Emit(_)))
        .collect();
    let emits: Vec<HeaderId> = slots
        .iter()
        .filter_map(|&i| match body[i] {
            Stmt::Emit(h) => Some(h),
            _ => None,
        })
        .collect();
    let mut groups: Vec<(Group, Vec<HeaderId>)> = Vec::new();
    for &h in &emits {
        let g = group(layout, h);
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(h),
            None => groups.push((g, vec![h])),
        }
    }
    let grouped: Vec<HeaderId> = groups.into_iter().flat_map(|(_, v)| v).collect();
    if grouped == emits {
        return;
    }
    let moved = grouped
        .iter()
        .zip(&emits)
        .find(|(a, b)| a != b)
        .map(|(a, _)| *a);
    for (&i, &h) in slots.iter().zip(&grouped) {
        body[i] = Stmt::Emit(h);
    }
    let name = moved
        .and_then(|h| layout.headers.get(h.index()))
        .map_or_else(|| "a header".to_string(), |i| i.name.clone());
    l.warn(
        Diagnostic::warning(format!(
            "`{name}` is emitted apart from an earlier emit of its header or stack: bf-p4c \
             emits it with that first emit"
        ))
        .with_primary(span, "this deparser")
        .with_note(
            "bf-p4c groups the emits by header (a stack's elements by stack) in the order each \
             is first emitted; a later emit of the same header or stack joins that group",
        ),
    );
}

/// Moves the emits of deparser `body` after its other statements (each kind keeps its order),
/// as bf-p4c's deparser emits what the PHV holds once the checksum units and the deparser's
/// other statements are done; warns at `span` when a checksum update written after an emit
/// moves.
pub(super) fn emits_last(l: &mut Lowerer<'_>, body: &mut Vec<Stmt>, span: Span) {
    let Some(first) = body.iter().position(|s| matches!(s, Stmt::Emit(_))) else {
        return;
    };
    let late_update = body[first..]
        .iter()
        .any(|s| !matches!(s, Stmt::Emit(_)) && has_checksum_update(std::slice::from_ref(s)));
    let (emits, mut rest): (Vec<Stmt>, Vec<Stmt>) = std::mem::take(body)
        .into_iter()
        .partition(|s| matches!(s, Stmt::Emit(_)));
    rest.extend(emits);
    *body = rest;
    if late_update {
        l.warn(
            Diagnostic::warning(
                "a `Checksum.update()` is written after an `emit`: bf-p4c fills the emitted \
                 field with the checksum regardless of the order",
            )
            .with_primary(span, "this deparser")
            .with_note(
                "the deparser's emit list is built apart from its statements; pisa computes \
                 the update before the emits, as the hardware's checksum units do",
            ),
        );
    }
}

/// Whether a statement of `body` (under `if` included) assigns a `Checksum.update()`.
fn has_checksum_update(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Assign {
            value: Expr::ChecksumUpdate { .. },
            ..
        } => true,
        Stmt::If { then, els, .. } => has_checksum_update(then) || has_checksum_update(els),
        _ => false,
    })
}

//! One control instance applied in several places is one instance: its tables, actions and
//! externs exist once (P4_16 §10.3: an instance is created once, where it is declared; bf-p4c
//! keeps a table applied in mutually exclusive places as one table). The first apply lowers
//! the body; a later apply whose arguments bind the parameters to the same storage and values
//! reuses that body, so both apply sites name the same `TableId`s. Applies with different
//! arguments would give different tables under one name, which the control plane could not
//! tell apart: they are lowered as a second copy (as before) with a warning naming both. (p4c's inliner, frontends/p4/inlining.cpp,
//! keeps one set of locals per instance too, and when the call sites differ binds the
//! directional parameters to temporaries copied in and out at each call; pisa does not yet.)

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir;

use super::{Binding, BlockInst, V};
use crate::check::env::TypeParams;
use crate::source::Span;

/// The first lowering of a control instance applied from a control body.
pub(crate) struct Applied<'a> {
    /// Held so the pointer identifying the instance stays unique while cached.
    inst: Rc<BlockInst<'a>>,
    prefix: String,
    gress: ir::Gress,
    frame: HashMap<String, Binding<'a>>,
    types: TypeParams,
    /// Where it was applied (for the error on a different second apply).
    pub span: Span,
    pub body: ir::Block,
    /// The gateway spans the body pushed (replayed so spans stay in pre-order).
    pub ifs: Vec<Span>,
}

/// What a later apply of an instance can do.
pub(crate) enum Lookup<'a, 'b> {
    /// Not applied before.
    First,
    /// Applied before with the same arguments: reuse this lowering.
    Same(&'b Applied<'a>),
    /// Applied before with other arguments (its apply span).
    Different(Span),
}

/// The applies of the current pipeline (cleared with it).
#[derive(Default)]
pub(crate) struct AppliedControls<'a>(Vec<Applied<'a>>);

impl<'a> AppliedControls<'a> {
    pub fn lookup<'b>(
        &'b self,
        inst: &Rc<BlockInst<'a>>,
        prefix: &str,
        gress: ir::Gress,
        frame: &HashMap<String, Binding<'a>>,
        types: &TypeParams,
    ) -> Lookup<'a, 'b> {
        let Some(a) = self
            .0
            .iter()
            .find(|a| Rc::ptr_eq(&a.inst, inst) && a.prefix == prefix && a.gress == gress)
        else {
            return Lookup::First;
        };
        if a.types == *types && same_frame(&a.frame, frame) {
            Lookup::Same(a)
        } else {
            Lookup::Different(a.span)
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &mut self,
        inst: &Rc<BlockInst<'a>>,
        prefix: String,
        gress: ir::Gress,
        frame: HashMap<String, Binding<'a>>,
        types: TypeParams,
        span: Span,
        body: ir::Block,
        ifs: Vec<Span>,
    ) {
        self.0.push(Applied {
            inst: inst.clone(),
            prefix,
            gress,
            frame,
            types,
            span,
            body,
            ifs,
        });
    }
}

/// True when two argument frames bind every parameter to the same thing.
fn same_frame<'a>(a: &HashMap<String, Binding<'a>>, b: &HashMap<String, Binding<'a>>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, x)| b.get(k).is_some_and(|y| same_binding(x, y)))
}

fn same_binding(a: &Binding<'_>, b: &Binding<'_>) -> bool {
    match (a, b) {
        (Binding::Val(x), Binding::Val(y)) | (Binding::In(x), Binding::In(y)) => same_value(x, y),
        (Binding::Packet { out: x }, Binding::Packet { out: y }) => x == y,
        (Binding::Extern(x), Binding::Extern(y)) => Rc::ptr_eq(x, y),
        (Binding::Action(x), Binding::Action(y)) => Rc::ptr_eq(x, y),
        (Binding::Table(x), Binding::Table(y)) => Rc::ptr_eq(x, y),
        (Binding::ValueSet(x), Binding::ValueSet(y)) => x == y,
        (Binding::Block(x), Binding::Block(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// Values compare by what they lower to: storage by its fields and headers, scalars by
/// their IR expression (both print every id they use).
fn same_value(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Loc(x), V::Loc(y)) => Rc::ptr_eq(x, y) || format!("{x:?}") == format!("{y:?}"),
        (V::Scalar(..), V::Scalar(..)) | (V::Int(_), V::Int(_)) => {
            format!("{a:?}") == format!("{b:?}")
        }
        _ => false,
    }
}

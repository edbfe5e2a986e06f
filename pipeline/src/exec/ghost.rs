//! Tofino 2's ghost thread: the ghost control (`Pipeline(..., Ghost())`) runs on each
//! queue-depth update the traffic manager sends to a pipe, with `ghost_intrinsic_metadata_t`
//! (`ping_pong`, `qlength`, `qid`, `pipe_id`) as its only input. It has no packet: it reads that
//! metadata and updates registers it shares with the ingress control.
//!
//! It runs as an ingress pass of a pipeline whose ingress is the ghost control (an empty parser
//! and deparser) and whose objects are the real pipeline's, by the same index: its passes touch
//! the same [`PipeState`] as the pipe's packets, on the engine the switch runs (native, flat or
//! tree).

use super::{run_gress, EngineKind, Engines, GressWork, PassDrop, PassInput, PassIntrinsics};
use crate::ir::{Gress, Intrinsic, Pipeline, Value};
use crate::state::PipeState;
use crate::trace::{Recorder, TraceEvent, Tracer};

/// The ghost control's pipeline and engines.
#[derive(Debug)]
pub struct GhostEngines {
    /// The pipeline with the ghost control as its ingress (and egress, never run).
    pub pl: Pipeline,
    pub eng: Engines,
}

impl GhostEngines {
    /// The ghost thread of `pl` on engine `kind`; `None` when `pl` has no ghost control.
    pub fn new(pl: &Pipeline, kind: EngineKind) -> Option<Box<GhostEngines>> {
        let g = pl.ghost.as_deref()?;
        let gpl = Pipeline {
            ingress: g.clone(),
            egress: g.clone(),
            ghost: None,
            ..pl.clone()
        };
        let eng = Engines::with_engine(&gpl, kind);
        Some(Box::new(GhostEngines { pl: gpl, eng }))
    }

    /// Reusable buffers for its passes.
    pub fn work(&self) -> GressWork {
        GressWork::new(&self.pl.ingress)
    }
}

/// One queue-depth update, as `ghost_intrinsic_metadata_t` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GhostUpdate {
    pub ping_pong: bool,
    /// Depth in 176-byte cells, Tofino 2's (the field is 18 bits: larger depths saturate).
    pub qlength: u32,
    pub qid: u16,
    pub pipe_id: u16,
}

/// Largest `qlength` the 18-bit field holds.
pub const QLENGTH_MAX: u32 = (1 << 18) - 1;

/// Runs the ghost control on `update` against `state` (the pipe's state) at `now`; a program
/// error (e.g. one register accessed twice) comes back as the pass's drop.
pub fn run_ghost<T: Tracer>(
    g: &GhostEngines,
    state: &mut PipeState,
    work: &mut GressWork,
    update: &GhostUpdate,
    now: u64,
    tr: &mut T,
) -> Option<PassDrop> {
    let intrinsics = [
        (Intrinsic::GhostPingPong, update.ping_pong as Value),
        (
            Intrinsic::GhostQlength,
            update.qlength.min(QLENGTH_MAX) as Value,
        ),
        (Intrinsic::GhostQid, update.qid as Value),
        (Intrinsic::GhostPipeId, update.pipe_id as Value),
    ];
    let inp = PassInput {
        intrinsics: PassIntrinsics::Listed(&intrinsics),
        extra: &[],
        packet: &[],
        now,
    };
    if !T::ENABLED {
        return pass(g, state, work, &inp, tr);
    }
    // Traced: the control's events only (not those of the empty parser and deparser).
    let mut rec = Recorder::default();
    let drop = pass(g, state, work, &inp, &mut rec);
    for e in rec.events {
        if !matches!(
            e,
            TraceEvent::ParserState { .. } | TraceEvent::ParserAccept | TraceEvent::Deparsed { .. }
        ) {
            tr.record(|| e);
        }
    }
    drop
}

/// One pass of the ghost control on `tr`.
fn pass<T: Tracer>(
    g: &GhostEngines,
    state: &mut PipeState,
    work: &mut GressWork,
    inp: &PassInput<'_>,
    tr: &mut T,
) -> Option<PassDrop> {
    run_gress(&g.pl, &g.eng, Gress::Ingress, state, work, inp, tr).drop
}

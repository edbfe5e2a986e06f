//! A copy of everything the control plane can change on a switch — every pipe's tables,
//! registers, counters, meters, value sets and filters, the PRE and the mirror sessions — to
//! put back when a batch of writes must apply whole or not at all (P4Runtime's
//! `ROLLBACK_ON_ERROR` and `DATAPLANE_ATOMIC`). Taken and restored between two packets, so
//! the state it puts back is exactly the state before the batch. The cost is a copy of the
//! tables (memory and time in proportion to their entries), paid only by atomic batches.
//! The traffic manager's part alone carries over to a switch running another program.

use crate::state::PipeState;
use crate::switch::Switch;
use crate::tm::mirror::MirrorSessions;
use crate::tm::pre::Pre;

/// What [`Switch::control_state`] copied.
#[derive(Debug, Clone)]
pub struct ControlState {
    pipes: Vec<PipeState>,
    pre: Pre,
    mirror: MirrorSessions,
}

impl Switch {
    /// A copy of the control-plane state.
    pub fn control_state(&self) -> ControlState {
        ControlState {
            pipes: self.pipes.clone(),
            pre: self.pre.clone(),
            mirror: self.mirror.clone(),
        }
    }

    /// Puts back a copy taken from this switch by [`Switch::control_state`].
    pub fn restore_control_state(&mut self, state: ControlState) {
        self.pipes = state.pipes;
        self.pre = state.pre;
        self.mirror = state.mirror;
    }
}

impl Switch {
    /// Takes the traffic manager's control state of `from` — the PRE's multicast groups,
    /// nodes, pruning and LAG tables, and the mirror sessions — which does not depend on the
    /// program (P4Runtime's RECONCILE_AND_COMMIT keeps it when the program changes). Both
    /// switches run on the same target.
    pub fn take_tm_state(&mut self, from: &Switch) {
        self.pre = from.pre.clone();
        self.mirror = from.mirror.clone();
    }
}

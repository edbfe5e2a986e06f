//! The traffic manager's queue-depth updates to Tofino 2's ghost threads.
//!
//! The TM reports a queue's depth to the ghost thread of an ingress pipe when it changes; the
//! ghost control ([`crate::exec::ghost`]) runs with `ghost_intrinsic_metadata_t` and updates
//! registers the ingress control reads. pisa's model of what is not public:
//! - which pipes hear a queue: the ghost thread of the queue's own pipe (`pipe_id` = that pipe),
//!   so that each pipe's state stays with the thread of its pipe in split mode;
//! - when: a rise at each enqueue (the depth after the packet joined), and the drain since the
//!   last report just before the pipe's next ingress pass (so every packet sees the depth at its
//!   arrival; a queue that drains while no packet arrives is reported at the next one);
//! - `qid`: the port's number inside its pipe times 16 plus its queue (pisa has queue 0 only),
//!   which is "port group (4 bits) ++ queue in the group (7 bits)" with 8 ports of 16 queues a
//!   group;
//! - `qlength`: 176-byte cells (Tofino 2's, bf-drivers `tm_tof2.h` `BF_TM_TOF2_CELL_SIZE`), the unit
//!   of `enq_qdepth`;
//! - `ping_pong`: each update runs with the pipe's current bit, which then flips; ingress
//!   packets see the flipped bit. By bf-p4c's convention (a register shared by ingress and ghost
//!   is duplicated; ghost uses copy 0 when the bit is 1, ingress when it is 0) a program that
//!   selects copies by the bit reads the copy the latest update wrote. pisa itself keeps one
//!   copy of each register: its ingress and ghost accesses never contend for a RAM port.

use super::{port_pipe, DropReason, Shared, Switch};
use crate::exec::ghost::{run_ghost, GhostUpdate};
use crate::ir::Gress;
use crate::trace::{TraceEvent, Tracer};

/// The `qid` the ghost thread sees for (the single queue of) device port `port`.
pub fn ghost_qid(port: u16) -> u16 {
    (port & 0x7f) << 4
}

impl Switch {
    /// `port`'s queue changed at `now` (a packet joined): report its depth if it differs.
    pub(crate) fn ghost_queue<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        port: u16,
        now: u64,
        tr: &mut T,
    ) {
        let depth = self.queues[port as usize].depth_cells_at(now);
        self.ghost_report(sh, port, depth, now, tr);
    }

    /// Before an ingress pass of `pipe` at `now`: report the queues of `pipe` that drained
    /// since their last report.
    pub(crate) fn ghost_drain<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        pipe: u16,
        now: u64,
        tr: &mut T,
    ) {
        let mut i = 0;
        while i < self.ghost.dirty.len() {
            let port = self.ghost.dirty[i];
            i += 1;
            if port_pipe(port) != pipe {
                continue;
            }
            let depth = self.queues[port as usize].depth_cells_at(now);
            if self.ghost_report(sh, port, depth, now, tr) {
                // Reporting 0 took the port off the list (one `swap_remove` at `i - 1`).
                i -= 1;
            }
        }
    }

    /// Runs the ghost thread of `port`'s pipe with the port's depth `depth` when it differs
    /// from the last one reported. True when the port left the list of queues to watch.
    fn ghost_report<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        port: u16,
        depth: u32,
        now: u64,
        tr: &mut T,
    ) -> bool {
        let pipe = port_pipe(port);
        let Some(state) = self.pipes.get_mut(pipe as usize) else {
            return false;
        };
        let pli = state.pipeline;
        let Some(g) = sh.engines[pli].ghost.as_deref() else {
            return false;
        };
        let last = &mut self.ghost.reported[port as usize];
        if *last == depth {
            return false;
        }
        let was = std::mem::replace(last, depth);
        let mut left = false;
        if was == 0 {
            self.ghost.dirty.push(port);
        } else if depth == 0 {
            if let Some(k) = self.ghost.dirty.iter().position(|p| *p == port) {
                self.ghost.dirty.swap_remove(k);
                left = true;
            }
        }
        let bit = &mut self.ghost.ping_pong[pipe as usize];
        let update = GhostUpdate {
            ping_pong: *bit,
            qlength: depth,
            qid: ghost_qid(port),
            pipe_id: pipe,
        };
        *bit = !*bit;
        tr.record(|| TraceEvent::Ghost {
            pipe,
            port,
            qid: update.qid,
            qlength: update.qlength,
            ping_pong: update.ping_pong,
        });
        let Some(work) = self.work_gh[pli].as_mut() else {
            return left;
        };
        let drop = run_ghost(g, state, work, &update, now, tr);
        if let Some(d) = drop {
            let detail = format!("ghost thread: {d:?}");
            self.record_drop(
                tr,
                now,
                port,
                Gress::Ingress,
                DropReason::ProgramError,
                Some(detail),
            );
        }
        left
    }
}

/// Per-switch ghost-thread bookkeeping.
#[derive(Debug, Clone)]
pub(crate) struct GhostState {
    /// Last depth reported per device port (cells).
    pub reported: Vec<u32>,
    /// Ports whose last report was not 0 (their drain is reported later).
    pub dirty: Vec<u16>,
    /// Each pipe's ping-pong bit.
    pub ping_pong: Vec<bool>,
}

impl GhostState {
    pub fn new(pipes: usize) -> GhostState {
        GhostState {
            reported: vec![0; super::NUM_DEVPORTS],
            dirty: Vec::new(),
            ping_pong: vec![false; pipes],
        }
    }
}

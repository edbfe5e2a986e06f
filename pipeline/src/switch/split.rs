//! The switch cut in two at the traffic manager, for a runtime with one thread per pipe.
//!
//! [`Switch::ingress_to_tm`] runs the ingress of the frame's pipe (parser, MAU, deparser,
//! resubmit, ingress mirroring, PRE replication, copy to CPU) and hands out one [`TmCopy`] per
//! copy queued for an egress port, without running egress. [`Switch::tm_to_egress`] runs what
//! the TM does on the egress side — the port's queue (`enq_qdepth`, `deq_timedelta`, ECN
//! marking, tail drop) — and then the egress of the port's pipe, egress mirroring and output.
//! Recirculation (a loopback port) re-enters ingress right there: a loopback port is on the
//! pipe whose egress just ran, so it stays on that pipe's thread. Mirror copies and any copies
//! made by a recirculated pass come out as more [`TmCopy`]s.
//!
//! Run on one `Switch` with every copy fed back to `tm_to_egress` in order, this gives the same
//! forwarding as [`Switch::process`]: both run the same ingress, TM and egress code, and only
//! the point where a copy is enqueued differs (now, or when its pipe's thread gets to it).
//!
//! State ownership: ingress touches only the state of the ingress port's pipe (and the PRE and
//! mirror tables, read-only), egress only the state and queues of the egress port's pipe. So a
//! runtime may hold one `Switch` per pipe thread, configured identically, and use pipe `j` only
//! in thread `j`'s instance.

use super::{port_pipe, EgressCopy, InFrame, OutFrame, Shared, Switch};
use crate::trace::NoTrace;

/// A copy of a packet the traffic manager queued for an egress port: the bytes the ingress
/// deparser produced (or a mirror copy's), the egress port, replication id, mirror header and
/// the time it was enqueued. Its buffer is recycled by whichever switch runs its egress.
#[derive(Debug)]
pub struct TmCopy {
    pub(crate) copy: EgressCopy,
    pub(crate) buf: Vec<u8>,
    pub(crate) passes: u8,
    pub(crate) now: u64,
}

impl TmCopy {
    /// The egress device port.
    pub fn port(&self) -> u16 {
        self.copy.port
    }

    /// The pipe whose egress runs this copy.
    pub fn pipe(&self) -> u16 {
        port_pipe(self.copy.port)
    }

    /// The replication id (`egress_rid`); 0 for unicast copies.
    pub fn rid(&self) -> u16 {
        self.copy.rid
    }

    /// The packet bytes as queued.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// When it was enqueued (the ingress time of the packet), in nanoseconds.
    pub fn ts(&self) -> u64 {
        self.now
    }

    /// The buffer, for reuse once the copy is not wanted.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }
}

impl Switch {
    /// Runs the ingress of the pipe `frame.port` belongs to, up to the traffic manager's
    /// enqueue. Copies bound for egress (unicast, multicast replicas, copy to CPU, ingress
    /// mirrors), each tagged with its egress port and RID, are appended to `copies`; nothing is
    /// queued or egressed here. Frames only leave after an egress pass, so `out` is not called
    /// on this path today; it takes the same sink as [`Switch::tm_to_egress`] so that a caller
    /// can treat both alike.
    pub fn ingress_to_tm(
        &mut self,
        frame: InFrame<'_>,
        out: &mut impl FnMut(OutFrame),
        copies: &mut Vec<TmCopy>,
    ) {
        let (prog, engines) = (self.prog.clone(), self.engines.clone());
        let sh = Shared {
            prog: &prog,
            engines: &engines,
        };
        self.split = true;
        self.port_ingress(&sh, frame, out, &mut NoTrace);
        self.drain_pending(&sh, out, &mut NoTrace);
        self.split = false;
        copies.append(&mut self.tm_out);
    }

    /// Queues `copy` on its egress port and runs the egress of that port's pipe; frames that
    /// leave go to `out`. New copies (egress mirrors, copies made by a recirculated pass) are
    /// appended to `copies`. The copy's buffer is kept for reuse.
    pub fn tm_to_egress(
        &mut self,
        copy: TmCopy,
        out: &mut impl FnMut(OutFrame),
        copies: &mut Vec<TmCopy>,
    ) {
        let (prog, engines) = (self.prog.clone(), self.engines.clone());
        let sh = Shared {
            prog: &prog,
            engines: &engines,
        };
        self.last_ts = self.last_ts.max(copy.now);
        self.split = true;
        let mut buf = copy.buf;
        let bytes = super::tm_path::CopyBytes::Last(&mut buf);
        self.egress(
            &sh,
            &copy.copy,
            bytes,
            copy.passes,
            copy.now,
            out,
            &mut NoTrace,
        );
        self.give(buf);
        self.drain_pending(&sh, out, &mut NoTrace);
        self.split = false;
        copies.append(&mut self.tm_out);
    }

    /// Drops a copy nobody will egress (its pipe has no thread, a channel was full), keeping
    /// the buffer for reuse. The caller counts it.
    pub fn discard_copy(&mut self, copy: TmCopy) {
        self.give(copy.buf);
    }
}

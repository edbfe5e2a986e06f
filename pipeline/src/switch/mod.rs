//! The switch: a lowered program instantiated on hardware pipes, with the traffic manager
//! between ingress and egress.
//!
//! A packet entering on device port `p` runs through the ingress of pipe `p >> 7`; the traffic
//! manager ([`tm_path`]) then resubmits it, mirrors it, replicates it (PRE), queues each copy on
//! its egress port and runs the egress of that port's pipe; the egress deparser's output leaves
//! on the port or, for loopback ports, recirculates into ingress. Every drop is recorded with its
//! reason. Everything is deterministic: same inputs, tables and seed → same outputs.
//!
//! [`Switch::process`] runs the whole way in one call. [`split`] cuts the same way in two at the
//! traffic manager's enqueue, for a runtime with one thread per pipe: ingress (with resubmit,
//! mirroring and PRE replication) hands out [`TmCopy`]s tagged with their egress port, and the
//! thread of that port's pipe runs queueing and egress. Both use the same ingress, TM and
//! egress code below; the only branch is where a copy is enqueued (`enqueue` in [`tm_path`]).

mod config;
mod drop_causes;
mod drops;
mod ghost;
mod split;
mod tm_path;

use std::collections::VecDeque;
use std::sync::Arc;

pub use config::{
    phase0_bytes, PortConfig, SwitchConfig, SwitchError, DEFAULT_CPU_PORT, DEFAULT_QUEUE,
    MIN_FRAME, PORT_MD_MAX,
};
pub use drop_causes::drop_ctl_writers;
pub use drops::{DropReason, DropRecord, SwitchStats};
pub use ghost::ghost_qid;
pub use split::TmCopy;
pub(crate) use tm_path::FCS_LEN;

use crate::exec::{Engines, GressWork};
use crate::ir::{Gress, Program, Value};
use crate::state::PipeState;
use crate::tm::mirror::MirrorSessions;
use crate::tm::pre::{Pre, Replica};
use crate::tm::queue::EgressQueue;
use crate::trace::{NoTrace, Recorder, Trace, Tracer};

/// Device-port numbering lives in [`crate::devport`].
pub use crate::devport::{pipe_of as port_pipe, NUM_DEVPORTS};

/// A frame arriving on a port. `ts` is the arrival time in nanoseconds (virtual or wall).
#[derive(Debug, Clone, Copy)]
pub struct InFrame<'a> {
    pub port: u16,
    pub bytes: &'a [u8],
    pub ts: u64,
}

/// A frame leaving on a port. `ts` is its departure time from the port's queue.
/// Hand the buffer back with [`Switch::recycle`] to keep the packet path allocation-free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutFrame {
    pub port: u16,
    pub bytes: Vec<u8>,
    pub ts: u64,
}

/// A digest packed by an ingress deparser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DigestMessage {
    pub pipe: u16,
    /// `Pipeline::digests` index and name.
    pub digest: u32,
    pub name: String,
    pub values: Vec<Value>,
    pub ts: u64,
}

/// Longest mirror header carried with a copy (Tofino: 32 B).
const MIRROR_HDR_MAX: usize = 32;

/// A deferred pass: a recirculated packet or an egress-to-egress mirror copy.
#[derive(Debug)]
pub(crate) enum Pending {
    Ingress {
        port: u16,
        buf: Vec<u8>,
        passes: u8,
        now: u64,
    },
    Egress {
        copy: EgressCopy,
        buf: Vec<u8>,
        passes: u8,
        now: u64,
    },
}

/// What egress needs to know about one copy besides its bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EgressCopy {
    pub port: u16,
    pub rid: u16,
    pub rid_first: bool,
    /// `eg_intr_md.pkt_length`: as on Tofino, the length the packet had when it entered
    /// ingress, with its 4-byte FCS (pisa's frames carry none), plus the mirror header for
    /// a mirror copy; headers ingress added or removed (bridged metadata) are not counted.
    pub pkt_length: u16,
    /// `ig_intr_tm_md.qid` of the copy (0 for mirror and copy-to-CPU copies); the egress
    /// port's map turns it into `eg_intr_md.egress_qid` ([`crate::tm::qid_map`]).
    pub qid: u8,
    pub mirror_len: u8,
    pub mirror_hdr: [u8; MIRROR_HDR_MAX],
    /// Skip the egress pipeline (`bypass_egress`).
    pub bypass: bool,
    /// Trace label.
    pub kind: &'static str,
}

/// The immutable parts of a switch, borrowed once per call on the packet path (so no
/// reference count is touched per packet).
pub(crate) struct Shared<'a> {
    pub prog: &'a Program,
    pub engines: &'a [Engines],
}

/// The whole switch.
pub struct Switch {
    pub(crate) prog: Arc<Program>,
    pub(crate) cfg: SwitchConfig,
    /// `cfg`'s loopback ports as a bitmap (the packet path's test; see [`config::LoopbackPorts`]).
    pub(crate) loopback: config::LoopbackPorts,
    pub(crate) engines: Arc<[Engines]>,
    pub(crate) pipes: Vec<PipeState>,
    pub(crate) work_ig: Vec<GressWork>,
    pub(crate) work_eg: Vec<GressWork>,
    /// Per pipeline with a ghost control: its passes' buffers.
    pub(crate) work_gh: Vec<Option<GressWork>>,
    /// Queue-depth reports to the ghost threads ([`ghost`]).
    pub(crate) ghost: ghost::GhostState,
    pub(crate) pre: Pre,
    pub(crate) mirror: MirrorSessions,
    pub(crate) queues: Vec<EgressQueue>,
    /// Per device port: its queues and qid → queue map (`eg_intr_md.egress_qid`).
    pub(crate) port_queues: Vec<crate::tm::qid_map::PortQueues>,
    /// Port metadata (the phase-0 word after the ingress intrinsic metadata) per device port;
    /// its first `port_md_len` bytes are the chip's ([`phase0_bytes`]).
    pub(crate) port_md: Vec<[u8; PORT_MD_MAX]>,
    pub(crate) port_md_len: usize,
    pub(crate) pending: VecDeque<Pending>,
    pub(crate) pool: Vec<Vec<u8>>,
    pub(crate) replicas: Vec<Replica>,
    pub(crate) stats: SwitchStats,
    pub(crate) drops: VecDeque<DropRecord>,
    pub(crate) digests: VecDeque<DigestMessage>,
    /// Tofino 2 deparser triggers for the packet generator, oldest first.
    pub(crate) pktgen_triggers: VecDeque<crate::pktgen::DeparserTrigger>,
    /// Time of the latest frame processed (the control plane's notion of "now" for meters).
    pub(crate) last_ts: u64,
    /// Split mode ([`split`]): copies the TM queued are collected in `tm_out` instead of
    /// running egress right away.
    pub(crate) split: bool,
    pub(crate) tm_out: Vec<TmCopy>,
}

impl std::fmt::Debug for Switch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Switch")
            .field("program", &self.prog.name)
            .field("pipes", &self.pipes.len())
            .finish_non_exhaustive()
    }
}

impl Switch {
    /// Build a switch running `prog` with `cfg`.
    pub fn new(prog: Arc<Program>, cfg: SwitchConfig) -> Result<Switch, SwitchError> {
        Switch::assemble(prog, cfg, None)
    }

    /// A switch running `other`'s program with `cfg`, sharing `other`'s lowered and compiled
    /// engines when `cfg` asks for the same engine (no second code generation: labs build
    /// hundreds of switches of one program).
    pub fn new_like(other: &Switch, cfg: SwitchConfig) -> Result<Switch, SwitchError> {
        let engines = (cfg.engine == other.cfg.engine).then(|| other.engines.clone());
        Switch::assemble(other.prog.clone(), cfg, engines)
    }

    /// Builds a switch; `engines`, when given, were built from `prog` itself.
    fn assemble(
        prog: Arc<Program>,
        cfg: SwitchConfig,
        engines: Option<Arc<[Engines]>>,
    ) -> Result<Switch, SwitchError> {
        cfg.validate(&prog)?;
        crate::ir_verify::verify(&prog)?;
        let engines: Arc<[Engines]> = engines.unwrap_or_else(|| {
            prog.pipelines
                .iter()
                .map(|pl| Engines::with_engine(pl, cfg.engine))
                .collect()
        });
        let mut pipes = Vec::with_capacity(cfg.pipes as usize);
        for p in 0..cfg.pipes as usize {
            let pipeline = prog.pipe_map.get(p).copied().unwrap_or(0);
            // Each pipe gets its own random stream, derived from the switch seed.
            let seed = cfg.seed ^ (p as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let st =
                PipeState::new(&prog, pipeline, seed).map_err(|e| SwitchError::ConstEntry {
                    pipe: p as u16,
                    error: e,
                })?;
            pipes.push(st);
        }
        let work_ig = prog
            .pipelines
            .iter()
            .map(|pl| GressWork::new(&pl.ingress))
            .collect();
        let work_eg = prog
            .pipelines
            .iter()
            .map(|pl| GressWork::new(&pl.egress))
            .collect();
        let work_gh = engines
            .iter()
            .map(|e| e.ghost.as_ref().map(|g| g.work()))
            .collect();
        let mut queues = Vec::with_capacity(NUM_DEVPORTS);
        for p in 0..NUM_DEVPORTS as u16 {
            let mut q = cfg.queue_config(p);
            // Every port marks with its own deterministic stream.
            q.seed ^= cfg.seed.rotate_left(17) ^ u64::from(p).wrapping_mul(0xff51_afd7_ed55_8ccd);
            queues.push(
                EgressQueue::for_target(q, prog.target)
                    .map_err(|error| SwitchError::Queue { port: p, error })?,
            );
        }
        let mirror = MirrorSessions::for_target(prog.target);
        let port_queues =
            vec![crate::tm::qid_map::PortQueues::default_for(prog.target); NUM_DEVPORTS];
        let mut port_md = vec![[0u8; PORT_MD_MAX]; NUM_DEVPORTS];
        let port_md_len = phase0_bytes(prog.target);
        for (port, pc) in &cfg.ports {
            if let Some(md) = pc.port_metadata {
                port_md[*port as usize][..md.len()].copy_from_slice(&md);
            }
        }
        Ok(Switch {
            loopback: cfg.loopback_ports(prog.target),
            prog,
            cfg,
            engines,
            pipes,
            work_ig,
            work_eg,
            work_gh,
            ghost: ghost::GhostState::new(crate::devport::MAX_PIPES as usize),
            pre: Pre::new(),
            mirror,
            queues,
            port_queues,
            port_md,
            port_md_len,
            pending: VecDeque::with_capacity(64),
            pool: Vec::with_capacity(256),
            replicas: Vec::with_capacity(64),
            stats: SwitchStats::default(),
            drops: VecDeque::with_capacity(1024),
            digests: VecDeque::with_capacity(64),
            pktgen_triggers: VecDeque::new(),
            last_ts: 0,
            split: false,
            tm_out: Vec::with_capacity(64),
        })
    }

    /// The program this switch runs.
    pub fn program(&self) -> &Arc<Program> {
        &self.prog
    }

    /// The configuration it was built with.
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Makes `port` a front-panel port from now on (a link or agent was attached to it), also
    /// where the target loops it back by default ([`SwitchConfig::set_front_panel`]).
    pub fn set_front_panel(&mut self, port: u16) {
        self.cfg.set_front_panel(port);
        let target = self.prog.target;
        self.loopback.set(port, self.cfg.is_loopback(target, port));
    }

    /// Pads frames shorter than `bytes` from now on, on arrival and on transmission (0: never;
    /// see [`SwitchConfig::min_frame`]).
    pub fn set_min_frame(&mut self, bytes: usize) {
        self.cfg.min_frame = bytes;
    }

    /// The engine passes run on: the configured one, or the flat engine where
    /// native code could not be generated (see [`Switch::engine_error`]).
    pub fn engine(&self) -> crate::exec::EngineKind {
        self.engines
            .iter()
            .map(Engines::engine)
            .min_by_key(|e| *e == crate::exec::EngineKind::Native)
            .unwrap_or(self.cfg.engine)
    }

    /// Ops and expression nodes of the program the native code leaves to the flat engine (`None` when no pipeline
    /// runs native code): a static measure of the generator's coverage.
    pub fn native_fallbacks(&self) -> Option<usize> {
        #[cfg(feature = "native")]
        {
            let n: Vec<usize> = self
                .engines
                .iter()
                .filter_map(|e| e.native.as_ref().map(|n| n.fallbacks))
                .collect();
            (!n.is_empty()).then(|| n.iter().sum())
        }
        #[cfg(not(feature = "native"))]
        None
    }

    /// The nodes [`Self::native_fallbacks`] counts, by kind with their counts over every
    /// pipeline running native code (`exec::native::op_label` / `expr_label` name them).
    pub fn native_fallback_kinds(&self) -> Vec<(String, usize)> {
        let mut all = std::collections::BTreeMap::<String, usize>::new();
        #[cfg(feature = "native")]
        for n in self.engines.iter().filter_map(|e| e.native.as_ref()) {
            for (k, c) in &n.fallback_kinds {
                *all.entry(k.clone()).or_default() += c;
            }
        }
        let mut v: Vec<(String, usize)> = all.into_iter().collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// Why a pipeline does not run the configured native engine, if one does not.
    pub fn engine_error(&self) -> Option<&str> {
        self.engines.iter().find_map(|e| {
            let ghost = e.ghost.as_ref().and_then(|g| g.eng.native_error.as_deref());
            e.native_error.as_deref().or(ghost)
        })
    }

    /// Each pipe's state (tables, registers, counters, meters), read-only: for inspection and
    /// for comparing switches that ran the same traffic.
    pub fn pipe_states(&self) -> &[PipeState] {
        &self.pipes
    }

    /// Number of hardware pipes.
    pub fn num_pipes(&self) -> u16 {
        self.pipes.len() as u16
    }

    /// Run one frame through the switch; every frame that leaves is passed to `out`.
    pub fn process(&mut self, frame: InFrame<'_>, out: &mut impl FnMut(OutFrame)) {
        self.process_traced(frame, out, &mut NoTrace);
    }

    /// Run a batch of frames in order, appending the frames that leave to `out`.
    pub fn process_batch(&mut self, frames: &[InFrame<'_>], out: &mut Vec<OutFrame>) {
        let (prog, engines) = (self.prog.clone(), self.engines.clone());
        let sh = Shared {
            prog: &prog,
            engines: &engines,
        };
        for f in frames {
            self.process_one(&sh, *f, &mut |o| out.push(o), &mut NoTrace);
        }
    }

    /// The engine traced passes ([`Switch::trace`]) run on: the one untraced passes run on
    /// (for native code, its traced variant, generated now if not yet), unless the traced
    /// variant could not be generated (then the flat engine, with the same events).
    pub fn traced_engine(&self) -> crate::exec::EngineKind {
        let prog = &self.prog;
        self.engines
            .iter()
            .zip(&prog.pipelines)
            .map(|(e, pl)| e.traced_engine(pl))
            .min_by_key(|e| *e == crate::exec::EngineKind::Native)
            .unwrap_or(self.cfg.engine)
    }

    /// Run one frame and record everything that happens to it (and its copies), on the engine
    /// that forwards it ([`Switch::traced_engine`]).
    pub fn trace(&mut self, frame: InFrame<'_>) -> (Vec<OutFrame>, Trace) {
        let mut rec = Recorder::new();
        let mut outs = Vec::new();
        self.process_traced(frame, &mut |o| outs.push(o), &mut rec);
        (outs, rec.take())
    }

    /// Give a transmitted frame's buffer back for reuse.
    pub fn recycle(&mut self, bytes: Vec<u8>) {
        if self.pool.len() < 4096 {
            self.pool.push(bytes);
        }
    }

    /// [`Switch::process`] with an explicit tracer.
    pub fn process_traced<T: Tracer>(
        &mut self,
        frame: InFrame<'_>,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        let (prog, engines) = (self.prog.clone(), self.engines.clone());
        let sh = Shared {
            prog: &prog,
            engines: &engines,
        };
        self.process_one(&sh, frame, out, tr);
    }

    fn process_one<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        frame: InFrame<'_>,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        self.port_ingress(sh, frame, out, tr);
        self.drain_pending(sh, out, tr);
    }

    /// A frame arriving on a port: counted, padded to the minimum frame as a wire would have
    /// it, then the ingress pass.
    pub(crate) fn port_ingress<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        frame: InFrame<'_>,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        self.last_ts = self.last_ts.max(frame.ts);
        let short = frame.bytes.len() < self.cfg.min_frame;
        let padded = short.then(|| {
            let mut b = self.take_buf();
            b.extend_from_slice(frame.bytes);
            b.resize(self.cfg.min_frame, 0);
            b
        });
        let bytes = padded.as_deref().unwrap_or(frame.bytes);
        self.stats.rx_packets += 1;
        self.stats.rx_bytes += bytes.len() as u64;
        self.ingress(sh, frame.port, bytes, None, 0, frame.ts, "packet", out, tr);
        if let Some(b) = padded {
            self.give(b);
        }
    }

    /// Runs the deferred passes (recirculations, egress mirror copies) until none is left. In
    /// split mode an egress copy is handed out as a [`TmCopy`] instead.
    pub(crate) fn drain_pending<T: Tracer>(
        &mut self,
        sh: &Shared<'_>,
        out: &mut impl FnMut(OutFrame),
        tr: &mut T,
    ) {
        while let Some(p) = self.pending.pop_front() {
            match p {
                Pending::Ingress {
                    port,
                    buf,
                    passes,
                    now,
                } => {
                    self.ingress(sh, port, &buf, None, passes, now, "recirculate", out, tr);
                    self.give(buf);
                }
                Pending::Egress {
                    copy,
                    buf,
                    passes,
                    now,
                } => {
                    if self.split {
                        self.tm_out.push(TmCopy {
                            copy,
                            buf,
                            passes,
                            now,
                        });
                    } else {
                        let mut buf = buf;
                        let bytes = tm_path::CopyBytes::Last(&mut buf);
                        self.egress(sh, &copy, bytes, passes, now, out, tr);
                        self.give(buf);
                    }
                }
            }
        }
    }

    pub(crate) fn take_buf(&mut self) -> Vec<u8> {
        let mut b = self
            .pool
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(crate::exec::gress::FRAME_CAPACITY));
        b.clear();
        b
    }

    pub(crate) fn give(&mut self, b: Vec<u8>) {
        if self.pool.len() < 4096 {
            self.pool.push(b);
        }
    }

    /// Statistics: packets in/out and drops by reason.
    pub fn stats(&self) -> &SwitchStats {
        &self.stats
    }

    /// Take the recorded drops (oldest first). At most [`SwitchConfig::drop_log`] are kept.
    pub fn drain_drops(&mut self) -> Vec<DropRecord> {
        self.drops.drain(..).collect()
    }

    /// Execution anomalies (index wraps, digest overflow) summed over both gresses of every
    /// pipeline.
    pub fn exec_stats(&self) -> crate::exec::ExecStats {
        let mut s = crate::exec::ExecStats::default();
        for w in self.work_ig.iter().chain(self.work_eg.iter()) {
            s.index_wraps += w.stats.index_wraps;
            s.digest_overflow += w.stats.digest_overflow;
        }
        s
    }

    pub(crate) fn record_drop<T: Tracer>(
        &mut self,
        tr: &mut T,
        ts: u64,
        port: u16,
        gress: Gress,
        reason: DropReason,
        detail: Option<String>,
    ) {
        self.stats.drops[reason as usize] += 1;
        tr.record(|| crate::trace::TraceEvent::Drop {
            gress,
            reason: match &detail {
                Some(d) => format!("{reason}: {d}"),
                None => reason.to_string(),
            },
        });
        if self.cfg.drop_log == 0 {
            return;
        }
        if self.drops.len() >= self.cfg.drop_log {
            self.drops.pop_front();
            self.stats.drop_log_overflow += 1;
        }
        self.drops.push_back(DropRecord {
            ts,
            port,
            gress,
            reason,
            detail,
        });
    }
}

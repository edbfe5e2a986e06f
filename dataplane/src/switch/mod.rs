//! pisa's switch on the runtime, in both threading modes: the one [`Pipeline`] implementation
//! of a switch ([`SwitchPipeline`], the whole switch on one thread), one pipe's stage
//! ([`PipeSwitch`]), the runtime in either mode ([`SwitchRuntime`]) and its control handle
//! ([`SwitchHandle`], [`Part`]: writes go to every instance, reads are answered per pipe by its
//! owner), thread pinning ([`pin_threads`]) and what the running switch reports ([`report`],
//! [`render_metrics`]). `pisa run`, every lab and the tests run switches through this module.

mod handle;
mod report;

pub use handle::{merge_cells, ownership, owns_pipe, MeterCell, Part, SwitchHandle, ALL_PIPES};
pub use report::{render_metrics, report};

use std::sync::Arc;

use pipeline::switch::{InFrame, Switch, TmCopy};

use crate::runtime::{
    PipeRuntime, PipeStage, Pipeline, PortSetup, Runtime, RuntimeConfig, RuntimeError,
    RuntimeStats, ThreadHook, ThreadRole,
};
use crate::{Clock, Nanos};

/// The switch as the runtime's pipeline.
pub struct SwitchPipeline {
    pub sw: Switch,
}

impl Pipeline for SwitchPipeline {
    fn process(&mut self, port: u16, data: &[u8], ts: Nanos, out: &mut dyn FnMut(u16, Vec<u8>)) {
        self.sw.process(
            InFrame {
                port,
                bytes: data,
                ts: ts.0,
            },
            &mut |o| out(o.port, o.bytes),
        );
    }

    /// Received buffers go to the switch's pool, which its output frames are built in: with
    /// the tx threads handing sent buffers back to the rx threads, steady forwarding does not
    /// allocate.
    fn recycle(&mut self, buf: Vec<u8>) {
        self.sw.recycle(buf);
    }
}

/// One pipe's switch instance as a pipe thread's stage (per-pipe mode): ingress up to the TM,
/// then queue + egress of this pipe's ports.
pub struct PipeSwitch {
    /// The pipes this instance answers control reads for (bit `p` for pipe `p`).
    pub owns: u8,
    pub sw: Switch,
}

impl PipeStage for PipeSwitch {
    type Copy = TmCopy;

    fn copy_port(copy: &TmCopy) -> u16 {
        copy.port()
    }

    fn ingress(
        &mut self,
        port: u16,
        data: &[u8],
        ts: Nanos,
        out: &mut dyn FnMut(u16, Vec<u8>),
        copies: &mut Vec<TmCopy>,
    ) {
        let frame = InFrame {
            port,
            bytes: data,
            ts: ts.0,
        };
        self.sw
            .ingress_to_tm(frame, &mut |o| out(o.port, o.bytes), copies);
    }

    fn egress(
        &mut self,
        copy: TmCopy,
        out: &mut dyn FnMut(u16, Vec<u8>),
        copies: &mut Vec<TmCopy>,
    ) {
        self.sw
            .tm_to_egress(copy, &mut |o| out(o.port, o.bytes), copies);
    }

    fn discard(&mut self, copy: TmCopy) {
        self.sw.discard_copy(copy);
    }

    /// As [`SwitchPipeline::recycle`].
    fn recycle(&mut self, buf: Vec<u8>) {
        self.sw.recycle(buf);
    }
}

/// Pins threads: the pipeline thread (single mode) or each pipe thread (`pipe_threads`, in
/// order) gets a core of its own from the last cores when there are enough, the I/O threads
/// share the others; with fewer cores than pipe threads, pipe threads spread over all cores
/// and I/O threads share them too.
pub fn pin_threads(enabled: bool, pipe_threads: &[u16]) -> Option<ThreadHook> {
    if !enabled {
        return None;
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let n = cores.len();
    if n < 2 {
        return None;
    }
    let k = pipe_threads.len().max(1);
    let pipeline_core = cores[n - 1];
    let pipe_cores: Vec<(u16, core_affinity::CoreId)> = pipe_threads
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, cores[n - 1 - (i % n)]))
        .collect();
    let io: Vec<_> = if n > k {
        cores[..n - k].to_vec()
    } else {
        cores.clone()
    };
    Some(Arc::new(move |role: ThreadRole| {
        let core = match role {
            ThreadRole::Pipeline => pipeline_core,
            ThreadRole::Pipe(p) => pipe_cores
                .iter()
                .find(|(q, _)| *q == p)
                .map_or(pipeline_core, |(_, c)| *c),
            ThreadRole::Rx(p) | ThreadRole::Tx(p) => io[p as usize % io.len()],
        };
        if !core_affinity::set_for_current(core) {
            tracing::debug!(?role, core = core.id, "could not pin thread");
        }
    }))
}

/// The runtime in either threading mode.
pub enum SwitchRuntime {
    Single(Runtime<SwitchPipeline>),
    Pipes(PipeRuntime<PipeSwitch>),
}

impl SwitchRuntime {
    /// Starts one pipeline thread on `switches[0]`, or (`per_pipe`) one thread per pipe in
    /// `thread_pipes` on `switches[i]` each.
    pub fn start(
        switches: Vec<Switch>,
        per_pipe: bool,
        thread_pipes: &[u16],
        ports: Vec<PortSetup>,
        clock: Arc<dyn Clock>,
        cfg: RuntimeConfig,
    ) -> Result<SwitchRuntime, RuntimeError> {
        let mut switches = switches.into_iter();
        if !per_pipe {
            let sw = switches.next().ok_or(RuntimeError::NoSwitch)?;
            return Ok(SwitchRuntime::Single(Runtime::start(
                SwitchPipeline { sw },
                ports,
                clock,
                cfg,
            )?));
        }
        let mut stages: Vec<(u16, PipeSwitch)> = Vec::new();
        for (pipe, owns) in ownership(thread_pipes) {
            let sw = switches.next().ok_or(RuntimeError::NoSwitch)?;
            stages.push((pipe, PipeSwitch { owns, sw }));
        }
        let rt = PipeRuntime::start_stages(stages, ports, clock, cfg)?;
        Ok(SwitchRuntime::Pipes(rt))
    }

    /// The handle for control and metrics.
    pub fn handle(&self) -> SwitchHandle {
        match self {
            SwitchRuntime::Single(rt) => SwitchHandle::Single(rt.handle()),
            SwitchRuntime::Pipes(rt) => SwitchHandle::Pipes(rt.handle()),
        }
    }

    /// Stops, drains, and returns every switch instance with the pipes it owns.
    pub fn stop(self) -> Result<(Vec<(Switch, u8)>, RuntimeStats), RuntimeError> {
        match self {
            SwitchRuntime::Single(rt) => {
                let (p, st) = rt.stop()?;
                Ok((vec![(p.sw, ALL_PIPES)], st))
            }
            SwitchRuntime::Pipes(rt) => {
                let (stages, st) = rt.stop()?;
                Ok((
                    stages.into_iter().map(|(_, s)| (s.sw, s.owns)).collect(),
                    st,
                ))
            }
        }
    }
}

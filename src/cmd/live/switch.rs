//! The switch as the runtime drives it, in both threading modes: the whole-switch pipeline
//! ([`SwitchPipeline`]), one pipe's stage ([`PipeSwitch`]), the runtime in either mode
//! ([`LiveRuntime`]) and its control handle ([`Handle`], [`Part`]: writes go to every instance,
//! reads are answered per pipe by its owner); building the instances; pinning threads.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use dataplane::runtime::{
    PipeHandle, PipeRuntime, PipeStage, Pipeline, PortSetup, Runtime, RuntimeConfig, RuntimeError,
    RuntimeHandle, RuntimeStats, ThreadRole,
};
use dataplane::{Clock, LinkControl, Nanos};
use pipeline::api::{CounterValue, PipeSel, RegisterValue};
use pipeline::switch::{InFrame, Switch, SwitchConfig, TmCopy};

use super::PortArg;
use crate::cmd::{program, CompileArgs};

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

/// Every pipe (a mask for [`Part::owns`]).
pub const ALL_PIPES: u8 = 0xf;

/// The handle `pisa ctl` requests and metrics go through, in either threading mode.
#[derive(Clone)]
pub enum Handle {
    /// One pipeline thread owns the whole switch.
    Single(RuntimeHandle<SwitchPipeline>),
    /// One thread per pipe, each with its own instance.
    Pipes(PipeHandle<PipeSwitch>),
}

impl Handle {
    /// Port, thread and runtime counters.
    pub fn stats(&self) -> RuntimeStats {
        match self {
            Handle::Single(h) => h.stats(),
            Handle::Pipes(h) => h.stats(),
        }
    }

    /// The device ports attached.
    pub fn devports(&self) -> Vec<u16> {
        match self {
            Handle::Single(h) => h.devports(),
            Handle::Pipes(h) => h.devports(),
        }
    }

    /// The link control of a device port.
    pub fn link(&self, devport: u16) -> Result<LinkControl, RuntimeError> {
        match self {
            Handle::Single(h) => h.link(devport),
            Handle::Pipes(h) => h.link(devport),
        }
    }

    /// Runs `f` on every switch instance (on its thread, between batches) with the pipes it
    /// owns; results in thread order. A write must go through here so every instance gets it;
    /// a read keeps, from each instance, only what its owned pipes say ([`Part`]).
    pub fn each<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl Fn(&mut Switch, u8) -> R + Send + Sync + 'static,
    ) -> Result<Vec<R>, RuntimeError> {
        match self {
            Handle::Single(h) => h.call(timeout, move |p: &mut SwitchPipeline| {
                vec![f(&mut p.sw, ALL_PIPES)]
            }),
            Handle::Pipes(h) => Ok(h
                .call_each(timeout, move |p: &mut PipeSwitch| f(&mut p.sw, p.owns))?
                .into_iter()
                .map(|(_, r)| r)
                .collect()),
        }
    }

    /// Runs the write `f` on every instance; its answer, or the first error. Instances are
    /// identical, so they accept or refuse a write alike.
    pub fn write<R: Send + 'static>(
        &self,
        timeout: Duration,
        f: impl Fn(&mut Switch) -> Result<R, String> + Send + Sync + 'static,
    ) -> Result<R, String> {
        let rs = self
            .each(timeout, move |sw, _| f(sw))
            .map_err(|e| e.to_string())?;
        let mut first = None;
        for r in rs {
            match r {
                Err(e) => return Err(e),
                Ok(v) => {
                    first.get_or_insert(v);
                }
            }
        }
        first.ok_or_else(|| RuntimeError::Stopped.to_string())
    }
}

/// One switch instance and the pipes whose state it answers for: the whole switch in
/// single-thread mode, one pipe (plus pipes without a thread) per pipe thread otherwise.
#[derive(Clone, Copy)]
pub struct Part<'a> {
    pub sw: &'a Switch,
    pub owns: u8,
}

impl Part<'_> {
    /// Whether this part answers for `pipe`.
    pub fn owns(&self, pipe: u16) -> bool {
        pipe < 8 && self.owns & (1 << pipe) != 0
    }

    /// A request for one pipe that another part answers (a pipe the switch lacks is asked
    /// anyway, so the API names the error).
    fn not_mine(&self, sel: PipeSel) -> bool {
        matches!(sel, PipeSel::Pipe(p) if !self.owns(p) && p < self.sw.num_pipes())
    }

    /// Counter cells of the pipes it owns (`sel` as in the API).
    pub fn counter_read(
        &self,
        sel: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<CounterValue>, String> {
        if self.not_mine(sel) {
            return Ok(Vec::new());
        }
        let cells = self
            .sw
            .counter_read(sel, name, index)
            .map_err(|e| format!("counter `{name}`[{index}]: {e}"))?;
        Ok(cells.into_iter().filter(|c| self.owns(c.pipe)).collect())
    }

    /// Register cells of the pipes it owns.
    pub fn register_read(
        &self,
        sel: PipeSel,
        name: &str,
        index: u32,
    ) -> Result<Vec<RegisterValue>, String> {
        if self.not_mine(sel) {
            return Ok(Vec::new());
        }
        let cells = self
            .sw
            .register_read(sel, name, index)
            .map_err(|e| format!("register `{name}`[{index}]: {e}"))?;
        Ok(cells.into_iter().filter(|c| self.owns(c.pipe)).collect())
    }

    /// Hits and misses of a table on the pipes it owns (pipes not running the table's
    /// pipeline count nothing).
    pub fn table_hit_miss(&self, table: &str) -> Result<(u64, u64), String> {
        if self.owns == ALL_PIPES {
            return self
                .sw
                .table_hit_miss(PipeSel::All, table)
                .map_err(|e| e.to_string());
        }
        // A bad name is an error; a pipe running another pipeline is not.
        self.sw
            .table_hit_miss(PipeSel::All, table)
            .map_err(|e| e.to_string())?;
        let mut sum = (0, 0);
        for p in 0..self.sw.num_pipes() {
            if self.owns(p) {
                if let Ok((h, m)) = self.sw.table_hit_miss(PipeSel::Pipe(p), table) {
                    sum.0 += h;
                    sum.1 += m;
                }
            }
        }
        Ok(sum)
    }
}

/// Counter cells merged over parts, by pipe.
pub fn merge_cells<T>(
    parts: Vec<Result<Vec<T>, String>>,
    pipe: impl Fn(&T) -> u16,
) -> Result<Vec<T>, String> {
    let mut all = Vec::new();
    for p in parts {
        all.extend(p?);
    }
    all.sort_by_key(|c| pipe(c));
    Ok(all)
}

/// The pipes each pipe thread owns: its own, and the first thread also every pipe without a
/// thread (their state only changes by control writes, which every instance gets).
pub fn ownership(thread_pipes: &[u16]) -> Vec<(u16, u8)> {
    let with_thread: u8 = thread_pipes.iter().fold(0, |m, p| m | 1 << p);
    thread_pipes
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let extra = if i == 0 { ALL_PIPES & !with_thread } else { 0 };
            (p, 1 << p | extra)
        })
        .collect()
}

pub(crate) fn build_switch(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    pipes: Option<u16>,
    ports: &[PortArg],
) -> anyhow::Result<Switch> {
    let mut v = build_switches(program_path, tables, compile, pipes, ports, 1)?;
    v.pop().ok_or_else(|| anyhow!("no switch was built"))
}

/// `count` identical switches (one per pipe thread): the program compiled and the table file
/// read once, then applied to each.
pub(crate) fn build_switches(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    pipes: Option<u16>,
    ports: &[PortArg],
    count: usize,
) -> anyhow::Result<Vec<Switch>> {
    let compiled = program::compile(program_path, compile)?;
    let prog = Arc::new(compiled.program.clone());
    let cfg = SwitchConfig {
        pipes: pipes.unwrap_or_else(|| prog.pipe_map.len().clamp(1, 4) as u16),
        drop_log: 0,
        ..SwitchConfig::default()
    };
    for p in ports {
        let pipe = p.devport >> 7;
        if pipe >= cfg.pipes {
            return Err(anyhow!(
                "--port {}={}: device port {} is on pipe {pipe}, but the switch has {} pipe(s); \
                 give --pipes {}",
                p.devport,
                p.spec,
                p.devport,
                cfg.pipes,
                pipe + 1
            ));
        }
    }
    let file = match tables {
        Some(t) => Some(
            control::tables_file::load(t)
                .with_context(|| format!("cannot read table file `{}`", t.display()))?,
        ),
        None => None,
    };
    let mut out = Vec::with_capacity(count);
    for _ in 0..count.max(1) {
        let mut sw = Switch::new(prog.clone(), cfg.clone()).context("cannot build the switch")?;
        if let (Some(t), Some(file)) = (tables, &file) {
            control::tables_file::apply(&mut sw, file)
                .with_context(|| format!("cannot apply table file `{}`", t.display()))?;
        }
        out.push(sw);
    }
    Ok(out)
}

pub(crate) fn thread_hook(enabled: bool) -> Option<dataplane::runtime::ThreadHook> {
    thread_hook_for(enabled, &[])
}

/// Pins threads: the pipeline thread (single mode) or each pipe thread (`pipe_threads`, in
/// order) gets a core of its own from the last cores when there are enough, the I/O threads
/// share the others; with fewer cores than pipe threads, pipe threads spread over all cores
/// and I/O threads share them too.
pub(crate) fn thread_hook_for(
    enabled: bool,
    pipe_threads: &[u16],
) -> Option<dataplane::runtime::ThreadHook> {
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
pub enum LiveRuntime {
    Single(Runtime<SwitchPipeline>),
    Pipes(PipeRuntime<PipeSwitch>),
}

impl LiveRuntime {
    /// Starts one pipeline thread on `switches[0]`, or (`per_pipe`) one thread per pipe in
    /// `thread_pipes` on `switches[i]` each.
    pub fn start(
        switches: Vec<Switch>,
        per_pipe: bool,
        thread_pipes: &[u16],
        ports: Vec<PortSetup>,
        clock: Arc<dyn Clock>,
        cfg: RuntimeConfig,
    ) -> anyhow::Result<LiveRuntime> {
        let mut switches = switches.into_iter();
        if !per_pipe {
            let sw = switches
                .next()
                .ok_or_else(|| anyhow!("no switch was built"))?;
            return Ok(LiveRuntime::Single(Runtime::start(
                SwitchPipeline { sw },
                ports,
                clock,
                cfg,
            )?));
        }
        let mut stages: Vec<(u16, PipeSwitch)> = Vec::new();
        for (pipe, owns) in ownership(thread_pipes) {
            let sw = switches
                .next()
                .ok_or_else(|| anyhow!("no switch was built for pipe {pipe}"))?;
            stages.push((pipe, PipeSwitch { owns, sw }));
        }
        let rt = PipeRuntime::start_stages(stages, ports, clock, cfg)?;
        Ok(LiveRuntime::Pipes(rt))
    }

    /// The handle for control and metrics.
    pub fn handle(&self) -> Handle {
        match self {
            LiveRuntime::Single(rt) => Handle::Single(rt.handle()),
            LiveRuntime::Pipes(rt) => Handle::Pipes(rt.handle()),
        }
    }

    /// Stops, drains, and returns every switch instance with the pipes it owns.
    pub fn stop(self) -> anyhow::Result<(Vec<(Switch, u8)>, RuntimeStats)> {
        match self {
            LiveRuntime::Single(rt) => {
                let (p, st) = rt.stop()?;
                Ok((vec![(p.sw, ALL_PIPES)], st))
            }
            LiveRuntime::Pipes(rt) => {
                let (stages, st) = rt.stop()?;
                Ok((
                    stages.into_iter().map(|(_, s)| (s.sw, s.owns)).collect(),
                    st,
                ))
            }
        }
    }
}

//! `pisa run --port N=SPEC ...`: the live switch. Compiles the program, programs the tables,
//! opens the ports and forwards between them on [`dataplane::runtime`] until SIGINT or
//! SIGTERM, then drains and prints per-port, per-queue and per-table statistics.
//!
//! Ports are named by TNA device port: `--port 0=afpacket:veth0`, or `--port 1/4=SPEC` for
//! pipe 1 port 4 (device port 1 << 7 | 4 = 132). A device port's pipe must exist (`--pipes`).
//! `--link N=SETTINGS` sets a port's link model and faults at start (syntax of
//! [`dataplane::LinkConfig`]'s `FromStr`, e.g. `rate=10G,delay=5us,loss=0.01`); `pisa ctl`
//! changes them later. `--metrics ADDR` serves Prometheus text; `--ctl PATH` opens the control
//! socket ([`super::ctl`]).
//!
//! Pipes and threads. `--pipes N` is the switch's hardware pipe count (1..=4; default the
//! program's own, 4 for a TNA `Switch(pipe)` like l2l3.p4): it decides which device ports
//! exist, not how many threads run. Threads follow the ports (`--pipe-threads`):
//! - `auto` (default): one thread per pipe that has a `--port` when the ports span two or more
//!   pipes ([`dataplane::runtime::PipeRuntime`] with [`PipeSwitch`]), else one pipeline thread
//!   for the whole switch ([`dataplane::runtime::Runtime`] with [`SwitchPipeline`]);
//! - `one` (or `1`): always one pipeline thread;
//! - `per-pipe`: always one thread per pipe that has ports (also when that is one pipe).
//!
//! In per-pipe mode every pipe thread holds its own `Switch`, built identically (same program,
//! tables, seed), and runs only its own pipe in it: the ingress of its ports and the queues and
//! egress of its ports ([`pipeline::switch::TmCopy`]s for another pipe's ports cross to that
//! pipe's thread). So pipe `j`'s registers, counters, meters, table hit counters and queues live
//! in thread `j`'s instance. Control writes (`pisa ctl table-add`, the table file) go to every
//! instance — TNA tables without pipe scope hold the same entries in every pipe — and reads are
//! answered per pipe by the instance that owns the pipe ([`Handle::each`], [`Part`]); pipes
//! without a thread are answered by the first thread (nothing changes their state). The cost is
//! memory: N instances each hold every pipe's tables.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;
use clap::ValueEnum;
use dataplane::runtime::{
    render_prometheus, MetricsServer, PipeHandle, PipeRuntime, PipeStage, Pipeline, PortSetup,
    Runtime, RuntimeConfig, RuntimeError, RuntimeHandle, RuntimeStats, ThreadRole,
};
use dataplane::{open_port, Clock, LinkConfig, LinkControl, MemHub, Nanos, PortSpec, WallClock};
use pipeline::api::{CounterValue, PipeSel, RegisterValue};
use pipeline::switch::{InFrame, Switch, SwitchConfig, TmCopy};

use super::{ctl, program, CompileArgs};

/// A device port: `N` or `PIPE/PORT`.
fn parse_devport(s: &str) -> Result<u16, String> {
    let v = match s.split_once('/') {
        Some((pipe, port)) => {
            let pipe: u16 = pipe
                .trim()
                .parse()
                .map_err(|_| format!("bad pipe {pipe:?}"))?;
            let port: u16 = port
                .trim()
                .parse()
                .map_err(|_| format!("bad port {port:?}"))?;
            if pipe > 3 || port > 127 {
                return Err(format!(
                    "pipe/port {pipe}/{port} out of range (pipe 0..=3, port 0..=127)"
                ));
            }
            pipe << 7 | port
        }
        None => s
            .trim()
            .parse()
            .map_err(|_| format!("bad device port {s:?}: expected a number or PIPE/PORT"))?,
    };
    if v > 511 {
        return Err(format!("device port {v} out of range (0..=511)"));
    }
    Ok(v)
}

/// `--port DEVPORT=SPEC`.
#[derive(Debug, Clone)]
pub struct PortArg {
    pub devport: u16,
    pub spec: PortSpec,
}

impl FromStr for PortArg {
    type Err = String;
    fn from_str(s: &str) -> Result<PortArg, String> {
        let (n, spec) = s
            .split_once('=')
            .ok_or_else(|| format!("{s:?}: expected DEVPORT=SPEC, e.g. 0=afpacket:veth0"))?;
        Ok(PortArg {
            devport: parse_devport(n)?,
            spec: spec.parse().map_err(|e| format!("{s:?}: {e}"))?,
        })
    }
}

/// `--link DEVPORT=SETTINGS`.
#[derive(Debug, Clone)]
pub struct LinkArg {
    pub devport: u16,
    pub config: LinkConfig,
}

impl FromStr for LinkArg {
    type Err = String;
    fn from_str(s: &str) -> Result<LinkArg, String> {
        let (n, cfg) = s.split_once('=').ok_or_else(|| {
            format!("{s:?}: expected DEVPORT=SETTINGS, e.g. 1=delay=5us,loss=0.01")
        })?;
        Ok(LinkArg {
            devport: parse_devport(n)?,
            config: cfg.parse().map_err(|e| format!("{s:?}: {e}"))?,
        })
    }
}

/// The live-forwarding options of `pisa run`.
#[derive(Args, Debug, Clone, Default)]
pub struct LiveArgs {
    /// Forward live between ports instead of replaying captures: DEVPORT=SPEC (repeatable),
    /// e.g. `0=afpacket:veth0`; DEVPORT is a number or PIPE/PORT.
    #[arg(long = "port", value_name = "DEVPORT=SPEC")]
    pub ports: Vec<PortArg>,
    /// Hardware pipes (1..=4); device port = pipe << 7 | port. Default: the program's. It
    /// decides which device ports exist; the threads follow the ports (`--pipe-threads`).
    #[arg(long)]
    pub pipes: Option<u16>,
    /// Pipeline threads: `auto` runs one thread per pipe that has ports when the ports span
    /// two or more pipes, else one; `one` (or `1`) always one thread for the whole switch;
    /// `per-pipe` always one thread per pipe that has ports.
    #[arg(long, value_enum, default_value_t = PipeThreads::Auto)]
    pub pipe_threads: PipeThreads,
    /// A port's link model and faults at start: DEVPORT=SETTINGS (repeatable), e.g.
    /// `1=rate=10G,delay=5us,loss=0.01`.
    #[arg(long = "link", value_name = "DEVPORT=SETTINGS")]
    pub links: Vec<LinkArg>,
    /// Serve Prometheus metrics on this address (e.g. 127.0.0.1:9464).
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<SocketAddr>,
    /// Open the control socket for `pisa ctl` here (e.g. /run/pisa/ctl.sock).
    #[arg(long, value_name = "PATH")]
    pub ctl: Option<PathBuf>,
    /// Frames per batch.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Do not pin threads to cores.
    #[arg(long)]
    pub no_pin: bool,
    /// EAL arguments for `dpdk:` ports, as one string (e.g. "-l 2 --no-huge -m 512");
    /// default: `--no-huge -m 256` with a per-process file prefix. Needs the `dpdk` feature.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub dpdk_eal: Option<String>,
}

/// `--pipe-threads`.
#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PipeThreads {
    /// Per pipe when the ports span two or more pipes, else one.
    #[default]
    Auto,
    /// One pipeline thread for the whole switch.
    #[value(alias = "1")]
    One,
    /// One thread per pipe that has ports.
    PerPipe,
}

impl PipeThreads {
    /// Whether to run one thread per pipe for ports on these device ports.
    pub fn per_pipe(self, devports: &[u16]) -> bool {
        let mut pipes: Vec<u16> = devports.iter().map(|d| d >> 7).collect();
        pipes.sort_unstable();
        pipes.dedup();
        match self {
            PipeThreads::Auto => pipes.len() > 1,
            PipeThreads::One => false,
            PipeThreads::PerPipe => true,
        }
    }
}

/// Hands `--dpdk-eal` to the DPDK backend before the first DPDK port opens.
#[cfg(feature = "dpdk")]
fn set_dpdk_eal_args(eal: &str) -> anyhow::Result<()> {
    let args = eal.split_whitespace().map(str::to_string).collect();
    dataplane::dpdk::set_eal_args(args).context("--dpdk-eal")
}

#[cfg(not(feature = "dpdk"))]
fn set_dpdk_eal_args(_eal: &str) -> anyhow::Result<()> {
    Err(anyhow!(
        "--dpdk-eal: this pisa was built without DPDK; rebuild with `--features dpdk`"
    ))
}

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

/// Prometheus text: the runtime's port and thread metrics plus the switch's drops and queues
/// (drops summed over pipe threads, each queue from the thread of its port's pipe).
fn render_metrics(h: &Handle) -> String {
    let mut s = render_prometheus(&h.stats());
    let ports = h.devports();
    let sw = h.each(Duration::from_secs(2), move |sw, owns| {
        let st = sw.stats();
        let drops: Vec<u64> = pipeline::switch::DropReason::ALL
            .iter()
            .map(|r| st.dropped(*r))
            .collect();
        let part = Part { sw, owns };
        let queues: Vec<_> = ports
            .iter()
            .filter(|&&d| part.owns(d >> 7))
            .filter_map(|&d| sw.port_queue_stats(d).ok().map(|q| (d, q)))
            .collect();
        (drops, queues)
    });
    if let Ok(parts) = sw {
        let mut drops = vec![0u64; pipeline::switch::DropReason::COUNT];
        let mut queues = Vec::new();
        for (d, q) in parts {
            for (sum, n) in drops.iter_mut().zip(d) {
                *sum += n;
            }
            queues.extend(q);
        }
        queues.sort_by_key(|(d, _)| *d);
        let _ = writeln!(
            s,
            "# HELP pisa_switch_drops_total Packets the switch dropped, by reason.\n# TYPE pisa_switch_drops_total counter"
        );
        for (r, n) in pipeline::switch::DropReason::ALL.iter().zip(drops) {
            let _ = writeln!(s, "pisa_switch_drops_total{{reason=\"{r}\"}} {n}");
        }
        type Get = fn(&pipeline::tm::queue::QueueStats) -> u64;
        let rows: [(&str, &str, &str, Get); 5] = [
            (
                "pisa_queue_enqueued_total",
                "counter",
                "Packets queued",
                |q| q.enqueued,
            ),
            (
                "pisa_queue_dropped_total",
                "counter",
                "Packets tail-dropped",
                |q| q.dropped,
            ),
            (
                "pisa_queue_ecn_marked_total",
                "counter",
                "Packets ECN-marked",
                |q| q.marked,
            ),
            (
                "pisa_queue_max_depth_bytes",
                "gauge",
                "Largest queue depth seen",
                |q| q.max_depth_bytes,
            ),
            (
                "pisa_queue_enqueued_bytes_total",
                "counter",
                "Bytes queued",
                |q| q.enqueued_bytes,
            ),
        ];
        for (name, kind, help, get) in rows {
            let _ = writeln!(s, "# HELP {name} {help}.\n# TYPE {name} {kind}");
            for (d, q) in &queues {
                let _ = writeln!(s, "{name}{{port=\"{d}\"}} {}", get(q));
            }
        }
    }
    s
}

/// Runs the live switch until SIGINT/SIGTERM.
pub fn run(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    args: LiveArgs,
) -> anyhow::Result<ExitCode> {
    let devports: Vec<u16> = args.ports.iter().map(|p| p.devport).collect();
    dataplane::runtime::check_devports(&devports)?;
    for l in &args.links {
        if !devports.contains(&l.devport) {
            return Err(anyhow!(
                "--link {}: no --port is attached at device port {}",
                l.devport,
                l.devport
            ));
        }
    }
    let per_pipe = args.pipe_threads.per_pipe(&devports);
    let thread_pipes: Vec<u16> = {
        let mut v: Vec<u16> = devports.iter().map(|d| d >> 7).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let count = if per_pipe { thread_pipes.len() } else { 1 };
    let switches = build_switches(
        program_path,
        tables,
        compile,
        args.pipes,
        &args.ports,
        count,
    )?;

    // Signals first, so a Ctrl-C while opening ports still shuts down cleanly.
    let term = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, term.clone()).context("cannot install signal handler")?;
    }

    if let Some(eal) = &args.dpdk_eal {
        set_dpdk_eal_args(eal)?;
    }
    let mut hub = MemHub::default();
    let mut setups = Vec::new();
    for p in &args.ports {
        let port = open_port(&p.spec, &mut hub)
            .with_context(|| format!("cannot open port {} ({})", p.devport, p.spec))?;
        let link = args
            .links
            .iter()
            .rev()
            .find(|l| l.devport == p.devport)
            .map(|l| l.config.clone())
            .unwrap_or_default();
        setups.push(PortSetup {
            devport: p.devport,
            port,
            link,
        });
    }
    let clock: Arc<dyn Clock> = Arc::new(WallClock::new());
    let cfg = RuntimeConfig {
        batch: args.batch.max(1),
        thread_hook: if per_pipe {
            thread_hook_for(!args.no_pin, &thread_pipes)
        } else {
            thread_hook(!args.no_pin)
        },
        ..RuntimeConfig::default()
    };
    let rt = LiveRuntime::start(switches, per_pipe, &thread_pipes, setups, clock, cfg)?;
    let handle = rt.handle();

    let metrics = match args.metrics {
        Some(addr) => {
            let h = handle.clone();
            let srv = MetricsServer::start(addr, Arc::new(move || render_metrics(&h)))
                .with_context(|| format!("cannot serve metrics on {addr}"))?;
            eprintln!("pisa: metrics on http://{}/metrics", srv.local_addr());
            Some(srv)
        }
        None => None,
    };
    let ctl_server = match &args.ctl {
        Some(path) => Some(ctl::CtlServer::start(path, handle.clone())?),
        None => None,
    };
    eprintln!(
        "pisa: forwarding on {} port(s) with {}: {}; SIGINT or SIGTERM stops",
        args.ports.len(),
        if per_pipe {
            format!(
                "one thread per pipe ({})",
                thread_pipes
                    .iter()
                    .map(|p| format!("pipe {p}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            "one pipeline thread".to_string()
        },
        args.ports
            .iter()
            .map(|p| format!("{}={}", p.devport, p.spec))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // Say "ready" on stdout too, so scripts and tests can wait for it.
    println!("ready");
    while !term.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("pisa: stopping; draining queues");
    drop(ctl_server);
    drop(metrics);
    let (parts, stats) = rt.stop()?;
    let parts: Vec<Part> = parts
        .iter()
        .map(|(sw, owns)| Part { sw, owns: *owns })
        .collect();
    print!("{}", report(&parts, &stats));
    Ok(ExitCode::SUCCESS)
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

/// The end-of-run report: per port, per pipeline thread, switch drops, queues, tables and
/// counters, over every part (switch instance) with each pipe's state from its owner.
pub fn report(parts: &[Part], st: &RuntimeStats) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "ports:");
    let _ = writeln!(
        s,
        "  {:>4} {:<20} {:>10} {:>12} {:>10} {:>12} {:>8}",
        "port", "name", "rx", "rx_bytes", "tx", "tx_bytes", "drops"
    );
    for p in &st.ports {
        let _ = writeln!(
            s,
            "  {:>4} {:<20} {:>10} {:>12} {:>10} {:>12} {:>8}",
            p.devport,
            p.name,
            p.port.rx_packets,
            p.port.rx_bytes,
            p.port.tx_packets,
            p.port.tx_bytes,
            p.total_drops()
        );
        for r in dataplane::DropReason::ALL {
            for (dir, n) in [("rx", p.port.rx_dropped(r)), ("tx", p.port.tx_dropped(r))] {
                if n > 0 {
                    let _ = writeln!(s, "       {dir} {}: {n}", r.name());
                }
            }
        }
        for (what, n) in [
            ("rx ingress_channel_full", p.runtime.ingress_full),
            ("tx egress_channel_full", p.runtime.egress_full),
            ("tx fault loss", p.faults_tx.lost),
            ("tx fault link_down", p.faults_tx.down_dropped),
            ("tx fault queue", p.faults_tx.queue_dropped),
            ("rx fault loss", p.faults_rx.lost),
            ("rx fault link_down", p.faults_rx.down_dropped),
            ("rx fault queue", p.faults_rx.queue_dropped),
            ("io errors", p.runtime.io_errors),
        ] {
            if n > 0 {
                let _ = writeln!(s, "       {what}: {n}");
            }
        }
    }
    let _ = writeln!(
        s,
        "pipeline: {} frame(s) processed, {} sent to device ports with nothing attached",
        st.processed, st.no_port
    );
    for t in &st.threads {
        let who = match t.pipe {
            Some(p) => format!("pipe {p} thread"),
            None => "pipeline thread".to_string(),
        };
        let _ = writeln!(
            s,
            "  {who}: {} frame(s) in {} batch(es), copies from other pipes {}, to other pipes {}, \
             dropped for a full cross-pipe channel {}",
            t.frames, t.batches, t.copies_in, t.copies_out, t.cross_full
        );
    }
    let mut drops = [0u64; pipeline::switch::DropReason::COUNT];
    for part in parts {
        for (sum, n) in drops.iter_mut().zip(part.sw.stats().drops) {
            *sum += n;
        }
    }
    let _ = writeln!(s, "switch drops: {}", drops.iter().sum::<u64>());
    for r in pipeline::switch::DropReason::ALL {
        let n = drops[r as usize];
        if n > 0 {
            let _ = writeln!(s, "  {r}: {n}");
        }
    }
    let _ = writeln!(s, "queues:");
    for p in &st.ports {
        let owner = parts.iter().find(|part| part.owns(p.devport >> 7));
        if let Some(Ok(q)) = owner.map(|o| o.sw.port_queue_stats(p.devport)) {
            let _ = writeln!(
                s,
                "  port {:>3}: enqueued {} dropped {} ecn_marked {} max_depth {} B",
                p.devport, q.enqueued, q.dropped, q.marked, q.max_depth_bytes
            );
        }
    }
    let Some(first) = parts.first() else {
        return s;
    };
    let _ = writeln!(s, "tables:");
    let prog = first.sw.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if let Ok(n) = first.sw.table_len(PipeSel::All, &t.name) {
                let (mut hits, mut misses) = (0, 0);
                for part in parts {
                    let (h, m) = part.table_hit_miss(&t.name).unwrap_or((0, 0));
                    hits += h;
                    misses += m;
                }
                let _ = writeln!(
                    s,
                    "  {}: {n} entr{}, {hits} hits, {misses} misses",
                    t.name,
                    if n == 1 { "y" } else { "ies" }
                );
            }
        }
    }
    let _ = writeln!(s, "counters (non-zero cells):");
    for pl in &prog.pipelines {
        for c in &pl.counters {
            if c.direct_table.is_some() {
                continue;
            }
            for i in 0..c.size {
                let cells = merge_cells(
                    parts
                        .iter()
                        .map(|part| part.counter_read(PipeSel::All, &c.name, i))
                        .collect(),
                    |c| c.pipe,
                );
                if let Ok(cells) = cells {
                    for cell in cells.iter().filter(|c| c.packets > 0 || c.bytes > 0) {
                        let _ = writeln!(
                            s,
                            "  {}[{i}] pipe {}: {} packets, {} bytes",
                            c.name, cell.pipe, cell.packets, cell.bytes
                        );
                    }
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::TargetArg;

    fn compile() -> CompileArgs {
        CompileArgs {
            target: TargetArg::Tofino1,
            include: Vec::new(),
            define: Vec::new(),
        }
    }

    #[test]
    fn device_ports_parse_as_numbers_or_pipe_slash_port() {
        assert_eq!(parse_devport("5"), Ok(5));
        assert_eq!(parse_devport("1/4"), Ok(132));
        assert_eq!(parse_devport("3/127"), Ok(511));
        assert!(parse_devport("4/0").unwrap_err().contains("out of range"));
        assert!(parse_devport("0/128").unwrap_err().contains("out of range"));
        assert!(parse_devport("512").unwrap_err().contains("512"));
        assert!(parse_devport("x").unwrap_err().contains("\"x\""));
        let p: PortArg = "1/2=afpacket:veth9".parse().unwrap();
        assert_eq!(p.devport, 130);
        assert_eq!(p.spec.to_string(), "afpacket:veth9");
        assert!("0afpacket:x"
            .parse::<PortArg>()
            .unwrap_err()
            .contains("DEVPORT=SPEC"));
        assert!("0=bogus:x"
            .parse::<PortArg>()
            .unwrap_err()
            .contains("bogus"));
        let l: LinkArg = "3=rate=10G,loss=0.5".parse().unwrap();
        assert_eq!(l.devport, 3);
        assert_eq!(l.config.tx.rate_bps, 10_000_000_000);
        assert_eq!(l.config.rx.faults.loss, 0.5);
        assert!("3=loss=7".parse::<LinkArg>().unwrap_err().contains('7'));
    }

    #[test]
    fn ports_must_sit_on_existing_pipes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let prog = root.join("p4/programs/l2l3.p4");
        let ports = vec![
            "0=mem:a".parse::<PortArg>().unwrap(),
            "1/0=mem:b".parse::<PortArg>().unwrap(),
        ];
        let e = build_switch(&prog, None, &compile(), Some(1), &ports)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("device port 128") && e.contains("--pipes 2"),
            "{e}"
        );
        let sw = build_switch(&prog, None, &compile(), Some(2), &ports).unwrap();
        assert_eq!(sw.num_pipes(), 2);
        // Without --pipes, the program's own pipe count (TNA `Switch(pipe)`: every pipe).
        let sw = build_switch(&prog, None, &compile(), None, &ports).unwrap();
        assert_eq!(sw.num_pipes(), 4);
    }

    #[test]
    fn the_switch_pipeline_forwards_bridged_frames_and_reports() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let sw = build_switch(
            &root.join("p4/programs/l2l3.p4"),
            Some(&root.join("p4/programs/l2l3.tables.yaml")),
            &compile(),
            None,
            &[],
        )
        .unwrap();
        let mut p = SwitchPipeline { sw };
        let mut f = vec![0u8; 64];
        f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
        f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        let mut out = Vec::new();
        p.process(0, &f, Nanos(1), &mut |port, bytes| out.push((port, bytes)));
        assert_eq!(
            out,
            vec![(1, f.clone())],
            "h1 -> h2 is switched to port 1 unchanged"
        );
        let st = RuntimeStats::default();
        let r = report(
            &[Part {
                sw: &p.sw,
                owns: ALL_PIPES,
            }],
            &st,
        );
        assert!(r.contains("SwitchIngress.mac_dst: 4 entries"), "{r}");
        assert!(
            r.contains("ingress_port_counter[0] pipe 0: 1 packets"),
            "{r}"
        );
    }

    /// l2l3.tables.yaml with hosts h3 and h4 moved to pipe 1 (device ports 128 and 129).
    fn two_pipe_tables(test: &str) -> PathBuf {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(root.join("p4/programs/l2l3.tables.yaml")).unwrap();
        let text = text
            .replace("port: 2 }", "port: 128 }")
            .replace("port: 3 }", "port: 129 }")
            .replace("ports: [0, 1, 2, 3]", "ports: [0, 1, 128, 129]")
            .replace("{ xid: 2, ports: [2] }", "{ xid: 128, ports: [128] }")
            .replace("{ xid: 3, ports: [3] }", "{ xid: 129, ports: [129] }");
        assert!(text.contains("port: 129 }") && text.contains("xid: 129"));
        let path = std::env::temp_dir().join(format!(
            "pisa-live-{test}-{}.tables.yaml",
            std::process::id()
        ));
        std::fs::write(&path, text).unwrap();
        path
    }

    fn switches(test: &str, count: usize) -> Vec<Switch> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let tables = two_pipe_tables(test);
        let v = build_switches(
            &root.join("p4/programs/l2l3.p4"),
            Some(&tables),
            &compile(),
            Some(2),
            &[],
            count,
        )
        .unwrap();
        let _ = std::fs::remove_file(tables);
        v
    }

    fn mac(n: u8) -> [u8; 6] {
        [2, 0, 0, 0, 0, n]
    }

    /// A 64-byte L2 frame (ethertype 0x88b5) with a sequence number.
    fn l2(dst: [u8; 6], src: [u8; 6], seq: u16) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[..6].copy_from_slice(&dst);
        f[6..12].copy_from_slice(&src);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        f[14..16].copy_from_slice(&seq.to_be_bytes());
        f
    }

    /// An IPv4/UDP frame to the router MAC, for the routed path.
    fn routed(src: [u8; 6], sip: [u8; 4], dip: [u8; 4]) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[..6].copy_from_slice(&mac(0xfe));
        f[6..12].copy_from_slice(&src);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip = &mut f[14..34];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&50u16.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&sip);
        ip[16..20].copy_from_slice(&dip);
        let mut sum = 0u32;
        for c in ip.chunks(2) {
            sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
        f[34..36].copy_from_slice(&5000u16.to_be_bytes());
        f[36..38].copy_from_slice(&5001u16.to_be_bytes());
        f[38..40].copy_from_slice(&30u16.to_be_bytes());
        f
    }

    /// Bridged within and across pipes, flooded to both pipes, routed across pipes.
    fn mixed_traffic() -> Vec<(u16, Vec<u8>)> {
        let mut v = Vec::new();
        for i in 0..8u16 {
            v.push((0, l2(mac(2), mac(1), i)));
            v.push((0, l2(mac(3), mac(1), i)));
            v.push((128, l2(mac(1), mac(3), i)));
            v.push((129, l2(mac(0x77), mac(4), i)));
            v.push((1, routed(mac(2), [10, 0, 1, 2], [10, 0, 3, 4])));
        }
        v
    }

    #[test]
    fn the_split_path_forwards_exactly_like_process() {
        let mut sws = switches("split", 2);
        let (mut split, mut whole) = (sws.pop().unwrap(), sws.pop().unwrap());
        let mut want = Vec::new();
        let mut got = Vec::new();
        for (i, (port, bytes)) in mixed_traffic().iter().enumerate() {
            let frame = InFrame {
                port: *port,
                bytes,
                ts: 1000 * i as u64,
            };
            whole.process(frame, &mut |o| want.push(o));
            let mut copies = Vec::new();
            split.ingress_to_tm(frame, &mut |o| got.push(o), &mut copies);
            let mut queue: std::collections::VecDeque<TmCopy> = copies.drain(..).collect();
            while let Some(c) = queue.pop_front() {
                split.tm_to_egress(c, &mut |o| got.push(o), &mut copies);
                queue.extend(copies.drain(..));
            }
        }
        assert_eq!(got, want, "same frames, same order, same times");
        assert_eq!(split.stats(), whole.stats());
        // Flooded copies reached both pipes; routed frames crossed to pipe 1.
        let ports: std::collections::BTreeSet<u16> = got.iter().map(|o| o.port).collect();
        assert_eq!(ports, [0, 1, 128, 129].into_iter().collect());
        for (name, i) in [("ingress_port_counter", 0), ("egress_port_counter", 129)] {
            assert_eq!(
                split.counter_read(PipeSel::All, name, i).unwrap(),
                whole.counter_read(PipeSel::All, name, i).unwrap()
            );
        }
    }

    struct Hosts {
        ports: Vec<dataplane::MemPort>,
    }

    impl Hosts {
        fn send(&mut self, i: usize, frames: &[Vec<u8>]) {
            let mut b = dataplane::FrameBatch::new(64);
            for f in frames {
                if !b.push(f, Nanos::ZERO) {
                    dataplane::Port::send_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap();
                    b.push(f, Nanos::ZERO);
                }
            }
            dataplane::Port::send_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap();
        }

        /// Frames received on host `i` until `want` came or 5 s passed.
        fn recv(&mut self, i: usize, want: usize) -> Vec<Vec<u8>> {
            let mut got = Vec::new();
            let mut b = dataplane::FrameBatch::new(64);
            let t0 = std::time::Instant::now();
            while got.len() < want && t0.elapsed() < Duration::from_secs(5) {
                b.clear();
                if dataplane::Port::recv_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap()
                    == 0
                {
                    std::thread::sleep(Duration::from_millis(1));
                }
                got.extend(b.iter().map(|f| f.data.to_vec()));
            }
            got
        }
    }

    fn start_live(test: &str, per_pipe: bool) -> (LiveRuntime, Hosts) {
        let devports = [0u16, 1, 128, 129];
        let mut setups = Vec::new();
        let mut hosts = Vec::new();
        for d in devports {
            let (sw, host) =
                dataplane::mem::pair_with_capacity(&format!("sw{d}"), &format!("h{d}"), 4096);
            setups.push(PortSetup {
                devport: d,
                port: Box::new(sw),
                link: LinkConfig::default(),
            });
            hosts.push(host);
        }
        let thread_pipes = [0u16, 1];
        let count = if per_pipe { 2 } else { 1 };
        let clock: Arc<dyn Clock> = Arc::new(dataplane::VirtualClock::new());
        let cfg = RuntimeConfig {
            idle_wait: Duration::from_millis(2),
            ..RuntimeConfig::default()
        };
        let rt = LiveRuntime::start(
            switches(test, count),
            per_pipe,
            &thread_pipes,
            setups,
            clock,
            cfg,
        )
        .unwrap();
        (rt, Hosts { ports: hosts })
    }

    fn ctl_ok(h: &Handle, line: &str) -> serde_json::Value {
        let r = super::super::ctl::handle_line(h, line);
        assert_eq!(r["ok"], true, "{line} -> {r}");
        r
    }

    /// Both threading modes forward the same traffic and answer `pisa ctl` alike.
    fn live_two_pipes(per_pipe: bool) {
        let test = if per_pipe { "live-pipes" } else { "live-one" };
        let (rt, mut hosts) = start_live(test, per_pipe);
        let h = rt.handle();
        // h1 (pipe 0) -> h3 (pipe 1), unicast across pipes; flood from h1 reaches h2, h3, h4.
        let uni: Vec<Vec<u8>> = (0..50).map(|i| l2(mac(3), mac(1), i)).collect();
        hosts.send(0, &uni);
        let got = hosts.recv(2, 50);
        assert_eq!(got, uni, "in order, unchanged");
        let flood: Vec<Vec<u8>> = (0..10).map(|i| l2(mac(0x77), mac(1), i)).collect();
        hosts.send(0, &flood);
        assert_eq!(hosts.recv(1, 10).len(), 10);
        assert_eq!(hosts.recv(2, 10).len(), 10);
        assert_eq!(hosts.recv(3, 10).len(), 10);
        // Counters per pipe: ingress on pipe 0 only, egress to port 128 on pipe 1 only.
        let r = ctl_ok(
            &h,
            r#"{"op":"counter_read","name":"ingress_port_counter","index":0}"#,
        );
        assert_eq!(r["cells"][0]["pipe"], 0);
        assert_eq!(r["cells"][0]["packets"], 60);
        assert_eq!(r["cells"][1]["pipe"], 1);
        assert_eq!(r["cells"][1]["packets"], 0);
        let r = ctl_ok(
            &h,
            r#"{"op":"counter_read","name":"egress_port_counter","index":128,"pipe":1}"#,
        );
        assert_eq!(r["cells"].as_array().unwrap().len(), 1, "{r}");
        assert_eq!(r["cells"][0]["packets"], 60);
        let r = super::super::ctl::handle_line(
            &h,
            r#"{"op":"counter_read","name":"ingress_port_counter","index":0,"pipe":3}"#,
        );
        assert_eq!(r["ok"], false, "{r}");
        assert!(r["error"].as_str().unwrap().contains("pipe 3"), "{r}");
        // A new entry reaches both pipes: frames for it from pipe 0 and pipe 1 both arrive.
        ctl_ok(
            &h,
            r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:00:99"},"action":"set_port","params":{"port":129}}"#,
        );
        hosts.send(0, &[l2(mac(0x99), mac(1), 1)]);
        hosts.send(2, &[l2(mac(0x99), mac(3), 2)]);
        let got = hosts.recv(3, 2);
        assert_eq!(got.len(), 2);
        assert!(hosts.recv(1, 1).is_empty(), "not flooded any more");
        let r = ctl_ok(&h, r#"{"op":"stats"}"#);
        let threads = r["threads"].as_array().unwrap();
        assert_eq!(threads.len(), if per_pipe { 2 } else { 1 });
        assert!(r["switch_drops"].as_object().unwrap().is_empty(), "{r}");
        let metrics = render_metrics(&h);
        assert!(
            metrics.contains("pisa_queue_enqueued_total{port=\"129\"} 12"),
            "{metrics}"
        );
        assert!(metrics.contains("pisa_queue_enqueued_total{port=\"0\"} 0"));
        let (parts, st) = rt.stop().unwrap();
        assert_eq!(st.processed, 62);
        let parts: Vec<Part> = parts
            .iter()
            .map(|(sw, owns)| Part { sw, owns: *owns })
            .collect();
        let rep = report(&parts, &st);
        assert!(
            rep.contains("ingress_port_counter[0] pipe 0: 61 packets"),
            "{rep}"
        );
        assert!(
            rep.contains("ingress_port_counter[128] pipe 1: 1 packets"),
            "{rep}"
        );
        assert!(
            rep.contains("egress_port_counter[129] pipe 1: 12 packets"),
            "{rep}"
        );
        assert!(rep.contains("SwitchIngress.mac_dst: 5 entries"), "{rep}");
        if per_pipe {
            assert!(rep.contains("pipe 0 thread: 61 frame(s)"), "{rep}");
            assert!(rep.contains("pipe 1 thread: 1 frame(s)"), "{rep}");
            assert_eq!(st.cross_full(), 0);
        } else {
            assert!(rep.contains("pipeline thread: 62 frame(s)"), "{rep}");
        }
    }

    #[test]
    fn one_thread_per_pipe_forwards_across_pipes_and_answers_ctl_per_pipe() {
        live_two_pipes(true);
    }

    #[test]
    fn one_pipeline_thread_gives_the_same_answers() {
        live_two_pipes(false);
    }

    #[test]
    fn pipe_threads_follow_the_ports() {
        assert!(PipeThreads::Auto.per_pipe(&[0, 128]));
        assert!(!PipeThreads::Auto.per_pipe(&[0, 1, 2]));
        assert!(!PipeThreads::One.per_pipe(&[0, 128]));
        assert!(PipeThreads::PerPipe.per_pipe(&[0, 1]));
        assert_eq!(PipeThreads::from_str("1", false), Ok(PipeThreads::One));
        assert_eq!(
            PipeThreads::from_str("per-pipe", false),
            Ok(PipeThreads::PerPipe)
        );
        assert_eq!(ownership(&[0, 1]), vec![(0, 0b1101), (1, 0b0010)]);
        assert_eq!(ownership(&[2]), vec![(2, 0b1111)]);
    }

    /// Pipeline capacity (frames through ingress per second) with one pipeline thread and
    /// with one thread per pipe, on four in-memory ports (two per pipe), for traffic that
    /// stays within each pipe and traffic that crosses between them. Two senders blast as fast
    /// as they can; the excess is dropped at the ingress channels, so `processed` over the
    /// window is what the pipeline thread(s) keep up with. Run:
    /// `cargo test --release -p pisa --bin pisa bench_pipe_threads -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check: run it with --ignored --nocapture in release"]
    fn bench_pipe_threads() {
        let secs = 1.0;
        for across in [false, true] {
            let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for _ in 0..5 {
                for (m, per_pipe) in [false, true].into_iter().enumerate() {
                    rates[m].push(measure(per_pipe, across, secs));
                }
            }
            let median = |v: &mut Vec<f64>| {
                v.sort_by(|a, b| a.total_cmp(b));
                v[v.len() / 2]
            };
            let one = median(&mut rates[0]);
            let per = median(&mut rates[1]);
            println!(
                "{}: one pipeline thread {:.3} Mpps, one thread per pipe {:.3} Mpps, ratio {:.2} \
                 (median of 5 runs of {secs} s; {} cores)",
                if across {
                    "across pipes (0 <-> 128)"
                } else {
                    "within pipes (0 -> 1, 128 -> 129)"
                },
                one / 1e6,
                per / 1e6,
                per / one,
                std::thread::available_parallelism().map_or(0, |n| n.get())
            );
        }
    }

    fn measure(per_pipe: bool, across: bool, secs: f64) -> f64 {
        use std::sync::atomic::AtomicBool;
        let (rt, hosts) = start_live("bench", per_pipe);
        let h = rt.handle();
        let stop = Arc::new(AtomicBool::new(false));
        // (host index, frame it sends): h1 on port 0, h3 on port 128.
        let flows = if across {
            [(0, l2(mac(3), mac(1), 0)), (2, l2(mac(1), mac(3), 0))]
        } else {
            [(0, l2(mac(2), mac(1), 0)), (2, l2(mac(4), mac(3), 0))]
        };
        let mut threads = Vec::new();
        for (i, mut port) in hosts.ports.into_iter().enumerate() {
            let frame = flows.iter().find(|(h, _)| *h == i).map(|(_, f)| f.clone());
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                let mut b = dataplane::FrameBatch::new(32);
                while !stop.load(Ordering::Relaxed) {
                    if let Some(f) = &frame {
                        b.clear();
                        while b.push(f, Nanos::ZERO) {}
                        let _ = dataplane::Port::send_batch(&mut port, &mut b, Nanos::ZERO);
                    }
                    b.clear();
                    let got = dataplane::Port::recv_batch(&mut port, &mut b, Nanos::ZERO);
                    if frame.is_none() && got.unwrap_or(0) == 0 {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                }
            }));
        }
        std::thread::sleep(Duration::from_millis(200));
        let p0 = h.stats().processed;
        let t0 = std::time::Instant::now();
        std::thread::sleep(Duration::from_secs_f64(secs));
        let p1 = h.stats().processed;
        let dt = t0.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            let _ = t.join();
        }
        drop(rt.stop());
        (p1 - p0) as f64 / dt
    }
}

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
//! I/O (`--io`): `inline` runs to completion, each pipeline thread receiving from and sending
//! on its own ports; `threads` adds an rx and a tx thread per port with channels to the
//! pipeline threads (see [`dataplane::runtime`]). Inline is the default: it forwards more on
//! every backend.
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

mod p4runtime;
mod switch;
#[cfg(test)]
mod tests;

pub(crate) use switch::{build_switch, build_switches, switches_of};

use dataplane::switch::{pin_threads, render_metrics, report, Part, SwitchRuntime};

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
use dataplane::runtime::{IoMode, MetricsServer, PortSetup, RuntimeConfig};
use dataplane::{open_port, Clock, LinkConfig, MemHub, PortSpec, WallClock};

use super::CompileArgs;

/// A device port: `N` or `PIPE/PORT`.
pub(crate) fn parse_devport(s: &str) -> Result<u16, String> {
    pipeline::devport::parse(s)
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

/// `pisa run --help` on `--port`: every port backend, and whether this build has it.
fn port_help() -> String {
    let built = |yes: bool, feature: &str| {
        if yes {
            "in this build".to_string()
        } else {
            format!(
                "not in this build: `cargo install --locked --path . --features {feature}` \
                 in the pisa clone builds one with it"
            )
        }
    };
    format!(
        "Forward live between ports instead of replaying captures: DEVPORT=SPEC (repeatable), \
         e.g. `0=afpacket:veth0`; DEVPORT is a number or PIPE/PORT.\n\n\
         Port backends (SPEC):\n  \
         afpacket:IFNAME                      AF_PACKET socket on an interface (in every build)\n  \
         afxdp:IFNAME[,zerocopy][,queue=N]    AF_XDP socket ({})\n  \
         dpdk:PCI_OR_VDEV                     DPDK port, EAL arguments with --dpdk-eal ({})\n  \
         pcap:IN[,out=OUT][,paced]            replay IN on receive, write OUT on send (in every build)\n  \
         mem:NAME                             one end of an in-memory link (in every build)",
        built(cfg!(feature = "afxdp"), "afxdp"),
        built(cfg!(feature = "dpdk"), "dpdk"),
    )
}

/// The live-forwarding options of `pisa run`.
#[derive(Args, Debug, Clone, Default)]
pub struct LiveArgs {
    /// Forward live between ports instead of replaying captures: DEVPORT=SPEC (repeatable),
    /// e.g. `0=afpacket:veth0`; DEVPORT is a number or PIPE/PORT.
    #[arg(long = "port", value_name = "DEVPORT=SPEC", long_help = port_help())]
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
    /// Serve P4Runtime (gRPC) here, e.g. 127.0.0.1:9559 (device id 1). Packet-out and
    /// packet-in go through the CPU port (`--cpu-port`), which the server then holds.
    #[arg(long, value_name = "ADDR")]
    pub p4runtime: Option<SocketAddr>,
    /// The CPU port: where `copy_to_cpu` copies and P4Runtime packet-ins leave the switch, and
    /// where packet-outs enter it.
    #[arg(long, value_name = "DEVPORT", default_value_t = pipeline::switch::DEFAULT_CPU_PORT, value_parser = parse_devport)]
    pub cpu_port: u16,
    /// Frames per batch.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// Packet I/O: `inline` (default; run to completion: each pipeline thread receives from
    /// and sends on its own ports, no hand-off between threads) or `threads` (an rx and a tx
    /// thread per port, channels to and from the pipeline threads). On a 2-core VM (`pisa
    /// bench forward --io both`) inline forwards 1.3-1.6x more than threads on every backend.
    #[arg(long, value_enum, default_value_t = IoArg::Inline)]
    pub io: IoArg,
    /// Inline I/O: a pipeline thread keeps polling its ports for this many microseconds after
    /// its last frame before it sleeps (0: sleeps at once). Polling holds a core but saves
    /// the wake-up per frame; `pisa bench forward --busy-poll` measures the difference.
    #[arg(long, value_name = "MICROS", default_value_t = 0)]
    pub busy_poll: u64,
    /// Do not pin threads to cores.
    #[arg(long)]
    pub no_pin: bool,
    /// EAL arguments for `dpdk:` ports, as one string (e.g. "-l 2 --no-huge -m 512");
    /// default: `--no-huge -m 256` with a per-process file prefix. Needs the `dpdk` feature.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub dpdk_eal: Option<String>,
}

/// `--io`: the runtime's [`IoMode`].
#[derive(ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum IoArg {
    /// Run to completion on the pipeline thread(s).
    #[default]
    Inline,
    /// An rx and a tx thread per port.
    Threads,
}

impl IoArg {
    /// The runtime's mode.
    pub fn mode(self) -> IoMode {
        match self {
            IoArg::Inline => IoMode::Inline,
            IoArg::Threads => IoMode::Threads,
        }
    }
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
        match self {
            PipeThreads::Auto => pipeline::devport::pipes_of(devports).len() > 1,
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
        "--dpdk-eal: this pisa was built without DPDK; build one with it: \
         `cargo install --locked --path . --features afxdp,dpdk` in the pisa clone"
    ))
}

/// Runs the live switch until SIGINT/SIGTERM.
pub fn run(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    args: LiveArgs,
) -> anyhow::Result<ExitCode> {
    let user_ports: Vec<u16> = args.ports.iter().map(|p| p.devport).collect();
    // P4Runtime's packet I/O adds the CPU port (unless a --port is attached there).
    let cpu_added = args.p4runtime.is_some() && !user_ports.contains(&args.cpu_port);
    let mut devports = user_ports.clone();
    if cpu_added {
        devports.push(args.cpu_port);
    }
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
    let thread_pipes = pipeline::devport::pipes_of(&devports);
    let count = if per_pipe { thread_pipes.len() } else { 1 };
    // With P4Runtime the program is compiled here once: the server needs its P4Info too.
    let (switches, p4rt) = match args.p4runtime {
        None => (
            build_switches(
                program_path,
                tables,
                compile,
                args.pipes,
                &args.ports,
                count,
                Some(args.cpu_port),
            )?,
            None,
        ),
        Some(_) => {
            let (sw, p) = p4runtime::switches(program_path, tables, compile, &args, count)?;
            (sw, Some(p))
        }
    };

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
    // The P4Runtime server's end of the CPU port (unless a --port is attached there).
    let mut cpu_end = None;
    if p4rt.is_some() && cpu_added {
        let name = "p4runtime-cpu";
        setups.push(PortSetup {
            devport: args.cpu_port,
            port: Box::new(hub.switch_end(name)?),
            link: LinkConfig::default(),
        });
        cpu_end = Some(hub.host_end(name)?);
    }
    let clock: Arc<dyn Clock> = Arc::new(WallClock::new());
    let cfg = RuntimeConfig {
        batch: args.batch.max(1),
        thread_hook: pin_threads(!args.no_pin, if per_pipe { &thread_pipes } else { &[] }),
        io: args.io.mode(),
        busy_poll: Duration::from_micros(args.busy_poll),
        ..RuntimeConfig::default()
    };
    let rt = SwitchRuntime::start(
        switches,
        per_pipe,
        &thread_pipes,
        setups,
        clock.clone(),
        cfg,
    )?;
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
        Some(path) => Some(control::server::CtlServer::start(path, handle.clone())?),
        None => None,
    };
    let p4rt_server = match (args.p4runtime, p4rt) {
        (Some(addr), Some(p)) => Some(p4runtime::serve(
            addr,
            p,
            program_path,
            compile,
            (cpu_end, args.cpu_port),
            &handle,
            clock.clone(),
        )?),
        _ => None,
    };
    eprintln!(
        "pisa: forwarding on {} port(s) with {} ({} I/O): {}; SIGINT or SIGTERM stops",
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
        args.io.mode(),
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
    drop(p4rt_server);
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

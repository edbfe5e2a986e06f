//! `pisa bench forward`: builds its own copy of the bundled lab, sends precomputed frames from
//! h1 to h2 through pisa on each packet I/O backend (AF_PACKET, AF_XDP, DPDK `net_af_packet`
//! vdevs) and then through the Linux kernel bridge on the same veths, and prints Mpps, latency
//! percentiles and each backend's ratio to the bridge measured in the same round.
//!
//! A round runs every backend and then the bridge, for every frame size; `--rounds N` repeats
//! the whole round (interleaved, so slow drifts of a shared machine hit every switch alike) and
//! the table shows medians over the rounds. Each backend runs once per pisa I/O mode in
//! `--io` (default both, `inline` and `threads`), as separate rows, so the ratios to the bridge
//! compare the modes on the same veths in the same round.
//!
//! The generator is one AF_PACKET socket in h1's namespace that writes bursts of copies of one
//! precomputed frame into its PACKET_MMAP transmit ring (one `send()` per burst), keeping at most
//! `--window` frames in flight; the sink is one AF_PACKET socket in h2's namespace. Both run in
//! this process, pinned to the first core (`--load-core`), so the latency phase timestamps
//! frames with the same monotonic clock on both ends.

mod report;
mod traffic;

use report::{print_json, print_text, summarise, switch_label};
use traffic::{bench_once, Ends};

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use dataplane::runtime::{PortSetup, Runtime, RuntimeConfig, RuntimeStats};
use dataplane::{
    open_port, AfPacketConfig, AfPacketPort, FrameBatch, LinkConfig, MemHub, Nanos, Port, PortSpec,
    WallClock,
};
use serde_json::json;

use super::live::{build_switch, IoArg, PortArg};
use super::{CompileArgs, ReportFormat};
use dataplane::switch::{pin_threads, SwitchPipeline};

/// A packet I/O backend pisa's switch ports can use in the benchmark.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// AF_PACKET sockets on the switch-side veths (PACKET_MMAP rings, the default mode).
    Afpacket,
    /// AF_PACKET sockets in `recvmmsg`/`sendmmsg` mode (no rings), for comparison; not in the
    /// default set.
    AfpacketMmsg,
    /// AF_XDP sockets (copy mode) on the switch-side veths (cargo feature `afxdp`).
    Afxdp,
    /// DPDK `net_af_packet` vdevs on the switch-side veths (cargo feature `dpdk`).
    Dpdk,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Afpacket => "afpacket",
            Backend::AfpacketMmsg => "afpacket-mmsg",
            Backend::Afxdp => "afxdp",
            Backend::Dpdk => "dpdk",
        }
    }

    /// Whether this build of pisa has the backend.
    fn compiled(self) -> bool {
        match self {
            Backend::Afpacket | Backend::AfpacketMmsg => true,
            Backend::Afxdp => cfg!(feature = "afxdp"),
            Backend::Dpdk => cfg!(feature = "dpdk"),
        }
    }

    /// The port spec for switch-side interface `ifname`; `instance` keeps DPDK device names
    /// unique within the process.
    fn spec(self, ifname: &str, instance: usize) -> PortSpec {
        match self {
            Backend::Afpacket | Backend::AfpacketMmsg => PortSpec::AfPacket {
                ifname: ifname.to_string(),
            },
            Backend::Afxdp => PortSpec::AfXdp {
                ifname: ifname.to_string(),
                zerocopy: false,
                queue: 0,
            },
            Backend::Dpdk => PortSpec::Dpdk {
                device: format!("net_af_packet{instance},iface={ifname}"),
            },
        }
    }
}

/// `pisa bench forward`: forwarding throughput and latency through pisa on each packet I/O
/// backend, against the Linux kernel bridge on the same veths in the same run.
#[derive(Args, Debug, Clone)]
pub struct BenchForwardArgs {
    /// The program (default: the bundled p4/programs/l2l3.p4: the file of that path in the
    /// current directory, else the copy built into pisa).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// Its tables (default: the bundled p4/programs/l2l3.tables.yaml, which the bundled lab
    /// matches).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// Backends to measure, comma-separated (default: every backend this pisa was built with).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backends: Vec<Backend>,
    /// Whole rounds (every backend, then the bridge); the table shows medians over rounds.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Seconds of the throughput phase, per frame size and switch.
    #[arg(long, default_value_t = 2.0, value_parser = crate::cmd::seconds)]
    pub seconds: f64,
    /// Frame sizes in bytes (without FCS), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64,1500")]
    pub sizes: Vec<usize>,
    /// Paced rate of the latency phase, frames per second.
    #[arg(long, default_value_t = 10_000)]
    pub latency_pps: u64,
    /// Frames per batch in pisa.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// pisa's packet I/O mode(s) to measure: `inline`, `threads` or `both` (each backend then
    /// runs once per mode per round, as its own row: `afxdp/inline`, `afxdp/threads`).
    #[arg(long, value_enum, default_value_t = BenchIo::Both)]
    pub io: BenchIo,
    /// Inline I/O: pisa's pipeline thread keeps polling for this many microseconds after its
    /// last frame before it sleeps (`pisa run --busy-poll`); 0 sleeps at once.
    #[arg(long, value_name = "MICROS", default_value_t = 0)]
    pub busy_poll: u64,
    /// Copies of the frame the generator hands the kernel per call.
    #[arg(long, default_value_t = 256)]
    pub gen_burst: usize,
    /// Frames the generator keeps in flight at most (sent, not yet counted by the sink); 0
    /// sends open-loop as fast as the kernel takes frames. A window measures what the switch
    /// forwards without the generator burning the shared cores on frames the switch would
    /// drop anyway; frames missing for 1 ms count as lost and free their place.
    #[arg(long, default_value_t = 1024)]
    pub window: u64,
    /// Do not pin pisa's threads to cores.
    #[arg(long)]
    pub no_pin: bool,
    /// The core the generator and the sink run on (with pisa's rx/tx threads; pisa's pipeline
    /// thread gets the last core to itself). Default: the first core, when there are two or
    /// more.
    #[arg(long)]
    pub load_core: Option<usize>,
    /// Let the generator and the sink run on any core.
    #[arg(long)]
    pub no_load_pin: bool,
    /// EAL arguments for the DPDK backend, as one string (default: `--no-huge -m 256` with a
    /// per-process file prefix).
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub dpdk_eal: Option<String>,
    /// `text` for people, `json` for scripts (one object on stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// `--io` of `pisa bench forward`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchIo {
    /// Run-to-completion I/O only.
    Inline,
    /// Rx/tx threads only.
    Threads,
    /// Both, as separate rows.
    Both,
}

impl BenchIo {
    fn modes(self) -> Vec<IoArg> {
        match self {
            BenchIo::Inline => vec![IoArg::Inline],
            BenchIo::Threads => vec![IoArg::Threads],
            BenchIo::Both => vec![IoArg::Inline, IoArg::Threads],
        }
    }
}

/// One measurement: throughput phase and latency phase.
#[derive(Debug, Clone, Copy, Default)]
struct BenchFigures {
    /// Frames per second the generator's socket accepted.
    offered_mpps: f64,
    /// Frames per second that reached the switch-side interface (the rest the kernel dropped
    /// on the way, e.g. a full backlog queue).
    at_switch_mpps: f64,
    /// Frames per second the sink received within the sending window.
    mpps: f64,
    /// p50, p90, p99, p99.9 in microseconds.
    lat_us: [f64; 4],
    lat_samples: u64,
    /// Latency-phase frames sent and received.
    lat_sent: u64,
}

/// One switch's run of one frame size in one round.
#[derive(Debug, Clone)]
struct RunRow {
    round: usize,
    /// `backend/io` for pisa, `bridge` for the kernel bridge.
    switch: String,
    size: usize,
    f: BenchFigures,
    /// pisa's own counters for the run (none for the bridge).
    pisa: Option<PisaCounters>,
}

/// What pisa counted during one run (differences of the runtime's totals).
#[derive(Debug, Clone, Copy, Default)]
struct PisaCounters {
    rx: u64,
    tx: u64,
    rx_drops: u64,
    tx_drops: u64,
    ingress_full: u64,
    egress_full: u64,
}

impl PisaCounters {
    fn of(st: &RuntimeStats) -> PisaCounters {
        let mut c = PisaCounters::default();
        for p in &st.ports {
            c.rx += p.port.rx_packets;
            c.tx += p.port.tx_packets;
            c.rx_drops += p.port.rx_drops.iter().sum::<u64>();
            c.tx_drops += p.port.tx_drops.iter().sum::<u64>();
            c.ingress_full += p.runtime.ingress_full;
            c.egress_full += p.runtime.egress_full;
        }
        c
    }

    fn since(self, before: PisaCounters) -> PisaCounters {
        PisaCounters {
            rx: self.rx - before.rx,
            tx: self.tx - before.tx,
            rx_drops: self.rx_drops - before.rx_drops,
            tx_drops: self.tx_drops - before.tx_drops,
            ingress_full: self.ingress_full - before.ingress_full,
            egress_full: self.egress_full - before.egress_full,
        }
    }
}

/// Set by SIGINT/SIGTERM: the bench stops at the next check and removes its lab and bridge
/// (a second signal exits at once).
static INTERRUPTED: std::sync::OnceLock<Arc<AtomicBool>> = std::sync::OnceLock::new();

fn interrupted() -> bool {
    INTERRUPTED.get().is_some_and(|f| f.load(Ordering::Relaxed))
}

fn check_interrupted() -> anyhow::Result<()> {
    if interrupted() {
        Err(anyhow!(
            "interrupted; the bench's lab and bridge are removed"
        ))
    } else {
        Ok(())
    }
}

fn install_signal_handlers() -> anyhow::Result<()> {
    let flag = INTERRUPTED.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 1, flag.clone())
            .context("cannot install signal handler")?;
        signal_hook::flag::register(sig, flag.clone()).context("cannot install signal handler")?;
    }
    Ok(())
}

/// Removes the bench's lab and bridge on drop.
struct BenchCleanup {
    lab: String,
    bridge: String,
}

impl Drop for BenchCleanup {
    fn drop(&mut self) {
        let _ = dataplane::netns::ip(&["link", "del", "dev", &self.bridge]);
        let _ = dataplane::lab::lab_down(&self.lab);
    }
}

fn open_in(ns: &str, ifname: &str) -> anyhow::Result<AfPacketPort> {
    let name = ifname.to_string();
    Ok(dataplane::netns::in_netns(ns, move || {
        AfPacketPort::open(&name)
    })??)
}

/// Hands `--dpdk-eal` to the DPDK backend before its first port opens.
#[cfg(feature = "dpdk")]
fn set_dpdk_eal(eal: &str) -> anyhow::Result<()> {
    let args = eal.split_whitespace().map(str::to_string).collect();
    dataplane::dpdk::set_eal_args(args).context("--dpdk-eal")
}

#[cfg(not(feature = "dpdk"))]
fn set_dpdk_eal(_eal: &str) -> anyhow::Result<()> {
    Err(anyhow!(
        "--dpdk-eal: this pisa was built without DPDK; build one with it: \
         `cargo install --locked --path . --features afxdp,dpdk` in the pisa clone"
    ))
}

/// Everything one pisa run needs besides the traffic ends.
struct PisaSetup<'a> {
    program: &'a Path,
    tables: &'a Path,
    args: &'a BenchForwardArgs,
    prefix: &'a str,
}

/// Runs pisa with `backend` ports on the lab's switch ports 0 and 1, and every frame size
/// through it.
fn bench_pisa(
    s: &PisaSetup<'_>,
    backend: Backend,
    io: IoArg,
    instance: &mut usize,
    ends: &mut Ends,
    round: usize,
    rows: &mut Vec<RunRow>,
) -> anyhow::Result<()> {
    let ports: Vec<PortArg> = [0u16, 1]
        .iter()
        .map(|&p| {
            *instance += 1;
            PortArg {
                devport: p,
                spec: backend.spec(&format!("{}{p}", s.prefix), *instance),
            }
        })
        .collect();
    let sw = build_switch(s.program, Some(s.tables), &s.args.compile, None, &ports)?;
    // Opened on a scoped thread: DPDK's EAL pins the thread that initialises it, and the
    // generator (this thread) must stay free to run anywhere.
    let setups = std::thread::scope(|sc| {
        sc.spawn(|| -> anyhow::Result<Vec<PortSetup>> {
            let mut setups = Vec::new();
            for p in &ports {
                let port: Box<dyn Port> = match (&p.spec, backend) {
                    (PortSpec::AfPacket { ifname }, Backend::AfpacketMmsg) => {
                        Box::new(AfPacketPort::open_with(
                            ifname,
                            &AfPacketConfig {
                                rx_ring_frames: 0,
                                tx_ring_frames: 0,
                                ..AfPacketConfig::default()
                            },
                        )?)
                    }
                    _ => open_port(&p.spec, &mut MemHub::default())
                        .with_context(|| format!("cannot open {}", p.spec))?,
                };
                setups.push(PortSetup {
                    devport: p.devport,
                    port,
                    link: LinkConfig::default(),
                });
            }
            Ok(setups)
        })
        .join()
        .map_err(|_| anyhow!("opening the ports panicked"))?
    })?;
    let cfg = RuntimeConfig {
        batch: s.args.batch.max(1),
        thread_hook: pin_threads(!s.args.no_pin, &[]),
        io: io.mode(),
        busy_poll: Duration::from_micros(s.args.busy_poll),
        ..RuntimeConfig::default()
    };
    let rt = Runtime::start(
        SwitchPipeline { sw },
        setups,
        Arc::new(WallClock::new()),
        cfg,
    )?;
    // Let an XDP program attach and the sockets settle before traffic.
    std::thread::sleep(Duration::from_millis(200));
    let handle = rt.handle();
    let mut result = Ok(());
    for &size in &s.args.sizes {
        let before = PisaCounters::of(&handle.stats());
        match bench_once(ends, size, s.args.seconds, s.args.latency_pps) {
            Ok(f) => {
                let c = PisaCounters::of(&handle.stats()).since(before);
                rows.push(RunRow {
                    round,
                    switch: switch_label(backend, io),
                    size,
                    f,
                    pisa: Some(c),
                });
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    rt.stop()?;
    result
}

/// Runs every frame size through the kernel bridge `br` on the lab's switch ports 0 and 1;
/// the bridge is deleted again afterwards, so the next pisa run has the veths to itself.
fn bench_bridge(
    s: &PisaSetup<'_>,
    br: &str,
    ends: &mut Ends,
    round: usize,
    rows: &mut Vec<RunRow>,
) -> anyhow::Result<()> {
    use dataplane::netns::ip;
    ip(&["link", "add", "name", br, "type", "bridge"])?;
    let result = (|| -> anyhow::Result<()> {
        for p in 0..2 {
            ip(&[
                "link",
                "set",
                "dev",
                &format!("{}{p}", s.prefix),
                "master",
                br,
            ])?;
        }
        ip(&["link", "set", "dev", br, "up"])?;
        std::thread::sleep(Duration::from_millis(200));
        for &size in &s.args.sizes {
            let f = bench_once(ends, size, s.args.seconds, s.args.latency_pps)?;
            rows.push(RunRow {
                round,
                switch: "bridge".to_string(),
                size,
                f,
                pisa: None,
            });
        }
        Ok(())
    })();
    ip(&["link", "del", "dev", br])?;
    result
}

/// The core for the generator and the sink (see `--load-core`).
fn load_core(args: &BenchForwardArgs) -> Option<core_affinity::CoreId> {
    if args.no_load_pin {
        return None;
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    match args.load_core {
        Some(n) => cores.into_iter().find(|c| c.id == n),
        None if cores.len() >= 2 => cores.first().copied(),
        None => None,
    }
}

/// Runs the forwarding benchmark (needs root).
pub fn bench_forward(args: BenchForwardArgs) -> anyhow::Result<ExitCode> {
    if !dataplane::netns::is_root() {
        return Err(anyhow!(
            "bench forward builds network namespaces and veth pairs: run it as root"
        ));
    }
    let backends: Vec<Backend> = if args.backends.is_empty() {
        [Backend::Afpacket, Backend::Afxdp, Backend::Dpdk]
            .into_iter()
            .filter(|b| b.compiled())
            .collect()
    } else {
        args.backends.clone()
    };
    if let Some(b) = backends.iter().find(|b| !b.compiled()) {
        return Err(anyhow!(
            "--backends {}: this pisa was built without that backend (cargo feature `{}`); \
             build one with every backend: `cargo install --locked --path . --features afxdp,dpdk` \
             in the pisa clone (needs clang and libdpdk-dev, which `bash scripts/test.sh` installs \
             as root), or leave --backends out to measure the ones this build has",
            b.name(),
            b.name()
        ));
    }
    if let Some(eal) = &args.dpdk_eal {
        set_dpdk_eal(eal)?;
    }
    let program_path = match &args.program {
        Some(p) => p.clone(),
        None => pisa::bundled::path("p4/programs/l2l3.p4")?,
    };
    let tables = match &args.tables {
        Some(t) => t.clone(),
        None => pisa::bundled::path("p4/programs/l2l3.tables.yaml")?,
    };
    let id = std::process::id() % 100_000;
    let lab_name = format!("bf{id}");
    let prefix = format!("bf{id}p");
    let text = std::fs::read_to_string(pisa::bundled::path("deploy/labs/l2l3-4hosts.yaml")?)
        .context("cannot read the bundled lab")?
        .replace("name: l2l3-4hosts", &format!("name: {lab_name}"))
        .replace("ifprefix: l2l3p", &format!("ifprefix: {prefix}"));
    let lab = dataplane::lab::Lab::from_yaml(&text)?;
    install_signal_handlers()?;
    let cleanup = BenchCleanup {
        lab: lab_name.clone(),
        bridge: format!("bf{id}br"),
    };
    let state = dataplane::lab::lab_up(&lab)?;
    let gen_ns = state.host("h1")?.netns.clone();
    let sink_ns = state.host("h2")?.netns.clone();
    let mut ends = Ends {
        gen: open_in(&gen_ns, "eth0")?,
        sink: Some(open_in(&sink_ns, "eth0")?),
        switch_in: format!("{prefix}0"),
        gen_burst: args.gen_burst.max(1),
        core: load_core(&args),
        window: args.window,
    };
    let setup = PisaSetup {
        program: &program_path,
        tables: &tables,
        args: &args,
        prefix: &prefix,
    };
    let ios = args.io.modes();
    let mut rows = Vec::new();
    let mut instance = 0usize;
    let rounds = args.rounds.max(1);
    let steps = rounds * (backends.len() * ios.len() + 1);
    let mut progress = pisa::progress::Progress::new(steps as u64, "bench forward");
    for round in 0..rounds {
        for &b in &backends {
            for &io in &ios {
                check_interrupted()?;
                let label = switch_label(b, io);
                progress.start(&format!("round {}/{rounds}: pisa on {label}", round + 1));
                bench_pisa(&setup, b, io, &mut instance, &mut ends, round, &mut rows)
                    .with_context(|| format!("pisa on {label}"))?;
                progress.step();
            }
        }
        progress.start(&format!("round {}/{rounds}: kernel bridge", round + 1));
        bench_bridge(&setup, &cleanup.bridge, &mut ends, round, &mut rows)
            .context("kernel bridge")?;
        progress.step();
    }
    progress.finish();
    drop(ends);
    drop(cleanup);
    let mut switches: Vec<String> = backends
        .iter()
        .flat_map(|&b| ios.iter().map(move |&io| switch_label(b, io)))
        .collect();
    switches.push("bridge".to_string());
    let summary = summarise(&rows, &switches, &args.sizes);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match args.report {
        ReportFormat::Text => print_text(&args, &rows, &summary, cores),
        ReportFormat::Json => print_json(&args, &rows, &summary, cores),
    }
    Ok(ExitCode::SUCCESS)
}

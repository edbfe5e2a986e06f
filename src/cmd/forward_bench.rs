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

use super::live::{build_switch, thread_hook, IoArg, PortArg, SwitchPipeline};
use super::{CompileArgs, ReportFormat};

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
    /// The program (default: the bundled l2l3.p4).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// Its tables (default: p4/programs/l2l3.tables.yaml, which the bundled lab matches).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// Backends to measure, comma-separated (default: every backend this pisa was built with).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub backends: Vec<Backend>,
    /// Whole rounds (every backend, then the bridge); the table shows medians over rounds.
    #[arg(long, default_value_t = 1)]
    pub rounds: usize,
    /// Seconds of the throughput phase, per frame size and switch.
    #[arg(long, default_value_t = 2.0)]
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

const BENCH_ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const BENCH_MAGIC: u32 = 0x7069_7361; // "pisa"

/// The generator, the sink and what they need to know about the lab.
struct Ends {
    gen: AfPacketPort,
    sink: Option<AfPacketPort>,
    /// The switch-side interface the generator's frames arrive on (root namespace).
    switch_in: String,
    gen_burst: usize,
    window: u64,
    /// Where the generator and the sink run (`None`: anywhere).
    core: Option<core_affinity::CoreId>,
}

/// Pins the calling thread to `core`, if one is given.
fn pin(core: Option<core_affinity::CoreId>) {
    if let Some(c) = core {
        if !core_affinity::set_for_current(c) {
            tracing::debug!(core = c.id, "could not pin the load thread");
        }
    }
}

/// The kernel's receive counter of a root-namespace interface.
fn rx_packets(ifname: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{ifname}/statistics/rx_packets"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Waits until `received` has not moved for 300 ms (at most 20 s): every queue on the way
/// has drained.
fn wait_quiet(received: &AtomicU64) {
    let t = Instant::now();
    let mut last = received.load(Ordering::Relaxed);
    let mut since = Instant::now();
    while since.elapsed() < Duration::from_millis(300)
        && t.elapsed() < Duration::from_secs(20)
        && !interrupted()
    {
        std::thread::sleep(Duration::from_millis(50));
        let n = received.load(Ordering::Relaxed);
        if n != last {
            last = n;
            since = Instant::now();
        }
    }
}

/// A blast of `size`-byte frames for `seconds`, then `latency_pps` paced, timestamped frames
/// for one second. Timestamps come from `base` (same process, same monotonic clock).
fn bench_once(
    ends: &mut Ends,
    size: usize,
    seconds: f64,
    latency_pps: u64,
) -> anyhow::Result<BenchFigures> {
    let base = Instant::now();
    let size = size.clamp(60, 1514);
    let mut template = vec![0u8; size];
    // h1 -> h2, the lab's addressing (p4/programs/l2l3.tables.yaml).
    template[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    template[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    template[12..14].copy_from_slice(&BENCH_ETHERTYPE);
    template[14..18].copy_from_slice(&BENCH_MAGIC.to_be_bytes());
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let sink = ends
        .sink
        .take()
        .ok_or_else(|| anyhow!("the sink was lost"))?;
    // Sink thread: counts phase-0 frames, records phase-1 latencies.
    let core = ends.core;
    let sink_thread = {
        let stop = stop.clone();
        let received = received.clone();
        std::thread::spawn(move || {
            pin(core);
            let mut sink = sink;
            let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .expect("valid histogram bounds");
            let mut counts = [0u64; 2];
            let mut b = FrameBatch::with_buffers(256, 2048);
            while !stop.load(Ordering::Acquire) {
                b.clear();
                match sink.recv_batch(&mut b, Nanos::ZERO) {
                    Ok(0) => {
                        let _ = sink.wait_readable(Duration::from_millis(5));
                    }
                    Ok(_) => {
                        let now = base.elapsed().as_nanos() as u64;
                        for f in b.iter() {
                            let d = &f.data;
                            if d.len() < 27
                                || d[12..14] != BENCH_ETHERTYPE
                                || d[14..18] != BENCH_MAGIC.to_be_bytes()
                            {
                                continue;
                            }
                            let ph = usize::from(d[18] & 1);
                            counts[ph] += 1;
                            received.fetch_add(1, Ordering::Relaxed);
                            if ph == 1 {
                                let mut t = [0u8; 8];
                                t.copy_from_slice(&d[19..27]);
                                let sent = u64::from_be_bytes(t);
                                let _ = hist.record(now.saturating_sub(sent).max(1));
                            }
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
            (counts, hist, sink)
        })
    };
    let load = Load {
        switch_in: ends.switch_in.as_str(),
        burst: ends.gen_burst,
        window: ends.window,
        received: &received,
    };
    let gen = &mut ends.gen;
    let phases = std::thread::scope(|sc| {
        sc.spawn(|| {
            pin(core);
            generate(gen, &load, &template, seconds, latency_pps, base)
        })
        .join()
    });
    wait_quiet(&received);
    stop.store(true, Ordering::Release);
    let (counts, hist, sink) = sink_thread
        .join()
        .map_err(|_| anyhow!("the sink thread panicked"))?;
    ends.sink = Some(sink);
    let g = phases.map_err(|_| anyhow!("the generator thread panicked"))??;
    let q = |p: f64| hist.value_at_quantile(p) as f64 / 1000.0;
    Ok(BenchFigures {
        offered_mpps: g.sent as f64 / g.elapsed / 1e6,
        at_switch_mpps: g.at_switch as f64 / g.elapsed / 1e6,
        mpps: g.in_window.min(counts[0]) as f64 / g.elapsed / 1e6,
        lat_us: [q(0.5), q(0.9), q(0.99), q(0.999)],
        lat_samples: hist.len(),
        lat_sent: g.lat_sent,
    })
}

/// What the generator saw.
struct GenResult {
    sent: u64,
    elapsed: f64,
    /// Frames the sink had counted when the sending window closed.
    in_window: u64,
    at_switch: u64,
    lat_sent: u64,
}

/// How the generator sends.
struct Load<'a> {
    switch_in: &'a str,
    burst: usize,
    window: u64,
    /// The sink's count of bench frames.
    received: &'a AtomicU64,
}

/// The generator's two phases: bursts of copies of `template` for `seconds`, then paced,
/// timestamped frames for one second (after everything of the first phase drained).
fn generate(
    gen: &mut AfPacketPort,
    load: &Load<'_>,
    template: &[u8],
    seconds: f64,
    latency_pps: u64,
    base: Instant,
) -> anyhow::Result<GenResult> {
    let (switch_in, received) = (load.switch_in, load.received);
    // Throughput phase: the kernel gets bursts of copies of one precomputed frame.
    let d = Duration::from_secs_f64(seconds.max(0.1));
    let received0 = received.load(Ordering::Relaxed);
    // Frames given up as lost (window mode), and when the sink last made progress.
    let mut lost = 0u64;
    let mut last_seen = received0;
    let mut progress = Instant::now();
    let at_switch0 = rx_packets(switch_in);
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed() < d {
        check_interrupted()?;
        let mut want = load.burst;
        if load.window > 0 {
            let got = received.load(Ordering::Relaxed);
            if got != last_seen {
                last_seen = got;
                progress = Instant::now();
            }
            let in_flight = sent.saturating_sub(got - received0 + lost);
            if in_flight >= load.window {
                if progress.elapsed() >= Duration::from_millis(1) {
                    // Nothing arrived for 1 ms: what is still out is lost.
                    lost += in_flight;
                    progress = Instant::now();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
                continue;
            }
            want = want.min((load.window - in_flight) as usize);
        }
        sent += gen.send_copies(template, want)? as u64;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    // Frames delivered within the sending window (not the backlog delivered afterwards).
    let in_window = received.load(Ordering::Relaxed);
    let at_switch = rx_packets(switch_in).saturating_sub(at_switch0);
    wait_quiet(received);
    // Latency phase: paced, one timestamped frame per send.
    let mut frame = template.to_vec();
    frame[18] = 1;
    let gap = Duration::from_secs_f64(1.0 / latency_pps.max(1) as f64);
    let mut batch = FrameBatch::new(1);
    let t1 = Instant::now();
    let mut next = t1;
    let mut lat_sent = 0u64;
    while t1.elapsed() < Duration::from_secs(1) {
        check_interrupted()?;
        let now = Instant::now();
        if now < next {
            // Sleep, never spin: the generator shares its core with pisa's I/O threads and the
            // sink, and a spinning generator would put its time slice into every latency.
            std::thread::sleep(next - now);
            continue;
        }
        next += gap;
        let ts = base.elapsed().as_nanos() as u64;
        frame[19..27].copy_from_slice(&ts.to_be_bytes());
        batch.push(&frame, Nanos::ZERO);
        lat_sent += gen.send_batch(&mut batch, Nanos::ZERO)? as u64;
    }
    Ok(GenResult {
        sent,
        elapsed,
        in_window,
        at_switch,
        lat_sent,
    })
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
        "--dpdk-eal: this pisa was built without DPDK; rebuild with `--features dpdk`"
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
        thread_hook: thread_hook(!s.args.no_pin),
        io: io.mode(),
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

/// A pisa row's switch column: backend and I/O mode.
fn switch_label(backend: Backend, io: IoArg) -> String {
    let io = match io {
        IoArg::Inline => "inline",
        IoArg::Threads => "threads",
    };
    format!("{}/{io}", backend.name())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Medians over rounds of one switch and frame size; the ratio is the median of the
/// per-round ratios to the bridge.
#[derive(Debug, Clone)]
struct Summary {
    switch: String,
    size: usize,
    offered_mpps: f64,
    at_switch_mpps: f64,
    mpps: f64,
    lat_us: [f64; 4],
    ratio: Option<f64>,
}

fn summarise(rows: &[RunRow], switches: &[String], sizes: &[usize]) -> Vec<Summary> {
    let mut out = Vec::new();
    for &size in sizes {
        for sw in switches {
            let mine: Vec<&RunRow> = rows
                .iter()
                .filter(|r| r.switch == *sw && r.size == size)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let m = |get: &dyn Fn(&BenchFigures) -> f64| {
                median(mine.iter().map(|r| get(&r.f)).collect())
            };
            let ratio = if sw == "bridge" {
                None
            } else {
                let per_round: Vec<f64> = mine
                    .iter()
                    .filter_map(|r| {
                        rows.iter()
                            .find(|b| b.switch == "bridge" && b.size == size && b.round == r.round)
                            .filter(|b| b.f.mpps > 0.0)
                            .map(|b| r.f.mpps / b.f.mpps)
                    })
                    .collect();
                (!per_round.is_empty()).then(|| median(per_round))
            };
            out.push(Summary {
                switch: sw.clone(),
                size,
                offered_mpps: m(&|f| f.offered_mpps),
                at_switch_mpps: m(&|f| f.at_switch_mpps),
                mpps: m(&|f| f.mpps),
                lat_us: [0, 1, 2, 3].map(|i| m(&|f| f.lat_us[i])),
                ratio,
            });
        }
    }
    out
}

fn print_text(args: &BenchForwardArgs, rows: &[RunRow], summary: &[Summary], cores: usize) {
    println!(
        "forwarding h1 -> h2 through pisa (l2l3.p4) and the kernel bridge on the same veths: \
         {} round(s) of {} s per switch and size, latency at {} frames/s, {} CPU core(s)",
        args.rounds.max(1),
        args.seconds,
        args.latency_pps,
        cores
    );
    println!(
        "per run (offered = frames the generator's socket took, at switch = arrived on the switch-side veth):"
    );
    for r in rows {
        let extra = match r.pisa {
            Some(c) => format!(
                "  pisa rx {} tx {} rx drops {} tx drops {} ingress full {} egress full {}",
                c.rx, c.tx, c.rx_drops, c.tx_drops, c.ingress_full, c.egress_full
            ),
            None => String::new(),
        };
        println!(
            "  round {} {:>5} B {:<15} offered {:.3} at switch {:.3} forwarded {:.3} Mpps, p50 {:.1} us, latency frames {}/{}{}",
            r.round + 1,
            r.size,
            r.switch,
            r.f.offered_mpps,
            r.f.at_switch_mpps,
            r.f.mpps,
            r.f.lat_us[0],
            r.f.lat_samples,
            r.f.lat_sent,
            extra
        );
    }
    println!();
    println!("medians over rounds:");
    println!(
        "{:>6} {:<15} {:>9} {:>10} {:>9} {:>8} {:>8} {:>8} {:>9} {:>9}",
        "size",
        "switch",
        "offered",
        "at switch",
        "fwd Mpps",
        "p50 us",
        "p90 us",
        "p99 us",
        "p99.9 us",
        "/ bridge"
    );
    for s in summary {
        println!(
            "{:>6} {:<15} {:>9.3} {:>10.3} {:>9.3} {:>8.1} {:>8.1} {:>8.1} {:>9.1} {:>9}",
            s.size,
            s.switch,
            s.offered_mpps,
            s.at_switch_mpps,
            s.mpps,
            s.lat_us[0],
            s.lat_us[1],
            s.lat_us[2],
            s.lat_us[3],
            s.ratio.map_or("-".to_string(), |r| format!("{r:.3}"))
        );
    }
}

fn print_json(args: &BenchForwardArgs, rows: &[RunRow], summary: &[Summary], cores: usize) {
    let fig = |f: &BenchFigures| {
        json!({
            "offered_mpps": f.offered_mpps,
            "at_switch_mpps": f.at_switch_mpps,
            "forwarded_mpps": f.mpps,
            "latency_us": {"p50": f.lat_us[0], "p90": f.lat_us[1], "p99": f.lat_us[2], "p99_9": f.lat_us[3]},
            "latency_frames_sent": f.lat_sent,
            "latency_frames_received": f.lat_samples,
        })
    };
    let runs: Vec<_> = rows
        .iter()
        .map(|r| {
            let mut v = fig(&r.f);
            v["round"] = json!(r.round + 1);
            v["switch"] = json!(r.switch);
            v["size"] = json!(r.size);
            if let Some(c) = r.pisa {
                v["pisa"] = json!({
                    "rx": c.rx, "tx": c.tx, "rx_drops": c.rx_drops, "tx_drops": c.tx_drops,
                    "ingress_full": c.ingress_full, "egress_full": c.egress_full,
                });
            }
            v
        })
        .collect();
    let medians: Vec<_> = summary
        .iter()
        .map(|s| {
            json!({
                "switch": s.switch,
                "size": s.size,
                "offered_mpps": s.offered_mpps,
                "at_switch_mpps": s.at_switch_mpps,
                "forwarded_mpps": s.mpps,
                "latency_us": {"p50": s.lat_us[0], "p90": s.lat_us[1], "p99": s.lat_us[2], "p99_9": s.lat_us[3]},
                "ratio_to_bridge": s.ratio,
            })
        })
        .collect();
    let doc = json!({
        "bench": "forward",
        "rounds": args.rounds.max(1),
        "seconds": args.seconds,
        "latency_pps": args.latency_pps,
        "cpu_cores": cores,
        "runs": runs,
        "medians": medians,
    });
    println!(
        "{}",
        serde_json::to_string_pretty(&doc).unwrap_or_else(|_| doc.to_string())
    );
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
            "--backends {}: this pisa was built without it; rebuild with `--features {}`",
            b.name(),
            b.name()
        ));
    }
    if let Some(eal) = &args.dpdk_eal {
        set_dpdk_eal(eal)?;
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program_path = args
        .program
        .clone()
        .unwrap_or_else(|| root.join("p4/programs/l2l3.p4"));
    let tables = args
        .tables
        .clone()
        .unwrap_or_else(|| root.join("p4/programs/l2l3.tables.yaml"));
    let id = std::process::id() % 100_000;
    let lab_name = format!("bf{id}");
    let prefix = format!("bf{id}p");
    let text = std::fs::read_to_string(root.join("deploy/labs/l2l3-4hosts.yaml"))
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
    for round in 0..rounds {
        for &b in &backends {
            for &io in &ios {
                check_interrupted()?;
                let label = switch_label(b, io);
                eprintln!("round {}/{rounds}: pisa on {label}", round + 1);
                bench_pisa(&setup, b, io, &mut instance, &mut ends, round, &mut rows)
                    .with_context(|| format!("pisa on {label}"))?;
            }
        }
        eprintln!("round {}/{rounds}: kernel bridge", round + 1);
        bench_bridge(&setup, &cleanup.bridge, &mut ends, round, &mut rows)
            .context("kernel bridge")?;
    }
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

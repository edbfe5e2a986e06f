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
use dataplane::runtime::{
    render_prometheus, MetricsServer, Pipeline, PortSetup, Runtime, RuntimeConfig, RuntimeHandle,
    RuntimeStats, ThreadRole,
};
use dataplane::{open_port, Clock, LinkConfig, MemHub, Nanos, PortSpec, WallClock};
use pipeline::api::PipeSel;
use pipeline::switch::{InFrame, Switch, SwitchConfig};

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
    /// Hardware pipes (1..=4); device port = pipe << 7 | port. Default: the program's.
    #[arg(long)]
    pub pipes: Option<u16>,
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

/// The handle `pisa ctl` requests go through.
pub type Handle = RuntimeHandle<SwitchPipeline>;

pub(crate) fn build_switch(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    pipes: Option<u16>,
    ports: &[PortArg],
) -> anyhow::Result<Switch> {
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
    let mut sw = Switch::new(prog, cfg).context("cannot build the switch")?;
    if let Some(t) = tables {
        let file = control::tables_file::load(t)
            .with_context(|| format!("cannot read table file `{}`", t.display()))?;
        control::tables_file::apply(&mut sw, &file)
            .with_context(|| format!("cannot apply table file `{}`", t.display()))?;
    }
    Ok(sw)
}

pub(crate) fn thread_hook(enabled: bool) -> Option<dataplane::runtime::ThreadHook> {
    if !enabled {
        return None;
    }
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 {
        return None;
    }
    // The pipeline gets the last core to itself; I/O threads share the others.
    let pipeline_core = cores[cores.len() - 1];
    let io: Vec<_> = cores[..cores.len() - 1].to_vec();
    Some(Arc::new(move |role: ThreadRole| {
        let core = match role {
            ThreadRole::Pipeline => pipeline_core,
            ThreadRole::Rx(p) | ThreadRole::Tx(p) => io[p as usize % io.len()],
        };
        if !core_affinity::set_for_current(core) {
            tracing::debug!(?role, core = core.id, "could not pin thread");
        }
    }))
}

/// Prometheus text: the runtime's port metrics plus the switch's drops and queues.
fn render_metrics(h: &Handle) -> String {
    let mut s = render_prometheus(&h.stats());
    let ports = h.devports();
    let sw = h.call(Duration::from_secs(2), move |p: &mut SwitchPipeline| {
        let st = p.sw.stats();
        let drops: Vec<(&'static str, u64)> = pipeline::switch::DropReason::ALL
            .iter()
            .map(|r| (r.name(), st.dropped(*r)))
            .collect();
        let queues: Vec<_> = ports
            .iter()
            .filter_map(|&d| p.sw.port_queue_stats(d).ok().map(|q| (d, q)))
            .collect();
        (drops, queues)
    });
    if let Ok((drops, queues)) = sw {
        let _ = writeln!(
            s,
            "# HELP pisa_switch_drops_total Packets the switch dropped, by reason.\n# TYPE pisa_switch_drops_total counter"
        );
        for (r, n) in drops {
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
    let sw = build_switch(program_path, tables, compile, args.pipes, &args.ports)?;

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
        thread_hook: thread_hook(!args.no_pin),
        ..RuntimeConfig::default()
    };
    let rt = Runtime::start(SwitchPipeline { sw }, setups, clock, cfg)?;
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
        "pisa: forwarding on {} port(s): {}; SIGINT or SIGTERM stops",
        args.ports.len(),
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
    let (p, stats) = rt.stop()?;
    print!("{}", report(&p.sw, &stats));
    Ok(ExitCode::SUCCESS)
}

/// The end-of-run report: per port, switch drops, queues and tables.
pub fn report(sw: &Switch, st: &RuntimeStats) -> String {
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
    let ss = sw.stats();
    let _ = writeln!(s, "switch drops: {}", ss.total_drops());
    for r in pipeline::switch::DropReason::ALL {
        let n = ss.dropped(r);
        if n > 0 {
            let _ = writeln!(s, "  {r}: {n}");
        }
    }
    let _ = writeln!(s, "queues:");
    for p in &st.ports {
        if let Ok(q) = sw.port_queue_stats(p.devport) {
            let _ = writeln!(
                s,
                "  port {:>3}: enqueued {} dropped {} ecn_marked {} max_depth {} B",
                p.devport, q.enqueued, q.dropped, q.marked, q.max_depth_bytes
            );
        }
    }
    let _ = writeln!(s, "tables:");
    let prog = sw.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if let Ok(n) = sw.table_len(PipeSel::All, &t.name) {
                let (hits, misses) = sw.table_hit_miss(PipeSel::All, &t.name).unwrap_or((0, 0));
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
                if let Ok(cells) = sw.counter_read(PipeSel::All, &c.name, i) {
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
        let r = report(&p.sw, &st);
        assert!(r.contains("SwitchIngress.mac_dst: 4 entries"), "{r}");
        assert!(
            r.contains("ingress_port_counter[0] pipe 0: 1 packets"),
            "{r}"
        );
    }
}

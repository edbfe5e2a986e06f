//! `pisa acuerdo bench`: Acuerdo (`hosts::acuerdo`) on the in-memory lab of one switch
//! (`labs::acuerdo`), in virtual time: latency and throughput per client window (Figure 8's
//! shape), election time with the diff when `--crash leader@T` (Table 1's shape), each beside
//! the paper's numbers; `--mode mu` runs the Mu-style log (`hosts::mu`, unicast, on the P4CE
//! lab) on the same endpoint for comparison, `--mode switch` Acuerdo with the leader's
//! broadcast through the switch's replication (a P4CE group, one WRITE per message). Every Acuerdo run ends with the atomic-broadcast
//! check over every node's delivered log (integrity, no duplication, total order); a failed
//! check makes the command exit non-zero. `--log-dir DIR` writes each node's log as
//! `deliveries-<node>.jsonl`, `--plot FILE.svg` draws latency against throughput.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use hosts::acuerdo::ycsb::Ycsb;
use labs::acuerdo::bench::{self, BenchConfig, BenchReport};
use labs::acuerdo::ycsb::YcsbReport;
use labs::acuerdo::MAX_NODES;

use super::consensus::{duration, faults};
use super::ReportFormat;

/// Acuerdo commands.
#[derive(Subcommand, Debug)]
pub enum AcuerdoCommand {
    /// Broadcast with a window of messages in flight; report latency, throughput, elections.
    Bench(AcuerdoBenchArgs),
    /// YCSB-load writes through a replicated key-value store: Acuerdo's hash table, or real
    /// etcd / ZooKeeper servers started for the run (Figure 9), in wall-clock time.
    Ycsb(YcsbArgs),
    /// Check that the `deliveries-<node>.jsonl` logs of a `--log-dir` agree (integrity of
    /// positions, no duplication, total order).
    Check(CheckArgs),
}

/// `pisa acuerdo check`.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The directory `pisa acuerdo bench --log-dir` wrote.
    pub dir: PathBuf,
}

/// Which system stores the writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SystemArg {
    /// Acuerdo's replicated hash table: a thread per node and one for the switch model,
    /// in-memory links, wall clock.
    Acuerdo,
    /// etcd (Debian package etcd-server), servers on loopback.
    Etcd,
    /// Apache ZooKeeper (Debian package zookeeper), servers on loopback.
    Zookeeper,
}

/// `pisa acuerdo ycsb`.
#[derive(Args, Debug, Clone)]
pub struct YcsbArgs {
    /// The system; a comma-separated list runs each.
    #[arg(long, value_enum, default_value = "acuerdo", value_delimiter = ',')]
    pub system: Vec<SystemArg>,
    /// Replicas (3, 5 or 7 in the paper; 1 to 9 here); a comma-separated list runs each.
    #[arg(long, default_value = "3", value_delimiter = ',')]
    pub nodes: Vec<usize>,
    /// Writes.
    #[arg(long, default_value_t = 2000)]
    pub ops: usize,
    /// Client connections for etcd and ZooKeeper, writes in flight for Acuerdo.
    #[arg(long, default_value_t = 16)]
    pub clients: usize,
    /// `text` or `json` (key `ops_per_sec`).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    /// Acuerdo in network namespaces (root): the bench's lab, every node a thread in its
    /// namespace, the switch on veths (instead of threads on in-memory links).
    #[arg(long)]
    pub netns: bool,
}

/// Which protocol runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// Acuerdo: ring buffers, SSTs, quorum commit.
    Acuerdo,
    /// The Mu-style log of `hosts::mu` by unicast (3 to 5 nodes: the P4CE lab's limit).
    Mu,
    /// Acuerdo with the leader's broadcast through the switch's replication: one WRITE to a
    /// P4CE group (`p4ce.p4`) instead of one per follower (2 to 5 nodes, in memory).
    Switch,
}

/// `pisa acuerdo bench`.
#[derive(Args, Debug, Clone)]
pub struct AcuerdoBenchArgs {
    /// Nodes, leader included (2 to 9); a comma-separated list runs each.
    #[arg(long, default_value = "3", value_delimiter = ',')]
    pub nodes: Vec<usize>,
    /// Bytes per message (at least 8: each carries its client sequence number).
    #[arg(long, default_value_t = 10)]
    pub size: usize,
    /// Messages in flight; a comma-separated list (1,2,4,...) runs each (Figure 8's curve).
    #[arg(long, default_value = "1", value_delimiter = ',')]
    pub window: Vec<usize>,
    /// Protocol.
    #[arg(long, value_enum, default_value_t = ModeArg::Acuerdo)]
    pub mode: ModeArg,
    /// Measured virtual time per run, e.g. 2ms, 0.5s.
    #[arg(long, default_value = "2ms")]
    pub duration: String,
    /// Crash the leader this long after the client starts: `leader@0.3ms`.
    #[arg(long)]
    pub crash: Option<String>,
    /// With --crash: crash the leader of the time again every as long, this many times in all
    /// (at most f = (nodes-1)/2); Table 1 averages the elections.
    #[arg(long, default_value_t = 1)]
    pub crashes: usize,
    /// Write each node's delivered log here (`deliveries-<node>.jsonl`; one subdirectory
    /// per run when there are several).
    #[arg(long)]
    pub log_dir: Option<PathBuf>,
    /// Draw latency against throughput (SVG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Probability that a frame is lost on every host link, each direction.
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// Probability that a frame is delivered twice.
    #[arg(long, default_value_t = 0.0)]
    pub dup: f64,
    /// Probability that a frame is held back so later frames overtake it.
    #[arg(long, default_value_t = 0.0)]
    pub reorder: f64,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    /// Run in network namespaces (root): the same lab, every node a thread in its namespace,
    /// the switch on veths, in wall-clock time (heartbeat 2 ms, failure timeout 200 ms).
    #[arg(long)]
    pub netns: bool,
}

pub fn run(cmd: AcuerdoCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        AcuerdoCommand::Bench(a) => bench_cmd(a),
        AcuerdoCommand::Ycsb(a) => ycsb_cmd(a),
        AcuerdoCommand::Check(a) => {
            let v = bench::check_log_dir(&a.dir).map_err(|e| anyhow!(e))?;
            println!("{v}");
            Ok(if v.ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
    }
}

/// Runs one system under YCSB-load.
pub(crate) fn ycsb_one(
    system: SystemArg,
    nodes: usize,
    ops: usize,
    clients: usize,
    netns: bool,
) -> anyhow::Result<YcsbReport> {
    let w = Ycsb::load();
    Ok(match system {
        SystemArg::Acuerdo => {
            if !(2..=MAX_NODES).contains(&nodes) {
                bail!("--nodes {nodes}: Acuerdo's lab has 2 to {MAX_NODES}");
            }
            if netns {
                labs::acuerdo::ycsb::run_on::<labs::NetnsApps>(nodes, ops, clients, w)?
            } else {
                labs::acuerdo::realtime::run(nodes, ops, clients, w)?
            }
        }
        SystemArg::Etcd => labs::baselines::etcd::run(nodes, ops, w, clients)?,
        SystemArg::Zookeeper => labs::baselines::zookeeper::run(nodes, ops, w, clients)?,
    })
}

/// Figure 9's shape: ops/s per system and node count, and Acuerdo's ratio to each.
pub(crate) fn figure9(reports: &[YcsbReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>10} {:>5} {:>7} {:>9} {:>12} {:>10}  how",
        "system", "nodes", "ops", "wall s", "ops/s", "acuerdo x"
    );
    for r in reports {
        let ac = reports
            .iter()
            .find(|a| a.system == "acuerdo" && a.nodes == r.nodes)
            .map(|a| a.ops_per_sec / r.ops_per_sec);
        let _ = writeln!(
            s,
            "{:>10} {:>5} {:>7} {:>9.2} {:>12.0} {:>10}  {}{}",
            r.system,
            r.nodes,
            r.ops,
            r.wall_s,
            r.ops_per_sec,
            ac.map_or("-".into(), |x| format!("{x:.1}")),
            r.how,
            if r.ok {
                String::new()
            } else {
                format!(" FAILED: {}", r.note)
            }
        );
    }
    let _ = writeln!(
        s,
        "paper (Fig. 9, YCSB-load): Acuerdo ~10x ZooKeeper and ~50x etcd in ops/s"
    );
    s
}

fn ycsb_cmd(a: YcsbArgs) -> anyhow::Result<ExitCode> {
    if a.ops == 0 || a.clients == 0 || a.nodes.iter().any(|n| !(1..=MAX_NODES).contains(n)) {
        bail!("--ops and --clients at least 1, --nodes 1 to {MAX_NODES}");
    }
    if a.netns && !dataplane::netns::is_root() {
        bail!("--netns needs root (network namespaces, veth pairs, AF_PACKET)");
    }
    let mut reports = Vec::new();
    for &n in &a.nodes {
        for &sys in &a.system {
            reports.push(
                ycsb_one(sys, n, a.ops, a.clients, a.netns)
                    .with_context(|| format!("{sys:?} with {n} nodes"))?,
            );
        }
    }
    match a.report {
        ReportFormat::Json => match reports.as_slice() {
            [r] => println!("{}", serde_json::to_string(r)?),
            rs => println!("{}", serde_json::to_string(rs)?),
        },
        ReportFormat::Text => {
            print!("{}", figure9(&reports));
            for r in reports.iter().filter(|r| !r.note.is_empty()) {
                println!("{} {} nodes: {}", r.system, r.nodes, r.note);
            }
        }
    }
    Ok(if reports.iter().all(|r| r.ok) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `pisa demo acuerdo`: Figure 8 (3 and 7 nodes, 10-byte messages, windows 1 to 64),
/// Table 1 (f successive leader crashes at 3, 5, 7, 9 nodes, averaged) and Figure 9 (YCSB-load on Acuerdo, etcd
/// and ZooKeeper, 3 nodes), each beside the paper's numbers.
pub fn demo(a: AcuerdoDemoArgs) -> anyhow::Result<ExitCode> {
    println!("== Figure 8: broadcast latency and throughput per window (virtual time)");
    let mut fig8 = Vec::new();
    for nodes in [3, 7] {
        for window in [1, 4, 16, 64] {
            let cfg = BenchConfig {
                nodes,
                size: 10,
                window,
                duration_ns: 1_000_000,
                crash_leader_ns: None,
                crashes: 0,
                faults: None,
                netns: false,
                switch: false,
            };
            fig8.push(bench::run(&cfg)?.0);
        }
    }
    print!("{}", bench::figure8(&fig8));
    println!("\n== Table 1: election time with the diff after a leader crash (virtual time)");
    let mut t1 = Vec::new();
    for nodes in [3, 5, 7, 9] {
        let cfg = BenchConfig {
            nodes,
            size: 10,
            window: 4,
            duration_ns: 1_500_000,
            crash_leader_ns: Some(300_000),
            crashes: (nodes - 1) / 2,
            faults: None,
            netns: false,
            switch: false,
        };
        t1.push(bench::run(&cfg)?.0);
    }
    print!("{}", bench::table1(&t1));
    println!("\n== Figure 9: YCSB-load writes per second (wall clock, this machine)");
    let mut f9 = Vec::new();
    for sys in [SystemArg::Acuerdo, SystemArg::Etcd, SystemArg::Zookeeper] {
        match ycsb_one(sys, 3, a.ops, 16, false) {
            Ok(r) => f9.push(r),
            Err(e) => println!("{sys:?}: not measured: {e:#}"),
        }
    }
    print!("{}", figure9(&f9));
    let ok = fig8.iter().chain(&t1).all(|r| r.agreement.ok) && f9.iter().all(|r| r.ok);
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `pisa demo acuerdo`.
#[derive(Args, Debug, Clone)]
pub struct AcuerdoDemoArgs {
    /// Writes per system for Figure 9.
    #[arg(long, default_value_t = 2000)]
    pub ops: usize,
}

/// `leader@DURATION` → nanoseconds.
fn crash_spec(s: &str) -> anyhow::Result<u64> {
    let at = s
        .strip_prefix("leader@")
        .ok_or_else(|| anyhow!("--crash {s:?}: expected leader@DURATION, e.g. leader@0.3ms"))?;
    dataplane::link::parse_duration(at)
        .filter(|ns| *ns > 0)
        .ok_or_else(|| anyhow!("--crash {s:?}: bad duration {at:?} (e.g. 0.3ms, 300us)"))
}

fn check_args(a: &AcuerdoBenchArgs) -> anyhow::Result<()> {
    if a.nodes.is_empty() || a.nodes.iter().any(|n| !(2..=MAX_NODES).contains(n)) {
        bail!("--nodes {:?}: each 2 to {MAX_NODES}", a.nodes);
    }
    if !(8..=65_536).contains(&a.size) {
        bail!("--size {}: 8 to 65536 bytes", a.size);
    }
    if a.window.is_empty() || a.window.iter().any(|w| !(1..=4096).contains(w)) {
        bail!("--window {:?}: each 1 to 4096", a.window);
    }
    if a.mode == ModeArg::Mu && a.nodes.iter().any(|n| !(2..=5).contains(n)) {
        bail!("--mode mu: 2 to 5 nodes (the P4CE lab holds a leader and at most 4 replicas)");
    }
    if a.mode == ModeArg::Mu && (a.crash.is_some() || a.log_dir.is_some() || a.netns) {
        bail!("--mode mu: --crash, --log-dir and --netns are Acuerdo's");
    }
    if a.mode == ModeArg::Switch && a.nodes.iter().any(|n| !(2..=5).contains(n)) {
        bail!("--mode switch: 2 to 5 nodes (a P4CE group holds at most 4 followers)");
    }
    if a.mode == ModeArg::Switch && a.netns {
        bail!("--mode switch runs in memory only (the P4CE agent is an in-memory lab's)");
    }
    if a.netns && !dataplane::netns::is_root() {
        bail!("--netns needs root (network namespaces, veth pairs, AF_PACKET)");
    }
    if a.crashes != 1 && a.crash.is_none() {
        bail!(
            "--crashes {} needs --crash (when the first leader crashes)",
            a.crashes
        );
    }
    let too_many = |n: &usize| a.crashes > (n - 1) / 2;
    if let Some(n) = a.nodes.iter().find(|n| a.crash.is_some() && too_many(n)) {
        bail!(
            "--crashes {}: {n} nodes survive at most f = {} leader crashes (a majority must stay up)",
            a.crashes,
            (n - 1) / 2
        );
    }
    Ok(())
}

fn bench_cmd(a: AcuerdoBenchArgs) -> anyhow::Result<ExitCode> {
    check_args(&a)?;
    let dur = duration(&a.duration)?;
    let crash = a.crash.as_deref().map(crash_spec).transpose()?;
    if crash.is_some_and(|c| c >= dur) {
        bail!(
            "--crash {:?} is not before the end of --duration {:?}",
            a.crash,
            a.duration
        );
    }
    let faults = faults(a.loss, a.dup, a.reorder)?;
    let runs = a.nodes.len() * a.window.len();
    let mut reports = Vec::new();
    for &nodes in &a.nodes {
        for &window in &a.window {
            let r = match a.mode {
                ModeArg::Acuerdo | ModeArg::Switch => {
                    let cfg = BenchConfig {
                        nodes,
                        size: a.size,
                        window,
                        duration_ns: dur,
                        crash_leader_ns: crash,
                        crashes: a.crashes,
                        faults: faults.clone(),
                        netns: a.netns,
                        switch: a.mode == ModeArg::Switch,
                    };
                    let (r, logs) = bench::run(&cfg)
                        .with_context(|| format!("{:?}, {nodes} nodes, window {window}", a.mode))?;
                    if let Some(dir) = &a.log_dir {
                        let d = if runs == 1 {
                            dir.clone()
                        } else {
                            dir.join(format!("n{nodes}-w{window}"))
                        };
                        bench::write_logs(&d, &logs)
                            .with_context(|| format!("writing logs to {}", d.display()))?;
                    }
                    r
                }
                ModeArg::Mu => mu_run(nodes, a.size, window, dur, faults.clone())?,
            };
            reports.push(r);
        }
    }
    if let Some(p) = &a.plot {
        plot(p, &reports).with_context(|| format!("plot {}", p.display()))?;
    }
    match a.report {
        ReportFormat::Json => println!("{}", serde_json::to_string(&reports)?),
        ReportFormat::Text => {
            if let Some(r) = reports.first() {
                println!("driver: {}", r.driver);
            }
            print!("{}", bench::figure8(&reports));
            if crash.is_some() {
                print!("{}", bench::table1(&reports));
            }
            for r in &reports {
                println!(
                    "atomic broadcast check, {} nodes window {}: {}",
                    r.nodes, r.window, r.agreement
                );
            }
        }
    }
    let failed = reports.iter().filter(|r| !r.agreement.ok).count();
    if failed > 0 {
        eprintln!("{failed} run(s) failed the atomic broadcast check");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The Mu-style log (`hosts::mu`, unicast) on the P4CE lab, as a row of the same table.
fn mu_run(
    nodes: usize,
    size: usize,
    window: usize,
    dur: u64,
    faults: Option<dataplane::FaultConfig>,
) -> anyhow::Result<BenchReport> {
    use labs::p4ce::mem::bench as mu;
    let program = labs::p4ce::mem::compile_p4ce(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/p4/programs/p4ce.p4"
    )))?;
    let cfg = mu::BenchConfig {
        mode: hosts::mu::Path::Unicast,
        replicas: nodes - 1,
        value_size: size,
        outstanding: window,
        duration_ns: dur,
        link_rate_bps: 25_000_000_000,
        link_delay_ns: 1_000,
        faults: faults.unwrap_or_default(),
        host_links: Vec::new(),
        late_replica: None,
    };
    let r =
        mu::run(program, &cfg).with_context(|| format!("mu, {nodes} nodes, window {window}"))?;
    Ok(BenchReport {
        driver: "memory (virtual time)".into(),
        mode: "mu".into(),
        nodes,
        size,
        window,
        duration_s: r.duration_s,
        committed: r.committed,
        msgs_per_s: r.consensus_per_s,
        mb_per_s: r.goodput_bytes_per_s / 1e6,
        latency_p50_us: r.latency_p50_ns as f64 / 1e3,
        latency_p99_us: r.latency_p99_ns as f64 / 1e3,
        writes_per_msg: None,
        elections: Vec::new(),
        agreement: hosts::acuerdo::Agreement {
            ok: r.integrity.ok,
            longest: r.integrity.appended,
            delivered: r
                .integrity
                .replicas
                .iter()
                .map(|(id, n)| (u32::from(*id), *n))
                .collect(),
            problems: r.integrity.problems.clone(),
        },
        wall_s: r.wall_s,
    })
}

/// Latency (log scale) against throughput, one line per (mode, nodes): Figure 8's axes.
fn plot(path: &Path, reports: &[BenchReport]) -> anyhow::Result<()> {
    use plotters::prelude::*;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let root = SVGBackend::new(path, (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let xmax = reports.iter().map(|r| r.mb_per_s).fold(1e-3, f64::max) * 1.1;
    let ymax = reports.iter().map(|r| r.latency_p50_us).fold(1.0, f64::max) * 2.0;
    let ymin = reports
        .iter()
        .map(|r| r.latency_p50_us)
        .filter(|v| *v > 0.0)
        .fold(ymax, f64::min)
        / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Acuerdo broadcast: latency vs throughput (Figure 8 shape)",
            ("sans-serif", 20),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..xmax, (ymin.max(0.01)..ymax).log_scale())
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc("throughput (MB/s)")
        .y_desc("median latency (us)")
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let mut keys: Vec<(String, usize)> =
        reports.iter().map(|r| (r.mode.clone(), r.nodes)).collect();
    keys.dedup();
    for (i, (mode, nodes)) in keys.iter().enumerate() {
        let pts: Vec<(f64, f64)> = reports
            .iter()
            .filter(|r| &r.mode == mode && r.nodes == *nodes)
            .map(|r| (r.mb_per_s, r.latency_p50_us.max(0.01)))
            .collect();
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| anyhow!("{e}"))?
            .label(format!("{mode} {nodes} nodes"))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
        chart
            .draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))
            .map_err(|e| anyhow!("{e}"))?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_specs_name_the_leader_and_a_duration() {
        assert_eq!(crash_spec("leader@0.3ms").unwrap(), 300_000);
        assert_eq!(crash_spec("leader@1s").unwrap(), 1_000_000_000);
        assert!(crash_spec("follower@1ms").is_err());
        assert!(crash_spec("leader@soon").is_err());
        assert!(crash_spec("leader@0s").is_err());
    }

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        bench: AcuerdoBenchArgs,
    }

    fn args(line: &[&str]) -> AcuerdoBenchArgs {
        use clap::Parser;
        Cli::parse_from(std::iter::once("bench").chain(line.iter().copied())).bench
    }

    #[test]
    fn switch_mode_takes_2_to_5_nodes_in_memory() {
        assert!(check_args(&args(&["--mode", "switch", "--nodes", "3,5"])).is_ok());
        let e = check_args(&args(&["--mode", "switch", "--nodes", "7"])).unwrap_err();
        assert!(e.to_string().contains("2 to 5 nodes"), "{e}");
        let e = check_args(&args(&["--mode", "switch", "--netns"])).unwrap_err();
        assert!(e.to_string().contains("in memory only"), "{e}");
    }
}

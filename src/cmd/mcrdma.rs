//! `pisa mcrdma bench` and `pisa demo mcrdma`: MC-RDMA (seed 001) against fanout and chain
//! replication over plain RC on the same hosts and fabric, in memory (the ToRs of the topology
//! run mcrdma.p4). Per mode: goodput, request latency p50/p99, sender uplink bytes per
//! replicated byte, sender CPU time per operation, and whether every receiver's region equals
//! the sender's after the run; the paper's findings beside them. `--dump-dir` writes the
//! regions, `--plot` an SVG, `--report json` the figures for scripts.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use hosts::mcrdma::Mode;
use labs::mcrdma::{bench, BenchConfig, BenchReport, LabConfig};
use labs::Topology;
use plotters::prelude::*;

use super::ReportFormat;

#[derive(Subcommand, Debug)]
pub enum McrdmaCommand {
    /// Replicate operations from one sender to N receivers and report per mode.
    Bench(BenchArgs),
}

/// A replication scheme on the command line.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One WRITE on the multicast connection; the switches replicate and merge ACKs.
    Mcrdma,
    /// One RC WRITE per receiver.
    Fanout,
    /// Chain replication: each receiver forwards to the next.
    Chain,
}

impl From<ModeArg> for Mode {
    fn from(m: ModeArg) -> Mode {
        match m {
            ModeArg::Mcrdma => Mode::Mcrdma,
            ModeArg::Fanout => Mode::Fanout,
            ModeArg::Chain => Mode::Chain,
        }
    }
}

/// The receivers of sender a1 in order (the paper's A1 -> D1, A2 first, then the rest).
const RECEIVER_ORDER: [&str; 7] = ["d1", "a2", "b1", "c1", "b2", "c2", "d2"];

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The topology (the paper's testbed: deploy/labs/mcrdma-testbed.yaml).
    #[arg(long, default_value = "deploy/labs/mcrdma-testbed.yaml")]
    pub topology: PathBuf,
    /// Modes to run, comma separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [ModeArg::Mcrdma, ModeArg::Fanout, ModeArg::Chain])]
    pub mode: Vec<ModeArg>,
    /// The sender.
    #[arg(long, default_value = "a1")]
    pub sender: String,
    /// Receivers, taken in the order d1 a2 b1 c1 b2 c2 d2 (a1's testbed peers).
    #[arg(long, default_value_t = 2)]
    pub receivers: usize,
    /// Bytes per operation.
    #[arg(long, default_value_t = 4096)]
    pub size: u64,
    /// Operations in flight.
    #[arg(long, default_value_t = 8)]
    pub iodepth: usize,
    /// Loss probability on --loss-link (both directions).
    #[arg(long, default_value_t = 0.0)]
    pub loss: f64,
    /// The lossy link, as its two ends: a2-tor2.
    #[arg(long)]
    pub loss_link: Option<String>,
    /// Seconds of virtual time under load.
    #[arg(long, default_value_t = 0.002, value_parser = crate::cmd::seconds)]
    pub duration: f64,
    /// Write sender.bin and receiver-<host>.bin here after the run (per mode in DIR/<mode>
    /// when several modes run).
    #[arg(long)]
    pub dump_dir: Option<PathBuf>,
    /// Draw goodput and sender bytes per replicated byte per mode (SVG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    /// Run in network namespaces (root): the same lab with every host a thread in its
    /// namespace and every switch on veths, in wall-clock time (--duration is then wall time).
    #[arg(long)]
    pub netns: bool,
}

pub fn run(cmd: McrdmaCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        McrdmaCommand::Bench(a) => bench_cmd(a),
    }
}

fn receivers(sender: &str, n: usize) -> anyhow::Result<Vec<String>> {
    let list: Vec<String> = RECEIVER_ORDER
        .iter()
        .filter(|r| **r != sender)
        .take(n)
        .map(|s| s.to_string())
        .collect();
    anyhow::ensure!(
        n >= 1 && list.len() == n,
        "--receivers {n}: between 1 and {} receivers",
        RECEIVER_ORDER.len()
    );
    Ok(list)
}

fn config(a: &BenchArgs, mode: Mode) -> anyhow::Result<BenchConfig> {
    anyhow::ensure!(
        a.duration > 0.0 && a.duration <= 10.0,
        "--duration {}: between 0 and 10 s",
        a.duration
    );
    anyhow::ensure!(
        (0.0..1.0).contains(&a.loss),
        "--loss {}: a probability below 1",
        a.loss
    );
    anyhow::ensure!(
        a.loss == 0.0 || a.loss_link.is_some(),
        "--loss needs --loss-link A-B"
    );
    anyhow::ensure!(
        (1..=1 << 30).contains(&a.size),
        "--size {}: 1 B to 1 GiB",
        a.size
    );
    anyhow::ensure!(
        (1..=1024).contains(&a.iodepth),
        "--iodepth {}: 1 to 1024",
        a.iodepth
    );
    Ok(BenchConfig {
        lab: LabConfig {
            mode,
            sender: a.sender.clone(),
            receivers: receivers(&a.sender, a.receivers)?,
            size: a.size,
            iodepth: a.iodepth,
            psn: 0x12_3456,
        },
        duration_ns: (a.duration * 1e9) as u64,
        loss: a.loss,
        loss_link: a.loss_link.clone(),
    })
}

/// Runs one mode of `a`; dumps its regions into `dump` if given.
pub fn run_one(a: &BenchArgs, mode: Mode, dump: Option<&Path>) -> anyhow::Result<BenchReport> {
    let topo = Topology::load(&a.topology)?;
    let cfg = config(a, mode)?;
    let run = if a.netns {
        anyhow::ensure!(
            dataplane::netns::is_root(),
            "--netns needs root (network namespaces, veth pairs, AF_PACKET)"
        );
        bench::run::<labs::NetnsApps>
    } else {
        bench::run::<labs::MemLab>
    };
    let (report, regions) = run(topo, &cfg).with_context(|| format!("{} run", mode.name()))?;
    if let Some(dir) = dump {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::write(dir.join("sender.bin"), &regions.sender)?;
        for (name, bytes) in &regions.receivers {
            std::fs::write(dir.join(format!("receiver-{name}.bin")), bytes)?;
        }
    }
    Ok(report)
}

/// A short run whose figures are dropped: the first run of a process pays for cold caches and
/// first allocations, which would show as the first mode's CPU time.
pub fn warm_up(a: &BenchArgs) -> anyhow::Result<()> {
    let short = BenchArgs {
        duration: 0.0002,
        loss: 0.0,
        loss_link: None,
        ..a.clone()
    };
    for m in &a.mode {
        run_one(&short, Mode::from(*m), None)?;
    }
    Ok(())
}

fn bench_cmd(a: BenchArgs) -> anyhow::Result<ExitCode> {
    if !a.netns {
        warm_up(&a)?;
    }
    let mut reports = Vec::new();
    for m in &a.mode {
        let mode = Mode::from(*m);
        let dump = a.dump_dir.as_ref().map(|d| {
            if a.mode.len() > 1 {
                d.join(mode.name())
            } else {
                d.clone()
            }
        });
        reports.push(run_one(&a, mode, dump.as_deref())?);
    }
    match a.report {
        ReportFormat::Json => println!("{}", serde_json::to_string_pretty(&reports)?),
        ReportFormat::Text => {
            if let Some(r) = reports.first() {
                println!("driver: {}", r.driver);
            }
            print!("{}", table(&reports));
            print!("{}", paper_comparison(&reports));
        }
    }
    if let Some(p) = &a.plot {
        plot_modes(p, &reports)?;
        if a.report == ReportFormat::Text {
            println!("plot: {}", p.display());
        }
    }
    Ok(verdict(&reports))
}

/// Failure when a run left a receiver's region different from the sender's.
pub fn verdict(reports: &[BenchReport]) -> ExitCode {
    let bad: Vec<&str> = reports
        .iter()
        .filter(|r| !r.identical)
        .map(|r| r.mode.name())
        .collect();
    if bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!(
            "receivers' regions differ from the sender's in: {}",
            bad.join(", ")
        );
        ExitCode::FAILURE
    }
}

/// One line per run.
pub fn table(reports: &[BenchReport]) -> String {
    let mut s = format!(
        "{:<7} {:>5} {:>8} {:>7} {:>9} {:>9} {:>9} {:>10} {:>9} {:>8} {:>5} {}\n",
        "mode",
        "recv",
        "size",
        "ops",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "uplinkB/B",
        "cpu ns/op",
        "verbs/op",
        "retx",
        "regions"
    );
    for r in reports {
        s += &format!(
            "{:<7} {:>5} {:>8} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>10.3} {:>9.0} {:>8.2} {:>5} {}\n",
            r.mode.name(),
            r.receivers.len(),
            r.size,
            r.ops,
            r.goodput_gbps,
            r.latency_p50_us,
            r.latency_p99_us,
            r.sender_uplink_bytes_per_replicated_byte,
            r.sender_cpu_ns_per_op,
            r.sender_verbs_calls_per_op,
            r.sender_retransmissions,
            if r.identical { "identical" } else { "DIFFER" }
        );
    }
    s
}

fn find(reports: &[BenchReport], m: Mode) -> Option<&BenchReport> {
    reports.iter().find(|r| r.mode == m)
}

/// The paper's §VII-B findings next to this run's ratios.
pub fn paper_comparison(reports: &[BenchReport]) -> String {
    let (Some(mc), Some(fo)) = (find(reports, Mode::Mcrdma), find(reports, Mode::Fanout)) else {
        return String::new();
    };
    let mut s = String::from("\npaper (§VII-B, Fig. 4)                                   here\n");
    s += &format!(
        "fanout's sender bandwidth is N x MC-RDMA's (2x, 2 replicas)  {:.2}x ({} receivers)\n",
        fo.sender_uplink_bytes_per_replicated_byte / mc.sender_uplink_bytes_per_replicated_byte,
        mc.receivers.len()
    );
    s += &format!(
        "MC-RDMA has the shortest latency                          p50 mcrdma {:.2} us, fanout {:.2} us{}\n",
        mc.latency_p50_us,
        fo.latency_p50_us,
        find(reports, Mode::Chain)
            .map(|c| format!(", chain {:.2} us", c.latency_p50_us))
            .unwrap_or_default()
    );
    s += &format!(
        "MC-RDMA's sender CPU is >2x as effective as fanout's       {:.2}x fewer verbs calls, {:.2}x less CPU time per operation (wall clock, noisy)\n",
        fo.sender_verbs_calls_per_op / mc.sender_verbs_calls_per_op.max(1e-9),
        fo.sender_cpu_ns_per_op / mc.sender_cpu_ns_per_op.max(1.0)
    );
    s
}

/// Goodput and sender bytes per replicated byte per run, as bars (SVG).
pub fn plot_modes(path: &Path, reports: &[BenchReport]) -> anyhow::Result<()> {
    let labels: Vec<String> = reports
        .iter()
        .map(|r| format!("{} {}B", r.mode.name(), r.size))
        .collect();
    let panels: [(&str, Vec<f64>); 3] = [
        (
            "goodput, Gbit/s",
            reports.iter().map(|r| r.goodput_gbps).collect(),
        ),
        (
            "p50 latency, us",
            reports.iter().map(|r| r.latency_p50_us).collect(),
        ),
        (
            "sender uplink bytes per replicated byte",
            reports
                .iter()
                .map(|r| r.sender_uplink_bytes_per_replicated_byte)
                .collect(),
        ),
    ];
    bars(path, &labels, &panels).map_err(|e| anyhow::anyhow!("plot {}: {e}", path.display()))
}

pub(crate) fn bars(
    path: &Path,
    labels: &[String],
    panels: &[(&str, Vec<f64>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (420 * panels.len() as u32, 360)).into_drawing_area();
    root.fill(&WHITE)?;
    let n = labels.len();
    for (area, (title, values)) in root.split_evenly((1, panels.len())).iter().zip(panels) {
        let top = values.iter().copied().fold(0.0, f64::max).max(1e-9) * 1.2;
        let mut chart = ChartBuilder::on(area)
            .caption(*title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(50)
            .build_cartesian_2d((0..n).into_segmented(), 0.0..top)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
                _ => String::new(),
            })
            .draw()?;
        chart.draw_series(values.iter().enumerate().map(|(i, v)| {
            let mut bar = Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                Palette99::pick(i).filled(),
            );
            bar.set_margin(0, 0, 8, 8);
            bar
        }))?;
    }
    root.present()?;
    Ok(())
}

/// `pisa demo mcrdma`: short versions of the paper's experiments (Figs. 4, 5, 6, 7).
#[derive(Args, Debug)]
pub struct McrdmaDemoArgs {
    /// The topology (the paper's testbed).
    #[arg(long, default_value = "deploy/labs/mcrdma-testbed.yaml")]
    pub topology: PathBuf,
    /// Seconds of virtual time per run.
    #[arg(long, default_value_t = 0.001, value_parser = crate::cmd::seconds)]
    pub duration: f64,
    /// Draw Fig. 4's latency and sender bandwidth against request size (SVG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

const MODES: [Mode; 3] = [Mode::Mcrdma, Mode::Fanout, Mode::Chain];

fn demo_args(a: &McrdmaDemoArgs, receivers: usize, size: u64) -> BenchArgs {
    BenchArgs {
        topology: a.topology.clone(),
        mode: vec![ModeArg::Mcrdma, ModeArg::Fanout, ModeArg::Chain],
        sender: "a1".into(),
        receivers,
        size,
        iodepth: 8,
        loss: 0.0,
        loss_link: None,
        duration: a.duration,
        dump_dir: None,
        plot: None,
        report: a.report,
        netns: false,
    }
}

fn sender_gbps(r: &BenchReport) -> f64 {
    r.sender_uplink_bytes as f64 * 8.0 / r.virtual_secs.max(1e-12) / 1e9
}

/// Fig. 4: A1 -> D1, A2 (three replicas), IO depth 8, request sizes 128 B ... 1 MiB.
fn fig4(a: &McrdmaDemoArgs) -> anyhow::Result<Vec<BenchReport>> {
    let mut out = Vec::new();
    for size in [128u64, 4096, 65536, 1 << 20] {
        let b = demo_args(a, 2, size);
        for m in MODES {
            out.push(run_one(&b, m, None)?);
        }
    }
    Ok(out)
}

fn fig4_text(rs: &[BenchReport]) -> String {
    let mut s = String::from(
        "== Fig. 4: A1 -> D1, A2, IO depth 8 (paper: CR slowest for small requests, fanout slowest \
         for large ones,\n   MC-RDMA always the shortest latency; fanout's sender bandwidth 2x the \
         others' until the link saturates)\n",
    );
    s += &format!(
        "{:>8} | {:>26} | {:>26} | {:>26}\n",
        "size", "p50 latency us (mc fo ch)", "sender Gbit/s (mc fo ch)", "kops/s (mc fo ch)"
    );
    for chunk in rs.chunks(3) {
        let f = |g: &dyn Fn(&BenchReport) -> f64| {
            chunk
                .iter()
                .map(|r| format!("{:>8.2}", g(r)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        s += &format!(
            "{:>8} | {} | {} | {}\n",
            chunk[0].size,
            f(&|r| r.latency_p50_us),
            f(&sender_gbps),
            f(&|r| r.ops as f64 / r.virtual_secs / 1e3)
        );
    }
    s
}

/// Fig. 7: A1 -> B1, A2 with loss 1/4096 and 1/1024 on the long path (A2's link).
fn fig7(a: &McrdmaDemoArgs) -> anyhow::Result<Vec<BenchReport>> {
    let mut out = Vec::new();
    for loss in [0.0, 1.0 / 4096.0, 1.0 / 1024.0] {
        let mut b = demo_args(a, 2, 4096);
        b.loss = loss;
        b.loss_link = (loss > 0.0).then(|| "a2-tor2".to_string());
        // The paper's group for this figure: B1 and A2.
        b.sender = "a1".into();
        for m in MODES {
            let mut r = run_with_receivers(&b, m, &["b1", "a2"])?;
            r.loss = loss;
            out.push(r);
        }
    }
    Ok(out)
}

fn run_with_receivers(
    a: &BenchArgs,
    mode: Mode,
    receivers: &[&str],
) -> anyhow::Result<BenchReport> {
    let topo = Topology::load(&a.topology)?;
    let mut cfg = config(a, mode)?;
    cfg.lab.receivers = receivers.iter().map(|s| s.to_string()).collect();
    Ok(bench::run::<labs::MemLab>(topo, &cfg)
        .with_context(|| format!("{} run", mode.name()))?
        .0)
}

fn fig7_text(rs: &[BenchReport]) -> String {
    let mut s = String::from(
        "== Fig. 7: A1 -> B1, A2, loss on the long path (paper: throughput under loss similar for \
         all three;\n   MC-RDMA's degrades slightly more at 1/4096 and 1/1024 because of the NAK \
         fallback)\n",
    );
    s += &format!(
        "{:>8} | {:>26} | {:>26} | regions\n",
        "loss", "Gbit/s (mc fo ch)", "p99 latency us (mc fo ch)"
    );
    for chunk in rs.chunks(3) {
        let f = |g: &dyn Fn(&BenchReport) -> f64| {
            chunk
                .iter()
                .map(|r| format!("{:>8.2}", g(r)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let loss = if chunk[0].loss == 0.0 {
            "0".to_string()
        } else {
            format!("1/{:.0}", 1.0 / chunk[0].loss)
        };
        s += &format!(
            "{:>8} | {} | {} | {}\n",
            loss,
            f(&|r| r.goodput_gbps),
            f(&|r| r.latency_p99_us),
            if chunk.iter().all(|r| r.identical) {
                "identical"
            } else {
                "DIFFER"
            }
        );
    }
    s
}

fn fig5_text(f: &bench::Fairness) -> String {
    let mut s = String::from(
        "== Fig. 5: f_m1 A1 -> C1, D1 and f_m2 C1 -> D1, A2 (MC-RDMA), f_u1 D1 -> A2 (RC), started \
         one phase apart;\n   ECN at every switch port (Kmin 50 KB, Kmax 500 KB, Pmax 0.01), DCQCN \
         at every endpoint (paper: f_m1's rate falls to 1/2, then 1/3)\n",
    );
    s += &format!(
        "{:>6} | {:>8} {:>8} {:>8} Gbit/s | f_m1 vs alone | paper\n",
        "phase", "f_m1", "f_m2", "f_u1"
    );
    let alone = f
        .rates
        .first()
        .and_then(|r| r.first())
        .copied()
        .unwrap_or(0.0);
    for (p, r) in f.rates.iter().enumerate() {
        let cell = |i: usize| r.get(i).map(|v| format!("{v:>8.2}")).unwrap_or_default();
        s += &format!(
            "{:>6} | {} {} {}        | {:>13.2} | {}\n",
            p + 1,
            cell(0),
            cell(1),
            cell(2),
            r[0] / alone.max(1e-9),
            ["1", "1/2", "1/3"].get(p).copied().unwrap_or("")
        );
    }
    s += &format!(
        "   ({} ms per phase, {} B operations; regions {})\n",
        f.phase_secs * 1e3,
        f.size,
        if f.identical { "identical" } else { "DIFFER" }
    );
    s
}

/// Fig. 6 runs at least this long (ns): with 7 congested sub-flows DCQCN takes milliseconds to
/// converge, and a 2 ms run measured the group in its starved transient (0 operations of
/// 64 KiB completed in the second half; audit 10a #6).
const FIG6_MIN_RUN_NS: f64 = 10e6;

/// Fig. 6's run length (ns) for `--duration` (seconds).
fn fig6_run_ns(duration: f64) -> u64 {
    (duration * 2e9).max(FIG6_MIN_RUN_NS) as u64
}

/// Fig. 6: the 7-receiver group's rate against the number of congested sub-flows.
fn fig6(a: &McrdmaDemoArgs) -> anyhow::Result<Vec<(usize, f64, Vec<f64>)>> {
    let mut out = Vec::new();
    for k in [0usize, 1, 2, 4, 7] {
        let topo = Topology::load(&a.topology)?;
        let (mc, uc) = bench::congested_subflows(topo, 65536, fig6_run_ns(a.duration), k)
            .with_context(|| format!("Fig. 6 run with {k} congested sub-flows"))?;
        out.push((k, mc, uc));
    }
    Ok(out)
}

fn fig6_text(rows: &[(usize, f64, Vec<f64>)], run_ns: u64) -> String {
    let mut s = format!(
        "== Fig. 6: A1 -> B1..D2 (7 receivers, Tofino 2 ToRs), k RC flows each into one receiver's \
         downlink (the paper's k = 2: C1 -> B1, D1 -> C1);\n   ECN + DCQCN, rates over the second \
         half of a {} ms run (paper, simulation: the group's rate falls as more sub-flows are \
         congested,\n   since the CNPs of all its sub-flows reach the one sender; one congested \
         sub-flow gives the fair share)\n",
        run_ns as f64 / 1e6
    );
    s += &format!(
        "{:>3} | {:>12} | {:>14} | {:>12}\n",
        "k", "group Gbit/s", "RC mean Gbit/s", "fair share"
    );
    for (k, mc, uc) in rows {
        let mean = if uc.is_empty() {
            0.0
        } else {
            uc.iter().sum::<f64>() / uc.len() as f64
        };
        s += &format!(
            "{:>3} | {:>12.2} | {:>14.2} | {:>12}\n",
            k,
            mc,
            mean,
            if *k == 0 { "100 (alone)" } else { "50" }
        );
    }
    s
}

pub fn demo(a: McrdmaDemoArgs) -> anyhow::Result<ExitCode> {
    warm_up(&demo_args(&a, 2, 4096))?;
    let f4 = fig4(&a)?;
    let f7 = fig7(&a)?;
    let f5 = bench::fairness(
        Topology::load(&a.topology)?,
        65536,
        (a.duration * 2e9) as u64,
    )
    .context("Fig. 5 run")?;
    let f6 = fig6(&a)?;
    match a.report {
        ReportFormat::Json => {
            let rows: Vec<serde_json::Value> = f6
                .iter()
                .map(|(k, mc, uc)| serde_json::json!({ "congested": k, "group_gbps": mc, "rc_gbps": uc }))
                .collect();
            let v = serde_json::json!({ "fig4": f4, "fig5": f5, "fig6": rows, "fig7": f7 });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        ReportFormat::Text => {
            print!("{}", fig4_text(&f4));
            let four_k: Vec<BenchReport> = f4.iter().filter(|r| r.size == 4096).cloned().collect();
            print!("{}", paper_comparison(&four_k));
            println!();
            print!("{}", fig7_text(&f7));
            println!();
            print!("{}", fig5_text(&f5));
            println!();
            print!("{}", fig6_text(&f6, fig6_run_ns(a.duration)));
        }
    }
    if let Some(p) = &a.plot {
        plot_fig4(p, &f4).map_err(|e| anyhow::anyhow!("plot {}: {e}", p.display()))?;
        if a.report == ReportFormat::Text {
            println!("plot: {}", p.display());
        }
    }
    let all: Vec<BenchReport> = f4.into_iter().chain(f7).collect();
    if !f5.identical {
        eprintln!("Fig. 5: receivers' regions differ from the senders'");
        return Ok(ExitCode::FAILURE);
    }
    Ok(verdict(&all))
}

/// One figure of a report.
type Figure<'a> = &'a dyn Fn(&BenchReport) -> f64;

/// Fig. 4 (a) and (b): p50 latency and sender bandwidth against request size, one line per mode.
fn plot_fig4(path: &Path, rs: &[BenchReport]) -> Result<(), Box<dyn std::error::Error>> {
    let sizes: Vec<u64> = rs.chunks(3).map(|c| c[0].size).collect();
    let root = SVGBackend::new(path, (900, 380)).into_drawing_area();
    root.fill(&WHITE)?;
    let panels: [(&str, Figure); 2] = [
        ("(a) p50 latency, us", &|r| r.latency_p50_us),
        ("(b) sender bandwidth, Gbit/s", &sender_gbps),
    ];
    for (area, (title, get)) in root.split_evenly((1, 2)).iter().zip(panels) {
        let top = rs.iter().map(get).fold(0.0, f64::max).max(1e-9) * 1.15;
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 16))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(55)
            .build_cartesian_2d(0..sizes.len() - 1, 0.0..top)?;
        chart
            .configure_mesh()
            .x_labels(sizes.len())
            .x_label_formatter(&|i| sizes.get(*i).map(|s| format!("{s} B")).unwrap_or_default())
            .draw()?;
        for (k, m) in MODES.iter().enumerate() {
            let pts: Vec<(usize, f64)> = rs
                .iter()
                .filter(|r| r.mode == *m)
                .enumerate()
                .map(|(i, r)| (i, get(r)))
                .collect();
            let color = Palette99::pick(k).to_rgba();
            chart
                .draw_series(std::iter::once(PathElement::new(
                    pts.clone(),
                    color.stroke_width(2),
                )))?
                .label(m.name())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

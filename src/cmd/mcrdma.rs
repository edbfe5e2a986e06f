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
    #[arg(long, default_value_t = 0.002)]
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
    let (report, regions) =
        bench::run(topo, &cfg).with_context(|| format!("{} run", mode.name()))?;
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
    warm_up(&a)?;
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
        "{:<7} {:>5} {:>8} {:>7} {:>9} {:>9} {:>9} {:>10} {:>9} {:>5} {}\n",
        "mode",
        "recv",
        "size",
        "ops",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "uplinkB/B",
        "cpu ns/op",
        "retx",
        "regions"
    );
    for r in reports {
        s += &format!(
            "{:<7} {:>5} {:>8} {:>7} {:>9.2} {:>9.2} {:>9.2} {:>10.3} {:>9.0} {:>5} {}\n",
            r.mode.name(),
            r.receivers.len(),
            r.size,
            r.ops,
            r.goodput_gbps,
            r.latency_p50_us,
            r.latency_p99_us,
            r.sender_uplink_bytes_per_replicated_byte,
            r.sender_cpu_ns_per_op,
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
        "MC-RDMA's sender CPU is >2x as effective as fanout's       {:.2}x less CPU per operation\n",
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

fn bars(
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

//! `pisa bench`: measurements that print medians and ratios against a baseline measured in the
//! same run (never absolute timings asserted anywhere).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use pisa::workload::{self, Measurement, Workload};

use super::ReportFormat;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// l2l3.p4 in-process on one core (64-byte frames, 1k MACs, 10k routes), batched, against
    /// wire.p4 (parse Ethernet, one exact table, deparse) as the baseline.
    Pipeline(PipelineBenchArgs),
    /// Forwarding throughput and latency through pisa on each port backend (AF_PACKET, AF_XDP,
    /// DPDK as compiled in) against the Linux kernel bridge on the same veths in the same run
    /// (root; builds its own lab).
    Forward(super::forward_bench::BenchForwardArgs),
    /// A whole topology in memory on one core (`pisa lab run`): frames delivered per second
    /// and switch pipeline passes per second, beside one switch's pipeline alone on the same
    /// frames, medians of interleaved rounds.
    Lab(super::lab::topo::RunArgs),
}

#[derive(Args, Debug)]
pub struct PipelineBenchArgs {
    /// Seconds per run.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Runs per program (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Frames per batch.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    /// MAC entries.
    #[arg(long, default_value_t = 1000)]
    pub macs: usize,
    /// /24 routes.
    #[arg(long, default_value_t = 10_000)]
    pub routes: usize,
    /// `text` for people, `json` for scripts (one object on stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

pub fn run(cmd: BenchCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BenchCommand::Pipeline(a) => pipeline(a),
        BenchCommand::Forward(a) => super::forward_bench::bench_forward(a),
        BenchCommand::Lab(a) => super::lab::topo::run(a),
    }
}

/// The median of `v` (0 for none): what every `pisa bench` reports.
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn runs(w: &mut Workload, a: &PipelineBenchArgs) -> Vec<Measurement> {
    let d = Duration::from_secs_f64(a.seconds.max(0.05));
    // One short warm-up run fills the buffer pools and the caches.
    let _ = workload::measure(w, a.batch, d / 4);
    (0..a.runs.max(1))
        .map(|_| workload::measure(w, a.batch, d))
        .collect()
}

fn pipeline(a: PipelineBenchArgs) -> anyhow::Result<ExitCode> {
    let n_frames = 8192;
    let mut l2l3 = workload::l2l3(a.macs, a.routes, n_frames)?;
    let mut wire = workload::wire(n_frames)?;
    // Interleave the two programs' runs so drift in the machine's load hits both alike.
    let mut l2l3_runs = Vec::new();
    let mut wire_runs = Vec::new();
    let one = PipelineBenchArgs { runs: 1, ..a };
    let mut progress = pisa::progress::Progress::new(2 * a.runs.max(1) as u64, "bench pipeline");
    for r in 0..a.runs.max(1) {
        progress.start(&format!("run {}: {}", r + 1, wire.name));
        wire_runs.extend(runs(&mut wire, &one));
        progress.step();
        progress.start(&format!("run {}: {}", r + 1, l2l3.name));
        l2l3_runs.extend(runs(&mut l2l3, &one));
        progress.step();
    }
    progress.finish();
    let l2l3_mpps = median(l2l3_runs.iter().map(Measurement::mpps).collect());
    let wire_mpps = median(wire_runs.iter().map(Measurement::mpps).collect());
    let out_per_in = l2l3_runs.iter().map(|m| m.out_frames).sum::<u64>() as f64
        / l2l3_runs.iter().map(|m| m.packets).sum::<u64>().max(1) as f64;
    let machine = pisa::machine::Machine::now();
    match a.report {
        ReportFormat::Json => {
            let v = serde_json::json!({
                "benchmark": "pipeline",
                "machine": machine.json(),
                "frame_bytes": 64,
                "batch": a.batch,
                "runs": a.runs,
                "seconds_per_run": a.seconds,
                "program": l2l3.name,
                "mpps_per_core": l2l3_mpps,
                "baseline": { "program": wire.name, "mpps_per_core": wire_mpps },
                "ratio_to_baseline": l2l3_mpps / wire_mpps,
                "out_frames_per_in": out_per_in,
                "all_runs_mpps": l2l3_runs.iter().map(Measurement::mpps).collect::<Vec<_>>(),
                "all_baseline_runs_mpps": wire_runs.iter().map(Measurement::mpps).collect::<Vec<_>>(),
            });
            println!("{v:#}");
        }
        ReportFormat::Text => {
            println!(
                "pisa bench pipeline — one core, 64-byte frames, batches of {}",
                a.batch
            );
            println!("{}", machine.line(1));
            println!("{:<40} {:>12} {:>10}", "program", "Mpps (median)", "ratio");
            println!("{:<40} {:>12.2} {:>10}", wire.name, wire_mpps, "1.00");
            println!(
                "{:<40} {:>12.2} {:>10.2}",
                l2l3.name,
                l2l3_mpps,
                l2l3_mpps / wire_mpps
            );
            println!(
                "({} runs of {:.1} s each, interleaved; frames out per frame in: {:.2})",
                a.runs, a.seconds, out_per_in
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

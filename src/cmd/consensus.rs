//! `pisa consensus bench` and `pisa demo p4ce`: the Mu-style replicated log of `hosts::mu`
//! between a leader and replicas on in-memory links around a switch running p4ce.p4 (virtual
//! time, every host link rate-limited so the leader's link is the bottleneck), in P4CE mode
//! (one WRITE to the switch, ACKs aggregated there) or unicast mode (Mu: one WRITE per
//! replica). Prints consensus/s, goodput, commit latency percentiles and the leader's packets
//! per consensus; `--report json` for scripts.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use hosts::mu::Path as LogPath;
use hosts::p4ce_lab::bench::{self, BenchConfig, BenchReport};
use hosts::p4ce_lab::compile_p4ce;

use super::ReportFormat;

/// Consensus commands.
#[derive(Subcommand, Debug)]
pub enum ConsensusCommand {
    /// Replicate entries for a virtual duration and report throughput and latency.
    Bench(ConsensusBenchArgs),
}

/// How the leader replicates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// One WRITE to the P4CE switch, which scatters it and aggregates the ACKs.
    P4ce,
    /// One WRITE per replica, ACKs counted by the leader (Mu).
    Unicast,
}

/// Settings shared by the bench and the demo.
#[derive(Args, Debug, Clone)]
pub struct LinkArgs {
    /// Rate of every host link (each direction), e.g. 10G, 25G, 100M.
    #[arg(long, default_value = "10G")]
    pub link_rate: String,
    /// Propagation delay of every host link, e.g. 1us.
    #[arg(long, default_value = "1us")]
    pub link_delay: String,
    /// The switch program.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/p4/programs/p4ce.p4"))]
    pub program: PathBuf,
    /// `text` or `json`.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

/// `pisa consensus bench`.
#[derive(Args, Debug, Clone)]
pub struct ConsensusBenchArgs {
    /// P4CE or unicast (Mu).
    #[arg(long, value_enum, default_value_t = ModeArg::P4ce)]
    pub mode: ModeArg,
    /// Replicas (1 to 4; f = a majority with the leader).
    #[arg(long, default_value_t = 2)]
    pub replicas: usize,
    /// Value size in bytes (64 to 65536).
    #[arg(long, default_value_t = 64)]
    pub value_size: usize,
    /// Entries in flight.
    #[arg(long, default_value_t = 16)]
    pub outstanding: usize,
    /// Virtual duration, e.g. 10ms, 1s.
    #[arg(long, default_value = "10ms")]
    pub duration: String,
    #[command(flatten)]
    pub link: LinkArgs,
}

/// `pisa demo p4ce`.
#[derive(Args, Debug, Clone)]
pub struct P4ceDemoArgs {
    /// Virtual duration of each run, e.g. 2ms.
    #[arg(long, default_value = "2ms")]
    pub duration: String,
    /// Entries in flight.
    #[arg(long, default_value_t = 16)]
    pub outstanding: usize,
    #[command(flatten)]
    pub link: LinkArgs,
}

pub fn run(cmd: ConsensusCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ConsensusCommand::Bench(a) => bench_cmd(a),
    }
}

fn link(a: &LinkArgs) -> anyhow::Result<(u64, u64)> {
    let rate = dataplane::link::parse_rate(&a.link_rate)
        .ok_or_else(|| anyhow!("--link-rate {:?}: expected e.g. 10G", a.link_rate))?;
    let delay = dataplane::link::parse_duration(&a.link_delay)
        .ok_or_else(|| anyhow!("--link-delay {:?}: expected e.g. 1us", a.link_delay))?;
    Ok((rate, delay))
}

fn duration(s: &str) -> anyhow::Result<u64> {
    match dataplane::link::parse_duration(s) {
        Some(ns) if ns > 0 => Ok(ns),
        _ => bail!("--duration {s:?}: expected e.g. 10ms"),
    }
}

fn print_one(r: &BenchReport) {
    println!(
        "{} replicas={} f={} value={}B outstanding={} link={:.0} Gbit/s (virtual {:.3} ms, wall {:.2} s)",
        r.mode,
        r.replicas,
        r.f,
        r.value_size,
        r.outstanding,
        r.link_rate_bps as f64 / 1e9,
        r.duration_s * 1e3,
        r.wall_s
    );
    println!(
        "  consensus/s {:.0}   goodput {:.3} Gbit/s   latency p50 {:.1} us  p99 {:.1} us  p999 {:.1} us",
        r.consensus_per_s,
        r.goodput_bytes_per_s * 8.0 / 1e9,
        r.latency_p50_ns as f64 / 1e3,
        r.latency_p99_ns as f64 / 1e3,
        r.latency_p999_ns as f64 / 1e3
    );
    println!(
        "  leader packets per consensus: sent {:.2}  received {:.2}   fallbacks {}",
        r.leader_tx_per_consensus, r.leader_rx_per_consensus, r.fallbacks
    );
}

fn bench_cmd(a: ConsensusBenchArgs) -> anyhow::Result<ExitCode> {
    if !(1..=4).contains(&a.replicas) {
        bail!("--replicas {}: 1 to 4 supported", a.replicas);
    }
    if !(1..=65536).contains(&a.value_size) {
        bail!("--value-size {}: 1 to 65536", a.value_size);
    }
    let (rate, delay) = link(&a.link)?;
    let program = compile_p4ce(&a.link.program)?;
    let cfg = BenchConfig {
        mode: match a.mode {
            ModeArg::P4ce => LogPath::Switch,
            ModeArg::Unicast => LogPath::Unicast,
        },
        replicas: a.replicas,
        value_size: a.value_size,
        outstanding: a.outstanding,
        duration_ns: duration(&a.duration)?,
        link_rate_bps: rate,
        link_delay_ns: delay,
    };
    let r = bench::run(program, &cfg)?;
    match a.link.report {
        ReportFormat::Json => println!("{}", serde_json::to_string(&r)?),
        ReportFormat::Text => print_one(&r),
    }
    Ok(ExitCode::SUCCESS)
}

/// `pisa demo p4ce`: both modes, 2 and 4 replicas, small and large values, side by side.
pub fn demo(a: P4ceDemoArgs) -> anyhow::Result<ExitCode> {
    let (rate, delay) = link(&a.link)?;
    let program = compile_p4ce(&a.link.program)?;
    let dur = duration(&a.duration)?;
    let text = a.link.report == ReportFormat::Text;
    if text {
        println!(
            "== P4CE vs Mu (unicast): leader + replicas on {:.0} Gbit/s in-memory links around p4ce.p4, virtual time {} per run\n",
            rate as f64 / 1e9,
            a.duration
        );
    }
    let mut reports = Vec::new();
    for replicas in [2, 4] {
        for value_size in [64, 1024, 8192, 65536] {
            for mode in [LogPath::Switch, LogPath::Unicast] {
                let cfg = BenchConfig {
                    mode,
                    replicas,
                    value_size,
                    outstanding: a.outstanding,
                    duration_ns: dur,
                    link_rate_bps: rate,
                    link_delay_ns: delay,
                };
                reports.push(bench::run(program.clone(), &cfg)?);
            }
        }
    }
    if text {
        print!("{}", bench::side_by_side(&reports));
        println!("\nratio = P4CE goodput / unicast goodput (the paper's Figure 5: about 2x with 2 replicas, 4x with 4).");
        println!("tx+rx = frames the leader sent and received per consensus. Host CPU time is not modelled.");
    } else {
        println!("{}", serde_json::to_string(&reports)?);
    }
    Ok(ExitCode::SUCCESS)
}

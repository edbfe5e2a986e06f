//! The subcommands of `pisa` and the options they share.

mod acuerdo;
mod bench;
mod bench_scaling;
mod bench_swx;
mod check;
mod consensus;
mod ctl;
mod demo;
mod forward_bench;
mod lab;
mod leo;
mod live;
mod mcrdma;
mod onepipe;
mod p4info;
mod program;
mod rdma;
mod replay;
mod run;
mod stf;
mod story;
mod trace;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// pisa — a software Tofino: runs P4_16 TNA programs in a Tofino-shaped pipeline.
#[derive(Parser, Debug)]
#[command(name = "pisa", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse, type-check and lower a P4 program, place it into MAU stages and print the resource report.
    Check(check::CheckArgs),
    /// Replay pcap captures through a program and write one output pcap per egress port.
    Run(run::RunArgs),
    /// Print a program's P4Info (P4Runtime ids and names of tables, actions, externs).
    P4info(p4info::P4InfoArgs),
    /// Follow one packet through the pipeline and print its path.
    Trace(trace::TraceArgs),
    /// Run an STF test (the text format of p4c's and bf-p4c's test suites); exit 0 pass, 1 a
    /// check failed, 2 the test could not run as written.
    Stf(stf::StfArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// The main job: l2l3.p4 on the bundled example captures, no root and no NIC needed.
    Demo(demo::DemoArgs),
    /// Labs: switches, hosts and links from one topology file, in memory or in network namespaces.
    #[command(subcommand)]
    Lab(lab::LabCommand),
    /// Talk to a running `pisa run --ctl PATH`: statistics, counters, tables, link faults.
    Ctl(ctl::CtlArgs),
    /// RDMA benchmarks like perftest (write-bw, read-lat, ...) between pisa RoCEv2 endpoints, and a RoCEv2 pcap decoder.
    #[command(subcommand)]
    Rdma(rdma::RdmaCommand),
    /// Consensus over RDMA: the Mu-style log with P4CE (in-switch replication) or unicast.
    #[command(subcommand)]
    Consensus(consensus::ConsensusCommand),
    /// MC-RDMA: reliable RDMA multicast with replication and ACK/NAK merging in the switches
    /// (mcrdma.p4), against fanout and chain replication.
    #[command(subcommand)]
    Mcrdma(mcrdma::McrdmaCommand),
    /// Acuerdo: atomic broadcast over RDMA WRITEs (ICPP 2022), in the in-memory lab.
    #[command(subcommand)]
    Acuerdo(acuerdo::AcuerdoCommand),
    /// LEO: message-level in-network computing communication (paths, profiled hardware
    /// models, the LP and the online heuristic), the KVS experiment of its §V.
    #[command(subcommand)]
    Leo(leo::LeoCommand),
    /// 1Pipe: total-order scattering with barrier aggregation in the switches (onepipe.p4).
    #[command(subcommand)]
    Onepipe(onepipe::OnepipeCommand),
}

/// The hardware profile a program is checked and run against.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum TargetArg {
    /// Tofino 1: 12 MAU stages per gress.
    #[default]
    Tofino1,
    /// Tofino 2: 20 MAU stages per gress.
    Tofino2,
}

impl From<TargetArg> for pipeline::ir::Target {
    fn from(t: TargetArg) -> Self {
        match t {
            TargetArg::Tofino1 => pipeline::ir::Target::Tofino1,
            TargetArg::Tofino2 => pipeline::ir::Target::Tofino2,
        }
    }
}

/// Options every command that compiles a P4 program takes.
#[derive(Args, Debug, Clone)]
pub struct CompileArgs {
    /// Target profile.
    #[arg(long, value_enum, default_value_t = TargetArg::Tofino1)]
    pub target: TargetArg,
    /// Add a directory to the include search path.
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// Define a preprocessor symbol (NAME or NAME=VALUE).
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub define: Vec<String>,
    /// Report the Tofino 1 egress parse depth limit (160 bytes) as a warning, as bf-p4c's
    /// flag of that name does (the SDE switch profiles are built with it).
    #[arg(long)]
    pub disable_parse_depth_limit: bool,
}

/// `text` for people, `json` for scripts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum ReportFormat {
    #[default]
    Text,
    Json,
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Run(a) => run::run(a),
        Command::P4info(a) => p4info::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Stf(a) => stf::run(a),
        Command::Bench(b) => bench::run(b),
        Command::Demo(a) => demo::run(a),
        Command::Lab(c) => lab::run(c),
        Command::Ctl(a) => ctl::run(a),
        Command::Rdma(c) => rdma::run(c),
        Command::Consensus(c) => consensus::run(c),
        Command::Mcrdma(c) => mcrdma::run(c),
        Command::Acuerdo(c) => acuerdo::run(c),
        Command::Leo(c) => leo::run(c),
        Command::Onepipe(c) => onepipe::run(c),
    }
}

/// The most seconds a duration option takes (about 31 years): more is surely a typo, and
/// `Duration::from_secs_f64` would overflow on far larger ones.
const MAX_SECONDS: f64 = 1e9;

/// A command-line number of seconds: finite, not negative, at most [`MAX_SECONDS`] (so `inf`,
/// `nan` or `1e300` get a clear error instead of a panic when it becomes a `Duration`).
pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=MAX_SECONDS).contains(&v) {
        return Err(format!(
            "`{s}` seconds: expected a finite number from 0 to {MAX_SECONDS:e}"
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// Options that clap reads into typed fields: a name clash (`ctl raw`'s argument and the
    /// global `--json`) panicked at parse time; out-of-range seconds are parse errors.
    #[test]
    fn command_lines_parse_without_panicking() {
        let parse = |args: &[&str]| super::Cli::try_parse_from(args);
        assert!(parse(&["pisa", "ctl", "raw", "{\"op\":\"stats\"}"]).is_ok());
        assert!(parse(&["pisa", "ctl", "--json", "raw", "{}"]).is_ok());
        assert!(parse(&["pisa", "ctl", "--wait", "inf", "stats"]).is_err());
        assert!(parse(&["pisa", "bench", "pipeline", "--seconds", "1e300"]).is_err());
    }

    #[test]
    fn seconds_are_finite_and_bounded() {
        assert_eq!(super::seconds("2.5"), Ok(2.5));
        assert_eq!(super::seconds("0"), Ok(0.0));
        for bad in ["inf", "nan", "-1", "1e300", "x", ""] {
            assert!(super::seconds(bad).is_err(), "{bad}");
        }
    }
}

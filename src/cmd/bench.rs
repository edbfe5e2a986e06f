//! `pisa bench`: measurements that print medians and ratios against a baseline measured in the
//! same run (never absolute timings asserted anywhere).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use pipeline::exec::{EngineKind, Engines};
use pisa::workload::{self, Measurement, Workload};

use super::ReportFormat;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// l2l3.p4 in-process on one core (64-byte frames, 1k MACs, 10k routes), batched, against
    /// wire.p4 (parse Ethernet, one exact table, deparse) as the baseline, on the native engine
    /// and the flat engine (the ratio of the two printed).
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
    #[arg(long, default_value_t = 1.0, value_parser = crate::cmd::seconds)]
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
    /// Engine to measure (`native`, `flat`, or `tree`: the reference interpreter); the flat
    /// engine is measured beside any other on the same frames, and the ratio printed.
    #[arg(long, default_value_t = EngineKind::default())]
    pub engine: EngineKind,
    /// Also run l2l3.p4 on N threads at once, one pipeline per core (pinned), beside one
    /// thread in the same run: per-thread and total packets per second, and the scaling.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Also run the same l2l3 traffic through another pipeline in this process and print the
    /// ratio (`swx`: DPDK's SWX pipeline; needs the `dpdk` feature, see docs/swx.md).
    #[arg(long, value_enum)]
    pub against: Option<super::bench_swx::Against>,
    /// With `--against swx`: run SWX interpreted even where it could run compiled.
    #[arg(long)]
    pub swx_interpreted: bool,
    /// Instead of timed runs, feed exactly N frames through one program (`--program`) on the
    /// one engine asked for, untimed, and print what came out: for counting instructions per
    /// packet under a tool such as callgrind (scripts/instructions-per-packet.sh).
    #[arg(long, requires = "program")]
    pub packets: Option<u64>,
    /// With `--packets`: the program to run.
    #[arg(long, value_enum)]
    pub program: Option<BenchProgram>,
}

/// The programs `pisa bench pipeline` measures, by name.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchProgram {
    Wire,
    L2l3,
    Switch,
    Fib,
}

impl BenchProgram {
    /// Its workload, with `n_frames` frames, as the timed runs build it.
    fn workload(
        self,
        a: &PipelineBenchArgs,
        n_frames: usize,
        engine: EngineKind,
    ) -> anyhow::Result<Workload> {
        match self {
            BenchProgram::Wire => workload::wire(n_frames, engine),
            BenchProgram::L2l3 => workload::l2l3(a.macs, a.routes, n_frames, engine),
            BenchProgram::Switch => workload::switch_p4(n_frames, engine),
            BenchProgram::Fib => workload::fib(a.routes, n_frames, engine),
        }
    }
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

/// One program on one engine: its workload and its runs.
struct Series {
    program: &'static str,
    engine: EngineKind,
    w: Workload,
    runs: Vec<Measurement>,
}

impl Series {
    fn mpps(&self) -> f64 {
        median(self.runs.iter().map(Measurement::mpps).collect())
    }

    /// Median time-stamp-counter ticks per packet (`None` without a TSC).
    fn tsc_per_packet(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter_map(Measurement::tsc_per_packet)
            .collect();
        (!v.is_empty()).then(|| median(v))
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "program": self.w.name,
            "engine": self.engine.to_string(),
            "mpps_per_core": self.mpps(),
            "tsc_ticks_per_packet": self.tsc_per_packet(),
            "all_runs_mpps": self.runs.iter().map(Measurement::mpps).collect::<Vec<_>>(),
        })
    }
}

/// Median milliseconds to generate native code for `text`'s pipeline (of 5 generations).
fn codegen_ms(name: &str, text: &str) -> anyhow::Result<f64> {
    let program = workload::compile(name, text)?;
    let pl = program
        .pipelines
        .first()
        .ok_or_else(|| anyhow::anyhow!("{name} has no pipeline"))?;
    let mut ms = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let eng = Engines::with_engine(pl, EngineKind::Native);
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        if let Some(e) = &eng.native_error {
            anyhow::bail!("{name}: no native code: {e}");
        }
    }
    Ok(median(ms))
}

/// `--packets N`: N frames of one program through one engine, untimed.
fn fixed_packets(a: &PipelineBenchArgs, program: BenchProgram, n: u64) -> anyhow::Result<ExitCode> {
    let mut w = program.workload(a, 8192, a.engine)?;
    let out = workload::feed(&mut w, a.batch, n);
    println!(
        "{}: {n} frames in, {out} out on the {} engine",
        w.name, a.engine
    );
    Ok(ExitCode::SUCCESS)
}

fn pipeline(a: PipelineBenchArgs) -> anyhow::Result<ExitCode> {
    if let (Some(n), Some(p)) = (a.packets, a.program) {
        return fixed_packets(&a, p, n);
    }
    let n_frames = 8192;
    // The engine asked for, and the flat engine beside it as the baseline of the ratio.
    let engines: Vec<EngineKind> = match a.engine {
        EngineKind::Flat => vec![EngineKind::Flat],
        e => vec![EngineKind::Flat, e],
    };
    let mut series = Vec::new();
    for &engine in &engines {
        series.push(Series {
            program: "wire",
            engine,
            w: workload::wire(n_frames, engine)?,
            runs: Vec::new(),
        });
        series.push(Series {
            program: "l2l3",
            engine,
            w: workload::l2l3(a.macs, a.routes, n_frames, engine)?,
            runs: Vec::new(),
        });
        series.push(Series {
            program: "switch",
            engine,
            w: workload::switch_p4(n_frames, engine)?,
            runs: Vec::new(),
        });
    }
    let mut swx = match a.against {
        Some(super::bench_swx::Against::Swx) => super::bench_swx::setup(&a, n_frames, 256)?,
        None => Vec::new(),
    };
    if !swx.is_empty() {
        // fib.p4, the pisa side of fib.spec, on every engine measured.
        for &engine in &engines {
            series.push(Series {
                program: "fib",
                engine,
                w: workload::fib(a.routes, n_frames, engine)?,
                runs: Vec::new(),
            });
        }
    }
    // Interleave the runs so drift in the machine's load hits every series alike.
    let one = PipelineBenchArgs { runs: 1, ..a };
    let steps = (a.runs.max(1) * (series.len() + swx.len())) as u64;
    let mut progress = pisa::progress::Progress::new(steps, "bench pipeline");
    for r in 0..a.runs.max(1) {
        for s in series.iter_mut() {
            progress.start(&format!("run {}: {} ({})", r + 1, s.program, s.engine));
            s.runs.extend(runs(&mut s.w, &one));
            progress.step();
        }
        for s in swx.iter_mut() {
            progress.start(&format!("run {}: {}", r + 1, s.name));
            s.run_once(&one);
            progress.step();
        }
    }
    progress.finish();
    let machine = pisa::machine::Machine::now();
    let find = |program: &str, engine: EngineKind| {
        series
            .iter()
            .find(|s| s.program == program && s.engine == engine)
            .expect("every program runs on every engine")
    };
    let (l2l3, wire) = (find("l2l3", a.engine), find("wire", a.engine));
    let (l2l3_mpps, wire_mpps) = (l2l3.mpps(), wire.mpps());
    let out_per_in = l2l3.runs.iter().map(|m| m.out_frames).sum::<u64>() as f64
        / l2l3.runs.iter().map(|m| m.packets).sum::<u64>().max(1) as f64;
    let vs_flat = |s: &Series| s.mpps() / find(s.program, EngineKind::Flat).mpps();
    // Load-time cost and coverage of the native engine (lowering included).
    let native = a.engine == EngineKind::Native;
    let gen_ms = if native {
        Some((
            codegen_ms("l2l3.p4", workload::L2L3_P4)?,
            codegen_ms("wire.p4", workload::WIRE_P4)?,
        ))
    } else {
        None
    };
    let fallbacks = (
        l2l3.w.switch.native_fallbacks(),
        wire.w.switch.native_fallbacks(),
    );
    let scaling = if a.threads > 1 {
        Some(super::bench_scaling::run(&a)?)
    } else {
        None
    };
    match a.report {
        ReportFormat::Json => {
            let v = serde_json::json!({
                "benchmark": "pipeline",
                "threads": scaling.as_ref().map(super::bench_scaling::Scaling::json),
                "machine": machine.json(),
                "frame_bytes": 64,
                "batch": a.batch,
                "runs": a.runs,
                "seconds_per_run": a.seconds,
                "engine": a.engine.to_string(),
                "program": l2l3.w.name,
                "mpps_per_core": l2l3_mpps,
                "baseline": { "program": wire.w.name, "mpps_per_core": wire_mpps },
                "ratio_to_baseline": l2l3_mpps / wire_mpps,
                "out_frames_per_in": out_per_in,
                "series": series.iter().map(Series::json).collect::<Vec<_>>(),
                "ratio_to_flat": {
                    "l2l3": vs_flat(l2l3),
                    "wire": vs_flat(wire),
                    "switch": vs_flat(find("switch", a.engine)),
                },
                "native_codegen_ms": gen_ms.map(|(l, w)| serde_json::json!({ "l2l3": l, "wire": w })),
                "native_fallback_nodes": { "l2l3": fallbacks.0, "wire": fallbacks.1 },
                "against_swx": swx.iter().map(|s| {
                    let p = find(s.program, a.engine);
                    s.json(p.mpps(), p.tsc_per_packet())
                }).collect::<Vec<_>>(),
            });
            println!("{v:#}");
        }
        ReportFormat::Text => {
            println!(
                "pisa bench pipeline — one core, 64-byte frames, batches of {}",
                a.batch
            );
            println!("{}", machine.line(1));
            println!(
                "{:<36} {:>7} {:>14} {:>12} {:>8}",
                "program", "engine", "Mpps (median)", "TSC/packet", "vs flat"
            );
            for s in &series {
                let tsc = s
                    .tsc_per_packet()
                    .map_or_else(|| "-".to_string(), |t| format!("{t:.0}"));
                println!(
                    "{:<36} {:>7} {:>14.2} {:>12} {:>8.2}",
                    s.w.name,
                    s.engine.to_string(),
                    s.mpps(),
                    tsc,
                    vs_flat(s)
                );
            }
            println!(
                "l2l3.p4 / wire.p4 on the {} engine: {:.2}; switch.p4 / wire.p4: {:.2}",
                a.engine,
                l2l3_mpps / wire_mpps,
                find("switch", a.engine).mpps() / wire_mpps
            );
            if let (Some((l, w)), (Some(fl), Some(fw))) = (gen_ms, fallbacks) {
                println!(
                    "native code generation (with lowering): l2l3.p4 {l:.1} ms, wire.p4 {w:.1} ms; \
                     nodes left to the flat engine: l2l3.p4 {fl}, wire.p4 {fw}"
                );
            }
            println!(
                "({} runs of {:.1} s per program and engine, interleaved; frames out per frame in: {:.2})",
                a.runs, a.seconds, out_per_in
            );
            for s in &swx {
                let p = find(s.program, a.engine);
                let tsc = |t: Option<f64>| t.map_or_else(|| "-".to_string(), |t| format!("{t:.0}"));
                println!(
                    "{:<36} {:>7} {:>14.2} {:>12}",
                    s.name,
                    s.mode,
                    s.mpps(),
                    tsc(s.tsc_per_packet())
                );
                if let Some(r) = &s.reason {
                    println!("  SWX ran interpreted, not compiled: {r}");
                }
                println!(
                    "  {}.p4 on pisa ({}) / SWX ({}): {:.2} ({:.2} vs {:.2} Mpps per core, TSC/packet {} vs {}); {} frames checked identical first",
                    s.program,
                    a.engine,
                    s.mode,
                    p.mpps() / s.mpps(),
                    p.mpps(),
                    s.mpps(),
                    tsc(p.tsc_per_packet()),
                    tsc(s.tsc_per_packet()),
                    s.checked
                );
            }
            if let Some(sc) = &scaling {
                sc.print();
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

//! `pisa leo check|bench|lab` and `pisa demo leo`: LEO (seed 004) — an application file
//! checked against its hardware model (profiled at init), and the KVS experiment of §V (Fig. 9
//! and Fig. 13 shapes): median latency vs offered rate per path-selection policy, with 3–9 µs
//! of network delay at the requester, the heuristic's and the LP's decision times, and the
//! paper's numbers beside them. `bench` runs the requests on the queue model of the emulated
//! F-NIC testbed (`hosts::leo::sim`); `lab` runs them in the lab over pisa's RDMA endpoint
//! with the switch, an off-path node and the server's CPU as paths (`labs::leo`): in memory, or
//! with `--netns` (root) in network namespaces, from the same lab code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use hosts::leo::lp;
use hosts::leo::queues::{demands, Queues};
use hosts::leo::select::{Policy, Selector};
use hosts::leo::sim::{self, median, Run, Testbed};
use hosts::leo::AppSpec;
use plotters::prelude::*;

use super::ReportFormat;

#[derive(Subcommand, Debug)]
pub enum LeoCommand {
    /// Check an application file: names, paths, and each request's estimated time and
    /// communication toll on every candidate path after profiling the testbed's links.
    Check(CheckArgs),
    /// Median latency vs request rate per policy (Fig. 9 / Fig. 13 shapes).
    Bench(BenchArgs),
    /// The KVS in the lab (in memory, or in namespaces with --netns) with pisa's switch
    /// running leo_kvs.p4 as the in-network accelerator (hot keys answered in the switch), per
    /// policy and rate.
    Lab(LabArgs),
}

#[derive(Args, Debug, Clone)]
pub struct LabArgs {
    #[arg(long, value_enum, default_value_t = Workload::YcsbB)]
    pub workload: Workload,
    /// Policies: leo, cpu, acc, greedy-e2e, greedy-intra (comma separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "leo,cpu,acc,greedy-intra"
    )]
    pub policy: Vec<String>,
    /// Offered rates, million requests per second (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5")]
    pub rate: Vec<f64>,
    /// Requests per rate and policy (at most 60000).
    #[arg(long, default_value_t = 10_000)]
    pub count: usize,
    /// Hot keys installed in the switch (the most popular of 100000, Zipf 0.99; 0: none, the
    /// switch path unused).
    #[arg(long, default_value_t = 256)]
    pub hot: u64,
    /// The hot-key refresh agent's poll period, µs (0: no agent).
    #[arg(long, default_value_t = 5.0)]
    pub agent_us: f64,
    /// Run in network namespaces (root): each host app on its own thread in its namespace, the
    /// switch on veths, wall-clock time (use rates of tens of krps: --rate 0.02).
    #[arg(long)]
    pub netns: bool,
    /// Every request type's dependency (§III-A) instead of the application file's (ADDR).
    #[arg(long, value_enum)]
    pub dependency: Option<DependencyArg>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

/// A request dependency (§III-A).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum DependencyArg {
    /// No ordering.
    None,
    /// Requests to the same address (key) in arrival order.
    Addr,
    /// The round trips of one message in order.
    Msg,
}

impl From<DependencyArg> for hosts::leo::Dependency {
    fn from(d: DependencyArg) -> Self {
        match d {
            DependencyArg::None => hosts::leo::Dependency::None,
            DependencyArg::Addr => hosts::leo::Dependency::Addr,
            DependencyArg::Msg => hosts::leo::Dependency::Msg,
        }
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The application file.
    pub app: PathBuf,
}

/// YCSB mixes of §V-B.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    /// GETs only.
    YcsbC,
    /// 95% GET, 5% PUT.
    YcsbB,
}

#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    /// The application file.
    #[arg(long, default_value = "deploy/leo/kvs.yaml")]
    pub app: PathBuf,
    #[arg(long, value_enum, default_value_t = Workload::YcsbC)]
    pub workload: Workload,
    /// Policies: leo, leo-reset, cpu, acc, greedy-e2e, greedy-intra, lp (comma separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "leo,leo-reset,cpu,acc,greedy-e2e,greedy-intra,lp"
    )]
    pub policy: Vec<String>,
    /// Offered rates, million requests per second (comma separated).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6,7,8")]
    pub rate: Vec<f64>,
    /// Requests per rate and policy (the LP policy solves one MILP per request).
    #[arg(long, default_value_t = 5_000)]
    pub count: usize,
    /// LP horizon k.
    #[arg(long, default_value_t = 3)]
    pub k: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Draw median latency vs rate per policy (SVG).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

#[derive(Args, Debug)]
pub struct LeoDemoArgs {
    /// Requests per rate.
    #[arg(long, default_value_t = 3_000)]
    pub count: usize,
}

pub fn run(cmd: LeoCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LeoCommand::Check(a) => check(&a.app),
        LeoCommand::Bench(a) => bench(&a),
        LeoCommand::Lab(a) => lab(&a),
    }
}

fn load(path: &Path) -> anyhow::Result<(AppSpec, Testbed)> {
    let path = pisa::bundled::path(&path.to_string_lossy())?;
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}", path.display()))?;
    let mut spec = AppSpec::from_yaml(&text).with_context(|| format!("{}", path.display()))?;
    let tb = Testbed::f_nic();
    spec.hw = tb.truth(&spec.hw);
    Ok((spec, tb))
}

fn check(path: &Path) -> anyhow::Result<ExitCode> {
    let (spec, _) = load(path)?;
    println!(
        "{}: {} paths, {} request types",
        spec.name,
        spec.paths.len(),
        spec.requests.len()
    );
    for (i, l) in spec.hw.links.iter().enumerate() {
        let p = spec.hw.link_profile(i)?;
        println!(
            "  link {:<9} {}-{}: profiled {:.0} ns, {:.1} GB/s, {:.1} Mmsg/s",
            l.name,
            l.a,
            l.b,
            p.latency_ns,
            p.bytes_per_ns,
            p.msgs_per_sec / 1e6
        );
    }
    let costs = spec.costs()?;
    for (r, c) in spec.requests.iter().zip(&costs) {
        for (&p, c) in r.paths.iter().zip(c) {
            println!(
                "  {:<7} on {:<5} ({:?}): T = {:.0} ns, toll = {:.0} ns",
                r.name, spec.paths[p].name, spec.paths[p].kind, c.traverse_ns, c.toll_ns
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

struct Point {
    policy: Policy,
    rate_mrps: f64,
    median_us: f64,
}

fn with_workload(mut spec: AppSpec, w: Workload) -> AppSpec {
    if w == Workload::YcsbC {
        for r in &mut spec.requests {
            r.share = if r.name == "GET" { 1.0 } else { 0.0 };
        }
    }
    spec
}

fn sweep(a: &BenchArgs) -> anyhow::Result<(Vec<Point>, AppSpec)> {
    let (spec, tb) = load(&a.app)?;
    let spec = with_workload(spec, a.workload);
    let policies = a
        .policy
        .iter()
        .map(|p| p.parse::<Policy>())
        .collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(
        a.rate.iter().all(|r| *r > 0.0 && *r < 1e3),
        "--rate: Mrps in (0, 1000)"
    );
    anyhow::ensure!(a.count >= 10 && a.count <= 10_000_000, "--count: 10..10M");
    anyhow::ensure!(
        (1..=MAX_K).contains(&a.k),
        "--k {}: the LP horizon is 1 to {MAX_K} requests (one MILP per request grows with it)",
        a.k
    );
    let mut points = Vec::new();
    for &policy in &policies {
        for &rate in &a.rate {
            let count = a.count;
            let run = Run {
                rate: rate * 1e6,
                count,
                seed: a.seed,
                k: a.k,
                change: None,
            };
            let o = sim::run(&spec, &tb, policy, &run)?;
            anyhow::ensure!(
                o.completions == count,
                "{policy}: {} of {count} answered",
                o.completions
            );
            points.push(Point {
                policy,
                rate_mrps: rate,
                median_us: median(&o.e2e_ns) / 1e3,
            });
        }
    }
    Ok((points, spec))
}

/// Highest offered rate whose median stays within 1.5× of the lowest rate's.
fn sustainable(points: &[Point], p: Policy) -> f64 {
    let mine: Vec<&Point> = points.iter().filter(|x| x.policy == p).collect();
    let base = mine.first().map_or(0.0, |x| x.median_us);
    mine.iter()
        .filter(|x| x.median_us <= base * 1.5)
        .map(|x| x.rate_mrps)
        .fold(0.0, f64::max)
}

/// The longest LP horizon `--k` takes: the paper plans a few requests ahead, and each step
/// adds a copy of every decision variable to the MILP solved per request.
const MAX_K: usize = 32;

/// Median ns of the heuristic's decision and of one k-step LP solve.
fn decision_times(spec: &AppSpec, k: usize) -> anyhow::Result<(f64, f64)> {
    let sel = Selector::new(spec, Policy::Leo)?;
    let n = 20_000;
    let t = Instant::now();
    let mut acc = 0usize;
    for i in 0..n {
        acc = acc.wrapping_add(std::hint::black_box(&sel).choose(i % spec.requests.len()));
    }
    std::hint::black_box(acc);
    let heur = t.elapsed().as_nanos() as f64 / n as f64;
    let d = demands(spec)?;
    let q = Queues(vec![200.0; spec.hw.devices.len() + spec.hw.links.len()]);
    let h: Vec<lp::Step> = (0..k)
        .map(|i| lp::Step {
            request: i % spec.requests.len(),
            dt_ns: 150.0,
        })
        .collect();
    let mut lps = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        lp::solve(sel.costs(), &d, &q, &h)?;
        lps.push(t.elapsed().as_nanos() as f64);
    }
    Ok((heur, median(&lps)))
}

fn bench(a: &BenchArgs) -> anyhow::Result<ExitCode> {
    let (points, spec) = sweep(a)?;
    let (heur_ns, lp_ns) = decision_times(&spec, a.k)?;
    if let Some(p) = &a.plot {
        plot(p, &points).map_err(|e| anyhow::anyhow!("plot {}: {e}", p.display()))?;
    }
    let policies: Vec<Policy> = Policy::ALL
        .into_iter()
        .filter(|p| points.iter().any(|x| x.policy == *p))
        .collect();
    if a.report == ReportFormat::Json {
        let rows: Vec<_> = points
            .iter()
            .map(|p| serde_json::json!({"policy": p.policy.to_string(), "rate_mrps": p.rate_mrps, "median_us": p.median_us}))
            .collect();
        let sus: serde_json::Map<_, _> = policies
            .iter()
            .map(|p| (p.to_string(), sustainable(&points, *p).into()))
            .collect();
        let j = serde_json::json!({"app": spec.name, "workload": format!("{:?}", a.workload), "points": rows,
            "sustainable_mrps": sus, "heuristic_decision_ns": heur_ns, "heuristic_cpu_share_at_top_rate": heur_ns * a.rate.iter().copied().fold(0.0, f64::max) * 1e-3, "lp_solve_ns": lp_ns, "lp_k": a.k});
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} {:?}: median latency (us) vs offered rate (Mrps), 3-9 us network delay at the requester", spec.name, a.workload);
    print!("{:>6}", "Mrps");
    for p in &policies {
        print!(" {:>13}", p.to_string());
    }
    println!();
    for &r in &a.rate {
        print!("{r:>6}");
        for p in &policies {
            let m = points
                .iter()
                .find(|x| x.policy == *p && x.rate_mrps == r)
                .map_or(f64::NAN, |x| x.median_us);
            print!(" {m:>13.2}");
        }
        println!();
    }
    print!("sustainable (median within 1.5x of the lowest rate's), Mrps:");
    for p in &policies {
        print!("  {p} {:.0}", sustainable(&points, *p));
    }
    println!();
    let s = |p| sustainable(&points, p).max(1e-9);
    if policies.contains(&Policy::Leo)
        && policies.contains(&Policy::Cpu)
        && policies.contains(&Policy::Acc)
    {
        println!(
            "LEO vs CPU-only {:.2}x, vs accelerator-only {:.2}x   (paper Fig. 9: LEO 1.2-2x the sustainable throughput of both; acc-only ~1.5x CPU-only on YCSB-C)",
            s(Policy::Leo) / s(Policy::Cpu),
            s(Policy::Leo) / s(Policy::Acc)
        );
    }
    fig13(&points, &a.rate);
    println!(
        "decision time: heuristic {heur_ns:.0} ns, LP (k={}) {:.2} ms   (paper: ~1.5 us vs >= 2.4 ms with CPLEX)",
        a.k,
        lp_ns / 1e6
    );
    let top = a.rate.iter().copied().fold(0.0, f64::max);
    println!(
        "CPU overhead of path selection at {top} Mrps: {:.1}% of one core   (paper: 10.3% CPU)",
        heur_ns * top * 1e6 / 1e9 * 100.0
    );
    Ok(ExitCode::SUCCESS)
}

/// Fig. 13 beside the paper: LEO's median against the better greedy policy's and the LP's at
/// each rate where they ran.
fn fig13(points: &[Point], rates: &[f64]) {
    let at = |p: Policy, r: f64| {
        points
            .iter()
            .find(|x| x.policy == p && x.rate_mrps == r)
            .map(|x| x.median_us)
    };
    println!("Fig. 13 (paper: LEO 1.18-2.17x better than Greedy-E2E/Greedy-Intra, comparable to the offline LP; Greedy-E2E worst):");
    println!(
        "  (LEO here: the toll heuristic with k̂ = the path's requests in flight, pisa's estimator; \
         leo-reset: k̂ by §III-B2's rule as worded, +1 when a JCT exceeds T, else 0 — the \
         paper's claim is LEO's row, the paper's rule is the leo-reset column)"
    );
    for &r in rates {
        let Some(leo) = at(Policy::Leo, r) else {
            continue;
        };
        let greedy = [Policy::GreedyE2e, Policy::GreedyIntra]
            .into_iter()
            .filter_map(|p| at(p, r))
            .fold(f64::NAN, f64::min);
        let mut line = format!("  {r:>4} Mrps: LEO {leo:.2} us");
        if !greedy.is_nan() {
            line += &format!(", better greedy / LEO {:.2}x", greedy / leo);
        }
        if let Some(reset) = at(Policy::LeoReset, r) {
            line += &format!(", leo-reset / LEO {:.2}x", reset / leo);
            if !greedy.is_nan() {
                line += &format!(", better greedy / leo-reset {:.2}x", greedy / reset);
            }
        }
        if let Some(lp) = at(Policy::Lp, r) {
            line += &format!(", LEO / LP {:.2}x", leo / lp);
        }
        println!("{line}");
    }
}

fn plot(path: &Path, points: &[Point]) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::new(path, (640, 420)).into_drawing_area();
    root.fill(&WHITE)?;
    let xmax = points.iter().map(|p| p.rate_mrps).fold(0.0, f64::max) * 1.05;
    let ymax = points
        .iter()
        .map(|p| p.median_us)
        .fold(0.0, f64::max)
        .min(100.0)
        * 1.1;
    let mut chart = ChartBuilder::on(&root)
        .caption("LEO KVS: median latency vs rate", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..xmax, 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("Mrps")
        .y_desc("median us")
        .draw()?;
    for (i, p) in Policy::ALL.into_iter().enumerate() {
        let line: Vec<(f64, f64)> = points
            .iter()
            .filter(|x| x.policy == p)
            .map(|x| (x.rate_mrps, x.median_us.min(ymax)))
            .collect();
        if line.is_empty() {
            continue;
        }
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))?
            .label(p.to_string())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}

fn lab(a: &LabArgs) -> anyhow::Result<ExitCode> {
    let policies = a
        .policy
        .iter()
        .map(|p| p.parse::<Policy>())
        .collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(
        a.rate.iter().all(|r| *r > 0.0 && *r < 1e3),
        "--rate: Mrps in (0, 1000)"
    );
    anyhow::ensure!(
        a.agent_us.is_finite() && (0.0..=1e6).contains(&a.agent_us),
        "--agent-us {}: a poll period of 0 (no agent) to 1,000,000 µs",
        a.agent_us
    );
    anyhow::ensure!(
        !a.netns || dataplane::netns::is_root(),
        "--netns needs root (network namespaces, veth pairs, AF_PACKET)"
    );
    let mut rows = Vec::new();
    for &policy in &policies {
        for &rate in &a.rate {
            let cfg = labs::leo::LabConfig {
                rate: rate * 1e6,
                count: a.count,
                put_share: if a.workload == Workload::YcsbB {
                    0.05
                } else {
                    0.0
                },
                keys: 100_000,
                hot: a.hot,
                policy,
                agent_ns: (a.agent_us > 0.0).then_some((a.agent_us * 1e3) as u64),
                seed: 1,
                netns: a.netns,
                dependency: a.dependency.map(Into::into),
            };
            let r = labs::leo::run(&cfg).with_context(|| format!("{policy} at {rate} Mrps"))?;
            anyhow::ensure!(
                r.answered == r.sent && r.wrong == 0 && r.unexpected == 0,
                "{policy} at {rate} Mrps: {r:?}"
            );
            rows.push((policy, rate, r));
        }
    }
    if a.report == ReportFormat::Json {
        let j: Vec<_> = rows
            .iter()
            .map(|(p, rate, r)| {
                serde_json::json!({"policy": p.to_string(), "rate_mrps": rate,
                "median_us": r.median_us, "p99_us": r.p99_us, "in_network": r.in_network,
                "share_switch": r.shares[0], "share_offpath": r.shares[1], "share_cpu": r.shares[2],
                "refreshed": r.refreshed, "answered": r.answered, "wrong": r.wrong,
                "held": r.held, "reordered": r.reordered,
                "driver": r.driver, "achieved_krps": achieved_krps(r)})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "KVS {:?} in the lab over pisa's RDMA endpoint: client - switch (leo_kvs.p4, {} hot keys: index lookups on-path) - server (CPU 300 ns/GET, values READ by RDMA) and an off-path accelerator node (250 ns/lookup, own 25G link); every request answered once with the right value",
        a.workload, a.hot
    );
    if let Some((_, _, r)) = rows.first() {
        println!("lab: {}", r.driver);
        print!("links profiled by probe frames:");
        for (n, lat, gbs, mmsg) in &r.links {
            print!("  {n} {lat:.0} ns {gbs:.1} GB/s {mmsg:.0} Mmsg/s;");
        }
        println!();
    }
    println!(
        "{:>13} {:>6} {:>9} {:>9} {:>9} {:>10} {:>8} {:>8} {:>8} {:>10} {:>6} {:>9}",
        "policy",
        "Mrps",
        "got krps",
        "p50 us",
        "p99 us",
        "in switch",
        "switch",
        "offpath",
        "cpu",
        "refreshed",
        "held",
        "reordered"
    );
    for (p, rate, r) in &rows {
        println!(
            "{:>13} {rate:>6} {:>9.1} {:>9.2} {:>9.2} {:>9.0}% {:>7.0}% {:>7.0}% {:>7.0}% {:>10} {:>6} {:>9}",
            p.to_string(),
            achieved_krps(r),
            r.median_us,
            r.p99_us,
            r.in_network * 100.0,
            r.shares[0] * 100.0,
            r.shares[1] * 100.0,
            r.shares[2] * 100.0,
            r.refreshed,
            r.held,
            r.reordered
        );
    }
    let points: Vec<Point> = rows
        .iter()
        .map(|(p, rate, r)| Point {
            policy: *p,
            rate_mrps: *rate,
            median_us: r.median_us,
        })
        .collect();
    print!("sustainable (median within 1.5x of the lowest rate's), Mrps:");
    for p in &policies {
        print!("  {p} {:.0}", sustainable(&points, *p));
    }
    println!(
        "   (paper Fig. 9: LEO 1.2-2x the sustainable throughput of CPU-only and accelerator-only)"
    );
    println!("(acc = the first accelerator path: the switch for hot keys, the off-path node for the rest; --hot 0: off-path vs CPU only)");
    Ok(ExitCode::SUCCESS)
}

/// Requests answered per second of lab time, thousands.
fn achieved_krps(r: &labs::leo::LabReport) -> f64 {
    r.answered as f64 / r.seconds.max(1e-9) / 1e3
}

/// `pisa demo leo`: the KVS comparison on YCSB-C and YCSB-B, short.
pub fn demo(a: LeoDemoArgs) -> anyhow::Result<ExitCode> {
    println!("== pisa leo check deploy/leo/kvs.yaml");
    check(Path::new("deploy/leo/kvs.yaml"))?;
    for w in [Workload::YcsbC, Workload::YcsbB] {
        println!(
            "\n== pisa leo bench --workload {}",
            if w == Workload::YcsbC {
                "ycsb-c"
            } else {
                "ycsb-b"
            }
        );
        bench(&BenchArgs {
            app: "deploy/leo/kvs.yaml".into(),
            workload: w,
            policy: Policy::ALL.iter().map(|p| p.to_string()).collect(),
            rate: vec![1.0, 3.0, 5.0, 7.0, 8.0],
            count: a.count,
            k: 3,
            seed: 1,
            plot: None,
            report: ReportFormat::Text,
        })?;
    }
    println!("\n== pisa leo lab --workload ycsb-b   (pisa's switch as the in-network accelerator)");
    let lab_args = LabArgs {
        workload: Workload::YcsbB,
        policy: vec!["leo".into(), "cpu".into(), "acc".into()],
        rate: vec![1.0, 3.0, 4.0],
        count: a.count.min(60_000),
        hot: 256,
        agent_us: 5.0,
        netns: false,
        dependency: None,
        report: ReportFormat::Text,
    };
    lab(&lab_args)?;
    println!("\n== pisa leo lab --workload ycsb-b --hot 0 --policy acc,leo   (no switch path: off-path accelerator vs CPU)");
    lab(&LabArgs {
        policy: vec!["acc".into(), "leo".into()],
        hot: 0,
        ..lab_args
    })?;
    Ok(ExitCode::SUCCESS)
}

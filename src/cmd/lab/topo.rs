//! The topology verbs of `pisa lab` (arguments and printing; the work is the `labs` crate's).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use clap::{Args, Subcommand};
use labs::netns::{NetnsLab, NetnsSwitches};
use labs::ping::PingReport;
use labs::{MemLab, Topology};

use crate::cmd::ReportFormat;

/// Whether a lab file is a topology (has `switches:` or `links:`) rather than a single-switch
/// host file.
pub fn is_topology(file: &Path) -> anyhow::Result<bool> {
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read `{}`", file.display()))?;
    Ok(text
        .lines()
        .any(|l| l.starts_with("switches:") || l.starts_with("links:")))
}

pub(crate) fn load(file: &Path) -> anyhow::Result<Topology> {
    Ok(Topology::load(file)?)
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The topology file.
    pub topology: PathBuf,
    /// Network namespaces and veth pairs (root), wall-clock time, until SIGINT/SIGTERM.
    #[arg(long)]
    pub netns: bool,
    /// With --netns: stop after this many seconds instead of waiting for a signal.
    #[arg(long, value_name = "SECONDS", value_parser = crate::cmd::seconds)]
    pub duration: Option<f64>,
    /// With --netns: every switch serves P4Runtime, the topology's i-th switch on this
    /// address's port + i (e.g. 127.0.0.1:9559).
    #[arg(long, value_name = "ADDR", requires = "netns")]
    pub p4runtime: Option<std::net::SocketAddr>,
    /// In memory: datagrams to send (all pairs, round robin).
    #[arg(long, default_value_t = 200_000)]
    pub frames: u64,
    /// In memory: datagrams per host per burst.
    #[arg(long, default_value_t = 32)]
    pub burst: usize,
    /// In memory: measured rounds (each a fresh lab, then one switch's pipeline alone); the
    /// medians are reported.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// `text` for people, `json` for scripts (one object on stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

#[derive(Args, Debug)]
pub struct PingAllArgs {
    /// The topology file.
    pub topology: PathBuf,
    /// Network namespaces and veth pairs (root) instead of memory.
    #[arg(long)]
    pub netns: bool,
    /// `text` for people, `json` for scripts (one object on stdout).
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
}

#[derive(Args, Debug)]
pub struct TablesArgs {
    /// The topology file.
    pub topology: PathBuf,
    /// Write `<switch>.tables.yaml` files here instead of printing them all.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// The topology file.
    pub topology: PathBuf,
    /// The link: `A~B` as ping-all prints it, or one end (`h1`, `leaf1:2`).
    pub link: String,
    /// The pcap file to write.
    pub out: PathBuf,
    /// Capture on the running namespace lab's cable instead (root; the lab up and its switches
    /// running, e.g. `pisa lab run TOPOLOGY --netns` in another shell) for `--duration`.
    #[arg(long)]
    pub netns: bool,
    /// With --netns: seconds to capture.
    #[arg(long, default_value_t = 5.0, value_parser = crate::cmd::seconds)]
    pub duration: f64,
}

#[derive(Args, Debug)]
pub struct GenerateArgs {
    #[command(subcommand)]
    pub kind: GenerateCommand,
    /// Write the topology file here instead of printing it; the program's path in it is then
    /// written relative to the file's directory (printed, it is absolute).
    #[arg(long, global = true)]
    pub out: Option<PathBuf>,
    /// The program every switch runs (it must follow fabric.p4's table contract).
    #[arg(long, global = true, default_value = "p4/programs/fabric.p4")]
    pub program: PathBuf,
}

#[derive(Subcommand, Debug)]
pub enum GenerateCommand {
    /// A k-ary fat tree (k even): (k/2)² core, k pods of k/2 aggregation and k/2 edge switches,
    /// k³/4 hosts.
    FatTree {
        /// Ports per switch (even, 2 to 254).
        #[arg(long, default_value_t = 4)]
        k: u16,
    },
    /// Every leaf cabled to every spine.
    LeafSpine {
        /// Spine switches (each leaf has one link to every spine).
        #[arg(long, default_value_t = 2)]
        spines: u16,
        /// Leaf switches.
        #[arg(long, default_value_t = 4)]
        leaves: u16,
        /// Hosts per leaf.
        #[arg(long, default_value_t = 2)]
        hosts: u16,
    },
    /// The MC-RDMA testbed of its paper's Figure 3.
    Mcrdma,
}

pub fn generate(g: GenerateArgs) -> anyhow::Result<ExitCode> {
    // A topology names its program relative to its own directory: the generated path must
    // resolve from wherever the file is written (the shipped fabric.p4 from the bundle when
    // pisa runs outside its clone).
    let program = match g.program.is_file() {
        true => g.program.clone(),
        false => pisa::bundled::path(&g.program.to_string_lossy())?,
    };
    let program = program
        .canonicalize()
        .with_context(|| format!("cannot resolve `{}`", program.display()))?;
    let out = match &g.out {
        Some(out) => {
            let dir = out.parent().filter(|d| !d.as_os_str().is_empty());
            let dir = dir.unwrap_or(Path::new("."));
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create `{}`", dir.display()))?;
            let dir = dir.canonicalize()?;
            Some((out, dir.join(out.file_name().unwrap_or_default())))
        }
        None => None,
    };
    let named = match &out {
        Some((_, file)) => labs::generate::program_path_from(file, &program),
        None => program.display().to_string(),
    };
    let text = match g.kind {
        GenerateCommand::FatTree { k } => {
            labs::generate::fat_tree_yaml(k, &named).map_err(|e| anyhow!(e))?
        }
        GenerateCommand::LeafSpine {
            spines,
            leaves,
            hosts,
        } => labs::generate::leaf_spine_yaml(spines, leaves, hosts, &named)
            .map_err(|e| anyhow!(e))?,
        GenerateCommand::Mcrdma => labs::generate::mcrdma_yaml(&named),
    };
    match out {
        Some((out, _)) => std::fs::write(out, text)
            .with_context(|| format!("cannot write `{}`", out.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn tables(a: TablesArgs) -> anyhow::Result<ExitCode> {
    let topo = load(&a.topology)?;
    let routes = labs::routes::generate(&topo);
    for (s, r) in topo.switches.iter().zip(&routes) {
        let text = r.to_yaml(&s.name);
        match &a.out_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create `{}`", dir.display()))?;
                let f = dir.join(format!("{}.tables.yaml", s.name));
                std::fs::write(&f, text)
                    .with_context(|| format!("cannot write `{}`", f.display()))?;
                println!("{}", f.display());
            }
            None => print!("---\n{text}"),
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_ping(r: &PingReport, topo: &Topology, fmt: ReportFormat) -> anyhow::Result<ExitCode> {
    match fmt {
        ReportFormat::Text => print!("{}", r.render(topo)),
        ReportFormat::Json => println!("{}", serde_json::to_string_pretty(r)?),
    }
    Ok(if r.all_reached() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn ping_all(a: PingAllArgs) -> anyhow::Result<ExitCode> {
    let topo = load(&a.topology)?;
    let r = if a.netns {
        labs::netns::ping_all(&topo)?
    } else {
        let mut lab = MemLab::new(topo.clone())?;
        labs::ping::ping_all_mem(&mut lab)
    };
    print_ping(&r, &topo, a.report)
}

pub fn capture(a: CaptureArgs) -> anyhow::Result<ExitCode> {
    let topo = load(&a.topology)?;
    if a.netns {
        let link = topo
            .find_link(&a.link)
            .ok_or_else(|| anyhow!("no link {:?} in {}", a.link, a.topology.display()))?;
        let lab = NetnsLab::up(&topo)?;
        eprintln!(
            "pisa: capturing link {} for {} s (both ends)",
            topo.link_name(link),
            a.duration
        );
        let n = labs::netns::capture(&lab, link, Duration::from_secs_f64(a.duration), &a.out)?;
        lab.down()?;
        println!("{n} frame(s) written to {}", a.out.display());
        return Ok(ExitCode::SUCCESS);
    }
    let mut lab = MemLab::new(topo.clone())?;
    let link = lab.tap(&a.link)?;
    let r = labs::ping::ping_all_mem(&mut lab);
    let n = lab.write_capture(link, &a.out)?;
    println!(
        "{n} frame(s) of link {} ({} of {} pairs reached, in memory) written to {}",
        topo.link_name(link),
        r.reached,
        r.pairs,
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `pisa lab up TOPOLOGY`: namespaces and cables, no switches.
pub fn up(file: &Path) -> anyhow::Result<ExitCode> {
    let topo = load(file)?;
    let st = dataplane::lab::lab_up(&labs::netns::lab_of(&topo))?;
    println!(
        "lab {} is up: {} host namespace(s), {} interface pair(s)",
        st.name,
        st.hosts.len(),
        st.links.len()
    );
    println!(
        "run its switches with: pisa lab run {} --netns (pisa lab down {} removes it)",
        file.display(),
        st.name
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: RunArgs) -> anyhow::Result<ExitCode> {
    let topo = load(&a.topology)?;
    if a.netns {
        return run_netns(&topo, a.duration, a.p4runtime);
    }
    eprintln!(
        "pisa: {} switch(es), {} host(s), {} link(s) in memory; {} round(s) of {} datagram(s)",
        topo.switches.len(),
        topo.hosts.len(),
        topo.links.len(),
        a.rounds.max(1),
        a.frames
    );
    let mut rounds = Vec::new();
    let mut last = None;
    for r in 0..a.rounds.max(1) {
        let mut lab = MemLab::new(topo.clone())?;
        let load = labs::load::run(&mut lab, a.frames, a.burst);
        let single = labs::load::pipeline_rate(&lab, 1.0)?;
        eprintln!(
            "  round {}: {:.3} M frames/s, {:.3} M passes/s, one switch alone {:.3} M passes/s",
            r + 1,
            load.frames_per_s() / 1e6,
            load.passes_per_s() / 1e6,
            single / 1e6
        );
        rounds.push((load.clone(), single));
        last = Some((lab, load));
    }
    let med = |f: &dyn Fn(&(labs::load::LoadReport, f64)) -> f64| {
        crate::cmd::bench::median(rounds.iter().map(f).collect())
    };
    let fps = med(&|(l, _)| l.frames_per_s());
    let pps = med(&|(l, _)| l.passes_per_s());
    let single = med(&|(_, s)| *s);
    let ratio = med(&|(l, s)| l.passes_per_s() / s.max(1e-9));
    let Some((lab, load)) = last else {
        return Ok(ExitCode::SUCCESS);
    };
    match a.report {
        ReportFormat::Json => println!(
            "{}",
            serde_json::json!({
                "topology": topo.name,
                "rounds": rounds.len(),
                "last_round": load,
                "frames_per_s": fps,
                "passes_per_s": pps,
                "single_switch_passes_per_s": single,
                "lab_to_single_switch": ratio,
                "machine": pisa::machine::Machine::now().json(),
                "switches": topo.switches.iter().map(|s| s.name.clone()).zip(lab.switch_counters()).collect::<std::collections::BTreeMap<_, _>>(),
            })
        ),
        ReportFormat::Text => {
            println!(
                "{} of {} datagram(s) delivered per round; last round {:.3} s wall, {:.6} s virtual",
                load.delivered, load.sent, load.wall_s, load.virtual_s
            );
            println!(
                "  {:.3} M frames/s delivered, {:.3} M switch passes/s ({:.2} per frame) on one core (medians of {})",
                fps / 1e6,
                pps / 1e6,
                load.passes as f64 / load.delivered.max(1) as f64,
                rounds.len()
            );
            println!(
                "  one switch's pipeline alone, same frames: {:.3} M passes/s (lab / alone = {:.2})",
                single / 1e6,
                ratio
            );
            println!("{}", pisa::machine::Machine::now().line(1));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn run_netns(
    topo: &Topology,
    duration: Option<f64>,
    p4runtime: Option<std::net::SocketAddr>,
) -> anyhow::Result<ExitCode> {
    let term = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, term.clone()).context("cannot install signal handler")?;
    }
    let lab = NetnsLab::up(topo)?;
    let switches = NetnsSwitches::start(topo, true, p4runtime)?;
    for (name, addr) in switches.p4runtime_addrs() {
        eprintln!(
            "pisa: lab {}: switch {name} serves P4Runtime on {addr}",
            topo.name
        );
    }
    eprintln!(
        "pisa: lab {}: {} switch(es) forwarding on veths; control sockets {}; {}",
        topo.name,
        topo.switches.len(),
        labs::netns::ctl_path(&topo.name, "SWITCH").display(),
        match duration {
            Some(d) => format!("stopping after {d} s"),
            None => "SIGINT or SIGTERM stops".into(),
        }
    );
    println!("ready");
    let start = Instant::now();
    while !term.load(Ordering::Acquire)
        && duration.is_none_or(|d| start.elapsed() < Duration::from_secs_f64(d))
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    for (name, c) in switches.counters() {
        let ports: Vec<String> = c
            .ports
            .iter()
            .map(|p| format!("{}[{}] {}/{}/{}", p.devport, p.peer, p.rx, p.tx, p.drops))
            .collect();
        println!(
            "{name:<8} passes {:>8} drops {:>6} | {}",
            c.passes,
            c.switch_drops,
            ports.join("  ")
        );
    }
    switches.stop()?;
    lab.down()?;
    Ok(ExitCode::SUCCESS)
}

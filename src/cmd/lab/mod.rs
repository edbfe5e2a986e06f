//! `pisa lab`: lab topologies. For any topology file (`deploy/labs/*.yaml` with `switches:` and
//! `links:`; the `labs` crate): `run`, `ping-all`, `tables`, `capture` (in memory by default,
//! `--netns` for namespaces) and `generate`. For namespaces, of a topology or of a single-switch
//! host file: `up FILE | down LAB | status LAB | exec LAB HOST -- CMD... | list` (LAB: the
//! lab's name or the file it was brought up from), over `dataplane::lab`, which records what it
//! created so `down` removes exactly that, after stopping what still runs in its namespaces.

pub(crate) mod topo;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;
use dataplane::lab::{self, Lab};

#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Build a lab's namespaces and cables (root): a topology file's, or a single-switch host
    /// file's (then print the `--port` options to attach `pisa run`).
    Up {
        /// The lab file (e.g. deploy/labs/l2l3-4hosts.yaml).
        file: PathBuf,
    },
    /// Remove everything a lab created, after stopping the processes still running in its
    /// namespaces (what `pisa lab exec` started there, e.g. `iperf3 -s -D`).
    Down {
        /// The lab: its name (the file's `name:` field) or the file `lab up` was given.
        name: String,
    },
    /// Run a command on a host of a running lab: `pisa lab exec LAB HOST -- CMD ARGS...`.
    Exec {
        /// The lab: its name or its file.
        lab: String,
        /// The host.
        host: String,
        /// The command and its arguments.
        #[arg(last = true, required = true)]
        argv: Vec<String>,
    },
    /// List running labs.
    List,
    /// What a running lab consists of: namespaces, interfaces, hosts.
    Status {
        /// The lab: its name or its file.
        name: String,
    },
    /// Run every switch of a topology: in memory (default) with simulated all-pairs traffic
    /// and its rate, or with `--netns` on the lab's veths until SIGINT/SIGTERM.
    Run(topo::RunArgs),
    /// Every host pair exchanges a frame through the fabric: reachability matrix, per-switch
    /// port counters; exit 0 only when every pair is reached.
    PingAll(topo::PingAllArgs),
    /// Write every switch's table state (routes, ECMP groups) generated from a topology.
    Tables(topo::TablesArgs),
    /// Write a link's frames to a pcap file while the hosts ping each other.
    Capture(topo::CaptureArgs),
    /// Print (or write with --out) a topology file: a fat tree, a leaf-spine or the MC-RDMA
    /// testbed.
    Generate(topo::GenerateArgs),
}

fn state_dir() -> PathBuf {
    PathBuf::from(lab::DEFAULT_STATE_DIR)
}

/// The lab an argument of `down`, `status` or `exec` names: a lab name as it is, or the lab
/// file (topology or host file) that `lab up` was given.
fn lab_name(arg: &str) -> anyhow::Result<String> {
    let path = Path::new(arg);
    if !path.is_file() {
        return Ok(arg.to_string());
    }
    if topo::is_topology(path)? {
        Ok(labs::netns::lab_of(&topo::load(path)?).name)
    } else {
        Ok(Lab::load(path)?.name)
    }
}

pub fn run(cmd: LabCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        LabCommand::Run(a) => topo::run(a),
        LabCommand::PingAll(a) => topo::ping_all(a),
        LabCommand::Tables(a) => topo::tables(a),
        LabCommand::Capture(a) => topo::capture(a),
        LabCommand::Generate(g) => topo::generate(g),
        LabCommand::Status { name } => {
            let name = lab_name(&name)?;
            let st = lab::load_state(&state_dir(), &name)?;
            println!(
                "lab {name}: {} namespace(s), {} root-namespace interface(s)",
                st.namespaces.len(),
                st.links.len()
            );
            for h in &st.hosts {
                println!(
                    "  {:<8} netns {:<28} {} <-> {}",
                    h.name, h.netns, h.host_if, h.switch_if
                );
            }
            let created: Vec<&str> = st.links.iter().map(|l| l.name.as_str()).collect();
            println!("  interfaces: {}", created.join(" "));
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Up { file } if topo::is_topology(&file)? => topo::up(&file),
        LabCommand::Up { file } => {
            let l = Lab::load(&file)?;
            let st = lab::lab_up(&l)?;
            println!("lab {} is up ({} host(s))", st.name, st.hosts.len());
            for h in &st.hosts {
                println!(
                    "  {:<8} netns {:<28} {} <-> {} (switch port {})",
                    h.name, h.netns, h.host_if, h.switch_if, h.port
                );
            }
            let mut ports: Vec<String> = st
                .port_specs()
                .into_iter()
                .map(|(p, s)| format!("--port {p}={s}"))
                .collect();
            // Link models the lab file asks for, as `pisa run` options.
            for h in &st.hosts {
                if let Some(l) = &h.link {
                    ports.push(format!("--link '{}={l}'", h.port));
                }
            }
            println!(
                "attach the switch with: pisa run --program P4 --tables T {}",
                ports.join(" ")
            );
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Down { name } => {
            let name = lab_name(&name)?;
            lab::lab_down(&name)?;
            println!("lab {name} is down");
            Ok(ExitCode::SUCCESS)
        }
        LabCommand::Exec { lab, host, argv } => {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let st = lab::load_state(&state_dir(), &lab_name(&lab)?)?;
            let h = st.host(&host)?;
            // Inherit stdio so interactive commands (ping, iperf3) show their output live.
            let status = std::process::Command::new("ip")
                .args(["netns", "exec", h.netns.as_str()])
                .args(&argv)
                .status()
                .context("cannot run `ip netns exec` (apt-get install iproute2)")?;
            Ok(match status.code() {
                Some(0) => ExitCode::SUCCESS,
                Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
                None => ExitCode::from(1),
            })
        }
        LabCommand::List => {
            let dir = state_dir();
            let mut names: Vec<String> = match std::fs::read_dir(&dir) {
                Ok(rd) => rd
                    .filter_map(Result::ok)
                    .filter_map(|e| {
                        let n = e.file_name().to_string_lossy().into_owned();
                        n.strip_suffix(".json").map(str::to_string)
                    })
                    .collect(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot read `{}`", dir.display()))
                }
            };
            names.sort();
            for n in &names {
                match lab::load_state(&dir, n) {
                    Ok(st) => {
                        let hosts: Vec<String> = st
                            .hosts
                            .iter()
                            .map(|h| format!("{}@{}", h.name, h.port))
                            .collect();
                        println!("{n}: {}", hosts.join(" "));
                    }
                    Err(e) => println!("{n}: unreadable state ({e})"),
                }
            }
            if names.is_empty() {
                println!("no labs are up");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

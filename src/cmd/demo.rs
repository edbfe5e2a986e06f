//! `pisa demo`: the main job of the README. Compiles l2l3.p4, programs the four-host table
//! file, replays the bundled captures and prints what came out where — no root, no NIC.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::replay::InputSpec;
use super::run::{replay_to_dir, summary};
use super::{program, CompileArgs, TargetArg};

#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Another demo than l2l3's.
    #[command(subcommand)]
    pub which: Option<DemoCommand>,
    /// Where the output captures go.
    #[arg(long, default_value = "out/demo")]
    pub out_dir: PathBuf,
}

/// The other demos.
#[derive(Subcommand, Debug)]
pub enum DemoCommand {
    /// P4CE vs Mu: consensus with replication and ACK aggregation in the switch (p4ce.p4)
    /// against unicast replication, 2 and 4 replicas, side by side.
    P4ce(super::consensus::P4ceDemoArgs),
    /// MC-RDMA vs fanout vs chain replication on the paper's testbed: short versions of its
    /// Fig. 4 (latency and sender bandwidth vs request size), Fig. 5 (DCQCN with two groups and
    /// an RC flow), Fig. 6 (7 receivers vs congested sub-flows), Fig. 7 (loss on the long path).
    Mcrdma(super::mcrdma::McrdmaDemoArgs),
    /// Acuerdo (ICPP 2022): Figure 8, Table 1 and Figure 9 (against etcd and ZooKeeper)
    /// beside the paper's numbers.
    Acuerdo(super::acuerdo::AcuerdoDemoArgs),
    /// LEO (seed 004): the KVS's median latency vs rate per path-selection policy (Fig. 9 and
    /// Fig. 13 shapes) beside the paper's numbers.
    Leo(super::leo::LeoDemoArgs),
    /// 1Pipe on the k=4 fat tree: beacon interval sweep (latency overhead over an unordered
    /// transport, beacon share; Figs. 9a, 13b), reliable against best effort, both under loss.
    Onepipe(super::onepipe::OnepipeDemoArgs),
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    match args.which {
        Some(DemoCommand::P4ce(a)) => return super::consensus::demo(a),
        Some(DemoCommand::Mcrdma(a)) => return super::mcrdma::demo(a),
        Some(DemoCommand::Acuerdo(a)) => return super::acuerdo::demo(a),
        Some(DemoCommand::Leo(a)) => return super::leo::demo(a),
        Some(DemoCommand::Onepipe(a)) => return super::onepipe::demo(a),
        None => {}
    }
    let prog = pisa::bundled::path("p4/programs/l2l3.p4")?;
    let tables = pisa::bundled::path("p4/programs/l2l3.tables.yaml")?;
    let compile = CompileArgs {
        target: TargetArg::Tofino1,
        include: Vec::new(),
        define: Vec::new(),
        disable_parse_depth_limit: false,
    };
    println!("== pisa check {}", prog.display());
    let (compiled, mut sw) = program::load_switch(&prog, Some(&tables), &compile, None)?;
    if let Some(r) = &compiled.resources {
        print!("{r}");
    }
    let inputs = vec![
        InputSpec {
            port: 0,
            path: pisa::bundled::path("examples/l2l3/in0.pcap")?,
        },
        InputSpec {
            port: 1,
            path: pisa::bundled::path("examples/l2l3/in1.pcap")?,
        },
    ];
    println!("\n== pisa run (tables: {})", tables.display());
    println!(
        "l2l3.p4 with four hosts, MACs 02:00:00:00:00:0N on ports 0-3: bridged by MAC (unknown \
         MACs flooded to group 1), routed by IP when sent to the router MAC 02:00:00:00:00:fe \
         (10.0.1.1, 10.0.1.2, 10.0.2.0/24 and 10.0.3.0/24), TTL 1 and bad IPv4 checksums \
         dropped, an ACL denying TCP to 10.0.3.4 port 23."
    );
    let outcome = replay_to_dir(&mut sw, &inputs, &args.out_dir)?;
    print!("{}", summary(&sw, &outcome));
    println!("\n== what happened, and why");
    let (_, mut tracer) = program::load_switch(&prog, Some(&tables), &compile, None)?;
    let arrivals = super::replay::read_inputs(&inputs)?.arrivals;
    print!("{}", super::story::tell(&mut tracer, &arrivals, &outcome));
    println!("\n== next");
    println!(
        "  pisa trace --program {} --tables {} --in 0={} --in 1={} --packet 5",
        prog.display(),
        tables.display(),
        inputs[0].path.display(),
        inputs[1].path.display()
    );
    println!(
        "  tshark -r {}   (what left port 2; every port has its pcap)",
        args.out_dir.join("port2.pcap").display()
    );
    println!("  pisa lab up deploy/labs/l2l3-4hosts.yaml   (the same switch between namespaces, as root)");
    Ok(ExitCode::SUCCESS)
}

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
    /// Acuerdo (ICPP 2022): Figure 8, Table 1 and Figure 9 (against etcd and ZooKeeper)
    /// beside the paper's numbers.
    Acuerdo(super::acuerdo::AcuerdoDemoArgs),
}

pub fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    match args.which {
        Some(DemoCommand::P4ce(a)) => return super::consensus::demo(a),
        Some(DemoCommand::Acuerdo(a)) => return super::acuerdo::demo(a),
        None => {}
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let prog = root.join("p4/programs/l2l3.p4");
    let tables = root.join("p4/programs/l2l3.tables.yaml");
    let compile = CompileArgs {
        target: TargetArg::Tofino1,
        include: Vec::new(),
        define: Vec::new(),
    };
    println!("== pisa check {}", prog.display());
    let (compiled, mut sw) = program::load_switch(&prog, Some(&tables), &compile)?;
    if let Some(r) = &compiled.resources {
        print!("{r}");
    }
    let inputs = vec![
        InputSpec {
            port: 0,
            path: root.join("examples/l2l3/in0.pcap"),
        },
        InputSpec {
            port: 1,
            path: root.join("examples/l2l3/in1.pcap"),
        },
    ];
    println!("\n== pisa run (tables: {})", tables.display());
    let outcome = replay_to_dir(&mut sw, &inputs, &args.out_dir)?;
    print!("{}", summary(&sw, &outcome));
    Ok(ExitCode::SUCCESS)
}

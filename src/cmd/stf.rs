//! `pisa stf`: run a test written in STF against a program. Exit 0 when every check passes,
//! 1 when one fails (wrong output), 2 when the test could not be run as written (a script pisa
//! cannot read, a statement naming what the program does not have, a program that does not
//! compile): an STF error is never reported as a wrong-output failure.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use control::stf::{self, StfOptions};

use super::{program, CompileArgs};

#[derive(Args, Debug)]
pub struct StfArgs {
    /// The STF test.
    pub test: PathBuf,
    /// The P4_16 TNA program under test.
    #[arg(long)]
    pub program: PathBuf,
    /// Table state to program before the script runs (YAML), in addition to its `add` lines.
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// The CPU port, where `copy_to_cpu` copies leave (as `pisa run --cpu-port`): a script
    /// `expect`s them there.
    #[arg(long, value_name = "DEVPORT", default_value_t = pipeline::switch::DEFAULT_CPU_PORT, value_parser = super::live::parse_devport)]
    pub cpu_port: u16,
    /// Pad frames shorter than this many bytes (FCS not counted), as a MAC does. By default 0:
    /// packets go in and come out as written, as p4c's and bf-p4c's STF runners run them; 60
    /// pads like `pisa run` (Ethernet's minimum frame).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub min_frame: usize,
    #[command(flatten)]
    pub compile: CompileArgs,
}

pub fn run(args: StfArgs) -> anyhow::Result<ExitCode> {
    let bytes = stf::read_script(&args.test)
        .map_err(|e| anyhow::anyhow!("cannot read `{}`: {e}", args.test.display()))?;
    let script = match stf::parse_file(&stf::decode(&bytes), &args.test) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: {}:{}:{}: {}",
                args.test.display(),
                e.line,
                e.column,
                e.message
            );
            return Ok(ExitCode::from(2));
        }
    };
    let (tables, cpu) = (args.tables.as_deref(), Some(args.cpu_port));
    let (_, mut sw) = match program::load_switch(&args.program, tables, &args.compile, cpu) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(2));
        }
    };
    let opts = StfOptions {
        min_frame: Some(args.min_frame),
        ..StfOptions::default()
    };
    let report = stf::run_stf_on(&mut sw, &script, &opts);
    print!("{report}");
    if report.all_passed() {
        println!("{}: ok", args.test.display());
        Ok(ExitCode::SUCCESS)
    } else if !report.errors.is_empty() {
        println!(
            "{}: ERROR (the script could not run as written: see the errors above)",
            args.test.display()
        );
        Ok(ExitCode::from(2))
    } else {
        println!("{}: FAILED", args.test.display());
        Ok(ExitCode::from(1))
    }
}

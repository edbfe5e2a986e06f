//! `pisa stf`: run a test written in STF against a program; exit 1 when any check fails.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
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
    #[command(flatten)]
    pub compile: CompileArgs,
}

pub fn run(args: StfArgs) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&args.test)
        .with_context(|| format!("cannot read `{}`", args.test.display()))?;
    let script = match stf::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "error: {}:{}:{}: {}",
                args.test.display(),
                e.line,
                e.column,
                e.message
            );
            return Ok(ExitCode::from(1));
        }
    };
    let (_, mut sw) =
        match program::load_switch(&args.program, args.tables.as_deref(), &args.compile) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("error: {e:#}");
                return Ok(ExitCode::from(1));
            }
        };
    let report = stf::run_stf_on(&mut sw, &script, &StfOptions::default());
    print!("{report}");
    if report.all_passed() {
        println!("{}: ok", args.test.display());
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{}: FAILED", args.test.display());
        Ok(ExitCode::from(1))
    }
}

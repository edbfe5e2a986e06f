//! `pisa check`: compile a program for a target and print where it lands in the MAU stages.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{program, CompileArgs, ReportFormat};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The P4_16 TNA program.
    pub program: PathBuf,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Output format of the resource report.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub report: ReportFormat,
    /// Print the IR the program became (objects, PHV layout, parser, controls, with the stages
    /// placement chose) instead of the resource report.
    #[arg(long)]
    pub emit_ir: bool,
    /// Also generate the native code (the default engine) and list what it leaves to the flat
    /// engine: IR nodes by kind, with their counts (none: the program runs fully native).
    #[arg(long)]
    pub native: bool,
}

pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let compiled = match program::compile(&args.program, &args.compile) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(ExitCode::from(1));
        }
    };
    let target = compiled.program.target;
    if args.emit_ir {
        print!("{}", pipeline::ir_text::program_text(&compiled.program));
        return Ok(ExitCode::SUCCESS);
    }
    match (&compiled.resources, args.report) {
        (Some(report), ReportFormat::Json) => println!("{}", report.to_json()),
        (Some(report), ReportFormat::Text) => {
            println!(
                "{}: ok for {} ({} MAU stages per gress)\n",
                args.program.display(),
                target.name(),
                target.stages()
            );
            print!("{report}");
        }
        (None, _) => println!("{}: ok for {}", args.program.display(), target.name()),
    }
    if args.native {
        native_report(compiled.program)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints what the native code of `program` leaves to the flat engine.
fn native_report(program: pipeline::ir::Program) -> anyhow::Result<()> {
    let sw = program::switch(std::sync::Arc::new(program), 0, None)?;
    if let Some(e) = sw.engine_error() {
        anyhow::bail!("no native code: {e}");
    }
    let kinds = sw.native_fallback_kinds();
    let total: usize = kinds.iter().map(|k| k.1).sum();
    println!("\nnative code: {total} node(s) left to the flat engine");
    for (kind, n) in kinds {
        println!("  {n:>5}  {kind}");
    }
    Ok(())
}

//! `pisa p4info PROGRAM.p4`: the program's P4Info (P4Runtime's description of its tables,
//! actions, externs and packet I/O headers) in the protobuf text, binary or JSON format.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, ValueEnum};
use control::p4runtime::{format, p4info};
use prost::Message;

use super::{program, CompileArgs};

/// How the P4Info is written.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum, Default)]
pub enum P4InfoFormat {
    /// Protobuf text format (what p4runtime-shell's `--config` reads).
    #[default]
    Text,
    /// The binary protobuf encoding.
    Binary,
    /// Protobuf's JSON mapping.
    Json,
}

#[derive(Args, Debug)]
pub struct P4InfoArgs {
    /// The P4_16 TNA program.
    pub program: PathBuf,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = P4InfoFormat::Text)]
    pub format: P4InfoFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

pub fn run(args: P4InfoArgs) -> anyhow::Result<ExitCode> {
    let compiled = program::compile(&args.program, &args.compile)?;
    let opts = args.compile.options()?;
    let p = p4info::for_file(compiled.program, &args.program, &opts);
    for s in &p.skipped {
        eprintln!("warning: {s}");
    }
    const NAME: &str = "p4.config.v1.P4Info";
    let bytes = match args.format {
        P4InfoFormat::Text => format::to_text(NAME, &p.p4info)?.into_bytes(),
        P4InfoFormat::Json => (format::to_json(NAME, &p.p4info)? + "\n").into_bytes(),
        P4InfoFormat::Binary => p.p4info.encode_to_vec(),
    };
    match &args.output {
        Some(path) => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create `{}`", dir.display()))?;
            }
            std::fs::write(path, &bytes)
                .with_context(|| format!("cannot write `{}`", path.display()))?
        }
        None => std::io::stdout()
            .write_all(&bytes)
            .context("cannot write the P4Info")?,
    }
    Ok(ExitCode::SUCCESS)
}

//! Loading a P4 program for a subcommand: compile it, print warnings, and on failure print the
//! diagnostics rustc-style and turn them into one error.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use p4::compile::{compile_file, CompileOptions, Compiled};
use pipeline::ir::Program;
use pipeline::switch::{Switch, SwitchConfig};

use super::CompileArgs;

impl CompileArgs {
    pub fn options(&self) -> anyhow::Result<CompileOptions> {
        let mut defines = Vec::new();
        for d in &self.define {
            let (name, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
            if name.is_empty() {
                return Err(anyhow!("-D {d:?}: expected NAME or NAME=VALUE"));
            }
            defines.push((name.to_string(), value.to_string()));
        }
        Ok(CompileOptions {
            include_dirs: self.include.clone(),
            defines,
            target: self.target.into(),
            disable_parse_depth_limit: self.disable_parse_depth_limit,
        })
    }
}

/// Compiles `path`; warnings go to stderr. Errors are rendered to stderr and returned as one
/// short error.
pub fn compile(path: &Path, args: &CompileArgs) -> anyhow::Result<Compiled> {
    let opts = args.options()?;
    match compile_file(path, &opts) {
        Ok(c) => {
            if !c.warnings.is_empty() {
                eprint!("{}", c.warnings.render(&c.sources));
            }
            Ok(c)
        }
        Err(failure) => {
            eprint!("{}", failure.render());
            Err(anyhow!(
                "could not compile `{}` ({} error(s))",
                path.display(),
                failure.diagnostics.error_count()
            ))
        }
    }
}

/// A switch running `program` with one pipe per program pipe (at least 1), the given seed and
/// CPU port (where `copy_to_cpu` copies leave; none: they are dropped as `no_cpu_port`).
pub fn switch(program: Arc<Program>, seed: u64, cpu_port: Option<u16>) -> anyhow::Result<Switch> {
    switch_of_pipes(program, None, seed, cpu_port)
}

/// [`switch`] with `pipes` hardware pipes (`--pipes`; `None`: as many as the program's
/// pipelines, at least one); the switch refuses a count the chip does not have.
pub fn switch_of_pipes(
    program: Arc<Program>,
    pipes: Option<u16>,
    seed: u64,
    cpu_port: Option<u16>,
) -> anyhow::Result<Switch> {
    let cfg = SwitchConfig {
        pipes: pipes.unwrap_or(program.pipe_map.len().clamp(1, 4) as u16),
        seed,
        cpu_port,
        drop_log: 1 << 16,
        ..SwitchConfig::default()
    };
    Switch::new(program, cfg).context("cannot build the switch")
}

/// Compiles, builds a switch (with `cpu_port` as in [`switch`]) and applies a table file when
/// one is given.
pub fn load_switch(
    program_path: &Path,
    tables: Option<&Path>,
    args: &CompileArgs,
    cpu_port: Option<u16>,
) -> anyhow::Result<(Compiled, Switch)> {
    load_switch_of_pipes(program_path, tables, args, cpu_port, None)
}

/// [`load_switch`] with `pipes` hardware pipes (see [`switch_of_pipes`]).
pub fn load_switch_of_pipes(
    program_path: &Path,
    tables: Option<&Path>,
    args: &CompileArgs,
    cpu_port: Option<u16>,
    pipes: Option<u16>,
) -> anyhow::Result<(Compiled, Switch)> {
    let compiled = compile(program_path, args)?;
    let program = Arc::new(compiled.program.clone());
    let mut sw = switch_of_pipes(program, pipes, 0, cpu_port)?;
    if let Some(t) = tables {
        let file = control::tables_file::load(t)
            .with_context(|| format!("cannot read table file `{}`", t.display()))?;
        control::tables_file::apply(&mut sw, &file)
            .with_context(|| format!("cannot apply table file `{}`", t.display()))?;
    }
    Ok((compiled, sw))
}

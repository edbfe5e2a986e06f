//! Building the switch instances `pisa run` starts: the program compiled and the table file
//! read once, then applied to each instance.

use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, Context};
use pipeline::switch::{Switch, SwitchConfig};

use super::PortArg;
use crate::cmd::{program, CompileArgs};

pub(crate) fn build_switch(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    pipes: Option<u16>,
    ports: &[PortArg],
) -> anyhow::Result<Switch> {
    let mut v = build_switches(program_path, tables, compile, pipes, ports, 1, None)?;
    v.pop().ok_or_else(|| anyhow!("no switch was built"))
}

/// `count` identical switches (one per pipe thread): the program compiled and the table file
/// read once, then applied to each.
pub(crate) fn build_switches(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    pipes: Option<u16>,
    ports: &[PortArg],
    count: usize,
    cpu_port: Option<u16>,
) -> anyhow::Result<Vec<Switch>> {
    let compiled = program::compile(program_path, compile)?;
    let prog = Arc::new(compiled.program.clone());
    switches_of(prog, tables, pipes, ports, count, cpu_port)
}

/// `count` identical switches of an already compiled program; `cpu_port` is where
/// `copy_to_cpu` copies and P4Runtime packet-ins leave.
pub(crate) fn switches_of(
    prog: Arc<pipeline::ir::Program>,
    tables: Option<&Path>,
    pipes: Option<u16>,
    ports: &[PortArg],
    count: usize,
    cpu_port: Option<u16>,
) -> anyhow::Result<Vec<Switch>> {
    let mut cfg = SwitchConfig {
        pipes: pipes.unwrap_or_else(|| prog.pipe_map.len().clamp(1, 4) as u16),
        drop_log: 0,
        cpu_port,
        ..SwitchConfig::default()
    };
    // A port given with `--port` is a front-panel port, also in the recirculation quad.
    for p in ports {
        cfg.set_front_panel(p.devport);
    }
    for p in ports {
        let pipe = p.devport >> 7;
        if pipe >= cfg.pipes {
            return Err(anyhow!(
                "--port {}={}: device port {} is on pipe {pipe}, but the switch has {} pipe(s); \
                 give --pipes {}",
                p.devport,
                p.spec,
                p.devport,
                cfg.pipes,
                pipe + 1
            ));
        }
    }
    let file = match tables {
        Some(t) => Some(
            control::tables_file::load(t)
                .with_context(|| format!("cannot read table file `{}`", t.display()))?,
        ),
        None => None,
    };
    let mut out = Vec::with_capacity(count);
    for _ in 0..count.max(1) {
        let mut sw = Switch::new(prog.clone(), cfg.clone()).context("cannot build the switch")?;
        if let (Some(t), Some(file)) = (tables, &file) {
            control::tables_file::apply(&mut sw, file)
                .with_context(|| format!("cannot apply table file `{}`", t.display()))?;
        }
        out.push(sw);
    }
    Ok(out)
}

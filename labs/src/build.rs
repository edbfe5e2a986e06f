//! Building a topology's switches, the same for both drivers: each program compiled once (per
//! target), checked against the target's resources as `pisa check` does, each switch built from
//! it with its table state applied (a file, or routes generated from the topology).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use pipeline::ir::{Program, Target};
use pipeline::switch::{Switch, SwitchConfig};

use crate::routes;
use crate::topology::{TablesSource, Topology};

/// A switch of the topology could not be built: which, where in the file, why.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: switch {switch}: {message}", .file.display())]
pub struct BuildError {
    pub file: PathBuf,
    pub line: u64,
    pub switch: String,
    pub message: String,
}

/// Compiles every program of the topology once and builds every switch, in topology order.
pub fn switches(topo: &Topology) -> Result<Vec<Switch>, BuildError> {
    let mut programs: HashMap<(PathBuf, Target), Arc<Program>> = HashMap::new();
    let generated = if topo
        .switches
        .iter()
        .any(|s| s.tables == TablesSource::Generated)
    {
        routes::generate(topo)
    } else {
        Vec::new()
    };
    let mut files: HashMap<PathBuf, control::tables_file::TablesFile> = HashMap::new();
    let mut out = Vec::with_capacity(topo.switches.len());
    for (i, s) in topo.switches.iter().enumerate() {
        let err = |message: String| BuildError {
            file: topo.file.clone(),
            line: s.line,
            switch: s.name.clone(),
            message,
        };
        let key = (s.program.clone(), s.target);
        let prog = match programs.get(&key) {
            Some(p) => p.clone(),
            None => {
                let p = compile(&s.program, s.target).map_err(&err)?;
                programs.insert(key, p.clone());
                p
            }
        };
        let cfg = SwitchConfig {
            pipes: s
                .pipes
                .unwrap_or_else(|| prog.pipe_map.len().clamp(1, 4) as u16),
            seed: i as u64 + 1,
            drop_log: 0,
            // Where `copy_to_cpu` copies and P4Runtime packet-ins leave, as on the hardware.
            cpu_port: Some(pipeline::devport::CPU_ETH_PORT),
            ..SwitchConfig::default()
        };
        // Switches of one program share its engines (its native code is generated once).
        let sw = match out
            .iter()
            .find(|o: &&Switch| Arc::ptr_eq(o.program(), &prog))
        {
            Some(like) => Switch::new_like(like, cfg),
            None => Switch::new(prog, cfg),
        };
        let mut sw = sw.map_err(|e| err(format!("cannot build: {e}")))?;
        match &s.tables {
            TablesSource::None => {}
            TablesSource::Generated => {
                let file = generated[i].to_tables_file();
                control::tables_file::apply(&mut sw, &file)
                    .map_err(|e| err(format!("generated routes: {e} (does the program follow fabric.p4's table contract?)")))?;
            }
            TablesSource::File(path) => {
                if !files.contains_key(path) {
                    let f = control::tables_file::load(path)
                        .map_err(|e| err(format!("tables {}: {e}", path.display())))?;
                    files.insert(path.clone(), f);
                }
                control::tables_file::apply(&mut sw, &files[path])
                    .map_err(|e| err(format!("tables {}: {e}", path.display())))?;
            }
        }
        out.push(sw);
    }
    Ok(out)
}

/// Compiles and resource-checks one program; the error is the rendered diagnostics.
pub fn compile(path: &std::path::Path, target: Target) -> Result<Arc<Program>, String> {
    let opts = p4::compile::CompileOptions {
        target,
        ..p4::compile::CompileOptions::default()
    };
    let c = p4::compile::compile_file(path, &opts).map_err(|e| {
        format!(
            "program {} does not compile:\n{}",
            path.display(),
            e.render()
        )
    })?;
    Ok(Arc::new(c.program))
}

//! `pisa run --p4runtime ADDR`: the program compiled once for both the switches and its
//! P4Info, and the P4Runtime server started on the running switch (the CPU port's other end
//! handed to it for packet I/O).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use control::p4runtime::p4info::P4Program;
use control::p4runtime::server::{self, P4RuntimeServerHandle, Pipeline, ServerConfig};
use dataplane::switch::SwitchHandle;
use dataplane::MemPort;
use pipeline::switch::Switch;

use super::{switches_of, LiveArgs};
use crate::cmd::{program, CompileArgs};

/// The switches (with the CPU port set) and the program as P4Runtime sees it.
pub(super) fn switches(
    program_path: &Path,
    tables: Option<&Path>,
    compile: &CompileArgs,
    args: &LiveArgs,
    count: usize,
) -> anyhow::Result<(Vec<Switch>, P4Program)> {
    let compiled = program::compile(program_path, compile)?;
    let prog = Arc::new(compiled.program.clone());
    let p =
        control::p4runtime::p4info::for_file(compiled.program, program_path, &compile.options()?);
    for s in &p.skipped {
        eprintln!("warning: {s}");
    }
    let sw = switches_of(
        prog,
        tables,
        args.pipes,
        &args.ports,
        count,
        Some(args.cpu_port),
    )?;
    Ok((sw, p))
}

/// Starts the P4Runtime server (device id 1) on the running switch; `cpu_end` is the other
/// end of CPU port `cpu_port` (none: a --port is attached there).
pub(super) fn serve(
    addr: SocketAddr,
    program: P4Program,
    program_path: &Path,
    compile: &CompileArgs,
    (cpu_end, cpu_port): (Option<MemPort>, u16),
    handle: &SwitchHandle,
    clock: Arc<dyn dataplane::Clock>,
) -> anyhow::Result<P4RuntimeServerHandle> {
    let source = std::fs::read(program_path)
        .with_context(|| format!("cannot read `{}`", program_path.display()))?;
    let has_cpu = cpu_end.is_some();
    let cfg = ServerConfig {
        device_id: 1,
        compile: compile.options()?,
        cpu: cpu_end.map(|p| Box::new(p) as Box<dyn dataplane::Port>),
        clock,
    };
    let srv = server::start(
        addr,
        handle.clone(),
        Pipeline::new(program, source, None),
        cfg,
    )?;
    let io = if has_cpu {
        format!(", packet I/O on CPU port {cpu_port}")
    } else {
        format!("; no packet I/O: a --port is attached at the CPU port {cpu_port}")
    };
    eprintln!("pisa: P4Runtime on {} (device id 1){io}", srv.local_addr());
    Ok(srv)
}

//! `pisa trace`: replay captures like `pisa run`, and print the full path of one packet.
//!
//! Every packet before the selected one is processed normally first, so registers, counters and
//! meters hold what they would hold when the selected packet arrives.

use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

use anyhow::anyhow;
use clap::Args;
use pipeline::switch::InFrame;

use super::replay::{self, InputSpec};
use super::{program, CompileArgs};

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The P4_16 TNA program.
    #[arg(long)]
    pub program: PathBuf,
    /// Table state to program before the first packet (YAML).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// An input capture for a port: PORT=FILE.pcap (repeatable).
    #[arg(long = "in", value_name = "PORT=FILE", required = true)]
    pub inputs: Vec<InputSpec>,
    /// The packet to trace: PORT:INDEX (INDEX-th record of that port's capture, from 0:
    /// tshark's frame number minus one, counting frames that are not replayed) or N (the
    /// N-th replayed frame of the merged input, from 0).
    #[arg(long, default_value = "0")]
    pub packet: PacketSel,
    /// The CPU port, where `copy_to_cpu` copies leave (as `pisa run --cpu-port`).
    #[arg(long, value_name = "DEVPORT", default_value_t = pipeline::switch::DEFAULT_CPU_PORT, value_parser = super::live::parse_devport)]
    pub cpu_port: u16,
    #[command(flatten)]
    pub compile: CompileArgs,
}

#[derive(Debug, Clone, Copy)]
pub enum PacketSel {
    Merged(usize),
    OnPort { port: u16, index: usize },
}

impl std::fmt::Display for PacketSel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PacketSel::Merged(n) => write!(f, "{n}"),
            PacketSel::OnPort { port, index } => write!(f, "{port}:{index}"),
        }
    }
}

impl FromStr for PacketSel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{s}`: expected N or PORT:INDEX, e.g. 3 or 0:2");
        match s.split_once(':') {
            Some((p, i)) => Ok(PacketSel::OnPort {
                port: p.trim().parse().map_err(|_| bad())?,
                index: i.trim().parse().map_err(|_| bad())?,
            }),
            None => Ok(PacketSel::Merged(s.trim().parse().map_err(|_| bad())?)),
        }
    }
}

pub fn run(args: TraceArgs) -> anyhow::Result<ExitCode> {
    let tables = args.tables.as_deref();
    let (_, mut sw) =
        program::load_switch(&args.program, tables, &args.compile, Some(args.cpu_port))?;
    let inputs = replay::read_inputs(&args.inputs)?;
    let pos = match args.packet {
        PacketSel::Merged(n) => (n < inputs.arrivals.len()).then_some(n),
        PacketSel::OnPort { port, index } => inputs
            .arrivals
            .iter()
            .position(|a| a.port == port && a.index == index),
    }
    .ok_or_else(|| {
        if let PacketSel::OnPort { port, index } = args.packet {
            if let Some(s) = inputs
                .skipped
                .iter()
                .find(|s| s.port == port && s.index == index)
            {
                return anyhow!(
                    "frame {index} of port {port}'s capture (tshark's frame {}) is not replayed: {}",
                    index + 1,
                    s.reason
                );
            }
        }
        anyhow!(
            "packet {} is not in the input ({} frame(s) replayed in all, {} skipped)",
            args.packet,
            inputs.arrivals.len(),
            inputs.skipped.len()
        )
    })?;
    for a in &inputs.arrivals[..pos] {
        let frame = InFrame {
            port: a.port,
            bytes: &a.bytes,
            ts: a.ts,
        };
        sw.process(frame, &mut |_| {});
    }
    let a = &inputs.arrivals[pos];
    println!(
        "packet {} (port {}, frame {} of its capture, tshark's frame {}, {} bytes, t={}.{:09})",
        pos,
        a.port,
        a.index,
        a.index + 1,
        a.bytes.len(),
        a.ts / 1_000_000_000,
        a.ts % 1_000_000_000
    );
    println!("{}", hex_block(&a.bytes));
    let (outs, trace) = sw.trace(InFrame {
        port: a.port,
        bytes: &a.bytes,
        ts: a.ts,
    });
    print!("{trace}");
    println!("{}", engine_line(sw.traced_engine()));
    if outs.is_empty() {
        println!("=> no frame leaves the switch");
    }
    for f in &outs {
        println!("=> port {} ({} bytes):", f.port, f.bytes.len());
        println!("{}", hex_block(&f.bytes));
    }
    Ok(ExitCode::SUCCESS)
}

/// Which engine ran the traced pass, and how it relates to the code that forwards.
fn engine_line(engine: pipeline::exec::EngineKind) -> String {
    use pipeline::exec::EngineKind;
    match engine {
        EngineKind::Native => {
            "engine: native (the generated code that forwards, built with trace hooks)".into()
        }
        EngineKind::Flat => "engine: flat (the engine this switch forwards with)".into(),
        EngineKind::Tree => "engine: tree (the reference interpreter)".into(),
    }
}

/// Bytes as hex, 16 per line with an offset column.
pub fn hex_block(bytes: &[u8]) -> String {
    let mut s = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        if i > 0 {
            s.push('\n');
        }
        s.push_str(&format!("  {:04x}  ", i * 16));
        for (j, b) in chunk.iter().enumerate() {
            if j == 8 {
                s.push(' ');
            }
            s.push_str(&format!("{b:02x} "));
        }
    }
    s
}

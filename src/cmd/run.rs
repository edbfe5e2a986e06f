//! `pisa run`: replay captures through a program and write what leaves each port.
//!
//! Output: `OUT_DIR/port<N>.pcap` for every port that is an input or sent anything, and
//! `OUT_DIR/drops.log` with one line per dropped packet (time, port, gress, reason, detail).
//! Frames the input captures could not deliver (shorter than an Ethernet header, truncated by
//! the capture's snap length) are counted per port and reported too: nothing is lost silently.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use dataplane::{FrameBatch, Nanos, PcapPort, Port};
use pipeline::api::PipeSel;
use pipeline::switch::{InFrame, OutFrame, Switch};

use super::replay::{self, InputSpec};
use super::{program, CompileArgs};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The P4_16 TNA program.
    #[arg(long)]
    pub program: PathBuf,
    /// Table state to program before the first packet (YAML).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// An input capture for a port: PORT=FILE.pcap (repeatable).
    #[arg(
        long = "in",
        value_name = "PORT=FILE",
        required_unless_present = "ports",
        conflicts_with = "ports"
    )]
    pub inputs: Vec<InputSpec>,
    /// Where the output captures and the drop log go.
    #[arg(long, default_value = "out")]
    pub out_dir: PathBuf,
    /// After the replay, say what happened to every frame and why (tables matched, ports,
    /// the table/action or condition behind each drop). The frames are traced through a
    /// second copy of the switch, so this doubles the run's time.
    #[arg(long, conflicts_with = "ports")]
    pub explain: bool,
    #[command(flatten)]
    pub compile: CompileArgs,
    /// Live forwarding (`--port N=SPEC`, `--pipes`, `--metrics`, `--ctl`, `--link`).
    #[command(flatten)]
    pub live: super::live::LiveArgs,
}

/// What a replay produced, for the summary and for `pisa demo`.
#[derive(Debug, Default)]
pub struct ReplayOutcome {
    pub rx: usize,
    pub tx: BTreeMap<u16, usize>,
    pub port_drops: Vec<(u16, u64)>,
    /// The capture records not replayed, each with the reason.
    pub skipped: Vec<replay::Skipped>,
    pub files: Vec<PathBuf>,
}

pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if !args.live.ports.is_empty() {
        return super::live::run(
            &args.program,
            args.tables.as_deref(),
            &args.compile,
            args.live,
        );
    }
    let (tables, cpu) = (args.tables.as_deref(), Some(args.live.cpu_port));
    let pipes = args.live.pipes;
    let load = || program::load_switch_of_pipes(&args.program, tables, &args.compile, cpu, pipes);
    let (_, mut sw) = load()?;
    // An input on a port this switch lacks (`--pipes 1` and port 130) never arrives.
    for i in &args.inputs {
        sw.check_port(i.port)
            .map_err(|e| anyhow::anyhow!("input for port {}: {e}", i.port))?;
    }
    let outcome = replay_to_dir(&mut sw, &args.inputs, &args.out_dir)?;
    print!("{}", summary(&sw, &outcome));
    if args.explain {
        let (_, mut tracer) = load()?;
        let arrivals = replay::read_inputs(&args.inputs)?.arrivals;
        print!("{}", super::story::tell(&mut tracer, &arrivals, &outcome));
    }
    Ok(ExitCode::SUCCESS)
}

/// Replays `inputs` through `sw`, writing the captures and the drop log into `out_dir`.
pub fn replay_to_dir(
    sw: &mut Switch,
    inputs: &[InputSpec],
    out_dir: &Path,
) -> anyhow::Result<ReplayOutcome> {
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create `{}`", out_dir.display()))?;
    let read = replay::read_inputs(inputs)?;
    let mut outputs: BTreeMap<u16, Vec<OutFrame>> = BTreeMap::new();
    for input in inputs {
        outputs.entry(input.port).or_default();
    }
    let mut drops = String::new();
    let mut fresh = Vec::new();
    for a in &read.arrivals {
        sw.process(
            InFrame {
                port: a.port,
                bytes: &a.bytes,
                ts: a.ts,
            },
            &mut |f| fresh.push(f),
        );
        // Kept until written, each at its own size: the switch's buffer (room for a jumbo
        // frame) goes back to it, so a million 64-byte frames take megabytes, not gigabytes.
        for f in fresh.drain(..) {
            let bytes = f.bytes.as_slice().to_vec();
            sw.recycle(f.bytes);
            outputs
                .entry(f.port)
                .or_default()
                .push(OutFrame { bytes, ..f });
        }
        for d in sw.drain_drops() {
            let _ = writeln!(
                drops,
                "{}.{:09} port={} {} {}{}",
                d.ts / 1_000_000_000,
                d.ts % 1_000_000_000,
                d.port,
                d.gress,
                d.reason,
                d.detail.map(|s| format!(" ({s})")).unwrap_or_default()
            );
        }
    }
    let mut outcome = ReplayOutcome {
        rx: read.arrivals.len(),
        port_drops: read.port_drops.clone(),
        skipped: read.skipped.clone(),
        ..Default::default()
    };
    for (port, frames) in &mut outputs {
        // Departure order, then arrival order for equal times (a stable sort keeps it).
        frames.sort_by_key(|f| f.ts);
        let path = out_dir.join(format!("port{port}.pcap"));
        write_capture(&path, *port, frames)?;
        outcome.tx.insert(*port, frames.len());
        outcome.files.push(path);
    }
    // Numbered as tshark numbers a capture's frames (from 1).
    for k in &read.skipped {
        let _ = writeln!(
            drops,
            "input port={} frame {}: not replayed: {}",
            k.port,
            k.index + 1,
            k.reason
        );
    }
    let log = out_dir.join("drops.log");
    std::fs::write(&log, drops).with_context(|| format!("cannot write `{}`", log.display()))?;
    outcome.files.push(log);
    Ok(outcome)
}

fn write_capture(path: &Path, port: u16, frames: &[OutFrame]) -> anyhow::Result<()> {
    let mut pcap = PcapPort::open(&format!("out{port}"), None, Some(path), false)
        .with_context(|| format!("cannot create `{}`", path.display()))?;
    let mut batch = FrameBatch::new(1);
    for f in frames {
        batch.push(&f.bytes, Nanos(f.ts));
        pcap.send_batch(&mut batch, Nanos(f.ts))
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    pcap.flush(Nanos(0))
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

/// For a `drop_ctl` drop: what in the program can ask for it (`pisa run --explain` or `pisa
/// trace` name the one each packet took).
pub fn drop_ctl_hint(sw: &Switch, reason: pipeline::switch::DropReason) -> String {
    use pipeline::switch::DropReason;
    let gress = match reason {
        DropReason::IngressDropCtl => pipeline::ir::Gress::Ingress,
        DropReason::EgressDropCtl => pipeline::ir::Gress::Egress,
        _ => return String::new(),
    };
    let mut all: Vec<String> = Vec::new();
    for pl in &sw.program().pipelines {
        for w in pipeline::switch::drop_ctl_writers(pl, gress) {
            if !all.contains(&w) {
                all.push(w);
            }
        }
    }
    if all.is_empty() {
        return String::new();
    }
    format!(
        " (the program's drop_ctl writers: {}; --explain names each packet's)",
        all.join(", ")
    )
}

/// The end-of-run summary: packets in and out per port, drops by reason, table hit counts.
pub fn summary(sw: &Switch, o: &ReplayOutcome) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "replayed {} frame(s)", o.rx);
    for (port, n) in &o.tx {
        let _ = writeln!(s, "  port {port:>3}: {n} frame(s) out");
    }
    let stats = sw.stats();
    let _ = writeln!(s, "dropped {} packet(s) in the switch", stats.total_drops());
    for reason in pipeline::switch::DropReason::ALL {
        let n = stats.dropped(reason);
        if n > 0 {
            let _ = writeln!(s, "  {reason}: {n}{}", drop_ctl_hint(sw, reason));
        }
    }
    for (port, n) in &o.port_drops {
        let first = o.skipped.iter().find(|k| k.port == *port);
        let why = first.map_or(String::new(), |k| {
            format!(" (frame {}: {}; each in drops.log)", k.index + 1, k.reason)
        });
        let _ = writeln!(
            s,
            "input port {port}: {n} frame(s) of the capture not replayed{why}"
        );
    }
    let _ = writeln!(s, "table lookups (hits / misses):");
    let prog = sw.program().clone();
    for pl in &prog.pipelines {
        for t in &pl.tables {
            if let Ok((hits, misses)) = sw.table_hit_miss(PipeSel::All, &t.name) {
                if hits + misses > 0 {
                    let _ = writeln!(s, "  {}: {hits} / {misses}", t.name);
                }
            }
        }
    }
    let _ = writeln!(s, "wrote:");
    for f in &o.files {
        let _ = writeln!(s, "  {}", f.display());
    }
    s
}

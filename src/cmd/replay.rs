//! Offline replay shared by `pisa run` and `pisa trace`: read the input captures, merge them
//! into one arrival order, and feed them to a switch.
//!
//! The order is deterministic: by capture timestamp, then by port number, then by position in
//! the file. Timestamps are taken from the files, so a replay is on a virtual clock and the
//! same inputs always give the same outputs.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{anyhow, Context};
use dataplane::{FrameBatch, Nanos, PcapPort, Port};

/// `PORT=FILE.pcap` as typed on the command line.
#[derive(Debug, Clone)]
pub struct InputSpec {
    pub port: u16,
    pub path: PathBuf,
}

impl FromStr for InputSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (port, path) = s
            .split_once('=')
            .ok_or_else(|| format!("`{s}`: expected PORT=FILE.pcap, e.g. 0=in0.pcap"))?;
        let port = port
            .trim()
            .parse::<u16>()
            .map_err(|_| format!("`{port}` is not a port number (0..=511)"))?;
        if port > 511 {
            return Err(format!("port {port} is out of range (0..=511)"));
        }
        if path.is_empty() {
            return Err(format!("`{s}`: the file name is missing"));
        }
        Ok(InputSpec {
            port,
            path: PathBuf::from(path),
        })
    }
}

/// One frame of the merged input.
#[derive(Debug, Clone)]
pub struct Arrival {
    pub port: u16,
    /// Position of the frame in its own capture (0-based).
    pub index: usize,
    pub ts: u64,
    pub bytes: Vec<u8>,
}

/// The merged input and what the captures could not deliver.
#[derive(Debug, Default)]
pub struct Inputs {
    pub arrivals: Vec<Arrival>,
    /// Per port: frames the pcap backend dropped (shorter than an Ethernet header, truncated).
    pub port_drops: Vec<(u16, u64)>,
}

/// Reads every input capture (through the pcap port backend) and merges them.
pub fn read_inputs(inputs: &[InputSpec]) -> anyhow::Result<Inputs> {
    let mut seen = std::collections::BTreeSet::new();
    let mut all = Inputs::default();
    for input in inputs {
        if !seen.insert(input.port) {
            return Err(anyhow!(
                "port {} is given more than one input capture",
                input.port
            ));
        }
        let (frames, dropped) = read_capture(input.port, &input.path)?;
        all.arrivals.extend(frames);
        if dropped > 0 {
            all.port_drops.push((input.port, dropped));
        }
    }
    all.arrivals.sort_by_key(|a| (a.ts, a.port, a.index));
    Ok(all)
}

fn read_capture(port: u16, path: &Path) -> anyhow::Result<(Vec<Arrival>, u64)> {
    let mut pcap = PcapPort::open(&format!("in{port}"), Some(path), None, false)
        .with_context(|| format!("cannot open capture `{}`", path.display()))?;
    let mut out = Vec::new();
    let mut batch = FrameBatch::new(256);
    loop {
        batch.clear();
        let n = pcap
            .recv_batch(&mut batch, Nanos(u64::MAX))
            .with_context(|| format!("cannot read capture `{}`", path.display()))?;
        for f in batch.iter() {
            out.push(Arrival {
                port,
                index: out.len(),
                ts: f.ts.0,
                bytes: f.data.clone(),
            });
        }
        if n == 0 && pcap.is_exhausted() {
            break;
        }
    }
    Ok((out, pcap.stats().total_drops()))
}

//! Offline replay shared by `pisa run` and `pisa trace`: read the input captures, merge them
//! into one arrival order, and feed them to a switch.
//!
//! The order is deterministic: by capture timestamp, then by port number, then by position in
//! the file. Timestamps are taken from the files, so a replay is on a virtual clock and the
//! same inputs always give the same outputs.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{anyhow, Context};

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
    /// Position of the frame in its own capture (0-based, counting every record: tshark's
    /// frame number minus one).
    pub index: usize,
    pub ts: u64,
    pub bytes: Vec<u8>,
}

/// A record of a capture that is not replayed, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub port: u16,
    /// Position in its capture (0-based, as [`Arrival::index`]).
    pub index: usize,
    pub reason: String,
}

/// The merged input and what the captures could not deliver.
#[derive(Debug, Default)]
pub struct Inputs {
    pub arrivals: Vec<Arrival>,
    /// Per port: frames the captures hold but the switch cannot take (shorter than an
    /// Ethernet header, truncated by a snap length, longer than the largest frame).
    pub port_drops: Vec<(u16, u64)>,
    /// Those frames one by one.
    pub skipped: Vec<Skipped>,
}

/// Reads every input capture and merges them.
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
        let (frames, skipped) = read_capture(input.port, &input.path)?;
        all.arrivals.extend(frames);
        if !skipped.is_empty() {
            all.port_drops.push((input.port, skipped.len() as u64));
        }
        all.skipped.extend(skipped);
    }
    all.arrivals.sort_by_key(|a| (a.ts, a.port, a.index));
    Ok(all)
}

/// Every record of one capture, numbered as tshark numbers them (from 0 here): the frames
/// the switch can take, and the others with the reason.
fn read_capture(port: u16, path: &Path) -> anyhow::Result<(Vec<Arrival>, Vec<Skipped>)> {
    let records = dataplane::pcap::read_records(path)
        .map_err(|e| anyhow!("cannot open capture {e}"))
        .with_context(|| format!("input for port {port}"))?;
    if records.linktype != 1 {
        return Err(anyhow!(
            "capture `{}`: link type {} is not Ethernet",
            path.display(),
            records.linktype
        ));
    }
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for rec in records {
        let rec = rec.map_err(|e| anyhow!("cannot read capture `{}`: {e}", path.display()))?;
        let index = (rec.number - 1) as usize;
        match rec.skip_reason() {
            Some(reason) => skipped.push(Skipped {
                port,
                index,
                reason,
            }),
            None => out.push(Arrival {
                port,
                index,
                ts: rec.ts.0,
                bytes: rec.data,
            }),
        }
    }
    Ok((out, skipped))
}

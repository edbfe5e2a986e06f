//! `pisa bench pipeline --against swx`: DPDK's SWX pipeline doing l2l3.p4's work on the same
//! frames in this process (cargo feature `dpdk`; docs/swx.md). Checked frame by frame against
//! pisa before anything is timed; measured in the same interleaved rounds as pisa's series.

use clap::ValueEnum;

use super::bench::{median, PipelineBenchArgs};
use pisa::workload::Measurement;

/// A pipeline to measure pisa against.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// DPDK 22.11's SWX pipeline (librte_pipeline) running bench/swx/l2l3.spec; needs the
    /// `dpdk` cargo feature.
    Swx,
}

/// The SWX series: its runs, its label and how it ran.
pub struct SwxSeries {
    pub name: String,
    /// `compiled` or `interpreted`.
    pub mode: &'static str,
    /// Why it is not compiled, if it is not.
    pub reason: Option<String>,
    /// Frames checked identical against pisa before timing.
    pub checked: usize,
    pub runs: Vec<Measurement>,
    #[cfg(feature = "dpdk")]
    w: pisa::swx::SwxWorkload,
}

impl SwxSeries {
    pub fn mpps(&self) -> f64 {
        median(self.runs.iter().map(Measurement::mpps).collect())
    }

    pub fn tsc_per_packet(&self) -> Option<f64> {
        let v: Vec<f64> = self
            .runs
            .iter()
            .filter_map(Measurement::tsc_per_packet)
            .collect();
        (!v.is_empty()).then(|| median(v))
    }

    /// One timed run (after a short warm-up on the first).
    #[cfg(feature = "dpdk")]
    pub fn run_once(&mut self, a: &PipelineBenchArgs) {
        let d = std::time::Duration::from_secs_f64(a.seconds.max(0.05));
        if self.runs.is_empty() {
            let _ = pisa::swx::measure(&mut self.w, d / 4);
        }
        self.runs.push(pisa::swx::measure(&mut self.w, d));
    }

    #[cfg(not(feature = "dpdk"))]
    pub fn run_once(&mut self, _a: &PipelineBenchArgs) {}

    pub fn json(&self, pisa_mpps: f64, pisa_tsc: Option<f64>) -> serde_json::Value {
        serde_json::json!({
            "program": self.name,
            "mode": self.mode,
            "not_compiled_because": self.reason,
            "frames_checked_identical": self.checked,
            "mpps_per_core": self.mpps(),
            "tsc_ticks_per_packet": self.tsc_per_packet(),
            "all_runs_mpps": self.runs.iter().map(Measurement::mpps).collect::<Vec<_>>(),
            "ratio_pisa_l2l3_to_swx": pisa_mpps / self.mpps(),
            "pisa_tsc_ticks_per_packet": pisa_tsc,
        })
    }
}

/// Frames the check sends through both beside the workload's sample: an unknown destination
/// MAC (flooded), TTL 1 and a bad IPv4 checksum to the router MAC (dropped), a non-IPv4 frame.
#[cfg(feature = "dpdk")]
fn edge_frames(sample: &[(u16, Vec<u8>)]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let routed = sample
        .iter()
        .find(|(_, f)| f[..6] == pisa::workload::ROUTER_MAC);
    if let Some((p, f)) = sample.first() {
        let mut unknown = f.clone();
        unknown[..6].copy_from_slice(&[2, 0x77, 0, 0, 0, 1]);
        out.push((*p, unknown));
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        out.push((*p, arp));
    }
    if let Some((p, f)) = routed {
        let mut ttl1 = f.clone();
        ttl1[22] = 1;
        let mut bad = f.clone();
        bad[24] ^= 0xff;
        // TTL 1 with a right checksum: recompute over the IPv4 header.
        ttl1[24..26].copy_from_slice(&[0, 0]);
        let sum = ttl1[14..34]
            .chunks(2)
            .fold(0u32, |s, w| s + u32::from(u16::from_be_bytes([w[0], w[1]])));
        let sum = (sum & 0xffff) + (sum >> 16);
        let ck = !((sum & 0xffff) + (sum >> 16)) as u16;
        ttl1[24..26].copy_from_slice(&ck.to_be_bytes());
        out.push((*p, ttl1));
        out.push((*p, bad));
    }
    out
}

/// Builds the SWX side on l2l3's tables and frames and checks it against pisa on `sample`
/// frames of the workload plus edge cases; an error when they differ.
#[cfg(feature = "dpdk")]
pub fn setup(a: &PipelineBenchArgs, n_frames: usize, sample: usize) -> anyhow::Result<SwxSeries> {
    use anyhow::Context;
    let mut pisa_w = pisa::workload::l2l3(a.macs, a.routes, n_frames, a.engine)?;
    let mut w = pisa::swx::l2l3(&pisa_w)?;
    let mut frames: Vec<(u16, Vec<u8>)> = pisa_w.frames.iter().take(sample).cloned().collect();
    frames.extend(edge_frames(&frames));
    pisa::swx::check_same(&mut pisa_w, &mut w, &frames)
        .context("--against swx: the SWX pipeline does not do l2l3.p4's work")?;
    let (mode, reason) = match w.mode() {
        dataplane::swx::SwxMode::Compiled => ("compiled", None),
        dataplane::swx::SwxMode::Interpreted { reason } => ("interpreted", Some(reason.clone())),
    };
    Ok(SwxSeries {
        name: w.name.clone(),
        mode,
        reason,
        checked: frames.len(),
        runs: Vec::new(),
        w,
    })
}

#[cfg(not(feature = "dpdk"))]
pub fn setup(_a: &PipelineBenchArgs, _n: usize, _s: usize) -> anyhow::Result<SwxSeries> {
    anyhow::bail!("--against swx needs pisa built with the `dpdk` cargo feature (cargo build --features dpdk)")
}

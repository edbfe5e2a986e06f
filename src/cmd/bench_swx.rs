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
    /// The pisa series it is compared with (`l2l3`, `fib`).
    pub program: &'static str,
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
            "pisa_program": self.program,
            "pisa_mpps_per_core": pisa_mpps,
            "ratio_pisa_to_swx": pisa_mpps / self.mpps(),
            "pisa_tsc_ticks_per_packet": pisa_tsc,
        })
    }
}

/// One SWX workload built on a pisa workload's tables and frames, checked against pisa on
/// `sample` frames of it plus edge cases; an error when they differ.
#[cfg(feature = "dpdk")]
fn checked(
    program: &'static str,
    mut pisa_w: pisa::workload::Workload,
    interpreted: bool,
    sample: usize,
) -> anyhow::Result<SwxSeries> {
    use anyhow::Context;
    let mut w = match program {
        "l2l3" => pisa::swx::l2l3(&pisa_w, interpreted)?,
        _ => pisa::swx::fib(&pisa_w, interpreted)?,
    };
    let mut frames: Vec<(u16, Vec<u8>)> = pisa_w.frames.iter().take(sample).cloned().collect();
    frames.extend(pisa::swx::edge_frames(&frames));
    pisa::swx::check_same(&mut pisa_w, &mut w, &frames).with_context(|| {
        format!("--against swx: the SWX pipeline does not do {program}.p4's work")
    })?;
    let (mode, reason) = match w.mode() {
        dataplane::swx::SwxMode::Compiled => ("compiled", None),
        dataplane::swx::SwxMode::Interpreted { reason } => ("interpreted", Some(reason.clone())),
    };
    Ok(SwxSeries {
        program,
        name: w.name.clone(),
        mode,
        reason,
        checked: frames.len(),
        runs: Vec::new(),
        w,
    })
}

/// The SWX side: l2l3.spec on l2l3's tables and frames, fib.spec on fib's, each checked.
#[cfg(feature = "dpdk")]
pub fn setup(
    a: &PipelineBenchArgs,
    n_frames: usize,
    sample: usize,
) -> anyhow::Result<Vec<SwxSeries>> {
    let l2l3 = pisa::workload::l2l3(a.macs, a.routes, n_frames, a.engine)?;
    let fib = pisa::workload::fib(a.routes, n_frames, a.engine)?;
    Ok(vec![
        checked("l2l3", l2l3, a.swx_interpreted, sample)?,
        checked("fib", fib, a.swx_interpreted, sample)?,
    ])
}

#[cfg(not(feature = "dpdk"))]
pub fn setup(_a: &PipelineBenchArgs, _n: usize, _s: usize) -> anyhow::Result<Vec<SwxSeries>> {
    anyhow::bail!("--against swx needs pisa built with the `dpdk` cargo feature (cargo build --features dpdk)")
}

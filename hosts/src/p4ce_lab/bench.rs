//! The consensus benchmark: a leader keeps `outstanding` entries of `value_size` bytes in
//! flight for `duration` of virtual time, on the P4CE path or by unicast (Mu), and reports
//! consensus/s, goodput, commit latency percentiles (hdrhistogram) and the leader's packets
//! per consensus. Virtual time: the figures are what the link model allows (the leader's link
//! is the bottleneck); host CPU time is not modelled.

use std::collections::VecDeque;
use std::sync::Arc;

use hdrhistogram::Histogram;
use pipeline::ir::Program;
use serde::Serialize;

use super::lab::{Lab, LabConfig, LabError};
use crate::mu::Path;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// P4CE or unicast.
    pub mode: Path,
    /// Replicas (1..=4).
    pub replicas: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Virtual duration, ns.
    pub duration_ns: u64,
    /// Link rate, bit/s.
    pub link_rate_bps: u64,
    /// Link propagation delay, ns.
    pub link_delay_ns: u64,
}

/// The result (also the `--report json` document).
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// "p4ce" or "unicast".
    pub mode: String,
    /// Replicas.
    pub replicas: usize,
    /// f.
    pub f: usize,
    /// Value size, bytes.
    pub value_size: usize,
    /// Entries in flight.
    pub outstanding: usize,
    /// Link rate, bit/s.
    pub link_rate_bps: u64,
    /// Virtual time measured, s.
    pub duration_s: f64,
    /// Entries committed.
    pub committed: u64,
    /// Consensus per second (virtual time).
    pub consensus_per_s: f64,
    /// Value bytes committed per second.
    pub goodput_bytes_per_s: f64,
    /// Commit latency percentiles, ns.
    pub latency_p50_ns: u64,
    /// 99th percentile.
    pub latency_p99_ns: u64,
    /// 99.9th percentile.
    pub latency_p999_ns: u64,
    /// Frames the leader sent per consensus.
    pub leader_tx_per_consensus: f64,
    /// Frames the leader received per consensus.
    pub leader_rx_per_consensus: f64,
    /// Fallbacks to unicast during the run.
    pub fallbacks: u64,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
}

/// Runs one benchmark.
pub fn run(program: Arc<Program>, cfg: &BenchConfig) -> Result<BenchReport, LabError> {
    if cfg.value_size == 0 || cfg.outstanding == 0 || cfg.duration_ns == 0 {
        return Err(LabError::Config(
            "value size, outstanding and duration must be positive".into(),
        ));
    }
    let mut lc = LabConfig::new(cfg.mode, cfg.replicas);
    lc.max_value = cfg.value_size;
    lc.outstanding = cfg.outstanding;
    lc.slots = (cfg.outstanding * 8).max(64);
    lc.link_rate_bps = cfg.link_rate_bps;
    lc.link_delay_ns = cfg.link_delay_ns;
    lc.record = false;
    // Long values take long on the wire: the switch timeout must exceed a full window.
    let window_bits = cfg.outstanding as u64
        * (cfg.value_size as u64 + 200)
        * 8
        * 1_000_000_000
        * cfg.replicas as u64;
    let window_ns = window_bits.checked_div(cfg.link_rate_bps).unwrap_or(0);
    lc.switch_timeout = std::time::Duration::from_nanos((window_ns * 4).max(500_000));
    let f = lc.f;
    let mut lab = Lab::new(program, lc)?;
    let value = vec![0x5au8; cfg.value_size];
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| LabError::Config(e.to_string()))?;
    let mut started: VecDeque<u64> = VecDeque::new();
    let wall = std::time::Instant::now();
    let end = cfg.duration_ns;
    let mut committed_seen = 0u64;
    while lab.now() < end {
        while let Some(_n) = lab.append(&value)? {
            started.push_back(lab.now());
        }
        lab.advance(end)?;
        let c = lab.leader().committed();
        while committed_seen < c {
            if let Some(t0) = started.pop_front() {
                let _ = hist.record((lab.now() - t0).max(1));
            }
            committed_seen += 1;
        }
    }
    let committed = lab.leader().committed();
    let secs = end as f64 / 1e9;
    let st = lab.hosts[0].ep.stats();
    let per = |x: u64| {
        if committed == 0 {
            0.0
        } else {
            x as f64 / committed as f64
        }
    };
    Ok(BenchReport {
        mode: match cfg.mode {
            Path::Switch => "p4ce".into(),
            Path::Unicast => "unicast".into(),
        },
        replicas: cfg.replicas,
        f,
        value_size: cfg.value_size,
        outstanding: cfg.outstanding,
        link_rate_bps: cfg.link_rate_bps,
        duration_s: secs,
        committed,
        consensus_per_s: committed as f64 / secs,
        goodput_bytes_per_s: committed as f64 * cfg.value_size as f64 / secs,
        latency_p50_ns: hist.value_at_quantile(0.5),
        latency_p99_ns: hist.value_at_quantile(0.99),
        latency_p999_ns: hist.value_at_quantile(0.999),
        leader_tx_per_consensus: per(st.tx_frames),
        leader_rx_per_consensus: per(st.rx_frames),
        fallbacks: lab.leader().stats().fallbacks,
        wall_s: wall.elapsed().as_secs_f64(),
    })
}

/// Formats reports as the side-by-side table of `pisa demo p4ce`: one row per (replicas,
/// value size), P4CE and unicast columns and their goodput ratio.
pub fn side_by_side(reports: &[BenchReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>8} {:>7} | {:>12} {:>10} {:>9} {:>9} {:>7} | {:>12} {:>10} {:>9} {:>9} {:>7} | {:>6}",
        "replicas",
        "value",
        "p4ce cons/s",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "tx+rx",
        "mu cons/s",
        "Gbit/s",
        "p50 us",
        "p99 us",
        "tx+rx",
        "ratio"
    );
    let find = |mode: &str, r: usize, v: usize| {
        reports
            .iter()
            .find(|x| x.mode == mode && x.replicas == r && x.value_size == v)
    };
    let mut keys: Vec<(usize, usize)> =
        reports.iter().map(|r| (r.replicas, r.value_size)).collect();
    keys.sort_unstable();
    keys.dedup();
    for (r, v) in keys {
        let (Some(p), Some(u)) = (find("p4ce", r, v), find("unicast", r, v)) else {
            continue;
        };
        let col = |x: &BenchReport| {
            format!(
                "{:>12.0} {:>10.2} {:>9.1} {:>9.1} {:>7.2}",
                x.consensus_per_s,
                x.goodput_bytes_per_s * 8.0 / 1e9,
                x.latency_p50_ns as f64 / 1e3,
                x.latency_p99_ns as f64 / 1e3,
                x.leader_tx_per_consensus + x.leader_rx_per_consensus
            )
        };
        let ratio = if u.goodput_bytes_per_s > 0.0 {
            p.goodput_bytes_per_s / u.goodput_bytes_per_s
        } else {
            0.0
        };
        let _ = writeln!(s, "{r:>8} {v:>7} | {} | {} | {ratio:>5.2}x", col(p), col(u));
    }
    s
}

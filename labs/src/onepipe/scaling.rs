//! Fig. 8 of the 1Pipe paper in shape: all-to-all broadcast throughput per process against the
//! number of processes, for 1Pipe (best effort) and the baselines of [`super::baseline`] on the
//! same fabric and hosts, each run checked.
//!
//! The model forwards a few ten thousand packets per wall second, so to saturate the fabric
//! the links run at [`RATE_BPS`] and the beacon interval is scaled with them (the paper's 3 µs
//! at 100G is 0.3% of a link; 100 µs at 100 Mbit/s keeps the switches' beacons near 6%).
//! Every process offers 1.25 times what its host link can take in (all processes broadcast, so
//! each host receives N-1 messages per round), so each scheme shows what it sustains, counted
//! over the second half of the run. Overloaded, queues grow and the last messages sent are
//! still on their way at the end: the checkers run are the ordering ones (one total order,
//! nothing delivered twice or unsent, causality for 1Pipe); completeness is checked in the
//! unloaded runs (`labs::onepipe` tests, [`super::bench`]).

use hosts::onepipe::baselines::Scheme;

use super::baseline;
use super::lab::{LabConfig, LabError};

/// The links' rate in this experiment (bit/s).
pub const RATE_BPS: u64 = 100_000_000;
/// The beacon and Lamport clock-exchange interval (ns).
pub const INTERVAL_NS: u64 = 100_000;
/// Scatterings a token holder sends per turn.
pub const TOKEN_BATCH: usize = 4;
/// Bytes on the wire per 64-byte message (Ethernet, IPv4, UDP, the ordering header, the
/// preamble and gap), about the same for every scheme.
const WIRE_BYTES: u64 = 64 + 14 + 20 + 8 + 31 + 24;
/// When processes start sending (ns).
const START_NS: u64 = 50_000;

/// One point of the figure.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScalingPoint {
    pub scheme: &'static str,
    pub processes: usize,
    /// Messages delivered per second per process (one per destination of a broadcast).
    pub delivered_per_s_per_process: f64,
    /// What a host link could take in (messages per second): the bound.
    pub link_bound_per_s: f64,
    pub latency_p50_us: f64,
    pub checks_passed: bool,
    pub check_error: Option<String>,
}

/// The lab of `n` processes broadcasting on `topology` for `duration_ns`.
pub fn config(topology: std::path::PathBuf, n: usize, duration_ns: u64) -> LabConfig {
    let bound = RATE_BPS as f64 / 8.0 / WIRE_BYTES as f64;
    let per_broadcast = (n.max(2) - 1) as f64;
    let send_every = (1e9 * per_broadcast / (1.25 * bound)) as u64;
    let mut c = LabConfig::new(topology);
    c.processes = n;
    c.rate_bps = Some(RATE_BPS);
    c.beacon_interval_ns = INTERVAL_NS;
    c.link_timeout_ns = 10 * INTERVAL_NS;
    c.send_every_ns = send_every;
    c.messages = duration_ns.saturating_sub(START_NS) / send_every.max(1) + 1;
    c.duration_ns = duration_ns;
    c
}

/// Deliveries per second per process over the run's second half, the median latency (µs)
/// over `(sent at, delivered at)` pairs.
fn figures(n: usize, delivered_at: &[u64], mut lat: Vec<u64>, duration_ns: u64) -> (f64, f64) {
    let half = duration_ns / 2;
    let window = (duration_ns - half).max(1) as f64 / 1e9;
    let count = delivered_at.iter().filter(|&&t| t >= half).count();
    lat.sort_unstable();
    let p50 = lat.get(lat.len() / 2).map_or(0.0, |&v| v as f64 / 1e3);
    (count as f64 / window / n.max(1) as f64, p50)
}

fn one_pipe(cfg: &LabConfig, n: usize) -> Result<ScalingPoint, LabError> {
    let r = super::lab::run(cfg)?;
    let checks = super::check::total_order(&r)
        .and_then(|_| super::check::delivered_were_sent(&r))
        .and_then(|_| super::check::causality(&r));
    let sent_at: std::collections::HashMap<(u16, u64), u64> = r
        .sent
        .iter()
        .enumerate()
        .flat_map(|(s, v)| v.iter().map(move |m| ((s as u16, m.ts), m.at)))
        .collect();
    let mut at = Vec::new();
    let mut lat = Vec::new();
    for d in r.delivered.iter().flatten() {
        at.push(d.at);
        if let Some(&s) = sent_at.get(&(d.d.src, d.d.ts)) {
            lat.push(d.at.saturating_sub(s));
        }
    }
    let (tput, p50) = figures(n, &at, lat, cfg.duration_ns);
    Ok(point("1Pipe/BE", n, tput, p50, checks.map(|_| ())))
}

fn point(
    scheme: &'static str,
    n: usize,
    tput: f64,
    p50: f64,
    checks: Result<(), String>,
) -> ScalingPoint {
    ScalingPoint {
        scheme,
        processes: n,
        delivered_per_s_per_process: tput,
        link_bound_per_s: RATE_BPS as f64 / 8.0 / WIRE_BYTES as f64,
        latency_p50_us: p50,
        checks_passed: checks.is_ok(),
        check_error: checks.err(),
    }
}

fn base(
    cfg: &LabConfig,
    n: usize,
    name: &'static str,
    scheme: Scheme,
) -> Result<ScalingPoint, LabError> {
    let r = baseline::run(cfg, scheme)?;
    let checks = baseline::check(&r, 0).map(|_| ());
    let mut at = Vec::new();
    let mut lat = Vec::new();
    for ds in &r.delivered {
        for (t, d) in ds {
            at.push(*t);
            let seq = d
                .msg
                .get(..8)
                .map_or(0, |b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])));
            if let Some(s) = r.sent[usize::from(d.src)].get(seq as usize) {
                lat.push(t.saturating_sub(s.at));
            }
        }
    }
    let (tput, p50) = figures(n, &at, lat, cfg.duration_ns);
    Ok(point(name, n, tput, p50, checks))
}

/// Every scheme at every process count in `processes` on `topology`.
pub fn scaling(
    topology: &std::path::Path,
    processes: &[usize],
    duration_ns: u64,
) -> Result<Vec<ScalingPoint>, LabError> {
    let mut out = Vec::new();
    for &n in processes {
        let cfg = config(topology.to_path_buf(), n, duration_ns);
        out.push(one_pipe(&cfg, n)?);
        out.push(base(&cfg, n, "switch sequencer", Scheme::Sequencer)?);
        out.push(base(
            &cfg,
            n,
            "token",
            Scheme::Token { batch: TOKEN_BATCH },
        )?);
        out.push(base(
            &cfg,
            n,
            "Lamport",
            Scheme::Lamport {
                exchange_ns: INTERVAL_NS,
            },
        )?);
    }
    Ok(out)
}

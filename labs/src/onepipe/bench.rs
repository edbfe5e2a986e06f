//! The figures of a 1Pipe run: delivery latency (send to delivery, true time) against an
//! unordered transport on the same fabric (send to first arrival of the same packets), the
//! overhead between them, throughput per process, and the beacons' share of link capacity.

use std::collections::HashMap;

use super::lab::{run, LabConfig, LabError, LabRun};

/// One run's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// Which driver ran it.
    pub driver: &'static str,
    pub mode: &'static str,
    pub processes: usize,
    pub beacon_interval_us: f64,
    pub loss: f64,
    pub messages_sent: usize,
    pub deliveries: usize,
    /// Deliveries per second of virtual time, per process.
    pub delivered_per_s_per_process: f64,
    pub latency_p50_us: f64,
    pub latency_p99_us: f64,
    pub unordered_p50_us: f64,
    pub unordered_p99_us: f64,
    pub overhead_p50_us: f64,
    pub overhead_p99_us: f64,
    /// Beacon bits over the capacity of every link direction for the run.
    pub beacon_share: f64,
    pub lost_reported: usize,
    pub links_removed: usize,
    /// Whether the checkers passed (total order, delivered were sent, delivered or reported).
    /// Switch pipeline passes per wall-clock second in this run (the model's speed here, all
    /// switches on one thread: what a live switch could sustain, beacons included).
    pub switch_passes_per_wall_s: f64,
    /// With a host crash: when the controller declared it (µs after the crash) and the
    /// survivors' median longest gap between deliveries after the crash (the barrier stall).
    pub failure_declared_after_us: Option<f64>,
    pub failure_stall_us: Option<f64>,
    pub checks_passed: bool,
    pub check_error: Option<String>,
}

/// The `q` quantile (0..=1) of `v` (sorted here), in microseconds.
fn quantile_us(v: &mut [u64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i] as f64 / 1e3
}

/// The survivors' median longest gap between consecutive deliveries from `at` on.
fn stall_us(r: &LabRun, failed: usize, at: u64) -> f64 {
    let mut gaps: Vec<u64> = (0..r.delivered.len())
        .filter(|&p| p != failed)
        .map(|p| {
            let times: Vec<u64> = std::iter::once(at)
                .chain(r.delivered[p].iter().map(|d| d.at).filter(|&t| t >= at))
                .collect();
            times.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
        })
        .collect();
    quantile_us(&mut gaps, 0.5)
}

/// Figures of `r`, a run of `cfg`.
pub fn report(cfg: &LabConfig, r: &LabRun) -> BenchReport {
    let sent_at: HashMap<(u16, u64), u64> = r
        .sent
        .iter()
        .enumerate()
        .flat_map(|(s, v)| v.iter().map(move |m| ((s as u16, m.ts), m.at)))
        .collect();
    let (mut lat, mut raw) = (Vec::new(), Vec::new());
    for (rcv, ds) in r.delivered.iter().enumerate() {
        for d in ds {
            let Some(&at) = sent_at.get(&(d.d.src, d.d.ts)) else {
                continue;
            };
            lat.push(d.at.saturating_sub(at));
            if let Some(&arr) = r.arrivals[rcv].get(&(d.d.src, d.d.ts)) {
                raw.push(arr.saturating_sub(at));
            }
        }
    }
    // After a crash, completeness is not checked (the failed host's messages above its
    // failure timestamp are discarded); in reliable mode atomicity among the survivors is.
    let until = if r.failure.is_some() {
        0
    } else {
        cfg.duration_ns.saturating_sub(cfg.link_timeout_ns * 4)
    };
    let checks = super::check::total_order(r)
        .and_then(|_| super::check::delivered_were_sent(r))
        .and_then(|_| super::check::causality(r))
        .and_then(|_| match (cfg.reliable, r.failure) {
            (true, Some((h, ..))) => super::check::atomic_among_survivors(r, h),
            (true, None) => super::check::atomic(r, until),
            (false, _) => Ok(()),
        })
        .and_then(|_| super::check::delivered_or_reported(r, until));
    let deliveries: usize = r.delivered.iter().map(Vec::len).sum();
    let processes = r.delivered.len();
    let secs = r.duration_ns as f64 / 1e9;
    let capacity_bits = r.link_directions as f64 * r.link_rate_bps as f64 * secs;
    let beacon_bits = 8.0 * (r.host_beacon_bytes + r.switch_beacon_bytes) as f64;
    let (l50, l99, u50, u99) = (
        quantile_us(&mut lat, 0.5),
        quantile_us(&mut lat, 0.99),
        quantile_us(&mut raw, 0.5),
        quantile_us(&mut raw, 0.99),
    );
    BenchReport {
        driver: r.driver,
        mode: if cfg.reliable { "reliable" } else { "be" },
        processes,
        beacon_interval_us: cfg.beacon_interval_ns as f64 / 1e3,
        loss: cfg.loss,
        messages_sent: r.sent.iter().map(Vec::len).sum(),
        deliveries,
        delivered_per_s_per_process: deliveries as f64 / secs / processes.max(1) as f64,
        latency_p50_us: l50,
        latency_p99_us: l99,
        unordered_p50_us: u50,
        unordered_p99_us: u99,
        overhead_p50_us: l50 - u50,
        overhead_p99_us: l99 - u99,
        beacon_share: if capacity_bits > 0.0 {
            beacon_bits / capacity_bits
        } else {
            0.0
        },
        lost_reported: *checks.as_ref().unwrap_or(&0),
        links_removed: r
            .link_events
            .iter()
            .filter(|(_, _, e)| matches!(e, control::onepipe::LinkEvent::Removed { .. }))
            .count(),
        switch_passes_per_wall_s: r.switch_passes as f64 / r.wall_s.max(1e-9),
        failure_declared_after_us: r
            .failure
            .map(|(_, at, declared, _)| (declared - at) as f64 / 1e3),
        failure_stall_us: r.failure.map(|(h, at, _, _)| stall_us(r, h, at)),
        checks_passed: checks.is_ok(),
        check_error: checks.err(),
    }
}

/// Writes the run's logs into `dir`: per process `sends-<name>.jsonl` (`{"ts","seq","dsts"}`
/// in send order) and `deliveries-<name>.jsonl` (`{"ts","src","seq","dsts"}` in delivery
/// order; `seq` is the sender's sequence number, carried in the message's first 8 bytes).
pub fn write_logs(r: &LabRun, dir: &std::path::Path) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::create_dir_all(dir)?;
    let dsts_of: HashMap<(u16, u64), (u64, Vec<&str>)> = r
        .sent
        .iter()
        .enumerate()
        .flat_map(|(s, v)| {
            v.iter().map(move |m| {
                let names = m
                    .dsts
                    .iter()
                    .map(|&d| r.names[usize::from(d)].as_str())
                    .collect();
                ((s as u16, m.ts), (m.seq, names))
            })
        })
        .collect();
    for (p, name) in r.names.iter().enumerate() {
        let mut f = std::io::BufWriter::new(std::fs::File::create(
            dir.join(format!("sends-{name}.jsonl")),
        )?);
        for m in &r.sent[p] {
            let dsts: Vec<&str> = m
                .dsts
                .iter()
                .map(|&d| r.names[usize::from(d)].as_str())
                .collect();
            writeln!(
                f,
                "{}",
                serde_json::json!({"ts": m.ts, "seq": m.seq, "dsts": dsts})
            )?;
        }
        f.flush()?;
        let mut f = std::io::BufWriter::new(std::fs::File::create(
            dir.join(format!("deliveries-{name}.jsonl")),
        )?);
        for d in &r.delivered[p] {
            let src = r
                .names
                .get(usize::from(d.d.src))
                .map_or("?", String::as_str);
            let (seq, dsts) = dsts_of.get(&(d.d.src, d.d.ts)).cloned().unwrap_or_default();
            writeln!(
                f,
                "{}",
                serde_json::json!({"ts": d.d.ts, "src": src, "seq": seq, "dsts": dsts})
            )?;
        }
        f.flush()?;
    }
    Ok(())
}

/// Runs `cfg` and reports.
pub fn bench(cfg: &LabConfig) -> Result<BenchReport, LabError> {
    bench_with_logs(cfg, None)
}

/// Runs `cfg`, writes its logs into `log_dir` if given, and reports.
pub fn bench_with_logs(
    cfg: &LabConfig,
    log_dir: Option<&std::path::Path>,
) -> Result<BenchReport, LabError> {
    let r = run(cfg)?;
    if let Some(d) = log_dir {
        write_logs(&r, d).map_err(|e| LabError::Config(format!("logs {}: {e}", d.display())))?;
    }
    Ok(report(cfg, &r))
}

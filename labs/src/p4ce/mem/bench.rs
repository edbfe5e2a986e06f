//! The consensus benchmark in memory (`pisa consensus bench`, `pisa demo p4ce`): a leader
//! keeps `outstanding` entries of `value_size` bytes in flight for `duration` of virtual time,
//! on the P4CE path or by unicast (Mu). Virtual time: the figures are what the link model
//! allows (the leader's link is the bottleneck); host CPU time is not modelled. Settings,
//! report and tables are the host side's ([`hosts::p4ce::bench`]).

use std::sync::Arc;

use hosts::p4ce::bench::{check, report, slots, switch_timeout, Meter, RunFigures};
pub use hosts::p4ce::bench::{curve, side_by_side, BenchConfig, BenchReport};
use pipeline::ir::Program;

use super::lab::{Lab, LabConfig, LabError};

/// Runs one benchmark.
pub fn run(program: Arc<Program>, cfg: &BenchConfig) -> Result<BenchReport, LabError> {
    check(cfg)?;
    let mut lc = LabConfig::new(cfg.mode, cfg.replicas);
    lc.max_value = cfg.value_size;
    lc.outstanding = cfg.outstanding;
    lc.slots = slots(cfg.outstanding);
    lc.link_rate_bps = cfg.link_rate_bps;
    lc.link_delay_ns = cfg.link_delay_ns;
    lc.record = false;
    lc.switch_timeout = switch_timeout(cfg);
    let f = lc.f;
    let mut lab = Lab::new(program, lc)?;
    let value = vec![0x5au8; cfg.value_size];
    let mut meter = Meter::new(0)?;
    let wall = std::time::Instant::now();
    let end = cfg.duration_ns;
    while lab.now() < end {
        // Commits are seen, and the window refilled, at the instant they happen, before
        // time jumps to the next thing due.
        lab.settle()?;
        meter.committed(lab.leader().committed(), lab.now());
        let mut appended = false;
        while let Some(_n) = lab.append(&value)? {
            meter.appended(lab.now());
            appended = true;
        }
        if !appended {
            lab.advance(end)?;
        }
    }
    let st = lab.hosts[0].ep.stats();
    let fig = RunFigures {
        f,
        committed: lab.leader().committed(),
        secs: end as f64 / 1e9,
        leader_tx_frames: st.tx_frames,
        leader_rx_frames: st.rx_frames,
        fallbacks: lab.leader().stats().fallbacks,
        wall_s: wall.elapsed().as_secs_f64(),
        lab: "memory".into(),
        bottleneck: "the link model (virtual time; host CPU not modelled)".into(),
    };
    Ok(report(cfg, fig, &meter))
}

//! The consensus benchmark in memory (`pisa consensus bench`, `pisa demo p4ce`): once the lab
//! is up, the leader keeps `outstanding` entries of `value_size` bytes in flight for
//! `duration` of virtual time (it appends one value over and over as its window allows, and
//! meters commit latencies itself, as in the namespace bench), on the P4CE path or by unicast
//! (Mu). Virtual time: the figures are what the link model allows (the leader's link is the
//! bottleneck); host CPU time is not modelled. Settings, report and tables are the host
//! side's ([`hosts::p4ce::bench`]).

use std::sync::Arc;

use hosts::p4ce::bench::{
    check, report, slots, switch_timeout, LateJoin, LateReplica, Meter, RunFigures,
};
pub use hosts::p4ce::bench::{curve, side_by_side, BenchConfig, BenchReport};
use hosts::p4ce::integrity::{check_logs, Integrity};
use pipeline::ir::Program;

use super::lab::{Fabric, Lab, LabConfig, LabError};

/// What the leader's endpoint and log say at either end of the measured interval.
struct Mark {
    committed: u64,
    tx_frames: u64,
    rx_frames: u64,
    fallbacks: u64,
}

fn mark(lab: &mut Lab, lead: usize) -> Mark {
    let node = lab.node(lead);
    let st = node.endpoint().stats();
    let (tx_frames, rx_frames) = (st.tx_frames, st.rx_frames);
    let (committed, fallbacks) = node
        .leader_ref()
        .and_then(|l| l.leader.as_ref())
        .map(|l| (l.committed(), l.stats().fallbacks))
        .unwrap_or_default();
    Mark {
        committed,
        tx_frames,
        rx_frames,
        fallbacks,
    }
}

/// How long (virtual time) the end of a run waits for what is in flight to commit and for
/// the replicas to apply it before the logs are compared.
const DRAIN: u64 = 500_000_000;

/// The end of every run: the leader stops appending, what is in flight commits and the live
/// replicas apply it (or half a second of virtual time passes), then every replica's log is
/// checked against what the leader appended ([`check_logs`]).
pub fn drain_and_check(lab: &mut Lab, lead: usize, f: usize) -> Result<Integrity, LabError> {
    lab.with_node(lead, |n| {
        if let Some(l) = n.leader() {
            l.repeat = None;
            l.queue.clear();
        }
    });
    let deadline = lab.now() + DRAIN;
    let hosts = lab.hosts();
    loop {
        let done = {
            let node = lab.node(lead);
            match node.leader_ref().and_then(|l| l.leader.as_ref()) {
                Some(l) if l.outstanding() == 0 => {
                    let (c, live) = (l.committed(), l.live_replicas());
                    Some((c, live))
                }
                Some(_) => None,
                None => Some((0, Vec::new())),
            }
        };
        if let Some((c, live)) = done {
            let caught_up = (0..hosts).filter(|h| *h != lead).all(|h| {
                let n = lab.node(h);
                !live.contains(&n.id) || n.status.applied >= c
            });
            if caught_up {
                break;
            }
        }
        if !lab.advance(deadline)? {
            break;
        }
    }
    let (appended, committed) = {
        let node = lab.node(lead);
        let l = node.leader_ref();
        (
            l.map(|l| l.digests.clone()).unwrap_or_default(),
            l.and_then(|l| l.leader.as_ref())
                .map_or(0, |l| l.committed()),
        )
    };
    let replicas: Vec<(u16, Vec<u64>)> = (0..hosts)
        .filter(|h| *h != lead)
        .map(|h| {
            let n = lab.node(h);
            let d = n
                .replica_ref()
                .map(|r| r.digests.clone())
                .unwrap_or_default();
            (n.id, d)
        })
        .collect();
    let logs: Vec<(u16, &[u64])> = replicas.iter().map(|(id, d)| (*id, &d[..])).collect();
    Ok(check_logs(&appended, committed, &logs, f))
}

/// Runs one benchmark on the single-switch topology.
pub fn run(program: Arc<Program>, cfg: &BenchConfig) -> Result<BenchReport, LabError> {
    run_on(program, cfg, Fabric::Switch, &crate::p4ce::repo_labs_dir())
}

/// The lab settings of a benchmark (both labs start from these).
pub(crate) fn lab_config(cfg: &BenchConfig) -> LabConfig {
    let mut lc = LabConfig::new(cfg.mode, cfg.replicas);
    lc.max_value = cfg.value_size;
    lc.outstanding = cfg.outstanding;
    lc.slots = slots(cfg.outstanding);
    lc.link_rate_bps = cfg.link_rate_bps;
    lc.link_delay_ns = cfg.link_delay_ns;
    lc.faults = cfg.faults.clone();
    lc.host_links = cfg.host_links.clone();
    if let Some(l) = cfg.late_replica {
        // Its cable down from the start (its other settings kept); up during the run.
        let mut c = lc.host_link(l.replica, 0);
        c.tx.faults.link_down = true;
        c.rx.faults.link_down = true;
        if lc.host_links.len() <= l.replica {
            lc.host_links.resize(l.replica + 1, None);
        }
        lc.host_links[l.replica] = Some(c);
    }
    lc.record = false;
    lc.switch_timeout = switch_timeout(cfg);
    // After a fallback on a NAK (one lost or reordered frame, §III-A) the replicas are re-sent
    // what they lack within a probe's round trip: try the switch again a probe period later
    // (at 5 ms, 4 replicas at 5e-5 loss spent the whole run on unicast).
    lc.switch_retry = lc.probe_every;
    lc
}

/// Runs one benchmark on `fabric` (the single switch, or across the leaf-spine), the
/// topology read as if from `topology_dir` (a `deploy/labs/`; see [`LabConfig::topology_dir`]).
pub fn run_on(
    program: Arc<Program>,
    cfg: &BenchConfig,
    fabric: Fabric,
    topology_dir: &std::path::Path,
) -> Result<BenchReport, LabError> {
    check(cfg)?;
    let mut lc = lab_config(cfg);
    lc.fabric = fabric;
    lc.topology_dir = topology_dir.to_path_buf();
    let f = lc.f;
    let wall = std::time::Instant::now();
    let mut lab = Lab::new(program, lc)?;
    let lead = lab.leader_host();
    let m0 = mark(&mut lab, lead);
    let value = vec![0x5au8; cfg.value_size];
    let meter = Meter::new(m0.committed)?;
    lab.with_node(lead, move |n| {
        if let Some(l) = n.leader() {
            l.meter = Some(meter);
            l.repeat = Some(value);
        }
    });
    let end = lab.now() + cfg.duration_ns;
    let late = match cfg.late_replica {
        Some(l) => Some(run_late(&mut lab, l, end)?),
        None => {
            lab.run_until(end)?;
            None
        }
    };
    let m1 = mark(&mut lab, lead);
    let meter = match lab.node(lead).leader().and_then(|l| l.meter.take()) {
        Some(m) => m,
        None => Meter::new(0)?,
    };
    let integrity = drain_and_check(&mut lab, lead, f)?;
    let fig = RunFigures {
        f,
        committed: m1.committed - m0.committed,
        secs: cfg.duration_ns as f64 / 1e9,
        leader_tx_frames: m1.tx_frames - m0.tx_frames,
        leader_rx_frames: m1.rx_frames - m0.rx_frames,
        fallbacks: m1.fallbacks - m0.fallbacks,
        wall_s: wall.elapsed().as_secs_f64(),
        lab: match fabric {
            Fabric::Switch => "memory".into(),
            Fabric::LeafSpine => "memory, leaf-spine".into(),
        },
        bottleneck: "the link model (virtual time; host CPU not modelled)".into(),
        integrity,
    };
    let mut r = report(cfg, fig, &meter);
    r.late_replica = late;
    Ok(r)
}

/// Runs until `end` with replica `l` cut off until its time: then its cable comes up, and
/// the run notes when the leader counts it live again and when it holds every entry
/// committed while it was away.
fn run_late(lab: &mut Lab, l: LateReplica, end: u64) -> Result<LateJoin, LabError> {
    let start = lab.now();
    let up = (start + l.up_after_ns).min(end);
    lab.run_until(up)?;
    lab.set_host_link_up(l.replica, true);
    let missed = lab.leader().committed();
    let id = lab.node(l.replica).id;
    let joined0 = lab.leader().stats().joined;
    let secs = |t: u64| (t - up) as f64 / 1e9;
    let (mut joined, mut caught_up) = (None, None);
    loop {
        let now = lab.now();
        if joined.is_none() && lab.leader().stats().joined > joined0 {
            joined = Some(secs(now));
        }
        if caught_up.is_none() && lab.node(l.replica).status.applied >= missed {
            caught_up = Some(secs(now));
        }
        if joined.is_some() && caught_up.is_some() {
            lab.run_until(end)?;
            break;
        }
        if !lab.advance(end)? {
            break;
        }
    }
    Ok(LateJoin {
        id,
        up_at_s: (up - start) as f64 / 1e9,
        missed,
        joined_after_s: joined,
        caught_up_after_s: caught_up,
        snapshots: lab.leader().stats().snapshots,
    })
}

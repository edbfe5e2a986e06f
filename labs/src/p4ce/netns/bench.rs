//! The consensus benchmark in network namespaces (`pisa consensus bench --lab`): the leader
//! keeps `outstanding` entries in flight for `duration` of wall-clock time after a short
//! warm-up; the report is the in-memory bench's ([`BenchReport`], built by the same
//! [`report`] from the same [`Meter`]) with `lab = "netns"` and a `bottleneck` line that
//! says how busy the leader's link and every thread were over the measured interval. With
//! `--late-replica N@TIME`, replica N's cable (its switch port) is down until TIME into the
//! measured interval; the report's `late replica:` line says when it joined and caught up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use dataplane::runtime::RuntimeStats;
use dataplane::LabState;
use hosts::p4ce::bench::{
    check, report, BenchConfig, BenchReport, LateJoin, LateReplica, Meter, RunFigures,
};
use hosts::p4ce::integrity::{check_logs, Integrity};
use hosts::p4ce::machine::Node;
use pipeline::ir::Program;

use super::lab::{CpuSnapshot, NetnsLab};
use super::switch::CALL_TIMEOUT;
use super::NetnsError;

/// The shortest switch-path timeout in wall-clock time: a loaded machine delays commits by
/// milliseconds without anything being broken.
const MIN_SWITCH_TIMEOUT: Duration = Duration::from_millis(100);

/// What the leader's thread reports at either end of the measured interval.
struct Mark {
    now_ns: u64,
    committed: u64,
    tx_frames: u64,
    rx_frames: u64,
    fallbacks: u64,
    retransmissions: u64,
    meter: Option<Meter>,
}

fn mark(lab: &NetnsLab, start_meter: bool) -> Result<Mark, NetnsError> {
    Ok(lab.node(0).exec(CALL_TIMEOUT, move |ctx| {
        let now_ns = ctx.now.as_nanos();
        let st = ctx.endpoint().stats();
        let (tx_frames, rx_frames, retransmissions) =
            (st.tx_frames, st.rx_frames, st.retransmissions);
        let l = ctx.leader();
        let (committed, next, fallbacks) = l
            .as_ref()
            .and_then(|l| l.leader.as_ref())
            .map(|x| (x.committed(), x.next_index(), x.stats().fallbacks))
            .unwrap_or_default();
        let meter = match l {
            Some(l) if start_meter => {
                l.meter = Meter::new(next).ok();
                None
            }
            Some(l) => l.meter.take(),
            None => None,
        };
        Mark {
            now_ns,
            committed,
            tx_frames,
            rx_frames,
            fallbacks,
            retransmissions,
            meter,
        }
    })?)
}

/// How long the end of a run waits for the logs to drain before comparing them.
const DRAIN: Duration = Duration::from_secs(5);

/// Whether nothing is in flight and every live replica applied what the leader committed.
fn drained(lab: &NetnsLab) -> Result<bool, NetnsError> {
    let (c, live) = lab
        .node(0)
        .exec(CALL_TIMEOUT, |ctx| {
            ctx.leader()
                .and_then(|l| l.leader.as_ref())
                .filter(|l| l.outstanding() == 0)
                .map(|l| (l.committed(), l.live_replicas()))
        })?
        .unwrap_or((0, Vec::new()));
    Ok((1..=lab.config().replicas).all(|i| {
        let n = lab.node(i);
        !live.contains(&n.id) || !n.running() || n.status().applied >= c
    }) && lab.node(0).status().committed >= c)
}

/// The integrity check on the nodes' final states (index 0 the leader).
fn check_outcome(nodes: &[Option<Node>], f: usize) -> Integrity {
    let Some(Some(leader)) = nodes.first() else {
        return Integrity {
            problems: vec!["the leader's state is gone (its thread failed)".into()],
            ..Integrity::default()
        };
    };
    let l = leader.leader_ref();
    let appended = l.map(|l| l.digests.clone()).unwrap_or_default();
    let committed = l
        .and_then(|l| l.leader.as_ref())
        .map_or(0, |l| l.committed());
    let replicas: Vec<(u16, &[u64])> = nodes[1..]
        .iter()
        .flatten()
        .map(|n| (n.id, n.replica_ref().map_or(&[][..], |r| &r.digests[..])))
        .collect();
    check_logs(&appended, committed, &replicas, f)
}

/// Runs one benchmark on the hosts of `state`.
pub fn run(
    program: Arc<Program>,
    cfg: &BenchConfig,
    state: &LabState,
) -> Result<BenchReport, NetnsError> {
    check(cfg)?;
    let mut lc = crate::p4ce::mem::bench::lab_config(cfg);
    lc.switch_timeout = lc.switch_timeout.max(MIN_SWITCH_TIMEOUT);
    lc.switch_retry = Duration::from_millis(50);
    lc.probe_every = Duration::from_millis(2);
    let f = lc.f;
    let wall = std::time::Instant::now();
    let lab = NetnsLab::start(program, lc, state, Duration::from_secs(10))?;
    let value = vec![0x5au8; cfg.value_size];
    lab.node(0).exec(CALL_TIMEOUT, move |ctx| {
        if let Some(l) = ctx.leader() {
            l.repeat = Some(value);
        }
    })?;
    // Warm-up: connections, caches and queues settle.
    let warm = Duration::from_nanos(cfg.duration_ns / 5)
        .clamp(Duration::from_millis(100), Duration::from_millis(500));
    std::thread::sleep(warm);
    let m0 = mark(&lab, true)?;
    let sa: Vec<_> = (0..=cfg.replicas).map(|i| lab.node(i).status()).collect();
    let cpu0 = lab.cpu();
    let rt0 = lab.switch().stats();
    let start = Instant::now();
    let run = Duration::from_nanos(cfg.duration_ns);
    let late = match cfg.late_replica {
        Some(l) => Some(run_late(&lab, l, start, run)?),
        None => None,
    };
    std::thread::sleep(run.saturating_sub(start.elapsed()));
    let m1 = mark(&lab, false)?;
    let sb: Vec<_> = (0..=cfg.replicas).map(|i| lab.node(i).status()).collect();
    let cpu1 = lab.cpu();
    let rt1 = lab.switch().stats();
    let leader_port = lab.devport(0);
    // The end of every run: no more appends, what is in flight commits and the live
    // replicas apply it (or DRAIN passes), then the logs are compared.
    lab.node(0).exec(CALL_TIMEOUT, |ctx| {
        if let Some(l) = ctx.leader() {
            l.repeat = None;
            l.queue.clear();
        }
    })?;
    let _ = lab.wait_for(DRAIN, "the logs to drain", |l| drained(l).unwrap_or(false));
    let outcome = lab.stop()?;
    let integrity = check_outcome(&outcome.nodes, f);
    let secs = (m1.now_ns.saturating_sub(m0.now_ns)) as f64 / 1e9;
    let meter = match m1.meter {
        Some(m) => m,
        None => Meter::new(0)?,
    };
    let mut bottleneck = bottleneck(
        secs,
        cfg.leader_rate_bps(),
        leader_port,
        (&rt0, &rt1),
        (&cpu0, &cpu1),
    );
    // How the node loops spent the interval: turns, the share that ended idle (waiting on
    // the port) and the share in which endpoint timers ran.
    let loops: Vec<String> = sa
        .iter()
        .zip(&sb)
        .enumerate()
        .map(|(i, (a, b))| {
            let t = b.turns.saturating_sub(a.turns).max(1) as f64;
            format!(
                "{} {:.0}/s idle {:.0}% timers {:.0}%",
                if i == 0 {
                    "leader".to_string()
                } else {
                    format!("r{}", i + 1)
                },
                t / secs.max(1e-9),
                b.idle_turns.saturating_sub(a.idle_turns) as f64 * 100.0 / t,
                b.timer_turns.saturating_sub(a.timer_turns) as f64 * 100.0 / t
            )
        })
        .collect();
    bottleneck.push_str(&format!("; node loops: {}", loops.join(", ")));
    let drops = |s: &RuntimeStats| s.ports.iter().map(|p| p.total_drops()).sum::<u64>();
    bottleneck.push_str(&format!(
        "; switch port drops {}, leader retransmissions {}",
        drops(&rt1).saturating_sub(drops(&rt0)),
        m1.retransmissions.saturating_sub(m0.retransmissions)
    ));
    let fig = RunFigures {
        f,
        committed: m1.committed.saturating_sub(m0.committed),
        secs,
        leader_tx_frames: m1.tx_frames.saturating_sub(m0.tx_frames),
        leader_rx_frames: m1.rx_frames.saturating_sub(m0.rx_frames),
        fallbacks: m1.fallbacks,
        wall_s: wall.elapsed().as_secs_f64(),
        lab: "netns".into(),
        bottleneck,
        integrity,
    };
    let mut r = report(cfg, fig, &meter);
    r.late_replica = late;
    Ok(r)
}

/// `--late-replica` in namespaces: replica `l`'s cable (its switch port's link model) is
/// down from the start; `l`'s time into the measured run (which began at `start` and lasts
/// `run`) it comes up, and the run notes, polling every millisecond, when the leader counts
/// it as joined and when it holds every entry committed before (wall-clock).
fn run_late(
    lab: &NetnsLab,
    l: LateReplica,
    start: Instant,
    run: Duration,
) -> Result<LateJoin, NetnsError> {
    let leader = lab.node(0);
    let replica = lab.node(l.replica);
    std::thread::sleep(Duration::from_nanos(l.up_after_ns).saturating_sub(start.elapsed()));
    let joined0 = leader.status().stats.joined;
    let missed = leader.status().committed;
    lab.set_host_link_up(l.replica, true)?;
    let up = Instant::now();
    let (mut joined, mut caught_up) = (None, None);
    while start.elapsed() < run && (joined.is_none() || caught_up.is_none()) {
        if joined.is_none() && leader.status().stats.joined > joined0 {
            joined = Some(up.elapsed().as_secs_f64());
        }
        if caught_up.is_none() && replica.status().applied >= missed {
            caught_up = Some(up.elapsed().as_secs_f64());
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(LateJoin {
        id: replica.id,
        up_at_s: up.duration_since(start).as_secs_f64(),
        missed,
        joined_after_s: joined,
        caught_up_after_s: caught_up,
        snapshots: leader.status().stats.snapshots,
    })
}

/// Names what limited the run: the leader's link when it was nearly full, else the busiest
/// thread; followed by the leader link's use and the busiest threads' CPU shares.
fn bottleneck(
    secs: f64,
    rate_bps: u64,
    leader_port: u16,
    rt: (&RuntimeStats, &RuntimeStats),
    cpu: (&CpuSnapshot, &CpuSnapshot),
) -> String {
    let bytes = |s: &RuntimeStats| {
        s.ports
            .iter()
            .find(|p| p.devport == leader_port)
            .map(|p| (p.port.rx_bytes, p.port.tx_bytes))
            .unwrap_or_default()
    };
    let (a, b) = (bytes(rt.0), bytes(rt.1));
    let util = |x: u64| {
        if rate_bps == 0 || secs <= 0.0 {
            0.0
        } else {
            (x as f64 * 8.0) / (rate_bps as f64 * secs)
        }
    };
    // From the leader (the switch receives) and to the leader.
    let (up, down) = (util(b.0 - a.0.min(b.0)), util(b.1 - a.1.min(b.1)));
    let mut busy: Vec<(String, f64)> = cpu
        .1
        .iter()
        .map(|(name, ns)| {
            let before = cpu.0.iter().find(|(n, _)| n == name).map_or(0, |(_, x)| *x);
            (
                name.clone(),
                ns.saturating_sub(before) as f64 / 1e9 / secs.max(1e-9),
            )
        })
        .collect();
    busy.sort_by(|x, y| y.1.total_cmp(&x.1));
    let total: f64 = busy.iter().map(|(_, b)| b).sum();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let top: Vec<String> = busy
        .iter()
        .take(3)
        .map(|(n, b)| format!("{n} {:.0}%", b * 100.0))
        .collect();
    let head = if up.max(down) >= 0.85 {
        "the leader's link".to_string()
    } else if let Some((n, b)) = busy.first().filter(|(_, b)| *b >= 0.85) {
        format!("CPU: the {n} thread ({:.0}% of a core)", b * 100.0)
    } else if total >= 0.85 * cores as f64 {
        format!("CPU: all {cores} cores busy")
    } else {
        "latency: no resource is saturated; the window of outstanding entries waits on \
         thread hand-offs and wake-ups (host, switch rx, pipeline, tx, host)"
            .to_string()
    };
    format!(
        "{head}; leader link {:.0}% out / {:.0}% in; CPU {:.2} of {cores} cores: {}",
        up * 100.0,
        down * 100.0,
        total,
        top.join(", ")
    )
}

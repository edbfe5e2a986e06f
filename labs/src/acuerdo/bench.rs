//! `pisa acuerdo bench` in memory: one run per (nodes, window): the client keeps `window`
//! messages of `size` bytes in flight at the leader for `duration` of virtual time
//! (Figure 8: latency and throughput, the knee where the window outgrows the leader's
//! link), optionally crashing the leader part-way (Table 1: election time from the first
//! node suspecting the leader until the new leader's diff is committed, diff transfer
//! included). Every run ends with the atomic-broadcast check over every node's log.
//! Virtual time: the figures are what the link model (25 Gbit/s, 1 µs per cable, the switch
//! in between) allows; host CPU time is not modelled. With `netns` the same lab runs in
//! network namespaces in wall-clock time, with timers a thread can keep (heartbeat 2 ms,
//! failure timeout 200 ms, as the real-time runner of Figure 9): figures as measured.

use std::io::Write as _;
use std::path::Path;

use dataplane::FaultConfig;
use hosts::acuerdo::{check, Agreement, Epoch, Event};
use serde::Serialize;

use super::lab::{Lab, LabConfig, LabError, Logged};
use crate::driver::Driver;
use crate::{MemLab, NetnsApps};

/// What one run does.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Nodes (2..=9).
    pub nodes: usize,
    /// Bytes per message.
    pub size: usize,
    /// Messages in flight.
    pub window: usize,
    /// Measured virtual time, ns.
    pub duration_ns: u64,
    /// Crash the leader this long (ns) after the client starts, and again every as long
    /// after, `crashes` times in all (within the duration; at most f, a minority).
    pub crash_leader_ns: Option<u64>,
    /// Leader crashes (with `crash_leader_ns`).
    pub crashes: usize,
    /// Faults on every host link.
    pub faults: Option<FaultConfig>,
    /// Run in network namespaces ([`NetnsApps`]) instead of in memory.
    pub netns: bool,
    /// Switch mode ([`LabConfig::switch`], in memory): the leader broadcasts through a P4CE
    /// group; the client starts once the first leader's group is up.
    pub switch: bool,
}

/// An election's times, µs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Election {
    /// The crashed leader.
    pub old_leader: u32,
    /// The new one.
    pub new_leader: u32,
    /// Crash → the first node suspects the leader (the failure-detection timeout).
    pub detect_us: f64,
    /// Suspicion → the new leader wins the vote.
    pub vote_us: f64,
    /// Suspicion → the new leader's diff is committed (Table 1's figure).
    pub election_us: f64,
}

/// The figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    /// Which driver ran it.
    pub driver: String,
    /// `acuerdo`, or `switch` (the leader's broadcast through the P4CE switch).
    pub mode: String,
    /// Nodes.
    pub nodes: usize,
    /// Bytes per message.
    pub size: usize,
    /// Messages in flight.
    pub window: usize,
    /// Measured virtual seconds.
    pub duration_s: f64,
    /// Messages committed at the leader in that time.
    pub committed: u64,
    /// Committed messages per second.
    pub msgs_per_s: f64,
    /// Committed payload MB/s (10^6 bytes).
    pub mb_per_s: f64,
    /// Commit latency at the leader, median, µs.
    pub latency_p50_us: f64,
    /// 99th percentile, µs.
    pub latency_p99_us: f64,
    /// RDMA WRITEs all nodes posted per committed message in the measured time (ring
    /// records, SST pushes, credits): the leader's n-1 per message by unicast, one through
    /// the switch. None where not counted (Mu).
    pub writes_per_msg: Option<f64>,
    /// The elections after each leader crash.
    pub elections: Vec<Election>,
    /// The atomic-broadcast check over every node's log.
    pub agreement: Agreement,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
}

/// What stays after a run besides its figures: every node's delivered log.
pub struct RunLogs {
    /// Per node id.
    pub logs: Vec<(u32, Vec<Logged>)>,
}

/// Virtual time a run waits for the start-up election, ns.
const ELECTION_LIMIT: u64 = 50_000_000;
/// Virtual time after the client stops for what is in flight to reach every node, ns.
const DRAIN: u64 = 2_000_000;

/// The same in wall-clock time (namespaces).
const ELECTION_LIMIT_WALL: u64 = 5_000_000_000;
const DRAIN_WALL: u64 = 300_000_000;

/// Timers threads sharing a few cores can keep (the real-time runner's): heartbeat 2 ms,
/// failure timeout 200 ms, ACK timeout 16.8 ms (threads on a loaded machine stall for
/// milliseconds).
pub fn wall_clock_timers(lc: &mut LabConfig) {
    lc.heartbeat_ns = 2_000_000;
    lc.timeout_ns = 200_000_000;
    lc.ack_timeout = 12;
}

/// Runs one benchmark (in namespaces with `cfg.netns`).
pub fn run(cfg: &BenchConfig) -> Result<(BenchReport, RunLogs), LabError> {
    if cfg.netns {
        run_on::<NetnsApps>(cfg)
    } else {
        run_on::<MemLab>(cfg)
    }
}

/// [`run`] on driver `D`.
pub fn run_on<D: Driver>(cfg: &BenchConfig) -> Result<(BenchReport, RunLogs), LabError> {
    let wall = std::time::Instant::now();
    let mut lc = LabConfig::new(cfg.nodes, cfg.size, cfg.window);
    lc.faults = cfg.faults.clone();
    lc.switch = cfg.switch;
    if D::WALL_CLOCK {
        wall_clock_timers(&mut lc);
    }
    let (limit, drain) = if D::WALL_CLOCK {
        (ELECTION_LIMIT_WALL, DRAIN_WALL)
    } else {
        (ELECTION_LIMIT, DRAIN)
    };
    let mut lab = Lab::<D>::build(lc)?;
    let lead = lab.wait_leader(limit)?;
    if cfg.switch {
        lab.wait_switch(lead, limit)?;
    }
    lab.client().on = true;
    let t0 = lab.now();
    let c0 = lab.client().committed;
    let w0 = writes(&mut lab);
    let mut crashed = Vec::new();
    if let Some(c) = cfg.crash_leader_ns.filter(|c| *c > 0) {
        let f = (cfg.nodes - 1) / 2;
        for k in 1..=cfg.crashes.min(f) as u64 {
            if c * k >= cfg.duration_ns {
                tracing::warn!(
                    "crash {k} of {} not made: at {} ns it would come after the run ends",
                    cfg.crashes,
                    c * k
                );
                break;
            }
            lab.run_until(t0 + c * k)?;
            let Some(l) = lab.leader() else {
                tracing::warn!(
                    "crash {k} of {} not made: no leader at {} ns (the last election is not over; \
                     crash less often)",
                    cfg.crashes,
                    c * k
                );
                continue;
            };
            lab.with(l, |a| a.crash())?;
            crashed.push((l, lab.now()));
        }
    }
    let _ = lead;
    lab.run_until(t0 + cfg.duration_ns)?;
    let c1 = lab.client().committed;
    let w1 = writes(&mut lab);
    lab.client().on = false;
    let t = lab.now() + drain;
    lab.run_until(t)?;
    let driver = lab.mem().kind().to_string();
    lab.finish()?;
    let ends: Vec<u64> = crashed
        .iter()
        .skip(1)
        .map(|c| c.1)
        .chain([u64::MAX])
        .collect();
    let elections = crashed
        .iter()
        .zip(ends)
        .filter_map(|(&(old, at), until)| election(&mut lab, old, at, until))
        .collect();
    let sent = lab.client().sent.clone();
    let agreement = check(&lab.logs(), Some(&sent));
    let secs = cfg.duration_ns as f64 / 1e9;
    let committed = c1 - c0;
    let (p50, p99) = {
        let c = lab.client();
        (
            c.latency.value_at_quantile(0.5) as f64 / 1e3,
            c.latency.value_at_quantile(0.99) as f64 / 1e3,
        )
    };
    let logs = (0..cfg.nodes)
        .map(|h| {
            let log = lab.with(h, |a| std::mem::take(&mut a.log));
            log.map(|l| (h as u32, l))
        })
        .collect::<Result<_, _>>()?;
    Ok((
        BenchReport {
            driver,
            mode: if cfg.switch { "switch" } else { "acuerdo" }.into(),
            nodes: cfg.nodes,
            size: cfg.size,
            window: cfg.window,
            duration_s: secs,
            committed,
            msgs_per_s: committed as f64 / secs,
            mb_per_s: committed as f64 * cfg.size as f64 / secs / 1e6,
            latency_p50_us: p50,
            latency_p99_us: p99,
            writes_per_msg: Some((w1 - w0) as f64 / committed.max(1) as f64),
            elections,
            agreement,
            wall_s: wall.elapsed().as_secs_f64(),
        },
        RunLogs { logs },
    ))
}

/// RDMA WRITEs every node posted so far (unicast and to the switch).
fn writes<D: Driver>(lab: &mut Lab<D>) -> u64 {
    (0..lab.config().nodes)
        .filter_map(|h| {
            lab.with(h, |a| {
                let s = a.node.stats();
                s.writes + s.switch_writes
            })
            .ok()
        })
        .sum()
}

/// The election after the crash of `old` at `crash_ns` (before `until`), from the nodes'
/// events: the first suspicion, and the first node whose diff committed after it.
fn election<D: Driver>(
    lab: &mut Lab<D>,
    old: usize,
    crash_ns: u64,
    until: u64,
) -> Option<Election> {
    let n = lab.config().nodes;
    let within = |at: u64, from: u64| at >= from && at < until;
    let events: Vec<Vec<Event>> = (0..n)
        .map(|h| lab.with(h, |a| a.events.clone()).unwrap_or_default())
        .collect();
    let suspected = (0..n)
        .filter(|h| *h != old)
        .flat_map(|h| events[h].clone())
        .filter_map(|e| match e {
            Event::Suspected { at, .. } if within(at, crash_ns) => Some(at),
            _ => None,
        })
        .min()?;
    let (diff, new) = (0..n)
        .filter(|h| *h != old)
        .flat_map(|h| {
            events[h]
                .iter()
                .filter_map(|e| match e {
                    Event::DiffCommitted { at, .. } if within(*at, suspected) => Some((*at, h)),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .min()?;
    let won = events[new].iter().find_map(|e| match e {
        Event::Elected { at, .. } if within(*at, suspected) => Some(*at),
        _ => None,
    })?;
    let us = |ns: u64| ns as f64 / 1e3;
    Some(Election {
        old_leader: old as u32,
        new_leader: new as u32,
        detect_us: us(suspected - crash_ns),
        vote_us: us(won - suspected),
        election_us: us(diff - suspected),
    })
}

/// Writes `deliveries-<node>.jsonl` per node into `dir`: one line per delivered message,
/// `{"pos": N, "epoch": [round, leader], "id": K, "digest": "<hex>"}`.
pub fn write_logs(dir: &Path, logs: &RunLogs) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (id, log) in &logs.logs {
        let f = std::fs::File::create(dir.join(format!("deliveries-{id}.jsonl")))?;
        let mut w = std::io::BufWriter::new(f);
        for l in log {
            writeln!(
                w,
                "{{\"pos\": {}, \"epoch\": [{}, {}], \"id\": {}, \"digest\": \"{:016x}\"}}",
                l.pos, l.hdr.e.round, l.hdr.e.ldr, l.id, l.digest
            )?;
        }
        w.flush()?;
    }
    Ok(())
}

/// One line of a `deliveries-<node>.jsonl` file, as [`write_logs`] writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogLine {
    /// Position.
    pub pos: u64,
    /// Epoch `(round, leader)`.
    pub epoch: Epoch,
    /// Client sequence number.
    pub id: u64,
    /// Digest of the message.
    pub digest: u64,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLine {
    pos: u64,
    epoch: [u32; 2],
    id: u64,
    digest: String,
}

/// Parses one log line.
pub fn parse_log_line(line: &str) -> Result<LogLine, String> {
    let r: RawLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let digest =
        u64::from_str_radix(&r.digest, 16).map_err(|e| format!("digest {:?}: {e}", r.digest))?;
    Ok(LogLine {
        pos: r.pos,
        epoch: Epoch {
            round: r.epoch[0],
            ldr: r.epoch[1],
        },
        id: r.id,
        digest,
    })
}

/// Reads every `deliveries-<node>.jsonl` in `dir` and runs the atomic-broadcast check over
/// them (positions must count up from 0 in each file; epochs must not go back). Errors name
/// the file and line.
pub fn check_log_dir(dir: &Path) -> Result<Agreement, String> {
    let mut logs = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for e in entries {
        let path = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Some(node) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("deliveries-"))
            .and_then(|n| n.strip_suffix(".jsonl"))
        else {
            continue;
        };
        let id: u32 = node
            .parse()
            .map_err(|_| format!("{}: the node is not a number", path.display()))?;
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut log = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l =
                parse_log_line(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
            if l.pos != i as u64 {
                return Err(format!(
                    "{}:{}: position {} where {i} belongs",
                    path.display(),
                    i + 1,
                    l.pos
                ));
            }
            log.push(hosts::acuerdo::Entry {
                hdr: hosts::acuerdo::MsgHdr {
                    e: l.epoch,
                    cnt: u32::try_from(l.pos).unwrap_or(u32::MAX),
                },
                digest: l.digest,
            });
        }
        logs.push((id, log));
    }
    if logs.is_empty() {
        return Err(format!("{}: no deliveries-<node>.jsonl", dir.display()));
    }
    logs.sort_by_key(|(id, _)| *id);
    Ok(check(&logs, None))
}

/// The fuzz target's body (`fuzz/targets/src/labs_acuerdo_log.rs`): arbitrary text as a
/// log line parses or is refused; never a panic.
#[doc(hidden)]
pub fn fuzz_log_line(data: &[u8]) {
    if let Ok(s) = std::str::from_utf8(data) {
        let _ = parse_log_line(s);
    }
}

/// The paper's Figure 8 points this prints beside (Acuerdo, read off the figure and the
/// text of §4.1): ~10 µs commit latency for small groups and messages, 6 MB/s with
/// 10-byte messages on 3 nodes.
pub const PAPER_FIG8: &str =
    "paper (Fig. 8, 25 GbE RoCE, real CPUs): ~10 us latency for 3 nodes / 10 B \
     before the knee; ~6 MB/s at saturation for 3 nodes / 10 B";

/// Table 1 of the paper: average election time (diff included) per node count. The seed's
/// text lost the first digit of the 3-node figure (".3 ms").
pub const PAPER_TABLE1: [(usize, &str); 4] =
    [(3, "?.3 ms"), (5, "6.8 ms"), (7, "12.1 ms"), (9, "12.6 ms")];

/// Figure 8's shape: one row per run.
pub fn figure8(reports: &[BenchReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>8} {:>5} {:>5} {:>7} {:>12} {:>9} {:>9} {:>9} {:>7}  check",
        "mode", "nodes", "size", "window", "msgs/s", "MB/s", "p50 us", "p99 us", "wr/msg"
    );
    let ks = knees(reports);
    for (i, r) in reports.iter().enumerate() {
        let knee = ks.contains(&i);
        let _ = writeln!(
            s,
            "{:>8} {:>5} {:>5} {:>7} {:>12.0} {:>9.2} {:>9.1} {:>9.1} {:>7}  {}{}",
            r.mode,
            r.nodes,
            r.size,
            r.window,
            r.msgs_per_s,
            r.mb_per_s,
            r.latency_p50_us,
            r.latency_p99_us,
            r.writes_per_msg
                .map_or_else(|| "-".to_string(), |w| format!("{w:.2}")),
            if r.agreement.ok { "ok" } else { "FAILED" },
            if knee { "  <- knee" } else { "" }
        );
    }
    let _ = writeln!(s, "{PAPER_FIG8}");
    s
}

/// The knee of each curve (consecutive runs of one mode, node count and size, windows
/// growing): the index of the first run within 10 % of the curve's highest throughput, when
/// larger windows follow it (past it a larger window only adds queuing latency).
pub fn knees(reports: &[BenchReport]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < reports.len() {
        let r0 = &reports[i];
        let same = |r: &BenchReport| r.mode == r0.mode && r.nodes == r0.nodes && r.size == r0.size;
        let end = (i..reports.len())
            .find(|&j| !same(&reports[j]))
            .unwrap_or(reports.len());
        let max = reports[i..end]
            .iter()
            .map(|r| r.msgs_per_s)
            .fold(0.0, f64::max);
        // The curve must have flattened: its last run no faster than 1.1x the knee's.
        if let Some(k) = (i..end).find(|&j| reports[j].msgs_per_s >= 0.9 * max) {
            if k + 1 < end {
                out.push(k);
            }
        }
        i = end;
    }
    out
}

/// Table 1's shape: per run that crashed its leader, the mean over its elections, beside the
/// paper's (which also averages every election of a run).
pub fn table1(reports: &[BenchReport]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:>5} {:>9} {:>11} {:>9} {:>13} {:>10}",
        "nodes", "elections", "detect us", "vote us", "election us", "paper"
    );
    for r in reports {
        if r.elections.is_empty() {
            continue;
        }
        let k = r.elections.len() as f64;
        let mean = |f: fn(&Election) -> f64| r.elections.iter().map(f).sum::<f64>() / k;
        let paper = PAPER_TABLE1
            .iter()
            .find(|(n, _)| *n == r.nodes)
            .map_or("-", |(_, p)| *p);
        let _ = writeln!(
            s,
            "{:>5} {:>9} {:>11.1} {:>9.1} {:>13.1} {:>10}",
            r.nodes,
            r.elections.len(),
            mean(|e| e.detect_us),
            mean(|e| e.vote_us),
            mean(|e| e.election_us),
            paper
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crashed_leader_run_reports_its_election_and_logs_that_agree() {
        let cfg = BenchConfig {
            nodes: 5,
            size: 10,
            window: 2,
            duration_ns: 1_000_000,
            crash_leader_ns: Some(300_000),
            crashes: 2,
            faults: None,
            netns: false,
            switch: false,
        };
        let (r, logs) = run(&cfg).unwrap();
        assert_eq!(
            r.elections.len(),
            2,
            "two crashes of five nodes, two elections"
        );
        assert!(r.agreement.ok, "{}", r.agreement);
        let e = r.elections[0];
        assert_ne!(e.old_leader, e.new_leader);
        assert!(e.election_us > 0.0 && e.vote_us <= e.election_us);
        assert!(r.committed > 0);
        let dir = std::env::temp_dir().join(format!("acuerdo-bench-{}", std::process::id()));
        write_logs(&dir, &logs).unwrap();
        let text = std::fs::read_to_string(dir.join("deliveries-0.jsonl")).unwrap();
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("{\"pos\": 0, \"epoch\": ["), "{first}");
        assert!(check_log_dir(&dir).unwrap().ok);
        // A log whose two last lines swapped places fails, naming what.
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let n = lines.len();
        lines.swap(n - 1, n - 2);
        let fixed: Vec<String> = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["pos"] = serde_json::json!(i);
                v.to_string()
            })
            .collect();
        std::fs::write(dir.join("deliveries-0.jsonl"), fixed.join("\n") + "\n").unwrap();
        let v = check_log_dir(&dir).unwrap();
        assert!(!v.ok && v.problems[0].contains("node 0"), "{v}");
        std::fs::write(dir.join("deliveries-1.jsonl"), "{\"pos\": 0}\n").unwrap();
        assert!(check_log_dir(&dir)
            .unwrap_err()
            .contains("deliveries-1.jsonl:1"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(table1(std::slice::from_ref(&r)).contains("6.8 ms"));
        let (mut w8, mut w16) = (r.clone(), r.clone());
        (w8.window, w8.msgs_per_s) = (8, r.msgs_per_s * 3.0);
        (w16.window, w16.msgs_per_s) = (16, r.msgs_per_s * 3.1);
        assert_eq!(knees(&[r.clone(), w8.clone(), w16.clone()]), vec![1]);
        assert!(figure8(&[r, w8, w16]).contains("<- knee"));
    }
}

//! Fail-over times in virtual time (the shape of Table IV of the P4CE paper): a steady stream
//! of appends, a fault injected at a known instant, and the time until entries commit again.
//! The figures follow from the lab's timeouts (leader heartbeat timeout, switch path
//! timeout, probe period, ACK timeout), the nodes' own fail-over (each node finds out on its
//! own, through the heartbeats it reads) and the link model, not from this machine's speed.

use std::sync::Arc;
use std::time::Duration;

use hosts::mu::Path;
use pipeline::ir::Program;

use super::lab::{Lab, LabConfig, LabError};

/// What fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// A replica (the last one) crashes.
    ReplicaCrash,
    /// The leader crashes; the lowest live replica takes over.
    LeaderCrash,
    /// The switch's P4CE path breaks (frames to the switch IP are lost); the leader falls
    /// back to unicast.
    SwitchCrash,
}

/// One measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FailoverTime {
    /// The fault.
    pub fault: Fault,
    /// Replication mode before the fault.
    pub mode: Path,
    /// Longest time between two consecutive commits from the fault on, ns (the outage).
    pub max_gap_ns: u64,
    /// From the fault to the first commit of an entry appended after it, ns.
    pub to_first_new_commit_ns: u64,
    /// Median time between commits before the fault, ns (the steady state).
    pub steady_gap_ns: u64,
    /// Entries committed after the fault within the window.
    pub committed_after: u64,
}

/// Runs `fault` on a lab with 3 replicas (f = 2), 64-byte values, 1 ms leader timeout.
pub fn measure(program: Arc<Program>, fault: Fault, mode: Path) -> Result<FailoverTime, LabError> {
    let mut cfg = LabConfig::new(mode, 3);
    cfg.leader_timeout = Some(Duration::from_millis(1));
    cfg.record = false;
    let mut lab = Lab::new(program, cfg)?;
    let value = [0x5au8; 64];
    let start = lab.now();
    let fault_at = start + 2_000_000;
    let end = fault_at + 12_000_000;
    let mut commits: Vec<u64> = Vec::new();
    let (mut lead, mut last) = (lab.leader_host(), lab.leader().committed());
    let mut injected = false;
    let mut first_after: Option<u64> = None;
    let mut first_new_index: Option<u64> = None;
    while lab.now() < end {
        if !injected && lab.now() >= fault_at {
            injected = true;
            match fault {
                Fault::ReplicaCrash => lab.crash_host(3),
                Fault::LeaderCrash => lab.crash_host(0),
                Fault::SwitchCrash => lab.set_switch_path_broken(true),
            }
        }
        while let Some(i) = lab.append(&value)? {
            if injected && first_new_index.is_none() && lab.leader_host() == lead {
                first_new_index = Some(i);
            }
        }
        lab.advance(end)?;
        if lab.leader_host() != lead {
            // A new leader resumes at the adopted prefix: not a commit.
            lead = lab.leader_host();
            last = lab.leader().committed();
            first_new_index = None;
            continue;
        }
        let c = lab.leader().committed();
        if c > last {
            commits.push(lab.now());
            if let (Some(i), None) = (first_new_index, first_after) {
                if c > i {
                    first_after = Some(lab.now());
                }
            }
            last = c;
        }
    }
    let before: Vec<u64> = commits.iter().copied().filter(|t| *t < fault_at).collect();
    let mut gaps: Vec<u64> = before.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let steady = gaps.get(gaps.len() / 2).copied().unwrap_or(0);
    let mut prev = before.last().copied().unwrap_or(fault_at);
    let mut max_gap = 0;
    let mut after = 0;
    for t in commits.iter().copied().filter(|t| *t >= fault_at) {
        max_gap = max_gap.max(t - prev);
        prev = t;
        after += 1;
    }
    if after == 0 {
        max_gap = end - prev;
    }
    Ok(FailoverTime {
        fault,
        mode,
        max_gap_ns: max_gap,
        to_first_new_commit_ns: first_after.map_or(u64::MAX, |t| t - fault_at),
        steady_gap_ns: steady,
        committed_after: after,
    })
}

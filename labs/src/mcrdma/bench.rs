//! The replication benchmark (`pisa mcrdma bench`, `pisa demo mcrdma`): one run of the
//! workload in one mode, for a duration of the lab's time, then a drain and a comparison of
//! every receiver's region with the sender's. [`run`] takes the driver: in memory (virtual
//! time: the figures are what the link model allows) or in namespaces (wall clock: what this
//! machine's threads and veths achieve). The sender's CPU time per operation is measured on
//! this machine's clock around its posting and completion handling (not the endpoint's
//! protocol work).

use std::time::Instant as WallClock;

use dataplane::Nanos;
use hosts::mcrdma::Mode;

use super::lab::{LabConfig, McLab, McLabError};
use crate::driver::Driver;
use crate::topology::Topology;

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    pub lab: LabConfig,
    /// Virtual nanoseconds of load.
    pub duration_ns: u64,
    /// Loss probability on `loss_link` (both directions).
    pub loss: f64,
    pub loss_link: Option<String>,
}

/// One run's figures.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// Which driver ran it ([`Driver::kind`]).
    pub driver: String,
    pub mode: Mode,
    pub sender: String,
    pub receivers: Vec<String>,
    pub size: u64,
    pub iodepth: usize,
    pub loss: f64,
    pub loss_link: Option<String>,
    /// Operations completed during the load interval.
    pub ops: u64,
    /// The load interval in the lab's time (virtual, or wall clock in namespaces).
    pub virtual_secs: f64,
    /// Replicated application bytes per second, Gbit/s.
    pub goodput_gbps: f64,
    pub latency_p50_us: f64,
    pub latency_p99_us: f64,
    /// Bytes on the sender's uplink during the load interval.
    pub sender_uplink_bytes: u64,
    /// Those bytes per application byte replicated (1 + headers for one copy; N for N).
    pub sender_uplink_bytes_per_replicated_byte: f64,
    pub sender_cpu_ns_per_op: f64,
    /// Work requests posted, completions polled and receives re-posted by the sender.
    pub sender_verbs_calls_per_op: f64,
    pub sender_retransmissions: u64,
    /// Every receiver's region equals the sender's after the drain.
    pub identical: bool,
    pub wall_s: f64,
}

/// The regions after a run: the sender's, then each receiver's by host name.
pub struct Regions {
    pub sender: Vec<u8>,
    pub receivers: Vec<(String, Vec<u8>)>,
}

/// How long the end of a run may take to finish what is in flight (virtual).
const DRAIN_NS: u64 = 200_000_000;

/// The same in wall-clock time (namespaces: threads share this machine's cores).
const DRAIN_WALL_NS: u64 = 5_000_000_000;

/// A link written `A-B` with node names (`a2-tor2`), or with ports where nodes have parallel
/// links (`tor1:4-agg:0`), or as one end (`a2`).
pub fn link_by_nodes(topo: &Topology, name: &str) -> Result<usize, McLabError> {
    if let Some(l) = topo.find_link(&name.replace('-', "~")) {
        return Ok(l);
    }
    let node = |e| {
        let n = topo.end_name(e);
        n.split(':').next().unwrap_or_default().to_string()
    };
    let (x, y) = name.split_once('-').ok_or_else(|| {
        McLabError::Config(format!(
            "no link {name:?} in the topology (name a link by its two ends, e.g. tor1-agg, \
                 or by one end, e.g. a2)"
        ))
    })?;
    let found: Vec<usize> = (0..topo.links.len())
        .filter(|&i| {
            let (a, b) = (node(topo.links[i].a), node(topo.links[i].b));
            (a == x && b == y) || (a == y && b == x)
        })
        .collect();
    match found.as_slice() {
        [l] => Ok(*l),
        [] => Err(McLabError::Config(format!(
            "no link {name:?} in the topology"
        ))),
        more => Err(McLabError::Config(format!(
            "{name:?} names {} parallel links; name one by its ports: {}",
            more.len(),
            more.iter()
                .map(|l| topo.link_name(*l).replace('~', "-"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Runs one configuration on driver `D`.
pub fn run<D: Driver>(
    topo: Topology,
    cfg: &BenchConfig,
) -> Result<(BenchReport, Regions), McLabError> {
    let wall = WallClock::now();
    let mut lab = McLab::<D>::new(topo, &cfg.lab)?;
    if let Some(name) = &cfg.loss_link {
        let l = link_by_nodes(lab.lab.topology(), name)?;
        lab.lab.start()?;
        lab.lab
            .link_control(l, 0)?
            .set_loss(cfg.loss)
            .map_err(|e| McLabError::Config(e.to_string()))?;
    }
    lab.run_to(Nanos(cfg.duration_ns))?;
    let secs = lab.lab.now().0 as f64 / 1e9;
    let ops = lab.with_sender(0, |s| s.done())?;
    let uplink = lab.sender_uplink_bytes();
    lab.drain(if D::WALL_CLOCK {
        DRAIN_WALL_NS
    } else {
        DRAIN_NS
    })?;
    let sender_host = lab.sender;
    let sender = lab.region(sender_host)?;
    let mut receivers = Vec::new();
    for r in lab.receivers.clone() {
        let name = lab.lab.topology().hosts[r].name.clone();
        receivers.push((name, lab.region(r)?));
    }
    let identical = receivers.iter().all(|(_, b)| *b == sender);
    let retx = lab.with_node(sender_host, |n| n.endpoint.stats().retransmissions)?;
    let (p50, p99, cpu_ns, verbs) = lab.with_sender(0, |s| {
        let (p50, p99, _) = s.latency();
        let done = s.done().max(1) as f64;
        (
            p50,
            p99,
            s.cpu.as_nanos() as f64 / done,
            s.verbs_calls as f64 / done,
        )
    })?;
    let replicated = (ops * cfg.lab.size).max(1) as f64;
    let report = BenchReport {
        driver: lab.lab.kind().to_string(),
        mode: cfg.lab.mode,
        sender: cfg.lab.sender.clone(),
        receivers: cfg.lab.receivers.clone(),
        size: cfg.lab.size,
        iodepth: cfg.lab.iodepth,
        loss: cfg.loss,
        loss_link: cfg.loss_link.clone(),
        ops,
        virtual_secs: secs,
        goodput_gbps: replicated * 8.0 / secs.max(1e-12) / 1e9,
        latency_p50_us: p50 as f64 / 1e3,
        latency_p99_us: p99 as f64 / 1e3,
        sender_uplink_bytes: uplink,
        sender_uplink_bytes_per_replicated_byte: uplink as f64 / replicated,
        sender_cpu_ns_per_op: cpu_ns,
        sender_verbs_calls_per_op: verbs,
        sender_retransmissions: retx,
        identical,
        wall_s: wall.elapsed().as_secs_f64(),
    };
    lab.lab.finish()?;
    Ok((report, Regions { sender, receivers }))
}

/// Fig. 5's flows (§VII-C): f_m1 A1 -> C1, D1 and f_m2 C1 -> D1, A2 (MC-RDMA), f_u1 D1 -> A2
/// (RC), started one phase apart, with ECN at every switch port and DCQCN at every endpoint.
pub const FIG5_FLOWS: [(&str, &[&str], Mode); 3] = [
    ("a1", &["c1", "d1"], Mode::Mcrdma),
    ("c1", &["d1", "a2"], Mode::Mcrdma),
    ("d1", &["a2"], Mode::Fanout),
];

/// Each flow's goodput (Gbit/s) in each phase: phase `p` has flows `0..=p` running.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Fairness {
    pub phase_secs: f64,
    pub size: u64,
    /// `rates[phase][flow]`.
    pub rates: Vec<Vec<f64>>,
    pub identical: bool,
}

/// Runs Fig. 5: `phase_ns` of virtual time per phase, operations of `size` bytes.
pub fn fairness(topo: Topology, size: u64, phase_ns: u64) -> Result<Fairness, McLabError> {
    let cfgs: Vec<LabConfig> = FIG5_FLOWS
        .iter()
        .map(|(s, r, m)| LabConfig {
            mode: *m,
            sender: s.to_string(),
            receivers: r.iter().map(|x| x.to_string()).collect(),
            size,
            iodepth: 16,
            psn: 0x10_0000,
        })
        .collect();
    let mut lab = McLab::<crate::MemLab>::with_flows_started(topo, &cfgs, &[true, false, false])?;
    lab.enable_ecn()?;
    let n = cfgs.len();
    let mut rates = Vec::new();
    for phase in 0..n {
        lab.sender_of(phase).running = true;
        let before: Vec<u64> = (0..n).map(|f| lab.sender_of(f).done()).collect();
        let end = Nanos(lab.lab.now().0 + phase_ns);
        lab.run_to(end)?;
        rates.push(
            (0..n)
                .map(|f| {
                    let ops = lab.sender_of(f).done() - before[f];
                    (ops * size) as f64 * 8.0 / phase_ns as f64
                })
                .collect(),
        );
    }
    lab.drain(DRAIN_NS)?;
    let mut identical = true;
    for f in 0..n {
        let want = lab.flow_region(f, lab.flows[f].sender)?;
        for r in lab.flows[f].receivers.clone() {
            identical &= lab.flow_region(f, r)? == want;
        }
    }
    Ok(Fairness {
        phase_secs: phase_ns as f64 / 1e9,
        size,
        rates,
        identical,
    })
}

/// Fig. 6's group (§VII-C): A1 -> B1, C1, D1, A2, B2, C2, D2, seven receivers (Tofino 2).
pub const FIG6_RECEIVERS: [&str; 7] = ["b1", "c1", "d1", "a2", "b2", "c2", "d2"];

/// Fig. 6 for `k` congested sub-flows: the 7-receiver group and `k` RC flows, the i-th from
/// receiver i+1 (mod 7) into receiver i's downlink (the paper's k = 2: C1 -> B1, D1 -> C1), all
/// at once with ECN and DCQCN; the ToRs are Tofino 2 (seven merge slots). Returns the group's
/// and the RC flows' goodput (Gbit/s) over the second half of `run_ns`.
pub fn congested_subflows(
    mut topo: Topology,
    size: u64,
    run_ns: u64,
    k: usize,
) -> Result<(f64, Vec<f64>), McLabError> {
    for s in &mut topo.switches {
        s.target = pipeline::ir::Target::Tofino2;
    }
    let flow = |mode, sender: &str, receivers: Vec<String>| LabConfig {
        mode,
        sender: sender.to_string(),
        receivers,
        size,
        iodepth: 16,
        psn: 0x10_0000,
    };
    let all: Vec<String> = FIG6_RECEIVERS.iter().map(|s| s.to_string()).collect();
    let mut cfgs = vec![flow(Mode::Mcrdma, "a1", all.clone())];
    for i in 0..k.min(all.len()) {
        let from = &all[(i + 1) % all.len()];
        cfgs.push(flow(Mode::Fanout, from, vec![all[i].clone()]));
    }
    let mut lab = McLab::<crate::MemLab>::with_flows(topo, &cfgs)?;
    lab.enable_ecn()?;
    lab.run_to(Nanos(run_ns / 2))?;
    let before: Vec<u64> = (0..cfgs.len()).map(|f| lab.sender_of(f).done()).collect();
    lab.run_to(Nanos(run_ns))?;
    let half = (run_ns / 2) as f64;
    let rate = |lab: &mut McLab, f: usize| {
        ((lab.sender_of(f).done() - before[f]) * size) as f64 * 8.0 / half
    };
    let mc = rate(&mut lab, 0);
    let uc = (1..cfgs.len()).map(|f| rate(&mut lab, f)).collect();
    Ok((mc, uc))
}

//! LEO's key-value store in a lab (in memory, or in network namespaces with `netns`: the same
//! lab over [`crate::Driver`]), with pisa's switch as the in-network
//! accelerator: a client and a server on one switch running leo_kvs.p4
//! (`deploy/labs/leo-kvs.yaml`). The hot keys' values are installed in the switch's `hot`
//! table; the client's LEO policy (`hosts::leo::select`) sends each hot GET either on the
//! switch path (answered by the P4 program) or on the CPU path (answered by the server), cold
//! GETs and PUTs to the server. Link profiles for the hardware model come from the lab's links
//! through a [`hosts::leo::LinkProbe`].
//!
//! - [`wire`]: the message (Fig. 7 header over UDP); [`client`] and [`server`]: the host apps.

pub mod client;
pub mod server;
pub mod wire;

use crate::driver::{Driver, DriverError};
use crate::mem::{MemLab, MemLabError};
use crate::topology::{Topology, TopologyError};
use crate::NetnsApps;
use client::{Client, Request, Types};
use dataplane::Nanos;
use hosts::acuerdo::ycsb::{SplitMix, Zipf};
use hosts::leo::hw::{Link, LinkProbe};
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, LeoError};
use server::{initial_value, Server};
use std::collections::HashSet;
use std::fmt::Write;
use std::path::Path;

/// What can go wrong building or running the lab.
#[derive(Debug, thiserror::Error)]
pub enum LeoLabError {
    /// The topology.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The lab.
    #[error(transparent)]
    Mem(#[from] MemLabError),
    /// The driver.
    #[error(transparent)]
    Driver(#[from] DriverError),
    /// The application or a policy.
    #[error(transparent)]
    Leo(#[from] LeoError),
    /// The switch's table state.
    #[error("hot keys: {0}")]
    Tables(String),
    /// A bad setting.
    #[error("{0}")]
    Config(String),
}

/// One run.
#[derive(Debug, Clone)]
pub struct LabConfig {
    /// Offered requests per second.
    pub rate: f64,
    /// Requests (at most 60000: sequence numbers are 16 bits).
    pub count: usize,
    /// Share of PUTs (YCSB-B: 0.05, YCSB-C: 0).
    pub put_share: f64,
    /// Keys (Zipf θ = 0.99 over them).
    pub keys: u64,
    /// Hot keys installed in the switch (the most popular ones, at most 1024).
    pub hot: u64,
    /// The policy (not LP: that one runs on the queue model).
    pub policy: Policy,
    /// Seed.
    pub seed: u64,
    /// Run in network namespaces ([`NetnsApps`], wall clock: offer rates a thread keeps up
    /// with, thousands of requests per second) instead of in memory.
    pub netns: bool,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct LabReport {
    /// Median end-to-end latency, µs.
    pub median_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Share of replies the switch made.
    pub in_network: f64,
    /// Requests answered.
    pub answered: usize,
    /// Requests sent.
    pub sent: usize,
    /// Replies with a wrong value.
    pub wrong: u64,
    /// Replies to nothing pending.
    pub unexpected: u64,
}

/// The topology (program path resolved in this checkout).
pub fn topology() -> Result<Topology, TopologyError> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/leo-kvs.yaml");
    Topology::load(&path)
}

/// The application file.
pub fn app() -> Result<AppSpec, LeoError> {
    AppSpec::from_yaml(include_str!("../../../deploy/leo/kvs-switch.yaml"))
}

/// Profiles links from the lab's link models: the client's and server's cables for the
/// wire links, a PCIe Gen3-like model for the server's host link.
struct LabProbe {
    rate_bps: u64,
    delay_ns: u64,
}

impl LinkProbe for LabProbe {
    fn transfer(&mut self, link: &Link, bytes: u64, count: u32) -> f64 {
        if link.name == "pcie" {
            return 500.0 + count as f64 * (bytes as f64 / 12.0).max(50.0);
        }
        let per = (bytes + 24) as f64 * 8e9 / self.rate_bps as f64;
        self.delay_ns as f64 + count as f64 * per
    }
}

fn hot_tables(topo: &Topology, hot: u64) -> String {
    let mut s = String::from("tables:\n  - table: KvsIngress.hosts\n    entries:\n");
    for (i, h) in topo.hosts.iter().enumerate() {
        let _ = writeln!(
            s,
            "      - {{ key: {{ hdr.ipv4.dst_addr: \"{}\" }}, action: to_host, params: {{ port: {i} }} }}",
            h.ip
        );
    }
    s.push_str("  - table: KvsIngress.hot\n    entries:\n");
    for k in 1..=hot {
        let _ = writeln!(
            s,
            "      - {{ key: {{ hdr.kv.key: {k} }}, action: hot_key, params: {{ slot: {k}, value: {} }} }}",
            initial_value(k)
        );
    }
    s
}

fn requests(cfg: &LabConfig) -> Vec<Request> {
    let mut rng = SplitMix(cfg.seed);
    let zipf = Zipf::new(cfg.keys, 0.99);
    let mut at = 0.0;
    (0..cfg.count)
        .map(|_| {
            at += -(1e9 / cfg.rate) * (1.0 - rng.next_f64()).ln();
            Request {
                at: at as u64,
                put: rng.next_f64() < cfg.put_share,
                key: zipf.next(&mut rng) + 1,
                delay: 3_000 + (rng.next_f64() * 6_000.0) as u64,
            }
        })
        .collect()
}

/// How long a wall-clock run may go on after its last request is due, ns.
const WALL_GRACE_NS: u64 = 5_000_000_000;

/// Runs one configuration (in namespaces with `cfg.netns`).
pub fn run(cfg: &LabConfig) -> Result<LabReport, LeoLabError> {
    if cfg.netns {
        run_on::<NetnsApps>(cfg)
    } else {
        run_on::<MemLab>(cfg)
    }
}

/// [`run`] on driver `D`.
pub fn run_on<D: Driver>(cfg: &LabConfig) -> Result<LabReport, LeoLabError> {
    if cfg.count == 0 || cfg.count > 60_000 || cfg.hot > 1024 || cfg.policy == Policy::Lp {
        return Err(LeoLabError::Config(
            "count 1..60000, hot at most 1024, and not the LP policy".into(),
        ));
    }
    let topo = topology()?;
    let mut mem = D::build(topo.clone())?;
    let file = control::tables_file::from_yaml(&hot_tables(&topo, cfg.hot))
        .map_err(|e| LeoLabError::Tables(e.to_string()))?;
    control::tables_file::apply(mem.switch_mut(0)?, &file)
        .map_err(|e| LeoLabError::Tables(e.to_string()))?;
    let mut spec = app()?;
    let wire = &topo.links[topo.hosts[0].link].config.tx;
    spec.hw.profile(&mut LabProbe {
        rate_bps: wire.rate_bps,
        delay_ns: wire.delay_ns,
    });
    let name = |n: &str| {
        spec.request(n)
            .ok_or_else(|| LeoLabError::Config(format!("no {n}")))
    };
    let types = Types {
        get_hot: name("GET_HOT")?,
        get: name("GET")?,
        put: name("PUT")?,
    };
    let (c, s) = (&topo.hosts[0], &topo.hosts[1]);
    let reqs = requests(cfg);
    let last = reqs.last().map_or(0, |q| q.at);
    let client = Client::new(
        (c.mac, c.ip.octets()),
        (s.mac, s.ip.octets()),
        reqs,
        (1..=cfg.hot).collect::<HashSet<u64>>(),
        types,
        &spec,
        cfg.policy,
    )?;
    mem.attach(1, Box::new(Server::new(&spec)?))?;
    mem.attach(0, Box::new(client))?;
    if D::WALL_CLOCK {
        // Until every request is answered (or the grace after the last one is over).
        let limit = last + WALL_GRACE_NS;
        loop {
            let t = mem.now().0 + 10_000_000;
            mem.run_to(Nanos(t))?;
            let left = mem.with_app(0, |c: &mut Client| c.outstanding());
            if left.is_none_or(|n| n == 0) || mem.now().0 > limit {
                break;
            }
        }
    } else {
        mem.run_to(Nanos(u64::MAX / 4))?;
    }
    mem.finish()?;
    let stats = mem
        .with_app(0, |c: &mut Client| c.stats.clone())
        .ok_or_else(|| LeoLabError::Config("client gone".into()))?;
    let st = &stats;
    let mut lat = st.e2e_ns.clone();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
            / 1e3
    };
    Ok(LabReport {
        median_us: pct(0.5),
        p99_us: pct(0.99),
        in_network: st.in_network as f64 / lat.len().max(1) as f64,
        answered: lat.len(),
        sent: cfg.count,
        wrong: st.wrong,
        unexpected: st.unexpected,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(policy: Policy, put_share: f64) -> LabConfig {
        LabConfig {
            rate: 2e6,
            count: 3000,
            put_share,
            keys: 10_000,
            hot: 128,
            policy,
            seed: 3,
            netns: false,
        }
    }

    #[test]
    fn every_request_answered_once_with_the_right_value() {
        for (policy, puts) in [(Policy::Leo, 0.05), (Policy::Cpu, 0.05), (Policy::Acc, 0.0)] {
            let r = run(&cfg(policy, puts)).unwrap();
            assert_eq!(
                (r.answered, r.wrong, r.unexpected),
                (r.sent, 0, 0),
                "{policy}: {r:?}"
            );
            if policy == Policy::Cpu {
                assert_eq!(r.in_network, 0.0);
            } else {
                assert!(r.in_network > 0.2, "{policy}: {r:?}");
            }
        }
    }
}

//! LEO's key-value store in a lab over pisa's RDMA endpoint, with pisa's switch as
//! the on-path (in-network) accelerator (`deploy/labs/leo-kvs.yaml`): a client, a server and an
//! off-path accelerator node, each with its own RoCEv2 endpoint and link, on one switch running
//! leo_kvs.p4. A GET's index lookup runs on the path the client's LEO policy picks — the switch
//! (hot keys), the accelerator node or the server's CPU — and a location is followed by an
//! RDMA READ of the value; PUTs go to the CPU over RC SEND. The hardware model's links are
//! profiled at init by timed probe frames ([`probe`]); a control-plane agent ([`agent`])
//! re-installs hot keys after PUTs. Every reply is checked (exactly once, the right value).
//! The lab is written once over [`Driver`]: in memory in virtual time ([`MemLab`]) or, with
//! [`LabConfig::netns`] (root), in network namespaces in wall-clock time ([`NetnsApps`]: each
//! host app on its own thread, the switch on veths). The links are profiled in memory either
//! way (the hardware model's figures the policies plan with).
//!
//! - [`wire`]: the UDP lookup the switch answers; [`node`]: the hosts' shared endpoint
//!   plumbing; [`client`], [`server`], [`acc`]: the host apps. Design notes: docs/leo.md.

pub mod acc;
pub mod agent;
pub mod client;
pub mod node;
pub mod probe;
pub mod server;
pub mod wire;

use crate::driver::{Driver, DriverError};
use crate::mem::{MemLab, MemLabError};
use crate::topology::{Topology, TopologyError};
use crate::NetnsApps;
use acc::Accelerator;
use agent::RefreshAgent;
use client::{Client, ClientStats, RemoteStore, Request, Types, Wiring};
use dataplane::Nanos;
use hosts::acuerdo::ycsb::{SplitMix, Zipf};
use hosts::leo::rdma::RcSettings;
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, Dependency, LeoError};
use node::{connect, Node};
use probe::FrameProbe;
use server::{RemoteIndex, Server, Store};
use std::collections::{HashMap, HashSet};
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
    /// The lab driver (in memory or in namespaces).
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
    /// Hot keys installed in the switch (the most popular ones, at most 1024; 0: the switch
    /// path is never used).
    pub hot: u64,
    /// The policy (not LP: that one runs on the queue model).
    pub policy: Policy,
    /// Run the hot-key refresh agent (polling every this many ns; `None`: no agent).
    pub agent_ns: Option<u64>,
    /// Seed.
    pub seed: u64,
    /// Run in network namespaces (root; wall-clock time) instead of in memory.
    pub netns: bool,
    /// Every request type's dependency instead of the application file's (§III-A).
    pub dependency: Option<Dependency>,
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct LabReport {
    /// Median end-to-end latency, µs.
    pub median_us: f64,
    /// 99th percentile, µs.
    pub p99_us: f64,
    /// Share of requests whose lookup the switch answered.
    pub in_network: f64,
    /// Share of requests sent on the switch, off-path and CPU paths.
    pub shares: [f64; 3],
    /// Hot keys the agent re-installed.
    pub refreshed: u64,
    /// The profiled links: name, latency ns, GB/s, Mmsg/s.
    pub links: Vec<(String, f64, f64, f64)>,
    /// Requests answered.
    pub answered: usize,
    /// Requests sent.
    pub sent: usize,
    /// Replies with a wrong value.
    pub wrong: u64,
    /// GETs that overtook a PUT to their key (allowed without ADDR dependency).
    pub reordered: u64,
    /// Requests held behind an earlier one to their key (ADDR dependency).
    pub held: u64,
    /// Replies to nothing pending.
    pub unexpected: u64,
    /// Which driver ran it ([`Driver::kind`]).
    pub driver: &'static str,
    /// Lab time from the first request's arrival to the last answer, s.
    pub seconds: f64,
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

/// The hardware model's wire links and the lab host each belongs to.
const WIRES: [(&str, &str); 3] = [
    ("uplink", "client"),
    ("downlink", "server"),
    ("acc-wire", "acc"),
];
/// The switch's CPU port, where the agent is cabled.
const CPU_PORT: u16 = 64;

fn host(topo: &Topology, name: &str) -> Result<usize, LeoLabError> {
    topo.hosts
        .iter()
        .position(|h| h.name == name)
        .ok_or_else(|| LeoLabError::Config(format!("the topology has no host `{name}`")))
}

/// The switch's tables: a route per host, the server as the source of PUT replies, hot keys
/// 1..=`hot` at `location(key)`.
fn tables(topo: &Topology, hot: u64, server: usize, location: impl Fn(u64) -> u64) -> String {
    let mut s = String::from("tables:\n  - table: KvsIngress.hosts\n    entries:\n");
    for (i, h) in topo.hosts.iter().enumerate() {
        let _ = writeln!(
            s,
            "      - {{ key: {{ hdr.ipv4.dst_addr: \"{}\" }}, action: to_host, params: {{ port: {i} }} }}",
            h.ip
        );
    }
    let _ = writeln!(
        s,
        "  - table: KvsIngress.servers\n    entries:\n      - {{ key: {{ hdr.ipv4.src_addr: \"{}\" }}, action: server }}",
        topo.hosts[server].ip
    );
    if hot > 0 {
        s.push_str("  - table: KvsIngress.hot\n    entries:\n");
    }
    for k in 1..=hot {
        let _ = writeln!(
            s,
            "      - {{ key: {{ hdr.kv.key: {k} }}, action: hot_key, params: {{ slot: {k}, value: {} }} }}",
            location(k)
        );
    }
    s
}

/// A lab of `topo` on driver `D` with `tables_yaml` installed in the switch.
fn lab<D: Driver>(topo: &Topology, tables_yaml: &str) -> Result<D, LeoLabError> {
    let mut lab = D::build(topo.clone())?;
    let file = control::tables_file::from_yaml(tables_yaml)
        .map_err(|e| LeoLabError::Tables(e.to_string()))?;
    control::tables_file::apply(lab.switch_mut(0)?, &file)
        .map_err(|e| LeoLabError::Tables(e.to_string()))?;
    Ok(lab)
}

/// The application file with its links profiled by probe frames in a lab of `topo`; the
/// profiled links as (name, latency ns, GB/s, Mmsg/s).
pub fn profiled_app(topo: &Topology) -> Result<AppSpec, LeoLabError> {
    let mut spec = app()?;
    let server = host(topo, "server")?;
    let mem = lab::<MemLab>(topo, &tables(topo, 1, server, |_| 0))?;
    let host_of = WIRES
        .iter()
        .map(|&(l, h)| Ok((l.to_string(), host(topo, h)?)))
        .collect::<Result<HashMap<_, _>, LeoLabError>>()?;
    spec.hw
        .profile(&mut FrameProbe::new(mem, topo.clone(), host_of));
    Ok(spec)
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

/// Runs one configuration: in memory, or in namespaces with `cfg.netns`.
pub fn run(cfg: &LabConfig) -> Result<LabReport, LeoLabError> {
    let topo = topology()?;
    if cfg.netns {
        run_in::<NetnsApps>(topo, cfg)
    } else {
        run_in::<MemLab>(topo, cfg)
    }
}

/// The three host apps, wired to each other, and what the lab needs to install and attach.
struct Apps {
    client: Client,
    server: Server,
    accel: Accelerator,
    spec: AppSpec,
    tables: String,
    hosts: (usize, usize, usize),
}

/// Connects the client, the server and the accelerator node over RC (QP numbers exchanged
/// out of band, settings `rc`) and builds their apps for `cfg`, the client sending `reqs`.
fn apps(
    topo: &Topology,
    cfg: &LabConfig,
    reqs: Vec<Request>,
    rc: RcSettings,
) -> Result<Apps, LeoLabError> {
    let mut spec = profiled_app(topo)?;
    if let Some(d) = cfg.dependency {
        for r in &mut spec.requests {
            r.dependency = d;
        }
    }
    let (ci, si, ai) = (
        host(topo, "client")?,
        host(topo, "server")?,
        host(topo, "acc")?,
    );
    let (cn, sn, an) = (
        Node::new(topo, ci),
        Node::new(topo, si),
        Node::new(topo, ai),
    );
    let slots = 1024;
    let (c_srv, s_cli) = (cn.port(slots)?, sn.port(slots)?);
    let (c_acc, a_cli) = (cn.port(slots)?, an.port(slots)?);
    let (s_acc, a_srv) = (sn.port(slots)?, an.port(slots)?);
    connect((&c_srv, cn.ip), (&s_cli, sn.ip), 1000, rc)?;
    connect((&c_acc, cn.ip), (&a_cli, an.ip), 2000, rc)?;
    connect((&s_acc, sn.ip), (&a_srv, an.ip), 3000, rc)?;
    let store = Store::new(&s_cli, sn.ep.clone(), cfg.keys, cfg.count as u64)?;
    let location = |k: u64| store.location(k);
    let offload = spec.hw.device("offload", "lab")?;
    let name = |n: &str| {
        spec.request(n)
            .ok_or_else(|| LeoLabError::Config(format!("no {n}")))
    };
    let types = Types {
        get_hot: name("GET_HOT")?,
        get: name("GET")?,
        put: name("PUT")?,
    };
    let service = spec.requests[types.get].compute_ns[offload].unwrap_or(0.0) as u64;
    let accel = Accelerator::new(an, a_cli, &a_srv, cfg.keys, service, location)?;
    let index = RemoteIndex {
        addr: accel.index.addr,
        rkey: accel.index.rkey,
    };
    let tables = tables(topo, cfg.hot, si, location);
    let rkey = store.mr.rkey;
    let server = Server::new(sn, &spec, s_cli, s_acc, store, index)?;
    let s = &topo.hosts[si];
    let wiring = Wiring {
        node: cn,
        mac: topo.hosts[ci].mac,
        srv: c_srv,
        acc: c_acc,
        store: RemoteStore {
            server: (s.mac, s.ip.octets()),
            rkey,
        },
    };
    let hot = (1..=cfg.hot).collect::<HashSet<u64>>();
    let client = Client::new(wiring, reqs, hot, types, &spec, cfg.policy)?;
    Ok(Apps {
        client,
        server,
        accel,
        spec,
        tables,
        hosts: (ci, si, ai),
    })
}

/// Runs one configuration on driver `D` over `topo` (leo-kvs.yaml's, under any name).
pub fn run_in<D: Driver>(topo: Topology, cfg: &LabConfig) -> Result<LabReport, LeoLabError> {
    if cfg.count == 0
        || cfg.count > 60_000
        || cfg.hot > 1024
        || cfg.hot > cfg.keys
        || cfg.policy == Policy::Lp
    {
        return Err(LeoLabError::Config(
            "count 1..60000, hot at most 1024 and at most the keys, and not the LP policy".into(),
        ));
    }
    let reqs = requests(cfg);
    let (first, last) = (
        reqs.first().map_or(0, |r| r.at),
        reqs.last().map_or(0, |r| r.at),
    );
    // In wall-clock time a host thread or the switch may stall for milliseconds (a busy
    // machine): the RC ACK timeout is a real NIC's usual ~67 ms (4.096 µs · 2^14) rather than
    // the default ~1 ms, so that a stall does not exhaust the retries and put a QP in error.
    let rc = if D::WALL_CLOCK {
        RcSettings {
            timeout: 14,
            ..RcSettings::default()
        }
    } else {
        RcSettings::default()
    };
    let a = apps(&topo, cfg, reqs, rc)?;
    let (ci, si, ai) = a.hosts;
    let mut lab = lab::<D>(&topo, &a.tables)?;
    let agent = cfg
        .agent_ns
        .map(|p| lab.attach_agent(0, CPU_PORT, Box::new(RefreshAgent::new(p))))
        .transpose()?;
    lab.attach(si, Box::new(a.server))?;
    lab.attach(ai, Box::new(a.accel))?;
    lab.attach(ci, Box::new(a.client))?;
    lab.start()?;
    // The agent keeps a timer forever: run in slices until every request is answered (in
    // namespaces, allow a second past the last arrival for replies still on their way).
    let (slice, grace) = if D::WALL_CLOCK {
        (5_000_000, 1_000_000_000)
    } else {
        (100_000, 10_000_000)
    };
    loop {
        let now = lab.now().0;
        lab.run_to(Nanos(now + slice))?;
        let left = lab.with_app::<Client, _>(ci, |c| c.outstanding());
        if left.unwrap_or(0) == 0 || lab.now().0 >= last + grace {
            break;
        }
    }
    lab.finish()?;
    let refreshed = agent
        .and_then(|g| lab.with_agent::<RefreshAgent, _>(g, |g| g.refreshed()))
        .unwrap_or(0);
    let stats = lab
        .with_app::<Client, _>(ci, |c| c.stats.clone())
        .ok_or_else(|| LeoLabError::Config("client gone".into()))?;
    let seconds = stats.last_ns.saturating_sub(first) as f64 / 1e9;
    Ok(report(cfg, &a.spec, &stats, refreshed, lab.kind(), seconds))
}

/// What a run measured, from the client's statistics.
fn report(
    cfg: &LabConfig,
    spec: &AppSpec,
    st: &ClientStats,
    refreshed: u64,
    driver: &'static str,
    seconds: f64,
) -> LabReport {
    let mut lat = st.e2e_ns.clone();
    lat.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0.0)
            / 1e3
    };
    let n = cfg.count as f64;
    let links = spec
        .hw
        .links
        .iter()
        .filter_map(|l| {
            let p = l.profile?;
            Some((
                l.name.clone(),
                p.latency_ns,
                p.bytes_per_ns,
                p.msgs_per_sec / 1e6,
            ))
        })
        .collect();
    LabReport {
        median_us: pct(0.5),
        p99_us: pct(0.99),
        in_network: st.in_network as f64 / n,
        shares: st.sent.map(|x| x as f64 / n),
        refreshed,
        links,
        answered: lat.len(),
        sent: cfg.count,
        wrong: st.wrong,
        reordered: st.reordered,
        held: st.held,
        unexpected: st.unexpected,
        driver,
        seconds,
    }
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
            agent_ns: Some(2_000),
            seed: 3,
            netns: false,
            dependency: None,
        }
    }

    /// §III-A: the request dependency of the application file decides what waits. ADDR holds
    /// a key's GETs behind its in-flight PUT (never an out-of-order read); NONE and MSG (one
    /// message's round trips in order, which a GET's lookup-then-READ always is) send at once,
    /// and some GETs overtake a PUT to their key and read the value before it.
    #[test]
    fn the_request_dependency_decides_what_waits_for_what() {
        // Few keys, many PUTs: requests to a key overlap.
        let base = LabConfig {
            keys: 100,
            hot: 16,
            put_share: 0.3,
            ..cfg(Policy::Leo, 0.3)
        };
        let run_with = |d| {
            let r = run(&LabConfig {
                dependency: Some(d),
                ..base.clone()
            })
            .unwrap();
            assert_eq!(
                (r.answered, r.wrong, r.unexpected),
                (r.sent, 0, 0),
                "{d:?}: {r:?}"
            );
            r
        };
        let file = run(&base).unwrap();
        let addr = run_with(Dependency::Addr);
        assert!(addr.held > 0 && addr.reordered == 0, "{addr:?}");
        assert_eq!(
            (file.held, file.reordered),
            (addr.held, 0),
            "the file says ADDR"
        );
        for d in [Dependency::None, Dependency::Msg] {
            let r = run_with(d);
            assert_eq!(r.held, 0, "{d:?}: {r:?}");
            assert!(r.reordered > 0, "{d:?}: {r:?}");
            assert!(
                r.median_us < addr.median_us,
                "{d:?} waits less: {r:?} {addr:?}"
            );
        }
    }

    #[test]
    fn every_request_answered_once_with_the_right_value_over_rdma() {
        for (policy, puts) in [(Policy::Leo, 0.05), (Policy::Cpu, 0.05), (Policy::Acc, 0.0)] {
            let r = run(&cfg(policy, puts)).unwrap();
            assert_eq!(
                (r.answered, r.wrong, r.unexpected),
                (r.sent, 0, 0),
                "{policy}: {r:?}"
            );
            match policy {
                Policy::Cpu => assert_eq!((r.in_network, r.shares[2]), (0.0, 1.0)),
                Policy::Acc => assert!(r.in_network > 0.2 && r.shares[2] == 0.0, "{r:?}"),
                _ => assert!(r.shares.iter().filter(|&&s| s > 0.0).count() >= 2, "{r:?}"),
            }
        }
    }

    #[test]
    fn a_slow_agent_never_reopens_a_hot_key_at_an_older_location() {
        // With the agent polling every 200 µs, a refresh from an older PUT is sometimes taken
        // while a newer PUT to the key is in flight; the newer reply keeps the key stale
        // until its own refresh (this run read 3 stale values before leo_kvs.p4 did).
        let r = run(&LabConfig {
            rate: 1e6,
            count: 10_000,
            keys: 100_000,
            hot: 256,
            agent_ns: Some(200_000),
            seed: 1,
            ..cfg(Policy::Leo, 0.05)
        })
        .unwrap();
        assert_eq!((r.answered, r.wrong, r.unexpected), (r.sent, 0, 0), "{r:?}");
        assert!(r.in_network > 0.3 && r.refreshed > 0, "{r:?}");
    }

    #[test]
    fn links_are_profiled_by_probe_frames() {
        let topo = topology().unwrap();
        let spec = profiled_app(&topo).unwrap();
        let p = |n: &str| {
            let i = spec.hw.links.iter().position(|l| l.name == n).unwrap();
            spec.hw.link_profile(i).unwrap()
        };
        // The accelerator's own link (25G, 1 us) is slower and farther than the client's
        // (100G, 500 ns); the probe sees it, the topology's numbers are never read.
        let (up, acc) = (p("uplink"), p("acc-wire"));
        assert!(acc.latency_ns > up.latency_ns + 300.0, "{up:?} {acc:?}");
        assert!(acc.bytes_per_ns < up.bytes_per_ns / 2.0, "{up:?} {acc:?}");
        assert!(up.latency_ns > 400.0 && up.bytes_per_ns > 5.0, "{up:?}");
    }

    #[test]
    fn the_agent_brings_stale_hot_keys_back_to_the_switch() {
        let with = run(&LabConfig {
            policy: Policy::Acc,
            ..cfg(Policy::Acc, 0.05)
        })
        .unwrap();
        let without = run(&LabConfig {
            agent_ns: None,
            ..cfg(Policy::Acc, 0.05)
        })
        .unwrap();
        assert!(with.refreshed > 0 && without.refreshed == 0);
        assert_eq!((with.wrong, without.wrong), (0, 0));
        assert!(
            with.in_network > without.in_network + 0.05,
            "with {with:?} without {without:?}"
        );
    }
}

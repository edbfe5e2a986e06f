//! Building and running the 1Pipe lab: every switch on onepipe.p4 with fabric.p4's generated
//! routes, links and beacons set up by the control plane, a lib1pipe process on every host.
//! One lab for both drivers ([`Driver`]): in memory in virtual time, or with `netns` in network
//! namespaces in wall-clock time (then choose intervals a thread can keep: milliseconds).

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use control::onepipe::{LinkAgent, LinkEvent, Side};
use control::value::{ipv4_value, mac_value};
use dataplane::Nanos;
use etherparse::PacketBuilder;
use hosts::onepipe::clock::HostClock;
use hosts::onepipe::process::{Config, Event, Process, ProcessId};
use hosts::onepipe::wire::{self, Header, Opcode};
use pipeline::api::PipeSel;
use pipeline::ir::{KeyMatch, Value};
use pipeline::pktgen::{AppConfig, Pktgen, Trigger};
use pipeline::switch::Switch;

use super::agent::SwitchAgent;
use super::host::{Delivered, OnepipeHost, Sent, Workload};
use crate::driver::{Driver, DriverError};
use crate::mem::{MemLab, MemLabError};
use crate::topology::{End, Topology, TopologyError};
use crate::NetnsApps;

/// The multicast group of the beacons.
const BEACON_MGID: u16 = 1;

/// A lab could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(transparent)]
    Topology(#[from] TopologyError),
    #[error(transparent)]
    Lab(#[from] MemLabError),
    #[error(transparent)]
    Driver(#[from] DriverError),
    #[error("switch {0}: {1}")]
    Switch(String, String),
    #[error("{0}")]
    Config(String),
}

/// What to run.
#[derive(Debug, Clone)]
pub struct LabConfig {
    pub topology: PathBuf,
    pub reliable: bool,
    /// The switches' pktgen beacon period and the hosts' beacon period.
    pub beacon_interval_ns: u64,
    /// A link silent this long leaves the minimum (the paper: 10 beacon intervals).
    pub link_timeout_ns: u64,
    /// Each process broadcasts every this many ns, `messages` times.
    pub send_every_ns: u64,
    pub messages: u64,
    pub size: usize,
    /// Loss and reordering probability on every link direction.
    pub loss: f64,
    pub reorder: f64,
    /// Host clocks are skewed by up to ± this and drift by up to ± `drift_ppm`.
    pub skew_ns: i64,
    pub drift_ppm: f64,
    /// How long to run (virtual time).
    pub duration_ns: u64,
    pub seed: u64,
    /// Crash this host (index) at this time: its process exits and its link goes down.
    pub fail_host: Option<(usize, u64)>,
    /// Run in network namespaces ([`NetnsApps`]) instead of in memory.
    pub netns: bool,
    /// How many processes broadcast (0: one on every host); [`members`] picks their hosts.
    /// The other hosts run a process that only sends beacons.
    pub processes: usize,
    /// Every link's rate instead of the topology's (bit/s).
    pub rate_bps: Option<u64>,
    /// Background traffic (Fig. 12): each host sends this share of its link rate in
    /// 1500-byte UDP frames to the host half the host list away (across the core of a fat tree).
    pub background: f64,
    /// Transactions instead of broadcasts: (keys per transaction, key space).
    pub kv: Option<(usize, u64)>,
}

impl LabConfig {
    /// A short best-effort run on `topology`.
    pub fn new(topology: PathBuf) -> Self {
        LabConfig {
            topology,
            reliable: false,
            beacon_interval_ns: 10_000,
            link_timeout_ns: 100_000,
            send_every_ns: 20_000,
            messages: 20,
            size: 64,
            loss: 0.0,
            reorder: 0.0,
            skew_ns: 500,
            drift_ppm: 5.0,
            duration_ns: 1_500_000,
            seed: 1,
            fail_host: None,
            netns: false,
            processes: 0,
            rate_bps: None,
            background: 0.0,
            kv: None,
        }
    }
}

/// What a run left: per process (= host), what it sent and delivered, its callbacks.
pub struct LabRun {
    /// Which driver ran it ([`Driver::kind`]).
    pub driver: &'static str,
    /// The processes' names (their hosts').
    pub names: Vec<String>,
    pub sent: Vec<Vec<Sent>>,
    pub delivered: Vec<Vec<Delivered>>,
    pub events: Vec<Vec<Event>>,
    pub beacons: u64,
    pub link_events: Vec<(String, u64, LinkEvent)>,
    pub frames_ignored: u64,
    /// Per host: first arrival of each message (source, timestamp).
    pub arrivals: Vec<HashMap<(ProcessId, u64), u64>>,
    /// Beacon bytes sent by hosts and by switches; all bytes hosts sent.
    pub host_beacon_bytes: u64,
    pub switch_beacon_bytes: u64,
    pub host_tx_bytes: u64,
    /// Link directions and their line rate (bit/s, of the first link).
    pub link_directions: u64,
    pub link_rate_bps: u64,
    pub duration_ns: u64,
    /// Packets through every switch's pipeline, and the wall-clock seconds the run took.
    pub switch_passes: u64,
    pub wall_s: f64,
    /// A crash: (host, when, when the controller declared it failed, its failure timestamp).
    pub failure: Option<(usize, u64, u64, u64)>,
}

/// The beacon template of a switch's pktgen app.
fn beacon_template(mac: [u8; 6], ip: Ipv4Addr) -> Vec<u8> {
    let h = Header {
        ts: 0,
        be: 0,
        commit: 0,
        psn: 0,
        opcode: Opcode::Beacon,
    };
    let mut payload = Vec::new();
    h.write(&mut payload);
    let b = PacketBuilder::ethernet2(mac, [0; 6])
        .ipv4(ip.octets(), [0, 0, 0, 0], 1)
        .udp(wire::UDP_PORT, wire::UDP_PORT);
    let mut out = Vec::new();
    b.write(&mut out, &payload).expect("a Vec grows");
    out
}

/// The switch's own address for its beacons (a made-up one when the topology gives none).
pub(crate) fn switch_ip(topo: &Topology, s: usize) -> Ipv4Addr {
    topo.switches[s]
        .ipv4
        .unwrap_or(Ipv4Addr::new(169, 254, (s >> 8) as u8, s as u8))
}

/// 1Pipe aggregates barriers up and down a routing DAG (§4.1): every switch-to-switch link must
/// join two tiers (a switch's tier: its hop distance from the nearest switch with hosts), one
/// end above the other. Two switches of the same tier would each take the other as below, feed
/// each other's minimum and hold every barrier back for good: such a topology is refused.
pub(crate) fn check_tiered(topo: &Topology) -> Result<(), LabError> {
    let tiers = crate::routes::switch_tiers(topo);
    for l in &topo.links {
        if let (End::Switch { switch: a, .. }, End::Switch { switch: b, .. }) = (l.a, l.b) {
            if tiers[a] == tiers[b] {
                return Err(LabError::Config(format!(
                    "1Pipe needs a tiered fabric (every switch link from one tier to the next, \
                     §4.1's barrier DAG): the link {}-{} joins two switches of tier {} (hops from \
                     the nearest switch with hosts)",
                    topo.switches[a].name, topo.switches[b].name, tiers[a]
                )));
            }
        }
    }
    Ok(())
}

/// Links, beacon multicast and neighbours of switch `s`; its link agent.
/// With `hold` (reliable 1Pipe, §5.2) a silent link stays in the minimum until the controller
/// removes it.
fn program_switch(
    topo: &Topology,
    s: usize,
    sw: &mut Switch,
    timeout: u64,
    hold: bool,
) -> Result<LinkAgent, String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let mut agent = LinkAgent::new(timeout);
    if hold {
        agent = agent.hold_removals();
    }
    let mut ports = Vec::new();
    let me = &topo.switches[s];
    let tiers = crate::routes::switch_tiers(topo);
    for l in &topo.links {
        for (end, peer) in [(l.a, l.b), (l.b, l.a)] {
            let End::Switch { switch, devport } = end else {
                continue;
            };
            if switch != s {
                continue;
            }
            let (mac, ip, side) = match peer {
                End::Host(h) => (topo.hosts[h].mac, topo.hosts[h].ip, Side::Below),
                End::Switch { switch: p, .. } => {
                    let side = if tiers[p] > tiers[s] {
                        Side::Above
                    } else {
                        Side::Below
                    };
                    (topo.switches[p].mac, switch_ip(topo, p), side)
                }
            };
            agent.add_link(devport, side, false).map_err(|x| e(&x))?;
            ports.push(devport);
            let action = if side == Side::Above {
                "beacon_up"
            } else {
                "beacon_to"
            };
            let key = [(
                "eg_intr_md.egress_port",
                KeyMatch::Exact(Value::from(devport)),
            )];
            let params = [
                ("smac", mac_value(me.mac)),
                ("dmac", mac_value(mac)),
                ("src", ipv4_value(switch_ip(topo, s))),
                ("dst", ipv4_value(ip)),
            ];
            sw.table_add(
                PipeSel::All,
                "SwitchEgress.neighbours",
                &key,
                None,
                action,
                &params,
            )
            .map_err(|x| e(&x))?;
        }
    }
    agent.install(sw, &[]).map_err(|x| e(&x))?;
    sw.mc_group_create(BEACON_MGID).map_err(|x| e(&x))?;
    sw.mc_node_create(1, 1, &ports, &[]).map_err(|x| e(&x))?;
    sw.mc_group_add_node(BEACON_MGID, 1, None)
        .map_err(|x| e(&x))?;
    let key = [(
        "ig_intr_md.ingress_port",
        KeyMatch::Exact(Value::from(pipeline::devport::recirc_port(0))),
    )];
    let params = [("mgid", Value::from(BEACON_MGID))];
    sw.table_add(
        PipeSel::All,
        "SwitchIngress.links",
        &key,
        None,
        "generated",
        &params,
    )
    .map_err(|x| e(&x))?;
    Ok(agent)
}

/// Nanoseconds a beacon of `len` bytes takes over the slowest link direction pair of the
/// fabric (propagation both ways of the model plus serialization), plus a guard.
fn hop_ns(cfg: &LabConfig, topo: &Topology, len: usize) -> u64 {
    let ser = |d: &dataplane::link::DirectionConfig| {
        let rate = cfg.rate_bps.unwrap_or(d.rate_bps);
        let bits = 8 * (len as u64 + u64::from(d.overhead_bytes));
        d.delay_ns
            + if rate == 0 {
                0
            } else {
                (bits * 1_000_000_000).div_ceil(rate)
            }
    };
    let worst = topo
        .links
        .iter()
        .map(|l| ser(&l.config.tx) + ser(&l.config.rx))
        .max()
        .unwrap_or(0);
    worst + HOP_GUARD_NS
}

/// Slack added to each hop of the beacon schedule (the lab's switches take no time).
const HOP_GUARD_NS: u64 = 50;

/// The phases (ns after each multiple of the interval) of switch `s`'s beacon apps: beacons at
/// synchronized times (§4.2), staggered by tier so that one wave of barriers crosses the
/// fabric per interval. Hosts beacon at the multiples of the interval on their clocks (at most
/// the skew plus the drift of the run off); a switch of tier k sends its up switch's barrier
/// once its tier's beacons are in (k + 1 hops later), and its down switch's once the wave came
/// back down from the top tier H (2H - k + 1 hops). A switch with uplinks has both apps (each
/// beacon leaves on every link); the others only the second. At one common instant instead,
/// every hop would wait most of an interval for the next tick.
pub(crate) fn beacon_phases(cfg: &LabConfig, topo: &Topology, s: usize, len: usize) -> Vec<u64> {
    let tiers = crate::routes::switch_tiers(topo);
    let top = tiers.iter().copied().max().unwrap_or(0) as u64;
    let k = tiers[s] as u64;
    let skew = cfg.skew_ns.unsigned_abs()
        + (cfg.drift_ppm.abs() * 1e-6 * cfg.duration_ns as f64).ceil() as u64;
    let hop = hop_ns(cfg, topo, len);
    let up = topo.links.iter().any(|l| {
        [(l.a, l.b), (l.b, l.a)].iter().any(|&(me, peer)| {
            matches!((me, peer), (End::Switch { switch: a, .. }, End::Switch { switch: b, .. })
                if a == s && tiers[b] > tiers[a])
        })
    });
    let down = skew + (2 * top - k + 1) * hop;
    if up {
        vec![skew + (k + 1) * hop, down]
    } else {
        vec![down]
    }
}

/// A deterministic spread in [-1, 1] for host `h`.
fn spread(h: usize, seed: u64) -> f64 {
    let x = (h as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ seed.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

/// Runs until `at`, crashes host `h` (its process exits, its link goes down), and plays the
/// controller of §5 in a reduced form. Best effort: once the host's ToR agent removes the
/// silent link on its own (§4.2), the failure timestamp is the last barrier the host's link
/// brought (nothing it sent later can exist), broadcast to every surviving process, which
/// discards the host's messages above it. Reliable (§5.2): the agent only reports the silent
/// link (it keeps holding the commit barrier); the controller takes the link's last commit
/// barrier as the failure timestamp, tells every survivor (Broadcast; they Discard, Recall and
/// call back), waits until each one's recalls are ACKed (completions), and only then removes
/// the link (Resume): in virtual time and with wall-clock threads alike, no barrier passes the
/// failed host's link before every survivor knows.
fn crash<D: Driver>(
    lab: &mut D,
    topo: &Topology,
    agents: &[(String, usize)],
    h: usize,
    at: u64,
    cfg: &LabConfig,
) -> Result<Option<(usize, u64, u64, u64)>, LabError> {
    let (tor, port) = topo
        .host_attachment(h)
        .ok_or_else(|| LabError::Config(format!("host {h} is not cabled")))?;
    lab.run_to(Nanos(at))?;
    lab.with_app(h, |app: &mut OnepipeHost| app.process.exit());
    lab.set_link_up(topo.hosts[h].link, false)?;
    let agent = agents[tor].1;
    let step = cfg.beacon_interval_ns.clamp(100, 500);
    let mut t = at;
    // Detection: the ToR's agent reports (reliable) or removes (best effort) the silent link.
    let link = loop {
        if t >= cfg.duration_ns {
            return Ok(None);
        }
        t = (t + step).min(cfg.duration_ns);
        lab.run_to(Nanos(t))?;
        let seen = lab
            .with_agent(agent, |a: &mut SwitchAgent| {
                a.events.iter().find_map(|(_, e)| match *e {
                    LinkEvent::Silent { link, port: p } | LinkEvent::Removed { link, port: p }
                        if p == port =>
                    {
                        Some(link)
                    }
                    _ => None,
                })
            })
            .flatten();
        if let Some(link) = seen {
            break link;
        }
    };
    // Reliable: the last commit barrier (everything the host sent below it was ACKed by
    // every receiver); best effort: the last barrier (nothing it sent is above it).
    let register = if cfg.reliable {
        "SwitchIngress.link_commit"
    } else {
        "SwitchIngress.link_be"
    };
    let low = lab
        .with_switch(tor, move |sw| {
            sw.register_read(PipeSel::All, register, u32::from(link))
                .map(|v| v[0].lo as u32)
                .map_err(|e| e.to_string())
        })?
        .map_err(|e| LabError::Switch(topo.switches[tor].name.clone(), e))?;
    let declared = t;
    let mut failure_ts = 0;
    let now = if D::WALL_CLOCK { lab.now().0 } else { t };
    let survivors: Vec<usize> = (0..topo.hosts.len()).filter(|&s| s != h).collect();
    for &s in &survivors {
        lab.with_app(s, |app: &mut OnepipeHost| {
            failure_ts = hosts::onepipe::ts::extend(low, app.process.get_timestamp(now));
            app.process.process_failed(now, h as ProcessId, failure_ts);
        });
    }
    if cfg.reliable {
        // Completions: every survivor's recalls ACKed; then Resume.
        loop {
            let busy = survivors.iter().any(|&s| {
                lab.with_app(s, |app: &mut OnepipeHost| app.process.recovering())
                    .unwrap_or(false)
            });
            if !busy || t >= cfg.duration_ns {
                break;
            }
            t = (t + step).min(cfg.duration_ns);
            lab.run_to(Nanos(t))?;
        }
        lab.with_agent(agent, |a: &mut SwitchAgent| a.remove_link(link));
    }
    lab.run_to(Nanos(cfg.duration_ns))?;
    Ok(Some((h, at, declared, failure_ts)))
}

/// Builds the lab, runs it for `cfg.duration_ns` and collects the logs (in namespaces with
/// `cfg.netns`).
pub fn run(cfg: &LabConfig) -> Result<LabRun, LabError> {
    if cfg.netns {
        run_on::<NetnsApps>(cfg)
    } else {
        run_on::<MemLab>(cfg)
    }
}

/// Background frames' size (bytes).
const BACKGROUND_SIZE: usize = 1500;

/// Nanoseconds between a host's background frames for `cfg.background` of its link (0: none).
fn background_every(cfg: &LabConfig, topo: &Topology) -> u64 {
    let rate = cfg
        .rate_bps
        .unwrap_or(topo.links.first().map_or(0, |l| l.config.tx.rate_bps));
    if cfg.background <= 0.0 || rate == 0 {
        return 0;
    }
    let bits = 8.0 * (BACKGROUND_SIZE + dataplane::link::ETHERNET_OVERHEAD as usize) as f64;
    (bits / (rate as f64 * cfg.background.min(1.0)) * 1e9) as u64
}

/// The hosts (indices) of `n` processes out of `hosts`, spread evenly over the topology's
/// host list (on a fat tree: over the pods first); all of them when `n` is 0 or too many.
pub fn members(hosts: usize, n: usize) -> Vec<usize> {
    if n == 0 || n >= hosts {
        return (0..hosts).collect();
    }
    (0..n).map(|i| i * hosts / n).collect()
}

/// A lab's driver, its topology and its switches' agents (name, agent id).
pub(crate) type Fabric<D> = (D, Topology, Vec<(String, usize)>);

/// The fabric of a lab on driver `D`: the topology, every switch on onepipe.p4 with its link
/// agent and pktgen beacons, links set up as `cfg` says; returns the agents' ids by switch.
pub(crate) fn fabric<D: Driver>(cfg: &LabConfig) -> Result<Fabric<D>, LabError> {
    let mut topo = Topology::load(&cfg.topology)?;
    check_tiered(&topo)?;
    for s in &mut topo.switches {
        s.program = s.program.with_file_name("onepipe.p4");
    }
    let mut lab = D::build(topo.clone())?;
    let mut agents: Vec<(String, usize)> = Vec::new();
    for s in 0..topo.switches.len() {
        let name = topo.switches[s].name.clone();
        let links = program_switch(
            &topo,
            s,
            lab.switch_mut(s)?,
            cfg.link_timeout_ns,
            cfg.reliable,
        )
        .map_err(|m| LabError::Switch(name.clone(), m))?;
        let template = beacon_template(topo.switches[s].mac, switch_ip(&topo, s));
        let apps = beacon_phases(cfg, &topo, s, template.len())
            .into_iter()
            .enumerate()
            .map(|(i, phase)| {
                let app = AppConfig {
                    pipe: 0,
                    app_id: i as u8,
                    trigger: Trigger::Periodic,
                    period_ns: cfg.beacon_interval_ns.max(1),
                    batch_count: 1,
                    packets_per_batch: 1,
                    ipg_ns: 0,
                    ibg_ns: 0,
                    template: template.clone(),
                    port: 0,
                };
                (app, phase)
            })
            .collect();
        let pktgen = Pktgen::new(topo.switches[s].target, 1);
        let agent = SwitchAgent::new(pktgen, apps, links, cfg.link_timeout_ns / 4);
        let id = lab.attach_agent(s, pipeline::devport::recirc_port(0), Box::new(agent))?;
        agents.push((name, id));
    }
    for (l, link) in topo.links.iter().enumerate() {
        let mut c = link.config.clone();
        if let Some(r) = cfg.rate_bps {
            c.tx.rate_bps = r;
        }
        c.tx.faults.loss = cfg.loss;
        c.tx.faults.reorder = cfg.reorder;
        if cfg.reorder > 0.0 && c.tx.faults.reorder_delay_ns == 0 {
            c.tx.faults.reorder_delay_ns = 2_000;
        }
        for end in 0..2 {
            c.seed = link.end_seed(l, end) ^ cfg.seed;
            lab.set_link_config(l, end, c.clone())
                .map_err(|e| LabError::Config(format!("link {}: {e}", topo.link_name(l))))?;
        }
    }
    Ok((lab, topo, agents))
}

/// [`run`] on driver `D`.
pub fn run_on<D: Driver>(cfg: &LabConfig) -> Result<LabRun, LabError> {
    let (mut lab, topo, agents) = fabric::<D>(cfg)?;
    if cfg.processes > topo.hosts.len() {
        return Err(LabError::Config(format!(
            "{} processes on a topology of {} hosts: a process runs on a host of its own",
            cfg.processes,
            topo.hosts.len()
        )));
    }
    let members = members(topo.hosts.len(), cfg.processes);
    let ids: Vec<ProcessId> = members.iter().map(|&h| h as ProcessId).collect();
    let ips: Vec<Ipv4Addr> = topo.hosts.iter().map(|h| h.ip).collect();
    for (h, host) in topo.hosts.iter().enumerate() {
        let (s, _) = topo.host_attachment(h).ok_or_else(|| {
            LabError::Config(format!("host {} is not cabled to a switch", host.name))
        })?;
        let clock = HostClock::new(
            (spread(h, cfg.seed) * cfg.skew_ns as f64) as i64,
            spread(h + 1000, cfg.seed) * cfg.drift_ppm,
        );
        let pcfg = Config {
            id: h as ProcessId,
            ack_timeout_ns: cfg.beacon_interval_ns * 20,
            window: 1 << 16,
        };
        let work = Workload {
            reliable: cfg.reliable,
            send_every: cfg.send_every_ns,
            messages: if members.contains(&h) {
                cfg.messages
            } else {
                0
            },
            beacon_every: cfg.beacon_interval_ns,
            size: cfg.size,
            background_every: background_every(cfg, &topo),
            background_size: BACKGROUND_SIZE,
            background_to: (cfg.background > 0.0).then(|| ips[(h + ips.len() / 2) % ips.len()]),
            kv: cfg.kv,
        };
        let start = 50_000 + (spread(h + 2000, cfg.seed).abs() * cfg.send_every_ns as f64) as u64;
        let app = OnepipeHost::new(
            Process::init(pcfg, clock),
            host.mac,
            host.ip,
            topo.switches[s].mac,
            host.gateway,
            ips.clone(),
            work,
            start,
        )
        .with_members(ids.clone());
        lab.attach(h, Box::new(app))?;
    }
    let wall = std::time::Instant::now();
    let failure = match cfg.fail_host {
        None => {
            lab.run_to(Nanos(cfg.duration_ns))?;
            None
        }
        Some((h, at)) => crash(&mut lab, &topo, &agents, h, at, cfg)?,
    };
    let wall_s = wall.elapsed().as_secs_f64();
    let mut out = LabRun {
        driver: lab.kind(),
        names: topo.hosts.iter().map(|h| h.name.clone()).collect(),
        sent: Vec::new(),
        delivered: Vec::new(),
        events: Vec::new(),
        beacons: 0,
        link_events: Vec::new(),
        frames_ignored: 0,
        arrivals: Vec::new(),
        host_beacon_bytes: 0,
        switch_beacon_bytes: 0,
        host_tx_bytes: 0,
        link_directions: 2 * topo.links.len() as u64,
        link_rate_bps: cfg
            .rate_bps
            .unwrap_or(topo.links.first().map_or(0, |l| l.config.tx.rate_bps)),
        duration_ns: cfg.duration_ns,
        switch_passes: lab.switch_counters().iter().map(|c| c.passes).sum(),
        wall_s,
        failure,
    };
    lab.finish()?;
    for h in 0..topo.hosts.len() {
        let gathered = lab.with_app(h, |app: &mut OnepipeHost| {
            out.sent.push(std::mem::take(&mut app.sent));
            out.delivered.push(std::mem::take(&mut app.delivered));
            out.events.push(std::mem::take(&mut app.events));
            out.frames_ignored += app.ignored;
            out.arrivals.push(std::mem::take(&mut app.arrivals));
            out.host_beacon_bytes += app.beacon_bytes;
            out.host_tx_bytes += app.tx_bytes;
        });
        gathered.ok_or_else(|| LabError::Config(format!("host {h} runs no 1Pipe process")))?;
    }
    for (name, id) in agents {
        let agent = lab.with_agent(id, |a: &mut SwitchAgent| {
            if let Some(e) = a.errors.first() {
                return Err(LabError::Switch(name.clone(), format!("link agent: {e}")));
            }
            out.beacons += a.beacons();
            // Each generated beacon leaves on every link of the switch.
            out.switch_beacon_bytes += a.beacon_bytes();
            out.link_events
                .extend(a.events.iter().map(|&(t, e)| (name.clone(), t, e)));
            Ok(())
        });
        agent.ok_or_else(|| LabError::Config(format!("switch {name} has no agent")))??;
    }
    Ok(out)
}

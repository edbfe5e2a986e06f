//! The namespace driver (root): the same topology with every host in its own network namespace
//! and every cable a veth pair, all switches of the topology in this process, each one a
//! `dataplane::switch::SwitchRuntime` on AF_PACKET ports in wall-clock time.
//!
//! - Hosts: namespace `pisa-<lab>-<host>`, interface `eth0` with the host's MAC and address, a
//!   default route via its gateway, and static neighbours (the gateway and the other hosts of
//!   its subnet → its switch's router MAC), so the kernel never needs ARP through a fabric that
//!   routes IPv4 only.
//! - Cables: link `i` is `<ifprefix>l<i>a` ~ `<ifprefix>l<i>b`, switch ends in the root
//!   namespace; a host's end moves into its namespace as `eth0`.
//! - Link settings apply at the switch ends through the port's link model (each direction at
//!   the end it leaves; the host → switch direction of a host cable at the switch end's
//!   receive side), exactly as in memory.
//!
//! [`lab_of`] turns the topology into a `dataplane::lab::Lab` (hosts and wires), so `pisa lab
//! up/down/exec/list` manage it like any lab and `down` removes exactly what `up` created.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::Arc;

use dataplane::lab::{self, Host, Lab, LabState, Neighbor, Route, Wire};
use dataplane::link::DirectionConfig;
use dataplane::runtime::{PortSetup, RuntimeConfig, RuntimeStats};
use dataplane::switch::{SwitchHandle, SwitchRuntime};
use dataplane::{Clock, LinkConfig, WallClock};
use pipeline::devport::CPU_ETH_PORT;

use crate::mem::{PortCounters, SwitchCounters};
use crate::ping::PingReport;
use crate::topology::{mac_text, End, Topology};

/// A namespace-driver error.
#[derive(Debug, thiserror::Error)]
pub enum NetnsError {
    #[error(transparent)]
    Lab(#[from] dataplane::LabError),
    #[error(transparent)]
    Build(#[from] crate::build::BuildError),
    #[error("switch {0}: {1}")]
    Switch(String, String),
    #[error("control socket of switch {0}: {1}")]
    Ctl(String, control::server::ServerError),
    #[error("P4Runtime server of switch {0}: {1}")]
    P4Runtime(String, control::p4runtime::server::StartError),
    #[error("this needs root (network namespaces and veth pairs)")]
    NotRoot,
    #[error("capture: {0}")]
    Capture(String),
}

/// The interface name of end `k` (0: a, 1: b) of link `i`.
pub fn ifname(topo: &Topology, i: usize, k: usize) -> String {
    format!("{}l{i}{}", topo.ifprefix, if k == 0 { 'a' } else { 'b' })
}

/// The `dataplane::lab::Lab` that builds the topology's namespaces and cables.
pub fn lab_of(topo: &Topology) -> Lab {
    let mut hosts = Vec::new();
    let mut wires = Vec::new();
    for (i, l) in topo.links.iter().enumerate() {
        match (l.a, l.b) {
            (End::Host(h), _) => hosts.push(host_of(topo, h, ifname(topo, i, 1), hosts.len())),
            (_, End::Host(h)) => hosts.push(host_of(topo, h, ifname(topo, i, 0), hosts.len())),
            _ => wires.push(Wire {
                a: ifname(topo, i, 0),
                b: ifname(topo, i, 1),
                mtu: Some(topo.mtu),
            }),
        }
    }
    Lab {
        name: topo.name.clone(),
        ifprefix: topo.ifprefix.clone(),
        mtu: Some(topo.mtu),
        hosts,
        wires,
    }
}

fn host_of(topo: &Topology, h: usize, switch_if: String, port: usize) -> Host {
    let spec = &topo.hosts[h];
    let gw_mac = topo
        .host_attachment(h)
        .map_or(spec.mac, |(s, _)| topo.switches[s].mac);
    let mask = if spec.prefix >= 32 {
        !0u32
    } else {
        !(!0u32 >> spec.prefix)
    };
    let same_subnet = |ip: Ipv4Addr| u32::from(ip) & mask == u32::from(spec.ip) & mask;
    let mut neighbors = vec![Neighbor {
        ip: spec.gateway.to_string(),
        mac: mac_text(gw_mac),
    }];
    for (o, other) in topo.hosts.iter().enumerate() {
        if o != h && same_subnet(other.ip) && other.ip != spec.gateway {
            neighbors.push(Neighbor {
                ip: other.ip.to_string(),
                mac: mac_text(gw_mac),
            });
        }
    }
    Host {
        name: spec.name.clone(),
        port: port as u16,
        switch_if: Some(switch_if),
        host_if: "eth0".into(),
        mac: Some(mac_text(spec.mac)),
        switch_mac: None,
        mtu: Some(topo.mtu),
        ipv4: vec![format!("{}/{}", spec.ip, spec.prefix)],
        ipv6: Vec::new(),
        routes: vec![Route {
            to: "default".into(),
            via: spec.gateway.to_string(),
        }],
        neighbors,
        offloads_off: true,
        link: None,
    }
}

/// The topology's switches running on their veths.
pub struct NetnsSwitches {
    topo: Topology,
    runtimes: Vec<(String, SwitchRuntime)>,
    _ctl: Vec<control::server::CtlServer>,
    p4runtime: Vec<(String, control::p4runtime::server::P4RuntimeServerHandle)>,
}

/// Where switch `name` of lab `lab` serves its control socket.
pub fn ctl_path(lab: &str, switch: &str) -> PathBuf {
    PathBuf::from(lab::DEFAULT_STATE_DIR)
        .join(lab)
        .join(format!("{switch}.sock"))
}

impl NetnsSwitches {
    /// Builds every switch and starts it on the lab's veths (the lab must be up). With `ctl`,
    /// each switch serves its control socket at [`ctl_path`]; with `p4runtime`, switch `i` of
    /// the topology serves P4Runtime (device id 1) on that address's port + `i`, with packet
    /// I/O on the CPU port (64) unless something else is cabled there.
    pub fn start(
        topo: &Topology,
        ctl: bool,
        p4runtime: Option<std::net::SocketAddr>,
    ) -> Result<NetnsSwitches, NetnsError> {
        let built = crate::build::switches(topo)?;
        let clock: Arc<dyn Clock> = Arc::new(WallClock::new());
        NetnsSwitches::start_with(topo, built, Vec::new(), clock, ctl, p4runtime)
    }

    /// [`NetnsSwitches::start`] with switches built (and programmed) elsewhere, one per
    /// topology switch in order, `extra` ports (a switch index and its port: a CPU port's
    /// memory pair, say) besides the veths, and the switches' clock (the one the lab's
    /// applications see, so that the program's timestamps and theirs agree).
    pub fn start_with(
        topo: &Topology,
        built: Vec<pipeline::switch::Switch>,
        extra: Vec<(usize, PortSetup)>,
        clock: Arc<dyn Clock>,
        ctl: bool,
        p4runtime: Option<std::net::SocketAddr>,
    ) -> Result<NetnsSwitches, NetnsError> {
        let mut extra = extra;
        let mut runtimes = Vec::new();
        let mut servers = Vec::new();
        let mut p4rt = Vec::new();
        for (s, mut sw) in built.into_iter().enumerate() {
            let name = topo.switches[s].name.clone();
            let mut setups = Vec::new();
            for (i, l) in topo.links.iter().enumerate() {
                for (k, end) in [(0, l.a), (1, l.b)] {
                    let End::Switch { switch, devport } = end else {
                        continue;
                    };
                    if switch != s {
                        continue;
                    }
                    let ifname = ifname(topo, i, k);
                    let port = dataplane::open_port(
                        &dataplane::PortSpec::AfPacket {
                            ifname: ifname.clone(),
                        },
                        &mut dataplane::MemHub::default(),
                    )
                    .map_err(|e| NetnsError::Switch(name.clone(), format!("{ifname}: {e}")))?;
                    setups.push(PortSetup {
                        devport,
                        port,
                        link: end_config(l, i, k),
                    });
                }
            }
            let (mine, rest) = std::mem::take(&mut extra)
                .into_iter()
                .partition(|(sw, _)| *sw == s);
            extra = rest;
            setups.extend(mine.into_iter().map(|(_, p): (usize, PortSetup)| p));
            // Ports with something attached are front-panel ports, also in the recirculation quad.
            for p in &setups {
                sw.set_front_panel(p.devport);
            }
            if setups.is_empty() {
                continue;
            }
            // P4Runtime's packet I/O: the server holds the other end of the CPU port.
            let cpu_end = (p4runtime.is_some()
                && !setups.iter().any(|p| p.devport == CPU_ETH_PORT))
            .then(|| {
                let (sw_end, ctl_end) =
                    dataplane::mem::pair(&format!("{name}-cpu"), &format!("{name}-p4rt"));
                setups.push(PortSetup {
                    devport: CPU_ETH_PORT,
                    port: Box::new(sw_end),
                    link: dataplane::LinkConfig::default(),
                });
                ctl_end
            });
            let cfg = RuntimeConfig {
                thread_hook: None,
                ..RuntimeConfig::default()
            };
            let spec = &topo.switches[s];
            let pipeline = match p4runtime {
                Some(_) => {
                    let opts = p4::compile::CompileOptions {
                        target: spec.target,
                        ..p4::compile::CompileOptions::default()
                    };
                    let program = control::p4runtime::p4info::for_file(
                        (**sw.program()).clone(),
                        &spec.program,
                        &opts,
                    );
                    let source = std::fs::read(&spec.program)
                        .map_err(|e| NetnsError::Switch(name.clone(), e.to_string()))?;
                    Some((
                        control::p4runtime::server::Pipeline::new(program, source, None),
                        opts,
                    ))
                }
                None => None,
            };
            let rt = SwitchRuntime::start(vec![sw], false, &[], setups, clock.clone(), cfg)
                .map_err(|e| NetnsError::Switch(name.clone(), e.to_string()))?;
            if ctl {
                let path = ctl_path(&topo.name, &name);
                servers.push(
                    control::server::CtlServer::start(&path, rt.handle())
                        .map_err(|e| NetnsError::Ctl(name.clone(), e))?,
                );
            }
            if let (Some(base), Some((pipeline, compile))) = (p4runtime, pipeline) {
                let addr =
                    std::net::SocketAddr::new(base.ip(), base.port().saturating_add(s as u16));
                let cfg = control::p4runtime::server::ServerConfig {
                    device_id: 1,
                    compile,
                    cpu: cpu_end.map(|p| Box::new(p) as Box<dyn dataplane::Port>),
                    clock: clock.clone(),
                };
                let srv = control::p4runtime::server::start(addr, rt.handle(), pipeline, cfg)
                    .map_err(|e| NetnsError::P4Runtime(name.clone(), e))?;
                p4rt.push((name.clone(), srv));
            }
            runtimes.push((name, rt));
        }
        Ok(NetnsSwitches {
            topo: topo.clone(),
            runtimes,
            _ctl: servers,
            p4runtime: p4rt,
        })
    }

    /// Where each switch serves P4Runtime (with `p4runtime` given to [`NetnsSwitches::start`]).
    pub fn p4runtime_addrs(&self) -> Vec<(String, std::net::SocketAddr)> {
        self.p4runtime
            .iter()
            .map(|(n, s)| (n.clone(), s.local_addr()))
            .collect()
    }

    /// The control handle of each running switch.
    pub fn handles(&self) -> Vec<(String, SwitchHandle)> {
        self.runtimes
            .iter()
            .map(|(n, rt)| (n.clone(), rt.handle()))
            .collect()
    }

    /// Counters of every running switch.
    pub fn counters(&self) -> BTreeMap<String, SwitchCounters> {
        self.handles()
            .into_iter()
            .map(|(n, h)| {
                let drops = h
                    .each(std::time::Duration::from_secs(2), |sw, _| {
                        sw.stats().total_drops()
                    })
                    .map(|v| v.iter().sum())
                    .unwrap_or(0);
                let c = counters_of(&self.topo, &n, &h.stats(), drops);
                (n, c)
            })
            .collect()
    }

    /// Stops every switch (draining its queues).
    pub fn stop(self) -> Result<(), NetnsError> {
        // The switches first: a P4Runtime server holds the far end of its switch's CPU port.
        let mut first_error = None;
        for (n, rt) in self.runtimes {
            if let Err(e) = rt.stop() {
                first_error.get_or_insert(NetnsError::Switch(n, e.to_string()));
            }
        }
        drop(self.p4runtime);
        first_error.map_or(Ok(()), Err)
    }
}

/// The link settings of the switch end `k` of link `l`: it sends with its own direction's
/// settings; when the far end is a host (whose kernel sends without a model), the host's
/// direction is applied where the frames arrive.
fn end_config(l: &crate::topology::LinkSpec, link: usize, k: usize) -> LinkConfig {
    let (mine, theirs): (&DirectionConfig, &DirectionConfig) = if k == 0 {
        (&l.config.tx, &l.config.rx)
    } else {
        (&l.config.rx, &l.config.tx)
    };
    let far_is_host = matches!(if k == 0 { l.b } else { l.a }, End::Host(_));
    let mut c = LinkConfig {
        tx: mine.clone(),
        rx: if far_is_host {
            theirs.clone()
        } else {
            DirectionConfig::default()
        },
        seed: l.end_seed(link, k),
    };
    c.tx.faults.link_down |= !l.up;
    c.rx.faults.link_down |= !l.up && far_is_host;
    c
}

fn counters_of(topo: &Topology, switch: &str, st: &RuntimeStats, drops: u64) -> SwitchCounters {
    let s = topo.switch_index(switch).unwrap_or(usize::MAX);
    SwitchCounters {
        passes: st.processed,
        switch_drops: drops,
        no_port: st.no_port,
        ports: st
            .ports
            .iter()
            .map(|p| {
                let me = End::Switch {
                    switch: s,
                    devport: p.devport,
                };
                let peer = topo
                    .links
                    .iter()
                    .find(|l| l.a == me || l.b == me)
                    .map_or_else(
                        // Not a cable: the CPU port (an agent or P4Runtime's packet I/O).
                        || {
                            if p.devport == CPU_ETH_PORT {
                                "cpu"
                            } else {
                                "?"
                            }
                            .into()
                        },
                        |l| topo.end_name(l.peer(me)),
                    );
                PortCounters {
                    devport: p.devport,
                    peer,
                    rx: p.port.rx_packets,
                    tx: p.port.tx_packets,
                    rx_bytes: p.port.rx_bytes,
                    tx_bytes: p.port.tx_bytes,
                    drops: p.total_drops(),
                }
            })
            .collect(),
    }
}

/// A running namespace lab: brought up here (and taken down on drop) or found up.
pub struct NetnsLab {
    pub topo: Topology,
    pub state: LabState,
    owned: bool,
}

impl NetnsLab {
    /// Brings the topology's namespaces and cables up, or uses them when the lab is up already
    /// (then they stay up afterwards).
    pub fn up(topo: &Topology) -> Result<NetnsLab, NetnsError> {
        if !dataplane::netns::is_root() {
            return Err(NetnsError::NotRoot);
        }
        let dir = PathBuf::from(lab::DEFAULT_STATE_DIR);
        if let Ok(state) = lab::load_state(&dir, &topo.name) {
            return Ok(NetnsLab {
                topo: topo.clone(),
                state,
                owned: false,
            });
        }
        let state = lab::lab_up(&lab_of(topo))?;
        Ok(NetnsLab {
            topo: topo.clone(),
            state,
            owned: true,
        })
    }

    /// Whether this value brought the lab up (and takes it down on drop).
    pub fn owned(&self) -> bool {
        self.owned
    }

    /// Pings every ordered host pair with the kernel's `ping` (two tries of one echo each, one
    /// second apart at most), one shell per source host, all sources at once.
    pub fn ping_all(&self) -> PingReport {
        let n = self.topo.hosts.len();
        let threads: Vec<_> = (0..n)
            .map(|a| {
                let ns = self
                    .state
                    .host(&self.topo.hosts[a].name)
                    .map(|h| h.netns.clone())
                    .unwrap_or_default();
                let ips: Vec<String> = (0..n)
                    .filter(|&b| b != a)
                    .map(|b| self.topo.hosts[b].ip.to_string())
                    .collect();
                std::thread::spawn(move || ping_from(&ns, &ips))
            })
            .collect();
        let mut matrix = vec![vec![false; n]; n];
        for (a, t) in threads.into_iter().enumerate() {
            let ok = t.join().unwrap_or_default();
            for (b, row) in matrix[a].iter_mut().enumerate() {
                *row = ok.contains(&self.topo.hosts[b].ip.to_string());
            }
        }
        PingReport::new(&self.topo, matrix)
    }

    /// Takes the lab down now if this value brought it up.
    pub fn down(mut self) -> Result<(), NetnsError> {
        self.take_down()
    }

    fn take_down(&mut self) -> Result<(), NetnsError> {
        if self.owned {
            self.owned = false;
            lab::lab_down(&self.topo.name)?;
        }
        Ok(())
    }
}

impl Drop for NetnsLab {
    fn drop(&mut self) {
        if let Err(e) = self.take_down() {
            tracing::warn!(lab = %self.topo.name, error = %e, "could not take the lab down");
        }
    }
}

/// The addresses among `ips` that answered a ping from namespace `ns`.
fn ping_from(ns: &str, ips: &[String]) -> Vec<String> {
    let script = format!(
        "for ip in {}; do if ping -n -c 1 -W 1 -q $ip >/dev/null 2>&1 || ping -n -c 1 -W 1 -q $ip >/dev/null 2>&1; then echo ok $ip; fi; done",
        ips.join(" ")
    );
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "sh", "-c", &script])
        .output();
    match out {
        Ok(o) => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| l.strip_prefix("ok ").map(str::to_string))
            .collect(),
        Err(e) => {
            tracing::warn!(netns = ns, error = %e, "cannot run ping");
            Vec::new()
        }
    }
}

/// Records link `link` of a running namespace lab for `duration` from both of its ends (a
/// host's end inside its namespace) and writes the frames to `path`; returns how many.
pub fn capture(
    lab: &NetnsLab,
    link: usize,
    duration: std::time::Duration,
    path: &std::path::Path,
) -> Result<usize, NetnsError> {
    let l = &lab.topo.links[link];
    let mut ports = Vec::new();
    for (k, end) in [(0, l.a), (1, l.b)] {
        let port = match end {
            End::Host(h) => {
                let ns = lab.state.host(&lab.topo.hosts[h].name)?.netns.clone();
                dataplane::netns::in_netns(&ns, || dataplane::AfPacketPort::open("eth0"))
                    .map_err(|e| NetnsError::Capture(e.to_string()))?
            }
            End::Switch { .. } => dataplane::AfPacketPort::open(&ifname(&lab.topo, link, k)),
        }
        .map_err(|e| NetnsError::Capture(e.to_string()))?;
        ports.push(port);
    }
    let frames = crate::capture::record(&mut ports, duration);
    crate::capture::write_pcap(path, &frames).map_err(NetnsError::Capture)
}

/// Ping-all in namespaces: brings the lab up (unless it is up), starts every switch, pings
/// every pair, stops the switches and takes the lab down (if it brought it up).
pub fn ping_all(topo: &Topology) -> Result<PingReport, NetnsError> {
    let lab = NetnsLab::up(topo)?;
    let switches = NetnsSwitches::start(topo, false, None)?;
    // Let every AF_PACKET socket settle before the first echo.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut report = lab.ping_all();
    report.switches = switches.counters();
    switches.stop()?;
    lab.down()?;
    Ok(report)
}

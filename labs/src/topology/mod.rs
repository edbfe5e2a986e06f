//! Lab topologies: switches, hosts and the links between them, read from one YAML file
//! (`deploy/labs/*.yaml`) and checked before anything runs.
//!
//! ```yaml
//! name: leaf-spine
//! defaults:
//!   program: ../../p4/programs/fabric.p4    # relative to this file
//!   tables: generated                       # routes from the topology (`pisa lab tables`)
//!   target: tofino1
//!   link: "rate=10G,delay=1us"              # dataplane::LinkConfig syntax
//! switches:
//!   - { name: leaf1 }                       # program, tables, target, pipes, mac, ipv4: per switch
//! hosts:
//!   - { name: h1, ipv4: 10.0.1.10/24 }      # mac, gateway, rdma: optional
//! links:
//!   - { a: h1, b: "leaf1:0" }               # HOST or SWITCH:DEVPORT (a number or PIPE/PORT)
//!   - { a: "leaf1:8", b: "spine1:0", link: "rate=40G", up: true }
//! ```
//!
//! [`Topology::load`] resolves names, fills defaults (MACs derived from positions, the gateway
//! as the first other address of the host's subnet) and refuses a bad file with
//! `FILE:LINE:COLUMN: what is wrong` ([`TopologyError`]): an unknown node, a device port used
//! twice, a host cabled twice or not at all, a link to nowhere, bad addresses or link settings.
//! Whether each program compiles and fits is checked when a driver builds the switches
//! ([`crate::build`]), with the same file positions.

pub mod file;

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use dataplane::LinkConfig;
use pipeline::ir::Target;

use file::{At, TopologyFile};

/// A topology file that cannot be used: where, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", .file.display())]
pub struct TopologyError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (0 when the whole file is meant).
    pub line: u64,
    /// 1-based column.
    pub column: u64,
    /// What is wrong.
    pub message: String,
}

/// Where a table state comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TablesSource {
    /// No table state: the program's defaults.
    None,
    /// Generated from the topology ([`crate::routes`]).
    Generated,
    /// A table-state file.
    File(PathBuf),
}

/// One switch, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchSpec {
    pub name: String,
    pub program: PathBuf,
    pub tables: TablesSource,
    pub target: Target,
    /// Hardware pipes (None: the program's).
    pub pipes: Option<u16>,
    /// The router MAC.
    pub mac: [u8; 6],
    /// Its own IPv4 address, if it has one (a service switch's): generated routes reach it
    /// like a host's ([`crate::routes`]).
    pub ipv4: Option<Ipv4Addr>,
    /// Where it is in the file.
    pub line: u64,
}

/// One host, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSpec {
    pub name: String,
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub prefix: u8,
    pub gateway: Ipv4Addr,
    pub rdma: bool,
    /// The link it is cabled to (index into [`Topology::links`]).
    pub link: usize,
}

/// One end of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// A host (index into [`Topology::hosts`]).
    Host(usize),
    /// A switch's device port.
    Switch { switch: usize, devport: u16 },
}

/// One link, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    pub a: End,
    pub b: End,
    /// Settings applied to both directions (each end sends with them).
    pub config: LinkConfig,
    pub up: bool,
    /// Where it is in the file.
    pub line: u64,
}

impl LinkSpec {
    /// The fault-injection seed of end `end` (0: a, 1: b) of link number `link`: the link's
    /// seed spread so that no two ends of a topology draw the same random stream. Both drivers
    /// seed link ends with it.
    pub fn end_seed(&self, link: usize, end: usize) -> u64 {
        self.config.seed ^ ((2 * link + end) as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }

    /// The other end.
    pub fn peer(&self, end: End) -> End {
        if self.a == end {
            self.b
        } else {
            self.a
        }
    }
}

/// A checked topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Topology {
    pub name: String,
    /// Prefix of namespace-driver interface names.
    pub ifprefix: String,
    pub mtu: u32,
    pub switches: Vec<SwitchSpec>,
    pub hosts: Vec<HostSpec>,
    pub links: Vec<LinkSpec>,
    /// The file it came from (`<memory>` for text).
    pub file: PathBuf,
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Host(h) => write!(f, "host #{h}"),
            End::Switch { switch, devport } => write!(f, "switch #{switch} port {devport}"),
        }
    }
}

impl Topology {
    /// Reads and checks a topology file.
    pub fn load(path: &Path) -> Result<Topology, TopologyError> {
        let text = std::fs::read_to_string(path).map_err(|e| TopologyError {
            file: path.to_path_buf(),
            line: 0,
            column: 0,
            message: format!("cannot read: {e}"),
        })?;
        Topology::from_yaml(&text, path)
    }

    /// Checks topology text; relative paths in it are relative to `path`'s folder.
    pub fn from_yaml(text: &str, path: &Path) -> Result<Topology, TopologyError> {
        let raw: TopologyFile = serde_saphyr::from_str(text).map_err(|e| {
            let (line, column) = e.location().map_or((0, 0), |l| (l.line(), l.column()));
            TopologyError {
                file: path.to_path_buf(),
                line,
                column,
                // The message for the file's author (its location is ours to print), not
                // serde-saphyr's advice to the Rust programmer.
                message: serde_saphyr::MessageFormatter::format_message(
                    &serde_saphyr::UserMessageFormatter,
                    &e,
                )
                .into_owned(),
            }
        })?;
        Resolver::new(path).resolve(raw)
    }

    /// The name of an end, as the file writes it (`h1`, `leaf1:3`).
    pub fn end_name(&self, end: End) -> String {
        match end {
            End::Host(h) => self.hosts[h].name.clone(),
            End::Switch { switch, devport } => format!("{}:{devport}", self.switches[switch].name),
        }
    }

    /// A link by its name (`a~b` as [`Topology::link_name`] writes it, or either end's name).
    pub fn find_link(&self, name: &str) -> Option<usize> {
        (0..self.links.len()).find(|&i| {
            let l = &self.links[i];
            let (a, b) = (self.end_name(l.a), self.end_name(l.b));
            name == self.link_name(i) || name == format!("{b}~{a}") || name == a || name == b
        })
    }

    /// `a~b`.
    pub fn link_name(&self, i: usize) -> String {
        let l = &self.links[i];
        format!("{}~{}", self.end_name(l.a), self.end_name(l.b))
    }

    /// The switch a host is cabled to, with the device port, if it is cabled to a switch.
    pub fn host_attachment(&self, host: usize) -> Option<(usize, u16)> {
        match self.links[self.hosts[host].link].peer(End::Host(host)) {
            End::Switch { switch, devport } => Some((switch, devport)),
            End::Host(_) => None,
        }
    }

    /// The switch's index by name.
    pub fn switch_index(&self, name: &str) -> Option<usize> {
        self.switches.iter().position(|s| s.name == name)
    }

    /// The host's index by name.
    pub fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }
}

/// Switches one topology may hold: as many as `lab generate` makes at most (250 leaves and
/// up to 127 spines), well under the memory a switch takes (~3 MB) times a count that would
/// exhaust the machine.
pub const MAX_SWITCHES: usize = 512;

/// Links (switch–switch and switch–host) one topology may hold. An in-memory link costs a few
/// hundred bytes before any frame flows (its channels grow with the frames in flight:
/// `dataplane::mem`); what bounds a lab is the switches' memory. The shipped 1,024-host fat
/// tree (k = 16) has 3,072 links; past 4,096 a lab is refused where the file says so.
pub const MAX_LINKS: usize = 4096;

/// The checks and defaults of [`Topology::from_yaml`].
struct Resolver {
    file: PathBuf,
    dir: PathBuf,
}

impl Resolver {
    fn new(path: &Path) -> Resolver {
        Resolver {
            file: path.to_path_buf(),
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    fn err<T>(&self, at: &At<T>, message: impl Into<String>) -> TopologyError {
        TopologyError {
            file: self.file.clone(),
            line: at.line,
            column: at.column,
            message: message.into(),
        }
    }

    fn resolve(&self, raw: TopologyFile) -> Result<Topology, TopologyError> {
        let name = raw.name.item.clone();
        let simple = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        };
        if !simple(&name) || name.len() > 32 {
            return Err(self.err(
                &raw.name,
                "name: use 1-32 lowercase letters, digits or '-', not starting with '-'",
            ));
        }
        let ifprefix = match &raw.ifprefix {
            Some(p) if p.item.is_empty() || p.item.len() > 5 || !simple(&p.item) => {
                return Err(self.err(p, "ifprefix: use 1-5 lowercase letters, digits or '-'"))
            }
            Some(p) => p.item.clone(),
            None => name
                .chars()
                .filter(char::is_ascii_alphanumeric)
                .take(4)
                .collect(),
        };
        let d = &raw.defaults;
        let default_link = match &d.link {
            Some(l) => l
                .item
                .parse::<LinkConfig>()
                .map_err(|e| self.err(l, format!("defaults.link: {e}")))?,
            None => LinkConfig::default(),
        };
        let mtu = d.mtu.as_ref().map_or(1500, |m| m.item);
        if !(68..=9216).contains(&mtu) {
            let at = d.mtu.as_ref().expect("mtu given");
            return Err(self.err(at, "defaults.mtu: between 68 and 9216"));
        }
        let switches = self.switches(&raw)?;
        let (hosts, host_at) = self.hosts(&raw)?;
        let mut topo = Topology {
            name,
            ifprefix,
            mtu,
            switches,
            hosts,
            links: Vec::new(),
            file: self.file.clone(),
        };
        self.links(&raw, &default_link, &mut topo)?;
        for (i, h) in topo.hosts.iter().enumerate() {
            if h.link == usize::MAX {
                return Err(self.err(&host_at[i], format!("host {}: no link cables it", h.name)));
            }
        }
        Ok(topo)
    }

    fn switches(&self, raw: &TopologyFile) -> Result<Vec<SwitchSpec>, TopologyError> {
        if let Some(at) = raw.switches.get(MAX_SWITCHES) {
            return Err(self.err(
                at,
                format!(
                    "more than {MAX_SWITCHES} switches: a lab holds at most {MAX_SWITCHES} (each \
                     is a whole pipeline in memory, megabytes apiece)"
                ),
            ));
        }
        let d = &raw.defaults;
        let mut out: Vec<SwitchSpec> = Vec::new();
        let mut macs: HashMap<[u8; 6], String> = HashMap::new();
        for (i, at) in raw.switches.iter().enumerate() {
            let s = &at.item;
            check_node_name(&s.name).map_err(|m| self.err(at, format!("switch: {m}")))?;
            if out.iter().any(|o| o.name == s.name) {
                return Err(self.err(at, format!("switch {}: named twice", s.name)));
            }
            let program = s
                .program
                .clone()
                .or_else(|| d.program.as_ref().map(|p| p.item.clone()))
                .ok_or_else(|| {
                    self.err(
                        at,
                        format!("switch {}: no program (nor defaults.program)", s.name),
                    )
                })?;
            let tables = match s
                .tables
                .clone()
                .or_else(|| d.tables.as_ref().map(|t| t.item.clone()))
            {
                None => TablesSource::None,
                Some(t) if t == "generated" => TablesSource::Generated,
                Some(t) => TablesSource::File(self.dir.join(t)),
            };
            let target_text = s
                .target
                .clone()
                .or_else(|| d.target.as_ref().map(|t| t.item.clone()))
                .unwrap_or_else(|| "tofino1".into());
            let target = match target_text.as_str() {
                "tofino1" | "tofino" | "tna" => Target::Tofino1,
                "tofino2" | "t2na" => Target::Tofino2,
                t => {
                    return Err(self.err(
                        at,
                        format!(
                            "switch {}: unknown target {t:?} (tofino1 or tofino2)",
                            s.name
                        ),
                    ))
                }
            };
            let pipes = s.pipes.or(d.pipes.as_ref().map(|p| p.item));
            if let Some(p) = pipes.filter(|p| !(1..=4).contains(p)) {
                return Err(self.err(at, format!("switch {}: pipes {p}: 1 to 4", s.name)));
            }
            let mac = match &s.mac {
                Some(m) => parse_unicast_mac(m)
                    .map_err(|e| self.err(at, format!("switch {}: mac: {e}", s.name)))?,
                None => [0x02, 0x5e, 0, 0, (i >> 8) as u8, i as u8],
            };
            if let Some(other) = macs.insert(mac, s.name.clone()) {
                return Err(self.err(at, format!("switch {}: mac is {other}'s too", s.name)));
            }
            let ipv4 = match &s.ipv4 {
                Some(a) => Some(a.parse::<Ipv4Addr>().map_err(|_| {
                    self.err(
                        at,
                        format!("switch {}: ipv4 {a:?} is not an IPv4 address", s.name),
                    )
                })?),
                None => None,
            };
            out.push(SwitchSpec {
                name: s.name.clone(),
                program: self.dir.join(program),
                tables,
                target,
                pipes,
                mac,
                ipv4,
                line: at.line,
            });
        }
        Ok(out)
    }

    fn hosts(&self, raw: &TopologyFile) -> Result<(Vec<HostSpec>, Vec<At<()>>), TopologyError> {
        let mut out: Vec<HostSpec> = Vec::new();
        let mut ats = Vec::new();
        let mut ips: HashMap<Ipv4Addr, String> = HashMap::new();
        for (i, at) in raw.hosts.iter().enumerate() {
            let h = &at.item;
            let e = |m: String| self.err(at, format!("host {}: {m}", h.name));
            check_node_name(&h.name).map_err(|m| self.err(at, format!("host: {m}")))?;
            if out.iter().any(|o| o.name == h.name)
                || raw.switches.iter().any(|s| s.item.name == h.name)
            {
                return Err(e(
                    "named twice (host and switch names share one space)".into()
                ));
            }
            let (ip, prefix) = parse_cidr(&h.ipv4).map_err(|m| e(format!("ipv4: {m}")))?;
            if let Some(other) = ips.insert(ip, h.name.clone()) {
                return Err(e(format!("ipv4 {ip} is {other}'s too")));
            }
            if let Some(s) = raw
                .switches
                .iter()
                .find(|s| s.item.ipv4.as_deref().and_then(|a| a.parse().ok()) == Some(ip))
            {
                return Err(e(format!("ipv4 {ip} is switch {}'s too", s.item.name)));
            }
            let gateway = match &h.gateway {
                Some(g) => g
                    .parse::<Ipv4Addr>()
                    .map_err(|_| e(format!("gateway {g:?} is not an IPv4 address")))?,
                None => default_gateway(ip, prefix),
            };
            if gateway == ip {
                return Err(e("the gateway is the host's own address".into()));
            }
            let mac = match &h.mac {
                Some(m) => parse_unicast_mac(m).map_err(|m| e(format!("mac: {m}")))?,
                None => {
                    let n = i as u32 + 1;
                    [0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]
                }
            };
            out.push(HostSpec {
                name: h.name.clone(),
                mac,
                ip,
                prefix,
                gateway,
                rdma: h.rdma,
                link: usize::MAX,
            });
            ats.push(At {
                item: (),
                line: at.line,
                column: at.column,
            });
        }
        Ok((out, ats))
    }

    fn links(
        &self,
        raw: &TopologyFile,
        default_link: &LinkConfig,
        topo: &mut Topology,
    ) -> Result<(), TopologyError> {
        if let Some(at) = raw.links.get(MAX_LINKS) {
            return Err(self.err(
                at,
                format!(
                    "more than {MAX_LINKS} links: a lab holds at most {MAX_LINKS} (each cabled \
                     port buffers about 1 MB)"
                ),
            ));
        }
        let mut used: HashMap<End, usize> = HashMap::new();
        for (i, at) in raw.links.iter().enumerate() {
            let l = &at.item;
            let a = self.end(at, &l.a, topo)?;
            let b = self.end(at, &l.b, topo)?;
            if a == b {
                return Err(self.err(
                    at,
                    format!("link {} ~ {}: both ends are the same", l.a, l.b),
                ));
            }
            if matches!((a, b), (End::Host(_), End::Host(_))) {
                return Err(self.err(
                    at,
                    format!("link {} ~ {}: a host is cabled to a switch port", l.a, l.b),
                ));
            }
            for (end, text) in [(a, &l.a), (b, &l.b)] {
                if let Some(prev) = used.insert(end, i) {
                    let prev_line = raw.links[prev].line;
                    return Err(self.err(
                        at,
                        format!("{text} is already cabled (the link on line {prev_line})"),
                    ));
                }
            }
            let config = match &l.link {
                Some(t) => t
                    .parse::<LinkConfig>()
                    .map_err(|e| self.err(at, format!("link {} ~ {}: {e}", l.a, l.b)))?,
                None => default_link.clone(),
            };
            for end in [a, b] {
                if let End::Host(h) = end {
                    topo.hosts[h].link = i;
                }
            }
            topo.links.push(LinkSpec {
                a,
                b,
                config,
                up: l.up.unwrap_or(true),
                line: at.line,
            });
        }
        Ok(())
    }

    fn end<T>(&self, at: &At<T>, text: &str, topo: &Topology) -> Result<End, TopologyError> {
        match text.split_once(':') {
            Some((sw, port)) => {
                let switch = topo.switch_index(sw).ok_or_else(|| {
                    let hint = if topo.host_index(sw).is_some() {
                        " (a host has one interface: write its name alone)"
                    } else {
                        ""
                    };
                    self.err(at, format!("{text}: no switch {sw:?}{hint}"))
                })?;
                let devport = pipeline::devport::parse(port)
                    .map_err(|e| self.err(at, format!("{text}: {e}")))?;
                if let Some(p) = topo.switches[switch].pipes {
                    let pipe = pipeline::devport::pipe_of(devport);
                    if pipe >= p {
                        return Err(self.err(
                            at,
                            format!("{text}: device port {devport} is on pipe {pipe}; the switch has {p} pipe(s)"),
                        ));
                    }
                }
                Ok(End::Switch { switch, devport })
            }
            None => {
                if let Some(h) = topo.host_index(text) {
                    return Ok(End::Host(h));
                }
                let hint = if topo.switch_index(text).is_some() {
                    " (name the switch's device port: SWITCH:PORT)"
                } else {
                    ""
                };
                Err(self.err(at, format!("{text}: no such host{hint}")))
            }
        }
    }
}

fn check_node_name(s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= 15
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name {s:?}: use 1-15 lowercase letters, digits or '-', not starting with '-'"
        ))
    }
}

/// `10.0.1.1/24`.
pub fn parse_cidr(s: &str) -> Result<(Ipv4Addr, u8), String> {
    let (a, p) = s
        .split_once('/')
        .ok_or_else(|| format!("{s:?}: expected ADDRESS/PREFIX"))?;
    let ip: Ipv4Addr = a
        .trim()
        .parse()
        .map_err(|_| format!("{a:?} is not an IPv4 address"))?;
    let prefix: u8 = p
        .trim()
        .parse()
        .ok()
        .filter(|p| (1..=32).contains(p))
        .ok_or_else(|| format!("{p:?} is not a prefix length (1..=32)"))?;
    Ok((ip, prefix))
}

/// The first address of the subnet (after the network address) that is not `ip`.
fn default_gateway(ip: Ipv4Addr, prefix: u8) -> Ipv4Addr {
    let mask = if prefix >= 32 { !0 } else { !(!0u32 >> prefix) };
    let net = u32::from(ip) & mask;
    let first = Ipv4Addr::from(net.wrapping_add(1));
    if first == ip || prefix >= 31 {
        Ipv4Addr::from(net.wrapping_add(2))
    } else {
        first
    }
}

/// A MAC written `02:00:00:00:00:01` that is not a group address.
pub fn parse_unicast_mac(s: &str) -> Result<[u8; 6], String> {
    let m: dataplane::lab::Mac = s.parse()?;
    if m.0[0] & 1 != 0 {
        return Err(format!("{s} is a group (multicast) address"));
    }
    Ok(m.0)
}

/// `02:00:00:00:00:01`.
pub fn mac_text(m: [u8; 6]) -> String {
    dataplane::lab::Mac(m).to_string()
}

#[cfg(test)]
mod tests;

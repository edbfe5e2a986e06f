//! Lab topologies: a YAML file ([`Lab`]) describing hosts, each in its own network namespace
//! with a veth pair to a switch-side interface, and the functions that build it
//! ([`lab_up`]), tear down exactly what was built ([`lab_down`]) and run commands on a host
//! ([`lab_exec`]).
//!
//! Where things live:
//! - Each host is a network namespace named `pisa-<lab>-<host>` holding the host end of its
//!   veth (default name `eth0`), its addresses, static neighbours and routes.
//! - The switch-side veth ends stay in the **root namespace**, so `pisa run --port
//!   0=afpacket:<switch_if>` attaches without entering a namespace. Their names default to
//!   `<ifprefix><port>` (at most 15 bytes); IPv6 is disabled on them so the kernel sends nothing
//!   into the switch by itself.
//! - Every object created is recorded, as it is created, in `/run/pisa/labs/<lab>.json`;
//!   `lab_down` deletes only what that file lists (checking interface indexes, so an
//!   interface re-created by someone else is left alone), even after a half-finished
//!   `lab_up`. Nothing is created if any name is already taken.
//!
//! Uses the `ip` (iproute2) and `ethtool` commands.

use std::collections::HashSet;
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::netns::{ip, link_exists, list_netns, run_cmd, CmdError};
use crate::spec::{check_ifname, PortSpec};

/// Where lab state files live by default.
pub const DEFAULT_STATE_DIR: &str = "/run/pisa/labs";

/// Errors of lab handling.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The YAML does not parse or does not match the schema.
    #[error("lab file: {0}")]
    Yaml(String),
    /// A value in the lab file is wrong.
    #[error("lab {lab}: {field}: {reason}")]
    Invalid {
        /// Lab name.
        lab: String,
        /// Which field (e.g. `hosts[1].ipv4[0]`).
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// A name the lab would create is already taken.
    #[error("lab {lab}: {kind} {name:?} already exists; pick other names or run `pisa lab down` for the lab that owns it")]
    Exists {
        /// Lab name.
        lab: String,
        /// "network namespace" or "interface".
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// The lab is already up (a state file exists).
    #[error("lab {0} is already up (state file {1})")]
    AlreadyUp(String, PathBuf),
    /// No state file for the lab.
    #[error("lab {0} is not up (no state file {1})")]
    NotUp(String, PathBuf),
    /// The lab has no host of that name.
    #[error("lab {lab} has no host {host:?}")]
    NoSuchHost {
        /// Lab name.
        lab: String,
        /// Host name.
        host: String,
    },
    /// A command failed.
    #[error(transparent)]
    Cmd(#[from] CmdError),
    /// Reading or writing the state file failed.
    #[error("lab state file {path}: {source}")]
    State {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Setting up failed and cleaning up after it failed too.
    #[error("{error}; cleaning up afterwards also failed: {cleanup}")]
    CleanupFailed {
        /// The first error.
        error: Box<LabError>,
        /// The cleanup error.
        cleanup: Box<LabError>,
    },
}

/// A MAC address written `02:00:00:00:01:01`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mac(pub [u8; 6]);

impl FromStr for Mac {
    type Err = String;
    fn from_str(s: &str) -> Result<Mac, String> {
        let mut out = [0u8; 6];
        let mut parts = s.split(':');
        for b in out.iter_mut() {
            let p = parts.next().ok_or("expected six ':'-separated hex bytes")?;
            if p.len() != 2 {
                return Err("expected six ':'-separated two-digit hex bytes".into());
            }
            *b = u8::from_str_radix(p, 16).map_err(|_| format!("{p:?} is not hex"))?;
        }
        if parts.next().is_some() {
            return Err("more than six bytes".into());
        }
        Ok(Mac(out))
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// An address with prefix length, `10.0.1.1/24` or `fd00:1::1/64`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IfAddr {
    /// The address.
    pub addr: IpAddr,
    /// Prefix length.
    pub prefix: u8,
}

impl FromStr for IfAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<IfAddr, String> {
        let (a, p) = s.split_once('/').ok_or("expected ADDRESS/PREFIX")?;
        let addr: IpAddr = a
            .parse()
            .map_err(|_| format!("{a:?} is not an IP address"))?;
        let prefix: u8 = p
            .parse()
            .map_err(|_| format!("{p:?} is not a prefix length"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        if prefix > max {
            return Err(format!("prefix /{prefix} is longer than {max}"));
        }
        Ok(IfAddr { addr, prefix })
    }
}

impl fmt::Display for IfAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// A static route on a host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    /// Destination: `default` or a prefix like `10.0.0.0/16`.
    pub to: String,
    /// Next hop.
    pub via: String,
}

/// A static neighbour (ARP / NDP entry) on a host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Neighbor {
    /// The neighbour's IP address.
    pub ip: String,
    /// Its MAC address.
    pub mac: String,
}

fn default_host_if() -> String {
    "eth0".to_string()
}
fn default_true() -> bool {
    true
}
fn default_ifprefix() -> String {
    "pisa".to_string()
}

/// One host of a lab.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Host name (letters, digits, `-`; at most 15 bytes).
    pub name: String,
    /// The switch port this host is cabled to.
    pub port: u16,
    /// Switch-side interface name (root namespace); default `<ifprefix><port>`.
    #[serde(default)]
    pub switch_if: Option<String>,
    /// Interface name inside the host's namespace.
    #[serde(default = "default_host_if")]
    pub host_if: String,
    /// The host interface's MAC address (random when absent).
    #[serde(default)]
    pub mac: Option<String>,
    /// The switch-side interface's MAC address (random when absent).
    #[serde(default)]
    pub switch_mac: Option<String>,
    /// MTU of both veth ends (default: the lab's `mtu`, else 1500).
    #[serde(default)]
    pub mtu: Option<u32>,
    /// IPv4 addresses with prefix.
    #[serde(default)]
    pub ipv4: Vec<String>,
    /// IPv6 addresses with prefix (added without duplicate address detection).
    #[serde(default)]
    pub ipv6: Vec<String>,
    /// Static routes.
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Static neighbours.
    #[serde(default)]
    pub neighbors: Vec<Neighbor>,
    /// Turn checksum and segmentation offloads off on both veth ends, so every frame the
    /// switch sees is a complete wire frame with correct checksums.
    #[serde(default = "default_true")]
    pub offloads_off: bool,
    /// Link model of this switch port, in [`crate::LinkConfig`] syntax (for example
    /// `rate=10G,delay=5us,loss=0.001`); the switch applies it to the port. Not applied by
    /// `lab_up` itself (veth has no such knobs); recorded in the lab state for `pisa run`.
    #[serde(default)]
    pub link: Option<String>,
}

/// A veth pair with both ends in the root namespace: a cable between two switch ports (of
/// one switch or of two switches run by the same process).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wire {
    /// One end's interface name.
    pub a: String,
    /// The other end's.
    pub b: String,
    /// MTU of both ends (default: the lab's `mtu`, else 1500).
    #[serde(default)]
    pub mtu: Option<u32>,
}

/// A lab topology.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lab {
    /// Lab name (lowercase letters, digits, `-`; at most 32 bytes).
    pub name: String,
    /// Prefix of default switch-side interface names.
    #[serde(default = "default_ifprefix")]
    pub ifprefix: String,
    /// Default MTU.
    #[serde(default)]
    pub mtu: Option<u32>,
    /// The hosts.
    pub hosts: Vec<Host>,
    /// Switch-to-switch cables (multi-switch labs).
    #[serde(default)]
    pub wires: Vec<Wire>,
}

impl Lab {
    /// Parses and validates a lab file's text.
    pub fn from_yaml(text: &str) -> Result<Lab, LabError> {
        let lab: Lab = serde_saphyr::from_str(text).map_err(|e| LabError::Yaml(e.to_string()))?;
        lab.validate()?;
        Ok(lab)
    }

    /// Reads, parses and validates a lab file.
    pub fn load(path: &Path) -> Result<Lab, LabError> {
        let text = std::fs::read_to_string(path).map_err(|source| LabError::State {
            path: path.to_path_buf(),
            source,
        })?;
        Lab::from_yaml(&text)
    }

    /// The namespace of host `host`.
    pub fn netns_name(&self, host: &str) -> String {
        format!("pisa-{}-{}", self.name, host)
    }

    /// The switch-side interface of `h`.
    pub fn switch_if(&self, h: &Host) -> String {
        h.switch_if
            .clone()
            .unwrap_or_else(|| format!("{}{}", self.ifprefix, h.port))
    }

    fn invalid(&self, field: String, reason: impl Into<String>) -> LabError {
        LabError::Invalid {
            lab: self.name.clone(),
            field,
            reason: reason.into(),
        }
    }

    /// Checks names, addresses and uniqueness.
    pub fn validate(&self) -> Result<(), LabError> {
        let simple = |s: &str| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !s.starts_with('-')
        };
        if !simple(&self.name) || self.name.len() > 32 {
            return Err(self.invalid(
                "name".into(),
                "use 1-32 lowercase letters, digits or '-', not starting with '-'",
            ));
        }
        if self.ifprefix.is_empty()
            || self.ifprefix.len() > 10
            || !self
                .ifprefix
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(self.invalid("ifprefix".into(), "use 1-10 letters, digits or '-'"));
        }
        if self.hosts.is_empty() && self.wires.is_empty() {
            return Err(self.invalid("hosts".into(), "a lab needs at least one host"));
        }
        let mut names = HashSet::new();
        let mut ports = HashSet::new();
        let mut ifs = HashSet::new();
        for (i, h) in self.hosts.iter().enumerate() {
            let f = |s: &str| format!("hosts[{i}].{s}");
            if !simple(&h.name) || h.name.len() > 15 {
                return Err(self.invalid(f("name"), "use 1-15 lowercase letters, digits or '-'"));
            }
            if !names.insert(h.name.as_str()) {
                return Err(self.invalid(f("name"), format!("duplicate host {:?}", h.name)));
            }
            if !ports.insert(h.port) {
                return Err(self.invalid(f("port"), format!("port {} used twice", h.port)));
            }
            let sw = self.switch_if(h);
            check_ifname("lab", &sw).map_err(|e| self.invalid(f("switch_if"), e.to_string()))?;
            if !ifs.insert(sw.clone()) {
                return Err(self.invalid(f("switch_if"), format!("{sw:?} used twice")));
            }
            check_ifname("lab", &h.host_if)
                .map_err(|e| self.invalid(f("host_if"), e.to_string()))?;
            for (k, m) in [("mac", &h.mac), ("switch_mac", &h.switch_mac)] {
                if let Some(m) = m {
                    let mac: Mac = m.parse().map_err(|e: String| self.invalid(f(k), e))?;
                    if mac.0[0] & 1 != 0 {
                        return Err(
                            self.invalid(f(k), "a multicast MAC cannot be an interface address")
                        );
                    }
                }
            }
            if let Some(mtu) = h.mtu.or(self.mtu) {
                if !(68..=65535).contains(&mtu) {
                    return Err(self.invalid(f("mtu"), "MTU must be between 68 and 65535"));
                }
            }
            for (j, a) in h.ipv4.iter().enumerate() {
                let a: IfAddr = a
                    .parse()
                    .map_err(|e| self.invalid(f(&format!("ipv4[{j}]")), e))?;
                if !a.addr.is_ipv4() {
                    return Err(self.invalid(f(&format!("ipv4[{j}]")), "not an IPv4 address"));
                }
            }
            for (j, a) in h.ipv6.iter().enumerate() {
                let a: IfAddr = a
                    .parse()
                    .map_err(|e| self.invalid(f(&format!("ipv6[{j}]")), e))?;
                if !a.addr.is_ipv6() {
                    return Err(self.invalid(f(&format!("ipv6[{j}]")), "not an IPv6 address"));
                }
            }
            for (j, r) in h.routes.iter().enumerate() {
                let via: IpAddr = r.via.parse().map_err(|_| {
                    self.invalid(f(&format!("routes[{j}].via")), "not an IP address")
                })?;
                if r.to != "default" {
                    let to: IfAddr =
                        r.to.parse()
                            .map_err(|e| self.invalid(f(&format!("routes[{j}].to")), e))?;
                    if to.addr.is_ipv4() != via.is_ipv4() {
                        return Err(self.invalid(
                            f(&format!("routes[{j}]")),
                            "destination and next hop are of different IP versions",
                        ));
                    }
                }
            }
            if let Some(l) = &h.link {
                l.parse::<crate::link::LinkConfig>()
                    .map_err(|e| self.invalid(f("link"), e.to_string()))?;
            }
            for (j, n) in h.neighbors.iter().enumerate() {
                n.ip.parse::<IpAddr>().map_err(|_| {
                    self.invalid(f(&format!("neighbors[{j}].ip")), "not an IP address")
                })?;
                n.mac
                    .parse::<Mac>()
                    .map_err(|e| self.invalid(f(&format!("neighbors[{j}].mac")), e))?;
            }
        }
        for (i, w) in self.wires.iter().enumerate() {
            for (k, name) in [("a", &w.a), ("b", &w.b)] {
                let field = format!("wires[{i}].{k}");
                check_ifname("lab", name)
                    .map_err(|e| self.invalid(field.clone(), e.to_string()))?;
                if !ifs.insert(name.clone()) {
                    return Err(self.invalid(field, format!("{name:?} used twice")));
                }
            }
        }
        Ok(())
    }
}

/// One interface the lab created in the root namespace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedLink {
    /// Interface name.
    pub name: String,
    /// Its index when created (to avoid deleting a namesake created later by someone else).
    pub ifindex: u32,
}

/// One host of a running lab.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostState {
    /// Host name.
    pub name: String,
    /// Switch port.
    pub port: u16,
    /// Its network namespace.
    pub netns: String,
    /// Interface inside the namespace.
    pub host_if: String,
    /// Switch-side interface (root namespace).
    pub switch_if: String,
    /// Link model settings for this port ([`crate::LinkConfig`] syntax), if the lab sets one.
    #[serde(default)]
    pub link: Option<String>,
}

/// What a running lab consists of; saved as JSON in the state directory.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabState {
    /// Lab name.
    pub name: String,
    /// Network namespaces created.
    pub namespaces: Vec<String>,
    /// Root-namespace interfaces created.
    pub links: Vec<CreatedLink>,
    /// The hosts, once fully set up.
    pub hosts: Vec<HostState>,
}

impl LabState {
    /// The host named `host`.
    pub fn host(&self, host: &str) -> Result<&HostState, LabError> {
        self.hosts
            .iter()
            .find(|h| h.name == host)
            .ok_or_else(|| LabError::NoSuchHost {
                lab: self.name.clone(),
                host: host.to_string(),
            })
    }

    /// `(switch port, afpacket spec)` for every host, sorted by port: what `pisa run`
    /// attaches.
    pub fn port_specs(&self) -> Vec<(u16, PortSpec)> {
        let mut v: Vec<_> = self
            .hosts
            .iter()
            .map(|h| {
                (
                    h.port,
                    PortSpec::AfPacket {
                        ifname: h.switch_if.clone(),
                    },
                )
            })
            .collect();
        v.sort_by_key(|(p, _)| *p);
        v
    }

    /// Runs `argv` inside host `host`'s namespace and returns its output (whatever its exit
    /// status; check `status`).
    pub fn exec(&self, host: &str, argv: &[&str]) -> Result<Output, LabError> {
        let h = self.host(host)?;
        let mut args = vec!["netns", "exec", h.netns.as_str()];
        args.extend_from_slice(argv);
        std::process::Command::new("ip")
            .args(&args)
            .output()
            .map_err(|source| {
                LabError::Cmd(CmdError::Spawn {
                    cmd: format!("ip {}", args.join(" ")),
                    hint: "apt-get install iproute2",
                    source,
                })
            })
    }
}

/// The state file of lab `name` in `dir`.
pub fn state_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.json"))
}

fn save_state(dir: &Path, st: &LabState) -> Result<(), LabError> {
    let path = state_path(dir, &st.name);
    let err = |source| LabError::State {
        path: path.clone(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(err)?;
    let json = serde_json::to_vec_pretty(st).map_err(|e| err(std::io::Error::other(e)))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, json).map_err(err)?;
    std::fs::rename(&tmp, &path).map_err(err)
}

/// Reads the state of a running lab.
pub fn load_state(dir: &Path, name: &str) -> Result<LabState, LabError> {
    let path = state_path(dir, name);
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(LabError::NotUp(name.to_string(), path))
        }
        Err(source) => return Err(LabError::State { path, source }),
    };
    serde_json::from_slice(&text).map_err(|e| LabError::State {
        path,
        source: std::io::Error::other(e),
    })
}

fn ifindex(name: &str) -> Result<u32, LabError> {
    // `ip -o link show dev X` prints "IDX: X...".
    let out = ip(&["-o", "link", "show", "dev", name])?;
    out.split(':')
        .next()
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            LabError::Cmd(CmdError::Failed {
                cmd: format!("ip -o link show dev {name}"),
                status: "unparsable output".into(),
                stderr: out.clone(),
            })
        })
}

fn set_offloads_off(netns: Option<&str>, ifname: &str) -> Result<(), LabError> {
    let features = [
        "rx", "off", "tx", "off", "sg", "off", "tso", "off", "gso", "off", "gro", "off",
    ];
    let mut args: Vec<&str> = Vec::new();
    let prog = match netns {
        Some(ns) => {
            args.extend(["netns", "exec", ns, "ethtool", "-K", ifname]);
            "ip"
        }
        None => {
            args.extend(["-K", ifname]);
            "ethtool"
        }
    };
    args.extend(features);
    match run_cmd(prog, &args) {
        Ok(_) => Ok(()),
        // `ip netns exec` reports a missing ethtool as a failure with this text.
        Err(CmdError::Failed { stderr, .. }) if stderr.contains("No such file") => {
            Err(LabError::Cmd(CmdError::Spawn {
                cmd: "ethtool".into(),
                hint: "apt-get install ethtool",
                source: std::io::Error::new(std::io::ErrorKind::NotFound, stderr),
            }))
        }
        Err(e) => Err(e.into()),
    }
}

/// A switch-side interface: no addresses, no IPv6 chatter, offloads off, up.
fn quiet_switch_if(name: &str, mtu: &str, offloads_off: bool) -> Result<(), LabError> {
    ip(&[
        "link",
        "set",
        "dev",
        name,
        "mtu",
        mtu,
        "addrgenmode",
        "none",
    ])?;
    // Best effort: fails harmlessly when IPv6 is disabled in the kernel.
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
    if offloads_off {
        set_offloads_off(None, name)?;
    }
    ip(&["link", "set", "dev", name, "up"])?;
    Ok(())
}

fn setup_wire(lab: &Lab, w: &Wire, st: &mut LabState, dir: &Path) -> Result<(), LabError> {
    let mtu = w.mtu.or(lab.mtu).unwrap_or(1500).to_string();
    ip(&[
        "link", "add", "dev", &w.a, "type", "veth", "peer", "name", &w.b,
    ])?;
    // Deleting one end of a veth pair deletes both.
    st.links.push(CreatedLink {
        name: w.a.clone(),
        ifindex: ifindex(&w.a)?,
    });
    save_state(dir, st)?;
    quiet_switch_if(&w.a, &mtu, true)?;
    quiet_switch_if(&w.b, &mtu, true)
}

fn setup_host(lab: &Lab, h: &Host, st: &mut LabState, dir: &Path) -> Result<(), LabError> {
    let ns = lab.netns_name(&h.name);
    let sw = lab.switch_if(h);
    let mtu = h.mtu.or(lab.mtu).unwrap_or(1500).to_string();

    ip(&["netns", "add", &ns])?;
    st.namespaces.push(ns.clone());
    save_state(dir, st)?;

    ip(&[
        "link", "add", "dev", &sw, "type", "veth", "peer", "name", &h.host_if, "netns", &ns,
    ])?;
    st.links.push(CreatedLink {
        name: sw.clone(),
        ifindex: ifindex(&sw)?,
    });
    save_state(dir, st)?;

    // Switch side: no addresses, no IPv6 chatter, up.
    if let Some(m) = &h.switch_mac {
        ip(&["link", "set", "dev", &sw, "address", m])?;
    }
    quiet_switch_if(&sw, &mtu, h.offloads_off)?;

    // Host side.
    ip(&["-n", &ns, "link", "set", "dev", "lo", "up"])?;
    ip(&["-n", &ns, "link", "set", "dev", &h.host_if, "mtu", &mtu])?;
    if let Some(m) = &h.mac {
        ip(&["-n", &ns, "link", "set", "dev", &h.host_if, "address", m])?;
    }
    if h.offloads_off {
        set_offloads_off(Some(&ns), &h.host_if)?;
    }
    for a in &h.ipv4 {
        ip(&["-n", &ns, "addr", "add", a, "dev", &h.host_if])?;
    }
    for a in &h.ipv6 {
        ip(&[
            "-n", &ns, "-6", "addr", "add", a, "dev", &h.host_if, "nodad",
        ])?;
    }
    ip(&["-n", &ns, "link", "set", "dev", &h.host_if, "up"])?;
    for n in &h.neighbors {
        ip(&[
            "-n",
            &ns,
            "neigh",
            "replace",
            &n.ip,
            "lladdr",
            &n.mac,
            "dev",
            &h.host_if,
            "nud",
            "permanent",
        ])?;
    }
    for r in &h.routes {
        let fam = match r.via.parse::<IpAddr>() {
            Ok(IpAddr::V6(_)) => "-6",
            _ => "-4",
        };
        ip(&[
            "-n", &ns, fam, "route", "replace", &r.to, "via", &r.via, "dev", &h.host_if,
        ])?;
    }
    st.hosts.push(HostState {
        name: h.name.clone(),
        port: h.port,
        netns: ns,
        host_if: h.host_if.clone(),
        switch_if: sw,
        link: h.link.clone(),
    });
    save_state(dir, st)
}

/// Builds `lab` and records it in [`DEFAULT_STATE_DIR`]. See [`lab_up_in`].
pub fn lab_up(lab: &Lab) -> Result<LabState, LabError> {
    lab_up_in(lab, Path::new(DEFAULT_STATE_DIR))
}

/// Builds `lab`, recording what it creates in `state_dir/<name>.json`. Fails without
/// creating anything when a name is taken; on a later failure it removes what it had
/// created and returns the error.
pub fn lab_up_in(lab: &Lab, state_dir: &Path) -> Result<LabState, LabError> {
    lab.validate()?;
    let path = state_path(state_dir, &lab.name);
    if path.exists() {
        return Err(LabError::AlreadyUp(lab.name.clone(), path));
    }
    let existing: HashSet<String> = list_netns()?.into_iter().collect();
    for h in &lab.hosts {
        let ns = lab.netns_name(&h.name);
        if existing.contains(&ns) {
            return Err(LabError::Exists {
                lab: lab.name.clone(),
                kind: "network namespace",
                name: ns,
            });
        }
        let sw = lab.switch_if(h);
        if link_exists(&sw) {
            return Err(LabError::Exists {
                lab: lab.name.clone(),
                kind: "interface",
                name: sw,
            });
        }
    }
    for w in &lab.wires {
        for name in [&w.a, &w.b] {
            if link_exists(name) {
                return Err(LabError::Exists {
                    lab: lab.name.clone(),
                    kind: "interface",
                    name: name.clone(),
                });
            }
        }
    }
    let mut st = LabState {
        name: lab.name.clone(),
        ..LabState::default()
    };
    save_state(state_dir, &st)?;
    let mut failed = None;
    for h in &lab.hosts {
        if let Err(e) = setup_host(lab, h, &mut st, state_dir) {
            failed = Some(e);
            break;
        }
    }
    if failed.is_none() {
        for w in &lab.wires {
            if let Err(e) = setup_wire(lab, w, &mut st, state_dir) {
                failed = Some(e);
                break;
            }
        }
    }
    if let Some(e) = failed {
        return match teardown(&st, state_dir) {
            Ok(()) => Err(e),
            Err(c) => Err(LabError::CleanupFailed {
                error: Box::new(e),
                cleanup: Box::new(c),
            }),
        };
    }
    Ok(st)
}

/// The processes whose network namespace is `ns` (`ip netns pids`), this one excepted.
fn pids_in(ns: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    ip(&["netns", "pids", ns])
        .map(|out| {
            out.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .filter(|&p| p != me)
                .collect()
        })
        .unwrap_or_default()
}

/// Stops what still runs in namespace `ns` — what `lab exec` started there and left running,
/// such as `iperf3 -s -D` — so that removing the lab leaves no orphans: SIGTERM, then SIGKILL
/// for what is left after 2 s. Returns how many processes there were.
fn stop_processes_in(ns: &str) -> usize {
    let first = pids_in(ns);
    for &p in &first {
        // SAFETY: kill(2) with a pid read from `ip netns pids` and a valid signal number.
        unsafe { libc::kill(p, libc::SIGTERM) };
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    while !first.is_empty() && std::time::Instant::now() < deadline && !pids_in(ns).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for p in pids_in(ns) {
        // SAFETY: as above.
        unsafe { libc::kill(p, libc::SIGKILL) };
    }
    first.len()
}

fn teardown(st: &LabState, state_dir: &Path) -> Result<(), LabError> {
    let mut first_err = None;
    if let Ok(existing) = list_netns() {
        for ns in st.namespaces.iter().filter(|n| existing.contains(n)) {
            let n = stop_processes_in(ns);
            if n > 0 {
                tracing::info!("lab {}: stopped {n} process(es) in {ns}", st.name);
            }
        }
    }
    for l in &st.links {
        // Only delete the interface we created: same name and same index.
        match ifindex(&l.name) {
            Ok(idx) if idx == l.ifindex => {
                if let Err(e) = ip(&["link", "del", "dev", &l.name]) {
                    // Deleting the peer's namespace may have removed it meanwhile.
                    if link_exists(&l.name) {
                        first_err.get_or_insert(LabError::from(e));
                    }
                }
            }
            _ => {}
        }
    }
    let existing: HashSet<String> = list_netns()?.into_iter().collect();
    for ns in &st.namespaces {
        if existing.contains(ns) {
            if let Err(e) = ip(&["netns", "del", ns]) {
                first_err.get_or_insert(LabError::from(e));
            }
        }
    }
    if let Some(e) = first_err {
        return Err(e);
    }
    let path = state_path(state_dir, &st.name);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(LabError::State { path, source }),
    }
}

/// Removes everything lab `name` created (per its state file in [`DEFAULT_STATE_DIR`]),
/// first stopping the processes still running in its namespaces.
pub fn lab_down(name: &str) -> Result<(), LabError> {
    lab_down_in(name, Path::new(DEFAULT_STATE_DIR))
}

/// Removes everything lab `name` created, per `state_dir/<name>.json`, then the file.
pub fn lab_down_in(name: &str, state_dir: &Path) -> Result<(), LabError> {
    let st = load_state(state_dir, name)?;
    teardown(&st, state_dir)
}

/// Runs `argv` on host `host` of running lab `lab` (state in [`DEFAULT_STATE_DIR`]).
pub fn lab_exec(lab: &str, host: &str, argv: &[&str]) -> Result<Output, LabError> {
    load_state(Path::new(DEFAULT_STATE_DIR), lab)?.exec(host, argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUNDLED: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/labs/l2l3-4hosts.yaml"
    ));

    #[test]
    fn bundled_lab_parses() {
        let lab = Lab::from_yaml(BUNDLED).unwrap();
        assert_eq!(lab.name, "l2l3-4hosts");
        assert_eq!(lab.hosts.len(), 4);
        let ports: Vec<u16> = lab.hosts.iter().map(|h| h.port).collect();
        assert_eq!(ports, vec![0, 1, 2, 3]);
        assert_eq!(lab.switch_if(&lab.hosts[2]), "l2l3p2");
        assert_eq!(lab.netns_name("h1"), "pisa-l2l3-4hosts-h1");
        assert_eq!(lab.hosts[0].ipv4, vec!["10.0.1.1/24".to_string()]);
        assert!(lab.hosts.iter().all(|h| h.offloads_off));
    }

    fn minimal(extra: &str) -> String {
        format!("name: t\nhosts:\n  - name: a\n    port: 0\n{extra}")
    }

    fn invalid_field(yaml: &str) -> String {
        match Lab::from_yaml(yaml) {
            Err(LabError::Invalid { field, .. }) => field,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn validation_names_the_field() {
        assert!(Lab::from_yaml(&minimal("")).is_ok());
        assert_eq!(
            invalid_field(&minimal("    ipv4: [10.0.0.1]\n")),
            "hosts[0].ipv4[0]"
        );
        assert_eq!(
            invalid_field(&minimal("    ipv4: [10.0.0.1/33]\n")),
            "hosts[0].ipv4[0]"
        );
        assert_eq!(
            invalid_field(&minimal("    ipv6: [10.0.0.1/8]\n")),
            "hosts[0].ipv6[0]"
        );
        assert_eq!(
            invalid_field(&minimal("    mac: \"01:00:00:00:00:01\"\n")),
            "hosts[0].mac"
        );
        assert_eq!(
            invalid_field(&minimal("    mac: \"zz:00:00:00:00:01\"\n")),
            "hosts[0].mac"
        );
        assert_eq!(
            invalid_field(&minimal("    switch_if: waytoolonginterfacename\n")),
            "hosts[0].switch_if"
        );
        assert_eq!(
            invalid_field(&minimal(
                "    routes: [{to: 10.0.0.0/8, via: \"fd00::1\"}]\n"
            )),
            "hosts[0].routes[0]"
        );
        assert_eq!(
            invalid_field(&minimal("  - name: a\n    port: 1\n")),
            "hosts[1].name"
        );
        assert_eq!(
            invalid_field(&minimal("  - name: b\n    port: 0\n")),
            "hosts[1].port"
        );
        assert_eq!(
            invalid_field(&minimal("    link: \"loss=3\"\n")),
            "hosts[0].link"
        );
        assert!(Lab::from_yaml(&minimal("    link: \"rate=10G,delay=5us\"\n")).is_ok());
        assert_eq!(invalid_field("name: Bad_Name\nhosts: []\n"), "name");
        assert_eq!(invalid_field("name: ok\nhosts: []\n"), "hosts");
        assert!(matches!(
            Lab::from_yaml(&minimal("    colour: red\n")),
            Err(LabError::Yaml(_))
        ));
        assert!(matches!(Lab::from_yaml("[1, 2"), Err(LabError::Yaml(_))));
    }

    #[test]
    fn mac_and_addr_parse_and_print() {
        let m: Mac = "02:0a:00:00:00:ff".parse().unwrap();
        assert_eq!(m.to_string(), "02:0a:00:00:00:ff");
        assert!("02:0a:00:00:00".parse::<Mac>().is_err());
        assert!("02:0a:00:00:00:00:00".parse::<Mac>().is_err());
        let a: IfAddr = "fd00:1::1/64".parse().unwrap();
        assert_eq!(a.to_string(), "fd00:1::1/64");
        assert_eq!(a.prefix, 64);
    }

    #[test]
    fn state_round_trips_and_port_specs_are_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let st = LabState {
            name: "x".into(),
            namespaces: vec!["pisa-x-a".into()],
            links: vec![CreatedLink {
                name: "xp1".into(),
                ifindex: 7,
            }],
            hosts: vec![
                HostState {
                    name: "b".into(),
                    port: 1,
                    netns: "pisa-x-b".into(),
                    host_if: "eth0".into(),
                    switch_if: "xp1".into(),
                    link: Some("rate=1G".into()),
                },
                HostState {
                    name: "a".into(),
                    port: 0,
                    netns: "pisa-x-a".into(),
                    host_if: "eth0".into(),
                    switch_if: "xp0".into(),
                    link: None,
                },
            ],
        };
        save_state(dir.path(), &st).unwrap();
        assert_eq!(load_state(dir.path(), "x").unwrap(), st);
        let specs = st.port_specs();
        assert_eq!(specs[0].0, 0);
        assert_eq!(specs[0].1.to_string(), "afpacket:xp0");
        assert!(matches!(st.host("zz"), Err(LabError::NoSuchHost { .. })));
        assert!(matches!(
            load_state(dir.path(), "nope"),
            Err(LabError::NotUp(..))
        ));
    }
}

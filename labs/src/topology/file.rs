//! The topology file as written: plain serde data, every item with the line and column it was
//! read from ([`At`]), checked and resolved by [`super::Topology::from_yaml`].

use serde::Deserialize;

pub use control::tables_file::At;

/// A whole topology file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub name: At<String>,
    /// Prefix of the interface names the namespace driver creates (default: from the name).
    #[serde(default)]
    pub ifprefix: Option<At<String>>,
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default)]
    pub switches: Vec<At<SwitchItem>>,
    #[serde(default)]
    pub hosts: Vec<At<HostItem>>,
    #[serde(default)]
    pub links: Vec<At<LinkItem>>,
}

/// Values every switch or link takes unless it says otherwise.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// P4 program, relative to the topology file.
    #[serde(default)]
    pub program: Option<At<String>>,
    /// `generated`, or a table-state file relative to the topology file.
    #[serde(default)]
    pub tables: Option<At<String>>,
    /// `tofino1` or `tofino2`.
    #[serde(default)]
    pub target: Option<At<String>>,
    /// Hardware pipes of every switch.
    #[serde(default)]
    pub pipes: Option<At<u16>>,
    /// Link settings in `dataplane::LinkConfig` syntax (`rate=10G,delay=1us,loss=0.01`).
    #[serde(default)]
    pub link: Option<At<String>>,
    /// MTU of every namespace interface.
    #[serde(default)]
    pub mtu: Option<At<u32>>,
}

/// One switch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchItem {
    pub name: String,
    #[serde(default)]
    pub program: Option<String>,
    #[serde(default)]
    pub tables: Option<String>,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub pipes: Option<u16>,
    /// Router MAC (default derived from the switch's position in the file).
    #[serde(default)]
    pub mac: Option<String>,
    /// An IPv4 address of the switch's own (a service switch's, e.g. P4CE's): generated
    /// routes reach it like a host's.
    #[serde(default)]
    pub ipv4: Option<String>,
}

/// One host.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostItem {
    pub name: String,
    #[serde(default)]
    pub mac: Option<String>,
    /// `ADDRESS/PREFIX`.
    pub ipv4: String,
    /// The host's next hop (default: the first address of its subnet that is not its own).
    #[serde(default)]
    pub gateway: Option<String>,
    /// Whether the host runs pisa's RDMA endpoint (labs that need one start it).
    #[serde(default)]
    pub rdma: bool,
}

/// One cable between two endpoints.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkItem {
    /// `HOST` or `SWITCH:DEVPORT` (DEVPORT a number or `PIPE/PORT`).
    pub a: String,
    pub b: String,
    /// Link settings in `dataplane::LinkConfig` syntax, both directions.
    #[serde(default)]
    pub link: Option<String>,
    /// Whether the link is up at start (default true).
    #[serde(default)]
    pub up: Option<bool>,
}

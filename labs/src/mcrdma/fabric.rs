//! The lab's network as MC-RDMA's control plane sees it ([`control::mcrdma::Fabric`]): next
//! hops from the routes [`crate::routes`] generates (the ones the switches run), less the links
//! that are down; and the unicast repair a routing daemon would do when a link goes down (the
//! ECMP buckets of a group move to its members that are still up).

use std::collections::{BTreeSet, HashMap};
use std::net::Ipv4Addr;

use control::mcrdma::{Fabric, Link, Node, SwitchId};
use pipeline::api::{ApiError, PipeSel};
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;

use crate::routes::{self, Route, SwitchRoutes, BUCKETS};
use crate::topology::{End, Topology};

/// The topology, its generated routes, and which links are down.
pub struct LabFabric {
    topo: Topology,
    routes: Vec<SwitchRoutes>,
    /// (switch, devport) → (link, the far end).
    cables: HashMap<(SwitchId, u16), (usize, End)>,
    programmable: Vec<bool>,
    down: BTreeSet<usize>,
}

impl LabFabric {
    /// `programmable[s]`: switch `s` runs mcrdma.p4.
    pub fn new(topo: &Topology, programmable: Vec<bool>) -> LabFabric {
        let mut cables = HashMap::new();
        for (i, l) in topo.links.iter().enumerate() {
            for (me, peer) in [(l.a, l.b), (l.b, l.a)] {
                if let End::Switch { switch, devport } = me {
                    cables.insert((switch, devport), (i, peer));
                }
            }
        }
        let down = (0..topo.links.len())
            .filter(|l| !topo.links[*l].up)
            .collect();
        LabFabric {
            topo: topo.clone(),
            routes: routes::generate(topo),
            cables,
            programmable,
            down,
        }
    }

    /// Marks link `link` down or up.
    pub fn set_link_up(&mut self, link: usize, up: bool) {
        if up {
            self.down.remove(&link);
        } else {
            self.down.insert(link);
        }
    }

    fn port_up(&self, s: SwitchId, port: u16) -> bool {
        self.cables
            .get(&(s, port))
            .is_some_and(|(l, _)| !self.down.contains(l))
    }

    fn route(&self, s: SwitchId, dst: Ipv4Addr) -> Option<&Route> {
        self.routes[s]
            .routes
            .iter()
            .find(|(ip, _)| *ip == dst)
            .map(|(_, r)| r)
    }

    /// Rewrites switch `s`'s ECMP buckets so that no bucket points at a down link (a group
    /// whose members are all down keeps them: nothing else reaches its destinations).
    pub fn repair_ecmp(&self, s: SwitchId, sw: &mut Switch) -> Result<(), ApiError> {
        for (g, members) in &self.routes[s].groups {
            let up: Vec<(u16, [u8; 6])> = members
                .iter()
                .copied()
                .filter(|(p, _)| self.port_up(s, *p))
                .collect();
            let use_ = if up.is_empty() { members } else { &up };
            for b in 0..BUCKETS {
                let (port, mac) = use_[b as usize % use_.len()];
                sw.table_modify(
                    PipeSel::All,
                    "SwitchIngress.ecmp",
                    &[
                        ("ig_md.group", KeyMatch::Exact(Value::from(*g))),
                        ("ig_md.bucket", KeyMatch::Exact(Value::from(b))),
                    ],
                    None,
                    "to_nexthop",
                    &[
                        ("port", Value::from(port)),
                        ("dmac", control::value::mac_value(mac)),
                    ],
                )?;
            }
        }
        Ok(())
    }
}

impl Fabric for LabFabric {
    fn next_hops(&self, s: SwitchId, dst: Ipv4Addr) -> Vec<Link> {
        match self.route(s, dst) {
            Some(Route::Host { port, mac }) if self.port_up(s, *port) => vec![Link {
                node: Node::Host(dst),
                port: *port,
                mac: *mac,
            }],
            Some(Route::Group(g)) => self.routes[s].groups[g]
                .iter()
                .filter(|(p, _)| self.port_up(s, *p))
                .filter_map(|&(port, mac)| match self.cables.get(&(s, port))?.1 {
                    End::Switch { switch, .. } => Some(Link {
                        node: Node::Switch(switch),
                        port,
                        mac,
                    }),
                    End::Host(_) => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn tor_of(&self, host: Ipv4Addr) -> Option<SwitchId> {
        let h = self.topo.hosts.iter().position(|h| h.ip == host)?;
        self.topo.host_attachment(h).map(|(s, _)| s)
    }

    fn programmable(&self, s: SwitchId) -> bool {
        self.programmable.get(s).copied().unwrap_or(false)
    }

    fn mac(&self, s: SwitchId) -> [u8; 6] {
        self.topo.switches[s].mac
    }

    fn name(&self, s: SwitchId) -> String {
        self.topo.switches[s].name.clone()
    }
}

//! Table state from a topology (`tables: generated`, `pisa lab tables TOPOLOGY`): for every
//! switch running `p4/programs/fabric.p4`, a route to every host along the shortest paths of
//! the fabric, with ECMP over every equal-cost next hop — what an operator would otherwise write
//! by hand for each of a fat tree's 20 switches.
//!
//! The contract with fabric.p4 (see its header comment):
//! - `SwitchIngress.router_mac`: the switch's own MAC → `routable()`;
//! - `SwitchIngress.routes`: `HOST_IP/32` → `to_host(port, dmac)` on the host's switch, else
//!   `to_group(group)`; the same for a switch's own address (`ipv4:` of a service switch, P4CE's)
//!   with the switch's MAC on its neighbour;
//! - `SwitchIngress.ecmp`: `(group, bucket)` for the 16 buckets → `to_nexthop(port, dmac)` of
//!   member `bucket % n`, members in device-port order.
//!
//! Shortest paths count switch hops (breadth-first from every switch); a link that is down at
//! start still counts (routes follow the cabling, as a static fabric's would).

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;

use control::tables_file::{ActionSpec, At, Entry, TableSection, TablesFile, Text};

use crate::topology::{mac_text, End, Topology};

/// Hash buckets per ECMP group (fabric.p4's `ig_md.bucket` is 4 bits).
pub const BUCKETS: u16 = 16;

/// The members of an ECMP group: `(devport, next-hop MAC)` in device-port order.
pub type Members = Vec<(u16, [u8; 6])>;

/// One switch's generated state, as data.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SwitchRoutes {
    /// The router MAC.
    pub mac: [u8; 6],
    /// `(host ip, route)` in host order, then `(switch ip, route)` to the switches that have
    /// an address of their own, in switch order.
    pub routes: Vec<(std::net::Ipv4Addr, Route)>,
    /// Groups: id → members `(devport, next-hop MAC)`.
    pub groups: BTreeMap<u16, Members>,
    /// Which nibble of the hash picks the bucket (`ecmp_bits`): the switch's tier, its hop
    /// distance from the nearest switch with hosts, mod 4 — so consecutive tiers split flows
    /// by different hash bits and ECMP does not polarize.
    pub hash_nibble: u8,
}

/// Where a route sends a host's traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The host is attached to this switch.
    Host { port: u16, mac: [u8; 6] },
    /// Through an ECMP group.
    Group(u16),
}

/// Switch-to-switch neighbours: per switch, `(devport, neighbour switch)`.
fn adjacency(topo: &Topology) -> Vec<Vec<(u16, usize)>> {
    let mut adj = vec![Vec::new(); topo.switches.len()];
    for l in &topo.links {
        if let (
            End::Switch {
                switch: a,
                devport: pa,
            },
            End::Switch {
                switch: b,
                devport: pb,
            },
        ) = (l.a, l.b)
        {
            adj[a].push((pa, b));
            adj[b].push((pb, a));
        }
    }
    for v in &mut adj {
        v.sort_unstable();
    }
    adj
}

/// Hop counts from the nearest of `from` to every switch (`u32::MAX`: unreachable).
fn distances(adj: &[Vec<(u16, usize)>], from: impl IntoIterator<Item = usize>) -> Vec<u32> {
    let mut d = vec![u32::MAX; adj.len()];
    let mut q = VecDeque::new();
    for s in from {
        if d[s] != 0 {
            d[s] = 0;
            q.push_back(s);
        }
    }
    while let Some(s) = q.pop_front() {
        for &(_, n) in &adj[s] {
            if d[n] == u32::MAX {
                d[n] = d[s] + 1;
                q.push_back(n);
            }
        }
    }
    d
}

/// Each switch's hop distance from the nearest switch that has hosts (0 for those).
fn tiers(topo: &Topology, adj: &[Vec<(u16, usize)>]) -> Vec<u32> {
    let edges = (0..topo.hosts.len()).filter_map(|h| topo.host_attachment(h).map(|(s, _)| s));
    distances(adj, edges)
        .into_iter()
        .map(|t| if t == u32::MAX { 0 } else { t })
        .collect()
}

/// Each switch's tier: its hop distance from the nearest switch with hosts (0 for those).
pub fn switch_tiers(topo: &Topology) -> Vec<u32> {
    tiers(topo, &adjacency(topo))
}

/// Every switch's routes.
pub fn generate(topo: &Topology) -> Vec<SwitchRoutes> {
    let adj = adjacency(topo);
    // Distances *to* each host's switch: run BFS from every switch that has hosts.
    let mut dist_to: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
    for h in 0..topo.hosts.len() {
        if let Some((t, _)) = topo.host_attachment(h) {
            dist_to.entry(t).or_insert_with(|| distances(&adj, [t]));
        }
    }
    let tier = tiers(topo, &adj);
    let mut out: Vec<SwitchRoutes> = topo
        .switches
        .iter()
        .zip(&tier)
        .map(|(s, &t)| SwitchRoutes {
            mac: s.mac,
            hash_nibble: (t % 4) as u8,
            ..SwitchRoutes::default()
        })
        .collect();
    let mut group_ids: Vec<BTreeMap<Members, u16>> = vec![BTreeMap::new(); topo.switches.len()];
    for (h, host) in topo.hosts.iter().enumerate() {
        let Some((t, port)) = topo.host_attachment(h) else {
            continue;
        };
        let d = &dist_to[&t];
        for (s, sr) in out.iter_mut().enumerate() {
            if s == t {
                sr.routes.push((
                    host.ip,
                    Route::Host {
                        port,
                        mac: host.mac,
                    },
                ));
                continue;
            }
            if d[s] == u32::MAX {
                continue;
            }
            let members: Members = adj[s]
                .iter()
                .filter(|&&(_, n)| d[n].wrapping_add(1) == d[s])
                .map(|&(p, n)| (p, topo.switches[n].mac))
                .collect();
            let next = group_ids[s].len() as u16 + 1;
            let id = *group_ids[s].entry(members.clone()).or_insert(next);
            sr.groups.entry(id).or_insert(members);
            sr.routes.push((host.ip, Route::Group(id)));
        }
    }
    // A switch with an address of its own (a service switch hung off the fabric, P4CE's) is
    // reached like a host: its neighbour sends through the cable to it (`to_host` with the
    // switch's MAC), every other switch through ECMP towards it.
    for (t, target) in topo.switches.iter().enumerate() {
        let Some(ip) = target.ipv4 else { continue };
        let d = distances(&adj, [t]);
        for (s, sr) in out.iter_mut().enumerate() {
            if s == t || d[s] == u32::MAX {
                continue;
            }
            let members: Members = adj[s]
                .iter()
                .filter(|&&(_, n)| d[n].wrapping_add(1) == d[s])
                .map(|&(p, n)| (p, topo.switches[n].mac))
                .collect();
            if d[s] == 1 && members.len() == 1 {
                let (port, mac) = members[0];
                sr.routes.push((ip, Route::Host { port, mac }));
                continue;
            }
            let next = group_ids[s].len() as u16 + 1;
            let id = *group_ids[s].entry(members.clone()).or_insert(next);
            sr.groups.entry(id).or_insert(members);
            sr.routes.push((ip, Route::Group(id)));
        }
    }
    out
}

fn action(name: &str, params: &[(&str, String)]) -> ActionSpec {
    ActionSpec {
        action: name.into(),
        params: params
            .iter()
            .map(|(k, v)| (k.to_string(), Text(v.clone())))
            .collect(),
    }
}

fn entry(key: &[(&str, String)], a: ActionSpec) -> At<Entry> {
    At::new(Entry {
        key: key
            .iter()
            .map(|(k, v)| (k.to_string(), Text(v.clone())))
            .collect(),
        priority: None,
        action: Some(a.action),
        params: a.params,
        member: None,
        group: None,
        ttl_ms: None,
    })
}

impl SwitchRoutes {
    /// As a table-state file (what a driver applies).
    pub fn to_tables_file(&self) -> TablesFile {
        let mac = vec![entry(
            &[("hdr.ethernet.dst_addr", mac_text(self.mac))],
            action("routable", &[]),
        )];
        let routes = self
            .routes
            .iter()
            .map(|(ip, r)| {
                let a = match r {
                    Route::Host { port, mac } => action(
                        "to_host",
                        &[("port", port.to_string()), ("dmac", mac_text(*mac))],
                    ),
                    Route::Group(g) => action("to_group", &[("group", g.to_string())]),
                };
                entry(&[("hdr.ipv4.dst_addr", format!("{ip}/32"))], a)
            })
            .collect();
        let mut ecmp = Vec::new();
        for (g, members) in &self.groups {
            for b in 0..BUCKETS {
                let (port, mac) = members[b as usize % members.len()];
                ecmp.push(entry(
                    &[
                        ("ig_md.group", g.to_string()),
                        ("ig_md.bucket", b.to_string()),
                    ],
                    action(
                        "to_nexthop",
                        &[("port", port.to_string()), ("dmac", mac_text(mac))],
                    ),
                ));
            }
        }
        let section = |t: &str, entries| TableSection {
            table: At::new(t.into()),
            clear: false,
            default: None,
            entries,
        };
        let bits = TableSection {
            default: Some(At::new(action(
                &format!("bucket_bits_{}", self.hash_nibble),
                &[],
            ))),
            ..section("SwitchIngress.ecmp_bits", Vec::new())
        };
        TablesFile {
            tables: vec![
                bits,
                section("SwitchIngress.router_mac", mac),
                section("SwitchIngress.routes", routes),
                section("SwitchIngress.ecmp", ecmp),
            ],
            ..TablesFile::default()
        }
    }

    /// As table-state YAML (`pisa lab tables`), readable by `pisa run --tables` and
    /// `pisa ctl apply`.
    pub fn to_yaml(&self, switch: &str) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Table state of switch {switch} for p4/programs/fabric.p4, generated from the topology\n\
             # (pisa lab tables): {} route(s), {} ECMP group(s) of {BUCKETS} buckets.\ntables:",
            self.routes.len(),
            self.groups.len()
        );
        for sec in self.to_tables_file().tables {
            let _ = writeln!(s, "  - table: {}", sec.table.item);
            if let Some(d) = &sec.default {
                let _ = writeln!(s, "    default: {{ action: {} }}", d.item.action);
            }
            if sec.entries.is_empty() {
                continue;
            }
            let _ = writeln!(s, "    entries:");
            for e in &sec.entries {
                let kv = |m: &BTreeMap<String, Text>| {
                    m.iter()
                        .map(|(k, v)| format!("{k}: \"{}\"", v.0))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let params = if e.item.params.is_empty() {
                    String::new()
                } else {
                    format!(", params: {{ {} }}", kv(&e.item.params))
                };
                let _ = writeln!(
                    s,
                    "      - {{ key: {{ {} }}, action: {}{params} }}",
                    kv(&e.item.key),
                    e.item.action.as_deref().unwrap_or_default()
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    #[test]
    fn fat_tree_edges_spread_over_both_aggregation_switches() {
        let topo = generate::fat_tree(4).unwrap();
        let r = generate(&topo);
        let e = topo.switch_index("e0-0").unwrap();
        // Two local hosts, fourteen through one group of the two aggregation switches.
        let local = r[e]
            .routes
            .iter()
            .filter(|(_, r)| matches!(r, Route::Host { .. }))
            .count();
        assert_eq!(local, 2);
        assert_eq!(r[e].routes.len(), 16);
        assert_eq!(r[e].groups.len(), 1);
        assert_eq!(r[e].groups[&1].len(), 2);
        // A core switch reaches each pod through one port.
        let c = topo.switch_index("c0").unwrap();
        assert!(r[c].groups.values().all(|m| m.len() == 1));
        assert_eq!(r[c].groups.len(), 4);
    }

    #[test]
    fn generated_yaml_reads_back_as_the_same_table_state() {
        let topo = generate::leaf_spine(2, 4, 2).unwrap();
        let r = generate(&topo);
        let text = r[0].to_yaml(&topo.switches[0].name);
        let back = control::tables_file::from_yaml(&text).unwrap();
        let made = r[0].to_tables_file();
        assert_eq!(back.tables.len(), made.tables.len());
        for (a, b) in back.tables.iter().zip(&made.tables) {
            assert_eq!(a.table.item, b.table.item);
            assert_eq!(
                a.default.as_ref().map(|d| &d.item),
                b.default.as_ref().map(|d| &d.item)
            );
            let strip =
                |s: &TableSection| s.entries.iter().map(|e| e.item.clone()).collect::<Vec<_>>();
            assert_eq!(strip(a), strip(b));
        }
    }
}

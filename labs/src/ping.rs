//! `pisa lab ping-all`: every ordered host pair exchanges a frame through the fabric, and the
//! answer is a reachability matrix, per-switch port counters and a [`PingReport`].
//!
//! In memory each host sends one UDP datagram to every other host (its gateway's MAC as the
//! destination, source ports varied so ECMP spreads them); a pair counts as reached when the
//! datagram arrives at the right host with that host's MAC, the sender's address, a lower TTL
//! and a correct IPv4 header checksum. The namespace driver pings with the kernel's `ping`
//! ([`crate::netns`]).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;

use etherparse::{Ipv4Header, PacketBuilder, SlicedPacket};
use serde::Serialize;

use crate::mem::{MemLab, SwitchCounters};
use crate::topology::Topology;

/// The TTL hosts send with.
pub const TTL: u8 = 64;

/// UDP port ping-all datagrams go to (discard).
const PORT: u16 = 9;

/// What ping-all found.
#[derive(Debug, Clone, Serialize)]
pub struct PingReport {
    /// Ordered host pairs tried.
    pub pairs: usize,
    /// Pairs whose frame arrived intact.
    pub reached: usize,
    /// `a->b` for every pair that was not reached.
    pub unreached: Vec<String>,
    /// Per switch: pipeline passes, drops and port counters (empty where the driver has none).
    pub switches: BTreeMap<String, SwitchCounters>,
    /// `matrix[a][b]`: whether `a` reached `b` (not in the JSON: `unreached` says it).
    #[serde(skip)]
    pub matrix: Vec<Vec<bool>>,
}

impl PingReport {
    /// From a matrix.
    pub fn new(topo: &Topology, matrix: Vec<Vec<bool>>) -> PingReport {
        let mut unreached = Vec::new();
        let (mut pairs, mut reached) = (0, 0);
        for (a, row) in matrix.iter().enumerate() {
            for (b, &ok) in row.iter().enumerate() {
                if a == b {
                    continue;
                }
                pairs += 1;
                if ok {
                    reached += 1;
                } else {
                    unreached.push(format!("{}->{}", topo.hosts[a].name, topo.hosts[b].name));
                }
            }
        }
        PingReport {
            pairs,
            reached,
            unreached,
            switches: BTreeMap::new(),
            matrix,
        }
    }

    /// Whether every pair was reached.
    pub fn all_reached(&self) -> bool {
        self.reached == self.pairs
    }

    /// The matrix and counters as text.
    pub fn render(&self, topo: &Topology) -> String {
        let mut s = String::new();
        let w = topo
            .hosts
            .iter()
            .map(|h| h.name.len())
            .max()
            .unwrap_or(1)
            .max(4);
        let _ = writeln!(
            s,
            "reachability (row: from, column: to; '.' reached, 'X' not reached):"
        );
        let _ = write!(s, "{:w$} ", "");
        for (i, _) in topo.hosts.iter().enumerate() {
            let _ = write!(s, "{}", i % 10);
        }
        let _ = writeln!(s);
        for (a, row) in self.matrix.iter().enumerate() {
            let _ = write!(s, "{:>w$} ", topo.hosts[a].name);
            for (b, &ok) in row.iter().enumerate() {
                s.push(if a == b {
                    '-'
                } else if ok {
                    '.'
                } else {
                    'X'
                });
            }
            let _ = writeln!(s, "  ({a})");
        }
        if !self.switches.is_empty() {
            let _ = writeln!(
                s,
                "switches (pipeline passes, drops; per port rx/tx/drops):"
            );
            for (name, c) in &self.switches {
                let ports: Vec<String> = c
                    .ports
                    .iter()
                    .map(|p| format!("{}[{}] {}/{}/{}", p.devport, p.peer, p.rx, p.tx, p.drops))
                    .collect();
                let _ = writeln!(
                    s,
                    "  {name:<8} passes {:>6} drops {:>4} no-port {:>3} | {}",
                    c.passes,
                    c.switch_drops,
                    c.no_port,
                    ports.join("  ")
                );
            }
        }
        let _ = writeln!(
            s,
            "{} of {} pairs reached{}",
            self.reached,
            self.pairs,
            if self.unreached.is_empty() {
                String::new()
            } else {
                format!("; not reached: {}", self.unreached.join(" "))
            }
        );
        s
    }
}

/// A UDP datagram from host `a` to host `b` of `topo` (to `a`'s gateway MAC), carrying
/// `(a, b, seq)` so the receiver can tell which pair it belongs to.
pub fn datagram(topo: &Topology, a: usize, b: usize, seq: u32) -> Vec<u8> {
    let (ha, hb) = (&topo.hosts[a], &topo.hosts[b]);
    let gw_mac = topo
        .host_attachment(a)
        .map_or(hb.mac, |(s, _)| topo.switches[s].mac);
    let sport = 49152 + ((a * 7919 + b * 104_729 + seq as usize) % 16384) as u16;
    let mut payload = [0u8; 12];
    payload[..4].copy_from_slice(&(a as u32).to_be_bytes());
    payload[4..8].copy_from_slice(&(b as u32).to_be_bytes());
    payload[8..].copy_from_slice(&seq.to_be_bytes());
    let builder = PacketBuilder::ethernet2(ha.mac, gw_mac)
        .ipv4(ha.ip.octets(), hb.ip.octets(), TTL)
        .udp(sport, PORT);
    let mut out = Vec::with_capacity(builder.size(payload.len()));
    // Writing into a Vec cannot fail.
    let _ = builder.write(&mut out, &payload);
    out
}

/// The `(a, b, seq)` of a ping-all datagram that arrived at host `at` intact: addressed to
/// `at`'s MAC and IP, from `a`'s IP, TTL below the sender's, IPv4 header checksum right.
pub fn check_arrival(topo: &Topology, at: usize, frame: &[u8]) -> Option<(usize, usize, u32)> {
    let p = SlicedPacket::from_ethernet(frame).ok()?;
    let eth = match p.link? {
        etherparse::LinkSlice::Ethernet2(e) => e,
        _ => return None,
    };
    let ip = match p.net? {
        etherparse::NetSlice::Ipv4(ip) => ip,
        _ => return None,
    };
    let hdr: Ipv4Header = ip.header().to_header();
    let payload = match p.transport? {
        etherparse::TransportSlice::Udp(u) => u.payload().to_vec(),
        _ => return None,
    };
    if payload.len() < 12 {
        return None;
    }
    let a = u32::from_be_bytes(payload[..4].try_into().ok()?) as usize;
    let b = u32::from_be_bytes(payload[4..8].try_into().ok()?) as usize;
    let seq = u32::from_be_bytes(payload[8..12].try_into().ok()?);
    let me = &topo.hosts[at];
    let from = topo.hosts.get(a)?;
    let ok = b == at
        && eth.destination() == me.mac
        && Ipv4Addr::from(hdr.destination) == me.ip
        && Ipv4Addr::from(hdr.source) == from.ip
        && hdr.time_to_live < TTL
        && hdr.header_checksum == hdr.calc_header_checksum();
    ok.then_some((a, b, seq))
}

/// Ping-all in memory: every ordered pair sends one datagram, the lab runs until nothing is
/// in flight, and each host's arrivals are checked.
pub fn ping_all_mem(lab: &mut MemLab) -> PingReport {
    let topo = lab.topology().clone();
    let n = topo.hosts.len();
    for a in 0..n {
        for b in 0..n {
            if a != b {
                let f = datagram(&topo, a, b, 0);
                lab.send(a, f);
            }
        }
    }
    lab.run_until_idle();
    let mut matrix = vec![vec![false; n]; n];
    for at in 0..n {
        for (_, f) in lab.take_received(at) {
            if let Some((a, b, _)) = check_arrival(&topo, at, &f) {
                matrix[a][b] = true;
            }
        }
    }
    let mut r = PingReport::new(&topo, matrix);
    r.switches = topo
        .switches
        .iter()
        .map(|s| s.name.clone())
        .zip(lab.switch_counters())
        .collect();
    r
}

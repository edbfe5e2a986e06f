//! The Fig. 8 baselines on the same fabric and hosts as 1Pipe ([`super::lab::fabric`]): every
//! switch runs onepipe.p4, and for the switch sequencer one switch (the first core) gets table
//! `sequencer` filled and every other switch a route to the sequencer's address; the token
//! ring and Lamport timestamps run on the hosts alone
//! ([`hosts::onepipe::baselines::Member`]).

use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;

use control::value::{ipv4_value, mac_value};
use dataplane::Nanos;
use etherparse::{PacketBuilder, SlicedPacket, TransportSlice};
use hosts::onepipe::baselines::{Delivery, Member, Scheme, UDP_PORT};
use hosts::onepipe::process::ProcessId;
use pipeline::api::PipeSel;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::Switch;

use super::lab::{fabric, members, switch_ip, LabConfig, LabError};
use crate::driver::Driver;
use crate::host::HostApp;
use crate::mem::MemLab;
use crate::topology::{End, Topology};

/// The switch that sequences (the first switch of the topology: a core of a fat tree).
const SEQUENCER: usize = 0;

/// One broadcast a process made: its sequence number, destinations and (true) time.
#[derive(Debug, Clone)]
pub struct Sent {
    pub seq: u64,
    pub dsts: Vec<ProcessId>,
    pub at: u64,
}

/// What a baseline run left, per host (hosts outside the run's processes left nothing).
pub struct BaselineRun {
    pub members: Vec<usize>,
    pub sent: Vec<Vec<Sent>>,
    /// (true time, delivery) in delivery order.
    pub delivered: Vec<Vec<(u64, Delivery)>>,
    /// Frames a host could not use.
    pub ignored: u64,
}

/// One baseline process on one host.
struct BaselineHost {
    member: Member,
    mac: [u8; 6],
    ip: Ipv4Addr,
    gw_mac: [u8; 6],
    ips: Vec<Ipv4Addr>,
    sequencer_ip: Ipv4Addr,
    /// Where a broadcast goes (but here).
    dsts: Vec<ProcessId>,
    send_every: u64,
    messages: u64,
    size: usize,
    next_send: u64,
    sent: Vec<Sent>,
    delivered: Vec<(u64, Delivery)>,
    ignored: u64,
}

impl BaselineHost {
    fn drain(&mut self, now: u64, out: &mut dyn FnMut(Vec<u8>)) {
        while let Some(o) = self.member.poll_transmit() {
            let dst = if o.via_sequencer {
                self.sequencer_ip
            } else {
                self.ips[usize::from(o.dst)]
            };
            let b = PacketBuilder::ethernet2(self.mac, self.gw_mac)
                .ipv4(self.ip.octets(), dst.octets(), 64)
                .udp(UDP_PORT, UDP_PORT);
            let mut f = Vec::with_capacity(b.size(o.bytes.len()));
            b.write(&mut f, &o.bytes).expect("a Vec grows");
            out(f);
        }
        while let Some(d) = self.member.recv() {
            self.delivered.push((now, d));
        }
    }
}

impl HostApp for BaselineHost {
    fn receive(&mut self, _now: Nanos, frame: &[u8]) {
        let Ok(p) = SlicedPacket::from_ethernet(frame) else {
            self.ignored += 1;
            return;
        };
        let (Some(etherparse::NetSlice::Ipv4(ip)), Some(TransportSlice::Udp(udp))) =
            (&p.net, &p.transport)
        else {
            self.ignored += 1;
            return;
        };
        let to = ip.header().destination_addr();
        if udp.destination_port() != UDP_PORT || (to != self.ip && to != GROUP_IP) {
            self.ignored += 1;
            return;
        }
        if self.member.on_packet(udp.payload()).is_err() {
            self.ignored += 1;
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        let now = now.0;
        let seq = self.sent.len() as u64;
        if self.send_every > 0 && seq < self.messages && now >= self.next_send {
            let mut msg = vec![0u8; self.size.max(8)];
            msg[..8].copy_from_slice(&seq.to_be_bytes());
            let s = self.dsts.iter().map(|&d| (d, msg.clone())).collect();
            self.member.send(now, s);
            self.sent.push(Sent {
                seq,
                dsts: self.dsts.clone(),
                at: now,
            });
            self.next_send = now + self.send_every;
        }
        self.member.on_timer(now);
        self.drain(now, out);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        let send = (self.send_every > 0 && (self.sent.len() as u64) < self.messages)
            .then_some(self.next_send);
        match (send, self.member.next_timer()) {
            (Some(a), Some(b)) => Some(Nanos(a.min(b))),
            (a, b) => a.or(b).map(Nanos),
        }
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Per switch, the port and next switch toward `to` (breadth first over switch links).
fn toward(topo: &Topology, to: usize) -> Vec<Option<(u16, usize)>> {
    let mut next = vec![None; topo.switches.len()];
    let mut seen = vec![false; topo.switches.len()];
    seen[to] = true;
    let mut queue = VecDeque::from([to]);
    while let Some(s) = queue.pop_front() {
        for l in &topo.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                let (End::Switch { switch: a, .. }, End::Switch { switch: b, devport }) = (x, y)
                else {
                    continue;
                };
                if a == s && !seen[b] {
                    seen[b] = true;
                    next[b] = Some((devport, s));
                    queue.push_back(b);
                }
            }
        }
    }
    next
}

/// The address and MAC a sequenced scattering is multicast to.
const GROUP_IP: Ipv4Addr = Ipv4Addr::new(239, 1, 0, 1);
const GROUP_MAC: [u8; 6] = [0x01, 0x00, 0x5e, 0x01, 0x00, 0x01];
/// The multicast group (and node) of the ports down to every host.
const DOWN_MGID: u16 = 2;

/// The ports of switch `s` toward the hosts (to a host or to a switch of a lower tier).
fn down_ports(topo: &Topology, s: usize) -> Vec<u16> {
    let tiers = crate::routes::switch_tiers(topo);
    let mut ports = Vec::new();
    for l in &topo.links {
        for (x, y) in [(l.a, l.b), (l.b, l.a)] {
            if let End::Switch { switch, devport } = x {
                let down = match y {
                    End::Host(_) => true,
                    End::Switch { switch: p, .. } => tiers[p] < tiers[switch],
                };
                if switch == s && down {
                    ports.push(devport);
                }
            }
        }
    }
    ports
}

/// On every switch: the group's MAC is routable, and table `sequencer` sends the group's
/// packets down to every host; on the sequencer it also numbers the packets to its address,
/// on every other switch a /32 route leads to it.
fn program_sequencer(topo: &Topology, s: usize, sw: &mut Switch) -> Result<(), String> {
    let e = |x: &dyn std::fmt::Display| x.to_string();
    let ip = switch_ip(topo, SEQUENCER);
    sw.mc_group_create(DOWN_MGID).map_err(|x| e(&x))?;
    sw.mc_node_create(u32::from(DOWN_MGID), 1, &down_ports(topo, s), &[])
        .map_err(|x| e(&x))?;
    sw.mc_group_add_node(DOWN_MGID, u32::from(DOWN_MGID), None)
        .map_err(|x| e(&x))?;
    let mut add =
        |table: &str, key: &[(&str, KeyMatch)], action: &str, params: &[(&str, Value)]| {
            sw.table_add(PipeSel::All, table, key, None, action, params)
                .map(|_| ())
                .map_err(|x| e(&x))
        };
    add(
        "SwitchIngress.router_mac",
        &[(
            "hdr.ethernet.dst_addr",
            KeyMatch::Exact(mac_value(GROUP_MAC)),
        )],
        "routable",
        &[],
    )?;
    add(
        "SwitchIngress.sequencer",
        &[("hdr.ipv4.dst_addr", KeyMatch::Exact(ipv4_value(GROUP_IP)))],
        "replicate",
        &[("mgid", Value::from(DOWN_MGID))],
    )?;
    if s == SEQUENCER {
        return add(
            "SwitchIngress.sequencer",
            &[("hdr.ipv4.dst_addr", KeyMatch::Exact(ipv4_value(ip)))],
            "sequence",
            &[
                ("mgid", Value::from(DOWN_MGID)),
                ("group", ipv4_value(GROUP_IP)),
                ("gmac", mac_value(GROUP_MAC)),
            ],
        );
    }
    let Some((port, via)) = toward(topo, SEQUENCER)[s] else {
        return Err(format!(
            "no path to the sequencer {}",
            topo.switches[SEQUENCER].name
        ));
    };
    add(
        "SwitchIngress.routes",
        &[(
            "hdr.ipv4.dst_addr",
            KeyMatch::Lpm {
                value: ipv4_value(ip),
                prefix_len: 32,
            },
        )],
        "to_host",
        &[
            ("port", Value::from(port)),
            ("dmac", mac_value(topo.switches[via].mac)),
        ],
    )
}

/// Runs `scheme` on the fabric of `cfg` (its processes, rates, sends and duration) in memory.
pub fn run(cfg: &LabConfig, scheme: Scheme) -> Result<BaselineRun, LabError> {
    run_on::<MemLab>(cfg, scheme)
}

/// [`run`] on driver `D`.
pub fn run_on<D: Driver>(cfg: &LabConfig, scheme: Scheme) -> Result<BaselineRun, LabError> {
    let (mut lab, topo, _agents) = fabric::<D>(cfg)?;
    if scheme == Scheme::Sequencer {
        for s in 0..topo.switches.len() {
            program_sequencer(&topo, s, lab.switch_mut(s)?)
                .map_err(|m| LabError::Switch(topo.switches[s].name.clone(), m))?;
        }
    }
    let hosts = members(topo.hosts.len(), cfg.processes);
    let ids: Vec<ProcessId> = hosts.iter().map(|&h| h as ProcessId).collect();
    let ips: Vec<Ipv4Addr> = topo.hosts.iter().map(|h| h.ip).collect();
    for h in 0..topo.hosts.len() {
        let host = &topo.hosts[h];
        let member = hosts.contains(&h);
        let (s, _) = topo.host_attachment(h).ok_or_else(|| {
            LabError::Config(format!("host {} is not cabled to a switch", host.name))
        })?;
        let me = h as ProcessId;
        let app = BaselineHost {
            // A host outside the run only listens (to the sequencer's multicast).
            member: Member::new(
                me,
                ids.clone(),
                if member { scheme } else { Scheme::Sequencer },
            ),
            mac: host.mac,
            ip: host.ip,
            gw_mac: topo.switches[s].mac,
            ips: ips.clone(),
            sequencer_ip: switch_ip(&topo, SEQUENCER),
            dsts: ids.iter().copied().filter(|&d| d != me).collect(),
            send_every: if member { cfg.send_every_ns } else { 0 },
            messages: cfg.messages,
            size: cfg.size,
            next_send: 50_000 + (h as u64 * cfg.send_every_ns) / topo.hosts.len() as u64,
            sent: Vec::new(),
            delivered: Vec::new(),
            ignored: 0,
        };
        lab.attach(h, Box::new(app))?;
    }
    lab.run_to(Nanos(cfg.duration_ns))?;
    lab.finish()?;
    let mut out = BaselineRun {
        members: hosts.clone(),
        sent: vec![Vec::new(); topo.hosts.len()],
        delivered: vec![Vec::new(); topo.hosts.len()],
        ignored: 0,
    };
    for h in 0..topo.hosts.len() {
        lab.with_app(h, |a: &mut BaselineHost| {
            out.sent[h] = std::mem::take(&mut a.sent);
            out.delivered[h] = std::mem::take(&mut a.delivered);
            out.ignored += a.ignored;
        })
        .ok_or_else(|| LabError::Config(format!("host {h} runs no baseline process")))?;
    }
    Ok(out)
}

/// The checker of a baseline run: each receiver delivers in increasing order keys, a message
/// has one key at every receiver (so all deliver their common messages in one order), nothing
/// is delivered twice or unsent, and every broadcast made before `until` reached every
/// destination. Returns the deliveries checked.
pub fn check(r: &BaselineRun, until: u64) -> Result<usize, String> {
    let mut key_of: HashMap<(ProcessId, Vec<u8>), (u64, ProcessId)> = HashMap::new();
    let mut got: HashMap<(ProcessId, u64, ProcessId), usize> = HashMap::new();
    let mut n = 0;
    for (rcv, ds) in r.delivered.iter().enumerate() {
        for w in ds.windows(2) {
            if w[0].1.key >= w[1].1.key {
                return Err(format!(
                    "host {rcv} delivered key {:?} after {:?}",
                    w[1].1.key, w[0].1.key
                ));
            }
        }
        for (_, d) in ds {
            let k = *key_of.entry((d.src, d.msg.clone())).or_insert(d.key);
            if k != d.key {
                return Err(format!(
                    "a message from {} has key {:?} at host {rcv}, {k:?} elsewhere",
                    d.src, d.key
                ));
            }
            let seq = d
                .msg
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_be_bytes)
                .ok_or_else(|| {
                    format!("host {rcv} delivered a message without a sequence number")
                })?;
            *got.entry((d.src, seq, rcv as ProcessId)).or_default() += 1;
            n += 1;
        }
    }
    for (&(src, seq, rcv), &times) in &got {
        let sent = r.sent[usize::from(src)]
            .get(seq as usize)
            .is_some_and(|s| s.dsts.contains(&rcv));
        if !sent || times > 1 {
            return Err(format!(
                "host {rcv} delivered message {seq} of {src} {times} times, sent to it: {sent}"
            ));
        }
    }
    for (src, ss) in r.sent.iter().enumerate() {
        for s in ss.iter().filter(|s| s.at < until) {
            if let Some(d) = s
                .dsts
                .iter()
                .find(|&&d| !got.contains_key(&(src as ProcessId, s.seq, d)))
            {
                return Err(format!("message {} of {src} never reached {d}", s.seq));
            }
        }
    }
    Ok(n)
}

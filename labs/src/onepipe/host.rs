//! A lib1pipe process as a lab host: it frames the process's packets in Ethernet, IPv4 and
//! UDP (to [`wire::UDP_PORT`]) through its ToR, sends beacons at synchronized times (§4.2:
//! every multiple of the beacon interval on its own clock, when its link carried nothing
//! since the previous one), and broadcasts one message to every other process every send
//! interval (best effort or reliable), logging what it sends and delivers.

use std::any::Any;
use std::collections::HashMap;
use std::net::Ipv4Addr;

use dataplane::Nanos;
use etherparse::{PacketBuilder, SlicedPacket, TransportSlice};
use hosts::onepipe::process::{Delivery, Event, Process, ProcessId};
use hosts::onepipe::wire;

use crate::host::HostApp;

/// A message one process sent: its timestamp, sequence number and destinations.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sent {
    pub ts: u64,
    pub seq: u64,
    pub dsts: Vec<ProcessId>,
    /// When (true time) it was sent.
    pub at: u64,
}

/// A delivery with the true time it happened.
#[derive(Debug, Clone)]
pub struct Delivered {
    pub at: u64,
    pub d: Delivery,
}

/// What the host does.
#[derive(Debug, Clone)]
pub struct Workload {
    pub reliable: bool,
    /// Nanoseconds between broadcasts (0: none).
    pub send_every: u64,
    /// Broadcasts to make.
    pub messages: u64,
    pub beacon_every: u64,
    pub size: usize,
    /// Background traffic (Fig. 12): a frame of `background_size` bytes every this many ns
    /// (0: none) to `background_to`, plain UDP that the switches only route.
    pub background_every: u64,
    pub background_size: usize,
    pub background_to: Option<Ipv4Addr>,
    /// Instead of broadcasting, write-only transactions of this many keys out of a key space
    /// ([`hosts::onepipe::kv`]): each one scattering to the shards it touches.
    pub kv: Option<(usize, u64)>,
}

/// The UDP port of background traffic (discard).
const BACKGROUND_PORT: u16 = 9;

/// One process on one host.
pub struct OnepipeHost {
    pub process: Process,
    mac: [u8; 6],
    ip: Ipv4Addr,
    gw_mac: [u8; 6],
    gw_ip: Ipv4Addr,
    /// Every process's address (index = process id).
    ips: Vec<Ipv4Addr>,
    by_ip: HashMap<Ipv4Addr, ProcessId>,
    /// The processes a broadcast goes to (but this one).
    members: Vec<ProcessId>,
    work: Workload,
    next_send: u64,
    /// The last beacon tick handled (its index: clock / interval) and when (true time) the
    /// next one falls.
    last_tick: u64,
    next_beacon: u64,
    /// The clock when the last packet (not a beacon) went out: the barrier it carried.
    carried: u64,
    next_background: u64,
    /// Background frames sent.
    pub background_frames: u64,
    seq: u64,
    pub sent: Vec<Sent>,
    pub delivered: Vec<Delivered>,
    pub events: Vec<Event>,
    /// Frames that were not 1Pipe packets for this host, or did not parse.
    pub ignored: u64,
    /// When each message (source, timestamp) first arrived: an unordered transport would
    /// deliver it then.
    pub arrivals: HashMap<(ProcessId, u64), u64>,
    /// Beacon frames and bytes this host sent; all frames and bytes it sent.
    pub beacon_frames: u64,
    pub beacon_bytes: u64,
    pub tx_bytes: u64,
}

impl OnepipeHost {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        process: Process,
        mac: [u8; 6],
        ip: Ipv4Addr,
        gw_mac: [u8; 6],
        gw_ip: Ipv4Addr,
        ips: Vec<Ipv4Addr>,
        work: Workload,
        start: u64,
    ) -> Self {
        let by_ip = ips
            .iter()
            .enumerate()
            .map(|(i, &a)| (a, i as ProcessId))
            .collect();
        let members = (0..ips.len() as ProcessId).collect();
        OnepipeHost {
            members,
            process,
            mac,
            ip,
            gw_mac,
            gw_ip,
            ips,
            by_ip,
            next_send: start,
            last_tick: 0,
            next_beacon: 0,
            carried: 0,
            next_background: start,
            background_frames: 0,
            work,
            seq: 0,
            sent: Vec::new(),
            delivered: Vec::new(),
            events: Vec::new(),
            ignored: 0,
            arrivals: HashMap::new(),
            beacon_frames: 0,
            beacon_bytes: 0,
            tx_bytes: 0,
        }
    }

    /// Broadcasts go to `members` (but this process) instead of to every process.
    pub fn with_members(mut self, members: Vec<ProcessId>) -> Self {
        self.members = members;
        self
    }

    fn frame(&self, dst: Ipv4Addr, payload: &[u8]) -> Vec<u8> {
        let b = PacketBuilder::ethernet2(self.mac, self.gw_mac)
            .ipv4(self.ip.octets(), dst.octets(), 64)
            .udp(wire::UDP_PORT, wire::UDP_PORT);
        let mut out = Vec::with_capacity(b.size(payload.len()));
        b.write(&mut out, payload).expect("a Vec grows");
        out
    }

    fn drain(&mut self, now: u64, out: &mut dyn FnMut(Vec<u8>)) {
        while let Some(o) = self.process.poll_transmit() {
            let dst = o.dst.map_or(self.gw_ip, |p| self.ips[usize::from(p)]);
            let f = self.frame(dst, &o.bytes);
            self.tx_bytes += f.len() as u64;
            if o.dst.is_none() {
                self.beacon_frames += 1;
                self.beacon_bytes += f.len() as u64;
            } else {
                // Any packet carries the barrier (the clock it was sent at, or less).
                self.carried = self.process.clock_mut().last();
            }
            out(f);
        }
        while let Some(d) = self.process.recv() {
            self.delivered.push(Delivered { at: now, d });
        }
        while let Some(e) = self.process.poll_event() {
            // A failed process is no longer a destination (§5: resume without it).
            if let Event::ProcessFail { process, .. } = e {
                self.members.retain(|&m| m != process);
            }
            self.events.push(e);
        }
    }

    fn broadcast(&mut self, now: u64) {
        let me = self.process.id();
        let scattering: Vec<(ProcessId, Vec<u8>)> = match self.work.kv {
            Some((keys, space)) => {
                let ks = hosts::onepipe::kv::txn_keys(me, self.seq, keys, space);
                hosts::onepipe::kv::txn_scattering(self.seq, &ks, &self.members)
            }
            None => {
                let mut msg = vec![0u8; self.work.size.max(8)];
                msg[..8].copy_from_slice(&self.seq.to_be_bytes());
                self.members
                    .iter()
                    .filter(|&&p| p != me)
                    .map(|&d| (d, msg.clone()))
                    .collect()
            }
        };
        let dsts: Vec<ProcessId> = scattering.iter().map(|(d, _)| *d).collect();
        let r = if self.work.reliable {
            self.process.reliable_send(now, scattering)
        } else {
            self.process.unreliable_send(now, scattering)
        };
        // A full window skips this broadcast (counted as not sent).
        if let Ok(ts) = r {
            self.sent.push(Sent {
                ts,
                seq: self.seq,
                dsts,
                at: now,
            });
            self.seq += 1;
        }
    }
}

impl HostApp for OnepipeHost {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
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
        if udp.destination_port() != wire::UDP_PORT || ip.header().destination_addr() != self.ip {
            self.ignored += 1;
            return;
        }
        let src = self
            .by_ip
            .get(&ip.header().source_addr())
            .copied()
            .unwrap_or(ProcessId::MAX);
        if let Ok((h, _)) = wire::Header::parse(udp.payload()) {
            if matches!(h.opcode, wire::Opcode::Data | wire::Opcode::ReliableData) {
                self.arrivals.entry((src, h.ts)).or_insert(now.0);
            }
        }
        if self.process.on_packet(now.0, src, udp.payload()).is_err() {
            self.ignored += 1;
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        let now = now.0;
        if let (Some(to), true) = (self.work.background_to, self.work.background_every > 0) {
            while now >= self.next_background {
                let b = PacketBuilder::ethernet2(self.mac, self.gw_mac)
                    .ipv4(self.ip.octets(), to.octets(), 64)
                    .udp(BACKGROUND_PORT, BACKGROUND_PORT);
                let payload = vec![0u8; self.work.background_size.saturating_sub(42)];
                let mut f = Vec::with_capacity(b.size(payload.len()));
                b.write(&mut f, &payload).expect("a Vec grows");
                self.background_frames += 1;
                out(f);
                self.next_background += self.work.background_every;
            }
        }
        if self.work.send_every > 0 && self.seq < self.work.messages && now >= self.next_send {
            self.broadcast(now);
            self.next_send = now + self.work.send_every;
        }
        self.process.on_timer(now);
        self.drain(now, out);
        // Beacons at synchronized times (§4.2): at every multiple of the interval on this
        // host's clock, so a switch gets its hosts' beacons almost at once; none where a
        // packet already carried the tick's barrier (sent at or after the tick).
        let every = self.work.beacon_every.max(1);
        let clock = self.process.get_timestamp(now);
        let tick = clock / every;
        if tick > self.last_tick {
            self.last_tick = tick;
            if self.carried < tick * every {
                self.process.beacon(now);
                self.drain(now, out);
            }
        }
        // The next multiple of the interval on this clock, in true time (the drift over one
        // interval is below a nanosecond; waking a little early only polls again).
        self.next_beacon = now + ((tick + 1) * every - clock).max(1);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        let mut t = self.next_beacon;
        if self.work.send_every > 0 && self.seq < self.work.messages {
            t = t.min(self.next_send);
        }
        if self.work.background_to.is_some() && self.work.background_every > 0 {
            t = t.min(self.next_background);
        }
        Some(Nanos(t))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

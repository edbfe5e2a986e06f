//! What the lab's RDMA hosts share: pisa's RoCEv2 endpoint, held by the host application and
//! by its [`RdmaPort`]s, with the frame plumbing of a [`crate::host::HostApp`] — RoCEv2
//! frames (UDP 4791) go to the endpoint, LEO's UDP lookups ([`super::wire`]) to the app — and
//! the RC connection of two ports at setup (QP numbers exchanged out of band).

use dataplane::Nanos;
use hosts::leo::rdma::{lock, shared, RcSettings, RdmaPort, SharedEndpoint};
use hosts::leo::LeoError;
use rdma::verbs::{Endpoint, EndpointConfig, Instant};
use std::net::{IpAddr, Ipv4Addr};

use crate::topology::Topology;

/// UDP port of RoCEv2.
pub const ROCE_PORT: u16 = 4791;

/// One host's endpoint.
#[derive(Clone)]
pub struct Node {
    /// The endpoint, shared with the node's ports.
    pub ep: SharedEndpoint,
    /// Its address.
    pub ip: Ipv4Addr,
}

impl Node {
    /// The endpoint of topology host `host`, with every other host as a neighbour at its own
    /// MAC (leo_kvs.p4 forwards by IPv4 address and leaves the MACs as sent).
    pub fn new(topo: &Topology, host: usize) -> Node {
        let h = &topo.hosts[host];
        let mut ep = Endpoint::new(EndpointConfig::new(h.mac, h.ip));
        for (o, other) in topo.hosts.iter().enumerate() {
            if o != host {
                ep.add_neighbour(IpAddr::V4(other.ip), other.mac);
            }
        }
        Node {
            ep: shared(ep),
            ip: h.ip,
        }
    }

    /// A new RC QP with `slots` message slots.
    pub fn port(&self, slots: usize) -> Result<RdmaPort, LeoError> {
        RdmaPort::new(self.ep.clone(), slots)
    }

    /// Whether `frame` is RoCEv2 (then it went to the endpoint).
    pub fn take(&self, now: Nanos, frame: &[u8]) -> bool {
        let roce = frame.len() > 42
            && frame[12..14] == [0x08, 0x00]
            && frame[23] == 17
            && frame[36..38] == ROCE_PORT.to_be_bytes();
        if roce {
            lock(&self.ep).handle_frame(Instant::from_nanos(now.0), frame);
        }
        roce
    }

    /// Runs the endpoint's timers and hands its frames to `out`.
    pub fn transmit(&self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        let t = Instant::from_nanos(now.0);
        let mut ep = lock(&self.ep);
        if ep.poll_timeout().is_some_and(|d| d <= t) {
            ep.handle_timeout(t);
        }
        while let Some(f) = ep.poll_transmit(t) {
            out(f);
        }
    }

    /// The earlier of the app's next deadline `due` and the endpoint's next timer.
    pub fn wakeup(&self, due: Option<u64>) -> Option<Nanos> {
        let ep = lock(&self.ep).poll_timeout().map(|t| t.as_nanos());
        due.into_iter().chain(ep).min().map(Nanos)
    }
}

/// Connects `a` (on `a_ip`'s node) and `b` (on `b_ip`'s) as one RC connection with settings
/// `rc`.
pub fn connect(
    (a, a_ip): (&RdmaPort, Ipv4Addr),
    (b, b_ip): (&RdmaPort, Ipv4Addr),
    psn: u32,
    rc: RcSettings,
) -> Result<(), LeoError> {
    a.connect_with(b_ip, b.qpn, psn, rc)?;
    b.connect_with(a_ip, a.qpn, psn, rc)
}

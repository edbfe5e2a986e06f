//! Applications of the in-memory driver: what runs on a lab host instead of collecting frames
//! in an inbox ([`HostApp`]), and control-plane agents cabled to a switch port, typically its
//! CPU port, that program the switch as they run ([`SwitchApp`]: the P4CE agent's RDMA CM
//! endpoint, MC-RDMA's and 1Pipe's controllers). [`HostApp`] is the I/O-free shape the host protocols already have (frames
//! in, frames out, a next wake-up time); [`RdmaHost`] is pisa's RoCEv2 endpoint on a lab host
//! (`rdma: true` in the topology), addressed from the topology and with every other host
//! reached through its switch's router MAC (a routed fabric answers no ARP).

use std::any::Any;
use std::net::IpAddr;

use dataplane::Nanos;
use pipeline::switch::Switch;
use rdma::verbs::{Endpoint, EndpointConfig, Instant};

use crate::topology::Topology;

/// An application on a lab host, driven by the lab in virtual time.
pub trait HostApp: Any {
    /// A frame arrived at `now`.
    fn receive(&mut self, now: Nanos, frame: &[u8]);
    /// Runs what is due at `now` (timers) and hands every frame to send to `out`.
    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>));
    /// When it next needs [`HostApp::poll`] without a frame arriving.
    fn next_wakeup(&self) -> Option<Nanos>;
    /// For [`crate::MemLab::app_mut`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// A control-plane agent on a switch port, driven by the lab in virtual time: it sees the
/// frames the switch sends to that port and may program the switch (runtime API) whenever it
/// runs.
pub trait SwitchApp: Any {
    /// A frame arrived from the switch at `now`.
    fn receive(&mut self, now: Nanos, frame: &[u8], sw: &mut Switch);
    /// Runs what is due at `now`; frames for the switch go to `out`.
    fn poll(&mut self, now: Nanos, sw: &mut Switch, out: &mut dyn FnMut(Vec<u8>));
    /// When it next needs [`SwitchApp::poll`] without a frame arriving.
    fn next_wakeup(&self) -> Option<Nanos>;
    /// For [`crate::MemLab::agent_mut`].
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// pisa's RoCEv2 endpoint as a lab host.
pub struct RdmaHost {
    pub endpoint: Endpoint,
}

impl RdmaHost {
    /// The endpoint of host `host`: its MAC and address, and a static neighbour entry for every
    /// other host's address → the router MAC of this host's switch (its gateway).
    pub fn new(topo: &Topology, host: usize) -> RdmaHost {
        let h = &topo.hosts[host];
        let mut ep = Endpoint::new(EndpointConfig::new(h.mac, h.ip));
        let gw = topo
            .host_attachment(host)
            .map_or(h.mac, |(s, _)| topo.switches[s].mac);
        for (o, other) in topo.hosts.iter().enumerate() {
            if o != host {
                ep.add_neighbour(IpAddr::V4(other.ip), gw);
            }
        }
        RdmaHost { endpoint: ep }
    }
}

fn instant(t: Nanos) -> Instant {
    Instant::from_nanos(t.0)
}

impl HostApp for RdmaHost {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        self.endpoint.handle_frame(instant(now), frame);
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        let t = instant(now);
        if self.endpoint.poll_timeout().is_some_and(|d| d <= t) {
            self.endpoint.handle_timeout(t);
        }
        while let Some(f) = self.endpoint.poll_transmit(t) {
            out(f);
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.endpoint.poll_timeout().map(|t| Nanos(t.as_nanos()))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

//! The responder's CPU: one core serving LEO KVS requests in arrival order, each for its
//! request type's compute time, and answering with the responder delay `t4 - t3` (Fig. 6) in
//! the reply's header (Fig. 7).

use super::wire::{Msg, OP_GET, OP_PUT, OP_REPLY};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::jct::Header;
use std::any::Any;
use std::collections::{HashMap, VecDeque};

/// The initial value of `key` (what the switch holds for hot keys too).
pub fn initial_value(key: u64) -> u64 {
    key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// The server.
pub struct Server {
    store: HashMap<u64, u64>,
    get_ns: u64,
    put_ns: u64,
    busy_until: u64,
    out: VecDeque<(u64, Vec<u8>)>,
    /// Requests served.
    pub served: u64,
    /// Frames that were not LEO requests.
    pub dropped: u64,
}

impl Server {
    /// A server with these service times, ns.
    pub fn new(get_ns: u64, put_ns: u64) -> Server {
        Server {
            store: HashMap::new(),
            get_ns,
            put_ns,
            busy_until: 0,
            out: VecDeque::new(),
            served: 0,
            dropped: 0,
        }
    }
}

impl HostApp for Server {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        let Some(m) = Msg::decode(frame).filter(|m| matches!(m.hdr.request, OP_GET | OP_PUT))
        else {
            self.dropped += 1;
            return;
        };
        let t3 = now.0;
        let cost = if m.hdr.request == OP_PUT {
            self.put_ns
        } else {
            self.get_ns
        };
        let t4 = self.busy_until.max(t3) + cost;
        self.busy_until = t4;
        let value = if m.hdr.request == OP_PUT {
            self.store.insert(m.key, m.value);
            m.value
        } else {
            self.store
                .get(&m.key)
                .copied()
                .unwrap_or_else(|| initial_value(m.key))
        };
        let reply = Msg {
            mac: (m.mac.1, m.mac.0),
            ip: (m.ip.1, m.ip.0),
            port: (m.port.1, m.port.0),
            seq: m.seq,
            hdr: Header {
                request: OP_REPLY,
                path: m.hdr.path,
                responder_ns: t4 - t3,
            },
            key: m.key,
            value,
        };
        self.served += 1;
        self.out.push_back((t4, reply.encode()));
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        while self.out.front().is_some_and(|(t, _)| *t <= now.0) {
            if let Some((_, f)) = self.out.pop_front() {
                out(f);
            }
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.out.front().map(|(t, _)| Nanos(*t))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

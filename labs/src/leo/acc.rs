//! The off-path accelerator node: its own host with its own RoCEv2 endpoint and link, doing the
//! KVS's index lookup (§V-A: the first of a GET's two round trips) for any key. The index lives
//! in a region the server WRITEs remotely (8 bytes per key: the value's location in the
//! server's memory); a lookup arrives as an RC SEND of a LEO message, waits for the device
//! (one lookup at a time, `service_ns` each — the accelerator's profiled service time from the
//! application file) and is answered with {key, location} and the device time in the Fig. 7
//! header (payload {key, location}). The requester then READs the value from the server.

use super::node::Node;
use super::server::{word, words};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::api::Message;
use hosts::leo::jct::Header;
use hosts::leo::rdma::{lock, RdmaPort};
use hosts::leo::LeoError;
use rdma::verbs::MrInfo;
use std::any::Any;
use std::collections::VecDeque;

/// The accelerator node.
pub struct Accelerator {
    node: Node,
    client: RdmaPort,
    /// The index region (the server WRITEs it).
    pub index: MrInfo,
    service_ns: u64,
    busy: u64,
    out: VecDeque<(u64, Message)>,
    /// Lookups served.
    pub served: u64,
    /// Lookups it could not answer.
    pub dropped: u64,
}

impl Accelerator {
    /// The node answering `client`, its index (`keys` entries) registered for the server's
    /// `server` connection and filled with `location(key)`.
    pub fn new(
        node: Node,
        client: RdmaPort,
        server: &RdmaPort,
        keys: u64,
        service_ns: u64,
        location: impl Fn(u64) -> u64,
    ) -> Result<Accelerator, LeoError> {
        let index = server.reg_remote(((keys + 1) * 8) as usize, true)?;
        {
            let mut ep = lock(&node.ep);
            let b = ep
                .mr_bytes_mut(index.lkey)
                .map_err(|e| LeoError::invalid("accelerator index", e.to_string()))?;
            for k in 1..=keys {
                let at = (8 * k) as usize;
                b[at..at + 8].copy_from_slice(&location(k).to_be_bytes());
            }
        }
        Ok(Accelerator {
            node,
            client,
            index,
            service_ns,
            busy: 0,
            out: VecDeque::new(),
            served: 0,
            dropped: 0,
        })
    }

    fn lookup(&self, key: u64) -> u64 {
        let ep = lock(&self.node.ep);
        ep.mr_bytes(self.index.lkey)
            .ok()
            .and_then(|b| b.get((8 * key) as usize..(8 * key + 8) as usize))
            .map_or(0, |w| word(w, 0))
    }
}

impl HostApp for Accelerator {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        if !self.node.take(now, frame) {
            self.dropped += 1;
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        while let Some(m) = self.client.recv() {
            self.busy = self.busy.max(now.0) + self.service_ns;
            let wait = self.busy - now.0;
            let reply = Message {
                header: Header {
                    responder_ns: wait,
                    ..m.header
                },
                seq: m.seq,
                payload: words(&[word(&m.payload, 0)]),
            };
            self.out.push_back((self.busy, reply));
        }
        while self.out.front().is_some_and(|(t, _)| *t <= now.0) {
            let Some((_, mut m)) = self.out.pop_front() else {
                break;
            };
            let key = word(&m.payload, 0);
            // The index is read when the lookup finishes: a location WRITTEN meanwhile counts.
            m.payload = words(&[key, self.lookup(key)]);
            if self.client.send(&m).is_err() {
                self.dropped += 1;
            } else {
                self.served += 1;
            }
        }
        self.node.transmit(now, out);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.node.wakeup(self.out.front().map(|(t, _)| *t))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

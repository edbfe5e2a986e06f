//! The responder: the server's CPU (one core serving requests in arrival order) and its
//! memory. Values live in a region registered for remote READ ([`Store`]): slot `s` holds
//! {key, value} (16 bytes) at `addr + 16·s`; key `k` starts in slot `k`. A PUT writes the new
//! value into a fresh slot — never over a value a requester may be READing — and moves the key
//! there; before the PUT is answered the server WRITEs the new location into the off-path
//! accelerator's index (one-sided, over their own RC connection), so every lookup after the
//! reply finds it. Requests arrive as RC SENDs of LEO messages from the client, or as UDP
//! lookups a switch did not answer (a stale hot key); the reply goes back the same way.
//!
//! The CPU is a LEO context (`hosts::leo::api`, Table II): GET and PUT are application
//! functions registered with `reg_app_func` at the CPU role, its clock with `reg_ts_func`; each
//! request goes through `handle`, which writes the responder delay `t4 - t3` (Fig. 6) into the
//! reply's Fig. 7 header. A reply's payload is {key, location, value}: leo_kvs.p4 reads the
//! location of a PUT's reply as its `kv.value` (the refresh digest). A function starts when the core is free and takes its request type's
//! compute time from the application file.

use super::node::Node;
use super::wire::{Msg, OP_GET, OP_REPLY};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::api::{Leo, Message, Role, TS_SW};
use hosts::leo::jct::Header;
use hosts::leo::rdma::{lock, RdmaPort, SharedEndpoint};
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, LeoError};
use rdma::verbs::MrInfo;
use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes of one value slot: key, value.
pub const SLOT_BYTES: u64 = 16;

/// The initial value of `key`.
pub fn initial_value(key: u64) -> u64 {
    key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// Big-endian word `i` bytes into `p` (0 past the end).
pub fn word(p: &[u8], i: usize) -> u64 {
    p.get(i..i + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

/// Words as big-endian bytes.
pub fn words(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_be_bytes()).collect()
}

/// The server's values: the registered region and where each key lives.
pub struct Store {
    ep: SharedEndpoint,
    /// The region (its address and rkey go to requesters).
    pub mr: MrInfo,
    slot_of: HashMap<u64, u64>,
    next: u64,
    slots: u64,
}

impl Store {
    /// `keys` keys in their first slots, room for `puts` more values.
    pub fn new(
        client: &RdmaPort,
        ep: SharedEndpoint,
        keys: u64,
        puts: u64,
    ) -> Result<Store, LeoError> {
        let slots = keys + 1 + puts;
        let mr = client.reg_remote((slots * SLOT_BYTES) as usize, false)?;
        let mut s = Store {
            ep,
            mr,
            slot_of: HashMap::new(),
            next: keys + 1,
            slots,
        };
        for k in 1..=keys {
            s.put_at(k, k, initial_value(k));
        }
        Ok(s)
    }

    /// The location of slot `slot`.
    pub fn location(&self, slot: u64) -> u64 {
        self.mr.addr + slot * SLOT_BYTES
    }

    fn put_at(&mut self, key: u64, slot: u64, value: u64) {
        let at = (slot * SLOT_BYTES) as usize;
        if let Ok(b) = lock(&self.ep).mr_bytes_mut(self.mr.lkey) {
            b[at..at + 16].copy_from_slice(&words(&[key, value]));
        }
        self.slot_of.insert(key, slot);
    }

    /// `key`'s value and location (slot 0, value 0 for a key never stored).
    pub fn get(&self, key: u64) -> (u64, u64) {
        let slot = self.slot_of.get(&key).copied().unwrap_or(0);
        let at = (slot * SLOT_BYTES) as usize;
        let b = lock(&self.ep);
        let v = b.mr_bytes(self.mr.lkey).map_or(0, |b| word(b, at + 8));
        (v, self.location(slot))
    }

    /// Stores `value` for `key` in a fresh slot; returns its location (`None`: region full).
    pub fn put(&mut self, key: u64, value: u64) -> Option<u64> {
        if self.next >= self.slots {
            return None;
        }
        self.next += 1;
        self.put_at(key, self.next - 1, value);
        Some(self.location(self.next - 1))
    }
}

/// A reply the core finishes at some time.
enum Reply {
    Rdma(Message),
    Put {
        msg: Message,
        key: u64,
        location: u64,
    },
    Udp(Vec<u8>),
}

/// The off-path accelerator's index as the server sees it: where to WRITE a key's location.
#[derive(Debug, Clone, Copy)]
pub struct RemoteIndex {
    /// Address of key 0's entry (8 bytes per key).
    pub addr: u64,
    /// Its rkey.
    pub rkey: u32,
}

/// The server.
pub struct Server {
    node: Node,
    leo: Leo,
    clock: Arc<AtomicU64>,
    client: RdmaPort,
    acc: RdmaPort,
    index: RemoteIndex,
    /// The values.
    pub store: Arc<Mutex<Store>>,
    get: u8,
    put: u8,
    out: VecDeque<(u64, Reply)>,
    writing: HashMap<u64, Message>,
    next_tag: u64,
    /// Requests served.
    pub served: u64,
    /// Frames or messages that were not LEO requests, or that the context refused.
    pub dropped: u64,
}

impl Server {
    /// The server on `node` for `spec` (its `GET` and `PUT` types and CPU compute times),
    /// answering on `client` and keeping the accelerator's index (via `acc`) current.
    pub fn new(
        node: Node,
        spec: &AppSpec,
        client: RdmaPort,
        acc: RdmaPort,
        store: Store,
        index: RemoteIndex,
    ) -> Result<Server, LeoError> {
        let cpu = spec.hw.device("cpu", "server")?;
        let idx = |n: &str| {
            spec.request(n).ok_or_else(|| LeoError::Unknown {
                context: "server".into(),
                what: "request type",
                name: n.into(),
            })
        };
        let (get, put) = (idx("GET")?, idx("PUT")?);
        let cost = |r: usize| spec.requests[r].compute_ns[cpu].unwrap_or(0.0) as u64;
        let clock = Arc::new(AtomicU64::new(0));
        let busy = Arc::new(AtomicU64::new(0));
        let store = Arc::new(Mutex::new(store));
        let mut leo = Leo::new(spec.clone(), Policy::Cpu);
        // Every request type the CPU serves: PUT stores, any other type is a lookup of a GET.
        let served: Vec<(String, u64, bool)> = spec
            .requests
            .iter()
            .enumerate()
            .filter(|(_, r)| r.paths.iter().any(|&p| spec.paths[p].name == "cpu"))
            .map(|(i, r)| (r.name.clone(), cost(i), i == put))
            .collect();
        for (name, ns, is_put) in served {
            let (clk, busy, store) = (clock.clone(), busy.clone(), store.clone());
            leo.reg_app_func(
                Box::new(move |p| {
                    let done = busy
                        .load(Ordering::Relaxed)
                        .max(clk.load(Ordering::Relaxed))
                        + ns;
                    busy.store(done, Ordering::Relaxed);
                    clk.store(done, Ordering::Relaxed);
                    let key = word(p, 0);
                    if is_put {
                        let loc = lock(&store).put(key, word(p, 8)).unwrap_or(0);
                        words(&[key, loc, word(p, 8)])
                    } else {
                        let (v, loc) = lock(&store).get(key);
                        words(&[key, loc, v])
                    }
                }),
                &name,
                Role::Cpu,
            );
        }
        let clk = clock.clone();
        leo.reg_ts_func(Box::new(move || clk.load(Ordering::Relaxed)), TS_SW);
        Ok(Server {
            node,
            leo,
            clock,
            client,
            acc,
            index,
            store,
            get: get as u8,
            put: put as u8,
            out: VecDeque::new(),
            writing: HashMap::new(),
            next_tag: 0,
            served: 0,
            dropped: 0,
        })
    }

    /// Runs `m` on the core; the reply is due when the core finishes it.
    fn run(&mut self, now: u64, m: &Message) -> Option<Message> {
        self.clock.store(now, Ordering::Relaxed);
        let r = self.leo.handle(m, Role::Cpu);
        if r.is_err() {
            self.dropped += 1;
        }
        r.ok()
    }

    fn udp(&mut self, now: Nanos, frame: &[u8]) {
        let Some(m) = Msg::decode(frame).filter(|m| m.hdr.request == OP_GET) else {
            self.dropped += 1;
            return;
        };
        let req = Message {
            header: Header {
                request: self.get,
                ..m.hdr
            },
            seq: u64::from(m.seq),
            payload: words(&[m.key, 0]),
        };
        let Some(resp) = self.run(now.0, &req) else {
            return;
        };
        let reply = Msg {
            mac: (m.mac.1, m.mac.0),
            ip: (m.ip.1, m.ip.0),
            port: (m.port.1, m.port.0),
            seq: m.seq,
            hdr: Header {
                request: OP_REPLY,
                path: m.hdr.path,
                responder_ns: resp.header.responder_ns,
            },
            key: m.key,
            value: word(&resp.payload, 8),
        };
        self.served += 1;
        let at = now.0 + resp.header.responder_ns;
        self.out.push_back((at, Reply::Udp(reply.encode())));
    }

    fn messages(&mut self, now: u64) {
        while let Some(m) = self.client.recv() {
            let Some(resp) = self.run(now, &m) else {
                continue;
            };
            self.served += 1;
            let at = now + resp.header.responder_ns;
            let reply = if m.header.request == self.put {
                let (key, location) = (word(&resp.payload, 0), word(&resp.payload, 8));
                Reply::Put {
                    msg: resp,
                    key,
                    location,
                }
            } else {
                Reply::Rdma(resp)
            };
            self.out.push_back((at, reply));
        }
        for d in self.acc.take_done() {
            if let Some(msg) = self.writing.remove(&d.tag) {
                if !d.ok {
                    self.dropped += 1;
                }
                if self.client.send(&msg).is_err() {
                    self.dropped += 1;
                }
            }
        }
    }

    fn finish(&mut self, now: u64, udp: &mut dyn FnMut(Vec<u8>)) {
        while self.out.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, r)) = self.out.pop_front() else {
                return;
            };
            let sent = match r {
                Reply::Udp(f) => {
                    udp(f);
                    Ok(())
                }
                Reply::Rdma(m) => self.client.send(&m),
                Reply::Put { msg, key, location } => {
                    self.next_tag += 1;
                    self.writing.insert(self.next_tag, msg);
                    let at = self.index.addr + 8 * key;
                    self.acc
                        .write(self.next_tag, at, self.index.rkey, &location.to_be_bytes())
                }
            };
            if sent.is_err() {
                self.dropped += 1;
            }
        }
    }
}

impl HostApp for Server {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        if !self.node.take(now, frame) {
            self.udp(now, frame);
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        self.messages(now.0);
        self.finish(now.0, out);
        self.node.transmit(now, out);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        self.node.wakeup(self.out.front().map(|(t, _)| *t))
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

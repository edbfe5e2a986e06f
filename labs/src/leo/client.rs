//! The requester: issues a pre-drawn stream of GETs and PUTs (YCSB keys, Poisson arrivals)
//! through a LEO context (`hosts::leo::api`, Table II). `send` picks each request's path with
//! the context's policy and stamps t1/t2; the request leaves after the injected 3–9 µs network
//! delay (§V-A) on the path's transport:
//!
//! - **switch** (on-path): a UDP lookup to the server's address that leo_kvs.p4 answers for a
//!   fresh hot key with the value's location (a stale one reaches the server's CPU, which
//!   answers the same lookup);
//! - **offpath**: an RC SEND to the off-path accelerator node, answered with the location;
//! - **cpu**: an RC SEND to the server, answered by its CPU with the value (a PUT: with the new
//!   location, once the server has stored it).
//!
//! A location is followed by an RDMA READ of the value from the server's memory (a GET's
//! second round trip, §IV's application abstraction). On completion `recv` takes t5/t6, reads
//! the responder delay from the Fig. 7 header and feeds the JCTs back to the policy. The client
//! checks every value: each request must be answered exactly once with the latest value its
//! key was PUT.
//!
//! Each request type's dependency (§III-A, the application file's `dependency`) says what
//! it waits for: **ADDR** (same address) is kept per key in arrival order: a GET waits while a
//! PUT to its key is in flight, a PUT while anything to its key is. **MSG** (same message)
//! orders only the round trips of one message, which the client does by construction (a
//! GET's READ leaves on its lookup's answer): messages go out as they arrive, as with **NONE**.
//! Without ADDR a GET may overtake a PUT to its key (or be overtaken by a later one) and read
//! another value than the last one PUT before it (§III-A: "the GET obtaining a stale value";
//! the switch's hot-key cache, kept coherent by ADDR, can then also serve an older location):
//! counted as `reordered` (what the application allowed), not as wrong; a value never PUT to
//! its key is wrong whatever the dependency.

use super::node::Node;
use super::server::{initial_value, word, words, SLOT_BYTES};
use super::wire::{Msg, LEO_PORT, OP_GET, PATH_IN_NETWORK};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::api::{Leo, Message, Role, TS_SW};
use hosts::leo::jct::Header;
use hosts::leo::rdma::{lock, RdmaPort};
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, Dependency, LeoError};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One request of the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Arrival (t1), ns.
    pub at: u64,
    /// PUT (else GET).
    pub put: bool,
    /// Key.
    pub key: u64,
    /// Injected network delay, ns.
    pub delay: u64,
}

/// Request types of the application file, by index.
#[derive(Debug, Clone, Copy)]
pub struct Types {
    /// GET of a key the switch holds.
    pub get_hot: usize,
    /// GET of any other key.
    pub get: usize,
    /// PUT.
    pub put: usize,
}

/// How a path's messages travel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP lookup answered by the switch.
    Switch,
    /// RC SEND to the off-path accelerator.
    OffPath,
    /// RC SEND to the server's CPU.
    Cpu,
}

impl Transport {
    /// The transport of a path of the lab's application file, by name.
    pub fn of(name: &str) -> Option<Transport> {
        match name {
            "switch" => Some(Transport::Switch),
            "offpath" => Some(Transport::OffPath),
            "cpu" => Some(Transport::Cpu),
            _ => None,
        }
    }
}

struct Pending {
    n: usize,
    r: usize,
    path: u8,
    t1: u64,
    /// The value it must read in issue order.
    expect: u64,
    responder_ns: u64,
}

type Outbox = Arc<Mutex<VecDeque<(Role, Message)>>>;
type Inbox = Arc<Mutex<VecDeque<Message>>>;

/// What the client measured.
#[derive(Debug, Clone, Default)]
pub struct ClientStats {
    /// End-to-end latency per answered request, ns.
    pub e2e_ns: Vec<f64>,
    /// Requests sent per transport: switch, off-path, CPU.
    pub sent: [u64; 3],
    /// Lookups the switch answered.
    pub in_network: u64,
    /// Replies with a wrong value.
    pub wrong: u64,
    /// GETs answered with the value before a PUT to their key that was in flight when they
    /// left (allowed without ADDR dependency).
    pub reordered: u64,
    /// Requests that waited for an earlier one to their key (ADDR dependency).
    pub held: u64,
    /// Lab time of the last answer, ns.
    pub last_ns: u64,
    /// Replies for no pending request (a duplicate or a stranger), or requests that could not
    /// be sent.
    pub unexpected: u64,
}

/// The server's value region as a requester reads it.
#[derive(Debug, Clone, Copy)]
pub struct RemoteStore {
    /// The server's MAC and address (UDP lookups go there).
    pub server: ([u8; 6], [u8; 4]),
    /// The region's rkey.
    pub rkey: u32,
}

/// The client.
pub struct Client {
    node: Node,
    me: [u8; 6],
    srv: RdmaPort,
    acc: RdmaPort,
    store: RemoteStore,
    transports: Vec<Transport>,
    reqs: Vec<Request>,
    next: usize,
    hot: HashSet<u64>,
    types: Types,
    names: Vec<String>,
    /// Each request type's dependency.
    deps: Vec<Dependency>,
    leo: Leo,
    clock: Arc<AtomicU64>,
    outbox: Outbox,
    inbox: Inbox,
    sendq: BinaryHeap<Reverse<(u64, u64)>>,
    outgoing: HashMap<u64, (Transport, Message)>,
    pending: HashMap<u64, Pending>,
    held: HashMap<u64, VecDeque<usize>>,
    in_flight: HashMap<u64, (u32, u32)>,
    /// The last value PUT to each key (sent, maybe not answered yet).
    issued: HashMap<u64, u64>,
    /// What it measured.
    pub stats: ClientStats,
}

/// How the client reaches the others.
pub struct Wiring {
    /// Its endpoint.
    pub node: Node,
    /// Its MAC.
    pub mac: [u8; 6],
    /// RC connection to the server.
    pub srv: RdmaPort,
    /// RC connection to the off-path accelerator.
    pub acc: RdmaPort,
    /// The server's values.
    pub store: RemoteStore,
}

impl Client {
    /// A client sending `reqs` over `w`, choosing paths for `spec` (profiled) with `policy`.
    pub fn new(
        w: Wiring,
        reqs: Vec<Request>,
        hot: HashSet<u64>,
        types: Types,
        spec: &AppSpec,
        policy: Policy,
    ) -> Result<Client, LeoError> {
        let transports = spec
            .paths
            .iter()
            .map(|p| {
                Transport::of(&p.name).ok_or_else(|| {
                    LeoError::invalid(
                        "lab paths",
                        format!("`{}`: expected switch, offpath or cpu", p.name),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let names = spec.requests.iter().map(|r| r.name.clone()).collect();
        let deps = spec.requests.iter().map(|r| r.dependency).collect();
        let mut leo = Leo::new(spec.clone(), policy);
        let clock = Arc::new(AtomicU64::new(0));
        let outbox: Outbox = Arc::default();
        let inbox: Inbox = Arc::default();
        for role in [Role::Cpu, Role::Acc] {
            let o = outbox.clone();
            leo.reg_comm_func(
                Box::new(move |m| {
                    lock(&o).push_back((role, m.clone()));
                    Ok(())
                }),
                "send",
                role,
            );
            let i = inbox.clone();
            leo.reg_recv_func(Box::new(move || lock(&i).pop_front()), role);
        }
        let c = clock.clone();
        leo.reg_ts_func(Box::new(move || c.load(Ordering::Relaxed)), TS_SW);
        leo.init()?;
        Ok(Client {
            node: w.node,
            me: w.mac,
            srv: w.srv,
            acc: w.acc,
            store: w.store,
            transports,
            reqs,
            next: 0,
            hot,
            types,
            names,
            deps,
            leo,
            clock,
            outbox,
            inbox,
            sendq: BinaryHeap::new(),
            outgoing: HashMap::new(),
            pending: HashMap::new(),
            held: HashMap::new(),
            in_flight: HashMap::new(),
            issued: HashMap::new(),
            stats: ClientStats::default(),
        })
    }

    /// Requests not answered yet.
    pub fn outstanding(&self) -> usize {
        self.pending.len()
            + self.held.values().map(VecDeque::len).sum::<usize>()
            + (self.reqs.len() - self.next)
    }

    fn may_go(&self, q: &Request) -> bool {
        let (gets, puts) = self.in_flight.get(&q.key).copied().unwrap_or((0, 0));
        puts == 0 && (!q.put || gets == 0)
    }

    /// The request type of `q`.
    fn kind(&self, q: &Request) -> usize {
        match (q.put, self.hot.contains(&q.key)) {
            (true, _) => self.types.put,
            (false, true) => self.types.get_hot,
            (false, false) => self.types.get,
        }
    }

    fn issue(&mut self, n: usize, now: u64) {
        let q = self.reqs[n];
        let addr = self.deps[self.kind(&q)] == Dependency::Addr;
        if addr && (self.held.contains_key(&q.key) || !self.may_go(&q)) {
            self.stats.held += 1;
            self.held.entry(q.key).or_default().push_back(n);
            return;
        }
        self.send(n, now);
    }

    fn send(&mut self, n: usize, now: u64) {
        let q = self.reqs[n];
        let f = self.in_flight.entry(q.key).or_default();
        if q.put {
            f.1 += 1;
        } else {
            f.0 += 1;
        }
        let r = self.kind(&q);
        let value = if q.put { n as u64 + 1 } else { 0 };
        let expect = if q.put {
            self.issued.insert(q.key, value);
            value
        } else {
            self.issued
                .get(&q.key)
                .copied()
                .unwrap_or_else(|| initial_value(q.key))
        };
        self.clock.store(now, Ordering::Relaxed);
        let sent = self.leo.send(&self.names[r], words(&[q.key, value]));
        let Some((_, lm)) = sent.ok().and_then(|_| lock(&self.outbox).pop_front()) else {
            self.stats.unexpected += 1;
            return;
        };
        let path = lm.header.path;
        let t = self.transports[usize::from(path)];
        self.stats.sent[t as usize] += 1;
        self.pending.insert(
            lm.seq,
            Pending {
                n,
                r,
                path,
                t1: q.at,
                expect,
                responder_ns: 0,
            },
        );
        self.sendq.push(Reverse((now + q.delay, lm.seq)));
        self.outgoing.insert(lm.seq, (t, lm));
    }

    fn transmit(&mut self, seq: u64, out: &mut dyn FnMut(Vec<u8>)) {
        let Some((t, m)) = self.outgoing.remove(&seq) else {
            return;
        };
        let sent = match t {
            Transport::Switch => {
                let lookup = Msg {
                    mac: (self.me, self.store.server.0),
                    ip: (self.node.ip.octets(), self.store.server.1),
                    port: (40000, LEO_PORT),
                    seq: seq as u16,
                    hdr: Header {
                        request: OP_GET,
                        path: 1,
                        responder_ns: 0,
                    },
                    key: word(&m.payload, 0),
                    value: 0,
                };
                out(lookup.encode());
                Ok(())
            }
            Transport::OffPath => self.acc.send(&m),
            Transport::Cpu => self.srv.send(&m),
        };
        if sent.is_err() {
            self.stats.unexpected += 1;
        }
    }

    /// A lookup answered with `location` (and the responder's delay): READ the value.
    fn located(&mut self, seq: u64, location: u64, responder_ns: u64) {
        let Some(p) = self.pending.get_mut(&seq) else {
            self.stats.unexpected += 1;
            return;
        };
        p.responder_ns = responder_ns;
        if self
            .srv
            .read(seq, location, self.store.rkey, SLOT_BYTES as usize)
            .is_err()
        {
            self.stats.unexpected += 1;
        }
    }

    fn udp(&mut self, frame: &[u8]) {
        let Some(m) = Msg::decode(frame).filter(|m| m.ip.1 == self.node.ip.octets()) else {
            self.stats.unexpected += 1;
            return;
        };
        // Sequence numbers start at 1 and stay below 2^16 (at most 60000 requests a run).
        if m.hdr.path == PATH_IN_NETWORK {
            self.stats.in_network += 1;
        }
        self.located(u64::from(m.seq), m.value, m.hdr.responder_ns);
    }

    fn completions(&mut self, now: u64) {
        while let Some(m) = self.acc.recv() {
            self.located(m.seq, word(&m.payload, 8), m.header.responder_ns);
        }
        while let Some(m) = self.srv.recv() {
            let (key, value) = (word(&m.payload, 0), word(&m.payload, 16));
            self.answered(now, m.seq, key, value, m.header.responder_ns);
        }
        for d in self.srv.take_done() {
            let (key, value) = (word(&d.data, 0), word(&d.data, 8));
            let r = self.pending.get(&d.tag).map_or(0, |p| p.responder_ns);
            if !d.ok {
                self.stats.wrong += 1;
            }
            self.answered(now, d.tag, key, value, r);
        }
    }

    fn answered(&mut self, now: u64, seq: u64, key: u64, value: u64, responder_ns: u64) {
        let Some(p) = self.pending.remove(&seq) else {
            self.stats.unexpected += 1;
            return;
        };
        let q = self.reqs[p.n];
        if key != q.key || (value != p.expect && !self.overtook(&q, p.r, value)) {
            self.stats.wrong += 1;
        } else if value != p.expect {
            self.stats.reordered += 1;
        }
        self.clock.store(now, Ordering::Relaxed);
        lock(&self.inbox).push_back(Message {
            header: Header {
                request: p.r as u8,
                path: p.path,
                responder_ns,
            },
            seq,
            payload: Vec::new(),
        });
        let _ = self.leo.recv();
        self.stats.e2e_ns.push((now - p.t1) as f64);
        self.stats.last_ns = now;
        if let Some(f) = self.in_flight.get_mut(&q.key) {
            if q.put {
                f.1 -= 1;
            } else {
                f.0 -= 1;
            }
            if *f == (0, 0) {
                self.in_flight.remove(&q.key);
            }
        }
        self.release(q.key, now);
    }

    /// Whether GET `q` (type `r`) answered with `value`, not the last value PUT to its key
    /// before it left, read a value its key held at some time (an older or a later one: out of
    /// order), and its type has no ADDR dependency.
    fn overtook(&self, q: &Request, r: usize, value: u64) -> bool {
        if q.put || self.deps[r] == Dependency::Addr {
            return false;
        }
        // PUT number n writes n + 1 (see `send`).
        let put = value.checked_sub(1).and_then(|n| usize::try_from(n).ok());
        value == initial_value(q.key)
            || put.is_some_and(|n| {
                n < self.reqs.len() && self.reqs[n].put && self.reqs[n].key == q.key
            })
    }

    /// Sends the requests held for `key` that may go now, in arrival order.
    fn release(&mut self, key: u64, now: u64) {
        while let Some(&n) = self.held.get(&key).and_then(|h| h.front()) {
            let q = self.reqs[n];
            if !self.may_go(&q) {
                return;
            }
            if let Some(h) = self.held.get_mut(&key) {
                h.pop_front();
                if h.is_empty() {
                    self.held.remove(&key);
                }
            }
            self.send(n, now);
        }
    }
}

impl HostApp for Client {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        if !self.node.take(now, frame) {
            self.udp(frame);
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        self.completions(now.0);
        while self.next < self.reqs.len() && self.reqs[self.next].at <= now.0 {
            self.next += 1;
            self.issue(self.next - 1, now.0);
        }
        while let Some(Reverse((t, seq))) = self.sendq.peek().copied() {
            if t > now.0 {
                break;
            }
            self.sendq.pop();
            self.transmit(seq, out);
        }
        self.node.transmit(now, out);
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        let a = self.reqs.get(self.next).map(|r| r.at);
        let b = self.sendq.peek().map(|Reverse((t, _))| *t);
        self.node.wakeup(a.into_iter().chain(b).min())
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

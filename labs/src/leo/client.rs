//! The requester: issues a pre-drawn stream of GETs and PUTs (YCSB keys, Poisson arrivals)
//! through a LEO context (`hosts::leo::api`, Table II): `send` picks each request's path with
//! the context's policy and stamps t1/t2, the registered "send" function turns it into a frame
//! held for the injected 3–9 µs network delay (§V-A); on each reply `recv` takes t5/t6, reads
//! the responder delay from the Fig. 7 header and feeds the intra-host and end-to-end JCTs back
//! to the policy; the client checks the value: every request
//! must be answered exactly once with the latest value its key was PUT (ADDR dependency, kept
//! per key in arrival order: a GET waits while a PUT to its key is in flight, a PUT while
//! anything to its key is).

use super::server::initial_value;
use super::wire::{Msg, LEO_PORT, OP_GET, OP_PUT, PATH_IN_NETWORK};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::api::{Leo, Message, Role, TS_SW};
use hosts::leo::jct::Header;
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, LeoError};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The value behind `m` (every step taken under it is whole, so a panic elsewhere leaves it
/// usable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

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

struct Pending {
    n: usize,
    r: usize,
    seq: u64,
    t1: u64,
    expect: u64,
}

type Outbox = Arc<Mutex<VecDeque<(Role, Message)>>>;
type Inbox = Arc<Mutex<VecDeque<Message>>>;

/// What the client measured.
#[derive(Debug, Clone, Default)]
pub struct ClientStats {
    /// End-to-end latency per answered request, ns.
    pub e2e_ns: Vec<f64>,
    /// Replies made in the switch.
    pub in_network: u64,
    /// Replies with a wrong value.
    pub wrong: u64,
    /// Replies for no pending request (a duplicate or a stranger).
    pub unexpected: u64,
}

/// The client.
pub struct Client {
    me: ([u8; 6], [u8; 4]),
    server: ([u8; 6], [u8; 4]),
    reqs: Vec<Request>,
    next: usize,
    hot: HashSet<u64>,
    types: Types,
    names: Vec<String>,
    leo: Leo,
    clock: Arc<AtomicU64>,
    outbox: Outbox,
    inbox: Inbox,
    sendq: BinaryHeap<Reverse<(u64, u16)>>,
    frames: HashMap<u16, Vec<u8>>,
    pending: HashMap<u16, Pending>,
    held: HashMap<u64, VecDeque<usize>>,
    in_flight: HashMap<u64, (u32, u32)>,
    values: HashMap<u64, u64>,
    /// What it measured.
    pub stats: ClientStats,
}

impl Client {
    /// A client of `server` sending `reqs`, choosing paths for `spec` (profiled) with
    /// `policy`.
    pub fn new(
        me: ([u8; 6], [u8; 4]),
        server: ([u8; 6], [u8; 4]),
        reqs: Vec<Request>,
        hot: HashSet<u64>,
        types: Types,
        spec: &AppSpec,
        policy: Policy,
    ) -> Result<Client, LeoError> {
        let names = spec.requests.iter().map(|r| r.name.clone()).collect();
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
        leo.reg_ts_func(Box::new(move || c.load(Relaxed)), TS_SW);
        leo.init()?;
        Ok(Client {
            me,
            server,
            reqs,
            next: 0,
            hot,
            types,
            names,
            leo,
            clock,
            outbox,
            inbox,
            sendq: BinaryHeap::new(),
            frames: HashMap::new(),
            pending: HashMap::new(),
            held: HashMap::new(),
            in_flight: HashMap::new(),
            values: HashMap::new(),
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

    fn issue(&mut self, n: usize, now: u64) {
        let q = self.reqs[n];
        if self.held.contains_key(&q.key) || !self.may_go(&q) {
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
        let r = match (q.put, self.hot.contains(&q.key)) {
            (true, _) => self.types.put,
            (false, true) => self.types.get_hot,
            (false, false) => self.types.get,
        };
        let value = if q.put { n as u64 + 1 } else { 0 };
        let expect = if q.put {
            value
        } else {
            self.values
                .get(&q.key)
                .copied()
                .unwrap_or_else(|| initial_value(q.key))
        };
        self.clock.store(now, Relaxed);
        let sent = self.leo.send(&self.names[r], q.key.to_be_bytes().to_vec());
        let Some((role, lm)) = sent.ok().and_then(|_| lock(&self.outbox).pop_front()) else {
            self.stats.unexpected += 1;
            return;
        };
        let seq = lm.seq as u16;
        let m = Msg {
            mac: (self.me.0, self.server.0),
            ip: (self.me.1, self.server.1),
            port: (40000, LEO_PORT),
            seq,
            hdr: Header {
                request: if q.put { OP_PUT } else { OP_GET },
                path: u8::from(role == Role::Acc),
                responder_ns: 0,
            },
            key: q.key,
            value,
        };
        self.pending.insert(
            seq,
            Pending {
                n,
                r,
                seq: lm.seq,
                t1: q.at,
                expect,
            },
        );
        self.frames.insert(seq, m.encode());
        self.sendq.push(Reverse((now + q.delay, seq)));
    }

    fn answered(&mut self, now: u64, m: &Msg) {
        let Some(p) = self.pending.remove(&m.seq) else {
            self.stats.unexpected += 1;
            return;
        };
        let q = self.reqs[p.n];
        if m.value != p.expect || m.key != q.key {
            self.stats.wrong += 1;
        }
        if m.hdr.path == PATH_IN_NETWORK {
            self.stats.in_network += 1;
        }
        self.clock.store(now, Relaxed);
        lock(&self.inbox).push_back(Message {
            header: Header {
                request: p.r as u8,
                ..m.hdr
            },
            seq: p.seq,
            payload: Vec::new(),
        });
        let _ = self.leo.recv();
        let e2e = (now - p.t1) as f64;
        self.stats.e2e_ns.push(e2e);
        if q.put {
            self.values.insert(q.key, p.expect);
        }
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
        match Msg::decode(frame) {
            Some(m) if m.ip.1 == self.me.1 => self.answered(now.0, &m),
            _ => self.stats.unexpected += 1,
        }
    }

    fn poll(&mut self, now: Nanos, out: &mut dyn FnMut(Vec<u8>)) {
        while self.next < self.reqs.len() && self.reqs[self.next].at <= now.0 {
            self.next += 1;
            self.issue(self.next - 1, now.0);
        }
        while let Some(Reverse((t, seq))) = self.sendq.peek().copied() {
            if t > now.0 {
                break;
            }
            self.sendq.pop();
            if let Some(f) = self.frames.remove(&seq) {
                out(f);
            }
        }
    }

    fn next_wakeup(&self) -> Option<Nanos> {
        let a = self.reqs.get(self.next).map(|r| r.at);
        let b = self.sendq.peek().map(|Reverse((t, _))| *t);
        a.into_iter().chain(b).min().map(Nanos)
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

//! The responder's CPU: one core serving LEO KVS requests in arrival order. It is a LEO
//! context (`hosts::leo::api`, Table II): the KVS's GET and PUT are application functions
//! registered with `reg_app_func` at the CPU role, the core's clock with `reg_ts_func`, and each
//! request goes through `handle`, which writes the responder delay `t4 - t3` (Fig. 6) into the
//! reply's header (Fig. 7). An application function runs on the modelled core: it starts when
//! the core is free and takes its request type's compute time from the application file.

use super::wire::{Msg, OP_GET, OP_PUT, OP_REPLY};
use crate::host::HostApp;
use dataplane::Nanos;
use hosts::leo::api::{Leo, Message, Role, TS_SW};
use hosts::leo::jct::Header;
use hosts::leo::select::Policy;
use hosts::leo::{AppSpec, LeoError};
use std::any::Any;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The value behind `m` (every step taken under it is whole, so a panic elsewhere leaves it
/// usable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The initial value of `key` (what the switch holds for hot keys too).
pub fn initial_value(key: u64) -> u64 {
    key.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1
}

/// The server.
pub struct Server {
    leo: Leo,
    clock: Arc<AtomicU64>,
    get: u8,
    put: u8,
    out: VecDeque<(u64, Vec<u8>)>,
    /// Requests served.
    pub served: u64,
    /// Frames that were not LEO requests (or that the context refused).
    pub dropped: u64,
}

fn word(p: &[u8], i: usize) -> u64 {
    p.get(i..i + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

impl Server {
    /// A server for `spec` (its `GET` and `PUT` request types and their CPU compute times).
    pub fn new(spec: &AppSpec) -> Result<Server, LeoError> {
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
        let store: Arc<Mutex<HashMap<u64, u64>>> = Arc::default();
        let mut leo = Leo::new(spec.clone(), Policy::Cpu);
        for (name, ns, is_put) in [("GET", cost(get), false), ("PUT", cost(put), true)] {
            let (clk, busy, store) = (clock.clone(), busy.clone(), store.clone());
            leo.reg_app_func(
                Box::new(move |p| {
                    let done = busy.load(Relaxed).max(clk.load(Relaxed)) + ns;
                    busy.store(done, Relaxed);
                    clk.store(done, Relaxed);
                    let key = word(p, 0);
                    let v = if is_put {
                        lock(&store).insert(key, word(p, 8));
                        word(p, 8)
                    } else {
                        lock(&store)
                            .get(&key)
                            .copied()
                            .unwrap_or_else(|| initial_value(key))
                    };
                    v.to_be_bytes().to_vec()
                }),
                name,
                Role::Cpu,
            );
        }
        let clk = clock.clone();
        leo.reg_ts_func(Box::new(move || clk.load(Relaxed)), TS_SW);
        Ok(Server {
            leo,
            clock,
            get: get as u8,
            put: put as u8,
            out: VecDeque::new(),
            served: 0,
            dropped: 0,
        })
    }
}

impl HostApp for Server {
    fn receive(&mut self, now: Nanos, frame: &[u8]) {
        let Some(m) = Msg::decode(frame).filter(|m| matches!(m.hdr.request, OP_GET | OP_PUT))
        else {
            self.dropped += 1;
            return;
        };
        self.clock.store(now.0, Relaxed);
        let request = if m.hdr.request == OP_PUT {
            self.put
        } else {
            self.get
        };
        let mut payload = m.key.to_be_bytes().to_vec();
        payload.extend_from_slice(&m.value.to_be_bytes());
        let req = Message {
            header: Header { request, ..m.hdr },
            seq: u64::from(m.seq),
            payload,
        };
        let Ok(resp) = self.leo.handle(&req, Role::Cpu) else {
            self.dropped += 1;
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
            value: word(&resp.payload, 0),
        };
        self.served += 1;
        self.out
            .push_back((now.0 + resp.header.responder_ns, reply.encode()));
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

//! The APIs and wrappers of Table II: a LEO communication context that developers fill with
//! hardware-specific functions (`reg_comm_func`, `reg_mem_func`, `reg_ts_func`,
//! `reg_app_func`), check with `init`, and use with `send`/`recv` (two-sided), `write`/`read`
//! (one-sided) and `handle` (run the application function registered for a request type at a
//! role). `send` picks the path with the context's policy and stamps t1/t2 (Fig. 6); `recv`
//! takes t5/t6, reads the responder's delay from the Fig. 7 header and feeds the intra-host and
//! end-to-end JCTs back to the policy; `handle` stamps t3/t4 and writes `t4 - t3` into the
//! response's header. I/O-free: the registered functions do the I/O (a lab's frames, an RDMA
//! endpoint's work requests) and the timestamp functions give the time.

use super::app::AppSpec;
use super::error::LeoError;
use super::jct::{Header, Timestamps};
use super::path::PathKind;
use super::select::{Policy, Selector};
use std::collections::HashMap;

/// Where a function runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The host CPU.
    Cpu,
    /// The accelerator (an off-path node, a direct device, the switch).
    Acc,
}

/// A LEO message: the Fig. 7 header and the application's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Request type, path, responder delay.
    pub header: Header,
    /// Request sequence number (matches a response to its request).
    pub seq: u64,
    /// The application's payload.
    pub payload: Vec<u8>,
}

/// Sends a message on a path (two-sided).
pub type CommFn = Box<dyn FnMut(&Message) -> Result<(), LeoError> + Send>;
/// Receives a message if one is there.
pub type RecvFn = Box<dyn FnMut() -> Option<Message> + Send>;
/// One-sided access: write `data` at `addr` (`Some`) or read `len` bytes at `addr` (`None`).
pub type MemFn = Box<dyn FnMut(u64, Option<&[u8]>, usize) -> Result<Vec<u8>, LeoError> + Send>;
/// A clock, ns.
pub type TsFn = Box<dyn FnMut() -> u64 + Send>;
/// An application function: request payload to response payload.
pub type AppFn = Box<dyn FnMut(&[u8]) -> Vec<u8> + Send>;

/// Timestamp function names `reg_ts_func` accepts.
pub const TS_SW: &str = "sw";

struct InFlight {
    r: usize,
    cand: usize,
    ts: Timestamps,
}

/// A LEO communication context.
pub struct Leo {
    spec: AppSpec,
    policy: Policy,
    sel: Option<Selector>,
    comm: HashMap<(String, Role), CommFn>,
    recv: HashMap<Role, RecvFn>,
    mem: HashMap<(String, Role), MemFn>,
    ts: HashMap<String, TsFn>,
    app: HashMap<(String, Role), AppFn>,
    seq: u64,
    in_flight: HashMap<u64, InFlight>,
}

fn role_of(kind: PathKind) -> Role {
    match kind {
        PathKind::CpuAcc | PathKind::AccAcc => Role::Acc,
        PathKind::CpuCpu | PathKind::AccCpu => Role::Cpu,
    }
}

impl Leo {
    /// A context for `spec` (profiled) choosing paths with `policy`.
    pub fn new(spec: AppSpec, policy: Policy) -> Leo {
        Leo {
            spec,
            policy,
            sel: None,
            comm: HashMap::new(),
            recv: HashMap::new(),
            mem: HashMap::new(),
            ts: HashMap::new(),
            app: HashMap::new(),
            seq: 0,
            in_flight: HashMap::new(),
        }
    }

    /// Registers a communication function: `name` "send" sends on paths whose responder is
    /// `role`; "recv" is registered with [`Leo::reg_recv_func`].
    pub fn reg_comm_func(&mut self, f: CommFn, name: &str, role: Role) {
        self.comm.insert((name.to_string(), role), f);
    }

    /// Registers where responses for `role`'s paths are received.
    pub fn reg_recv_func(&mut self, f: RecvFn, role: Role) {
        self.recv.insert(role, f);
    }

    /// Registers a memory function ("write" or "read") of `role`'s memory.
    pub fn reg_mem_func(&mut self, f: MemFn, name: &str, role: Role) {
        self.mem.insert((name.to_string(), role), f);
    }

    /// Registers a timestamp function ([`TS_SW`]: the software clock).
    pub fn reg_ts_func(&mut self, f: TsFn, name: &str) {
        self.ts.insert(name.to_string(), f);
    }

    /// Registers the application function for request type `name` at `role`.
    pub fn reg_app_func(&mut self, f: AppFn, name: &str, role: Role) {
        self.app.insert((name.to_string(), role), f);
    }

    /// Checks that every request type's candidate paths have a send and a receive function
    /// at their responder role, and that there is a clock; builds the policy. (Application
    /// functions are looked up when [`Leo::handle`] runs: a requester-only context has none.)
    pub fn init(&mut self) -> Result<(), LeoError> {
        if !self.ts.contains_key(TS_SW) {
            return Err(LeoError::invalid(
                "init",
                "no `sw` timestamp function registered",
            ));
        }
        for r in &self.spec.requests {
            for &p in &r.paths {
                let role = role_of(self.spec.paths[p].kind);
                let ctx = format!(
                    "init: request {} on path {}",
                    r.name, self.spec.paths[p].name
                );
                if !self.comm.contains_key(&("send".to_string(), role)) {
                    return Err(LeoError::invalid(ctx, format!("no `send` for {role:?}")));
                }
                if !self.recv.contains_key(&role) {
                    return Err(LeoError::invalid(ctx, format!("no `recv` for {role:?}")));
                }
            }
        }
        self.sel = Some(Selector::new(&self.spec, self.policy)?);
        Ok(())
    }

    fn now(&mut self) -> u64 {
        self.ts.get_mut(TS_SW).map_or(0, |f| f())
    }

    /// Sends a request of type `request` (two-sided) on the path the policy picks; returns
    /// its sequence number.
    pub fn send(&mut self, request: &str, payload: Vec<u8>) -> Result<u64, LeoError> {
        let r = self
            .spec
            .request(request)
            .ok_or_else(|| LeoError::Unknown {
                context: "send".into(),
                what: "request type",
                name: request.into(),
            })?;
        let sel = self
            .sel
            .as_mut()
            .ok_or_else(|| LeoError::invalid("send", "call init first"))?;
        let cand = sel.dispatch(r);
        let path = self.spec.requests[r].paths[cand];
        let role = role_of(self.spec.paths[path].kind);
        let t1 = self.now();
        self.seq += 1;
        let m = Message {
            header: Header {
                request: r as u8,
                path: path as u8,
                responder_ns: 0,
            },
            seq: self.seq,
            payload,
        };
        let send = self
            .comm
            .get_mut(&("send".to_string(), role))
            .ok_or_else(|| LeoError::invalid("send", "call init first"))?;
        send(&m)?;
        let t2 = self.now();
        let ts = Timestamps {
            t1,
            t2,
            ..Timestamps::default()
        };
        self.in_flight.insert(self.seq, InFlight { r, cand, ts });
        Ok(self.seq)
    }

    /// Receives one response from any role, completing its request's JCT.
    pub fn recv(&mut self) -> Option<Message> {
        let roles: Vec<Role> = self.recv.keys().copied().collect();
        for role in roles {
            let m = self.recv.get_mut(&role).and_then(|f| f());
            if let Some(m) = m {
                let t5 = self.now();
                if let Some(mut f) = self.in_flight.remove(&m.seq) {
                    f.ts.t5 = t5;
                    f.ts.t6 = self.now();
                    let intra = f.ts.intra_ns(m.header.responder_ns) as f64;
                    let e2e = f.ts.e2e_ns() as f64;
                    if let Some(sel) = self.sel.as_mut() {
                        sel.complete(f.r, f.cand, intra, e2e);
                    }
                }
                return Some(m);
            }
        }
        None
    }

    /// One-sided write of `data` at `addr` in `role`'s memory.
    pub fn write(&mut self, role: Role, addr: u64, data: &[u8]) -> Result<(), LeoError> {
        self.mem_fn("write", role)?(addr, Some(data), data.len()).map(|_| ())
    }

    /// One-sided read of `len` bytes at `addr` in `role`'s memory.
    pub fn read(&mut self, role: Role, addr: u64, len: usize) -> Result<Vec<u8>, LeoError> {
        self.mem_fn("read", role)?(addr, None, len)
    }

    fn mem_fn(&mut self, name: &str, role: Role) -> Result<&mut MemFn, LeoError> {
        self.mem
            .get_mut(&(name.to_string(), role))
            .ok_or_else(|| LeoError::invalid(name, format!("no memory function for {role:?}")))
    }

    /// Handles a request at `role`: runs its application function and returns the response,
    /// its header carrying `t4 - t3`.
    pub fn handle(&mut self, m: &Message, role: Role) -> Result<Message, LeoError> {
        let t3 = self.now();
        let name = self
            .spec
            .requests
            .get(m.header.request as usize)
            .map(|r| r.name.clone())
            .ok_or_else(|| {
                LeoError::invalid("handle", format!("request type {}", m.header.request))
            })?;
        let f = self
            .app
            .get_mut(&(name.clone(), role))
            .ok_or_else(|| LeoError::invalid("handle", format!("no {name} at {role:?}")))?;
        let payload = f(&m.payload);
        let t4 = self.now();
        Ok(Message {
            header: Header {
                responder_ns: t4.saturating_sub(t3),
                ..m.header
            },
            seq: m.seq,
            payload,
        })
    }

    /// The policy's `k̂` of path `p`.
    pub fn k_hat(&self, p: usize) -> u32 {
        self.sel.as_ref().map_or(0, |s| s.k_hat(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leo::sim::Testbed;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Arc, Mutex};

    type Queue = Arc<Mutex<VecDeque<Message>>>;

    fn spec() -> AppSpec {
        let mut s = AppSpec::from_yaml(include_str!("../../../deploy/leo/kvs.yaml")).unwrap();
        s.hw = Testbed::f_nic().truth(&s.hw);
        s
    }

    /// A client context whose "send" puts requests on `wire` (tagged with the role) and whose
    /// "recv" takes responses from `back`, on the shared clock.
    fn client(
        clock: &Arc<AtomicU64>,
        wire: &Arc<Mutex<VecDeque<(Role, Message)>>>,
        back: &Queue,
    ) -> Leo {
        let mut leo = Leo::new(spec(), Policy::LeoReset);
        for role in [Role::Cpu, Role::Acc] {
            let w = wire.clone();
            leo.reg_comm_func(
                Box::new(move |m| {
                    w.lock().unwrap().push_back((role, m.clone()));
                    Ok(())
                }),
                "send",
                role,
            );
            let b = back.clone();
            leo.reg_recv_func(Box::new(move || b.lock().unwrap().pop_front()), role);
            leo.reg_app_func(Box::new(|p| p.to_vec()), "GET", role);
        }
        leo.reg_app_func(Box::new(|p| p.to_vec()), "PUT", Role::Cpu);
        let c = clock.clone();
        leo.reg_ts_func(Box::new(move || c.load(Ordering::Relaxed)), TS_SW);
        leo
    }

    #[test]
    fn init_names_what_is_missing() {
        let mut leo = Leo::new(spec(), Policy::Leo);
        let e = leo.init().unwrap_err();
        assert!(e.to_string().contains("no `sw` timestamp"), "{e}");
        leo.reg_ts_func(Box::new(|| 0), TS_SW);
        let e = leo.init().unwrap_err();
        assert_eq!(
            e.to_string(),
            "init: request GET on path acc: no `send` for Acc"
        );
        assert!(leo.send("GET", vec![]).is_err());
    }

    #[test]
    fn send_handle_recv_round_trip_feeds_the_policy() {
        let clock = Arc::new(AtomicU64::new(0));
        let wire = Arc::new(Mutex::new(VecDeque::new()));
        let back: Queue = Arc::new(Mutex::new(VecDeque::new()));
        let mut c = client(&clock, &wire, &back);
        c.init().unwrap();
        // The responder: app functions per role; the accelerator's GET takes 5 µs (a slow
        // device), read from the same clock.
        let mut server = Leo::new(spec(), Policy::Leo);
        let store = Arc::new(Mutex::new(HashMap::from([(7u8, 70u8)])));
        for role in [Role::Cpu, Role::Acc] {
            let (s, clk) = (store.clone(), clock.clone());
            let cost = if role == Role::Acc { 5_000 } else { 300 };
            server.reg_app_func(
                Box::new(move |p| {
                    clk.fetch_add(cost, Ordering::Relaxed);
                    vec![s.lock().unwrap()[&p[0]]]
                }),
                "GET",
                role,
            );
        }
        let clk = clock.clone();
        server.reg_ts_func(Box::new(move || clk.load(Ordering::Relaxed)), TS_SW);
        let mem = Arc::new(Mutex::new(vec![0u8; 64]));
        for name in ["write", "read"] {
            let m = mem.clone();
            server.reg_mem_func(
                Box::new(move |addr, data, len| {
                    let a = addr as usize;
                    let mut mm = m.lock().unwrap();
                    let region = mm
                        .get_mut(a..a + len)
                        .ok_or_else(|| LeoError::invalid("mem", "out of range"))?;
                    if let Some(d) = data {
                        region.copy_from_slice(d);
                    }
                    Ok(region.to_vec())
                }),
                name,
                Role::Cpu,
            );
        }
        server.write(Role::Cpu, 8, b"leo").unwrap();
        assert_eq!(server.read(Role::Cpu, 8, 3).unwrap(), b"leo");
        assert!(server.read(Role::Cpu, 62, 3).is_err());
        let acc_path = 1;
        let mut roles = Vec::new();
        for _ in 0..4 {
            let seq = c.send("GET", vec![7]).unwrap();
            let (role, m) = wire.lock().unwrap().pop_front().unwrap();
            roles.push(role);
            let resp = server.handle(&m, role).unwrap();
            assert_eq!((resp.seq, resp.payload.clone()), (seq, vec![70]));
            back.lock().unwrap().push_back(resp);
            assert_eq!(c.recv().unwrap().seq, seq);
        }
        // The accelerator's 5 µs exceeds its path's T (940 ns): under the JCT-driven k̂
        // (leo-reset; one request at a time leaves nothing in flight for leo's) k̂ grows and moves
        // GETs to the CPU path.
        assert_eq!(roles[0], Role::Acc);
        assert!(c.k_hat(acc_path) >= 1);
        assert!(roles.contains(&Role::Cpu), "{roles:?}");
    }
}

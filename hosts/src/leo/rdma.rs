//! LEO's two-sided communication functions over pisa's RoCEv2 endpoint: an [`RdmaPort`] is one
//! RC QP with a registered buffer of fixed-size slots; [`register`] gives a [`Leo`] context a
//! `send` (an RDMA SEND of the encoded message) and a `recv` (a RECV completion, decoded and
//! re-posted) for one role, and [`serve`] is a responder's loop step: every request received
//! is handled by the context's application function and answered with a SEND. The port also
//! posts one-sided READs and WRITEs ([`RdmaPort::read`], [`RdmaPort::write`]) into memory the
//! peer registered in the port's protection domain ([`RdmaPort::reg_remote`]); their
//! completions come back through [`RdmaPort::take_done`].
//!
//! Encoding: the Fig. 7 header (4 bytes), the sequence number (8), the payload length (4),
//! the payload.

use super::api::{Leo, Message, Role};
use super::error::LeoError;
use super::jct::{Header, HEADER_LEN};
pub use crate::mcrdma::cmd::RcSettings;
use rdma::verbs::{
    AccessFlags, CqHandle, Endpoint, MrInfo, PdHandle, QpAttr, QpInitAttr, QpType, RecvWr, SendOp,
    SendWr, Sge, WcOpcode, WcStatus,
};
use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes of one message slot.
pub const SLOT: usize = 256;
const META: usize = HEADER_LEN + 8 + 4;

/// Encodes a message (`None` when it does not fit a slot).
pub fn encode(m: &Message) -> Option<Vec<u8>> {
    if META + m.payload.len() > SLOT {
        return None;
    }
    let mut b = Vec::with_capacity(META + m.payload.len());
    b.extend_from_slice(&m.header.encode());
    b.extend_from_slice(&m.seq.to_be_bytes());
    b.extend_from_slice(&(m.payload.len() as u32).to_be_bytes());
    b.extend_from_slice(&m.payload);
    Some(b)
}

/// Decodes a message; `None` when the bytes are not one.
pub fn decode(b: &[u8]) -> Option<Message> {
    let header = Header::decode(b)?;
    let seq = u64::from_be_bytes(b.get(HEADER_LEN..HEADER_LEN + 8)?.try_into().ok()?);
    let len = u32::from_be_bytes(b.get(HEADER_LEN + 8..META)?.try_into().ok()?) as usize;
    let payload = b.get(META..META.checked_add(len)?)?.to_vec();
    Some(Message {
        header,
        seq,
        payload,
    })
}

/// An endpoint shared by a host and its ports (a host application may run on its own thread).
pub type SharedEndpoint = Arc<Mutex<Endpoint>>;

/// A new shared endpoint.
pub fn shared(ep: Endpoint) -> SharedEndpoint {
    Arc::new(Mutex::new(ep))
}

/// Locks `m`, also after a panic elsewhere poisoned it (the data stays usable: every user
/// leaves it consistent between calls).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn verbs(e: rdma::verbs::VerbsError) -> LeoError {
    LeoError::invalid("rdma", e.to_string())
}

/// A finished one-sided operation: the caller's tag and, for a READ, the bytes read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    /// The tag given to [`RdmaPort::read`] or [`RdmaPort::write`].
    pub tag: u64,
    /// Whether it completed successfully.
    pub ok: bool,
    /// The bytes a READ fetched (empty for a WRITE).
    pub data: Vec<u8>,
}

/// One RC QP of an endpoint with `slots` receive, `slots` send and `slots` one-sided slots.
pub struct RdmaPort {
    ep: SharedEndpoint,
    /// The QP number (connect it to the peer's).
    pub qpn: u32,
    pd: PdHandle,
    cq: CqHandle,
    mr: MrInfo,
    slots: usize,
    next_send: usize,
    next_op: usize,
    ops: HashMap<u64, (u64, usize, usize)>,
    next_wr: u64,
    inbox: VecDeque<Message>,
    done: VecDeque<Done>,
}

impl RdmaPort {
    /// Creates the QP and its buffer; [`RdmaPort::connect`] connects it.
    pub fn new(ep: SharedEndpoint, slots: usize) -> Result<RdmaPort, LeoError> {
        let (qpn, pd, cq, mr) = {
            let mut e = lock(&ep);
            let pd = e.alloc_pd();
            let cq = e.create_cq(4 * slots);
            let qpn = e
                .create_qp(QpInitAttr {
                    pd,
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    max_send_wr: slots,
                    max_recv_wr: slots,
                })
                .map_err(verbs)?;
            let mr = e
                .reg_mr(pd, 3 * slots * SLOT, AccessFlags::LOCAL_WRITE)
                .map_err(verbs)?;
            (qpn, pd, cq, mr)
        };
        let port = RdmaPort {
            ep,
            qpn,
            pd,
            cq,
            mr,
            slots,
            next_send: 0,
            next_op: 0,
            ops: HashMap::new(),
            next_wr: 0,
            inbox: VecDeque::new(),
            done: VecDeque::new(),
        };
        Ok(port)
    }

    /// Connects the QP to `(peer, peer_qpn)` (RC, both sides starting at `psn`, the default
    /// [`RcSettings`]) and posts a receive per slot.
    pub fn connect(&self, peer: Ipv4Addr, peer_qpn: u32, psn: u32) -> Result<(), LeoError> {
        self.connect_with(peer, peer_qpn, psn, RcSettings::default())
    }

    /// [`RdmaPort::connect`] with RC settings `rc` (MTU, ACK timeout, retries).
    pub fn connect_with(
        &self,
        peer: Ipv4Addr,
        peer_qpn: u32,
        psn: u32,
        rc: RcSettings,
    ) -> Result<(), LeoError> {
        let mut ep = lock(&self.ep);
        crate::mcrdma::cmd::connect_rc(&mut ep, self.qpn, peer, peer_qpn, psn, rc)
            .map_err(verbs)?;
        drop(ep);
        for i in 0..self.slots {
            self.post_recv(i)?;
        }
        Ok(())
    }

    /// Registers `len` bytes the peer may READ (and WRITE, with `writable`) through this QP;
    /// the QP is opened to remote READ and WRITE. The caller hands the returned region's
    /// address and rkey to the peer (out of band, like the QP number).
    pub fn reg_remote(&self, len: usize, writable: bool) -> Result<MrInfo, LeoError> {
        let mut e = lock(&self.ep);
        let mut access = AccessFlags::LOCAL_WRITE | AccessFlags::REMOTE_READ;
        if writable {
            access = access | AccessFlags::REMOTE_WRITE;
        }
        let mr = e.reg_mr(self.pd, len, access).map_err(verbs)?;
        let attr = QpAttr {
            access: Some(AccessFlags::REMOTE_READ | AccessFlags::REMOTE_WRITE),
            ..Default::default()
        };
        e.modify_qp(self.qpn, &attr).map_err(verbs)?;
        Ok(mr)
    }

    fn op_slot(&mut self, tag: u64, len: usize) -> Result<(u64, usize), LeoError> {
        if len > SLOT || self.ops.len() >= self.slots {
            return Err(LeoError::invalid(
                "rdma",
                "one-sided op over a slot or too many",
            ));
        }
        let slot = 2 * self.slots + self.next_op;
        self.next_op = (self.next_op + 1) % self.slots;
        self.next_wr += 1;
        self.ops.insert(self.next_wr, (tag, slot, len));
        Ok((self.next_wr, slot))
    }

    /// Posts an RDMA READ of `len` bytes at the peer's `remote_addr` (`rkey`); its
    /// [`Done`] carries `tag` and the bytes.
    pub fn read(
        &mut self,
        tag: u64,
        remote_addr: u64,
        rkey: u32,
        len: usize,
    ) -> Result<(), LeoError> {
        let (wr, slot) = self.op_slot(tag, len)?;
        let op = SendOp::Read { remote_addr, rkey };
        let wr = SendWr::new(wr, op, self.sge(slot * SLOT, len));
        lock(&self.ep).post_send(self.qpn, wr).map_err(verbs)
    }

    /// Posts an RDMA WRITE of `data` at the peer's `remote_addr` (`rkey`).
    pub fn write(
        &mut self,
        tag: u64,
        remote_addr: u64,
        rkey: u32,
        data: &[u8],
    ) -> Result<(), LeoError> {
        let (wr, slot) = self.op_slot(tag, data.len())?;
        let mut e = lock(&self.ep);
        let buf = e.mr_bytes_mut(self.mr.lkey).map_err(verbs)?;
        buf[slot * SLOT..slot * SLOT + data.len()].copy_from_slice(data);
        let op = SendOp::Write { remote_addr, rkey };
        let wr = SendWr::new(wr, op, self.sge(slot * SLOT, data.len()));
        e.post_send(self.qpn, wr).map_err(verbs)
    }

    /// Finished READs and WRITEs, oldest first.
    pub fn take_done(&mut self) -> Vec<Done> {
        self.pump();
        self.done.drain(..).collect()
    }

    fn sge(&self, byte: usize, len: usize) -> Sge {
        Sge {
            addr: self.mr.addr + byte as u64,
            length: len as u32,
            lkey: self.mr.lkey,
        }
    }

    fn post_recv(&self, slot: usize) -> Result<(), LeoError> {
        let wr = RecvWr {
            wr_id: slot as u64,
            sg_list: vec![self.sge(slot * SLOT, SLOT)],
        };
        lock(&self.ep).post_recv(self.qpn, wr).map_err(verbs)
    }

    /// SENDs `m`.
    pub fn send(&mut self, m: &Message) -> Result<(), LeoError> {
        let bytes =
            encode(m).ok_or_else(|| LeoError::invalid("rdma send", "message over a slot"))?;
        let slot = self.slots + self.next_send;
        self.next_send = (self.next_send + 1) % self.slots;
        let mut e = lock(&self.ep);
        let buf = e.mr_bytes_mut(self.mr.lkey).map_err(verbs)?;
        buf[slot * SLOT..slot * SLOT + bytes.len()].copy_from_slice(&bytes);
        let wr = SendWr::new(u64::MAX, SendOp::Send, self.sge(slot * SLOT, bytes.len()));
        e.post_send(self.qpn, wr).map_err(verbs)
    }

    /// The next received message, if any (its receive is re-posted).
    pub fn recv(&mut self) -> Option<Message> {
        self.pump();
        self.inbox.pop_front()
    }

    /// Sorts every completion: received messages to the inbox, one-sided ops to `done`.
    fn pump(&mut self) {
        loop {
            let Some(wc) = lock(&self.ep)
                .poll_cq(self.cq, 16)
                .ok()
                .filter(|w| !w.is_empty())
            else {
                return;
            };
            for wc in wc {
                match wc.opcode {
                    WcOpcode::Recv => {
                        self.received(wc.wr_id as usize, wc.byte_len as usize, wc.status)
                    }
                    WcOpcode::RdmaRead | WcOpcode::RdmaWrite => {
                        if let Some((tag, slot, len)) = self.ops.remove(&wc.wr_id) {
                            let ok = wc.status == WcStatus::Success;
                            let data = if ok && wc.opcode == WcOpcode::RdmaRead {
                                let e = lock(&self.ep);
                                e.mr_bytes(self.mr.lkey)
                                    .map(|b| b[slot * SLOT..slot * SLOT + len].to_vec())
                                    .unwrap_or_default()
                            } else {
                                Vec::new()
                            };
                            self.done.push_back(Done { tag, ok, data });
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn received(&mut self, slot: usize, len: usize, status: WcStatus) {
        if slot >= self.slots {
            return;
        }
        let m = (status == WcStatus::Success)
            .then(|| {
                let e = lock(&self.ep);
                let buf = e.mr_bytes(self.mr.lkey).ok()?;
                decode(buf.get(slot * SLOT..slot * SLOT + len)?)
            })
            .flatten();
        if self.post_recv(slot).is_ok() {
            self.inbox.extend(m);
        }
    }
}

/// Gives `leo` the `send` and `recv` of `role` over `port`.
pub fn register(leo: &mut Leo, port: Arc<Mutex<RdmaPort>>, role: Role) {
    let p = port.clone();
    leo.reg_comm_func(Box::new(move |m| lock(&p).send(m)), "send", role);
    leo.reg_recv_func(Box::new(move || lock(&port).recv()), role);
}

/// A responder's step: handles every request `port` received at `role` and SENDs the
/// responses; returns how many.
pub fn serve(leo: &mut Leo, port: &mut RdmaPort, role: Role) -> Result<usize, LeoError> {
    let mut n = 0;
    while let Some(m) = port.recv() {
        let resp = leo.handle(&m, role)?;
        port.send(&resp)?;
        n += 1;
    }
    Ok(n)
}

/// Decodes arbitrary bytes (the fuzz target's entry): a decoded message re-encodes to the same
/// leading bytes.
pub fn fuzz_decode(data: &[u8]) {
    if let Some(m) = decode(data) {
        if let Some(b) = encode(&m) {
            assert_eq!(decode(&b), Some(m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::leo::api::TS_SW;
    use crate::leo::select::Policy;
    use crate::leo::sim::Testbed;
    use crate::leo::AppSpec;
    use rdma::verbs::{EndpointConfig, Instant};
    use std::net::IpAddr;
    use std::sync::atomic::{AtomicU64, Ordering};

    type Ep = SharedEndpoint;

    fn ep(i: u8) -> (Ep, [u8; 6], Ipv4Addr) {
        let (mac, ip) = ([2, 0, 0, 0, 0, i], Ipv4Addr::new(10, 0, 0, i));
        (shared(Endpoint::new(EndpointConfig::new(mac, ip))), mac, ip)
    }

    /// Moves frames between endpoints by destination MAC until none is left.
    fn shuttle(eps: &[(Ep, [u8; 6])]) {
        for _ in 0..64 {
            let mut moved = false;
            for (e, _) in eps {
                while let Some(f) = lock(e).poll_transmit(Instant::ZERO) {
                    if let Some((d, _)) = eps.iter().find(|(_, m)| f[..6] == m[..]) {
                        lock(d).handle_frame(Instant::ZERO, &f);
                        moved = true;
                    }
                }
            }
            if !moved {
                return;
            }
        }
    }

    fn link(a: (&Ep, [u8; 6], Ipv4Addr), b: (&Ep, [u8; 6], Ipv4Addr)) -> (RdmaPort, RdmaPort) {
        lock(a.0).add_neighbour(IpAddr::V4(b.2), b.1);
        lock(b.0).add_neighbour(IpAddr::V4(a.2), a.1);
        let pa = RdmaPort::new(a.0.clone(), 8).unwrap();
        let pb = RdmaPort::new(b.0.clone(), 8).unwrap();
        pa.connect(b.2, pb.qpn, 100).unwrap();
        pb.connect(a.2, pa.qpn, 100).unwrap();
        (pa, pb)
    }

    #[test]
    fn requests_over_rdma_to_a_cpu_and_an_off_path_accelerator_node() {
        let mut spec = AppSpec::from_yaml(include_str!("../../../deploy/leo/kvs.yaml")).unwrap();
        spec.hw = Testbed::f_nic().truth(&spec.hw);
        let ((c, cm, ci), (s, sm, si), (a, am, ai)) = (ep(1), ep(2), ep(3));
        let (c_cpu, mut s_port) = link((&c, cm, ci), (&s, sm, si));
        let (c_acc, mut a_port) = link((&c, cm, ci), (&a, am, ai));
        let clock = Arc::new(AtomicU64::new(0));
        let mut client = Leo::new(spec.clone(), Policy::LeoReset);
        register(&mut client, Arc::new(Mutex::new(c_cpu)), Role::Cpu);
        register(&mut client, Arc::new(Mutex::new(c_acc)), Role::Acc);
        for (name, role) in [("GET", Role::Cpu), ("GET", Role::Acc), ("PUT", Role::Cpu)] {
            client.reg_app_func(Box::new(|p| p.to_vec()), name, role);
        }
        let clk = clock.clone();
        client.reg_ts_func(Box::new(move || clk.load(Ordering::Relaxed)), TS_SW);
        client.init().unwrap();
        // Responders: the host CPU and the off-path accelerator node, each with its own
        // endpoint; the accelerator's GET takes 4 µs of the shared clock (a busy device).
        let responder = |cost: u64| {
            let mut l = Leo::new(spec.clone(), Policy::Leo);
            let clk = clock.clone();
            l.reg_app_func(
                Box::new(move |p| {
                    clk.fetch_add(cost, Ordering::Relaxed);
                    p.iter().map(|b| b.wrapping_add(1)).collect()
                }),
                "GET",
                if cost > 1000 { Role::Acc } else { Role::Cpu },
            );
            let clk = clock.clone();
            l.reg_ts_func(Box::new(move || clk.load(Ordering::Relaxed)), TS_SW);
            l
        };
        let (mut cpu, mut acc) = (responder(300), responder(4_000));
        let all = [(c.clone(), cm), (s.clone(), sm), (a.clone(), am)];
        let mut answered_by = Vec::new();
        for i in 0..5u8 {
            let seq = client.send("GET", vec![i, 10]).unwrap();
            shuttle(&all);
            let n = serve(&mut cpu, &mut s_port, Role::Cpu).unwrap();
            let k = serve(&mut acc, &mut a_port, Role::Acc).unwrap();
            assert_eq!(n + k, 1);
            answered_by.push(if k == 1 { Role::Acc } else { Role::Cpu });
            shuttle(&all);
            let m = client.recv().expect("a response");
            assert_eq!((m.seq, m.payload), (seq, vec![i + 1, 11]));
            assert!(client.recv().is_none(), "exactly one response");
        }
        assert_eq!(
            answered_by[0],
            Role::Acc,
            "the accelerator path is the faster estimate"
        );
        assert!(
            answered_by.contains(&Role::Cpu),
            "the slow accelerator sheds load: {answered_by:?}"
        );
        assert!(lock(&c).stats().tx_frames >= 5 && lock(&a).stats().tx_frames >= 1);
    }

    #[test]
    fn one_sided_read_and_write_into_registered_memory() {
        let ((c, cm, ci), (s, sm, si)) = (ep(1), ep(2));
        let (mut cp, sp) = link((&c, cm, ci), (&s, sm, si));
        let region = sp.reg_remote(64, true).unwrap();
        lock(&s).mr_bytes_mut(region.lkey).unwrap()[8..16].copy_from_slice(b"leo-kvs!");
        let all = [(c.clone(), cm), (s.clone(), sm)];
        cp.read(7, region.addr + 8, region.rkey, 8).unwrap();
        cp.write(8, region.addr + 32, region.rkey, b"written")
            .unwrap();
        shuttle(&all);
        let done = cp.take_done();
        assert_eq!(
            done,
            vec![
                Done {
                    tag: 7,
                    ok: true,
                    data: b"leo-kvs!".to_vec()
                },
                Done {
                    tag: 8,
                    ok: true,
                    data: Vec::new()
                },
            ]
        );
        assert_eq!(&lock(&s).mr_bytes(region.lkey).unwrap()[32..39], b"written");
        // A key the peer never registered: the READ fails, it is reported, nothing hangs.
        cp.read(9, region.addr, region.rkey ^ 0xff, 8).unwrap();
        shuttle(&all);
        let done = cp.take_done();
        assert_eq!((done.len(), done[0].tag, done[0].ok), (1, 9, false));
    }

    #[test]
    fn codec_refuses_junk() {
        let m = Message {
            header: Header {
                request: 1,
                path: 2,
                responder_ns: 32,
            },
            seq: 9,
            payload: vec![1; 5],
        };
        assert_eq!(decode(&encode(&m).unwrap()), Some(m.clone()));
        assert_eq!(decode(&encode(&m).unwrap()[..META + 2]), None);
        assert!(encode(&Message {
            payload: vec![0; SLOT],
            ..m
        })
        .is_none());
    }
}

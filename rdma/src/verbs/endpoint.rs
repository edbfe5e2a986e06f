//! The endpoint: owns the device, memory regions, CQs and QPs, dispatches received
//! frames to them, and drains their packets (round robin over QPs) into frames.

use std::collections::{BTreeMap, VecDeque};
use std::net::IpAddr;

use super::cm_agent::{CmAgent, CmConfig};
use super::cq::{CompletionQueue, CqHandle, CqTable, WorkCompletion};
use super::device::{ArpOutcome, Device, DeviceConfig};
use super::mr::{AccessFlags, MrInfo, MrTable, PdHandle};
use super::qp::TransportConfig;
use super::qp::{Ctx, OutPacket, Qp, QpAttr, QpInitAttr, QpState, QpType, RecvWr, SendWr};
use super::{Instant, Stats, VerbsError};
use crate::wire::{BthRepr, Opcode, RoceHeaders, RocePacketRepr, Transport};

/// Endpoint configuration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndpointConfig {
    /// Addresses.
    pub device: DeviceConfig,
    /// Drop frames whose ICRC does not verify (ConnectX default: on).
    pub icrc_check: bool,
    /// Transport options.
    pub transport: TransportConfig,
    /// RDMA CM defaults.
    pub cm: CmConfig,
    /// Seed for initial PSNs, comm IDs and ports (deterministic runs).
    pub seed: u64,
}

impl EndpointConfig {
    /// Defaults for a device with these addresses.
    pub fn new(mac: [u8; 6], ipv4: std::net::Ipv4Addr) -> EndpointConfig {
        EndpointConfig {
            device: DeviceConfig::new(mac, ipv4),
            icrc_check: true,
            transport: TransportConfig::default(),
            cm: CmConfig::default(),
            seed: u64::from(u32::from(ipv4)) ^ 0x5DEE_CE66_D1CE_4E5B,
        }
    }
}

/// A userspace RoCEv2 endpoint (see the module docs).
pub struct Endpoint {
    pub(crate) cfg: EndpointConfig,
    pub(crate) device: Device,
    pub(crate) mrs: MrTable,
    pub(crate) cqs: CqTable,
    pub(crate) qps: BTreeMap<u32, Qp>,
    next_qpn: u32,
    pub(crate) tx: VecDeque<Vec<u8>>,
    rr_next: u32,
    pub(crate) stats: Stats,
    rng: u64,
    pub(crate) cm: CmAgent,
}

impl Endpoint {
    /// Creates an endpoint.
    pub fn new(cfg: EndpointConfig) -> Endpoint {
        Endpoint {
            cfg,
            device: Device::new(cfg.device),
            mrs: MrTable::default(),
            cqs: CqTable::default(),
            qps: BTreeMap::new(),
            next_qpn: 0x11,
            tx: VecDeque::new(),
            rr_next: 0,
            stats: Stats::default(),
            rng: cfg.seed | 1,
            cm: CmAgent::default(),
        }
    }

    /// Configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.cfg
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Switches ICRC checking of received frames on or off (like the ConnectX option).
    pub fn set_icrc_check(&mut self, on: bool) {
        self.cfg.icrc_check = on;
    }

    pub(crate) fn random(&mut self) -> u64 {
        // xorshift64*: deterministic per seed.
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Adds a static neighbour (needed for IPv6 peers; optional for IPv4, which uses ARP).
    pub fn add_neighbour(&mut self, ip: IpAddr, mac: [u8; 6]) {
        let released = self.device.add_neighbour(ip, mac);
        self.tx.extend(released);
    }

    /// Allocates a protection domain.
    pub fn alloc_pd(&mut self) -> PdHandle {
        self.mrs.alloc_pd()
    }

    /// Registers `len` bytes of endpoint-owned, zeroed memory.
    pub fn reg_mr(
        &mut self,
        pd: PdHandle,
        len: usize,
        access: AccessFlags,
    ) -> Result<MrInfo, VerbsError> {
        self.mrs.register(pd, len, access)
    }

    /// Deregisters an MR (by lkey); its rkey stops working at once.
    pub fn dereg_mr(&mut self, lkey: u32) -> Result<(), VerbsError> {
        self.mrs.deregister(lkey)
    }

    /// The memory of an MR.
    pub fn mr_bytes(&self, lkey: u32) -> Result<&[u8], VerbsError> {
        self.mrs.bytes(lkey)
    }

    /// The memory of an MR, writable.
    pub fn mr_bytes_mut(&mut self, lkey: u32) -> Result<&mut [u8], VerbsError> {
        self.mrs.bytes_mut(lkey)
    }

    /// Creates a completion queue holding up to `capacity` completions.
    pub fn create_cq(&mut self, capacity: usize) -> CqHandle {
        self.cqs.cqs.push(CompletionQueue {
            capacity,
            ..Default::default()
        });
        CqHandle(self.cqs.cqs.len() as u32 - 1)
    }

    /// Takes up to `max` completions.
    pub fn poll_cq(&mut self, cq: CqHandle, max: usize) -> Result<Vec<WorkCompletion>, VerbsError> {
        let q = self
            .cqs
            .cqs
            .get_mut(cq.0 as usize)
            .ok_or(VerbsError::UnknownCq(cq.0))?;
        let n = max.min(q.entries.len());
        Ok(q.entries.drain(..n).collect())
    }

    /// Completions dropped because a CQ was full.
    pub fn cq_overruns(&self, cq: CqHandle) -> Result<u64, VerbsError> {
        self.cqs
            .cqs
            .get(cq.0 as usize)
            .map(|q| q.overruns)
            .ok_or(VerbsError::UnknownCq(cq.0))
    }

    /// Creates a QP in the RESET state and returns its number.
    pub fn create_qp(&mut self, attr: QpInitAttr) -> Result<u32, VerbsError> {
        if !self.mrs.pd_exists(attr.pd) {
            return Err(VerbsError::UnknownPd(attr.pd.0));
        }
        for cq in [attr.send_cq, attr.recv_cq] {
            if cq.0 as usize >= self.cqs.cqs.len() {
                return Err(VerbsError::UnknownCq(cq.0));
            }
        }
        if attr.max_send_wr == 0 && attr.max_recv_wr == 0 {
            return Err(VerbsError::InvalidAttr("queue depths"));
        }
        let mut qpn = self.next_qpn;
        while self.qps.contains_key(&qpn) || qpn < 2 {
            qpn = (qpn + 1) & 0xFF_FFFF;
        }
        self.next_qpn = (qpn + 1) & 0xFF_FFFF;
        self.qps
            .insert(qpn, Qp::new(qpn, &attr, self.cfg.transport.dcqcn));
        Ok(qpn)
    }

    /// Destroys a QP (outstanding work is discarded without completions).
    pub fn destroy_qp(&mut self, qpn: u32) -> Result<(), VerbsError> {
        self.qps
            .remove(&qpn)
            .map(|_| ())
            .ok_or(VerbsError::UnknownQp(qpn))
    }

    /// Changes QP attributes and state.
    pub fn modify_qp(&mut self, qpn: u32, attr: &QpAttr) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::UnknownQp(qpn))?;
        qp.modify(attr, &mut self.cqs)
    }

    /// The QP's state.
    pub fn qp_state(&self, qpn: u32) -> Result<QpState, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.state)
            .ok_or(VerbsError::UnknownQp(qpn))
    }

    /// The QP's path MTU in bytes (payload bytes per packet of a multi-packet message).
    pub fn qp_path_mtu(&self, qpn: u32) -> Result<usize, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.mtu)
            .ok_or(VerbsError::UnknownQp(qpn))
    }

    /// NAK sequence errors the QP's requester received since it was last reset, including
    /// stale ones (below the oldest unacknowledged PSN) that it otherwise ignores: what a
    /// ConnectX counts per QP as `packet_seq_err` (an `rdma statistic` counter bound to the
    /// QP). P4CE's leader reads it to see the NAKs its switch forwards (§III-A).
    pub fn qp_seq_naks(&self, qpn: u32) -> Result<u64, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.req.seq_naks)
            .ok_or(VerbsError::UnknownQp(qpn))
    }

    /// The sending QP's DCQCN rate in bits per second.
    pub fn qp_rate_bps(&self, qpn: u32) -> Result<f64, VerbsError> {
        self.qps
            .get(&qpn)
            .map(|q| q.dcqcn.rate_bps())
            .ok_or(VerbsError::UnknownQp(qpn))
    }

    /// Posts a send work request.
    pub fn post_send(&mut self, qpn: u32, wr: SendWr) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::UnknownQp(qpn))?;
        match qp.qp_type {
            QpType::Rc => qp.post_send_rc(wr, &self.mrs),
            QpType::Ud => qp.post_send_ud(wr, &self.mrs),
        }
    }

    /// Posts a receive work request.
    pub fn post_recv(&mut self, qpn: u32, wr: RecvWr) -> Result<(), VerbsError> {
        let qp = self.qps.get_mut(&qpn).ok_or(VerbsError::UnknownQp(qpn))?;
        qp.post_recv(wr, &self.mrs)
    }

    /// Feeds one received Ethernet frame (without FCS).
    pub fn handle_frame(&mut self, now: Instant, frame: &[u8]) {
        self.stats.rx_frames += 1;
        match self.device.handle_arp(frame) {
            ArpOutcome::Handled(out) => {
                self.tx.extend(out);
                return;
            }
            ArpOutcome::NotArp => {}
        }
        let fr = match RocePacketRepr::parse(frame) {
            Ok(f) => f,
            Err(_) => {
                self.stats.rx_malformed += 1;
                return;
            }
        };
        let pkt = fr.packet;
        if pkt.eth.dst != self.cfg.device.mac || !self.device.is_local(pkt.ip.dst()) {
            self.stats.rx_not_for_us += 1;
            return;
        }
        if self.cfg.icrc_check && !fr.icrc_ok {
            self.stats.rx_icrc_errors += 1;
            return;
        }
        let h = pkt.headers;
        let src = pkt.ip.src();
        let dqp = h.bth.dest_qp;
        if h.bth.opcode == Opcode::CNP {
            if let Some(qp) = self.qps.get_mut(&dqp) {
                self.stats.cnps_received += 1;
                qp.dcqcn.on_cnp(now);
            } else {
                self.stats.rx_unknown_qp += 1;
            }
            return;
        }
        if dqp == 1 {
            if h.deth.is_some_and(|d| d.qkey == crate::wire::GSI_QKEY) {
                self.cm_handle(now, src, pkt.payload);
            } else {
                self.stats.rx_dropped_state += 1;
            }
            return;
        }
        let Some(qp) = self.qps.get_mut(&dqp) else {
            self.stats.rx_unknown_qp += 1;
            return;
        };
        let mut ctx = Ctx {
            now,
            mrs: &mut self.mrs,
            cqs: &mut self.cqs,
            cfg: &self.cfg.transport,
            stats: &mut self.stats,
        };
        match (qp.qp_type, h.bth.opcode.transport()) {
            (QpType::Rc, Transport::Rc) => {
                if pkt.ip.ecn() == 3 {
                    qp.note_congestion(now, ctx.cfg.dcqcn.cnp_interval);
                }
                if h.bth.opcode.is_request() {
                    qp.resp_handle_request(&mut ctx, &h, pkt.payload, src);
                } else {
                    qp.req_handle_response(&mut ctx, &h, pkt.payload);
                }
            }
            (QpType::Ud, Transport::Ud) => {
                let ip_header = &frame[fr.offsets.l3..fr.offsets.l4];
                qp.ud_receive(&mut ctx, &h, pkt.payload, src, ip_header);
            }
            _ => ctx.stats.rx_dropped_state += 1,
        }
    }

    /// Returns the next frame to put on the wire, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Vec<u8>> {
        loop {
            if let Some(f) = self.tx.pop_front() {
                self.stats.tx_frames += 1;
                return Some(f);
            }
            let (qpn, sport, pkt) = self.next_qp_packet(now)?;
            if pkt.cnp {
                self.stats.cnps_sent += 1;
            }
            let mut arp = Vec::new();
            let built = self.device.build(
                now,
                pkt.dst,
                sport,
                &pkt.headers,
                &pkt.payload,
                pkt.cnp,
                &mut arp,
            );
            self.tx.extend(arp);
            match built {
                Ok(Some(frame)) => {
                    self.stats.tx_frames += 1;
                    return Some(frame);
                }
                Ok(None) => continue,
                Err(_) => {
                    let _ = qpn;
                    self.stats.tx_build_errors += 1;
                    continue;
                }
            }
        }
    }

    fn next_qp_packet(&mut self, now: Instant) -> Option<(u32, u16, OutPacket)> {
        let order: Vec<u32> = self
            .qps
            .range(self.rr_next..)
            .chain(self.qps.range(..self.rr_next))
            .map(|(k, _)| *k)
            .collect();
        for qpn in order {
            let Some(qp) = self.qps.get_mut(&qpn) else {
                continue;
            };
            let mut ctx = Ctx {
                now,
                mrs: &mut self.mrs,
                cqs: &mut self.cqs,
                cfg: &self.cfg.transport,
                stats: &mut self.stats,
            };
            let pkt = if qp.cnp_pending {
                qp.cnp_pending = false;
                qp.remote_ip.map(|dst| {
                    let mut b = BthRepr::new(Opcode::CNP, qp.dest_qpn, 0);
                    b.becn = true;
                    OutPacket {
                        headers: RoceHeaders::new(b),
                        payload: Vec::new(),
                        dst,
                        cnp: true,
                    }
                })
            } else {
                None
            };
            let pkt = pkt.or_else(|| match qp.qp_type {
                QpType::Rc => qp
                    .resp_next_packet(&mut ctx)
                    .or_else(|| qp.req_next_packet(&mut ctx)),
                QpType::Ud => qp.ud_next_packet(&mut ctx),
            });
            if let Some(p) = pkt {
                self.rr_next = qpn.wrapping_add(1);
                return Some((qpn, qp.udp_sport, p));
            }
        }
        None
    }

    /// The next instant at which `handle_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.qps
            .values()
            .filter_map(|q| q.next_timeout())
            .chain(self.cm.next_timeout())
            .min()
    }

    /// Runs timers due at `now` (ACK timeouts, RNR waits, DCQCN, CM retransmissions).
    pub fn handle_timeout(&mut self, now: Instant) {
        for qp in self.qps.values_mut() {
            let mut ctx = Ctx {
                now,
                mrs: &mut self.mrs,
                cqs: &mut self.cqs,
                cfg: &self.cfg.transport,
                stats: &mut self.stats,
            };
            qp.dcqcn.advance(now);
            if qp.paced_until.is_some_and(|t| t <= now) {
                // Wake-up only: the next poll_transmit sends.
                qp.paced_until = None;
            }
            if qp.qp_type == QpType::Rc {
                qp.req_handle_timeout(&mut ctx);
            }
        }
        self.cm_timeout(now);
    }
}

//! RDMA CM over QP1 MADs, as rdma_cm does it on RoCE: the active side sends a REQ
//! (service ID from the port, the rdma_cm IP header at the start of the private data,
//! its QPN and the PSN it expects), the passive side answers REP (its QPN and PSN),
//! the active side moves its QP to RTS and sends RTU; REJ refuses, DREQ/DREP tear
//! down. Unanswered messages are resent after the response timeout, up to the retry
//! count. Events are read with `poll_cm_event`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::IpAddr;
use std::time::Duration;

use super::endpoint::Endpoint;
use super::mr::AccessFlags;
use super::qp::{Mtu, QpAttr, QpState, QpType};
use super::{Instant, VerbsError};
use crate::wire::cm::{
    self, gid_from_ip, service_id, CmDreq, CmIds, CmRej, CmRep, CmReq, RDMA_PS_TCP,
};
use crate::wire::{
    BthRepr, CmMad, CmMessage, CmaIpHeader, DethRepr, Opcode, RoceHeaders, GSI_QKEY,
};

/// Application private data available in a REQ after the 36-byte rdma_cm IP header.
pub const REQ_PRIVATE_MAX: usize = cm::private_len::REQ - CmaIpHeader::LEN;

/// Connection parameters the CM puts in REQ/REP and applies to QPs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmConfig {
    /// Path MTU.
    pub path_mtu: Mtu,
    /// Local ACK timeout exponent.
    pub timeout: u8,
    /// Transport retry count.
    pub retry_cnt: u8,
    /// RNR retry count (7 = infinite).
    pub rnr_retry: u8,
    /// RNR timer code we advertise.
    pub min_rnr_timer: u8,
    /// Wait for a CM response before resending.
    pub response_timeout: Duration,
    /// CM resends before giving up.
    pub max_retries: u8,
    /// Remote access granted on connected QPs.
    pub access: AccessFlags,
}

impl Default for CmConfig {
    fn default() -> Self {
        CmConfig {
            path_mtu: Mtu::M1024,
            timeout: 14,
            retry_cnt: 7,
            rnr_retry: 7,
            min_rnr_timer: 12,
            response_timeout: Duration::from_millis(100),
            max_retries: 15,
            access: AccessFlags::REMOTE_READ
                | AccessFlags::REMOTE_WRITE
                | AccessFlags::REMOTE_ATOMIC,
        }
    }
}

/// Identifies a CM connection on this endpoint (its local communication ID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u32);

/// Something the CM tells the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CmEvent {
    /// A peer asks to connect to a port we listen on; answer with `accept` or `reject`.
    ConnectRequest {
        /// The new connection.
        conn: ConnId,
        /// Peer address.
        peer: IpAddr,
        /// Peer's source port.
        peer_port: u16,
        /// Our port it asked for.
        port: u16,
        /// Application private data (after the rdma_cm header).
        private_data: Vec<u8>,
    },
    /// The connection is up; the QP is in RTS.
    Established {
        /// Connection.
        conn: ConnId,
        /// Local QP.
        qpn: u32,
        /// Private data of the REP (active side) or empty.
        private_data: Vec<u8>,
    },
    /// The peer refused.
    Rejected {
        /// Connection.
        conn: ConnId,
        /// IBA reject reason (28 = consumer reject, 8 = no listener).
        reason: u16,
        /// Private data.
        private_data: Vec<u8>,
    },
    /// No answer after all retries.
    Unreachable {
        /// Connection.
        conn: ConnId,
    },
    /// Disconnected (by either side); the QP is in ERR.
    Disconnected {
        /// Connection.
        conn: ConnId,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ConnState {
    ReqSent,
    ReqRcvd,
    RepSent,
    Established,
    DreqSent,
    Closed,
}

#[derive(Debug)]
struct Conn {
    remote_id: u32,
    peer: IpAddr,
    qpn: Option<u32>,
    state: ConnState,
    tid: u64,
    /// The PSN we expect to receive (advertised in our REQ/REP).
    local_psn: u32,
    req: Option<CmReq>,
    last_mad: Vec<u8>,
    retries_left: u8,
    resend_at: Option<Instant>,
    /// The peer's QPN and starting PSN (from its REQ or REP), once known.
    remote: Option<(u32, u32)>,
    /// A proxy connection: no local QP; we advertised this QPN on behalf of someone else.
    proxy_qpn: Option<u32>,
}

/// What the CM negotiated for a connection (see [`Endpoint::cm_conn_info`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmConnInfo {
    /// The peer.
    pub peer: IpAddr,
    /// The peer's QPN (from its REQ or REP; 0 until known).
    pub remote_qpn: u32,
    /// The PSN the peer expects to receive first (its REQ's or REP's starting PSN; we send
    /// from it); 0 until known.
    pub remote_psn: u32,
    /// The PSN we advertised (we expect to receive it first); 0 before accept.
    pub local_psn: u32,
    /// Our local QP, if any (proxy connections have none).
    pub qpn: Option<u32>,
    /// The QPN we advertised: the local QP, or the proxy QPN.
    pub advertised_qpn: u32,
    /// Whether the connection is established.
    pub established: bool,
}

/// CM state of an endpoint.
#[derive(Debug, Default)]
pub(crate) struct CmAgent {
    listeners: BTreeSet<u16>,
    conns: BTreeMap<u32, Conn>,
    events: VecDeque<CmEvent>,
    gsi_psn: u32,
}

impl CmAgent {
    pub(crate) fn next_timeout(&self) -> Option<Instant> {
        self.conns.values().filter_map(|c| c.resend_at).min()
    }
}

fn guid_from_mac(mac: [u8; 6]) -> u64 {
    u64::from_be_bytes([
        mac[0] ^ 2,
        mac[1],
        mac[2],
        0xFF,
        0xFE,
        mac[3],
        mac[4],
        mac[5],
    ])
}

impl Endpoint {
    /// Next CM event.
    pub fn poll_cm_event(&mut self) -> Option<CmEvent> {
        self.cm.events.pop_front()
    }

    /// Accepts connection requests for `port` (rdma_cm TCP port space).
    pub fn listen(&mut self, port: u16) -> Result<(), VerbsError> {
        if !self.cm.listeners.insert(port) {
            return Err(VerbsError::PortInUse(port));
        }
        Ok(())
    }

    /// Stops listening on `port`.
    pub fn unlisten(&mut self, port: u16) -> bool {
        self.cm.listeners.remove(&port)
    }

    fn new_comm_id(&mut self) -> u32 {
        loop {
            let id = self.random() as u32;
            if id != 0 && !self.cm.conns.contains_key(&id) {
                return id;
            }
        }
    }

    fn send_mad(&mut self, now: Instant, peer: IpAddr, mad: &[u8]) {
        let mut b = BthRepr::new(Opcode::UD_SEND_ONLY, 1, self.cm.gsi_psn);
        self.cm.gsi_psn = (self.cm.gsi_psn + 1) & 0xFF_FFFF;
        b.solicited = false;
        let mut h = RoceHeaders::new(b);
        h.deth = Some(DethRepr {
            qkey: GSI_QKEY,
            src_qp: 1,
        });
        let mut arp = Vec::new();
        match self
            .device
            .build(now, peer, 0xC001, &h, mad, false, &mut arp)
        {
            Ok(Some(f)) => {
                self.tx.extend(arp);
                self.tx.push_back(f);
            }
            Ok(None) => self.tx.extend(arp),
            Err(_) => self.stats.tx_build_errors += 1,
        }
    }

    fn send_tracked(&mut self, now: Instant, id: u32, mad: Vec<u8>) {
        let timeout = self.cfg.cm.response_timeout;
        let retries = self.cfg.cm.max_retries;
        let Some(c) = self.cm.conns.get_mut(&id) else {
            return;
        };
        let peer = c.peer;
        c.last_mad = mad.clone();
        c.retries_left = retries;
        c.resend_at = Some(now + timeout);
        self.send_mad(now, peer, &mad);
    }

    fn rc_qp_in(&self, qpn: u32, states: &[QpState]) -> Result<(), VerbsError> {
        let qp = self.qps.get(&qpn).ok_or(VerbsError::UnknownQp(qpn))?;
        if qp.qp_type != QpType::Rc {
            return Err(VerbsError::Unsupported("CM connects RC QPs"));
        }
        if !states.contains(&qp.state) {
            return Err(VerbsError::BadState {
                qpn,
                state: qp.state,
                what: "connect through the CM",
            });
        }
        Ok(())
    }

    fn move_to_init(&mut self, qpn: u32) -> Result<(), VerbsError> {
        if self.qp_state(qpn)? == QpState::Reset {
            self.modify_qp(
                qpn,
                &QpAttr {
                    state: Some(QpState::Init),
                    access: Some(self.cfg.cm.access),
                    ..Default::default()
                },
            )?;
        }
        Ok(())
    }

    /// Starts an active connection of RC QP `qpn` (RESET or INIT) to `peer:port`.
    pub fn connect(
        &mut self,
        now: Instant,
        qpn: u32,
        peer: IpAddr,
        port: u16,
        private_data: &[u8],
    ) -> Result<ConnId, VerbsError> {
        self.connect_inner(now, Some(qpn), qpn, None, peer, port, private_data)
    }

    /// Starts an active connection on behalf of a QP that does not live on this endpoint
    /// (a switch agent connecting a replica to the switch's Aggr QP): the REQ advertises
    /// `qpn` and `starting_psn`, no local QP changes state. The peer's QPN and PSN are in
    /// [`Endpoint::cm_conn_info`] once `Established` arrives.
    pub fn connect_proxy(
        &mut self,
        now: Instant,
        qpn: u32,
        starting_psn: u32,
        peer: IpAddr,
        port: u16,
        private_data: &[u8],
    ) -> Result<ConnId, VerbsError> {
        self.connect_inner(
            now,
            None,
            qpn,
            Some(starting_psn & 0xFF_FFFF),
            peer,
            port,
            private_data,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn connect_inner(
        &mut self,
        now: Instant,
        local_qp: Option<u32>,
        qpn: u32,
        psn: Option<u32>,
        peer: IpAddr,
        port: u16,
        private_data: &[u8],
    ) -> Result<ConnId, VerbsError> {
        if private_data.len() > REQ_PRIVATE_MAX {
            return Err(VerbsError::PrivateDataTooLong {
                len: private_data.len(),
                max: REQ_PRIVATE_MAX,
            });
        }
        if let Some(q) = local_qp {
            self.rc_qp_in(q, &[QpState::Reset, QpState::Init])?;
        }
        let local_ip = self
            .device
            .local_ip_for(peer)
            .ok_or(VerbsError::NoLocalAddress)?;
        if let Some(q) = local_qp {
            self.move_to_init(q)?;
        }
        let id = self.new_comm_id();
        let local_psn = psn.unwrap_or_else(|| self.random() as u32 & 0xFF_FFFF);
        let src_port = 32768 + (self.random() as u16 & 0x7FFF);
        let mut private = vec![0u8; cm::private_len::REQ];
        CmaIpHeader {
            src_port,
            src: local_ip,
            dst: peer,
        }
        .emit(&mut private)
        .map_err(|_| VerbsError::NoLocalAddress)?;
        private[CmaIpHeader::LEN..CmaIpHeader::LEN + private_data.len()]
            .copy_from_slice(private_data);
        let c = self.cfg.cm;
        let req = CmReq {
            local_comm_id: id,
            service_id: service_id(RDMA_PS_TCP, port),
            local_ca_guid: guid_from_mac(self.cfg.device.mac),
            local_qkey: 0,
            local_qpn: qpn,
            responder_resources: 16,
            local_eecn: 0,
            initiator_depth: 16,
            remote_eecn: 0,
            remote_cm_resp_timeout: 20,
            transport_service_type: 0,
            e2e_flow_ctrl: true,
            starting_psn: local_psn,
            local_cm_resp_timeout: 20,
            retry_count: c.retry_cnt,
            pkey: 0xFFFF,
            path_mtu: c.path_mtu.ib_enum(),
            rdc_exists: false,
            rnr_retry_count: c.rnr_retry,
            max_cm_retries: c.max_retries.min(15),
            srq: false,
            ext_transport: 0,
            primary_local_lid: 0xFFFF,
            primary_remote_lid: 0xFFFF,
            primary_local_gid: gid_from_ip(local_ip),
            primary_remote_gid: gid_from_ip(peer),
            flow_label: 0,
            packet_rate: 0,
            traffic_class: self.cfg.device.dscp << 2,
            hop_limit: self.cfg.device.ttl,
            sl: 0,
            subnet_local: false,
            local_ack_timeout: c.timeout,
            private_data: private,
        };
        let tid = (u64::from(self.cfg.device.ipv4.to_bits()) << 32) | u64::from(id);
        let mad = CmMad {
            tid,
            attr_mod: 0,
            msg: CmMessage::Req(req),
        }
        .to_bytes()
        .map_err(|_| VerbsError::InvalidAttr("CM REQ"))?;
        self.cm.conns.insert(
            id,
            Conn {
                remote_id: 0,
                peer,
                qpn: local_qp,
                state: ConnState::ReqSent,
                tid,
                local_psn,
                req: None,
                last_mad: Vec::new(),
                retries_left: 0,
                resend_at: None,
                remote: None,
                proxy_qpn: if local_qp.is_none() { Some(qpn) } else { None },
            },
        );
        self.send_tracked(now, id, mad);
        Ok(ConnId(id))
    }

    /// Accepts a connection request with RC QP `qpn` (RESET or INIT): the QP goes to
    /// RTS and a REP is sent; `Established` follows when the RTU arrives.
    pub fn accept(
        &mut self,
        now: Instant,
        conn: ConnId,
        qpn: u32,
        private_data: &[u8],
    ) -> Result<(), VerbsError> {
        self.accept_inner(now, conn, Some(qpn), qpn, None, private_data)
    }

    /// Accepts a connection request on behalf of a QP that does not live on this endpoint
    /// (a switch agent answering for its BCast QP): the REP advertises `qpn` and
    /// `starting_psn` (the PSN the peer will send from), no local QP changes state. The
    /// requester's QPN and starting PSN are in [`Endpoint::cm_conn_info`].
    pub fn accept_proxy(
        &mut self,
        now: Instant,
        conn: ConnId,
        qpn: u32,
        starting_psn: u32,
        private_data: &[u8],
    ) -> Result<(), VerbsError> {
        self.accept_inner(
            now,
            conn,
            None,
            qpn,
            Some(starting_psn & 0xFF_FFFF),
            private_data,
        )
    }

    /// What the CM negotiated for `conn` (QPNs and starting PSNs of both sides).
    pub fn cm_conn_info(&self, conn: ConnId) -> Option<CmConnInfo> {
        let c = self.cm.conns.get(&conn.0)?;
        let (remote_qpn, remote_psn) = c.remote.unwrap_or((0, 0));
        Some(CmConnInfo {
            peer: c.peer,
            remote_qpn,
            remote_psn,
            local_psn: c.local_psn,
            qpn: c.qpn,
            advertised_qpn: c.qpn.or(c.proxy_qpn).unwrap_or(0),
            established: c.state == ConnState::Established,
        })
    }

    fn accept_inner(
        &mut self,
        now: Instant,
        conn: ConnId,
        local_qp: Option<u32>,
        qpn: u32,
        psn: Option<u32>,
        private_data: &[u8],
    ) -> Result<(), VerbsError> {
        if private_data.len() > cm::private_len::REP {
            return Err(VerbsError::PrivateDataTooLong {
                len: private_data.len(),
                max: cm::private_len::REP,
            });
        }
        let c = self
            .cm
            .conns
            .get(&conn.0)
            .ok_or(VerbsError::UnknownConn(conn.0))?;
        if c.state != ConnState::ReqRcvd {
            return Err(VerbsError::ConnState(conn.0, "accept"));
        }
        let req = c
            .req
            .clone()
            .ok_or(VerbsError::ConnState(conn.0, "accept"))?;
        let (peer, remote_id, tid) = (c.peer, c.remote_id, c.tid);
        let local_psn = psn.unwrap_or_else(|| self.random() as u32 & 0xFF_FFFF);
        if let Some(qpn) = local_qp {
            self.rc_qp_in(qpn, &[QpState::Reset, QpState::Init])?;
            self.move_to_init(qpn)?;
            let cfg = self.cfg.cm;
            let mtu = Mtu::from_ib_enum(req.path_mtu)
                .map(|m| {
                    if m.bytes() < cfg.path_mtu.bytes() {
                        m
                    } else {
                        cfg.path_mtu
                    }
                })
                .unwrap_or(cfg.path_mtu);
            self.modify_qp(
                qpn,
                &QpAttr {
                    state: Some(QpState::Rtr),
                    path_mtu: Some(mtu),
                    dest_qp_num: Some(req.local_qpn),
                    remote_ip: Some(peer),
                    rq_psn: Some(local_psn),
                    min_rnr_timer: Some(cfg.min_rnr_timer),
                    ..Default::default()
                },
            )?;
            self.modify_qp(
                qpn,
                &QpAttr {
                    state: Some(QpState::Rts),
                    sq_psn: Some(req.starting_psn),
                    timeout: Some(cfg.timeout),
                    retry_cnt: Some(req.retry_count),
                    rnr_retry: Some(req.rnr_retry_count),
                    ..Default::default()
                },
            )?;
        }
        let cfg = self.cfg.cm;
        let rep = CmRep {
            local_comm_id: conn.0,
            remote_comm_id: remote_id,
            local_qkey: 0,
            local_qpn: qpn,
            local_eecn: 0,
            starting_psn: local_psn,
            responder_resources: 16,
            initiator_depth: 16,
            target_ack_delay: 0,
            failover_accepted: 0,
            e2e_flow_ctrl: true,
            rnr_retry_count: cfg.rnr_retry,
            srq: false,
            local_ca_guid: guid_from_mac(self.cfg.device.mac),
            private_data: private_data.to_vec(),
        };
        let mad = CmMad {
            tid,
            attr_mod: 0,
            msg: CmMessage::Rep(rep),
        }
        .to_bytes()
        .map_err(|_| VerbsError::InvalidAttr("CM REP"))?;
        if let Some(c) = self.cm.conns.get_mut(&conn.0) {
            c.state = ConnState::RepSent;
            c.qpn = local_qp;
            c.proxy_qpn = if local_qp.is_none() { Some(qpn) } else { None };
            c.local_psn = local_psn;
        }
        self.send_tracked(now, conn.0, mad);
        Ok(())
    }

    /// Refuses a connection request (reason 28, consumer reject).
    pub fn reject(
        &mut self,
        now: Instant,
        conn: ConnId,
        private_data: &[u8],
    ) -> Result<(), VerbsError> {
        if private_data.len() > cm::private_len::REJ {
            return Err(VerbsError::PrivateDataTooLong {
                len: private_data.len(),
                max: cm::private_len::REJ,
            });
        }
        let c = self
            .cm
            .conns
            .get_mut(&conn.0)
            .ok_or(VerbsError::UnknownConn(conn.0))?;
        if c.state != ConnState::ReqRcvd {
            return Err(VerbsError::ConnState(conn.0, "reject"));
        }
        c.state = ConnState::Closed;
        let (peer, remote_id, tid) = (c.peer, c.remote_id, c.tid);
        self.send_rej(
            now,
            peer,
            tid,
            conn.0,
            remote_id,
            cm::REJ_CONSUMER_DEFINED,
            private_data,
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn send_rej(
        &mut self,
        now: Instant,
        peer: IpAddr,
        tid: u64,
        local: u32,
        remote: u32,
        reason: u16,
        private: &[u8],
    ) {
        let rej = CmRej {
            local_comm_id: local,
            remote_comm_id: remote,
            msg_rejected: 0,
            reject_info_len: 0,
            reason,
            ari: Vec::new(),
            private_data: private.to_vec(),
        };
        if let Ok(mad) = (CmMad {
            tid,
            attr_mod: 0,
            msg: CmMessage::Rej(rej),
        })
        .to_bytes()
        {
            self.send_mad(now, peer, &mad);
        }
    }

    /// Disconnects an established connection: DREQ to the peer, our QP to ERR.
    pub fn disconnect(&mut self, now: Instant, conn: ConnId) -> Result<(), VerbsError> {
        let c = self
            .cm
            .conns
            .get_mut(&conn.0)
            .ok_or(VerbsError::UnknownConn(conn.0))?;
        if !matches!(c.state, ConnState::Established | ConnState::RepSent) {
            return Err(VerbsError::ConnState(conn.0, "disconnect"));
        }
        c.state = ConnState::DreqSent;
        let (qpn, remote_id, tid) = (c.qpn, c.remote_id, c.tid);
        let remote_qpn = qpn
            .and_then(|q| self.qps.get(&q))
            .map(|q| q.dest_qpn)
            .unwrap_or(0);
        if let Some(q) = qpn {
            let _ = self.modify_qp(
                q,
                &QpAttr {
                    state: Some(QpState::Err),
                    ..Default::default()
                },
            );
        }
        let dreq = CmDreq {
            local_comm_id: conn.0,
            remote_comm_id: remote_id,
            remote_qpn,
            private_data: Vec::new(),
        };
        let mad = CmMad {
            tid,
            attr_mod: 0,
            msg: CmMessage::Dreq(dreq),
        }
        .to_bytes()
        .map_err(|_| VerbsError::InvalidAttr("CM DREQ"))?;
        self.send_tracked(now, conn.0, mad);
        Ok(())
    }

    fn ids_mad(tid: u64, local: u32, remote: u32, rtu: bool) -> Option<Vec<u8>> {
        let ids = CmIds {
            local_comm_id: local,
            remote_comm_id: remote,
            private_data: Vec::new(),
        };
        let msg = if rtu {
            CmMessage::Rtu(ids)
        } else {
            CmMessage::Drep(ids)
        };
        CmMad {
            tid,
            attr_mod: 0,
            msg,
        }
        .to_bytes()
        .ok()
    }

    /// Handles a MAD that arrived on QP1.
    pub(crate) fn cm_handle(&mut self, now: Instant, src: IpAddr, payload: &[u8]) {
        self.stats.cm_mads_received += 1;
        let Ok(mad) = CmMad::parse(payload) else {
            self.stats.cm_mads_dropped += 1;
            return;
        };
        match mad.msg {
            CmMessage::Req(req) => self.on_req(now, src, mad.tid, req),
            CmMessage::Rep(rep) => self.on_rep(now, src, rep),
            CmMessage::Rtu(ids) => {
                let Some(c) = self.cm.conns.get_mut(&ids.remote_comm_id) else {
                    self.stats.cm_mads_dropped += 1;
                    return;
                };
                if c.state == ConnState::RepSent && c.peer == src {
                    c.state = ConnState::Established;
                    c.resend_at = None;
                    let qpn = c.qpn.unwrap_or(0);
                    self.cm.events.push_back(CmEvent::Established {
                        conn: ConnId(ids.remote_comm_id),
                        qpn,
                        private_data: Vec::new(),
                    });
                }
            }
            CmMessage::Rej(rej) => {
                let Some(c) = self.cm.conns.get_mut(&rej.remote_comm_id) else {
                    self.stats.cm_mads_dropped += 1;
                    return;
                };
                if matches!(c.state, ConnState::ReqSent | ConnState::RepSent) && c.peer == src {
                    c.state = ConnState::Closed;
                    c.resend_at = None;
                    self.cm.events.push_back(CmEvent::Rejected {
                        conn: ConnId(rej.remote_comm_id),
                        reason: rej.reason,
                        private_data: rej.private_data,
                    });
                }
            }
            CmMessage::Dreq(dreq) => {
                let id = dreq.remote_comm_id;
                let mut notify = None;
                if let Some(c) = self.cm.conns.get_mut(&id) {
                    if c.peer != src {
                        self.stats.cm_mads_dropped += 1;
                        return;
                    }
                    if matches!(
                        c.state,
                        ConnState::Established | ConnState::RepSent | ConnState::DreqSent
                    ) {
                        notify = Some(c.qpn);
                        c.state = ConnState::Closed;
                        c.resend_at = None;
                    }
                }
                if let Some(qpn) = notify {
                    if let Some(q) = qpn {
                        let _ = self.modify_qp(
                            q,
                            &QpAttr {
                                state: Some(QpState::Err),
                                ..Default::default()
                            },
                        );
                    }
                    self.cm
                        .events
                        .push_back(CmEvent::Disconnected { conn: ConnId(id) });
                }
                // Always answer, so a peer whose DREP was lost stops resending.
                if let Some(m) = Self::ids_mad(mad.tid, id, dreq.local_comm_id, false) {
                    self.send_mad(now, src, &m);
                }
            }
            CmMessage::Drep(ids) => {
                if let Some(c) = self.cm.conns.get_mut(&ids.remote_comm_id) {
                    if c.state == ConnState::DreqSent && c.peer == src {
                        c.state = ConnState::Closed;
                        c.resend_at = None;
                        self.cm.events.push_back(CmEvent::Disconnected {
                            conn: ConnId(ids.remote_comm_id),
                        });
                    }
                }
            }
            CmMessage::Mra(mra) => {
                // The peer needs more time: push our resend out.
                let extra = self.cfg.cm.response_timeout;
                if let Some(c) = self.cm.conns.get_mut(&mra.remote_comm_id) {
                    if let Some(t) = c.resend_at.as_mut() {
                        *t = *t + extra;
                    }
                }
            }
        }
    }

    fn on_req(&mut self, now: Instant, src: IpAddr, tid: u64, req: CmReq) {
        // A resent REQ for a connection we already know: resend our answer.
        let known = self
            .cm
            .conns
            .iter()
            .find(|(_, c)| c.peer == src && c.remote_id == req.local_comm_id && c.req.is_some())
            .map(|(id, c)| (*id, c.state, c.last_mad.clone()));
        if let Some((_, state, last)) = known {
            if state == ConnState::RepSent && !last.is_empty() {
                self.send_mad(now, src, &last);
            }
            return;
        }
        let cma = CmaIpHeader::parse(&req.private_data).ok();
        // rdma_cm: service ID = port space << 16 | destination port.
        let port = (req.service_id & 0xFFFF) as u16;
        if req.transport_service_type != 0 || !self.cm.listeners.contains(&port) {
            self.send_rej(
                now,
                src,
                tid,
                0,
                req.local_comm_id,
                cm::REJ_INVALID_SERVICE_ID,
                &[],
            );
            return;
        }
        let id = self.new_comm_id();
        let private = req.private_data[CmaIpHeader::LEN.min(req.private_data.len())..].to_vec();
        let peer_port = cma.map(|h| h.src_port).unwrap_or(0);
        let remote = Some((req.local_qpn, req.starting_psn));
        self.cm.conns.insert(
            id,
            Conn {
                remote_id: req.local_comm_id,
                peer: src,
                qpn: None,
                state: ConnState::ReqRcvd,
                tid,
                local_psn: 0,
                req: Some(req),
                last_mad: Vec::new(),
                retries_left: 0,
                resend_at: None,
                remote,
                proxy_qpn: None,
            },
        );
        self.cm.events.push_back(CmEvent::ConnectRequest {
            conn: ConnId(id),
            peer: src,
            peer_port,
            port,
            private_data: private,
        });
    }

    fn on_rep(&mut self, now: Instant, src: IpAddr, rep: CmRep) {
        let id = rep.remote_comm_id;
        let Some(c) = self.cm.conns.get_mut(&id) else {
            self.stats.cm_mads_dropped += 1;
            return;
        };
        if c.peer != src {
            self.stats.cm_mads_dropped += 1;
            return;
        }
        let tid = c.tid;
        match c.state {
            ConnState::Established => {
                // Our RTU was lost: say it again.
                if let Some(m) = Self::ids_mad(tid, id, rep.local_comm_id, true) {
                    self.send_mad(now, src, &m);
                }
            }
            ConnState::ReqSent => {
                c.remote_id = rep.local_comm_id;
                c.resend_at = None;
                c.remote = Some((rep.local_qpn, rep.starting_psn));
                let proxy = c.qpn.is_none();
                let (qpn, local_psn) = (c.qpn.unwrap_or(0), c.local_psn);
                let cfg = self.cfg.cm;
                let up = if proxy {
                    Ok(())
                } else {
                    self.modify_qp(
                        qpn,
                        &QpAttr {
                            state: Some(QpState::Rtr),
                            path_mtu: Some(cfg.path_mtu),
                            dest_qp_num: Some(rep.local_qpn),
                            remote_ip: Some(src),
                            rq_psn: Some(local_psn),
                            min_rnr_timer: Some(cfg.min_rnr_timer),
                            ..Default::default()
                        },
                    )
                    .and_then(|_| {
                        self.modify_qp(
                            qpn,
                            &QpAttr {
                                state: Some(QpState::Rts),
                                sq_psn: Some(rep.starting_psn),
                                timeout: Some(cfg.timeout),
                                retry_cnt: Some(cfg.retry_cnt),
                                rnr_retry: Some(rep.rnr_retry_count),
                                ..Default::default()
                            },
                        )
                    })
                };
                let conn = ConnId(id);
                if up.is_err() {
                    if let Some(c) = self.cm.conns.get_mut(&id) {
                        c.state = ConnState::Closed;
                    }
                    self.send_rej(now, src, tid, id, rep.local_comm_id, cm::REJ_TIMEOUT, &[]);
                    self.cm.events.push_back(CmEvent::Unreachable { conn });
                    return;
                }
                if let Some(c) = self.cm.conns.get_mut(&id) {
                    c.state = ConnState::Established;
                }
                if let Some(m) = Self::ids_mad(tid, id, rep.local_comm_id, true) {
                    self.send_mad(now, src, &m);
                }
                self.cm.events.push_back(CmEvent::Established {
                    conn,
                    qpn,
                    private_data: rep.private_data,
                });
            }
            _ => self.stats.cm_mads_dropped += 1,
        }
    }

    /// Resends unanswered CM messages; gives up after the retry count.
    pub(crate) fn cm_timeout(&mut self, now: Instant) {
        let due: Vec<u32> = self
            .cm
            .conns
            .iter()
            .filter(|(_, c)| c.resend_at.is_some_and(|t| now >= t))
            .map(|(id, _)| *id)
            .collect();
        let timeout = self.cfg.cm.response_timeout;
        for id in due {
            let Some(c) = self.cm.conns.get_mut(&id) else {
                continue;
            };
            if c.retries_left == 0 {
                c.resend_at = None;
                let state = c.state;
                c.state = ConnState::Closed;
                let qpn = c.qpn;
                let ev = match state {
                    ConnState::DreqSent => CmEvent::Disconnected { conn: ConnId(id) },
                    _ => CmEvent::Unreachable { conn: ConnId(id) },
                };
                if state == ConnState::RepSent {
                    if let Some(q) = qpn {
                        let _ = self.modify_qp(
                            q,
                            &QpAttr {
                                state: Some(QpState::Err),
                                ..Default::default()
                            },
                        );
                    }
                }
                self.cm.events.push_back(ev);
                continue;
            }
            c.retries_left -= 1;
            c.resend_at = Some(now + timeout);
            let (peer, mad) = (c.peer, c.last_mad.clone());
            self.send_mad(now, peer, &mad);
        }
    }
}

#[cfg(test)]
mod proxy_tests {
    //! `connect_proxy` / `accept_proxy` / `cm_conn_info`: a switch agent's CM on behalf of
    //! QPs it does not own, between two endpoints shuttling frames directly.

    use std::net::{IpAddr, Ipv4Addr};

    use super::*;
    use crate::verbs::{EndpointConfig, QpInitAttr};

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

    fn pair() -> (Endpoint, Endpoint) {
        let (ma, mb) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut a = Endpoint::new(EndpointConfig::new(ma, A));
        let mut b = Endpoint::new(EndpointConfig::new(mb, B));
        a.add_neighbour(IpAddr::V4(B), mb);
        b.add_neighbour(IpAddr::V4(A), ma);
        (a, b)
    }

    fn shuttle(a: &mut Endpoint, b: &mut Endpoint) {
        let now = Instant::ZERO;
        for _ in 0..16 {
            let mut moved = false;
            while let Some(f) = a.poll_transmit(now) {
                b.handle_frame(now, &f);
                moved = true;
            }
            while let Some(f) = b.poll_transmit(now) {
                a.handle_frame(now, &f);
                moved = true;
            }
            if !moved {
                break;
            }
        }
    }

    fn rc_qp(ep: &mut Endpoint) -> u32 {
        let pd = ep.alloc_pd();
        let cq = ep.create_cq(16);
        ep.create_qp(QpInitAttr {
            pd,
            qp_type: QpType::Rc,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: 16,
            max_recv_wr: 16,
        })
        .unwrap()
    }

    #[test]
    fn proxy_connect_advertises_the_given_qpn_and_psn() {
        let (mut a, mut b) = pair();
        let qb = rc_qp(&mut b);
        b.listen(7000).unwrap();
        let conn = a
            .connect_proxy(Instant::ZERO, 0x201, 0x12_3456, IpAddr::V4(B), 7000, b"x")
            .unwrap();
        shuttle(&mut a, &mut b);
        let Some(CmEvent::ConnectRequest { conn: bc, .. }) = b.poll_cm_event() else {
            panic!("no request");
        };
        let req_info = b.cm_conn_info(bc).unwrap();
        assert_eq!(
            (req_info.remote_qpn, req_info.remote_psn),
            (0x201, 0x12_3456)
        );
        b.accept(Instant::ZERO, bc, qb, b"offer").unwrap();
        shuttle(&mut a, &mut b);
        let Some(CmEvent::Established { private_data, .. }) = a.poll_cm_event() else {
            panic!("not established");
        };
        assert_eq!(&private_data[..5], b"offer");
        let info = a.cm_conn_info(conn).unwrap();
        assert!(info.established);
        assert_eq!(info.qpn, None);
        assert_eq!(info.advertised_qpn, 0x201);
        assert_eq!(info.remote_qpn, qb);
        assert_eq!(info.local_psn, 0x12_3456);
        // The passive side's QP points at the advertised QPN.
        assert_eq!(b.qp_state(qb).unwrap(), QpState::Rts);
        assert_eq!(b.qps.get(&qb).map(|q| q.dest_qpn), Some(0x201));
    }

    #[test]
    fn proxy_accept_answers_for_a_qp_it_does_not_own() {
        let (mut a, mut b) = pair();
        let qa = rc_qp(&mut a);
        b.listen(7000).unwrap();
        let conn = a
            .connect(Instant::ZERO, qa, IpAddr::V4(B), 7000, b"req")
            .unwrap();
        shuttle(&mut a, &mut b);
        let Some(CmEvent::ConnectRequest { conn: bc, .. }) = b.poll_cm_event() else {
            panic!("no request");
        };
        // Unknown connections are refused; a real accept_proxy goes through.
        assert!(b
            .accept_proxy(Instant::ZERO, ConnId(bc.0 ^ 1), 0x101, 5, &[])
            .is_err());
        b.accept_proxy(Instant::ZERO, bc, 0x101, 0xAB_CDEF, b"reply")
            .unwrap();
        shuttle(&mut a, &mut b);
        let Some(CmEvent::Established { qpn, .. }) = a.poll_cm_event() else {
            panic!("not established");
        };
        assert_eq!(qpn, qa);
        assert_eq!(a.qps.get(&qa).map(|q| q.dest_qpn), Some(0x101));
        let binfo = b.cm_conn_info(bc).unwrap();
        assert!(binfo.established, "RTU arrived");
        assert_eq!(binfo.qpn, None);
        assert_eq!(binfo.remote_qpn, qa);
        assert_eq!(binfo.local_psn, 0xAB_CDEF);
        let ainfo = a.cm_conn_info(conn).unwrap();
        assert_eq!(ainfo.remote_psn, 0xAB_CDEF);
        // A disconnect from the active side closes the proxy connection without a QP.
        a.disconnect(Instant::ZERO, conn).unwrap();
        shuttle(&mut a, &mut b);
        let evs: Vec<CmEvent> = std::iter::from_fn(|| b.poll_cm_event()).collect();
        assert!(
            matches!(evs.first(), Some(CmEvent::Established { conn: c, qpn: 0, .. }) if *c == bc),
            "{evs:?}"
        );
        assert!(
            matches!(evs.get(1), Some(CmEvent::Disconnected { conn: c }) if *c == bc),
            "{evs:?}"
        );
    }
}

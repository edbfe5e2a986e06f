//! Communication-manager messages (IBA Vol.1 ch.12) carried in CM MADs: REQ, MRA, REJ,
//! REP, RTU, DREQ, DREP, and the rdma_cm IP header at the start of REQ private data.
//! Offsets are relative to the MAD data (MAD start + 24), as in the notes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::field::{check_bits, get_u16, get_u24, get_u32, get_u64};
use super::field::{set_u16, set_u24, set_u32, set_u64};
use super::mad::{MadPacket, MadRepr, MAD_DATA_LEN, MAD_LEN, MGMT_CLASS_CM};
use super::WireError;

/// CM attribute IDs.
pub mod attr {
    /// Connection request.
    pub const REQ: u16 = 0x0010;
    /// Message receipt acknowledgement.
    pub const MRA: u16 = 0x0011;
    /// Reject.
    pub const REJ: u16 = 0x0012;
    /// Reply to request.
    pub const REP: u16 = 0x0013;
    /// Ready to use.
    pub const RTU: u16 = 0x0014;
    /// Disconnect request.
    pub const DREQ: u16 = 0x0015;
    /// Disconnect reply.
    pub const DREP: u16 = 0x0016;
}

/// Private-data sizes per message.
pub mod private_len {
    /// REQ.
    pub const REQ: usize = 92;
    /// MRA.
    pub const MRA: usize = 222;
    /// REJ.
    pub const REJ: usize = 148;
    /// REP.
    pub const REP: usize = 196;
    /// RTU.
    pub const RTU: usize = 224;
    /// DREQ.
    pub const DREQ: usize = 220;
    /// DREP.
    pub const DREP: usize = 224;
}

/// rdma_cm port space for RC ("TCP") services.
pub const RDMA_PS_TCP: u16 = 0x0106;
/// rdma_cm port space for UDP services.
pub const RDMA_PS_UDP: u16 = 0x0111;

/// Service ID of an rdma_cm port: `(port_space << 16) + port`.
pub fn service_id(port_space: u16, port: u16) -> u64 {
    (u64::from(port_space) << 16) | u64::from(port)
}

/// IPv4-mapped IPv6 GID (`::ffff:a.b.c.d`) as RoCE uses for IPv4 peers.
pub fn gid_from_ip(ip: IpAddr) -> [u8; 16] {
    match ip {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

fn copy_private(dst: &mut [u8], src: &[u8], field: &'static str) -> Result<(), WireError> {
    if src.len() > dst.len() {
        return Err(WireError::FieldRange {
            field,
            value: src.len() as u64,
        });
    }
    dst[..src.len()].copy_from_slice(src);
    dst[src.len()..].fill(0);
    Ok(())
}

/// REQ (Table 106): the active side's connection request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmReq {
    pub local_comm_id: u32,
    pub service_id: u64,
    pub local_ca_guid: u64,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub responder_resources: u8,
    pub local_eecn: u32,
    pub initiator_depth: u8,
    pub remote_eecn: u32,
    /// 5 bits.
    pub remote_cm_resp_timeout: u8,
    /// 2 bits: 0 RC, 1 UC, 3 XRC.
    pub transport_service_type: u8,
    pub e2e_flow_ctrl: bool,
    /// The PSN the active side expects to receive (its RQ PSN).
    pub starting_psn: u32,
    /// 5 bits.
    pub local_cm_resp_timeout: u8,
    /// 3 bits.
    pub retry_count: u8,
    pub pkey: u16,
    /// 4 bits, IB MTU enum (1=256 … 5=4096).
    pub path_mtu: u8,
    pub rdc_exists: bool,
    /// 3 bits.
    pub rnr_retry_count: u8,
    /// 4 bits.
    pub max_cm_retries: u8,
    pub srq: bool,
    /// 3 bits.
    pub ext_transport: u8,
    pub primary_local_lid: u16,
    pub primary_remote_lid: u16,
    pub primary_local_gid: [u8; 16],
    pub primary_remote_gid: [u8; 16],
    /// 20 bits.
    pub flow_label: u32,
    /// 6 bits.
    pub packet_rate: u8,
    pub traffic_class: u8,
    pub hop_limit: u8,
    /// 4 bits.
    pub sl: u8,
    pub subnet_local: bool,
    /// 5 bits.
    pub local_ack_timeout: u8,
    /// Up to 92 bytes (zero-padded on emit; always 92 after parse).
    pub private_data: Vec<u8>,
}

impl CmReq {
    fn parse(d: &[u8]) -> CmReq {
        CmReq {
            local_comm_id: get_u32(d, 0),
            service_id: get_u64(d, 8),
            local_ca_guid: get_u64(d, 16),
            local_qkey: get_u32(d, 28),
            local_qpn: get_u24(d, 32),
            responder_resources: d[35],
            local_eecn: get_u24(d, 36),
            initiator_depth: d[39],
            remote_eecn: get_u24(d, 40),
            remote_cm_resp_timeout: d[43] >> 3,
            transport_service_type: (d[43] >> 1) & 3,
            e2e_flow_ctrl: d[43] & 1 != 0,
            starting_psn: get_u24(d, 44),
            local_cm_resp_timeout: d[47] >> 3,
            retry_count: d[47] & 7,
            pkey: get_u16(d, 48),
            path_mtu: d[50] >> 4,
            rdc_exists: d[50] & 0x08 != 0,
            rnr_retry_count: d[50] & 7,
            max_cm_retries: d[51] >> 4,
            srq: d[51] & 0x08 != 0,
            ext_transport: d[51] & 7,
            primary_local_lid: get_u16(d, 52),
            primary_remote_lid: get_u16(d, 54),
            primary_local_gid: gid_at(d, 56),
            primary_remote_gid: gid_at(d, 72),
            flow_label: get_u32(d, 88) >> 12,
            packet_rate: d[91] & 0x3F,
            traffic_class: d[92],
            hop_limit: d[93],
            sl: d[94] >> 4,
            subnet_local: d[94] & 0x08 != 0,
            local_ack_timeout: d[95] >> 3,
            private_data: d[140..140 + private_len::REQ].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        check_bits("REQ.local_qpn", self.local_qpn.into(), 24)?;
        check_bits("REQ.local_eecn", self.local_eecn.into(), 24)?;
        check_bits("REQ.remote_eecn", self.remote_eecn.into(), 24)?;
        check_bits("REQ.starting_psn", self.starting_psn.into(), 24)?;
        check_bits(
            "REQ.remote_cm_resp_timeout",
            self.remote_cm_resp_timeout.into(),
            5,
        )?;
        check_bits(
            "REQ.transport_service_type",
            self.transport_service_type.into(),
            2,
        )?;
        check_bits(
            "REQ.local_cm_resp_timeout",
            self.local_cm_resp_timeout.into(),
            5,
        )?;
        check_bits("REQ.retry_count", self.retry_count.into(), 3)?;
        check_bits("REQ.path_mtu", self.path_mtu.into(), 4)?;
        check_bits("REQ.rnr_retry_count", self.rnr_retry_count.into(), 3)?;
        check_bits("REQ.max_cm_retries", self.max_cm_retries.into(), 4)?;
        check_bits("REQ.ext_transport", self.ext_transport.into(), 3)?;
        check_bits("REQ.flow_label", self.flow_label.into(), 20)?;
        check_bits("REQ.packet_rate", self.packet_rate.into(), 6)?;
        check_bits("REQ.sl", self.sl.into(), 4)?;
        check_bits("REQ.local_ack_timeout", self.local_ack_timeout.into(), 5)?;
        set_u32(d, 0, self.local_comm_id);
        set_u64(d, 8, self.service_id);
        set_u64(d, 16, self.local_ca_guid);
        set_u32(d, 28, self.local_qkey);
        set_u24(d, 32, self.local_qpn);
        d[35] = self.responder_resources;
        set_u24(d, 36, self.local_eecn);
        d[39] = self.initiator_depth;
        set_u24(d, 40, self.remote_eecn);
        d[43] = (self.remote_cm_resp_timeout << 3)
            | (self.transport_service_type << 1)
            | u8::from(self.e2e_flow_ctrl);
        set_u24(d, 44, self.starting_psn);
        d[47] = (self.local_cm_resp_timeout << 3) | self.retry_count;
        set_u16(d, 48, self.pkey);
        d[50] = (self.path_mtu << 4) | (u8::from(self.rdc_exists) << 3) | self.rnr_retry_count;
        d[51] = (self.max_cm_retries << 4) | (u8::from(self.srq) << 3) | self.ext_transport;
        set_u16(d, 52, self.primary_local_lid);
        set_u16(d, 54, self.primary_remote_lid);
        d[56..72].copy_from_slice(&self.primary_local_gid);
        d[72..88].copy_from_slice(&self.primary_remote_gid);
        set_u32(d, 88, (self.flow_label << 12) | u32::from(self.packet_rate));
        d[92] = self.traffic_class;
        d[93] = self.hop_limit;
        d[94] = (self.sl << 4) | (u8::from(self.subnet_local) << 3);
        d[95] = self.local_ack_timeout << 3;
        copy_private(
            &mut d[140..140 + private_len::REQ],
            &self.private_data,
            "REQ.private_data",
        )
    }
}

fn gid_at(d: &[u8], off: usize) -> [u8; 16] {
    let mut g = [0u8; 16];
    g.copy_from_slice(&d[off..off + 16]);
    g
}

/// REP (Table 110): the passive side's reply.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmRep {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub local_eecn: u32,
    /// The PSN the passive side expects to receive.
    pub starting_psn: u32,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    /// 5 bits.
    pub target_ack_delay: u8,
    /// 2 bits.
    pub failover_accepted: u8,
    pub e2e_flow_ctrl: bool,
    /// 3 bits.
    pub rnr_retry_count: u8,
    pub srq: bool,
    pub local_ca_guid: u64,
    /// Up to 196 bytes.
    pub private_data: Vec<u8>,
}

impl CmRep {
    fn parse(d: &[u8]) -> CmRep {
        CmRep {
            local_comm_id: get_u32(d, 0),
            remote_comm_id: get_u32(d, 4),
            local_qkey: get_u32(d, 8),
            local_qpn: get_u24(d, 12),
            local_eecn: get_u24(d, 16),
            starting_psn: get_u24(d, 20),
            responder_resources: d[24],
            initiator_depth: d[25],
            target_ack_delay: d[26] >> 3,
            failover_accepted: (d[26] >> 1) & 3,
            e2e_flow_ctrl: d[26] & 1 != 0,
            rnr_retry_count: d[27] >> 5,
            srq: d[27] & 0x10 != 0,
            local_ca_guid: get_u64(d, 28),
            private_data: d[36..36 + private_len::REP].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        check_bits("REP.local_qpn", self.local_qpn.into(), 24)?;
        check_bits("REP.local_eecn", self.local_eecn.into(), 24)?;
        check_bits("REP.starting_psn", self.starting_psn.into(), 24)?;
        check_bits("REP.target_ack_delay", self.target_ack_delay.into(), 5)?;
        check_bits("REP.failover_accepted", self.failover_accepted.into(), 2)?;
        check_bits("REP.rnr_retry_count", self.rnr_retry_count.into(), 3)?;
        set_u32(d, 0, self.local_comm_id);
        set_u32(d, 4, self.remote_comm_id);
        set_u32(d, 8, self.local_qkey);
        set_u24(d, 12, self.local_qpn);
        set_u24(d, 16, self.local_eecn);
        set_u24(d, 20, self.starting_psn);
        d[24] = self.responder_resources;
        d[25] = self.initiator_depth;
        d[26] = (self.target_ack_delay << 3)
            | (self.failover_accepted << 1)
            | u8::from(self.e2e_flow_ctrl);
        d[27] = (self.rnr_retry_count << 5) | (u8::from(self.srq) << 4);
        set_u64(d, 28, self.local_ca_guid);
        copy_private(
            &mut d[36..36 + private_len::REP],
            &self.private_data,
            "REP.private_data",
        )
    }
}

/// REJ: reject a REQ or REP.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmRej {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 2 bits: 0 REQ, 1 REP, 2 other.
    pub msg_rejected: u8,
    /// 7 bits.
    pub reject_info_len: u8,
    pub reason: u16,
    /// 72 bytes of additional reject information.
    pub ari: Vec<u8>,
    /// Up to 148 bytes.
    pub private_data: Vec<u8>,
}

/// REJ reason: consumer reject (rdma_reject).
pub const REJ_CONSUMER_DEFINED: u16 = 28;
/// REJ reason: invalid service ID (nobody listens).
pub const REJ_INVALID_SERVICE_ID: u16 = 8;
/// REJ reason: timeout.
pub const REJ_TIMEOUT: u16 = 1;

impl CmRej {
    fn parse(d: &[u8]) -> CmRej {
        CmRej {
            local_comm_id: get_u32(d, 0),
            remote_comm_id: get_u32(d, 4),
            msg_rejected: d[8] >> 6,
            reject_info_len: d[9] >> 1,
            reason: get_u16(d, 10),
            ari: d[12..84].to_vec(),
            private_data: d[84..84 + private_len::REJ].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        check_bits("REJ.msg_rejected", self.msg_rejected.into(), 2)?;
        check_bits("REJ.reject_info_len", self.reject_info_len.into(), 7)?;
        set_u32(d, 0, self.local_comm_id);
        set_u32(d, 4, self.remote_comm_id);
        d[8] = self.msg_rejected << 6;
        d[9] = self.reject_info_len << 1;
        set_u16(d, 10, self.reason);
        copy_private(&mut d[12..84], &self.ari, "REJ.ari")?;
        copy_private(
            &mut d[84..84 + private_len::REJ],
            &self.private_data,
            "REJ.private_data",
        )
    }
}

/// MRA: message receipt acknowledgement (asks the peer to wait longer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmMra {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 2 bits: 0 REQ, 1 REP, 2 LAP.
    pub msg_mraed: u8,
    /// 5 bits.
    pub service_timeout: u8,
    /// Up to 222 bytes.
    pub private_data: Vec<u8>,
}

impl CmMra {
    fn parse(d: &[u8]) -> CmMra {
        CmMra {
            local_comm_id: get_u32(d, 0),
            remote_comm_id: get_u32(d, 4),
            msg_mraed: d[8] >> 6,
            service_timeout: d[9] >> 3,
            private_data: d[10..10 + private_len::MRA].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        check_bits("MRA.msg_mraed", self.msg_mraed.into(), 2)?;
        check_bits("MRA.service_timeout", self.service_timeout.into(), 5)?;
        set_u32(d, 0, self.local_comm_id);
        set_u32(d, 4, self.remote_comm_id);
        d[8] = self.msg_mraed << 6;
        d[9] = self.service_timeout << 3;
        copy_private(
            &mut d[10..10 + private_len::MRA],
            &self.private_data,
            "MRA.private_data",
        )
    }
}

/// RTU, DREP: comm ids and private data at offset 8.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmIds {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// Up to 224 bytes.
    pub private_data: Vec<u8>,
}

impl CmIds {
    fn parse(d: &[u8]) -> CmIds {
        CmIds {
            local_comm_id: get_u32(d, 0),
            remote_comm_id: get_u32(d, 4),
            private_data: d[8..8 + 224].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        set_u32(d, 0, self.local_comm_id);
        set_u32(d, 4, self.remote_comm_id);
        copy_private(&mut d[8..8 + 224], &self.private_data, "private_data")
    }
}

/// DREQ: disconnect request.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub struct CmDreq {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub remote_qpn: u32,
    /// Up to 220 bytes.
    pub private_data: Vec<u8>,
}

impl CmDreq {
    fn parse(d: &[u8]) -> CmDreq {
        CmDreq {
            local_comm_id: get_u32(d, 0),
            remote_comm_id: get_u32(d, 4),
            remote_qpn: get_u24(d, 8),
            private_data: d[12..12 + private_len::DREQ].to_vec(),
        }
    }

    fn emit(&self, d: &mut [u8]) -> Result<(), WireError> {
        check_bits("DREQ.remote_qpn", self.remote_qpn.into(), 24)?;
        set_u32(d, 0, self.local_comm_id);
        set_u32(d, 4, self.remote_comm_id);
        set_u24(d, 8, self.remote_qpn);
        d[11] = 0;
        copy_private(
            &mut d[12..12 + private_len::DREQ],
            &self.private_data,
            "DREQ.private_data",
        )
    }
}

/// A CM message.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum CmMessage {
    Req(CmReq),
    Mra(CmMra),
    Rej(CmRej),
    Rep(CmRep),
    Rtu(CmIds),
    Dreq(CmDreq),
    Drep(CmIds),
}

impl CmMessage {
    /// The MAD attribute ID of this message.
    pub fn attr_id(&self) -> u16 {
        match self {
            CmMessage::Req(_) => attr::REQ,
            CmMessage::Mra(_) => attr::MRA,
            CmMessage::Rej(_) => attr::REJ,
            CmMessage::Rep(_) => attr::REP,
            CmMessage::Rtu(_) => attr::RTU,
            CmMessage::Dreq(_) => attr::DREQ,
            CmMessage::Drep(_) => attr::DREP,
        }
    }

    /// Short name (`REQ`, `REP`, …).
    pub fn name(&self) -> &'static str {
        attr_name(self.attr_id()).unwrap_or("?")
    }

    /// Parses the 232 data bytes of a MAD with the given attribute ID.
    pub fn parse(attr_id: u16, data: &[u8]) -> Result<CmMessage, WireError> {
        if data.len() < MAD_DATA_LEN {
            return Err(WireError::Truncated {
                header: "CM MAD data",
                need: MAD_DATA_LEN,
                have: data.len(),
            });
        }
        Ok(match attr_id {
            attr::REQ => CmMessage::Req(CmReq::parse(data)),
            attr::MRA => CmMessage::Mra(CmMra::parse(data)),
            attr::REJ => CmMessage::Rej(CmRej::parse(data)),
            attr::REP => CmMessage::Rep(CmRep::parse(data)),
            attr::RTU => CmMessage::Rtu(CmIds::parse(data)),
            attr::DREQ => CmMessage::Dreq(CmDreq::parse(data)),
            attr::DREP => CmMessage::Drep(CmIds::parse(data)),
            _ => return Err(WireError::BadMad("unsupported CM attribute")),
        })
    }

    /// Writes the message into the 232 data bytes of a MAD (zeroing what it does not set).
    pub fn emit(&self, data: &mut [u8]) -> Result<(), WireError> {
        if data.len() < MAD_DATA_LEN {
            return Err(WireError::BufferTooSmall {
                need: MAD_DATA_LEN,
                have: data.len(),
            });
        }
        data[..MAD_DATA_LEN].fill(0);
        match self {
            CmMessage::Req(m) => m.emit(data),
            CmMessage::Mra(m) => m.emit(data),
            CmMessage::Rej(m) => m.emit(data),
            CmMessage::Rep(m) => m.emit(data),
            CmMessage::Rtu(m) | CmMessage::Drep(m) => m.emit(data),
            CmMessage::Dreq(m) => m.emit(data),
        }
    }
}

/// Name of a CM attribute ID, if it is one.
pub fn attr_name(attr_id: u16) -> Option<&'static str> {
    Some(match attr_id {
        attr::REQ => "REQ",
        attr::MRA => "MRA",
        attr::REJ => "REJ",
        attr::REP => "REP",
        attr::RTU => "RTU",
        attr::DREQ => "DREQ",
        attr::DREP => "DREP",
        0x0017 => "SIDR_REQ",
        0x0018 => "SIDR_REP",
        0x0019 => "LAP",
        0x001A => "APR",
        _ => return None,
    })
}

/// A whole CM MAD: header fields that matter plus the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CmMad {
    /// Transaction ID.
    pub tid: u64,
    /// Attribute modifier (non-zero with ECE).
    pub attr_mod: u32,
    /// The message.
    pub msg: CmMessage,
}

impl CmMad {
    /// Length on the wire.
    pub const LEN: usize = MAD_LEN;

    /// Parses a 256-byte MAD; rejects non-CM classes and unknown attributes.
    pub fn parse(mad: &[u8]) -> Result<CmMad, WireError> {
        if mad.len() < MAD_LEN {
            return Err(WireError::Truncated {
                header: "MAD",
                need: MAD_LEN,
                have: mad.len(),
            });
        }
        let view = MadPacket::new_checked(mad)?;
        let hdr = MadRepr::parse(&view)?;
        if hdr.mgmt_class != MGMT_CLASS_CM {
            return Err(WireError::BadMad("management class is not CM"));
        }
        Ok(CmMad {
            tid: hdr.tid,
            attr_mod: hdr.attr_mod,
            msg: CmMessage::parse(hdr.attr_id, view.payload())?,
        })
    }

    /// Writes the 256-byte MAD.
    pub fn emit(&self, buf: &mut [u8]) -> Result<(), WireError> {
        if buf.len() < MAD_LEN {
            return Err(WireError::BufferTooSmall {
                need: MAD_LEN,
                have: buf.len(),
            });
        }
        let mut view = MadPacket::new_unchecked(&mut buf[..MAD_LEN]);
        let mut hdr = MadRepr::cm(self.msg.attr_id(), self.tid);
        hdr.attr_mod = self.attr_mod;
        hdr.emit(&mut view)?;
        self.msg.emit(view.payload_mut())
    }

    /// The 256 bytes as a vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>, WireError> {
        let mut v = vec![0u8; MAD_LEN];
        self.emit(&mut v)?;
        Ok(v)
    }
}

/// The rdma_cm IP header in the first 36 bytes of REQ private data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmaIpHeader {
    /// Source port of the active side.
    pub src_port: u16,
    /// Source address of the active side.
    pub src: IpAddr,
    /// Destination address (the listener).
    pub dst: IpAddr,
}

impl CmaIpHeader {
    /// Length on the wire.
    pub const LEN: usize = 36;

    /// Parses the header from REQ private data.
    pub fn parse(private: &[u8]) -> Result<CmaIpHeader, WireError> {
        if private.len() < Self::LEN {
            return Err(WireError::Truncated {
                header: "CMA IP header",
                need: Self::LEN,
                have: private.len(),
            });
        }
        if private[0] != 0 {
            return Err(WireError::BadMad("unknown CMA header version"));
        }
        let port = get_u16(private, 2);
        let (src, dst) = match private[1] >> 4 {
            4 => (
                IpAddr::V4(Ipv4Addr::new(
                    private[16],
                    private[17],
                    private[18],
                    private[19],
                )),
                IpAddr::V4(Ipv4Addr::new(
                    private[32],
                    private[33],
                    private[34],
                    private[35],
                )),
            ),
            6 => (
                IpAddr::V6(Ipv6Addr::from(gid_at(private, 4))),
                IpAddr::V6(Ipv6Addr::from(gid_at(private, 20))),
            ),
            _ => return Err(WireError::BadMad("CMA header IP version is not 4 or 6")),
        };
        Ok(CmaIpHeader {
            src_port: port,
            src,
            dst,
        })
    }

    /// Writes the header; both addresses must be of the same family.
    pub fn emit(&self, private: &mut [u8]) -> Result<(), WireError> {
        if private.len() < Self::LEN {
            return Err(WireError::BufferTooSmall {
                need: Self::LEN,
                have: private.len(),
            });
        }
        private[..Self::LEN].fill(0);
        set_u16(private, 2, self.src_port);
        match (self.src, self.dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                private[1] = 0x40;
                private[16..20].copy_from_slice(&s.octets());
                private[32..36].copy_from_slice(&d.octets());
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                private[1] = 0x60;
                private[4..20].copy_from_slice(&s.octets());
                private[20..36].copy_from_slice(&d.octets());
            }
            _ => return Err(WireError::BadMad("CMA header mixes IPv4 and IPv6")),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    pub(crate) fn sample_req() -> CmReq {
        CmReq {
            local_comm_id: 0x1234_5678,
            service_id: service_id(RDMA_PS_TCP, 20001),
            local_ca_guid: 0x0202_00ff_fe00_0001,
            local_qkey: 0,
            local_qpn: 0x12,
            responder_resources: 16,
            local_eecn: 0,
            initiator_depth: 16,
            remote_eecn: 0,
            remote_cm_resp_timeout: 20,
            transport_service_type: 0,
            e2e_flow_ctrl: true,
            starting_psn: 0xabcdef,
            local_cm_resp_timeout: 20,
            retry_count: 7,
            pkey: 0xFFFF,
            path_mtu: 3,
            rdc_exists: false,
            rnr_retry_count: 7,
            max_cm_retries: 15,
            srq: false,
            ext_transport: 0,
            primary_local_lid: 0xFFFF,
            primary_remote_lid: 0xFFFF,
            primary_local_gid: gid_from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))),
            primary_remote_gid: gid_from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2))),
            flow_label: 0,
            packet_rate: 0,
            traffic_class: 0,
            hop_limit: 64,
            sl: 0,
            subnet_local: false,
            local_ack_timeout: 14,
            private_data: vec![0u8; 92],
        }
    }

    #[test]
    fn req_offsets_match_the_notes() {
        let mad = CmMad {
            tid: 7,
            attr_mod: 0,
            msg: CmMessage::Req(sample_req()),
        };
        let b = mad.to_bytes().unwrap();
        assert_eq!(&b[..4], &[1, 7, 2, 3]);
        assert_eq!(&b[16..18], &[0, 0x10]);
        let d = &b[24..];
        assert_eq!(&d[8..16], &[0, 0, 0, 0, 0x01, 0x06, 0x4e, 0x21]);
        assert_eq!(&d[32..35], &[0, 0, 0x12]);
        assert_eq!(&d[44..47], &[0xab, 0xcd, 0xef]);
        assert_eq!(d[47], (20 << 3) | 7);
        assert_eq!(d[50], (3 << 4) | 7);
        assert_eq!(
            &d[56..72],
            &gid_from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)))
        );
        assert_eq!(CmMad::parse(&b).unwrap(), mad);
    }

    #[test]
    fn cma_header_round_trip_and_layout() {
        let h = CmaIpHeader {
            src_port: 40000,
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        };
        let mut p = [0xFFu8; 92];
        h.emit(&mut p).unwrap();
        assert_eq!(&p[..4], &[0, 0x40, 0x9c, 0x40]);
        assert_eq!(&p[16..20], &[10, 0, 0, 1]);
        assert_eq!(&p[32..36], &[10, 0, 0, 2]);
        assert_eq!(CmaIpHeader::parse(&p).unwrap(), h);
        let h6 = CmaIpHeader {
            src_port: 1,
            src: "fe80::1".parse().unwrap(),
            dst: "fe80::2".parse().unwrap(),
        };
        h6.emit(&mut p).unwrap();
        assert_eq!(CmaIpHeader::parse(&p).unwrap(), h6);
        assert!(CmaIpHeader::parse(&p[..35]).is_err());
    }

    #[test]
    fn bad_mads_are_errors() {
        let mut b = CmMad {
            tid: 1,
            attr_mod: 0,
            msg: CmMessage::Rtu(CmIds {
                local_comm_id: 1,
                remote_comm_id: 2,
                private_data: vec![],
            }),
        }
        .to_bytes()
        .unwrap();
        assert!(CmMad::parse(&b[..255]).is_err());
        b[17] = 0x99;
        assert_eq!(
            CmMad::parse(&b),
            Err(WireError::BadMad("unsupported CM attribute"))
        );
        b[1] = 0x01;
        assert!(CmMad::parse(&b).is_err());
    }

    fn any_msg() -> impl Strategy<Value = CmMessage> {
        let ids = (any::<u32>(), any::<u32>());
        prop_oneof![
            (
                ids,
                0u32..1 << 24,
                0u32..1 << 24,
                0u8..8,
                any::<bool>(),
                vec(any::<u8>(), 196)
            )
                .prop_map(|((l, r), qpn, psn, rnr, srq, p)| CmMessage::Rep(CmRep {
                    local_comm_id: l,
                    remote_comm_id: r,
                    local_qkey: l ^ r,
                    local_qpn: qpn,
                    local_eecn: 0,
                    starting_psn: psn,
                    responder_resources: 4,
                    initiator_depth: 4,
                    target_ack_delay: 3,
                    failover_accepted: 1,
                    e2e_flow_ctrl: true,
                    rnr_retry_count: rnr,
                    srq,
                    local_ca_guid: u64::from(l) << 8,
                    private_data: p
                })),
            (ids, 0u32..1 << 24, vec(any::<u8>(), 220)).prop_map(|((l, r), q, p)| CmMessage::Dreq(
                CmDreq {
                    local_comm_id: l,
                    remote_comm_id: r,
                    remote_qpn: q,
                    private_data: p
                }
            )),
            (ids, vec(any::<u8>(), 224)).prop_map(|((l, r), p)| CmMessage::Drep(CmIds {
                local_comm_id: l,
                remote_comm_id: r,
                private_data: p
            })),
            (ids, vec(any::<u8>(), 224)).prop_map(|((l, r), p)| CmMessage::Rtu(CmIds {
                local_comm_id: l,
                remote_comm_id: r,
                private_data: p
            })),
            (
                ids,
                0u8..3,
                0u8..128,
                any::<u16>(),
                vec(any::<u8>(), 72),
                vec(any::<u8>(), 148)
            )
                .prop_map(|((l, r), m, il, reason, ari, p)| CmMessage::Rej(CmRej {
                    local_comm_id: l,
                    remote_comm_id: r,
                    msg_rejected: m,
                    reject_info_len: il,
                    reason,
                    ari,
                    private_data: p
                })),
            (ids, 0u8..3, 0u8..32, vec(any::<u8>(), 222)).prop_map(|((l, r), m, t, p)| {
                CmMessage::Mra(CmMra {
                    local_comm_id: l,
                    remote_comm_id: r,
                    msg_mraed: m,
                    service_timeout: t,
                    private_data: p,
                })
            }),
            (
                any::<u32>(),
                0u32..1 << 24,
                0u32..1 << 24,
                0u8..8,
                0u8..32,
                vec(any::<u8>(), 92)
            )
                .prop_map(|(id, qpn, psn, rc, to, p)| {
                    let mut r = sample_req();
                    r.local_comm_id = id;
                    r.local_qpn = qpn;
                    r.starting_psn = psn;
                    r.retry_count = rc;
                    r.local_ack_timeout = to;
                    r.private_data = p;
                    CmMessage::Req(r)
                }),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(msg in any_msg(), tid: u64, am: u32) {
            let mad = CmMad { tid, attr_mod: am, msg };
            let b = mad.to_bytes().unwrap();
            prop_assert_eq!(CmMad::parse(&b).unwrap(), mad);
        }
    }
}

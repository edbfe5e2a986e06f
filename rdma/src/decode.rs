//! One human-readable line per RoCEv2 frame: addresses, opcode, QPN, PSN, AckReq,
//! extension-header fields, the CM message of QP1 MADs and the ICRC verdict. This is
//! what `pisa rdma decode FILE.pcap [--check]` prints.

use std::fmt;
use std::net::IpAddr;

use crate::wire::{CmMad, CmMessage, CmaIpHeader, RoceHeaders, RocePacketRepr, WireError};

/// A decoded frame; `Display` gives the one-line summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedFrame {
    /// IP source.
    pub src: IpAddr,
    /// IP destination.
    pub dst: IpAddr,
    /// UDP source port.
    pub udp_src_port: u16,
    /// IP ECN codepoint (3 = CE).
    pub ecn: u8,
    /// Transport headers.
    pub headers: RoceHeaders,
    /// Payload bytes (without pad).
    pub payload_len: usize,
    /// The CM message, for UD packets to QP1 that carry one.
    pub cm: Option<CmMad>,
    /// Why a QP1 payload did not decode as a CM MAD.
    pub cm_error: Option<WireError>,
    /// ICRC carried by the frame.
    pub icrc: u32,
    /// Whether the ICRC verified.
    pub icrc_ok: bool,
}

/// Decodes one Ethernet frame (without FCS).
pub fn decode_frame(bytes: &[u8]) -> Result<DecodedFrame, WireError> {
    let fr = RocePacketRepr::parse(bytes)?;
    let p = fr.packet;
    let (cm, cm_error) = if p.headers.deth.is_some() && p.headers.bth.dest_qp == 1 {
        match CmMad::parse(p.payload) {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        }
    } else {
        (None, None)
    };
    Ok(DecodedFrame {
        src: p.ip.src(),
        dst: p.ip.dst(),
        udp_src_port: p.udp_src_port,
        ecn: p.ip.ecn(),
        headers: p.headers,
        payload_len: p.payload.len(),
        cm,
        cm_error,
        icrc: fr.icrc,
        icrc_ok: fr.icrc_ok,
    })
}

/// Whether a frame is addressed to RoCEv2: Ethernet (with or without one 802.1Q tag), then
/// a well-formed IPv4 header (version 4, IHL >= 5, first fragment) or IPv6 header, then UDP to
/// port 4791. Such a frame that [`decode_frame`] refuses is malformed RoCEv2; any other frame
/// is other traffic, whatever is wrong with it.
pub fn is_roce_udp(bytes: &[u8]) -> bool {
    let be16 = |i: usize| {
        bytes
            .get(i..i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
    };
    let mut l3 = 14;
    let mut ethertype = be16(12);
    if ethertype == Some(0x8100) {
        ethertype = be16(16);
        l3 = 18;
    }
    let udp = match ethertype {
        Some(0x0800) => {
            let Some(&vihl) = bytes.get(l3) else {
                return false;
            };
            let ihl = usize::from(vihl & 0x0f) * 4;
            let frag_off = be16(l3 + 6).unwrap_or(0) & 0x1fff;
            if vihl >> 4 != 4 || ihl < 20 || bytes.get(l3 + 9) != Some(&17) || frag_off != 0 {
                return false;
            }
            l3 + ihl
        }
        Some(0x86dd) => {
            if bytes.get(l3).is_none_or(|v| v >> 4 != 6) || bytes.get(l3 + 6) != Some(&17) {
                return false;
            }
            l3 + 40
        }
        _ => return false,
    };
    be16(udp + 2) == Some(crate::wire::ROCE_UDP_PORT)
}

fn write_cm(f: &mut fmt::Formatter<'_>, mad: &CmMad) -> fmt::Result {
    write!(f, " cm={}[tid={:#x}", mad.msg.name(), mad.tid)?;
    match &mad.msg {
        CmMessage::Req(r) => {
            write!(
                f,
                " comm_id={:#x} svc={:#x} qpn={:#x} psn={:#x} mtu={} retry={} rnr_retry={}",
                r.local_comm_id,
                r.service_id,
                r.local_qpn,
                r.starting_psn,
                r.path_mtu,
                r.retry_count,
                r.rnr_retry_count
            )?;
            if let Ok(h) = CmaIpHeader::parse(&r.private_data) {
                write!(f, " ip={}:{}>{}", h.src, h.src_port, h.dst)?;
            }
        }
        CmMessage::Rep(r) => write!(
            f,
            " comm_id={:#x} remote={:#x} qpn={:#x} psn={:#x}",
            r.local_comm_id, r.remote_comm_id, r.local_qpn, r.starting_psn
        )?,
        CmMessage::Rej(r) => write!(
            f,
            " comm_id={:#x} remote={:#x} reason={}",
            r.local_comm_id, r.remote_comm_id, r.reason
        )?,
        CmMessage::Mra(r) => write!(
            f,
            " comm_id={:#x} remote={:#x}",
            r.local_comm_id, r.remote_comm_id
        )?,
        CmMessage::Rtu(r) | CmMessage::Drep(r) => write!(
            f,
            " comm_id={:#x} remote={:#x}",
            r.local_comm_id, r.remote_comm_id
        )?,
        CmMessage::Dreq(r) => write!(
            f,
            " comm_id={:#x} remote={:#x} qpn={:#x}",
            r.local_comm_id, r.remote_comm_id, r.remote_qpn
        )?,
    }
    f.write_str("]")
}

impl fmt::Display for DecodedFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let h = &self.headers;
        let b = &h.bth;
        write!(
            f,
            "{}:{} > {} {} qpn={:#x} psn={}",
            self.src, self.udp_src_port, self.dst, b.opcode, b.dest_qp, b.psn
        )?;
        if b.ack_req {
            f.write_str(" ackreq")?;
        }
        if b.solicited {
            f.write_str(" se")?;
        }
        if b.becn {
            f.write_str(" becn")?;
        }
        if b.fecn {
            f.write_str(" fecn")?;
        }
        if self.ecn == 3 {
            f.write_str(" ecn=CE")?;
        }
        if let Some(d) = h.deth {
            write!(f, " deth[qkey={:#x} src_qp={:#x}]", d.qkey, d.src_qp)?;
        }
        if let Some(r) = h.reth {
            write!(
                f,
                " reth[va={:#x} rkey={:#x} len={}]",
                r.va, r.rkey, r.dma_len
            )?;
        }
        if let Some(a) = h.atomic_eth {
            write!(
                f,
                " atomic[va={:#x} rkey={:#x} swap_add={:#x} compare={:#x}]",
                a.va, a.rkey, a.swap_add, a.compare
            )?;
        }
        if let Some(a) = h.aeth {
            write!(f, " aeth[{} msn={}]", a.syndrome, a.msn)?;
        }
        if let Some(a) = h.atomic_ack {
            write!(f, " orig={:#x}", a.orig)?;
        }
        if let Some(i) = h.imm {
            write!(f, " imm={i:#010x}")?;
        }
        if let Some(r) = h.ieth {
            write!(f, " inv_rkey={r:#x}")?;
        }
        if b.opcode.has_payload() {
            write!(f, " len={}", self.payload_len)?;
        }
        if let Some(m) = &self.cm {
            write_cm(f, m)?;
        }
        if let Some(e) = &self.cm_error {
            write!(f, " cm=malformed({e})")?;
        }
        write!(f, " icrc={}", if self.icrc_ok { "ok" } else { "BAD" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::icrc::tests::{unhex, VECTORS};

    #[test]
    fn lines_for_the_vectors() {
        let line = |i: usize| decode_frame(&unhex(VECTORS[i].1)).unwrap().to_string();
        assert_eq!(
            line(2),
            "10.0.0.1:49443 > 10.0.0.2 RC_RDMA_WRITE_ONLY qpn=0x12 psn=256 ackreq \
             reth[va=0x7f0000001000 rkey=0xabcdef01 len=16] len=16 icrc=ok"
        );
        assert_eq!(
            line(3),
            "10.0.0.2:50262 > 10.0.0.1 RC_ACKNOWLEDGE qpn=0x34 psn=256 \
             aeth[ACK credits=unlimited msn=1] icrc=ok"
        );
        assert!(line(4).contains("aeth[NAK psn-seq-error msn=1]"));
        assert!(line(0).starts_with("10.0.17.1:0 > 10.0.18.1 CNP qpn=0x118 psn=0 becn"));
        assert!(line(1).contains("UC_SEND_ONLY"));
    }

    #[test]
    fn bad_icrc_is_reported() {
        let mut f = unhex(VECTORS[3].1);
        f[14 + 28 + 12 + 3] ^= 1; // MSN
        let d = decode_frame(&f).unwrap();
        assert!(!d.icrc_ok);
        assert!(d.to_string().ends_with("icrc=BAD"));
    }

    #[test]
    fn roce_and_other_traffic_are_told_apart() {
        for (_, hex, _) in VECTORS {
            assert!(is_roce_udp(&unhex(hex)));
        }
        let mut f = unhex(VECTORS[2].1);
        f[14] = 0x44; // IHL 4: not a usable IPv4 header, so not RoCEv2
        assert!(!is_roce_udp(&f));
        let mut f = unhex(VECTORS[2].1);
        f[12] = 0x88; // another EtherType
        assert!(!is_roce_udp(&f));
        let f = unhex(VECTORS[2].1);
        assert!(
            !is_roce_udp(&f[..37]),
            "cut inside the UDP destination port"
        );
        assert!(
            is_roce_udp(&f[..60]),
            "cut after them: RoCEv2, to be called malformed"
        );
        assert!(decode_frame(&f[..60]).is_err());
    }

    #[test]
    fn non_roce_is_an_error() {
        assert!(decode_frame(&[0u8; 10]).is_err());
        assert!(decode_frame(&[0u8; 100]).is_err());
    }
}

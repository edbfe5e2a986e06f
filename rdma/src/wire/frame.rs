//! Whole RoCEv2 frames: Ethernet (optional 802.1Q tag) / IPv4 or IPv6 / UDP 4791 / BTH /
//! extension headers / payload / pad / ICRC. `locate` finds the layer offsets,
//! `RocePacketRepr::parse` decodes a frame and checks its ICRC, `emit` builds one with
//! the IPv4 header checksum set, UDP checksum 0 and a fresh ICRC.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use etherparse::{
    EtherType, Ethernet2HeaderSlice, IpDscp, IpEcn, IpFragOffset, IpNumber, Ipv4Header,
    Ipv4HeaderSlice, Ipv6FlowLabel, Ipv6Header, Ipv6HeaderSlice, SingleVlanHeaderSlice, UdpHeader,
    UdpHeaderSlice,
};

use super::{RoceHeaders, WireError};
use crate::icrc;

/// UDP destination port of RoCEv2.
pub const ROCE_UDP_PORT: u16 = 4791;
/// Minimum Ethernet frame length without FCS; shorter frames are zero-padded on emit.
pub const MIN_FRAME_LEN: usize = 60;
const ICRC_LEN: usize = 4;

/// Byte offsets of the layers of a RoCEv2 frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceOffsets {
    /// Start of the IP header.
    pub l3: usize,
    /// Start of the UDP header.
    pub l4: usize,
    /// Start of the BTH.
    pub bth: usize,
    /// Start of the ICRC (end of pad).
    pub icrc: usize,
}

fn framing<E: std::fmt::Display>(e: E) -> WireError {
    WireError::Framing(e.to_string())
}

/// Finds the IP, UDP, BTH and ICRC offsets of a RoCEv2 frame, validating the
/// Ethernet/IP/UDP framing (lengths, no fragments, UDP to port 4791).
pub fn locate(frame: &[u8]) -> Result<RoceOffsets, WireError> {
    let eth = Ethernet2HeaderSlice::from_slice(frame).map_err(framing)?;
    let mut l3 = eth.slice().len();
    let mut ether_type = eth.ether_type();
    if ether_type == EtherType::VLAN_TAGGED_FRAME {
        let vlan = SingleVlanHeaderSlice::from_slice(&frame[l3..]).map_err(framing)?;
        ether_type = vlan.ether_type();
        l3 += vlan.slice().len();
    }
    let (l4, l3_end) = match ether_type {
        EtherType::IPV4 => {
            let ip = Ipv4HeaderSlice::from_slice(&frame[l3..]).map_err(framing)?;
            if ip.is_fragmenting_payload() {
                return Err(WireError::Fragmented);
            }
            if ip.protocol() != IpNumber::UDP {
                return Err(WireError::NotUdp(ip.protocol().0));
            }
            (l3 + ip.slice().len(), l3 + usize::from(ip.total_len()))
        }
        EtherType::IPV6 => {
            let ip = Ipv6HeaderSlice::from_slice(&frame[l3..]).map_err(framing)?;
            if ip.next_header() != IpNumber::UDP {
                return Err(WireError::NotUdp(ip.next_header().0));
            }
            (l3 + 40, l3 + 40 + usize::from(ip.payload_length()))
        }
        _ => return Err(WireError::NotIp),
    };
    if l3_end < l4 {
        return Err(WireError::Framing(format!(
            "IP length {} is shorter than the IP header",
            l3_end - l3
        )));
    }
    if l3_end > frame.len() {
        return Err(WireError::Truncated {
            header: "IP packet",
            need: l3_end,
            have: frame.len(),
        });
    }
    let udp = UdpHeaderSlice::from_slice(&frame[l4..l3_end]).map_err(framing)?;
    if udp.destination_port() != ROCE_UDP_PORT {
        return Err(WireError::NotRoce(udp.destination_port()));
    }
    let udp_end = l4 + usize::from(udp.length());
    let bth = l4 + 8;
    if udp_end > l3_end || udp_end < bth + 12 + ICRC_LEN {
        return Err(WireError::Truncated {
            header: "UDP payload (BTH + ICRC)",
            need: bth + 12 + ICRC_LEN,
            have: udp_end.min(l3_end),
        });
    }
    Ok(RoceOffsets {
        l3,
        l4,
        bth,
        icrc: udp_end - ICRC_LEN,
    })
}

/// Ethernet layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EthRepr {
    /// Source MAC.
    pub src: [u8; 6],
    /// Destination MAC.
    pub dst: [u8; 6],
    /// 802.1Q tag control information (PCP, DEI, VID), if tagged.
    pub vlan_tci: Option<u16>,
}

/// IPv4 fields of a RoCEv2 packet (protocol is always UDP, never fragmented).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Fields {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// DSCP (6 bits).
    pub dscp: u8,
    /// ECN (2 bits; 3 = CE).
    pub ecn: u8,
    /// Time to live.
    pub ttl: u8,
    /// Identification (covered by the ICRC).
    pub identification: u16,
    /// Don't-fragment flag.
    pub dont_fragment: bool,
}

/// IPv6 fields of a RoCEv2 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Fields {
    /// Source address.
    pub src: Ipv6Addr,
    /// Destination address.
    pub dst: Ipv6Addr,
    /// Traffic class (DSCP << 2 | ECN).
    pub traffic_class: u8,
    /// Flow label (20 bits).
    pub flow_label: u32,
    /// Hop limit.
    pub hop_limit: u8,
}

/// The IP layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IpFields {
    /// IPv4.
    V4(Ipv4Fields),
    /// IPv6.
    V6(Ipv6Fields),
}

impl IpFields {
    /// Source address.
    pub fn src(&self) -> IpAddr {
        match self {
            IpFields::V4(f) => IpAddr::V4(f.src),
            IpFields::V6(f) => IpAddr::V6(f.src),
        }
    }
    /// Destination address.
    pub fn dst(&self) -> IpAddr {
        match self {
            IpFields::V4(f) => IpAddr::V4(f.dst),
            IpFields::V6(f) => IpAddr::V6(f.dst),
        }
    }
    /// ECN codepoint (3 = congestion experienced).
    pub fn ecn(&self) -> u8 {
        match self {
            IpFields::V4(f) => f.ecn,
            IpFields::V6(f) => f.traffic_class & 3,
        }
    }
    fn header_len(&self) -> usize {
        match self {
            IpFields::V4(_) => 20,
            IpFields::V6(_) => 40,
        }
    }
}

/// A whole RoCEv2 packet, borrowing its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RocePacketRepr<'a> {
    /// Ethernet layer.
    pub eth: EthRepr,
    /// IP layer.
    pub ip: IpFields,
    /// UDP source port (flow entropy).
    pub udp_src_port: u16,
    /// Transport headers.
    pub headers: RoceHeaders,
    /// Payload without pad.
    pub payload: &'a [u8],
}

/// A parsed frame: the packet plus what was learned about its ICRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoceFrame<'a> {
    /// The packet.
    pub packet: RocePacketRepr<'a>,
    /// ICRC carried by the frame.
    pub icrc: u32,
    /// Whether it matched the recomputed ICRC.
    pub icrc_ok: bool,
    /// Layer offsets.
    pub offsets: RoceOffsets,
}

fn pad_for(len: usize) -> usize {
    (4 - (len & 3)) & 3
}

impl<'a> RocePacketRepr<'a> {
    /// Parses a whole Ethernet frame (without FCS) and checks its ICRC. Trailing bytes
    /// after the IP packet (Ethernet padding) are ignored.
    pub fn parse(frame: &'a [u8]) -> Result<RoceFrame<'a>, WireError> {
        let off = locate(frame)?;
        let eth = Ethernet2HeaderSlice::from_slice(frame).map_err(framing)?;
        let vlan_tci = if off.l3 > 14 {
            Some(u16::from_be_bytes([frame[14], frame[15]]))
        } else {
            None
        };
        let ip = if frame[off.l3] >> 4 == 4 {
            let h = Ipv4HeaderSlice::from_slice(&frame[off.l3..]).map_err(framing)?;
            IpFields::V4(Ipv4Fields {
                src: h.source_addr(),
                dst: h.destination_addr(),
                dscp: h.dcp().value(),
                ecn: h.ecn().value(),
                ttl: h.ttl(),
                identification: h.identification(),
                dont_fragment: h.dont_fragment(),
            })
        } else {
            let h = Ipv6HeaderSlice::from_slice(&frame[off.l3..]).map_err(framing)?;
            IpFields::V6(Ipv6Fields {
                src: h.source_addr(),
                dst: h.destination_addr(),
                traffic_class: h.traffic_class(),
                flow_label: h.flow_label().value(),
                hop_limit: h.hop_limit(),
            })
        };
        let udp_src_port = u16::from_be_bytes([frame[off.l4], frame[off.l4 + 1]]);
        let body = &frame[off.bth..off.icrc];
        let (headers, hlen) = RoceHeaders::parse(body)?;
        let rest = &body[hlen..];
        let pad = usize::from(headers.bth.pad_count);
        let opcode = headers.bth.opcode;
        let payload = if opcode.has_payload() {
            if pad > rest.len() {
                return Err(WireError::BadPad {
                    pad: headers.bth.pad_count,
                    len: rest.len(),
                });
            }
            &rest[..rest.len() - pad]
        } else if !rest.is_empty() {
            return Err(WireError::UnexpectedPayload {
                opcode: opcode.value(),
                len: rest.len(),
            });
        } else {
            rest
        };
        let mut wire = [0u8; 4];
        wire.copy_from_slice(&frame[off.icrc..off.icrc + 4]);
        let got = icrc::from_wire(wire);
        let want = icrc::compute(&frame[off.l3..off.icrc])?;
        Ok(RoceFrame {
            packet: RocePacketRepr {
                eth: EthRepr {
                    src: eth.source(),
                    dst: eth.destination(),
                    vlan_tci,
                },
                ip,
                udp_src_port,
                headers,
                payload,
            },
            icrc: got,
            icrc_ok: got == want,
            offsets: off,
        })
    }

    fn udp_len(&self) -> usize {
        let pad = if self.headers.bth.opcode.has_payload() {
            pad_for(self.payload.len())
        } else {
            0
        };
        8 + self.headers.buffer_len() + self.payload.len() + pad + ICRC_LEN
    }

    /// Length of the emitted frame (at least 60 bytes).
    pub fn buffer_len(&self) -> usize {
        let eth = if self.eth.vlan_tci.is_some() { 18 } else { 14 };
        (eth + self.ip.header_len() + self.udp_len()).max(MIN_FRAME_LEN)
    }

    /// Writes the frame into the start of `buf` and returns its length. The BTH pad count
    /// is set from the payload length; IPv4 gets a valid header checksum; the UDP checksum
    /// is 0; the ICRC is computed last.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let total = self.buffer_len();
        if buf.len() < total {
            return Err(WireError::BufferTooSmall {
                need: total,
                have: buf.len(),
            });
        }
        let opcode = self.headers.bth.opcode;
        if !opcode.has_payload() && !self.payload.is_empty() {
            return Err(WireError::UnexpectedPayload {
                opcode: opcode.value(),
                len: self.payload.len(),
            });
        }
        let udp_len = self.udp_len();
        let ip_payload_len = u16::try_from(udp_len).map_err(|_| WireError::TooLong(udp_len))?;
        let buf = &mut buf[..total];
        buf.fill(0);
        // Ethernet.
        buf[0..6].copy_from_slice(&self.eth.dst);
        buf[6..12].copy_from_slice(&self.eth.src);
        let mut l3 = 12;
        if let Some(tci) = self.eth.vlan_tci {
            buf[12..14].copy_from_slice(&EtherType::VLAN_TAGGED_FRAME.0.to_be_bytes());
            buf[14..16].copy_from_slice(&tci.to_be_bytes());
            l3 = 16;
        }
        let ether_type = match self.ip {
            IpFields::V4(_) => EtherType::IPV4,
            IpFields::V6(_) => EtherType::IPV6,
        };
        buf[l3..l3 + 2].copy_from_slice(&ether_type.0.to_be_bytes());
        l3 += 2;
        // IP.
        let l4 = match self.ip {
            IpFields::V4(f) => {
                let mut h = Ipv4Header {
                    dscp: IpDscp::try_new(f.dscp).map_err(|_| WireError::FieldRange {
                        field: "IPv4.dscp",
                        value: f.dscp.into(),
                    })?,
                    ecn: IpEcn::try_new(f.ecn).map_err(|_| WireError::FieldRange {
                        field: "IPv4.ecn",
                        value: f.ecn.into(),
                    })?,
                    total_len: 0,
                    identification: f.identification,
                    dont_fragment: f.dont_fragment,
                    more_fragments: false,
                    fragment_offset: IpFragOffset::ZERO,
                    time_to_live: f.ttl,
                    protocol: IpNumber::UDP,
                    header_checksum: 0,
                    source: f.src.octets(),
                    destination: f.dst.octets(),
                    options: Default::default(),
                };
                h.set_payload_len(udp_len)
                    .map_err(|_| WireError::TooLong(udp_len))?;
                h.header_checksum = h.calc_header_checksum();
                let bytes = h.to_bytes();
                buf[l3..l3 + bytes.len()].copy_from_slice(&bytes);
                l3 + bytes.len()
            }
            IpFields::V6(f) => {
                let h = Ipv6Header {
                    traffic_class: f.traffic_class,
                    flow_label: Ipv6FlowLabel::try_new(f.flow_label).map_err(|_| {
                        WireError::FieldRange {
                            field: "IPv6.flow_label",
                            value: f.flow_label.into(),
                        }
                    })?,
                    payload_length: ip_payload_len,
                    next_header: IpNumber::UDP,
                    hop_limit: f.hop_limit,
                    source: f.src.octets(),
                    destination: f.dst.octets(),
                };
                let bytes = h.to_bytes();
                buf[l3..l3 + bytes.len()].copy_from_slice(&bytes);
                l3 + bytes.len()
            }
        };
        // UDP, checksum 0.
        let udp = UdpHeader {
            source_port: self.udp_src_port,
            destination_port: ROCE_UDP_PORT,
            length: ip_payload_len,
            checksum: 0,
        };
        buf[l4..l4 + 8].copy_from_slice(&udp.to_bytes());
        // Transport headers with the pad count set.
        let bth = l4 + 8;
        let mut headers = self.headers;
        headers.bth.pad_count = if opcode.has_payload() {
            pad_for(self.payload.len()) as u8
        } else {
            0
        };
        headers.emit(&mut buf[bth..])?;
        let data = bth + headers.buffer_len();
        buf[data..data + self.payload.len()].copy_from_slice(self.payload);
        let icrc_at = l4 + udp_len - ICRC_LEN;
        let crc = icrc::compute(&buf[l3..icrc_at])?;
        buf[icrc_at..icrc_at + 4].copy_from_slice(&icrc::to_wire(crc));
        Ok(total)
    }

    /// Emits into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut v = vec![0u8; self.buffer_len()];
        let n = self.emit(&mut v)?;
        v.truncate(n);
        Ok(v)
    }
}

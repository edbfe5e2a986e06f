//! The device layer of the endpoint: its MAC and IP addresses, ARP (answering requests
//! for our IPv4 address, resolving peers, a static neighbour table for IPv6), and the
//! building of whole RoCEv2 frames (we choose the IPv4 Identification, so the ICRC we
//! compute is the one on the wire).

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::wire::{
    EthRepr, IpFields, Ipv4Fields, Ipv6Fields, RoceHeaders, RocePacketRepr, WireError,
};

use super::Instant;

const ETHERTYPE_ARP: u16 = 0x0806;
const BROADCAST: [u8; 6] = [0xFF; 6];
/// Frames held per unresolved neighbour.
const PENDING_PER_NEIGHBOUR: usize = 64;
/// Minimum spacing of ARP requests for one address.
const ARP_RETRY_NS: u64 = 1_000_000;

/// Addresses and IP-level settings of the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceConfig {
    /// Our MAC address.
    pub mac: [u8; 6],
    /// Our IPv4 address.
    pub ipv4: Ipv4Addr,
    /// Our IPv6 address, if any (neighbours must then be static).
    pub ipv6: Option<Ipv6Addr>,
    /// DSCP of RoCE traffic.
    pub dscp: u8,
    /// DSCP of CNPs (ConnectX default 48).
    pub cnp_dscp: u8,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
}

impl DeviceConfig {
    /// A device with DSCP 26 for data, 48 for CNPs, TTL 64.
    pub fn new(mac: [u8; 6], ipv4: Ipv4Addr) -> DeviceConfig {
        DeviceConfig {
            mac,
            ipv4,
            ipv6: None,
            dscp: 26,
            cnp_dscp: 48,
            ttl: 64,
        }
    }
}

/// The device: addresses, neighbours and frame construction.
#[derive(Debug)]
pub(crate) struct Device {
    pub(crate) cfg: DeviceConfig,
    neighbours: BTreeMap<IpAddr, [u8; 6]>,
    pending: BTreeMap<IpAddr, VecDeque<PendingFrame>>,
    arp_sent: BTreeMap<Ipv4Addr, Instant>,
    ip_id: u16,
    pub(crate) dropped_unresolved: u64,
}

/// A frame waiting for its destination MAC.
#[derive(Debug)]
pub(crate) struct PendingFrame {
    bytes: Vec<u8>,
}

/// What an incoming ARP frame produced.
pub(crate) enum ArpOutcome {
    /// Not ARP.
    NotArp,
    /// Handled; frames to transmit (a reply and/or released pending frames).
    Handled(Vec<Vec<u8>>),
}

impl Device {
    pub(crate) fn new(cfg: DeviceConfig) -> Device {
        Device {
            cfg,
            neighbours: BTreeMap::new(),
            pending: BTreeMap::new(),
            arp_sent: BTreeMap::new(),
            ip_id: 0x1000,
            dropped_unresolved: 0,
        }
    }

    pub(crate) fn add_neighbour(&mut self, ip: IpAddr, mac: [u8; 6]) -> Vec<Vec<u8>> {
        self.neighbours.insert(ip, mac);
        self.release(ip, mac)
    }

    pub(crate) fn is_local(&self, ip: IpAddr) -> bool {
        match ip {
            IpAddr::V4(a) => a == self.cfg.ipv4,
            IpAddr::V6(a) => Some(a) == self.cfg.ipv6,
        }
    }

    pub(crate) fn local_ip_for(&self, peer: IpAddr) -> Option<IpAddr> {
        match peer {
            IpAddr::V4(_) => Some(IpAddr::V4(self.cfg.ipv4)),
            IpAddr::V6(_) => self.cfg.ipv6.map(IpAddr::V6),
        }
    }

    fn release(&mut self, ip: IpAddr, mac: [u8; 6]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if let Some(q) = self.pending.remove(&ip) {
            for mut f in q {
                f.bytes[0..6].copy_from_slice(&mac);
                out.push(f.bytes);
            }
        }
        out
    }

    /// Builds a RoCEv2 frame to `dst`. Returns the frame, or `None` when the MAC is
    /// unknown: the frame is then parked and `arp` receives an ARP request to send.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        &mut self,
        now: Instant,
        dst: IpAddr,
        udp_src_port: u16,
        headers: &RoceHeaders,
        payload: &[u8],
        cnp: bool,
        arp: &mut Vec<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>, WireError> {
        let dscp = if cnp {
            self.cfg.cnp_dscp
        } else {
            self.cfg.dscp
        };
        let ip = match dst {
            IpAddr::V4(d) => {
                self.ip_id = self.ip_id.wrapping_add(1);
                IpFields::V4(Ipv4Fields {
                    src: self.cfg.ipv4,
                    dst: d,
                    dscp,
                    ecn: 2,
                    ttl: self.cfg.ttl,
                    identification: self.ip_id,
                    dont_fragment: true,
                })
            }
            IpAddr::V6(d) => IpFields::V6(Ipv6Fields {
                src: self.cfg.ipv6.unwrap_or(Ipv6Addr::UNSPECIFIED),
                dst: d,
                traffic_class: (dscp << 2) | 2,
                flow_label: 0,
                hop_limit: self.cfg.ttl,
            }),
        };
        let mac = self.neighbours.get(&dst).copied();
        let repr = RocePacketRepr {
            eth: EthRepr {
                src: self.cfg.mac,
                dst: mac.unwrap_or([0; 6]),
                vlan_tci: None,
            },
            ip,
            udp_src_port,
            headers: *headers,
            payload,
        };
        let bytes = repr.to_vec()?;
        if mac.is_some() {
            return Ok(Some(bytes));
        }
        let q = self.pending.entry(dst).or_default();
        if q.len() >= PENDING_PER_NEIGHBOUR {
            q.pop_front();
            self.dropped_unresolved += 1;
        }
        q.push_back(PendingFrame { bytes });
        if let IpAddr::V4(d) = dst {
            let due = self
                .arp_sent
                .get(&d)
                .is_none_or(|t| now.as_nanos() >= t.as_nanos().saturating_add(ARP_RETRY_NS));
            if due {
                self.arp_sent.insert(d, now);
                arp.push(self.arp_frame(1, BROADCAST, [0; 6], d));
            }
        }
        Ok(None)
    }

    fn arp_frame(&self, op: u16, eth_dst: [u8; 6], tha: [u8; 6], tpa: Ipv4Addr) -> Vec<u8> {
        let mut f = Vec::with_capacity(60);
        f.extend_from_slice(&eth_dst);
        f.extend_from_slice(&self.cfg.mac);
        f.extend_from_slice(&ETHERTYPE_ARP.to_be_bytes());
        f.extend_from_slice(&[0, 1, 0x08, 0x00, 6, 4]);
        f.extend_from_slice(&op.to_be_bytes());
        f.extend_from_slice(&self.cfg.mac);
        f.extend_from_slice(&self.cfg.ipv4.octets());
        f.extend_from_slice(&tha);
        f.extend_from_slice(&tpa.octets());
        f.resize(60, 0);
        f
    }

    /// Handles an ARP frame: learns the sender, answers requests for our address and
    /// releases frames that waited for the sender's MAC.
    pub(crate) fn handle_arp(&mut self, frame: &[u8]) -> ArpOutcome {
        if frame.len() < 14 || u16::from_be_bytes([frame[12], frame[13]]) != ETHERTYPE_ARP {
            return ArpOutcome::NotArp;
        }
        let Ok(arp) = etherparse::ArpPacket::from_slice(&frame[14..]) else {
            return ArpOutcome::Handled(Vec::new());
        };
        let Ok(arp) = arp.try_eth_ipv4() else {
            return ArpOutcome::Handled(Vec::new());
        };
        let mut out = Vec::new();
        let sender_ip = IpAddr::V4(arp.sender_ipv4_addr());
        let for_us = arp.target_ipv4_addr() == self.cfg.ipv4;
        if for_us
            || self.neighbours.contains_key(&sender_ip)
            || self.pending.contains_key(&sender_ip)
        {
            self.neighbours.insert(sender_ip, arp.sender_mac);
            out.extend(self.release(sender_ip, arp.sender_mac));
        }
        if for_us && arp.operation == etherparse::ArpOperation::REQUEST {
            out.push(self.arp_frame(2, arp.sender_mac, arp.sender_mac, arp.sender_ipv4_addr()));
        }
        ArpOutcome::Handled(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{BthRepr, Opcode};

    fn dev(last: u8) -> Device {
        Device::new(DeviceConfig::new(
            [2, 0, 0, 0, 0, last],
            Ipv4Addr::new(10, 0, 0, last),
        ))
    }

    #[test]
    fn unresolved_frames_wait_for_arp_then_flow() {
        let mut a = dev(1);
        let mut b = dev(2);
        let mut arp = Vec::new();
        let h = RoceHeaders::new(BthRepr::new(Opcode::RC_SEND_ONLY, 5, 0));
        let peer = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let r = a
            .build(Instant::ZERO, peer, 0xC000, &h, b"hi", false, &mut arp)
            .unwrap();
        assert!(r.is_none());
        assert_eq!(arp.len(), 1);
        // b answers the request and learns a.
        let ArpOutcome::Handled(reply) = b.handle_arp(&arp[0]) else {
            panic!("not arp")
        };
        assert_eq!(reply.len(), 1);
        let ArpOutcome::Handled(released) = a.handle_arp(&reply[0]) else {
            panic!("not arp")
        };
        assert_eq!(released.len(), 1);
        assert_eq!(&released[0][0..6], &[2, 0, 0, 0, 0, 2]);
        let f = crate::wire::RocePacketRepr::parse(&released[0]).unwrap();
        assert!(f.icrc_ok);
        assert_eq!(f.packet.payload, b"hi");
        // Now resolved: frames go out directly.
        let r = a
            .build(Instant::ZERO, peer, 0xC000, &h, b"x", false, &mut arp)
            .unwrap();
        assert!(r.is_some());
    }

    #[test]
    fn arp_for_someone_else_is_ignored() {
        let mut a = dev(1);
        let mut c = dev(3);
        let mut arp = Vec::new();
        let h = RoceHeaders::new(BthRepr::new(Opcode::RC_SEND_ONLY, 5, 0));
        a.build(
            Instant::ZERO,
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            1,
            &h,
            b"",
            false,
            &mut arp,
        )
        .unwrap();
        let ArpOutcome::Handled(out) = c.handle_arp(&arp[0]) else {
            panic!("not arp")
        };
        assert!(out.is_empty());
        assert!(matches!(c.handle_arp(&[0u8; 10]), ArpOutcome::NotArp));
    }
}

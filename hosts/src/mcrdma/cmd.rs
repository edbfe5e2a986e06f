//! MC-RDMA's Connection Management Daemon, host side (§IV-A): the QP steps of a multicast
//! connection on unmodified RC QPs. The sender's CMD allocates MC_ID (the sender QP's virtual
//! destination QPN) and picks one initial PSN; every receiver's CMD connects a receiver QP to
//! the sender's QP with that PSN and offers its registered memory; the sender's QP is finally
//! connected to <DST_1, MC_ID> with the same PSN. The switches are configured between the two
//! steps (`control::mcrdma`); the messages between CMDs travel out of band (TCP in the paper,
//! the lab's own calls here).

use std::net::{IpAddr, Ipv4Addr};

use rdma::verbs::{AccessFlags, Endpoint, Mtu, QpAttr, QpState, VerbsError};

/// Virtual QPNs (MC_IDs) start here; pisa's endpoint numbers real QPs upwards from 0x11, so a
/// host with fewer than 8 million QPs never has a real QP with an MC_ID's number.
pub const MC_ID_BASE: u32 = 0x80_0000;

/// The sender CMD's MC_IDs.
#[derive(Debug, Clone)]
pub struct McIdAllocator {
    next: u32,
}

impl Default for McIdAllocator {
    fn default() -> Self {
        McIdAllocator { next: MC_ID_BASE }
    }
}

impl McIdAllocator {
    /// The next free MC_ID, or None once the 24-bit QPN space above [`MC_ID_BASE`] is used up.
    pub fn allocate(&mut self) -> Option<u32> {
        (self.next <= 0xFF_FFFF).then(|| {
            self.next += 1;
            self.next - 1
        })
    }
}

/// A receiver CMD's answer to the sender's CMD: its QP and the memory the sender writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiverOffer {
    pub ip: Ipv4Addr,
    pub qpn: u32,
    pub va: u64,
    pub rkey: u32,
    pub len: u64,
}

/// The handshake response the sender's QP is configured with: <DST_1, MC_ID, PSN>.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandshakeReply {
    pub dst1: Ipv4Addr,
    pub mc_id: u32,
    pub psn: u32,
}

/// RC settings of every QP these steps connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RcSettings {
    pub mtu: Mtu,
    /// Local ACK timeout exponent (4.096 µs · 2^timeout).
    pub timeout: u8,
    pub retry_cnt: u8,
}

impl Default for RcSettings {
    fn default() -> Self {
        RcSettings {
            mtu: Mtu::M4096,
            timeout: 8,
            retry_cnt: 7,
        }
    }
}

/// INIT → RTR → RTS of RC QP `qpn` towards `(peer, peer_qpn)`; it sends from `psn` and expects
/// `psn` from the peer.
pub fn connect_rc(
    ep: &mut Endpoint,
    qpn: u32,
    peer: Ipv4Addr,
    peer_qpn: u32,
    psn: u32,
    rc: RcSettings,
) -> Result<(), VerbsError> {
    let steps = [
        QpAttr {
            state: Some(QpState::Init),
            access: Some(AccessFlags::REMOTE_WRITE),
            ..Default::default()
        },
        QpAttr {
            state: Some(QpState::Rtr),
            path_mtu: Some(rc.mtu),
            dest_qp_num: Some(peer_qpn),
            remote_ip: Some(IpAddr::V4(peer)),
            rq_psn: Some(psn),
            ..Default::default()
        },
        QpAttr {
            state: Some(QpState::Rts),
            sq_psn: Some(psn),
            timeout: Some(rc.timeout),
            retry_cnt: Some(rc.retry_cnt),
            rnr_retry: Some(7),
            ..Default::default()
        },
    ];
    for s in &steps {
        ep.modify_qp(qpn, s)?;
    }
    Ok(())
}

/// A receiver's CMD: connects receiver QP `qpn` to the sender's QP with the group's PSN
/// (the QP is a plain RC QP; nothing about it knows the group).
pub fn accept(
    ep: &mut Endpoint,
    qpn: u32,
    sender: Ipv4Addr,
    sender_qpn: u32,
    psn: u32,
    rc: RcSettings,
) -> Result<(), VerbsError> {
    connect_rc(ep, qpn, sender, sender_qpn, psn, rc)
}

/// The sender's CMD, last step: the sender QP gets the handshake response as its peer.
pub fn connect_sender(
    ep: &mut Endpoint,
    qpn: u32,
    reply: &HandshakeReply,
    rc: RcSettings,
) -> Result<(), VerbsError> {
    connect_rc(ep, qpn, reply.dst1, reply.mc_id, reply.psn, rc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rdma::verbs::{EndpointConfig, PdHandle, QpType};

    #[test]
    fn mc_ids_are_virtual_qpns_above_the_real_ones_until_the_space_ends() {
        let mut a = McIdAllocator::default();
        assert_eq!(a.allocate(), Some(MC_ID_BASE));
        assert_eq!(a.allocate(), Some(MC_ID_BASE + 1));
        let mut n = 2u32;
        while a.allocate().is_some() {
            n += 1;
        }
        assert_eq!(n, 0x100_0000 - MC_ID_BASE);
        assert_eq!(a.allocate(), None);
    }

    fn endpoint(i: u8) -> (Endpoint, PdHandle, u32) {
        let mut ep = Endpoint::new(EndpointConfig::new(
            [2, 0, 0, 0, 0, i],
            Ipv4Addr::new(10, 0, 0, i),
        ));
        let pd = ep.alloc_pd();
        let cq = ep.create_cq(16);
        let qp = ep
            .create_qp(rdma::verbs::QpInitAttr {
                pd,
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr: 8,
                max_recv_wr: 8,
            })
            .unwrap();
        (ep, pd, qp)
    }

    /// The sender's QP is connected to <DST_1, MC_ID> and the receiver's to the sender's QP, both
    /// at the one PSN: the sender's first packet is addressed to DST_1's IP with QPN MC_ID.
    #[test]
    fn the_sender_addresses_dst1_with_the_mc_id_at_the_group_psn() {
        let (mut s, pd, sq) = endpoint(1);
        let (mut r, _, rq) = endpoint(2);
        let reply = HandshakeReply {
            dst1: Ipv4Addr::new(10, 0, 0, 2),
            mc_id: MC_ID_BASE,
            psn: 0xABCDE,
        };
        accept(
            &mut r,
            rq,
            Ipv4Addr::new(10, 0, 0, 1),
            sq,
            reply.psn,
            RcSettings::default(),
        )
        .unwrap();
        connect_sender(&mut s, sq, &reply, RcSettings::default()).unwrap();
        s.add_neighbour(std::net::IpAddr::V4(reply.dst1), [2, 0, 0, 0, 0, 2]);
        let mr = s.reg_mr(pd, 64, AccessFlags::ALL).unwrap();
        let sge = rdma::verbs::Sge {
            addr: mr.addr,
            length: 8,
            lkey: mr.lkey,
        };
        let wr = rdma::verbs::SendWr::new(
            1,
            rdma::verbs::SendOp::Write {
                remote_addr: 0x1000,
                rkey: 0,
            },
            sge,
        );
        s.post_send(sq, wr).unwrap();
        let frame = s
            .poll_transmit(rdma::verbs::Instant::from_nanos(0))
            .expect("the WRITE leaves");
        let p = rdma::wire::RocePacketRepr::parse(&frame).unwrap().packet;
        assert_eq!(p.ip.dst(), std::net::IpAddr::V4(reply.dst1));
        assert_eq!(p.headers.bth.dest_qp, MC_ID_BASE);
        assert_eq!(p.headers.bth.psn, reply.psn);
    }
}

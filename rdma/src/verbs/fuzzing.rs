//! Drives a connected pair of endpoints with arbitrary bytes, for the
//! `rdma_endpoint` fuzz target and its in-crate smoke test: raw frames, frames with
//! valid Ethernet/IP/UDP framing and ICRC around fuzzed transport headers, time jumps
//! and frame exchange. Nothing here may panic.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use super::{
    AccessFlags, Endpoint, EndpointConfig, Instant, Mtu, QpAttr, QpInitAttr, QpState, QpType,
    RecvWr, SendOp, SendWr, Sge,
};
use crate::icrc;

const MAC_A: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [2, 0, 0, 0, 0, 2];

struct Harness {
    a: Endpoint,
    b: Endpoint,
    now: Instant,
    rc_b: u32,
    ud_b: u32,
}

fn qp(ep: &mut Endpoint, t: QpType) -> Option<(u32, Sge)> {
    let pd = ep.alloc_pd();
    let cq = ep.create_cq(256);
    let mr = ep.reg_mr(pd, 1 << 14, AccessFlags::ALL).ok()?;
    let attr = QpInitAttr {
        pd,
        qp_type: t,
        send_cq: cq,
        recv_cq: cq,
        max_send_wr: 64,
        max_recv_wr: 64,
    };
    let qpn = ep.create_qp(attr).ok()?;
    Some((
        qpn,
        Sge {
            addr: mr.addr,
            length: 4096,
            lkey: mr.lkey,
        },
    ))
}

fn setup() -> Option<Harness> {
    let ip_a = Ipv4Addr::new(10, 0, 0, 1);
    let ip_b = Ipv4Addr::new(10, 0, 0, 2);
    let mut a = Endpoint::new(EndpointConfig::new(MAC_A, ip_a));
    let mut b = Endpoint::new(EndpointConfig::new(MAC_B, ip_b));
    a.add_neighbour(IpAddr::V4(ip_b), MAC_B);
    b.add_neighbour(IpAddr::V4(ip_a), MAC_A);
    let (qa, sa) = qp(&mut a, QpType::Rc)?;
    let (qb, sb) = qp(&mut b, QpType::Rc)?;
    for (ep, me, peer, ip) in [(&mut a, qa, qb, ip_b), (&mut b, qb, qa, ip_a)] {
        let access =
            AccessFlags::REMOTE_READ | AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_ATOMIC;
        let steps = [
            QpAttr {
                state: Some(QpState::Init),
                access: Some(access),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rtr),
                path_mtu: Some(Mtu::M256),
                dest_qp_num: Some(peer),
                remote_ip: Some(IpAddr::V4(ip)),
                rq_psn: Some(100),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rts),
                sq_psn: Some(100),
                timeout: Some(8),
                retry_cnt: Some(3),
                rnr_retry: Some(3),
                ..Default::default()
            },
        ];
        for s in &steps {
            ep.modify_qp(me, s).ok()?;
        }
    }
    let (ud, sud) = qp(&mut b, QpType::Ud)?;
    for st in [QpState::Init, QpState::Rtr, QpState::Rts] {
        b.modify_qp(
            ud,
            &QpAttr {
                state: Some(st),
                qkey: Some(0x1234),
                ..Default::default()
            },
        )
        .ok()?;
    }
    for i in 0..4 {
        b.post_recv(
            qb,
            RecvWr {
                wr_id: i,
                sg_list: vec![sb],
            },
        )
        .ok()?;
        b.post_recv(
            ud,
            RecvWr {
                wr_id: i,
                sg_list: vec![sud],
            },
        )
        .ok()?;
    }
    a.post_send(qa, SendWr::new(1, SendOp::Send, Sge { length: 700, ..sa }))
        .ok()?;
    a.post_send(
        qa,
        SendWr::new(
            2,
            SendOp::Read {
                remote_addr: sb.addr,
                rkey: sb.lkey,
            },
            sa,
        ),
    )
    .ok()?;
    Some(Harness {
        a,
        b,
        now: Instant::from_nanos(1_000),
        rc_b: qb,
        ud_b: ud,
    })
}

fn framed(h: &Harness, body: &[u8], selector: u8) -> Vec<u8> {
    let mut f = Vec::with_capacity(42 + body.len() + 4);
    f.extend_from_slice(&MAC_B);
    f.extend_from_slice(&MAC_A);
    f.extend_from_slice(&[0x08, 0x00]);
    let ip_len = (20 + 8 + body.len() + 4).min(0xFFFF) as u16;
    f.extend_from_slice(&[0x45, if selector & 1 == 1 { 3 } else { 2 }]);
    f.extend_from_slice(&ip_len.to_be_bytes());
    f.extend_from_slice(&[0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
    f.extend_from_slice(&[0xC0, 0x00, 0x12, 0xB7]);
    f.extend_from_slice(&(ip_len - 20).to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    let at = f.len();
    f.extend_from_slice(body);
    // Aim the BTH at one of B's QPs most of the time.
    if body.len() >= 8 {
        let qpn = match selector >> 1 & 3 {
            0 => h.rc_b,
            1 => h.ud_b,
            2 => 1,
            _ => u32::from_be_bytes([0, body[5], body[6], body[7]]),
        };
        f[at + 5..at + 8].copy_from_slice(&qpn.to_be_bytes()[1..]);
    }
    f.extend_from_slice(&[0; 4]);
    let _ = icrc::update_frame(&mut f);
    f
}

fn pump(h: &mut Harness, rounds: usize) {
    for _ in 0..rounds {
        let mut moved = false;
        for _ in 0..64 {
            match h.a.poll_transmit(h.now) {
                Some(f) => {
                    h.b.handle_frame(h.now, &f);
                    moved = true;
                }
                None => break,
            }
        }
        for _ in 0..64 {
            match h.b.poll_transmit(h.now) {
                Some(f) => {
                    h.a.handle_frame(h.now, &f);
                    moved = true;
                }
                None => break,
            }
        }
        if !moved {
            break;
        }
    }
}

/// Feeds `data` to a freshly connected pair of endpoints.
pub fn fuzz_endpoint(data: &[u8]) {
    let Some(mut h) = setup() else { return };
    let mut rest = data;
    while rest.len() >= 3 {
        let kind = rest[0];
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]])) % 2048;
        rest = &rest[3..];
        let n = len.min(rest.len());
        let chunk = &rest[..n];
        rest = &rest[n..];
        match kind & 3 {
            0 => h.b.handle_frame(h.now, chunk),
            1 => {
                let f = framed(&h, chunk, kind >> 2);
                h.b.handle_frame(h.now, &f);
            }
            2 => {
                let step = chunk.iter().fold(0u64, |acc, &x| {
                    acc.wrapping_mul(7).wrapping_add(u64::from(x))
                });
                h.now = h.now + Duration::from_nanos(step % 2_000_000_000);
                h.a.handle_timeout(h.now);
                h.b.handle_timeout(h.now);
            }
            _ => pump(&mut h, 4),
        }
        let _ = h.b.poll_timeout();
    }
    pump(&mut h, 8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn harness_connects_and_exchanges() {
        let mut h = setup().unwrap();
        pump(&mut h, 16);
        assert!(h.b.stats().rx_frames > 0);
        assert_eq!(h.b.stats().rx_icrc_errors, 0);
    }

    proptest! {
        #[test]
        fn random_input_never_panics(data in proptest::collection::vec(any::<u8>(), 0..1500)) {
            fuzz_endpoint(&data);
        }

        #[test]
        fn crafted_headers_never_panic(chunks in proptest::collection::vec(
            (any::<u8>(), proptest::collection::vec(any::<u8>(), 0..300)), 1..12)) {
            let mut data = Vec::new();
            for (sel, body) in chunks {
                data.push((sel & !3) | 1);
                data.extend_from_slice(&(body.len() as u16).to_be_bytes());
                data.extend_from_slice(&body);
                data.extend_from_slice(&[3, 0, 0]);
            }
            fuzz_endpoint(&data);
        }
    }
}

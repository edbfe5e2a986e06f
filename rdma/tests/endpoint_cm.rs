//! RDMA CM over QP1 between two endpoints (ARP-resolved, simulated link): connect,
//! accept, data, disconnect; reject; no listener; unreachable peer; lossy handshake.
//! Also UD queue pairs.

mod sim;

use std::net::IpAddr;
use std::time::Duration;

use rdma::verbs::*;
use sim::*;

fn events(ep: &mut Endpoint) -> Vec<CmEvent> {
    std::iter::from_fn(|| ep.poll_cm_event()).collect()
}

/// Runs a full connect; returns (client side, server side, client conn, server conn).
fn establish(p: &mut Pair) -> (Side, Side, ConnId, ConnId) {
    let c = setup_side(&mut p.ep[0], 1 << 16, QpType::Rc);
    let s = setup_side(&mut p.ep[1], 1 << 16, QpType::Rc);
    p.ep[1].listen(20001).unwrap();
    let now = p.now;
    let cc = p.ep[0]
        .connect(now, c.qpn, IpAddr::V4(ip(2)), 20001, b"hello server")
        .unwrap();
    let mut req = None;
    assert!(p.run_until(Duration::from_secs(30), |p| {
        if let Some(CmEvent::ConnectRequest {
            conn,
            peer,
            port,
            private_data,
            ..
        }) = p.ep[1].poll_cm_event()
        {
            assert_eq!(peer, IpAddr::V4(ip(1)));
            assert_eq!(port, 20001);
            assert_eq!(&private_data[..12], b"hello server");
            req = Some(conn);
        }
        req.is_some()
    }));
    let sc = req.unwrap();
    let now = p.now;
    p.ep[1].accept(now, sc, s.qpn, b"welcome").unwrap();
    let (mut c_up, mut s_up) = (false, false);
    assert!(p.run_until(Duration::from_secs(30), |p| {
        for e in events(&mut p.ep[0]) {
            match e {
                CmEvent::Established {
                    conn,
                    qpn,
                    private_data,
                } => {
                    assert_eq!((conn, qpn), (cc, c.qpn));
                    assert_eq!(&private_data[..7], b"welcome");
                    c_up = true;
                }
                other => panic!("client: {other:?}"),
            }
        }
        for e in events(&mut p.ep[1]) {
            match e {
                CmEvent::Established { conn, qpn, .. } => {
                    assert_eq!((conn, qpn), (sc, s.qpn));
                    s_up = true;
                }
                other => panic!("server: {other:?}"),
            }
        }
        c_up && s_up
    }));
    (c, s, cc, sc)
}

fn exchange(p: &mut Pair, c: &Side, s: &Side) {
    p.ep[1]
        .post_recv(
            s.qpn,
            RecvWr {
                wr_id: 5,
                sg_list: vec![sge(&s.mr, 0, 4096)],
            },
        )
        .unwrap();
    p.ep[0].mr_bytes_mut(c.mr.lkey).unwrap()[..5000].fill(0x5A);
    p.ep[0]
        .post_send(c.qpn, SendWr::new(1, SendOp::Send, sge(&c.mr, 0, 3000)))
        .unwrap();
    p.ep[1]
        .post_recv(
            s.qpn,
            RecvWr {
                wr_id: 6,
                sg_list: vec![sge(&s.mr, 8192, 4096)],
            },
        )
        .unwrap();
    p.ep[1].mr_bytes_mut(s.mr.lkey).unwrap()[20000..20010].fill(0xA5);
    p.ep[0]
        .post_recv(
            c.qpn,
            RecvWr {
                wr_id: 7,
                sg_list: vec![sge(&c.mr, 8192, 64)],
            },
        )
        .unwrap();
    p.ep[1]
        .post_send(s.qpn, SendWr::new(2, SendOp::Send, sge(&s.mr, 20000, 10)))
        .unwrap();
    let (mut got_c, mut got_s) = (Vec::new(), Vec::new());
    assert!(p.run_until(Duration::from_secs(30), |p| {
        got_c.extend(p.ep[0].poll_cq(c.cq, 16).unwrap());
        got_s.extend(p.ep[1].poll_cq(s.cq, 16).unwrap());
        got_c.len() == 2 && got_s.len() == 2
    }));
    assert!(got_c
        .iter()
        .chain(&got_s)
        .all(|w| w.status == WcStatus::Success));
    assert!(p.ep[1].mr_bytes(s.mr.lkey).unwrap()[..3000]
        .iter()
        .all(|&x| x == 0x5A));
    assert!(p.ep[0].mr_bytes(c.mr.lkey).unwrap()[8192..8202]
        .iter()
        .all(|&x| x == 0xA5));
}

#[test]
fn connect_accept_exchange_disconnect() {
    let mut p = Pair::new(21);
    let (c, s, cc, sc) = establish(&mut p);
    // PSNs were exchanged like rdma_cm: both QPs are in RTS and talk.
    assert_eq!(p.ep[0].qp_state(c.qpn).unwrap(), QpState::Rts);
    assert_eq!(p.ep[1].qp_state(s.qpn).unwrap(), QpState::Rts);
    exchange(&mut p, &c, &s);
    let now = p.now;
    p.ep[0].disconnect(now, cc).unwrap();
    let (mut dc, mut ds) = (false, false);
    assert!(p.run_until(Duration::from_secs(30), |p| {
        dc |= events(&mut p.ep[0]).contains(&CmEvent::Disconnected { conn: cc });
        ds |= events(&mut p.ep[1]).contains(&CmEvent::Disconnected { conn: sc });
        dc && ds
    }));
    assert_eq!(p.ep[0].qp_state(c.qpn).unwrap(), QpState::Err);
    assert_eq!(p.ep[1].qp_state(s.qpn).unwrap(), QpState::Err);
    // The receive left on the server is flushed.
    assert!(p.settle(Duration::from_secs(10)));
}

#[test]
fn handshake_survives_a_lossy_link() {
    let n: u64 = std::env::var("CM_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    for seed in 30..30 + n {
        let mut p = Pair::new(seed);
        p.faults = Faults {
            loss: 0.2,
            dup: 0.05,
            reorder: 0.05,
            ..Default::default()
        };
        let (c, s, _, _) = establish(&mut p);
        p.faults.loss = 0.05;
        exchange(&mut p, &c, &s);
    }
}

#[test]
fn reject_and_missing_listener() {
    let mut p = Pair::new(22);
    let c = setup_side(&mut p.ep[0], 4096, QpType::Rc);
    p.ep[1].listen(7000).unwrap();
    assert_eq!(p.ep[1].listen(7000), Err(VerbsError::PortInUse(7000)));
    let now = p.now;
    let cc = p.ep[0]
        .connect(now, c.qpn, IpAddr::V4(ip(2)), 7000, b"")
        .unwrap();
    let mut req = None;
    p.run_until(Duration::from_secs(5), |p| {
        if let Some(CmEvent::ConnectRequest { conn, .. }) = p.ep[1].poll_cm_event() {
            req = Some(conn);
        }
        req.is_some()
    });
    let now = p.now;
    p.ep[1].reject(now, req.unwrap(), b"go away").unwrap();
    let mut got = None;
    p.run_until(Duration::from_secs(5), |p| {
        got = p.ep[0].poll_cm_event();
        got.is_some()
    });
    match got {
        Some(CmEvent::Rejected {
            conn,
            reason,
            private_data,
        }) => {
            assert_eq!((conn, reason), (cc, 28));
            assert_eq!(&private_data[..7], b"go away");
        }
        other => panic!("{other:?}"),
    }
    // No listener on 7001: REJ with "invalid service ID".
    let c2 = setup_side(&mut p.ep[0], 4096, QpType::Rc);
    let now = p.now;
    let cc2 = p.ep[0]
        .connect(now, c2.qpn, IpAddr::V4(ip(2)), 7001, b"")
        .unwrap();
    let mut got = None;
    p.run_until(Duration::from_secs(5), |p| {
        got = p.ep[0].poll_cm_event();
        got.is_some()
    });
    assert!(
        matches!(got, Some(CmEvent::Rejected { conn, reason: 8, .. }) if conn == cc2),
        "{got:?}"
    );
}

#[test]
fn unreachable_peer_times_out() {
    let mut p = Pair::with_config(23, |c| {
        c.cm.max_retries = 3;
        c.cm.response_timeout = Duration::from_millis(10);
    });
    p.faults.cut = true;
    let c = setup_side(&mut p.ep[0], 4096, QpType::Rc);
    let now = p.now;
    let cc = p.ep[0]
        .connect(now, c.qpn, IpAddr::V4(ip(2)), 1, b"")
        .unwrap();
    assert!(p.settle(Duration::from_secs(10)));
    assert_eq!(
        events(&mut p.ep[0]),
        vec![CmEvent::Unreachable { conn: cc }]
    );
    // One ARP request per retry interval at most; nothing else escaped.
    assert!(p.dropped >= 4);
}

#[test]
fn api_misuse_is_a_typed_error() {
    let mut p = Pair::new(24);
    let c = setup_side(&mut p.ep[0], 4096, QpType::Rc);
    let now = p.now;
    let big = vec![0u8; 57];
    assert!(matches!(
        p.ep[0].connect(now, c.qpn, IpAddr::V4(ip(2)), 1, &big),
        Err(VerbsError::PrivateDataTooLong { max: 56, .. })
    ));
    assert_eq!(
        p.ep[0].accept(now, ConnId(42), c.qpn, b""),
        Err(VerbsError::UnknownConn(42))
    );
    assert!(p.ep[0]
        .connect(now, 0x999, IpAddr::V4(ip(2)), 1, b"")
        .is_err());
    assert!(p.ep[0]
        .connect(now, c.qpn, "fd00::2".parse().unwrap(), 1, b"")
        .is_err());
    // A QP cannot skip states.
    let r = p.ep[0].modify_qp(
        c.qpn,
        &QpAttr {
            state: Some(QpState::Rts),
            ..Default::default()
        },
    );
    assert!(matches!(r, Err(VerbsError::BadTransition { .. })));
    // Posting a send before RTS is refused.
    let r = p.ep[0].post_send(c.qpn, SendWr::new(1, SendOp::Send, sge(&c.mr, 0, 1)));
    assert!(matches!(r, Err(VerbsError::BadState { .. })));
}

fn ud_side(p: &mut Pair, i: usize, qkey: u32) -> Side {
    let s = setup_side(&mut p.ep[i], 1 << 16, QpType::Ud);
    for st in [QpState::Init, QpState::Rtr, QpState::Rts] {
        p.ep[i]
            .modify_qp(
                s.qpn,
                &QpAttr {
                    state: Some(st),
                    qkey: Some(qkey),
                    sq_psn: Some(0),
                    path_mtu: Some(Mtu::M1024),
                    ..Default::default()
                },
            )
            .unwrap();
    }
    s
}

#[test]
fn ud_messages_carry_grh_and_check_qkey() {
    let mut p = Pair::new(25);
    let a = ud_side(&mut p, 0, 0x1111);
    let b = ud_side(&mut p, 1, 0x2222);
    for i in 0..3 {
        p.ep[1]
            .post_recv(
                b.qpn,
                RecvWr {
                    wr_id: i,
                    sg_list: vec![sge(&b.mr, i * 2048, 2048)],
                },
            )
            .unwrap();
    }
    p.ep[0].mr_bytes_mut(a.mr.lkey).unwrap()[..100].copy_from_slice(&[7u8; 100]);
    let dest = UdDest {
        ip: IpAddr::V4(ip(2)),
        qpn: b.qpn,
        qkey: 0x2222,
    };
    let mut wr = SendWr::new(1, SendOp::SendWithImm(77), sge(&a.mr, 0, 100));
    wr.ud = Some(dest);
    p.ep[0].post_send(a.qpn, wr.clone()).unwrap();
    // Wrong Q_Key: dropped and counted.
    wr.ud = Some(UdDest {
        qkey: 0x3333,
        ..dest
    });
    wr.wr_id = 2;
    p.ep[0].post_send(a.qpn, wr.clone()).unwrap();
    // Too long for the MTU: refused at post.
    let mut big = SendWr::new(3, SendOp::Send, sge(&a.mr, 0, 2000));
    big.ud = Some(dest);
    assert!(matches!(
        p.ep[0].post_send(a.qpn, big),
        Err(VerbsError::TooLong { .. })
    ));
    assert!(p.settle(Duration::from_secs(1)));
    let sent = drain_cq(&mut p.ep[0], a.cq);
    assert_eq!(sent.len(), 2);
    let r = drain_cq(&mut p.ep[1], b.cq);
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].wr_id, r[0].byte_len, r[0].imm_data, r[0].src_qp),
        (0, 140, Some(77), a.qpn)
    );
    assert_eq!(r[0].src_ip, Some(IpAddr::V4(ip(1))));
    assert_eq!(p.ep[1].stats().rx_bad_qkey, 1);
    let m = p.ep[1].mr_bytes(b.mr.lkey).unwrap();
    assert_eq!(m[20] >> 4, 4, "IPv4 header in the last 20 bytes of the GRH");
    assert_eq!(&m[20 + 12..20 + 16], &[10, 0, 0, 1]);
    assert!(m[40..140].iter().all(|&x| x == 7));
}

#[test]
fn disconnect_survives_a_lossy_link() {
    for seed in 60..80 {
        let mut p = Pair::new(seed);
        p.faults = Faults {
            loss: 0.2,
            dup: 0.05,
            ..Default::default()
        };
        let (c, s, cc, sc) = establish(&mut p);
        let now = p.now;
        // Either side may start the teardown.
        if seed % 2 == 0 {
            p.ep[0].disconnect(now, cc).unwrap();
        } else {
            p.ep[1].disconnect(now, sc).unwrap();
        }
        let (mut dc, mut ds) = (false, false);
        assert!(
            p.run_until(Duration::from_secs(30), |p| {
                dc |= events(&mut p.ep[0]).contains(&CmEvent::Disconnected { conn: cc });
                ds |= events(&mut p.ep[1]).contains(&CmEvent::Disconnected { conn: sc });
                dc && ds
            }),
            "seed {seed}"
        );
        assert_eq!(p.ep[0].qp_state(c.qpn).unwrap(), QpState::Err);
        assert_eq!(p.ep[1].qp_state(s.qpn).unwrap(), QpState::Err);
        assert!(
            p.settle(Duration::from_secs(30)),
            "seed {seed}: CM timers still running"
        );
    }
}

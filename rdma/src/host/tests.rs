//! Two hosts over an in-memory link: CM connect, WRITE, READ, SEND, disconnect, under
//! virtual time and under wall time (one thread per host, `Host::run_until`).

use std::net::{IpAddr, Ipv4Addr};

use dataplane::mem::pair;
use dataplane::{Clock, Nanos, WallClock};

use super::*;
use crate::verbs::*;

const PORT: u16 = 7471;

fn ip(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, i)
}

struct Side {
    qpn: u32,
    cq: CqHandle,
    mr: MrInfo,
}

fn setup(ep: &mut Endpoint) -> Side {
    let pd = ep.alloc_pd();
    let cq = ep.create_cq(64);
    let mr = ep.reg_mr(pd, 8192, AccessFlags::ALL).unwrap();
    let attr = QpInitAttr {
        pd,
        qp_type: QpType::Rc,
        send_cq: cq,
        recv_cq: cq,
        max_send_wr: 16,
        max_recv_wr: 16,
    };
    let qpn = ep.create_qp(attr).unwrap();
    Side { qpn, cq, mr }
}

fn hosts() -> (Host, Host) {
    let (a, b) = pair("a", "b");
    let ea = Endpoint::new(EndpointConfig::new([2, 0, 0, 0, 0, 1], ip(1)));
    let eb = Endpoint::new(EndpointConfig::new([2, 0, 0, 0, 0, 2], ip(2)));
    (Host::new(ea, Box::new(a)), Host::new(eb, Box::new(b)))
}

fn take_wc(ep: &mut Endpoint, cq: CqHandle, got: &mut Vec<WorkCompletion>) -> usize {
    got.extend(ep.poll_cq(cq, 16).unwrap());
    got.len()
}

#[test]
fn write_read_send_in_virtual_time() {
    let (mut ha, mut hb) = hosts();
    let sa = setup(ha.endpoint_mut());
    let sb = setup(hb.endpoint_mut());
    hb.endpoint_mut().listen(PORT).unwrap();
    // The server's buffer description travels in the REP private data.
    let mut rep = Vec::new();
    rep.extend_from_slice(&sb.mr.addr.to_be_bytes());
    rep.extend_from_slice(&sb.mr.rkey.to_be_bytes());
    ha.endpoint_mut()
        .connect(Instant::ZERO, sa.qpn, IpAddr::V4(ip(2)), PORT, b"hi")
        .unwrap();
    let mut net = VirtualNet::new();
    let a = net.add(ha);
    let b = net.add(hb);
    let deadline = Nanos::from_secs(5);
    // Server: accept the request.
    let mut conn = None;
    net.run_until(deadline, |h| {
        while let Some(ev) = h[b].endpoint_mut().poll_cm_event() {
            if let CmEvent::ConnectRequest {
                conn: c,
                private_data,
                ..
            } = ev
            {
                assert_eq!(&private_data[..2], b"hi");
                conn = Some(c);
            }
        }
        conn.is_some()
    })
    .unwrap();
    let now = crate::host::instant(net.now());
    let server = net.host_mut(b).unwrap().endpoint_mut();
    server.accept(now, conn.unwrap(), sb.qpn, &rep).unwrap();
    server
        .post_recv(
            sb.qpn,
            RecvWr {
                wr_id: 99,
                sg_list: vec![Sge {
                    addr: sb.mr.addr + 4096,
                    length: 64,
                    lkey: sb.mr.lkey,
                }],
            },
        )
        .unwrap();
    // Client: Established with the server's private data.
    let mut remote = None;
    net.run_until(deadline, |h| {
        while let Some(ev) = h[a].endpoint_mut().poll_cm_event() {
            if let CmEvent::Established { private_data, .. } = ev {
                let addr = u64::from_be_bytes(private_data[0..8].try_into().unwrap());
                let rkey = u32::from_be_bytes(private_data[8..12].try_into().unwrap());
                remote = Some((addr, rkey));
            }
        }
        remote.is_some()
    })
    .unwrap();
    let (raddr, rkey) = remote.unwrap();
    assert_eq!((raddr, rkey), (sb.mr.addr, sb.mr.rkey));

    // WRITE 3000 bytes (3 packets at MTU 1024), READ them back elsewhere, SEND 5 bytes.
    let client = net.host_mut(a).unwrap().endpoint_mut();
    let pattern: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    client.mr_bytes_mut(sa.mr.lkey).unwrap()[..3000].copy_from_slice(&pattern);
    client.mr_bytes_mut(sa.mr.lkey).unwrap()[7000..7005].copy_from_slice(b"hello");
    let sge = |off: u64, len: u32| Sge {
        addr: sa.mr.addr + off,
        length: len,
        lkey: sa.mr.lkey,
    };
    client
        .post_send(
            sa.qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: raddr,
                    rkey,
                },
                sge(0, 3000),
            ),
        )
        .unwrap();
    client
        .post_send(
            sa.qpn,
            SendWr::new(
                2,
                SendOp::Read {
                    remote_addr: raddr,
                    rkey,
                },
                sge(4000, 3000),
            ),
        )
        .unwrap();
    client
        .post_send(sa.qpn, SendWr::new(3, SendOp::Send, sge(7000, 5)))
        .unwrap();
    let mut wcs = Vec::new();
    let mut server_wcs = Vec::new();
    net.run_until(deadline, |h| {
        take_wc(h[a].endpoint_mut(), sa.cq, &mut wcs) == 3
            && take_wc(h[b].endpoint_mut(), sb.cq, &mut server_wcs) == 1
    })
    .unwrap();
    let ids: Vec<(u64, WcStatus)> = wcs.iter().map(|w| (w.wr_id, w.status)).collect();
    assert_eq!(
        ids,
        vec![
            (1, WcStatus::Success),
            (2, WcStatus::Success),
            (3, WcStatus::Success)
        ]
    );
    assert_eq!((server_wcs[0].wr_id, server_wcs[0].byte_len), (99, 5));
    let hs = net.host(b).unwrap().endpoint();
    assert_eq!(&hs.mr_bytes(sb.mr.lkey).unwrap()[..3000], &pattern[..]);
    assert_eq!(&hs.mr_bytes(sb.mr.lkey).unwrap()[4096..4101], b"hello");
    let hc = net.host(a).unwrap().endpoint();
    assert_eq!(&hc.mr_bytes(sa.mr.lkey).unwrap()[4000..7000], &pattern[..]);
    // Virtual time moved only as far as the run needed (no timers fired: no loss).
    assert!(net.now() < Nanos::from_millis(1), "{}", net.now());
    assert_eq!(hc.stats().retransmissions, 0);
}

#[test]
fn virtual_net_reports_a_stall_instead_of_hanging() {
    let (ha, hb) = hosts();
    let mut net = VirtualNet::new();
    net.add(ha);
    net.add(hb);
    let e = net.run_until(Nanos::from_secs(1), |_| false).unwrap_err();
    assert!(matches!(e, HostError::Stalled { .. }), "{e}");
}

#[test]
fn unanswered_connect_is_unreachable_in_virtual_time() {
    // The peer end of the link exists but nobody listens on it: CM retries, then gives up.
    let (a, _b) = pair("a", "b");
    let mut ep = Endpoint::new(EndpointConfig::new([2, 0, 0, 0, 0, 1], ip(1)));
    let s = setup(&mut ep);
    ep.add_neighbour(IpAddr::V4(ip(2)), [2, 0, 0, 0, 0, 2]);
    ep.connect(Instant::ZERO, s.qpn, IpAddr::V4(ip(2)), PORT, b"")
        .unwrap();
    let mut net = VirtualNet::new();
    net.add(Host::new(ep, Box::new(a)));
    let mut unreachable = false;
    net.run_until(Nanos::from_secs(60), |h| {
        while let Some(ev) = h[0].endpoint_mut().poll_cm_event() {
            unreachable |= matches!(ev, CmEvent::Unreachable { .. });
        }
        unreachable
    })
    .unwrap();
    // 16 tries 100 ms apart.
    assert!(net.now() >= Nanos::from_millis(1500), "{}", net.now());
}

#[test]
fn write_and_send_in_wall_time_on_two_threads() {
    let (mut ha, mut hb) = hosts();
    let sa = setup(ha.endpoint_mut());
    let sb = setup(hb.endpoint_mut());
    hb.endpoint_mut().listen(PORT).unwrap();
    let clock = WallClock::new();
    let deadline = clock.now() + Nanos::from_secs(20);
    let server_clock = clock.clone();
    let server = std::thread::spawn(move || {
        let clock = server_clock;
        let mut conn = None;
        hb.run_until(&clock, deadline, |ep| {
            if let Some(CmEvent::ConnectRequest { conn: c, .. }) = ep.poll_cm_event() {
                conn = Some(c);
            }
            conn.is_some()
        })
        .unwrap();
        let ep = hb.endpoint_mut();
        let mut rep = sb.mr.addr.to_be_bytes().to_vec();
        rep.extend_from_slice(&sb.mr.rkey.to_be_bytes());
        ep.accept(instant(clock.now()), conn.unwrap(), sb.qpn, &rep)
            .unwrap();
        ep.post_recv(
            sb.qpn,
            RecvWr {
                wr_id: 5,
                sg_list: vec![Sge {
                    addr: sb.mr.addr + 4096,
                    length: 100,
                    lkey: sb.mr.lkey,
                }],
            },
        )
        .unwrap();
        let mut got = Vec::new();
        hb.run_until(&clock, deadline, |ep| take_wc(ep, sb.cq, &mut got) == 1)
            .unwrap();
        let mut disconnected = false;
        hb.run_until(&clock, deadline, |ep| {
            while let Some(ev) = ep.poll_cm_event() {
                disconnected |= matches!(ev, CmEvent::Disconnected { .. });
            }
            disconnected
        })
        .unwrap();
        (hb, got)
    });
    let conn = ha
        .endpoint_mut()
        .connect(instant(clock.now()), sa.qpn, IpAddr::V4(ip(2)), PORT, b"")
        .unwrap();
    let mut remote = None;
    ha.run_until(&clock, deadline, |ep| {
        if let Some(CmEvent::Established { private_data, .. }) = ep.poll_cm_event() {
            let addr = u64::from_be_bytes(private_data[0..8].try_into().unwrap());
            let rkey = u32::from_be_bytes(private_data[8..12].try_into().unwrap());
            remote = Some((addr, rkey));
        }
        remote.is_some()
    })
    .unwrap();
    let (raddr, rkey) = remote.unwrap();
    let ep = ha.endpoint_mut();
    ep.mr_bytes_mut(sa.mr.lkey).unwrap()[..2048].fill(0xAB);
    let sge = Sge {
        addr: sa.mr.addr,
        length: 2048,
        lkey: sa.mr.lkey,
    };
    ep.post_send(
        sa.qpn,
        SendWr::new(
            1,
            SendOp::Write {
                remote_addr: raddr,
                rkey,
            },
            sge,
        ),
    )
    .unwrap();
    let sge = Sge {
        addr: sa.mr.addr,
        length: 10,
        lkey: sa.mr.lkey,
    };
    ep.post_send(sa.qpn, SendWr::new(2, SendOp::Send, sge))
        .unwrap();
    let mut wcs = Vec::new();
    ha.run_until(&clock, deadline, |ep| take_wc(ep, sa.cq, &mut wcs) == 2)
        .unwrap();
    assert!(wcs.iter().all(|w| w.status == WcStatus::Success), "{wcs:?}");
    ha.endpoint_mut()
        .disconnect(instant(clock.now()), conn)
        .unwrap();
    // Keep polling so the DREQ goes out and the DREP comes back.
    let _ = ha.run_until(&clock, clock.now() + Nanos::from_millis(50), |_| false);
    let (hb, got) = server.join().unwrap();
    assert_eq!((got[0].wr_id, got[0].byte_len), (5, 10));
    assert!(hb.endpoint().mr_bytes(sb.mr.lkey).unwrap()[..2048]
        .iter()
        .all(|&b| b == 0xAB));
    assert!(ha.port_stats().tx_packets >= 4);
}

//! The RoCEv2 endpoint on real ports: two network namespaces joined by a veth pair, an
//! endpoint on each end over AF_PACKET. Covers RDMA CM connect/accept/disconnect through the
//! library, and `pisa rdma write-bw` client/server processes (`ip netns exec`) whose
//! captured traffic `pisa rdma decode --check` accepts, and rejects once corrupted.
//!
//! Needs root (namespaces, veth), so the tests are `#[ignore]`d: run them as root with
//! `--include-ignored` (CI does); run without root they fail, saying why. The kernel
//! interfaces carry no IPv4 address: the endpoints own theirs and answer ARP themselves.
//! Namespaces (and with them the veths) are removed by a Drop guard.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use dataplane::netns::{in_netns, ip};
use dataplane::{AfPacketPort, Clock, Nanos, WallClock};
use rdma::host::{instant, Host};
use rdma::verbs::*;

mod common;

use common::require_root;

const PISA: &str = env!("CARGO_BIN_EXE_pisa");

/// Two namespaces `<base>-a` / `<base>-b` with veth `<v>a` / `<v>b`; removed on drop.
struct Pair {
    ns: [String; 2],
    ifs: [String; 2],
    dir: PathBuf,
}

impl Pair {
    fn new(tag: &str) -> Pair {
        let pid = std::process::id() % 100_000;
        let ns = [
            format!("pisa-rd{pid}{tag}-a"),
            format!("pisa-rd{pid}{tag}-b"),
        ];
        let ifs = [format!("rd{pid}{tag}a"), format!("rd{pid}{tag}b")];
        let dir = std::env::temp_dir().join(format!("pisa-rdma-test-{pid}-{tag}"));
        let _ = std::fs::create_dir_all(&dir);
        let p = Pair { ns, ifs, dir };
        for n in &p.ns {
            ip(&["netns", "add", n]).expect("ip netns add");
        }
        ip(&[
            "link", "add", &p.ifs[0], "netns", &p.ns[0], "type", "veth", "peer", "name", &p.ifs[1],
            "netns", &p.ns[1],
        ])
        .expect("ip link add veth");
        for i in 0..2 {
            let (n, f) = (&p.ns[i], &p.ifs[i]);
            let sh = format!(
                "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 && ip link set {f} mtu 9000 up && ip link set lo up"
            );
            let st = Command::new("ip")
                .args(["netns", "exec", n, "sh", "-c", &sh])
                .status()
                .expect("ip netns exec");
            assert!(st.success(), "setting up {f} in {n}");
        }
        p
    }
}

impl Drop for Pair {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = ip(&["netns", "del", n]);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn addr(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 77, 0, i)
}

fn host_in(ns: &str, ifname: &str, i: u8) -> Host {
    let port = in_netns(ns, || AfPacketPort::open(ifname))
        .expect("enter namespace")
        .expect("open AF_PACKET port");
    let ep = Endpoint::new(EndpointConfig::new([2, 0x77, 0, 0, 0, i], addr(i)));
    Host::new(ep, Box::new(port))
}

fn rc_qp(ep: &mut Endpoint) -> (u32, CqHandle, MrInfo) {
    let pd = ep.alloc_pd();
    let cq = ep.create_cq(64);
    let mr = ep.reg_mr(pd, 4096, AccessFlags::ALL).unwrap();
    let qpn = ep
        .create_qp(QpInitAttr {
            pd,
            qp_type: QpType::Rc,
            send_cq: cq,
            recv_cq: cq,
            max_send_wr: 16,
            max_recv_wr: 16,
        })
        .unwrap();
    (qpn, cq, mr)
}

#[test]
#[ignore = "needs root: network namespaces and veth pairs (AF_PACKET on them)"]
fn cm_connect_accept_disconnect_over_veth() {
    require_root();
    let pair = Pair::new("c");
    let mut client = host_in(&pair.ns[0], &pair.ifs[0], 1);
    let mut server = host_in(&pair.ns[1], &pair.ifs[1], 2);
    let clock = WallClock::new();
    let deadline = clock.now() + Nanos::from_secs(20);
    let (sq, scq, smr) = rc_qp(server.endpoint_mut());
    server.endpoint_mut().listen(4000).unwrap();
    let sclock = clock.clone();
    let server_thread = std::thread::spawn(move || {
        let clock = sclock;
        let mut req = None;
        server
            .run_until(&clock, deadline, |ep| {
                if let Some(CmEvent::ConnectRequest {
                    conn,
                    private_data,
                    peer,
                    ..
                }) = ep.poll_cm_event()
                {
                    req = Some((conn, private_data, peer));
                }
                req.is_some()
            })
            .expect("connect request");
        let (conn, private, peer) = req.unwrap();
        assert_eq!(&private[..5], b"hello");
        assert_eq!(peer, IpAddr::V4(addr(1)));
        let ep = server.endpoint_mut();
        ep.accept(instant(clock.now()), conn, sq, b"welcome")
            .unwrap();
        ep.post_recv(
            sq,
            RecvWr {
                wr_id: 1,
                sg_list: vec![Sge {
                    addr: smr.addr,
                    length: 64,
                    lkey: smr.lkey,
                }],
            },
        )
        .unwrap();
        let mut events = Vec::new();
        let mut wcs = Vec::new();
        server
            .run_until(&clock, deadline, |ep| {
                wcs.extend(ep.poll_cq(scq, 4).unwrap());
                while let Some(ev) = ep.poll_cm_event() {
                    events.push(ev);
                }
                events
                    .iter()
                    .any(|e| matches!(e, CmEvent::Disconnected { .. }))
            })
            .expect("disconnect");
        (server, events, wcs)
    });
    let (cq_, ccq, cmr) = rc_qp(client.endpoint_mut());
    let conn = client
        .endpoint_mut()
        .connect(
            instant(clock.now()),
            cq_,
            IpAddr::V4(addr(2)),
            4000,
            b"hello",
        )
        .unwrap();
    let mut rep = None;
    client
        .run_until(&clock, deadline, |ep| {
            if let Some(CmEvent::Established {
                private_data, qpn, ..
            }) = ep.poll_cm_event()
            {
                rep = Some((private_data, qpn));
            }
            rep.is_some()
        })
        .expect("established");
    let (rep, qpn) = rep.unwrap();
    assert_eq!(qpn, cq_);
    assert_eq!(&rep[..7], b"welcome");
    assert_eq!(client.endpoint().qp_state(cq_).unwrap(), QpState::Rts);
    let ep = client.endpoint_mut();
    ep.mr_bytes_mut(cmr.lkey).unwrap()[..4].copy_from_slice(b"ping");
    ep.post_send(
        cq_,
        SendWr::new(
            9,
            SendOp::Send,
            Sge {
                addr: cmr.addr,
                length: 4,
                lkey: cmr.lkey,
            },
        ),
    )
    .unwrap();
    let mut wc = Vec::new();
    client
        .run_until(&clock, deadline, |ep| {
            wc.extend(ep.poll_cq(ccq, 4).unwrap());
            !wc.is_empty()
        })
        .expect("send completion");
    assert_eq!((wc[0].wr_id, wc[0].status), (9, WcStatus::Success));
    client
        .endpoint_mut()
        .disconnect(instant(clock.now()), conn)
        .unwrap();
    let mut gone = false;
    client
        .run_until(&clock, deadline, |ep| {
            while let Some(ev) = ep.poll_cm_event() {
                gone |= matches!(ev, CmEvent::Disconnected { .. });
            }
            gone
        })
        .expect("DREP");
    assert_eq!(client.endpoint().qp_state(cq_).unwrap(), QpState::Err);
    let (server, events, wcs) = server_thread.join().expect("server thread");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, CmEvent::Established { .. })),
        "{events:?}"
    );
    assert_eq!(wcs.len(), 1, "{wcs:?}");
    assert_eq!(wcs[0].byte_len, 4);
    assert_eq!(&server.endpoint().mr_bytes(smr.lkey).unwrap()[..4], b"ping");
    assert_eq!(server.endpoint().qp_state(sq).unwrap(), QpState::Err);
    // Both sides really went over the veth.
    assert!(client.port_stats().tx_packets >= 4 && server.port_stats().rx_packets >= 4);
}

fn pisa_in(ns: &str, args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(["netns", "exec", ns, PISA, "rdma"]).args(args);
    c
}

/// Flips the last byte (part of the ICRC) of the largest frame in a pcap file written by
/// pisa (classic pcap, either byte order).
fn corrupt_largest_frame(src: &Path, dst: &Path) {
    let mut b = std::fs::read(src).unwrap();
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    let le = matches!(magic, 0xa1b2_c3d4 | 0xa1b2_3c4d);
    let mut off = 24;
    let mut best = (0usize, 0usize);
    while off + 16 <= b.len() {
        let raw: [u8; 4] = b[off + 8..off + 12].try_into().unwrap();
        let incl = if le {
            u32::from_le_bytes(raw)
        } else {
            u32::from_be_bytes(raw)
        } as usize;
        let data = off + 16;
        if incl > best.1 {
            best = (data, incl);
        }
        off = data + incl;
    }
    assert!(best.1 > 100, "no data frame in {}", src.display());
    b[best.0 + best.1 - 1] ^= 0xFF;
    std::fs::write(dst, b).unwrap();
}

#[test]
#[ignore = "needs root: network namespaces and veth pairs (AF_PACKET on them)"]
fn write_bw_between_namespaces_and_decode_the_capture() {
    require_root();
    let pair = Pair::new("w");
    let server_dev = format!("afpacket:{}", pair.ifs[1]);
    let client_dev = format!("afpacket:{}", pair.ifs[0]);
    let server = pisa_in(
        &pair.ns[1],
        &[
            "write-bw",
            "-d",
            &server_dev,
            "--ip",
            "10.77.0.2/24",
            "--accept-timeout",
            "30",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start server");
    // Give the server time to open its port; the CM also retries the REQ.
    std::thread::sleep(Duration::from_millis(300));
    let capture = pair.dir.join("client.pcap");
    let client = pisa_in(
        &pair.ns[0],
        &[
            "write-bw",
            "-d",
            &client_dev,
            "--ip",
            "10.77.0.1/24",
            "-s",
            "4096",
            "-n",
            "2000",
            "--report",
            "json",
            "--capture",
        ],
    )
    .arg(&capture)
    .arg("10.77.0.2")
    .output()
    .expect("run client");
    let server = server.wait_with_output().expect("server");
    let sout = String::from_utf8_lossy(&server.stdout);
    let serr = String::from_utf8_lossy(&server.stderr);
    let cout = String::from_utf8_lossy(&client.stdout);
    let cerr = String::from_utf8_lossy(&client.stderr);
    assert!(
        client.status.success(),
        "client: {cout}{cerr}\nserver: {sout}{serr}"
    );
    assert!(server.status.success(), "server: {sout}{serr}");
    assert!(sout.contains("client done"), "{sout}");
    let r: serde_json::Value = serde_json::from_str(cout.trim()).expect("client JSON");
    assert_eq!(r["test"], "write-bw");
    assert_eq!(r["bytes"], 4096);
    assert_eq!(r["iterations"], 2000);
    let avg = r["bw_avg_gbps"].as_f64().unwrap();
    let peak = r["bw_peak_gbps"].as_f64().unwrap();
    let mbps = r["bw_avg_mbps"].as_f64().unwrap();
    let rate = r["msg_rate_mpps"].as_f64().unwrap();
    // Sane: positive, below what a veth could ever carry, and mutually consistent.
    assert!(avg > 0.0 && avg < 400.0, "{r}");
    assert!(peak >= avg, "{r}");
    assert!(
        (mbps * 8.0 / 1000.0 - avg).abs() < 1e-6 * avg.max(1.0),
        "{r}"
    );
    assert!(
        (rate * 4096.0 * 8.0 / 1000.0 - avg).abs() < 1e-6 * avg.max(1.0),
        "{r}"
    );

    // The client's own traffic decodes, every ICRC verifies.
    let ok = Command::new(PISA)
        .args(["rdma", "decode", "--check"])
        .arg(&capture)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(text.lines().count() > 2000, "one line per RoCEv2 frame");
    assert!(
        text.contains("REQ") || text.contains("Req"),
        "CM REQ decoded:\n{}",
        &text[..text.len().min(2000)]
    );
    // A corrupted copy fails the check.
    let bad = pair.dir.join("bad.pcap");
    corrupt_largest_frame(&capture, &bad);
    let out = Command::new(PISA)
        .args(["rdma", "decode", "--check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("BAD ICRC"));
    // Without --check it only reports.
    let out = Command::new(PISA)
        .args(["rdma", "decode"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(out.status.success());
}

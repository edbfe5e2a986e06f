//! End-to-end tests of the live switch over its fast port backends: the bundled four-host lab
//! (renamed per test) with `pisa run` forwarding l2l3.p4 over AF_XDP ports (copy mode on the
//! lab's switch-side veths), over DPDK `net_af_packet` vdevs on those veths, and over a mix of
//! AF_PACKET, AF_XDP and DPDK ports on one switch.
//!
//! Each checks pings (bridged and routed), a complete UDP and TCP transfer, a clean SIGTERM
//! stop and a lab that goes down leaving nothing. Built only with both features (`cargo test -p pisa --features afxdp,dpdk --test
//! netns_backends`). They need root, so they are `#[ignore]`d: run them as root with
//! `--include-ignored` (CI does); run without root they fail, saying why. Everything a test
//! creates is removed by Drop guards, by name, also when an assertion fails.
#![cfg(all(feature = "afxdp", feature = "dpdk"))]

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::Duration;

use common::{
    lab_down_leaves_nothing, ns, ping, require_ping, require_root, start_with, udp_h1_to_h3,
};
use dataplane::netns::in_netns;

/// Sends `len` bytes of a known pattern over TCP from h1 to h3 (routed); returns the bytes h3
/// received, checked against the pattern as they arrive.
fn tcp_h1_to_h3(lab: &common::LabGuard, len: usize) -> usize {
    let pattern = |i: usize| (i % 251) as u8;
    let listener = in_netns(&ns(lab, "h3"), || TcpListener::bind("10.0.2.3:5002"))
        .expect("enter h3")
        .expect("listen on h3");
    let receiver = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().expect("accept");
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("read timeout");
        let mut got = 0usize;
        let mut buf = vec![0u8; 65536];
        loop {
            match conn.read(&mut buf) {
                Ok(0) => break,
                Ok(k) => {
                    for (j, b) in buf[..k].iter().enumerate() {
                        assert_eq!(*b, pattern(got + j), "byte {} differs", got + j);
                    }
                    got += k;
                }
                Err(e) => panic!("receive after {got} bytes: {e}"),
            }
        }
        got
    });
    let mut conn = in_netns(&ns(lab, "h1"), || {
        TcpStream::connect_timeout(&"10.0.2.3:5002".parse().unwrap(), Duration::from_secs(5))
    })
    .expect("enter h1")
    .expect("connect from h1");
    let data: Vec<u8> = (0..len).map(pattern).collect();
    conn.write_all(&data).expect("send");
    conn.shutdown(std::net::Shutdown::Write).expect("shutdown");
    receiver.join().expect("receiver thread")
}

/// The whole check on one backend assignment: pings (bridged and routed), complete UDP and
/// TCP transfers, a clean SIGTERM stop, and a lab that goes down leaving nothing.
fn forward_and_stop(test: &str, name: &str, prefix: &str, port: impl Fn(u16, &str) -> String) {
    require_root();
    require_ping();
    let specs: Vec<String> = (0..4u16)
        .map(|p| port(p, &format!("{prefix}{p}")))
        .collect();
    let (lab, mut pisa) = start_with(name, prefix, |p, _| specs[usize::from(p)].clone(), &[]);
    let pid = pisa.child.as_ref().map(|c| c.id()).expect("pisa running");
    assert!(
        ping(&lab, "h1", "10.0.1.2", 3),
        "{test}: h1 -> h2 (bridged)"
    );
    assert!(ping(&lab, "h1", "10.0.2.3", 3), "{test}: h1 -> h3 (routed)");
    assert!(ping(&lab, "h4", "10.0.1.2", 2), "{test}: h4 -> h2 (routed)");

    let n = 500u32;
    let got = udp_h1_to_h3(&lab, n, 5001);
    assert_eq!(got, n as usize, "{test}: every UDP datagram arrives");

    let len = 4 << 20;
    assert_eq!(
        tcp_h1_to_h3(&lab, len),
        len,
        "{test}: the TCP transfer arrives whole"
    );

    let st = pisa.ctl(&["stats"]);
    assert!(
        st["ports"][0]["rx"].as_u64().unwrap_or(0) >= u64::from(n),
        "{test}: port 0 counted the transfer: {st}"
    );

    // Each port runs on the backend asked for, and the hosts' ports all carried traffic.
    for (p, spec) in specs.iter().enumerate() {
        let port = &st["ports"][p];
        assert_eq!(port["name"].as_str(), Some(spec.as_str()), "{test}: {st}");
        if p < 3 {
            assert!(
                port["tx"].as_u64().unwrap_or(0) > 0,
                "{test}: port {p} sent: {st}"
            );
        }
    }

    let ctl = pisa.ctl.clone();
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "{test}: pisa exits cleanly: {err}");
    assert!(
        out.contains("ports:") && out.contains("SwitchIngress.ipv4_lpm"),
        "{test}: {out}"
    );
    assert!(!ctl.exists(), "{test}: control socket removed");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "{test}: no pisa process left"
    );
    lab_down_leaves_nothing(lab);
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_XDP and DPDK on them; and ping (apt-get install iputils-ping)"]
fn afxdp_ports_forward_and_stop_cleanly() {
    forward_and_stop(
        "afxdp_ports_forward_and_stop_cleanly",
        "bkxdp",
        "bkxd",
        |_, ifname| format!("afxdp:{ifname}"),
    );
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_XDP and DPDK on them; and ping (apt-get install iputils-ping)"]
fn dpdk_vdev_ports_forward_and_stop_cleanly() {
    forward_and_stop(
        "dpdk_vdev_ports_forward_and_stop_cleanly",
        "bkdpdk",
        "bkdp",
        |p, ifname| format!("dpdk:net_af_packet{p},iface={ifname}"),
    );
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_XDP and DPDK on them; and ping (apt-get install iputils-ping)"]
fn mixed_backends_on_one_switch_forward_and_stop_cleanly() {
    // Port 0 (h1) AF_PACKET, port 1 (h2) AF_XDP, port 2 (h3) DPDK, port 3 (h4) AF_PACKET.
    forward_and_stop(
        "mixed_backends_on_one_switch_forward_and_stop_cleanly",
        "bkmix",
        "bkmx",
        |p, ifname| match p {
            1 => format!("afxdp:{ifname}"),
            2 => format!("dpdk:net_af_packet{p},iface={ifname}"),
            _ => format!("afpacket:{ifname}"),
        },
    );
}

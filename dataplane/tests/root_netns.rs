//! Tests that need root: AF_PACKET ports over a veth pair between two network namespaces,
//! and lab topologies coming up and going down without leaving anything behind. They are
//! `#[ignore]`d: run them as root with `--include-ignored` (CI does); run without root they
//! fail, saying why. Every test removes what it created, by name.

use std::path::Path;
use std::time::{Duration, Instant};

use dataplane::lab::{lab_down_in, lab_up_in, Lab, LabError};
use dataplane::netns::{in_netns, ip, link_exists, list_netns};
use dataplane::{AfPacketPort, FrameBatch, Nanos, Port, PortError};

mod support;

use support::require_root;

const ETHERTYPE_TEST: u16 = 0x88b5; // IEEE local experimental

/// Deletes the named namespaces and interfaces when dropped (even if the test panics).
struct Cleanup {
    netns: Vec<String>,
    links: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for l in &self.links {
            let _ = ip(&["link", "del", "dev", l]);
        }
        for n in &self.netns {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

fn test_frame(seq: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xbb]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xaa]);
    f[12..14].copy_from_slice(&ETHERTYPE_TEST.to_be_bytes());
    f[14..16].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in f.iter_mut().enumerate().skip(16) {
        *b = (i as u8).wrapping_mul(31).wrapping_add(seq as u8);
    }
    f
}

fn vlan_frame(seq: u16, len: usize) -> Vec<u8> {
    let mut f = test_frame(seq, len);
    // Insert an 802.1Q tag (VID 42, PCP 5) before the EtherType.
    f.splice(12..12, [0x81, 0x00, 0xa0, 0x2a]);
    f
}

fn is_test_frame(d: &[u8]) -> bool {
    d.len() >= 14
        && (d[12..14] == ETHERTYPE_TEST.to_be_bytes()
            || (d[12..14] == [0x81, 0x00]
                && d.len() >= 18
                && d[16..18] == ETHERTYPE_TEST.to_be_bytes()))
}

/// Receives test frames on `port` until `n` arrived or two seconds pass.
fn collect(port: &mut AfPacketPort, n: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut b = FrameBatch::new(64);
    let deadline = Instant::now() + Duration::from_secs(2);
    while got.len() < n && Instant::now() < deadline {
        port.wait_readable(Duration::from_millis(50)).unwrap();
        b.clear();
        port.recv_batch(&mut b, Nanos(0)).unwrap();
        got.extend(
            b.iter()
                .filter(|f| is_test_frame(&f.data))
                .map(|f| f.data.clone()),
        );
    }
    got
}

fn veth_between_namespaces(tag: &str) -> (Cleanup, String, String) {
    let pid = std::process::id();
    let (na, nb) = (format!("pisa-t{pid}-{tag}a"), format!("pisa-t{pid}-{tag}b"));
    let (ia, ib) = (
        format!("pt{}{tag}a", pid % 100_000),
        format!("pt{}{tag}b", pid % 100_000),
    );
    let guard = Cleanup {
        netns: vec![na.clone(), nb.clone()],
        links: vec![],
    };
    ip(&["netns", "add", &na]).unwrap();
    ip(&["netns", "add", &nb]).unwrap();
    ip(&[
        "-n", &na, "link", "add", "dev", &ia, "type", "veth", "peer", "name", &ib, "netns", &nb,
    ])
    .unwrap();
    for (ns, i) in [(&na, &ia), (&nb, &ib)] {
        // No IPv6 link-local address: the kernel then stays quiet on the link.
        ip(&[
            "-n",
            ns,
            "link",
            "set",
            "dev",
            i,
            "addrgenmode",
            "none",
            "mtu",
            "1500",
            "up",
        ])
        .unwrap();
    }
    (guard, ia, ib)
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn afpacket_pair_moves_frames_byte_identical() {
    require_root();
    let (guard, ia, ib) = veth_between_namespaces("x");
    let mut a = in_netns(&guard.netns[0], || AfPacketPort::open(&ia))
        .unwrap()
        .unwrap();
    let mut b = in_netns(&guard.netns[1], || AfPacketPort::open(&ib))
        .unwrap()
        .unwrap();
    assert_eq!(a.max_frame_len(), 1500 + 18);

    let mut sent: Vec<Vec<u8>> = (0..200u16)
        .map(|i| test_frame(i, 60 + (usize::from(i) * 97) % 1455))
        .collect();
    sent.push(vlan_frame(500, 200));
    let mut batch = FrameBatch::new(64);
    for chunk in sent.chunks(64) {
        for f in chunk {
            assert!(batch.push(f, Nanos(0)));
        }
        assert_eq!(a.send_batch(&mut batch, Nanos(0)).unwrap(), chunk.len());
        assert!(batch.is_empty());
    }
    let got = collect(&mut b, sent.len());
    assert_eq!(got.len(), sent.len(), "all frames arrive");
    assert_eq!(got, sent, "byte-identical and in order (VLAN tag restored)");
    assert_eq!(a.stats().tx_packets, sent.len() as u64);

    // The sender must not see its own transmissions.
    let echo = collect(&mut a, 1);
    assert!(echo.is_empty(), "sender re-received {} frames", echo.len());

    // And the other way round, with per-frame drops counted instead of failing the batch.
    batch.push(&test_frame(7, 100), Nanos(0));
    batch.push(&[0u8; 10], Nanos(0)); // runt
    batch.push(&vec![0u8; 4000], Nanos(0)); // over the MTU
    assert_eq!(b.send_batch(&mut batch, Nanos(0)).unwrap(), 1);
    let s = b.stats();
    assert_eq!(s.tx_dropped(dataplane::DropReason::TooShort), 1);
    assert_eq!(s.tx_dropped(dataplane::DropReason::TooLong), 1);
    assert_eq!(collect(&mut a, 1), vec![test_frame(7, 100)]);
    drop(guard);
}

#[test]
#[ignore = "needs root: an AF_PACKET socket (CAP_NET_RAW)"]
fn afpacket_reports_missing_interface() {
    require_root();
    match AfPacketPort::open("pisa-nosuch0") {
        Err(PortError::NoSuchInterface(n)) => assert_eq!(n, "pisa-nosuch0"),
        other => panic!("expected NoSuchInterface, got {other:?}"),
    }
}

fn two_host_lab(name: &str, prefix: &str) -> Lab {
    let yaml = format!(
        "name: {name}
ifprefix: {prefix}
hosts:
  - name: a
    port: 0
    mac: \"02:00:00:00:00:0a\"
    ipv4: [192.168.77.1/24]
    ipv6: [\"fd77::1/64\"]
    neighbors: [{{ip: 192.168.77.2, mac: \"02:00:00:00:00:0b\"}}]
    routes: [{{to: 10.77.0.0/16, via: 192.168.77.2}}]
  - name: b
    port: 1
    mac: \"02:00:00:00:00:0b\"
    ipv4: [192.168.77.2/24]
    neighbors: [{{ip: 192.168.77.1, mac: \"02:00:00:00:00:0a\"}}]
"
    );
    Lab::from_yaml(&yaml).unwrap()
}

fn leftovers(lab: &Lab) -> Vec<String> {
    let ns = list_netns().unwrap();
    let mut left = Vec::new();
    for h in &lab.hosts {
        let n = lab.netns_name(&h.name);
        if ns.contains(&n) {
            left.push(n);
        }
        let l = lab.switch_if(h);
        if link_exists(&l) {
            left.push(l);
        }
    }
    left
}

fn guard_for(lab: &Lab) -> Cleanup {
    Cleanup {
        netns: lab.hosts.iter().map(|h| lab.netns_name(&h.name)).collect(),
        links: lab.hosts.iter().map(|h| lab.switch_if(h)).collect(),
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn lab_up_down_leaves_nothing_behind() {
    require_root();
    let pid = std::process::id();
    let lab = two_host_lab(&format!("t{pid}"), &format!("pl{}-", pid % 100_000));
    let dir = tempfile::tempdir().unwrap();
    let _guard = guard_for(&lab);
    assert!(leftovers(&lab).is_empty());

    let st = lab_up_in(&lab, dir.path()).unwrap();
    assert_eq!(
        leftovers(&lab).len(),
        4,
        "2 namespaces + 2 switch-side interfaces"
    );
    assert!(dir.path().join(format!("{}.json", lab.name)).exists());

    let out = st
        .exec("a", &["ip", "-o", "addr", "show", "dev", "eth0"])
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("192.168.77.1/24") && text.contains("fd77::1/64"),
        "{text}"
    );
    let out = st
        .exec("a", &["ip", "neigh", "show", "192.168.77.2"])
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("02:00:00:00:00:0b PERMANENT"));
    let out = st
        .exec("a", &["ip", "route", "show", "10.77.0.0/16"])
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("via 192.168.77.2"));
    let out = st.exec("a", &["ethtool", "-k", "eth0"]).unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("tx-checksumming: off"));
    assert!(matches!(
        st.exec("zz", &["true"]),
        Err(LabError::NoSuchHost { .. })
    ));

    // Bringing it up twice is refused without touching anything.
    assert!(matches!(
        lab_up_in(&lab, dir.path()),
        Err(LabError::AlreadyUp(..))
    ));

    lab_down_in(&lab.name, dir.path()).unwrap();
    assert!(
        leftovers(&lab).is_empty(),
        "left behind: {:?}",
        leftovers(&lab)
    );
    assert!(!dir.path().join(format!("{}.json", lab.name)).exists());
    assert!(matches!(
        lab_down_in(&lab.name, dir.path()),
        Err(LabError::NotUp(..))
    ));
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn lab_refuses_taken_names_and_creates_nothing() {
    require_root();
    let pid = std::process::id();
    let lab = two_host_lab(&format!("u{pid}"), &format!("pu{}-", pid % 100_000));
    let dir = tempfile::tempdir().unwrap();
    let taken = lab.switch_if(&lab.hosts[1]);
    let _guard = Cleanup {
        netns: lab.hosts.iter().map(|h| lab.netns_name(&h.name)).collect(),
        links: vec![taken.clone()],
    };
    let peer = format!("{taken}q");
    ip(&[
        "link", "add", "dev", &taken, "type", "veth", "peer", "name", &peer,
    ])
    .unwrap();
    match lab_up_in(&lab, dir.path()) {
        Err(LabError::Exists { name, .. }) => assert_eq!(name, taken),
        other => panic!("expected Exists, got {other:?}"),
    }
    let ns = list_netns().unwrap();
    assert!(!ns.contains(&lab.netns_name("a")), "nothing created");
    assert!(
        link_exists(&taken),
        "the other owner's interface is untouched"
    );
    assert!(!Path::new(&dir.path().join(format!("{}.json", lab.name))).exists());
}

/// End to end: a lab, two AF_PACKET ports on its switch side and a plain repeater between
/// them (test scaffolding standing in for the switch) carry UDP between the hosts.
#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn lab_hosts_talk_through_afpacket_ports() {
    require_root();
    let pid = std::process::id();
    let lab = two_host_lab(&format!("p{pid}"), &format!("pp{}-", pid % 100_000));
    let dir = tempfile::tempdir().unwrap();
    let _guard = guard_for(&lab);
    let st = lab_up_in(&lab, dir.path()).unwrap();
    let specs = st.port_specs();
    let name = |i: usize| match &specs[i].1 {
        dataplane::PortSpec::AfPacket { ifname } => ifname.clone(),
        other => panic!("{other}"),
    };
    let mut p0 = AfPacketPort::open(&name(0)).unwrap();
    let mut p1 = AfPacketPort::open(&name(1)).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let repeater = std::thread::spawn(move || {
        let mut b = FrameBatch::new(32);
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            p0.wait_readable(Duration::from_millis(5)).unwrap();
            p0.recv_batch(&mut b, Nanos(0)).unwrap();
            p1.send_batch(&mut b, Nanos(0)).unwrap();
            p1.recv_batch(&mut b, Nanos(0)).unwrap();
            p0.send_batch(&mut b, Nanos(0)).unwrap();
        }
        (p0.stats(), p1.stats())
    });
    // UDP from host a to host b. Both kernels check the UDP checksum, so this also shows
    // the offloads are off (a partial checksum would not survive AF_PACKET forwarding).
    let rx_sock = in_netns(&st.host("b").unwrap().netns, || {
        std::net::UdpSocket::bind("192.168.77.2:7777")
    })
    .unwrap()
    .unwrap();
    rx_sock
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let tx_sock = in_netns(&st.host("a").unwrap().netns, || {
        std::net::UdpSocket::bind("192.168.77.1:0")
    })
    .unwrap()
    .unwrap();
    let mut received = Vec::new();
    for i in 0..3u8 {
        tx_sock.send_to(&[i; 100], "192.168.77.2:7777").unwrap();
        let mut buf = [0u8; 200];
        if let Ok((n, from)) = rx_sock.recv_from(&mut buf) {
            assert_eq!(from.to_string().split(':').next(), Some("192.168.77.1"));
            received.push(buf[..n].to_vec());
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let (s0, s1) = repeater.join().unwrap();
    lab_down_in(&lab.name, dir.path()).unwrap();
    assert_eq!(received, (0..3u8).map(|i| vec![i; 100]).collect::<Vec<_>>());
    assert!(s0.rx_packets >= 3 && s1.tx_packets >= 3, "{s0:?} {s1:?}");
    assert!(leftovers(&lab).is_empty());
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn failed_lab_up_rolls_back() {
    require_root();
    let pid = std::process::id();
    let mut lab = two_host_lab(&format!("r{pid}"), &format!("pr{}-", pid % 100_000));
    // Valid on paper, refused by the kernel: the next hop is not on any connected subnet.
    lab.hosts[1].routes.push(dataplane::lab::Route {
        to: "10.99.0.0/16".into(),
        via: "172.31.255.1".into(),
    });
    let dir = tempfile::tempdir().unwrap();
    let _guard = guard_for(&lab);
    let err = lab_up_in(&lab, dir.path()).unwrap_err();
    assert!(err.to_string().contains("172.31.255.1"), "{err}");
    assert!(
        leftovers(&lab).is_empty(),
        "left behind: {:?}",
        leftovers(&lab)
    );
    assert!(!dir.path().join(format!("{}.json", lab.name)).exists());
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn bundled_lab_comes_up_and_goes_down() {
    require_root();
    let lab = Lab::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/labs/l2l3-4hosts.yaml"
    )))
    .unwrap();
    assert!(
        leftovers(&lab).is_empty(),
        "the bundled lab {} is already up here; take it down (`pisa lab down {}`) to run this test",
        lab.name,
        lab.name
    );
    let dir = tempfile::tempdir().unwrap();
    let _guard = guard_for(&lab);
    let st = lab_up_in(&lab, dir.path()).unwrap();
    assert_eq!(leftovers(&lab).len(), 8);
    let specs: Vec<String> = st.port_specs().iter().map(|(_, s)| s.to_string()).collect();
    assert_eq!(
        specs,
        [
            "afpacket:l2l3p0",
            "afpacket:l2l3p1",
            "afpacket:l2l3p2",
            "afpacket:l2l3p3"
        ]
    );
    let out = st
        .exec("h4", &["ip", "route", "show", "10.0.0.0/16"])
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("via 10.0.3.254"));
    lab_down_in(&lab.name, dir.path()).unwrap();
    assert!(
        leftovers(&lab).is_empty(),
        "left behind: {:?}",
        leftovers(&lab)
    );
}

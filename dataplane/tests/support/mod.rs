//! Helpers shared by the root tests (`root_netns`, and those that move frames between two
//! ports over a veth pair: AF_XDP, DPDK, AF_PACKET rings): the root check ([`require_root`]),
//! two namespaces joined by a veth pair and their clean-up, numbered test frames, a bounded
//! collector and a comparison that does not dump kilobytes of bytes on failure.
//!
//! The root tests are `#[ignore = "needs root: ..."]`; CI runs them as root with
//! `--include-ignored`. Run without root they fail, saying why.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use dataplane::netns::{ip, is_root};
use dataplane::{FrameBatch, Nanos, Port};

/// Fails the test unless it runs as root (network namespaces, veth pairs, AF_PACKET, AF_XDP,
/// DPDK on them) with the `ip` command. The tests calling it are `#[ignore]`d, so this runs
/// only when asked for (`--include-ignored`), and then a test that cannot run must not pass.
pub fn require_root() {
    if !is_root() {
        panic!(
            "this test needs root (network namespaces, veth pairs, raw sockets); \
             run it as root or leave it ignored"
        );
    }
    if std::process::Command::new("ip").arg("-V").output().is_err() {
        panic!("this test needs the `ip` command (apt-get install iproute2)");
    }
}

/// Deletes the named network namespaces when dropped (also when a test fails).
pub struct Cleanup(pub Vec<String>);

impl Drop for Cleanup {
    fn drop(&mut self) {
        for n in &self.0 {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// Two namespaces `pisa-<tag><pid>-a` and `-b` joined by a veth pair `<ifp>a` / `<ifp>b` (MTU
/// 1500, no IPv6 link-local address, up); returns the clean-up guard and the namespace names.
pub fn veth_pair(tag: &str, ifp: &str) -> (Cleanup, String, String) {
    let pid = std::process::id();
    let (na, nb) = (format!("pisa-{tag}{pid}-a"), format!("pisa-{tag}{pid}-b"));
    let guard = Cleanup(vec![na.clone(), nb.clone()]);
    let (ia, ib) = (format!("{ifp}a"), format!("{ifp}b"));
    ip(&["netns", "add", &na]).unwrap();
    ip(&["netns", "add", &nb]).unwrap();
    ip(&[
        "-n", &na, "link", "add", "dev", &ia, "type", "veth", "peer", "name", &ib, "netns", &nb,
    ])
    .unwrap();
    for (ns, i) in [(&na, &ia), (&nb, &ib)] {
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
    (guard, na, nb)
}

/// Test frame `seq` of `len` bytes, ethertype 0x88b5, with a payload pattern that depends on
/// both the offset and `seq`.
pub fn frame(seq: u16, len: usize) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xbb]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xaa]);
    f[12..14].copy_from_slice(&0x88b5u16.to_be_bytes());
    f[14..16].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in f.iter_mut().enumerate().skip(16) {
        *b = (i as u8) ^ (seq as u8);
    }
    f
}

/// Compares without dumping kilobytes of bytes on failure.
pub fn same(got: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: frame count");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: frame {i} differs: got {} bytes starting {:02x?}, want {} bytes starting {:02x?}",
            got[i].len(),
            &got[i][..got[i].len().min(20)],
            want[i].len(),
            &want[i][..want[i].len().min(20)]
        );
    }
}

/// Receives test frames (ethertype 0x88b5) until `n` arrived or 3 s passed.
pub fn collect(port: &mut dyn Port, n: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut b = FrameBatch::new(64);
    let deadline = Instant::now() + Duration::from_secs(3);
    while got.len() < n && Instant::now() < deadline {
        port.wait_readable(Duration::from_millis(20)).unwrap();
        b.clear();
        port.recv_batch(&mut b, Nanos(0)).unwrap();
        got.extend(
            b.iter()
                .filter(|f| f.data.len() >= 14 && f.data[12..14] == [0x88, 0xb5])
                .map(|f| f.data.clone()),
        );
    }
    got
}

//! Golden test of `pisa run`: the bundled l2l3 captures through l2l3.p4 with its table file must
//! give exactly the frames worked out here by hand — built with etherparse, independently of
//! the emulator — on each port, and a second run must give bit-identical files.

use std::path::{Path, PathBuf};
use std::process::Command;

use etherparse::PacketBuilder;
use pcap_file::pcap::PcapReader;

#[allow(dead_code)]
#[path = "../examples/make_l2l3_captures.rs"]
mod captures;

const H3: [u8; 6] = [2, 0, 0, 0, 0, 3];
const H4: [u8; 6] = [2, 0, 0, 0, 0, 4];
const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `pisa ARGS` on l2l3.p4 with its table file and the two bundled captures.
fn l2l3_command(args: &[&str]) -> Command {
    let r = root();
    let mut c = Command::new(env!("CARGO_BIN_EXE_pisa"));
    c.args(args)
        .arg("--program")
        .arg(r.join("p4/programs/l2l3.p4"))
        .arg("--tables")
        .arg(r.join("p4/programs/l2l3.tables.yaml"))
        .arg("--in")
        .arg(format!("0={}", r.join("examples/l2l3/in0.pcap").display()))
        .arg("--in")
        .arg(format!("1={}", r.join("examples/l2l3/in1.pcap").display()));
    c
}

fn run_pisa(out: &Path) {
    let status = l2l3_command(&["run"])
        .arg("--out-dir")
        .arg(out)
        .status()
        .expect("pisa runs");
    assert!(status.success(), "pisa run failed: {status}");
}

fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = PcapReader::new(f).expect("a pcap file");
    let mut frames = Vec::new();
    while let Some(p) = r.next_packet() {
        frames.push(p.expect("a packet").data.into_owned());
    }
    frames
}

fn routed_udp(dst: [u8; 6], sip: [u8; 4], dip: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(ROUTER, dst)
        .ipv4(sip, dip, ttl)
        .udp(4000, 5000);
    let mut out = Vec::new();
    b.write(&mut out, payload).unwrap();
    out
}

fn routed_tcp(dst: [u8; 6], sip: [u8; 4], dip: [u8; 4], ttl: u8, dport: u16) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(ROUTER, dst)
        .ipv4(sip, dip, ttl)
        .tcp(40000, dport, 1, 65535);
    let mut out = Vec::new();
    b.write(&mut out, &[]).unwrap();
    out
}

/// Frames as the switch's MAC sends them: shorter than Ethernet's 60-byte minimum (64 with the
/// FCS), zero-padded to it (the 42-byte ARP request and the 54-byte TCP SYN here).
fn wire(frames: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    frames
        .into_iter()
        .map(|mut f| {
            if f.len() < 60 {
                f.resize(60, 0);
            }
            f
        })
        .collect()
}

fn tmp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pisa-golden-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn l2l3_captures_give_the_expected_frames_on_every_port() {
    let out = tmp_dir("a");
    run_pisa(&out);
    let in0 = captures::port0_frames();
    let in1 = captures::port1_frames();
    let (l2_h1_h2, arp, unknown) = (&in0[0], &in0[1], &in0[5]);

    // port 0 (h1): h2's L2 frame to h1, untouched.
    assert_eq!(
        read_pcap(&out.join("port0.pcap")),
        wire(vec![in1[0].clone()])
    );
    // port 1 (h2): the L2 frame from h1, the flooded ARP request and the flooded unknown unicast.
    assert_eq!(
        read_pcap(&out.join("port1.pcap")),
        wire(vec![l2_h1_h2.clone(), arp.clone(), unknown.clone()])
    );
    // port 2 (h3): flooded ARP, h1's routed UDP (TTL 64 -> 63, MACs rewritten), flooded unknown.
    assert_eq!(
        read_pcap(&out.join("port2.pcap")),
        wire(vec![
            arp.clone(),
            routed_udp(H3, [10, 0, 1, 1], [10, 0, 2, 3], 63, b"routed h1->h3"),
            unknown.clone(),
        ])
    );
    // port 3 (h4): flooded ARP, h2's routed UDP (TTL 17 -> 16), h1's TCP to port 80 (the ACL
    // denies only port 23), flooded unknown.
    assert_eq!(
        read_pcap(&out.join("port3.pcap")),
        wire(vec![
            arp.clone(),
            routed_udp(H4, [10, 0, 1, 2], [10, 0, 3, 4], 16, b"routed h2->h4"),
            routed_tcp(H4, [10, 0, 1, 1], [10, 0, 3, 4], 63, 80),
            unknown.clone(),
        ])
    );
    // Drops: telnet to h4 (ACL), TTL expiry, bad checksum — each logged — and the runt frame
    // the capture could not deliver.
    let log = std::fs::read_to_string(out.join("drops.log")).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.contains("port=0 ingress")).count(),
        3,
        "{log}"
    );
    assert!(
        log.contains(
            "input port=0 frame 9: not replayed: 10 bytes, shorter than an Ethernet header"
        ),
        "{log}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn the_same_inputs_give_bit_identical_outputs() {
    let a = tmp_dir("det-a");
    let b = tmp_dir("det-b");
    run_pisa(&a);
    run_pisa(&b);
    for name in [
        "port0.pcap",
        "port1.pcap",
        "port2.pcap",
        "port3.pcap",
        "drops.log",
    ] {
        let x = std::fs::read(a.join(name)).unwrap();
        let y = std::fs::read(b.join(name)).unwrap();
        assert_eq!(x, y, "{name} differs between two runs");
    }
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

fn pisa_text(args: &[&str]) -> String {
    let out = l2l3_command(args).output().expect("pisa runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    text
}

#[test]
fn explain_names_each_drops_table_or_condition_and_the_totals_add_up() {
    let dir = tmp_dir("explain");
    let text = pisa_text(&["run", "--explain", "--out-dir", dir.to_str().unwrap()]);
    // The ACL's deny (a table's action) and the TTL check (a condition around an action).
    assert!(
        text.contains("dropped: ingress_drop_ctl, set by table SwitchIngress.acl -> SwitchIngress.acl_deny (stage 2)"),
        "{text}"
    );
    assert!(
        text.contains("set by SwitchIngress.drop() under if (ig_md.ipv4_checksum_err || (hdr.ipv4.ttl <= 1)) -> true"),
        "{text}"
    );
    assert!(
        text.contains("11 record(s) in the captures = 10 replayed + 1 the switch cannot take"),
        "{text}"
    );
    assert!(
        text.contains(
            "10 frame(s) replayed = 7 forwarded + 3 dropped; the forwarded made 11 copies out"
        ),
        "{text}"
    );
    assert!(!text.contains("warning:"), "{text}");
    // The counter names what in the program can drop.
    assert!(
        text.contains("ingress_drop_ctl: 3 (the program's drop_ctl writers: table SwitchIngress.mac_dst -> SwitchIngress.drop,"),
        "{text}"
    );
    assert!(
        text.contains("table SwitchIngress.acl -> SwitchIngress.acl_deny, SwitchIngress.drop();"),
        "{text}"
    );
}

#[test]
fn trace_prints_addresses_conditions_and_stages_in_order() {
    // Packet 8: 10.0.1.1 -> 10.0.2.3 with TTL 1.
    let text = pisa_text(&["trace", "--packet", "8"]);
    assert!(
        text.contains("hdr.ethernet.dst_addr=02:00:00:00:00:fe"),
        "{text}"
    );
    assert!(
        text.contains("hdr.ipv4.src_addr=10.0.1.1, hdr.ipv4.dst_addr=10.0.2.3"),
        "{text}"
    );
    assert!(text.contains("hdr.ipv4.ttl=1,"), "{text}");
    // The default build forwards with generated code, and the trace says it traced that.
    assert!(text.contains("\nengine: native ("), "{text}");
    assert!(
        text.contains("    if (ig_md.ipv4_checksum_err || (hdr.ipv4.ttl <= 1)) -> true\n    action SwitchIngress.drop()"),
        "{text}"
    );
    let ingress = text.split("ingress deparser").next().unwrap();
    let stages: Vec<u32> = ingress
        .lines()
        .filter_map(|l| l.strip_prefix("  stage ")?.strip_suffix(':')?.parse().ok())
        .collect();
    assert!(stages.len() >= 2, "{text}");
    assert!(stages.windows(2).all(|w| w[0] < w[1]), "{stages:?}\n{text}");
}

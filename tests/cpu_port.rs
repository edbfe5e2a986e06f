//! `copy_to_cpu` copies leave on the CPU port in replay (`pisa run --in`) and in `pisa trace`,
//! as on a Tofino, which always has one: `--cpu-port` (default 64) says where.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::pcap::pcap;
use pcap_file::pcap::PcapReader;

const PISA: &str = env!("CARGO_BIN_EXE_pisa");

/// Every frame redirected to the CPU: a copy to the CPU port, the original dropped.
const REDIRECT: &str = r#"
#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> etype; }
struct hdr_t { ethernet_h eth; }
struct md_t { }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.eth); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    apply { tm.copy_to_cpu = 1; dm.drop_ctl = 1; }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t dm) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); pkt.extract(hdr.eth); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { pkt.emit(hdr); }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"#;

fn setup(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pisa-cpuport-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("redirect.p4"), REDIRECT).unwrap();
    let mut frame = vec![0xff; 6];
    frame.extend_from_slice(&[2, 0, 0, 0, 0, 1, 0x08, 0x06]);
    frame.resize(60, 0x78);
    std::fs::write(d.join("in.pcap"), pcap(65535, &[(60, frame)])).unwrap();
    d
}

fn pisa(d: &PathBuf, args: &[&str]) -> String {
    let out = Command::new(PISA)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{args:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// Records in a pcap file.
fn records(path: &PathBuf) -> usize {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut r = PcapReader::new(f).expect("a pcap file");
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        p.expect("a record");
        n += 1;
    }
    n
}

#[test]
fn replay_sends_copies_to_the_cpu_port() {
    let d = setup("run");
    let common = [
        "run",
        "--program",
        "redirect.p4",
        "--in",
        "0=in.pcap",
        "--out-dir",
    ];
    let text = pisa(&d, &[&common[..], &["out"]].concat());
    assert!(!text.contains("no_cpu_port"), "{text}");
    assert_eq!(records(&d.join("out/port64.pcap")), 1, "{text}");
    let text = pisa(&d, &[&common[..], &["out2", "--cpu-port", "1/2"]].concat());
    assert_eq!(records(&d.join("out2/port130.pcap")), 1, "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn trace_follows_the_copy_to_the_cpu_port() {
    let d = setup("trace");
    let text = pisa(
        &d,
        &["trace", "--program", "redirect.p4", "--in", "0=in.pcap"],
    );
    assert!(text.contains("=> port 64"), "{text}");
    assert!(!text.contains("no_cpu_port"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `pisa stf` runs with the CPU port too (default 64, `--cpu-port` to move it): a script
/// expects the copy there, and a copy it does not expect is reported as unexpected.
#[test]
fn stf_expects_copies_on_the_cpu_port() {
    let d = setup("stf");
    let frame = format!("FFFFFFFFFFFF0200000000010806{}", "78".repeat(46));
    std::fs::write(
        d.join("cpu.stf"),
        format!("packet 0 {frame}\nexpect 64 {frame}\n"),
    )
    .unwrap();
    std::fs::write(
        d.join("moved.stf"),
        format!("packet 0 {frame}\nexpect 130 {frame}\n"),
    )
    .unwrap();
    std::fs::write(d.join("none.stf"), format!("packet 0 {frame}\n")).unwrap();
    let text = pisa(&d, &["stf", "--program", "redirect.p4", "cpu.stf"]);
    assert!(text.contains("cpu.stf: ok"), "{text}");
    let moved = ["stf", "--program", "redirect.p4", "--cpu-port", "1/2"];
    let text = pisa(&d, &[&moved[..], &["moved.stf"]].concat());
    assert!(text.contains("moved.stf: ok"), "{text}");
    let out = Command::new(PISA)
        .current_dir(&d)
        .args(["stf", "--program", "redirect.p4", "none.stf"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("UNEXPECTED port 64"), "{text}");
    let _ = std::fs::remove_dir_all(&d);
}

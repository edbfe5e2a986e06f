//! Captures with a snap length (what `tcpdump -s` writes) and frames pisa does not replay:
//! `pisa rdma decode` and `pisa trace --packet PORT:N` number every record as tshark does,
//! say why one is skipped, and `decode --check` tells RoCEv2 from other traffic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::pcap::pcap;

const PISA: &str = env!("CARGO_BIN_EXE_pisa");

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// An RDMA WRITE ONLY frame with a good ICRC (rdma's ICRC test vector `rc-write-only`).
fn roce_write() -> Vec<u8> {
    unhex(
        "02000000000202000000000108004502004c12344000401114690a0000010a000002c12312b7003800000a\
         00ffff000000128000010000007f0000001000abcdef0100000010000102030405060708090a0b0c0d0e0f\
         227c6ea7",
    )
}

/// A fresh directory for one test.
fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pisa-capnum-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The test file: tshark's frame numbers 1..=8.
fn frames() -> Vec<(u32, Vec<u8>)> {
    let w = roce_write();
    let mut ihl4 = w.clone();
    ihl4[14] = 0x44; // IPv4 with IHL 4: other traffic, not malformed RoCEv2
    let mut arp = w.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]); // another EtherType
    vec![
        (0, Vec::new()),                // 1: an empty record
        (w.len() as u32, w.clone()),    // 2: RoCEv2, good
        (w.len() as u32, ihl4.clone()), // 3: other
        (1514, w[..60].to_vec()),       // 4: cut by the snap length
        (arp.len() as u32, arp),        // 5: other
        (w.len() as u32, w.clone()),    // 6: RoCEv2, good
        (60, ihl4[..60].to_vec()),      // 7: other
        (w.len() as u32, w),            // 8: RoCEv2, good
    ]
}

fn run(cmd: &mut Command) -> (Output, String) {
    let out = cmd.output().expect("run pisa");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out, text)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn decode_numbers_every_frame_and_tells_roce_from_other_traffic() {
    let dir = tempdir("decode");
    let f = write(&dir, "snap.pcap", &pcap(96, &frames()));
    let (out, text) = run(Command::new(PISA)
        .args(["rdma", "decode", "--check"])
        .arg(&f));
    assert!(
        out.status.success(),
        "non-RoCE frames do not fail the check: {text}"
    );
    let numbers: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(numbers, ["2", "4", "6", "8"], "{text}");
    assert!(
        text.contains("not checked: truncated: 60 of 1514"),
        "{text}"
    );
    assert!(
        text.contains(
            "8 frame(s): 3 RoCEv2 (0 bad ICRC), 0 malformed RoCEv2, 3 other, 2 truncated"
        ),
        "{text}"
    );
    assert!(!text.contains("MALFORMED"), "{text}");

    // A frame to UDP port 4791 that does not decode is malformed RoCEv2 and fails the check.
    let mut fr = frames();
    let w = roce_write();
    fr.push((58, w[..58].to_vec()));
    let f = write(&dir, "bad.pcap", &pcap(262_144, &fr));
    let (out, text) = run(Command::new(PISA)
        .args(["rdma", "decode", "--check"])
        .arg(&f));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("     9 RoCEv2 MALFORMED (58 bytes)"),
        "{text}"
    );
}

#[test]
fn trace_selects_frames_by_their_number_in_the_capture() {
    let dir = tempdir("trace");
    let f = write(&dir, "snap.pcap", &pcap(96, &frames()));
    let trace = |sel: &str| {
        run(Command::new(PISA)
            .arg("trace")
            .arg("--program")
            .arg(root().join("p4/programs/l2l3.p4"))
            .arg("--tables")
            .arg(root().join("p4/programs/l2l3.tables.yaml"))
            .arg("--in")
            .arg(format!("0={}", f.display()))
            .args(["--packet", sel]))
    };
    // 0:5 is the 6th record (tshark's frame 6), a RoCEv2 frame.
    let (out, text) = trace("0:5");
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("frame 5 of its capture, tshark's frame 6, 90 bytes"),
        "{text}"
    );
    // 0:3 is the frame cut by the snap length: named, not silently another frame.
    let (out, text) = trace("0:3");
    assert!(!out.status.success());
    assert!(
        text.contains(
            "frame 3 of port 0's capture (tshark's frame 4) is not replayed: truncated: 60 of 1514"
        ),
        "{text}"
    );
    let (out, text) = trace("0:0");
    assert!(!out.status.success());
    assert!(text.contains("shorter than an Ethernet header"), "{text}");
}

/// `pisa run` says why each capture record it does not replay is left out (it called an
/// oversize frame "too short or truncated"), numbered as tshark numbers them.
#[test]
fn run_names_why_each_frame_is_not_replayed() {
    let dir = tempdir("run");
    let mut records = frames();
    records.push((10_000, vec![0x02; 10_000])); // 9: longer than the largest frame
    let f = write(&dir, "snap.pcap", &pcap(65535, &records));
    let out_dir = dir.join("out");
    let (out, text) = run(Command::new(PISA)
        .arg("run")
        .arg("--program")
        .arg(root().join("p4/programs/l2l3.p4"))
        .arg("--tables")
        .arg(root().join("p4/programs/l2l3.tables.yaml"))
        .arg("--in")
        .arg(format!("0={}", f.display()))
        .arg("--out-dir")
        .arg(&out_dir));
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("input port 0: 3 frame(s) of the capture not replayed (frame 1: 0 bytes, shorter than an Ethernet header"),
        "{text}"
    );
    let log = std::fs::read_to_string(out_dir.join("drops.log")).unwrap();
    assert!(
        log.contains("frame 4: not replayed: truncated: 60 of 1514"),
        "{log}"
    );
    assert!(
        log.contains("frame 9: not replayed: 10000 bytes, longer than the largest frame"),
        "{log}"
    );
}

/// `--pipes` holds in capture replay as in live mode: a count the chip lacks is refused, and
/// so is an input on a port of a pipe the switch does not have.
#[test]
fn run_replays_on_the_pipes_asked_for() {
    let dir = tempdir("pipes");
    let f = write(&dir, "in.pcap", &pcap(65535, &frames()[1..2]));
    let run_with = |pipes: &str, port: u16| {
        run(Command::new(PISA)
            .arg("run")
            .arg("--program")
            .arg(root().join("p4/programs/l2l3.p4"))
            .args(["--pipes", pipes])
            .arg("--in")
            .arg(format!("{port}={}", f.display()))
            .arg("--out-dir")
            .arg(dir.join(format!("out{pipes}-{port}"))))
    };
    let (out, text) = run_with("99", 0);
    assert!(!out.status.success());
    assert!(text.contains("Tofino has 1 to 4"), "{text}");
    let (out, text) = run_with("1", 130);
    assert!(!out.status.success());
    assert!(text.contains("input for port 130"), "{text}");
    let (out, text) = run_with("2", 130);
    assert!(out.status.success(), "{text}");
}

fn have_tshark() -> bool {
    Command::new("tshark").arg("--version").output().is_ok()
}

#[test]
#[ignore = "needs tshark (apt-get install tshark)"]
fn decode_frame_numbers_are_tsharks() {
    assert!(have_tshark(), "tshark is not installed");
    let dir = tempdir("tshark");
    let f = write(&dir, "snap.pcap", &pcap(96, &frames()));
    let ts = Command::new("tshark")
        .arg("-r")
        .arg(&f)
        .args([
            "-d",
            "udp.port==4791,infiniband",
            "-Y",
            "udp.dstport==4791",
            "-T",
            "fields",
            "-e",
            "frame.number",
        ])
        .output()
        .unwrap();
    let tshark: Vec<String> = String::from_utf8_lossy(&ts.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    let (out, _) = run(Command::new(PISA).args(["rdma", "decode"]).arg(&f));
    let ours: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(ours, tshark, "{}", String::from_utf8_lossy(&ts.stderr));
}

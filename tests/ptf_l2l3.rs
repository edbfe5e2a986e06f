//! The PTF suite for l2l3.p4 (`tests/ptf/l2l3_test.py`: bridged, routed, no route, ACL with a
//! direct counter, flood through a multicast group) against `pisa run --p4runtime` on veth
//! pairs, every table programmed over P4Runtime by p4runtime-shell from inside the tests.
//!
//! Needs root (veth pairs, AF_PACKET) and python3 with ptf and p4runtime-shell (scripts/test.sh
//! installs them as root). `PISA_PTF` names the `ptf` command to use (default: `ptf`).

mod common;

use std::path::Path;
use std::process::Command;

use common::{free_addr, require_root, run_p4runtime, write_p4info, ROOT};

/// Removes the veth pairs on drop.
struct Veths(Vec<String>);

impl Drop for Veths {
    fn drop(&mut self) {
        for v in &self.0 {
            let _ = Command::new("ip").args(["link", "del", v]).status();
        }
    }
}

fn sh(cmd: &str) {
    let st = Command::new("sh").args(["-c", cmd]).status().unwrap();
    assert!(st.success(), "{cmd}");
}

#[test]
#[ignore = "needs root (veth pairs, AF_PACKET) and python3 with ptf and p4runtime-shell (pip install ptf p4runtime-shell)"]
fn ptf_suite_passes_against_pisa_over_p4runtime() {
    require_root();
    let ptf = std::env::var("PISA_PTF").unwrap_or_else(|_| "ptf".into());
    assert!(
        Command::new(&ptf)
            .arg("--help")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs PTF (pip install ptf)"
    );
    let mut veths = Veths(Vec::new());
    for i in 0..4 {
        let (s, h) = (format!("ptfsw{i}"), format!("ptfhs{i}"));
        let _ = Command::new("ip").args(["link", "del", &s]).output();
        sh(&format!("ip link add {s} type veth peer name {h}"));
        veths.0.push(s.clone());
        for d in [&s, &h] {
            sh(&format!(
                "ip link set {d} up && sysctl -qw net.ipv6.conf.{d}.disable_ipv6=1 && \
                 (ethtool -K {d} tx off rx off gso off tso off gro off >/dev/null 2>&1 || true)"
            ));
        }
    }
    let dir = std::env::temp_dir().join(format!("pisa-ptf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = Path::new(ROOT).join("p4/programs/l2l3.p4");
    let p4info = dir.join("l2l3.p4info.txt");
    write_p4info(&program, &p4info);
    let addr = free_addr();
    let ports: Vec<String> = (0..4).map(|i| format!("{i}=afpacket:ptfsw{i}")).collect();
    let mut pisa = run_p4runtime(&program, &ports, &addr, &dir);
    let mut ptf_cmd = Command::new(&ptf);
    ptf_cmd
        .arg("--test-dir")
        .arg(Path::new(ROOT).join("tests/ptf"))
        .arg("--log-dir")
        .arg(dir.join("ptf-log"));
    for i in 0..4 {
        ptf_cmd.arg("--interface").arg(format!("{i}@ptfhs{i}"));
    }
    let out = ptf_cmd
        .arg("--test-params")
        .arg(format!(
            "grpc_addr='{addr}';p4info='{}';program='{}'",
            p4info.display(),
            program.display()
        ))
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, _, err) = pisa.terminate();
    assert!(out.status.success(), "PTF failed:\n{text}\npisa:\n{err}");
    assert!(text.contains("Ran 5 tests"), "{text}");
    drop(veths);
    let _ = std::fs::remove_dir_all(&dir);
}

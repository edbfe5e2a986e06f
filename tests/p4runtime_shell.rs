//! p4runtime-shell (PyPI), a P4Runtime client pisa did not write, drives `pisa run
//! --p4runtime`: it pushes l2l3.p4 with the P4Info `pisa p4info` made (SetForwardingPipelineConfig),
//! inserts the four-host lab's MACs, routes, next hops and ACL, a multicast group and a clone
//! session, reads them back and gets ALREADY_EXISTS for a duplicate. As root, the same entries
//! programmed into a switch on the namespace lab carry pings (bridged and routed).
//!
//! With a veth pair, p4runtime-shell sends a packet-out with metadata and receives a packet-in
//! with metadata (control/tests/data/cpu_punt.p4). finsy (PyPI) does the inserts and reads
//! through its asyncio client.
//!
//! Needs python3 with p4runtime-shell (`pip install p4runtime-shell`; scripts/test.sh installs
//! it as root); `PISA_PYTHON` names another interpreter (e.g. a virtualenv's). finsy wants a
//! newer protobuf than p4runtime-shell, so it has its own: `PISA_FINSY_PYTHON`, default the
//! virtualenv scripts/test.sh makes (`/opt/pisa/finsy/bin/python`).

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::{
    free_addr, ping, require_ping, require_root, run_p4runtime, start_on, wait_listening,
    write_p4info, Pisa, PISA, ROOT,
};
use serde_json::Value as Json;

fn python() -> String {
    std::env::var("PISA_PYTHON").unwrap_or_else(|_| "python3".into())
}

fn require_shell() {
    let ok = Command::new(python())
        .args(["-c", "import p4runtime_sh.shell"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "this test needs python3 with p4runtime-shell (pip install p4runtime-shell)"
    );
}

/// Runs the programming script against `addr`; its JSON summary.
fn program(addr: &str, extra: &[&str]) -> Json {
    let script = Path::new(ROOT).join("tests/p4runtime/program_l2l3.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(addr)
        .args(extra)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "p4runtime-shell script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn check(summary: &Json) {
    let t = &summary["tables"];
    assert_eq!(t["SwitchIngress.mac_dst"], 4, "{summary}");
    assert_eq!(t["SwitchIngress.router_mac"], 1, "{summary}");
    assert_eq!(t["SwitchIngress.ipv4_lpm"], 4, "{summary}");
    assert_eq!(t["SwitchIngress.nexthop"], 4, "{summary}");
    assert_eq!(t["SwitchIngress.acl"], 1, "{summary}");
    assert_eq!(t["SwitchEgress.port_smac"], 4, "{summary}");
    assert_eq!(
        summary["routes"],
        serde_json::json!([
            ["0a000101", 32],
            ["0a000102", 32],
            ["0a000200", 24],
            ["0a000300", 24]
        ])
    );
    assert_eq!(summary["groups"], serde_json::json!([[0, 1]]));
    assert_eq!(summary["clone_sessions"], serde_json::json!([9]));
    let dup = summary["duplicate"].as_str().unwrap();
    assert!(dup.contains("ALREADY_EXISTS"), "{dup}");
}

#[test]
#[ignore = "needs python3 with p4runtime-shell (pip install p4runtime-shell; CI installs it)"]
fn p4runtime_shell_programs_l2l3_and_reads_it_back() {
    require_shell();
    let dir = tempfile_dir("p4rt-shell");
    let p4info = dir.join("l2l3.p4info.txt");
    let program_path = Path::new(ROOT).join("p4/programs/l2l3.p4");
    write_p4info(&program_path, &p4info);
    let addr = free_addr();
    let mut pisa = run_p4runtime(&program_path, &["1=mem:p4rt-test".into()], &addr, &dir);
    let config = format!("{},{}", p4info.display(), program_path.display());
    let summary = program(&addr, &["--config", &config]);
    check(&summary);
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "pisa did not stop cleanly: {out}{err}");
    assert!(err.contains("P4Runtime on"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// p4runtime-shell writes and reads the direct counter of switch.p4's `acl` default entry
/// (spec: the default entry has direct resources): as `counter_data` of the default
/// TableEntry, and through a DirectCounterEntry whose table entry is the default one.
#[test]
#[ignore = "needs python3 with p4runtime-shell (pip install p4runtime-shell; CI installs it)"]
fn p4runtime_shell_writes_and_reads_the_default_entrys_direct_counter() {
    require_shell();
    let dir = tempfile_dir("p4rt-default-counter");
    let program_path = Path::new(ROOT).join("p4/programs/switch.p4");
    let addr = free_addr();
    let mut pisa = run_p4runtime(&program_path, &["1=mem:p4rt-dc".into()], &addr, &dir);
    let script = Path::new(ROOT).join("tests/p4runtime/default_counter.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(&addr)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "p4runtime-shell script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout.lines().last().unwrap_or_default();
    let got: Json = serde_json::from_str(last).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(got["before"], serde_json::json!([[0, 0, true]]), "{got}");
    assert_eq!(
        got["after_table_entry_write"],
        serde_json::json!([[7, 700, true]]),
        "{got}"
    );
    assert_eq!(
        got["after_direct_counter_write"],
        serde_json::json!([[3, 300, true]]),
        "{got}"
    );
    assert_eq!(
        got["default_entry"],
        serde_json::json!([[3, 300, true]]),
        "{got}"
    );
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "pisa did not stop cleanly: {out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn tempfile_dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pisa-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
#[ignore = "needs root (network namespaces, veth pairs, AF_PACKET), ping, and python3 with p4runtime-shell"]
fn entries_from_p4runtime_shell_carry_pings_across_the_namespace_lab() {
    require_root();
    require_ping();
    require_shell();
    let dir = tempfile_dir("p4rt-lab");
    // Only the multicast part of the bundled table file: every table entry comes over
    // P4Runtime.
    let bundled =
        std::fs::read_to_string(Path::new(ROOT).join("p4/programs/l2l3.tables.yaml")).unwrap();
    let pre = &bundled[bundled
        .find("\nmulticast:")
        .expect("bundled multicast section")..];
    let tables = dir.join("pre-only.yaml");
    std::fs::write(&tables, pre).unwrap();
    let addr = free_addr();
    let (lab, mut pisa) = start_on(
        "p4rtping",
        "p4rp",
        [0, 1, 2, 3],
        Some(&tables),
        |_, ifname| format!("afpacket:{ifname}"),
        &["--p4runtime", &addr],
    );
    wait_listening(&mut pisa, &addr);
    assert!(
        !ping(&lab, "h1", "10.0.2.3", 1),
        "no route before P4Runtime programs one"
    );
    let summary = program(&addr, &[]);
    check(&summary);
    assert!(ping(&lab, "h1", "10.0.1.2", 3), "h1 -> h2 (bridged)");
    assert!(ping(&lab, "h1", "10.0.2.3", 3), "h1 -> h3 (routed)");
    assert!(ping(&lab, "h4", "10.0.1.2", 3), "h4 -> h2 (routed)");
    drop(pisa);
    drop(lab);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs root (network namespaces, veth pairs, AF_PACKET) and python3 with p4runtime-shell"]
fn every_lab_switch_serves_p4runtime() {
    require_root();
    require_shell();
    let base = free_addr();
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let topo = Path::new(ROOT).join("deploy/labs/leaf-spine.yaml");
    let child = Command::new(PISA)
        .args(["lab", "run"])
        .arg(&topo)
        .args(["--netns", "--duration", "20", "--p4runtime", &base])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lab = Pisa {
        child: Some(child),
        ctl: tempfile_dir("p4rt-labrun").join("unused.sock"),
    };
    // The last of the six switches (leaf4) listens on port + 5.
    wait_listening(&mut lab, &format!("127.0.0.1:{}", port + 5));
    let script = format!(
        "import p4runtime_sh.shell as sh\n\
         for port in ({port}, {}):\n\
         \x20   sh.setup(device_id=1, grpc_addr='127.0.0.1:%d' % port, election_id=(0, 1))\n\
         \x20   n = sum(len(list(sh.TableEntry(t.name).read())) for t in sh.P4Objects(sh.P4Type.table))\n\
         \x20   print(port, n)\n\
         \x20   sh.teardown()\n",
        port + 5
    );
    let out = Command::new(python())
        .args(["-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Each switch answers with the entries the lab generated for it (fabric.p4 routes).
    let counts: Vec<u64> = stdout
        .lines()
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect();
    assert_eq!(counts.len(), 2, "{stdout}");
    assert!(counts.iter().all(|n| *n > 0), "{stdout}");
    let (_, _, err) = lab.terminate();
    assert!(err.contains("serves P4Runtime on"), "{err}");
}

fn finsy_python() -> String {
    std::env::var("PISA_FINSY_PYTHON").unwrap_or_else(|_| "/opt/pisa/finsy/bin/python".into())
}

#[test]
#[ignore = "needs python3 with finsy (scripts/test.sh makes /opt/pisa/finsy; or PISA_FINSY_PYTHON)"]
fn finsy_programs_l2l3_and_reads_it_back() {
    let ok = Command::new(finsy_python())
        .args(["-c", "import finsy"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "this test needs python3 with finsy (pip install finsy)");
    let dir = tempfile_dir("p4rt-finsy");
    let p4info = dir.join("l2l3.p4info.txt");
    let program_path = Path::new(ROOT).join("p4/programs/l2l3.p4");
    write_p4info(&program_path, &p4info);
    let addr = free_addr();
    let mut pisa = run_p4runtime(&program_path, &["1=mem:p4rt-finsy".into()], &addr, &dir);
    let out = Command::new(finsy_python())
        .arg(Path::new(ROOT).join("tests/p4runtime/finsy_l2l3.py"))
        .arg(&addr)
        .arg(&p4info)
        .arg(&program_path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "finsy script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        v["SwitchIngress.ipv4_lpm"],
        serde_json::json!([["set_nexthop", {"dst_addr": "(167772672, 24)"}]]),
        "{v}"
    );
    assert_eq!(v["SwitchIngress.nexthop"][0][0], "forward_l3", "{v}");
    assert_eq!(v["SwitchIngress.mac_dst"][0][0], "set_port", "{v}");
    assert_eq!(v["counter"], serde_json::json!([0]), "{v}");
    assert!(
        v["duplicate"].as_str().unwrap().contains("ALREADY_EXISTS"),
        "{v}"
    );
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "pisa did not stop cleanly: {out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn p4info_formats_agree() {
    use control::p4runtime::proto::p4::config::v1::P4Info;
    use prost::Message;
    let dir = tempfile_dir("p4info-formats");
    let program = Path::new(ROOT).join("p4/programs/l2l3.p4");
    let run = |format: &str| {
        let out = dir.join(format!("l2l3.{format}"));
        let st = Command::new(PISA)
            .arg("p4info")
            .arg(&program)
            .args(["--format", format, "-o"])
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "pisa p4info --format {format}");
        std::fs::read(out).unwrap()
    };
    let binary = P4Info::decode(run("binary").as_slice()).unwrap();
    let text: P4Info = control::p4runtime::format::from_text(
        "p4.config.v1.P4Info",
        std::str::from_utf8(&run("text")).unwrap(),
    )
    .unwrap();
    assert_eq!(text, binary);
    let json: Json = serde_json::from_slice(&run("json")).unwrap();
    assert_eq!(
        json["tables"].as_array().unwrap().len(),
        binary.tables.len()
    );
    assert_eq!(
        json["tables"][0]["preamble"]["name"],
        "SwitchIngress.mac_dst"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs root (a veth pair, AF_PACKET) and python3 with p4runtime-shell and scapy"]
fn p4runtime_shell_packet_out_and_packet_in_with_metadata() {
    require_root();
    require_shell();
    let (sw, host) = ("p4iosw0", "p4iohs0");
    let _ = Command::new("ip").args(["link", "del", sw]).output();
    let up = Command::new("sh")
        .args([
            "-c",
            &format!(
                "ip link add {sw} type veth peer name {host} && ip link set {sw} up && \
                 ip link set {host} up && sysctl -qw net.ipv6.conf.{sw}.disable_ipv6=1 && \
                 sysctl -qw net.ipv6.conf.{host}.disable_ipv6=1"
            ),
        ])
        .status()
        .unwrap();
    assert!(up.success(), "veth pair");
    struct Del(&'static str);
    impl Drop for Del {
        fn drop(&mut self) {
            let _ = Command::new("ip").args(["link", "del", self.0]).status();
        }
    }
    let _veth = Del(sw);
    let dir = tempfile_dir("p4rt-pio");
    let program = Path::new(ROOT).join("control/tests/data/cpu_punt.p4");
    let p4info = dir.join("cpu_punt.p4info.txt");
    write_p4info(&program, &p4info);
    let addr = free_addr();
    let mut pisa = run_p4runtime(&program, &[format!("1=afpacket:{sw}")], &addr, &dir);
    let out = Command::new(python())
        .arg(Path::new(ROOT).join("tests/p4runtime/packet_io.py"))
        .arg(&addr)
        .arg(&p4info)
        .arg(&program)
        .arg(host)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(
        v["packet_out_seen"],
        serde_json::json!([v["packet_out_sent"]]),
        "the packet-out left on port 1 without its header: {v}"
    );
    assert_eq!(v["packet_in"][0]["payload"], v["packet_in_sent"], "{v}");
    assert_eq!(
        v["packet_in"][0]["metadata"]["1"], "01",
        "ingress_port = 1, as the shortest bytestring: {v}"
    );
    let _ = pisa.terminate();
    let _ = std::fs::remove_dir_all(&dir);
}

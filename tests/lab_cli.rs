//! `pisa lab` on the shipped topologies, as a user runs it: ping-all in memory and (root) in
//! network namespaces with its JSON report and exit code, table generation, captures, bad
//! topology files named with file:line, and a topology lab's up / status / run / down.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{require_root, PISA, ROOT};
use serde_json::Value as Json;

fn pisa(args: &[&str]) -> Output {
    Command::new(PISA)
        .args(args)
        .current_dir(ROOT)
        .output()
        .expect("run pisa")
}

fn ping_all_json(topology: &str, netns: bool) -> (Json, Output) {
    let mut args = vec!["lab", "ping-all", topology, "--report", "json"];
    if netns {
        args.push("--netns");
    }
    let out = pisa(&args);
    let v: Json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{topology}: not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (v, out)
}

fn assert_all_reached(topology: &str, netns: bool, pairs: u64, switches: usize) {
    let (v, out) = ping_all_json(topology, netns);
    assert!(out.status.success(), "{topology}: {v}");
    assert_eq!(v["pairs"], pairs, "{topology}: {v}");
    assert_eq!(v["reached"], pairs, "{topology}: {v}");
    assert_eq!(v["unreached"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["switches"].as_object().map(|m| m.len()), Some(switches));
}

#[test]
fn ping_all_in_memory_reaches_every_pair_of_the_shipped_fabrics() {
    assert_all_reached("deploy/labs/fat-tree-k4.yaml", false, 240, 20);
    assert_all_reached("deploy/labs/leaf-spine.yaml", false, 56, 6);
    assert_all_reached("deploy/labs/mcrdma-testbed.yaml", false, 56, 3);
}

#[test]
fn ping_all_fails_and_names_the_pairs_when_a_host_is_cut_off() {
    let dir = std::env::temp_dir().join(format!("pisa-lab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/labs/leaf-spine.yaml"))
        .unwrap()
        .replace("../../p4/programs", &format!("{ROOT}/p4/programs"))
        .replace(
            "{ a: h3, b: \"leaf2:0\" }",
            "{ a: h3, b: \"leaf2:0\", up: false }",
        );
    let file = dir.join("cut.yaml");
    std::fs::write(&file, text).unwrap();
    let (v, out) = ping_all_json(file.to_str().unwrap(), false);
    assert_eq!(out.status.code(), Some(1), "{v}");
    assert_eq!(v["reached"], 42, "{v}");
    let unreached: Vec<&str> = v["unreached"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Json::as_str)
        .collect();
    assert_eq!(unreached.len(), 14);
    assert!(unreached.iter().all(|p| p.split("->").any(|h| h == "h3")));

    // A bad file: exit non-zero, file:line:column and the reason.
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "name: bad\ndefaults: { program: x.p4 }\nswitches:\n  - { name: s1 }\nhosts:\n  - { name: h1, ipv4: 10.0.0.1/24 }\nlinks:\n  - { a: h1, b: \"s2:0\" }\n",
    )
    .unwrap();
    let out = pisa(&["lab", "ping-all", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("bad.yaml:8:"), "{err}");
    assert!(err.contains("no switch \"s2\""), "{err}");
    // A program that does not compile is named with the switch's line.
    std::fs::write(dir.join("x.p4"), "control C() { apply { nope; } }\n").unwrap();
    std::fs::write(
        dir.join("bad2.yaml"),
        "name: bad2\ndefaults: { program: x.p4 }\nswitches:\n  - { name: s1 }\nhosts:\n  - { name: h1, ipv4: 10.0.0.1/24 }\nlinks:\n  - { a: h1, b: \"s1:0\" }\n",
    )
    .unwrap();
    let out = pisa(&["lab", "ping-all", dir.join("bad2.yaml").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("bad2.yaml:4: switch s1"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tables_and_captures_are_written() {
    let dir = std::env::temp_dir().join(format!("pisa-lab-tables-{}", std::process::id()));
    let out = pisa(&[
        "lab",
        "tables",
        "deploy/labs/fat-tree-k4.yaml",
        "--out-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(files.len(), 20);
    // Each file is a table-state file `pisa run --tables` takes.
    let edge = dir.join("e0-0.tables.yaml");
    let t = control::tables_file::load(&edge).unwrap();
    let routes = t
        .tables
        .iter()
        .find(|s| s.table.item == "SwitchIngress.routes")
        .unwrap();
    assert_eq!(routes.entries.len(), 16);
    let out = pisa(&[
        "run",
        "--program",
        "p4/programs/fabric.p4",
        "--tables",
        edge.to_str().unwrap(),
        "--in",
        "0=examples/l2l3/in0.pcap",
        "--out-dir",
        dir.join("out").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let cap = dir.join("h1.pcap");
    let out = pisa(&[
        "lab",
        "capture",
        "deploy/labs/leaf-spine.yaml",
        "h1",
        cap.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&cap).unwrap()).unwrap();
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        p.unwrap();
        n += 1;
    }
    assert_eq!(n, 14, "h1 sends 7 and receives 7");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn ping_all_in_namespaces_reaches_every_pair_of_the_shipped_fabrics() {
    require_root();
    assert_all_reached("deploy/labs/fat-tree-k4.yaml", true, 240, 20);
    assert_all_reached("deploy/labs/leaf-spine.yaml", true, 56, 6);
    assert_all_reached("deploy/labs/mcrdma-testbed.yaml", true, 56, 3);
    // Nothing is left behind.
    let ns = String::from_utf8_lossy(
        &Command::new("ip")
            .args(["netns", "list"])
            .output()
            .unwrap()
            .stdout,
    )
    .into_owned();
    assert!(!ns.contains("pisa-leaf-spine-"), "{ns}");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn a_topology_lab_comes_up_runs_its_switches_and_goes_down() {
    require_root();
    // A lab of its own (ping-all above brings the shipped ones up and down meanwhile).
    let dir = std::env::temp_dir().join(format!("pisa-lab-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/labs/mcrdma-testbed.yaml"))
        .unwrap()
        .replace("../../p4/programs", &format!("{ROOT}/p4/programs"))
        .replace("name: mcrdma-testbed", "name: lab-cli-run");
    let file = dir.join("run.yaml");
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let up = pisa(&["lab", "up", file]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    struct Down(std::path::PathBuf);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = pisa(&["lab", "down", "lab-cli-run"]);
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _down = Down(dir.clone());
    let st = pisa(&["lab", "status", "lab-cli-run"]);
    let text = String::from_utf8_lossy(&st.stdout);
    assert!(text.contains("8 namespace(s)"), "{text}");
    // Switches on the lab that is up; a host pings across the aggregation switch meanwhile.
    let mut run = Command::new(PISA)
        .args(["lab", "run", file, "--netns", "--duration", "5"])
        .current_dir(ROOT)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // `lab run` prints `ready` once its switches forward (building them takes a while on a
    // loaded machine: a fixed wait made this test flaky); the rest of its output comes after.
    let mut stdout = std::io::BufReader::new(run.stdout.take().unwrap());
    let mut early = String::new();
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        assert!(n > 0, "`lab run` ended before it was ready: {early}");
        early += &line;
        if line.trim() == "ready" {
            break;
        }
    }
    let ping = pisa(&[
        "lab",
        "exec",
        "lab-cli-run",
        "a1",
        "--",
        "ping",
        "-c",
        "2",
        "-W",
        "1",
        "10.0.2.10",
    ]);
    let mut text = early;
    std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
    let status = run.wait().unwrap();
    assert!(
        ping.status.success(),
        "{}",
        String::from_utf8_lossy(&ping.stdout)
    );
    assert!(status.success());
    assert!(text.contains("agg"), "{text}");
    // The lab was up before `run`, so it is still up after it.
    assert!(pisa(&["lab", "status", "lab-cli-run"]).status.success());
}

//! `pisa onepipe bench` as a user runs it: reliable 1Pipe on the k=4 fat tree (16 processes,
//! all-to-all) under 1e-3 loss, the JSON report, and the JSONL logs checked from the files:
//! every pair of receivers delivers its common messages in one order, timestamps never go
//! backwards, nothing twice, and every message sent reached every destination.

mod common;

use std::collections::{HashMap, HashSet};
use std::process::Command;

use common::{PISA, ROOT};
use serde_json::Value as Json;

fn lines(path: &std::path::Path) -> Vec<Json> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn reliable_bench_under_loss_logs_one_total_order() {
    let dir = std::env::temp_dir().join(format!("pisa-onepipe-cli-{}", std::process::id()));
    let out = Command::new(PISA)
        .args([
            "onepipe",
            "bench",
            "--topology",
            "deploy/labs/fat-tree-k4.yaml",
        ])
        .args([
            "--mode",
            "reliable",
            "--loss",
            "0.001",
            "--beacon-interval-us",
            "3",
        ])
        .args(["--report", "json", "--log-dir"])
        .arg(&dir)
        .current_dir(ROOT)
        .output()
        .expect("run pisa");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let r = &v.as_array().expect("one report per interval")[0];
    assert_eq!(r["checks_passed"], true, "{r}");
    assert_eq!(r["processes"], 16);

    let mut orders: HashMap<String, Vec<(u64, String)>> = HashMap::new();
    let mut sent = 0;
    for i in 1..=16 {
        let name = format!("h{i}");
        let d = lines(&dir.join(format!("deliveries-{name}.jsonl")));
        let order: Vec<(u64, String)> = d
            .iter()
            .map(|l| {
                (
                    l["ts"].as_u64().unwrap(),
                    l["src"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let unique: HashSet<_> = order.iter().collect();
        assert_eq!(
            unique.len(),
            order.len(),
            "{name} delivered something twice"
        );
        assert!(
            order.windows(2).all(|w| w[0] < w[1]),
            "{name} against timestamps"
        );
        for s in lines(&dir.join(format!("sends-{name}.jsonl"))) {
            sent += s["dsts"].as_array().unwrap().len();
        }
        orders.insert(name, order);
    }
    let delivered: usize = orders.values().map(Vec::len).sum();
    assert_eq!(
        delivered, sent,
        "reliable: every message reached every destination"
    );
    let names: Vec<&String> = orders.keys().collect();
    for a in &names {
        for b in &names {
            let in_b: HashSet<_> = orders[*b].iter().collect();
            let in_a: HashSet<_> = orders[*a].iter().collect();
            let ca: Vec<_> = orders[*a].iter().filter(|m| in_b.contains(m)).collect();
            let cb: Vec<_> = orders[*b].iter().filter(|m| in_a.contains(m)).collect();
            assert_eq!(ca, cb, "{a} and {b} disagree on the order");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `pisa onepipe scaling` and `pisa onepipe kv` as a user runs them: JSON with every scheme's
/// checks passed, and a clear error for a bad process count.
#[test]
fn scaling_and_kv_report_checked_runs_and_refuse_bad_input() {
    let run = |args: &[&str]| {
        Command::new(PISA)
            .args(args)
            .current_dir(ROOT)
            .output()
            .expect("pisa runs")
    };
    let out = run(&[
        "onepipe",
        "scaling",
        "--processes",
        "4",
        "--duration",
        "0.0006",
        "--report",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    let schemes: Vec<&str> = v
        .as_array()
        .expect("one point per scheme")
        .iter()
        .map(|p| {
            assert_eq!(p["checks_passed"], true, "{p}");
            p["scheme"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        schemes,
        ["1Pipe/BE", "switch sequencer", "token", "Lamport"]
    );

    let out = run(&[
        "onepipe",
        "kv",
        "--processes",
        "4",
        "--key-space",
        "8",
        "--duration",
        "0.0006",
        "--report",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Json = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["checks_passed"] == true));

    let out = run(&["onepipe", "scaling", "--processes", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--processes"), "{err}");
}

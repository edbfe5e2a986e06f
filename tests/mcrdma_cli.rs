//! `pisa mcrdma bench` as a user runs it: MC-RDMA, fanout and chain on the paper's testbed with
//! 1/1024 loss on the long path, the JSON report, and the dumped regions identical across the
//! sender and every receiver.

mod common;

use std::process::Command;

use common::{PISA, ROOT};
use serde_json::Value as Json;

#[test]
fn bench_with_loss_dumps_identical_regions_and_reports_every_mode() {
    let dir = std::env::temp_dir().join(format!("pisa-mcrdma-cli-{}", std::process::id()));
    let out = Command::new(PISA)
        .args([
            "mcrdma",
            "bench",
            "--topology",
            "deploy/labs/mcrdma-testbed.yaml",
            "--mode",
            "mcrdma,fanout,chain",
            "--receivers",
            "2",
            "--size",
            "4096",
            "--iodepth",
            "8",
            "--loss",
            "0.0009765625",
            "--loss-link",
            "a2-tor2",
            "--duration",
            "0.002",
            "--report",
            "json",
            "--dump-dir",
        ])
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
    let runs = v.as_array().expect("one report per mode");
    assert_eq!(runs.len(), 3);
    for r in runs {
        assert_eq!(r["identical"], true, "{r}");
        assert!(r["ops"].as_u64().unwrap() > 0, "{r}");
        assert!(
            r["sender_uplink_bytes_per_replicated_byte"]
                .as_f64()
                .unwrap()
                > 1.0
        );
    }
    let ratio = |m: &str| {
        runs.iter().find(|r| r["mode"] == m).unwrap()["sender_uplink_bytes_per_replicated_byte"]
            .as_f64()
            .unwrap()
    };
    // Fanout sends every byte twice, MC-RDMA once; and posts and polls twice as much.
    assert!(ratio("fanout") > 1.8 * ratio("mcrdma"));
    let verbs = |m: &str| {
        runs.iter().find(|r| r["mode"] == m).unwrap()["sender_verbs_calls_per_op"]
            .as_f64()
            .unwrap()
    };
    assert!(verbs("fanout") > 1.8 * verbs("mcrdma"), "{v}");
    for mode in ["mcrdma", "fanout", "chain"] {
        let d = dir.join(mode);
        let sender = std::fs::read(d.join("sender.bin")).unwrap();
        assert!(
            sender.iter().any(|b| *b != 0),
            "{mode}: the sender wrote nothing"
        );
        for r in ["d1", "a2"] {
            let got = std::fs::read(d.join(format!("receiver-{r}.bin"))).unwrap();
            assert!(
                got == sender,
                "{mode}: {r}'s region differs from the sender's"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The MC-RDMA lab in network namespaces (root): the same lab code as in memory
//! (`labs::mcrdma::bench::run` on `labs::NetnsApps`), every host a thread in its namespace on
//! AF_PACKET, every switch a runtime on veths. After a short run every receiver's region equals
//! what the sender wrote, and the namespaces are gone afterwards (also when the run fails: the
//! driver's and the test's guards take them down).

use std::path::Path;

use hosts::mcrdma::Mode;
use labs::mcrdma::bench::{self, BenchConfig};
use labs::mcrdma::LabConfig;
use labs::{NetnsApps, Topology};

/// Fails unless root: the test is ignored otherwise, so it only runs when asked for.
fn require_root() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
}

/// Takes lab `name` down on drop, whatever happened.
struct Down(String);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down(&self.0);
    }
}

/// The paper's testbed under a name of its own (tests may run beside other labs).
fn testbed(name: &str, ifprefix: &str) -> Topology {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/mcrdma-testbed.yaml");
    let mut t = Topology::load(&p).unwrap_or_else(|e| panic!("{e}"));
    t.name = name.into();
    t.ifprefix = ifprefix.into();
    t
}

fn namespaces_of(lab: &str) -> Vec<String> {
    let prefix = format!("pisa-{lab}-");
    dataplane::netns::list_netns()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn replicate(mode: Mode, name: &str, ifprefix: &str) {
    require_root();
    let _down = Down(name.into());
    let cfg = BenchConfig {
        lab: LabConfig {
            mode,
            sender: "a1".into(),
            receivers: vec!["d1".into(), "a2".into()],
            size: 4096,
            iodepth: 4,
            psn: 0xFF_FFC0,
        },
        duration_ns: 300_000_000,
        loss: 0.0,
        loss_link: None,
    };
    let (report, regions) =
        bench::run::<NetnsApps>(testbed(name, ifprefix), &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.driver, "namespaces (wall clock)");
    assert!(report.ops > 0, "no operation completed: {report:?}");
    assert!(
        regions.sender.iter().any(|b| *b != 0),
        "the sender wrote nothing"
    );
    for (host, bytes) in &regions.receivers {
        assert!(
            *bytes == regions.sender,
            "{host}'s region differs from the sender's"
        );
    }
    assert!(report.identical);
    assert!(
        namespaces_of(name).is_empty(),
        "namespaces left: {:?}",
        namespaces_of(name)
    );
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn mcrdma_in_namespaces_every_receiver_has_what_the_sender_wrote() {
    replicate(Mode::Mcrdma, "mcnt-mc", "mcnm");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn fanout_in_namespaces_every_receiver_has_what_the_sender_wrote() {
    replicate(Mode::Fanout, "mcnt-fo", "mcnf");
}

//! The Acuerdo lab in network namespaces (root): the same lab code as in memory
//! (`labs::acuerdo::bench::run` with `netns`), every node a thread in its namespace on
//! AF_PACKET, the switch on veths, wall-clock timers. A leader is elected, the client's
//! messages commit, every node's log passes the atomic-broadcast check, and the namespaces
//! are gone afterwards.

use labs::acuerdo::bench::{self, BenchConfig};

/// Takes the lab down on drop, whatever happened.
struct Down(&'static str);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down(self.0);
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn acuerdo_in_namespaces_commits_and_every_log_agrees() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
    let _down = Down("acuerdo-switch");
    let cfg = BenchConfig {
        nodes: 3,
        size: 64,
        window: 4,
        duration_ns: 300_000_000,
        crash_leader_ns: None,
        crashes: 0,
        faults: None,
        netns: true,
    };
    let (r, logs) = bench::run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.driver, "namespaces (wall clock)");
    assert!(r.committed > 0, "nothing committed: {r:?}");
    assert!(r.agreement.ok, "{}", r.agreement);
    assert!(
        logs.logs.iter().all(|(_, l)| !l.is_empty()),
        "a node delivered nothing"
    );
    let left: Vec<String> = dataplane::netns::list_netns()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with("pisa-acuerdo-switch-"))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}

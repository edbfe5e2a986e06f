//! LEO's KVS lab in network namespaces (root): the same lab code as in memory
//! (`labs::leo::run_in` on `labs::NetnsApps`), the client, the server and the off-path
//! accelerator node each a thread in its namespace on AF_PACKET, the switch on leo_kvs.p4 on
//! veths with the hot-key agent at its CPU port. A short YCSB-B run: every request is
//! answered exactly once with the right value, the switch answers some GETs' lookups, and the
//! namespaces are gone afterwards.

use hosts::leo::select::Policy;
use labs::leo::{self, LabConfig};
use labs::NetnsApps;

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

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn leo_kvs_in_namespaces_answers_every_request_once_with_the_right_value() {
    require_root();
    let name = "leo-netns";
    let _down = Down(name.into());
    let mut topo = leo::topology().unwrap_or_else(|e| panic!("{e}"));
    topo.name = name.into();
    topo.ifprefix = "lnn".into();
    let cfg = LabConfig {
        rate: 5_000.0,
        count: 400,
        put_share: 0.05,
        keys: 10_000,
        hot: 128,
        policy: Policy::Leo,
        agent_ns: Some(1_000_000),
        dependency: None,
        seed: 3,
        netns: true,
    };
    let r = leo::run_in::<NetnsApps>(topo, &cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.driver, "namespaces (wall clock)");
    assert_eq!(
        (r.answered, r.wrong, r.unexpected),
        (r.sent, 0, 0),
        "every request answered once with the right value: {r:?}"
    );
    assert!(r.in_network > 0.0, "the switch answered no lookup: {r:?}");
    assert!(r.shares.iter().sum::<f64>() > 0.99, "{r:?}");
    let prefix = format!("pisa-{name}-");
    let left: Vec<String> = dataplane::netns::list_netns()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}

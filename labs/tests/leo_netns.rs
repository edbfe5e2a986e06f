//! The LEO key-value lab in network namespaces (root): the same lab code as in memory
//! (`labs::leo::run` with `netns`), the client and the server threads in their namespaces, the
//! switch (leo_kvs.p4 with the hot keys) on veths. Every request is answered once with the
//! right value, some hot GETs in the switch, and the namespaces are gone afterwards.

use hosts::leo::select::Policy;
use labs::leo::LabConfig;

/// Takes the lab down on drop, whatever happened.
struct Down;

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down("leo-kvs");
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn leo_in_namespaces_answers_every_request_once_some_in_the_switch() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
    let _down = Down;
    let cfg = LabConfig {
        rate: 2_000.0,
        count: 300,
        put_share: 0.05,
        keys: 10_000,
        hot: 128,
        policy: Policy::Leo,
        seed: 3,
        netns: true,
    };
    let r = labs::leo::run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((r.answered, r.wrong, r.unexpected), (r.sent, 0, 0), "{r:?}");
    assert!(r.in_network > 0.0, "no GET answered in the switch: {r:?}");
    let left: Vec<String> = dataplane::netns::list_netns()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with("pisa-leo-kvs-"))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}

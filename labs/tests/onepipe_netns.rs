//! The 1Pipe lab in network namespaces (root): the same lab code as in memory
//! (`labs::onepipe::lab::run` with `netns`), every host's lib1pipe process a thread in its
//! namespace, every switch on onepipe.p4 on veths with its pktgen and link agent at the
//! pktgen port, intervals in milliseconds. Every process delivers in one total order, and the
//! namespaces are gone afterwards.

use std::path::Path;

use labs::onepipe::{check, LabConfig};

/// Takes lab `name` down on drop, whatever happened.
struct Down(String, std::path::PathBuf);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down(&self.0);
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

/// The leaf-spine topology renamed `name` (interfaces `prefix`) in a fresh directory, which
/// `Down` removes with the lab.
fn topology(name: &str, prefix: &str) -> (Down, std::path::PathBuf) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::temp_dir().join(format!("pisa-{name}-{}", std::process::id()));
    let down = Down(name.into(), dir.clone());
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(root.join("deploy/labs/leaf-spine.yaml"))
        .unwrap()
        .replace(
            "../../p4/programs",
            &format!("{}/p4/programs", root.display()),
        )
        .replace(
            "name: leaf-spine",
            &format!("name: {name}\nifprefix: {prefix}"),
        );
    let file = dir.join("topology.yaml");
    std::fs::write(&file, text).unwrap();
    (down, file)
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn onepipe_in_namespaces_delivers_in_one_total_order() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
    let (_down, file) = topology("op-netns", "opn");
    let mut cfg = LabConfig::new(file);
    cfg.netns = true;
    cfg.beacon_interval_ns = 5_000_000;
    cfg.link_timeout_ns = 200_000_000;
    cfg.send_every_ns = 10_000_000;
    cfg.messages = 10;
    cfg.duration_ns = 500_000_000;
    let run = labs::onepipe::lab::run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.driver, "namespaces (wall clock)");
    // No link fell silent (host links included: the agents stop before the hosts).
    assert!(run.link_events.is_empty(), "{:?}", run.link_events);
    let delivered: usize = run.delivered.iter().map(Vec::len).sum();
    assert!(delivered > 0, "nothing delivered");
    check::total_order(&run).unwrap_or_else(|e| panic!("total order: {e}"));
    check::delivered_were_sent(&run).unwrap_or_else(|e| panic!("{e}"));
    check::causality(&run).unwrap_or_else(|e| panic!("causality: {e}"));
    let left: Vec<String> = dataplane::netns::list_netns()
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.starts_with("pisa-op-netns-"))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
}

/// Reliable 1Pipe with wall-clock threads (§5.2): a host crashes; its ToR's agent only reports
/// the silent link, and the controller removes it (Resume) after every survivor processed the
/// failure and its recalls were ACKed, whatever the threads' timing: the failed host's
/// scatterings reach all survivors or none.
#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn reliable_crash_in_namespaces_resumes_after_the_survivors_completed() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
    let (_down, file) = topology("op-crash", "opc");
    let mut cfg = LabConfig::new(file);
    cfg.netns = true;
    cfg.reliable = true;
    cfg.beacon_interval_ns = 5_000_000;
    // Wall-clock threads on a loaded machine (CI runs tests side by side) can stall past a
    // short timeout; a link silent that long only because its threads stalled is reported
    // too (it holds the barrier, as a real stall would), so the timeout is generous.
    cfg.link_timeout_ns = 200_000_000;
    cfg.send_every_ns = 10_000_000;
    cfg.messages = 40;
    cfg.duration_ns = 1_000_000_000;
    cfg.fail_host = Some((3, 200_000_000));
    let run = labs::onepipe::lab::run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    let (h, _, declared, _) = run.failure.expect("the crash was detected");
    use control::onepipe::LinkEvent;
    let ev: Vec<(u64, LinkEvent)> = run.link_events.iter().map(|(_, t, e)| (*t, *e)).collect();
    // The crashed host's link: reported silent, and removed only after the controller
    // declared the failure (and the survivors completed); no other link is removed.
    let removed: Vec<(u64, u8)> = ev
        .iter()
        .filter_map(|&(t, e)| match e {
            LinkEvent::Removed { link, .. } => Some((t, link)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(removed.as_slice(), [(tr, _)] if *tr >= declared),
        "one link removed, after the failure was declared at {declared}: {ev:?}"
    );
    let link = removed[0].1;
    assert!(
        ev.iter().any(|&(ts, e)| ts <= removed[0].0
            && matches!(e, LinkEvent::Silent { link: l, .. } if l == link)),
        "the removed link was reported silent first: {ev:?}"
    );
    check::total_order(&run).unwrap_or_else(|e| panic!("total order: {e}"));
    check::delivered_were_sent(&run).unwrap_or_else(|e| panic!("{e}"));
    check::atomic_among_survivors(&run, h).unwrap_or_else(|e| panic!("atomicity: {e}"));
}

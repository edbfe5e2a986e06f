//! P4CE across a leaf-spine, in memory, in virtual time (`Fabric::LeafSpine`,
//! `deploy/labs/p4ce-leaf-spine.yaml`): the same lab and nodes as the single-switch tests, but
//! the leader under leaf1, the replicas under leaf2..leaf4, every frame routed by fabric.p4
//! switches on generated /32 routes, and the P4CE switch one-armed off leaf1 (the agent sends
//! what it rewrites to leaf1's router MAC). Commits with identical logs in P4CE and unicast
//! modes, a replica crash, a leader fail-over.

mod common;

use common::{assert_logs_identical, counter, program, values};
use hosts::mu::Path as Mode;
use labs::p4ce::mem::{bench, FailoverEvent};
use labs::p4ce::{Fabric, Lab, LabConfig};

fn config(mode: Mode, replicas: usize) -> LabConfig {
    let mut c = LabConfig::new(mode, replicas);
    c.fabric = Fabric::LeafSpine;
    c
}

fn lab(cfg: LabConfig) -> Lab {
    Lab::new(program(), cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// Frames the fabric switch `name` passed.
fn passes(lab: &mut Lab, name: &str) -> u64 {
    let s = lab.mem().topology().switch_index(name).unwrap();
    lab.mem().switch_counters()[s].passes
}

#[test]
fn p4ce_across_the_leaf_spine_commits_identical_logs() {
    let mut lab = lab(config(Mode::Switch, 4));
    let vals = values(150, 1);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 150);
    assert_logs_identical(&mut lab, &[1, 2, 3, 4], 150);
    let st = lab.leader().stats();
    assert_eq!(st.fallbacks, 0, "{:?}", lab.take_events());
    assert_eq!(st.switch_writes, 150);
    assert_eq!(st.unicast_writes, 0);
    // The P4CE switch scattered and aggregated; the fabric carried it all, both spines.
    assert!(counter(&lab, "SwitchIngress.writes_scattered", 1) >= 150);
    assert!(counter(&lab, "SwitchIngress.acks_forwarded", 1) > 0);
    for s in ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"] {
        assert!(passes(&mut lab, s) > 0, "{s} forwarded nothing");
    }
    let lead = lab.leader_host();
    let integrity = bench::drain_and_check(&mut lab, lead, 2).unwrap();
    assert!(integrity.ok, "{integrity}");
    assert_eq!(integrity.complete, 4, "{integrity}");
}

#[test]
fn unicast_across_the_leaf_spine_commits_identical_logs() {
    let mut lab = lab(config(Mode::Unicast, 2));
    let vals = values(100, 3);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 100);
    assert_logs_identical(&mut lab, &[1, 2], 100);
    let st = lab.leader().stats();
    assert_eq!(st.switch_writes, 0);
    assert_eq!(st.unicast_writes, 200);
    // Host to host through the fabric; nothing went through the P4CE switch's pipeline.
    assert_eq!(counter(&lab, "SwitchIngress.writes_scattered", 1), 0);
    let lead = lab.leader_host();
    let integrity = bench::drain_and_check(&mut lab, lead, 1).unwrap();
    assert!(integrity.ok, "{integrity}");
}

#[test]
fn replica_crash_across_the_leaf_spine() {
    let mut lab = lab(config(Mode::Switch, 4));
    let vals = values(120, 4);
    assert_eq!(lab.replicate_all(&vals[..60], 1_000_000_000).unwrap(), 60);
    lab.crash_host(3);
    let until = lab.now() + 1_000_000_000;
    assert_eq!(lab.replicate_all(&vals[60..], until).unwrap(), 60);
    assert_logs_identical(&mut lab, &[1, 2, 4], 120);
    assert!(lab.applied(3).len() <= 60 + 8);
}

#[test]
fn leader_fail_over_across_the_leaf_spine() {
    let mut cfg = config(Mode::Switch, 3);
    cfg.leader_timeout = Some(std::time::Duration::from_millis(1));
    let mut lab = lab(cfg);
    assert_eq!(
        lab.replicate_all(&values(60, 9), 1_000_000_000).unwrap(),
        60
    );
    let committed_before = lab.leader().committed();
    lab.crash_host(0);
    let t = lab.now() + 10_000_000;
    lab.run_until(t).unwrap();
    let ev = lab.failover_events().to_vec();
    assert!(
        ev.iter().any(
            |e| matches!(e, (1, FailoverEvent::Leads { from, .. }) if *from >= committed_before)
        ),
        "no new leader: {ev:?}"
    );
    assert_eq!(lab.leader_host(), 1);
    // The agent gave the group to the new leader (h2, under leaf2).
    {
        let (_, agent) = lab.switch_and_agent();
        let g = agent.group(1).expect("group for the new leader");
        assert_eq!(g.leader.ep, 2);
    }
    let vals = values(80, 11);
    assert_eq!(
        lab.replicate_all(&vals, lab.now() + 1_000_000_000).unwrap(),
        80
    );
    let total = lab.appended().len();
    assert!(total >= 140);
    assert_logs_identical(&mut lab, &[2, 3], total);
    assert!(lab.leader().stats().switch_writes > 0);
}

/// The figure across the leaf-spine: with the leader's 10 Gbit/s link the bottleneck (the
/// fabric's links are 100 Gbit/s), P4CE's goodput over unicast keeps the single switch's
/// shape, about 2x with 2 replicas and 4x with 4.
#[test]
fn goodput_ratio_across_the_leaf_spine() {
    for (replicas, least) in [(2, 1.8), (4, 3.5)] {
        let goodput = |mode| {
            let cfg = bench::BenchConfig {
                mode,
                replicas,
                value_size: 1024,
                outstanding: 16,
                duration_ns: 2_000_000,
                link_rate_bps: 10_000_000_000,
                link_delay_ns: 1_000,
                faults: Default::default(),
                host_links: Vec::new(),
                late_replica: None,
            };
            let r = bench::run_on(
                program(),
                &cfg,
                Fabric::LeafSpine,
                &labs::p4ce::repo_labs_dir(),
            )
            .unwrap();
            assert!(r.integrity.ok, "{}", r.integrity);
            assert_eq!(r.lab, "memory, leaf-spine");
            r.goodput_bytes_per_s
        };
        let ratio = goodput(Mode::Switch) / goodput(Mode::Unicast);
        assert!(ratio >= least, "{replicas} replicas: ratio {ratio:.2}");
    }
}

//! The P4CE lab in memory under link faults (`pisa consensus bench --loss/--dup/--reorder`):
//! the faults reach every host link, the log-integrity check every bench run ends with passes
//! under them and fails on a log that lost or reordered a committed entry, and a leader whose
//! replica is cut off before the start gets ready with the f replicas it has, and that replica
//! joins the running log once its cable is up; with leader fail-over on too, and then also
//! under the node that took over from a crashed leader.

mod common;

use std::time::Duration;

use common::{assert_logs_identical, program};
use dataplane::{FaultConfig, LinkConfig};
use hosts::mu::Path as Mode;
use hosts::p4ce::failover::FailoverEvent;
use labs::p4ce::mem::bench::{self, drain_and_check, BenchConfig};
use labs::p4ce::{Lab, LabConfig};

fn faults(spec: &str) -> FaultConfig {
    spec.parse::<LinkConfig>().unwrap().tx.faults
}

fn bench_cfg(mode: Mode, faults: FaultConfig) -> BenchConfig {
    BenchConfig {
        mode,
        replicas: 2,
        value_size: 256,
        outstanding: 16,
        duration_ns: 5_000_000,
        link_rate_bps: 10_000_000_000,
        link_delay_ns: 1_000,
        faults,
        host_links: Vec::new(),
        late_replica: None,
    }
}

fn values(n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| (0..100 + i % 50).map(|j| (i * 7 + j) as u8).collect())
        .collect()
}

#[test]
fn bench_under_one_percent_loss_dup_and_reorder_passes_the_integrity_check() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let clean = bench::run(program(), &bench_cfg(mode, FaultConfig::default())).unwrap();
        assert!(clean.integrity.ok, "{mode:?} lossless: {}", clean.integrity);
        let f = faults("loss=0.01,dup=0.01,reorder=0.01");
        let r = bench::run(program(), &bench_cfg(mode, f)).unwrap();
        assert!(r.integrity.ok, "{mode:?}: {}", r.integrity);
        assert!(r.committed > 0, "{mode:?}: nothing committed");
        assert_eq!(r.integrity.committed, r.integrity.appended);
        // The faults took effect: fewer commits, more frames per commit than without.
        assert!(
            r.committed < clean.committed,
            "{mode:?}: {} with faults, {} without",
            r.committed,
            clean.committed
        );
        assert!(r.leader_tx_per_consensus > clean.leader_tx_per_consensus);
    }
}

#[test]
fn the_lab_puts_the_faults_on_every_host_link() {
    let mut cfg = LabConfig::new(Mode::Switch, 2);
    cfg.faults = faults("loss=0.02,dup=0.02,reorder=0.02");
    cfg.seed = 3;
    let mut lab = Lab::new(program(), cfg).unwrap();
    let vals = values(400);
    assert_eq!(lab.replicate_all(&vals, 20_000_000_000).unwrap(), 400);
    for h in 0..lab.hosts() {
        let link = lab.mem().topology().hosts[h].link;
        let (mut lost, mut dup, mut reord) = (0, 0, 0);
        for end in 0..2 {
            let s = lab.mem().link_control(link, end).tx_stats();
            lost += s.lost;
            dup += s.duplicated;
            reord += s.reordered;
        }
        assert!(
            lost > 0 && dup > 0 && reord > 0,
            "host {h}: lost {lost} dup {dup} reordered {reord}"
        );
    }
    let lead = lab.leader_host();
    let f = lab.config().f;
    let integrity = drain_and_check(&mut lab, lead, f).unwrap();
    assert!(integrity.ok, "{integrity}");
    assert_eq!(lab.applied(1), &vals[..]);
    assert_eq!(lab.applied(2), &vals[..]);
}

#[test]
fn the_integrity_check_fails_on_a_reordered_or_lost_committed_entry() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Switch, 2)).unwrap();
    assert_eq!(lab.replicate_all(&values(20), 1_000_000_000).unwrap(), 20);
    let ok = drain_and_check(&mut lab, 0, 1).unwrap();
    assert!(ok.ok, "{ok}");
    assert_eq!(ok.complete, 2);
    // Replica 2 holds entries 4 and 5 swapped: reordered.
    lab.node(1).replica().unwrap().digests.swap(4, 5);
    let r = drain_and_check(&mut lab, 0, 1).unwrap();
    assert!(!r.ok);
    assert!(
        r.to_string()
            .contains("replica 2: entry 4 is the leader's entry 5"),
        "{r}"
    );
    // Replica 3 too lost entry 7: no replica holds the committed log any more.
    lab.node(2).replica().unwrap().digests.remove(7);
    let r = drain_and_check(&mut lab, 0, 1).unwrap();
    assert!(!r.ok);
    assert!(r.to_string().contains("replica 3: entry 7"), "{r}");
    assert!(r.to_string().contains("only 0 replicas"), "{r}");
}

/// Issue 13: with one of two replicas cut before the start the leader never became ready,
/// although f = 1 allows it. It now starts the log with the replicas that answered once every
/// attempt of a round is over, and commits with them.
#[test]
fn a_replica_cut_before_the_start_leaves_the_leader_ready_with_f() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let mut cfg = LabConfig::new(mode, 2);
        assert_eq!(cfg.f, 1);
        let mut cut: LinkConfig = "down".parse().unwrap();
        cut.seed = 0;
        cfg.host_links = vec![None, None, Some(cut)];
        let mut lab = Lab::new(program(), cfg)
            .unwrap_or_else(|e| panic!("{mode:?}: the leader is not ready: {e}"));
        assert!(lab.node(0).status.ready);
        assert_eq!(lab.leader().live_replicas(), vec![2], "{mode:?}");
        let vals = values(100);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals, until).unwrap(), 100, "{mode:?}");
        assert_eq!(lab.applied(1), &vals[..]);
        assert!(lab.applied(2).is_empty());
        let integrity = drain_and_check(&mut lab, 0, 1).unwrap();
        assert!(integrity.ok, "{mode:?}: {integrity}");
        if mode == Mode::Switch {
            assert!(lab.leader().stats().switch_writes > 0, "no switch path");
        }
    }
}

/// Issue 13: the replica cut off before the start joins once its cable is up: the leader
/// reconnects to it, it gets the committed prefix (a snapshot of what the ring no longer
/// holds, then the ring), and it receives the stream from then on, through the switch's
/// rebuilt group in P4CE mode. The integrity check then finds both replicas complete.
#[test]
fn a_replica_cut_before_the_start_joins_when_its_cable_is_up() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let mut cfg = LabConfig::new(mode, 2);
        let mut cut: LinkConfig = "down".parse().unwrap();
        cut.seed = 0;
        cfg.host_links = vec![None, None, Some(cut)];
        let slots = cfg.slots;
        let mut lab = Lab::new(program(), cfg).unwrap();
        let vals = values(400);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[..300], until).unwrap(), 300);
        assert!(lab.applied(2).is_empty());
        assert!(
            300 > slots,
            "more than a lap of the ring: a snapshot is needed"
        );
        lab.set_host_link_up(2, true);
        let until = lab.now() + 200_000_000;
        while lab.applied(2).len() < 300 && lab.advance(until).unwrap() {}
        assert_eq!(lab.applied(2), &vals[..300], "{mode:?}");
        let switch_writes = lab.leader().stats().switch_writes;
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[300..], until).unwrap(), 100);
        let integrity = drain_and_check(&mut lab, 0, 1).unwrap();
        assert!(integrity.ok, "{mode:?}: {integrity}");
        assert_eq!(integrity.complete, 2, "{mode:?}: {integrity}");
        assert_eq!(lab.applied(2), &vals[..], "{mode:?}");
        assert_eq!(lab.applied(1), &vals[..], "{mode:?}");
        let st = lab.leader().stats();
        assert_eq!((st.joined, st.snapshots), (1, 1), "{mode:?}: {st:?}");
        assert_eq!(lab.leader().live_replicas(), vec![2, 3], "{mode:?}");
        if mode == Mode::Switch {
            assert!(
                lab.leader().stats().switch_writes > switch_writes,
                "after the join the stream goes through the switch again"
            );
            // The agent rebuilt the group with the joined replica.
            let cm = format!("{:?}", lab.cm_log());
            assert_eq!(cm, "[GroupUp(1), GroupDown(1), GroupUp(1)]");
        }
    }
}

/// `pisa consensus bench --late-replica 2@1ms`: replica 2 (host 2, id 3) is cut off for the
/// first millisecond; it joins through a snapshot and the run ends with both replicas
/// complete.
#[test]
fn bench_with_a_late_replica_reports_its_join() {
    let mut c = bench_cfg(Mode::Switch, FaultConfig::default());
    c.late_replica = Some("2@1ms".parse().unwrap());
    let r = bench::run(program(), &c).unwrap();
    let late = r.late_replica.clone().expect("a late replica report");
    assert_eq!(late.id, 3);
    assert!(late.missed > 1000, "{late}");
    assert!(late.joined_after_s.is_some(), "{late}");
    assert!(late.caught_up_after_s.is_some(), "{late}");
    assert_eq!(late.snapshots, 1, "{late}");
    assert!(r.integrity.ok, "{}", r.integrity);
    assert_eq!(r.integrity.complete, 2, "{}", r.integrity);
}

/// The same in the bench: a cut replica, a run that commits and passes the check.
#[test]
fn bench_with_a_replica_cut_commits_with_f() {
    let mut c = bench_cfg(Mode::Switch, FaultConfig::default());
    c.host_links = vec![None, Some("down".parse().unwrap())];
    let r = bench::run(program(), &c).unwrap();
    assert!(r.committed > 1000, "{}", r.committed);
    assert!(r.integrity.ok, "{}", r.integrity);
    assert_eq!(
        r.integrity.replicas,
        vec![(2, 0), (3, r.integrity.appended)]
    );
}

/// A lab with 1 ms leader fail-over and host `cut`'s cable down from the start.
fn failover_lab_with_cut(mode: Mode, replicas: usize, cut: Option<usize>) -> Lab {
    let mut cfg = LabConfig::new(mode, replicas);
    cfg.leader_timeout = Some(Duration::from_millis(1));
    if let Some(h) = cut {
        let mut down: LinkConfig = "down".parse().unwrap();
        down.seed = 0;
        cfg.host_links = vec![None; h + 1];
        cfg.host_links[h] = Some(down);
    }
    Lab::new(program(), cfg).unwrap_or_else(|e| panic!("{mode:?}: {e}"))
}

/// Drives the lab until host `h` applied `n` entries (or a second of virtual time passed).
/// Runs 10 ms after the leader's crash and returns the followers replica 2 (host 1) took
/// over with.
fn take_over_followers(lab: &mut Lab, mode: Mode) -> Vec<u16> {
    let t = lab.now() + 10_000_000;
    lab.run_until(t).unwrap();
    let ev = lab.failover_events().to_vec();
    ev.iter()
        .find_map(|e| match e {
            (1, FailoverEvent::Leads { followers, .. }) => Some(followers.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{mode:?}: no new leader: {ev:?}"))
}

fn until_applied(lab: &mut Lab, h: usize, n: usize) {
    let until = lab.now() + 1_000_000_000;
    while lab.applied(h).len() < n && lab.advance(until).unwrap() {}
}

/// Issue 13 with leader fail-over on: replica 3 (host 2) of three (f = 2) is cut off before
/// the start. The lab starts once the leader and the replicas it has are set up and their
/// heartbeats armed; when the cable comes up, replica 3 joins (snapshot, then the ring), arms
/// its heartbeats, and nobody changes leader. A leader crash after that fails over to
/// replica 2 with the joiner as one of its two followers, and the logs agree.
#[test]
fn with_failover_a_replica_cut_before_the_start_joins_and_a_later_crash_fails_over() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let mut lab = failover_lab_with_cut(mode, 3, Some(2));
        assert_eq!(lab.leader().live_replicas(), vec![2, 4], "{mode:?}");
        let vals = values(300);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[..200], until).unwrap(), 200);
        assert!(lab.applied(2).is_empty());
        lab.set_host_link_up(2, true);
        until_applied(&mut lab, 2, 200);
        assert_eq!(lab.applied(2), &vals[..200], "{mode:?}");
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[200..], until).unwrap(), 100);
        let integrity = drain_and_check(&mut lab, 0, 2).unwrap();
        assert!(integrity.ok, "{mode:?}: {integrity}");
        assert_eq!(integrity.complete, 3, "{mode:?}: {integrity}");
        let st = lab.leader().stats();
        assert_eq!((st.joined, st.snapshots), (1, 1), "{mode:?}: {st:?}");
        let mut live = lab.leader().live_replicas();
        live.sort_unstable();
        assert_eq!(live, vec![2, 3, 4], "{mode:?}");
        // No spurious leader change: every node only armed its heartbeats.
        let ev = lab.failover_events().to_vec();
        assert!(
            ev.iter()
                .all(|(_, e)| matches!(e, FailoverEvent::Armed { .. })),
            "{mode:?}: {ev:?}"
        );
        assert!(
            ev.iter().any(|(h, _)| *h == 2),
            "{mode:?}: the joiner never armed: {ev:?}"
        );
        // The leader crashes: replica 2 takes over with replicas 3 (the joiner) and 4.
        lab.crash_host(0);
        let followers = take_over_followers(&mut lab, mode);
        assert_eq!(followers, vec![3, 4], "{mode:?}");
        assert_eq!(lab.leader_host(), 1);
        let more = values(350);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&more[300..], until).unwrap(), 50);
        let total = lab.appended().len();
        assert!(total >= 350, "{mode:?}: {total}");
        assert_logs_identical(&mut lab, &[2, 3], total);
        assert_eq!(&lab.applied(2)[..300], &vals[..], "{mode:?}");
    }
}

/// Re-invitation by a node that took over: four replicas (f = 2); the leader crashes and
/// replica 5 (host 4) is cut off at the same moment, so replica 2 takes over with 3 and 4
/// only. When the cable comes up, the mesh reconnects, replica 5 sees replica 2 lead and
/// follows it, and the new leader (having READ that it does) adds it: a snapshot of what it
/// missed, then the ring. Its log then agrees with everyone's, and in P4CE mode the agent's
/// group includes it again.
#[test]
fn a_replica_cut_during_a_take_over_rejoins_the_new_leader() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let mut lab = failover_lab_with_cut(mode, 4, None);
        let vals = values(300);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[..50], until).unwrap(), 50);
        lab.crash_host(0);
        lab.set_host_link_up(4, false);
        let followers = take_over_followers(&mut lab, mode);
        assert_eq!(followers, vec![3, 4], "{mode:?}");
        // More than a lap of the ring while replica 5 is away: it needs a snapshot.
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[50..200], until).unwrap(), 150);
        let total = lab.appended().len();
        assert!(lab.applied(4).len() < 60, "{mode:?}");
        lab.set_host_link_up(4, true);
        until_applied(&mut lab, 4, total);
        assert_logs_identical(&mut lab, &[2, 3, 4], total);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[200..], until).unwrap(), 100);
        let integrity = drain_and_check(&mut lab, 1, 2).unwrap();
        assert!(integrity.ok, "{mode:?}: {integrity}");
        assert_eq!(integrity.complete, 3, "{mode:?}: {integrity}");
        let total = lab.appended().len();
        assert_logs_identical(&mut lab, &[2, 3, 4], total);
        assert_eq!(&lab.applied(4)[..50], &vals[..50], "{mode:?}");
        let st = lab.leader().stats();
        assert_eq!((st.joined, st.snapshots), (1, 1), "{mode:?}: {st:?}");
        let mut live = lab.leader().live_replicas();
        live.sort_unstable();
        assert_eq!(live, vec![3, 4, 5], "{mode:?}");
        if mode == Mode::Switch {
            let (_, agent) = lab.switch_and_agent();
            let g = agent.group(1).expect("a group for the new leader");
            let mut eps: Vec<u16> = g.replicas.iter().map(|r| r.ep).collect();
            eps.sort_unstable();
            assert_eq!((g.leader.ep, eps), (2, vec![3, 4, 5]), "{mode:?}");
            assert!(lab.leader().stats().switch_writes > 0);
        }
    }
}

/// The other side of re-invitation: a deposed leader is never let back in. The first
/// leader stalls past the leader timeout (two replicas, f = 1), replica 2 takes over with
/// replica 3. When the old leader runs again after 20 ms, its QPs to the replicas have
/// failed and it asks them to join again: both refuse (they follow replica 2, and a replica
/// grants write access only to the leader it follows). After a 3 ms stall its connections
/// are still up and its heartbeat moves again: replica 3 must not follow it back (it would
/// lead from its old log over what replica 2 committed). Either way it commits nothing
/// more, and the new leader goes on.
#[test]
fn a_deposed_leader_that_comes_back_is_refused() {
    for (mode, stall) in [
        (Mode::Switch, 20_000_000),
        (Mode::Unicast, 20_000_000),
        (Mode::Switch, 3_000_000),
        (Mode::Unicast, 3_000_000),
    ] {
        let mut lab = failover_lab_with_cut(mode, 2, None);
        let vals = values(120);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[..40], until).unwrap(), 40);
        lab.set_host_paused(0, true);
        let t = lab.now() + stall;
        lab.run_until(t).unwrap();
        assert_eq!(
            lab.leader_host(),
            1,
            "{mode:?}: {:?}",
            lab.failover_events()
        );
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[40..80], until).unwrap(), 40);
        lab.set_host_paused(0, false);
        let old = lab.node(0).status.committed;
        // Its heartbeat moves again (readable where its connections survived)...
        let t = lab.now() + 10_000_000;
        lab.run_until(t).unwrap();
        // ...and tries to append (refused without a quorum, or never committed).
        for v in &vals[80..90] {
            let now = lab.mem().now();
            let _ = lab.with_node(0, |n| n.try_append(now, v));
        }
        let t = lab.now() + 50_000_000;
        lab.run_until(t).unwrap();
        let n0 = lab.node(0);
        assert_eq!(
            n0.status.committed, old,
            "{mode:?}: the deposed leader committed"
        );
        let l0 = n0.leader_ref().and_then(|l| l.leader.as_ref()).unwrap();
        assert!(l0.live_replicas().is_empty(), "{mode:?}");
        assert!(l0.joining_replicas().is_empty(), "{mode:?}");
        assert_eq!(lab.leader_host(), 1);
        let until = lab.now() + 1_000_000_000;
        assert_eq!(lab.replicate_all(&vals[90..], until).unwrap(), 30);
        let ev = lab.failover_events().to_vec();
        assert!(
            !ev.iter()
                .any(|e| matches!(e, (_, FailoverEvent::Follows { leader: 1, .. }))),
            "{mode:?} {stall}: a replica followed the deposed leader back: {ev:?}"
        );
        let integrity = drain_and_check(&mut lab, 1, 1).unwrap();
        assert!(integrity.ok, "{mode:?}: {integrity}");
        let total = lab.appended().len();
        assert_logs_identical(&mut lab, &[2], total);
    }
}

//! End to end on the in-memory driver in virtual time: p4ce.p4 compiled at test time in the
//! P4CE topology's switch between a leader and replicas (each a P4CE node, the one the
//! namespace lab runs), the P4CE agent on the CPU port programming the group the leader asks
//! for through RDMA CM, the Mu-style log on top: commits, identical replica logs, crashes, a
//! broken switch path, loss, WRITEs the switch must keep away from the logs, and per-node
//! leader fail-over.

mod common;

use common::{assert_logs_identical, counter, program, values};
use hosts::mu::{LeaderEvent, Path as Mode};
use labs::p4ce::mem::FailoverEvent;
use labs::p4ce::{Lab, LabConfig};
use rdma::verbs::{QpAttr, QpInitAttr, QpState, QpType, SendOp, SendWr, Sge};

#[test]
fn p4ce_two_replicas_commit_and_logs_are_identical() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Switch, 2)).unwrap();
    let vals = values(200, 1);
    let done = lab.replicate_all(&vals, 1_000_000_000).unwrap();
    assert_eq!(done, 200);
    assert_logs_identical(&mut lab, &[1, 2], 200);
    let st = lab.leader().stats();
    assert_eq!(st.fallbacks, 0, "{:?}", lab.take_events());
    assert_eq!(st.switch_writes, 200);
    assert_eq!(st.unicast_writes, 0);
    // The switch did the scattering and the aggregation.
    assert!(counter(&lab, "SwitchIngress.writes_scattered", 1) >= 200);
    assert!(counter(&lab, "SwitchIngress.acks_forwarded", 1) > 0);
}

#[test]
fn p4ce_four_replicas_f2() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Switch, 4)).unwrap();
    let vals = values(100, 2);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 100);
    assert_logs_identical(&mut lab, &[1, 2, 3, 4], 100);
    assert_eq!(lab.leader().stats().fallbacks, 0);
}

#[test]
fn unicast_baseline_commits_the_same_log() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Unicast, 2)).unwrap();
    let vals = values(100, 3);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 100);
    assert_logs_identical(&mut lab, &[1, 2], 100);
    let st = lab.leader().stats();
    assert_eq!(st.switch_writes, 0);
    assert_eq!(st.unicast_writes, 200);
}

#[test]
fn replica_crash_commits_continue_with_f_of_the_rest() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Switch, 4)).unwrap();
    let vals = values(120, 4);
    assert_eq!(lab.replicate_all(&vals[..60], 1_000_000_000).unwrap(), 60);
    lab.crash_host(3);
    let until = lab.now() + 1_000_000_000;
    assert_eq!(lab.replicate_all(&vals[60..], until).unwrap(), 60);
    assert_logs_identical(&mut lab, &[1, 2, 4], 120);
    assert!(lab.applied(3).len() <= 60 + 8);
}

#[test]
fn broken_switch_path_falls_back_to_unicast_without_losing_entries() {
    let mut cfg = LabConfig::new(Mode::Switch, 2);
    cfg.switch_retry = std::time::Duration::from_millis(2);
    let mut lab = Lab::new(program(), cfg).unwrap();
    let vals = values(300, 5);
    assert_eq!(lab.replicate_all(&vals[..100], 1_000_000_000).unwrap(), 100);
    lab.set_switch_path_broken(true);
    let until = lab.now() + 1_000_000_000;
    assert_eq!(lab.replicate_all(&vals[100..200], until).unwrap(), 100);
    let events = lab.take_events();
    assert!(
        events.contains(&LeaderEvent::FellBack { timeout: true }),
        "{events:?}"
    );
    assert!(lab.leader().stats().unicast_writes > 0);
    assert!(lab.switch_rx_lost() > 0, "the switch's ports lost nothing");
    // The switch comes back: the leader's periodic retry takes the switch path again.
    lab.set_switch_path_broken(false);
    let until = lab.now() + 1_000_000_000;
    let before = lab.leader().stats().switch_writes;
    lab.run_until(lab.now() + 5_000_000).unwrap();
    assert_eq!(lab.replicate_all(&vals[200..], until).unwrap(), 100);
    assert!(lab.leader().stats().switch_writes > before);
    assert_logs_identical(&mut lab, &[1, 2], 300);
}

#[test]
fn one_percent_loss_logs_still_identical() {
    for mode in [Mode::Switch, Mode::Unicast] {
        let mut cfg = LabConfig::new(mode, 2);
        cfg.loss = 0.01;
        cfg.seed = 7;
        let mut lab = Lab::new(program(), cfg).unwrap();
        let vals = values(300, 6);
        let done = lab.replicate_all(&vals, 20_000_000_000).unwrap();
        assert_eq!(done, 300, "{mode:?}: {:?}", lab.take_events());
        lab.run_until(lab.now() + 50_000_000).unwrap();
        // Losses happened and were repaired by the transport or the leader's catch-up.
        let naks: u64 = (1..lab.hosts())
            .map(|h| lab.node(h).endpoint().stats().seq_naks_sent)
            .sum();
        assert!(naks > 0, "{mode:?}: no loss observed");
        assert_logs_identical(&mut lab, &[1, 2], 300);
    }
}

#[test]
fn writes_to_the_bcast_qp_from_a_non_leader_or_with_a_wrong_rkey_never_reach_a_log() {
    let mut lab = Lab::new(program(), LabConfig::new(Mode::Switch, 2)).unwrap();
    let vals = values(10, 7);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 10);
    let (vrkey, bcast, switch_ip) = lab.group_addresses();
    let garbage = vec![0xEEu8; 256];
    // A rogue QP on replica 2 (not the group's leader) and one on the leader with a wrong
    // R_key, both aimed at the BCast QP, both writing over slot 0.
    for (host, rkey) in [(2usize, vrkey), (0usize, vrkey ^ 1)] {
        lab.with_node(host, |h| rogue_write(h, bcast, switch_ip, rkey, &garbage));
    }
    lab.run_until(lab.now() + 20_000_000).unwrap();
    assert!(
        counter(&lab, "SwitchIngress.drops", 1) > 0,
        "not-leader drops"
    );
    assert!(
        counter(&lab, "SwitchIngress.drops", 2) > 0,
        "bad R_key drops"
    );
    for h in [1usize, 2] {
        let node = lab.node(h);
        let log = node.endpoint().mr_bytes(node.log.lkey).unwrap();
        assert!(
            !log.windows(64).any(|w| w.iter().all(|b| *b == 0xEE)),
            "garbage reached replica {h}"
        );
        assert_eq!(lab.applied(h).len(), 10);
    }
}

/// A QP on `h` (not the group's leader's switch QP) WRITEs `garbage` over slot 0 of the
/// group's virtual log through the BCast QP with R_key `rkey`.
fn rogue_write(
    h: &mut hosts::p4ce::machine::Node,
    bcast: u32,
    switch_ip: std::net::Ipv4Addr,
    rkey: u32,
    garbage: &[u8],
) {
    let (pd, cq) = (h.log.pd, h.cq);
    let ep = h.ep();
    {
        let src = ep
            .reg_mr(pd, 256, rdma::verbs::AccessFlags::LOCAL_WRITE)
            .unwrap();
        let qpn = ep
            .create_qp(QpInitAttr {
                pd,
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr: 4,
                max_recv_wr: 1,
            })
            .unwrap();
        for attr in [
            QpAttr {
                state: Some(QpState::Init),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rtr),
                dest_qp_num: Some(bcast),
                remote_ip: Some(switch_ip.into()),
                rq_psn: Some(0),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rts),
                sq_psn: Some(0),
                timeout: Some(8),
                retry_cnt: Some(1),
                ..Default::default()
            },
        ] {
            ep.modify_qp(qpn, &attr).unwrap();
        }
        ep.mr_bytes_mut(src.lkey).unwrap().copy_from_slice(garbage);
        let sge = Sge {
            addr: src.addr,
            length: 256,
            lkey: src.lkey,
        };
        let op = SendOp::Write {
            remote_addr: 0,
            rkey,
        };
        ep.post_send(qpn, SendWr::new(99, op, sge)).unwrap();
    }
}

#[test]
fn a_deposed_leader_cannot_write_once_replicas_revoke_its_permission() {
    for mode in [Mode::Unicast, Mode::Switch] {
        let mut lab = Lab::new(program(), LabConfig::new(mode, 2)).unwrap();
        let vals = values(20, 8);
        assert_eq!(lab.replicate_all(&vals[..10], 1_000_000_000).unwrap(), 10);
        // View change elsewhere: both replicas now follow another leader, and take write
        // permission away from this one's QPs (direct and through the switch).
        for h in 1..=2 {
            lab.with_node(h, |n| {
                let qps = [n.uni_qps[0], n.switch_qp];
                hosts::mu::Replica::grant_writes(n.ep(), &[], &qps).unwrap();
            });
        }
        let until = lab.now() + 200_000_000;
        let done = lab.replicate_all(&vals[10..], until).unwrap();
        assert_eq!(done, 0, "{mode:?}: a deposed leader committed");
        let events = lab.take_events();
        assert!(
            events.contains(&LeaderEvent::ReplicaLost(2))
                && events.contains(&LeaderEvent::ReplicaLost(3)),
            "{mode:?}: {events:?}"
        );
        for h in 1..=2 {
            assert_eq!(lab.applied(h).len(), 10, "{mode:?}: replica {h}");
        }
    }
}

fn cm_lab(replicas: usize) -> Lab {
    let cfg = LabConfig::new(Mode::Switch, replicas);
    Lab::new(program(), cfg).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn cm_leader_connects_through_the_switch_agent_and_replicates() {
    use control::p4ce::CmAgentEvent;
    let mut lab = cm_lab(3);
    assert!(lab.switch_up_at().is_some());
    assert_eq!(lab.cm_log(), &[CmAgentEvent::GroupUp(1)]);
    // The CM MADs to the switch IP went to the CPU port.
    assert!(lab.to_cpu() >= 4, "to_cpu = {}", lab.to_cpu());
    let vals = values(150, 7);
    assert_eq!(lab.replicate_all(&vals, 1_000_000_000).unwrap(), 150);
    assert_logs_identical(&mut lab, &[1, 2, 3], 150);
    let st = lab.leader().stats();
    assert_eq!(st.fallbacks, 0, "{:?}", lab.take_events());
    assert_eq!(st.switch_writes, 150);
    assert_eq!(st.unicast_writes, 0);
    assert!(counter(&lab, "SwitchIngress.writes_scattered", 1) >= 150);
}

#[test]
fn cm_disconnect_tears_the_group_down() {
    use control::p4ce::CmAgentEvent;
    let mut lab = cm_lab(2);
    assert_eq!(
        lab.replicate_all(&values(20, 3), 1_000_000_000).unwrap(),
        20
    );
    let (sw_agent_groups, _) = {
        let (_, agent) = lab.switch_and_agent();
        (agent.groups(), ())
    };
    assert_eq!(sw_agent_groups, vec![1]);
    lab.disconnect_switch_cm().unwrap();
    let t = lab.now() + 20_000_000;
    lab.run_until(t).unwrap();
    assert!(
        lab.cm_log().contains(&CmAgentEvent::GroupDown(1)),
        "{:?}",
        lab.cm_log()
    );
    let (_, agent) = lab.switch_and_agent();
    assert!(agent.groups().is_empty());
}

fn failover_lab(replicas: usize, mode: Mode) -> Lab {
    let mut cfg = LabConfig::new(mode, replicas);
    cfg.leader_timeout = Some(std::time::Duration::from_millis(1));
    Lab::new(program(), cfg).unwrap_or_else(|e| panic!("{e}"))
}

/// Crashes the leader with entries in flight, lets the lowest live replica take over, and
/// checks: the new leader leads, every entry the old leader committed survives in order,
/// the switch group belongs to the new leader, and new entries commit on identical logs.
fn leader_crash(mode: Mode) {
    let mut lab = failover_lab(3, mode);
    assert_eq!(
        lab.replicate_all(&values(60, 9), 1_000_000_000).unwrap(),
        60
    );
    // More entries in flight when the leader dies.
    for v in values(6, 10) {
        lab.append(&v).unwrap();
    }
    let t = lab.now() + 3_000;
    lab.run_until(t).unwrap();
    let committed_before = lab.leader().committed();
    assert!(committed_before >= 60);
    lab.crash_host(0);
    let t = lab.now() + 10_000_000;
    lab.run_until(t).unwrap();
    let ev = lab.failover_events().to_vec();
    let (from, followers) = ev
        .iter()
        .find_map(|e| match e {
            (
                1,
                FailoverEvent::Leads {
                    from, followers, ..
                },
            ) => Some((*from, followers.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no new leader: {ev:?}"));
    assert_eq!(lab.leader_host(), 1);
    assert_eq!(followers, vec![3, 4]);
    assert!(from >= committed_before, "{from} < {committed_before}");
    assert!(
        ev.iter()
            .all(|(_, e)| !matches!(e, FailoverEvent::Failed { .. })),
        "{ev:?}"
    );
    // Every live replica follows the new leader (id 2).
    for h in [2, 3] {
        assert!(
            ev.iter().any(|e| matches!(
                e,
                (x, FailoverEvent::Follows { leader: 2, .. }) if *x == h
            )),
            "host {h}: {ev:?}"
        );
    }
    if mode == Mode::Switch {
        let (_, agent) = lab.switch_and_agent();
        let g = agent.group(1).expect("group for the new leader");
        assert_eq!(g.leader.ep, 2);
        assert_eq!(
            g.replicas.iter().map(|r| r.ep).collect::<Vec<_>>(),
            vec![3, 4]
        );
    }
    // The new leader appends; everything lands on the live replicas, in order.
    let vals = values(80, 11);
    assert_eq!(
        lab.replicate_all(&vals, lab.now() + 1_000_000_000).unwrap(),
        80
    );
    let total = from as usize + 80;
    assert_eq!(lab.appended().len(), total);
    assert_logs_identical(&mut lab, &[2, 3], total);
    // The committed prefix of the old leader is intact (the first 60 values are known).
    let first = values(60, 9);
    for (i, v) in first.iter().enumerate() {
        assert_eq!(&lab.applied(2)[i], v);
    }
    if mode == Mode::Switch {
        assert!(
            lab.leader().stats().switch_writes > 0,
            "{:?}",
            lab.leader().stats()
        );
    }
}

#[test]
fn leader_crash_unicast() {
    leader_crash(Mode::Unicast);
}

#[test]
fn leader_crash_p4ce_through_cm() {
    leader_crash(Mode::Switch);
}

/// Table IV's shape: every fault is survived (commits resume) and the outage is reported;
/// `--nocapture` prints the figures. Times depend on the lab's timeouts, so they are not
/// asserted beyond "commits resumed". Slow in a debug build (about a minute):
/// `cargo test --release -p pisa-labs --test p4ce_e2e failover_times -- --ignored --nocapture`.
#[test]
#[ignore = "slow in debug builds; run with --ignored --nocapture for the table"]
fn failover_times_table() {
    use labs::p4ce::mem::failtime::{measure, Fault};
    let rows = [
        (Fault::ReplicaCrash, Mode::Switch),
        (Fault::ReplicaCrash, Mode::Unicast),
        (Fault::LeaderCrash, Mode::Switch),
        (Fault::LeaderCrash, Mode::Unicast),
        (Fault::SwitchCrash, Mode::Switch),
    ];
    for (fault, mode) in rows {
        let t = measure(program(), fault, mode).unwrap();
        println!(
            "{:?} {:?}: outage (max commit gap) {:.1} us, fault -> first new entry committed {:.1} us, steady gap {:.2} us, {} commits after",
            t.fault,
            t.mode,
            t.max_gap_ns as f64 / 1e3,
            t.to_first_new_commit_ns as f64 / 1e3,
            t.steady_gap_ns as f64 / 1e3,
            t.committed_after
        );
        assert!(t.committed_after > 100, "{t:?}");
        assert!(t.to_first_new_commit_ns < 12_000_000, "{t:?}");
    }
}

/// Bad ConnectRequests to the switch agent are refused (REJ to the leader), nothing is
/// programmed, and the agent keeps serving the real group.
#[test]
fn cm_agent_refuses_bad_requests() {
    use control::p4ce::CmAgentEvent;
    use hosts::p4ce::wire::{GroupRequest, ReplicaAddr, P4CE_SERVICE_PORT};
    use rdma::verbs::CmEvent;
    use std::net::{IpAddr, Ipv4Addr};
    let mut lab = cm_lab(2);
    let unknown = GroupRequest {
        group: 2,
        f: 1,
        leader_ep: 1,
        replicas: vec![ReplicaAddr {
            ip: Ipv4Addr::new(10, 9, 9, 9),
            port: 7471,
            ep: 9,
        }],
    }
    .to_bytes()
    .unwrap();
    let busy = GroupRequest {
        group: 1,
        f: 1,
        leader_ep: 1,
        replicas: vec![ReplicaAddr {
            ip: Ipv4Addr::new(10, 0, 0, 2),
            port: 7471,
            ep: 2,
        }],
    }
    .to_bytes()
    .unwrap();
    for pd in [b"garbage".to_vec(), unknown, busy] {
        let (_, _, sw_ip) = lab.group_addresses();
        let now = rdma::verbs::Instant::from_nanos(lab.now());
        let before = lab.cm_log().len();
        let conn = lab.with_node(0, |h| {
            let (pdh, cq) = (h.pd, h.cq);
            let qp = h
                .ep()
                .create_qp(QpInitAttr {
                    pd: pdh,
                    qp_type: QpType::Rc,
                    send_cq: cq,
                    recv_cq: cq,
                    max_send_wr: 4,
                    max_recv_wr: 1,
                })
                .unwrap();
            h.ep()
                .connect(now, qp, IpAddr::V4(sw_ip), P4CE_SERVICE_PORT, &pd)
                .unwrap()
        });
        let mut rejected = false;
        let deadline = lab.now() + 5_000_000;
        while lab.now() < deadline && !rejected {
            lab.advance(deadline).unwrap();
            // Events of connections the node did not open are left to its owner.
            rejected = lab
                .node(0)
                .unclaimed
                .iter()
                .any(|ev| matches!(ev, CmEvent::Rejected { conn: c, .. } if *c == conn));
        }
        assert!(rejected, "request {pd:?} not rejected");
        assert!(
            matches!(lab.cm_log().get(before), Some(CmAgentEvent::Refused { .. })),
            "{:?}",
            lab.cm_log()
        );
    }
    let (_, agent) = lab.switch_and_agent();
    assert_eq!(agent.groups(), vec![1]);
    assert_eq!(agent.group(1).map(|g| g.leader.ep), Some(1));
    // The real group still replicates through the switch.
    assert_eq!(
        lab.replicate_all(&values(30, 4), 1_000_000_000).unwrap(),
        30
    );
    assert_logs_identical(&mut lab, &[1, 2], 30);
    assert_eq!(lab.leader().stats().fallbacks, 0);
}

/// The next leader is behind when the leader dies (it was stalled while the others
/// committed entries without it): it must READ a longer log from another replica and adopt
/// it, so no committed entry is lost.
fn leader_crash_with_lagging_successor(mode: Mode) {
    let mut lab = failover_lab(3, mode);
    assert_eq!(
        lab.replicate_all(&values(20, 5), 1_000_000_000).unwrap(),
        20
    );
    lab.set_host_paused(1, true);
    let vals = values(30, 6);
    // f = 2 of hosts 2..=4: commits go on without host 1.
    let deadline = lab.now() + 200_000;
    let mut next = 0;
    while lab.now() < deadline && lab.leader().committed() < 50 {
        while next < vals.len() && lab.append(&vals[next]).unwrap().is_some() {
            next += 1;
        }
        lab.advance(deadline).unwrap();
    }
    let committed = lab.leader().committed();
    assert!(committed > 20, "nothing committed while host 1 was stalled");
    lab.crash_host(0);
    lab.set_host_paused(1, false);
    assert!(lab.applied(1).len() < committed as usize);
    let t = lab.now() + 10_000_000;
    lab.run_until(t).unwrap();
    let ev = lab.failover_events().to_vec();
    let (from, source) = ev
        .iter()
        .find_map(|e| match e {
            (1, FailoverEvent::Leads { from, source, .. }) => Some((*from, *source)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no new leader: {ev:?}"));
    assert_ne!(
        source, 2,
        "the lagging successor adopted its own log: {ev:?}"
    );
    assert!(
        from >= committed,
        "{from} < {committed}: committed entries lost"
    );
    let more = values(40, 8);
    assert_eq!(
        lab.replicate_all(&more, lab.now() + 1_000_000_000).unwrap(),
        40
    );
    let total = from as usize + 40;
    assert_logs_identical(&mut lab, &[2, 3], total);
    // The new leader's own log holds every committed entry, in order.
    let expect: Vec<Vec<u8>> = values(20, 5).into_iter().chain(values(30, 6)).collect();
    for (i, v) in expect.iter().enumerate().take(committed as usize) {
        assert_eq!(&lab.applied(1)[i], v, "entry {i}");
    }
}

#[test]
fn leader_crash_lagging_successor_unicast() {
    leader_crash_with_lagging_successor(Mode::Unicast);
}

#[test]
fn leader_crash_lagging_successor_p4ce_cm() {
    leader_crash_with_lagging_successor(Mode::Switch);
}

/// The host that leads after the latest fail-over, from the events.
fn latest_leader(lab: &Lab) -> Option<(usize, u64)> {
    lab.failover_events().iter().rev().find_map(|e| match e {
        (host, FailoverEvent::Leads { from, .. }) => Some((*host, *from)),
        _ => None,
    })
}

/// Two failures in a row with entries in flight each time: the leader, then (`second_leader`)
/// the new leader too, or one replica. After each, every entry committed so far must still be
/// at its index on the live replicas' logs, and new entries commit on identical logs.
fn two_failovers(mode: Mode, second_leader: bool) {
    let mut lab = failover_lab(4, mode);
    let mut seed = 20u8;
    let mut snapshots: Vec<Vec<Vec<u8>>> = Vec::new();
    assert_eq!(
        lab.replicate_all(&values(40, seed), 1_000_000_000).unwrap(),
        40
    );
    let mut crashed = Vec::new();
    for round in 0..2 {
        // Entries in flight when the failure hits.
        seed += 1;
        for v in values(5, seed) {
            lab.append(&v).unwrap();
        }
        let t = lab.now() + 3_000;
        lab.run_until(t).unwrap();
        let committed = lab.leader().committed() as usize;
        snapshots.push(lab.appended()[..committed].to_vec());
        let victim = if round == 0 || second_leader {
            lab.leader_host()
        } else {
            4
        };
        lab.crash_host(victim);
        crashed.push(victim);
        let t = lab.now() + 20_000_000;
        lab.run_until(t).unwrap();
        if round == 0 || second_leader {
            let (host, from) = latest_leader(&lab).unwrap_or_else(|| {
                panic!("round {round}: no new leader: {:?}", lab.failover_events())
            });
            assert!(
                !crashed.contains(&host),
                "round {round}: crashed host {host} leads"
            );
            assert_eq!(lab.leader_host(), host);
            assert!(
                from as usize >= committed,
                "round {round}: {from} < {committed}"
            );
        }
        assert!(
            lab.failover_events()
                .iter()
                .all(|(_, e)| !matches!(e, FailoverEvent::Failed { .. })),
            "round {round}: {:?}",
            lab.failover_events()
        );
        seed += 1;
        let vals = values(30, seed);
        assert_eq!(
            lab.replicate_all(&vals, lab.now() + 1_000_000_000).unwrap(),
            30,
            "round {round}: {mode:?}"
        );
    }
    let live: Vec<usize> = (1..=4)
        .filter(|h| !crashed.contains(h) && *h != lab.leader_host())
        .collect();
    assert_eq!(live.len(), 2, "two replicas left besides the leader");
    let total = lab.appended().len();
    assert_logs_identical(&mut lab, &live, total);
    // Nothing committed before either failure was lost or moved.
    for (k, snap) in snapshots.iter().enumerate() {
        for &h in &live {
            for (i, v) in snap.iter().enumerate() {
                assert_eq!(&lab.applied(h)[i], v, "failure {k}: host {h} entry {i}");
            }
        }
    }
    if mode == Mode::Switch {
        let lead = lab.leader_host();
        let leader_ep = lab.node(lead).id;
        let (_, agent) = lab.switch_and_agent();
        let g = agent.group(1).expect("group for the latest leader");
        assert_eq!(g.leader.ep, leader_ep);
    }
}

#[test]
fn two_leader_crashes_in_a_row_unicast() {
    two_failovers(Mode::Unicast, true);
}

#[test]
fn two_leader_crashes_in_a_row_p4ce_through_cm() {
    two_failovers(Mode::Switch, true);
}

#[test]
fn leader_crash_then_replica_crash_p4ce_through_cm() {
    two_failovers(Mode::Switch, false);
}

#[test]
fn leader_crash_then_replica_crash_unicast() {
    two_failovers(Mode::Unicast, false);
}

/// Drives the lab, appending `vals[*next..]` as the window allows, until `done` holds.
fn drive_until(
    lab: &mut Lab,
    vals: &[Vec<u8>],
    next: &mut usize,
    mut done: impl FnMut(&mut Lab) -> bool,
) {
    let deadline = lab.now() + 1_000_000_000;
    while !done(lab) {
        while *next < vals.len() && lab.append(&vals[*next]).unwrap().is_some() {
            *next += 1;
        }
        assert!(lab.advance(deadline).unwrap(), "nothing left to do");
    }
}

/// §III-A: a replica that missed one scattered WRITE NAKs every later packet of the switch
/// QP; the switch forwards the NAK, and although the other replica's ACKs already moved the
/// leader's requester past that PSN (so RC ignores it as stale), the leader reverts to
/// unicast, re-sends the lagging replica what it lacks and takes the switch path again after
/// its retry: every entry commits, both logs are whole, and the switch carries entries again.
#[test]
fn a_lost_copy_to_one_replica_makes_the_leader_fall_back_on_the_nak() {
    let mut cfg = LabConfig::new(Mode::Switch, 2); // f = 1: R1's ACK alone commits
    cfg.switch_retry = std::time::Duration::from_millis(2);
    let mut lab = Lab::new(program(), cfg).unwrap();
    let vals = values(600, 9);
    assert_eq!(lab.replicate_all(&vals[..100], 1_000_000_000).unwrap(), 100);
    assert_eq!(lab.leader().stats().fallbacks, 0);
    // Lose the next frame the switch sends replica 2 (host 2; end 1 of its cable is the
    // switch's): one scattered copy of an entry.
    let link = lab.mem().topology().hosts[2].link;
    let to_r2 = lab.mem().link_control(link, 1);
    to_r2.set_loss(1.0).unwrap();
    let mut next = 100;
    drive_until(&mut lab, &vals, &mut next, |_| to_r2.tx_stats().lost > 0);
    to_r2.set_loss(0.0).unwrap();
    assert_eq!(to_r2.tx_stats().lost, 1);
    drive_until(&mut lab, &vals, &mut next, |l| {
        l.leader().committed() >= 600
    });
    let events = lab.take_events();
    assert!(
        events.contains(&LeaderEvent::FellBack { timeout: false }),
        "{events:?}"
    );
    let leader_host = lab.leader_host();
    assert!(lab.node(leader_host).endpoint().stats().seq_naks_received > 0);
    // At the fallback the leader probed the replicas and re-sent replica 2 the few entries
    // it lacked (those between the lost copy and the fallback), not a ring's worth found by
    // probes of a stalled replica later.
    let st = lab.leader().stats();
    assert!(st.fallbacks >= 1 && st.unicast_writes > 0, "{st:?}");
    assert!((1..=8).contains(&st.caught_up), "{st:?}");
    lab.run_until(lab.now() + 2_000_000).unwrap();
    assert_logs_identical(&mut lab, &[1, 2], 600);
    // The retry brought the switch path back.
    assert_eq!(lab.leader().path(), Mode::Switch);
    let before = st.switch_writes;
    assert_eq!(
        lab.replicate_all(&values(50, 10), lab.now() + 1_000_000_000)
            .unwrap(),
        50
    );
    assert_eq!(lab.leader().stats().switch_writes, before + 50);
}

/// §IV-C: the switch aggregates 256 PSNs per group at a time (NumRecv[PSN mod 256]); the
/// leader keeps its switch path within them. 64 KiB entries take 65 packets of 1024 bytes,
/// so at most 3 are in flight on the switch although the window would allow 16.
#[test]
fn the_switch_path_keeps_at_most_256_psns_in_flight() {
    let mut cfg = LabConfig::new(Mode::Switch, 2);
    cfg.max_value = 65536;
    cfg.outstanding = 16;
    let mut lab = Lab::new(program(), cfg).unwrap();
    let vals: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 65536]).collect();
    let mut next = 0;
    let mut most = 0;
    drive_until(&mut lab, &vals, &mut next, |l| {
        most = most.max(l.leader().outstanding());
        assert!(
            l.leader().outstanding() <= 3,
            "{} in flight",
            l.leader().outstanding()
        );
        l.leader().committed() >= 40
    });
    assert_eq!(most, 3);
    assert_eq!(lab.leader().stats().fallbacks, 0);
    assert_eq!(lab.leader().stats().switch_writes, 40);
    lab.run_until(lab.now() + 1_000_000).unwrap();
    assert_logs_identical(&mut lab, &[1, 2], 40);
}

/// An entry that alone takes more packets than the switch aggregates cannot use the switch
/// path: the leader refuses it with the reason (the lab says so), it does not stall.
#[test]
fn entries_larger_than_the_switch_window_are_refused_with_the_reason() {
    let mut cfg = LabConfig::new(Mode::Switch, 2);
    cfg.max_value = 300_000;
    cfg.slots = 8;
    cfg.outstanding = 4;
    let err = Lab::new(program(), cfg).err().expect("refused").to_string();
    assert!(err.contains("aggregates 256 PSNs"), "{err}");
}

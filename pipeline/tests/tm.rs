//! Behaviour of the traffic manager pieces: PRE replication and pruning, mirror sessions,
//! and the virtual-time egress queue.

use pipeline::ir::{Gress, Target};
use pipeline::tm::mirror::{
    MirrorDest, MirrorDirection, MirrorError, MirrorSession, MirrorSessions,
};
use pipeline::tm::pre::{GroupMember, Pre, PreError, Replica, ReplicationRequest};
use pipeline::tm::queue::{EcnConfig, EgressQueue, QueueConfig, QueueError};

fn ports_of(out: &[Replica]) -> Vec<(u16, u16, bool)> {
    out.iter().map(|r| (r.port, r.rid, r.rid_first)).collect()
}

/// Group 1: node 10 (RID 5: ports 1,2,3), node 11 (RID 6: port 4), node 12 (RID 5: port 7),
/// node 11 with L1 XID 100.
fn sample() -> Pre {
    let mut pre = Pre::new();
    pre.group_create(1).unwrap();
    pre.node_create(10, 5, &[3, 1, 2], &[]).unwrap();
    pre.node_create(11, 6, &[4], &[]).unwrap();
    pre.node_create(12, 5, &[7], &[]).unwrap();
    pre.group_add_node(1, 10, None).unwrap();
    pre.group_add_node(1, 11, Some(100)).unwrap();
    pre.group_add_node(1, 12, None).unwrap();
    pre
}

fn req(mgid: u16) -> ReplicationRequest {
    ReplicationRequest {
        mcast_grp_a: Some(mgid),
        ..Default::default()
    }
}

#[test]
fn replicates_in_group_node_port_order_with_rid_first() {
    let pre = sample();
    let mut out = Vec::new();
    pre.replicate(&req(1), &mut out);
    assert_eq!(
        ports_of(&out),
        vec![
            (1, 5, true),
            (2, 5, false),
            (3, 5, false),
            (4, 6, true),
            (7, 5, false), // RID 5 already had its first copy
        ]
    );
    assert!(out.iter().all(|r| r.mgid == 1));
}

#[test]
fn l1_prune_by_exclusion_id() {
    let pre = sample();
    let mut out = Vec::new();
    pre.replicate(
        &ReplicationRequest {
            level1_exclusion_id: 100,
            ..req(1)
        },
        &mut out,
    );
    assert!(out.iter().all(|r| r.port != 4), "node 11 is L1-pruned");
    assert_eq!(out.len(), 4);
    out.clear();
    // An XID on a membership without the valid bit never prunes: node 10 has none.
    pre.replicate(
        &ReplicationRequest {
            level1_exclusion_id: 0,
            ..req(1)
        },
        &mut out,
    );
    assert_eq!(out.len(), 5);
}

#[test]
fn l2_prune_needs_matching_rid_and_port_in_set() {
    let mut pre = sample();
    pre.prune_set(9, &[2, 4, 7]).unwrap();
    let mut out = Vec::new();
    // rid 5: ports 2 (node 10) and 7 (node 12) pruned; port 4 belongs to RID 6: kept.
    pre.replicate(
        &ReplicationRequest {
            level2_exclusion_id: 9,
            rid: 5,
            ..req(1)
        },
        &mut out,
    );
    assert_eq!(
        ports_of(&out),
        vec![(1, 5, true), (3, 5, false), (4, 6, true)]
    );
    // rid that matches no node: nothing is L2-pruned.
    out.clear();
    pre.replicate(
        &ReplicationRequest {
            level2_exclusion_id: 9,
            rid: 77,
            ..req(1)
        },
        &mut out,
    );
    assert_eq!(out.len(), 5);
    // The typical "don't send back to the ingress port" use: XID = ingress port.
    out.clear();
    pre.prune_set(3, &[3]).unwrap();
    pre.replicate(
        &ReplicationRequest {
            level2_exclusion_id: 3,
            rid: 5,
            ..req(1)
        },
        &mut out,
    );
    assert!(out.iter().all(|r| r.port != 3));
    // An L2 XID beyond the prune table names no set.
    out.clear();
    pre.replicate(
        &ReplicationRequest {
            level2_exclusion_id: 400,
            rid: 5,
            ..req(1)
        },
        &mut out,
    );
    assert_eq!(out.len(), 5);
}

#[test]
fn both_groups_replicate_a_first() {
    let mut pre = sample();
    pre.group_create(2).unwrap();
    pre.node_create(20, 5, &[9], &[]).unwrap();
    pre.group_add_node(2, 20, None).unwrap();
    let mut out = Vec::new();
    pre.replicate(
        &ReplicationRequest {
            mcast_grp_a: Some(2),
            mcast_grp_b: Some(1),
            ..Default::default()
        },
        &mut out,
    );
    assert_eq!(
        out[0],
        Replica {
            port: 9,
            rid: 5,
            rid_first: true,
            mgid: 2
        }
    );
    assert_eq!(out.len(), 6);
    assert!(!out[1].rid_first, "RID 5 already seen in group A");
    assert_eq!(out[1].mgid, 1);
}

#[test]
fn lag_member_chosen_by_level2_hash() {
    let mut pre = Pre::new();
    pre.lag_set(3, &[20, 21, 22]).unwrap();
    pre.node_create(1, 8, &[5], &[3]).unwrap();
    pre.group_create(7).unwrap();
    pre.group_add_node(7, 1, None).unwrap();
    let mut out = Vec::new();
    for (hash, port) in [(0u16, 20u16), (1, 21), (2, 22), (4, 21)] {
        out.clear();
        pre.replicate(
            &ReplicationRequest {
                level2_mcast_hash: hash,
                ..req(7)
            },
            &mut out,
        );
        assert_eq!(ports_of(&out), vec![(5, 8, true), (port, 8, false)]);
    }
    // An empty LAG sends nothing.
    pre.lag_set(3, &[]).unwrap();
    out.clear();
    pre.replicate(&req(7), &mut out);
    assert_eq!(out.len(), 1);
}

#[test]
fn replicate_does_not_allocate_with_capacity_and_keeps_existing() {
    let pre = sample();
    let mut out = Vec::with_capacity(16);
    out.push(Replica {
        port: 99,
        rid: 5,
        rid_first: true,
        mgid: 0,
    });
    let ptr = out.as_ptr();
    pre.replicate(&req(1), &mut out);
    assert_eq!(out.as_ptr(), ptr);
    assert_eq!(out.capacity(), 16);
    assert_eq!(out[0].port, 99);
    // rid_first is per request: the pre-existing entry does not count.
    assert!(out[1].rid_first);
    // Unknown group: nothing.
    let before = out.len();
    pre.replicate(&req(42), &mut out);
    assert_eq!(out.len(), before);
}

#[test]
fn configuration_errors_and_reads() {
    let mut pre = sample();
    assert_eq!(pre.group_create(1), Err(PreError::GroupExists(1)));
    assert_eq!(
        pre.node_create(10, 0, &[], &[]),
        Err(PreError::NodeExists(10))
    );
    assert_eq!(
        pre.node_create(13, 0, &[512], &[]),
        Err(PreError::PortOutOfRange(512))
    );
    assert_eq!(
        pre.node_create(13, 0, &[], &[255]),
        Err(PreError::LagOutOfRange(255))
    );
    assert_eq!(
        pre.group_add_node(2, 10, None),
        Err(PreError::GroupNotFound(2))
    );
    assert_eq!(
        pre.group_add_node(1, 99, None),
        Err(PreError::NodeNotFound(99))
    );
    pre.group_create(2).unwrap();
    assert_eq!(
        pre.group_add_node(2, 10, None),
        Err(PreError::NodeAlreadyAssociated { node: 10, mgid: 1 })
    );
    assert_eq!(
        pre.node_destroy(10),
        Err(PreError::NodeInUse { node: 10, mgid: 1 })
    );
    assert_eq!(pre.prune_set(288, &[1]), Err(PreError::XidOutOfRange(288)));
    assert_eq!(
        pre.group_remove_node(2, 10),
        Err(PreError::NodeNotInGroup { node: 10, mgid: 2 })
    );
    pre.group_remove_node(1, 10).unwrap();
    assert_eq!(
        pre.group_get(1),
        Some(
            &[
                GroupMember {
                    node: 11,
                    l1_xid: Some(100)
                },
                GroupMember {
                    node: 12,
                    l1_xid: None
                }
            ][..]
        )
    );
    pre.node_destroy(10).unwrap();
    assert!(pre.node_get(10).is_none());
    pre.node_update(11, 9, &[8, 6], &[]).unwrap();
    let n = pre.node_get(11).unwrap();
    assert_eq!((n.rid, n.ports.clone(), n.mgid), (9, vec![6, 8], Some(1)));
    pre.prune_set(5, &[7, 1]).unwrap();
    assert_eq!(pre.prune_get(5), Ok(vec![1, 7]));
    // Destroying a group frees its nodes.
    pre.group_destroy(1).unwrap();
    assert_eq!(pre.node_get(11).unwrap().mgid, None);
    pre.group_add_node(2, 11, None).unwrap();
    assert_eq!(pre.groups().map(|g| g.0).collect::<Vec<_>>(), vec![2]);
}

// ---- mirror sessions ----

fn session(dest: MirrorDest) -> MirrorSession {
    MirrorSession {
        direction: MirrorDirection::Ingress,
        dest,
        max_len: None,
        enabled: true,
    }
}

#[test]
fn mirror_session_ranges_per_target() {
    let mut t1 = MirrorSessions::for_target(Target::Tofino1);
    assert_eq!(
        t1.configure(0, session(MirrorDest::Port(5))),
        Err(MirrorError::SessionOutOfRange {
            id: 0,
            first: 1,
            last: 1023
        })
    );
    t1.configure(1023, session(MirrorDest::Port(5))).unwrap();
    assert!(t1.configure(1024, session(MirrorDest::Port(5))).is_err());
    let mut t2 = MirrorSessions::for_target(Target::Tofino2);
    t2.configure(0, session(MirrorDest::Port(5))).unwrap();
    assert!(t2.configure(256, session(MirrorDest::Port(5))).is_err());
}

#[test]
fn mirror_session_lifecycle() {
    let mut m = MirrorSessions::new(1..=1023);
    assert_eq!(
        m.configure(5, session(MirrorDest::Port(600))),
        Err(MirrorError::BadPort(600))
    );
    assert_eq!(
        m.configure(
            5,
            session(MirrorDest::Multicast {
                mcast_grp_a: None,
                mcast_grp_b: None,
                level1_exclusion_id: 0,
                level2_exclusion_id: 0,
                rid: 0,
                level1_mcast_hash: 0,
                level2_mcast_hash: 0,
            })
        ),
        Err(MirrorError::NoGroup)
    );
    let mut s = session(MirrorDest::Multicast {
        mcast_grp_a: Some(3),
        mcast_grp_b: None,
        level1_exclusion_id: 1,
        level2_exclusion_id: 2,
        rid: 4,
        level1_mcast_hash: 0,
        level2_mcast_hash: 9,
    });
    s.max_len = Some(128);
    m.configure(5, s).unwrap();
    assert_eq!(m.get(5), Some(&s));
    // max_len counts the mirror header: 128 in all.
    assert_eq!(s.copy_len(4, 1500), (4, 124));
    assert_eq!(s.copy_len(4, 64), (4, 64));
    assert_eq!(s.copy_len(200, 64), (128, 0));
    // The session's hash, not the packet's, picks LAG members.
    let r = s.dest.replication().unwrap();
    assert_eq!((r.mcast_grp_a, r.rid, r.level2_mcast_hash), (Some(3), 4, 9));
    assert!(m.active(5, Gress::Ingress).is_some());
    assert!(m.active(5, Gress::Egress).is_none(), "ingress-only session");
    m.set_enabled(5, false).unwrap();
    assert!(m.active(5, Gress::Ingress).is_none());
    assert_eq!(m.iter().map(|(id, _)| id).collect::<Vec<_>>(), vec![5]);
    assert_eq!(
        m.delete(5),
        Ok(MirrorSession {
            enabled: false,
            ..s
        })
    );
    assert_eq!(m.delete(5), Err(MirrorError::NotFound(5)));
    assert_eq!(m.set_enabled(6, true), Err(MirrorError::NotFound(6)));
    let mut z = session(MirrorDest::Port(1));
    z.max_len = Some(0);
    assert_eq!(m.configure(7, z), Err(MirrorError::ZeroMaxLen));
}

// ---- egress queue ----

fn q(rate: Option<u64>, cap: u64, ecn: Option<EcnConfig>) -> EgressQueue {
    EgressQueue::new(QueueConfig {
        rate_bps: rate,
        capacity_bytes: cap,
        ecn,
        seed: 1,
    })
    .unwrap()
}

#[test]
fn serialization_and_fifo_departures() {
    // 10 Gbit/s: 1250 bytes take 1000 ns.
    let mut eq = q(Some(10_000_000_000), 1_000_000, None);
    let a = eq.enqueue(0, 1250);
    assert_eq!(
        (a.departure_ns, a.deq_timedelta, a.enq_qdepth),
        (1000, 0, 0)
    );
    let b = eq.enqueue(0, 1250);
    assert_eq!((b.departure_ns, b.deq_timedelta), (2000, 1000));
    // 1250 bytes still queued ahead: 16 cells (1250 / 80 rounded up).
    assert_eq!(b.enq_qdepth, 16);
    // Half way through the first packet: 625 + 1250 bytes left.
    assert_eq!(eq.depth_bytes_at(500), 1875);
    // After the queue drained, a packet starts at once.
    let c = eq.enqueue(5000, 125);
    assert_eq!(
        (c.departure_ns, c.deq_timedelta, c.enq_qdepth),
        (5100, 0, 0)
    );
    assert_eq!(eq.stats().enqueued, 3);
}

#[test]
fn tail_drop_at_capacity() {
    let mut eq = q(Some(1_000_000_000), 3000, None);
    assert!(eq.enqueue(0, 1500).accepted);
    assert!(eq.enqueue(0, 1500).accepted);
    let d = eq.enqueue(0, 1);
    assert!(!d.accepted);
    assert_eq!(eq.stats().dropped, 1);
    assert_eq!(eq.stats().max_depth_bytes, 3000);
    // 1500 bytes at 1 Gbit/s = 12 µs: after 12 µs there is room again.
    assert!(eq.enqueue(12_000, 1500).accepted);
}

#[test]
fn infinite_rate_never_queues() {
    let mut eq = q(None, 2000, Some(EcnConfig::DCQCN_100G));
    for t in 0..100 {
        let a = eq.enqueue(t, 1500);
        assert!(a.accepted && !a.ecn_mark);
        assert_eq!((a.departure_ns, a.enq_qdepth), (t, 0));
    }
}

/// An infinitely fast port without ECN (the default queue, admitted by a short path of its
/// own) admits, drops and counts exactly as one with ECN configured (the general path, whose
/// marking probability at an empty queue is 0): same admissions, same counters, packets over
/// the capacity included.
#[test]
fn unpaced_queue_without_ecn_admits_as_the_general_path() {
    let never = EcnConfig {
        kmin_bytes: u64::MAX,
        kmax_bytes: u64::MAX,
        pmax: 1.0,
    };
    let mut short = q(None, 1000, None);
    let mut general = q(None, 1000, Some(never));
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for t in 0..500u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = (x % 1400) as u32;
        let now = t * 37 + x % 5;
        assert_eq!(
            short.enqueue(now, bytes),
            general.enqueue(now, bytes),
            "at {t}"
        );
    }
    assert_eq!(short.stats(), general.stats());
    assert!(short.stats().dropped > 0 && short.stats().enqueued > 0);
}

#[test]
fn ecn_marking_follows_red_profile() {
    let e = EcnConfig::DCQCN_100G;
    assert_eq!(e.probability(50_000), 0.0);
    assert_eq!(e.probability(500_001), 1.0);
    assert!((e.probability(275_000) - 0.005).abs() < 1e-12);
    // Build a standing queue far above Kmax on a slow port: every packet is marked.
    let mut eq = q(Some(1_000_000_000), 10_000_000, Some(e));
    let mut marks_low = 0;
    for _ in 0..30 {
        if eq.enqueue(0, 1500).ecn_mark {
            marks_low += 1;
        }
    }
    assert_eq!(marks_low, 0, "below Kmin (45 KB queued at most)");
    for _ in 0..400 {
        eq.enqueue(0, 1500);
    }
    assert!(eq.depth_bytes_at(0) > 500_000);
    assert!(eq.enqueue(0, 1500).ecn_mark);
    assert!(eq.stats().marked > 0);
}

#[test]
fn marking_is_deterministic_per_seed() {
    let run = |seed| {
        let mut eq = EgressQueue::new(QueueConfig {
            rate_bps: Some(100_000_000_000),
            capacity_bytes: 10_000_000,
            ecn: Some(EcnConfig {
                kmin_bytes: 0,
                kmax_bytes: 1_000_000,
                pmax: 1.0,
            }),
            seed,
        })
        .unwrap();
        (0..500)
            .map(|_| eq.enqueue(0, 1000).ecn_mark)
            .collect::<Vec<_>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

#[test]
fn bad_queue_configs() {
    let base = QueueConfig {
        rate_bps: Some(0),
        capacity_bytes: 1,
        ecn: None,
        seed: 0,
    };
    assert_eq!(EgressQueue::new(base).unwrap_err(), QueueError::ZeroRate);
    let bad = QueueConfig {
        rate_bps: None,
        ecn: Some(EcnConfig {
            kmin_bytes: 10,
            kmax_bytes: 5,
            pmax: 0.1,
        }),
        ..base
    };
    assert!(matches!(
        EgressQueue::new(bad),
        Err(QueueError::KminAboveKmax { .. })
    ));
    let bad = QueueConfig {
        rate_bps: None,
        ecn: Some(EcnConfig {
            kmin_bytes: 1,
            kmax_bytes: 5,
            pmax: 1.5,
        }),
        ..base
    };
    assert!(matches!(EgressQueue::new(bad), Err(QueueError::BadPmax(_))));
}

//! The 1Pipe lab end to end on the k=4 fat tree (16 processes, all-to-all broadcast).

use std::path::PathBuf;

use super::check;
use super::lab::{run, LabConfig};

fn fat_tree() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/fat-tree-k4.yaml")
}

#[test]
fn best_effort_all_to_all_delivers_everything_in_one_total_order() {
    let cfg = LabConfig::new(fat_tree());
    let r = run(&cfg).unwrap();
    let sent: usize = r.sent.iter().map(Vec::len).sum();
    assert_eq!(sent, 16 * 20, "every process broadcast its messages");
    check::total_order(&r).unwrap();
    check::delivered_were_sent(&r).unwrap();
    check::causality(&r).unwrap();
    let lost = check::delivered_or_reported(&r, u64::MAX).unwrap();
    assert_eq!(lost, 0, "no loss configured");
    let delivered: usize = r.delivered.iter().map(Vec::len).sum();
    assert_eq!(delivered, 16 * 20 * 15);
    assert!(r.beacons > 0);
    assert!(
        r.link_events.is_empty(),
        "no link went silent: {:?}",
        r.link_events
    );

    // The checkers can fail: two deliveries swapped, one dropped, one forged.
    let mut r = r;
    r.delivered[3].swap(5, 6);
    assert!(check::total_order(&r).is_err());
    r.delivered[3].swap(5, 6);
    let gone = r.delivered[7].remove(0);
    assert!(check::delivered_or_reported(&r, u64::MAX).is_err());
    assert!(check::atomic(&r, u64::MAX).is_err());
    let mut forged = gone.clone();
    forged.d.ts += 1;
    r.delivered[7].insert(0, forged);
    assert!(check::delivered_were_sent(&r).is_err());
    // A delivery moved before a send it came after: that send contradicts causality.
    let first_send = r.sent[7][0].at;
    let late = r.delivered[7]
        .iter()
        .position(|d| d.at > first_send)
        .unwrap();
    r.delivered[7][late].at = first_send;
    r.delivered[7][late].d.ts = r.sent[7][0].ts + 1;
    assert!(check::causality(&r).is_err());
}

#[test]
fn under_loss_and_reordering_the_order_holds_and_losses_are_reported() {
    let mut cfg = LabConfig::new(fat_tree());
    cfg.loss = 1e-3;
    cfg.reorder = 1e-3;
    let r = run(&cfg).unwrap();
    check::total_order(&r).unwrap();
    check::delivered_were_sent(&r).unwrap();
    check::delivered_or_reported(&r, u64::MAX).unwrap();
}

#[test]
fn reliable_mode_loses_nothing_under_loss() {
    let mut cfg = LabConfig::new(fat_tree());
    cfg.reliable = true;
    cfg.loss = 1e-3;
    let r = run(&cfg).unwrap();
    check::total_order(&r).unwrap();
    check::delivered_were_sent(&r).unwrap();
    let lost = check::delivered_or_reported(&r, u64::MAX).unwrap();
    assert_eq!(
        lost, 0,
        "reliable messages are retransmitted, never reported lost"
    );
}

#[test]
fn after_a_host_crash_the_survivors_agree_on_its_failure_and_resume() {
    let mut cfg = LabConfig::new(fat_tree());
    cfg.fail_host = Some((15, 200_000));
    let r = run(&cfg).unwrap();
    let (h, at, declared, failure_ts) = r.failure.expect("the crash was detected");
    assert_eq!((h, at), (15, 200_000));
    assert!(
        declared > at && declared <= at + 2 * cfg.link_timeout_ns,
        "{declared}"
    );
    check::total_order(&r).unwrap();
    check::delivered_were_sent(&r).unwrap();
    check::causality(&r).unwrap();
    for s in 0..15 {
        let ev = r.events[s].iter().find_map(|e| match e {
            hosts::onepipe::process::Event::ProcessFail {
                process,
                failure_ts,
            } => Some((*process, *failure_ts)),
            _ => None,
        });
        assert_eq!(
            ev,
            Some((15, failure_ts)),
            "process {s} agrees on the failure"
        );
        // nothing from the failed host above its failure timestamp
        assert!(r.delivered[s]
            .iter()
            .all(|d| d.d.src != 15 || d.d.ts <= failure_ts));
        // and delivery resumed: messages sent after the failure was declared got through
        let sent_after = |d: &&super::host::Delivered| {
            r.sent[usize::from(d.d.src)]
                .iter()
                .any(|m| m.ts == d.d.ts && m.at > declared)
        };
        assert!(
            r.delivered[s].iter().any(|d| sent_after(&d)),
            "process {s} delivers again"
        );
    }
}

#[test]
fn fig8_every_scheme_orders_four_processes() {
    let cfg = super::scaling::config(fat_tree(), 4, 1_000_000);
    let points = super::scaling::scaling(&fat_tree(), &[4], 1_000_000).unwrap();
    assert_eq!(points.len(), 4);
    for p in &points {
        assert!(p.checks_passed, "{}: {:?}", p.scheme, p.check_error);
        assert!(
            p.delivered_per_s_per_process > 0.0,
            "{} delivered nothing",
            p.scheme
        );
    }
    // The sequencer's checker fails when a receiver swaps two deliveries.
    let mut r = super::baseline::run(&cfg, hosts::onepipe::baselines::Scheme::Sequencer).unwrap();
    let h = r.members[1];
    assert!(r.delivered[h].len() > 2);
    super::baseline::check(&r, 0).unwrap();
    r.delivered[h].swap(0, 1);
    assert!(super::baseline::check(&r, 0).is_err());
}

#[test]
fn fig12_background_traffic_delays_but_keeps_the_order() {
    let points = super::queuing::queuing(&fat_tree(), &[0.0, 0.6], 1_200_000).unwrap();
    for (load, r) in &points {
        assert!(r.checks_passed, "background {load}: {:?}", r.check_error);
        assert!(r.deliveries > 0);
    }
    // Queues behind the background frames: the unordered transport is slower too.
    assert!(points[1].1.unordered_p99_us > points[0].1.unordered_p99_us);
}

#[test]
fn kv_transactions_are_serializable_with_1pipe_and_with_locks() {
    let mut cfg = super::scaling::config(fat_tree(), 8, 600_000);
    cfg.send_every_ns = 20_000;
    let points = super::kv::kv(&cfg, 3, 16).unwrap();
    for p in &points {
        assert!(p.checks_passed, "{}: {:?}", p.scheme, p.check_error);
        assert!(
            p.txns_per_s_per_process > 0.0,
            "{} committed nothing",
            p.scheme
        );
    }
    // The checker finds two shards where two transactions wrote keys in opposite orders; on
    // different keys the order does not matter.
    let (a, b) = ((0, 1), (1, 1));
    let on = |t, k: u64| (t, vec![k]);
    let s0 = vec![on(a, 0), on(b, 0)];
    assert!(super::kv::serializable(&[s0.clone(), vec![on(b, 1), on(a, 1)]]).is_err());
    assert!(super::kv::serializable(&[s0.clone(), vec![on(a, 1), on(b, 1)]]).is_ok());
    assert!(super::kv::serializable(&[s0, vec![on(b, 1), on(a, 3)]]).is_ok());
}

/// §5 in reliable mode: a host crashes mid-stream; its last scatterings are delivered at every
/// survivor or at none (failure timestamp: its link's last commit barrier), and scatterings to
/// it that it never ACKed are recalled at the others.
#[test]
fn reliable_crash_keeps_every_scattering_atomic_among_survivors() {
    let mut cfg = LabConfig::new(fat_tree());
    cfg.reliable = true;
    cfg.fail_host = Some((15, 200_000));
    let r = run(&cfg).unwrap();
    let (h, _, declared, failure_ts) = r.failure.expect("the crash was detected");
    check::total_order(&r).unwrap();
    check::delivered_were_sent(&r).unwrap();
    check::atomic_among_survivors(&r, h).unwrap();
    // §5.2's order: the ToR only reports the silent link; the controller removes it (Resume)
    // after telling every survivor and collecting their completions, never before.
    use control::onepipe::LinkEvent;
    let ev: Vec<(u64, LinkEvent)> = r.link_events.iter().map(|(_, t, e)| (*t, *e)).collect();
    assert!(
        matches!(ev.as_slice(), [(ts, LinkEvent::Silent { .. }), (tr, LinkEvent::Removed { .. })]
            if *ts <= declared && *tr >= declared),
        "silent, declared at {declared}, then removed: {ev:?}"
    );
    // The failed host's scatterings above its failure timestamp reached nobody; some below
    // it reached everyone; scatterings to it it never ACKed were recalled (reported failed).
    let from_failed = |above: bool| {
        r.sent[h]
            .iter()
            .filter(|m| (m.ts > failure_ts) == above)
            .any(|m| {
                (0..15).any(|s| {
                    r.delivered[s]
                        .iter()
                        .any(|d| d.d.src == 15 && d.d.ts == m.ts)
                })
            })
    };
    assert!(!from_failed(true), "nothing above the failure timestamp");
    assert!(from_failed(false));
    let recalled = (0..15).any(|s| {
        r.events[s].iter().any(|e| {
            matches!(e, hosts::onepipe::process::Event::SendFail { dst, .. } if usize::from(*dst) != h)
        })
    });
    assert!(recalled, "some scattering to the failed host was recalled");
    // The checker fails on a scattering delivered at only some survivors.
    let mut r = r;
    let i = r.delivered[0].iter().position(|d| d.d.src != 15).unwrap();
    r.delivered[0].remove(i);
    assert!(check::atomic_among_survivors(&r, h).is_err());
}

/// §4.1's barriers flow over a DAG of tiers: three switches in a ring (all of tier 0) would
/// feed each other's minimum and deliver nothing; the lab refuses such a topology up front,
/// naming the link (audit 10a #17), and still takes the leaf-spine.
#[test]
fn a_topology_with_a_link_between_two_switches_of_one_tier_is_refused() {
    let dir = std::env::temp_dir().join(format!("pisa-onepipe-ring-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let program = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/fabric.p4");
    let yaml = format!(
        "name: ring3\ndefaults:\n  program: {}\n  tables: generated\n  target: tofino1\n\
         switches:\n  - {{ name: s1 }}\n  - {{ name: s2 }}\n  - {{ name: s3 }}\n\
         hosts:\n  - {{ name: h1, ipv4: 10.0.1.10/24 }}\n  - {{ name: h2, ipv4: 10.0.2.10/24 }}\n\
         \x20 - {{ name: h3, ipv4: 10.0.3.10/24 }}\n\
         links:\n  - {{ a: h1, b: \"s1:0\" }}\n  - {{ a: h2, b: \"s2:0\" }}\n  - {{ a: h3, b: \"s3:0\" }}\n\
         \x20 - {{ a: \"s1:1\", b: \"s2:1\" }}\n  - {{ a: \"s2:2\", b: \"s3:1\" }}\n\
         \x20 - {{ a: \"s3:2\", b: \"s1:2\" }}\n",
        program.display()
    );
    let path = dir.join("ring.yaml");
    std::fs::write(&path, yaml).unwrap();
    let err = run(&LabConfig::new(path))
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("tiered fabric") && err.contains("s1-s2"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    let topo = crate::topology::Topology::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/labs/leaf-spine.yaml"),
    )
    .unwrap();
    super::lab::check_tiered(&topo).unwrap();
    super::lab::check_tiered(&crate::topology::Topology::load(&fat_tree()).unwrap()).unwrap();
}

/// A host beacons at the multiples of the interval on its own (skewed) clock, whatever it sent
/// in between (§4.2: synchronized beacons); a packet sent at a tick carries the tick's barrier
/// and takes the beacon's place.
#[test]
fn host_beacons_fire_at_multiples_of_the_interval_on_its_clock() {
    use crate::host::HostApp;
    use dataplane::Nanos;
    use hosts::onepipe::clock::HostClock;
    use hosts::onepipe::process::{Config, Process};
    use hosts::onepipe::wire::{Header, Opcode};
    use std::net::Ipv4Addr;

    let every = 3_000;
    let work = super::host::Workload {
        reliable: false,
        send_every: 7_100,
        messages: 5,
        beacon_every: every,
        size: 64,
        background_every: 0,
        background_size: 0,
        background_to: None,
        kv: None,
    };
    let cfg = Config {
        id: 0,
        ack_timeout_ns: 1_000_000,
        window: 64,
    };
    let ips = vec![Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2)];
    // 700 ns ahead of true time: its ticks fall at true k * 3000 - 700.
    let mut h = super::host::OnepipeHost::new(
        Process::init(cfg, HostClock::new(700, 0.0)),
        [2, 0, 0, 0, 0, 1],
        ips[0],
        [2, 0, 0, 0, 0, 9],
        Ipv4Addr::new(10, 0, 0, 254),
        ips,
        work,
        1_000,
    );
    let mut frames: Vec<(u64, Header)> = Vec::new();
    let mut now = 0;
    while now < 40_000 {
        h.poll(Nanos(now), &mut |f| {
            let p = etherparse::SlicedPacket::from_ethernet(&f).unwrap();
            let Some(etherparse::TransportSlice::Udp(u)) = p.transport else {
                panic!("a UDP frame")
            };
            frames.push((now, Header::parse(u.payload()).unwrap().0));
        });
        now = h.next_wakeup().unwrap().0.max(now + 1);
    }
    let beacons: Vec<&(u64, Header)> = frames
        .iter()
        .filter(|(_, f)| f.opcode == Opcode::Beacon)
        .collect();
    let data: Vec<u64> = frames
        .iter()
        .filter(|(_, f)| f.opcode == Opcode::Data)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(
        data,
        vec![1_000, 8_100, 15_200, 22_300, 29_400],
        "its broadcasts"
    );
    assert!(beacons.len() >= 12, "one per interval: {beacons:?}");
    for (t, b) in &beacons {
        assert_eq!(b.ts % every, 0, "a beacon off the tick: {b:?} at {t}");
        assert_eq!(t + 700, b.ts, "sent at the tick of its own clock");
    }
    // Ticks 1..=13 (clock 3000..39000): every one has its beacon, sends notwithstanding.
    let ticks: Vec<u64> = beacons.iter().map(|(_, b)| b.ts / every).collect();
    assert_eq!(ticks, (1..=13).collect::<Vec<_>>());
}

/// Switch beacons are scheduled by tier (ToRs, then aggregation, core, and back down), so one
/// wave of barriers crosses the fabric per interval: in an idle system (Fig. 9a) the ordering
/// overhead over the unordered transport is about half an interval (§4.2, §6.2.1), not one
/// interval per hop. Virtual time: the figures are deterministic.
#[test]
fn synchronized_beacons_cost_an_idle_system_about_half_an_interval() {
    let mut cfg = LabConfig::new(fat_tree());
    cfg.beacon_interval_ns = 30_000;
    cfg.link_timeout_ns = 300_000;
    cfg.send_every_ns = 200_000;
    cfg.messages = 4;
    cfg.duration_ns = 1_200_000;
    cfg.skew_ns = 0;
    cfg.drift_ppm = 0.0;
    let topo = crate::topology::Topology::load(&cfg.topology).unwrap();
    let tiers = crate::routes::switch_tiers(&topo);
    let phases: Vec<Vec<u64>> = (0..topo.switches.len())
        .map(|s| super::lab::beacon_phases(&cfg, &topo, s, 62))
        .collect();
    let hop = phases[tiers.iter().position(|&t| t == 2).unwrap()][0] / 3;
    for (s, p) in phases.iter().enumerate() {
        let want = match tiers[s] {
            0 => vec![hop, 5 * hop],
            1 => vec![2 * hop, 4 * hop],
            _ => vec![3 * hop],
        };
        assert_eq!(p, &want, "switch {}", topo.switches[s].name);
    }
    let r = run(&cfg).unwrap();
    let rep = super::bench::report(&cfg, &r);
    assert!(rep.checks_passed, "{:?}", rep.check_error);
    assert_eq!(rep.deliveries, 16 * 4 * 15);
    let half = cfg.beacon_interval_ns as f64 / 2e3;
    assert!(
        rep.overhead_p50_us < 1.5 * half,
        "overhead p50 {:.2} us against half the interval {half} us",
        rep.overhead_p50_us
    );
}

/// §7.3.1: write-only transactions run on reliable 1Pipe and are applied at all of their
/// shards or at none, loss notwithstanding; on best effort the same loss leaves transactions
/// applied at some shards only, and the checker says so.
#[test]
fn kv_write_only_transactions_on_reliable_1pipe_are_all_or_nothing() {
    // 10 Gbit/s links, 10 us beacons: retransmissions (after 20 intervals) within the run.
    let mut cfg = LabConfig::new(fat_tree());
    cfg.processes = 8;
    cfg.send_every_ns = 20_000;
    cfg.messages = u64::MAX;
    cfg.loss = 0.01;
    let r = super::kv::one_pipe(&cfg, 3, 16, true).unwrap();
    assert_eq!(r.scheme, "1Pipe/R (WO)");
    assert!(r.checks_passed, "{:?}", r.check_error);
    assert!(r.txns_per_s_per_process > 0.0);
    let be = super::kv::one_pipe(&cfg, 3, 16, false).unwrap();
    let e = be.check_error.expect("best effort under 1% loss");
    assert!(e.contains("shards"), "{e}");

    // The checker itself: a transaction at one of its two shards, or with other keys there.
    let want = |_| vec![(0, vec![1]), (1, vec![2])];
    let t = (3, 7);
    let sent = [(t, 10)];
    let both = [vec![(t, vec![1])], vec![(t, vec![2])]];
    assert!(super::kv::all_or_nothing(&sent, &both, want, 100).is_ok());
    assert!(super::kv::all_or_nothing(&sent, &[vec![], vec![]], want, 100).is_ok());
    let one = [vec![(t, vec![1])], vec![]];
    assert!(super::kv::all_or_nothing(&sent, &one, want, 100).is_err());
    assert!(
        super::kv::all_or_nothing(&sent, &one, want, 5).is_ok(),
        "in flight"
    );
    let other = [vec![(t, vec![1])], vec![(t, vec![9])]];
    assert!(super::kv::all_or_nothing(&sent, &other, want, 100).is_err());
}

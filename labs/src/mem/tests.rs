//! The in-memory driver: ping-all across the shipped fabrics, link faults, captures,
//! determinism.

use std::path::Path;

use crate::ping::{datagram, ping_all_mem};
use crate::topology::Topology;
use crate::MemLab;

fn shipped(name: &str) -> Topology {
    Topology::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../deploy/labs")
            .join(name),
    )
    .unwrap()
}

#[test]
fn fat_tree_k4_reaches_all_240_pairs() {
    let mut lab = MemLab::new(shipped("fat-tree-k4.yaml")).unwrap();
    let r = ping_all_mem(&mut lab);
    assert_eq!(r.pairs, 240);
    assert!(r.all_reached(), "{}", r.render(lab.topology()));
    // Traffic between pods crosses the core: every core switch carried some of it (ECMP).
    for c in 0..4 {
        assert!(
            r.switches[&format!("c{c}")].passes > 0,
            "{}",
            r.render(lab.topology())
        );
    }
}

#[test]
fn leaf_spine_and_mcrdma_testbed_reach_every_pair() {
    for (f, pairs) in [("leaf-spine.yaml", 56), ("mcrdma-testbed.yaml", 56)] {
        let mut lab = MemLab::new(shipped(f)).unwrap();
        let r = ping_all_mem(&mut lab);
        assert_eq!(r.pairs, pairs, "{f}");
        assert!(r.all_reached(), "{f}: {}", r.render(lab.topology()));
    }
}

#[test]
fn a_down_link_is_routed_around_only_where_ecmp_has_another_member() {
    let topo = shipped("leaf-spine.yaml");
    let mut lab = MemLab::new(topo.clone()).unwrap();
    // h1's own cable down: h1 is cut off, everyone else still talks.
    let l = topo.find_link("h1").unwrap();
    lab.set_link_up(l, false);
    let r = ping_all_mem(&mut lab);
    let h = topo.hosts.len();
    assert_eq!(r.reached, (h - 1) * (h - 2), "{}", r.render(&topo));
    assert!(
        r.unreached.iter().all(|p| p.contains("h1")),
        "{:?}",
        r.unreached
    );
}

#[test]
fn lossy_links_lose_frames_and_captures_see_both_directions() {
    let topo = shipped("leaf-spine.yaml");
    let mut lab = MemLab::new(topo.clone()).unwrap();
    let link = lab.tap("h1").unwrap();
    let r = ping_all_mem(&mut lab);
    assert!(r.all_reached());
    let dir = std::env::temp_dir().join(format!("pisa-labs-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("h1.pcap");
    // h1 sent 7 and received 7.
    assert_eq!(lab.write_capture(link, &file).unwrap(), 14);
    let bytes = std::fs::read(&file).unwrap();
    let magic = [bytes[0], bytes[1], bytes[2], bytes[3]];
    assert!(
        u32::from_be_bytes(magic) == 0xa1b2_3c4d || u32::from_le_bytes(magic) == 0xa1b2_3c4d,
        "nanosecond pcap magic: {magic:x?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();

    let mut lab = MemLab::new(topo.clone()).unwrap();
    lab.link_control(topo.find_link("h1").unwrap(), 0)
        .update(|c| c.tx.faults.loss = 1.0)
        .unwrap();
    let r = ping_all_mem(&mut lab);
    // Everything h1 sends is lost on its cable; what it receives is not.
    assert_eq!(r.unreached.len(), topo.hosts.len() - 1, "{:?}", r.unreached);
    assert!(r.unreached.iter().all(|p| p.starts_with("h1->")));
}

#[test]
fn same_traffic_same_arrivals_in_virtual_time() {
    let run = || {
        let topo = shipped("fat-tree-k4.yaml");
        let mut lab = MemLab::new(topo.clone()).unwrap();
        for seq in 0..20 {
            for a in 0..topo.hosts.len() {
                let b = (a + 5 + seq as usize) % topo.hosts.len();
                if a != b {
                    lab.send(a, datagram(&topo, a, b, seq));
                }
            }
        }
        lab.run_until_idle();
        (0..topo.hosts.len())
            .map(|h| lab.take_received(h))
            .collect::<Vec<_>>()
    };
    let a = run();
    assert!(a.iter().map(Vec::len).sum::<usize>() > 250);
    // Link delay 1 us per hop and 10 Gbit/s: arrivals are in virtual time, after at least
    // two hops.
    assert!(a.iter().flatten().all(|(t, _)| t.0 >= 2_000));
    assert_eq!(a, run());
}

#[test]
fn a_thousand_host_fat_tree_loads_and_routes() {
    let topo = crate::generate::fat_tree(16).unwrap();
    assert_eq!(topo.hosts.len(), 1024);
    let mut lab = MemLab::new(topo.clone()).unwrap();
    // A sample of pairs across pods (all 1,047,552 pairs are the bench's job).
    for a in (0..1024).step_by(37) {
        let b = (a * 131 + 512) % 1024;
        if a != b {
            lab.send(a, datagram(&topo, a, b, 1));
        }
    }
    lab.run_until_idle();
    let mut got = 0;
    for h in 0..1024 {
        for (_, f) in lab.take_received(h) {
            assert!(crate::ping::check_arrival(&topo, h, &f).is_some());
            got += 1;
        }
    }
    assert_eq!(
        got,
        (0..1024)
            .step_by(37)
            .filter(|&a| (a * 131 + 512) % 1024 != a)
            .count()
    );
}

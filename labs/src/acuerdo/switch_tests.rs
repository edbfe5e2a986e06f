//! Switch mode on the in-memory lab: every node delivers the same log, the leader sends one
//! WRITE per message to the P4CE switch (counted on its cable), and a new leader after a
//! crash gets a group of its own.

use std::net::IpAddr;

use hosts::acuerdo::{check, ring};
use hosts::p4ce::node::host_ip;
use hosts::p4ce::SWITCH_IP;
use rdma::wire::{IpFields, Opcode, RocePacketRepr};

use super::lab::{Lab, LabConfig};

/// The RDMA WRITE packets (only or first) host `h` sent in `frames`, as (destination,
/// payload length).
fn writes_from(h: usize, frames: &[(dataplane::Nanos, Vec<u8>)]) -> Vec<(IpAddr, usize)> {
    let me = host_ip(h as u16 + 1);
    frames
        .iter()
        .filter_map(|(_, f)| RocePacketRepr::parse(f).ok())
        .filter_map(|r| {
            let IpFields::V4(ip) = r.packet.ip else {
                return None;
            };
            let op = r.packet.headers.bth.opcode;
            let write = op == Opcode::RC_RDMA_WRITE_ONLY || op == Opcode::RC_RDMA_WRITE_FIRST;
            (write && ip.src == me).then_some((IpAddr::V4(ip.dst), r.packet.payload.len()))
        })
        .collect()
}

#[test]
fn switch_mode_delivers_one_log_everywhere_with_one_write_per_message_to_the_switch() {
    for nodes in [3, 5] {
        let mut cfg = LabConfig::new(nodes, 10, 4);
        cfg.switch = true;
        let mut lab = Lab::new(cfg).unwrap();
        let l = lab.wait_leader(50_000_000).unwrap();
        lab.wait_switch(l, 50_000_000).unwrap();
        let link = lab.mem().tap(&format!("h{}", l + 1)).unwrap();
        lab.client().on = true;
        let t = lab.now() + 200_000;
        lab.run_until(t).unwrap();
        lab.client().on = false;
        let t = lab.now() + 1_000_000;
        lab.run_until(t).unwrap();
        let sent = lab.client().sent.clone();
        assert!(sent.len() > 50, "{nodes} nodes: sent {}", sent.len());
        let v = check(&lab.logs(), Some(&sent));
        assert!(v.ok, "{v}");
        assert!(
            v.delivered.iter().all(|d| d.1 == sent.len() as u64),
            "{nodes} nodes: every node delivers every message: {v}"
        );
        // On the leader's cable: one WRITE per message, to the switch; none of a message's
        // size to a follower (only SST rows and credits go by unicast).
        let record = ring::record_len(12 + 10);
        let writes = writes_from(l, &lab.mem().take_tapped(link));
        let to_switch = writes
            .iter()
            .filter(|w| w.0 == IpAddr::V4(SWITCH_IP) && w.1 == record)
            .count();
        let to_followers = writes
            .iter()
            .filter(|w| w.0 != IpAddr::V4(SWITCH_IP) && w.1 >= record)
            .count();
        assert_eq!(to_switch, sent.len(), "{nodes} nodes");
        assert_eq!(to_followers, 0, "{nodes} nodes");
        let st = lab.with(l, |a| a.node.stats()).unwrap();
        assert_eq!(st.switch_writes, sent.len() as u64);
        assert_eq!(st.fallbacks, 0);
        // Every follower took them from its group ring.
        for h in (0..nodes).filter(|h| *h != l) {
            let g = lab.with(h, |a| a.node.stats().group_records).unwrap();
            assert_eq!(g, sent.len() as u64, "node {h}");
        }
    }
}

#[test]
fn after_a_leader_crash_the_new_leader_broadcasts_through_a_group_of_its_own() {
    let mut cfg = LabConfig::new(3, 16, 4);
    cfg.switch = true;
    let mut lab = Lab::new(cfg).unwrap();
    let l = lab.wait_leader(50_000_000).unwrap();
    lab.wait_switch(l, 50_000_000).unwrap();
    lab.client().on = true;
    let t = lab.now() + 200_000;
    lab.run_until(t).unwrap();
    let before = lab.client().committed;
    assert!(before > 20, "committed {before}");
    lab.with(l, |a| a.crash()).unwrap();
    let m = lab.wait_leader(50_000_000).unwrap();
    assert_ne!(m, l);
    lab.wait_switch(m, 50_000_000).unwrap();
    let t = lab.now() + 200_000;
    lab.run_until(t).unwrap();
    lab.client().on = false;
    let t = lab.now() + 1_000_000;
    lab.run_until(t).unwrap();
    assert!(lab.client().committed > before + 20);
    let sent = lab.client().sent.clone();
    let v = check(&lab.logs(), Some(&sent));
    assert!(v.ok, "{v}");
    let live: Vec<u64> = v
        .delivered
        .iter()
        .filter(|(id, _)| *id as usize != l)
        .map(|d| d.1)
        .collect();
    assert!(live.iter().all(|n| *n == v.longest), "{v}");
    let st = lab.with(m, |a| a.node.stats()).unwrap();
    assert!(st.groups >= 1 && st.switch_writes > 20, "{st:?}");
}

/// Runs the client for `us` µs of virtual time, then lets what is in flight land.
fn run_client(lab: &mut Lab, us: u64) {
    lab.client().on = true;
    let t = lab.now() + us * 1_000;
    lab.run_until(t).unwrap();
    lab.client().on = false;
    let t = lab.now() + 2_000_000;
    lab.run_until(t).unwrap();
}

#[test]
fn a_broken_switch_path_falls_back_to_unicast_and_nothing_is_lost() {
    let mut cfg = LabConfig::new(3, 10, 4);
    cfg.switch = true;
    let mut lab = Lab::new(cfg).unwrap();
    let l = lab.wait_leader(50_000_000).unwrap();
    lab.wait_switch(l, 50_000_000).unwrap();
    run_client(&mut lab, 100);
    // Frames to the switch's IP are lost on the leader's cable from now on.
    let link = lab.mem().topology().hosts[l].link;
    lab.mem()
        .link_control(link, 0)
        .update(|c| c.tx.faults.drop_ipv4_dst = Some(SWITCH_IP))
        .unwrap();
    run_client(&mut lab, 500);
    let st = lab.with(l, |a| a.node.stats()).unwrap();
    assert_eq!(st.fallbacks, 1, "{st:?}");
    assert!(!lab.with(l, |a| a.node.switch_attached()).unwrap());
    let sent = lab.client().sent.clone();
    let v = check(&lab.logs(), Some(&sent));
    assert!(v.ok, "{v}");
    assert!(v.delivered.iter().all(|d| d.1 == sent.len() as u64), "{v}");
}

#[test]
fn switch_mode_on_lossy_links_delivers_every_message_everywhere() {
    for nodes in [3, 5] {
        let mut cfg = LabConfig::new(nodes, 10, 4);
        cfg.switch = true;
        cfg.faults = Some(dataplane::FaultConfig {
            loss: 0.02,
            duplicate: 0.02,
            reorder: 0.02,
            reorder_delay_ns: 3_000,
            ..Default::default()
        });
        let mut lab = Lab::new(cfg).unwrap();
        let l = lab.wait_leader(50_000_000).unwrap();
        lab.wait_switch(l, 50_000_000).unwrap();
        run_client(&mut lab, 500);
        let sent = lab.client().sent.clone();
        let v = check(&lab.logs(), Some(&sent));
        assert!(v.ok, "{v}");
        assert!(v.delivered.iter().all(|d| d.1 == v.longest), "{v}");
        assert!(v.longest > 100, "{v}");
    }
}

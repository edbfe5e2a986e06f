//! Algorithm 1 on the MC-RDMA testbed's shape (two ToRs, four parallel links each to one
//! aggregation switch), and the controller writing real `mcrdma.p4` switches.

use std::cell::RefCell;
use std::collections::HashSet;
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;

use pipeline::api::PipeSel;
use pipeline::switch::Switch;

use super::*;

const TOR1: SwitchId = 0;
const TOR2: SwitchId = 1;
const AGG: SwitchId = 2;

fn host(rack: u8, i: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, rack, 10 + i)
}

fn host_mac(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [2, 0, 0, 0, o[2], o[3]]
}

fn switch_mac(s: SwitchId) -> [u8; 6] {
    [2, 0, 0, 0, 0, 0xf1 + s as u8]
}

/// tor1: a1 b1 c1 d1 on ports 0-3 (10.0.1.10-13), uplinks 4-7 to agg ports 0-3; tor2 the same
/// with 10.0.2.x and agg ports 4-7.
struct Testbed {
    /// Uplinks that are down, as (tor, tor port).
    down: RefCell<HashSet<(SwitchId, u16)>>,
    programmable: [bool; 3],
}

impl Testbed {
    fn new() -> Testbed {
        Testbed {
            down: RefCell::new(HashSet::new()),
            programmable: [true, true, false],
        }
    }
}

impl Fabric for Testbed {
    fn next_hops(&self, s: SwitchId, dst: Ipv4Addr) -> Vec<Link> {
        let Some(t) = self.tor_of(dst) else {
            return Vec::new();
        };
        let down = self.down.borrow();
        if s == t {
            let port = u16::from(dst.octets()[3] - 10);
            return vec![Link {
                node: Node::Host(dst),
                port,
                mac: host_mac(dst),
            }];
        }
        if s == AGG {
            return (0..4u16)
                .filter(|p| !down.contains(&(t, 4 + p)))
                .map(|p| Link {
                    node: Node::Switch(t),
                    port: 4 * t as u16 + p,
                    mac: switch_mac(t),
                })
                .collect();
        }
        (4..8u16)
            .filter(|p| !down.contains(&(s, *p)))
            .map(|port| Link {
                node: Node::Switch(AGG),
                port,
                mac: switch_mac(AGG),
            })
            .collect()
    }

    fn tor_of(&self, host: Ipv4Addr) -> Option<SwitchId> {
        match host.octets() {
            [10, 0, 1, 10..=13] => Some(TOR1),
            [10, 0, 2, 10..=13] => Some(TOR2),
            _ => None,
        }
    }

    fn programmable(&self, s: SwitchId) -> bool {
        self.programmable[s]
    }

    fn mac(&self, s: SwitchId) -> [u8; 6] {
        switch_mac(s)
    }

    fn name(&self, s: SwitchId) -> String {
        ["tor1", "tor2", "agg"][s].to_string()
    }
}

const MC_ID: u32 = 0x80_0001;

#[test]
fn paper_group_a1_to_d1_a2_replicates_at_the_senders_tor_only() {
    let f = Testbed::new();
    let (d1, a2) = (host(1, 3), host(2, 0));
    let plan = bifurcation(&f, host(1, 0), d1, MC_ID, &[d1, a2]).unwrap();
    assert_eq!(plan.rules.len(), 1);
    let r = plan.at(TOR1).unwrap();
    assert_eq!(r.branches.len(), 2);
    assert_eq!(r.branches[0].dst, d1);
    assert_eq!(r.branches[0].receiver, Some(0));
    assert_eq!(r.branches[0].port, 3);
    assert_eq!(r.branches[1].dst, a2);
    assert_eq!(r.branches[1].receiver, Some(1));
    // Four equal-cost uplinks: the copy takes the one MC_ID picks.
    assert_eq!(r.branches[1].port, 4 + (MC_ID % 4) as u16);
    assert_eq!(r.branches[1].dmac, switch_mac(AGG));
}

#[test]
fn a_group_in_another_rack_is_replicated_there_and_nowhere_on_the_way() {
    let f = Testbed::new();
    let (a2, b2, c2) = (host(2, 0), host(2, 1), host(2, 2));
    let plan = bifurcation(&f, host(1, 0), a2, MC_ID, &[a2, b2, c2]).unwrap();
    assert_eq!(plan.rules.len(), 1, "{plan:?}");
    let r = plan.at(TOR2).unwrap();
    let dsts: Vec<_> = r
        .branches
        .iter()
        .map(|b| (b.dst, b.receiver, b.port))
        .collect();
    assert_eq!(dsts, [(a2, Some(0), 0), (b2, Some(1), 1), (c2, Some(2), 2)]);
}

#[test]
fn a_mixed_group_replicates_at_both_tors_with_a_branch_between() {
    let f = Testbed::new();
    let (d1, a2, b2) = (host(1, 3), host(2, 0), host(2, 1));
    let plan = bifurcation(&f, host(1, 0), d1, MC_ID, &[d1, a2, b2]).unwrap();
    let at1 = plan.at(TOR1).unwrap();
    assert_eq!(at1.branches[1].dst, a2);
    assert_eq!(at1.branches[1].receiver, None, "a2 and b2 share the uplink");
    assert_eq!(plan.at(TOR2).unwrap().branches.len(), 2);
    assert!(plan.at(AGG).is_none());
}

#[test]
fn one_receiver_still_gets_its_qpn_written_and_a_departed_dst1_is_steered() {
    let f = Testbed::new();
    let (d1, a2, b2) = (host(1, 3), host(2, 0), host(2, 1));
    // Algorithm 1 as printed would install nothing for one receiver.
    let plan = bifurcation(&f, host(1, 0), d1, MC_ID, &[d1]).unwrap();
    assert_eq!(plan.at(TOR1).unwrap().branches[0].receiver, Some(0));
    // DST_1 = d1 left: the packets still say d1, tor1 must send them towards a2 and b2.
    let plan = bifurcation(&f, host(1, 0), d1, MC_ID, &[a2, b2]).unwrap();
    let at1 = plan.at(TOR1).unwrap();
    assert_eq!((at1.branches.len(), at1.branches[0].dst), (1, a2));
    assert_eq!(plan.at(TOR2).unwrap().branches.len(), 2);
}

#[test]
fn a_bifurcation_on_a_fixed_function_switch_is_refused() {
    let mut f = Testbed::new();
    f.programmable[TOR2] = false;
    let (a2, b2) = (host(2, 0), host(2, 1));
    let e = bifurcation(&f, host(1, 0), a2, MC_ID, &[a2, b2]).unwrap_err();
    assert_eq!(
        e,
        bifurcation::BifurcationError::NotProgrammable("tor2".into())
    );
}

#[test]
fn a_down_uplink_moves_the_copy_to_another_equal_cost_link() {
    let f = Testbed::new();
    let (d1, a2) = (host(1, 3), host(2, 0));
    let before = bifurcation(&f, host(1, 0), d1, MC_ID, &[d1, a2]).unwrap();
    let port = before.at(TOR1).unwrap().branches[1].port;
    f.down.borrow_mut().insert((TOR1, port));
    let after = bifurcation(&f, host(1, 0), d1, MC_ID, &[d1, a2]).unwrap();
    let moved = after.at(TOR1).unwrap().branches[1].port;
    assert_ne!(moved, port);
    assert!((4..8).contains(&moved));
}

fn mcrdma_program() -> Arc<pipeline::ir::Program> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/mcrdma.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Arc::new(c.program)
}

fn switches() -> Vec<Switch> {
    let prog = mcrdma_program();
    (0..3)
        .map(|_| Switch::new(prog.clone(), Default::default()).unwrap())
        .collect()
}

fn spec(receivers: &[Ipv4Addr]) -> GroupSpec {
    GroupSpec {
        key: GroupKey {
            sender: host(1, 0),
            mc_id: MC_ID,
        },
        sender_qpn: 0x11,
        address: receivers[0],
        psn: 100,
        sender_va: 0x1000_0000,
        len: 0x1_0000,
        receivers: receivers
            .iter()
            .enumerate()
            .map(|(i, ip)| ReceiverSpec {
                ip: *ip,
                qpn: 0x100 + i as u32,
                va: 0x7f00_0000_0000 + ((i as u64) << 20),
                rkey: 0x1111 * (i as u32 + 1),
            })
            .collect(),
    }
}

fn len(sw: &Switch, table: &str) -> usize {
    sw.table_len(PipeSel::All, table).unwrap()
}

#[test]
fn the_controller_programs_leaves_and_tears_down() {
    let f = Testbed::new();
    let mut sws = switches();
    let mut c = Controller::new();
    let (d1, a2, b2) = (host(1, 3), host(2, 0), host(2, 1));
    let s = spec(&[d1, a2, b2]);
    let key = s.key;
    c.create(&f, &mut sws, s).unwrap();
    assert_eq!(len(&sws[TOR1], "SwitchIngress.mc_group"), 1);
    assert_eq!(len(&sws[TOR1], "SwitchEgress.mc_copy"), 2);
    assert_eq!(
        len(&sws[TOR1], "SwitchEgress.mc_va"),
        1,
        "only d1's copy is final"
    );
    assert_eq!(len(&sws[TOR2], "SwitchEgress.mc_va"), 2);
    assert_eq!(len(&sws[TOR1], "SwitchEgress.ack_member"), 3);
    // Guards: d1's QP and <d1, MC_ID> on tor1, a2's and b2's QPs on tor2.
    assert_eq!(len(&sws[TOR1], "SwitchIngress.rx_guard"), 2);
    assert_eq!(len(&sws[TOR2], "SwitchIngress.rx_guard"), 2);
    assert_eq!(c.next_psn(&f, &mut sws, key).unwrap(), 100);

    // Pretend b2 acknowledged up to 150 and the others 120: after a2 leaves, d1 and b2 keep
    // their state in their (new) slots.
    let idx = 1;
    for (slot, psn) in [(0usize, 120u32), (1, 120), (2, 150)] {
        sws[TOR1]
            .register_write(
                PipeSel::All,
                &agent::slot_register(slot),
                idx,
                u128::from(psn) << 8,
                None,
            )
            .unwrap();
    }
    c.leave(&f, &mut sws, key, a2).unwrap();
    let (spec_now, plan) = c.group(key).unwrap();
    assert_eq!(spec_now.dsts(), [d1, b2]);
    assert_eq!(plan.at(TOR1).unwrap().branches[1].dst, b2);
    assert_eq!(plan.at(TOR1).unwrap().branches[1].receiver, Some(1));
    assert!(
        plan.at(TOR2).is_none(),
        "b2 alone needs no replication at tor2"
    );
    let slot1 = sws[TOR1]
        .register_read(PipeSel::All, &agent::slot_register(1), idx)
        .unwrap();
    assert_eq!(slot1[0].lo, 150 << 8);
    assert_eq!(c.next_psn(&f, &mut sws, key).unwrap(), 121);
    assert_eq!(len(&sws[TOR2], "SwitchEgress.mc_copy"), 0);

    // a2 comes back with a new QP at the PSN the sender sends next.
    let mut back = spec(&[d1, a2]).receivers[1];
    back.qpn = 0x777;
    c.join(&f, &mut sws, key, back, 151).unwrap();
    assert_eq!(c.group(key).unwrap().0.dsts(), [d1, b2, a2]);
    assert_eq!(c.next_psn(&f, &mut sws, key).unwrap(), 121);

    c.remove(&mut sws, key).unwrap();
    for sw in &sws {
        for t in [
            "SwitchIngress.mc_group",
            "SwitchIngress.rx_guard",
            "SwitchEgress.mc_copy",
            "SwitchEgress.mc_va",
            "SwitchEgress.ack_member",
        ] {
            assert_eq!(len(sw, t), 0, "{t}");
        }
    }
}

#[test]
fn groups_larger_than_the_merge_slots_are_refused() {
    let f = Testbed::new();
    let mut sws = switches();
    let mut c = Controller::new();
    let e = c
        .create(
            &f,
            &mut sws,
            spec(&[host(1, 1), host(1, 2), host(1, 3), host(2, 0)]),
        )
        .unwrap_err();
    assert_eq!(
        e,
        McError::TooManyReceivers {
            receivers: 4,
            slots: 3
        }
    );
}

#[test]
fn reroute_rewrites_only_changed_groups() {
    let f = Testbed::new();
    let mut sws = switches();
    let mut c = Controller::new();
    let (d1, a2) = (host(1, 3), host(2, 0));
    let s = spec(&[d1, a2]);
    let key = s.key;
    c.create(&f, &mut sws, s).unwrap();
    assert_eq!(c.reroute(&f, &mut sws).unwrap(), 0);
    let port = c.group(key).unwrap().1.at(TOR1).unwrap().branches[1].port;
    f.down.borrow_mut().insert((TOR1, port));
    assert_eq!(c.reroute(&f, &mut sws).unwrap(), 1);
    assert_ne!(
        c.group(key).unwrap().1.at(TOR1).unwrap().branches[1].port,
        port
    );
    assert_eq!(len(&sws[TOR1], "SwitchEgress.mc_copy"), 2);
}

//! Agent tests on p4ce.p4 compiled by pisa's frontend: what a group programs, view changes,
//! teardown, several groups, refused specs.

use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::Arc;

use pipeline::api::PipeSel;
use pipeline::switch::{Switch, SwitchConfig};

use super::*;

fn switch() -> Switch {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs/p4ce.p4");
    let c = p4::compile::compile_file(&path, &p4::compile::CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Switch::new(Arc::new(c.program), SwitchConfig::new(1).with_cpu_port(64)).unwrap()
}

fn agent() -> Agent {
    Agent::new(AgentConfig {
        switch_ip: Ipv4Addr::new(10, 0, 0, 100),
        cpu_port: 64,
    })
}

fn replica(ep: u16) -> ReplicaConn {
    ReplicaConn {
        ep,
        mac: [2, 0, 0, 0, 0, ep as u8],
        ip: Ipv4Addr::new(10, 0, 0, ep as u8),
        qpn: 0x100 + u32::from(ep),
        start_psn: 0x500 + u32::from(ep),
        va: 0x7f00_0000_0000 + (u64::from(ep) << 20),
        size: 0x10000 * u64::from(ep),
        rkey: 0x1111_0000 + u32::from(ep),
        port: ep - 1,
    }
}

fn spec(group: u8, leader_ep: u16, eps: &[u16]) -> GroupSpec {
    GroupSpec {
        group,
        mgid: u16::from(group),
        bcast_qp: 0x1000 + u32::from(group),
        aggr_qp: 0x2000 + u32::from(group),
        vrkey: 0xcafe_f00d,
        f: 1,
        leader: LeaderConn {
            ep: leader_ep,
            mac: [2, 0, 0, 0, 0, leader_ep as u8],
            ip: Ipv4Addr::new(10, 0, 0, leader_ep as u8),
            qpn: 0x11,
            start_psn: 0x400,
            port: leader_ep - 1,
        },
        replicas: eps.iter().map(|e| replica(*e)).collect(),
    }
}

fn len(sw: &Switch, t: &str) -> usize {
    sw.table_len(PipeSel::All, t).unwrap()
}

#[test]
fn group_lifecycle_programs_and_unprograms_everything() {
    let mut sw = switch();
    let mut a = agent();
    a.install_base(&mut sw, &[([2, 0, 0, 0, 0, 1], 0)]).unwrap();
    assert_eq!(len(&sw, "SwitchIngress.switch_qp"), 1, "QP1 to the CPU");
    let s = spec(1, 1, &[2, 3]);
    assert_eq!(s.replicas[0].psn_delta(&s.leader), 0x102);
    assert_eq!(s.vsize(), 0x20000);
    a.create_group(&mut sw, &s).unwrap();
    assert_eq!(len(&sw, "SwitchIngress.switch_qp"), 3);
    assert_eq!(len(&sw, "SwitchIngress.aggr_replica"), 2);
    assert_eq!(len(&sw, "SwitchIngress.conn_leader"), 1);
    assert_eq!(len(&sw, "SwitchEgress.conn_replica"), 2);
    assert_eq!(sw.pre().group_get(1).map(|m| m.len()), Some(2));
    // A second group over other replicas, same leader.
    a.create_group(&mut sw, &spec(2, 1, &[4, 5])).unwrap();
    assert_eq!(a.groups(), vec![1, 2]);
    assert_eq!(
        len(&sw, "SwitchIngress.conn_leader"),
        1,
        "leader entry shared"
    );
    // Same ids again, or a replica already in a group: refused.
    assert!(matches!(
        a.create_group(&mut sw, &spec(1, 1, &[6])),
        Err(P4ceError::GroupExists { .. })
    ));
    assert!(matches!(
        a.create_group(&mut sw, &spec(3, 1, &[2])),
        Err(P4ceError::BadGroup { .. })
    ));
    // View change: replica 3 leaves, 6 joins.
    a.remove_replica(&mut sw, 1, 3).unwrap();
    assert_eq!(len(&sw, "SwitchEgress.conn_replica"), 3);
    assert!(
        matches!(
            a.remove_replica(&mut sw, 1, 2),
            Err(P4ceError::BadGroup { .. })
        ),
        "f = 1 needs a replica"
    );
    a.add_replica(&mut sw, 1, &replica(6)).unwrap();
    assert_eq!(a.group(1).unwrap().replicas.len(), 2);
    assert!(matches!(
        a.add_replica(&mut sw, 1, &replica(6)),
        Err(P4ceError::Replica { .. })
    ));
    // Teardown of both: only the base entries stay.
    a.teardown(&mut sw, 1).unwrap();
    assert_eq!(
        len(&sw, "SwitchIngress.conn_leader"),
        1,
        "group 2 still uses it"
    );
    a.teardown(&mut sw, 2).unwrap();
    assert_eq!(len(&sw, "SwitchIngress.switch_qp"), 1);
    assert_eq!(len(&sw, "SwitchIngress.aggr_replica"), 0);
    assert_eq!(len(&sw, "SwitchIngress.conn_leader"), 0);
    assert_eq!(len(&sw, "SwitchEgress.conn_replica"), 0);
    assert!(sw.pre().group_get(1).is_none() && sw.pre().nodes().count() == 0);
    assert!(matches!(a.teardown(&mut sw, 2), Err(P4ceError::NoGroup(2))));
}

#[test]
fn bad_specs_are_refused_before_touching_the_switch() {
    let mut sw = switch();
    let mut a = agent();
    let mut s = spec(1, 1, &[2, 3]);
    s.f = 3;
    assert!(matches!(
        a.create_group(&mut sw, &s),
        Err(P4ceError::BadGroup { .. })
    ));
    let s = spec(1, 1, &[2, 3, 4, 5, 6]);
    assert!(matches!(
        a.create_group(&mut sw, &s),
        Err(P4ceError::BadGroup { .. })
    ));
    let s = spec(1, 2, &[2, 3]);
    assert!(matches!(
        a.create_group(&mut sw, &s),
        Err(P4ceError::BadGroup { .. })
    ));
    assert_eq!(len(&sw, "SwitchIngress.switch_qp"), 0);
    assert!(a.groups().is_empty());
}

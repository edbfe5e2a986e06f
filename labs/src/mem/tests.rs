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
fn a_host_whose_cable_is_down_is_cut_off_and_the_others_still_talk() {
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

/// A model on the receive direction of a link end (frames held back there) used to spin the
/// driver at one virtual instant: the port's timer fired, only its own node could take the
/// frames, and the timer was put back for the same instant.
#[test]
fn frames_held_in_the_receive_direction_are_delivered() {
    let topo = shipped("leaf-spine.yaml");
    let mut lab = MemLab::new(topo.clone()).unwrap();
    lab.link_control(topo.find_link("h1").unwrap(), 0)
        .update(|c| {
            c.rx.delay_ns = 5_000;
            c.rx.faults.reorder = 0.5;
            c.rx.faults.reorder_delay_ns = 2_000;
        })
        .unwrap();
    let r = ping_all_mem(&mut lab);
    assert!(r.all_reached(), "{:?}", r.unreached);
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

/// Two RC queue pairs, connected by hand (no CM), on hosts `a` and `b` of the lab.
fn rc_pair(
    lab: &mut MemLab,
    a: usize,
    b: usize,
    len: usize,
) -> [(u32, rdma::verbs::MrInfo, rdma::verbs::CqHandle); 2] {
    use rdma::verbs::*;
    let topo = lab.topology().clone();
    let mut sides = Vec::new();
    for h in [a, b] {
        let ep = &mut lab.app_mut::<crate::host::RdmaHost>(h).unwrap().endpoint;
        let pd = ep.alloc_pd();
        let cq = ep.create_cq(1 << 12);
        let mr = ep.reg_mr(pd, len, AccessFlags::ALL).unwrap();
        let qpn = ep
            .create_qp(QpInitAttr {
                pd,
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr: 256,
                max_recv_wr: 256,
            })
            .unwrap();
        sides.push((qpn, mr, cq));
    }
    for (i, (me, peer)) in [(a, b), (b, a)].into_iter().enumerate() {
        let (qpn, _, _) = sides[i];
        let peer_qpn = sides[1 - i].0;
        let ep = &mut lab.app_mut::<crate::host::RdmaHost>(me).unwrap().endpoint;
        let attrs = [
            QpAttr {
                state: Some(QpState::Init),
                access: Some(AccessFlags::REMOTE_WRITE | AccessFlags::REMOTE_READ),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rtr),
                path_mtu: Some(Mtu::M1024),
                dest_qp_num: Some(peer_qpn),
                remote_ip: Some(std::net::IpAddr::V4(topo.hosts[peer].ip)),
                rq_psn: Some(100 + i as u32),
                min_rnr_timer: Some(1),
                ..Default::default()
            },
            QpAttr {
                state: Some(QpState::Rts),
                sq_psn: Some(101 - i as u32),
                timeout: Some(8),
                retry_cnt: Some(7),
                rnr_retry: Some(7),
                ..Default::default()
            },
        ];
        for attr in &attrs {
            ep.modify_qp(qpn, attr).unwrap();
        }
    }
    [sides[0], sides[1]]
}

#[test]
fn rdma_hosts_write_across_the_fabric_through_lossy_links() {
    use rdma::verbs::*;
    let topo = shipped("leaf-spine.yaml");
    let (h1, h8) = (
        topo.host_index("h1").unwrap(),
        topo.host_index("h8").unwrap(),
    );
    let mut lab = MemLab::new(topo.clone()).unwrap();
    for h in [h1, h8] {
        lab.attach(h, Box::new(crate::host::RdmaHost::new(&topo, h)));
    }
    // 2 % loss on every ToR-aggregation link, both ways: RC recovers (go-back-N).
    for (i, l) in topo.links.iter().enumerate() {
        if matches!(
            (l.a, l.b),
            (crate::End::Switch { .. }, crate::End::Switch { .. })
        ) {
            for e in 0..2 {
                lab.link_control(i, e)
                    .update(|c| c.tx.faults.loss = 0.02)
                    .unwrap();
            }
        }
    }
    let len = 256 << 10;
    let [(qa, mra, cqa), (_, mrb, _)] = rc_pair(&mut lab, h1, h8, len);
    let data: Vec<u8> = (0..len).map(|i| (i * 7 + i / 1024) as u8).collect();
    let ep = &mut lab.app_mut::<crate::host::RdmaHost>(h1).unwrap().endpoint;
    ep.mr_bytes_mut(mra.lkey).unwrap().copy_from_slice(&data);
    ep.post_send(
        qa,
        SendWr::new(
            1,
            SendOp::Write {
                remote_addr: mrb.addr,
                rkey: mrb.rkey,
            },
            Sge {
                addr: mra.addr,
                length: len as u32,
                lkey: mra.lkey,
            },
        ),
    )
    .unwrap();
    lab.poll_host(h1);
    lab.run_until(Some(dataplane::Nanos(5_000_000_000)));
    let ep = &mut lab.app_mut::<crate::host::RdmaHost>(h1).unwrap().endpoint;
    let wc = ep.poll_cq(cqa, 16).unwrap();
    assert_eq!(wc.len(), 1, "{wc:?}");
    assert_eq!(wc[0].status, WcStatus::Success, "{wc:?}");
    let retrans = ep.stats().clone();
    let got = lab
        .app_mut::<crate::host::RdmaHost>(h8)
        .unwrap()
        .endpoint
        .mr_bytes(mrb.lkey)
        .unwrap()
        .to_vec();
    assert!(got == data, "the remote memory differs");
    // Frames were lost on the way and resent.
    let lost: u64 = lab
        .switch_counters()
        .iter()
        .flat_map(|s| &s.ports)
        .map(|p| p.drops)
        .sum();
    assert!(lost > 0, "{retrans:?}");
}

/// A control-plane agent on leaf1's CPU port (device port 64) that installs a route to
/// itself when it first runs, collects what the switch sends it and sends one frame in.
struct CpuAgent {
    installed: bool,
    got: Vec<Vec<u8>>,
    send: Option<Vec<u8>>,
}

impl crate::host::SwitchApp for CpuAgent {
    fn receive(
        &mut self,
        _now: dataplane::Nanos,
        frame: &[u8],
        _sw: &mut pipeline::switch::Switch,
    ) {
        self.got.push(frame.to_vec());
    }
    fn poll(
        &mut self,
        _now: dataplane::Nanos,
        sw: &mut pipeline::switch::Switch,
        out: &mut dyn FnMut(Vec<u8>),
    ) {
        if !self.installed {
            let f = control::tables_file::from_yaml(
                "tables:\n  - table: SwitchIngress.routes\n    entries:\n      - { key: { hdr.ipv4.dst_addr: \"10.99.0.1/32\" }, action: to_host, params: { port: 64, dmac: \"02:99:00:00:00:01\" } }\n",
            )
            .unwrap();
            control::tables_file::apply(sw, &f).unwrap();
            self.installed = true;
        }
        if let Some(f) = self.send.take() {
            out(f);
        }
    }
    fn next_wakeup(&self) -> Option<dataplane::Nanos> {
        None
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[test]
fn an_agent_on_the_cpu_port_programs_its_switch_and_talks_through_it() {
    let topo = shipped("leaf-spine.yaml");
    let mut lab = MemLab::new(topo.clone()).unwrap();
    let leaf1 = topo.switch_index("leaf1").unwrap();
    let (h1, h8) = (
        topo.host_index("h1").unwrap(),
        topo.host_index("h8").unwrap(),
    );
    // The agent's own frame: to h8, addressed to leaf1's router MAC, as a host would.
    let mut to_h8 = datagram(&topo, h1, h8, 77);
    to_h8[6..12].copy_from_slice(&[2, 0x99, 0, 0, 0, 1]);
    let a = lab.attach_agent(
        leaf1,
        64,
        Box::new(CpuAgent {
            installed: false,
            got: Vec::new(),
            send: Some(to_h8),
        }),
    );
    lab.run_until_idle();
    // h1 sends to the agent's address: leaf1 routes it to its CPU port.
    let mut f = datagram(&topo, h1, h8, 5);
    f[30..34].copy_from_slice(&[10, 99, 0, 1]);
    let sum = etherparse::Ipv4Header::from_slice(&f[14..])
        .unwrap()
        .0
        .calc_header_checksum();
    f[24..26].copy_from_slice(&sum.to_be_bytes());
    lab.send(h1, f);
    lab.run_until_idle();
    // The agent and its switch together, as the agent sees them when it runs.
    let (agent, sw) = lab.agent_with_switch::<CpuAgent>(a).unwrap();
    assert!(agent.installed);
    let n = sw
        .table_entries(pipeline::api::PipeSel::All, "SwitchIngress.routes")
        .unwrap()
        .len();
    assert!(n > 0);
    // The same switch, read only.
    let read = lab
        .switch(leaf1)
        .table_entries(pipeline::api::PipeSel::All, "SwitchIngress.routes")
        .unwrap();
    assert_eq!(read.len(), n);
    let agent = lab.agent_mut::<CpuAgent>(a).unwrap();
    assert_eq!(agent.got.len(), 1);
    assert_eq!(&agent.got[0][0..6], &[2, 0x99, 0, 0, 0, 1]);
    let got = lab.take_received(h8);
    assert_eq!(got.len(), 1, "the agent's frame crossed the fabric");
    let c = &lab.switch_counters()[leaf1];
    assert!(
        c.ports
            .iter()
            .any(|p| p.devport == 64 && p.peer == "agent" && p.rx == 1 && p.tx == 1),
        "{c:?}"
    );
}

/// A host application whose wake-up never moves past the first instant it ran at.
struct StuckApp {
    at: Option<dataplane::Nanos>,
    polls: u64,
}

impl crate::host::HostApp for StuckApp {
    fn receive(&mut self, _now: dataplane::Nanos, _frame: &[u8]) {}
    fn poll(&mut self, now: dataplane::Nanos, _out: &mut dyn FnMut(Vec<u8>)) {
        self.at.get_or_insert(now);
        self.polls += 1;
    }
    fn next_wakeup(&self) -> Option<dataplane::Nanos> {
        self.at
    }
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}

#[test]
fn an_app_due_forever_at_one_instant_lets_time_move_on() {
    let topo = shipped("leaf-spine.yaml");
    let mut lab = MemLab::new(topo.clone()).unwrap();
    let h1 = topo.host_index("h1").unwrap();
    lab.attach(h1, Box::new(StuckApp { at: None, polls: 0 }));
    let deadline = dataplane::Nanos(10_000);
    lab.run_until(Some(deadline));
    assert_eq!(lab.now(), deadline);
    let polls = lab.app_mut::<StuckApp>(h1).unwrap().polls;
    // STILL_DUE_POLLS polls at the first instant, then about one per nanosecond.
    assert!(polls > super::STILL_DUE_POLLS as u64, "{polls}");
    assert!(lab.stalled_wakeups() >= 9_000, "{}", lab.stalled_wakeups());
}

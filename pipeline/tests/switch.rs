//! End-to-end tests of the switch on the hand-built L2/L3 program of `common`: parse/deparse,
//! tables, registers, PRE, mirroring, resubmit, recirculation, drops, determinism, traces.

mod common;

use common::*;
use pipeline::api::{ApiError, PipeSel};
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::{DropReason, InFrame, OutFrame, Switch, SwitchConfig};
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

const MAC_A: u64 = 0x0000_0000_000a;
const MAC_B: u64 = 0x0000_0000_000b;
const SRC: u64 = 0x0200_0000_0000;

fn switch(opts: Options) -> Switch {
    switch_with(opts, SwitchConfig::new(1))
}

fn switch_with(opts: Options, cfg: SwitchConfig) -> Switch {
    let (prog, _) = l2_program(opts);
    Switch::new(prog, cfg.with_cpu_port(64).with_loopback(LOOPBACK_PORT)).unwrap()
}

/// Each frame's port and bytes: what the native-vs-flat tests compare.
fn port_bytes(out: &[OutFrame]) -> Vec<(u16, Vec<u8>)> {
    out.iter().map(|f| (f.port, f.bytes.clone())).collect()
}

/// The `forward` table's hit/miss counts and pipe 0's counters: what the native-vs-flat tests
/// compare after the frames.
fn forward_state(sw: &Switch) -> ((u64, u64), Vec<String>) {
    let counters = sw.pipe_states()[0]
        .rt
        .counters
        .iter()
        .map(|c| format!("{:?} {:?}", c.packets(), c.bytes()))
        .collect();
    (
        sw.table_hit_miss(PipeSel::All, "forward").unwrap(),
        counters,
    )
}

fn run(sw: &mut Switch, port: u16, bytes: &[u8]) -> Vec<OutFrame> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port,
            bytes,
            ts: 1000,
        }],
        &mut out,
    );
    out
}

fn fwd(sw: &mut Switch, mac: u64, port: u16) {
    sw.table_add(
        PipeSel::All,
        "forward",
        &[("hdr.ethernet.dst_addr", KeyMatch::Exact(mac as Value))],
        None,
        "set_port",
        &[("port", port as Value)],
    )
    .unwrap();
}

#[test]
fn parse_deparse_round_trip_keeps_bytes() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    let out = run(&mut sw, 1, &pkt);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 2);
    assert_eq!(out[0].bytes, pkt);
    assert_eq!(sw.stats().tx_packets, 1);
    assert_eq!(sw.stats().total_drops(), 0);
}

/// A switch built like another runs the same program on its own state: its own tables, the
/// other's engines (so native code is generated once); a different engine gets its own.
#[test]
fn a_switch_built_like_another_has_its_own_tables() {
    let mut a = switch(Options::default());
    let cfg = SwitchConfig::new(1).with_cpu_port(64);
    let mut b = Switch::new_like(&a, cfg.clone()).unwrap();
    assert_eq!(b.engine(), a.engine());
    fwd(&mut a, MAC_A, 2);
    fwd(&mut b, MAC_A, 3);
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    assert_eq!(run(&mut a, 1, &pkt)[0].port, 2);
    assert_eq!(run(&mut b, 1, &pkt)[0].port, 3);
    let flat = Switch::new_like(&a, cfg.with_engine(pipeline::exec::EngineKind::Flat)).unwrap();
    assert_eq!(flat.engine(), pipeline::exec::EngineKind::Flat);
}

#[test]
fn miss_without_default_drops_with_reason_and_sends_digest() {
    let mut sw = switch(Options::default());
    let out = run(&mut sw, 7, &eth_frame(MAC_A, SRC | 0x42, 0x9000));
    assert!(out.is_empty());
    assert_eq!(sw.stats().dropped(DropReason::NoDestination), 1);
    let drops = sw.drain_drops();
    assert_eq!(drops.len(), 1);
    assert_eq!(drops[0].port, 7);
    assert_eq!(drops[0].reason, DropReason::NoDestination);
    let d = sw.digest_drain();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].name, "SwitchIngressDeparser.learn");
    assert_eq!(d[0].values, vec![(SRC | 0x42) as Value, 7]);
}

#[test]
fn default_action_is_used_on_miss_and_can_be_reset() {
    let mut sw = switch(Options::default());
    sw.table_set_default(
        PipeSel::All,
        "SwitchIngress.forward",
        "set_port",
        &[("port", 4)],
    )
    .unwrap();
    let out = run(&mut sw, 1, &eth_frame(MAC_B, SRC, 0x9000));
    assert_eq!(out.iter().map(|o| o.port).collect::<Vec<_>>(), vec![4]);
    let (name, params) = sw.table_get_default(PipeSel::All, "forward").unwrap();
    assert_eq!(name, "SwitchIngress.set_port");
    assert_eq!(params, vec![("port".to_string(), 4)]);
    sw.table_reset_default(PipeSel::All, "forward").unwrap();
    assert!(run(&mut sw, 1, &eth_frame(MAC_B, SRC, 0x9000)).is_empty());
}

#[test]
fn table_lookups_are_counted_as_hits_and_misses() {
    let mut sw = switch(Options::default());
    assert_eq!(sw.table_hit_miss(PipeSel::All, "forward").unwrap(), (0, 0));
    fwd(&mut sw, MAC_A, 2);
    run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    run(&mut sw, 1, &eth_frame(MAC_B, SRC, 0x9000));
    assert_eq!(sw.table_hit_miss(PipeSel::All, "forward").unwrap(), (2, 1));
    assert!(matches!(
        sw.table_hit_miss(PipeSel::All, "no_such_table"),
        Err(ApiError::Unknown { .. })
    ));
}

#[test]
fn ternary_entries_follow_priority_lower_wins() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    sw.mirror_session_set(
        3,
        MirrorSession {
            direction: MirrorDirection::Both,
            dest: MirrorDest::Port(8),
            max_len: None,
            enabled: true,
        },
    )
    .unwrap();
    // Broad rule: drop everything of type 0x9000 (priority 5).
    sw.table_add(
        PipeSel::All,
        "acl",
        &[(
            "hdr.ethernet.ether_type",
            KeyMatch::Ternary {
                value: 0x9000,
                mask: 0xffff,
            },
        )],
        Some(5),
        "drop",
        &[],
    )
    .unwrap();
    // Narrow rule for one source: mirror instead (priority 1 wins).
    sw.table_add(
        PipeSel::All,
        "acl",
        &[
            (
                "hdr.ethernet.src_addr",
                KeyMatch::Ternary {
                    value: SRC as Value,
                    mask: 0xffff_ffff_ffff,
                },
            ),
            ("hdr.ethernet.ether_type", KeyMatch::Exact(0x9000)),
        ],
        Some(1),
        "mirror",
        &[("session", 3)],
    )
    .unwrap();
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    let mut ports: Vec<u16> = out.iter().map(|o| o.port).collect();
    ports.sort();
    assert_eq!(ports, vec![2, 8]);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC + 1, 0x9000));
    assert!(out.is_empty());
    assert_eq!(sw.stats().dropped(DropReason::IngressDropCtl), 1);
}

#[test]
fn lpm_route_rewrites_mac_decrements_ttl_and_fixes_checksum() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 1);
    for (prefix, len, port, dmac) in [
        (0x0a00_0000u32, 8u16, 5u16, 0x55u64),
        (0x0a01_0000, 16, 6, 0x66),
    ] {
        sw.table_add(
            PipeSel::All,
            "ipv4_lpm",
            &[(
                "hdr.ipv4.dst_addr",
                KeyMatch::Lpm {
                    value: prefix as Value,
                    prefix_len: len,
                },
            )],
            None,
            "route",
            &[("port", port as Value), ("dmac", dmac as Value)],
        )
        .unwrap();
    }
    let out = run(
        &mut sw,
        1,
        &ipv4_frame(MAC_A, SRC, 0x0102_0304, 0x0a01_0203, 64),
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 6);
    let b = &out[0].bytes;
    assert_eq!(&b[0..6], &0x66u64.to_be_bytes()[2..]);
    assert_eq!(b[14 + 8], 63, "ttl decremented");
    let cs = u16::from_be_bytes([b[24], b[25]]);
    assert_eq!(
        cs,
        ipv4_checksum(&b[14..34]),
        "checksum recomputed by the deparser"
    );
    let out = run(
        &mut sw,
        1,
        &ipv4_frame(MAC_A, SRC, 0x0102_0304, 0x0a02_0001, 64),
    );
    assert_eq!(out[0].port, 5);
}

#[test]
fn register_action_counts_per_port_and_api_reads_it() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    for _ in 0..3 {
        run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    }
    run(&mut sw, 5, &eth_frame(MAC_A, SRC, 0x9000));
    let r1 = sw.register_read(PipeSel::All, "port_pkts", 1).unwrap();
    assert_eq!(r1.len(), 1);
    assert_eq!(r1[0].lo, 3);
    assert_eq!(
        sw.register_read(PipeSel::Pipe(0), "SwitchIngress.port_pkts", 5)
            .unwrap()[0]
            .lo,
        1
    );
    sw.register_write(PipeSel::All, "port_pkts", 1, 100, None)
        .unwrap();
    run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(
        sw.register_read(PipeSel::All, "port_pkts", 1).unwrap()[0].lo,
        101
    );
    sw.register_reset(PipeSel::All, "port_pkts").unwrap();
    assert_eq!(
        sw.register_read(PipeSel::All, "port_pkts", 1).unwrap()[0].lo,
        0
    );
}

#[test]
fn second_register_access_in_a_pass_is_a_counted_program_error() {
    let mut sw = switch(Options {
        double_register_access: true,
        ..Options::default()
    });
    fwd(&mut sw, MAC_A, 2);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert!(out.is_empty());
    assert_eq!(sw.stats().dropped(DropReason::ProgramError), 1);
    let d = sw.drain_drops();
    assert!(
        d[0].detail
            .as_deref()
            .unwrap()
            .contains("SwitchIngress.port_pkts"),
        "{d:?}"
    );
    // The first access happened; the packet did not leave.
    assert_eq!(
        sw.register_read(PipeSel::All, "port_pkts", 1).unwrap()[0].lo,
        1
    );
}

#[test]
fn multicast_replicates_with_rid_and_l1_l2_pruning() {
    let mut sw = switch(Options::default());
    sw.mc_group_create(1).unwrap();
    sw.mc_node_create(1, 10, &[2, 3], &[]).unwrap();
    sw.mc_node_create(2, 20, &[4, 5], &[]).unwrap();
    sw.mc_group_add_node(1, 1, None).unwrap();
    sw.mc_group_add_node(1, 2, Some(7)).unwrap();
    sw.mc_prune_set(1, &[3]).unwrap();
    let add = |sw: &mut Switch, mac: u64, l1: Value| {
        sw.table_add(
            PipeSel::All,
            "forward",
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(mac as Value))],
            None,
            "set_mcast",
            &[("grp", 1), ("rid", 10), ("l1_xid", l1), ("l2_xid", 1)],
        )
        .unwrap();
    };
    add(&mut sw, MAC_A, 0);
    add(&mut sw, MAC_B, 7);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    let got: Vec<(u16, u16)> = out
        .iter()
        .map(|o| (o.port, u16::from_be_bytes([o.bytes[10], o.bytes[11]])))
        .collect();
    // Port 3 is L2-pruned (same RID as the packet, in prune set 1); node 2's ports carry RID 20.
    assert_eq!(got, vec![(2, 10), (4, 20), (5, 20)]);
    // L1 exclusion id 7 removes node 2.
    let out = run(&mut sw, 1, &eth_frame(MAC_B, SRC, 0x9000));
    assert_eq!(out.iter().map(|o| o.port).collect::<Vec<_>>(), vec![2]);
}

#[test]
fn ingress_mirror_copies_the_packet_as_received_truncated() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    sw.mirror_session_set(
        3,
        MirrorSession {
            direction: MirrorDirection::Ingress,
            dest: MirrorDest::Port(8),
            max_len: Some(32),
            enabled: true,
        },
    )
    .unwrap();
    sw.table_add(
        PipeSel::All,
        "acl",
        &[("hdr.ethernet.ether_type", KeyMatch::Exact(0x9000))],
        Some(1),
        "mirror",
        &[("session", 3)],
    )
    .unwrap();
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    let out = run(&mut sw, 1, &pkt);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].port, 2);
    assert_eq!(out[0].bytes, pkt);
    assert_eq!(out[1].port, 8);
    // Truncated to 32 bytes with its 1-byte mirror header (max_len counts the copy as
    // deparsed, header included), so 31 bytes of the packet; then padded by the MAC to the
    // 60-byte minimum frame.
    assert_eq!(out[1].bytes.len(), 60);
    assert!(out[1].bytes[31..].iter().all(|b| *b == 0));
    assert_eq!(
        &out[1].bytes[12..14],
        &[0x99, 0x99],
        "egress saw the mirror header"
    );
    assert_eq!(&out[1].bytes[14..31], &pkt[14..31]);
    assert_eq!(sw.stats().mirrors, 1);
}

#[test]
fn egress_mirror_copies_the_packet_as_deparsed() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, E2E_MIRROR_PORT);
    sw.mirror_session_set(
        7,
        MirrorSession {
            direction: MirrorDirection::Egress,
            dest: MirrorDest::Port(10),
            max_len: None,
            enabled: true,
        },
    )
    .unwrap();
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    let out = run(&mut sw, 1, &pkt);
    assert_eq!(
        out.iter().map(|o| o.port).collect::<Vec<_>>(),
        vec![E2E_MIRROR_PORT, 10]
    );
    assert_eq!(out[0].bytes, pkt);
    assert_eq!(&out[1].bytes[12..14], &[0x99, 0x99]);
    assert_eq!(out[1].bytes.len(), pkt.len());
}

#[test]
fn mirror_to_missing_session_is_a_recorded_drop_of_the_copy_only() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, E2E_MIRROR_PORT);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(out.len(), 1);
    assert_eq!(sw.stats().dropped(DropReason::MirrorSessionMissing), 1);
}

#[test]
fn resubmit_reenters_ingress_once_with_resubmit_data() {
    let mut sw = switch(Options::default());
    let pkt = eth_frame(MAC_A, SRC, 0x88b5);
    let mut rec = Vec::new();
    let (out, trace) = sw.trace(InFrame {
        port: 1,
        bytes: &pkt,
        ts: 0,
    });
    rec.extend(out);
    assert_eq!(rec.len(), 1, "{trace}");
    assert_eq!(rec[0].port, 5, "resubmit data chose the port");
    assert_eq!(sw.stats().resubmits, 1);
    assert!(trace.to_string().contains("(resubmit,"), "{trace}");
}

#[test]
fn loopback_port_recirculates_into_ingress() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, LOOPBACK_PORT);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 3);
    assert_eq!(&out[0].bytes[12..14], &[0x12, 0x34]);
    assert_eq!(sw.stats().recirculations, 1);
}

#[test]
fn tofino1_recirculation_quad_loops_back_unless_front_panel() {
    // No port setup: 68 (quad 17 of pipe 0) recirculates on Tofino 1, as on the hardware.
    let (prog, _) = l2_program(Options::default());
    assert_eq!(prog.target, pipeline::ir::Target::Tofino1);
    let mut sw = Switch::new(prog.clone(), SwitchConfig::new(1)).unwrap();
    fwd(&mut sw, MAC_A, LOOPBACK_PORT);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(out.iter().map(|f| f.port).collect::<Vec<_>>(), vec![3]);
    assert_eq!(sw.stats().recirculations, 1);
    // A port the user cabled (a front-panel port) leaves on the wire.
    let cfg = SwitchConfig::new(1).with_front_panel(LOOPBACK_PORT);
    let mut sw = Switch::new(prog, cfg).unwrap();
    fwd(&mut sw, MAC_A, LOOPBACK_PORT);
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(
        out.iter().map(|f| f.port).collect::<Vec<_>>(),
        vec![LOOPBACK_PORT]
    );
    assert_eq!(sw.stats().recirculations, 0);
}

#[test]
fn front_panel_set_on_a_running_switch_stops_recirculation() {
    // The switch keeps its loopback ports as a bitmap: `Switch::set_front_panel` must reach it.
    let (prog, _) = l2_program(Options::default());
    let mut sw = Switch::new(prog, SwitchConfig::new(1)).unwrap();
    fwd(&mut sw, MAC_A, LOOPBACK_PORT);
    let ports = |out: Vec<OutFrame>| out.iter().map(|f| f.port).collect::<Vec<_>>();
    let frame = eth_frame(MAC_A, SRC, 0x9000);
    assert_eq!(ports(run(&mut sw, 1, &frame)), vec![3]);
    assert_eq!(sw.stats().recirculations, 1);
    sw.set_front_panel(LOOPBACK_PORT);
    assert_eq!(ports(run(&mut sw, 1, &frame)), vec![LOOPBACK_PORT]);
    assert_eq!(sw.stats().recirculations, 1);
}

/// The native engine's exact lookups (the action record read beside the key) follow every
/// control-plane change as the flat engine does: hits, misses to a default with data, modifies,
/// deletes and re-adds give the same frames, hit/miss counts and direct counter.
#[test]
fn native_exact_lookups_follow_table_changes_as_flat_does() {
    use pipeline::exec::EngineKind;
    let mut sws: Vec<Switch> = [EngineKind::Native, EngineKind::Flat]
        .into_iter()
        .map(|e| switch_with(Options::default(), SwitchConfig::new(1).with_engine(e)))
        .collect();
    assert_eq!(
        sws[0].engine(),
        EngineKind::Native,
        "{:?}",
        sws[0].engine_error()
    );
    let key = |m: u64| [("hdr.ethernet.dst_addr", KeyMatch::Exact(m as Value))];
    type Step = Box<dyn Fn(&mut Switch)>;
    let steps: Vec<(Step, [Option<u16>; 2])> = vec![
        (Box::new(|sw| fwd(sw, MAC_A, 2)), [Some(2), None]),
        (
            Box::new(move |sw| {
                let p = [("port", 5)];
                sw.table_set_default(PipeSel::All, "forward", "set_port", &p)
                    .unwrap()
            }),
            [Some(2), Some(5)],
        ),
        (
            Box::new(move |sw| {
                let p = [("port", 3)];
                sw.table_modify(PipeSel::All, "forward", &key(MAC_A), None, "set_port", &p)
                    .unwrap()
            }),
            [Some(3), Some(5)],
        ),
        (Box::new(|sw| fwd(sw, MAC_B, 4)), [Some(3), Some(4)]),
        (
            Box::new(move |sw| {
                sw.table_delete(PipeSel::All, "forward", &key(MAC_A), None)
                    .unwrap()
            }),
            [Some(5), Some(4)],
        ),
        (Box::new(|sw| fwd(sw, MAC_A, 6)), [Some(6), Some(4)]),
    ];
    for (i, (step, want)) in steps.iter().enumerate() {
        let mut seen = Vec::new();
        for sw in &mut sws {
            step(sw);
            let mut got = Vec::new();
            for mac in [MAC_A, MAC_B] {
                let out = run(sw, 1, &eth_frame(mac, SRC, 0x9000));
                got.push(port_bytes(&out));
            }
            let ports: Vec<Option<u16>> = got.iter().map(|o| o.first().map(|f| f.0)).collect();
            assert_eq!(ports, want, "step {i}");
            seen.push((got, forward_state(sw)));
        }
        assert_eq!(seen[0], seen[1], "step {i}: native and flat differ");
    }
}

/// The native engine looks exact tables up in generated code (hash and probe of the table's
/// buckets): as the table grows (its buckets reallocated between packets), loses entries,
/// is cleared and refilled, every packet goes where the flat engine sends it, with the same
/// hit/miss counts and direct counter (counted through the hit's handle, which generated code
/// makes the running entry).
#[test]
fn native_generated_lookups_follow_growth_deletes_and_clears_as_flat_does() {
    use pipeline::exec::EngineKind;
    let mut sws: Vec<Switch> = [EngineKind::Native, EngineKind::Flat]
        .into_iter()
        .map(|e| switch_with(Options::default(), SwitchConfig::new(1).with_engine(e)))
        .collect();
    assert_eq!(sws[0].engine(), EngineKind::Native);
    let key = |m: u64| [("hdr.ethernet.dst_addr", KeyMatch::Exact(m as Value))];
    let macs: Vec<u64> = (1..=300u64).map(|i| i * 0x0001_0000_0101).collect();
    let port = |i: usize| (i % 7 + 1) as u16;
    type Step<'a> = Box<dyn Fn(&mut Switch) + 'a>;
    let steps: Vec<(&str, Step)> = vec![
        ("one entry", Box::new(|sw| fwd(sw, 0x0001_0000_0101, 1))),
        (
            "grown to 300",
            Box::new(|sw| {
                for (i, m) in macs.iter().enumerate().skip(1) {
                    fwd(sw, *m, port(i));
                }
            }),
        ),
        (
            "every third deleted",
            Box::new(|sw| {
                for m in macs.iter().step_by(3) {
                    sw.table_delete(PipeSel::All, "forward", &key(*m), None)
                        .unwrap();
                }
            }),
        ),
        (
            "cleared",
            Box::new(|sw| sw.table_clear(PipeSel::All, "forward").unwrap()),
        ),
        (
            "refilled",
            Box::new(|sw| {
                for (i, m) in macs.iter().enumerate().rev().step_by(2) {
                    fwd(sw, *m, port(i + 3));
                }
            }),
        ),
    ];
    for (name, step) in &steps {
        let mut seen = Vec::new();
        for sw in &mut sws {
            step(sw);
            let mut got = Vec::new();
            for m in macs.iter().chain([&MAC_B]) {
                let out = run(sw, 1, &eth_frame(*m, SRC, 0x9000));
                got.push(port_bytes(&out));
            }
            seen.push((got, forward_state(sw)));
        }
        assert_eq!(seen[0], seen[1], "{name}: native and flat differ");
    }
    let (hits, misses) = sws[0].table_hit_miss(PipeSel::All, "forward").unwrap();
    assert_eq!(
        (hits, misses),
        (1 + 300 + 200 + 150, 300 + 1 + 101 + 301 + 151)
    );
}

#[test]
fn drop_action_sets_drop_ctl() {
    let mut sw = switch(Options::default());
    sw.table_add(
        PipeSel::All,
        "forward",
        &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_A as Value))],
        None,
        "drop",
        &[],
    )
    .unwrap();
    assert!(run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000)).is_empty());
    assert_eq!(sw.stats().dropped(DropReason::IngressDropCtl), 1);
}

#[test]
fn copy_to_cpu_goes_to_the_cpu_port() {
    let mut sw = switch(Options::default());
    sw.table_add(
        PipeSel::All,
        "forward",
        &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_A as Value))],
        None,
        "to_cpu",
        &[],
    )
    .unwrap();
    let out = run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    assert_eq!(out.iter().map(|o| o.port).collect::<Vec<_>>(), vec![64]);
}

#[test]
fn short_packet_is_dropped_by_the_ingress_parser_unless_parser_err_is_read() {
    // A frame that reaches the parser shorter than its headers: only with the MAC's padding
    // to 60 bytes turned off (on a wire no frame is that short).
    let no_pad = || SwitchConfig::new(1).with_min_frame(0);
    let mut sw = switch_with(Options::default(), no_pad());
    assert!(run(&mut sw, 1, &[0u8; 10]).is_empty());
    assert_eq!(sw.stats().dropped(DropReason::ParserPacketTooShort), 1);
    let mut sw = switch_with(
        Options {
            read_parser_err: true,
            ..Options::default()
        },
        no_pad(),
    );
    sw.table_set_default(PipeSel::All, "forward", "set_port", &[("port", 2)])
        .unwrap();
    let out = run(&mut sw, 1, &[0xab; 10]);
    assert_eq!(sw.stats().dropped(DropReason::ParserPacketTooShort), 0);
    // A partial header marks the whole packet as header (tofino-model `ParserShared::parse`):
    // the deparser's emits replace all of it, and with every header invalid nothing is left.
    assert_eq!(out.len(), 1);
    assert!(out[0].bytes.is_empty(), "{:?}", out[0].bytes);
}

/// With the MAC's minimum frame (the default) the same 10-byte frame arrives padded to 60
/// bytes: the Ethernet header parses and nothing is dropped for being short.
#[test]
fn a_short_frame_arrives_padded_to_the_minimum() {
    let mut sw = switch(Options::default());
    sw.table_set_default(PipeSel::All, "forward", "set_port", &[("port", 2)])
        .unwrap();
    let out = run(&mut sw, 1, &[0xab; 10]);
    assert_eq!(sw.stats().total_drops(), 0);
    assert_eq!(out.len(), 1);
    let mut want = vec![0xab; 10];
    want.resize(60, 0);
    assert_eq!(out[0].bytes, want);
    assert_eq!(sw.stats().rx_bytes, 60);
}

#[test]
fn counters_indexed_and_direct() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    run(&mut sw, 1, &pkt);
    run(&mut sw, 1, &pkt);
    let c = sw.counter_read(PipeSel::All, "port_counter", 1).unwrap();
    // Two 64-byte frames, each counted with its 4-byte FCS as Tofino's ingress counters do.
    assert_eq!((c[0].packets, c[0].bytes), (2, 136));
    let d = sw
        .direct_counter_read(
            PipeSel::All,
            "forward",
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_A as Value))],
            None,
        )
        .unwrap();
    assert_eq!(d[0].packets, 2);
    sw.counter_reset(PipeSel::All, "port_counter").unwrap();
    assert_eq!(
        sw.counter_read(PipeSel::All, "port_counter", 1).unwrap()[0].packets,
        0
    );
}

#[test]
fn pipes_are_isolated() {
    let (prog, _) = l2_program(Options::default());
    let mut sw = Switch::new(prog, SwitchConfig::new(2)).unwrap();
    sw.table_add(
        PipeSel::Pipe(0),
        "forward",
        &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_A as Value))],
        None,
        "set_port",
        &[("port", 2)],
    )
    .unwrap();
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    assert_eq!(run(&mut sw, 1, &pkt).len(), 1);
    assert!(
        run(&mut sw, 128 + 1, &pkt).is_empty(),
        "pipe 1 has no entry"
    );
    let regs = sw.register_read(PipeSel::All, "port_pkts", 1).unwrap();
    assert_eq!(
        regs.iter().map(|r| (r.pipe, r.lo)).collect::<Vec<_>>(),
        vec![(0, 1), (1, 0)]
    );
    assert_eq!(
        sw.register_read(PipeSel::Pipe(1), "port_pkts", 1).unwrap()[0].lo,
        0
    );
}

#[test]
fn same_inputs_same_outputs() {
    let go = || {
        let mut sw = switch(Options::default());
        fwd(&mut sw, MAC_A, 2);
        sw.mc_group_create(1).unwrap();
        sw.mc_node_create(1, 1, &[3, 4, 5], &[]).unwrap();
        sw.mc_group_add_node(1, 1, None).unwrap();
        sw.table_add(
            PipeSel::All,
            "forward",
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_B as Value))],
            None,
            "set_mcast",
            &[("grp", 1), ("rid", 0), ("l1_xid", 0), ("l2_xid", 0)],
        )
        .unwrap();
        let frames: Vec<Vec<u8>> = (0..50u64)
            .map(|i| match i % 3 {
                0 => eth_frame(MAC_A, SRC + i, 0x9000),
                1 => eth_frame(MAC_B, SRC + i, 0x9000),
                _ => ipv4_frame(MAC_A, SRC, i as u32, 0x0a00_0001, 3),
            })
            .collect();
        let ins: Vec<InFrame> = frames
            .iter()
            .enumerate()
            .map(|(i, b)| InFrame {
                port: (i % 4) as u16,
                bytes: b,
                ts: i as u64 * 100,
            })
            .collect();
        let mut out = Vec::new();
        sw.process_batch(&ins, &mut out);
        (out, sw.stats().clone())
    };
    let (a, sa) = go();
    let (b, sb) = go();
    assert!(a.len() > 50);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
}

#[test]
fn trace_renders_parser_tables_and_tm() {
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    let pkt = eth_frame(MAC_A, SRC, 0x9000);
    let (out, trace) = sw.trace(InFrame {
        port: 1,
        bytes: &pkt,
        ts: 0,
    });
    assert_eq!(out.len(), 1);
    let text = trace.to_string();
    for needle in [
        "ingress pipe 0 port 1 (packet, 64 B):",
        "parser state SwitchIngressParser.start",
        "extract hdr.ethernet: hdr.ethernet.dst_addr=00:00:00:00:00:0a",
        "table SwitchIngress.forward key [hdr.ethernet.dst_addr=00:00:00:00:00:0a] hit -> SwitchIngress.set_port(port=2)",
        "if (hdr.ipv4.isValid()) -> false",
        "register SwitchIngress.port_pkts[1] via SwitchIngress.port_pkts_inc: (0x0, 0x0) -> (0x1, 0x0)",
        "tm: unicast to port 2",
        "egress pipe 0 port 2 (packet, 65 B):",
        "output port 2 (64 B)",
    ] {
        assert!(text.contains(needle), "missing `{needle}` in\n{text}");
    }
}

/// A program whose IR names what does not exist is refused by `Switch::new` with the place
/// (checked once, by `pipeline::ir_verify`), not run with a fallback at every packet.
#[test]
fn invalid_ir_is_refused_with_its_place() {
    let (prog, _) = l2_program(Options::default());
    let mut bad = (*prog).clone();
    bad.pipelines[0]
        .ingress
        .control
        .body
        .push(pipeline::ir::Stmt::ApplyTable {
            table: pipeline::ir::TableId(99),
            branches: Default::default(),
        });
    let e = Switch::new(std::sync::Arc::new(bad), SwitchConfig::new(1)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("table #99 does not exist"), "{text}");
    assert!(text.contains("ingress control"), "{text}");
    // The IR printer writes the program back readably.
    let ir = pipeline::ir_text::program_text(&prog);
    assert!(ir.contains("  table SwitchIngress.forward"), "{ir}");
    assert!(ir.contains("    control SwitchIngress"), "{ir}");
}

/// A native and a flat switch on the same program (the native one asserted native).
fn native_and_flat() -> Vec<Switch> {
    use pipeline::exec::EngineKind;
    let sws: Vec<Switch> = [EngineKind::Native, EngineKind::Flat]
        .into_iter()
        .map(|e| switch_with(Options::default(), SwitchConfig::new(1).with_engine(e)))
        .collect();
    assert_eq!(
        sws[0].engine(),
        EngineKind::Native,
        "{:?}",
        sws[0].engine_error()
    );
    sws
}

/// xorshift64: the deterministic random values of the native-vs-flat traffic tests.
fn next_random(r: &mut u64) -> u64 {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    *r
}

/// One control-plane write of the LPM test, applied alike to both switches.
#[derive(Debug, Clone, Copy)]
enum RouteWrite {
    Add { value: u32, len: u16, port: u16 },
    Delete { value: u32, len: u16 },
    Default { port: u16 },
    Clear,
}

fn route_key(value: u32, len: u16) -> [(&'static str, KeyMatch); 1] {
    let keep = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    [(
        "hdr.ipv4.dst_addr",
        KeyMatch::Lpm {
            value: Value::from(value & keep),
            prefix_len: len,
        },
    )]
}

/// Applies `w` to `sw`; answers the result as text (both engines must agree on it).
fn write_route(sw: &mut Switch, w: RouteWrite) -> String {
    let data = |port: u16| {
        [
            ("port", Value::from(port)),
            ("dmac", 0x77 + Value::from(port)),
        ]
    };
    let all = PipeSel::All;
    let r = match w {
        RouteWrite::Add { value, len, port } => sw
            .table_add(
                all,
                "ipv4_lpm",
                &route_key(value, len),
                None,
                "route",
                &data(port),
            )
            .map(|_| ()),
        RouteWrite::Delete { value, len } => {
            sw.table_delete(all, "ipv4_lpm", &route_key(value, len), None)
        }
        RouteWrite::Default { port } => sw.table_set_default(all, "ipv4_lpm", "route", &data(port)),
        RouteWrite::Clear => sw.table_clear(all, "ipv4_lpm"),
    };
    format!("{r:?}")
}

/// Addresses near a few bases, so that routes overlap and nest at every trie level.
fn near_base(r: &mut u64) -> u32 {
    let bases = [0x0a00_0000u32, 0x0a01_0200, 0xc0a8_01ff, 0, 0xffff_ffff];
    let x = next_random(r);
    let b = bases[(x % bases.len() as u64) as usize];
    let noise = (x >> 8) as u32 >> (8 * ((x >> 40) % 4) as u32);
    b ^ noise
}

/// The native engine looks single-field LPM tables up in generated code (the trie's levels
/// and the dense action array, read through views the table keeps in step): with
/// overlapping and nested routes added, deleted, re-added and cleared between batches, the
/// table grown past its first allocations (trie chunks and action array reallocated), and the
/// default action's data changed, every packet goes where the flat engine sends it, with the
/// same hit/miss counts and counters.
#[test]
fn native_lpm_lookups_follow_route_changes_as_flat_does() {
    let mut sws = native_and_flat();
    for sw in &mut sws {
        fwd(sw, MAC_A, 1);
    }
    let mut r = 0x2545_f491_4f6c_dd1d_u64;
    let mut installed: Vec<(u32, u16)> = Vec::new();
    for batch in 0..14 {
        let mut writes = Vec::new();
        let adds = if batch == 3 { 700 } else { 40 };
        for _ in 0..adds {
            let (value, len) = (near_base(&mut r), (next_random(&mut r) % 33) as u16);
            let port = (next_random(&mut r) % 8 + 1) as u16;
            writes.push(RouteWrite::Add { value, len, port });
            installed.push((value, len));
        }
        for _ in 0..(if batch % 4 == 2 { 400 } else { 25 }) {
            if installed.is_empty() {
                break;
            }
            let i = (next_random(&mut r) % installed.len() as u64) as usize;
            let (value, len) = installed.swap_remove(i);
            writes.push(RouteWrite::Delete { value, len });
        }
        if batch % 3 == 1 {
            let port = (next_random(&mut r) % 8 + 1) as u16;
            writes.push(RouteWrite::Default { port });
        }
        if batch == 9 {
            writes.push(RouteWrite::Clear);
            installed.clear();
        }
        let mut seen = Vec::new();
        for sw in &mut sws {
            let results: Vec<String> = writes.iter().map(|w| write_route(sw, *w)).collect();
            let mut rr = r;
            let mut got = Vec::new();
            for _ in 0..300 {
                let dst = near_base(&mut rr);
                let out = run(sw, 1, &ipv4_frame(MAC_A, SRC, 0x0102_0304, dst, 64));
                got.push(port_bytes(&out));
            }
            let lpm = sw.table_hit_miss(PipeSel::All, "ipv4_lpm").unwrap();
            seen.push((results, got, lpm, forward_state(sw)));
        }
        assert_eq!(seen[0], seen[1], "batch {batch}: native and flat differ");
        for _ in 0..300 {
            near_base(&mut r);
        }
    }
    let (hits, misses) = sws[0].table_hit_miss(PipeSel::All, "ipv4_lpm").unwrap();
    assert!(hits > 1000 && misses > 100, "{hits} hits, {misses} misses");
}

/// Generated code counts misses, takes the default action with its data, and updates the
/// direct counter (the running entry's cell) and the indexed port counter itself: after random
/// traffic over installed and unknown MACs from random ports, with the default's data and the
/// entries changing between batches, the frames, hit/miss counts and every counter cell equal
/// the flat engine's.
#[test]
fn native_misses_and_counters_equal_flat_after_random_traffic() {
    let mut sws = native_and_flat();
    let macs: Vec<u64> = (1..=64u64).map(|i| i * 0x0000_0101_0001).collect();
    let mut r = 0x9e37_79b9_7f4a_7c15_u64;
    for batch in 0..8 {
        let adds: Vec<(u64, u16)> = (0..12)
            .map(|_| {
                let m = macs[(next_random(&mut r) % 64) as usize];
                (m, (next_random(&mut r) % 7 + 1) as u16)
            })
            .collect();
        let dels: Vec<u64> = (0..4)
            .map(|_| macs[(next_random(&mut r) % 64) as usize])
            .collect();
        let default_port = (batch % 3 != 0).then(|| (next_random(&mut r) % 7 + 1) as u16);
        let mut seen = Vec::new();
        for sw in &mut sws {
            let mut results = Vec::new();
            for (m, port) in &adds {
                let p = [("port", Value::from(*port))];
                let key = [("hdr.ethernet.dst_addr", KeyMatch::Exact(Value::from(*m)))];
                let a = sw.table_add(PipeSel::All, "forward", &key, None, "set_port", &p);
                results.push(format!("{:?}", a.map(|_| ())));
            }
            for m in &dels {
                let key = [("hdr.ethernet.dst_addr", KeyMatch::Exact(Value::from(*m)))];
                let d = sw.table_delete(PipeSel::All, "forward", &key, None);
                results.push(format!("{d:?}"));
            }
            let d = match default_port {
                Some(port) => {
                    let p = [("port", Value::from(port))];
                    sw.table_set_default(PipeSel::All, "forward", "set_port", &p)
                }
                None => sw.table_reset_default(PipeSel::All, "forward"),
            };
            results.push(format!("{d:?}"));
            let mut rr = r;
            let mut got = Vec::new();
            for _ in 0..200 {
                let x = next_random(&mut rr);
                let m = macs[(x % 64) as usize] ^ u64::from(x & (1 << 20) != 0);
                let port = ((x >> 32) % 64) as u16;
                let len = 60 + ((x >> 40) % 200) as usize;
                let mut frame = eth_frame(m, SRC, 0x9000);
                frame.resize(len, 0);
                got.push(port_bytes(&run(sw, port, &frame)));
            }
            seen.push((results, got, forward_state(sw)));
        }
        assert_eq!(seen[0], seen[1], "batch {batch}: native and flat differ");
        for _ in 0..200 {
            next_random(&mut r);
        }
    }
    let (hits, misses) = sws[0].table_hit_miss(PipeSel::All, "forward").unwrap();
    assert!(hits > 200 && misses > 200, "{hits} hits, {misses} misses");
}

/// A miss that runs a default action counting the table's direct counter counts the default
/// entry's cell (Tofino's miss path has a stats address of its own), not an entry's; the
/// cell reads and writes as `Cell::Default`, and a direct meter has no such cell.
#[test]
fn a_counting_default_action_counts_the_default_entry_cell() {
    use pipeline::api::cells::Cell;
    let mut sw = switch(Options::default());
    fwd(&mut sw, MAC_A, 2);
    sw.table_set_default(PipeSel::All, "forward", "set_port", &[("port", 3)])
        .unwrap();
    let other = eth_frame(MAC_A ^ 1, SRC, 0x9000);
    run(&mut sw, 1, &other);
    run(&mut sw, 1, &other);
    run(&mut sw, 1, &eth_frame(MAC_A, SRC, 0x9000));
    let default = Cell::Default { table: "forward" };
    let d = sw.counter_cell_read(PipeSel::All, default).unwrap();
    assert_eq!((d[0].packets, d[0].bytes), (2, 136));
    let hit = sw
        .direct_counter_read(
            PipeSel::All,
            "forward",
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(MAC_A as Value))],
            None,
        )
        .unwrap();
    assert_eq!(hit[0].packets, 1);
    sw.counter_write(PipeSel::All, default, 7, 700).unwrap();
    let d = sw.counter_cell_read(PipeSel::All, default).unwrap();
    assert_eq!((d[0].packets, d[0].bytes), (7, 700));
    assert!(matches!(
        sw.counter_cell_read(PipeSel::All, Cell::Default { table: "nope" }),
        Err(ApiError::Unknown { .. })
    ));
}

/// One random ACL entry of the ternary test: its key (source MAC and EtherType under random
/// masks; with `wide`, an ingress-port range too) and priority.
fn random_acl_key(r: &mut u64, wide: bool) -> (Vec<(&'static str, KeyMatch)>, u32) {
    let srcs = [SRC, SRC ^ 1, SRC ^ 0x100, 0x0a0b_0c0d];
    let src_masks = [0, 0xffff_ffff_ffff, 0xff, 0xffff_0000_0000];
    let types = [0x9000, 0x0800, 0x86dd, 0x9001];
    let type_masks = [0, 0xffff, 0xfff0];
    let pick = |r: &mut u64, xs: &[Value]| xs[(next_random(r) % xs.len() as u64) as usize];
    let mut key = vec![
        (
            "hdr.ethernet.src_addr",
            KeyMatch::Ternary {
                value: pick(r, &srcs.map(Value::from)),
                mask: pick(r, &src_masks),
            },
        ),
        (
            "hdr.ethernet.ether_type",
            KeyMatch::Ternary {
                value: pick(r, &types),
                mask: pick(r, &type_masks),
            },
        ),
    ];
    if wide {
        let lo = Value::from(next_random(r) % 8);
        let hi = lo + Value::from(next_random(r) % 4);
        key.push(("ig_intr_md.ingress_port", KeyMatch::Range { lo, hi }));
    }
    (key, (next_random(r) % 6) as u32)
}

/// The native engine searches ternary tables whose key packs into one `u128` with the key it
/// packed in line (`shim_tcam`), and takes the hit's action record or the default itself:
/// with overlapping entries of random masks and priorities added and deleted between batches,
/// on a 64-bit key and on a 73-bit one with a range field, every packet goes where the flat
/// engine sends it, with the same ACL hit/miss counts and counters.
#[test]
fn native_ternary_lookups_follow_acl_changes_as_flat_does() {
    use pipeline::exec::EngineKind;
    for wide in [false, true] {
        let opts = Options {
            wide_acl: wide,
            ..Options::default()
        };
        let mut sws: Vec<Switch> = [EngineKind::Native, EngineKind::Flat]
            .into_iter()
            .map(|e| switch_with(opts, SwitchConfig::new(1).with_engine(e)))
            .collect();
        assert_eq!(sws[0].engine(), EngineKind::Native);
        for sw in &mut sws {
            fwd(sw, MAC_A, 2);
            let session = MirrorSession {
                direction: MirrorDirection::Both,
                dest: MirrorDest::Port(8),
                max_len: None,
                enabled: true,
            };
            sw.mirror_session_set(3, session).unwrap();
        }
        let mut r = 0x5851_f42d_4c95_7f2d_u64;
        let mut installed: Vec<(Vec<(&str, KeyMatch)>, u32)> = Vec::new();
        for batch in 0..10 {
            let adds: Vec<(Vec<(&str, KeyMatch)>, u32)> =
                (0..6).map(|_| random_acl_key(&mut r, wide)).collect();
            let mirror = next_random(&mut r);
            let mut dels = Vec::new();
            for _ in 0..2 {
                if !installed.is_empty() {
                    let i = (next_random(&mut r) % installed.len() as u64) as usize;
                    dels.push(installed.swap_remove(i));
                }
            }
            let mut seen = Vec::new();
            for sw in &mut sws {
                let mut results = Vec::new();
                for (i, (key, prio)) in adds.iter().enumerate() {
                    let a = if mirror >> i & 1 == 1 {
                        sw.table_add(
                            PipeSel::All,
                            "acl",
                            key,
                            Some(*prio),
                            "mirror",
                            &[("session", 3)],
                        )
                    } else {
                        sw.table_add(PipeSel::All, "acl", key, Some(*prio), "drop", &[])
                    };
                    results.push(format!("{:?}", a.map(|_| ())));
                }
                for (key, prio) in &dels {
                    let d = sw.table_delete(PipeSel::All, "acl", key, Some(*prio));
                    results.push(format!("{d:?}"));
                }
                let mut rr = r;
                let mut got = Vec::new();
                for _ in 0..200 {
                    let x = next_random(&mut rr);
                    let src = [SRC, SRC ^ 1, SRC ^ 0x100, 0x0a0b_0c0d, x & 0xffff_ffff_ffff]
                        [(x % 5) as usize];
                    let ty = [0x9000, 0x0800, 0x86dd, 0x9001, 0x9005][((x >> 8) % 5) as usize];
                    let port = ((x >> 16) % 10) as u16;
                    got.push(port_bytes(&run(sw, port, &eth_frame(MAC_A, src, ty))));
                }
                let acl = sw.table_hit_miss(PipeSel::All, "acl").unwrap();
                seen.push((results, got, acl, forward_state(sw)));
            }
            assert_eq!(
                seen[0], seen[1],
                "wide {wide}, batch {batch}: native and flat differ"
            );
            installed.extend(adds);
            for _ in 0..200 {
                next_random(&mut r);
            }
        }
        let (hits, misses) = sws[0].table_hit_miss(PipeSel::All, "acl").unwrap();
        assert!(hits > 300 && misses > 100, "{hits} hits, {misses} misses");
    }
}

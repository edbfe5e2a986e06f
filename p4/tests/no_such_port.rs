//! Copies to a port that does not exist (port 72–127 of a pipe): the conformance checks
//! `tm_ucast_no_such_port*` and `mirror_no_such_port` (`tests/conformance/`) check the packets;
//! this counts what STF cannot see: each such copy is one `no_such_port` drop (a unicast port
//! the ingress deparser cleared is not also a `no_destination` drop), the ports 0–71 of a pipe
//! (CPU 64, recirculation 68–71) are ports, and a port of a pipe the switch lacks stays a
//! `bad_egress_port` drop. Such a port cannot be configured either (CPU port, queues).

mod common;

use std::sync::Arc;

use common::compile_test_program;
use pipeline::api::ApiError;
use pipeline::ir::Target;
use pipeline::switch::{DropReason, InFrame, Switch, SwitchConfig, SwitchError, DEFAULT_QUEUE};
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

/// A one-pipe switch running `tests/conformance/NAME.p4` (Tofino 1).
fn switch(name: &str) -> Switch {
    build(name, SwitchConfig::new(1)).expect("switch")
}

fn build(name: &str, cfg: SwitchConfig) -> Result<Switch, SwitchError> {
    let c = compile_test_program("conformance", &format!("{name}.p4"), Target::Tofino1, &[])
        .unwrap_or_else(|e| panic!("{}", e.render()));
    Switch::new(Arc::new(c.program), cfg)
}

/// Sends one 62-byte frame on port 0 whose header field `f` (bytes 4–5) is `f`; returns the
/// ports of what left.
fn send(sw: &mut Switch, f: u16) -> Vec<u16> {
    let mut bytes = vec![0xaa; 62];
    bytes[..12].fill(0);
    bytes[4..6].copy_from_slice(&f.to_be_bytes());
    let mut ports = Vec::new();
    let frame = InFrame {
        port: 0,
        bytes: &bytes,
        ts: 0,
    };
    sw.process(frame, &mut |o| ports.push(o.port));
    ports
}

#[test]
fn a_unicast_port_past_71_is_one_no_such_port_drop() {
    let mut sw = switch("tm_ucast_no_such_port");
    // Port 80 of pipe 0, port 72 of pipe 0, port 80 of pipe 1 (the deparser looks at the
    // low 7 bits only): each gone, counted once.
    for f in [80, 72, 128 + 80] {
        assert_eq!(send(&mut sw, f), Vec::<u16>::new(), "port {f}");
    }
    let stats = sw.stats();
    assert_eq!(stats.dropped(DropReason::NoSuchPort), 3);
    assert_eq!(stats.total_drops(), 3);
    // Ports 1, 64 (the CPU Ethernet port) and 71 leave / loop back; none is a no_such_port drop.
    assert_eq!(send(&mut sw, 1), [1]);
    assert_eq!(send(&mut sw, 64), [64]);
    let recirculations = sw.stats().recirculations;
    send(&mut sw, 71);
    assert!(sw.stats().recirculations > recirculations);
    assert_eq!(sw.stats().dropped(DropReason::NoSuchPort), 3);
    // Port 2 of pipe 1, which a one-pipe switch does not have: as before, bad_egress_port.
    assert_eq!(send(&mut sw, 128 + 2), Vec::<u16>::new());
    assert_eq!(sw.stats().dropped(DropReason::BadEgressPort), 1);
    assert_eq!(sw.stats().dropped(DropReason::NoDestination), 0);
}

#[test]
fn a_mirror_copy_to_port_80_is_made_then_dropped_by_the_tm() {
    let mut sw = switch("mirror_no_such_port");
    let session = MirrorSession {
        direction: MirrorDirection::Both,
        dest: MirrorDest::Port(80),
        max_len: None,
        enabled: true,
    };
    sw.mirror_session_set(5, session).expect("session");
    assert_eq!(send(&mut sw, 0), [1]);
    let stats = sw.stats();
    assert_eq!(stats.mirrors, 1);
    assert_eq!(stats.dropped(DropReason::NoSuchPort), 1);
    assert_eq!(stats.total_drops(), 1);
}

#[test]
fn a_port_past_71_cannot_be_configured() {
    let e = build(
        "tm_ucast_no_such_port",
        SwitchConfig::new(1).with_cpu_port(80),
    )
    .unwrap_err();
    assert_eq!(e, SwitchError::NoSuchPort { port: 80 });
    assert!(build(
        "tm_ucast_no_such_port",
        SwitchConfig::new(1).with_cpu_port(64)
    )
    .is_ok());
    let mut sw = switch("tm_ucast_no_such_port");
    let e = sw.port_queue_set(80, DEFAULT_QUEUE).unwrap_err();
    assert!(matches!(e, ApiError::BadPort { port: 80 }), "{e:?}");
    sw.port_queue_set(71, DEFAULT_QUEUE)
        .expect("port 71 (recirculation) is a port");
}

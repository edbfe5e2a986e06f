//! `drop_ctl` bit 2 disables mirroring: `tests/lang/drop_ctl_no_mirror.p4`, whose STF checks
//! the packets; this counts what STF cannot see: each suppressed mirror is a drop of the copy
//! (`mirror_drop_ctl`), the mirrors made are counted as such, and the packet itself is not
//! dropped for it.

use std::sync::Arc;

use p4::compile::{compile_file, CompileOptions};
use pipeline::switch::{DropReason, InFrame, Switch, SwitchConfig};
use pipeline::tm::mirror::{MirrorDest, MirrorDirection, MirrorSession};

/// Sends one 64-byte frame per `mode` through the program; returns the ports of what left
/// and the switch.
fn run(modes: &[u8]) -> (Vec<u16>, Switch) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/drop_ctl_no_mirror.p4");
    let c = compile_file(&path, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    for (id, port) in [(5, 2), (6, 3)] {
        let session = MirrorSession {
            direction: MirrorDirection::Both,
            dest: MirrorDest::Port(port),
            max_len: None,
            enabled: true,
        };
        sw.mirror_session_set(id, session).expect("session");
    }
    let mut ports = Vec::new();
    for &mode in modes {
        let mut bytes = vec![0xaa; 64];
        bytes[0] = mode;
        let frame = InFrame {
            port: 0,
            bytes: &bytes,
            ts: 0,
        };
        sw.process(frame, &mut |f| ports.push(f.port));
    }
    (ports, sw)
}

#[test]
fn a_mirror_suppressed_by_drop_ctl_bit_2_is_counted_as_a_drop_of_the_copy() {
    // Ingress with drop_ctl 4, egress with drop_ctl 4: the packets only.
    let (ports, sw) = run(&[1, 3]);
    assert_eq!(ports, [1, 1]);
    let stats = sw.stats();
    assert_eq!(stats.dropped(DropReason::MirrorDropCtl), 2);
    assert_eq!((stats.mirrors, stats.total_drops()), (0, 2));
    // Without drop_ctl: a copy each. drop_ctl 5 in ingress: nothing leaves; the packet is a
    // drop_ctl drop and its mirror a suppressed one.
    let (ports, sw) = run(&[2, 4, 5]);
    assert_eq!(ports, [1, 2, 1, 3]);
    let stats = sw.stats();
    assert_eq!(stats.mirrors, 2);
    assert_eq!(stats.dropped(DropReason::MirrorDropCtl), 1);
    assert_eq!(stats.dropped(DropReason::IngressDropCtl), 1);
    assert_eq!(stats.total_drops(), 2);
}

//! The deparser's select fields that start each pass invalid (`resubmit_type`,
//! `digest_type`): `tests/lang/select_written.p4` learns and resubmits with type 0, and only
//! the pass that wrote the fields does either. The STF beside the program checks the packets;
//! this counts the resubmits and digests, which STF cannot see.

use std::sync::Arc;

use p4::compile::{compile_file, CompileOptions};
use pipeline::switch::{InFrame, Switch, SwitchConfig};

#[test]
fn only_a_pass_that_wrote_the_type_resubmits_or_learns() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/select_written.p4");
    let c = compile_file(&path, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    let mut out = Vec::new();
    for a in [1u8, 2, 2, 1] {
        let mut bytes = vec![0xaa; 64];
        bytes[0] = a;
        bytes[1] = 5;
        sw.process(
            InFrame {
                port: 0,
                bytes: &bytes,
                ts: 0,
            },
            &mut |f| out.push(f),
        );
    }
    let tags: Vec<(u8, u8)> = out.iter().map(|f| (f.bytes[0], f.bytes[1])).collect();
    assert_eq!(tags, [(1, 0x77), (2, 5), (2, 5), (1, 0x77)]);
    let stats = sw.stats();
    // Each a == 1 packet: one resubmit and one digest (its first pass); a == 2: none.
    assert_eq!(stats.resubmits, 2, "{stats:?}");
    assert_eq!(stats.digests, 2, "{stats:?}");
}

/// `tests/lang/select_written_paths.p4`: every path that writes `resubmit_type` (out
/// parameter, struct copy, control copy-out, RegisterAction result, table action) resubmits;
/// `digest_type` is written only by the struct copy of a == 4, and moved back unchanged
/// elsewhere, so one packet learns.
#[test]
fn every_write_path_marks_the_field_and_copies_back_do_not() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang/select_written_paths.p4");
    let c = compile_file(&path, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    let mut out = Vec::new();
    for a in [3u8, 4, 5, 6, 7, 2] {
        let mut bytes = vec![0xaa; 64];
        bytes[0] = a;
        bytes[1] = 5;
        sw.process(
            InFrame {
                port: 0,
                bytes: &bytes,
                ts: 0,
            },
            &mut |f| out.push(f),
        );
    }
    let tags: Vec<(u8, u8)> = out.iter().map(|f| (f.bytes[0], f.bytes[1])).collect();
    assert_eq!(
        tags,
        [
            (3, 0x77),
            (4, 0x77),
            (5, 0x77),
            (6, 0x77),
            (7, 0x77),
            (2, 5)
        ]
    );
    let stats = sw.stats();
    assert_eq!(stats.resubmits, 5, "{stats:?}");
    assert_eq!(stats.digests, 1, "{stats:?}");
}

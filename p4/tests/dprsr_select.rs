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

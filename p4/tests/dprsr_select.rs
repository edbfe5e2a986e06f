//! The deparser's select fields that start each pass invalid (`resubmit_type`,
//! `digest_type`): `tests/lang/select_written.p4` learns and resubmits with type 0, and only
//! the pass that wrote the fields does either. The STF beside the program checks the packets;
//! this counts the resubmits and digests, which STF cannot see.

use std::sync::Arc;

use p4::compile::{compile_file, CompileOptions};
use pipeline::switch::{InFrame, Switch, SwitchConfig};

/// Sends one 64-byte frame per first byte in `firsts` (second byte 5) through the program in
/// `tests/lang/NAME`; returns each output's first two bytes and the switch's resubmit and digest
/// counts.
fn run(name: &str, firsts: &[u8]) -> (Vec<(u8, u8)>, u64, u64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/lang")
        .join(name);
    let c = compile_file(&path, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    let mut out = Vec::new();
    for &a in firsts {
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
    let tags = out.iter().map(|f| (f.bytes[0], f.bytes[1])).collect();
    let stats = sw.stats();
    (tags, stats.resubmits, stats.digests)
}

#[test]
fn only_a_pass_that_wrote_the_type_resubmits_or_learns() {
    let (tags, resubmits, digests) = run("select_written.p4", &[1, 2, 2, 1]);
    assert_eq!(tags, [(1, 0x77), (2, 5), (2, 5), (1, 0x77)]);
    // Each a == 1 packet: one resubmit and one digest (its first pass); a == 2: none.
    assert_eq!((resubmits, digests), (2, 2));
}

/// `tests/lang/select_written_paths.p4`: every path that writes `resubmit_type` (out
/// parameter, struct copy, control copy-out, RegisterAction result, table action) resubmits;
/// `digest_type` is written only by the struct copy of a == 4, and moved back unchanged
/// elsewhere, so one packet learns.
#[test]
fn every_write_path_marks_the_field_and_copies_back_do_not() {
    let (tags, resubmits, digests) = run("select_written_paths.p4", &[3, 4, 5, 6, 7, 2]);
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
    assert_eq!((resubmits, digests), (5, 1));
}

/// `pisa trace` names the hidden "written" flags as the program's field and the word
/// `written` (`if (ig_dprsr_md.digest_type written) -> true`), not by an internal name: the
/// deparser's lines of an a == 1 packet's two passes (the first writes both types, the
/// resubmitted one neither) against `tests/lang/select_written.trace` (rewritten under
/// `UPDATE_EXPECT=1`).
#[test]
fn traces_name_the_written_flags_as_the_program_does() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang");
    let c = compile_file(&dir.join("select_written.p4"), &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let mut sw = Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch");
    let mut bytes = vec![0xaa; 64];
    bytes[0] = 1;
    let (_, trace) = sw.trace(InFrame {
        port: 0,
        bytes: &bytes,
        ts: 0,
    });
    let text = trace.to_string();
    let lines: String = text
        .lines()
        .filter(|l| {
            l.contains("deparser: if") || l.contains("digest ") || l.contains("tm: resubmit")
        })
        .map(|l| format!("{}\n", l.trim()))
        .collect();
    assert!(!lines.contains('$'), "{text}");
    let golden = dir.join("select_written.trace");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&golden, &lines).expect("write golden");
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(lines, want, "full trace:\n{text}");
}

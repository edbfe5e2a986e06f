//! Hardware fidelity: programs that used to compile and then behave differently from a Tofino
//! (issue 11, "silent wrongs"). Each test runs a small TNA program of `tests/fidelity/` through
//! the switch model and compares the output with bytes worked out by hand from the Tofino
//! behaviour it checks (the derivation is written next to each expectation), or with an
//! independent implementation (the `crc` crate), never with pisa's own output.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use p4::compile::{compile_file, CompileFailure, CompileOptions, Compiled};
use pipeline::ir::Target;
use pipeline::switch::{InFrame, OutFrame, Switch, SwitchConfig};

fn program(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fidelity")
        .join(name)
}

fn try_compile(
    name: &str,
    target: Target,
    defines: &[(&str, &str)],
) -> Result<Compiled, CompileFailure> {
    let opts = CompileOptions {
        target,
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        ..CompileOptions::default()
    };
    compile_file(&program(name), &opts)
}

fn compile(name: &str, target: Target, defines: &[(&str, &str)]) -> Compiled {
    try_compile(name, target, defines)
        .unwrap_or_else(|f| panic!("{name} does not compile:\n{}", f.render()))
}

fn switch(c: Compiled) -> Switch {
    Switch::new(Arc::new(c.program), SwitchConfig::new(1)).expect("switch")
}

fn send(sw: &mut Switch, port: u16, bytes: &[u8]) -> Vec<OutFrame> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port,
            bytes,
            ts: 1_000,
        }],
        &mut out,
    );
    out
}

/// `n` bytes 0, 1, 2, ... (a payload no header field of these programs is made of).
fn counting(n: usize) -> Vec<u8> {
    (0..n).map(|i| i as u8).collect()
}

/// An Ethernet frame to `dst` from `src` with `ether_type` and `payload`.
fn ethernet(dst: u64, src: u64, ether_type: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&ether_type.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

// ---- architecture vs target ----

/// `tna.p4` takes its device constants from the target, like Intel's header: on Tofino 1 the
/// port metadata is 64 bits, on Tofino 2 192 bits. The program writes PORT_METADATA_SIZE into
/// the EtherType; everything else must come out as it went in, which only happens when the
/// parser skipped exactly the port metadata the switch put in front of the packet.
#[test]
fn tna_picks_the_device_constants_of_the_target() {
    let payload = counting(50);
    let frame = ethernet(0x0a0b_0c0d_0e0f, 0x0203_0405_0607, 0x0800, &payload);
    for (target, size) in [(Target::Tofino1, 64u16), (Target::Tofino2, 192)] {
        let mut sw = switch(compile("port_metadata.p4", target, &[]));
        let out = send(&mut sw, 1, &frame);
        assert_eq!(out.len(), 1, "{target:?}: {:?}", sw.drain_drops());
        assert_eq!(out[0].port, 2);
        // By hand: the same frame with bytes 12..14 (EtherType) replaced by the constant.
        let want = ethernet(0x0a0b_0c0d_0e0f, 0x0203_0405_0607, size, &payload);
        assert_eq!(out[0].bytes, want, "{target:?}");
    }
}

#[test]
fn t2na_runs_on_tofino2() {
    let frame = ethernet(1, 2, 0x0800, &counting(50));
    let mut sw = switch(compile(
        "port_metadata.p4",
        Target::Tofino2,
        &[("T2NA", "1")],
    ));
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].bytes, ethernet(1, 2, 192, &counting(50)));
}

/// T2NA cannot run on Tofino 1 (Intel's t2na.p4 stops with `#error` there too): the program is
/// refused with the reason instead of compiling against the wrong port metadata.
#[test]
fn t2na_on_tofino1_is_refused_with_the_reason() {
    let f = try_compile("port_metadata.p4", Target::Tofino1, &[("T2NA", "1")])
        .expect_err("t2na.p4 must not compile for Tofino 1");
    let text = f.render();
    assert!(text.contains("t2na.p4"), "{text}");
    assert!(text.contains("--target tofino2"), "{text}");
}

/// `-D __TARGET_TOFINO__=2` with `--target tofino1` would pick Tofino 2 constants for a switch
/// modelled as Tofino 1: refused.
#[test]
fn a_target_define_that_contradicts_the_target_is_refused() {
    let f = try_compile(
        "port_metadata.p4",
        Target::Tofino1,
        &[("__TARGET_TOFINO__", "2")],
    )
    .expect_err("contradicting define");
    let text = f.render();
    assert!(text.contains("contradicts the target tofino1"), "{text}");
    // Agreeing with the target is fine.
    compile(
        "port_metadata.p4",
        Target::Tofino2,
        &[("__TARGET_TOFINO__", "2")],
    );
}

// ---- egress intrinsic metadata ----

/// An egress parser that extracts nothing: the egress intrinsic metadata the TM prepends is
/// removed by the hardware whatever the parser did (it replaces max(0, parsed - metadata
/// length) bytes of the packet), so the frame leaves exactly as it came in.
#[test]
fn unextracted_egress_intrinsic_metadata_never_reaches_the_wire() {
    let mut sw = switch(compile("egress_no_intrinsic.p4", Target::Tofino1, &[]));
    let frame = ethernet(0x0a, 0x0b, 0x0800, &counting(60));
    let out = send(&mut sw, 1, &frame);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 2);
    assert_eq!(out[0].bytes, frame);
}

//! Tofino 2's parser counter stack (`ParserCounter.push`/`pop`, issue 11): the programs of
//! `tests/parser_counter_tf2/` on every engine (tree, flat, native), and the refusals on
//! Tofino 1 and on misuse. Expected bytes are worked out by hand in each program's comment
//! and next to each check.

mod common;

use std::sync::Arc;

use p4::compile::{CompileFailure, Compiled};
use pipeline::ir::Target;
use pipeline::switch::{InFrame, Switch};

const ENGINES: [&str; 3] = ["tree", "flat", "native"];

fn try_compile(name: &str, target: Target, defines: &[&str]) -> Result<Compiled, CompileFailure> {
    common::compile_test_program("parser_counter_tf2", name, target, defines)
}

/// The error text of a program that must not compile.
fn refused(name: &str, target: Target, defines: &[&str]) -> String {
    match try_compile(name, target, defines) {
        Ok(_) => panic!("{name} with {defines:?} compiled on {target:?}"),
        Err(f) => f.render(),
    }
}

/// What leaves port 2 for each frame sent on port 1, on `engine` (None: dropped).
fn run(name: &str, defines: &[&str], engine: &str, frames: &[Vec<u8>]) -> Vec<Option<Vec<u8>>> {
    let c = try_compile(name, Target::Tofino2, defines)
        .unwrap_or_else(|f| panic!("{name} does not compile:\n{}", f.render()));
    assert!(c.resources.is_some(), "{name} was not placed");
    pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{name}: {e}"));
    let cfg = common::harness_config().with_engine(engine.parse().expect("engine"));
    let mut sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
    frames
        .iter()
        .map(|f| {
            let mut out = Vec::new();
            let frame = InFrame {
                port: 1,
                bytes: f,
                ts: 1_000,
            };
            sw.process_batch(&[frame], &mut out);
            assert!(out.len() <= 1, "{engine}: {out:?}");
            out.pop().map(|o| {
                assert_eq!(o.port, 2, "{engine}");
                o.bytes
            })
        })
        .collect()
}

/// An Ethernet frame (EtherType 0x88b5) carrying `body`, then 0xee bytes up to 64 bytes
/// (none of the frames is padded on its way out).
fn frame(body: &[u8]) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x88, 0xb5];
    f.extend_from_slice(body);
    f.resize(64, 0xee);
    f
}

#[test]
fn nested_tlvs_count_the_outer_length_through_update_with_top() {
    // An area of 7 bytes: option a1 with 2 data bytes, option b1 with 1. The data bytes the
    // options' own counters take come off the stacked area length, so after option b1 the
    // popped area length is 0 and parsing stops before the 0xee bytes. Emitted: both
    // options, then the three data bytes.
    let two = frame(&[7, 0xa1, 2, 0x11, 0x12, 0xb1, 1, 0x21]);
    // An empty area, and an area holding one empty option (its pushed length is 0 at once).
    let empty = frame(&[0]);
    let empty_option = frame(&[2, 0xc1, 0]);
    let frames = [two, empty.clone(), empty_option.clone()];
    for engine in ENGINES {
        let out = run("nested_tlv.p4", &[], engine, &frames);
        assert_eq!(
            out[0],
            Some(frame(&[7, 0xa1, 2, 0xb1, 1, 0x11, 0x12, 0x21])),
            "{engine}"
        );
        assert_eq!(out[1], Some(empty.clone()), "{engine}");
        assert_eq!(out[2], Some(empty_option.clone()), "{engine}");
        // Without update_with_top the area length counts the option headers only: after
        // option a1 it pops 5, after b1 3, so the parser takes 0xee 0xee as an option of
        // length 0xee (-18 as the int8 the counter is, so not zero) and fills the data stack
        // (8 entries: 0x11 0x12 0x21 and five 0xee); the parse ends there, as bf-p4c ends an
        // unrolled loop at the stack's size, the rest payload.
        let out = run("nested_tlv.p4", &["NO_UPDATE"], engine, &frames[..1]);
        let full = frame(&[7, 0xa1, 2, 0xb1, 1, 0xee, 0xee, 0x11, 0x12, 0x21]);
        assert_eq!(out[0], Some(full), "{engine}");
    }
}

#[test]
fn the_stack_is_three_deep_under_the_counter_and_updates_stop_at_a_clear_flag() {
    let f = frame(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
    // res.n (the byte after the EtherType) becomes the number of bytes counted.
    let counted = |n: u8| {
        let mut want = f.clone();
        want[14] = n;
        want
    };
    for engine in ENGINES {
        // set(9), four pushes, four pops (the 9 was lost; the empty stack pops 0), +3.
        assert_eq!(
            run("stack.p4", &[], engine, std::slice::from_ref(&f)),
            [Some(counted(3))],
            "{engine}"
        );
        // See stack.p4: the decrement under a clear top flag leaves the stack alone.
        let out = run("stack.p4", &["CHAIN"], engine, std::slice::from_ref(&f));
        assert_eq!(out, [Some(counted(4))], "{engine}");
        // A plain set under a flagged entry adds its value to the entry (the hardware's).
        let out = run("stack.p4", &["SET_UNDER"], engine, std::slice::from_ref(&f));
        assert_eq!(out, [Some(counted(5))], "{engine}");
    }
}

#[test]
fn push_and_pop_are_refused_on_tofino1_and_when_misused() {
    // Tofino 1's counter has no stack (bf-p4c: "Tofino's parser does not have counter
    // stack"; its tofino1_base.p4 declares no push or pop).
    let e = refused("nested_tlv.p4", Target::Tofino1, &["TNA", "PUSH_ON_TF1"]);
    assert!(
        e.contains("`ParserCounter.push` needs Tofino 2: a Tofino 1 parser counter has no stack"),
        "{e}"
    );
    let e = refused("nested_tlv.p4", Target::Tofino2, &["BAD_FLAG"]);
    assert!(
        e.contains("`update_with_top` must be a compile-time constant"),
        "{e}"
    );
    let e = refused("nested_tlv.p4", Target::Tofino2, &["BAD_ARITY"]);
    assert!(
        e.contains("`ParserCounter.push` takes 1 or 5 arguments and an optional `update_with_top`, 4 given"),
        "{e}"
    );
    let e = refused("nested_tlv.p4", Target::Tofino2, &["BAD_POP"]);
    assert!(e.contains("`pop` takes 0 argument(s), 1 given"), "{e}");
}

//! Tofino 2's stateful extras (issue 11, section 2): RegisterActions with up to four outputs,
//! `RegisterAction2/3/4`, and `Register.clear`, run through the switch model on the programs
//! of `tests/stateful_tf2/`; and their refusals on Tofino 1 and on misuse. Expected values are
//! worked out by hand from each RegisterAction's body (written next to each check).

mod common;

use std::sync::Arc;

use p4::compile::{CompileFailure, Compiled};
use pipeline::ir::Target;
use pipeline::switch::{InFrame, OutFrame, Switch};

fn try_compile(name: &str, target: Target, defines: &[&str]) -> Result<Compiled, CompileFailure> {
    common::compile_test_program("stateful_tf2", name, target, defines)
}

fn switch(name: &str) -> Switch {
    let c = try_compile(name, Target::Tofino2, &[])
        .unwrap_or_else(|f| panic!("{name} does not compile:\n{}", f.render()));
    // What `pisa check --target tofino2` reports: placed into stages without a resource error.
    assert!(c.resources.is_some(), "{name} was not placed");
    pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{name}: {e}"));
    Switch::new(Arc::new(c.program), common::harness_config()).expect("switch")
}

/// The error text of a program that must not compile.
fn refused(name: &str, target: Target, defines: &[&str]) -> String {
    match try_compile(name, target, defines) {
        Ok(_) => panic!("{name} with {defines:?} compiled on {target:?}"),
        Err(f) => f.render(),
    }
}

fn send(sw: &mut Switch, bytes: &[u8]) -> Vec<OutFrame> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port: 1,
            bytes,
            ts: 1_000,
        }],
        &mut out,
    );
    out
}

/// outputs.p4's fields after Ethernet: op, a, r1..r4, p1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Data {
    op: u8,
    a: u32,
    r: [u32; 4],
    p1: u16,
}

const ETH: usize = 14;

fn frame(d: Data) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x88, 0xb5];
    f.push(d.op);
    f.extend_from_slice(&d.a.to_be_bytes());
    for r in d.r {
        f.extend_from_slice(&r.to_be_bytes());
    }
    f.extend_from_slice(&d.p1.to_be_bytes());
    f.extend((0..32).map(|i| i as u8));
    f
}

fn parse(b: &[u8]) -> Data {
    let w = |o: usize| u32::from_be_bytes(b[ETH + o..ETH + o + 4].try_into().unwrap());
    Data {
        op: b[ETH],
        a: w(1),
        r: [w(5), w(9), w(13), w(17)],
        p1: u16::from_be_bytes([b[ETH + 21], b[ETH + 22]]),
    }
}

fn run(sw: &mut Switch, d: Data) -> Data {
    let out = send(sw, &frame(d));
    assert_eq!(out.len(), 1, "one packet out for {d:?}");
    parse(&out[0].bytes)
}

/// Runs a packet with `op` and every other field 0.
fn run_op(sw: &mut Switch, op: u8) -> Data {
    run(
        sw,
        Data {
            op,
            ..Data::default()
        },
    )
}

#[test]
fn four_outputs_two_types_and_clear() {
    let mut sw = switch("outputs.p4");
    let op0 = |a| Data {
        op: 0,
        a,
        ..Data::default()
    };
    // acc[0] starts at 5. add4: rv1 = old, rv4 = old + 1, value += a, rv2 = new, rv3 = a.
    assert_eq!(run(&mut sw, op0(3)).r, [5, 8, 3, 6]);
    assert_eq!(run(&mut sw, op0(10)).r, [8, 18, 10, 9]);
    // From an action, only rv2 taken: 18 + 4 = 22 lands in r2; r1, r3, r4 stay as sent.
    let d = Data {
        op: 1,
        a: 4,
        r: [0xaaaa_aaaa, 0, 0xcccc_cccc, 0xdddd_dddd],
        p1: 0,
    };
    assert_eq!(
        run(&mut sw, d).r,
        [0xaaaa_aaaa, 22, 0xcccc_cccc, 0xdddd_dddd]
    );
    // clear(9): every cell is 9, so add4 now starts from 9.
    let cleared = run_op(&mut sw, 2);
    assert_eq!(cleared.r, [0; 4]);
    assert_eq!(run(&mut sw, op0(1)).r, [9, 10, 1, 10]);
    // acc2[1] starts at 0x12345678. two: rv1 = old, value += 1, rv2 (bit<16>) = new[15:0].
    let d = run_op(&mut sw, 3);
    assert_eq!((d.r[0], d.p1), (0x1234_5678, 0x5679));
    let d = run_op(&mut sw, 3);
    assert_eq!((d.r[0], d.p1), (0x1234_5679, 0x567a));
    // The direct register of `direct`'s one entry starts at 100; dtwo adds 1 and returns the
    // new value twice (rv2 as bit<16> into p1).
    for want in [101u32, 102] {
        let d = run_op(&mut sw, 4);
        assert_eq!((d.r[0], d.p1), (want, want as u16));
    }
}

/// What `pisa check --emit-ir` shows: the outputs each execute writes, and the clear.
#[test]
fn the_ir_names_every_output_and_the_clear() {
    let c = try_compile("outputs.p4", Target::Tofino2, &[]).expect("compiles");
    let ir = pipeline::ir_text::program_text(&c.program);
    for line in [
        "rv4 = value + 1;",
        "(hdr.data.r1, hdr.data.r2, hdr.data.r3, hdr.data.r4) = Ingress.add4.execute(0);",
        "(hdr.data.r1, hdr.data.p1, _, _) = Ingress.dtwo.execute(0);",
        "Ingress.acc.clear(0x9, 0x0);",
        "(_, hdr.data.r2, _, _) = Ingress.add4.execute(",
    ] {
        assert!(ir.contains(line), "no `{line}` in\n{ir}");
    }
}

#[test]
fn tofino1_refuses_the_tofino2_stateful_extras() {
    // tna.p4's stateful ALU has one output word.
    let e = refused("outputs.p4", Target::Tofino1, &["TNA", "BAD_ONE_OUTPUT"]);
    assert!(e.contains("Tofino 1's stateful ALU has one output"), "{e}");
    assert!(e.contains("t2na.p4"), "{e}");
    // Four outputs, RegisterAction2 and clear: none exists in tna.p4, even on a Tofino 2.
    for target in [Target::Tofino1, Target::Tofino2] {
        let e = refused("outputs.p4", target, &["TNA"]);
        assert!(e.contains("one output"), "{e}");
        assert!(e.contains("`RegisterAction2` is a Tofino 2 extern"), "{e}");
        assert!(e.contains("clear"), "{e}");
    }
}

#[test]
fn misuse_is_refused_with_the_reason() {
    // bf-p4c takes clear's value and busy as constants only.
    let e = refused("outputs.p4", Target::Tofino2, &["BAD_CLEAR_ARG"]);
    assert!(e.contains("must be a constant"), "{e}");
    // Extra outputs are written when execute returns: not inside a condition.
    let e = refused("outputs.p4", Target::Tofino2, &["BAD_IN_EXPRESSION"]);
    assert!(e.contains("inside an expression"), "{e}");
    // RegisterAction2's second output is not optional.
    let e = refused("outputs.p4", Target::Tofino2, &["BAD_MISSING_OUT"]);
    assert!(e.contains("takes 1 output argument(s), 0 given"), "{e}");
}

/// minmax.p4's fields after Ethernet: op, i, v, m, best, lane, lane3 (3 bits) + 5 pad.
fn mm_frame(op: u8, i: u16, v: u16, m: u8) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x88, 0xb5, op];
    f.extend_from_slice(&i.to_be_bytes());
    f.extend_from_slice(&v.to_be_bytes());
    f.push(m);
    f.extend_from_slice(&[0; 5]);
    f.extend((0..32).map(|i| i as u8));
    f
}

/// (best, lane, lane3) of a min/max run.
fn mm_run(sw: &mut Switch, op: u8, word: u16, m: u8) -> (u16, u16, u8) {
    let out = send(sw, &mm_frame(op, word, 0, m));
    assert_eq!(out.len(), 1);
    let b = &out[0].bytes;
    let h = |o: usize| u16::from_be_bytes([b[ETH + o], b[ETH + o + 1]]);
    (h(6), h(8), b[ETH + 10] >> 5)
}

#[test]
fn min_max_over_a_word_of_sixteen_bit_cells() {
    let mut sw = switch("minmax.p4");
    // Word 1 holds cells 8..15 (lane i = cell 8 + i): 40, 7, 99, 7, 500, 3, 250, 64.
    let cells = [40u16, 7, 99, 7, 500, 3, 250, 64];
    for (k, v) in cells.iter().enumerate() {
        assert_eq!(send(&mut sw, &mm_frame(0, 8 + k as u16, *v, 0)).len(), 1);
    }
    // All lanes: min 3 in lane 5, max 500 in lane 4.
    assert_eq!(mm_run(&mut sw, 1, 1, 0xff), (3, 5, 0));
    assert_eq!(mm_run(&mut sw, 2, 1, 0xff), (500, 0, 4));
    // Lanes 0..3 only (mask 0x0f): min 7, first in lane 1 (ties to the lowest lane); max 99.
    assert_eq!(mm_run(&mut sw, 1, 1, 0x0f), (7, 1, 0));
    assert_eq!(mm_run(&mut sw, 2, 1, 0x0f), (99, 0, 2));
    // Lanes 6 and 7 (mask 0xc0): min 64 in lane 7, max 250 in lane 6.
    assert_eq!(mm_run(&mut sw, 1, 1, 0xc0), (64, 7, 0));
    assert_eq!(mm_run(&mut sw, 2, 1, 0xc0), (250, 0, 6));
    // Word 0 was never written: cells 0..7 are 0.
    assert_eq!(mm_run(&mut sw, 2, 0, 0xff), (0, 0, 0));
    // Byte cells 16..31 (word 1 of `bytes`): cell 16 + i = 200 - 10 * i, except cell 16 + 9 = 5.
    for i in 0..16u16 {
        let v = if i == 9 { 5 } else { 200 - 10 * i };
        assert_eq!(send(&mut sw, &mm_frame(3, 16 + i, v, 0)).len(), 1);
    }
    // min8 with the mask in data.v: all 16 lanes → 5 in lane 9; lanes 0..7 (0x00ff) → 130 in
    // lane 7; lanes 10 and 15 (0x8400) → 50 in lane 15.
    let lo8 = |sw: &mut Switch, mask: u16| {
        let out = send(sw, &mm_frame(4, 1, mask, 0));
        let b = &out[0].bytes;
        let h = |o: usize| u16::from_be_bytes([b[ETH + o], b[ETH + o + 1]]);
        (h(6), h(8))
    };
    assert_eq!(lo8(&mut sw, 0xffff), (5, 9));
    assert_eq!(lo8(&mut sw, 0x00ff), (130, 7));
    assert_eq!(lo8(&mut sw, 0x8400), (50, 15));
}

/// The index-less `execute()` forms (t2na.p4 declares the index @optional): bf-p4c refuses an
/// indexed RegisterAction or MinMaxAction run without one ("requires an index to address, as
/// it isn't directly addressed from the match entry"); the Direct* actions and the
/// counter-addressed methods take none (`outputs.p4`, `fifo_stack.p4` run them). A named
/// `rv2 = x` in the index's place is not taken for the index.
#[test]
fn an_indexed_execute_without_an_index_is_refused_as_bf_p4c_does() {
    let e = refused("minmax.p4", Target::Tofino2, &["BAD_NO_INDEX"]);
    assert!(e.contains("`lo.execute()` without an index"), "{e}");
    assert!(e.contains("requires an index to address"), "{e}");
    let e = refused("minmax.p4", Target::Tofino2, &["BAD_NAMED_NO_INDEX"]);
    assert!(e.contains("the first argument is not the index"), "{e}");
}

#[test]
fn min_max_misuse_and_learning_are_refused() {
    let e = refused("minmax.p4", Target::Tofino2, &["BAD_POSTMOD"]);
    assert!(e.contains("postmod"), "{e}");
    let e = refused("minmax.p4", Target::Tofino2, &["BAD_LANE"]);
    assert!(e.contains("`max8` on a register of 16-bit cells"), "{e}");
    let e = refused("learn.p4", Target::Tofino2, &[]);
    assert!(e.contains("hardware learning"), "{e}");
    let e = refused("learn.p4", Target::Tofino2, &["LEARN2"]);
    assert!(e.contains("`LearnAction2`"), "{e}");
    assert!(e.contains("hardware learning"), "{e}");
    // A SelectorAction is modelled (tests/lang/selector_action.p4): only the learning is refused.
    let e = refused("learn.p4", Target::Tofino2, &["SELECTOR_ACTION"]);
    assert!(e.contains("hardware learning"), "{e}");
    assert!(!e.contains("SelectorAction"), "{e}");
}

/// `pisa check --target tofino2`: both programs place, without a warning, into one ingress
/// stage (each execute writes its outputs straight into the header fields, as the hardware's
/// output words do: no copy in a later stage).
#[test]
fn check_places_them_in_one_stage() {
    for n in ["outputs.p4", "minmax.p4"] {
        let c = try_compile(n, Target::Tofino2, &[]).expect("compiles");
        let w = c.warnings.render(&c.sources);
        assert!(w.trim().is_empty(), "{n}: {w}");
        let report = c.resources.expect("placed").to_string();
        assert!(
            report.contains("ingress: stages used: 1 of 20"),
            "{n}:\n{report}"
        );
    }
}

/// predicate_log.p4 on `target` (Tofino 1 through `tna.p4`), run by `engine`.
fn salu_switch(target: Target, engine: &str) -> Switch {
    let defines: &[&str] = if target == Target::Tofino1 {
        &["TNA"]
    } else {
        &[]
    };
    let c = try_compile("predicate_log.p4", target, defines)
        .unwrap_or_else(|f| panic!("predicate_log.p4 does not compile:\n{}", f.render()));
    assert!(c.resources.is_some(), "predicate_log.p4 was not placed");
    pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{e}"));
    let cfg = common::harness_config().with_engine(engine.parse().expect("engine"));
    Switch::new(Arc::new(c.program), cfg).expect("switch")
}

fn r1(sw: &mut Switch, op: u8, a: u32) -> u32 {
    run(
        sw,
        Data {
            op,
            a,
            ..Data::default()
        },
    )
    .r[0]
}

#[test]
fn predicate_is_one_hot_over_the_conditions() {
    // The pair is {10, 20}. Bit (cmp0 | cmp1 << 1 | ..) of the output is set; an omitted
    // condition is false (bf-p4c's cmp masks 0xaaaa, 0xcccc, .. and the model's 1 << cmp).
    for target in [Target::Tofino1, Target::Tofino2] {
        for engine in ["tree", "flat", "native"] {
            let mut sw = salu_switch(target, engine);
            let at = format!("{target:?} {engine}");
            assert_eq!(r1(&mut sw, 0, 5), 2, "{at}: 10 > 5 only → bit 1");
            assert_eq!(r1(&mut sw, 0, 15), 1, "{at}: neither → bit 0");
            assert_eq!(r1(&mut sw, 0, 25), 4, "{at}: 20 < 25 only → bit 2");
            assert_eq!(r1(&mut sw, 1, 10), 2, "{at}: one condition, true");
            assert_eq!(r1(&mut sw, 1, 11), 1, "{at}: one condition, false");
            if target == Target::Tofino2 {
                // cmp2 is `true`: bit 4 | cmp0 | cmp1 << 1.
                assert_eq!(r1(&mut sw, 4, 5), 1 << 5, "{at}");
                assert_eq!(r1(&mut sw, 4, 15), 1 << 4, "{at}");
                assert_eq!(r1(&mut sw, 4, 25), 1 << 6, "{at}");
            }
        }
    }
}

#[test]
fn execute_log_walks_the_cells_then_stops_as_each_target_does() {
    // Six logs into a register of 4 cells: cells 0..3 take 100..103 and each returns the old 0.
    // Then Tofino 1's counter stays on the last cell (104, 105 land in cell 3, returning the
    // value before); Tofino 2's log is full and squashes the access (output 0, cells kept).
    for target in [Target::Tofino1, Target::Tofino2] {
        for engine in ["tree", "flat", "native"] {
            let mut sw = salu_switch(target, engine);
            let at = format!("{target:?} {engine}");
            for a in 100..104 {
                assert_eq!(r1(&mut sw, 2, a), 0, "{at}: log {a}");
            }
            let (fifth, sixth, last) = if target == Target::Tofino1 {
                (103, 104, 105)
            } else {
                (0, 0, 103)
            };
            assert_eq!(r1(&mut sw, 2, 104), fifth, "{at}");
            assert_eq!(r1(&mut sw, 2, 105), sixth, "{at}");
            let cells: Vec<u32> = (0..4).map(|i| r1(&mut sw, 3, i)).collect();
            assert_eq!(cells, [100, 101, 102, last], "{at}");
        }
    }
}

#[test]
fn predicate_and_log_misuse_is_refused_with_the_reason() {
    let e = refused(
        "predicate_log.p4",
        Target::Tofino2,
        &["BAD_TWO_COMPARISONS"],
    );
    assert!(e.contains("one comparison per argument"), "{e}");
    let e = refused(
        "predicate_log.p4",
        Target::Tofino1,
        &["TNA", "BAD_TOO_MANY"],
    );
    assert!(e.contains("at most 2 conditions"), "{e}");
    let e = refused("predicate_log.p4", Target::Tofino2, &["BAD_OUTSIDE_APPLY"]);
    assert!(e.contains("predicate"), "{e}");
    let e = refused("predicate_log.p4", Target::Tofino1, &["TNA", "BAD_ORDER"]);
    assert!(e.contains("cannot use compare unit 0"), "{e}");
    let e = refused("predicate_log.p4", Target::Tofino2, &["BAD_DIRECT_LOG"]);
    assert!(e.contains("execute_log"), "{e}");
}

#[test]
fn fifo_and_stack_over_the_stateful_counter() {
    // Registers of 4 cells; an output of 0 is a squashed access (full or empty), as in the
    // tofino-model's stateful counters. Values are worked out by hand from the program's ops.
    for engine in ["tree", "flat", "native"] {
        let c = try_compile("fifo_stack.p4", Target::Tofino2, &[])
            .unwrap_or_else(|f| panic!("fifo_stack.p4 does not compile:\n{}", f.render()));
        assert!(c.resources.is_some(), "fifo_stack.p4 was not placed");
        pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{e}"));
        let cfg = common::harness_config().with_engine(engine.parse().expect("engine"));
        let mut sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
        let sw = &mut sw;
        // FIFO: four in, the fifth refused; out in order; the freed cells reused (wrapping).
        let enq: Vec<u32> = [1, 2, 3, 4, 5].iter().map(|a| r1(sw, 0, *a)).collect();
        assert_eq!(enq, [1, 2, 3, 4, 0], "{engine}: enqueue, full at 5");
        assert_eq!([r1(sw, 1, 0), r1(sw, 1, 0)], [1, 2], "{engine}: dequeue");
        let enq: Vec<u32> = [6, 7, 8].iter().map(|a| r1(sw, 0, *a)).collect();
        assert_eq!(enq, [6, 7, 0], "{engine}: two free cells");
        let deq: Vec<u32> = (0..5).map(|_| r1(sw, 1, 0)).collect();
        assert_eq!(deq, [3, 4, 6, 7, 0], "{engine}: drained, then empty");
        // Stack: four pushed, the fifth refused; pops last-in first-out; empty pops refused.
        let push: Vec<u32> = [1, 2, 3, 4, 5].iter().map(|a| r1(sw, 2, *a)).collect();
        assert_eq!(push, [1, 2, 3, 4, 0], "{engine}: push, full at 5");
        assert_eq!([r1(sw, 3, 0), r1(sw, 3, 0)], [4, 3], "{engine}: pop");
        assert_eq!(r1(sw, 2, 9), 9, "{engine}: push after pops");
        let pop: Vec<u32> = (0..4).map(|_| r1(sw, 3, 0)).collect();
        assert_eq!(pop, [9, 2, 1, 0], "{engine}: popped, then empty");
    }
    let e = refused("fifo_stack.p4", Target::Tofino2, &["BAD_MIX"]);
    assert!(
        e.contains("stateful counter used as a log and as a fifo"),
        "{e}"
    );
    let e = refused("fifo_stack.p4", Target::Tofino2, &["BAD_NO_INDEX"]);
    assert!(e.contains("without an index on an indexed Register"), "{e}");
    let e = refused("fifo_stack.p4", Target::Tofino2, &["BAD_FIVE_INSTRUCTIONS"]);
    assert!(
        e.contains("used by 3 RegisterActions")
            && e.contains("and 2 overflow/underflow handler(s)"),
        "{e}"
    );
    let e = refused("fifo_stack.p4", Target::Tofino2, &["BAD_HANDLER_COMPARES"]);
    assert!(e.contains("needs 5 conditions"), "{e}");
    let e = refused("fifo_stack.p4", Target::Tofino2, &["BAD_MIN8"]);
    assert!(e.contains("`this.min8` in a RegisterAction"), "{e}");
    assert!(e.contains("MinMaxAction"), "{e}");
}

/// `this.address()` in a dequeue: the cell the FIFO's counter picked, as a bit address (cell ×
/// 32 for 32-bit cells); the low 17 bits are the hardware's (RAM line, bit offset).
#[test]
fn a_dequeue_outputs_its_head_cell_address() {
    for engine in ["tree", "flat", "native"] {
        let c = try_compile("fifo_stack.p4", Target::Tofino2, &["DEQ_ADDRESS"])
            .unwrap_or_else(|f| panic!("fifo_stack.p4 does not compile:\n{}", f.render()));
        let cfg = common::harness_config().with_engine(engine.parse().expect("engine"));
        let mut sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
        let sw = &mut sw;
        let enq: Vec<u32> = [1, 2, 3, 4, 5].iter().map(|a| r1(sw, 0, *a)).collect();
        assert_eq!(enq, [1, 2, 3, 4, 0], "{engine}: enqueue, full at 5");
        // Cells 0, 1, 2 dequeued: addresses 0, 32, 64; then 6 enqueued into cell 0 (wrapped),
        // the fourth dequeue reads cell 3 (96), the fifth cell 0 again (0).
        let deq: Vec<u32> = (0..3).map(|_| r1(sw, 1, 0)).collect();
        assert_eq!(deq, [0, 32, 64], "{engine}: head cells");
        assert_eq!(r1(sw, 0, 6), 6, "{engine}: enqueue into a freed cell");
        assert_eq!([r1(sw, 1, 0), r1(sw, 1, 0)], [96, 0], "{engine}: wrapped");
    }
}

#[test]
fn the_ir_shows_the_predicate_and_the_counter_methods() {
    let c = try_compile("predicate_log.p4", Target::Tofino2, &[]).expect("compiles");
    let ir = pipeline::ir_text::program_text(&c.program);
    for line in [
        "rv = this.predicate(value > hdr.data.a, value.hi < hdr.data.a);",
        "Ingress.logit.execute_log()",
    ] {
        assert!(ir.contains(line), "no `{line}` in\n{ir}");
    }
    let c = try_compile("fifo_stack.p4", Target::Tofino2, &[]).expect("compiles");
    let ir = pipeline::ir_text::program_text(&c.program);
    for line in ["Ingress.enq.enqueue()", "Ingress.spop.pop()"] {
        assert!(ir.contains(line), "no `{line}` in\n{ir}");
    }
}

/// late_reads.p4 on `target` (Tofino 1 through `tna.p4`), run by `engine`.
fn late_switch(target: Target, engine: &str) -> Switch {
    let defines: &[&str] = if target == Target::Tofino1 {
        &["TNA"]
    } else {
        &[]
    };
    let c = try_compile("late_reads.p4", target, defines)
        .unwrap_or_else(|f| panic!("late_reads.p4 does not compile:\n{}", f.render()));
    assert!(c.resources.is_some(), "late_reads.p4 was not placed");
    // Each read that now takes the memory word says so; the copy-propagated one does not.
    let w = c.warnings.render(&c.sources);
    for ra in [
        "`bump` reads `value` in a condition",
        "`computed` reads `value` in a computed output",
    ] {
        assert!(w.contains(ra), "no warning {ra} in\n{w}");
    }
    assert!(!w.contains("`copied`") && !w.contains("`add_out`"), "{w}");
    pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{e}"));
    let cfg = common::harness_config().with_engine(engine.parse().expect("engine"));
    Switch::new(Arc::new(c.program), cfg).expect("switch")
}

#[test]
fn reads_after_a_write_see_what_the_stateful_alu_sees() {
    for target in [Target::Tofino1, Target::Tofino2] {
        for engine in ["tree", "flat", "native"] {
            let mut sw = late_switch(target, engine);
            let at = format!("{target:?} {engine}");
            // value = value + 1; if (value > 2): the compare unit reads the cell before the
            // + 1, so the third run (cell 2 -> 3) still answers 0 (P4's reading would say 1).
            let bumps: Vec<u32> = (0..4).map(|_| r1(&mut sw, 0, 0)).collect();
            assert_eq!(bumps, [0, 0, 0, 1], "{at}: bump");
            // rv = value after the write: the ALU result.
            assert_eq!(r1(&mut sw, 1, 0), 4, "{at}: cell after four bumps");
            assert_eq!(
                r1(&mut sw, 1, 3),
                7,
                "{at}: rv = value after value = value + a"
            );
            // rv = value + 10 after value = value + 1: the output ALU adds to the memory word.
            assert_eq!(
                r1(&mut sw, 2, 0),
                17,
                "{at}: computed output from memory (7 + 10)"
            );
            assert_eq!(r1(&mut sw, 1, 0), 8, "{at}: the write still happened");
            // value = a; if (value == 7): bf-p4c's copy propagation compares a, not memory (8).
            assert_eq!(r1(&mut sw, 3, 5), 2, "{at}: a = 5");
            assert_eq!(r1(&mut sw, 3, 7), 1, "{at}: a = 7");
            assert_eq!(r1(&mut sw, 1, 0), 7, "{at}: cell = a");
        }
    }
}

#[test]
fn a_value_written_twice_on_one_path_is_refused_as_bf_p4c_does() {
    let e = refused("late_reads.p4", Target::Tofino2, &["BAD_DOUBLE_WRITE"]);
    assert!(
        e.contains("two or more assignments of `value` inside the register action `bump`")
            && e.contains("late_reads.p4:"),
        "{e}"
    );
    let c = try_compile("late_reads.p4", Target::Tofino2, &[]).expect("compiles");
    let ir = pipeline::ir_text::program_text(&c.program);
    for line in ["if (mem(value) > ", "rv = mem(value) + ", "rv = value;"] {
        assert!(ir.contains(line), "no `{line}` in\n{ir}");
    }
}

/// `IdleTimeout()`, `invalidate(field)` and `is_validated(field)`: declared in t2na.p4, refused
/// with the reason (table aging is `idle_timeout = true`; Tofino 2 has no container validity:
/// every container starts valid and `invalidate` is an illegal instruction).
#[test]
fn idle_timeout_and_field_validity_are_refused_with_the_reason() {
    try_compile("field_validity_idle.p4", Target::Tofino2, &[])
        .unwrap_or_else(|f| panic!("does not compile:\n{}", f.render()));
    let e = refused("field_validity_idle.p4", Target::Tofino2, &["IDLE"]);
    assert!(e.contains("`IdleTimeout`"), "{e}");
    assert!(e.contains("idle_timeout = true"), "{e}");
    for d in ["INV", "ISV"] {
        let e = refused("field_validity_idle.p4", Target::Tofino2, &[d]);
        assert!(e.contains("no meaning on Tofino 2"), "{d}: {e}");
        assert!(e.contains("starts every PHV container valid"), "{d}: {e}");
    }
}

//! Interpreter semantics through a whole switch: parser features (advance, header stacks and
//! a full stack ending the parse, select with ranges/masks/default, lookahead, verify), expression
//! semantics (slices, concat, sign-extending casts, saturating ops, ternary, slice assignment),
//! hashes, `action_run` branches, `exit` inside an action, stack pop, and determinism of
//! `Random`.

mod common;

use std::sync::Arc;

use common::*;
use pipeline::api::PipeSel;
use pipeline::ir::*;
use pipeline::switch::{DropReason, InFrame, Switch, SwitchConfig};

struct Prog {
    prog: Arc<Program>,
}

fn build() -> Prog {
    let mut ig = LayoutBuilder::default();
    let (h_intr, intr) = ig.header(
        "ig_intr_md",
        "ingress_intrinsic_metadata_t",
        &[("flags", 7), ("ingress_port", 9), ("ts", 48)],
    );
    let (h_tag, tag) = ig.header("hdr.tag", "tag_h", &[("kind", 8)]);
    let (s0, _) = ig.header("hdr.stack[0]", "elem_h", &[("v", 16)]);
    let (s1, _) = ig.header("hdr.stack[1]", "elem_h", &[("v", 16)]);
    let (s2, _) = ig.header("hdr.stack[2]", "elem_h", &[("v", 16)]);
    let names: Vec<(String, u16)> = (0..8).map(|i| (format!("r{i}"), 16)).collect();
    let names_ref: Vec<(&str, u16)> = names.iter().map(|(n, w)| (n.as_str(), *w)).collect();
    let (h_out, r) = ig.header("hdr.out", "out_h", &names_ref);
    let next_index = ig.meta("hdr.stack.$next", 8);
    let ucast = ig.meta("ig_tm_md.ucast_egress_port", 9);
    let mut phv = ig.phv;
    phv.stacks.push(StackInfo {
        name: "hdr.stack".into(),
        elements: vec![s0, s1, s2],
        next_index,
    });

    let parser = Parser {
        name: "P".into(),
        start: StateId(0),
        states: vec![
            ParserState {
                name: "P.start".into(),
                body: vec![
                    Stmt::Extract(h_intr),
                    Stmt::Advance(c(64, 32)),
                    Stmt::Extract(h_tag),
                ],
                transition: Transition::Select {
                    keys: vec![f(tag[0])],
                    cases: vec![
                        SelectCase {
                            keyset: vec![KeysetElem::Range { lo: 0x10, hi: 0x1f }],
                            next: NextState::State(StateId(1)),
                        },
                        SelectCase {
                            keyset: vec![mask_ks(0x20, 0xf0)],
                            next: NextState::State(StateId(2)),
                        },
                    ],
                    default: NextState::Accept,
                },
            },
            ParserState {
                name: "P.parse_stack".into(),
                body: vec![Stmt::ExtractNext(StackId(0))],
                transition: Transition::Select {
                    keys: vec![Expr::Lookahead {
                        offset_bits: 0,
                        width: 8,
                    }],
                    cases: vec![SelectCase {
                        keyset: vec![mask_ks(0x80, 0x80)],
                        next: NextState::State(StateId(1)),
                    }],
                    default: NextState::Accept,
                },
            },
            ParserState {
                name: "P.parse_reject".into(),
                body: vec![],
                transition: Transition::Direct(NextState::Reject),
            },
        ],
    };

    let slice = |e: Expr, hi: u16, lo: u16| Expr::Slice {
        arg: Box::new(e),
        hi,
        lo,
    };
    let cast = |e: Expr, w: u16, sx: bool| Expr::Cast {
        arg: Box::new(e),
        width: w,
        sign_extend: sx,
    };
    let actions = vec![
        action("NoAction", &[], vec![]),
        action("C.a1", &[], vec![set(r[7], c(1, 16))]),
        action("C.a2", &[], vec![set(r[7], c(2, 16)), Stmt::Exit]),
    ];
    let t_kind = Table {
        name: "C.t_kind".into(),
        gress: Gress::Ingress,
        keys: vec![TableKey {
            name: "hdr.tag.kind".into(),
            expr: f(tag[0]),
            kind: MatchKind::Exact,
        }],
        actions: vec![aref(1), aref(2), aref(0)],
        default_action: ActionCall {
            action: ActionId(0),
            args: vec![],
        },
        default_action_const: false,
        const_entries: vec![],
        entries_const: false,
        size: 16,
        direct_counter: None,
        direct_meter: None,
        idle_timeout: false,
        stage: 0,
        hidden: false,
    };
    let body = vec![
        set(ucast, c(1, 9)),
        Stmt::SetValid {
            header: h_out,
            valid: true,
        },
        // r0 = (bit<16>)(kind[3:0] ++ kind[7:4])
        set(
            r[0],
            cast(
                Expr::Concat {
                    hi: Box::new(slice(f(tag[0]), 3, 0)),
                    lo: Box::new(slice(f(tag[0]), 7, 4)),
                    width: 8,
                },
                16,
                false,
            ),
        ),
        // r1 = (int<16>)(int<8>)0xf0 = 0xfff0
        set(r[1], cast(c(0xf0, 8), 16, true)),
        // r2 = r1 |+| 0x20 saturates at 0xffff
        set(r[2], bin(BinOp::SatAdd, f(r[1]), c(0x20, 16), 16)),
        // r3 = stack depth after pop_front(1)
        Stmt::StackShift {
            stack: StackId(0),
            count: 1,
            push: false,
        },
        set(r[3], cast(f(next_index), 16, false)),
        // r4 = crc16 over the kind byte
        set(
            r[4],
            Expr::Hash {
                hash: HashId(0),
                inputs: vec![f(tag[0])],
                width: 16,
            },
        ),
        // r5 = kind > 0x12 ? 0xaaaa : 0x5555
        set(
            r[5],
            Expr::Ternary {
                cond: Box::new(bin(BinOp::Gt, f(tag[0]), c(0x12, 8), 1)),
                then: Box::new(c(0xaaaa, 16)),
                els: Box::new(c(0x5555, 16)),
                width: 16,
            },
        ),
        // r6[7:4] = 0xa
        Stmt::Assign {
            dst: Place::FieldSlice {
                field: r[6],
                hi: 7,
                lo: 4,
            },
            value: c(0xa, 4),
        },
        Stmt::ApplyTable {
            table: TableId(0),
            branches: TableBranches::ActionRun {
                cases: vec![(
                    ActionId(1),
                    vec![set(r[7], bin(BinOp::Add, f(r[7]), c(0x10, 16), 16))],
                )],
                default: vec![set(r[7], bin(BinOp::Add, f(r[7]), c(0x20, 16), 16))],
            },
        },
        // Not reached after a2's exit.
        set(r[6], bin(BinOp::Or, f(r[6]), c(1, 16), 16)),
    ];
    let deparser = vec![
        Stmt::Emit(h_tag),
        Stmt::Emit(s0),
        Stmt::Emit(s1),
        Stmt::Emit(s2),
        Stmt::Emit(h_out),
    ];

    let mut eg = LayoutBuilder::default();
    let (h_e, e) = eg.header(
        "eg_intr_md",
        "egress_intrinsic_metadata_t",
        &[("pad", 7), ("egress_port", 9)],
    );
    let egress = GressProgram {
        phv: eg.phv,
        prefix: PrefixLayout {
            bytes: 2,
            fields: vec![(Intrinsic::EgEgressPort, e[1])],
        },
        intrinsics: IntrinsicBindings {
            fields: vec![(Intrinsic::EgEgressPort, e[1])],
        },
        parser: Parser {
            name: "EP".into(),
            start: StateId(0),
            states: vec![ParserState {
                name: "EP.start".into(),
                body: vec![Stmt::Extract(h_e)],
                transition: Transition::Direct(NextState::Accept),
            }],
        },
        control: Control {
            name: "E".into(),
            body: vec![],
        },
        deparser: Control {
            name: "ED".into(),
            body: vec![],
        },
    };
    let pl = Pipeline {
        name: "pipe".into(),
        ingress: GressProgram {
            phv,
            prefix: PrefixLayout {
                bytes: 16,
                fields: vec![(Intrinsic::IgIngressPort, intr[1])],
            },
            intrinsics: IntrinsicBindings {
                fields: vec![
                    (Intrinsic::IgIngressPort, intr[1]),
                    (Intrinsic::TmUcastEgressPort, ucast),
                ],
            },
            parser,
            control: Control {
                name: "C".into(),
                body,
            },
            deparser: Control {
                name: "D".into(),
                body: deparser,
            },
        },
        egress,
        tables: vec![t_kind],
        actions,
        registers: vec![],
        register_actions: vec![],
        register_params: vec![],
        hashes: vec![HashUnit {
            name: "C.h".into(),
            algorithm: HashAlgorithm::Crc(CrcSpec {
                width: 16,
                poly: 0x8005,
                reversed: true,
                msb: false,
                extended: false,
                init: 0,
                xor: 0,
            }),
            width: 16,
        }],
        counters: vec![],
        meters: vec![],
        checksums: vec![],
        digests: vec![],
        action_profiles: Vec::new(),
        value_sets: Vec::new(),
        filters: Vec::new(),
        ghost: None,
    };
    Prog {
        prog: Arc::new(Program {
            name: "exec_test".into(),
            target: Target::Tofino1,
            pipelines: vec![pl],
            pipe_map: vec![0],
            errors: ErrorEnum {
                names: vec![
                    "NoError".into(),
                    "PacketTooShort".into(),
                    "NoMatch".into(),
                    "BadTag".into(),
                ],
            },
        }),
    }
}

/// Runs `bytes` through `sw`. The switches of these tests turn the MAC's padding to 60 bytes
/// off (`with_min_frame(0)`): the short byte strings test the interpreter, not the wire.
fn send(sw: &mut Switch, bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port: 0,
            bytes,
            ts: 0,
        }],
        &mut out,
    );
    assert!(out.len() <= 1);
    out.pop().map(|o| o.bytes)
}

fn r(out: &[u8], hdr_start: usize, i: usize) -> u16 {
    u16::from_be_bytes([out[hdr_start + 2 * i], out[hdr_start + 2 * i + 1]])
}

/// CRC-16/ARC of one byte, by the bit-serial definition.
fn crc16_arc(b: u8) -> u16 {
    let mut crc: u16 = 0;
    crc ^= b as u16;
    for _ in 0..8 {
        crc = if crc & 1 != 0 {
            (crc >> 1) ^ 0xa001
        } else {
            crc >> 1
        };
    }
    crc
}

#[test]
fn expressions_stacks_and_branches() {
    let p = build();
    let mut sw = Switch::new(p.prog.clone(), SwitchConfig::new(1).with_min_frame(0)).unwrap();
    // kind 0x13: range case → stack elements while the next byte has its top bit set:
    // 0x0001, then 0x8002 (the lookahead saw 0x80), then stop (next byte 0x00).
    let pkt = [0x13, 0x00, 0x01, 0x80, 0x02, 0x00, 0x03, 0xde, 0xad];
    let out = send(&mut sw, &pkt).expect("forwarded");
    // Emitted: tag, stack[0] (was [1] before the pop), out header (16 B), then the payload.
    assert_eq!(&out[0..3], &[0x13, 0x80, 0x02]);
    let o = 3;
    assert_eq!(r(&out, o, 0), 0x31, "nibble swap via slices + concat");
    assert_eq!(r(&out, o, 1), 0xfff0, "sign-extending cast");
    assert_eq!(r(&out, o, 2), 0xffff, "saturating add");
    assert_eq!(r(&out, o, 3), 1, "next_index after pop_front(1)");
    assert_eq!(r(&out, o, 4), crc16_arc(0x13), "CRC-16/ARC hash");
    assert_eq!(r(&out, o, 5), 0xaaaa, "ternary");
    assert_eq!(
        r(&out, o, 6),
        0x00a1,
        "slice assignment, then the rest of the control"
    );
    assert_eq!(r(&out, o, 7), 0x20, "action_run default branch on miss");
    assert_eq!(&out[19..], &[0x00, 0x03, 0xde, 0xad], "payload re-appended");
}

#[test]
fn action_run_case_and_exit_inside_action() {
    let p = build();
    let mut sw = Switch::new(p.prog.clone(), SwitchConfig::new(1).with_min_frame(0)).unwrap();
    sw.table_add(
        PipeSel::All,
        "t_kind",
        &[("hdr.tag.kind", KeyMatch::Exact(0x05))],
        None,
        "a1",
        &[],
    )
    .unwrap();
    sw.table_add(
        PipeSel::All,
        "t_kind",
        &[("hdr.tag.kind", KeyMatch::Exact(0x06))],
        None,
        "a2",
        &[],
    )
    .unwrap();
    let out = send(&mut sw, &[0x05]).unwrap();
    assert_eq!(r(&out, 1, 7), 0x11, "a1 then its action_run case");
    assert_eq!(r(&out, 1, 6), 0x00a1);
    let out = send(&mut sw, &[0x06]).unwrap();
    assert_eq!(r(&out, 1, 7), 0x02, "a2 exits: no branch");
    assert_eq!(
        r(&out, 1, 6),
        0x00a0,
        "exit skipped the rest of the control"
    );
}

#[test]
fn stack_overflow_ends_the_parse_and_reject_is_no_error() {
    let p = build();
    let mut sw = Switch::new(p.prog.clone(), SwitchConfig::new(1).with_min_frame(0)).unwrap();
    // Four elements: the fourth does not fit in hdr.stack[3]. As bf-p4c's unrolled loop, the
    // parse ends there without an error: the stack full, the fourth element payload.
    let out = send(&mut sw, &[0x10, 0, 0, 0x80, 0, 0x80, 0, 0x80, 0]).expect("forwarded");
    // tag, stack[0..2] (stack[1] and [2] after the control's pop_front(1)), out header.
    assert_eq!(&out[0..5], &[0x10, 0x80, 0x00, 0x80, 0x00]);
    assert_eq!(
        r(&out, 5, 3),
        2,
        "next_index after pop_front(1) of a full stack"
    );
    assert_eq!(
        &out[21..],
        &[0x80, 0x00],
        "the element that did not fit is payload"
    );
    // 0x2X goes to a state that transitions to reject: on Tofino the parse ends as with
    // accept, no error and no drop.
    assert!(send(&mut sw, &[0x21]).is_some());
    // Lookahead past the end: the stack element is the last byte pair.
    assert!(send(&mut sw, &[0x10, 0x00, 0x00]).is_none());
    assert_eq!(sw.stats().dropped(DropReason::ParserPacketTooShort), 1);
    let total: u64 = DropReason::ALL.iter().map(|r| sw.stats().dropped(*r)).sum();
    assert_eq!(total, 1, "only the short packet drops");
    let (_, t) = sw.trace(InFrame {
        port: 0,
        bytes: &[0x21],
        ts: 0,
    });
    assert!(
        t.to_string().contains("parser reject in P.parse_reject"),
        "{t}"
    );
}

//! End-to-end lowering tests: the shipped programs compile to IR with the expected shape.

use std::path::Path;

use p4::compile::{lower_file, CompileOptions};
use pipeline::ir::{self, Target};

fn lower(rel: &str, target: Target) -> ir::Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let opts = CompileOptions {
        target,
        ..Default::default()
    };
    match lower_file(&path, &opts) {
        Ok(c) => c.program,
        Err(f) => panic!("{} failed:\n{}", rel, f.render()),
    }
}

#[test]
fn l2l3_lowers_for_tofino1() {
    let p = lower("programs/l2l3.p4", Target::Tofino1);
    assert_eq!(p.name, "l2l3");
    assert_eq!(p.pipe_map, vec![0, 0, 0, 0]);
    let pl = &p.pipelines[0];
    let names: Vec<&str> = pl.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "SwitchIngress.mac_dst",
            "SwitchIngress.router_mac",
            "SwitchIngress.ipv4_lpm",
            "SwitchIngress.nexthop",
            "SwitchIngress.acl",
            "SwitchEgress.port_smac"
        ]
    );
    let acl = &pl.tables[4];
    let kinds: Vec<ir::MatchKind> = acl.keys.iter().map(|k| k.kind).collect();
    assert_eq!(kinds[4], ir::MatchKind::Range);
    assert_eq!(acl.keys[1].name, "hdr.ipv4.src_addr");
    let dc = acl.direct_counter.expect("acl has a direct counter");
    assert_eq!(pl.counters[dc.index()].direct_table, Some(ir::TableId(4)));
    // default_action = flood(1): the argument is action data.
    let mac = &pl.tables[0];
    assert_eq!(
        pl.actions[mac.default_action.action.index()].name,
        "SwitchIngress.flood"
    );
    assert_eq!(mac.default_action.args, vec![1]);
    // Intrinsics: the TM decision and the prefix layout.
    let ig = &pl.ingress;
    assert!(ig.intrinsics.get(ir::Intrinsic::TmMcastGrpA).is_some());
    assert!(ig.intrinsics.get(ir::Intrinsic::IgDprsrDropCtl).is_some());
    assert_eq!(ig.prefix.bytes, 16);
    assert!(pl
        .egress
        .intrinsics
        .get(ir::Intrinsic::EgEgressRid)
        .is_some());
    // The deparser recomputes the IPv4 checksum and emits bridged metadata first.
    let dep = &ig.deparser.body;
    assert!(
        matches!(&dep[0], ir::Stmt::Assign { value: ir::Expr::ChecksumUpdate { inputs, .. }, .. } if inputs.len() == 11)
    );
    let bridged = ig
        .phv
        .headers
        .iter()
        .position(|h| h.name == "ig_md.bridged")
        .expect("bridged header");
    assert_eq!(dep[1], ir::Stmt::Emit(ir::HeaderId(bridged as u32)));
    // `hdr.ipv4.isValid() && router_mac.apply().hit` becomes an If around a hit/miss apply,
    // whose miss and else branches both apply mac_dst.
    let ctl = &ig.control.body;
    let nested = ctl.iter().find_map(|s| match s {
        ir::Stmt::If { then, els, .. } => match then.first() {
            Some(ir::Stmt::ApplyTable {
                table,
                branches: ir::TableBranches::HitMiss { miss, .. },
            }) => Some((*table, miss.clone(), els.clone())),
            _ => None,
        },
        _ => None,
    });
    let (t, miss, els) = nested.expect("if with router_mac hit/miss");
    assert_eq!(t, ir::TableId(1));
    assert_eq!(miss, els);
    // The sub-parser is inlined with qualified state names.
    assert!(ig
        .parser
        .states
        .iter()
        .any(|s| s.name == "SwitchIngressParser.tofino_parser.parse_port_metadata"));
}

#[test]
fn l2l3_lowers_for_tofino2_with_its_prefix() {
    let p = lower("programs/l2l3.p4", Target::Tofino2);
    assert_eq!(p.target, Target::Tofino2);
    assert_eq!(p.pipelines[0].ingress.prefix.bytes, 8 + 24);
}

/// Every prefix of a real program (cut at arbitrary points) compiles or fails cleanly.
#[test]
fn truncated_programs_never_panic() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/ok/stateful.p4");
    let text = std::fs::read_to_string(path).expect("read program");
    let bytes = text.as_bytes();
    let mut cut = 0;
    while cut < bytes.len() {
        let n = p4::compile::fuzz_compile(&bytes[..cut]);
        assert!(n > 0 || cut == 0, "no output for a prefix of {cut} bytes");
        cut += 173;
    }
    // Byte-level damage: flip characters in the middle of the program.
    for i in (0..bytes.len()).step_by(401) {
        let mut v = bytes.to_vec();
        v[i] = b'}';
        p4::compile::fuzz_compile(&v);
    }
}

/// The side table has one span per IR object, and one gateway span per `Stmt::If` of each
/// control and deparser body in the pre-order the resource check counts.
#[test]
fn spans_match_the_ir() {
    let mut progs = vec!["programs/l2l3.p4".to_string()];
    for e in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/ok"))
        .expect("ok dir")
    {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "p4") {
            progs.push(format!(
                "tests/check/ok/{}",
                p.file_name().and_then(|n| n.to_str()).unwrap_or("")
            ));
        }
    }
    for rel in progs {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(&rel);
        let c = lower_file(&path, &CompileOptions::default())
            .unwrap_or_else(|f| panic!("{rel}:\n{}", f.render()));
        for (pl, sp) in c.program.pipelines.iter().zip(&c.spans.pipelines) {
            assert_eq!(pl.tables.len(), sp.tables.len(), "{rel}: tables");
            assert_eq!(pl.actions.len(), sp.actions.len(), "{rel}: actions");
            assert_eq!(pl.registers.len(), sp.registers.len(), "{rel}: registers");
            assert_eq!(
                pl.register_actions.len(),
                sp.register_actions.len(),
                "{rel}: register actions"
            );
            for (g, gs) in [(&pl.ingress, &sp.ingress), (&pl.egress, &sp.egress)] {
                assert_eq!(
                    g.parser.states.len(),
                    gs.parser_states.len(),
                    "{rel}: states"
                );
                assert_eq!(
                    p4::resources::gateway_conditions(&g.control.body).len(),
                    gs.control_ifs.len(),
                    "{rel}: control gateways"
                );
                assert_eq!(
                    p4::resources::gateway_conditions(&g.deparser.body).len(),
                    gs.deparser_ifs.len(),
                    "{rel}: deparser gateways"
                );
            }
        }
    }
}

/// Expressions nested as deep as the parser allows are checked without overflowing the stack.
#[test]
fn deep_nesting_is_fine() {
    let head = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/ok/stateful.p4"),
    )
    .expect("read program");
    let deep = format!("{}8w1{}", "(8w1 + ".repeat(200), ")".repeat(200));
    let text = head.replace("hdr.seq.flags == 0xff", &format!("hdr.seq.flags == {deep}"));
    assert_ne!(text, head);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/ok/deep.p4");
    let r = p4::compile::lower_str(&dir.to_string_lossy(), &text, &CompileOptions::default());
    let c = r.unwrap_or_else(|f| panic!("{}", f.render()));
    // `8w1 + ... + 8w1` (201 terms) folds to a constant.
    let found = format!("{:?}", c.program.pipelines[0].ingress.control.body)
        .contains("value: 201, width: 8");
    assert!(found, "the nested sum was folded to 201");
}

fn ok_program(name: &str) -> ir::Program {
    lower(&format!("tests/check/ok/{name}"), Target::Tofino1)
}

fn state<'p>(p: &'p ir::Parser, name: &str) -> &'p ir::ParserState {
    p.states
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no state {name}"))
}

#[test]
fn select_keysets_masks_and_ranges() {
    let p = ok_program("l2_switch.p4");
    let parser = &p.pipelines[0].ingress.parser;
    let ir::Transition::Select {
        keys,
        cases,
        default,
    } = &state(parser, "IngressParser.parse_ethernet").transition
    else {
        panic!("parse_ethernet selects");
    };
    assert_eq!(keys.len(), 1);
    let ks: Vec<ir::KeysetElem> = cases.iter().map(|c| c.keyset[0]).collect();
    assert_eq!(
        ks,
        vec![
            ir::KeysetElem::Mask {
                value: 0x8100,
                mask: 0xffff
            },
            ir::KeysetElem::Mask {
                value: 0x0800,
                mask: 0xffff
            },
            ir::KeysetElem::Mask {
                value: 0x0000,
                mask: 0xfe00
            },
            ir::KeysetElem::Range {
                lo: 0x9000,
                hi: 0x90ff
            },
        ]
    );
    assert_eq!(cases[2].next, ir::NextState::Reject);
    assert_eq!(*default, ir::NextState::Accept);
    // `pkt.extract(hdr.vlan.next)` and a lookahead select key.
    let vlan = state(parser, "IngressParser.parse_vlan");
    assert!(matches!(
        vlan.body[0],
        ir::Stmt::ExtractNext(ir::StackId(0))
    ));
    let ir::Transition::Select { keys, .. } = &vlan.transition else {
        panic!("parse_vlan selects")
    };
    assert_eq!(
        keys[0],
        ir::Expr::Lookahead {
            offset_bits: 0,
            width: 16
        }
    );
}

#[test]
fn const_entries_masks_prefixes_ranges_priorities() {
    let p = ok_program("l2_switch.p4");
    let pl = &p.pipelines[0];
    let acl = pl
        .tables
        .iter()
        .find(|t| t.name == "Ingress.acl")
        .expect("acl");
    assert!(acl.entries_const);
    assert_eq!(
        acl.const_entries[0].keys,
        vec![
            ir::KeyMatch::Ternary {
                value: 0x0a00_0000,
                mask: 0xff00_0000
            },
            ir::KeyMatch::Lpm {
                value: 0x0a01_0000,
                prefix_len: 16
            },
            ir::KeyMatch::Range { lo: 6, hi: 17 },
            ir::KeyMatch::Exact(0),
        ]
    );
    // `@priority(8)` then `@priority(7)`: the larger wins (P4_16 "Entry priorities"), stored in
    // pisa's smaller-wins convention as a P4Runtime priority is.
    use pipeline::table::priority_from_largest_wins as largest;
    assert_eq!(acl.const_entries[0].priority, largest(8));
    assert_eq!(acl.const_entries[1].priority, largest(7));
    assert!(acl.const_entries[0].priority < acl.const_entries[1].priority);
    assert_eq!(
        acl.const_entries[1].keys,
        vec![
            ir::KeyMatch::Ternary { value: 0, mask: 0 },
            ir::KeyMatch::Lpm {
                value: 0,
                prefix_len: 0
            },
            ir::KeyMatch::Range { lo: 0, hi: 255 },
            ir::KeyMatch::Exact(1),
        ]
    );
    // `@name(".dmac_table")` is absolute; `const default_action = flood(1)`.
    let dmac = pl
        .tables
        .iter()
        .find(|t| t.name == "dmac_table")
        .expect("dmac");
    assert!(dmac.default_action_const);
    assert_eq!(
        dmac.const_entries[0].keys,
        vec![
            ir::KeyMatch::Exact(0xffff_ffff_ffff),
            ir::KeyMatch::Exact(1)
        ]
    );
    assert_eq!(dmac.keys[0].name, "dst");
}

#[test]
fn int_literals_adopt_the_other_operand_width() {
    let p = ok_program("l2_switch.p4");
    let pl = &p.pipelines[0];
    // bump(hdr.ipv4.ttl, 1) is inlined: `x = x |-| by` with `by` the constant 8w1.
    let body = format!("{:?}", pl.ingress.control.body);
    assert!(body.contains("op: SatSub"), "{body}");
    assert!(body.contains("Const { value: 1, width: 8 }"), "{body}");
}

#[test]
fn paired_register_and_register_action_bodies() {
    let p = ok_program("stateful.p4");
    let pl = &p.pipelines[0];
    let seqs = pl
        .registers
        .iter()
        .find(|r| r.name == "Ingress.seqs")
        .expect("seqs");
    assert!(seqs.paired);
    assert_eq!(
        seqs.word_names,
        Some(("last_seq".to_string(), "repeats".to_string()))
    );
    assert_eq!((seqs.size, seqs.width), (4096, 32));
    let ra = pl
        .register_actions
        .iter()
        .find(|r| r.name == "Ingress.check_seq")
        .expect("check_seq");
    assert_eq!(ra.output_width, 32);
    let ir::Stmt::If { cond, then, .. } = &ra.body[0] else {
        panic!("if first")
    };
    assert!(
        matches!(cond, ir::Expr::Binary { op: ir::BinOp::Eq, a, .. } if **a == ir::Expr::RegValue(ir::RegWord::Lo))
    );
    assert!(matches!(
        &then[0],
        ir::Stmt::Assign {
            dst: ir::Place::RegValue(ir::RegWord::Hi),
            ..
        }
    ));
    assert_eq!(
        ra.body.last(),
        Some(&ir::Stmt::Assign {
            dst: ir::Place::RegOutput,
            value: ir::Expr::RegValue(ir::RegWord::Hi)
        })
    );
    // The direct register takes the size of the table that binds it.
    let last = pl
        .registers
        .iter()
        .find(|r| r.name == "Ingress.last_flow")
        .expect("last_flow");
    let flows = pl
        .tables
        .iter()
        .position(|t| t.name == "Ingress.flows")
        .expect("flows");
    assert_eq!(last.direct_table, Some(ir::TableId(flows as u32)));
    assert_eq!(last.size, 1024);
    // CUSTOM hash with the CRCPolynomial's parameters.
    let h = pl
        .hashes
        .iter()
        .find(|h| h.name == "Ingress.flow_hash32")
        .expect("hash");
    let ir::HashAlgorithm::Crc(c) = h.algorithm else {
        panic!("crc")
    };
    assert_eq!(
        (c.width, c.poly, c.reversed, c.init, c.xor),
        (32, 0x1EDC_6F41, true, 0xFFFF_FFFF, 0xFFFF_FFFF)
    );
}

#[test]
fn mirror_digest_and_port_metadata() {
    let p = ok_program("mirror_bridge.p4");
    let pl = &p.pipelines[0];
    let dep = format!("{:?}", pl.ingress.deparser.body);
    assert!(dep.contains("MirrorEmit"), "{dep}");
    assert!(dep.contains("ResubmitEmit"), "{dep}");
    assert!(dep.contains("DigestPack"), "{dep}");
    assert_eq!(
        pl.digests[0].fields,
        vec![("src_addr".to_string(), 48), ("port".to_string(), 9)]
    );
    // port_metadata_unpack: lookahead into each field, then skip the 64 bits.
    let start = state(&pl.ingress.parser, "IngressParser.start");
    assert!(matches!(
        start.body.last(),
        Some(ir::Stmt::Advance(ir::Expr::Const { value: 64, .. }))
    ));
    assert!(start.body.iter().any(|s| matches!(
        s,
        ir::Stmt::Assign {
            value: ir::Expr::Lookahead {
                offset_bits: 16,
                width: 48
            },
            ..
        }
    )));
    // The nested control's table is named by its instance path.
    assert!(pl
        .tables
        .iter()
        .any(|t| t.name == "Ingress.classify.classes"));
}

/// The golden programs also pass the Tofino resource check (the whole `compile` driver).
#[test]
fn ok_programs_fit_tofino1() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/ok");
    for e in std::fs::read_dir(&dir).expect("ok dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "p4") {
            let r = p4::compile::compile_file(&p, &CompileOptions::default());
            let c = r.unwrap_or_else(|f| panic!("{}:\n{}", p.display(), f.render()));
            assert!(c.resources.is_some(), "{}: no resource report", p.display());
        }
    }
}

/// Every shipped program in `p4/programs/` lowers for both targets.
#[test]
fn shipped_programs_lower_for_both_targets() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("programs dir") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "p4") {
            for target in [Target::Tofino1, Target::Tofino2] {
                let opts = CompileOptions {
                    target,
                    ..Default::default()
                };
                if let Err(f) = lower_file(&p, &opts) {
                    panic!("{} ({}):\n{}", p.display(), target.name(), f.render());
                }
            }
            n += 1;
        }
    }
    assert!(n >= 1, "no programs found");
}

#[test]
fn stack_last_reads_follow_next_index() {
    let p = ok_program("l2_switch.p4");
    let pl = &p.pipelines[0];
    let st = state(&pl.ingress.parser, "IngressParser.parse_after_vlan");
    let ir::Transition::Select { keys, .. } = &st.transition else {
        panic!("selects")
    };
    // vlan[1].ether_type when nextIndex == 2, else vlan[0].ether_type.
    let ir::Expr::Ternary {
        cond,
        then,
        els,
        width,
    } = &keys[0]
    else {
        panic!("ternary: {:?}", keys[0])
    };
    assert_eq!(*width, 16);
    assert!(
        matches!(&**cond, ir::Expr::Binary { op: ir::BinOp::Eq, b, .. } if matches!(**b, ir::Expr::Const { value: 2, .. }))
    );
    let field = |name: &str| {
        pl.ingress
            .phv
            .fields
            .iter()
            .find(|f| f.name == name)
            .map(|f| f.field)
            .expect("field")
    };
    assert_eq!(**then, ir::Expr::Field(field("hdr.vlan[1].ether_type")));
    assert_eq!(**els, ir::Expr::Field(field("hdr.vlan[0].ether_type")));
    assert!(matches!(
        st.body[0],
        ir::Stmt::Assign {
            value: ir::Expr::Cast { .. },
            ..
        }
    ));
}

/// A control instance applied in two exclusive branches is one instance: one table (one
/// P4Info entry), one direct counter, applied from both places.
#[test]
fn control_applied_twice_is_one_table() {
    let p = lower("tests/lang/shared_control.p4", Target::Tofino1);
    let pl = &p.pipelines[0];
    let names: Vec<&str> = pl.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Ing.acl.t"]);
    assert_eq!(pl.counters.len(), 1);
    assert_eq!(pl.counters[0].direct_table, Some(ir::TableId(0)));
    fn applies(b: &[ir::Stmt]) -> usize {
        b.iter()
            .map(|s| match s {
                ir::Stmt::ApplyTable { .. } => 1,
                ir::Stmt::If { then, els, .. } => applies(then) + applies(els),
                _ => 0,
            })
            .sum()
    }
    assert_eq!(applies(&pl.ingress.control.body), 2);
}

/// `@selector_max_group_size` / `@selector_num_max_groups` on a table size its selector when
/// the constructor does not (bf-p4c `createAttached`), and never override the constructor.
#[test]
fn selector_group_pragmas_size_selectors_without_constructor_sizes() {
    let p = ok_program("selector_group_pragmas.p4");
    let sizes = |name: &str| {
        p.pipelines[0]
            .action_profiles
            .iter()
            .filter_map(|a| a.selector.as_ref())
            .find(|s| s.name == name)
            .map(|s| (s.max_group_size, s.num_groups))
    };
    assert_eq!(sizes("Ingress.old_sel"), Some((128, 8)));
    assert_eq!(sizes("Ingress.new_sel"), Some((16, 4)));
}

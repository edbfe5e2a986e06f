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

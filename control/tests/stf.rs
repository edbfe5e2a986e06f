//! The golden STF tests of the bundled programs: `p4/programs/tests/<program>_*.stf` run
//! against `p4/programs/<program>.p4` compiled by pisa's frontend. Expected bytes in those files
//! were built with scapy (`make_l2l3_stf.py`), never from the emulator.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use control::stf::{self, StfOptions};

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs")
}

fn stf_files(prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(programs_dir().join("tests"))
        .expect("p4/programs/tests exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "stf")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_golden_stf_parses() {
    let files = stf_files("");
    assert!(
        files.len() >= 6,
        "expected the l2l3 STF files, found {files:?}"
    );
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let stmts = stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(
            stmts
                .iter()
                .any(|s| matches!(s.stmt, stf::Stmt::Packet { .. })),
            "{} sends no packet",
            f.display()
        );
    }
}

fn compile(name: &str) -> Arc<pipeline::ir::Program> {
    let opts = p4::compile::CompileOptions::default();
    let compiled = p4::compile::compile_file(&programs_dir().join(name), &opts)
        .unwrap_or_else(|e| panic!("{name} does not compile:\n{}", e.render()));
    Arc::new(compiled.program)
}

fn l2l3() -> Arc<pipeline::ir::Program> {
    compile("l2l3.p4")
}

#[test]
fn l2l3_golden_stfs_pass() {
    golden_stfs_pass(l2l3(), "l2l3_");
}

/// fabric.p4 (the labs' router with ECMP): host routes, ECMP buckets from the CRC16 of the
/// 5-tuple, TTL, router MAC, non-IPv4 and LPM misses; expected bytes from scapy
/// (`make_fabric_stf.py`).
#[test]
fn fabric_golden_stfs_pass() {
    golden_stfs_pass(compile("fabric.p4"), "fabric_");
}

/// switch.p4 (the project's large program: VLANs, VRFs, ECMP through an action selector, ACL,
/// VXLAN): its scripts hold packets only, the state is `switch.tables.yaml`; expected bytes
/// from scapy (`make_switch_stf.py`).
#[test]
fn switch_golden_stfs_pass() {
    let tables = control::tables_file::load(&programs_dir().join("switch.tables.yaml"))
        .unwrap_or_else(|e| panic!("{e}"));
    golden_stfs_pass_with(compile("switch.p4"), "switch_", Some(&tables));
}

/// mcrdma.p4 (MC-RDMA): replication at a bifurcation switch with per-receiver rewrite, the
/// receivers' guard, ACK merging and the NAK rewrite with the paper's examples, CNPs
/// re-addressed; expected bytes from scapy (`make_mcrdma_stf.py`).
#[test]
fn mcrdma_golden_stfs_pass() {
    golden_stfs_pass(compile("mcrdma.p4"), "mcrdma_");
}

/// leo_kvs.p4: hot-key GETs answered in the switch, cold keys and PUTs to the server, a PUT
/// making its key stale; expected bytes from scapy (`make_leo_kvs_stf.py`).
#[test]
fn leo_kvs_golden_stfs_pass() {
    golden_stfs_pass(compile("leo_kvs.p4"), "leo_kvs_");
}

/// onepipe.p4 (1Pipe): the barrier is the minimum over the input links through the register
/// tree, beacons end at the switch, 32-bit serial arithmetic across the wrap, a removed link
/// leaves the minimum and a joining link reads it; expected bytes from scapy
/// (`make_onepipe_stf.py`).
#[test]
fn onepipe_golden_stfs_pass() {
    golden_stfs_pass(compile("onepipe.p4"), "onepipe_");
}

fn golden_stfs_pass(program: Arc<pipeline::ir::Program>, prefix: &str) {
    golden_stfs_pass_with(program, prefix, None)
}

fn golden_stfs_pass_with(
    program: Arc<pipeline::ir::Program>,
    prefix: &str,
    tables: Option<&control::tables_file::TablesFile>,
) {
    let mut failures = Vec::new();
    let files = stf_files(prefix);
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let stmts = stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let opts = StfOptions::default();
        let mut sw =
            pipeline::switch::Switch::new(program.clone(), opts.config.clone()).expect("switch");
        if let Some(t) = tables {
            control::tables_file::apply(&mut sw, t).unwrap_or_else(|e| panic!("{e}"));
        }
        let report = stf::run_stf_on(&mut sw, &stmts, &opts);
        if !report.all_passed() {
            failures.push(format!("{}:\n{report}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The golden files can fail: the routing test with the TTL of its first expected packet
/// changed (63 -> 64, as if the switch had not decremented it) must not pass.
#[test]
fn a_wrong_golden_expectation_fails() {
    let text = std::fs::read_to_string(programs_dir().join("tests/l2l3_route.stf")).unwrap();
    let mut stmts = stf::parse(&text).unwrap();
    let first_expect = stmts
        .iter_mut()
        .find_map(|s| match &mut s.stmt {
            stf::Stmt::Expect {
                pattern: Some(p), ..
            } => Some(p),
            _ => None,
        })
        .expect("route test expects packets");
    // Byte 22 is the IPv4 TTL (14 bytes of Ethernet + 8).
    assert_eq!(first_expect.nibbles[44], stf::Nibble::Hex(3));
    assert_eq!(first_expect.nibbles[45], stf::Nibble::Hex(0xf));
    first_expect.nibbles[44] = stf::Nibble::Hex(4);
    first_expect.nibbles[45] = stf::Nibble::Hex(0);
    let report = stf::run_stf(l2l3(), &stmts, &StfOptions::default());
    assert!(!report.all_passed(), "{report}");
    assert_eq!(report.failed_checks().count(), 1, "{report}");
}

/// The bundled table file programs the same four-host setup as the STF files: with the
/// switch programmed by `l2l3.tables.yaml` instead of the scripts' own table writes, every
/// packet expectation and indexed counter check of every l2l3 script still holds.
#[test]
fn l2l3_tables_yaml_matches_the_stf_setup() {
    let program = l2l3();
    let file = control::tables_file::load(&programs_dir().join("l2l3.tables.yaml")).unwrap();
    let mut failures = Vec::new();
    for f in stf_files("l2l3_") {
        let mut sw = pipeline::switch::Switch::new(program.clone(), Default::default()).unwrap();
        control::tables_file::apply(&mut sw, &file).unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        let stmts: Vec<stf::StfStmt> = stf::parse(&text)
            .unwrap()
            .into_iter()
            .filter(|s| match &s.stmt {
                stf::Stmt::Packet { .. }
                | stf::Stmt::Expect { .. }
                | stf::Stmt::NoPacket
                | stf::Stmt::Wait => true,
                stf::Stmt::CheckCounter { cell, .. } => matches!(cell, stf::CellRef::Index(_)),
                _ => false,
            })
            .collect();
        let report = stf::run_stf_on(&mut sw, &stmts, &StfOptions::default());
        assert!(report.checks.len() >= 2, "{}: {report:#}", f.display());
        if !report.all_passed() {
            failures.push(format!("{}:\n{report}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The language conformance programs: every `p4/tests/lang/NAME.p4` (one construct each, as
/// real programs write it) passes `NAME.stf`, whose expected bytes are worked out by hand in
/// the file's comments, after `NAME.tables.yaml` (when there is one) is applied.
#[test]
fn language_programs_pass_their_stf() {
    let dir = programs_dir().join("../tests/lang");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("p4/tests/lang exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();
    assert!(programs.len() >= 2, "{programs:?}");
    let mut failures = Vec::new();
    for p in programs {
        let stf_path = p.with_extension("stf");
        let text = std::fs::read_to_string(&stf_path)
            .unwrap_or_else(|e| panic!("{}: {e}", stf_path.display()));
        let stmts = stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", stf_path.display()));
        let compiled = p4::compile::compile_file(&p, &p4::compile::CompileOptions::default())
            .unwrap_or_else(|e| panic!("{} does not compile:\n{}", p.display(), e.render()));
        let opts = StfOptions::default();
        let mut sw = pipeline::switch::Switch::new(Arc::new(compiled.program), opts.config.clone())
            .expect("switch");
        let tables = p.with_extension("tables.yaml");
        if tables.exists() {
            let file = control::tables_file::load(&tables).unwrap_or_else(|e| panic!("{e}"));
            control::tables_file::apply(&mut sw, &file).unwrap_or_else(|e| panic!("{e}"));
        }
        let report = stf::run_stf_on(&mut sw, &stmts, &opts);
        if !report.all_passed() {
            failures.push(format!("{}:\n{report}", stf_path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A control instance applied in two exclusive branches is one table and one direct counter to
/// the control plane, with the same arguments (`p4/tests/lang/shared_control.p4`) or other ones
/// (`shared_control_args.p4`, through temporaries): each name appears once in the P4Info (so
/// the runtime and the STF resolve it).
#[test]
fn a_control_applied_twice_has_one_p4info_table() {
    for program in ["shared_control.p4", "shared_control_args.p4"] {
        let path = programs_dir().join("../tests/lang").join(program);
        let opts = p4::compile::CompileOptions::default();
        let compiled =
            p4::compile::compile_file(&path, &opts).unwrap_or_else(|e| panic!("{}", e.render()));
        let info = control::p4runtime::p4info::for_file(compiled.program, &path, &opts).p4info;
        let tables: Vec<&str> = info
            .tables
            .iter()
            .filter_map(|t| t.preamble.as_ref().map(|p| p.name.as_str()))
            .collect();
        assert_eq!(tables, ["Ing.acl.t"], "{program}");
        let counters: Vec<&str> = info
            .direct_counters
            .iter()
            .filter_map(|c| c.preamble.as_ref().map(|p| p.name.as_str()))
            .collect();
        assert_eq!(counters, ["Ing.acl.stats"], "{program}");
    }
}

/// mcrdma.p4's group size (§VI-B): the default receiver slots fit each target (3 on Tofino 1,
/// 7 on Tofino 2, the paper's sizes); each slot is one more egress stage of the ACK merge chain,
/// so a Tofino 1 build with 5 slots is refused for its stage count. (This design merges in one
/// stage per receiver where the paper's takes two, so Tofino 1 still takes 4.)
#[test]
fn mcrdma_group_sizes_fit_per_target_and_larger_ones_are_refused_for_stages() {
    use pipeline::ir::Target;
    let build = |target, slots: Option<u32>| {
        let opts = p4::compile::CompileOptions {
            target,
            defines: slots
                .map(|n| vec![("MCRDMA_MAX_RECEIVERS".to_string(), n.to_string())])
                .unwrap_or_default(),
            ..Default::default()
        };
        p4::compile::compile_file(&programs_dir().join("mcrdma.p4"), &opts)
    };
    let slots = |c: &p4::compile::Compiled| {
        c.program.pipelines[0]
            .registers
            .iter()
            .filter(|r| r.name.starts_with("SwitchEgress.acked"))
            .count()
    };
    let t1 = build(Target::Tofino1, None).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(slots(&t1), 3);
    let t2 = build(Target::Tofino2, None).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(slots(&t2), 7);
    assert!(build(Target::Tofino1, Some(4)).is_ok());
    let e = build(Target::Tofino1, Some(5)).unwrap_err().render();
    assert!(e.contains("needs 13 stages in egress"), "{e}");
}

/// Pipe isolation (seed 001, §IV-C): registers of one pipe are invisible to another, so
/// mcrdma.p4 merges ACKs in the egress of the sender's port. The paper's ACK example again, on a
/// two-pipe switch with a2's and b2's ACKs entering on port 128 (pipe 1) and d1's on port 3
/// (pipe 0): every ACK still meets the same registers and the same ACKs reach the sender.
#[test]
fn mcrdma_ack_merging_spans_pipes() {
    let text = std::fs::read_to_string(programs_dir().join("tests/mcrdma_ack_merge.stf"))
        .unwrap()
        .replace("packet 4 ", "packet 128 ");
    assert!(text.contains("packet 128 "));
    // Register and counter cells are per pipe: only the packets are compared here.
    let stmts: Vec<stf::StfStmt> = stf::parse(&text)
        .unwrap()
        .into_iter()
        .filter(|s| {
            !matches!(
                s.stmt,
                stf::Stmt::CheckRegister { .. } | stf::Stmt::CheckCounter { .. }
            )
        })
        .collect();
    let opts = StfOptions {
        config: pipeline::switch::SwitchConfig {
            pipes: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let report = stf::run_stf(compile("mcrdma.p4"), &stmts, &opts);
    assert!(report.all_passed(), "{report}");
    assert!(report.checks.len() >= 4, "{report}");
}

/// A program with a `@hidden` table `t` beside a visible table `v`: both set `hdr.h.b` from
/// their default actions (0x5a and then, for a hit on `v`, 0x77).
const HIDDEN_TABLE_P4: &str = r#"
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; }
struct hdr_t { h_t h; }
struct md_t { }
parser IP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control I(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
          in ingress_intrinsic_metadata_from_parser_t pm,
          inout ingress_intrinsic_metadata_for_deparser_t dm,
          inout ingress_intrinsic_metadata_for_tm_t tm) {
    action set_b(bit<8> v) { hdr.h.b = v; }
    action nop() { }
    @hidden table t { key = { hdr.h.a : exact; } actions = { set_b; } default_action = set_b(0x5a); size = 16; }
    table v { key = { hdr.h.a : exact; } actions = { set_b; nop; } default_action = nop(); size = 16; }
    apply { tm.ucast_egress_port = 1; t.apply(); v.apply(); }
}
control ID(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t dm) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control E(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
          in egress_intrinsic_metadata_from_parser_t ep,
          inout egress_intrinsic_metadata_for_deparser_t ed,
          inout egress_intrinsic_metadata_for_output_port_t eo) { apply { } }
control ED(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t ed) {
    apply { }
}
Pipeline(IP(), I(), ID(), EP(), E(), ED()) pipe;
Switch(pipe) main;
"#;

fn run_stf_text(program: &Arc<pipeline::ir::Program>, text: &str) -> stf::StfReport {
    let stmts = stf::parse(text).unwrap_or_else(|e| panic!("{e}"));
    let opts = StfOptions::default();
    let mut sw =
        pipeline::switch::Switch::new(program.clone(), opts.config.clone()).expect("switch");
    stf::run_stf_on(&mut sw, &stmts, &opts)
}

/// p4c's P4Runtime serializer leaves `@hidden` tables out of P4Info (`addTable`: `if
/// (isHidden(tableDeclaration)) return;`), so no control plane can name them: pisa's P4Info
/// omits the table, and an STF `add`, a table file or `pisa ctl` naming it get "no table
/// named"; the program still applies it (its default action runs).
#[test]
fn hidden_tables_are_applied_but_not_visible_to_the_control_plane() {
    let opts = p4::compile::CompileOptions::default();
    let c = p4::compile::compile_str("hidden.p4", HIDDEN_TABLE_P4, &opts)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let program = Arc::new(c.program);
    let info = control::p4runtime::p4info::generate(&program, &[]);
    let names: Vec<&str> = info
        .tables
        .iter()
        .filter_map(|t| t.preamble.as_ref().map(|p| p.name.as_str()))
        .collect();
    assert_eq!(names, ["I.v"]);
    let e = control::resolve::find_table(&program, "t").unwrap_err();
    assert!(e.to_string().contains("no table named `t`"), "{e}");
    assert!(control::resolve::find_table(&program, "I.t").is_err());
    // The program applies it: its default action sets b = 0x5a; then `v` hits and sets 0x77.
    let pad = "aa".repeat(62);
    let ok = run_stf_text(
        &program,
        &format!(
            "add v hdr.h.a:1 set_b(v:0x77)\npacket 0 0100{pad}\nexpect 1 0177{pad}\npacket 0 0200{pad}\nexpect 1 025a{pad}\n"
        ),
    );
    assert!(ok.all_passed(), "{ok}");
    let refused = run_stf_text(&program, "add t hdr.h.a:1 set_b(v:0x11)\n");
    assert!(!refused.all_passed());
    assert!(
        refused.to_string().contains("no table named `t`"),
        "{refused}"
    );
    let file = control::tables_file::from_yaml(
        "tables:\n  - table: t\n    entries:\n      - { key: { hdr.h.a: 1 }, action: set_b, params: { v: 1 } }\n",
    )
    .expect("yaml");
    let mut sw =
        pipeline::switch::Switch::new(program.clone(), Default::default()).expect("switch");
    let e = control::tables_file::apply(&mut sw, &file).unwrap_err();
    assert!(e.to_string().contains("no table named `t`"), "{e}");
}

/// `source FILE` (the Tofino model's harness's): a script's entries in a file of their own,
/// named relative to the sourcing script, a variable it sets seen after it.
#[test]
fn source_reads_a_script_relative_to_the_sourcing_one() {
    let opts = p4::compile::CompileOptions::default();
    let c = p4::compile::compile_str("hidden.p4", HIDDEN_TABLE_P4, &opts)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let program = Arc::new(c.program);
    let dir = std::env::temp_dir().join(format!("pisa-stf-source-run-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("common")).unwrap();
    std::fs::write(
        dir.join("common/entries.stf"),
        "setenv B 77\nadd v hdr.h.a:1 set_b(v:0x${B})\n",
    )
    .unwrap();
    let pad = "aa".repeat(62);
    let main = dir.join("main.stf");
    let text = format!("source common/entries.stf\npacket 0 0100{pad}\nexpect 1 01${{B}}{pad}\n");
    std::fs::write(&main, &text).unwrap();
    let stmts =
        stf::parse_file_with_env(&text, &main, Vec::new()).unwrap_or_else(|e| panic!("{e}"));
    let opts = StfOptions::default();
    let mut sw =
        pipeline::switch::Switch::new(program.clone(), opts.config.clone()).expect("switch");
    let report = stf::run_stf_on(&mut sw, &stmts, &opts);
    assert!(report.all_passed(), "{report}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `HIDDEN_TABLE_P4` with direct resources: a `DirectCounter` and a `DirectMeter` on the
/// hidden `t`, a `DirectCounter` on the visible `v`.
fn hidden_with_direct_resources() -> String {
    HIDDEN_TABLE_P4
        .replace(
            "    action nop() { }\n",
            "    action nop() { }\n    DirectCounter<bit<32>>(CounterType_t.PACKETS) t_hits;\n    \
             DirectMeter(MeterType_t.PACKETS) t_rate;\n    \
             DirectCounter<bit<32>>(CounterType_t.PACKETS) v_hits;\n    \
             action colour() { hdr.h.b = (bit<8>) t_rate.execute(); }\n",
        )
        .replace(
            "actions = { set_b; } default_action = set_b(0x5a); size = 16; }",
            "actions = { set_b; colour; } default_action = set_b(0x5a); size = 16; \
             counters = t_hits; meters = t_rate; }",
        )
        .replace(
            "default_action = nop(); size = 16; }",
            "default_action = nop(); size = 16; counters = v_hits; }",
        )
}

/// The direct counters and meters of an `@hidden` table stay out of P4Info with it (p4c
/// `P4RuntimeAnalyzer::addTable` returns before `addTableProperties`, which adds them), and no
/// resolver names the table or them: the Switch API (`table_add`, counter and meter names),
/// the control plane's (`pisa ctl`, STF, table files) — both through
/// `ir::Pipeline::table_named` / `direct_named`. The visible table's are there as before.
#[test]
fn hidden_tables_take_their_direct_resources_with_them() {
    let src = hidden_with_direct_resources();
    let opts = p4::compile::CompileOptions::default();
    let c = p4::compile::compile_str("hidden_direct.p4", &src, &opts)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let program = Arc::new(c.program);
    let info = control::p4runtime::p4info::generate(&program, &[]);
    let counters: Vec<&str> = info
        .direct_counters
        .iter()
        .filter_map(|d| d.preamble.as_ref().map(|p| p.name.as_str()))
        .collect();
    assert_eq!(counters, ["I.v_hits"]);
    assert!(info.direct_meters.is_empty(), "{:?}", info.direct_meters);
    // The control plane's resolvers.
    assert!(control::resolve::find_counter(&program, "I.v_hits").is_ok());
    let e = control::resolve::find_counter(&program, "t_hits").unwrap_err();
    assert!(e.to_string().contains("no counter named `t_hits`"), "{e}");
    // The Switch API's resolver.
    let mut sw =
        pipeline::switch::Switch::new(program.clone(), Default::default()).expect("switch");
    let key = [("hdr.h.a", pipeline::ir::KeyMatch::Exact(1))];
    let e = sw
        .table_add(
            pipeline::api::PipeSel::All,
            "I.t",
            &key,
            None,
            "set_b",
            &[("v", 1)],
        )
        .unwrap_err();
    assert!(e.to_string().contains("I.t"), "{e}");
    assert!(
        matches!(e, pipeline::api::ApiError::Unknown { .. }),
        "{e:?}"
    );
    sw.table_add(
        pipeline::api::PipeSel::All,
        "I.v",
        &key,
        None,
        "set_b",
        &[("v", 1)],
    )
    .expect("the visible table takes entries");
    let e = sw
        .counter_read(pipeline::api::PipeSel::All, "I.t_hits", 0)
        .unwrap_err();
    assert!(
        matches!(e, pipeline::api::ApiError::Unknown { .. }),
        "{e:?}"
    );
    // The visible table's direct counter is named (and read through its table's entries).
    let e = sw
        .counter_read(pipeline::api::PipeSel::All, "I.v_hits", 0)
        .unwrap_err();
    assert!(
        matches!(e, pipeline::api::ApiError::WrongForm { .. }),
        "{e:?}"
    );
}

//! The golden STF tests of P4CE's switch program: `p4/programs/tests/p4ce_*.stf` run against
//! `p4/programs/p4ce.p4` compiled by pisa's frontend (with Tofino 1's resource check). Expected
//! bytes in those files were built with scapy's RoCE layer (`make_p4ce_stf.py`), never from
//! the emulator.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use control::stf::{self, StfOptions};
use pipeline::ir::Target;

fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/programs")
}

fn p4ce_stf_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(programs_dir().join("tests"))
        .expect("p4/programs/tests exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "stf")
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("p4ce_"))
        })
        .collect();
    v.sort();
    v
}

fn compile(target: Target) -> p4::compile::Compiled {
    let opts = p4::compile::CompileOptions {
        target,
        ..Default::default()
    };
    p4::compile::compile_file(&programs_dir().join("p4ce.p4"), &opts)
        .unwrap_or_else(|e| panic!("p4ce.p4 does not compile for {target:?}:\n{}", e.render()))
}

fn p4ce() -> Arc<pipeline::ir::Program> {
    Arc::new(compile(Target::Tofino1).program)
}

fn read_stf(path: &Path) -> Vec<stf::StfStmt> {
    let text = std::fs::read_to_string(path).unwrap();
    stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `pisa check --target tofino1` (and tofino2) accept the program: placed within the stages,
/// with no warning about something the hardware could not do.
#[test]
fn p4ce_fits_tofino1_and_tofino2_without_warnings() {
    for target in [Target::Tofino1, Target::Tofino2] {
        let c = compile(target);
        let report = c.resources.expect("the resource check ran");
        assert!(!report.pipelines.is_empty());
        assert!(
            c.warnings.is_empty(),
            "{target:?}:\n{}",
            c.warnings.render(&c.sources)
        );
    }
}

#[test]
fn p4ce_golden_stfs_pass() {
    let program = p4ce();
    let files = p4ce_stf_files();
    assert!(
        files.len() >= 8,
        "expected the p4ce STF files, found {files:?}"
    );
    let mut failures = Vec::new();
    for f in files {
        let stmts = read_stf(&f);
        let report = stf::run_stf(program.clone(), &stmts, &StfOptions::default());
        assert!(report.checks.len() >= 4, "{}: {report:#}", f.display());
        if !report.all_passed() {
            failures.push(format!("{}:\n{report}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The files can fail: the ACK forwarded to the leader with the forwarding replica's own
/// credit code (8) instead of the group's minimum (6) does not match, and neither does a
/// NumRecv count off by one.
#[test]
fn wrong_p4ce_expectations_fail() {
    let mut stmts = read_stf(&programs_dir().join("tests/p4ce_gather_f2.stf"));
    let to_leader = stmts
        .iter_mut()
        .find_map(|s| match &mut s.stmt {
            stf::Stmt::Expect {
                port: 0,
                pattern: Some(p),
            } => Some(p),
            _ => None,
        })
        .expect("the f = 2 test expects an ACK on the leader's port");
    // Byte 54 is the AETH syndrome (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12).
    assert_eq!(to_leader.nibbles[108], stf::Nibble::Hex(0));
    assert_eq!(to_leader.nibbles[109], stf::Nibble::Hex(6));
    to_leader.nibbles[109] = stf::Nibble::Hex(8);
    let report = stf::run_stf(p4ce(), &stmts, &StfOptions::default());
    assert_eq!(report.failed_checks().count(), 1, "{report}");

    let mut stmts = read_stf(&programs_dir().join("tests/p4ce_gather_f2.stf"));
    let count = stmts
        .iter_mut()
        .find_map(|s| match &mut s.stmt {
            stf::Stmt::CheckRegister {
                register,
                test:
                    stf::ValueTest {
                        cmp: Some((_, value)),
                        ..
                    },
                ..
            } if register.ends_with("num_recv") && *value == 1 => Some(value),
            _ => None,
        })
        .expect("the f = 2 test checks NumRecv = 1 after the first ACK");
    *count = 2;
    let report = stf::run_stf(p4ce(), &stmts, &StfOptions::default());
    assert_eq!(report.failed_checks().count(), 1, "{report}");
}

/// `p4ce.tables.yaml` programs the same group as the STF files (with quorum 1): with the switch
/// programmed by the table file instead of the scripts' own writes, every packet, counter and
/// register check of the scripts that do not depend on f = 2 still holds.
#[test]
fn p4ce_tables_yaml_matches_the_stf_setup() {
    let program = p4ce();
    let file = control::tables_file::load(&programs_dir().join("p4ce.tables.yaml")).unwrap();
    let mut failures = Vec::new();
    let quorum_one = ["write_only", "multi_packet", "gather_f1", "nak", "plain"];
    for name in quorum_one {
        let path = programs_dir().join(format!("tests/p4ce_{name}.stf"));
        let mut sw = pipeline::switch::Switch::new(program.clone(), Default::default()).unwrap();
        control::tables_file::apply(&mut sw, &file).unwrap();
        let stmts: Vec<stf::StfStmt> = read_stf(&path)
            .into_iter()
            .filter(|s| match &s.stmt {
                stf::Stmt::Packet { .. }
                | stf::Stmt::Expect { .. }
                | stf::Stmt::NoPacket
                | stf::Stmt::Wait
                | stf::Stmt::CheckRegister { .. } => true,
                stf::Stmt::CheckCounter { cell, .. } => matches!(cell, stf::CellRef::Index(_)),
                _ => false,
            })
            .collect();
        let report = stf::run_stf_on(&mut sw, &stmts, &StfOptions::default());
        assert!(report.checks.len() >= 4, "{}: {report:#}", path.display());
        if !report.all_passed() {
            failures.push(format!("{}:\n{report}", path.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

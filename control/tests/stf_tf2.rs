//! Tofino 2 STF tests: every program of `p4/tests/stf_tf2/` compiled for Tofino 2 (what
//! `pisa stf --target tofino2` does) with its `NAME.stf` beside it, on every engine (tree,
//! flat, native). Expected bytes are worked out by hand in each script's comments.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use control::stf::{self, StfOptions};
use pipeline::exec::EngineKind;
use pipeline::ir::Target;
use pipeline::switch::Switch;

fn programs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4/tests/stf_tf2");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("p4/tests/stf_tf2 exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    v.sort();
    v
}

#[test]
fn tofino2_stfs_pass_on_every_engine() {
    let programs = programs();
    assert!(!programs.is_empty());
    let mut failures = Vec::new();
    for path in programs {
        let opts = p4::compile::CompileOptions {
            target: Target::Tofino2,
            ..p4::compile::CompileOptions::default()
        };
        let c = p4::compile::compile_file(&path, &opts)
            .unwrap_or_else(|e| panic!("{} does not compile:\n{}", path.display(), e.render()));
        let program = Arc::new(c.program);
        let script = path.with_extension("stf");
        let text = std::fs::read_to_string(&script).expect("the program's script");
        let stmts = stf::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::Native] {
            let opts = StfOptions::default();
            let cfg = opts.config.clone().with_engine(engine);
            let mut sw = Switch::new(program.clone(), cfg).expect("switch");
            assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
            let report = stf::run_stf_on(&mut sw, &stmts, &opts);
            if !report.all_passed() {
                failures.push(format!("{} on {engine:?}:\n{report}", script.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! STF folders run on every engine (tree, flat, native): the conformance checks
//! (`p4/tests/conformance/`, see its README; `tf2_*` programs compiled for Tofino 2), each with
//! its table file where it has one, and the Tofino 2 programs of `p4/tests/stf_tf2/` (what
//! `pisa stf --target tofino2` does), and the table files of `conformance/refused/`, which
//! pisa must refuse as the SDE driver does. Expected bytes come from the hardware's documented
//! behaviour, worked out independently of pisa (by hand in each script's comments).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use control::stf::{self, StfOptions};
use pipeline::exec::EngineKind;
use pipeline::ir::Target;
use pipeline::switch::Switch;

/// The programs of `p4/tests/DIR`.
fn programs(dir: &str) -> Vec<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../p4/tests")
        .join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("p4/tests/{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    v.sort();
    v
}

/// The target a conformance check's program is written for (by its name).
fn target(path: &Path) -> Target {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if name.starts_with("tf2_") {
        Target::Tofino2
    } else {
        Target::Tofino1
    }
}

#[test]
fn conformance_checks_pass_on_every_engine() {
    let programs = programs("conformance");
    assert!(programs.len() >= 20, "{programs:?}");
    run_on_every_engine(&programs, target);
}

#[test]
fn tofino2_stfs_pass_on_every_engine() {
    let programs = programs("stf_tf2");
    assert!(!programs.is_empty());
    run_on_every_engine(&programs, |_| Target::Tofino2);
}

/// `conformance/refused/`: table files whose specs the SDE driver refuses to encode (each file's
/// comments name the source); pisa must refuse them too, on loading or applying.
#[test]
fn specs_the_driver_refuses_are_refused() {
    let programs = programs("conformance/refused");
    assert!(programs.len() >= 3, "{programs:?}");
    for path in &programs {
        let c = p4::compile::compile_file(path, &p4::compile::CompileOptions::default())
            .unwrap_or_else(|e| panic!("{} does not compile:\n{}", path.display(), e.render()));
        let tables = path.with_extension("tables.yaml");
        let refused = match control::tables_file::load(&tables) {
            Err(e) => e.to_string(),
            Ok(t) => {
                let mut sw = Switch::new(Arc::new(c.program), Default::default()).expect("switch");
                match control::tables_file::apply(&mut sw, &t) {
                    Err(e) => e.to_string(),
                    Ok(_) => panic!("{}: accepted", tables.display()),
                }
            }
        };
        assert!(
            refused.contains("filter"),
            "{}: {refused}",
            tables.display()
        );
    }
}

/// Each program with its `NAME.stf` (and `NAME.tables.yaml` when there is one), compiled for
/// `target(program)`, on the tree, flat and native engines; fails listing every failed run.
fn run_on_every_engine(programs: &[PathBuf], target: impl Fn(&Path) -> Target) {
    let mut failures = Vec::new();
    for path in programs {
        let opts = p4::compile::CompileOptions {
            target: target(path),
            ..p4::compile::CompileOptions::default()
        };
        let c = p4::compile::compile_file(path, &opts)
            .unwrap_or_else(|e| panic!("{} does not compile:\n{}", path.display(), e.render()));
        let program = Arc::new(c.program);
        let script = path.with_extension("stf");
        let text = std::fs::read_to_string(&script).expect("the program's script");
        let stmts =
            stf::parse_file(&text, &script).unwrap_or_else(|e| panic!("{}: {e}", script.display()));
        let tables = path.with_extension("tables.yaml");
        let tables = tables.exists().then(|| {
            control::tables_file::load(&tables)
                .unwrap_or_else(|e| panic!("{}: {e}", tables.display()))
        });
        for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::Native] {
            // The checks describe the chip on a wire: frames pass a MAC, which pads runts.
            let opts = StfOptions {
                min_frame: Some(pipeline::switch::MIN_FRAME),
                ..StfOptions::default()
            };
            let cfg = opts.config.clone().with_engine(engine);
            let mut sw = Switch::new(program.clone(), cfg).expect("switch");
            assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
            if let Some(t) = &tables {
                control::tables_file::apply(&mut sw, t)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            let report = stf::run_stf_on(&mut sw, &stmts, &opts);
            if !report.all_passed() {
                failures.push(format!("{} on {engine:?}:\n{report}", script.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

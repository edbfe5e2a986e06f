//! The placement of every shipped program (`p4/programs/*.p4`), every `tests/check/ok/*.p4`
//! and every `tests/placement/*.p4`, on Tofino 1 and Tofino 2, against a stored report: the
//! whole report as JSON (every stage, every placement reason) plus the warnings, or the
//! errors. A change to the dependency graph or the sizing that moves a table shows up here as
//! a diff to review. Regenerate with `UPDATE_EXPECT=1 cargo test -p pisa-p4 --test
//! placement_reports`.

use std::path::{Path, PathBuf};

use p4::compile::{compile_file, CompileOptions};
use pipeline::ir::Target;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn p4_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    v.sort();
    v
}

/// The report of `path` on both targets, as text.
fn reports(path: &Path) -> String {
    let mut out = String::new();
    for target in [Target::Tofino1, Target::Tofino2] {
        let opts = CompileOptions {
            target,
            ..CompileOptions::default()
        };
        out.push_str(&format!("=== {target:?}\n"));
        match compile_file(path, &opts) {
            Ok(c) => {
                match &c.resources {
                    Some(r) => out.push_str(&serde_json::to_string_pretty(r).expect("json")),
                    None => out.push_str("(no report)"),
                }
                out.push_str("\n--- warnings\n");
                out.push_str(&c.warnings.render(&c.sources));
            }
            Err(f) => {
                out.push_str("--- errors\n");
                out.push_str(&f.render());
            }
        }
        out.push('\n');
    }
    out
}

#[test]
fn placement_of_known_programs_is_unchanged() {
    let golden_dir = root().join("tests/placement_reports");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let dirs = [
        ("programs", root().join("programs")),
        ("ok", root().join("tests/check/ok")),
        ("placement", root().join("tests/placement")),
    ];
    for (tag, dir) in dirs {
        for p in p4_files(&dir) {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("?");
            let golden = golden_dir.join(format!("{tag}__{stem}.txt"));
            // Paths in diagnostics are relative to the crate, whatever the checkout.
            let actual = reports(&p).replace(root().to_str().unwrap_or("\u{0}"), "$P4");
            if update {
                std::fs::create_dir_all(&golden_dir).expect("golden dir");
                std::fs::write(&golden, &actual).expect("write golden");
                continue;
            }
            let expected = std::fs::read_to_string(&golden).unwrap_or_default();
            if expected != actual {
                failures.push(format!(
                    "{} differs from {} (rerun with UPDATE_EXPECT=1 to accept)",
                    p.display(),
                    golden.display()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

//! Golden IR: every program of `tests/lang/` compiles, and the IR it becomes
//! (`pipeline::ir_text`, what `pisa check --emit-ir` prints) matches `NAME.ir` beside it, so a
//! change in what a construct lowers to shows in review. Regenerate with
//! `UPDATE_EXPECT=1 cargo test -p pisa-p4 --test ir`.

use std::path::Path;

use p4::compile::{compile_file, CompileOptions};

#[test]
fn lang_programs_lower_to_their_golden_ir() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lang");
    let mut programs: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/lang")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "p4"))
        .collect();
    programs.sort();
    assert!(!programs.is_empty());
    let mut failures = Vec::new();
    for p in programs {
        let c = compile_file(&p, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{}:\n{}", p.display(), e.render()));
        pipeline::ir_verify::verify(&c.program).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let text = pipeline::ir_text::program_text(&c.program);
        let golden = p.with_extension("ir");
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            std::fs::write(&golden, &text).expect("write golden");
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        if want != text {
            failures.push(format!(
                "{} differs (UPDATE_EXPECT=1 to accept):\n--- expected\n{want}\n--- actual\n{text}",
                golden.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

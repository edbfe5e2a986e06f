//! Placement rules against bf-p4c's: every `tests/placement/*.p4` is compiled for Tofino 1 and
//! checked against the expectations written in its header comment, each worked out from the
//! bf-p4c rule the file names:
//!
//! - `// expect stage NAME N`: table NAME (its last part, if split) sits in ingress stage N;
//! - `// expect placed TEXT`: the stage report explains a placement with TEXT;
//! - `// expect warning TEXT`: a warning contains TEXT;
//! - `// expect no_warning TEXT`: no warning contains TEXT;
//! - `// expect tcam N`: the ingress uses N TCAM blocks in all;
//! - `// expect sram N`: the ingress uses N SRAM blocks in all;
//! - `// expect stage_tcam S N`: ingress stage S uses N TCAM blocks;
//! - `// expect stage_logical S N`: ingress stage S uses N logical table ids.
//!
//! And in every file: no stage states the same placement reason twice.

use std::path::{Path, PathBuf};

use p4::compile::{compile_file, CompileOptions, Compiled};
use p4::resources::GressReport;
use pipeline::ir::Target;

fn inputs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/placement");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("tests/placement")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    v.sort();
    v
}

/// The stage holding table `name` (or the last part of it).
fn stage_of(g: &GressReport, name: &str) -> Option<u32> {
    let part = format!("{name} (part ");
    g.stages
        .iter()
        .filter(|s| s.tables.iter().any(|t| t == name || (t.starts_with(&part))))
        .map(|s| s.stage)
        .max()
}

/// The expectations of `text` that do not hold for `c`.
fn check(c: &Compiled, text: &str) -> Vec<String> {
    let report = c.resources.as_ref().expect("placed");
    let Some(g) = report.gress(0, "ingress") else {
        return vec!["no ingress report".into()];
    };
    let warnings = c.warnings.render(&c.sources);
    let placed: Vec<&String> = g.stages.iter().flat_map(|s| &s.placed_by).collect();
    let mut bad = Vec::new();
    for s in &g.stages {
        for (i, r) in s.placed_by.iter().enumerate() {
            if s.placed_by[..i].contains(r) {
                bad.push(format!("stage {}: placement reason `{r}` twice", s.stage));
            }
        }
    }
    for line in text.lines() {
        let Some(e) = line.strip_prefix("// expect ") else {
            continue;
        };
        let (what, rest) = e.split_once(' ').unwrap_or((e, ""));
        match what {
            "stage" => {
                let (name, n) = rest.rsplit_once(' ').expect("stage NAME N");
                let want: u32 = n.parse().expect("stage number");
                let got = stage_of(g, name);
                if got != Some(want) {
                    bad.push(format!("{name}: stage {got:?}, expected {want}"));
                }
            }
            "placed" => {
                if !placed.iter().any(|p| p.contains(rest)) {
                    bad.push(format!("no placement reason `{rest}` in {placed:?}"));
                }
            }
            "warning" => {
                if !warnings.contains(rest) {
                    bad.push(format!("no warning `{rest}`"));
                }
            }
            "no_warning" => {
                if warnings.contains(rest) {
                    bad.push(format!("warning `{rest}` given"));
                }
            }
            "tcam" => {
                let want: u32 = rest.parse().expect("tcam N");
                if g.totals.tcam_blocks != want {
                    bad.push(format!(
                        "{} TCAM blocks, expected {want}",
                        g.totals.tcam_blocks
                    ));
                }
            }
            "sram" => {
                let want: u32 = rest.parse().expect("sram N");
                if g.totals.sram_blocks != want {
                    bad.push(format!(
                        "{} SRAM blocks, expected {want}",
                        g.totals.sram_blocks
                    ));
                }
            }
            "stage_tcam" | "stage_logical" => {
                let (st, n) = rest.split_once(' ').expect("stage_tcam S N");
                let (st, want): (u32, u32) = (st.parse().expect("stage"), n.parse().expect("N"));
                let got = g.stages.iter().find(|s| s.stage == st).map(|s| {
                    if what == "stage_tcam" {
                        s.tcam_blocks
                    } else {
                        s.logical_tables
                    }
                });
                if got != Some(want) {
                    bad.push(format!("stage {st}: {got:?} {what}, expected {want}"));
                }
            }
            other => bad.push(format!("unknown expectation `{other}`")),
        }
    }
    if !bad.is_empty() {
        bad.push(format!("report:\n{report}\nwarnings:\n{warnings}"));
    }
    bad
}

#[test]
fn placements_follow_bf_p4c_rules() {
    let opts = CompileOptions {
        target: Target::Tofino1,
        ..CompileOptions::default()
    };
    let mut failures = Vec::new();
    let files = inputs();
    assert!(files.len() >= 4, "placement tests missing");
    for p in files {
        let text = std::fs::read_to_string(&p).expect("read test");
        assert!(
            text.contains("// expect "),
            "{} states no expectation",
            p.display()
        );
        match compile_file(&p, &opts) {
            Ok(c) => {
                let bad = check(&c, &text);
                if !bad.is_empty() {
                    failures.push(format!("{}:\n{}", p.display(), bad.join("\n")));
                }
            }
            Err(f) => failures.push(format!("{} does not compile:\n{}", p.display(), f.render())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `@stage(12)` is past Tofino 1's last stage (refused there, with the table, the stage and the
/// stage count: tests/check/rejected/stage_pin_past_last) but within Tofino 2's 20, where the
/// table starts in stage 12 as asked.
#[test]
fn stage_pins_follow_the_target_stage_count() {
    let p =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/check/rejected/stage_pin_past_last.p4");
    let on = |target| CompileOptions {
        target,
        ..CompileOptions::default()
    };
    let refused = match compile_file(&p, &on(Target::Tofino1)) {
        Ok(_) => panic!("@stage(12) accepted on tofino1"),
        Err(f) => f.render(),
    };
    assert!(
        refused.contains("pinned to stage 12 by `@stage(12)`, but tofino1 has 12 stages (0 to 11)"),
        "{refused}"
    );
    let c = compile_file(&p, &on(Target::Tofino2))
        .unwrap_or_else(|f| panic!("@stage(12) on tofino2:\n{}", f.render()));
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(stage_of(g, "Ingress.late"), Some(12), "{report}");
    assert!(
        g.stages[12]
            .placed_by
            .iter()
            .any(|r| r == "Ingress.late: pinned by `@stage(12)`"),
        "{report}"
    );
}

//! Table layouts and compile-time branches in placement, on `tests/layouts/alpm_fib.p4`: an
//! `Alpm` route table is sized as an ATCAM in SRAM behind a pre-classifier TCAM (so 256K
//! prefixes fit Tofino 1, as bf-p4c fits them), the same table without its layout does not,
//! and an `if` on a constructor parameter lowers only the branch it takes.

use std::path::Path;

use p4::compile::{compile_file, CompileOptions, Compiled};
use pipeline::ir::Target;

fn compile(defines: &[(&str, &str)]) -> Result<Compiled, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/layouts/alpm_fib.p4");
    let opts = CompileOptions {
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        target: Target::Tofino1,
        ..CompileOptions::default()
    };
    compile_file(&path, &opts).map_err(|f| f.render())
}

/// The ingress tables of each stage, by name.
fn ingress_stages(c: &Compiled) -> Vec<Vec<String>> {
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    g.stages.iter().map(|s| s.tables.clone()).collect()
}

#[test]
fn alpm_table_is_an_atcam_in_sram_behind_a_preclassifier() {
    let c = compile(&[]).expect("the ALPM FIB fits Tofino 1");
    let stages = ingress_stages(&c);
    let parts: Vec<usize> = (0..stages.len())
        .filter(|&s| stages[s].iter().any(|t| t.starts_with("Ing.fib.lpm")))
        .collect();
    // 256K entries of 8 + 2·18 stored bits: 2 per SRAM word, 128 RAMs of match plus action
    // data: more than one stage's 80 RAMs, so a few stages, each after the host table.
    assert!(parts.len() >= 2 && parts.len() <= 4, "{stages:?}");
    assert!(parts[0] >= 1, "after the host table: {stages:?}");
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    let tcam: u32 = g.stages.iter().map(|s| s.tcam_blocks).sum();
    // The pre-classifier: 2048 partitions × 2 subtrees of a 40-bit key, 8 TCAM blocks.
    assert_eq!(tcam, 8, "{report}");
    let warnings = c.warnings.render(&c.sources);
    assert!(
        warnings.contains("sizes it in SRAM as an ATCAM"),
        "{warnings}"
    );
}

/// bf-p4c's pragma spelling of the layout, `@alpm(1) @alpm_partitions(2048)` on the table
/// with no `implementation`, lays it out as the `Alpm` extern does: it fits, with the same
/// pre-classifier.
#[test]
fn alpm_annotations_lay_the_table_out_as_the_alpm_extern() {
    let c = compile(&[
        ("LPM_LAYOUT", ""),
        (
            "LPM_ANNOTATIONS",
            "@alpm(1) @alpm_partitions(2048) @alpm_subtrees_per_partition(2)",
        ),
    ])
    .expect("the ALPM-annotated FIB fits Tofino 1");
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    let tcam: u32 = g.stages.iter().map(|s| s.tcam_blocks).sum();
    assert_eq!(tcam, 8, "{report}");
    let warnings = c.warnings.render(&c.sources);
    assert!(warnings.contains("is an `Alpm` layout"), "{warnings}");
    assert!(
        !warnings.contains("`@alpm` accepted, ignored"),
        "{warnings}"
    );
    let Err(err) = compile(&[
        ("LPM_LAYOUT", ""),
        ("LPM_ANNOTATIONS", "@alpm(1) @alpm_partitions(3000)"),
    ]) else {
        panic!("3000 partitions accepted");
    };
    assert!(
        err.contains("the supported values are 1024, 2048, 4096 and 8192"),
        "{err}"
    );
    // `@atcam_partition_index`: an ATCAM in SRAM with no pre-classifier.
    let c = compile(&[
        ("LPM_LAYOUT", ""),
        (
            "LPM_ANNOTATIONS",
            "@atcam_partition_index(\"m.vrf\") @atcam_number_partitions(256)",
        ),
    ])
    .expect("the ATCAM-annotated FIB fits Tofino 1");
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    assert_eq!(
        g.stages.iter().map(|s| s.tcam_blocks).sum::<u32>(),
        0,
        "{report}"
    );
    let warnings = c.warnings.render(&c.sources);
    assert!(warnings.contains("is an `Atcam` layout"), "{warnings}");
}

#[test]
fn the_same_table_without_its_layout_does_not_fit() {
    let Err(err) = compile(&[("LPM_LAYOUT", "")]) else {
        panic!("a 256K-entry TCAM route table fits Tofino 1");
    };
    assert!(err.contains("stages in ingress"), "{err}");
}

#[test]
fn a_constructor_parameter_condition_lowers_only_its_branch() {
    let c = compile(&[]).expect("fits");
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    assert!(
        g.stages.iter().all(|s| s.gateways.is_empty()),
        "no gateway for `if (host_first)`: {report}"
    );
    let lpm_parts: usize = g
        .stages
        .iter()
        .flat_map(|s| &s.tables)
        .filter(|t| t.starts_with("Ing.fib.lpm"))
        .count();
    let last = format!("Ing.fib.lpm (part {lpm_parts} of {lpm_parts})");
    assert!(
        g.stages.iter().any(|s| s.tables.contains(&last)),
        "one apply of the route table, placed once: {report}"
    );
}

#[test]
fn a_split_table_applied_in_two_branches_has_its_parts_placed_once() {
    let c = compile(&[("HOST_FIRST", "m.vrf == 1")]).expect("fits");
    let report = c.resources.as_ref().expect("placed");
    let g = report.gress(0, "ingress").expect("ingress");
    let labels: Vec<&String> = g
        .stages
        .iter()
        .flat_map(|s| &s.tables)
        .filter(|t| t.starts_with("Ing.fib.lpm"))
        .collect();
    let mut unique = labels.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(labels.len(), unique.len(), "each part once: {report}");
    assert!(labels.len() >= 2, "still split: {report}");
}

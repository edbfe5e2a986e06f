//! Golden tests of the checker and lowering: every `tests/check/ok/*.p4` lowers, and its IR
//! summary plus warnings match `*.txt`; every `tests/check/err/*.p4` fails with the rendered
//! diagnostics in `*.stderr`; every `tests/check/rejected/*.p4` lowers but is refused by the
//! placement on Tofino 1 (as bf-p4c refuses it), with the diagnostics in `*.stderr`. Regenerate with `UPDATE_EXPECT=1 cargo test -p pisa-p4 --test check`.

use std::path::{Path, PathBuf};

use p4::compile::{compile_str, lower_str, CompileOptions};

fn dir(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/check")
        .join(sub)
}

fn inputs(sub: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir(sub))
        .expect("test directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "p4"))
        .collect();
    v.sort();
    v
}

/// Compares `actual` with the file, or rewrites the file under `UPDATE_EXPECT=1`. Returns a
/// description of the mismatch.
fn check_golden(path: &Path, actual: &str) -> Option<String> {
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(path, actual).expect("write golden file");
        return None;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default();
    if expected == actual {
        None
    } else {
        Some(format!(
            "{} differs (rerun with UPDATE_EXPECT=1 to accept):\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        ))
    }
}

fn run(path: &Path, sub: &str) -> (bool, String) {
    let text = std::fs::read_to_string(path).expect("read test input");
    let name = format!(
        "tests/check/{sub}/{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("?")
    );
    match lower_str(&name, &text, &CompileOptions::default()) {
        Ok(c) => {
            let mut s = p4::lower::summary(&c.program);
            if !c.warnings.is_empty() {
                s.push_str("\n--- warnings\n");
                s.push_str(&c.warnings.render(&c.sources));
            }
            (true, s)
        }
        Err(f) => (false, f.render()),
    }
}

#[test]
fn ok_programs_lower() {
    let mut failures = Vec::new();
    let files = inputs("ok");
    assert!(!files.is_empty(), "no ok/*.p4 inputs");
    for p in files {
        let (ok, out) = run(&p, "ok");
        if !ok {
            failures.push(format!("{} should compile:\n{out}", p.display()));
            continue;
        }
        if let Some(m) = check_golden(&p.with_extension("txt"), &out) {
            failures.push(m);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn err_programs_are_rejected_with_the_expected_diagnostics() {
    let mut failures = Vec::new();
    let files = inputs("err");
    assert!(!files.is_empty(), "no err/*.p4 inputs");
    for p in files {
        let (ok, out) = run(&p, "err");
        if ok {
            failures.push(format!("{} should be rejected but compiled", p.display()));
            continue;
        }
        if !out.contains("error") {
            failures.push(format!(
                "{} failed without an error diagnostic:\n{out}",
                p.display()
            ));
        }
        if let Some(m) = check_golden(&p.with_extension("stderr"), &out) {
            failures.push(m);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn rejected_programs_fail_placement_with_the_expected_diagnostics() {
    let mut failures = Vec::new();
    let files = inputs("rejected");
    assert!(!files.is_empty(), "no rejected/*.p4 inputs");
    for p in files {
        let (lowered, _) = run(&p, "rejected");
        if !lowered {
            failures.push(format!("{} should lower (and fail placement)", p.display()));
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read test input");
        let name = format!(
            "tests/check/rejected/{}",
            p.file_name().and_then(|n| n.to_str()).unwrap_or("?")
        );
        let out = match compile_str(&name, &text, &CompileOptions::default()) {
            Ok(_) => {
                failures.push(format!("{} should be refused by placement", p.display()));
                continue;
            }
            Err(f) => f.render(),
        };
        if let Some(m) = check_golden(&p.with_extension("stderr"), &out) {
            failures.push(m);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The parser rules bf-p4c applies to Tofino 1 only (a field written twice on a path, the
/// egress parse depth): the same programs compile for Tofino 2.
#[test]
fn tofino1_parser_rules_do_not_apply_to_tofino2() {
    for name in ["parser_writes_twice.p4", "parse_depth.p4"] {
        let p = dir("rejected").join(name);
        let text = std::fs::read_to_string(&p).expect("read test input");
        let opts = CompileOptions {
            target: pipeline::ir::Target::Tofino2,
            ..CompileOptions::default()
        };
        let file = format!("tests/check/rejected/{name}");
        if let Err(f) = compile_str(&file, &text, &opts) {
            panic!("{name} should compile for Tofino 2:\n{}", f.render());
        }
    }
}

/// bf-p4c's `--disable-parse-depth-limit` (the SDE builds its Tofino 1 switch profiles with
/// it): the over-deep egress parser compiles, with the depth as a warning that says so.
#[test]
fn disabled_parse_depth_limit_warns() {
    let text = std::fs::read_to_string(dir("rejected").join("parse_depth.p4")).expect("read");
    let opts = CompileOptions {
        disable_parse_depth_limit: true,
        ..CompileOptions::default()
    };
    let c = compile_str("tests/check/rejected/parse_depth.p4", &text, &opts)
        .unwrap_or_else(|f| panic!("should compile:\n{}", f.render()));
    let w = c.warnings.render(&c.sources);
    assert!(
        w.contains("a Tofino 1 egress parser reads at most 160")
            && w.contains("not enforced: --disable-parse-depth-limit"),
        "{w}"
    );
}

fn compile_file(
    sub: &str,
    name: &str,
    target: pipeline::ir::Target,
) -> Result<p4::compile::Compiled, String> {
    let text = std::fs::read_to_string(dir(sub).join(name)).expect("read test input");
    let opts = CompileOptions {
        target,
        ..CompileOptions::default()
    };
    compile_str(&format!("tests/check/{sub}/{name}"), &text, &opts).map_err(|f| f.render())
}

/// The PHV lower bound: headers on exclusive parse paths count once (the fullest path, shown
/// in the report); on Tofino 2 headers the MAU does not read may ride in CLOTs, those it
/// reads may not.
#[test]
fn phv_bound_takes_the_fullest_path_and_leaves_clot_headers_out_on_tofino2() {
    use pipeline::ir::Target;
    for target in [Target::Tofino1, Target::Tofino2] {
        let c = compile_file("ok", "phv_exclusive_paths.p4", target)
            .unwrap_or_else(|e| panic!("exclusive paths fit {target:?}:\n{e}"));
        let report = c.resources.expect("placement report");
        let phv = &report.gress(0, "ingress").expect("ingress").phv;
        // One 64-byte header, Ethernet and the 9-bit port on Tofino 1; on Tofino 2 only the
        // port, which the MAU reads (the rest fits in CLOTs).
        let (bits, path) = match target {
            Target::Tofino1 => (512 + 112 + 9, vec!["start", "parse_w0"]),
            Target::Tofino2 => (9, vec!["start"]),
        };
        assert_eq!(phv.bits, bits, "{target:?}");
        assert_eq!(phv.path, path, "{target:?}");
        assert!(report
            .to_string()
            .contains(&format!("PHV: at least {bits} of")));
    }
    let c = compile_file("rejected", "phv_one_path.p4", Target::Tofino2)
        .unwrap_or_else(|e| panic!("CLOTs carry the unread headers on Tofino 2:\n{e}"));
    let phv = &c.resources.expect("report").pipelines[0].gresses[0].phv;
    assert_eq!(phv.bits, 11 * 512 + 112 + 9 - 3072);
    let e = match compile_file("rejected", "phv_mau_reads.p4", Target::Tofino2) {
        Ok(_) => panic!("headers the MAU reads need containers on Tofino 2"),
        Err(e) => e,
    };
    assert!(
        e.contains("ingress needs at least 4617 bits of PHV")
            && e.contains("tofino2 gives one gress at most 4096"),
        "{e}"
    );
}

/// A loop over a header stack holds every element at once: the bound counts each.
#[test]
fn phv_bound_counts_every_element_of_a_stack_loop() {
    let text = r#"
#define CUSTOM_PARSER
#include "../head.p4inc"
parser IngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                     out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x8100 : parse_vlan;
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan.next);
        transition select(hdr.vlan.last.ether_type) {
            0x8100 : parse_vlan;
            0x0800 : parse_ipv4;
            default : accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port; }
}
#include "../tail.p4inc"
"#;
    let c = compile_str(
        "tests/check/ok/stack_loop.p4",
        text,
        &CompileOptions::default(),
    )
    .unwrap_or_else(|f| panic!("{}", f.render()));
    let report = c.resources.expect("report");
    let phv = &report.gress(0, "ingress").expect("ingress").phv;
    // The port, Ethernet, both VLAN tags and IPv4 (its checksum too: nothing rewrites it).
    assert_eq!(phv.bits, 9 + 112 + 2 * 32 + 160);
    assert_eq!(
        phv.path,
        ["start", "parse_vlan", "parse_vlan", "parse_ipv4"]
    );
}

/// A field the MAU rewrites counts where a table key reads it before the first write (the
/// parser's value reaches that read), and not where the key reads it after a write.
#[test]
fn phv_bound_counts_a_key_read_before_the_field_is_rewritten() {
    let text = r#"
#include "../head.p4inc"
control Ingress(inout headers_t hdr, inout metadata_t meta,
                in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action set_port(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action rewrite(bit<48> dst, bit<48> src) {
        hdr.ethernet.dst_addr = dst;
        hdr.ethernet.src_addr = src;
    }
    table dmac {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { set_port; rewrite; }
        size = 1024;
    }
    table smac {
        key = { hdr.ethernet.src_addr : exact; }
        actions = { NoAction; }
        size = 1024;
    }
    apply {
        dmac.apply();
        smac.apply();
    }
}
#include "../tail.p4inc"
"#;
    let opts = CompileOptions {
        target: pipeline::ir::Target::Tofino2,
        ..CompileOptions::default()
    };
    let c = compile_str("tests/check/ok/key_before_write.p4", text, &opts)
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let report = c.resources.expect("report");
    let phv = &report.gress(0, "ingress").expect("ingress").phv;
    // dst_addr (read by `dmac` before `rewrite` writes it); src_addr is read by `smac` only
    // after `dmac`'s action may have rewritten it, and the port is not read.
    assert_eq!((phv.mau_bits, phv.bits), (48, 48));
}

/// Resubmit data is phase 0's room: 8 bytes on Tofino 1, 16 on Tofino 2 (bf-p4c
/// `parde/parde_spec.h` `bitResubmitSize()`; the other 8 of Tofino 2's 24-byte port metadata are
/// padding). A longer resubmit header is refused with bf-p4c's "digest limited to N bits"; one
/// of exactly that size compiles on both chips.
#[test]
fn resubmit_header_is_limited_to_phase0_size() {
    use pipeline::ir::Target;
    let text = std::fs::read_to_string(dir("ok").join("resubmit_header_list.p4")).expect("read");
    // The header is tag (8) + pad (7) + port (9) + rest.
    for (target, max) in [(Target::Tofino1, 64u32), (Target::Tofino2, 128)] {
        for (bits, fits) in [(max, true), (max + 8, false)] {
            let src = text.replace("bit<40>  rest", &format!("bit<{}>  rest", bits - 24));
            let opts = CompileOptions {
                target,
                ..CompileOptions::default()
            };
            let r = compile_str("resubmit.p4", &src, &opts).map_err(|f| f.render());
            match (fits, r) {
                (true, Ok(_)) => {}
                (false, Err(e)) => assert!(
                    e.contains(&format!("resub_h digest limited to {max} bits")),
                    "{target:?} {bits}: {e}"
                ),
                (true, Err(e)) => panic!("{target:?}: {bits} bits fit:\n{e}"),
                (false, Ok(_)) => panic!("{target:?}: {bits} bits must be refused"),
            }
        }
    }
}

/// One action profile shared by two tables that both look up one packet: placement warns
/// (Intel's SDE shares a profile only between mutually exclusive tables); the exclusive pair of
/// `profile_tables_differ.p4` draws no such warning.
#[test]
fn a_profile_shared_by_tables_on_one_path_warns() {
    use pipeline::ir::Target;
    let c = compile_file("ok", "profile_shared_not_exclusive.p4", Target::Tofino1)
        .unwrap_or_else(|e| panic!("should compile:\n{e}"));
    let w = c.warnings.render(&c.sources);
    assert!(
        w.contains("action profile `Ingress.ap` is shared by tables `Ingress.t1` and `Ingress.t2`, which can both run for one packet"),
        "{w}"
    );
    let c = compile_file("ok", "profile_tables_differ.p4", Target::Tofino1)
        .unwrap_or_else(|e| panic!("should compile:\n{e}"));
    let w = c.warnings.render(&c.sources);
    assert!(!w.contains("which can both run"), "{w}");
    assert!(w.contains("list different actions"), "{w}");
}

/// A range table's TCAM lines follow bf-p4c's `RangeEntries`: `@entries_with_ranges(64)` keeps
/// `range_entries.p4`'s table in one stage (18 TCAMs); without it a quarter of the entries
/// take 7 lines each, 40 TCAMs, and the table spreads over two stages. An annotation larger
/// than the table warns and counts as the size.
#[test]
fn range_tables_take_tcam_lines_per_range_entry() {
    use pipeline::ir::Target;
    let ingress_of = |c: &p4::compile::Compiled| {
        let r = c.resources.as_ref().expect("placement report");
        let g = r.gress(0, "ingress").expect("ingress").clone();
        (g.stages_used, g.totals.tcam_blocks)
    };
    let c = compile_file("ok", "range_entries.p4", Target::Tofino1)
        .unwrap_or_else(|e| panic!("should compile:\n{e}"));
    assert_eq!(ingress_of(&c), (1, 18));
    let text = std::fs::read_to_string(dir("ok").join("range_entries.p4")).expect("read");
    let compile = |text: &str| {
        compile_str(
            "tests/check/ok/range_entries.p4",
            text,
            &CompileOptions::default(),
        )
        .unwrap_or_else(|f| panic!("{}", f.render()))
    };
    let c = compile(&text.replace("@entries_with_ranges(64)", ""));
    assert_eq!(ingress_of(&c), (2, 40));
    let c = compile(&text.replace("@entries_with_ranges(64)", "@entries_with_ranges(5000)"));
    // 4096 entries of 7 lines: 56 rows of two.
    assert_eq!(ingress_of(&c).1, 112);
    let w = c.warnings.render(&c.sources);
    assert!(
        w.contains(
            "`@entries_with_ranges(5000)` on table `Ingress.acl` is more than its 4096 entries"
        ),
        "{w}"
    );
    let c = compile(&text.replace("@entries_with_ranges(64)", "@entries_with_ranges(0)"));
    assert_eq!(ingress_of(&c), (2, 40));
    let w = c.warnings.render(&c.sources);
    assert!(w.contains("the entries_with_ranges value 0"), "{w}");
}

//! The frontend on deep, long and odd input: every case ends in a clear diagnostic, never a
//! stack overflow, a hang or a flood of output (issue 13). Limits: `p4/LIMITS.md`.

use std::path::Path;

use p4::compile::{compile_file, compile_str, CompileOptions};
use p4::{load_file, load_str, LoadOptions};

/// A complete TNA program whose ingress `apply` block is `body`.
fn program(body: &str) -> String {
    PROGRAM.replace("BODY", body)
}

/// A TNA program whose ingress `apply` body is `BODY` (shared with the fuzz target `p4_gen`).
const PROGRAM: &str = include_str!("limits_skeleton.p4");

/// Compiles `text`; returns the rendered diagnostics and whether it compiled.
fn compile(text: &str) -> (bool, String) {
    match compile_str("t.p4", text, &CompileOptions::default()) {
        Ok(c) => (true, c.warnings.render(&c.sources)),
        Err(f) => (false, f.render()),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[test]
fn deep_conditional_in_if_directive_is_an_error() {
    let text = format!("#if {}1\n#endif\n", "0 ? 0 : ".repeat(100_000));
    let (sm, parsed) = load_str("pp.p4", &text, &LoadOptions::default());
    let r = parsed.diagnostics.render(&sm);
    assert_eq!(
        first_line(&r),
        "error: invalid `#if` expression: expression nested deeper than 256",
        "{r}"
    );
    assert!(r.contains("--> pp.p4:1:4"), "{r}");
    // A long left-associative chain is evaluated in a loop: fine.
    let text = format!(
        "#if 1{} == 100001\nconst bit<8> X = 1;\n#endif\n",
        " + 1".repeat(100_000)
    );
    let (sm, parsed) = load_str("pp.p4", &text, &LoadOptions::default());
    assert!(
        !parsed.diagnostics.has_errors(),
        "{}",
        parsed.diagnostics.render(&sm)
    );
    assert_eq!(parsed.program.decls.len(), 1);
}

#[test]
fn long_binary_chain_is_an_error_not_a_stack_overflow() {
    let (ok, r) = compile(&program(&format!(
        "hdr.ipv4.ttl = hdr.ipv4.ttl{};",
        " + 1".repeat(100_000)
    )));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: expression nested deeper than 2000",
        "{r}"
    );
    assert!(r.contains("the limit is reached here"), "{r}");
    // One error, one window of the 400 KB line.
    assert!(r.len() < 2_000, "{} bytes:\n{r}", r.len());
}

#[test]
fn long_or_chain_in_if_is_an_error_not_a_stack_overflow() {
    let cond = vec!["hdr.ipv4.ttl == 1"; 100_000].join(" || ");
    let (ok, r) = compile(&program(&format!("if ({cond}) {{ hdr.ipv4.p = 1; }}")));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: expression nested deeper than 2000",
        "{r}"
    );
}

#[test]
fn chain_just_under_the_limit_compiles_on_a_small_stack() {
    // The test thread has a 2 MiB stack: the resource check and drops run on it.
    let (ok, r) = compile(&program(&format!(
        "hdr.ipv4.ttl = hdr.ipv4.ttl{};",
        " + 1".repeat(1_900)
    )));
    assert!(ok, "{r}");
    let cond = vec!["hdr.ipv4.ttl == 1"; 900].join(" || ");
    let (ok, r) = compile(&program(&format!("if ({cond}) {{ hdr.ipv4.p = 1; }}")));
    assert!(ok, "{r}");
}

#[test]
fn deep_ternary_and_parentheses_are_errors() {
    let (ok, r) = compile(&program(&format!(
        "hdr.ipv4.ttl = {}8w2;",
        "hdr.ipv4.p == 1 ? 8w1 : ".repeat(100_000)
    )));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: expression nested deeper than 2000",
        "{r}"
    );
    let (ok, r) = compile(&program(&format!(
        "hdr.ipv4.ttl = {}hdr.ipv4.p{};",
        "(".repeat(100_000),
        ")".repeat(100_000)
    )));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: program nested deeper than 500 levels",
        "{r}"
    );
}

/// `if (..) {..} else if (..) {..} ...` with `arms` arms, flat in the source.
fn else_if_chain(arms: usize) -> String {
    let mut b = String::from("if (hdr.ipv4.ttl == 0) { hdr.ipv4.p = 0; }");
    for i in 1..arms {
        let k = i % 256;
        b.push_str(&format!(
            " else if (hdr.ipv4.ttl == {k}) {{ hdr.ipv4.p = {k}; }}"
        ));
    }
    b.push_str(" else { hdr.ipv4.p = 1; }");
    program(&b)
}

#[test]
fn long_else_if_chains_are_flat_up_to_their_limit() {
    use p4::parser::MAX_ELSE_IF;
    // At the limit: read, and the tree dropped on this 2 MiB test thread.
    let (sm, parsed) = load_str("t.p4", &else_if_chain(MAX_ELSE_IF), &LoadOptions::default());
    assert!(
        !parsed.diagnostics.has_errors(),
        "{}",
        parsed.diagnostics.render(&sm)
    );
    drop(parsed);
    // One arm more: one error, no follow-on errors from the rest of the file.
    let (sm, parsed) = load_str(
        "t.p4",
        &else_if_chain(MAX_ELSE_IF + 1),
        &LoadOptions::default(),
    );
    let r = parsed.diagnostics.render(&sm);
    assert_eq!(parsed.diagnostics.error_count(), 1, "{r}");
    assert_eq!(
        first_line(&r),
        format!("error: `else if` chain longer than {MAX_ELSE_IF} arms"),
        "{r}"
    );
}

#[test]
fn a_600_arm_else_if_chain_is_not_a_nesting_error() {
    // p4c accepts long chains; what stops this one is the stages it needs (one error).
    let (ok, r) = compile(&else_if_chain(600));
    assert!(!ok);
    assert!(!r.contains("nested deeper"), "{r}");
    assert!(first_line(&r).contains("stages"), "{r}");
    let errors = r
        .lines()
        .filter(|l| l.starts_with("error") && !l.contains("could not compile"))
        .count();
    assert_eq!(errors, 1, "{r}");
}

/// Flat lists checked in linear time (issue 13: quadratic before): a header of 20,000 fields
/// (each checked against the names before it) and 8,000 locals (each checked for a read).
#[test]
fn many_fields_and_many_locals_compile() {
    let fields: String = (0..20_000).map(|i| format!("bit<8> f{i}; ")).collect();
    let text = program("").replace(
        "header ipv4_h { bit<8> ttl; bit<8> p; }",
        &format!("header ipv4_h {{ bit<8> ttl; bit<8> p; }}\nheader wide_h {{ {fields}}}"),
    );
    let (ok, r) = compile(&text);
    assert!(ok, "{r}");
    let dup = text.replace("bit<8> f19999;", "bit<8> f7;");
    let (ok, r) = compile(&dup);
    assert!(!ok);
    assert!(r.contains("duplicate field `f7` in `wide_h`"), "{r}");
    let locals: String = (0..8_000)
        .map(|i| format!("bit<8> v{i} = hdr.ipv4.ttl + {};\n", i % 200))
        .collect();
    let (ok, r) = compile(&program(&format!("{locals}hdr.ipv4.p = v7999;")));
    assert!(ok, "{r}");
}

#[test]
fn nul_bytes_give_one_error_and_bounded_output() {
    let text = "\0".repeat(100_000);
    let (sm, parsed) = load_str("nul.p4", &text, &LoadOptions::default());
    assert_eq!(parsed.diagnostics.error_count(), 1);
    let r = parsed.diagnostics.render(&sm);
    assert!(
        r.starts_with("error: 100000 unexpected characters `\\u{0}"),
        "{r}"
    );
    assert!(r.len() < 2_000, "{} bytes", r.len());
}

#[test]
fn a_line_of_dollars_is_one_error() {
    let text = format!("{}\n", "$".repeat(20_000));
    let (sm, parsed) = load_str("d.p4", &text, &LoadOptions::default());
    assert_eq!(parsed.diagnostics.error_count(), 1);
    assert!(parsed.diagnostics.render(&sm).len() < 2_000);
}

#[test]
fn errors_are_capped_per_line_and_per_file() {
    // 20,000 separate errors on one line: 3 shown, the rest counted.
    let text = format!("{}\n", "$ ".repeat(20_000));
    let (sm, parsed) = load_str("d.p4", &text, &LoadOptions::default());
    assert_eq!(parsed.diagnostics.error_count(), 20_000);
    let r = parsed.diagnostics.render(&sm);
    assert_eq!(
        r.matches("error: unexpected character `$`").count(),
        3,
        "{r}"
    );
    assert!(r.ends_with("note: 19997 more error(s) not shown (at most 100 diagnostics are printed, and at most 3 per source line)\n"), "{r}");
    assert!(r.len() < 4_000, "{} bytes", r.len());
    // One error on each of 20,000 lines: 100 shown.
    let text = "$\n".repeat(20_000);
    let (sm, parsed) = load_str("d.p4", &text, &LoadOptions::default());
    let r = parsed.diagnostics.render(&sm);
    assert_eq!(r.matches("error: unexpected character `$`").count(), 100);
    assert!(r.contains("note: 19900 more error(s) not shown"), "{r}");
}

#[test]
fn a_long_line_is_shown_as_a_window() {
    let text = format!("const bit<8> X = {}$;\n", "1 + ".repeat(25_000));
    let (sm, parsed) = load_str("w.p4", &text, &LoadOptions::default());
    let r = parsed.diagnostics.render(&sm);
    let code = r
        .lines()
        .find(|l| l.starts_with("1 | "))
        .expect("the source line");
    assert!(
        code.starts_with("1 | ...") && code.ends_with("$;"),
        "{code}"
    );
    assert!(code.len() < 200, "{code}");
    // The caret still points at the `$`.
    let caret = r.lines().find(|l| l.contains('^')).expect("caret line");
    assert_eq!(caret.find('^'), code.find('$'), "{r}");
}

fn include_error(target: &str) -> String {
    let dir = tempdir("inc");
    let main = dir.join("main.p4");
    std::fs::write(&main, format!("#include \"{target}\"\n")).unwrap();
    let (sm, parsed) = load_file(&main, &LoadOptions::default());
    parsed.diagnostics.render(&sm)
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pisa-p4-limits-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn including_a_directory_says_so() {
    let dir = tempdir("dir");
    let r = include_error(&dir.display().to_string());
    assert!(r.contains("is a directory, not a P4 source file"), "{r}");
    assert!(!r.contains("cannot find"), "{r}");
}

#[cfg(unix)]
#[test]
fn including_a_fifo_does_not_block() {
    let dir = tempdir("fifo");
    let fifo = dir.join("pipe.p4");
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo unavailable: skipped");
        return;
    }
    let r = include_error(&fifo.display().to_string());
    assert!(r.contains("is a FIFO, not a regular file"), "{r}");
    // The root file too.
    let (sm, parsed) = load_file(&fifo, &LoadOptions::default());
    assert!(parsed.diagnostics.render(&sm).contains("is a FIFO"));
}

#[cfg(target_os = "linux")]
#[test]
fn including_dev_zero_or_proc_files_is_refused_without_echoing_them() {
    let r = include_error("/dev/zero");
    assert!(
        r.contains("`/dev/zero` is a character device, not a regular file"),
        "{r}"
    );
    std::env::set_var("PISA_P4_SECRET_MARKER", "do-not-print-me");
    let r = include_error("/proc/self/environ");
    assert!(r.contains("is a special file"), "{r}");
    assert!(!r.contains("do-not-print-me"), "{r}");
    let r = include_error("/proc/self/status");
    assert!(r.contains("is a special file"), "{r}");
    // As the root file too.
    let (sm, parsed) = load_file(Path::new("/dev/zero"), &LoadOptions::default());
    assert!(parsed.diagnostics.render(&sm).contains("character device"));
}

#[test]
fn binary_include_is_refused() {
    let dir = tempdir("bin");
    std::fs::write(dir.join("blob.p4"), b"header h_t { bit<8> x; }\0\0\0").unwrap();
    let r = include_error(&dir.join("blob.p4").display().to_string());
    assert!(r.contains("contains NUL bytes"), "{r}");
}

#[test]
fn unterminated_comment_is_reported_once_at_its_start() {
    let text = "#include <core.p4>\nstruct s_t {\n  bit<8> a; /* open\n  bit<8> b;\n}\n#include <tna.p4>\nheader h_t { foo_t x; }\n";
    let (sm, parsed) = load_str("c.p4", text, &LoadOptions::default());
    let r = parsed.diagnostics.render(&sm);
    assert_eq!(parsed.diagnostics.len(), 1, "{r}");
    assert!(
        r.starts_with("error: unterminated comment\n --> c.p4:3:13\n"),
        "{r}"
    );
    assert!(r.contains("^^ this `/*` has no matching `*/`"), "{r}");
}

#[test]
fn cr_only_line_endings_are_line_endings() {
    let text = program("hdr.ipv4.ttl = hdr.ipv4.ttl - 1;").replace('\n', "\r");
    let (ok, r) = compile(&text);
    assert!(ok, "{r}");
    // And errors point at the right line.
    let text = program("hdr.ipv4.ttl = nope;").replace('\n', "\r");
    let (ok, r) = compile(&text);
    assert!(!ok);
    assert!(r.contains("nope"), "{r}");
    assert!(r.contains("--> t.p4:14:"), "{r}");
}

#[test]
fn compile_file_reports_a_missing_file() {
    let r = compile_file(Path::new("/nonexistent/x.p4"), &CompileOptions::default())
        .expect_err("fails")
        .render();
    assert!(
        r.starts_with("error: cannot read `/nonexistent/x.p4`"),
        "{r}"
    );
}

/// `meta_t` holding `s{n-1}`, where `s0` has a byte and each `s{i}` one field of type
/// `s{i-1}`: structs `n + 1` levels deep (with `meta_t`).
fn nested_structs(n: usize) -> String {
    let structs: String = std::iter::once("struct s0 { bit<8> x; }\n".to_string())
        .chain((1..n).map(|i| format!("struct s{i} {{ s{} a; }}\n", i - 1)))
        .collect();
    program("").replace(
        "struct meta_t {}",
        &format!("{structs}struct meta_t {{ s{} deep; }}", n - 1),
    )
}

/// Struct nesting is bounded (the lowering names each field by its whole path, so memory grows
/// with the square of the depth: 20,000 levels took 766 MB): 256 levels compile, 257 and
/// 20,000 are refused at the first field that goes too deep, with the limit.
#[test]
fn struct_nesting_is_limited() {
    let (ok, r) = compile(&nested_structs(255));
    assert!(ok, "{r}");
    for (n, at) in [(256, "meta_t"), (20_000, "s256")] {
        let (ok, r) = compile(&nested_structs(n));
        assert!(!ok, "{n} levels");
        assert_eq!(
            first_line(&r),
            format!(
                "error: `{at}` nests structs and headers 257 levels deep: pisa allows at most 256"
            ),
            "{r}"
        );
        assert!(r.contains("--> t.p4:"), "{r}");
        assert!(r.contains("256 levels deep"), "{r}");
        // Reported once: the types built on it, and the passes after, stop at the limit.
        assert_eq!(r.matches("nests structs").count(), 1, "{r}");
        assert!(!r.contains("no field"), "{r}");
    }
}

/// `meta_t` holding `w{n-1}`, where `w0` has a byte and each `w{i}` two fields of type
/// `w{i-1}`: 3·2^i - 1 members (fields and nested structs) from a few hundred bytes.
fn doubling_structs(n: usize) -> String {
    let structs: String = std::iter::once("struct w0 { bit<8> x; }\n".to_string())
        .chain((1..n).map(|i| format!("struct w{i} {{ w{0} a; w{0} b; }}\n", i - 1)))
        .collect();
    program("").replace(
        "struct meta_t {}",
        &format!("{structs}struct meta_t {{ w{} wide; }}", n - 1),
    )
}

/// Struct width is bounded as well as depth (a struct of two of the one before, 40 levels,
/// has 2^40 fields: it exhausted memory): the type past 65,536 members is refused once, where
/// it is declared, and nothing after lays it out (or reports the fields it lost).
#[test]
fn struct_width_is_limited() {
    let (ok, r) = compile(&doubling_structs(8));
    assert!(ok, "{r}");
    for n in [18, 40] {
        let (ok, r) = compile(&doubling_structs(n));
        assert!(!ok, "{n} levels");
        assert_eq!(
            first_line(&r),
            "error: `w15` flattens into 98303 members (fields and nested structs): pisa allows at \
             most 65536 in one struct, header or union type",
            "{r}"
        );
        assert!(r.contains("--> t.p4:"), "{r}");
        assert_eq!(r.matches("flattens into").count(), 1, "{r}");
        assert!(!r.contains("no field"), "{r}");
    }
}

/// Actions `a0` … `a{depth}` where each calls the next `fan` times with swapped `inout`
/// arguments, called from `apply` (inlined: 2·fan^depth bodies).
fn fanning_actions(depth: usize, fan: usize) -> String {
    let mut actions =
        format!("action a{depth}(inout bit<8> x, inout bit<8> y) {{ x = x + 1; y = y |+| 1; }}\n");
    for d in (0..depth).rev() {
        let calls: String = (0..fan)
            .map(|k| format!("a{}({}); ", d + 1, if k % 2 == 0 { "x, y" } else { "y, x" }))
            .collect();
        actions.push_str(&format!(
            "action a{d}(inout bit<8> x, inout bit<8> y) {{ {calls}}}\n"
        ));
    }
    program("a0(hdr.ipv4.ttl, hdr.ipv4.p);")
        .replace("    apply {", &format!("{actions}    apply {{"))
}

/// Inlining is bounded in width, not only depth: actions calling the next three times, twelve
/// levels deep (half a million bodies from a kilobyte) are refused at the body past the limit,
/// once, in well under a second.
#[test]
fn inlining_is_limited_in_all() {
    let (ok, r) = compile(&fanning_actions(12, 3));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: inlining this program makes more than 4096 parser, control and action bodies \
         (pisa inlines at most 4096)",
        "{r}"
    );
    assert_eq!(r.matches("inlining this program").count(), 1, "{r}");
}

/// A long chain of actions calling actions is not recursion: the error says how deep, not
/// "does a control apply itself?".
#[test]
fn a_deep_action_chain_is_not_called_recursion() {
    let (ok, r) = compile(&fanning_actions(40, 1));
    assert!(!ok);
    assert!(r.contains("nest more than 32 levels deep"), "{r}");
    assert!(!r.contains("apply itself?"), "{r}");
}

/// Functions `f0` … `f{depth}` where each calls the next `fan` times.
fn fanning_functions(depth: usize, fan: usize) -> String {
    let mut fs = format!("void f{depth}(inout bit<8> x) {{ x = x + 1; }}\n");
    for d in (0..depth).rev() {
        let calls = format!("f{}(x); ", d + 1).repeat(fan);
        fs.push_str(&format!("void f{d}(inout bit<8> x) {{ {calls}}}\n"));
    }
    program("f0(hdr.ipv4.ttl);").replace("struct meta_t {}", &format!("struct meta_t {{}}\n{fs}"))
}

/// Function inlining is bounded in all too (it runs on the syntax tree before the lowering's
/// own limit): three calls of the next, twelve deep, is refused once.
#[test]
fn function_inlining_is_limited_in_all() {
    // 121 calls inline (the program then needs more stages than a Tofino has).
    let (_, r) = compile(&fanning_functions(4, 3));
    assert!(r.contains("stages"), "{r}");
    assert!(!r.contains("function calls makes more"), "{r}");
    let (ok, r) = compile(&fanning_functions(12, 3));
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: inlining this program's function calls makes more than 10000 bodies (pisa \
         inlines at most 10000)",
        "{r}"
    );
    assert_eq!(r.matches("function calls makes more").count(), 1, "{r}");
}

/// Tuple types are bounded as structs are: typedefs of tuples of two of the one before, forty
/// deep, built the whole type (2^40 members) and exhausted memory; the tuple past 65,536 members
/// is refused, once, before it is built.
#[test]
fn tuple_width_is_limited() {
    let defs: String = std::iter::once("typedef tuple<bit<8>, bit<8>> t0;\n".to_string())
        .chain((1..40).map(|i| format!("typedef tuple<t{0}, t{0}> t{i};\n", i - 1)))
        .collect();
    let text = program("").replace(
        "struct meta_t {}",
        &format!("{defs}struct meta_t {{ t39 wide; }}"),
    );
    let (ok, r) = compile(&text);
    assert!(!ok);
    assert_eq!(
        first_line(&r),
        "error: a tuple type that flattens into 131071 members (fields and nested tuples or \
         structs): pisa allows at most 65536 in one type",
        "{r}"
    );
    assert_eq!(r.matches("flattens into").count(), 1, "{r}");
}

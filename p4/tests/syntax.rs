//! Golden tests of the syntax half of the frontend, in the style of rust-analyzer:
//! `tests/syntax/ok/*.p4` must load without diagnostics and their AST dump must equal the
//! `.txt` next to them; `tests/syntax/err/*.p4` must fail and their rendered diagnostics must
//! equal the `.txt` next to them. Run with `UPDATE_EXPECT=1` to (re)write the expectations.
//! A second test cuts every `ok/` file at many points and checks the parser never panics.

use std::path::{Path, PathBuf};

use p4::{load_file, load_str, LoadOptions};

fn syntax_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax")
}

fn cases(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(syntax_dir().join(kind))
        .expect("tests/syntax dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|e| e == "p4").unwrap_or(false))
        .collect();
    v.sort();
    v
}

fn opts() -> LoadOptions {
    LoadOptions {
        include_dirs: vec![],
        defines: vec![("__TARGET_TOFINO__".to_string(), "1".to_string())],
        ..Default::default()
    }
}

/// The options for `case`: Tofino 2 for the `t2na_*` cases (T2NA runs on Tofino 2 only).
fn opts_for(case: &Path) -> LoadOptions {
    let t2 = case
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("t2na"));
    let mut o = opts();
    if t2 {
        o.defines = vec![("__TARGET_TOFINO__".to_string(), "2".to_string())];
    }
    o
}

/// The path as shown in diagnostics: relative to the crate, so expectations are portable.
fn rel(path: &Path) -> PathBuf {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Compares `actual` with the `.txt` next to `case`, or rewrites it under UPDATE_EXPECT=1.
/// Returns a failure description.
fn check_expectation(case: &Path, actual: &str) -> Option<String> {
    let expect_path = case.with_extension("txt");
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&expect_path, actual).expect("write expectation");
        return None;
    }
    let expected = std::fs::read_to_string(&expect_path).unwrap_or_default();
    if expected == actual {
        return None;
    }
    Some(format!(
        "{}: output differs from {} (run with UPDATE_EXPECT=1 to accept)\n--- expected\n{expected}\n--- actual\n{actual}",
        case.display(),
        expect_path.display()
    ))
}

/// Runs `f` with the crate directory as working directory (relative paths in diagnostics).
fn in_crate_dir<T>(f: impl FnOnce() -> T) -> T {
    std::env::set_current_dir(env!("CARGO_MANIFEST_DIR")).expect("chdir");
    f()
}

#[test]
fn ok_cases_parse_and_match_their_dumps() {
    let mut failures = Vec::new();
    let list = cases("ok");
    assert!(list.len() >= 5, "ok/ cases missing");
    for case in list {
        let (sm, parsed) = in_crate_dir(|| load_file(&rel(&case), &opts_for(&case)));
        if !parsed.diagnostics.is_empty() {
            failures.push(format!(
                "{}: unexpected diagnostics\n{}",
                case.display(),
                parsed.diagnostics.render(&sm)
            ));
            continue;
        }
        let user_decls = parsed
            .program
            .decls
            .iter()
            .filter(|d| !sm.name(d.span.file).starts_with("<builtin>"));
        let dump = p4::parser::dump::dump_decls(user_decls);
        if let Some(f) = check_expectation(&case, &dump) {
            failures.push(f);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn err_cases_report_the_expected_diagnostics() {
    let mut failures = Vec::new();
    let list = cases("err");
    assert!(list.len() >= 10, "err/ cases missing");
    for case in list {
        let (sm, parsed) = in_crate_dir(|| load_file(&rel(&case), &opts_for(&case)));
        if !parsed.diagnostics.has_errors() {
            failures.push(format!("{}: expected errors, got none", case.display()));
            continue;
        }
        let rendered = parsed.diagnostics.render(&sm);
        if let Some(f) = check_expectation(&case, &rendered) {
            failures.push(f);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn truncated_inputs_never_panic() {
    for case in cases("ok").into_iter().chain(cases("err")) {
        let text = std::fs::read_to_string(&case).expect("read case");
        let step = (text.len() / 100).max(1);
        let name = rel(&case).to_string_lossy().into_owned();
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                let (_sm, _parsed) = in_crate_dir(|| load_str(&name, &text[..cut], &opts()));
            }
            cut += step;
        }
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let deep = format!(
        "const bit<8> X = {}1{};",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let (sm, parsed) = load_str("deep.p4", &deep, &LoadOptions::default());
    let r = parsed.diagnostics.render(&sm);
    assert!(r.contains("program nested deeper than 500 levels"), "{r}");
    let blocks = format!(
        "control C() {{ apply {{ {} }} }}",
        "{".repeat(3000) + &"}".repeat(3000)
    );
    let (sm, parsed) = load_str("deep2.p4", &blocks, &LoadOptions::default());
    assert!(parsed
        .diagnostics
        .render(&sm)
        .contains("program nested deeper than 500 levels"));
}

mod prop {
    use proptest::prelude::*;

    /// Pieces of P4 that, glued together at random, exercise every parser path.
    const VOCAB: &[&str] = &[
        "header",
        "struct",
        "control",
        "parser",
        "state",
        "transition",
        "select",
        "apply",
        "table",
        "key",
        "actions",
        "default_action",
        "entries",
        "const",
        "action",
        "extern",
        "enum",
        "typedef",
        "if",
        "else",
        "switch",
        "default",
        "return",
        "exit",
        "bit",
        "<",
        ">",
        ">>",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ":",
        ",",
        ".",
        "=",
        "==",
        "&&&",
        "..",
        "++",
        "|+|",
        "@name",
        "@pragma x y\n",
        "\"s\"",
        "8w3",
        "x",
        "y",
        "T",
        "_",
        "?",
        "!",
        "-",
        "#define A B\n",
        "#if 1\n",
        "#endif\n",
        "#include <tna.p4>\n",
        "\n",
        "/*",
        "*/",
        "//",
        "Register<bit<32>, bit<16>>",
        "error.NoError",
        "this",
        "value_set",
        "tuple",
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        #[test]
        fn token_soup_never_panics(words in proptest::collection::vec(0..VOCAB.len(), 0..80)) {
            let text: Vec<&str> = words.iter().map(|&i| VOCAB[i]).collect();
            p4::fuzz_parse(text.join(" ").as_bytes());
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            p4::fuzz_parse(&bytes);
        }
    }
}

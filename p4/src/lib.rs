//! pisa's P4_16 TNA frontend: preprocessing, lexing and parsing into an AST (the syntax
//! half), then checking and lowering to the pipeline IR (the checker's modules).
//!
//! Entry points: [`parse_file`] and [`parse_str`] (the AST or the diagnostics), and
//! [`load_file`] / [`load_str`] (the partial AST and ALL diagnostics, warnings included).

pub mod ast;
pub mod builtin;
pub mod check;
pub mod compile;
pub mod diag;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod resources;
pub mod source;

use std::path::{Path, PathBuf};

use diag::{Diagnostic, Diagnostics};
use source::{FileId, SourceMap};

/// What the caller controls when loading a program.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// `-I` directories searched for `#include "..."` and `#include <...>`.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE` definitions (the driver adds `__TARGET_TOFINO__`; loading without it
    /// defines it to 1).
    pub defines: Vec<(String, String)>,
    /// `#include` only the bundled headers, never a file of the host (a program received over
    /// the network, e.g. a P4Runtime device config).
    pub builtin_includes_only: bool,
}

/// The full outcome of loading a program.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The declarations that could be read (complete when there are no errors).
    pub program: ast::Program,
    /// Every diagnostic, in order: preprocessor, lexer, parser.
    pub diagnostics: Diagnostics,
}

/// Preprocess + lex + parse a P4 file. Returns the source map and either the AST or
/// diagnostics (which then contain at least one error).
pub fn parse_file(
    path: &Path,
    opts: &LoadOptions,
) -> (SourceMap, Result<ast::Program, Diagnostics>) {
    let (sm, parsed) = load_file(path, opts);
    (sm, into_result(parsed))
}

/// Like [`parse_file`] for text already in memory; `name` is shown in diagnostics and
/// relative `#include "..."` resolve from its directory.
pub fn parse_str(
    name: &str,
    text: &str,
    opts: &LoadOptions,
) -> (SourceMap, Result<ast::Program, Diagnostics>) {
    let (sm, parsed) = load_str(name, text, opts);
    (sm, into_result(parsed))
}

/// Loads a file; never fails (an unreadable file is an error diagnostic).
pub fn load_file(path: &Path, opts: &LoadOptions) -> (SourceMap, Parsed) {
    match source::read_source(path) {
        Ok(text) => load(&path.to_string_lossy(), &text, Some(path), opts),
        Err(why) => failed(why),
    }
}

/// Loads text held in memory.
pub fn load_str(name: &str, text: &str, opts: &LoadOptions) -> (SourceMap, Parsed) {
    load(name, text, Some(Path::new(name)), opts)
}

fn load(name: &str, text: &str, path: Option<&Path>, opts: &LoadOptions) -> (SourceMap, Parsed) {
    let mut sm = SourceMap::new();
    let root: FileId = sm.add(name, text);
    let parsed = if opts.defines.iter().any(|(n, _)| n == TARGET_MACRO) {
        parser::parse_root(&mut sm, root, path, opts)
    } else {
        // The architecture headers pick their device constants from the target, as Intel's do:
        // a caller that names none gets Tofino 1 (the compile driver always names one).
        let mut with_target = opts.clone();
        with_target
            .defines
            .push((TARGET_MACRO.to_string(), "1".to_string()));
        parser::parse_root(&mut sm, root, path, &with_target)
    };
    (sm, parsed)
}

/// The macro bf-p4c's driver defines to the Tofino generation (1 or 2) being compiled for;
/// `tna.p4` and `t2na.p4` read it.
pub const TARGET_MACRO: &str = "__TARGET_TOFINO__";

fn failed(message: String) -> (SourceMap, Parsed) {
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(Diagnostic::error(message));
    (
        SourceMap::new(),
        Parsed {
            program: ast::Program { decls: Vec::new() },
            diagnostics,
        },
    )
}

fn into_result(parsed: Parsed) -> Result<ast::Program, Diagnostics> {
    if parsed.diagnostics.has_errors() {
        Err(parsed.diagnostics)
    } else {
        Ok(parsed.program)
    }
}

/// Fuzzing entry point: loads arbitrary bytes (lossily decoded as UTF-8) as a P4 file, with
/// the built-in headers available, and renders every diagnostic. Must never panic.
pub fn fuzz_parse(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let opts = LoadOptions {
        include_dirs: Vec::new(),
        defines: vec![("__TARGET_TOFINO__".to_string(), "1".to_string())],
        builtin_includes_only: true,
    };
    // No path on disk: `#include "x"` only finds the built-in headers, never real files.
    let (sm, parsed) = load("fuzz.p4", &text, None, &opts);
    let rendered = parsed.diagnostics.render(&sm);
    rendered.len() + parsed.program.decls.len()
}

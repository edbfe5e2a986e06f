//! The `compile` driver the CLI calls: preprocess (with `__TARGET_TOFINO__` defined), parse,
//! check and lower to the pipeline IR, then run the Tofino resource check, with every
//! diagnostic pointing at the P4 source.

use std::path::{Path, PathBuf};

use pipeline::ir::{self, Target};

use crate::check::{annotations, Env};
use crate::diag::{Diagnostic, Diagnostics};
use crate::lower::{self, SourceSpans};
use crate::resources::{self, ObjectRef, ResourceIssue};
use crate::source::{SourceMap, Span};
use crate::LoadOptions;

/// What the caller controls.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// `-I` directories.
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE` definitions.
    pub defines: Vec<(String, String)>,
    pub target: Target,
    /// bf-p4c's `--disable-parse-depth-limit`: the Tofino 1 egress parse depth limit is
    /// reported as a warning, not an error (the SDE's switch profiles are built with it).
    pub disable_parse_depth_limit: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            include_dirs: Vec::new(),
            defines: Vec::new(),
            target: Target::Tofino1,
            disable_parse_depth_limit: false,
        }
    }
}

/// A program that compiled.
#[derive(Debug)]
pub struct Compiled {
    pub program: ir::Program,
    /// Warnings from every pass.
    pub warnings: Diagnostics,
    pub sources: SourceMap,
    /// IR objects → source spans (for tools that point back at the P4).
    pub spans: SourceSpans,
    /// The resource check's report (stages, memories, ...).
    pub resources: Option<resources::Report>,
}

/// A program that did not compile: the diagnostics (at least one error) and the sources they
/// point into.
#[derive(Debug, thiserror::Error)]
#[error("P4 compilation failed with {} error(s)", .diagnostics.error_count())]
pub struct CompileFailure {
    pub sources: SourceMap,
    pub diagnostics: Diagnostics,
}

impl CompileFailure {
    /// The diagnostics rendered like rustc.
    pub fn render(&self) -> String {
        self.diagnostics.render(&self.sources)
    }
}

/// The value of `__TARGET_TOFINO__` for `target`.
fn target_generation(target: Target) -> &'static str {
    match target {
        Target::Tofino1 => "1",
        Target::Tofino2 => "2",
    }
}

/// The loader options (include path, defines with the target macro) a compile uses.
pub fn load_options(opts: &CompileOptions) -> LoadOptions {
    let mut defines = opts.defines.clone();
    if !defines.iter().any(|(n, _)| n == crate::TARGET_MACRO) {
        defines.push((
            crate::TARGET_MACRO.to_string(),
            target_generation(opts.target).to_string(),
        ));
    }
    LoadOptions {
        include_dirs: opts.include_dirs.clone(),
        defines,
        builtin_includes_only: false,
    }
}

/// A `-D __TARGET_TOFINO__=N` that contradicts the target: the architecture headers would pick
/// one chip's constants while the switch models the other (a silent misparse), so it is refused.
fn target_define_conflict(opts: &CompileOptions) -> Option<CompileFailure> {
    let want = target_generation(opts.target);
    let (_, v) = opts
        .defines
        .iter()
        .find(|(n, v)| n == crate::TARGET_MACRO && v.trim() != want)?;
    let mut diagnostics = Diagnostics::new();
    diagnostics.push(
        Diagnostic::error(format!(
            "`-D {}={v}` contradicts the target {} (which defines it to {want})",
            crate::TARGET_MACRO,
            opts.target.name()
        ))
        .with_help("drop the -D: the target defines it, or choose the target that matches it"),
    );
    Some(CompileFailure {
        sources: SourceMap::new(),
        diagnostics,
    })
}

/// Compiles the P4 file at `path`.
pub fn compile_file(path: &Path, opts: &CompileOptions) -> Result<Compiled, CompileFailure> {
    if let Some(f) = target_define_conflict(opts) {
        return Err(f);
    }
    let (sm, parsed) = crate::load_file(path, &load_options(opts));
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    finish(&name, sm, parsed, opts)
}

/// Compiles P4 text held in memory; `name` is shown in diagnostics.
pub fn compile_str(
    name: &str,
    text: &str,
    opts: &CompileOptions,
) -> Result<Compiled, CompileFailure> {
    compile_str_with(name, text, opts, &load_options(opts))
}

/// [`compile_str`] loading with `load` (made by [`load_options`], e.g. with
/// `builtin_includes_only` set for a program received over the network).
pub fn compile_str_with(
    name: &str,
    text: &str,
    opts: &CompileOptions,
    load: &LoadOptions,
) -> Result<Compiled, CompileFailure> {
    if let Some(f) = target_define_conflict(opts) {
        return Err(f);
    }
    let (sm, parsed) = crate::load_str(name, text, load);
    let stem = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    finish(&stem, sm, parsed, opts)
}

/// Like [`compile_file`] without the resource check (`resources` is `None`, stages are 0): for
/// tests and tools that look at the lowering alone.
pub fn lower_file(path: &Path, opts: &CompileOptions) -> Result<Compiled, CompileFailure> {
    if let Some(f) = target_define_conflict(opts) {
        return Err(f);
    }
    let (sm, parsed) = crate::load_file(path, &load_options(opts));
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    front(&name, sm, parsed, opts.target)
}

/// Like [`compile_str`] without the resource check.
pub fn lower_str(
    name: &str,
    text: &str,
    opts: &CompileOptions,
) -> Result<Compiled, CompileFailure> {
    if let Some(f) = target_define_conflict(opts) {
        return Err(f);
    }
    let (sm, parsed) = crate::load_str(name, text, &load_options(opts));
    let stem = Path::new(name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    front(&stem, sm, parsed, opts.target)
}

/// Prefix of the diagnostic reported when the checker thread panics.
const INTERNAL_ERROR: &str = "internal error:";

/// Stack for checking and lowering: both recurse over the AST, which the parser lets nest
/// hundreds of levels deep.
const LOWER_STACK_BYTES: usize = 256 << 20;

/// Runs `f` on a thread with a large stack (falls back to the current thread when none can be
/// started); a panic in `f` is resumed here. For any work that recurses over a program as deep
/// as the frontend lets it be (e.g. building a switch from a lowered program: IR checks, flat
/// compile, native codegen), whatever thread it is called from.
pub fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let mut f = Some(f);
    let spawned = std::thread::scope(|scope| {
        let f = &mut f;
        std::thread::Builder::new()
            .name("p4-resources".into())
            .stack_size(LOWER_STACK_BYTES)
            .spawn_scoped(scope, move || f.take().map(|f| f()))
            .ok()
            .map(|h| h.join())
    });
    match spawned {
        Some(Ok(Some(v))) => v,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        _ => match f.take() {
            Some(f) => f(),
            None => unreachable!("the closure ran on the thread"),
        },
    }
}

/// Checks and lowers on a thread with a large stack (deep but legal nesting must not overflow),
/// and drops the AST there too (dropping a deep expression recurses as well).
fn check_and_lower(
    program: crate::ast::Program,
    sm: &SourceMap,
    target: Target,
    diags: &mut Diagnostics,
) -> Option<lower::Lowered> {
    let run = |program: &mut crate::ast::Program, diags: &mut Diagnostics| {
        crate::check::named_args::order_arguments(program, diags);
        crate::check::body_rules::check(program, diags);
        crate::check::newtypes::check(program, diags);
        crate::check::inline_functions::inline_functions(program, diags);
        crate::check::control_returns::rewrite(program);
        crate::check::table_hit::rewrite(program);
        if diags.has_errors() {
            return None;
        }
        let program = &*program;
        let env = Env::new(program, sm, diags);
        annotations::report_ignored(&env, program, diags);
        lower::lower_program(&env, target, diags)
    };
    let mut slot = Some(program);
    let spawned = std::thread::scope(|scope| {
        let slot = &mut slot;
        std::thread::Builder::new()
            .name("p4-lower".into())
            .stack_size(LOWER_STACK_BYTES)
            .spawn_scoped(scope, move || {
                let mut local = Diagnostics::new();
                let mut program = slot
                    .take()
                    .unwrap_or(crate::ast::Program { decls: Vec::new() });
                let out = run(&mut program, &mut local);
                drop(program);
                (out, local)
            })
            .ok()
            .map(|h| h.join())
    });
    match spawned {
        Some(Ok((out, local))) => {
            diags.extend(local);
            out
        }
        Some(Err(_)) => {
            diags.push(Diagnostic::error(format!(
                "{INTERNAL_ERROR} the checker crashed (please report this program)"
            )));
            None
        }
        // No thread available: run here.
        None => {
            let mut program = slot
                .take()
                .unwrap_or(crate::ast::Program { decls: Vec::new() });
            run(&mut program, diags)
        }
    }
}

/// Parse diagnostics checked, then check + lower.
fn front(
    name: &str,
    sm: SourceMap,
    parsed: crate::Parsed,
    target: Target,
) -> Result<Compiled, CompileFailure> {
    let mut diags = parsed.diagnostics;
    if diags.has_errors() {
        return Err(CompileFailure {
            sources: sm,
            diagnostics: diags,
        });
    }
    let program = parsed.program;
    let lowered = check_and_lower(program, &sm, target, &mut diags);
    match lowered.filter(|_| !diags.has_errors()) {
        Some(mut l) => {
            l.program.name = name.to_string();
            Ok(Compiled {
                program: l.program,
                warnings: diags,
                sources: sm,
                spans: l.spans,
                resources: None,
            })
        }
        None => Err(CompileFailure {
            sources: sm,
            diagnostics: diags,
        }),
    }
}

fn finish(
    name: &str,
    sm: SourceMap,
    parsed: crate::Parsed,
    opts: &CompileOptions,
) -> Result<Compiled, CompileFailure> {
    let target = opts.target;
    let mut c = front(name, sm, parsed, target)?;
    // The resource check walks expressions recursively too.
    let program = &mut c.program;
    let hints: Vec<_> = c
        .spans
        .pipelines
        .iter()
        .map(|s| resources::layout::Hints {
            disable_parse_depth_limit: opts.disable_parse_depth_limit,
            ..s.hints.clone()
        })
        .collect();
    match on_big_stack(move || resources::place_with_hints(program, target, &hints)) {
        Ok((report, warnings)) => {
            for w in &warnings {
                c.warnings.push(issue_diagnostic(w, &c.spans));
            }
            c.resources = Some(report);
            Ok(c)
        }
        Err(issues) => {
            let mut diags = c.warnings;
            for i in &issues {
                diags.push(issue_diagnostic(i, &c.spans));
            }
            Err(CompileFailure {
                sources: c.sources,
                diagnostics: diags,
            })
        }
    }
}

/// The source span of an IR object, when the lowering recorded one.
pub fn object_span(spans: &SourceSpans, object: ObjectRef) -> Option<Span> {
    match object {
        ObjectRef::Table(p, t) => spans.pipelines.get(p)?.tables.get(t.index()).copied(),
        ObjectRef::RegisterAction(p, r) => spans
            .pipelines
            .get(p)?
            .register_actions
            .get(r.index())
            .copied(),
        ObjectRef::Register(p, r) => spans.pipelines.get(p)?.registers.get(r.index()).copied(),
        ObjectRef::Counter(p, c) => spans.pipelines.get(p)?.counters.get(c.index()).copied(),
        ObjectRef::Gateway {
            pipeline,
            gress,
            index,
        } => {
            let ps = spans.pipelines.get(pipeline)?;
            let g = match gress {
                ir::Gress::Ingress => &ps.ingress,
                ir::Gress::Egress => &ps.egress,
            };
            g.control_ifs.get(index).copied()
        }
        ObjectRef::ParserState {
            pipeline,
            gress,
            state,
        } => {
            let ps = spans.pipelines.get(pipeline)?;
            let g = match gress {
                ir::Gress::Ingress => &ps.ingress,
                ir::Gress::Egress => &ps.egress,
            };
            g.parser_states.get(state).copied()
        }
        ObjectRef::Pipeline(_) => None,
    }
}

fn issue_diagnostic(i: &ResourceIssue, spans: &SourceSpans) -> Diagnostic {
    let d = i.to_diagnostic();
    match object_span(spans, i.object) {
        Some(s) => d.with_primary(s, "here"),
        None => d,
    }
}

/// Fuzzing entry point: arbitrary bytes (lossily decoded) compiled for Tofino 1 with only the
/// built-in headers reachable; renders every diagnostic. Must never panic.
pub fn fuzz_compile(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    let opts = CompileOptions::default();
    // No path on disk: `#include "x"` finds only the built-in headers, never real files.
    let (sm, parsed) = crate::load("fuzz.p4", &text, None, &load_options(&opts));
    match finish("fuzz", sm, parsed, &opts) {
        Ok(c) => c.warnings.render(&c.sources).len() + c.program.pipelines.len(),
        Err(f) => {
            // A crash of the checker thread is turned into a diagnostic for users; the fuzzer
            // must see it as the bug it is.
            if f.diagnostics
                .iter()
                .any(|d| d.message.starts_with(INTERNAL_ERROR))
            {
                panic!("checker crashed on fuzz input");
            }
            f.render().len()
        }
    }
}

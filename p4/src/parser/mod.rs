//! The P4_16 parser: hand-written recursive descent with a Pratt expression parser.
//!
//! It works on the token list of the preprocessed program (every token already carries its
//! ORIGINAL span). P4's type-name/identifier ambiguity is resolved with the set of declared
//! type names (built-in headers included, since they are part of the token stream) plus a
//! scope stack of type parameters. Errors become [`Diagnostic`]s; the parser then skips to
//! a synchronisation point (end of statement, declaration or block) and goes on, so one run
//! reports several independent mistakes.
//!
//! Submodules: `cursor` (token access, expectation errors, recovery), `types`, `expr`,
//! `stmt`, `decl` (top-level and shared declarations), `blocks` (parser states, controls,
//! tables), `annotations`.

mod annotations;
mod blocks;
mod cursor;
mod decl;
pub mod dump;
mod expr;
mod stmt;
mod types;

use std::collections::HashSet;

use crate::ast::Program;
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;
use crate::source::Span;

/// A token of the preprocessed program, with its span in the original source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// A line break separated it from the previous token in the preprocessed text.
    pub newline_before: bool,
    /// Nothing separated it from the previous token in the preprocessed text.
    pub joined: bool,
}

/// Marker error: a diagnostic was already recorded; the caller recovers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fatal;

pub(crate) type PResult<T> = Result<T, Fatal>;

/// Deepest nesting of expressions/statements/types the parser accepts (protects the stack).
pub const MAX_DEPTH: usize = 500;
/// Deepest expression tree the parser builds, counting each link of a left-associative chain
/// (`a + b + c` is 2 deep) and of a postfix chain (`a.b[1].c`), plus the enclosing nesting.
/// The parser reads chains in a loop, but the checker, the lowering, the resource check and
/// the switch's evaluator walk the tree recursively, so its depth is what must be bounded.
pub const MAX_EXPR_DEPTH: usize = 2000;
/// Most arms of one `if` / `else if` chain. The parser reads a chain in a loop and does not
/// count it towards [`MAX_DEPTH`], but the tree it builds is as deep as the chain is long.
pub const MAX_ELSE_IF: usize = 4096;
/// Stack size of the thread the parser runs on: deep (but legal) nesting must not overflow
/// the caller's stack, whatever its size.
const PARSER_STACK_BYTES: usize = 256 << 20;
/// After this many errors the parser stops (the rest would mostly be follow-on noise).
const MAX_ERRORS: usize = 100;

/// The parser state.
pub struct Parser {
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Names declared as types so far (typedefs, headers, structs, enums, externs, parsers,
    /// controls, packages).
    type_names: HashSet<String>,
    /// Type parameters of the enclosing generic declarations.
    type_params: Vec<Vec<String>>,
    depth: usize,
    /// Links of the operator/postfix chains being built around the current position (see
    /// [`MAX_EXPR_DEPTH`]).
    chain: usize,
    /// While > 0, diagnostics are produced but the caller will discard them (speculation).
    speculating: usize,
    /// Token index of the last reported error, so one bad token yields one message.
    last_error_at: Option<usize>,
    gave_up: bool,
}

impl Parser {
    /// A parser over `toks`, which must end with an `Eof` token (one is added if missing).
    pub fn new(mut toks: Vec<Token>) -> Parser {
        if toks
            .last()
            .map(|t| t.kind != TokenKind::Eof)
            .unwrap_or(true)
        {
            let span = toks.last().map(|t| t.span.end()).unwrap_or_default();
            toks.push(Token {
                kind: TokenKind::Eof,
                span,
                newline_before: true,
                joined: false,
            });
        }
        Parser {
            toks,
            pos: 0,
            diags: Vec::new(),
            type_names: HashSet::new(),
            type_params: Vec::new(),
            depth: 0,
            chain: 0,
            speculating: 0,
            last_error_at: None,
            gave_up: false,
        }
    }

    /// Parses a whole program. Always returns the declarations it could read; the
    /// diagnostics say what went wrong.
    pub fn parse_program(mut self) -> (Program, Vec<Diagnostic>) {
        let decls = self.top_level_decls();
        if self.diags.len() >= MAX_ERRORS {
            self.diags.push(Diagnostic::note(format!(
                "stopped after {MAX_ERRORS} errors; fix these and run again"
            )));
        }
        (Program { decls }, self.diags)
    }

    fn is_type_name(&self, name: &str) -> bool {
        self.type_names.contains(name)
            || self.type_params.iter().any(|s| s.iter().any(|p| p == name))
    }

    fn declare_type(&mut self, name: &str) {
        if self.speculating == 0 {
            self.type_names.insert(name.to_string());
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.peek().span;
            self.error_at(
                Diagnostic::error(format!("program nested deeper than {MAX_DEPTH} levels"))
                    .with_primary(span, "the limit is reached here")
                    .with_note(
                        "blocks, `else if`, parentheses, `?:` and unary operators each add a level",
                    ),
            );
            self.gave_up = true;
            self.depth -= 1;
            return Err(Fatal);
        }
        Ok(())
    }

    /// One more link in an operator or postfix chain: fails past [`MAX_EXPR_DEPTH`].
    fn grow_expr(&mut self) -> PResult<()> {
        self.chain += 1;
        if self.depth + self.chain > MAX_EXPR_DEPTH {
            let span = self.peek().span;
            self.error_at(
                Diagnostic::error(format!("expression nested deeper than {MAX_EXPR_DEPTH}"))
                    .with_primary(span, "the limit is reached here")
                    .with_note(
                        "each operator of a chain like `a + b + c` adds a level, as do parentheses, `?:` and `.`/`[]`/calls",
                    )
                    .with_help("split the expression: assign parts of it to local variables"),
            );
            self.gave_up = true;
            return Err(Fatal);
        }
        Ok(())
    }

    fn exit(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Records a diagnostic (at most one per token position, and at most MAX_ERRORS).
    fn error_at(&mut self, d: Diagnostic) {
        // After a limit stopped the parser, what it fails to read next is not in the program.
        if self.gave_up && self.speculating == 0 {
            return;
        }
        if self.last_error_at == Some(self.pos) && self.speculating == 0 {
            return;
        }
        self.last_error_at = Some(self.pos);
        if self.diags.len() >= MAX_ERRORS {
            if !self.gave_up {
                self.gave_up = true;
            }
            return;
        }
        self.diags.push(d);
    }

    /// Runs `f` as pure lookahead: the position and diagnostics are ALWAYS restored; the
    /// result says whether `f` succeeded without errors.
    fn lookahead<T>(&mut self, f: impl FnOnce(&mut Parser) -> PResult<T>) -> bool {
        let pos = self.pos;
        let ok = self.speculate(f).is_some();
        self.pos = pos;
        ok
    }

    /// Runs `f` speculatively: on failure, the position and diagnostics are restored and
    /// `None` is returned.
    fn speculate<T>(&mut self, f: impl FnOnce(&mut Parser) -> PResult<T>) -> Option<T> {
        let pos = self.pos;
        let ndiags = self.diags.len();
        let last = self.last_error_at;
        let depth = self.depth;
        let chain = self.chain;
        let gave_up = self.gave_up;
        self.speculating += 1;
        let r = f(self);
        self.speculating -= 1;
        match r {
            Ok(v) if self.diags.len() == ndiags => Some(v),
            _ => {
                self.pos = pos;
                self.diags.truncate(ndiags);
                self.last_error_at = last;
                self.depth = depth;
                self.chain = chain;
                self.gave_up = gave_up;
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;

/// Preprocesses, lexes and parses the file `root` of `sm` (found at `path` on disk, if it
/// is a real file).
pub fn parse_root(
    sm: &mut crate::source::SourceMap,
    root: crate::source::FileId,
    path: Option<&std::path::Path>,
    opts: &crate::LoadOptions,
) -> crate::Parsed {
    let mut diags = crate::diag::Diagnostics::new();
    let pp_opts = crate::preprocess::PreprocessOptions {
        include_dirs: opts.include_dirs.clone(),
        defines: opts.defines.clone(),
        builtin_includes_only: opts.builtin_includes_only,
    };
    let expanded = crate::preprocess::preprocess(sm, root, path, &pp_opts, &mut diags);
    let toks = tokens(&expanded, &mut diags);
    let (program, parse_diags) = parse_tokens(toks);
    for d in parse_diags {
        // After an unterminated `/*` (reported once by the preprocessor), what the parser
        // misses at the end of the input ("`{` never closed", "expected `;`") is the
        // comment's doing: not reported again.
        if expanded.unterminated_comment && d.message.contains("end of file") {
            continue;
        }
        diags.push(with_macro_note(d, &expanded));
    }
    crate::Parsed {
        program,
        diagnostics: diags,
    }
}

/// Adds "in the expansion of macro `X`" when a diagnostic points at a macro use.
fn with_macro_note(d: Diagnostic, expanded: &crate::preprocess::Expanded) -> Diagnostic {
    let Some(m) = d.primary_span().and_then(|s| expanded.macro_at(s)) else {
        return d;
    };
    let note = format!("in the expansion of macro `{}`: `{}`", m.name, m.expansion);
    d.with_note(note)
}

/// Parses a token list on a thread with a large stack (see [`PARSER_STACK_BYTES`]); falls
/// back to the current thread if no thread can be started.
pub fn parse_tokens(toks: Vec<Token>) -> (Program, Vec<Diagnostic>) {
    let mut slot = Some(toks);
    let spawned = std::thread::scope(|scope| {
        let slot = &mut slot;
        std::thread::Builder::new()
            .name("p4-parser".to_string())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, move || {
                let toks = slot.take().unwrap_or_default();
                Parser::new(toks).parse_program()
            })
            .ok()
            .map(|h| h.join())
    });
    match spawned {
        Some(Ok(result)) => result,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        // No thread could be started: parse here (the tokens were not consumed).
        None => Parser::new(slot.unwrap_or_default()).parse_program(),
    }
}

/// Lexes preprocessed text into tokens with original spans; lexing errors become
/// diagnostics.
pub fn tokens(
    expanded: &crate::preprocess::Expanded,
    diags: &mut crate::diag::Diagnostics,
) -> Vec<Token> {
    let (raw, errors) = crate::lexer::lex(&expanded.text);
    let raw_lo: Vec<u32> = raw.iter().map(|t| t.lo).collect();
    let mut bad: Vec<(u32, Token)> = Vec::new();
    for e in errors {
        let text = expanded
            .text
            .get(e.lo as usize..e.hi as usize)
            .unwrap_or("");
        let span = expanded.map(e.lo, e.hi);
        let label = match e.error {
            crate::lexer::LexError::UnexpectedChar => "not valid in P4",
            crate::lexer::LexError::BadNumber(_) => "malformed literal",
            crate::lexer::LexError::UnterminatedString => "string starts here",
            crate::lexer::LexError::UnterminatedComment => "comment starts here",
        };
        diags.push(with_macro_note(
            Diagnostic::error(e.error.message(text)).with_primary(span, label),
            expanded,
        ));
        bad.push((
            e.lo,
            Token {
                kind: TokenKind::Bad,
                span,
                newline_before: false,
                joined: false,
            },
        ));
    }
    let mut out: Vec<Token> = raw
        .into_iter()
        .map(|t| Token {
            span: expanded.map(t.lo, t.hi),
            kind: t.kind,
            newline_before: t.newline_before,
            joined: t.joined,
        })
        .collect();
    // Each bad piece of text becomes a `Bad` token in its place.
    if !bad.is_empty() {
        let mut merged = Vec::with_capacity(out.len() + bad.len());
        let mut bad = bad.into_iter().peekable();
        for (i, t) in out.drain(..).enumerate() {
            while bad.peek().is_some_and(|(lo, _)| *lo < raw_lo[i]) {
                if let Some((_, tok)) = bad.next() {
                    merged.push(tok);
                }
            }
            merged.push(t);
        }
        out = merged;
    }
    out
}

//! The C preprocessor subset that TNA programs use.
//!
//! `#include` (local files, `-I` directories, and our built-in `core.p4` / `tna.p4` / `t2na.p4`),
//! object-like and function-like `#define`s (variadic ones too: `...` as `__VA_ARGS__`, GNU's
//! `name...` and `, ## __VA_ARGS__`), the predefined macros (`predefined`), `#undef`, `#if`/`#ifdef`/`#ifndef`/`#elif`/
//! `#else`/`#endif` with integer expressions and `defined(X)`, `#pragma once`, `#error` and
//! `#warning`. The output is one text plus a segment map, so every byte of it (and so every
//! token) maps back to a span in an ORIGINAL file; text produced by a macro maps to the macro's
//! use site.

mod paste;
mod predefined;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::builtin;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{FileId, SourceMap, Span};

/// What the caller controls: include search path and `-D` definitions.
#[derive(Clone, Debug, Default)]
pub struct PreprocessOptions {
    pub include_dirs: Vec<PathBuf>,
    /// `-D NAME=VALUE` pairs (`-D NAME` is `("NAME", "1")`).
    pub defines: Vec<(String, String)>,
    /// Only the bundled headers may be included (no file of the host, whatever the path):
    /// for programs received over the network.
    pub builtin_includes_only: bool,
}

/// Include nesting deeper than this is reported as an error (it is almost surely a cycle the
/// guard logic did not catch, or a pathological input).
const MAX_INCLUDE_DEPTH: usize = 64;
/// `#include`s processed in all, whatever their depth: files that each include the next twice
/// stay shallow but double the work at every level.
const MAX_INCLUDES: usize = 10_000;
/// Macro expansion nesting limit.
const MAX_EXPANSION_DEPTH: usize = 64;
/// Upper bound on the text one macro use may expand to.
const MAX_EXPANSION_BYTES: usize = 1 << 20;

/// How a piece of the output text maps back to the sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SegmentKind {
    /// Copied from `file` starting at byte `orig_lo`.
    Verbatim { file: FileId, orig_lo: u32 },
    /// Produced by expanding the macro used at `use_site`.
    Macro { use_site: Span },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    out_lo: u32,
    out_hi: u32,
    kind: SegmentKind,
}

/// The preprocessed text and its map back to the original files.
#[derive(Clone, Debug, Default)]
pub struct Expanded {
    pub text: String,
    segments: Vec<Segment>,
    /// Every macro use that was expanded: use site, macro name, expansion text.
    pub expansions: Vec<MacroUse>,
    /// The file preprocessing started from (used for spans past the end of the text).
    root: FileId,
    /// A file ended inside an unterminated `/*` (reported): errors the parser finds at the
    /// end of the input are consequences of it.
    pub unterminated_comment: bool,
}

impl Expanded {
    /// Maps the output byte range `lo..hi` to a span in an original file.
    pub fn map(&self, lo: u32, hi: u32) -> Span {
        let idx = self.segments.partition_point(|s| s.out_lo <= lo);
        if idx == 0 {
            return self.end_span();
        }
        let seg = self.segments[idx - 1];
        if lo >= seg.out_hi && lo > seg.out_lo {
            // Past the end of the last segment (the final EOF position).
            return match seg.kind {
                SegmentKind::Verbatim { file, orig_lo } => {
                    let p = orig_lo + (seg.out_hi - seg.out_lo);
                    Span::new(file, p, p)
                }
                SegmentKind::Macro { use_site } => use_site.end(),
            };
        }
        match seg.kind {
            SegmentKind::Verbatim { file, orig_lo } => {
                let start = orig_lo + (lo - seg.out_lo);
                let end = orig_lo + (hi.min(seg.out_hi).max(lo) - seg.out_lo);
                Span::new(file, start, end)
            }
            SegmentKind::Macro { use_site } => use_site,
        }
    }

    fn end_span(&self) -> Span {
        Span::new(self.root, 0, 0)
    }
}

/// One expanded macro use, for "in this macro expansion" notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroUse {
    pub use_site: Span,
    pub name: String,
    pub expansion: String,
}

impl Expanded {
    /// The macro use whose site is exactly `span`, if any.
    pub fn macro_at(&self, span: Span) -> Option<&MacroUse> {
        self.expansions.iter().find(|m| m.use_site == span)
    }
}

#[derive(Clone, Debug)]
struct Macro {
    /// `Some` for a function-like macro.
    params: Option<Vec<String>>,
    /// The last parameter takes the rest of the arguments (`...` as `__VA_ARGS__`, or GNU's
    /// `name...`).
    variadic: bool,
    body: String,
}

impl Macro {
    fn object(body: String) -> Macro {
        Macro {
            params: None,
            variadic: false,
            body,
        }
    }
}

/// One open `#if` group.
#[derive(Clone, Copy, Debug)]
struct Cond {
    /// The enclosing region is active.
    parent_active: bool,
    /// Some branch of this group has been taken.
    taken: bool,
    /// The current branch is active.
    active: bool,
    seen_else: bool,
    span: Span,
}

/// Output text under construction.
#[derive(Default)]
struct Out {
    text: String,
    segments: Vec<Segment>,
    expansions: Vec<MacroUse>,
}

impl Out {
    fn verbatim(&mut self, file: FileId, orig_lo: u32, s: &str) {
        if s.is_empty() {
            return;
        }
        let out_lo = self.text.len() as u32;
        self.text.push_str(s);
        let out_hi = self.text.len() as u32;
        if let Some(last) = self.segments.last_mut() {
            if let SegmentKind::Verbatim {
                file: lf,
                orig_lo: lo,
            } = last.kind
            {
                if lf == file
                    && last.out_hi == out_lo
                    && lo + (last.out_hi - last.out_lo) == orig_lo
                {
                    last.out_hi = out_hi;
                    return;
                }
            }
        }
        self.segments.push(Segment {
            out_lo,
            out_hi,
            kind: SegmentKind::Verbatim { file, orig_lo },
        });
    }

    fn expansion(&mut self, use_site: Span, s: &str) {
        // Surround with spaces so an expansion never glues onto neighbouring tokens.
        let out_lo = self.text.len() as u32;
        self.text.push(' ');
        self.text.push_str(s);
        self.text.push(' ');
        self.segments.push(Segment {
            out_lo,
            out_hi: self.text.len() as u32,
            kind: SegmentKind::Macro { use_site },
        });
    }
}

/// Preprocesses the file `root` (already in `sm`; `root_path` is where it lives on disk, for
/// resolving relative includes). Included files are added to `sm`.
pub fn preprocess(
    sm: &mut SourceMap,
    root: FileId,
    root_path: Option<&Path>,
    opts: &PreprocessOptions,
    diags: &mut Diagnostics,
) -> Expanded {
    let mut pp = Preprocessor {
        sm,
        opts,
        diags,
        macros: HashMap::new(),
        out: Out::default(),
        include_stack: Vec::new(),
        include_names: Vec::new(),
        once: HashSet::new(),
        loaded: HashMap::new(),
        unterminated_comment: false,
        use_site: (root, 0),
        failed_uses: HashSet::new(),
        includes: 0,
    };
    for (name, body) in predefined::fixed() {
        pp.macros.insert(name.to_string(), Macro::object(body));
    }
    for (name, value) in &opts.defines {
        pp.macros.insert(name.clone(), Macro::object(value.clone()));
    }
    // The same key scheme as included files (canonical path), so a root file that includes
    // itself is caught at the first level.
    let key = root_path
        .map(|p| {
            p.canonicalize()
                .unwrap_or_else(|_| p.to_path_buf())
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| format!("<root:{}>", root.0));
    let dir = root_path.and_then(|p| p.parent().map(Path::to_path_buf));
    pp.process_file(root, key, dir);
    Expanded {
        text: pp.out.text,
        segments: pp.out.segments,
        expansions: pp.out.expansions,
        root,
        unterminated_comment: pp.unterminated_comment,
    }
}

struct Preprocessor<'a> {
    sm: &'a mut SourceMap,
    opts: &'a PreprocessOptions,
    diags: &'a mut Diagnostics,
    macros: HashMap<String, Macro>,
    out: Out,
    /// Keys (canonical path or builtin name) of the files being processed, outermost first.
    include_stack: Vec<String>,
    /// Display names of the same files (for the include-chain note).
    include_names: Vec<String>,
    /// Files marked `#pragma once` that were already included.
    once: HashSet<String>,
    /// Files already loaded into the source map, by key.
    loaded: HashMap<String, FileId>,
    /// Some file ends inside a `/* ...` comment (already reported).
    unterminated_comment: bool,
    /// File and 1-based line of the macro use being expanded (`__FILE__`, `__LINE__`).
    use_site: (FileId, usize),
    /// Macro uses (as written) whose expansion failed: the same use again fails the same way,
    /// so it expands to nothing at once instead of redoing (up to a megabyte of) work.
    failed_uses: HashSet<String>,
    /// `#include`s processed so far (see [`MAX_INCLUDES`]).
    includes: usize,
}

/// Replaces comments by spaces (keeping newlines and byte offsets) so directives and macro
/// scanning never see them. An unterminated `/*` blanks the rest of the file (directives in it
/// are not run) and its offset is returned, to be reported once.
fn strip_comments(text: &str) -> (String, Option<usize>) {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut unterminated = None;
    // A UTF-8 byte-order mark is not P4; blank it (three bytes become three spaces).
    if text.starts_with('\u{feff}') {
        out[..3].copy_from_slice(b"   ");
        i = 3;
    }
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let Some(end) = text[i + 2..].find("*/") else {
                    for b in &mut out[i..] {
                        if *b != b'\n' {
                            *b = b' ';
                        }
                    }
                    unterminated = Some(i);
                    break;
                };
                let stop = i + 2 + end + 2;
                for b in &mut out[i..stop] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = stop;
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes of multi-byte characters were never replaced partially: every replaced
    // byte lies inside a comment, and we replace all bytes of each character there.
    let out = String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    (out, unterminated)
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl Preprocessor<'_> {
    fn error(&mut self, span: Span, msg: impl Into<String>, label: impl Into<String>) {
        self.diags
            .push(Diagnostic::error(msg).with_primary(span, label));
    }

    fn process_file(&mut self, file: FileId, key: String, dir: Option<PathBuf>) {
        self.include_stack.push(key);
        self.include_names.push(self.sm.name(file).to_string());
        let (text, unterminated) = strip_comments(self.sm.text(file));
        if let Some(at) = unterminated {
            let at = at as u32;
            self.diags.push(
                Diagnostic::error("unterminated comment")
                    .with_primary(
                        Span::new(file, at, at + 2),
                        "this `/*` has no matching `*/`",
                    )
                    .with_note("everything after it up to the end of the file is commented out"),
            );
            self.unterminated_comment = true;
        }
        let mut conds: Vec<Cond> = Vec::new();
        let bytes = text.as_bytes();
        let mut pos = 0usize;
        while pos < text.len() {
            let line_end = text[pos..]
                .find('\n')
                .map(|i| pos + i)
                .unwrap_or(text.len());
            let trimmed_start = pos
                + text[pos..line_end]
                    .bytes()
                    .take_while(|b| *b == b' ' || *b == b'\t' || *b == b'\r')
                    .count();
            let active = conds.last().map(|c| c.active).unwrap_or(true);
            if bytes.get(trimmed_start) == Some(&b'#') {
                // Join continuation lines, keeping offsets (backslash-newline becomes spaces).
                let mut end = line_end;
                while end < text.len() && text[..end].trim_end_matches('\r').ends_with('\\') {
                    end = text[end + 1..]
                        .find('\n')
                        .map(|i| end + 1 + i)
                        .unwrap_or(text.len());
                }
                let mut directive = text[trimmed_start..end].to_string();
                if end > line_end {
                    directive = join_continuations(&directive);
                }
                self.directive(
                    file,
                    trimmed_start as u32,
                    &directive,
                    &dir,
                    &mut conds,
                    active,
                );
                pos = (end + 1).min(text.len().max(end + 1));
                if end < text.len() {
                    // Keep the line structure: the directive line becomes an empty line.
                    self.out.verbatim(file, end as u32, "\n");
                }
                continue;
            }
            let next = if line_end < text.len() {
                line_end + 1
            } else {
                line_end
            };
            if active {
                let line = &text[pos..next];
                self.expand_line(file, pos as u32, line);
            }
            pos = next;
        }
        for c in conds {
            self.error(
                c.span,
                "unterminated conditional directive",
                "this `#if` has no matching `#endif`",
            );
        }
        self.include_stack.pop();
        self.include_names.pop();
    }

    #[allow(clippy::too_many_arguments)]
    fn directive(
        &mut self,
        file: FileId,
        at: u32,
        line: &str,
        dir: &Option<PathBuf>,
        conds: &mut Vec<Cond>,
        active: bool,
    ) {
        // line starts with '#'.
        let after_hash = &line[1..];
        let name_off = 1 + after_hash.len() - after_hash.trim_start().len();
        let name_len = line[name_off..]
            .bytes()
            .take_while(|b| is_ident_char(*b))
            .count();
        let name = &line[name_off..name_off + name_len];
        let rest_off = name_off + name_len;
        let rest = &line[rest_off..];
        let name_span = Span::new(file, at, at + (name_off + name_len) as u32);
        let rest_span = Span::new(
            file,
            at + rest_off as u32,
            at + line.trim_end().len().max(rest_off) as u32,
        );
        match name {
            "if" | "ifdef" | "ifndef" => {
                let parent_active = active;
                let value = if !parent_active {
                    false
                } else if name == "if" {
                    self.eval_condition(file, at + rest_off as u32, rest)
                } else {
                    let ident = rest.trim();
                    if ident.is_empty() || !ident.bytes().all(is_ident_char) {
                        self.error(
                            rest_span,
                            format!("`#{name}` expects one macro name"),
                            "expected a macro name here",
                        );
                        false
                    } else {
                        let defined = self.macros.contains_key(ident);
                        if name == "ifdef" {
                            defined
                        } else {
                            !defined
                        }
                    }
                };
                conds.push(Cond {
                    parent_active,
                    taken: value,
                    active: parent_active && value,
                    seen_else: false,
                    span: name_span,
                });
            }
            "elif" => {
                let Some(mut c) = conds.pop() else {
                    self.error(name_span, "`#elif` without `#if`", "no open `#if` group");
                    return;
                };
                if c.seen_else {
                    self.error(name_span, "`#elif` after `#else`", "`#elif` here");
                }
                if c.parent_active && !c.taken {
                    let v = self.eval_condition(file, at + rest_off as u32, rest);
                    c.active = v;
                    c.taken = v;
                } else {
                    c.active = false;
                }
                conds.push(c);
            }
            "else" => {
                let Some(c) = conds.last_mut() else {
                    self.error(name_span, "`#else` without `#if`", "no open `#if` group");
                    return;
                };
                if c.seen_else {
                    let span = name_span;
                    self.error(span, "duplicate `#else`", "second `#else` here");
                    return;
                }
                c.seen_else = true;
                c.active = c.parent_active && !c.taken;
                c.taken = true;
            }
            "endif" => {
                if conds.pop().is_none() {
                    self.error(name_span, "`#endif` without `#if`", "no open `#if` group");
                }
            }
            _ if !active => {}
            "define" => self.define(file, at + rest_off as u32, rest, rest_span),
            "undef" => {
                let ident = rest.trim();
                if ident.is_empty() || !ident.bytes().all(is_ident_char) {
                    self.error(rest_span, "`#undef` expects one macro name", "here");
                } else {
                    self.macros.remove(ident);
                }
            }
            "include" => self.include(file, rest, rest_span, dir),
            "pragma" => {
                if rest.trim() == "once" {
                    if let Some(k) = self.include_stack.last() {
                        self.once.insert(k.clone());
                    }
                }
                // Other pragmas (bf-p4c's `#pragma` hints) carry no meaning for us: dropped.
            }
            "error" => {
                let msg = rest.trim().trim_matches('"');
                self.error(
                    name_span.to(rest_span),
                    format!("#error {msg}"),
                    "`#error` directive reached",
                );
            }
            "warning" => {
                let msg = rest.trim().trim_matches('"');
                self.diags.push(
                    Diagnostic::warning(format!("#warning {msg}"))
                        .with_primary(name_span.to(rest_span), "`#warning` directive reached"),
                );
            }
            // `#line N "file"` and GCC's line markers (`# 1 "file" 2`, what `cpp` leaves in a
            // preprocessed program): accepted; diagnostics keep this file's own lines.
            "line" | "" => {}
            n if n.bytes().all(|b| b.is_ascii_digit()) => {}
            other => {
                let other = other.to_string();
                self.diags.push(
                    Diagnostic::error(format!("unknown preprocessor directive `#{other}`"))
                        .with_primary(name_span, "unknown directive")
                        .with_help(
                            "supported: #include #define #undef #if #ifdef #ifndef #elif #else #endif #pragma #error #warning",
                        ),
                );
            }
        }
    }

    fn define(&mut self, file: FileId, at: u32, rest: &str, rest_span: Span) {
        let lead = rest.len() - rest.trim_start().len();
        let body = &rest[lead..];
        let name_len = body.bytes().take_while(|b| is_ident_char(*b)).count();
        if name_len == 0 || !is_ident_start(body.as_bytes()[0]) {
            self.error(
                rest_span,
                "`#define` expects a macro name",
                "expected a name here",
            );
            return;
        }
        let name = body[..name_len].to_string();
        let after = &body[name_len..];
        let (params, value) = if let Some(p) = after.strip_prefix('(') {
            let Some(close) = p.find(')') else {
                let span = Span::new(file, at + (lead + name_len) as u32, rest_span.hi);
                self.error(span, "unterminated macro parameter list", "missing `)`");
                return;
            };
            let list = &p[..close];
            let params = match macro_params(list) {
                Ok(params) => params,
                Err(why) => {
                    let span = Span::new(file, at + (lead + name_len) as u32, rest_span.hi);
                    self.error(
                        span,
                        why,
                        "parameters must be identifiers, the last may be `...`",
                    );
                    return;
                }
            };
            (Some(params), p[close + 1..].trim().to_string())
        } else {
            (None, after.trim().to_string())
        };
        let variadic = params
            .as_ref()
            .and_then(|ps| ps.last())
            .is_some_and(|(_, v)| *v);
        let params: Option<Vec<String>> =
            params.map(|ps| ps.into_iter().map(|(name, _)| name).collect());
        if let Err(why) = paste::check_body(&value, params.as_deref()) {
            let span = Span::new(file, at + (lead + name_len) as u32, rest_span.hi);
            self.error(
                span,
                format!("bad body of macro `{name}`: {why}"),
                "in this body",
            );
            return;
        }
        self.macros.insert(
            name,
            Macro {
                params,
                variadic,
                body: value,
            },
        );
    }

    fn include(&mut self, _file: FileId, rest: &str, rest_span: Span, dir: &Option<PathBuf>) {
        let arg = rest.trim();
        let (name, system) = if let Some(inner) = arg.strip_prefix('"') {
            match inner.find('"') {
                Some(end) => (&inner[..end], false),
                None => {
                    self.error(rest_span, "malformed `#include`", "missing closing `\"`");
                    return;
                }
            }
        } else if let Some(inner) = arg.strip_prefix('<') {
            match inner.find('>') {
                Some(end) => (&inner[..end], true),
                None => {
                    self.error(rest_span, "malformed `#include`", "missing closing `>`");
                    return;
                }
            }
        } else {
            self.error(
                rest_span,
                "malformed `#include`",
                "expected \"file\" or <file>",
            );
            return;
        };
        if self.include_stack.len() >= MAX_INCLUDE_DEPTH {
            self.error(
                rest_span,
                format!("`#include` nested deeper than {MAX_INCLUDE_DEPTH} files"),
                "the limit is reached here",
            );
            return;
        }
        self.includes += 1;
        if self.includes > MAX_INCLUDES {
            if self.includes == MAX_INCLUDES + 1 {
                self.error(
                    rest_span,
                    format!(
                        "more than {MAX_INCLUDES} `#include`s in all (files including others \
                         several times each?); the rest are not read"
                    ),
                    "the limit is reached here",
                );
            }
            return;
        }
        let name = name.to_string();
        if self.opts.builtin_includes_only && builtin::lookup(&name).is_none() {
            self.diags.push(
                Diagnostic::error(format!(
                    "`#include` of `{}` refused: a program received over the network may \
                     include only the bundled headers",
                    crate::diag::bounded(&name)
                ))
                .with_primary(rest_span, "refused")
                .with_note(format!("bundled headers: {}", builtin::names().join(", "))),
            );
            return;
        }
        let mut candidates: Vec<PathBuf> = Vec::new();
        if self.opts.builtin_includes_only {
            // Only a bundled header gets here: never look on the host's file system.
        } else if !system {
            if let Some(d) = dir {
                candidates.push(d.join(&name));
            }
        }
        let builtin_text = builtin::lookup(&name);
        if (system || self.opts.builtin_includes_only) && builtin_text.is_some() {
            candidates.clear();
        } else {
            for d in &self.opts.include_dirs {
                candidates.push(d.join(&name));
            }
        }
        // The first candidate that exists at all: a directory or a FIFO there is an error
        // that says so, not "not found" (and is never opened, so a FIFO cannot block us).
        let found = candidates.into_iter().find(|p| p.exists());
        let (key, text, display, new_dir) = if let Some(path) = found {
            let key = path
                .canonicalize()
                .unwrap_or_else(|_| path.clone())
                .to_string_lossy()
                .into_owned();
            match crate::source::read_source(&path) {
                Ok(text) => (
                    key,
                    text,
                    path.to_string_lossy().into_owned(),
                    path.parent().map(Path::to_path_buf),
                ),
                Err(why) => {
                    self.error(
                        rest_span,
                        format!("cannot include `{name}`: {why}"),
                        "included here",
                    );
                    return;
                }
            }
        } else if let Some(text) = builtin_text {
            (
                format!("{}{name}", crate::source::BUILTIN_PREFIX),
                text.to_string(),
                format!("{}{name}", crate::source::BUILTIN_PREFIX),
                None,
            )
        } else {
            let mut d = Diagnostic::error(format!("cannot find include file `{name}`"))
                .with_primary(rest_span, "not found");
            if !system {
                d = d.with_note("searched next to the including file, then the -I directories");
            } else {
                d = d.with_note(format!(
                    "built-in headers are: {}",
                    builtin::names().join(", ")
                ));
                if let Some(arch) = other_architecture(&name) {
                    d = d.with_help(format!(
                        "`{name}` is the {arch}: pisa runs the Tofino native architecture only \
                         (tna.p4, t2na.p4) and does not translate other architectures to it \
                         (bf-p4c does for v1model); port the program to TNA"
                    ));
                }
            }
            self.diags.push(d);
            return;
        };
        if self.include_stack.contains(&key) {
            self.diags.push(
                Diagnostic::error(format!("include cycle: `{name}` is already being included"))
                    .with_primary(rest_span, "this include closes the cycle")
                    .with_note(format!(
                        "include chain: {}",
                        self.include_names.join(" -> ")
                    )),
            );
            return;
        }
        if self.once.contains(&key) {
            return;
        }
        let id = match self.loaded.get(&key) {
            Some(id) => *id,
            None => {
                let id = self.sm.add(display, text);
                self.loaded.insert(key.clone(), id);
                id
            }
        };
        self.process_file(id, key, new_dir);
    }

    /// Expands the macros of one line (from `file` at byte `at`) into the output.
    fn expand_line(&mut self, file: FileId, at: u32, line: &str) {
        let bytes = line.as_bytes();
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'"' {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(bytes.len());
            } else if b.is_ascii_digit() {
                while i < bytes.len() && is_ident_char(bytes[i]) {
                    i += 1;
                }
            } else if is_ident_start(b) {
                let start = i;
                while i < bytes.len() && is_ident_char(bytes[i]) {
                    i += 1;
                }
                let word = &line[start..i];
                if !self.macros.contains_key(word) && !predefined::is_dynamic(word) {
                    continue;
                }
                let line_no = self
                    .sm
                    .get(file)
                    .map_or(0, |f| f.line_of(at + start as u32));
                self.use_site = (file, line_no);
                let Some(mac) = self.macros.get(word) else {
                    if let Some(text) = predefined::dynamic(word, self.sm.name(file), line_no) {
                        let use_site = Span::new(file, at + start as u32, at + i as u32);
                        self.out
                            .verbatim(file, at + copied as u32, &line[copied..start]);
                        self.out.expansion(use_site, &text);
                        copied = i;
                    }
                    continue;
                };
                let mac = mac.clone();
                let mut end = i;
                let args = match &mac.params {
                    None => None,
                    Some(_) => match parse_macro_args(line, i) {
                        Some((args, after)) => {
                            end = after;
                            Some(args)
                        }
                        // A function-like macro name without arguments is not expanded.
                        None => continue,
                    },
                };
                let use_site = Span::new(file, at + start as u32, at + end as u32);
                let written = &line[start..end];
                let text = if self.failed_uses.contains(written) {
                    String::new()
                } else {
                    let mut hide = vec![word.to_string()];
                    let mut budget = MAX_EXPANSION_BYTES;
                    match self.substitute(&mac, args.as_deref(), &mut hide, 0, &mut budget) {
                        Ok(t) => t,
                        Err(why) => {
                            self.error(
                                use_site,
                                format!("cannot expand macro `{word}`: {why}"),
                                "in this macro use (the same use elsewhere is not reported again)",
                            );
                            self.failed_uses.insert(written.to_string());
                            String::new()
                        }
                    }
                };
                self.out
                    .verbatim(file, at + copied as u32, &line[copied..start]);
                self.out.expansion(use_site, &text);
                self.out.expansions.push(MacroUse {
                    use_site,
                    name: word.to_string(),
                    expansion: text.split_whitespace().collect::<Vec<_>>().join(" "),
                });
                copied = end;
                i = end;
            } else {
                i += 1;
            }
        }
        self.out.verbatim(file, at + copied as u32, &line[copied..]);
    }

    /// Substitutes arguments into a macro body and rescans the result.
    fn substitute(
        &self,
        mac: &Macro,
        args: Option<&[String]>,
        hide: &mut Vec<String>,
        depth: usize,
        budget: &mut usize,
    ) -> Result<String, String> {
        let body = match (&mac.params, args) {
            (Some(params), Some(args)) => {
                let args = bind_args(params.len(), mac.variadic, args)?;
                // Arguments are expanded on their own before substitution, as C's
                // preprocessor does: the macro being expanded (last in `hide`) may be used in
                // them (`F(F(4))`); only its rescanned result hides it.
                let mut arg_hide = hide[..hide.len().saturating_sub(1)].to_vec();
                let mut expanded_args = Vec::new();
                for a in &args {
                    expanded_args.push(self.rescan(a, &mut arg_hide, depth + 1, budget)?);
                }
                let params = paste::Params {
                    names: params,
                    variadic: mac.variadic,
                };
                paste::substitute(&mac.body, Some(params), &args, &expanded_args)
            }
            _ if mac.body.contains("##") => paste::substitute(&mac.body, None, &[], &[]),
            _ => mac.body.clone(),
        };
        self.rescan(&body, hide, depth + 1, budget)
    }

    /// Expands macros inside already-substituted text, honouring the hide set.
    fn rescan(
        &self,
        text: &str,
        hide: &mut Vec<String>,
        depth: usize,
        budget: &mut usize,
    ) -> Result<String, String> {
        if depth > MAX_EXPANSION_DEPTH {
            return Err(format!(
                "macro expansion nested deeper than {MAX_EXPANSION_DEPTH} levels"
            ));
        }
        let bytes = text.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'"' || b.is_ascii_digit() {
                let start = i;
                if b == b'"' {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' {
                        if bytes[i] == b'\\' {
                            i += 1;
                        }
                        i += 1;
                    }
                    i = (i + 1).min(bytes.len());
                } else {
                    while i < bytes.len() && is_ident_char(bytes[i]) {
                        i += 1;
                    }
                }
                out.push_str(&text[start..i]);
            } else if is_ident_start(b) {
                let start = i;
                while i < bytes.len() && is_ident_char(bytes[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                let mac = if hide.iter().any(|h| h == word) {
                    None
                } else {
                    self.macros.get(word)
                };
                match mac {
                    None if hide.iter().any(|h| h == word) => out.push_str(word),
                    None => match predefined::dynamic(
                        word,
                        self.sm.name(self.use_site.0),
                        self.use_site.1,
                    ) {
                        Some(text) => out.push_str(&text),
                        None => out.push_str(word),
                    },
                    Some(mac) => {
                        let args = match &mac.params {
                            None => None,
                            Some(_) => match parse_macro_args(text, i) {
                                Some((args, after)) => {
                                    i = after;
                                    Some(args)
                                }
                                None => {
                                    out.push_str(word);
                                    continue;
                                }
                            },
                        };
                        hide.push(word.to_string());
                        let r = self.substitute(mac, args.as_deref(), hide, depth + 1, budget);
                        hide.pop();
                        out.push(' ');
                        out.push_str(&r?);
                        out.push(' ');
                    }
                }
            } else {
                let c_len = text[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                out.push_str(&text[i..i + c_len]);
                i += c_len;
            }
            if out.len() > *budget {
                return Err("expansion is too large".to_string());
            }
        }
        *budget = budget.saturating_sub(out.len());
        Ok(out)
    }

    /// Evaluates an `#if`/`#elif` expression; errors are reported and count as false.
    fn eval_condition(&mut self, file: FileId, at: u32, expr: &str) -> bool {
        let span = Span::new(file, at, at + expr.trim_end().len() as u32);
        // `defined X` / `defined(X)` first, before macro expansion touches X.
        let replaced = match self.replace_defined(expr) {
            Ok(t) => t,
            Err(why) => {
                self.error(
                    span,
                    format!("invalid `#if` expression: {why}"),
                    "in this expression",
                );
                return false;
            }
        };
        let mut budget = MAX_EXPANSION_BYTES;
        let expanded = match self.rescan(&replaced, &mut Vec::new(), 0, &mut budget) {
            Ok(t) => t,
            Err(why) => {
                self.error(
                    span,
                    format!("invalid `#if` expression: {why}"),
                    "in this expression",
                );
                return false;
            }
        };
        match cond_expr::evaluate(&expanded) {
            Ok(v) => v != 0,
            Err(why) => {
                self.error(
                    span,
                    format!("invalid `#if` expression: {why}"),
                    "in this expression",
                );
                false
            }
        }
    }

    fn replace_defined(&self, expr: &str) -> Result<String, String> {
        let bytes = expr.as_bytes();
        let mut out = String::new();
        let mut i = 0;
        while i < bytes.len() {
            if is_ident_start(bytes[i]) {
                let start = i;
                while i < bytes.len() && is_ident_char(bytes[i]) {
                    i += 1;
                }
                let word = &expr[start..i];
                if word != "defined" {
                    out.push_str(word);
                    continue;
                }
                let rest = &expr[i..];
                let trimmed = rest.trim_start();
                let (paren, inner) = match trimmed.strip_prefix('(') {
                    Some(r) => (true, r.trim_start()),
                    None => (false, trimmed),
                };
                let n = inner.bytes().take_while(|b| is_ident_char(*b)).count();
                if n == 0 {
                    return Err("`defined` needs a macro name".to_string());
                }
                let name = &inner[..n];
                let mut consumed = expr.len() - inner.len() + n;
                if paren {
                    let after = expr[consumed..].trim_start();
                    if !after.starts_with(')') {
                        return Err("missing `)` after `defined(NAME`".to_string());
                    }
                    consumed = expr.len() - after.len() + 1;
                }
                out.push_str(if self.macros.contains_key(name) {
                    " 1 "
                } else {
                    " 0 "
                });
                i = consumed;
            } else {
                let c_len = expr[i..].chars().next().map(char::len_utf8).unwrap_or(1);
                out.push_str(&expr[i..i + c_len]);
                i += c_len;
            }
        }
        Ok(out)
    }
}

/// Turns `\` + newline pairs into spaces, keeping byte offsets.
fn join_continuations(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let mut j = i + 1;
            if b.get(j) == Some(&b'\r') {
                j += 1;
            }
            if b.get(j) == Some(&b'\n') {
                for _ in i..=j {
                    out.push(' ');
                }
                i = j + 1;
                continue;
            }
        }
        let c_len = s[i..].chars().next().map(char::len_utf8).unwrap_or(1);
        out.push_str(&s[i..i + c_len]);
        i += c_len;
    }
    out
}

/// Parses `( a, b(c, d), e )` starting at or after byte `from` (whitespace allowed before the
/// parenthesis). Returns the raw argument texts and the byte just after `)`.
/// The arguments of a use of a macro with `n` parameters, the variadic one (if any) taking
/// the rest joined by commas (and nothing when none is left).
fn bind_args(n: usize, variadic: bool, args: &[String]) -> Result<Vec<String>, String> {
    if variadic {
        let fixed = n - 1;
        if args.len() < fixed {
            return Err(format!(
                "expected at least {fixed} argument(s), found {}",
                args.len()
            ));
        }
        let mut bound = args[..fixed].to_vec();
        bound.push(args[fixed..].join(", "));
        return Ok(bound);
    }
    if n != args.len() && !(n == 0 && args.len() == 1) {
        return Err(format!("expected {n} argument(s), found {}", args.len()));
    }
    Ok(args.to_vec())
}

/// The parameters of a function-like macro's `(list)`, each with whether it is the variadic
/// one (`...`, named `__VA_ARGS__`, or GNU's `name...`; only last).
fn macro_params(list: &str) -> Result<Vec<(String, bool)>, String> {
    let mut params = Vec::new();
    if list.trim().is_empty() {
        return Ok(params);
    }
    let count = list.split(',').count();
    for (k, param) in list.split(',').enumerate() {
        let param = param.trim();
        let (name, variadic) = match param.strip_suffix("...") {
            Some("") => ("__VA_ARGS__", true),
            Some(named) => (named.trim_end(), true),
            None => (param, false),
        };
        if variadic && k + 1 != count {
            return Err(format!("`{param}` must be the last macro parameter"));
        }
        if name.is_empty() || !name.bytes().all(is_ident_char) {
            return Err(format!("invalid macro parameter `{param}`"));
        }
        params.push((name.to_string(), variadic));
    }
    Ok(params)
}

fn parse_macro_args(text: &str, from: usize) -> Option<(Vec<String>, usize)> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    if bytes.get(i) != Some(&b'(') {
        return None;
    }
    i += 1;
    let mut depth = 0usize;
    let mut args = Vec::new();
    let mut start = i;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' if depth == 0 => {
                let last = text[start..i].trim();
                if !(args.is_empty() && last.is_empty()) {
                    args.push(last.to_string());
                }
                return Some((args, i + 1));
            }
            b')' => depth -= 1,
            b',' if depth == 0 => {
                args.push(text[start..i].trim().to_string());
                start = i + 1;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Evaluation of `#if` integer expressions (C semantics on i128; unknown identifiers are 0).
mod cond_expr {
    #[derive(Clone, Debug, PartialEq)]
    enum Tok {
        Num(i128),
        Op(&'static str),
    }

    const OPS: [&str; 23] = [
        "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "<", ">", "+", "-", "*", "/", "%", "!",
        "~", "(", ")", "&", "|", "^", "?",
    ];

    fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
        let b = s.as_bytes();
        let mut toks = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_whitespace() {
                i += 1;
            } else if c.is_ascii_digit() {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let text = s[start..i].trim_end_matches(['u', 'U', 'l', 'L']);
                let v = crate::lexer::parse_int(text)
                    .map_err(|e| format!("bad number `{}`: {e}", &s[start..i]))?;
                let v = i128::try_from(v.value).map_err(|_| "number too large".to_string())?;
                toks.push(Tok::Num(v));
            } else if c.is_ascii_alphabetic() || c == b'_' {
                // An identifier left after macro expansion is 0, as in C.
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                toks.push(Tok::Num(0));
            } else if c == b':' {
                toks.push(Tok::Op(":"));
                i += 1;
            } else {
                let op = OPS
                    .iter()
                    .find(|op| s[i..].starts_with(**op))
                    .ok_or_else(|| {
                        let ch = s[i..].chars().next().unwrap_or(' ');
                        format!("unexpected `{ch}`")
                    })?;
                toks.push(Tok::Op(op));
                i += op.len();
            }
        }
        Ok(toks)
    }

    /// Deepest nesting of an `#if` expression (parentheses, `?:`, unary operators). A left
    /// associative chain (`1 + 1 + ...`) is evaluated in a loop and does not count.
    pub const MAX_COND_DEPTH: usize = 256;

    struct P {
        toks: Vec<Tok>,
        pos: usize,
        depth: usize,
    }

    fn binary_prec(op: &str) -> Option<u8> {
        Some(match op {
            "||" => 1,
            "&&" => 2,
            "|" => 3,
            "^" => 4,
            "&" => 5,
            "==" | "!=" => 6,
            "<" | ">" | "<=" | ">=" => 7,
            "<<" | ">>" => 8,
            "+" | "-" => 9,
            "*" | "/" | "%" => 10,
            _ => return None,
        })
    }

    impl P {
        fn peek_op(&self) -> Option<&'static str> {
            match self.toks.get(self.pos) {
                Some(Tok::Op(o)) => Some(o),
                _ => None,
            }
        }

        /// Counts one level of nesting (parentheses, unary operators, `?:` arms, operands
        /// of tighter operators); fails past [`MAX_COND_DEPTH`].
        fn enter(&mut self) -> Result<(), String> {
            self.depth += 1;
            if self.depth > MAX_COND_DEPTH {
                return Err(format!("expression nested deeper than {MAX_COND_DEPTH}"));
            }
            Ok(())
        }

        fn ternary(&mut self) -> Result<i128, String> {
            self.enter()?;
            let r = self.ternary_inner();
            self.depth -= 1;
            r
        }

        fn ternary_inner(&mut self) -> Result<i128, String> {
            let c = self.binary(0)?;
            if self.peek_op() == Some("?") {
                self.pos += 1;
                let a = self.ternary()?;
                if self.peek_op() != Some(":") {
                    return Err("expected `:` in `?:`".to_string());
                }
                self.pos += 1;
                let b = self.ternary()?;
                return Ok(if c != 0 { a } else { b });
            }
            Ok(c)
        }

        fn binary(&mut self, min: u8) -> Result<i128, String> {
            let mut lhs = self.unary()?;
            while let Some(op) = self.peek_op() {
                let Some(p) = binary_prec(op) else { break };
                if p <= min {
                    break;
                }
                self.pos += 1;
                self.enter()?;
                let rhs = self.binary(p);
                self.depth -= 1;
                lhs = apply(op, lhs, rhs?)?;
            }
            Ok(lhs)
        }

        fn unary(&mut self) -> Result<i128, String> {
            self.enter()?;
            let r = match self.toks.get(self.pos).cloned() {
                Some(Tok::Num(v)) => {
                    self.pos += 1;
                    Ok(v)
                }
                Some(Tok::Op("(")) => {
                    self.pos += 1;
                    let v = self.ternary()?;
                    if self.peek_op() != Some(")") {
                        return Err("expected `)`".to_string());
                    }
                    self.pos += 1;
                    Ok(v)
                }
                Some(Tok::Op("!")) => {
                    self.pos += 1;
                    Ok((self.unary()? == 0) as i128)
                }
                Some(Tok::Op("~")) => {
                    self.pos += 1;
                    Ok(!self.unary()?)
                }
                Some(Tok::Op("-")) => {
                    self.pos += 1;
                    Ok(self.unary()?.wrapping_neg())
                }
                Some(Tok::Op("+")) => {
                    self.pos += 1;
                    self.unary()
                }
                Some(Tok::Op(o)) => Err(format!("unexpected `{o}`")),
                None => Err("expression ends early".to_string()),
            };
            self.depth -= 1;
            r
        }
    }

    fn apply(op: &str, a: i128, b: i128) -> Result<i128, String> {
        Ok(match op {
            "||" => ((a != 0) || (b != 0)) as i128,
            "&&" => ((a != 0) && (b != 0)) as i128,
            "|" => a | b,
            "^" => a ^ b,
            "&" => a & b,
            "==" => (a == b) as i128,
            "!=" => (a != b) as i128,
            "<" => (a < b) as i128,
            ">" => (a > b) as i128,
            "<=" => (a <= b) as i128,
            ">=" => (a >= b) as i128,
            "<<" => a.wrapping_shl(b.clamp(0, 127) as u32),
            ">>" => a.wrapping_shr(b.clamp(0, 127) as u32),
            "+" => a.wrapping_add(b),
            "-" => a.wrapping_sub(b),
            "*" => a.wrapping_mul(b),
            "/" | "%" if b == 0 => return Err("division by zero".to_string()),
            "/" => a.wrapping_div(b),
            "%" => a.wrapping_rem(b),
            _ => return Err(format!("unknown operator `{op}`")),
        })
    }

    /// Evaluates a fully macro-expanded condition.
    pub fn evaluate(s: &str) -> Result<i128, String> {
        let toks = tokenize(s)?;
        if toks.is_empty() {
            return Err("empty expression".to_string());
        }
        let mut p = P {
            toks,
            pos: 0,
            depth: 0,
        };
        let v = p.ternary()?;
        if p.pos != p.toks.len() {
            return Err("unexpected text after the expression".to_string());
        }
        Ok(v)
    }

    #[cfg(test)]
    mod tests {
        use super::evaluate;

        #[test]
        fn arithmetic_and_logic() {
            assert_eq!(evaluate("1 + 2 * 3"), Ok(7));
            assert_eq!(evaluate("(1 + 2) * 3"), Ok(9));
            assert_eq!(evaluate("2 == 2 && !0"), Ok(1));
            assert_eq!(evaluate("3 < 2 || 4 >= 4"), Ok(1));
            assert_eq!(evaluate("0x10 / 4 - 1"), Ok(3));
            assert_eq!(evaluate("FOO == 0"), Ok(1));
            assert_eq!(evaluate("1 ? 5 : 6"), Ok(5));
            assert_eq!(evaluate("-1 < 0"), Ok(1));
            assert!(evaluate("1 / 0").is_err());
            assert!(evaluate("(1").is_err());
            assert!(evaluate("").is_err());
            assert!(evaluate("1 2").is_err());
        }
    }
}

/// The architecture a standard P4 architecture header names, when it is not one pisa runs.
fn other_architecture(name: &str) -> Option<&'static str> {
    match name {
        "v1model.p4" => Some("v1model architecture (BMv2's simple_switch)"),
        "psa.p4" => Some("Portable Switch Architecture"),
        "pna.p4" => Some("Portable NIC Architecture"),
        "ebpf_model.p4" => Some("eBPF architecture"),
        "ubpf_model.p4" => Some("uBPF architecture"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, defines: &[(&str, &str)]) -> (SourceMap, Expanded, Diagnostics) {
        let mut sm = SourceMap::new();
        let f = sm.add("main.p4", text);
        let opts = PreprocessOptions {
            include_dirs: vec![],
            builtin_includes_only: false,
            defines: defines
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
        };
        let mut diags = Diagnostics::new();
        let e = preprocess(&mut sm, f, None, &opts, &mut diags);
        (sm, e, diags)
    }

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn squash(s: &str) -> String {
        s.split_whitespace().collect()
    }

    #[test]
    fn object_macros_and_conditionals() {
        let (_, e, d) = run(
            "#define W 8\n#define T bit<W>\nT x;\n#ifdef W\nyes;\n#else\nno;\n#endif\n#if W > 4 && defined(T)\nbig;\n#elif 1\nsmall;\n#endif\n#undef W\n#ifndef W\ngone;\n#endif\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(squash(&e.text), "bit<8>x;yes;big;gone;");
    }

    #[test]
    fn command_line_defines_and_function_macros() {
        let (_, e, d) = run(
            "#define ADD(a, b) ((a) + (b))\n#if __TARGET_TOFINO__ == 2\nt2 ADD(1, X);\n#else\nt1;\n#endif\n",
            &[("__TARGET_TOFINO__", "2"), ("X", "7")],
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(squash(&e.text), "t2((1)+(7));");
    }

    #[test]
    fn spans_map_to_original_and_to_macro_use_site() {
        let text = "#define SIZE 1024\nconst int x = SIZE;\n";
        let (sm, e, _) = run(text, &[]);
        let out_x = e.text.find("x =").unwrap() as u32;
        let sp = e.map(out_x, out_x + 1);
        assert_eq!(sm.snippet(sp), "x");
        assert_eq!(sm.line_col(sp), (2, 11));
        let out_1024 = e.text.find("1024").unwrap() as u32;
        let sp = e.map(out_1024, out_1024 + 4);
        assert_eq!(sm.snippet(sp), "SIZE");
        assert_eq!(sm.line_col(sp), (2, 15));
    }

    #[test]
    fn comments_do_not_hide_or_create_directives() {
        let (_, e, d) = run("/* #error no\n */ a; // #define a b\na;\n", &[]);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(words(&e.text), vec!["a;", "a;"]);
    }

    #[test]
    fn errors_have_spans() {
        let (sm, _, d) = run(
            "#frobnicate\n#if 1 +\n#endif\n#endif\n#include \"nope.p4\"\n#if 1\n",
            &[],
        );
        let msgs: Vec<String> = d.iter().map(|x| x.message.clone()).collect();
        assert_eq!(msgs.len(), 5, "{msgs:?}");
        assert!(msgs[0].contains("unknown preprocessor directive `#frobnicate`"));
        assert_eq!(
            sm.line_col(d.iter().next().unwrap().primary_span().unwrap()),
            (1, 1)
        );
        assert!(msgs[1].contains("invalid `#if` expression"));
        assert!(msgs[2].contains("`#endif` without `#if`"));
        assert!(msgs[3].contains("cannot find include file `nope.p4`"));
        assert!(msgs[4].contains("unterminated conditional"));
    }

    #[test]
    fn stringizing_pasting_and_line_markers() {
        let (_, e, d) = run(
            "# 1 \"x.p4\" 1\n#line 3\n#define S \"x#y\"\n#define CAT(a, b) a ## b\n#define STR(a) #a\nS; CAT(tt, l); STR(hi there);\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        assert!(e.text.contains("\"x#y\""), "{}", e.text);
        assert!(e.text.contains(" ttl "), "{}", e.text);
        assert!(e.text.contains("\"hi there\""), "{}", e.text);
        let (_, _, d) = run("#define BAD(a) #b\n", &[]);
        assert!(!d.is_empty());
    }

    #[test]
    fn variadic_macros_take_the_rest_of_the_arguments() {
        let (_, e, d) = run(
            "#define CALL(f, ...) f(__VA_ARGS__)\n#define LOG(fmt, args...) log(fmt, ## args)\nCALL(g, 1, (2, 3), x); CALL(h); LOG(a); LOG(b, 7);\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        let t = squash(&e.text);
        assert!(t.contains("g(1,(2,3),x);"), "{t}");
        assert!(t.contains("h();"), "{t}");
        assert!(t.contains("log(a);"), "{t}");
        assert!(t.contains("log(b,7);"), "{t}");
        let (_, _, d) = run("#define BAD(..., a) a\n", &[]);
        assert!(
            d.iter().any(|x| x.message.contains("must be the last")),
            "{d:?}"
        );
        let (_, _, d) = run("#define TWO(a, b, ...) a b\nTWO(1);\n", &[]);
        assert!(d.iter().any(|x| x.message.contains("at least 2")), "{d:?}");
    }

    #[test]
    fn a_macro_used_in_its_own_argument_is_expanded_there() {
        let (_, e, d) = run(
            "#define F(a) a\n#define ADD(x, y) ((x) + (y))\nF(F(4)); ADD(ADD(1, 2), 3);\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        let t = squash(&e.text);
        assert!(t.contains("4;((((1)+(2)))+(3));"), "{t}");
    }

    #[test]
    fn bf_p4c_version_and_dynamic_macros_are_predefined() {
        let (_, e, d) = run(
            "#if __p4c_major__ < 9\nold;\n#else\nnew __p4c_version__;\n#endif\n#define HERE __LINE__\nline HERE __LINE__ __FILE__;\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        let t = squash(&e.text);
        assert!(t.contains("new\"9.13.4\";"), "{t}");
        assert!(!t.contains("old"), "{t}");
        assert!(t.contains("line77\"main.p4\";"), "{t}");
        // A -D on the command line overrides a predefined one.
        let (_, e, _) = run(
            "#if __p4c_major__ < 9\nold;\n#endif\n",
            &[("__p4c_major__", "8")],
        );
        assert!(squash(&e.text).contains("old;"));
    }

    #[test]
    fn crlf_and_byte_order_mark() {
        let text = "\u{feff}#define W 8\r\n#if W == 8\r\nbit<W> x;\r\n#endif\r\n#define L 1, \\\r\n 2\r\nL;\r\n";
        let (sm, e, d) = run(text, &[]);
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(squash(&e.text), "bit<8>x;1,2;");
        let p = e.text.find('x').unwrap() as u32;
        assert_eq!(sm.line_col(e.map(p, p + 1)), (3, 8));
    }

    #[test]
    fn recursive_macros_terminate() {
        let (_, e, d) = run(
            "#define A B\n#define B A\nA;\n#define F(x) F(x)\nF(1);\n",
            &[],
        );
        assert!(d.is_empty(), "{d:?}");
        assert_eq!(words(&e.text), vec!["A", ";", "F(1)", ";"]);
    }

    #[test]
    fn macro_bombs_are_bounded() {
        let mut text = String::from("#define A0 x x x x x x x x\n");
        for i in 1..12 {
            text.push_str(&format!(
                "#define A{i} A{p} A{p} A{p} A{p} A{p} A{p} A{p} A{p}\n",
                p = i - 1
            ));
        }
        text.push_str("A11;\n");
        let (_, e, d) = run(&text, &[]);
        assert!(d.has_errors());
        assert!(e.text.len() < 4 * MAX_EXPANSION_BYTES);
        // The same use 2,000 times more: still one error (the failed use is not expanded
        // again, each try costing up to the whole budget).
        text.push_str(&"A11; ".repeat(2000));
        let (_, _, d) = run(&text, &[]);
        assert_eq!(
            d.iter().filter(|x| x.message.contains("A11")).count(),
            1,
            "{d:?}"
        );
    }

    #[test]
    fn includes_local_builtin_guard_and_cycle() {
        let dir = std::env::temp_dir().join(format!("pisa-pp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.p4"),
            "#ifndef A\n#define A\nfrom_a;\n#include \"b.p4\"\n#endif\n",
        )
        .unwrap();
        std::fs::write(dir.join("b.p4"), "from_b;\n#include \"c.p4\"\n").unwrap();
        std::fs::write(dir.join("c.p4"), "#include \"b.p4\"\n").unwrap();
        let main = dir.join("main.p4");
        let text = "#include \"a.p4\"\n#include \"a.p4\"\n#include <core.p4>\nend;\n";
        std::fs::write(&main, text).unwrap();
        let mut sm = SourceMap::new();
        let f = sm.add(main.to_string_lossy(), text);
        let mut diags = Diagnostics::new();
        let e = preprocess(
            &mut sm,
            f,
            Some(&main),
            &PreprocessOptions::default(),
            &mut diags,
        );
        let msgs: Vec<String> = diags.iter().map(|x| x.message.clone()).collect();
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].contains("include cycle"), "{msgs:?}");
        assert_eq!(e.text.matches("from_a;").count(), 1);
        assert!(e.text.contains("extern packet_in"));
        assert!(e.text.trim_end().ends_with("end;"));
        let p = e.text.find("from_b").unwrap() as u32;
        let sp = e.map(p, p + 6);
        assert!(sm.name(sp.file).ends_with("b.p4"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// 20 files each including the next twice: shallow (depth 20) but 2^20 includes; stopped
    /// at the total bound with one error.
    #[test]
    fn an_include_fan_out_is_bounded_in_all() {
        let dir = std::env::temp_dir().join(format!("pisa-pp-fan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..20 {
            let next = format!("#include \"f{}.p4\"\n", i + 1);
            std::fs::write(dir.join(format!("f{i}.p4")), format!("{next}{next}")).unwrap();
        }
        std::fs::write(dir.join("f20.p4"), "x;\n").unwrap();
        let main = dir.join("f0.p4");
        let text = std::fs::read_to_string(&main).unwrap();
        let mut sm = SourceMap::new();
        let f = sm.add(main.to_string_lossy(), text);
        let mut diags = Diagnostics::new();
        let e = preprocess(
            &mut sm,
            f,
            Some(&main),
            &PreprocessOptions::default(),
            &mut diags,
        );
        let msgs: Vec<String> = diags.iter().map(|x| x.message.clone()).collect();
        assert_eq!(msgs.len(), 1, "{msgs:?}");
        assert!(msgs[0].contains("more than 10000 `#include`s"), "{msgs:?}");
        assert!(e.text.matches("x;").count() <= MAX_INCLUDES);
        std::fs::remove_dir_all(&dir).ok();
    }
}

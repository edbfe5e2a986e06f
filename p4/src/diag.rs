//! Diagnostics: errors, warnings and notes with labelled source spans, rendered like rustc.
//!
//! Shared by every frontend pass (preprocessor, parser, type checker, resource check), so the
//! type stays general: a message, an optional code, any number of labelled spans (one or more
//! primary), and free-form `note`/`help` lines.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::source::{SourceMap, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A labelled span inside a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
    /// Primary labels are underlined with `^`, secondary ones with `-`.
    pub primary: bool,
}

/// One message for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable short code, e.g. `"P4-E0001"`; optional.
    pub code: Option<&'static str>,
    pub message: String,
    pub labels: Vec<Label>,
    /// Rendered as `= note: ...`.
    pub notes: Vec<String>,
    /// Rendered as `= help: ...`.
    pub help: Vec<String>,
}

impl Diagnostic {
    pub fn new(severity: Severity, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity,
            code: None,
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
        }
    }

    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Error, message)
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Warning, message)
    }

    pub fn note(message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Severity::Note, message)
    }

    pub fn with_code(mut self, code: &'static str) -> Diagnostic {
        self.code = Some(code);
        self
    }

    /// Adds a primary label (underlined with `^`).
    pub fn with_primary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: true,
        });
        self
    }

    /// Adds a secondary label (underlined with `-`).
    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
            primary: false,
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help.push(help.into());
        self
    }

    /// The first primary label's span, if any.
    pub fn primary_span(&self) -> Option<Span> {
        self.labels.iter().find(|l| l.primary).map(|l| l.span)
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// An ordered collection of diagnostics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Diagnostics {
        Diagnostics::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(Diagnostic::is_error)
    }

    pub fn error_count(&self) -> usize {
        self.items.iter().filter(|d| d.is_error()).count()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.items
    }

    /// Renders the diagnostics, separated by blank lines: at most [`MAX_SHOWN`] of them and at
    /// most [`MAX_SHOWN_PER_LINE`] pointing at one source line; a final note counts the rest.
    pub fn render(&self, sm: &SourceMap) -> String {
        let mut out = String::new();
        let mut shown = 0usize;
        let mut per_line: HashMap<(crate::source::FileId, usize), usize> = HashMap::new();
        let (mut hidden_errors, mut hidden_others) = (0usize, 0usize);
        for d in &self.items {
            let line_full = d.primary_span().is_some_and(|s| {
                let line = sm.get(s.file).map(|f| f.line_of(s.lo)).unwrap_or(0);
                let n = per_line.entry((s.file, line)).or_insert(0);
                *n += 1;
                *n > MAX_SHOWN_PER_LINE
            });
            if shown >= MAX_SHOWN || line_full {
                if d.is_error() {
                    hidden_errors += 1;
                } else {
                    hidden_others += 1;
                }
                continue;
            }
            if shown > 0 {
                out.push('\n');
            }
            shown += 1;
            out.push_str(&render(sm, d));
        }
        if hidden_errors + hidden_others > 0 {
            let what = match (hidden_errors, hidden_others) {
                (e, 0) => format!("{e} more error(s)"),
                (0, w) => format!("{w} more warning(s)/note(s)"),
                (e, w) => format!("{e} more error(s) and {w} more warning(s)/note(s)"),
            };
            if shown > 0 {
                out.push('\n');
            }
            let _ = writeln!(
                out,
                "note: {what} not shown (at most {MAX_SHOWN} diagnostics are printed, and at most {MAX_SHOWN_PER_LINE} per source line)"
            );
        }
        out
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Diagnostics {
        Diagnostics { items: vec![d] }
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(items: Vec<Diagnostic>) -> Diagnostics {
        Diagnostics { items }
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

impl<'a> IntoIterator for &'a Diagnostics {
    type Item = &'a Diagnostic;
    type IntoIter = std::slice::Iter<'a, Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

/// At most this many diagnostics are printed by [`Diagnostics::render`].
pub const MAX_SHOWN: usize = 100;
/// At most this many printed diagnostics point at the same source line.
pub const MAX_SHOWN_PER_LINE: usize = 3;
/// Longest piece of a source line printed under a diagnostic, in characters; a longer line is
/// shown as a window around the labels, with `...` where it was cut.
pub const MAX_LINE_SHOWN: usize = 160;

/// Longest message (or label, note, help) printed whole, in characters: one that quotes a
/// megabyte token is printed as its start and end around the count of characters left out.
pub const MAX_MESSAGE_SHOWN: usize = 1000;

/// `text`, or its first and last characters with `[... N characters ...]` between when it is
/// longer than [`MAX_MESSAGE_SHOWN`].
pub fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    bounded_to(text, MAX_MESSAGE_SHOWN)
}

/// [`bounded`] with the limit `max` characters (for replies with a tighter size budget).
pub fn bounded_to(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let n = text.chars().count();
    if n <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let (head, tail) = (max * 2 / 3, max / 3);
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(n - tail).collect();
    std::borrow::Cow::Owned(format!(
        "{start}[... {} characters ...]{end}",
        n - head - tail
    ))
}

/// The part of `raw` (a source line) shown for labels starting at 1-based character columns
/// `cols`: the text to print (tabs expanded, `...` where cut), the 0-based index of the first
/// character shown, and the number of characters printed before it (`...`).
fn line_window(raw: &str, cols: impl Iterator<Item = usize>) -> (String, usize, usize) {
    let n = raw.chars().count();
    if n <= MAX_LINE_SHOWN {
        return (expand_tabs(raw).trim_end().to_string(), 0, 0);
    }
    let first = cols.min().unwrap_or(1).max(1) - 1;
    let start = first.saturating_sub(MAX_LINE_SHOWN / 4).min(n);
    let end = (start + MAX_LINE_SHOWN).min(n);
    let piece: String = raw.chars().skip(start).take(end - start).collect();
    let prefix = if start > 0 { "..." } else { "" };
    let suffix = if end < n { "..." } else { "" };
    let text = format!("{prefix}{}{suffix}", expand_tabs(&piece).trim_end());
    (text, start, prefix.len())
}

/// One label resolved to a line and column range.
struct Placed<'a> {
    line: usize,
    col_lo: usize,
    col_hi: usize,
    label: &'a Label,
}

/// Renders a diagnostic in rustc's plain-text style:
///
/// ```text
/// error: unknown field `ttl2` in header `ipv4_h`
///   --> prog.p4:120:28
///     |
/// 120 |         hdr.ipv4.ttl2 = hdr.ipv4.ttl - 1;
///     |                  ^^^^ no such field
///     |
///     = help: fields of `ipv4_h` are: ...
/// ```
pub fn render(sm: &SourceMap, d: &Diagnostic) -> String {
    let mut out = String::new();
    out.push_str(d.severity.as_str());
    if let Some(code) = d.code {
        let _ = write!(out, "[{code}]");
    }
    let _ = writeln!(out, ": {}", bounded(&d.message));

    // Group labels by file, primary file first, keeping label order otherwise.
    let mut files: Vec<crate::source::FileId> = Vec::new();
    let mut ordered: Vec<&Label> = d.labels.iter().filter(|l| l.primary).collect();
    ordered.extend(d.labels.iter().filter(|l| !l.primary));
    for l in &ordered {
        if !files.contains(&l.span.file) {
            files.push(l.span.file);
        }
    }

    let mut max_line = 0usize;
    let mut per_file: Vec<(crate::source::FileId, Vec<Placed>)> = Vec::new();
    for f in &files {
        let Some(src) = sm.get(*f) else { continue };
        let mut placed = Vec::new();
        for l in ordered.iter().filter(|l| l.span.file == *f) {
            let (line, col_lo) = src.line_col(l.span.lo);
            let (end_line, end_col) = src.line_col(l.span.hi);
            let col_hi = if end_line == line {
                end_col.max(col_lo + 1)
            } else {
                // Multi-line spans are underlined to the end of their first line.
                src.line_text(line).chars().count() + 1
            }
            .max(col_lo + 1);
            max_line = max_line.max(line);
            placed.push(Placed {
                line,
                col_lo,
                col_hi,
                label: l,
            });
        }
        per_file.push((*f, placed));
    }
    let gutter = max_line.max(1).to_string().len();
    let pad = " ".repeat(gutter);

    for (fi, (file, placed)) in per_file.iter().enumerate() {
        let Some(src) = sm.get(*file) else { continue };
        let Some(first) = placed.first() else {
            continue;
        };
        let arrow = if fi == 0 { "-->" } else { ":::" };
        let _ = writeln!(
            out,
            "{pad}{arrow} {}:{}:{}",
            src.name, first.line, first.col_lo
        );
        let _ = writeln!(out, "{pad} |");
        let mut lines: Vec<usize> = placed.iter().map(|p| p.line).collect();
        lines.sort_unstable();
        lines.dedup();
        let mut prev: Option<usize> = None;
        for line in lines {
            if let Some(p) = prev {
                if line > p + 2 {
                    let _ = writeln!(out, "...");
                } else if line == p + 2 {
                    let (text, _, _) = line_window(src.line_text(p + 1), std::iter::once(1));
                    let _ = writeln!(out, "{:>gutter$} | {}", p + 1, text);
                }
            }
            prev = Some(line);
            let raw = src.line_text(line);
            let mut on_line: Vec<&Placed> = placed.iter().filter(|p| p.line == line).collect();
            on_line.sort_by_key(|p| p.col_lo);
            let (text, start, lead) = line_window(raw, on_line.iter().map(|p| p.col_lo));
            let _ = writeln!(out, "{line:>gutter$} | {text}");
            let shown_raw: std::borrow::Cow<str> = if start == 0 && lead == 0 {
                raw.into()
            } else {
                raw.chars()
                    .skip(start)
                    .take(MAX_LINE_SHOWN)
                    .collect::<String>()
                    .into()
            };
            let width = text.chars().count() + 1;
            for p in on_line {
                let (col_lo, col_hi) = (
                    p.col_lo.saturating_sub(start).max(1),
                    p.col_hi.saturating_sub(start).max(1),
                );
                let lo = (visual_col(&shown_raw, col_lo) + lead).min(width);
                let hi = (visual_col(&shown_raw, col_hi) + lead)
                    .min(width + 1)
                    .max(lo + 1);
                let mark = if p.label.primary { "^" } else { "-" };
                let mut row = format!("{pad} | {}{}", " ".repeat(lo - 1), mark.repeat(hi - lo));
                if !p.label.message.is_empty() {
                    row.push(' ');
                    row.push_str(&bounded(&p.label.message));
                }
                let _ = writeln!(out, "{}", row);
            }
        }
    }
    if !d.notes.is_empty() || !d.help.is_empty() {
        if !per_file.is_empty() {
            let _ = writeln!(out, "{pad} |");
        }
        for n in &d.notes {
            let _ = writeln!(out, "{pad} = note: {}", bounded(n));
        }
        for h in &d.help {
            let _ = writeln!(out, "{pad} = help: {}", bounded(h));
        }
    }
    out
}

/// Tabs are shown as four spaces so carets line up.
fn expand_tabs(s: &str) -> String {
    s.replace('\t', "    ")
}

/// The 1-based display column of 1-based character column `col` in `line` after tab expansion.
fn visual_col(line: &str, col: usize) -> usize {
    let mut v = 1;
    for (i, c) in line.chars().enumerate() {
        if i + 1 >= col {
            return v;
        }
        v += if c == '\t' { 4 } else { 1 };
    }
    v + col.saturating_sub(line.chars().count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_bounded() {
        let mut sm = SourceMap::new();
        let f = sm.add("t.p4", "x;\n");
        let token = "9".repeat(1_000_000);
        let d = Diagnostic::error(format!("invalid integer literal `{token}`"))
            .with_primary(Span::new(f, 0, 1), token.clone())
            .with_help(token.clone());
        let text = render(&sm, &d);
        assert!(
            text.len() < 4 * MAX_MESSAGE_SHOWN + 400,
            "{} bytes",
            text.len()
        );
        assert!(text.contains("[... 999"), "{}", &text[..200]);
        assert!(text.starts_with("error: invalid integer literal `999"));
    }

    #[test]
    fn renders_rustc_style() {
        let mut sm = SourceMap::new();
        let text =
            "header ipv4_h {\n    bit<8> ttl;\n}\n        hdr.ipv4.ttl2 = hdr.ipv4.ttl - 1;\n";
        let f = sm.add("l2l3.p4", text);
        let lo = text.find("ttl2").unwrap() as u32;
        let d = Diagnostic::error("unknown field `ttl2` in header `ipv4_h`")
            .with_primary(Span::new(f, lo, lo + 4), "no such field")
            .with_help("fields of `ipv4_h` are: ttl");
        let r = render(&sm, &d);
        let expected = "\
error: unknown field `ttl2` in header `ipv4_h`
 --> l2l3.p4:4:18
  |
4 |         hdr.ipv4.ttl2 = hdr.ipv4.ttl - 1;
  |                  ^^^^ no such field
  |
  = help: fields of `ipv4_h` are: ttl
";
        assert_eq!(r, expected);
    }

    #[test]
    fn secondary_labels_and_notes() {
        let mut sm = SourceMap::new();
        let f = sm.add("a.p4", "const bit<8> X = 1;\nconst bit<8> X = 2;\n");
        let d = Diagnostic::error("duplicate declaration of `X`")
            .with_code("E1")
            .with_primary(Span::new(f, 33, 34), "redeclared here")
            .with_secondary(Span::new(f, 13, 14), "first declared here")
            .with_note("names must be unique in a scope");
        let r = render(&sm, &d);
        assert!(r.starts_with("error[E1]: duplicate declaration of `X`\n --> a.p4:2:14\n"));
        assert!(r.contains("1 | const bit<8> X = 1;\n  |              - first declared here\n"));
        assert!(r.contains("2 | const bit<8> X = 2;\n  |              ^ redeclared here\n"));
        assert!(r.ends_with("  = note: names must be unique in a scope\n"));
    }

    #[test]
    fn empty_span_gets_one_caret_and_counts() {
        let mut sm = SourceMap::new();
        let f = sm.add("a.p4", "x");
        let d = Diagnostic::warning("w").with_primary(Span::new(f, 1, 1), "here");
        assert!(render(&sm, &d).contains("1 | x\n  |  ^ here\n"));
        let mut ds = Diagnostics::new();
        ds.push(d);
        assert!(!ds.has_errors());
        ds.push(Diagnostic::error("e"));
        assert!(ds.has_errors());
        assert_eq!(ds.error_count(), 1);
    }
}

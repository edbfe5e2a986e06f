//! Token access for the parser: peeking, consuming, "expected X, found Y" errors, and the
//! skipping used to recover after an error.

use super::{Fatal, PResult, Parser, Token};
use crate::ast::Ident;
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;
use crate::source::Span;

/// Where recovery stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sync {
    /// Inside a block: after `;` or before `}` at the current nesting level.
    Statement,
    /// At top level: after `;` or after a `}` that closes a body, or before a token that can
    /// only start a declaration.
    TopLevel,
    /// Inside a parser/control/table body: like `Statement`, but also before tokens that
    /// start a local declaration.
    Local,
}

impl Parser {
    pub(crate) fn peek(&self) -> &Token {
        let i = self.pos.min(self.toks.len() - 1);
        &self.toks[i]
    }

    pub(crate) fn peek_kind(&self) -> &TokenKind {
        &self.peek().kind
    }

    pub(crate) fn nth(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i]
    }

    pub(crate) fn nth_kind(&self, n: usize) -> &TokenKind {
        &self.nth(n).kind
    }

    pub(crate) fn at(&self, kind: &TokenKind) -> bool {
        self.peek_kind() == kind
    }

    pub(crate) fn at_eof(&self) -> bool {
        self.at(&TokenKind::Eof)
    }

    /// The span of the previously consumed token (the start of the file if none).
    pub(crate) fn prev_span(&self) -> Span {
        if self.pos == 0 {
            return self.toks[0].span;
        }
        self.toks[(self.pos - 1).min(self.toks.len() - 1)].span
    }

    /// Span from `start` to the end of the previously consumed token.
    pub(crate) fn span_from(&self, start: Span) -> Span {
        start.to(self.prev_span())
    }

    /// Consumes the current token (never moves past `Eof`) and returns its span.
    pub(crate) fn bump(&mut self) -> Span {
        let span = self.peek().span;
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        span
    }

    /// Consumes the current token and returns it.
    pub(crate) fn bump_token(&mut self) -> Token {
        let t = self.peek().clone();
        self.bump();
        t
    }

    pub(crate) fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// A `>` that closes a type argument list (the lexer never produces `>>`).
    pub(crate) fn at_gt(&self) -> bool {
        self.at(&TokenKind::Gt)
    }

    /// Two adjacent `>` tokens: a right shift in expression context.
    pub(crate) fn at_shr(&self) -> bool {
        self.at(&TokenKind::Gt)
            && self.nth_kind(1) == &TokenKind::Gt
            && self.nth(1).span.lo == self.peek().span.hi
            && self.nth(1).span.file == self.peek().span.file
    }

    /// `>>=`, which the lexer splits into `>` and `>=`.
    pub(crate) fn at_shr_assign(&self) -> bool {
        self.at(&TokenKind::Gt)
            && self.nth_kind(1) == &TokenKind::Ge
            && self.nth(1).span.lo == self.peek().span.hi
            && self.nth(1).span.file == self.peek().span.file
    }

    /// Reports "expected `what`, found X" at the current token.
    pub(crate) fn expected<T>(&mut self, what: &str) -> PResult<T> {
        let found = self.peek().clone();
        if found.kind == TokenKind::Bad {
            // The lexer already reported this text.
            return Err(Fatal);
        }
        let desc = found.kind.describe();
        let mut d = Diagnostic::error(format!("expected {what}, found {desc}"));
        if found.newline_before && self.pos > 0 && found.kind != TokenKind::Eof {
            // The missing piece most likely belongs at the end of the previous line.
            d = d
                .with_primary(self.prev_span().end(), format!("expected {what}"))
                .with_secondary(found.span, "unexpected token");
        } else if found.kind == TokenKind::Eof {
            d = d.with_primary(self.prev_span().end(), format!("expected {what}"));
        } else {
            d = d.with_primary(found.span, format!("expected {what}"));
        }
        self.error_at(d);
        Err(Fatal)
    }

    /// Consumes `kind` or reports "expected `kind`, found ...".
    pub(crate) fn expect(&mut self, kind: &TokenKind) -> PResult<Span> {
        if self.at(kind) {
            return Ok(self.bump());
        }
        let what = format!("`{}`", kind_text(kind));
        self.expected(&what)
    }

    /// Consumes `kind` or reports "expected one of `kind` or the `others`".
    pub(crate) fn expect_one_of(&mut self, kind: &TokenKind, alternatives: &str) -> PResult<Span> {
        if self.at(kind) {
            return Ok(self.bump());
        }
        self.expected(alternatives)
    }

    /// A keyword that can only start a top-level declaration: inside a body it means the
    /// body was not closed.
    pub(crate) fn at_toplevel_keyword(&self) -> bool {
        matches!(
            self.peek_kind(),
            TokenKind::Control
                | TokenKind::Parser
                | TokenKind::Header
                | TokenKind::HeaderUnion
                | TokenKind::Struct
                | TokenKind::Extern
                | TokenKind::Package
                | TokenKind::Typedef
                | TokenKind::MatchKind
        )
    }

    /// Still inside a `{ ... }` body: not at its `}`, not at end of file, not at a keyword
    /// that starts a new top-level declaration, and not given up.
    pub(crate) fn in_body(&self) -> bool {
        !self.at(&TokenKind::RBrace)
            && !self.at_eof()
            && !self.gave_up
            && !self.at_toplevel_keyword()
    }

    /// The `}` matching `open`; at end of file (or at a keyword that starts a new top-level
    /// declaration) the error points at the unclosed `{`.
    pub(crate) fn close_brace(&mut self, open: Span, what: &str) -> PResult<Span> {
        if self.at(&TokenKind::RBrace) {
            return Ok(self.bump());
        }
        if self.at_toplevel_keyword() {
            let tok = self.peek().clone();
            self.error_at(
                Diagnostic::error(format!("unclosed {what}: missing `}}`"))
                    .with_primary(open, "this `{` is never closed")
                    .with_secondary(
                        tok.span,
                        format!("{} starts a new declaration here", tok.kind.describe()),
                    ),
            );
            return Err(Fatal);
        }
        if self.at_eof() {
            let end = self.prev_span().end();
            self.error_at(
                Diagnostic::error(format!("unclosed {what}: end of file before its `}}`"))
                    .with_primary(open, "this `{` is never closed")
                    .with_secondary(end, "file ends here"),
            );
            return Err(Fatal);
        }
        self.expected(&format!("`}}` closing the {what}"))
    }

    /// An identifier (not a keyword).
    pub(crate) fn ident(&mut self, what: &str) -> PResult<Ident> {
        if let TokenKind::Ident(name) = self.peek_kind() {
            let name = name.clone();
            let span = self.bump();
            return Ok(Ident { name, span });
        }
        // `type` and `state` are contextual (P4_16's `nonTypeName`): `type` names parameters
        // in the TNA externs (`CounterType_t type`), and p4c accepts both wherever a plain name
        // is expected.
        if self.at(&TokenKind::Type) {
            let span = self.bump();
            return Ok(Ident::new("type", span));
        }
        if self.at(&TokenKind::State) {
            let span = self.bump();
            return Ok(Ident::new("state", span));
        }
        if let Some(k) = self.peek_kind().keyword_text() {
            let span = self.peek().span;
            self.error_at(
                Diagnostic::error(format!("expected {what}, found keyword `{k}`"))
                    .with_primary(span, "this is a reserved keyword")
                    .with_help(format!("rename it, e.g. `{k}_`")),
            );
            return Err(Fatal);
        }
        self.expected(what)
    }

    /// An identifier or a keyword used as a name (member names after `.`, annotation names).
    pub(crate) fn name_or_keyword(&mut self, what: &str) -> PResult<Ident> {
        match self.peek_kind().clone() {
            TokenKind::Ident(name) => {
                let span = self.bump();
                Ok(Ident { name, span })
            }
            k => match k.keyword_text() {
                Some(text) => {
                    let span = self.bump();
                    Ok(Ident::new(text, span))
                }
                None => self.expected(what),
            },
        }
    }

    pub(crate) fn at_ident_named(&self, name: &str) -> bool {
        matches!(self.peek_kind(), TokenKind::Ident(n) if n == name)
    }

    /// Skips tokens after an error until a synchronisation point. Always makes progress
    /// unless already at a stopping token.
    pub(crate) fn recover(&mut self, sync: Sync) {
        let mut depth = 0usize;
        loop {
            let k = self.peek_kind().clone();
            if sync != Sync::TopLevel && self.at_toplevel_keyword() {
                // An unclosed body: let the enclosing levels unwind to the declaration.
                return;
            }
            match k {
                TokenKind::Eof => return,
                TokenKind::LBrace | TokenKind::LParen | TokenKind::LBracket => {
                    depth += 1;
                    self.bump();
                }
                TokenKind::RBrace | TokenKind::RParen | TokenKind::RBracket => {
                    if depth == 0 {
                        if k == TokenKind::RBrace {
                            // Let the enclosing block consume its `}`; at top level a stray
                            // `}` is skipped.
                            if sync == Sync::TopLevel {
                                self.bump();
                            }
                            return;
                        }
                        self.bump();
                        continue;
                    }
                    depth -= 1;
                    self.bump();
                    if depth == 0 && k == TokenKind::RBrace && sync == Sync::TopLevel {
                        // A declaration body ended; a `;` may follow.
                        self.eat(&TokenKind::Semi);
                        return;
                    }
                }
                TokenKind::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                _ if depth == 0 && self.starts_item(sync) => return,
                _ => {
                    self.bump();
                }
            }
        }
    }

    /// Tokens that can only begin a new declaration/statement at the given level.
    fn starts_item(&self, sync: Sync) -> bool {
        let k = self.peek_kind();
        let at_line_start = self.peek().newline_before;
        match sync {
            Sync::TopLevel => {
                matches!(
                    k,
                    TokenKind::Header
                        | TokenKind::HeaderUnion
                        | TokenKind::Struct
                        | TokenKind::Enum
                        | TokenKind::Typedef
                        | TokenKind::Type
                        | TokenKind::Extern
                        | TokenKind::Parser
                        | TokenKind::Control
                        | TokenKind::Package
                        | TokenKind::Action
                        | TokenKind::MatchKind
                        | TokenKind::Const
                ) || (at_line_start && *k == TokenKind::At)
            }
            Sync::Local => {
                matches!(
                    k,
                    TokenKind::Action
                        | TokenKind::Table
                        | TokenKind::State
                        | TokenKind::Apply
                        | TokenKind::Const
                ) || (at_line_start && *k == TokenKind::At)
            }
            Sync::Statement => {
                at_line_start
                    && matches!(
                        k,
                        TokenKind::If
                            | TokenKind::Switch
                            | TokenKind::Return
                            | TokenKind::Exit
                            | TokenKind::Transition
                    )
            }
        }
    }
}

/// How a token kind is written in messages (for kinds without a payload).
pub(crate) fn kind_text(kind: &TokenKind) -> String {
    if let Some(k) = kind.keyword_text() {
        return k.to_string();
    }
    match kind {
        TokenKind::Ident(_) => "identifier".to_string(),
        TokenKind::IntLit(_) => "integer".to_string(),
        TokenKind::StringLit(_) => "string".to_string(),
        TokenKind::Eof => "end of file".to_string(),
        other => other.punct_text().to_string(),
    }
}

/// Keywords that start declarations or statements: candidates for "did you mean".
const SUGGESTABLE: &[&str] = &[
    "header",
    "header_union",
    "struct",
    "control",
    "parser",
    "extern",
    "typedef",
    "enum",
    "action",
    "package",
    "const",
    "table",
    "state",
    "transition",
    "apply",
    "select",
    "return",
    "exit",
    "switch",
    "value_set",
    "match_kind",
];

/// Levenshtein distance, capped for speed (inputs are short identifiers).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The keyword `word` was probably meant to be, if it is a near miss.
pub(crate) fn keyword_suggestion(word: &str) -> Option<&'static str> {
    if word.len() < 3 {
        return None;
    }
    SUGGESTABLE
        .iter()
        .map(|k| (edit_distance(word, k), *k))
        .filter(|(d, k)| *d <= 2 && *d < k.len() / 2 + 1)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

impl Parser {
    /// At `Ident Ident` where the first name is no known type but a near miss of a keyword:
    /// reports it ("unknown keyword `contrl`, did you mean `control`?").
    pub(crate) fn check_misspelled_keyword(&mut self) -> PResult<()> {
        let TokenKind::Ident(word) = self.peek_kind().clone() else {
            return Ok(());
        };
        if self.is_type_name(&word) || !matches!(self.nth_kind(1), TokenKind::Ident(_)) {
            return Ok(());
        }
        let Some(kw) = keyword_suggestion(&word) else {
            return Ok(());
        };
        let span = self.peek().span;
        self.error_at(
            Diagnostic::error(format!("unknown keyword or type `{word}`"))
                .with_primary(span, format!("did you mean `{kw}`?"))
                .with_help(format!(
                    "`{word}` is not a declared type, and `{kw}` is a P4 keyword"
                )),
        );
        Err(Fatal)
    }
}

#[cfg(test)]
mod suggestion_tests {
    use super::*;

    #[test]
    fn near_misses_are_suggested() {
        assert_eq!(keyword_suggestion("contrl"), Some("control"));
        assert_eq!(keyword_suggestion("heder"), Some("header"));
        assert_eq!(keyword_suggestion("tranistion"), Some("transition"));
        assert_eq!(keyword_suggestion("ipv4_t"), None);
        assert_eq!(keyword_suggestion("x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}

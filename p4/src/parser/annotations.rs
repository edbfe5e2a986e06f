//! Annotations: `@name`, `@name(expr, ...)`, `@name[k = v, ...]`, `@pragma rest of line`.
//! Bodies that are not expression lists are kept verbatim as tokens. `@pragma NAME args` is
//! the annotation `NAME` (as p4c's parser reads it: `@pragma stage 7` is `@stage(7)`), its
//! arguments the expressions written on the rest of the line, space-separated.

use super::{Fatal, PResult, Parser};
use crate::ast::{Annotation, AnnotationBody, AnnotationToken, NamedExpr};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;

impl Parser {
    /// Zero or more annotations.
    pub(crate) fn annotations(&mut self) -> PResult<Vec<Annotation>> {
        let mut out = Vec::new();
        while self.at(&TokenKind::At) {
            out.push(self.annotation()?);
        }
        Ok(out)
    }

    fn annotation(&mut self) -> PResult<Annotation> {
        let start = self.expect(&TokenKind::At)?;
        // Judged on the preprocessed text: a macro's expansion maps every token to the
        // macro's use site, so spans cannot tell whether `@` and the name touch.
        let joined = self.peek().joined;
        let name = self.name_or_keyword("an annotation name after `@`")?;
        if !joined {
            let span = start.to(name.span);
            self.error_at(
                Diagnostic::error("space between `@` and the annotation name")
                    .with_primary(span, "write the name right after `@`"),
            );
            return Err(Fatal);
        }
        let (name, body) = if name.name == "pragma" && !self.line_ends_here() {
            let pragma = self.name_or_keyword("the pragma's name after `@pragma`")?;
            (pragma, self.pragma_args())
        } else if name.name == "pragma" {
            (name, AnnotationBody::Empty)
        } else if self.at(&TokenKind::LParen) {
            (name, self.paren_annotation_body()?)
        } else if self.at(&TokenKind::LBracket) {
            (name, self.bracket_annotation_body()?)
        } else {
            (name, AnnotationBody::Empty)
        };
        Ok(Annotation {
            name,
            body,
            span: self.span_from(start),
        })
    }

    /// The next token starts another line (or there is none).
    fn line_ends_here(&self) -> bool {
        self.at_eof() || self.peek().newline_before
    }

    /// The arguments of `@pragma NAME args...` (to the end of the line): the expressions
    /// written there one after another, else the tokens verbatim.
    fn pragma_args(&mut self) -> AnnotationBody {
        if self.line_ends_here() {
            return AnnotationBody::Empty;
        }
        let exprs = self.speculate(|p| {
            let mut exprs = Vec::new();
            while !p.line_ends_here() {
                let first = p.pos;
                exprs.push(p.parse_expr()?);
                // An expression that ran onto the next line was not the pragma's.
                if p.toks[first + 1..p.pos].iter().any(|t| t.newline_before) {
                    return Err(Fatal);
                }
            }
            Ok(exprs)
        });
        if let Some(exprs) = exprs {
            return AnnotationBody::Exprs(exprs);
        }
        let mut toks = Vec::new();
        while !self.line_ends_here() {
            let t = self.bump_token();
            toks.push(AnnotationToken {
                text: token_text(&t.kind),
                span: t.span,
            });
        }
        AnnotationBody::Tokens(toks)
    }

    /// `( ... )`: an expression list if it parses as one, else the raw tokens.
    fn paren_annotation_body(&mut self) -> PResult<AnnotationBody> {
        let parsed = self.speculate(|p| {
            p.bump();
            let mut exprs = Vec::new();
            if p.eat(&TokenKind::RParen) {
                return Ok(exprs);
            }
            loop {
                exprs.push(p.parse_expr()?);
                if p.eat(&TokenKind::Comma) {
                    continue;
                }
                p.expect(&TokenKind::RParen)?;
                return Ok(exprs);
            }
        });
        if let Some(exprs) = parsed {
            return Ok(if exprs.is_empty() {
                AnnotationBody::Empty
            } else {
                AnnotationBody::Exprs(exprs)
            });
        }
        // Unstructured: balanced tokens up to the matching `)`.
        let open = self.bump();
        let mut depth = 0usize;
        let mut toks = Vec::new();
        loop {
            match self.peek_kind() {
                TokenKind::Eof => {
                    self.error_at(
                        Diagnostic::error("unclosed annotation body")
                            .with_primary(open, "this `(` is never closed"),
                    );
                    return Err(Fatal);
                }
                TokenKind::LParen => depth += 1,
                TokenKind::RParen if depth == 0 => {
                    self.bump();
                    return Ok(AnnotationBody::Tokens(toks));
                }
                TokenKind::RParen => depth -= 1,
                _ => {}
            }
            let t = self.bump_token();
            toks.push(AnnotationToken {
                text: token_text(&t.kind),
                span: t.span,
            });
        }
    }

    /// `[k = v, ...]` or `[e, ...]`.
    fn bracket_annotation_body(&mut self) -> PResult<AnnotationBody> {
        self.expect(&TokenKind::LBracket)?;
        if self.eat(&TokenKind::RBracket) {
            return Ok(AnnotationBody::Empty);
        }
        let key_values = matches!(self.peek_kind(), TokenKind::Ident(_))
            && self.nth_kind(1) == &TokenKind::Assign;
        if key_values {
            let mut kvs = Vec::new();
            loop {
                let start = self.peek().span;
                let name = self.ident("a key")?;
                self.expect(&TokenKind::Assign)?;
                let value = self.parse_expr()?;
                kvs.push(NamedExpr {
                    name,
                    value,
                    span: self.span_from(start),
                });
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect_one_of(&TokenKind::RBracket, "`,` or `]`")?;
                return Ok(AnnotationBody::KeyValues(kvs));
            }
        }
        let mut exprs = Vec::new();
        loop {
            exprs.push(self.parse_expr()?);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            self.expect_one_of(&TokenKind::RBracket, "`,` or `]`")?;
            return Ok(AnnotationBody::Exprs(exprs));
        }
    }
}

/// The source spelling of a token (for unstructured annotation bodies).
fn token_text(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Ident(s) => s.clone(),
        TokenKind::StringLit(s) => format!("\"{}\"", s.escape_default()),
        TokenKind::IntLit(l) => {
            let prefix = match l.width {
                Some(w) => format!("{w}{}", if l.signed { "s" } else { "w" }),
                None => String::new(),
            };
            format!("{prefix}{}", l.value)
        }
        other => match other.keyword_text() {
            Some(k) => k.to_string(),
            None => other.punct_text().to_string(),
        },
    }
}

//! Annotations: `@name`, `@name(expr, ...)`, `@name[k = v, ...]`, `@pragma name rest of line`
//! (the annotation `@name`). Bodies that are not expression lists are kept verbatim as tokens.

use super::{Fatal, PResult, Parser, Token};
use crate::ast::{Annotation, AnnotationBody, AnnotationToken, Expr, ExprKind, Ident, NamedExpr};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;
use crate::source::Span;

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
        if name.name == "pragma" {
            return Ok(self.pragma_annotation(start.to(name.span)));
        }
        let body = if self.at(&TokenKind::LParen) {
            self.paren_annotation_body()?
        } else if self.at(&TokenKind::LBracket) {
            self.bracket_annotation_body()?
        } else {
            AnnotationBody::Empty
        };
        Ok(Annotation {
            name,
            body,
            span: self.span_from(start),
        })
    }

    /// `@pragma name args...` (to the end of the line): the annotation `@name` with `args` as
    /// its body, as p4c's grammar makes it (`PRAGMA annotationName annotationBody
    /// END_PRAGMA`), so `@pragma stage 1` is `@stage(1)`. Arguments that are all integer or
    /// string literals become an expression list; others stay tokens. `head`: `@pragma`.
    fn pragma_annotation(&mut self, head: Span) -> Annotation {
        let mut toks = Vec::new();
        while !self.at_eof() && !self.peek().newline_before {
            toks.push(self.bump_token());
        }
        let span = toks.last().map_or(head, |t| head.to(t.span));
        let name_tok = toks
            .first()
            .filter(|t| matches!(t.kind, TokenKind::Ident(_)) || t.kind.keyword_text().is_some());
        let Some(first) = name_tok else {
            let body = toks
                .iter()
                .map(|t| AnnotationToken {
                    text: token_text(&t.kind),
                    span: t.span,
                })
                .collect();
            return Annotation {
                name: Ident::new("pragma", head),
                body: AnnotationBody::Tokens(body),
                span,
            };
        };
        let name = Ident::new(token_text(&first.kind), first.span);
        let args = &toks[1..];
        let literal = |t: &Token| match &t.kind {
            TokenKind::IntLit(l) => Some(Expr {
                kind: ExprKind::Int(*l),
                span: t.span,
            }),
            TokenKind::StringLit(s) => Some(Expr {
                kind: ExprKind::String(s.clone()),
                span: t.span,
            }),
            _ => None,
        };
        let body = match args.iter().map(literal).collect::<Option<Vec<Expr>>>() {
            Some(es) if es.is_empty() => AnnotationBody::Empty,
            Some(es) => AnnotationBody::Exprs(es),
            None => AnnotationBody::Tokens(
                args.iter()
                    .map(|t| AnnotationToken {
                        text: token_text(&t.kind),
                        span: t.span,
                    })
                    .collect(),
            ),
        };
        Annotation { name, body, span }
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

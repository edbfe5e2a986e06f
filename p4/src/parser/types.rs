//! Parsing of types (`bit<8>`, `Register<bit<32>, bit<16>>`, `h_t[4]`, `tuple<...>`),
//! type parameter lists, and the "does a type start here?" questions the rest of the parser
//! asks to tell declarations from expressions.

use super::{PResult, Parser};
use crate::ast::{Expr, ExprKind, Ident, IntLit, Type, TypeKind};
use crate::lexer::TokenKind;

impl Parser {
    /// Parses a type.
    pub(crate) fn parse_type(&mut self) -> PResult<Type> {
        self.enter()?;
        let r = self.parse_type_inner();
        self.exit();
        r
    }

    fn parse_type_inner(&mut self) -> PResult<Type> {
        let start = self.peek().span;
        let kind = match self.peek_kind().clone() {
            TokenKind::Bit => {
                self.bump();
                if self.at(&TokenKind::Lt) {
                    TypeKind::Bit(Box::new(self.width()?))
                } else {
                    TypeKind::Bit(Box::new(Expr {
                        kind: ExprKind::Int(IntLit {
                            value: 1,
                            width: None,
                            signed: false,
                        }),
                        span: start,
                    }))
                }
            }
            TokenKind::Int => {
                self.bump();
                if self.at(&TokenKind::Lt) {
                    TypeKind::Int(Box::new(self.width()?))
                } else {
                    TypeKind::InfInt
                }
            }
            TokenKind::Varbit => {
                self.bump();
                TypeKind::Varbit(Box::new(self.width()?))
            }
            TokenKind::Bool => {
                self.bump();
                TypeKind::Bool
            }
            TokenKind::String => {
                self.bump();
                TypeKind::String
            }
            TokenKind::Void => {
                self.bump();
                TypeKind::Void
            }
            TokenKind::Error => {
                self.bump();
                TypeKind::Error
            }
            TokenKind::MatchKind => {
                self.bump();
                TypeKind::MatchKind
            }
            TokenKind::DontCare => {
                self.bump();
                TypeKind::DontCare
            }
            TokenKind::Tuple => {
                self.bump();
                let args = self.type_args()?;
                TypeKind::Tuple(args)
            }
            TokenKind::Ident(name) => {
                let span = self.bump();
                let base = Ident { name, span };
                if self.at(&TokenKind::Lt) {
                    let args = self.type_args()?;
                    TypeKind::Specialized { base, args }
                } else {
                    TypeKind::Named(base)
                }
            }
            _ => return self.expected("a type"),
        };
        let mut ty = Type {
            kind,
            span: self.span_from(start),
        };
        // Header stacks: `T[n]`.
        while self.at(&TokenKind::LBracket) {
            self.bump();
            let size = self.parse_expr()?;
            self.expect(&TokenKind::RBracket)?;
            ty = Type {
                kind: TypeKind::Stack {
                    elem: Box::new(ty),
                    size: Box::new(size),
                },
                span: self.span_from(start),
            };
        }
        Ok(ty)
    }

    /// `<8>`, `<(W + 1)>`, `<W>` after `bit`/`int`/`varbit`.
    fn width(&mut self) -> PResult<Expr> {
        self.expect(&TokenKind::Lt)?;
        let w = match self.peek_kind() {
            TokenKind::LParen => {
                self.bump();
                let e = self.parse_expr()?;
                self.expect(&TokenKind::RParen)?;
                e
            }
            TokenKind::IntLit(_) | TokenKind::Ident(_) => self.primary_expr()?,
            _ => return self.expected("a width (an integer or a parenthesized expression)"),
        };
        if !self.at_gt() {
            return self.expected("`>` closing the width");
        }
        self.bump();
        Ok(w)
    }

    /// `<T1, T2>` type arguments.
    pub(crate) fn type_args(&mut self) -> PResult<Vec<Type>> {
        self.expect(&TokenKind::Lt)?;
        let mut args = Vec::new();
        if self.at_gt() {
            self.bump();
            return Ok(args);
        }
        loop {
            args.push(self.parse_type()?);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.at_gt() {
                self.bump();
                return Ok(args);
            }
            return self.expected("`,` or `>`");
        }
    }

    /// `<T, U>` type parameter names of a generic declaration.
    pub(crate) fn type_params(&mut self) -> PResult<Vec<Ident>> {
        if !self.at(&TokenKind::Lt) {
            return Ok(Vec::new());
        }
        self.bump();
        let mut params = Vec::new();
        loop {
            params.push(self.ident("a type parameter name")?);
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            if self.at_gt() {
                self.bump();
                return Ok(params);
            }
            return self.expected("`,` or `>`");
        }
    }

    /// Opens a type-parameter scope.
    pub(crate) fn push_type_params(&mut self, params: &[Ident]) {
        self.type_params
            .push(params.iter().map(|p| p.name.clone()).collect());
    }

    pub(crate) fn pop_type_params(&mut self) {
        self.type_params.pop();
    }
}

//! Expressions: a Pratt parser with P4_16's precedence (note `==` binds looser than `&`,
//! `^` and `|`, unlike C), casts `(T) e`, generic calls `f<T>(x)`, named arguments, slices,
//! list and struct-initializer expressions.

use super::{PResult, Parser};
use crate::ast::{Argument, BinOp, Expr, ExprKind, Ident, NamedExpr, UnOp, DEFAULT_REST};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;

/// Binding power of prefix operators.
const PREFIX_BP: u8 = 12;

/// Binding power of `?:` (the loosest operator).
const TERNARY_BP: u8 = 1;

impl Parser {
    /// The binary operator at the current position and its binding power (higher binds
    /// tighter), with the number of tokens it spans.
    fn binary_op(&self) -> Option<(BinOp, u8, usize)> {
        let op = match self.peek_kind() {
            TokenKind::PipePipe => (BinOp::Or, 2),
            TokenKind::AmpAmp => (BinOp::And, 3),
            TokenKind::EqEq => (BinOp::Eq, 4),
            TokenKind::NotEq => (BinOp::Ne, 4),
            TokenKind::Lt => (BinOp::Lt, 5),
            TokenKind::Le => (BinOp::Le, 5),
            TokenKind::Ge => (BinOp::Ge, 5),
            TokenKind::Gt => {
                if self.at_shr() {
                    return Some((BinOp::Shr, 9, 2));
                }
                if self.at_shr_assign() {
                    return None;
                }
                (BinOp::Gt, 5)
            }
            TokenKind::Pipe => (BinOp::BitOr, 6),
            TokenKind::Caret => (BinOp::BitXor, 7),
            TokenKind::Amp => (BinOp::BitAnd, 8),
            TokenKind::Shl => (BinOp::Shl, 9),
            TokenKind::Plus => (BinOp::Add, 10),
            TokenKind::Minus => (BinOp::Sub, 10),
            TokenKind::PipePlusPipe => (BinOp::AddSat, 10),
            TokenKind::PipeMinusPipe => (BinOp::SubSat, 10),
            TokenKind::PlusPlus => (BinOp::Concat, 10),
            TokenKind::Star => (BinOp::Mul, 11),
            TokenKind::Slash => (BinOp::Div, 11),
            TokenKind::Percent => (BinOp::Mod, 11),
            _ => return None,
        };
        Some((op.0, op.1, 1))
    }

    /// Parses a full expression.
    pub(crate) fn parse_expr(&mut self) -> PResult<Expr> {
        self.expr_bp(0)
    }

    fn expr_bp(&mut self, min_bp: u8) -> PResult<Expr> {
        self.enter()?;
        let chain = self.chain;
        let r = self.expr_bp_inner(min_bp);
        self.chain = chain;
        self.exit();
        r
    }

    fn expr_bp_inner(&mut self, min_bp: u8) -> PResult<Expr> {
        let mut lhs = self.unary_expr()?;
        loop {
            if self.at(&TokenKind::Question) && TERNARY_BP > min_bp {
                self.grow_expr()?;
                self.bump();
                let then_expr = self.expr_bp(0)?;
                self.expect_one_of(&TokenKind::Colon, "`:` of the conditional expression")?;
                // Right associative.
                let else_expr = self.expr_bp(TERNARY_BP - 1)?;
                let span = lhs.span.to(else_expr.span);
                lhs = Expr {
                    kind: ExprKind::Ternary {
                        cond: Box::new(lhs),
                        then_expr: Box::new(then_expr),
                        else_expr: Box::new(else_expr),
                    },
                    span,
                };
                continue;
            }
            let Some((op, bp, ntoks)) = self.binary_op() else {
                break;
            };
            if bp <= min_bp {
                break;
            }
            self.grow_expr()?;
            for _ in 0..ntoks {
                self.bump();
            }
            let rhs = self.expr_bp(bp)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            };
        }
        Ok(lhs)
    }

    /// Prefix operators, casts, then a postfix expression.
    fn unary_expr(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        let op = match self.peek_kind() {
            TokenKind::Bang => Some(UnOp::Not),
            TokenKind::Tilde => Some(UnOp::BitNot),
            TokenKind::Minus => Some(UnOp::Neg),
            TokenKind::Plus => Some(UnOp::Plus),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let operand = self.expr_bp(PREFIX_BP)?;
            let span = start.to(operand.span);
            return Ok(Expr {
                kind: ExprKind::Unary {
                    op,
                    operand: Box::new(operand),
                },
                span,
            });
        }
        if self.at(&TokenKind::LParen) && self.at_cast() {
            self.bump();
            let ty = self.parse_type()?;
            self.expect(&TokenKind::RParen)?;
            let expr = self.expr_bp(PREFIX_BP)?;
            let span = start.to(expr.span);
            return Ok(Expr {
                kind: ExprKind::Cast {
                    ty,
                    expr: Box::new(expr),
                },
                span,
            });
        }
        self.postfix_expr()
    }

    /// `(` followed by a type and `)`: a cast. Decided with the type-name set.
    fn at_cast(&self) -> bool {
        match self.nth_kind(1) {
            TokenKind::Bit | TokenKind::Int | TokenKind::Varbit | TokenKind::Bool => true,
            TokenKind::Tuple => true,
            TokenKind::Ident(n) => {
                self.is_type_name(n)
                    && matches!(
                        self.nth_kind(2),
                        TokenKind::RParen | TokenKind::Lt | TokenKind::LBracket
                    )
            }
            _ => false,
        }
    }

    /// A primary expression followed by member accesses, indexing, slices and calls.
    fn postfix_expr(&mut self) -> PResult<Expr> {
        let mut e = self.primary_expr()?;
        if matches!(e.kind, ExprKind::Type(_)) {
            // A type used as a value (`sizeInBits(bit<8>)`) takes no postfix operators.
            return Ok(e);
        }
        loop {
            if matches!(
                self.peek_kind(),
                TokenKind::Dot | TokenKind::LBracket | TokenKind::LParen | TokenKind::Lt
            ) {
                self.grow_expr()?;
            }
            match self.peek_kind() {
                TokenKind::Dot => {
                    self.bump();
                    let member = self.name_or_keyword("a member name after `.`")?;
                    let span = e.span.to(member.span);
                    e = Expr {
                        kind: ExprKind::Member {
                            base: Box::new(e),
                            member,
                        },
                        span,
                    };
                }
                TokenKind::LBracket => {
                    self.bump();
                    let first = self.parse_expr()?;
                    if self.eat(&TokenKind::Colon) {
                        let lo = self.parse_expr()?;
                        self.expect_one_of(&TokenKind::RBracket, "`]` closing the slice")?;
                        let span = self.span_from(e.span);
                        e = Expr {
                            kind: ExprKind::Slice {
                                base: Box::new(e),
                                hi: Box::new(first),
                                lo: Box::new(lo),
                            },
                            span,
                        };
                    } else {
                        self.expect_one_of(&TokenKind::RBracket, "`]` or `:`")?;
                        let span = self.span_from(e.span);
                        e = Expr {
                            kind: ExprKind::Index {
                                base: Box::new(e),
                                index: Box::new(first),
                            },
                            span,
                        };
                    }
                }
                TokenKind::LParen => {
                    let args = self.call_args()?;
                    let span = self.span_from(e.span);
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            type_args: Vec::new(),
                            args,
                        },
                        span,
                    };
                }
                TokenKind::Lt if matches!(e.kind, ExprKind::Name(_) | ExprKind::Member { .. }) => {
                    // `f<T>(args)`: only when what follows really is a type list and a call.
                    let Some(type_args) = self.speculate(|p| {
                        if !p.nth_starts_type(1) {
                            return Err(super::Fatal);
                        }
                        let t = p.type_args()?;
                        if p.at(&TokenKind::LParen) {
                            Ok(t)
                        } else {
                            Err(super::Fatal)
                        }
                    }) else {
                        break;
                    };
                    let args = self.call_args()?;
                    let span = self.span_from(e.span);
                    e = Expr {
                        kind: ExprKind::Call {
                            callee: Box::new(e),
                            type_args,
                            args,
                        },
                        span,
                    };
                }
                _ => break,
            }
        }
        Ok(e)
    }

    /// Whether token `n` ahead begins a type (for generic call detection).
    fn nth_starts_type(&self, n: usize) -> bool {
        match self.nth_kind(n) {
            TokenKind::Bit
            | TokenKind::Int
            | TokenKind::Varbit
            | TokenKind::Bool
            | TokenKind::Tuple
            | TokenKind::DontCare
            | TokenKind::Error
            | TokenKind::String => true,
            TokenKind::Ident(name) => self.is_type_name(name),
            _ => false,
        }
    }

    /// `(a, name = b, _)`
    pub(crate) fn call_args(&mut self) -> PResult<Vec<Argument>> {
        self.expect(&TokenKind::LParen)?;
        let mut args = Vec::new();
        if self.eat(&TokenKind::RParen) {
            return Ok(args);
        }
        loop {
            let start = self.peek().span;
            // `type` and `state` are names here too (`Counter(size = 8, type = ...)`).
            let named = matches!(
                self.peek_kind(),
                TokenKind::Ident(_) | TokenKind::Type | TokenKind::State
            ) && self.nth_kind(1) == &TokenKind::Assign;
            let name = if named {
                let n = self.ident("an argument name")?;
                self.bump();
                Some(n)
            } else {
                None
            };
            let value = self.parse_expr()?;
            args.push(Argument {
                name,
                span: self.span_from(start),
                value,
            });
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            self.expect_one_of(&TokenKind::RParen, "`,` or `)`")?;
            return Ok(args);
        }
    }

    /// Literals, names, `error.X`, `this`, `_`, parenthesized expressions, `{...}` lists and
    /// struct initializers, and types in expression position.
    pub(crate) fn primary_expr(&mut self) -> PResult<Expr> {
        let start = self.peek().span;
        let kind = match self.peek_kind().clone() {
            TokenKind::IntLit(lit) => {
                self.bump();
                ExprKind::Int(lit)
            }
            TokenKind::True => {
                self.bump();
                ExprKind::Bool(true)
            }
            TokenKind::False => {
                self.bump();
                ExprKind::Bool(false)
            }
            TokenKind::StringLit(s) => {
                self.bump();
                ExprKind::String(s)
            }
            TokenKind::Ident(name) => {
                self.bump();
                ExprKind::Name(Ident { name, span: start })
            }
            // Contextual keywords p4c accepts as names (P4_16's `nonTypeName`).
            TokenKind::Type | TokenKind::State => {
                let id = self.ident("a name")?;
                ExprKind::Name(id)
            }
            TokenKind::Dot => {
                // `.name`: a name looked up at top level.
                self.bump();
                let id = self.ident("a name after `.`")?;
                ExprKind::Name(id)
            }
            TokenKind::This => {
                self.bump();
                ExprKind::This
            }
            TokenKind::DontCare => {
                self.bump();
                ExprKind::DontCare
            }
            TokenKind::Error => {
                self.bump();
                if self.eat(&TokenKind::Dot) {
                    let member = self.ident("an error name after `error.`")?;
                    ExprKind::ErrorMember(member)
                } else {
                    ExprKind::Type(crate::ast::Type {
                        kind: crate::ast::TypeKind::Error,
                        span: start,
                    })
                }
            }
            TokenKind::LParen => {
                self.bump();
                let inner = self.parse_expr()?;
                self.expect_one_of(&TokenKind::RParen, "`)`")?;
                if let ExprKind::Name(id) = &inner.kind {
                    let next = self.peek();
                    let operand_follows = !next.newline_before
                        && matches!(next.kind, TokenKind::Ident(_) | TokenKind::IntLit(_));
                    if operand_follows {
                        // `(name) operand`: a cast to a type this parser does not know.
                        let d = Diagnostic::error(format!("unknown type `{}` in cast", id.name))
                            .with_primary(id.span, "not a declared type")
                            .with_help(format!(
                                "declare `{}` (typedef, header, struct or enum) before this use",
                                id.name
                            ));
                        self.error_at(d);
                        return Err(super::Fatal);
                    }
                }
                // Keep the parenthesized expression's node but widen its span.
                return Ok(Expr {
                    kind: inner.kind,
                    span: self.span_from(start),
                });
            }
            TokenKind::LBrace => return self.brace_expr(),
            TokenKind::Bit
            | TokenKind::Int
            | TokenKind::Varbit
            | TokenKind::Bool
            | TokenKind::Tuple => {
                let ty = self.parse_type()?;
                ExprKind::Type(ty)
            }
            TokenKind::Hash => {
                let span = self.peek().span;
                self.error_at(
                    Diagnostic::error("unexpected `#`")
                        .with_primary(span, "preprocessor directives must start a line"),
                );
                return Err(super::Fatal);
            }
            _ => return self.expected("an expression"),
        };
        Ok(Expr {
            kind,
            span: self.span_from(start),
        })
    }

    /// `{a, b}` (list) or `{f = 1, g = 2}` (struct initializer); `{}` is an empty list.
    fn brace_expr(&mut self) -> PResult<Expr> {
        let start = self.expect(&TokenKind::LBrace)?;
        if self.at(&TokenKind::Hash) && self.nth_kind(1) == &TokenKind::RBrace {
            self.eat(&TokenKind::Hash);
            self.eat(&TokenKind::RBrace);
            return Ok(Expr {
                kind: ExprKind::InvalidHeader,
                span: self.span_from(start),
            });
        }
        let is_struct = matches!(self.peek_kind(), TokenKind::Ident(_))
            && self.nth_kind(1) == &TokenKind::Assign;
        if is_struct {
            let mut fields = Vec::new();
            loop {
                if self.at(&TokenKind::RBrace) {
                    break;
                }
                let fstart = self.peek().span;
                // `...`: the fields not named take their default values (P4_16 1.2.3).
                if self.at(&TokenKind::DotDot) && self.nth_kind(1) == &TokenKind::Dot {
                    self.eat(&TokenKind::DotDot);
                    self.eat(&TokenKind::Dot);
                    let span = self.span_from(fstart);
                    fields.push(NamedExpr {
                        name: Ident::new(DEFAULT_REST, span),
                        value: Expr {
                            kind: ExprKind::DontCare,
                            span,
                        },
                        span,
                    });
                    break;
                }
                let name = self.ident("a field name")?;
                self.expect(&TokenKind::Assign)?;
                let value = self.parse_expr()?;
                fields.push(NamedExpr {
                    name,
                    value,
                    span: self.span_from(fstart),
                });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect_one_of(&TokenKind::RBrace, "`,` or `}`")?;
            return Ok(Expr {
                kind: ExprKind::StructInit(fields),
                span: self.span_from(start),
            });
        }
        let mut items = Vec::new();
        loop {
            if self.at(&TokenKind::RBrace) {
                break;
            }
            items.push(self.parse_expr()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`,` or `}`")?;
        Ok(Expr {
            kind: ExprKind::List(items),
            span: self.span_from(start),
        })
    }
}

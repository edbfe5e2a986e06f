//! Statements and blocks: assignments (plain and compound), calls, `if`/`else`, `switch`,
//! local variable and constant declarations, `return`, `exit`, empty statements.

use super::cursor::Sync;
use super::{Fatal, PResult, Parser};
use crate::ast::{
    BinOp, Block, ConstDecl, ExprKind, Stmt, StmtKind, SwitchCase, SwitchLabel, VariableDecl,
};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;

impl Parser {
    /// `{ stmts }` with recovery inside: a bad statement is reported and skipped.
    pub(crate) fn parse_block(&mut self) -> PResult<Block> {
        let annotations = self.annotations()?;
        let start = self.peek().span;
        self.expect(&TokenKind::LBrace)?;
        self.enter()?;
        let stmts = self.statements_until(&[TokenKind::RBrace]);
        self.exit();
        self.close_brace(start, "block")?;
        Ok(Block {
            annotations,
            stmts,
            span: self.span_from(start),
        })
    }

    /// Statements until one of `stops` (not consumed) or end of file.
    pub(crate) fn statements_until(&mut self, stops: &[TokenKind]) -> Vec<Stmt> {
        let mut stmts = Vec::new();
        while !self.at_eof()
            && !stops.contains(self.peek_kind())
            && !self.gave_up
            && !self.at_toplevel_keyword()
        {
            let before = self.pos;
            match self.parse_stmt() {
                Ok(s) => stmts.push(s),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before && !self.at_eof() && !stops.contains(self.peek_kind()) {
                        self.bump();
                    }
                }
            }
        }
        stmts
    }

    /// One statement.
    pub(crate) fn parse_stmt(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.parse_stmt_inner();
        self.exit();
        r
    }

    fn parse_stmt_inner(&mut self) -> PResult<Stmt> {
        let start = self.peek().span;
        let annotations = if self.at(&TokenKind::At) {
            self.annotations()?
        } else {
            Vec::new()
        };
        let kind = match self.peek_kind() {
            TokenKind::LBrace => {
                let b = self.parse_block()?;
                StmtKind::Block(b)
            }
            TokenKind::Semi => {
                self.bump();
                StmtKind::Empty
            }
            TokenKind::If => self.if_stmt()?,
            TokenKind::Switch => self.switch_stmt()?,
            TokenKind::Return => {
                self.bump();
                let value = if self.at(&TokenKind::Semi) {
                    None
                } else {
                    Some(self.parse_expr()?)
                };
                self.expect_semi()?;
                StmtKind::Return(value)
            }
            TokenKind::Exit => {
                self.bump();
                self.expect_semi()?;
                StmtKind::Exit
            }
            TokenKind::Const => {
                let c = self.const_decl_body()?;
                StmtKind::Const(c)
            }
            TokenKind::Ident(w) if w == "for" && self.nth_kind(1) == &TokenKind::LParen => {
                return self.unsupported_loop(start, annotations);
            }
            TokenKind::Ident(w)
                if (w == "break" || w == "continue") && self.nth_kind(1) == &TokenKind::Semi =>
            {
                let w = w.clone();
                let span = self.bump();
                self.bump();
                self.error_at(
                    Diagnostic::error(format!("unsupported: `{w}` (P4_16 loops)"))
                        .with_primary(span, "loops are not supported by TNA"),
                );
                StmtKind::Unsupported { what: w }
            }
            TokenKind::Transition => {
                let span = self.peek().span;
                self.error_at(
                    Diagnostic::error("`transition` is only allowed at the end of a parser state")
                        .with_primary(span, "not allowed here"),
                );
                return Err(Fatal);
            }
            _ if self.at_local_var_decl() => {
                self.check_misspelled_keyword()?;
                let v = self.var_decl_body()?;
                StmtKind::Variable(v)
            }
            _ if !self.can_start_expr() => return self.expected("a statement"),
            _ => self.expr_stmt()?,
        };
        Ok(Stmt {
            annotations,
            kind,
            span: self.span_from(start),
        })
    }

    /// `for (...) stmt`: P4_16 v1.2.5 loops, which Tofino cannot run. Parsed far enough to
    /// skip them cleanly, reported, and kept as an `Unsupported` statement.
    fn unsupported_loop(
        &mut self,
        start: crate::source::Span,
        annotations: Vec<crate::ast::Annotation>,
    ) -> PResult<Stmt> {
        let kw = self.bump();
        // Skip the balanced header `( ... )`.
        let mut depth = 0usize;
        loop {
            match self.peek_kind() {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        self.bump();
                        break;
                    }
                }
                TokenKind::Eof => return self.expected("`)` closing the loop header"),
                _ => {}
            }
            self.bump();
        }
        self.error_at(
            Diagnostic::error("unsupported: `for` loops")
                .with_primary(kw, "loops are not supported by TNA")
                .with_note("Tofino parsers and pipelines have no loops; unroll it"),
        );
        // Parse the body so that errors inside it are still found.
        let _body = self.parse_stmt()?;
        Ok(Stmt {
            annotations,
            kind: StmtKind::Unsupported {
                what: "for loop".to_string(),
            },
            span: self.span_from(start),
        })
    }

    /// `label: { ... }`, `label:` (falls through) or `default: { ... }`.
    fn switch_case(&mut self) -> PResult<SwitchCase> {
        let start = self.peek().span;
        let label = if self.eat(&TokenKind::Default) {
            SwitchLabel::Default
        } else {
            SwitchLabel::Expr(self.parse_expr()?)
        };
        self.expect_one_of(&TokenKind::Colon, "`:` after the switch label")?;
        let body = if self.at(&TokenKind::LBrace) {
            Some(self.parse_block()?)
        } else {
            None
        };
        Ok(SwitchCase {
            label,
            body,
            span: self.span_from(start),
        })
    }

    /// Whether the current token can begin an expression (and so an expression statement).
    fn can_start_expr(&self) -> bool {
        matches!(
            self.peek_kind(),
            TokenKind::Ident(_)
                | TokenKind::IntLit(_)
                | TokenKind::StringLit(_)
                | TokenKind::True
                | TokenKind::False
                | TokenKind::LParen
                | TokenKind::LBrace
                | TokenKind::Bang
                | TokenKind::Tilde
                | TokenKind::Minus
                | TokenKind::Plus
                | TokenKind::This
                | TokenKind::Error
                | TokenKind::Dot
                | TokenKind::DontCare
                | TokenKind::Bad
        )
    }

    /// `;` ending a statement or declaration.
    pub(crate) fn expect_semi(&mut self) -> PResult<()> {
        self.expect(&TokenKind::Semi).map(|_| ())
    }

    /// Whether a variable declaration starts here (`T x`, `T<..> x`, `bit<8> x`, `T[4] x`).
    fn at_local_var_decl(&self) -> bool {
        match self.peek_kind() {
            TokenKind::Bit
            | TokenKind::Int
            | TokenKind::Varbit
            | TokenKind::Bool
            | TokenKind::Tuple
            | TokenKind::String => true,
            TokenKind::Error => self.nth_kind(1) != &TokenKind::Dot,
            TokenKind::Ident(name) => match self.nth_kind(1) {
                // Two names in a row can only be a declaration (possibly of an unknown type).
                TokenKind::Ident(_) => true,
                // `list<T> x` (P4_16 1.2.3); no statement starts `list <` otherwise.
                TokenKind::Lt if name == "list" => true,
                TokenKind::Lt | TokenKind::LBracket => self.is_type_name(name),
                _ => false,
            },
            _ => false,
        }
    }

    /// `T name [= init];` (the type is at the current token).
    pub(crate) fn var_decl_body(&mut self) -> PResult<VariableDecl> {
        let ty = self.parse_type()?;
        let name = self.ident("a variable name")?;
        let init = if self.eat(&TokenKind::Assign) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        if !self.at(&TokenKind::Semi) {
            let what = if init.is_some() { "`;`" } else { "`;` or `=`" };
            return self.expected(what);
        }
        self.bump();
        Ok(VariableDecl { ty, name, init })
    }

    /// `const T name = value;` (at `const`).
    pub(crate) fn const_decl_body(&mut self) -> PResult<ConstDecl> {
        self.expect(&TokenKind::Const)?;
        let ty = self.parse_type()?;
        let name = self.ident("a constant name")?;
        if !self.at(&TokenKind::Assign) {
            let found = self.peek().clone();
            let d = Diagnostic::error(format!(
                "expected `=` and a value for constant `{}`, found {}",
                name.name,
                found.kind.describe()
            ))
            .with_primary(found.span, "expected `=`")
            .with_note("constants must be initialized where they are declared");
            self.error_at(d);
            return Err(Fatal);
        }
        self.bump();
        let value = self.parse_expr()?;
        self.expect_semi()?;
        Ok(ConstDecl { ty, name, value })
    }

    /// `lhs = rhs;`, `lhs op= rhs;` or `call(...);`
    fn expr_stmt(&mut self) -> PResult<StmtKind> {
        let lhs = self.parse_expr()?;
        let compound = match self.peek_kind() {
            TokenKind::Assign => Some(None),
            TokenKind::PlusAssign => Some(Some(BinOp::Add)),
            TokenKind::MinusAssign => Some(Some(BinOp::Sub)),
            TokenKind::StarAssign => Some(Some(BinOp::Mul)),
            TokenKind::SlashAssign => Some(Some(BinOp::Div)),
            TokenKind::PercentAssign => Some(Some(BinOp::Mod)),
            TokenKind::ShlAssign => Some(Some(BinOp::Shl)),
            TokenKind::AmpAssign => Some(Some(BinOp::BitAnd)),
            TokenKind::PipeAssign => Some(Some(BinOp::BitOr)),
            TokenKind::CaretAssign => Some(Some(BinOp::BitXor)),
            TokenKind::PipePlusPipeAssign => Some(Some(BinOp::AddSat)),
            TokenKind::PipeMinusPipeAssign => Some(Some(BinOp::SubSat)),
            TokenKind::Gt if self.at_shr_assign() => Some(Some(BinOp::Shr)),
            _ => None,
        };
        if let Some(op) = compound {
            if op == Some(BinOp::Shr) {
                // `>` `>=`
                self.bump();
            }
            self.bump();
            let rhs = self.parse_expr()?;
            self.expect_semi()?;
            return Ok(StmtKind::Assign { lhs, op, rhs });
        }
        if matches!(lhs.kind, ExprKind::Call { .. }) {
            self.expect_semi()?;
            return Ok(StmtKind::Call(lhs));
        }
        if self.at(&TokenKind::Semi) {
            let d = Diagnostic::error("expression statement has no effect")
                .with_primary(lhs.span, "expected an assignment or a call")
                .with_help(
                    "P4 statements are assignments (`x = e;`), calls (`f(x);`), or control flow",
                );
            self.error_at(d);
            self.bump();
            return Err(Fatal);
        }
        if self.at(&TokenKind::EqEq) {
            return self.expected("`=` (assignment), not `==`");
        }
        self.expected("`=` or `;`")
    }

    /// `if (cond) stmt [else stmt]` (at `if`). An `else if` chain is read in a loop, not by
    /// recursion, and does not count towards [`super::MAX_DEPTH`]: it is flat to a reader.
    /// Its arms are bounded by [`super::MAX_ELSE_IF`] (the tree built is as deep as the chain
    /// is long, and later passes walk it recursively).
    fn if_stmt(&mut self) -> PResult<StmtKind> {
        let mut arms = Vec::new();
        let mut arm_start = self.peek().span;
        let else_branch = loop {
            self.expect(&TokenKind::If)?;
            self.expect_one_of(&TokenKind::LParen, "`(` after `if`")?;
            let cond = self.parse_expr()?;
            self.expect_one_of(&TokenKind::RParen, "`)` closing the condition")?;
            let then_branch = Box::new(self.parse_stmt()?);
            arms.push((arm_start, cond, then_branch));
            if !self.eat(&TokenKind::Else) {
                break None;
            }
            if !self.at(&TokenKind::If) {
                break Some(Box::new(self.parse_stmt()?));
            }
            if arms.len() >= super::MAX_ELSE_IF {
                return self.else_if_chain_too_long();
            }
            arm_start = self.peek().span;
        };
        // Nest the arms from the last: `else if` is an `if` statement in the `else` branch.
        let mut else_branch = else_branch;
        while arms.len() > 1 {
            let (start, cond, then_branch) = arms.pop().expect("more than one arm");
            let kind = StmtKind::If {
                cond,
                then_branch,
                else_branch,
            };
            else_branch = Some(Box::new(Stmt {
                annotations: Vec::new(),
                kind,
                span: self.span_from(start),
            }));
        }
        let (_, cond, then_branch) = arms.pop().expect("one arm");
        Ok(StmtKind::If {
            cond,
            then_branch,
            else_branch,
        })
    }

    /// The error at the `if` that makes an `else if` chain longer than [`super::MAX_ELSE_IF`].
    fn else_if_chain_too_long<T>(&mut self) -> PResult<T> {
        let span = self.peek().span;
        self.error_at(
            Diagnostic::error(format!(
                "`else if` chain longer than {} arms",
                super::MAX_ELSE_IF
            ))
            .with_primary(span, "the limit is reached here")
            .with_help(
                "split the chain, or use a `switch` on a table or a `select`-like table lookup",
            ),
        );
        self.gave_up = true;
        Err(Fatal)
    }

    /// `switch (e) { a: { } b: c: { } default: { } }` (at `switch`).
    fn switch_stmt(&mut self) -> PResult<StmtKind> {
        self.expect(&TokenKind::Switch)?;
        self.expect_one_of(&TokenKind::LParen, "`(` after `switch`")?;
        let subject = self.parse_expr()?;
        self.expect(&TokenKind::RParen)?;
        self.expect(&TokenKind::LBrace)?;
        let mut cases = Vec::new();
        while self.in_body() {
            let before = self.pos;
            match self.switch_case() {
                Ok(c) => cases.push(c),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "a switch label or `}`")?;
        Ok(StmtKind::Switch { subject, cases })
    }
}

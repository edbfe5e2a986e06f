//! Parser and control declarations: their local declarations, parser states with
//! `transition`/`select`, tables with their properties, and keysets (shared by select cases
//! and table entries).

use super::cursor::Sync;
use super::decl::DeclSite;
use super::{Fatal, PResult, Parser};
use crate::ast::{
    ActionRef, BlockType, ControlDecl, Decl, DeclKind, KeyElement, Keyset, KeysetKind, ParserDecl,
    ParserState, SelectCase, TableDecl, TableEntry, TableProperty, TablePropertyKind, Transition,
    TransitionKind, ValueSetDecl,
};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;

/// Which kind of block a local declaration lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    Parser,
    Control,
}

impl Parser {
    /// `parser Name<T>(params)[(ctor params)] { ... }` or the type declaration `...;`.
    pub(crate) fn parser_decl(&mut self) -> PResult<DeclKind> {
        self.expect(&TokenKind::Parser)?;
        let name = self.ident("a parser name")?;
        self.declare_type(&name.name);
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let r = self.parser_decl_rest(name, type_params);
        self.pop_type_params();
        r
    }

    fn parser_decl_rest(
        &mut self,
        name: crate::ast::Ident,
        type_params: Vec<crate::ast::Ident>,
    ) -> PResult<DeclKind> {
        let params = self.params()?;
        if self.eat(&TokenKind::Semi) {
            return Ok(DeclKind::ParserType(BlockType {
                name,
                type_params,
                params,
            }));
        }
        let ctor_params = if self.at(&TokenKind::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` or `;`")?;
        let mut locals = Vec::new();
        let mut states = Vec::new();
        while self.in_body() {
            let before = self.pos;
            let r = if self.at_state() {
                self.parser_state().map(|s| states.push(s))
            } else {
                self.local_decl(BlockKind::Parser).map(|d| locals.push(d))
            };
            if r.is_err() {
                self.recover(Sync::Local);
                if self.pos == before {
                    self.bump();
                }
            }
        }
        self.close_brace(open, "parser")?;
        Ok(DeclKind::Parser(ParserDecl {
            name,
            type_params,
            params,
            ctor_params,
            locals,
            states,
        }))
    }

    /// `state` possibly preceded by annotations.
    fn at_state(&self) -> bool {
        let mut i = 0;
        // Skip over simple annotations `@name` / `@name(...)` to find `state`.
        loop {
            match self.nth_kind(i) {
                TokenKind::State => return true,
                TokenKind::At => {
                    i += 2;
                    if self.nth_kind(i) == &TokenKind::LParen {
                        let mut depth = 0usize;
                        loop {
                            match self.nth_kind(i) {
                                TokenKind::LParen => depth += 1,
                                TokenKind::RParen => {
                                    depth -= 1;
                                    if depth == 0 {
                                        i += 1;
                                        break;
                                    }
                                }
                                TokenKind::Eof => return false,
                                _ => {}
                            }
                            i += 1;
                        }
                    }
                }
                _ => return false,
            }
        }
    }

    /// `state name { statements transition }`
    fn parser_state(&mut self) -> PResult<ParserState> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        self.expect(&TokenKind::State)?;
        let name = self.ident("a state name")?;
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the state body")?;
        let body = self.statements_until(&[TokenKind::Transition, TokenKind::RBrace]);
        let transition = if self.at(&TokenKind::Transition) {
            match self.transition() {
                Ok(t) => Some(t),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    None
                }
            }
        } else {
            None
        };
        if !self.at(&TokenKind::RBrace) && transition.is_some() {
            let span = self.peek().span;
            self.error_at(
                Diagnostic::error("statements after `transition`")
                    .with_primary(span, "expected `}` closing the state")
                    .with_note("`transition` must be the last statement of a parser state"),
            );
            self.statements_until(&[TokenKind::RBrace]);
        }
        self.close_brace(open, "state")?;
        Ok(ParserState {
            annotations,
            name,
            body,
            transition,
            span: self.span_from(start),
        })
    }

    /// `transition name;` or `transition select(...) { cases }`
    fn transition(&mut self) -> PResult<Transition> {
        let start = self.expect(&TokenKind::Transition)?;
        if self.eat(&TokenKind::Select) {
            self.expect_one_of(&TokenKind::LParen, "`(` after `select`")?;
            let mut exprs = Vec::new();
            loop {
                exprs.push(self.parse_expr()?);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect_one_of(&TokenKind::RParen, "`,` or `)`")?;
                break;
            }
            let open = self.peek().span;
            self.expect_one_of(&TokenKind::LBrace, "`{` starting the select cases")?;
            let mut cases = Vec::new();
            while self.in_body() {
                let before = self.pos;
                match self.select_case() {
                    Ok(c) => cases.push(c),
                    Err(Fatal) => {
                        self.recover(Sync::Statement);
                        if self.pos == before {
                            self.bump();
                        }
                    }
                }
            }
            self.close_brace(open, "select")?;
            // An optional `;` after the select block is tolerated.
            self.eat(&TokenKind::Semi);
            return Ok(Transition {
                kind: TransitionKind::Select { exprs, cases },
                span: self.span_from(start),
            });
        }
        let next = self.ident("a state name or `select`")?;
        self.expect_semi()?;
        Ok(Transition {
            kind: TransitionKind::Direct(next),
            span: self.span_from(start),
        })
    }

    /// `keyset : state;`
    fn select_case(&mut self) -> PResult<SelectCase> {
        let start = self.peek().span;
        let keyset = self.keyset()?;
        self.expect_one_of(&TokenKind::Colon, "`:` after the keyset")?;
        let next = self.ident("the next state's name")?;
        self.expect_semi()?;
        Ok(SelectCase {
            keyset,
            next,
            span: self.span_from(start),
        })
    }

    /// `default`, `_`, `v`, `v &&& m`, `lo .. hi`, or a parenthesized tuple of those.
    pub(crate) fn keyset(&mut self) -> PResult<Keyset> {
        let start = self.peek().span;
        if self.at(&TokenKind::LParen) && self.paren_is_tuple_keyset() {
            self.bump();
            let mut items = Vec::new();
            loop {
                items.push(self.simple_keyset()?);
                if self.eat(&TokenKind::Comma) {
                    continue;
                }
                self.expect_one_of(&TokenKind::RParen, "`,` or `)`")?;
                break;
            }
            return Ok(Keyset {
                kind: KeysetKind::Tuple(items),
                span: self.span_from(start),
            });
        }
        self.simple_keyset()
    }

    /// A `(` starts a tuple keyset when a top-level `,`, `default`, `_`, `&&&` or `..`
    /// appears before its matching `)`.
    fn paren_is_tuple_keyset(&self) -> bool {
        let mut depth = 0usize;
        let mut i = 0;
        loop {
            match self.nth_kind(i) {
                TokenKind::LParen | TokenKind::LBrace | TokenKind::LBracket => depth += 1,
                TokenKind::RParen | TokenKind::RBrace | TokenKind::RBracket => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return false;
                    }
                }
                TokenKind::Comma
                | TokenKind::Default
                | TokenKind::DontCare
                | TokenKind::AmpAmpAmp
                | TokenKind::DotDot
                    if depth == 1 =>
                {
                    return true
                }
                TokenKind::Eof | TokenKind::Semi => return false,
                _ => {}
            }
            i += 1;
        }
    }

    fn simple_keyset(&mut self) -> PResult<Keyset> {
        let start = self.peek().span;
        if self.eat(&TokenKind::Default) {
            return Ok(Keyset {
                kind: KeysetKind::Default,
                span: start,
            });
        }
        if self.eat(&TokenKind::DontCare) {
            return Ok(Keyset {
                kind: KeysetKind::DontCare,
                span: start,
            });
        }
        let value = self.parse_expr()?;
        let kind = if self.eat(&TokenKind::AmpAmpAmp) {
            let mask = self.parse_expr()?;
            KeysetKind::Mask { value, mask }
        } else if self.eat(&TokenKind::DotDot) {
            let hi = self.parse_expr()?;
            KeysetKind::Range { lo: value, hi }
        } else {
            KeysetKind::Expr(value)
        };
        Ok(Keyset {
            kind,
            span: self.span_from(start),
        })
    }

    /// `control Name<T>(params)[(ctor params)] { locals apply { } }` or a type declaration.
    pub(crate) fn control_decl(&mut self) -> PResult<DeclKind> {
        self.expect(&TokenKind::Control)?;
        let name = self.ident("a control name")?;
        self.declare_type(&name.name);
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let r = self.control_decl_rest(name, type_params);
        self.pop_type_params();
        r
    }

    fn control_decl_rest(
        &mut self,
        name: crate::ast::Ident,
        type_params: Vec<crate::ast::Ident>,
    ) -> PResult<DeclKind> {
        let params = self.params()?;
        if self.eat(&TokenKind::Semi) {
            return Ok(DeclKind::ControlType(BlockType {
                name,
                type_params,
                params,
            }));
        }
        let ctor_params = if self.at(&TokenKind::LParen) {
            self.params()?
        } else {
            Vec::new()
        };
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` or `;`")?;
        let mut locals = Vec::new();
        let mut apply = None;
        while self.in_body() {
            let before = self.pos;
            if self.at(&TokenKind::Apply) {
                let apply_span = self.bump();
                match self.parse_block() {
                    Ok(b) => {
                        if apply.is_some() {
                            self.error_at(
                                Diagnostic::error("a control has only one `apply` block")
                                    .with_primary(apply_span, "second `apply` block"),
                            );
                        } else {
                            apply = Some(b);
                        }
                    }
                    Err(Fatal) => {
                        self.recover(Sync::Local);
                    }
                }
                continue;
            }
            if apply.is_some() {
                let span = self.peek().span;
                self.error_at(
                    Diagnostic::error("declarations after the `apply` block")
                        .with_primary(span, "expected `}` closing the control")
                        .with_help("move local declarations before `apply { ... }`"),
                );
            }
            match self.local_decl(BlockKind::Control) {
                Ok(d) => locals.push(d),
                Err(Fatal) => {
                    self.recover(Sync::Local);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.close_brace(open, "control")?;
        let apply = match apply {
            Some(a) => a,
            None => {
                self.error_at(
                    Diagnostic::error(format!("control `{}` has no `apply` block", name.name))
                        .with_primary(name.span, "control declared here")
                        .with_secondary(open, "its body has no `apply { ... }`"),
                );
                return Err(Fatal);
            }
        };
        Ok(DeclKind::Control(ControlDecl {
            name,
            type_params,
            params,
            ctor_params,
            locals,
            apply,
        }))
    }

    /// A local declaration of a parser or control.
    fn local_decl(&mut self, block: BlockKind) -> PResult<Decl> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let kind = match self.peek_kind() {
            TokenKind::Const => DeclKind::Const(self.const_decl_body()?),
            TokenKind::Action => {
                if block == BlockKind::Parser {
                    return self.not_in_parser("actions");
                }
                DeclKind::Action(self.action_decl()?)
            }
            TokenKind::Table => {
                if block == BlockKind::Parser {
                    return self.not_in_parser("tables");
                }
                DeclKind::Table(self.table_decl()?)
            }
            TokenKind::ValueSet => DeclKind::ValueSet(self.value_set_decl()?),
            TokenKind::State if block == BlockKind::Control => {
                let span = self.peek().span;
                self.error_at(
                    Diagnostic::error("parser states are not allowed in a control")
                        .with_primary(span, "`state` inside a control"),
                );
                return Err(Fatal);
            }
            TokenKind::Ident(_)
            | TokenKind::Bit
            | TokenKind::Int
            | TokenKind::Varbit
            | TokenKind::Bool
            | TokenKind::Tuple
            | TokenKind::Error => {
                self.check_misspelled_keyword()?;
                self.type_led_decl(DeclSite::Local)?
            }
            _ => {
                let what = match block {
                    BlockKind::Parser => "a state, constant, variable or instantiation",
                    BlockKind::Control => {
                        "an action, table, constant, variable, instantiation or `apply`"
                    }
                };
                return self.expected(what);
            }
        };
        Ok(Decl {
            annotations,
            kind,
            span: self.span_from(start),
        })
    }

    fn not_in_parser<T>(&mut self, what: &str) -> PResult<T> {
        let span = self.peek().span;
        self.error_at(
            Diagnostic::error(format!("{what} are not allowed in a parser"))
                .with_primary(span, "only allowed in a control"),
        );
        Err(Fatal)
    }

    /// `value_set<T>(size) name;`
    fn value_set_decl(&mut self) -> PResult<ValueSetDecl> {
        self.expect(&TokenKind::ValueSet)?;
        self.expect_one_of(&TokenKind::Lt, "`<` and the element type")?;
        let elem_ty = self.parse_type()?;
        if !self.at_gt() {
            return self.expected("`>`");
        }
        self.bump();
        self.expect(&TokenKind::LParen)?;
        let size = self.parse_expr()?;
        self.expect(&TokenKind::RParen)?;
        let name = self.ident("the value set's name")?;
        self.expect_semi()?;
        Ok(ValueSetDecl {
            elem_ty,
            size,
            name,
        })
    }

    /// `table name { properties }`
    fn table_decl(&mut self) -> PResult<TableDecl> {
        self.expect(&TokenKind::Table)?;
        let name = self.ident("a table name")?;
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the table properties")?;
        let mut properties = Vec::new();
        while self.in_body() {
            let before = self.pos;
            match self.table_property() {
                Ok(p) => properties.push(p),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.close_brace(open, "table")?;
        Ok(TableDecl { name, properties })
    }

    fn table_property(&mut self) -> PResult<TableProperty> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let is_const = self.eat(&TokenKind::Const);
        let name = self.ident("a table property name")?;
        self.expect_one_of(&TokenKind::Assign, "`=` after the property name")?;
        let kind = match name.name.as_str() {
            "key" => TablePropertyKind::Key(self.key_elements()?),
            "actions" => TablePropertyKind::Actions(self.action_list()?),
            "default_action" => {
                let a = self.action_ref()?;
                self.expect_semi()?;
                TablePropertyKind::DefaultAction(a)
            }
            "entries" => TablePropertyKind::Entries(self.entries()?),
            "size" => {
                let e = self.parse_expr()?;
                self.expect_semi()?;
                TablePropertyKind::Size(e)
            }
            _ => {
                let value = self.parse_expr()?;
                self.expect_semi()?;
                TablePropertyKind::Other { name, value }
            }
        };
        Ok(TableProperty {
            annotations,
            is_const,
            kind,
            span: self.span_from(start),
        })
    }

    /// `{ expr : match_kind [@annotations]; ... }`
    fn key_elements(&mut self) -> PResult<Vec<KeyElement>> {
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the key")?;
        let mut keys = Vec::new();
        while self.in_body() {
            let before = self.pos;
            let r = (|| -> PResult<KeyElement> {
                let start = self.peek().span;
                let mut annotations = self.annotations()?;
                let expr = self.parse_expr()?;
                self.expect_one_of(&TokenKind::Colon, "`:` and a match kind")?;
                let match_kind = self.ident("a match kind (exact, ternary, lpm, range, ...)")?;
                annotations.extend(self.annotations()?);
                self.expect_semi()?;
                Ok(KeyElement {
                    annotations,
                    expr,
                    match_kind,
                    span: self.span_from(start),
                })
            })();
            match r {
                Ok(k) => keys.push(k),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`}` closing the key")?;
        self.eat(&TokenKind::Semi);
        Ok(keys)
    }

    /// `{ a; @defaultonly b; c(1); }`
    fn action_list(&mut self) -> PResult<Vec<ActionRef>> {
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the action list")?;
        let mut actions = Vec::new();
        while self.in_body() {
            let before = self.pos;
            let r = (|| -> PResult<ActionRef> {
                let a = self.action_ref()?;
                self.expect_one_of(&TokenKind::Semi, "`;` after the action")?;
                Ok(a)
            })();
            match r {
                Ok(a) => actions.push(a),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`}` closing the action list")?;
        self.eat(&TokenKind::Semi);
        Ok(actions)
    }

    /// `[@annotations] name [(args)]`
    fn action_ref(&mut self) -> PResult<ActionRef> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        self.eat(&TokenKind::Dot);
        let name = self.ident("an action name")?;
        let args = if self.at(&TokenKind::LParen) {
            Some(self.call_args()?)
        } else {
            None
        };
        Ok(ActionRef {
            annotations,
            name,
            args,
            span: self.span_from(start),
        })
    }

    /// `{ [priority = N :] keyset : action(args); ... }`
    fn entries(&mut self) -> PResult<Vec<TableEntry>> {
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the entries")?;
        let mut entries = Vec::new();
        while self.in_body() {
            let before = self.pos;
            let r = (|| -> PResult<TableEntry> {
                let start = self.peek().span;
                let annotations = self.annotations()?;
                let priority =
                    if self.at_ident_named("priority") && self.nth_kind(1) == &TokenKind::Assign {
                        self.bump();
                        self.bump();
                        let p = self.parse_expr()?;
                        self.expect(&TokenKind::Colon)?;
                        Some(p)
                    } else {
                        None
                    };
                let keys = self.keyset()?;
                self.expect_one_of(&TokenKind::Colon, "`:` and the entry's action")?;
                let action = self.action_ref()?;
                self.expect_semi()?;
                Ok(TableEntry {
                    annotations,
                    priority,
                    keys,
                    action,
                    span: self.span_from(start),
                })
            })();
            match r {
                Ok(e) => entries.push(e),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`}` closing the entries")?;
        self.eat(&TokenKind::Semi);
        Ok(entries)
    }
}

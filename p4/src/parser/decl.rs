//! Declarations: the top-level loop with its error recovery, and the declarations that can
//! appear at top level (types, enums, externs, functions, actions, packages,
//! instantiations), plus parameter lists.

use super::cursor::Sync;
use super::{Fatal, PResult, Parser};
use crate::ast::{
    ActionDecl, Annotation, Decl, DeclKind, Direction, EnumDecl, EnumMember, ExternDecl,
    ExternMember, ExternMemberKind, Field, FunctionDecl, FunctionProto, Ident, Instantiation,
    PackageDecl, Param, StructDecl, Type, TypedefDecl,
};
use crate::diag::Diagnostic;
use crate::lexer::TokenKind;
use crate::source::Span;

/// Where a type-led declaration (`T ...`) appears; decides what it may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DeclSite {
    TopLevel,
    /// Inside a parser or control body.
    Local,
    /// Inside an instantiation initializer `= { ... }`.
    Initializer,
}

impl Parser {
    /// All top-level declarations, recovering after each bad one.
    pub(crate) fn top_level_decls(&mut self) -> Vec<Decl> {
        let mut decls = Vec::new();
        while !self.at_eof() && !self.gave_up {
            let before = self.pos;
            match self.top_level_decl() {
                Ok(Some(d)) => decls.push(d),
                Ok(None) => {}
                Err(Fatal) => {
                    self.recover(Sync::TopLevel);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        decls
    }

    fn top_level_decl(&mut self) -> PResult<Option<Decl>> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let kind = match self.peek_kind() {
            TokenKind::Semi => {
                self.bump();
                if annotations.is_empty() {
                    return Ok(None);
                }
                let span = self.span_from(start);
                self.error_at(
                    Diagnostic::error("annotations must be followed by a declaration")
                        .with_primary(span, "these annotations annotate nothing"),
                );
                return Err(Fatal);
            }
            TokenKind::Const => DeclKind::Const(self.const_decl_body()?),
            TokenKind::Typedef | TokenKind::Type => self.typedef_decl()?,
            TokenKind::Header | TokenKind::HeaderUnion | TokenKind::Struct => {
                self.struct_like_decl()?
            }
            TokenKind::Enum => self.enum_decl()?,
            TokenKind::Error if self.nth_kind(1) == &TokenKind::LBrace => {
                self.bump();
                DeclKind::Error(self.name_list("an error name")?)
            }
            TokenKind::MatchKind if self.nth_kind(1) == &TokenKind::LBrace => {
                self.bump();
                DeclKind::MatchKind(self.name_list("a match kind name")?)
            }
            TokenKind::Extern => self.extern_decl()?,
            TokenKind::Action => DeclKind::Action(self.action_decl()?),
            TokenKind::Parser => self.parser_decl()?,
            TokenKind::Control => self.control_decl()?,
            TokenKind::Package => self.package_decl()?,
            TokenKind::Table | TokenKind::State | TokenKind::ValueSet | TokenKind::Apply => {
                let tok = self.peek().clone();
                let what = tok.kind.describe();
                let inside = match tok.kind {
                    TokenKind::Table => "a control",
                    TokenKind::Apply => "a control (its `apply` block)",
                    _ => "a parser",
                };
                self.error_at(
                    Diagnostic::error(format!("{what} is not allowed at top level"))
                        .with_primary(tok.span, format!("only allowed inside {inside}")),
                );
                return Err(Fatal);
            }
            TokenKind::Ident(_)
            | TokenKind::Bit
            | TokenKind::Int
            | TokenKind::Varbit
            | TokenKind::Bool
            | TokenKind::Void
            | TokenKind::String
            | TokenKind::Tuple
            | TokenKind::Error => {
                self.check_misspelled_keyword()?;
                self.type_led_decl(DeclSite::TopLevel)?
            }
            _ => return self.expected("a declaration"),
        };
        Ok(Some(Decl {
            annotations,
            kind,
            span: self.span_from(start),
        }))
    }

    /// `typedef T name;` / `type T name;`
    fn typedef_decl(&mut self) -> PResult<DeclKind> {
        let is_new_type = self.at(&TokenKind::Type);
        self.bump();
        let ty = self.parse_type()?;
        let name = self.ident("the new type's name")?;
        self.declare_type(&name.name);
        self.expect_semi()?;
        Ok(DeclKind::Typedef(TypedefDecl {
            ty,
            name,
            is_new_type,
        }))
    }

    /// `header|header_union|struct Name [<T>] { fields }`
    fn struct_like_decl(&mut self) -> PResult<DeclKind> {
        let kw = self.peek_kind().clone();
        self.bump();
        let name = self.ident("a type name")?;
        self.declare_type(&name.name);
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let fields = self.fields();
        self.pop_type_params();
        let fields = fields?;
        let d = StructDecl {
            name,
            type_params,
            fields,
        };
        Ok(match kw {
            TokenKind::Header => DeclKind::Header(d),
            TokenKind::HeaderUnion => DeclKind::HeaderUnion(d),
            _ => DeclKind::Struct(d),
        })
    }

    /// `{ T name; ... }` with recovery per field.
    fn fields(&mut self) -> PResult<Vec<Field>> {
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the field list")?;
        let mut fields = Vec::new();
        while self.in_body() {
            let before = self.pos;
            match self.field() {
                Ok(f) => fields.push(f),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.close_brace(open, "field list")?;
        Ok(fields)
    }

    fn field(&mut self) -> PResult<Field> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let ty = self.parse_type()?;
        let name = self.ident("a field name")?;
        self.expect_semi()?;
        Ok(Field {
            annotations,
            ty,
            name,
            span: self.span_from(start),
        })
    }

    /// `enum [bit<W>] Name { A [= v], ... }`
    fn enum_decl(&mut self) -> PResult<DeclKind> {
        self.expect(&TokenKind::Enum)?;
        let repr = match self.peek_kind() {
            TokenKind::Bit | TokenKind::Int => Some(self.parse_type()?),
            TokenKind::Ident(_) if matches!(self.nth_kind(1), TokenKind::Ident(_)) => {
                Some(self.parse_type()?)
            }
            _ => None,
        };
        let name = self.ident("the enum's name")?;
        self.declare_type(&name.name);
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the enum members")?;
        let mut members = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            let start = self.peek().span;
            let annotations = self.annotations()?;
            let mname = self.ident("an enum member name")?;
            let value = if self.eat(&TokenKind::Assign) {
                Some(self.parse_expr()?)
            } else {
                None
            };
            members.push(EnumMember {
                annotations,
                name: mname,
                value,
                span: self.span_from(start),
            });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`,` or `}`")?;
        Ok(DeclKind::Enum(EnumDecl {
            name,
            repr,
            members,
        }))
    }

    /// `{ A, B, C }` for `error` and `match_kind`.
    fn name_list(&mut self, what: &str) -> PResult<Vec<Ident>> {
        self.expect(&TokenKind::LBrace)?;
        let mut names = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            names.push(self.ident(what)?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect_one_of(&TokenKind::RBrace, "`,` or `}`")?;
        Ok(names)
    }

    /// `extern Name<T> { members }` or `extern R f<T>(params);`
    fn extern_decl(&mut self) -> PResult<DeclKind> {
        self.expect(&TokenKind::Extern)?;
        let is_object = match (self.peek_kind(), self.nth_kind(1)) {
            (TokenKind::Ident(_), TokenKind::LBrace) => true,
            (TokenKind::Ident(_), TokenKind::Lt) => self.lookahead(|p| {
                p.bump();
                p.type_params()?;
                if p.at(&TokenKind::LBrace) {
                    Ok(())
                } else {
                    Err(Fatal)
                }
            }),
            _ => false,
        };
        if !is_object {
            let start = self.peek().span;
            let proto = self.function_proto(start)?;
            self.pop_type_params();
            self.expect_semi()?;
            return Ok(DeclKind::ExternFunction(proto));
        }
        let name = self.ident("the extern's name")?;
        self.declare_type(&name.name);
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let members = self.extern_members(&name);
        self.pop_type_params();
        Ok(DeclKind::Extern(ExternDecl {
            name,
            type_params,
            members: members?,
        }))
    }

    fn extern_members(&mut self, name: &Ident) -> PResult<Vec<ExternMember>> {
        let open = self.peek().span;
        self.expect(&TokenKind::LBrace)?;
        let mut members = Vec::new();
        while self.in_body() {
            let before = self.pos;
            match self.extern_member(name) {
                Ok(m) => members.push(m),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.close_brace(open, "extern")?;
        Ok(members)
    }

    fn extern_member(&mut self, extern_name: &Ident) -> PResult<ExternMember> {
        let start = self.peek().span;
        let annotations = self.annotations()?;
        let kind =
            if self.at_ident_named(&extern_name.name) && self.nth_kind(1) == &TokenKind::LParen {
                let name = self.ident("the constructor name")?;
                let params = self.params()?;
                ExternMemberKind::Constructor { name, params }
            } else if self.eat(&TokenKind::Abstract) {
                let pstart = self.peek().span;
                let proto = self.function_proto(pstart)?;
                self.pop_type_params();
                ExternMemberKind::AbstractMethod(proto)
            } else {
                let proto = self.function_proto(start)?;
                self.pop_type_params();
                ExternMemberKind::Method(proto)
            };
        self.expect_semi()?;
        Ok(ExternMember {
            annotations,
            kind,
            span: self.span_from(start),
        })
    }

    /// `R name<T>(params)`. Leaves the type parameter scope OPEN (the caller pops it after
    /// parsing a body, if any).
    pub(crate) fn function_proto(&mut self, start: Span) -> PResult<FunctionProto> {
        // The return type may mention the function's own type parameters (`T max<T>`), so
        // read it as a plain type; names are resolved by the checker.
        let return_type = self.parse_type()?;
        self.function_proto_after_type(start, return_type)
    }

    fn function_proto_after_type(
        &mut self,
        start: Span,
        return_type: Type,
    ) -> PResult<FunctionProto> {
        let name = self.name_or_keyword("a function name")?;
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let params = self.params()?;
        Ok(FunctionProto {
            return_type,
            name,
            type_params,
            params,
            span: self.span_from(start),
        })
    }

    /// `(param, ...)`
    pub(crate) fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect_one_of(&TokenKind::LParen, "`(` starting the parameter list")?;
        let mut params = Vec::new();
        if self.eat(&TokenKind::RParen) {
            return Ok(params);
        }
        loop {
            let start = self.peek().span;
            let annotations = self.annotations()?;
            let direction = match self.peek_kind() {
                TokenKind::In => Direction::In,
                TokenKind::Out => Direction::Out,
                TokenKind::InOut => Direction::InOut,
                _ => Direction::None,
            };
            if direction != Direction::None {
                self.bump();
            }
            let ty = self.parse_type()?;
            let name = self.ident("a parameter name")?;
            let default = if self.eat(&TokenKind::Assign) {
                Some(self.parse_expr()?)
            } else {
                None
            };
            params.push(Param {
                annotations,
                direction,
                ty,
                name,
                default,
                span: self.span_from(start),
            });
            if self.eat(&TokenKind::Comma) {
                continue;
            }
            self.expect_one_of(&TokenKind::RParen, "`,` or `)`")?;
            return Ok(params);
        }
    }

    /// `action name(params) { body }`
    pub(crate) fn action_decl(&mut self) -> PResult<ActionDecl> {
        self.expect(&TokenKind::Action)?;
        let name = self.ident("an action name")?;
        let params = self.params()?;
        let body = self.parse_block()?;
        Ok(ActionDecl { name, params, body })
    }

    /// `package Name<T>(params);`
    fn package_decl(&mut self) -> PResult<DeclKind> {
        self.expect(&TokenKind::Package)?;
        let name = self.ident("a package name")?;
        self.declare_type(&name.name);
        let type_params = self.type_params()?;
        self.push_type_params(&type_params);
        let params = self.params();
        self.pop_type_params();
        let params = params?;
        self.expect_semi()?;
        Ok(DeclKind::Package(PackageDecl {
            name,
            type_params,
            params,
        }))
    }

    /// A declaration that starts with a type: an instantiation `T(args) name;`, a function
    /// `R f(params) { }` (top level and initializers), or a variable `T x [= e];`.
    pub(crate) fn type_led_decl(&mut self, site: DeclSite) -> PResult<DeclKind> {
        let start = self.peek().span;
        let ty = self.parse_type()?;
        if self.at(&TokenKind::LParen) {
            return Ok(DeclKind::Instantiation(self.instantiation_rest(ty)?));
        }
        let is_function = matches!(self.nth_kind(1), TokenKind::LParen | TokenKind::Lt)
            && (matches!(self.peek_kind(), TokenKind::Ident(_))
                || self.peek_kind().keyword_text().is_some());
        if is_function {
            if site == DeclSite::Local {
                let span = self.peek().span;
                self.error_at(
                    Diagnostic::error("functions cannot be declared inside a parser or control")
                        .with_primary(span, "function declared here")
                        .with_help("declare it at top level, or write an action"),
                );
                return Err(Fatal);
            }
            let proto = self.function_proto_after_type(start, ty);
            let body = match proto {
                Ok(_) => self.parse_block(),
                Err(e) => Err(e),
            };
            self.pop_type_params();
            return Ok(DeclKind::Function(FunctionDecl {
                proto: proto?,
                body: body?,
            }));
        }
        let name = self.ident("a name")?;
        let init = if self.eat(&TokenKind::Assign) {
            Some(self.parse_expr()?)
        } else {
            None
        };
        if !self.at(&TokenKind::Semi) {
            return self.expected(if init.is_some() {
                "`;`"
            } else {
                "`;`, `=` or `(`"
            });
        }
        self.bump();
        Ok(DeclKind::Variable(crate::ast::VariableDecl {
            ty,
            name,
            init,
        }))
    }

    /// After the type of an instantiation: `(args) name [= { ... }];`
    fn instantiation_rest(&mut self, ty: Type) -> PResult<Instantiation> {
        let args = self.call_args()?;
        let name = self.ident("the instance name")?;
        let initializer = if self.eat(&TokenKind::Assign) {
            Some(self.initializer()?)
        } else {
            None
        };
        self.expect_one_of(
            &TokenKind::Semi,
            if initializer.is_some() {
                "`;`"
            } else {
                "`;` or `= {`"
            },
        )?;
        Ok(Instantiation {
            ty,
            args,
            name,
            initializer,
        })
    }

    /// `{ functions and instantiations }` of an instantiation initializer.
    fn initializer(&mut self) -> PResult<Vec<Decl>> {
        let open = self.peek().span;
        self.expect_one_of(&TokenKind::LBrace, "`{` starting the initializer")?;
        let mut decls = Vec::new();
        while self.in_body() {
            let before = self.pos;
            let start = self.peek().span;
            let r = (|| -> PResult<Decl> {
                let annotations: Vec<Annotation> = self.annotations()?;
                let kind = self.type_led_decl(DeclSite::Initializer)?;
                Ok(Decl {
                    annotations,
                    kind,
                    span: self.span_from(start),
                })
            })();
            match r {
                Ok(d) => decls.push(d),
                Err(Fatal) => {
                    self.recover(Sync::Statement);
                    if self.pos == before {
                        self.bump();
                    }
                }
            }
        }
        self.close_brace(open, "initializer")?;
        Ok(decls)
    }
}

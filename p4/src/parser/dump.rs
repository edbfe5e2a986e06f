//! A compact, indented text dump of the AST: one line per declaration, member, property or
//! statement; expressions in P4 syntax with every operator application parenthesized (so the
//! dump shows how precedence was resolved). Used by the golden tests and for debugging.

use std::fmt::Write as _;

use crate::ast::*;

/// Dumps the given declarations (filter out the built-in ones with `SourceMap::is_builtin`).
pub fn dump_decls<'a>(decls: impl IntoIterator<Item = &'a Decl>) -> String {
    let mut d = Dumper { out: String::new() };
    for decl in decls {
        d.decl(decl, 0);
    }
    d.out
}

struct Dumper {
    out: String,
}

impl Dumper {
    fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn decl(&mut self, d: &Decl, ind: usize) {
        let ann = annotations(&d.annotations);
        match &d.kind {
            DeclKind::Const(c) => self.line(
                ind,
                &format!(
                    "{ann}const {} {} = {}",
                    ty(&c.ty),
                    c.name.name,
                    expr(&c.value)
                ),
            ),
            DeclKind::Typedef(t) => self.line(
                ind,
                &format!(
                    "{ann}{} {} {}",
                    if t.is_new_type { "type" } else { "typedef" },
                    ty(&t.ty),
                    t.name.name
                ),
            ),
            DeclKind::Header(s) | DeclKind::HeaderUnion(s) | DeclKind::Struct(s) => {
                let kw = match &d.kind {
                    DeclKind::Header(_) => "header",
                    DeclKind::HeaderUnion(_) => "header_union",
                    _ => "struct",
                };
                self.line(
                    ind,
                    &format!("{ann}{kw} {}{}", s.name.name, tparams(&s.type_params)),
                );
                for f in &s.fields {
                    self.line(
                        ind + 1,
                        &format!(
                            "{}field {} {}",
                            annotations(&f.annotations),
                            ty(&f.ty),
                            f.name.name
                        ),
                    );
                }
            }
            DeclKind::Enum(e) => {
                let repr = e
                    .repr
                    .as_ref()
                    .map(|t| format!("{} ", ty(t)))
                    .unwrap_or_default();
                let members: Vec<String> = e
                    .members
                    .iter()
                    .map(|m| match &m.value {
                        Some(v) => format!("{} = {}", m.name.name, expr(v)),
                        None => m.name.name.clone(),
                    })
                    .collect();
                self.line(
                    ind,
                    &format!(
                        "{ann}enum {repr}{} {{ {} }}",
                        e.name.name,
                        members.join(", ")
                    ),
                );
            }
            DeclKind::Error(names) => {
                self.line(ind, &format!("{ann}error {{ {} }}", idents(names)))
            }
            DeclKind::MatchKind(names) => {
                self.line(ind, &format!("{ann}match_kind {{ {} }}", idents(names)))
            }
            DeclKind::Extern(e) => {
                self.line(
                    ind,
                    &format!("{ann}extern {}{}", e.name.name, tparams(&e.type_params)),
                );
                for m in &e.members {
                    let a = annotations(&m.annotations);
                    let text = match &m.kind {
                        ExternMemberKind::Constructor { name, params: p } => {
                            format!("{a}constructor {}({})", name.name, params(p))
                        }
                        ExternMemberKind::Method(p) => format!("{a}method {}", proto(p)),
                        ExternMemberKind::AbstractMethod(p) => format!("{a}abstract {}", proto(p)),
                    };
                    self.line(ind + 1, &text);
                }
            }
            DeclKind::ExternFunction(p) => self.line(ind, &format!("{ann}extern {}", proto(p))),
            DeclKind::Function(f) => {
                self.line(ind, &format!("{ann}function {}", proto(&f.proto)));
                self.block(&f.body, ind + 1);
            }
            DeclKind::Action(a) => {
                self.line(
                    ind,
                    &format!("{ann}action {}({})", a.name.name, params(&a.params)),
                );
                self.block(&a.body, ind + 1);
            }
            DeclKind::ParserType(b) => self.line(
                ind,
                &format!(
                    "{ann}parser type {}{}({})",
                    b.name.name,
                    tparams(&b.type_params),
                    params(&b.params)
                ),
            ),
            DeclKind::ControlType(b) => self.line(
                ind,
                &format!(
                    "{ann}control type {}{}({})",
                    b.name.name,
                    tparams(&b.type_params),
                    params(&b.params)
                ),
            ),
            DeclKind::Parser(p) => {
                self.line(
                    ind,
                    &format!(
                        "{ann}parser {}{}({}){}",
                        p.name.name,
                        tparams(&p.type_params),
                        params(&p.params),
                        ctor(&p.ctor_params)
                    ),
                );
                for l in &p.locals {
                    self.decl(l, ind + 1);
                }
                for s in &p.states {
                    self.line(
                        ind + 1,
                        &format!("{}state {}", annotations(&s.annotations), s.name.name),
                    );
                    for st in &s.body {
                        self.stmt(st, ind + 2);
                    }
                    match &s.transition {
                        None => self.line(ind + 2, "(no transition)"),
                        Some(t) => match &t.kind {
                            TransitionKind::Direct(n) => {
                                self.line(ind + 2, &format!("transition {}", n.name))
                            }
                            TransitionKind::Select { exprs, cases } => {
                                self.line(
                                    ind + 2,
                                    &format!("transition select({})", exprs_list(exprs)),
                                );
                                for c in cases {
                                    self.line(
                                        ind + 3,
                                        &format!("{} => {}", keyset(&c.keyset), c.next.name),
                                    );
                                }
                            }
                        },
                    }
                }
            }
            DeclKind::Control(c) => {
                self.line(
                    ind,
                    &format!(
                        "{ann}control {}{}({}){}",
                        c.name.name,
                        tparams(&c.type_params),
                        params(&c.params),
                        ctor(&c.ctor_params)
                    ),
                );
                for l in &c.locals {
                    self.decl(l, ind + 1);
                }
                self.line(ind + 1, "apply");
                self.block(&c.apply, ind + 2);
            }
            DeclKind::Package(p) => self.line(
                ind,
                &format!(
                    "{ann}package {}{}({})",
                    p.name.name,
                    tparams(&p.type_params),
                    params(&p.params)
                ),
            ),
            DeclKind::Instantiation(i) => {
                self.line(
                    ind,
                    &format!(
                        "{ann}instance {}({}) {}",
                        ty(&i.ty),
                        args(&i.args),
                        i.name.name
                    ),
                );
                if let Some(init) = &i.initializer {
                    for d in init {
                        self.decl(d, ind + 1);
                    }
                }
            }
            DeclKind::Table(t) => {
                self.line(ind, &format!("{ann}table {}", t.name.name));
                for p in &t.properties {
                    let a = annotations(&p.annotations);
                    let c = if p.is_const { "const " } else { "" };
                    match &p.kind {
                        TablePropertyKind::Key(keys) => {
                            self.line(ind + 1, &format!("{a}{c}key"));
                            for k in keys {
                                self.line(
                                    ind + 2,
                                    &format!(
                                        "{}{} : {}",
                                        annotations(&k.annotations),
                                        expr(&k.expr),
                                        k.match_kind.name
                                    ),
                                );
                            }
                        }
                        TablePropertyKind::Actions(list) => {
                            let names: Vec<String> = list.iter().map(action_ref).collect();
                            self.line(ind + 1, &format!("{a}{c}actions {}", names.join(", ")));
                        }
                        TablePropertyKind::DefaultAction(r) => {
                            self.line(ind + 1, &format!("{a}{c}default_action {}", action_ref(r)))
                        }
                        TablePropertyKind::Entries(es) => {
                            self.line(ind + 1, &format!("{a}{c}entries"));
                            for e in es {
                                let prio = e
                                    .priority
                                    .as_ref()
                                    .map(|p| format!("priority {} ", expr(p)))
                                    .unwrap_or_default();
                                self.line(
                                    ind + 2,
                                    &format!(
                                        "{prio}{} => {}",
                                        keyset(&e.keys),
                                        action_ref(&e.action)
                                    ),
                                );
                            }
                        }
                        TablePropertyKind::Size(e) => {
                            self.line(ind + 1, &format!("{a}{c}size {}", expr(e)))
                        }
                        TablePropertyKind::Other { name, value } => {
                            self.line(ind + 1, &format!("{a}{c}{} = {}", name.name, expr(value)))
                        }
                    }
                }
            }
            DeclKind::Variable(v) => self.line(ind, &format!("{ann}{}", var(v))),
            DeclKind::ValueSet(v) => self.line(
                ind,
                &format!(
                    "{ann}value_set<{}>({}) {}",
                    ty(&v.elem_ty),
                    expr(&v.size),
                    v.name.name
                ),
            ),
            DeclKind::Unsupported { what } => self.line(ind, &format!("{ann}unsupported {what}")),
        }
    }

    fn block(&mut self, b: &Block, ind: usize) {
        for s in &b.stmts {
            self.stmt(s, ind);
        }
    }

    fn stmt(&mut self, s: &Stmt, ind: usize) {
        let ann = annotations(&s.annotations);
        match &s.kind {
            StmtKind::Assign { lhs, op, rhs } => {
                let op = op.map(|o| o.as_str()).unwrap_or("");
                self.line(ind, &format!("{ann}{} {op}= {}", expr(lhs), expr(rhs)))
            }
            StmtKind::Call(e) => self.line(ind, &format!("{ann}call {}", expr(e))),
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.line(ind, &format!("{ann}if {}", expr(cond)));
                self.stmt(then_branch, ind + 1);
                if let Some(e) = else_branch {
                    self.line(ind, "else");
                    self.stmt(e, ind + 1);
                }
            }
            StmtKind::Switch { subject, cases } => {
                self.line(ind, &format!("{ann}switch {}", expr(subject)));
                for c in cases {
                    let label = match &c.label {
                        SwitchLabel::Default => "default".to_string(),
                        SwitchLabel::Expr(e) => expr(e),
                    };
                    match &c.body {
                        None => self.line(ind + 1, &format!("case {label} (falls through)")),
                        Some(b) => {
                            self.line(ind + 1, &format!("case {label}"));
                            self.block(b, ind + 2);
                        }
                    }
                }
            }
            StmtKind::Block(b) => {
                self.line(ind, &format!("{ann}{}block", annotations(&b.annotations)));
                self.block(b, ind + 1);
            }
            StmtKind::Variable(v) => self.line(ind, &format!("{ann}{}", var(v))),
            StmtKind::Const(c) => self.line(
                ind,
                &format!(
                    "{ann}const {} {} = {}",
                    ty(&c.ty),
                    c.name.name,
                    expr(&c.value)
                ),
            ),
            StmtKind::Return(v) => match v {
                Some(e) => self.line(ind, &format!("{ann}return {}", expr(e))),
                None => self.line(ind, &format!("{ann}return")),
            },
            StmtKind::Exit => self.line(ind, &format!("{ann}exit")),
            StmtKind::Empty => self.line(ind, &format!("{ann}empty")),
            StmtKind::Unsupported { what } => self.line(ind, &format!("{ann}unsupported {what}")),
        }
    }
}

fn var(v: &VariableDecl) -> String {
    match &v.init {
        Some(e) => format!("var {} {} = {}", ty(&v.ty), v.name.name, expr(e)),
        None => format!("var {} {}", ty(&v.ty), v.name.name),
    }
}

fn idents(names: &[Ident]) -> String {
    names
        .iter()
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn tparams(names: &[Ident]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!("<{}>", idents(names))
    }
}

fn ctor(p: &[Param]) -> String {
    if p.is_empty() {
        String::new()
    } else {
        format!("({})", params(p))
    }
}

fn params(ps: &[Param]) -> String {
    ps.iter()
        .map(|p| {
            let dir = match p.direction {
                Direction::None => "",
                Direction::In => "in ",
                Direction::Out => "out ",
                Direction::InOut => "inout ",
            };
            let dflt = p
                .default
                .as_ref()
                .map(|e| format!(" = {}", expr(e)))
                .unwrap_or_default();
            format!(
                "{}{dir}{} {}{dflt}",
                annotations(&p.annotations),
                ty(&p.ty),
                p.name.name
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn proto(p: &FunctionProto) -> String {
    format!(
        "{} {}{}({})",
        ty(&p.return_type),
        p.name.name,
        tparams(&p.type_params),
        params(&p.params)
    )
}

fn action_ref(r: &ActionRef) -> String {
    let a = annotations(&r.annotations);
    match &r.args {
        Some(list) => format!("{a}{}({})", r.name.name, args(list)),
        None => format!("{a}{}", r.name.name),
    }
}

fn annotations(list: &[Annotation]) -> String {
    let mut s = String::new();
    for a in list {
        let _ = write!(s, "@{}", a.name.name);
        match &a.body {
            AnnotationBody::Empty => {}
            AnnotationBody::Exprs(es) => {
                let _ = write!(s, "({})", exprs_list(es));
            }
            AnnotationBody::KeyValues(kvs) => {
                let items: Vec<String> = kvs
                    .iter()
                    .map(|kv| format!("{} = {}", kv.name.name, expr(&kv.value)))
                    .collect();
                let _ = write!(s, "[{}]", items.join(", "));
            }
            AnnotationBody::Tokens(toks) => {
                let items: Vec<&str> = toks.iter().map(|t| t.text.as_str()).collect();
                let _ = write!(s, "{{{}}}", items.join(" "));
            }
        }
        s.push(' ');
    }
    s
}

fn keyset(k: &Keyset) -> String {
    match &k.kind {
        KeysetKind::Default => "default".to_string(),
        KeysetKind::DontCare => "_".to_string(),
        KeysetKind::Expr(e) => expr(e),
        KeysetKind::Mask { value, mask } => format!("{} &&& {}", expr(value), expr(mask)),
        KeysetKind::Range { lo, hi } => format!("{} .. {}", expr(lo), expr(hi)),
        KeysetKind::Tuple(items) => {
            let parts: Vec<String> = items.iter().map(keyset).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// A type in P4 syntax.
pub fn ty(t: &Type) -> String {
    match &t.kind {
        TypeKind::Bool => "bool".into(),
        TypeKind::Error => "error".into(),
        TypeKind::MatchKind => "match_kind".into(),
        TypeKind::String => "string".into(),
        TypeKind::Void => "void".into(),
        TypeKind::InfInt => "int".into(),
        TypeKind::Bit(w) => format!("bit<{}>", expr(w)),
        TypeKind::Int(w) => format!("int<{}>", expr(w)),
        TypeKind::Varbit(w) => format!("varbit<{}>", expr(w)),
        TypeKind::Named(n) => n.name.clone(),
        TypeKind::Specialized { base, args } => {
            let a: Vec<String> = args.iter().map(ty).collect();
            format!("{}<{}>", base.name, a.join(", "))
        }
        TypeKind::Tuple(args) => {
            let a: Vec<String> = args.iter().map(ty).collect();
            format!("tuple<{}>", a.join(", "))
        }
        TypeKind::Stack { elem, size } => format!("{}[{}]", ty(elem), expr(size)),
        TypeKind::DontCare => "_".into(),
    }
}

fn exprs_list(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(", ")
}

fn args(list: &[Argument]) -> String {
    list.iter()
        .map(|a| match &a.name {
            Some(n) => format!("{} = {}", n.name, expr(&a.value)),
            None => expr(&a.value),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An expression in P4 syntax, every operator application parenthesized.
pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(l) => match l.width {
            Some(w) => format!("{w}{}{}", if l.signed { "s" } else { "w" }, l.value),
            None => l.value.to_string(),
        },
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::String(s) => format!("\"{}\"", s.escape_default()),
        ExprKind::Name(n) => n.name.clone(),
        ExprKind::ErrorMember(n) => format!("error.{}", n.name),
        ExprKind::This => "this".into(),
        ExprKind::DontCare => "_".into(),
        ExprKind::Member { base, member } => format!("{}.{}", expr(base), member.name),
        ExprKind::Index { base, index } => format!("{}[{}]", expr(base), expr(index)),
        ExprKind::Slice { base, hi, lo } => format!("{}[{}:{}]", expr(base), expr(hi), expr(lo)),
        ExprKind::Unary { op, operand } => format!("({}{})", op.as_str(), expr(operand)),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", expr(lhs), op.as_str(), expr(rhs))
        }
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => format!(
            "({} ? {} : {})",
            expr(cond),
            expr(then_expr),
            expr(else_expr)
        ),
        ExprKind::Cast { ty: t, expr: inner } => format!("(({}) {})", ty(t), expr(inner)),
        ExprKind::Call {
            callee,
            type_args,
            args: a,
        } => {
            let targs = if type_args.is_empty() {
                String::new()
            } else {
                let t: Vec<String> = type_args.iter().map(ty).collect();
                format!("<{}>", t.join(", "))
            };
            format!("{}{targs}({})", expr(callee), args(a))
        }
        ExprKind::List(items) => format!("{{{}}}", exprs_list(items)),
        ExprKind::StructInit(fields) => {
            let f: Vec<String> = fields
                .iter()
                .map(|f| match f.name.name.as_str() {
                    crate::ast::DEFAULT_REST => "...".to_string(),
                    _ => format!("{} = {}", f.name.name, expr(&f.value)),
                })
                .collect();
            format!("{{{}}}", f.join(", "))
        }
        ExprKind::InvalidHeader => "{#}".to_string(),
        ExprKind::Type(t) => ty(t),
    }
}

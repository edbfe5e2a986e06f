//! The top-level environment: every top-level declaration by name, the program's `error` and
//! `match_kind` members, and resolution of written types (typedefs, widths, generic arguments)
//! to [`Ty`].

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::ast::{self, DeclKind, ExprKind, TypeKind};
use crate::check::suggest;
use crate::check::types::{EnumTy, StructTy, Ty, MAX_FIELD_WIDTH, MAX_WIDTH};
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{FileId, SourceMap, Span};

/// Type parameters bound to types (`H` → `header_t`).
pub type TypeParams = HashMap<String, Ty>;

/// Nesting limit for typedef chains and constant references (a cycle is reported, not followed).
const MAX_DEPTH: u32 = 64;

/// How deep struct, header and union types may nest (a struct with a field of struct type is 2
/// deep): the lowering names every field by its whole path (`meta.a.b.c...`), so its memory
/// grows with the square of the depth (20,000 levels took 766 MB). See `p4/LIMITS.md`.
pub const MAX_STRUCT_NESTING: u32 = 256;
/// Most members one struct, header or union type may flatten into (each field and each nested
/// struct or header once; a stack counts each element's): nesting is bounded by
/// [`MAX_STRUCT_NESTING`], but a struct holding two of the one before it, forty times over,
/// has 2^40 members from a kilobyte of source (it exhausted memory), empty structs included.
/// A Tofino's PHV holds a few thousand fields at most. See `p4/LIMITS.md`.
pub const MAX_STRUCT_FIELDS: u64 = 1 << 16;
/// The nesting recorded for a type refused as too deep (and, saturating, for types built on
/// it, which are not reported again).
const TOO_DEEP: u32 = u32::MAX;

/// Externs that t2na.p4 declares and tna.p4 does not (Tofino 2's stateful extras): naming one
/// in a TNA program says why it is unknown.
const T2NA_ONLY: &[&str] = &[
    "RegisterAction2",
    "RegisterAction3",
    "RegisterAction4",
    "DirectRegisterAction2",
    "DirectRegisterAction3",
    "DirectRegisterAction4",
    "MinMaxAction",
    "MinMaxAction2",
    "MinMaxAction3",
    "MinMaxAction4",
    "LearnAction",
    "LearnAction2",
    "LearnAction3",
    "LearnAction4",
];

/// Top-level declarations and the caches built from them.
pub struct Env<'a> {
    pub program: &'a ast::Program,
    /// The loaded files (for key names as written).
    pub sources: &'a SourceMap,
    top: HashMap<&'a str, Vec<&'a ast::Decl>>,
    /// `error` members in declaration order (core.p4's first).
    pub errors: Vec<String>,
    pub match_kinds: Vec<String>,
    /// Files of the built-in architecture headers (their annotations are not reported).
    pub arch_files: HashSet<FileId>,
    types: RefCell<HashMap<String, Ty>>,
    building: RefCell<HashSet<String>>,
    /// Per struct / header / union type built, how deep structs nest in it (itself counts 1).
    nesting: RefCell<HashMap<String, u32>>,
    /// Per struct / header / union type built, the members it flattens into ([`Env::width_of`]).
    widths: RefCell<HashMap<String, u64>>,
    /// Struct / header / union types refused as too wide (recorded without fields).
    too_wide: RefCell<HashSet<String>>,
}

impl<'a> Env<'a> {
    /// Indexes `program`; duplicate user declarations are reported into `diags`.
    pub fn new(program: &'a ast::Program, sm: &'a SourceMap, diags: &mut Diagnostics) -> Env<'a> {
        let arch_files = sm
            .iter()
            .filter(|(_, f)| f.name.starts_with("<builtin>/"))
            .map(|(id, _)| id)
            .collect();
        let mut env = Env {
            program,
            sources: sm,
            top: HashMap::new(),
            errors: Vec::new(),
            match_kinds: Vec::new(),
            arch_files,
            types: RefCell::new(HashMap::new()),
            building: RefCell::new(HashSet::new()),
            nesting: RefCell::new(HashMap::new()),
            widths: RefCell::new(HashMap::new()),
            too_wide: RefCell::new(HashSet::new()),
        };
        for d in &program.decls {
            match &d.kind {
                DeclKind::Error(ms) => {
                    for m in ms {
                        if !env.errors.contains(&m.name) {
                            env.errors.push(m.name.clone());
                        }
                    }
                    continue;
                }
                DeclKind::MatchKind(ms) => {
                    for m in ms {
                        if !env.match_kinds.contains(&m.name) {
                            env.match_kinds.push(m.name.clone());
                        }
                    }
                    continue;
                }
                _ => {}
            }
            let Some(name) = d.name() else { continue };
            let entry = env.top.entry(name.name.as_str()).or_default();
            if let Some(prev) = entry.first() {
                let overloadable =
                    matches!(d.kind, DeclKind::ExternFunction(_) | DeclKind::Function(_))
                        && matches!(
                            prev.kind,
                            DeclKind::ExternFunction(_) | DeclKind::Function(_)
                        );
                // Extern constructors overloads and parser/control type re-declarations in
                // the architecture files are not user errors.
                let in_arch = env.arch_files.contains(&d.span.file);
                if !overloadable && !in_arch {
                    let prev_span = prev.name().map(|n| n.span).unwrap_or(prev.span);
                    diags.push(
                        Diagnostic::error(format!("duplicate declaration of `{}`", name.name))
                            .with_primary(name.span, "declared again here")
                            .with_secondary(prev_span, "first declared here")
                            .with_help("rename one of the two declarations"),
                    );
                    continue;
                }
            }
            entry.push(d);
        }
        env
    }

    /// The top-level declaration named `name` (the first one for overloaded functions).
    pub fn lookup(&self, name: &str) -> Option<&'a ast::Decl> {
        self.top.get(name).and_then(|v| v.first().copied())
    }

    /// All top-level declarations named `name` (overloads).
    pub fn lookup_all(&self, name: &str) -> &[&'a ast::Decl] {
        self.top.get(name).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Every top-level name, for "did you mean" help.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.top.keys().copied()
    }

    /// The source text of `span` with runs of whitespace collapsed (for names "as written").
    pub fn text_of(&self, span: Span) -> String {
        self.sources
            .snippet(span)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// True when `span` lies in a built-in architecture header.
    pub fn is_arch(&self, span: Span) -> bool {
        self.arch_files.contains(&span.file)
    }

    /// The numeric value of `error.name` (its index in declaration order).
    pub fn error_value(&self, name: &str) -> Option<u16> {
        self.errors
            .iter()
            .position(|e| e == name)
            .and_then(|i| u16::try_from(i).ok())
    }

    /// Resolves a written type. `tparams` binds the type parameters in scope.
    pub fn resolve_type(&self, t: &ast::Type, tparams: &TypeParams) -> Result<Ty, Diagnostic> {
        self.resolve_type_depth(t, tparams, 0)
    }

    fn resolve_type_depth(
        &self,
        t: &ast::Type,
        tparams: &TypeParams,
        depth: u32,
    ) -> Result<Ty, Diagnostic> {
        if depth > MAX_DEPTH {
            return Err(Diagnostic::error(format!(
                "type definitions nest deeper than {MAX_DEPTH} levels (typedefs of \
                     typedefs, or a cycle of them): pisa resolves at most {MAX_DEPTH}"
            ))
            .with_primary(t.span, "while resolving this type"));
        }
        Ok(match &t.kind {
            TypeKind::Bool => Ty::Bool,
            TypeKind::Error => Ty::Error,
            TypeKind::MatchKind => Ty::MatchKind,
            TypeKind::String => Ty::String,
            TypeKind::Void => Ty::Void,
            TypeKind::InfInt => Ty::InfInt,
            TypeKind::DontCare => Ty::DontCare,
            TypeKind::Bit(w) => Ty::Bit(self.width(w, false)?),
            TypeKind::Int(w) => Ty::Int(self.width(w, true)?),
            TypeKind::Varbit(w) => {
                let n = self.width(w, false)?;
                if !n.is_multiple_of(8) {
                    return Err(Diagnostic::error(format!(
                        "`varbit<{n}>`: Tofino extracts a varbit field in whole bytes"
                    ))
                    .with_primary(w.span, "not a multiple of 8")
                    .with_help("use a width that is a multiple of 8"));
                }
                Ty::Varbit(n)
            }
            TypeKind::Tuple(ts) => {
                let ts: Vec<Ty> = ts
                    .iter()
                    .map(|t| self.resolve_type_depth(t, tparams, depth + 1))
                    .collect::<Result<_, _>>()?;
                // Bounded as structs are: typedefs of tuples of two of the one before double
                // at each level, and the type itself is built whole (each element was checked
                // when it was built, so this walk is bounded too).
                let width = ts
                    .iter()
                    .fold(1u64, |n, t| n.saturating_add(self.width_of(t)));
                if width > MAX_STRUCT_FIELDS {
                    return Err(Diagnostic::error(format!(
                        "a tuple type that flattens into {width} members (fields and nested \
                         tuples or structs): pisa allows at most {MAX_STRUCT_FIELDS} in one type"
                    ))
                    .with_primary(t.span, "this tuple type"));
                }
                Ty::Tuple(ts)
            }
            TypeKind::Stack { elem, size } => {
                let e = self.resolve_type_depth(elem, tparams, depth + 1)?;
                if !matches!(&e, Ty::Header(_)) && !matches!(&e, Ty::Struct(s) if s.union) {
                    return Err(Diagnostic::error(format!(
                        "header stack of `{e}`, which is not a header type"
                    ))
                    .with_primary(elem.span, "not a header")
                    .with_help("stacks hold headers or header unions: `my_header_h[4] name;`"));
                }
                let n = self.eval_int(size)?;
                if !(1..=64).contains(&n) {
                    return Err(
                        Diagnostic::error(format!("header stack size {n} out of range"))
                            .with_primary(size.span, "stack size")
                            .with_help("use a size between 1 and 64"),
                    );
                }
                Ty::Stack(Box::new(e), n as u32)
            }
            TypeKind::Named(id) => {
                if let Some(t) = tparams.get(&id.name) {
                    return Ok(t.clone());
                }
                self.named_type(id, &[], tparams, depth)?
            }
            TypeKind::Specialized { base, .. }
                if base.name == "list" && self.lookup("list").is_none() =>
            {
                return Err(crate::check::unsupported(
                    t.span,
                    "`list<T>`, the type of list expressions (P4_16 1.2.3)",
                    "values of list type: TNA declares no extern taking one, and whether \
                     bf-p4c compiles them is not established",
                )
                .with_help(
                    "write the list where it is used (`hash.get({a, b})`), or use a \
                     `tuple<...>` or a struct",
                ));
            }
            TypeKind::Specialized { base, args } => {
                let args: Vec<Ty> = args
                    .iter()
                    .map(|a| self.resolve_type_depth(a, tparams, depth + 1))
                    .collect::<Result<_, _>>()?;
                self.named_type(base, &args, tparams, depth)?
            }
        })
    }

    fn width(&self, w: &ast::Expr, signed: bool) -> Result<u16, Diagnostic> {
        let n = self.eval_int(w)?;
        let min = if signed { 2 } else { 1 };
        if n == 0 {
            // The P4_16 spec allows `bit<0>`; bf-p4c (the TNA compiler) rejects it.
            let ty = if signed { "int" } else { "bit" };
            return Err(Diagnostic::error(format!("`{ty}<0>`: illegal bit size"))
                .with_primary(w.span, "zero-width type")
                .with_note("bf-p4c rejects zero-width types (\"Illegal bit size\")")
                .with_help(format!(
                    "remove it, or use a width from {min} to {MAX_WIDTH}"
                )));
        }
        let max = if signed { MAX_WIDTH } else { MAX_FIELD_WIDTH };
        if n < min || n > i128::from(max) {
            return Err(Diagnostic::error(format!("bit width {n} is not supported"))
                .with_primary(w.span, "width out of range")
                .with_help(format!("widths from {min} to {max} bits are supported")));
        }
        Ok(n as u16)
    }

    /// Resolves the top-level type declaration `id` (struct, header, enum, typedef without type
    /// parameters): how the checker validates declarations the program never uses.
    pub fn check_type_decl(&self, id: &ast::Ident) -> Result<Ty, Diagnostic> {
        self.named_type(id, &[], &TypeParams::new(), 0)
    }

    fn named_type(
        &self,
        id: &ast::Ident,
        args: &[Ty],
        tparams: &TypeParams,
        depth: u32,
    ) -> Result<Ty, Diagnostic> {
        let Some(decl) = self.lookup(&id.name) else {
            let mut d = Diagnostic::error(format!("unknown type `{}`", id.name))
                .with_primary(id.span, "not declared");
            let cands = self
                .top
                .iter()
                .filter(|(_, ds)| ds.iter().any(|d| is_type_decl(&d.kind)))
                .map(|(n, _)| *n)
                .chain(tparams.keys().map(String::as_str));
            if T2NA_ONLY.contains(&id.name.as_str()) {
                d = d
                    .with_note(format!(
                        "`{}` is a Tofino 2 extern, declared by t2na.p4 only",
                        id.name
                    ))
                    .with_help("include <t2na.p4> and compile with --target tofino2");
            } else if let Some(h) = suggest::did_you_mean(&id.name, cands) {
                d = d.with_help(h);
            }
            return Err(d);
        };
        let no_args = |what: &str| -> Result<(), Diagnostic> {
            if args.is_empty() {
                Ok(())
            } else {
                Err(
                    Diagnostic::error(format!("{what} `{}` takes no type arguments", id.name))
                        .with_primary(id.span, "type arguments given here")
                        .with_help(format!("write `{}` alone", id.name)),
                )
            }
        };
        match &decl.kind {
            DeclKind::Typedef(td) => {
                no_args("typedef")?;
                self.resolve_type_depth(&td.ty, &TypeParams::new(), depth + 1)
            }
            DeclKind::Header(s) | DeclKind::Struct(s) => {
                if s.type_params.is_empty() {
                    no_args("type")?;
                    return self.struct_type(decl, s, &[], depth);
                }
                if args.len() != s.type_params.len() {
                    return Err(Diagnostic::error(format!(
                        "generic type `{}` takes {} type argument(s), {} given",
                        id.name,
                        s.type_params.len(),
                        args.len()
                    ))
                    .with_primary(id.span, "wrong number of type arguments")
                    .with_help(format!(
                        "specialise it: `{}<{}>`",
                        id.name,
                        vec!["bit<8>"; s.type_params.len()].join(", ")
                    )));
                }
                self.struct_type(decl, s, args, depth)
            }
            DeclKind::HeaderUnion(s) => {
                no_args("header union")?;
                self.struct_type(decl, s, &[], depth)
            }
            DeclKind::Enum(e) => {
                no_args("enum")?;
                self.enum_type(e)
            }
            DeclKind::Extern(e) => {
                if !args.is_empty() && args.len() != e.type_params.len() {
                    return Err(Diagnostic::error(format!(
                        "`{}` takes {} type argument(s), {} given",
                        id.name,
                        e.type_params.len(),
                        args.len()
                    ))
                    .with_primary(id.span, "wrong number of type arguments"));
                }
                Ok(Ty::Extern {
                    name: id.name.clone(),
                    args: args.to_vec(),
                })
            }
            DeclKind::Parser(_)
            | DeclKind::Control(_)
            | DeclKind::ParserType(_)
            | DeclKind::ControlType(_)
            | DeclKind::Package(_) => Ok(Ty::Block(id.name.clone())),
            _ => Err(Diagnostic::error(format!("`{}` is not a type", id.name))
                .with_primary(id.span, "used as a type here")
                .with_secondary(
                    decl.name().map(|n| n.span).unwrap_or(decl.span),
                    "declared here",
                )),
        }
    }

    /// Whether a header's layout is bf-p4c's to choose (`@flexible` on the header, on one of
    /// its fields, or on the type of one of its struct-typed fields: bridged metadata).
    fn is_flexible(&self, decl: &ast::Decl, s: &ast::StructDecl, fields: &[(String, Ty)]) -> bool {
        let flexible = |d: &ast::Decl| crate::check::annotations::has(&d.annotations, "flexible");
        flexible(decl)
            || s.fields
                .iter()
                .any(|f| crate::check::annotations::has(&f.annotations, "flexible"))
            || fields.iter().any(|(_, t)| match t {
                Ty::Struct(st) => self
                    .lookup(st.name.split('<').next().unwrap_or(&st.name))
                    .is_some_and(flexible),
                _ => false,
            })
    }

    /// The struct or header type `s`, specialised with `args` for its type parameters when it
    /// is generic (P4_16 §7.2.11; p4c's `SpecializeGenericTypes`): each specialisation is a type
    /// of its own, named as written (`pair_t<bit<8>>`).
    fn struct_type(
        &self,
        decl: &ast::Decl,
        s: &ast::StructDecl,
        args: &[Ty],
        depth: u32,
    ) -> Result<Ty, Diagnostic> {
        let is_header = matches!(decl.kind, DeclKind::Header(_));
        let is_union = matches!(decl.kind, DeclKind::HeaderUnion(_));
        let name = if args.is_empty() {
            s.name.name.clone()
        } else {
            let a: Vec<String> = args.iter().map(Ty::to_string).collect();
            format!("{}<{}>", s.name.name, a.join(", "))
        };
        if let Some(t) = self.types.borrow().get(&name) {
            return Ok(t.clone());
        }
        if !self.building.borrow_mut().insert(name.clone()) {
            return Err(Diagnostic::error(format!("type `{name}` contains itself"))
                .with_primary(s.name.span, "recursive type"));
        }
        let bound: TypeParams = s
            .type_params
            .iter()
            .map(|p| p.name.clone())
            .zip(args.iter().cloned())
            .collect();
        let mut fields = Vec::new();
        // Names seen so far: a set, so that a header of many fields is checked in linear time.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut result = Ok(());
        for f in &s.fields {
            match self.resolve_type_depth(&f.ty, &bound, depth + 1) {
                Ok(t) => {
                    if let Some(d) = varbit_misplaced(is_header, &t, &fields, f) {
                        result = Err(d);
                        break;
                    }
                    if is_header && !header_field_type(&t) && !matches!(t, Ty::Varbit(_)) {
                        result = Err(Diagnostic::error(format!(
                            "header field `{}` has type `{t}`",
                            f.name.name
                        ))
                        .with_primary(f.ty.span, "not allowed in a header")
                        .with_help(
                            "header fields are `bit<W>`, `int<W>`, `bool` or serializable enums",
                        ));
                        break;
                    }
                    if is_union && !matches!(t, Ty::Header(_)) {
                        result = Err(Diagnostic::error(format!(
                            "header union member `{}` has type `{t}`",
                            f.name.name
                        ))
                        .with_primary(f.ty.span, "not a header")
                        .with_help("every member of a `header_union` is a header"));
                        break;
                    }
                    if !seen.insert(f.name.name.as_str()) {
                        result = Err(Diagnostic::error(format!(
                            "duplicate field `{}` in `{}`",
                            f.name.name, s.name.name
                        ))
                        .with_primary(f.name.span, "declared twice"));
                        break;
                    }
                    fields.push((f.name.name.clone(), t));
                }
                Err(d) => {
                    result = Err(d);
                    break;
                }
            }
        }
        self.building.borrow_mut().remove(&name);
        result?;
        let nesting = self.struct_nesting(&name, s, &fields);
        if !matches!(nesting, Ok(n) if n != TOO_DEEP) {
            // Too deep, or built on a type that is: recorded without the fields that go too
            // deep, so the passes after the error walk no deeper.
            fields.retain(|(_, t)| self.nesting_of(t) < MAX_STRUCT_NESTING);
        }
        // Built on a type refused as too wide: refused with it, silently (reported once).
        let on_refused = fields.iter().any(|(_, t)| self.is_built_on_too_wide(t));
        let width = fields
            .iter()
            .fold(1u64, |n, (_, t)| n.saturating_add(self.width_of(t)));
        let too_wide = on_refused || width > MAX_STRUCT_FIELDS;
        if too_wide {
            // Recorded without fields, so that nothing after the error lays it out.
            fields.clear();
            self.too_wide.borrow_mut().insert(name.clone());
        }
        self.widths.borrow_mut().insert(name.clone(), width);
        if is_header && self.is_flexible(decl, s, &fields) {
            pad_flexible_header(&mut fields);
        }
        let st = Rc::new(StructTy {
            name: name.clone(),
            fields,
            union: is_union,
        });
        let t = if is_header {
            Ty::Header(st)
        } else {
            Ty::Struct(st)
        };
        // A type nested too deep is still recorded (nesting [`TOO_DEEP`]), so that the types
        // built on it do not report it again.
        self.nesting
            .borrow_mut()
            .insert(name.clone(), *nesting.as_ref().unwrap_or(&TOO_DEEP));
        self.types.borrow_mut().insert(name.clone(), t.clone());
        nesting?;
        if too_wide && !on_refused {
            return Err(Diagnostic::error(format!(
                "`{name}` flattens into {width} members (fields and nested structs): pisa \
                 allows at most {MAX_STRUCT_FIELDS} in one struct, header or union type"
            ))
            .with_primary(s.name.span, "declared here")
            .with_help("each field of struct type repeats all of that struct's fields"));
        }
        Ok(t)
    }

    /// Whether the struct, header or union type `name` was refused as too wide (it has no
    /// fields: a field access on it was already reported).
    pub fn is_too_wide(&self, name: &str) -> bool {
        self.too_wide.borrow().contains(name)
    }

    /// The members `t` flattens into, each field and each nested struct or header counted once
    /// (1 for a scalar; a struct of two bytes is 3). Every struct type was built, and its width
    /// recorded, before a field could take it.
    fn width_of(&self, t: &Ty) -> u64 {
        match t {
            Ty::Struct(st) | Ty::Header(st) => {
                let known = self.widths.borrow().get(&st.name).copied();
                known.unwrap_or_else(|| {
                    st.fields
                        .iter()
                        .fold(1u64, |n, (_, f)| n.saturating_add(self.width_of(f)))
                })
            }
            Ty::Stack(elem, n) => self
                .width_of(elem)
                .saturating_mul(u64::from(*n))
                .saturating_add(1),
            Ty::Tuple(ts) => ts
                .iter()
                .fold(1u64, |n, t| n.saturating_add(self.width_of(t))),
            _ => 1,
        }
    }

    /// Whether `t` is, or holds, a type refused as too wide.
    fn is_built_on_too_wide(&self, t: &Ty) -> bool {
        match t {
            Ty::Struct(st) | Ty::Header(st) => self.is_too_wide(&st.name),
            Ty::Stack(elem, _) => self.is_built_on_too_wide(elem),
            Ty::Tuple(ts) => ts.iter().any(|t| self.is_built_on_too_wide(t)),
            _ => false,
        }
    }

    /// How deep structs nest in the type `name` with `fields` (declared as `s`), refused past
    /// [`MAX_STRUCT_NESTING`] at the field that goes too deep.
    fn struct_nesting(
        &self,
        name: &str,
        s: &ast::StructDecl,
        fields: &[(String, Ty)],
    ) -> Result<u32, Diagnostic> {
        let mut deepest = 1;
        for ((_, t), f) in fields.iter().zip(&s.fields) {
            let inner = self.nesting_of(t);
            let n = inner.saturating_add(1);
            if n > MAX_STRUCT_NESTING && inner != TOO_DEEP {
                return Err(Diagnostic::error(format!(
                    "`{name}` nests structs and headers {n} levels deep: pisa allows at most \
                     {MAX_STRUCT_NESTING}"
                ))
                .with_primary(f.ty.span, format!("{} levels deep", n - 1))
                .with_help("flatten some of the levels into fields of their parent"));
            }
            deepest = deepest.max(n);
        }
        Ok(deepest)
    }

    /// How deep structs nest in `t` (0 for a scalar; [`TOO_DEEP`] on a refused type). Every
    /// struct type was built, and its nesting recorded, before a field could take it.
    fn nesting_of(&self, t: &Ty) -> u32 {
        match t {
            Ty::Struct(st) | Ty::Header(st) => {
                let known = self.nesting.borrow().get(&st.name).copied();
                known.unwrap_or_else(|| {
                    let inner = st.fields.iter().map(|(_, f)| self.nesting_of(f)).max();
                    inner.unwrap_or(0).saturating_add(1)
                })
            }
            Ty::Stack(elem, _) => self.nesting_of(elem),
            // The lowering lays a tuple out as a struct.
            Ty::Tuple(ts) => {
                let inner = ts.iter().map(|t| self.nesting_of(t)).max();
                inner.unwrap_or(0).saturating_add(1)
            }
            _ => 0,
        }
    }

    fn enum_type(&self, e: &ast::EnumDecl) -> Result<Ty, Diagnostic> {
        if let Some(t) = self.types.borrow().get(&e.name.name) {
            return Ok(t.clone());
        }
        let (width, serializable) = match &e.repr {
            Some(r) => match self.resolve_type(r, &TypeParams::new())? {
                Ty::Bit(w) | Ty::Int(w) => (w, true),
                other => {
                    return Err(Diagnostic::error(format!(
                        "enum `{}` has underlying type `{other}`",
                        e.name.name
                    ))
                    .with_primary(r.span, "not a bit string type")
                    .with_help("serializable enums use `bit<W>` or `int<W>`"))
                }
            },
            None => {
                let n = e.members.len().max(2) as u32;
                let w = 32 - (n - 1).leading_zeros();
                (w.max(1) as u16, false)
            }
        };
        let mut members = Vec::new();
        for (i, m) in e.members.iter().enumerate() {
            let v = if serializable {
                let Some(val) = &m.value else {
                    return Err(Diagnostic::error(format!(
                        "member `{}` of serializable enum `{}` has no value",
                        m.name.name, e.name.name
                    ))
                    .with_primary(m.name.span, "needs `= value`"));
                };
                let n = self.eval_int(val)?;
                let max = if width >= 128 {
                    u128::MAX
                } else {
                    (1u128 << width) - 1
                };
                if n < 0 && n < -(1i128 << (width.min(127) - 1)) || n > 0 && n as u128 > max {
                    return Err(Diagnostic::error(format!(
                        "value {n} of `{}.{}` does not fit in {width} bits",
                        e.name.name, m.name.name
                    ))
                    .with_primary(val.span, "too wide"));
                }
                (n as u128) & max
            } else {
                i as u128
            };
            members.push((m.name.name.clone(), v));
        }
        let t = Ty::Enum(Rc::new(EnumTy {
            name: e.name.name.clone(),
            width,
            serializable,
            members,
        }));
        self.types
            .borrow_mut()
            .insert(e.name.name.clone(), t.clone());
        Ok(t)
    }

    /// Evaluates a compile-time integer (widths, stack sizes, enum values): literals, top-level
    /// constants and arithmetic on them.
    pub fn eval_int(&self, e: &ast::Expr) -> Result<i128, Diagnostic> {
        self.eval_int_depth(e, 0)
    }

    fn eval_int_depth(&self, e: &ast::Expr, depth: u32) -> Result<i128, Diagnostic> {
        let not_const = || {
            Diagnostic::error("expected a compile-time integer")
                .with_primary(e.span, "not a constant")
                .with_help("use an integer literal or a `const` declared at top level")
        };
        if depth > MAX_DEPTH {
            return Err(
                Diagnostic::error("constant definitions nest too deeply (a cycle?)")
                    .with_primary(e.span, "while evaluating this"),
            );
        }
        match &e.kind {
            ExprKind::Int(l) => i128::try_from(l.value).map_err(|_| not_const()),
            ExprKind::Name(id) => match self.lookup(&id.name).map(|d| &d.kind) {
                Some(DeclKind::Const(c)) => self.eval_int_depth(&c.value, depth + 1),
                Some(_) => Err(not_const()),
                None => {
                    let mut d = Diagnostic::error(format!("unknown name `{}`", id.name))
                        .with_primary(id.span, "not declared");
                    if let Some(h) = suggest::did_you_mean(&id.name, self.names()) {
                        d = d.with_help(h);
                    }
                    Err(d)
                }
            },
            ExprKind::Cast { expr, .. } => self.eval_int_depth(expr, depth + 1),
            ExprKind::Unary { op, operand } => {
                let v = self.eval_int_depth(operand, depth + 1)?;
                match op {
                    ast::UnOp::Neg => v.checked_neg().ok_or_else(not_const),
                    ast::UnOp::Plus => Ok(v),
                    _ => Err(not_const()),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.eval_int_depth(lhs, depth + 1)?;
                let b = self.eval_int_depth(rhs, depth + 1)?;
                let r = match op {
                    ast::BinOp::Add => a.checked_add(b),
                    ast::BinOp::Sub => a.checked_sub(b),
                    ast::BinOp::Mul => a.checked_mul(b),
                    ast::BinOp::Div => a.checked_div(b),
                    ast::BinOp::Mod => a.checked_rem(b),
                    ast::BinOp::Shl => u32::try_from(b).ok().and_then(|b| a.checked_shl(b)),
                    ast::BinOp::Shr => u32::try_from(b).ok().and_then(|b| a.checked_shr(b)),
                    ast::BinOp::BitAnd => Some(a & b),
                    ast::BinOp::BitOr => Some(a | b),
                    ast::BinOp::BitXor => Some(a ^ b),
                    _ => None,
                };
                r.ok_or_else(|| {
                    Diagnostic::error("constant expression overflows or divides by zero")
                        .with_primary(e.span, "cannot evaluate")
                })
            }
            ExprKind::Call { callee, args, .. } => {
                if let ExprKind::Name(f) = &callee.kind {
                    if f.name == "sizeInBits" || f.name == "sizeInBytes" {
                        if let Some(a) = args.first() {
                            let ty = match &a.value.kind {
                                ExprKind::Type(t) => self.resolve_type(t, &TypeParams::new())?,
                                ExprKind::Name(n) => self.resolve_type(
                                    &ast::Type {
                                        kind: TypeKind::Named(n.clone()),
                                        span: n.span,
                                    },
                                    &TypeParams::new(),
                                )?,
                                _ => return Err(not_const()),
                            };
                            let bits = ty.flat_width().ok_or_else(not_const)? as i128;
                            return Ok(if f.name == "sizeInBits" {
                                bits
                            } else {
                                bits / 8
                            });
                        }
                    }
                }
                Err(not_const())
            }
            _ => Err(not_const()),
        }
    }
}

fn is_type_decl(k: &DeclKind) -> bool {
    matches!(
        k,
        DeclKind::Typedef(_)
            | DeclKind::Header(_)
            | DeclKind::Struct(_)
            | DeclKind::HeaderUnion(_)
            | DeclKind::Enum(_)
            | DeclKind::Extern(_)
    )
}

/// Why a field of type `t` may not be a varbit here: only a header holds one, and at most
/// one (P4_16 §7.1.6); the fields declared before it are `before`.
fn varbit_misplaced(
    is_header: bool,
    t: &Ty,
    before: &[(String, Ty)],
    f: &ast::Field,
) -> Option<Diagnostic> {
    // A varbit directly. A struct type holds none: a struct is only built once each of its
    // fields passed this check (a generic one per instance, its arguments substituted), so
    // walking it again would only make a chain of nested structs quadratic.
    if !matches!(t, Ty::Varbit(_)) {
        return None;
    }
    if !is_header {
        return Some(
            Diagnostic::error(format!(
                "field `{}` of type `{t}` holds a varbit",
                f.name.name
            ))
            .with_primary(f.ty.span, "varbit outside a header")
            .with_help("a `varbit<N>` is a field of a header, directly"),
        );
    }
    if before.iter().any(|(_, b)| matches!(b, Ty::Varbit(_))) {
        return Some(
            Diagnostic::error(format!(
                "header field `{}` is its second varbit",
                f.name.name
            ))
            .with_primary(f.ty.span, "second varbit field")
            .with_help("a header has at most one `varbit` field"),
        );
    }
    None
}

/// Whether `t` may be a header field: a bit string, `bool`, a serializable enum, or a struct
/// of those (P4_16 §7.2.2: flattened into the header in declaration order).
fn header_field_type(t: &Ty) -> bool {
    match t {
        Ty::Bool => true,
        Ty::Enum(e) => e.serializable,
        Ty::Struct(s) => s.fields.iter().all(|(_, f)| header_field_type(f)),
        other => other.is_bits(),
    }
}

/// Pads a `@flexible` header to a whole number of bytes with a trailing `__pad_N` field: bf-p4c
/// packs flexible fields (bridged metadata, which only this switch reads back) as it likes and
/// pads them to bytes; pisa keeps the declared order and pads once at the end.
fn pad_flexible_header(fields: &mut Vec<(String, Ty)>) {
    let bits: u32 = fields
        .iter()
        .map(|(_, t)| t.max_flat_width().unwrap_or(0))
        .sum();
    let pad = (8 - bits % 8) % 8;
    if pad == 0 {
        return;
    }
    let mut n = 0;
    while fields.iter().any(|(f, _)| *f == format!("__pad_{n}")) {
        n += 1;
    }
    fields.push((format!("__pad_{n}"), Ty::Bit(pad as u16)));
}

//! Annotation policy: which annotations pisa keeps (`@name`, `@defaultonly`, `@tableonly`,
//! `@priority`, ...) and which it accepts but ignores, reported once per kind as a warning that
//! says what pisa does not model. Annotations in the built-in architecture headers are not
//! reported.

use std::collections::BTreeMap;

use crate::ast::{self, DeclKind, StmtKind};
use crate::check::env::Env;
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;

/// Annotations whose meaning pisa implements (or which carry no behaviour at all), besides
/// the table-only ones ([`TABLE_ONLY`]).
const KEPT: &[&str] = &[
    "name",
    "defaultonly",
    "tableonly",
    "priority",
    "hidden",
    "optional",
    "noWarn",
    "deprecated",
    "pure",
    "noSideEffects",
    "brief",
    "description",
    "flexible",
    "padding",
    // Drops the data dependencies between two tables in the placement, as bf-p4c does.
    "ignore_table_dependency",
    // Two names of one field (lower/alias.rs), as bf-p4c's PHV aliasing makes them.
    "pa_alias",
    // Fix an exact table's entries per match row, hash ways and hash-action layout in the
    // placement's sizing.
    "pack",
    "ways",
    "simul_lookups",
    "use_hash_action",
    // Read by the P4Info generator (control::p4runtime::p4info): packet I/O metadata and
    // fixed P4Runtime ids.
    "controller_header",
    "id",
    // The parser units of each parser of an `IngressParsers`/`EgressParsers` instance
    // (lower/multi_parser.rs).
    "default_portmap",
];

/// Kept annotations that bf-p4c reads on match tables only ("attached to P4 match tables"
/// in its pragma help): anywhere else they are ignored, and warned about.
const TABLE_ONLY: &[&str] = &[
    // Where a table starts and which tables it goes before (resources/pins.rs; the numeric
    // `@placement_priority(n)` orders tables that can start in one stage).
    "stage",
    "placement_priority",
    // How many of a range table's entries hold ranges (resources/demand/range.rs).
    "entries_with_ranges",
    // Whether a table's selector scrambles its hash (table/selector.rs in the pipeline), and
    // its group sizes where the selector's constructor does not give them (lower/profiles.rs).
    "selector_enable_scramble",
    "selector_max_group_size",
    "selector_num_max_groups",
    // A table's ALPM / ATCAM layout, the pragma spelling of an `Alpm` / `Atcam`
    // implementation (lower/profiles.rs `table_layout_annotations`).
    "alpm",
    "alpm_partitions",
    "alpm_subtrees_per_partition",
    "atcam_partition_index",
    "atcam_number_partitions",
];

/// Why an ignored annotation does not matter in pisa.
fn ignored_reason(name: &str) -> &'static str {
    if name.starts_with("selector_") {
        "it sets a table's selector, and is read on a table declaration only"
    } else if TABLE_ONLY.contains(&name) {
        "it places tables, and is read on a table declaration only"
    } else if name.starts_with("pa_") {
        "PHV allocation is not modelled"
    } else {
        match name {
            "force_immediate"
            | "force_shift"
            | "min_width"
            | "immediate"
            | "idletime_precision"
            | "action_default_only"
            | "reg"
            | "in_hash"
            | "calculated_field_update_location"
            | "critical"
            | "disable_atomic_modify"
            | "max_actions"
            | "ternary"
            | "hash_mask"
            | "no_field_initialization" => "table and stage layout is pisa's own",
            // bf-p4c lets the control plane mask bits of an exact table's key at run time.
            "dynamic_table_key_masks" => {
                "keys always match in full: pisa's runtime API has no call to set a table's key mask"
            }
            "atomic" | "dont_trim" | "auto_init_metadata" => "PHV allocation is not modelled",
            "command_line" => "compiler flags are taken from the pisa command line",
            _ => "it has no effect in pisa",
        }
    }
}

/// Collects one warning per ignored annotation kind used in the user's program.
pub fn report_ignored(env: &Env<'_>, program: &ast::Program, diags: &mut Diagnostics) {
    let mut on_tables: Vec<Span> = Vec::new();
    for d in &program.decls {
        table_annotations(d, &mut on_tables);
    }
    let mut seen: BTreeMap<String, (Span, usize)> = BTreeMap::new();
    let mut visit = |a: &ast::Annotation| {
        let name = a.name.name.as_str();
        let misplaced = TABLE_ONLY.contains(&name) && !on_tables.contains(&a.span);
        let kept = KEPT.contains(&name) || TABLE_ONLY.contains(&name);
        if (kept && !misplaced) || env.is_arch(a.span) {
            return;
        }
        seen.entry(a.name.name.clone())
            .and_modify(|(_, n)| *n += 1)
            .or_insert((a.span, 1));
    };
    for d in &program.decls {
        walk_decl(d, &mut visit);
    }
    let mut order: Vec<(String, (Span, usize))> = seen.into_iter().collect();
    order.sort_by_key(|(_, (s, _))| (s.file, s.lo));
    for (name, (span, count)) in order {
        let mut d = Diagnostic::warning(format!(
            "annotation `@{name}` accepted, ignored: {}",
            ignored_reason(&name)
        ))
        .with_primary(span, "ignored by pisa");
        if count > 1 {
            d = d.with_note(format!("`@{name}` is used {count} times; reported once"));
        }
        diags.push(d);
    }
}

/// The spans of the annotations written on table declarations (in controls, at any depth).
fn table_annotations(d: &ast::Decl, out: &mut Vec<Span>) {
    match &d.kind {
        DeclKind::Table(_) => out.extend(d.annotations.iter().map(|a| a.span)),
        DeclKind::Control(c) => c.locals.iter().for_each(|l| table_annotations(l, out)),
        _ => {}
    }
}

fn walk_annos(annos: &[ast::Annotation], f: &mut impl FnMut(&ast::Annotation)) {
    annos.iter().for_each(f);
}

fn walk_params(ps: &[ast::Param], f: &mut impl FnMut(&ast::Annotation)) {
    for p in ps {
        walk_annos(&p.annotations, f);
    }
}

/// True when `d` instantiates `Hash`, whose `@symmetric` pairs pisa implements.
fn is_hash_instance(d: &ast::Decl) -> bool {
    let DeclKind::Instantiation(i) = &d.kind else {
        return false;
    };
    match &i.ty.kind {
        ast::TypeKind::Named(n) | ast::TypeKind::Specialized { base: n, .. } => n.name == "Hash",
        _ => false,
    }
}

fn walk_decl(d: &ast::Decl, f: &mut impl FnMut(&ast::Annotation)) {
    if is_hash_instance(d) {
        d.annotations
            .iter()
            .filter(|a| a.name.name != "symmetric")
            .for_each(&mut *f);
    } else {
        walk_annos(&d.annotations, f);
    }
    match &d.kind {
        DeclKind::Header(s) | DeclKind::Struct(s) | DeclKind::HeaderUnion(s) => {
            for fl in &s.fields {
                walk_annos(&fl.annotations, f);
            }
        }
        DeclKind::Enum(e) => {
            for m in &e.members {
                walk_annos(&m.annotations, f);
            }
        }
        DeclKind::Action(a) => {
            walk_params(&a.params, f);
            walk_block(&a.body, f);
        }
        DeclKind::Function(fd) => {
            walk_params(&fd.proto.params, f);
            walk_block(&fd.body, f);
        }
        DeclKind::Parser(p) => {
            walk_params(&p.params, f);
            for l in &p.locals {
                walk_decl(l, f);
            }
            for s in &p.states {
                walk_annos(&s.annotations, f);
                for st in &s.body {
                    walk_stmt(st, f);
                }
            }
        }
        DeclKind::Control(c) => {
            walk_params(&c.params, f);
            for l in &c.locals {
                walk_decl(l, f);
            }
            walk_block(&c.apply, f);
        }
        DeclKind::Instantiation(i) => {
            for l in i.initializer.iter().flatten() {
                walk_decl(l, f);
            }
        }
        DeclKind::Table(t) => {
            for p in &t.properties {
                walk_annos(&p.annotations, f);
                match &p.kind {
                    ast::TablePropertyKind::Key(ks) => {
                        for k in ks {
                            walk_annos(&k.annotations, f);
                        }
                    }
                    ast::TablePropertyKind::Actions(rs) => {
                        for r in rs {
                            walk_annos(&r.annotations, f);
                        }
                    }
                    ast::TablePropertyKind::DefaultAction(r) => walk_annos(&r.annotations, f),
                    ast::TablePropertyKind::Entries(es) => {
                        for e in es {
                            walk_annos(&e.annotations, f);
                            walk_annos(&e.action.annotations, f);
                        }
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

fn walk_block(b: &ast::Block, f: &mut impl FnMut(&ast::Annotation)) {
    walk_annos(&b.annotations, f);
    for s in &b.stmts {
        walk_stmt(s, f);
    }
}

fn walk_stmt(s: &ast::Stmt, f: &mut impl FnMut(&ast::Annotation)) {
    walk_annos(&s.annotations, f);
    match &s.kind {
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            walk_stmt(then_branch, f);
            if let Some(e) = else_branch {
                walk_stmt(e, f);
            }
        }
        StmtKind::Switch { cases, .. } => {
            for c in cases {
                if let Some(b) = &c.body {
                    walk_block(b, f);
                }
            }
        }
        StmtKind::Block(b) => walk_block(b, f),
        _ => {}
    }
}

/// The string of `@name("x")` among `annos`, if present.
pub fn name_annotation(annos: &[ast::Annotation]) -> Option<String> {
    string_arg(annos, "name")
}

/// True when `@which` is among `annos`.
pub fn has(annos: &[ast::Annotation], which: &str) -> bool {
    annos.iter().any(|a| a.name.name == which)
}

/// The string argument of every `@which("...")` among `annos`.
pub fn string_args(annos: &[ast::Annotation], which: &str) -> Vec<String> {
    annos
        .iter()
        .filter(|a| a.name.name == which)
        .filter_map(|a| string_arg(std::slice::from_ref(a), which))
        .collect()
}

/// The single string argument of `@which("...")`.
pub fn string_arg(annos: &[ast::Annotation], which: &str) -> Option<String> {
    let a = annos.iter().find(|a| a.name.name == which)?;
    match &a.body {
        ast::AnnotationBody::Exprs(es) => match es.first().map(|e| &e.kind) {
            Some(ast::ExprKind::String(s)) => Some(s.clone()),
            _ => None,
        },
        ast::AnnotationBody::Tokens(ts) => ts.first().map(|t| t.text.trim_matches('"').to_string()),
        _ => None,
    }
}

/// The first expression argument of `@which(expr)`.
pub fn expr_arg<'a>(annos: &'a [ast::Annotation], which: &str) -> Option<&'a ast::Expr> {
    let a = annos.iter().find(|a| a.name.name == which)?;
    match &a.body {
        ast::AnnotationBody::Exprs(es) => es.first(),
        _ => None,
    }
}

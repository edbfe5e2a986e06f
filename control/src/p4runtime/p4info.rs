//! P4Info from a compiled program: every table (match fields, action refs, const default,
//! implementation, direct resources, const-ness), action (parameters), action profile and
//! selector, counter, direct counter, meter, direct meter, register, digest, parser value set
//! (its element's fields as exact match fields, as p4c lists a set without `@match`) and
//! `@controller_header` header, named as bf-p4c's P4Runtime output names them (`SwitchIngress.ipv4_lpm`; with several
//! pipelines, prefixed by the pipeline: `pipe0.SwitchIngress.ipv4_lpm`) and numbered as
//! [`super::ids`] says.
//!
//! TNA `Register`s are listed as P4Info `registers` (bf-p4c lists them as a Tofino extern) so
//! generic P4Runtime clients can read and write them.

use std::collections::BTreeMap;

use p4::ast::{self, AnnotationBody, DeclKind, ExprKind, TypeKind};
use pipeline::ir::{self, CounterKind, MatchKind, MeterKind, Program};

use super::ids::{prefix, IdAllocator};
use super::proto::p4::config::v1 as pi;

/// A header marked `@controller_header("packet_in")` or `("packet_out")`: its fields in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerHeader {
    /// The annotation's argument (`packet_in`, `packet_out`).
    pub name: String,
    /// Field names and widths, in header order.
    pub fields: Vec<(String, u16)>,
}

impl ControllerHeader {
    /// The header's length in bits.
    pub fn bits(&self) -> u32 {
        self.fields.iter().map(|(_, w)| u32::from(*w)).sum()
    }
}

/// The `@controller_header` headers of a parsed program. A field whose width is not a literal
/// `bit<N>` (directly or through typedefs) makes the header unusable: it is skipped with the
/// reason in the second list.
pub fn controller_headers(prog: &ast::Program) -> (Vec<ControllerHeader>, Vec<String>) {
    let mut typedefs: BTreeMap<&str, &ast::Type> = BTreeMap::new();
    for d in &prog.decls {
        if let DeclKind::Typedef(t) = &d.kind {
            typedefs.insert(&t.name.name, &t.ty);
        }
    }
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for d in &prog.decls {
        let DeclKind::Header(h) = &d.kind else {
            continue;
        };
        let Some(name) = d
            .annotations
            .iter()
            .find(|a| a.name.name == "controller_header")
            .and_then(annotation_string)
        else {
            continue;
        };
        let mut fields = Vec::new();
        for f in &h.fields {
            match bit_width(&f.ty, &typedefs, 0) {
                Some(w) => fields.push((f.name.name.clone(), w)),
                None => {
                    skipped.push(format!(
                        "@controller_header(\"{name}\") header {}: field {} is not a bit<N> of literal width 1..=128",
                        h.name.name, f.name.name
                    ));
                    fields.clear();
                    break;
                }
            }
        }
        if !fields.is_empty() {
            out.push(ControllerHeader { name, fields });
        }
    }
    (out, skipped)
}

fn annotation_string(a: &ast::Annotation) -> Option<String> {
    match &a.body {
        AnnotationBody::Exprs(es) => match es.first().map(|e| &e.kind) {
            Some(ExprKind::String(s)) => Some(s.clone()),
            _ => None,
        },
        AnnotationBody::Tokens(ts) => ts.first().map(|t| t.text.trim_matches('"').to_string()),
        _ => None,
    }
}

fn bit_width(ty: &ast::Type, typedefs: &BTreeMap<&str, &ast::Type>, depth: u8) -> Option<u16> {
    match &ty.kind {
        TypeKind::Bit(e) => match &e.kind {
            // Values are at most 128 bits wide in pisa.
            ExprKind::Int(i) => u16::try_from(i.value)
                .ok()
                .filter(|w| (1..=128).contains(w)),
            _ => None,
        },
        TypeKind::Bool => Some(1),
        TypeKind::Named(n) if depth < 16 => {
            bit_width(typedefs.get(n.name.as_str())?, typedefs, depth + 1)
        }
        _ => None,
    }
}

fn preamble(id: u32, name: &str) -> Option<pi::Preamble> {
    Some(pi::Preamble {
        id,
        name: name.to_string(),
        // Set for the whole P4Info at the end (`aliases::assign`).
        alias: String::new(),
        ..Default::default()
    })
}

fn match_type(k: MatchKind) -> pi::match_field::MatchType {
    use pi::match_field::MatchType as T;
    match k {
        MatchKind::Exact => T::Exact,
        MatchKind::Lpm => T::Lpm,
        MatchKind::Ternary => T::Ternary,
        MatchKind::Range => T::Range,
        MatchKind::Selector => T::Unspecified,
    }
}

fn counter_unit(k: CounterKind) -> Option<pi::CounterSpec> {
    use pi::counter_spec::Unit;
    let unit = match k {
        CounterKind::Packets => Unit::Packets,
        CounterKind::Bytes => Unit::Bytes,
        CounterKind::PacketsAndBytes => Unit::Both,
    };
    Some(pi::CounterSpec { unit: unit as i32 })
}

fn meter_unit(k: MeterKind) -> Option<pi::MeterSpec> {
    use pi::meter_spec::Unit;
    let unit = match k {
        MeterKind::Packets => Unit::Packets,
        MeterKind::Bytes => Unit::Bytes,
    };
    Some(pi::MeterSpec { unit: unit as i32 })
}

fn bits(width: u16) -> Option<pi::P4DataTypeSpec> {
    use pi::p4_bitstring_like_type_spec::TypeSpec as B;
    use pi::p4_data_type_spec::TypeSpec as D;
    Some(pi::P4DataTypeSpec {
        type_spec: Some(D::Bitstring(pi::P4BitstringLikeTypeSpec {
            type_spec: Some(B::Bit(pi::P4BitTypeSpec {
                bitwidth: i32::from(width),
            })),
            annotations: Vec::new(),
        })),
    })
}

/// Object names of one kind over every pipeline, qualified by the pipeline's name when the
/// program has several (as [`crate::resolve`] names them).
fn names<'a, T: 'a>(
    prog: &'a Program,
    items: impl Fn(&'a ir::Pipeline) -> &'a [T],
    name: impl Fn(&T) -> &str,
) -> Vec<(usize, usize, String)> {
    let multi = prog.pipelines.len() > 1;
    let mut out = Vec::new();
    for (p, pl) in prog.pipelines.iter().enumerate() {
        for (i, it) in items(pl).iter().enumerate() {
            let n = name(it);
            let full = if multi {
                format!("{}.{n}", pl.name)
            } else {
                n.to_string()
            };
            out.push((p, i, full));
        }
    }
    out
}

/// Ids of one kind: `(pipeline, index) -> id`.
struct Kind {
    ids: BTreeMap<(usize, usize), u32>,
    names: Vec<(usize, usize, String)>,
}

impl Kind {
    fn new(alloc: &mut IdAllocator, pre: u8, names: Vec<(usize, usize, String)>) -> Kind {
        let plain: Vec<String> = names.iter().map(|n| n.2.clone()).collect();
        let ids = alloc.assign(pre, &plain);
        Kind {
            ids: names.iter().map(|n| (n.0, n.1)).zip(ids).collect(),
            names,
        }
    }
    fn id(&self, p: usize, i: usize) -> u32 {
        self.ids.get(&(p, i)).copied().unwrap_or(0)
    }
    fn iter(&self) -> impl Iterator<Item = (usize, usize, &str, u32)> {
        self.names
            .iter()
            .map(|(p, i, n)| (*p, *i, n.as_str(), self.id(*p, *i)))
    }
}

/// The P4Info of `prog` with its `@controller_header` headers.
pub fn generate(prog: &Program, headers: &[ControllerHeader]) -> pi::P4Info {
    generate_with_ids(prog, headers, BTreeMap::new())
}

/// [`generate`] honouring `@id` annotations (by qualified name, see [`annotated_ids`]).
pub fn generate_with_ids(
    prog: &Program,
    headers: &[ControllerHeader],
    fixed: BTreeMap<String, u32>,
) -> pi::P4Info {
    let mut alloc = IdAllocator::with_fixed(fixed);
    let tables = Kind::new(
        &mut alloc,
        prefix::TABLE,
        // `@hidden` tables stay out of P4Info (p4c `P4RuntimeSerializer` `addTable`).
        names(prog, |p| &p.tables, |t| &t.name)
            .into_iter()
            .filter(|n| prog.pipelines[n.0].table_named(n.1))
            .collect(),
    );
    let actions = Kind::new(
        &mut alloc,
        prefix::ACTION,
        names(prog, |p| &p.actions, |a| &a.name),
    );
    let profiles = Kind::new(
        &mut alloc,
        prefix::ACTION_PROFILE,
        names(prog, |p| &p.action_profiles, |a| &a.name),
    );
    // A direct counter or meter of an `@hidden` table stays out with its table (p4c adds it
    // in the table's `addTableProperties`, which a hidden table never reaches).
    let split = |direct: bool| {
        move |n: &&(usize, usize, String)| {
            let pl = &prog.pipelines[n.0];
            let t = pl.counters[n.1].direct_table;
            t.is_some() == direct && pl.direct_named(t)
        }
    };
    let all_counters = names(prog, |p| &p.counters, |c| &c.name);
    let counters = Kind::new(
        &mut alloc,
        prefix::COUNTER,
        all_counters.iter().filter(split(false)).cloned().collect(),
    );
    let direct_counters = Kind::new(
        &mut alloc,
        prefix::DIRECT_COUNTER,
        all_counters.iter().filter(split(true)).cloned().collect(),
    );
    let all_meters = names(prog, |p| &p.meters, |m| &m.name);
    let is_direct_meter =
        |n: &&(usize, usize, String)| prog.pipelines[n.0].meters[n.1].direct_table.is_some();
    let meter_named = |n: &&(usize, usize, String)| {
        let pl = &prog.pipelines[n.0];
        pl.direct_named(pl.meters[n.1].direct_table)
    };
    let meters = Kind::new(
        &mut alloc,
        prefix::METER,
        all_meters
            .iter()
            .filter(|n| !is_direct_meter(n))
            .cloned()
            .collect(),
    );
    let direct_meters = Kind::new(
        &mut alloc,
        prefix::DIRECT_METER,
        all_meters
            .iter()
            .filter(is_direct_meter)
            .filter(meter_named)
            .cloned()
            .collect(),
    );
    let registers = Kind::new(
        &mut alloc,
        prefix::REGISTER,
        names(prog, |p| &p.registers, |r| &r.name)
            .into_iter()
            .filter(|n| prog.pipelines[n.0].registers[n.1].direct_table.is_none())
            .collect(),
    );
    let value_sets = Kind::new(
        &mut alloc,
        prefix::VALUE_SET,
        names(prog, |p| &p.value_sets, |v| &v.name),
    );
    let digests = Kind::new(
        &mut alloc,
        prefix::DIGEST,
        names(prog, |p| &p.digests, |d| &d.name),
    );
    let headers_kind = Kind::new(
        &mut alloc,
        prefix::CONTROLLER_HEADER,
        headers
            .iter()
            .enumerate()
            .map(|(i, h)| (0, i, h.name.clone()))
            .collect(),
    );

    let mut info = pi::P4Info {
        pkg_info: Some(pi::PkgInfo {
            name: prog.name.clone(),
            arch: "tna".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    for (p, i, name, id) in tables.iter() {
        let pl = &prog.pipelines[p];
        let t = &pl.tables[i];
        info.tables.push(table(
            pl,
            t,
            name,
            id,
            p,
            &actions,
            &profiles,
            &counters_of(&direct_counters, &direct_meters, prog, p, i),
        ));
    }
    for (p, i, name, id) in actions.iter() {
        let a = &prog.pipelines[p].actions[i];
        info.actions.push(pi::Action {
            preamble: preamble(id, name),
            params: a
                .params
                .iter()
                .enumerate()
                .map(|(k, par)| pi::action::Param {
                    id: k as u32 + 1,
                    name: par.name.clone(),
                    bitwidth: i32::from(par.width),
                    ..Default::default()
                })
                .collect(),
        });
    }
    for (p, i, name, id) in profiles.iter() {
        let ap = &prog.pipelines[p].action_profiles[i];
        info.action_profiles.push(pi::ActionProfile {
            preamble: preamble(id, name),
            table_ids: ap.tables.iter().map(|t| tables.id(p, t.index())).collect(),
            with_selector: ap.selector.is_some(),
            size: i64::from(ap.size),
            max_group_size: ap.selector.as_ref().map_or(0, |s| s.max_group_size as i32),
        });
    }
    for (p, i, name, id) in counters.iter() {
        let c = &prog.pipelines[p].counters[i];
        info.counters.push(pi::Counter {
            preamble: preamble(id, name),
            spec: counter_unit(c.kind),
            size: i64::from(c.size),
            index_type_name: None,
        });
    }
    for (p, i, name, id) in direct_counters.iter() {
        let c = &prog.pipelines[p].counters[i];
        info.direct_counters.push(pi::DirectCounter {
            preamble: preamble(id, name),
            spec: counter_unit(c.kind),
            direct_table_id: c.direct_table.map_or(0, |t| tables.id(p, t.index())),
        });
    }
    for (p, i, name, id) in meters.iter() {
        let m = &prog.pipelines[p].meters[i];
        info.meters.push(pi::Meter {
            preamble: preamble(id, name),
            spec: meter_unit(m.kind),
            size: i64::from(m.size),
            index_type_name: None,
        });
    }
    for (p, i, name, id) in direct_meters.iter() {
        let m = &prog.pipelines[p].meters[i];
        info.direct_meters.push(pi::DirectMeter {
            preamble: preamble(id, name),
            spec: meter_unit(m.kind),
            direct_table_id: m.direct_table.map_or(0, |t| tables.id(p, t.index())),
        });
    }
    for (p, i, name, id) in registers.iter() {
        let r = &prog.pipelines[p].registers[i];
        let type_spec = if r.paired {
            use pi::p4_data_type_spec::TypeSpec as D;
            Some(pi::P4DataTypeSpec {
                type_spec: Some(D::Tuple(pi::P4TupleTypeSpec {
                    members: vec![bits(r.width).unwrap_or_default(); 2],
                })),
            })
        } else {
            bits(r.width)
        };
        info.registers.push(pi::Register {
            preamble: preamble(id, name),
            type_spec,
            size: r.size as i32,
            index_type_name: None,
        });
    }
    for (p, i, name, id) in value_sets.iter() {
        info.value_sets
            .push(value_set(&prog.pipelines[p].value_sets[i], name, id));
    }
    let mut structs = BTreeMap::new();
    let mut type_names = super::type_names::TypeNames::default();
    for (p, i, name, id) in digests.iter() {
        let d = &prog.pipelines[p].digests[i];
        // The struct is named after the digest's type, as p4c's `TypeSpecConverter` names it
        // (the type's control-plane name; a specialisation's, see `type_names`).
        let ty = type_names.name(&d.type_name);
        use pi::p4_data_type_spec::TypeSpec as D;
        info.digests.push(pi::Digest {
            preamble: preamble(id, name),
            type_spec: Some(pi::P4DataTypeSpec {
                type_spec: Some(D::Struct(pi::P4NamedType { name: ty.clone() })),
            }),
        });
        structs.insert(
            ty,
            pi::P4StructTypeSpec {
                members: d
                    .fields
                    .iter()
                    .map(|(f, w)| pi::p4_struct_type_spec::Member {
                        name: f.clone(),
                        type_spec: bits(*w),
                    })
                    .collect(),
                annotations: Vec::new(),
            },
        );
    }
    for (_, i, name, id) in headers_kind.iter() {
        info.controller_packet_metadata
            .push(pi::ControllerPacketMetadata {
                preamble: preamble(id, name),
                metadata: headers[i]
                    .fields
                    .iter()
                    .enumerate()
                    .map(|(k, (f, w))| pi::controller_packet_metadata::Metadata {
                        id: k as u32 + 1,
                        name: f.clone(),
                        bitwidth: i32::from(*w),
                        ..Default::default()
                    })
                    .collect(),
            });
    }
    if !structs.is_empty() {
        info.type_info = Some(pi::P4TypeInfo {
            structs,
            headers: BTreeMap::new(),
        });
    }
    super::aliases::assign(&mut info);
    info
}

/// A parser value set: one exact match field per field of its element type (`f1` for a
/// `bit<W>` set), numbered from 1.
fn value_set(v: &ir::ValueSet, name: &str, id: u32) -> pi::ValueSet {
    pi::ValueSet {
        preamble: preamble(id, name),
        r#match: v
            .fields
            .iter()
            .enumerate()
            .map(|(k, (f, w))| pi::MatchField {
                id: k as u32 + 1,
                name: f.clone(),
                bitwidth: i32::from(*w),
                r#match: Some(pi::match_field::Match::MatchType(
                    match_type(MatchKind::Exact) as i32,
                )),
                ..Default::default()
            })
            .collect(),
        size: i32::try_from(v.size).unwrap_or(i32::MAX),
    }
}

/// The direct counter and meter ids bound to table `t` of pipeline `p`.
fn counters_of(dc: &Kind, dm: &Kind, prog: &Program, p: usize, t: usize) -> Vec<u32> {
    let pl = &prog.pipelines[p];
    let mut out = Vec::new();
    for (q, i, _, id) in dc.iter() {
        if q == p && pl.counters[i].direct_table.map(|x| x.index()) == Some(t) {
            out.push(id);
        }
    }
    for (q, i, _, id) in dm.iter() {
        if q == p && pl.meters[i].direct_table.map(|x| x.index()) == Some(t) {
            out.push(id);
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn table(
    pl: &ir::Pipeline,
    t: &ir::Table,
    name: &str,
    id: u32,
    p: usize,
    actions: &Kind,
    profiles: &Kind,
    direct: &[u32],
) -> pi::Table {
    use pi::action_ref::Scope;
    let match_fields = t
        .keys
        .iter()
        .filter(|k| k.kind != MatchKind::Selector)
        .enumerate()
        .map(|(k, key)| pi::MatchField {
            id: k as u32 + 1,
            name: key.name.clone(),
            bitwidth: i32::from(key.expr.width()),
            r#match: Some(pi::match_field::Match::MatchType(
                match_type(key.kind) as i32
            )),
            ..Default::default()
        })
        .collect();
    let action_refs = t
        .actions
        .iter()
        .map(|a| pi::ActionRef {
            id: actions.id(p, a.action.index()),
            scope: if a.default_only {
                Scope::DefaultOnly
            } else if a.table_only {
                Scope::TableOnly
            } else {
                Scope::TableAndDefault
            } as i32,
            annotations: Vec::new(),
        })
        .collect();
    let implementation_id = pl
        .action_profiles
        .iter()
        .position(|ap| {
            ap.tables
                .iter()
                .any(|x| pl.tables.get(x.index()) == Some(t))
        })
        .map_or(0, |i| profiles.id(p, i));
    pi::Table {
        preamble: preamble(id, name),
        match_fields,
        action_refs,
        const_default_action_id: if t.default_action_const {
            actions.id(p, t.default_action.action.index())
        } else {
            0
        },
        implementation_id,
        direct_resource_ids: direct.to_vec(),
        size: i64::from(t.size),
        idle_timeout_behavior: if t.idle_timeout {
            pi::table::IdleTimeoutBehavior::NotifyControl as i32
        } else {
            pi::table::IdleTimeoutBehavior::NoTimeout as i32
        },
        is_const_table: t.entries_const,
        other_properties: None,
    }
}

/// A program compiled for P4Runtime: the IR, its `@controller_header` headers and its P4Info.
#[derive(Debug, Clone)]
pub struct P4Program {
    pub program: ir::Program,
    pub headers: Vec<ControllerHeader>,
    pub p4info: pi::P4Info,
    /// Headers that could not be used, and why.
    pub skipped: Vec<String>,
}

/// Compiles P4 source held in memory (a P4Runtime device config) and makes its P4Info. The
/// error is the rendered diagnostics. The source came over the network: it may `#include`
/// only the bundled headers, never a file of the host.
pub fn compile_source(
    name: &str,
    text: &str,
    opts: &p4::compile::CompileOptions,
) -> Result<P4Program, String> {
    let load = p4::LoadOptions {
        builtin_includes_only: true,
        ..p4::compile::load_options(opts)
    };
    let compiled =
        p4::compile::compile_str_with(name, text, opts, &load).map_err(|f| f.render())?;
    let (_, parsed) = p4::load_str(name, text, &load);
    Ok(with_headers(compiled.program, &parsed.program))
}

/// The P4Info of a program compiled from `path` (`compiled`), reading the file's
/// `@controller_header` headers.
pub fn for_file(
    compiled: ir::Program,
    path: &std::path::Path,
    opts: &p4::compile::CompileOptions,
) -> P4Program {
    let (_, parsed) = p4::load_file(path, &p4::compile::load_options(opts));
    with_headers(compiled, &parsed.program)
}

/// The `@id(N)` annotations of a parsed program by qualified name: `Control.local` for the
/// tables, actions and extern instances of a control, the plain name for top-level actions,
/// instances and `@controller_header` headers.
pub fn annotated_ids(prog: &ast::Program) -> BTreeMap<String, u32> {
    fn id_of(annos: &[ast::Annotation]) -> Option<u32> {
        let a = annos.iter().find(|a| a.name.name == "id")?;
        match &a.body {
            AnnotationBody::Exprs(es) => match es.first().map(|e| &e.kind) {
                Some(ExprKind::Int(i)) => u32::try_from(i.value).ok(),
                _ => None,
            },
            _ => None,
        }
    }
    let mut out = BTreeMap::new();
    for d in &prog.decls {
        match &d.kind {
            DeclKind::Control(c) => {
                for l in &c.locals {
                    if let (Some(id), Some(n)) = (id_of(&l.annotations), l.name()) {
                        out.insert(format!("{}.{}", c.name.name, n.name), id);
                    }
                }
            }
            DeclKind::Header(_) => {
                let header = d
                    .annotations
                    .iter()
                    .find(|a| a.name.name == "controller_header")
                    .and_then(annotation_string);
                if let (Some(id), Some(h)) = (id_of(&d.annotations), header) {
                    out.insert(h, id);
                }
            }
            _ => {
                if let (Some(id), Some(n)) = (id_of(&d.annotations), d.name()) {
                    out.insert(n.name.clone(), id);
                }
            }
        }
    }
    out
}

/// The architecture a parsed program was written for: `t2na` where the architecture headers
/// declare the ghost control type (`GhostT`, which pisa's `tofino_arch.p4` declares for
/// t2na.p4 only), else `tna`.
fn arch_of(ast: &ast::Program) -> &'static str {
    let ghost = ast.decls.iter().any(|d| {
        matches!(d.kind, DeclKind::ControlType(_)) && d.name().is_some_and(|n| n.name == "GhostT")
    });
    if ghost {
        "t2na"
    } else {
        "tna"
    }
}

fn with_headers(program: ir::Program, ast: &ast::Program) -> P4Program {
    let (headers, skipped) = controller_headers(ast);
    let mut p4info = generate_with_ids(&program, &headers, annotated_ids(ast));
    if let Some(pkg) = p4info.pkg_info.as_mut() {
        pkg.arch = arch_of(ast).into();
    }
    P4Program {
        program,
        headers,
        p4info,
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A program that includes t2na.p4 says `t2na` in its P4Info (it said `tna`); tna.p4's
    /// still say `tna`.
    #[test]
    fn arch_follows_the_included_architecture() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../p4/tests/stateful_tf2/outputs.p4"
        );
        let opts = p4::compile::CompileOptions {
            target: ir::Target::Tofino2,
            ..Default::default()
        };
        let c = p4::compile::compile_file(std::path::Path::new(path), &opts)
            .unwrap_or_else(|e| panic!("{}", e.render()));
        let p = for_file(c.program, std::path::Path::new(path), &opts);
        assert_eq!(p.p4info.pkg_info.unwrap().arch, "t2na");
        assert_eq!(l2l3().p4info.pkg_info.unwrap().arch, "tna");
    }

    fn l2l3() -> P4Program {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../p4/programs/l2l3.p4");
        let opts = p4::compile::CompileOptions::default();
        let c = p4::compile::compile_file(std::path::Path::new(path), &opts).unwrap();
        for_file(c.program, std::path::Path::new(path), &opts)
    }

    /// Two instances of one control: their tables and actions are told apart by the shortest
    /// unique suffix of their names, as p4c names aliases (audit 7b: both were `acl`/`deny`).
    #[test]
    fn aliases_of_two_control_instances_are_unique() {
        let src = r#"
#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<8> b; }
struct hs_t { h_t h; }
struct md_t { }
parser IP(packet_in pkt, out hs_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control Acl(in bit<8> key, inout ingress_intrinsic_metadata_for_deparser_t dp) {
    action deny() { dp.drop_ctl = 1; }
    table acl { key = { key : exact; } actions = { deny; NoAction; } size = 16; }
    apply { acl.apply(); }
}
control Ing(inout hs_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
            in ingress_intrinsic_metadata_from_parser_t pr,
            inout ingress_intrinsic_metadata_for_deparser_t dp,
            inout ingress_intrinsic_metadata_for_tm_t tm) {
    Acl() src_acl;
    Acl() dst_acl;
    action fwd() { tm.ucast_egress_port = 1; }
    table route { key = { hdr.h.a : exact; } actions = { fwd; } size = 16; }
    apply { src_acl.apply(hdr.h.a, dp); dst_acl.apply(hdr.h.b, dp); route.apply(); }
}
control ID(packet_out pkt, inout hs_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t dp) {
    apply { pkt.emit(hdr); }
}
parser EP(packet_in pkt, out hs_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) {
    state start { pkt.extract(eg); transition accept; }
}
control Eg(inout hs_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg,
           in egress_intrinsic_metadata_from_parser_t pr,
           inout egress_intrinsic_metadata_for_deparser_t dp,
           inout egress_intrinsic_metadata_for_output_port_t op) { apply { } }
control ED(packet_out pkt, inout hs_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t dp) {
    apply { }
}
Pipeline(IP(), Ing(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
"#;
        let opts = p4::compile::CompileOptions::default();
        let info = compile_source("two_acls.p4", src, &opts).unwrap().p4info;
        let alias = |name: &str| {
            let tables = info.tables.iter().map(|t| t.preamble.as_ref());
            let actions = info.actions.iter().map(|a| a.preamble.as_ref());
            tables
                .chain(actions)
                .flatten()
                .find(|p| p.name == name)
                .map(|p| p.alias.clone())
        };
        assert_eq!(alias("Ing.src_acl.acl").as_deref(), Some("src_acl.acl"));
        assert_eq!(alias("Ing.dst_acl.acl").as_deref(), Some("dst_acl.acl"));
        assert_eq!(alias("Ing.src_acl.deny").as_deref(), Some("src_acl.deny"));
        assert_eq!(alias("Ing.route").as_deref(), Some("route"));
        assert_eq!(alias("Ing.fwd").as_deref(), Some("fwd"));
    }

    #[test]
    fn l2l3_tables_actions_and_counters() {
        let info = l2l3().p4info;
        let lpm = info
            .tables
            .iter()
            .find(|t| t.preamble.as_ref().unwrap().name == "SwitchIngress.ipv4_lpm")
            .unwrap();
        let pre = lpm.preamble.as_ref().unwrap();
        assert_eq!(pre.id >> 24, u32::from(prefix::TABLE));
        assert_eq!(
            pre.id & 0xff_ffff,
            super::super::ids::name_hash(&pre.name) & 0xff_ffff
        );
        assert_eq!(lpm.match_fields[0].name, "hdr.ipv4.dst_addr");
        assert_eq!(lpm.match_fields[0].bitwidth, 32);
        let set_nexthop = info
            .actions
            .iter()
            .find(|a| a.preamble.as_ref().unwrap().name == "SwitchIngress.set_nexthop")
            .unwrap();
        assert!(lpm
            .action_refs
            .iter()
            .any(|r| r.id == set_nexthop.preamble.as_ref().unwrap().id));
        assert_eq!(set_nexthop.params[0].name, "nexthop_id");
        assert_eq!(set_nexthop.params[0].id, 1);
        // The ACL's direct counter points at the ACL, and the ACL lists it.
        let dc = &info.direct_counters[0];
        let acl = info
            .tables
            .iter()
            .find(|t| t.preamble.as_ref().unwrap().id == dc.direct_table_id)
            .unwrap();
        assert_eq!(acl.preamble.as_ref().unwrap().name, "SwitchIngress.acl");
        assert_eq!(
            acl.direct_resource_ids,
            vec![dc.preamble.as_ref().unwrap().id]
        );
        assert_eq!(
            acl.match_fields
                .iter()
                .map(|m| m.r#match.clone())
                .filter(|m| *m
                    == Some(pi::match_field::Match::MatchType(
                        pi::match_field::MatchType::Range as i32
                    )))
                .count(),
            1
        );
        let names: BTreeSet<&str> = info
            .counters
            .iter()
            .map(|c| c.preamble.as_ref().unwrap().name.as_str())
            .collect();
        assert!(
            names.contains("SwitchIngress.ingress_port_counter"),
            "{names:?}"
        );
        // Every id is unique.
        let mut ids = BTreeSet::new();
        for id in info
            .tables
            .iter()
            .map(|t| t.preamble.as_ref().unwrap().id)
            .chain(info.actions.iter().map(|a| a.preamble.as_ref().unwrap().id))
            .chain(
                info.counters
                    .iter()
                    .map(|c| c.preamble.as_ref().unwrap().id),
            )
        {
            assert!(ids.insert(id), "id {id:#x} twice");
        }
    }

    #[test]
    fn id_annotations_by_qualified_name() {
        let src = r#"
            @id(7) action top() {}
            control C(inout bit<8> x) {
                @id(0x02000005) table t { key = { x : exact; } actions = { top; } }
                @id(9) action a() {}
                action plain() {}
                apply {}
            }
            @id(3) @controller_header("packet_in") header p_h { bit<8> x; }
        "#;
        let (_, ast) = p4::parse_str("t.p4", src, &p4::LoadOptions::default());
        let ids = annotated_ids(&ast.unwrap());
        let want: BTreeMap<String, u32> = [
            ("top".to_string(), 7),
            ("C.t".to_string(), 0x0200_0005),
            ("C.a".to_string(), 9),
            ("packet_in".to_string(), 3),
        ]
        .into();
        assert_eq!(ids, want);
    }

    #[test]
    fn controller_headers_through_typedefs() {
        let src = r#"
            typedef bit<9> port_t;
            typedef port_t my_port_t;
            @controller_header("packet_in")
            header packet_in_h { my_port_t ingress_port; bit<7> pad; }
            @controller_header("packet_out")
            header packet_out_h { bit<9> egress_port; bit<W> bad; }
            header plain_h { bit<8> x; }
        "#;
        let (_, ast) = p4::parse_str("t.p4", src, &p4::LoadOptions::default());
        let (hs, skipped) = controller_headers(&ast.unwrap());
        assert_eq!(
            hs,
            vec![ControllerHeader {
                name: "packet_in".into(),
                fields: vec![("ingress_port".into(), 9), ("pad".into(), 7)],
            }]
        );
        assert_eq!(hs[0].bits(), 16);
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].contains("bad"), "{skipped:?}");
    }
}

//! The top of the elaboration: `Switch(...) main;`, each `Pipeline(...)` instance, and the
//! binding of every block's parameters to PHV storage by type and position as TNA does.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, Gress};

use super::intrinsics;
use super::multi_parser::{self, ParserSet};
use super::phv::{Loc, PhvAlloc};
use super::{control, parser, Binding, BlockInst, Ctx, Lowered, Lowerer, PipeObjs, Res};
use crate::ast::{self, DeclKind, ExprKind, TypeKind};
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

/// Storage of one gress shared by its parser, control and deparser.
struct GressStorage {
    /// The header struct `H` and the metadata struct `M`, in that order.
    user: Vec<Rc<Loc>>,
    /// Intrinsic struct type name → storage.
    intrinsic: Vec<(String, Rc<Loc>)>,
}

pub(super) fn type_name(t: &ast::Type) -> Option<&ast::Ident> {
    match &t.kind {
        TypeKind::Named(id) => Some(id),
        TypeKind::Specialized { base, .. } => Some(base),
        _ => None,
    }
}

pub(super) fn lower_main<'a>(l: &mut Lowerer<'a>) -> Res<Lowered> {
    let env = l.env;
    let Some(main) = env.lookup("main") else {
        return Err(l.err(
            Diagnostic::error("the program has no `main`")
                .with_help("end the program with `Pipeline(...) pipe; Switch(pipe) main;`"),
        ));
    };
    let DeclKind::Instantiation(inst) = &main.kind else {
        let span = main.name().map(|n| n.span).unwrap_or(main.span);
        return Err(l.err(
            Diagnostic::error("`main` is not a package instance")
                .with_primary(span, "declared here")
                .with_help("declare `Switch(pipe) main;`"),
        ));
    };
    let pkg = type_name(&inst.ty).map(|i| i.name.as_str()).unwrap_or("");
    if pkg != "Switch" && pkg != "MultiParserSwitch" {
        let d = Diagnostic::error(format!("`main` is a `{pkg}`, not a TNA `Switch`"))
            .with_primary(inst.ty.span, "expected `Switch`");
        return Err(
            l.err(d.with_help("instantiate `Switch(pipe) main;` with a `Pipeline` instance"))
        );
    }
    let multi = pkg == "MultiParserSwitch";
    if inst.args.is_empty() || inst.args.len() > 4 {
        return Err(l.err(
            Diagnostic::error(format!(
                "`{pkg}` takes 1 to 4 pipelines, {} given",
                inst.args.len()
            ))
            .with_primary(main.span, "here"),
        ));
    }
    let mut pipelines: Vec<ir::Pipeline> = Vec::new();
    let mut spans = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut pipe_map = Vec::new();
    let mut failed = false;
    for arg in &inst.args {
        let (name, pinst) = match pipeline_instance(l, &arg.value, multi) {
            Ok(x) => x,
            Err(r) => {
                failed = true;
                let _ = r;
                continue;
            }
        };
        if let Some(i) = names.iter().position(|n| *n == name) {
            pipe_map.push(i);
            continue;
        }
        match lower_pipeline(l, &name, pinst, multi) {
            Ok((p, s)) => {
                pipe_map.push(pipelines.len());
                names.push(name);
                pipelines.push(p);
                spans.push(s);
            }
            Err(_) => failed = true,
        }
    }
    check_unused_blocks(l);
    if failed {
        return Err(super::Reported);
    }
    if pipe_map.len() == 1 {
        pipe_map = vec![0; 4];
    }
    Ok(Lowered {
        program: ir::Program {
            name: "main".into(),
            target: l.target,
            pipelines,
            pipe_map,
            errors: ir::ErrorEnum {
                names: env.errors.clone(),
            },
        },
        spans: super::SourceSpans { pipelines: spans },
    })
}

/// Resolves a `Switch` argument to a `Pipeline(...)` instantiation (by name or inline); a
/// `MultiParserSwitch` takes `MultiParserPipeline`s.
fn pipeline_instance<'a>(
    l: &mut Lowerer<'a>,
    e: &'a ast::Expr,
    multi: bool,
) -> Res<(String, (&'a [ast::Argument], Span))> {
    let (want, sw) = match multi {
        true => ("MultiParserPipeline", "MultiParserSwitch"),
        false => ("Pipeline", "Switch"),
    };
    match &e.kind {
        ExprKind::Name(id) => match l.env.lookup(&id.name).map(|d| (d, &d.kind)) {
            Some((_, DeclKind::Instantiation(i)))
                if type_name(&i.ty).is_some_and(|t| t.name == want) =>
            {
                Ok((id.name.clone(), (&i.args, i.ty.span)))
            }
            Some((d, _)) => Err(l.err(
                Diagnostic::error(format!("`{}` is not a `{want}` instance", id.name))
                    .with_primary(id.span, format!("passed to `{sw}` here"))
                    .with_secondary(d.name().map(|n| n.span).unwrap_or(d.span), "declared here"),
            )),
            None => Err(l.unknown_name(id, "pipeline")),
        },
        ExprKind::Call { callee, args, .. } if matches!(&callee.kind, ExprKind::Name(n) if n.name == want) => {
            Ok(("pipe".to_string(), (args, callee.span)))
        }
        _ => Err(l.err(
            Diagnostic::error("expected a `Pipeline` instance")
                .with_primary(e.span, "not a pipeline")
                .with_help("declare `Pipeline(...) pipe;` and pass `pipe`"),
        )),
    }
}

/// Resolves a `Pipeline` argument to a parser or control instance.
pub(super) fn block_instance<'a>(
    l: &mut Lowerer<'a>,
    e: &'a ast::Expr,
    want_parser: bool,
) -> Res<BlockInst<'a>> {
    let (id, ctor_args, type_args, inst_name) = match &e.kind {
        ExprKind::Call {
            callee,
            args,
            type_args,
        } => match &callee.kind {
            ExprKind::Name(id) => (id, args.as_slice(), type_args.as_slice(), id.name.clone()),
            _ => {
                return Err(l.err(
                    Diagnostic::error("expected a parser or control instance")
                        .with_primary(e.span, "here"),
                ))
            }
        },
        ExprKind::Name(n) => match l.env.lookup(&n.name).map(|d| &d.kind) {
            Some(DeclKind::Instantiation(i)) => match type_name(&i.ty) {
                Some(t) => {
                    let targs = match &i.ty.kind {
                        TypeKind::Specialized { args, .. } => args.as_slice(),
                        _ => &[],
                    };
                    (t, i.args.as_slice(), targs, n.name.clone())
                }
                None => return Err(l.unknown_name(n, "block")),
            },
            _ => return Err(l.unknown_name(n, "parser or control instance")),
        },
        _ => {
            return Err(l.err(
                Diagnostic::error("expected a parser or control instance")
                    .with_primary(e.span, "here")
                    .with_help("pass `MyParser()` or the name of an instance"),
            ))
        }
    };
    let Some(decl) = l.env.lookup(&id.name) else {
        return Err(l.unknown_name(id, "parser or control"));
    };
    let ok = match &decl.kind {
        DeclKind::Parser(_) => want_parser,
        DeclKind::Control(_) => !want_parser,
        _ => false,
    };
    if !ok {
        let what = if want_parser { "parser" } else { "control" };
        return Err(l.err(
            Diagnostic::error(format!("`{}` is not a {what}", id.name))
                .with_primary(id.span, format!("a {what} is expected in this position"))
                .with_help("`Pipeline` takes: ingress parser, ingress control, ingress deparser, egress parser, egress control, egress deparser"),
        ));
    }
    let ctor = l.ctor_values(decl, ctor_args, e.span)?;
    let types = l.block_types(decl, type_args, e.span)?;
    Ok(BlockInst {
        decl,
        name: inst_name,
        span: e.span,
        ctor,
        types,
    })
}

fn lower_pipeline<'a>(
    l: &mut Lowerer<'a>,
    name: &str,
    (args, span): (&'a [ast::Argument], Span),
    multi: bool,
) -> Res<(ir::Pipeline, super::PipelineSpans)> {
    if multi && args.len() != 6 {
        let d = Diagnostic::error(format!(
            "`MultiParserPipeline` takes 6 blocks, {} given",
            args.len()
        ))
        .with_primary(span, "here")
        .with_help("`MultiParserPipeline(ig_parsers, ingress, ingress_deparser, eg_parsers, egress, egress_deparser)`");
        return Err(l.err(d));
    }
    // T2NA's `Pipeline` has the ghost control as a seventh (optional) block; tna.p4's, like
    // Intel's, keeps Tofino 1's six on every target.
    let arch_ghost = matches!(
        l.env.lookup("Pipeline").map(|d| &d.kind),
        Some(DeclKind::Package(p)) if p.params.len() == 7
    );
    let ghost_arg = match args.len() {
        6 => None,
        7 if arch_ghost && l.target == ir::Target::Tofino2 => Some(&args[6]),
        7 => {
            let why = if l.target == ir::Target::Tofino2 {
                "needs T2NA: tna.p4's `Pipeline` takes six blocks on every target, as Intel's does"
            } else {
                "needs Tofino 2: Tofino 1's traffic manager sends no queue updates to a ghost thread"
            };
            let d = Diagnostic::error(format!(
                "the ghost thread (`Pipeline`'s seventh argument) {why}"
            ))
            .with_primary(args[6].value.span, "ghost control")
            .with_help(
                "include <t2na.p4> and compile with `--target tofino2`, or drop the ghost control",
            );
            return Err(l.err(d));
        }
        n => {
            let d = Diagnostic::error(format!("`Pipeline` takes 6 blocks (7 with a Tofino 2 ghost control), {n} given"))
                .with_primary(span, "here")
                .with_help("`Pipeline(ingress_parser, ingress, ingress_deparser, egress_parser, egress, egress_deparser)`");
            return Err(l.err(d));
        }
    };
    l.pipe = PipeObjs::default();
    l.spans = Default::default();
    l.applied = super::shared_apply::AppliedControls::new(name);
    l.top_actions.clear();
    l.control_locals = Default::default();
    let mut blocks = Vec::new();
    let mut sets: [Option<ParserSet<'a>>; 2] = [None, None];
    let mut bad = false;
    for (i, a) in args.iter().take(6).enumerate() {
        let b = if multi && i % 3 == 0 {
            let gress = [Gress::Ingress, Gress::Egress][i / 3];
            multi_parser::parser_set(l, &a.value, gress).map(|set| {
                let first = set.parsers[0].clone();
                sets[i / 3] = Some(set);
                first
            })
        } else {
            block_instance(l, &a.value, i % 3 == 0).map(Rc::new)
        };
        match b {
            Ok(b) => blocks.push(b),
            Err(_) => bad = true,
        }
    }
    let ghost_b = match ghost_arg.map(|a| block_instance(l, &a.value, false)) {
        Some(Ok(b)) => Some(Rc::new(b)),
        Some(Err(_)) => {
            bad = true;
            None
        }
        None => None,
    };
    if bad {
        return Err(super::Reported);
    }
    let [ig_set, eg_set] = &sets;
    let ingress = lower_gress(l, Gress::Ingress, &blocks[0..3], ig_set.as_ref());
    let egress = lower_gress(l, Gress::Egress, &blocks[3..6], eg_set.as_ref());
    let (ingress, egress) = (ingress?, egress?);
    let ghost = match &ghost_b {
        Some(b) => Some(Box::new(super::ghost::lower_ghost(l, b)?)),
        None => None,
    };
    check_direct_resources(l)?;
    let p = std::mem::take(&mut l.pipe);
    let mut pipeline = ir::Pipeline {
        name: name.to_string(),
        ingress,
        egress,
        tables: p.tables,
        actions: p.actions,
        registers: p.registers,
        register_actions: p.register_actions,
        register_params: p.register_params,
        hashes: p.hashes,
        counters: p.counters,
        meters: p.meters,
        checksums: p.checksums,
        digests: p.digests,
        action_profiles: p.action_profiles,
        value_sets: p.value_sets,
        filters: p.filters,
        ghost,
    };
    let [ig, eg] = std::mem::take(&mut l.control_locals);
    super::copy_prop::run(&mut pipeline, &ig, &eg);
    Ok((pipeline, std::mem::take(&mut l.spans)))
}

/// The parameters of a block that are neither packets nor intrinsic structs.
fn user_params<'a>(
    l: &mut Lowerer<'a>,
    params: &'a [ast::Param],
    types: &crate::check::env::TypeParams,
) -> Vec<(&'a ast::Param, Option<Ty>)> {
    params
        .iter()
        .filter_map(|p| {
            let ty = l.env.resolve_type(&p.ty, types).ok();
            match &ty {
                Some(Ty::Extern { name, .. }) if name == "packet_in" || name == "packet_out" => {
                    None
                }
                Some(Ty::Header(s) | Ty::Struct(s)) if intrinsics::is_intrinsic_struct(&s.name) => {
                    None
                }
                _ => Some((p, ty)),
            }
        })
        .collect()
}

fn block_params(decl: &ast::Decl) -> &[ast::Param] {
    match &decl.kind {
        DeclKind::Parser(p) => &p.params,
        DeclKind::Control(c) => &c.params,
        _ => &[],
    }
}

/// Lowers one gress from its parser, control and deparser (`blocks`); `set` holds every
/// parser of a `MultiParserPipeline`'s gress (the first is `blocks[0]`).
fn lower_gress<'a>(
    l: &mut Lowerer<'a>,
    gress: Gress,
    blocks: &[Rc<BlockInst<'a>>],
    set: Option<&ParserSet<'a>>,
) -> Res<ir::GressProgram> {
    let [parser_b, control_b, deparser_b] = blocks else {
        return Err(super::Reported);
    };
    l.gress = gress;
    l.phv = PhvAlloc::new();
    l.tmp = 0;
    l.ifs.clear();
    l.csum_updates.clear();
    // H and M come from the parser's `out` parameters; names from the MAU control's. A
    // generic block's H and M are the ones its siblings name.
    let pparams = user_params(l, block_params(parser_b.decl), &parser_b.types);
    let cparams = user_params(l, block_params(control_b.decl), &control_b.types);
    let dparams = user_params(l, block_params(deparser_b.decl), &deparser_b.types);
    let concrete: Vec<Option<Ty>> = (0..2)
        .map(|k| {
            [&pparams, &cparams, &dparams]
                .iter()
                .find_map(|ps| ps.get(k).and_then(|(_, t)| t.clone()))
        })
        .collect();
    let binding = |b: &BlockInst<'a>, ps: &[(&'a ast::Param, Option<Ty>)]| {
        let user: Vec<&ast::Param> = ps.iter().map(|(p, _)| *p).collect();
        super::generics::pipeline_block_types(b.decl, &user, &concrete, &b.types)
    };
    let (ptypes, ctypes, dtypes) = (
        binding(parser_b, &pparams),
        binding(control_b, &cparams),
        binding(deparser_b, &dparams),
    );
    if pparams.len() < 2 {
        let name = parser_b
            .decl
            .name()
            .map(|n| n.span)
            .unwrap_or(parser_b.span);
        return Err(l.err(
            Diagnostic::error(format!(
                "{gress} parser `{}` does not declare header and metadata parameters",
                parser_b.decl.name().map(|n| n.name.as_str()).unwrap_or("?")
            ))
            .with_primary(name, "parser declared here")
            .with_help("TNA parsers are `(packet_in pkt, out H hdr, out M meta, out ..._intrinsic_metadata_t md)`"),
        ));
    }
    let mut user = Vec::new();
    let mut root_names = Vec::new();
    for (i, (p, _)) in pparams.iter().take(2).enumerate() {
        let Some(ty) = concrete[i].clone() else {
            // Report the resolution error.
            let _ = l.resolve_type(&p.ty);
            return Err(super::Reported);
        };
        let name = cparams
            .get(i)
            .map(|(cp, _)| cp.name.name.clone())
            .unwrap_or_else(|| p.name.name.clone());
        user.push(l.alloc(&name, &ty, p.span)?);
        root_names.push(name);
    }
    // Intrinsic structs, named after the parameter that binds them (control first).
    let mut intrinsic = Vec::new();
    let mut bindings = ir::IntrinsicBindings::default();
    let mut prefix = ir::PrefixLayout::default();
    for (k, sname) in intrinsics::structs(gress).iter().enumerate() {
        let ty = match l.env.lookup(sname) {
            Some(_) => l.resolve_type(&ast::Type {
                kind: TypeKind::Named(ast::Ident::new(*sname, parser_b.span)),
                span: parser_b.span,
            })?,
            None => {
                return Err(l.err(
                    Diagnostic::error(format!("architecture type `{sname}` is not declared"))
                        .with_primary(parser_b.span, "needed by this pipeline")
                        .with_help("include <tna.p4> (or <t2na.p4>)"),
                ))
            }
        };
        let pname = [control_b, parser_b, deparser_b]
            .iter()
            .flat_map(|b| block_params(b.decl))
            .find(|p| type_name(&p.ty).is_some_and(|t| t.name == *sname))
            .map(|p| p.name.name.clone())
            .unwrap_or_else(|| format!("${sname}"));
        let loc = l.alloc(&pname, &ty, parser_b.span)?;
        root_names.push(pname);
        if let Loc::Header { fields, ty: st, .. } | Loc::Struct { fields, ty: st } = &*loc {
            for ((fname, _), f) in st.fields.iter().zip(fields) {
                if let (Some(i), Loc::Field { f, .. }) = (intrinsics::intrinsic(sname, fname), &**f)
                {
                    bindings.fields.push((i, *f));
                }
            }
        }
        if k == 0 {
            prefix = intrinsics::prefix(gress, &ty, l.target);
        }
        intrinsic.push((sname.to_string(), loc));
    }
    // The ingress control may take `in ghost_intrinsic_metadata_t` (Tofino 2): it sees the
    // pipe's ping-pong bit there.
    let gmd = super::ghost::GHOST_MD;
    let names_gmd = [control_b, parser_b, deparser_b]
        .iter()
        .flat_map(|b| block_params(b.decl))
        .find(|p| type_name(&p.ty).is_some_and(|t| t.name == gmd));
    if let (Gress::Ingress, Some(p)) = (gress, names_gmd) {
        let ty = l.resolve_type(&p.ty)?;
        let loc = l.alloc(&p.name.name, &ty, p.span)?;
        super::ghost::bind_fields(&loc, &mut bindings);
        intrinsic.push((gmd.to_string(), loc));
    }
    // `@pa_alias`: two names, one field (before the ghost metadata, which no alias names).
    let n_user = user.len();
    let mut roots: Vec<(String, Rc<Loc>)> = root_names
        .into_iter()
        .zip(user.iter().chain(intrinsic.iter().map(|(_, l)| l)).cloned())
        .collect();
    super::alias::apply(l, gress, &mut roots, &mut bindings.fields);
    for (i, (_, loc)) in roots.into_iter().enumerate() {
        if i < n_user {
            user[i] = loc;
        } else if let Some(slot) = intrinsic.get_mut(i - n_user) {
            slot.1 = loc;
        }
    }
    let storage = GressStorage { user, intrinsic };
    l.bind_written_flags(&bindings);
    l.dprsr_type_fields = [
        ir::Intrinsic::IgDprsrDigestType,
        ir::Intrinsic::IgDprsrResubmitType,
        ir::Intrinsic::IgDprsrMirrorType,
        ir::Intrinsic::EgDprsrMirrorType,
    ]
    .into_iter()
    .filter_map(|w| Some((w, bindings.get(w)?)))
    .collect();
    let first_action = l.pipe.actions.len();

    let mut failed = false;
    // Parser.
    l.ctx = Ctx::Parser;
    let parser = match set {
        None => l.with_types(ptypes, |l| {
            bind_block(l, parser_b, &storage)
                .and_then(|frame| parser::lower_top_parser(l, parser_b, frame))
        }),
        Some(set) => {
            let types: Vec<_> = set
                .parsers
                .iter()
                .map(|b| binding(b, &user_params(l, block_params(b.decl), &b.types)))
                .collect();
            lower_parser_set(l, gress, set, types, &storage, &prefix)
        }
    };
    // Control.
    l.ctx = Ctx::Control;
    l.ifs.clear();
    l.locals_on = true;
    let control = l.with_types(ctypes, |l| {
        bind_block(l, control_b, &storage).and_then(|frame| {
            control::lower_control_inst(l, control_b, frame, control_b.name.clone())
        })
    });
    l.locals_on = false;
    // Tables whose actions an inlined call made set a flag instead of exiting test it here
    // too (a top-level action may also run from the top-level control's own tables).
    let control = control.and_then(|mut c| {
        l.copy_out_on_exit(&mut c, &[], control_b.decl.span)?;
        Ok(c)
    });
    l.control_locals[usize::from(gress == Gress::Egress)].actions =
        first_action..l.pipe.actions.len();
    let control_ifs = std::mem::take(&mut l.ifs);
    // Deparser.
    l.ctx = Ctx::Deparser;
    l.digest_entries.clear();
    l.deparser_selectors.clear();
    let deparser = l.with_types(dtypes, |l| {
        bind_block(l, deparser_b, &storage).and_then(|frame| {
            control::lower_control_inst(l, deparser_b, frame, deparser_b.name.clone())
        })
    });
    let deparser_ifs = std::mem::take(&mut l.ifs);
    let (parser, state_spans) = match parser {
        Ok(p) => (Some(p.0), p.1),
        Err(_) => {
            failed = true;
            (None, Vec::new())
        }
    };
    let control = control.unwrap_or_else(|_| {
        failed = true;
        Vec::new()
    });
    let mut deparser = deparser.unwrap_or_else(|_| {
        failed = true;
        Vec::new()
    });
    deparser_stage(&mut deparser);
    let Some(mut parser) = parser.filter(|_| !failed) else {
        return Err(super::Reported);
    };
    let mut control = control;
    l.mark_written(&mut parser, &mut control, first_action);
    let state_spans_copy = state_spans.clone();
    let gs = super::GressSpans {
        parser_states: state_spans,
        control_ifs,
        deparser_ifs,
    };
    match gress {
        Gress::Ingress => l.spans.ingress = gs,
        Gress::Egress => l.spans.egress = gs,
    }
    let phv = std::mem::take(&mut l.phv).finish();
    super::parse_paths::resolve(l, &mut parser, &phv, &state_spans_copy);
    let dspan = deparser_b.decl.name().map_or(deparser_b.span, |n| n.span);
    super::deparser_order::emits_last(l, &mut deparser, dspan);
    super::deparser_order::group_emits(l, &mut deparser, &phv, dspan);
    Ok(ir::GressProgram {
        phv,
        prefix,
        intrinsics: bindings,
        parser,
        control: ir::Control {
            name: control_b.name.clone(),
            body: control,
        },
        deparser: ir::Control {
            name: deparser_b.name.clone(),
            body: deparser,
        },
    })
}

/// Lowers every parser of a `MultiParserPipeline` gress into one parse graph whose first state
/// picks the packet's parser by its port ([`multi_parser`]).
fn lower_parser_set<'a>(
    l: &mut Lowerer<'a>,
    gress: Gress,
    set: &ParserSet<'a>,
    types: Vec<crate::check::env::TypeParams>,
    storage: &GressStorage,
    prefix: &ir::PrefixLayout,
) -> Res<(ir::Parser, Vec<Span>)> {
    let Some(port) = multi_parser::port_field(prefix, gress) else {
        return Err(l.err(
            Diagnostic::error("the intrinsic metadata has no port field to choose a parser by")
                .with_primary(set.span, "several parsers")
                .with_help("include <tna.p4> (or <t2na.p4>)"),
        ));
    };
    let mut graph = parser::MultiGraph::default();
    let mut starts = Vec::new();
    for (b, t) in set.parsers.iter().zip(types) {
        let start = l.with_types(t, |l| {
            bind_block(l, b, storage).and_then(|frame| graph.add(l, b, frame))
        })?;
        starts.push(start);
    }
    let bound = multi_parser::binding(&set.portmap, l.target);
    multi_parser::warn_unbound(l, set, &bound);
    multi_parser::warn_unused(l, set, &bound);
    let pick = multi_parser::dispatch(&bound, &starts, port, l.target);
    Ok(graph.finish(&set.name, set.span, pick))
}

/// Binds a top-level block's parameters: packets, intrinsic structs by type, the header and
/// metadata structs by position (checking their types agree with the parser's).
fn bind_block<'a>(
    l: &mut Lowerer<'a>,
    b: &BlockInst<'a>,
    storage: &GressStorage,
) -> Res<HashMap<String, Binding<'a>>> {
    let params: &[ast::Param] = match &b.decl.kind {
        DeclKind::Parser(p) => &p.params,
        DeclKind::Control(c) => &c.params,
        _ => &[],
    };
    let mut frame = HashMap::new();
    let mut k = 0;
    let mut failed = false;
    for p in params {
        let ty = match l.resolve_type(&p.ty) {
            Ok(t) => t,
            Err(_) => {
                failed = true;
                continue;
            }
        };
        let binding = match &ty {
            Ty::Extern { name, .. } if name == "packet_in" => Binding::Packet { out: false },
            Ty::Extern { name, .. } if name == "packet_out" => Binding::Packet { out: true },
            Ty::Header(s) | Ty::Struct(s) if intrinsics::is_intrinsic_struct(&s.name) => {
                match storage.intrinsic.iter().find(|(n, _)| *n == s.name) {
                    Some((_, loc)) if p.direction == ast::Direction::In => {
                        Binding::In(super::V::Loc(loc.clone()))
                    }
                    Some((_, loc)) => Binding::Val(super::V::Loc(loc.clone())),
                    None => {
                        l.err(
                            Diagnostic::error(format!("`{}` belongs to the other gress", s.name))
                                .with_primary(p.ty.span, "not available in this gress"),
                        );
                        failed = true;
                        continue;
                    }
                }
            }
            _ => {
                let Some(loc) = storage.user.get(k) else {
                    l.err(
                        Diagnostic::error(format!("unexpected parameter `{}`", p.name.name))
                            .with_primary(p.span, "TNA does not bind a value here")
                            .with_help("TNA blocks take the packet, the header and metadata structs, then intrinsic metadata"),
                    );
                    failed = true;
                    continue;
                };
                k += 1;
                if loc.ty() != ty {
                    l.err(
                        Diagnostic::error(format!(
                            "parameter `{}` has type `{ty}`, but this pipeline's {} is `{}`",
                            p.name.name,
                            if k == 1 {
                                "header struct"
                            } else {
                                "metadata struct"
                            },
                            loc.ty()
                        ))
                        .with_primary(p.ty.span, "type differs from the parser's")
                        .with_help(format!("declare it as `{}`", loc.ty())),
                    );
                    failed = true;
                    continue;
                }
                if p.direction == ast::Direction::In {
                    Binding::In(super::V::Loc(loc.clone()))
                } else {
                    Binding::Val(super::V::Loc(loc.clone()))
                }
            }
        };
        frame.insert(p.name.name.clone(), binding);
    }
    if failed {
        return Err(super::Reported);
    }
    Ok(frame)
}

/// Type-checks the user's parsers and controls that no pipeline uses, with their parameters
/// bound to scratch storage; only their diagnostics are kept. Constructor parameters take
/// their defaults; a block with a constructor parameter that has none is specialised only
/// where it is instantiated, so an unused one is not checked.
fn check_unused_blocks<'a>(l: &mut Lowerer<'a>) {
    let env = l.env;
    for d in &env.program.decls {
        if env.is_arch(d.span) || l.lowered_blocks.contains(&(d.span.file, d.span.lo)) {
            continue;
        }
        let (params, tparams, is_parser) = match &d.kind {
            DeclKind::Parser(p) => (&p.params, &p.type_params, true),
            DeclKind::Control(c) => (&c.params, &c.type_params, false),
            _ => continue,
        };
        if !tparams.is_empty()
            || super::ctor::ctor_params(d)
                .iter()
                .any(|p| p.default.is_none())
        {
            continue;
        }
        let Some(name) = d.name() else { continue };
        let saved_pipe = std::mem::take(&mut l.pipe);
        let saved_spans = std::mem::take(&mut l.spans);
        let saved_phv = std::mem::take(&mut l.phv);
        let saved_ifs = std::mem::take(&mut l.ifs);
        let saved_top = std::mem::take(&mut l.top_actions);
        let saved_applied = std::mem::take(&mut l.applied);
        l.gress = Gress::Ingress;
        let mut frame = HashMap::new();
        let mut deparser = false;
        let mut ok = true;
        for p in params {
            let Ok(ty) = l.env.resolve_type(&p.ty, &Default::default()) else {
                ok = false;
                break;
            };
            let b = match &ty {
                Ty::Extern { name, .. } if name == "packet_in" => Binding::Packet { out: false },
                Ty::Extern { name, .. } if name == "packet_out" => {
                    deparser = true;
                    Binding::Packet { out: true }
                }
                _ => match l.phv.value(&p.name.name, &ty) {
                    Ok(loc) if p.direction == ast::Direction::In => Binding::In(super::V::Loc(loc)),
                    Ok(loc) => Binding::Val(super::V::Loc(loc)),
                    Err(_) => {
                        ok = false;
                        break;
                    }
                },
            };
            frame.insert(p.name.name.clone(), b);
        }
        let ctor = if ok {
            l.ctor_values(d, &[], name.span).ok()
        } else {
            None
        };
        if let Some(ctor) = ctor {
            let inst = BlockInst {
                decl: d,
                name: name.name.clone(),
                span: name.span,
                ctor,
                types: Default::default(),
            };
            l.ctx = if is_parser {
                Ctx::Parser
            } else if deparser {
                Ctx::Deparser
            } else {
                Ctx::Control
            };
            if is_parser {
                let _ = parser::lower_top_parser(l, &inst, frame);
            } else {
                let _ = control::lower_control_inst(l, &inst, frame, inst.name.clone());
            }
        }
        l.pipe = saved_pipe;
        l.spans = saved_spans;
        l.phv = saved_phv;
        l.ifs = saved_ifs;
        l.top_actions = saved_top;
        l.applied = saved_applied;
    }
}

/// Direct counters and meters used in an action must belong to every table that runs it.
fn check_direct_resources(l: &mut Lowerer<'_>) -> super::Res<()> {
    /// The direct counters and meters a body uses, through the actions it calls too (a
    /// called action counts the caller's table entry).
    fn uses(
        b: &[ir::Stmt],
        actions: &[ir::Action],
        counters: &mut Vec<ir::CounterId>,
        meters: &mut Vec<ir::MeterId>,
    ) {
        fn expr(e: &ir::Expr, meters: &mut Vec<ir::MeterId>) {
            match e {
                ir::Expr::MeterExecute {
                    meter, index: None, ..
                } => meters.push(*meter),
                ir::Expr::Unary { arg, .. }
                | ir::Expr::Slice { arg, .. }
                | ir::Expr::Cast { arg, .. } => expr(arg, meters),
                ir::Expr::Binary { a, b, .. } => {
                    expr(a, meters);
                    expr(b, meters);
                }
                ir::Expr::Concat { hi, lo, .. } => {
                    expr(hi, meters);
                    expr(lo, meters);
                }
                ir::Expr::Ternary {
                    cond, then, els, ..
                } => {
                    expr(cond, meters);
                    expr(then, meters);
                    expr(els, meters);
                }
                _ => {}
            }
        }
        for s in b {
            match s {
                ir::Stmt::CountDirect { counter } => counters.push(*counter),
                ir::Stmt::Assign { value, .. } => expr(value, meters),
                ir::Stmt::If {
                    cond, then, els, ..
                } => {
                    expr(cond, meters);
                    uses(then, actions, counters, meters);
                    uses(els, actions, counters, meters);
                }
                ir::Stmt::CallAction { action, .. } => {
                    if let Some(a) = actions.get(action.index()) {
                        uses(&a.body, actions, counters, meters);
                    }
                }
                _ => {}
            }
        }
    }
    let mut bad = Vec::new();
    for (ti, t) in l.pipe.tables.iter().enumerate() {
        for a in &t.actions {
            let Some(action) = l.pipe.actions.get(a.action.index()) else {
                continue;
            };
            let (mut cs, mut ms) = (Vec::new(), Vec::new());
            uses(&action.body, &l.pipe.actions, &mut cs, &mut ms);
            for c in cs {
                if t.direct_counter != Some(c) {
                    let name = l
                        .pipe
                        .counters
                        .get(c.index())
                        .map(|x| x.name.clone())
                        .unwrap_or_default();
                    bad.push((ti, action.name.clone(), name, "counters"));
                }
            }
            for m in ms {
                if t.direct_meter != Some(m) {
                    let name = l
                        .pipe
                        .meters
                        .get(m.index())
                        .map(|x| x.name.clone())
                        .unwrap_or_default();
                    bad.push((ti, action.name.clone(), name, "meters"));
                }
            }
        }
    }
    if bad.is_empty() {
        return Ok(());
    }
    for (ti, action, ext, prop) in bad {
        let span = l.spans.tables.get(ti).copied().unwrap_or_default();
        let table = l.pipe.tables[ti].name.clone();
        l.err(
            Diagnostic::error(format!(
                "action `{action}` uses the direct extern `{ext}`, which table `{table}` does not own"
            ))
            .with_primary(span, "this table runs the action")
            .with_help(format!("add `{prop} = {};` to the table", ext.rsplit('.').next().unwrap_or(&ext))),
        );
    }
    Err(super::Reported)
}

/// Marks a deparser's conditions as the deparser's ([`ir::DEPARSER_STAGE`]): it evaluates them
/// after the last match-action stage, which traces show.
fn deparser_stage(body: &mut [ir::Stmt]) {
    for s in body {
        if let ir::Stmt::If {
            then, els, stage, ..
        } = s
        {
            *stage = ir::DEPARSER_STAGE;
            deparser_stage(then);
            deparser_stage(els);
        }
    }
}

//! Parsers: states, sub-parser instances inlined (a state that applies a sub-parser is split
//! in two: the part before the call transitions into the sub-parser's `start`, whose `accept`
//! continues with the rest), transitions, `select` keysets and parser value sets.

use std::collections::HashMap;

use pipeline::ir::{self, KeysetElem, NextState, StateId};

use super::expr::Resolved;
use super::{Binding, BlockInst, Lowerer, Res};
use crate::ast::{self, DeclKind, ExprKind, KeysetKind, StmtKind, TransitionKind};
use crate::check::rules;
use crate::check::suggest;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

/// States built so far, with their spans.
#[derive(Default)]
struct States {
    states: Vec<ir::ParserState>,
    spans: Vec<Span>,
}

impl States {
    fn reserve(&mut self, name: String, span: Span) -> StateId {
        let mut name = name;
        if self.states.iter().any(|s| s.name == name) {
            let mut k = 2;
            while self.states.iter().any(|s| s.name == format!("{name}${k}")) {
                k += 1;
            }
            name = format!("{name}${k}");
        }
        let id = StateId(self.states.len() as u32);
        self.states.push(ir::ParserState {
            name,
            body: Vec::new(),
            transition: ir::Transition::Direct(NextState::Reject),
        });
        self.spans.push(span);
        id
    }
}

/// Lowers a top-level parser block; returns it and its states' spans.
pub(super) fn lower_top_parser<'a>(
    l: &mut Lowerer<'a>,
    inst: &BlockInst<'a>,
    frame: HashMap<String, Binding<'a>>,
) -> Res<(ir::Parser, Vec<Span>)> {
    let mut st = States::default();
    l.reject_warned = false;
    let start = lower_parser_inst(
        l,
        inst,
        frame,
        inst.name.clone(),
        NextState::Accept,
        &mut st,
    )?;
    Ok((
        ir::Parser {
            name: inst.name.clone(),
            start,
            states: st.states,
        },
        st.spans,
    ))
}

/// The parse graph of a gress with several parsers (`IngressParsers`): each parser's states
/// under its instance name, then a first state that picks the packet's parser.
#[derive(Default)]
pub(super) struct MultiGraph {
    st: States,
}

impl MultiGraph {
    /// Lowers one parser of the set; returns its `start`.
    pub(super) fn add<'a>(
        &mut self,
        l: &mut Lowerer<'a>,
        inst: &BlockInst<'a>,
        frame: HashMap<String, Binding<'a>>,
    ) -> Res<StateId> {
        l.reject_warned = false;
        let prefix = inst.name.clone();
        lower_parser_inst(l, inst, frame, prefix, NextState::Accept, &mut self.st)
    }

    /// Adds the first state, `NAME.$port_parser`, with the transition that picks the parser.
    pub(super) fn finish(
        mut self,
        name: &str,
        span: Span,
        pick: ir::Transition,
    ) -> (ir::Parser, Vec<Span>) {
        let start = self.st.reserve(format!("{name}.$port_parser"), span);
        self.st.states[start.index()].transition = pick;
        let parser = ir::Parser {
            name: name.to_string(),
            start,
            states: self.st.states,
        };
        (parser, self.st.spans)
    }
}

fn lower_parser_inst<'a>(
    l: &mut Lowerer<'a>,
    inst: &BlockInst<'a>,
    frame: HashMap<String, Binding<'a>>,
    prefix: String,
    accept: NextState,
    st: &mut States,
) -> Res<StateId> {
    l.check_depth(inst.span)?;
    let DeclKind::Parser(p) = &inst.decl.kind else {
        return Err(l.err(
            Diagnostic::error(format!("`{}` is not a parser", inst.name))
                .with_primary(inst.span, "here"),
        ));
    };
    let mut frame = frame;
    super::control::bind_ctor(l, inst, &mut frame)?;
    l.lowered_blocks
        .insert((inst.decl.span.file, inst.decl.span.lo));
    let errs = l.diags.error_count();
    let start = l.with_scope(frame, Some(prefix.clone()), |l| -> Res<StateId> {
        let mut init = Vec::new();
        for d in &p.locals {
            l.local_decl_or_poison(d, &mut init);
        }
        let mut ids: HashMap<&str, StateId> = HashMap::new();
        for s in &p.states {
            if matches!(s.name.name.as_str(), "accept" | "reject") {
                l.err(
                    Diagnostic::error(format!("a state cannot be named `{}`", s.name.name))
                        .with_primary(s.name.span, "reserved state name"),
                );
                continue;
            }
            if ids.contains_key(s.name.name.as_str()) {
                l.err(
                    Diagnostic::error(format!("duplicate state `{}`", s.name.name))
                        .with_primary(s.name.span, "declared again here"),
                );
                continue;
            }
            let id = st.reserve(format!("{prefix}.{}", s.name.name), s.name.span);
            ids.insert(&s.name.name, id);
        }
        let Some(&start) = ids.get("start") else {
            let name = inst.decl.name().map(|n| n.span).unwrap_or(inst.span);
            return Err(l.err(
                Diagnostic::error(format!("parser `{}` has no `start` state", p.name.name))
                    .with_primary(name, "declared here")
                    .with_help("add `state start { ... }`"),
            ));
        };
        for s in &p.states {
            let Some(&id) = ids.get(s.name.name.as_str()) else {
                continue;
            };
            let pre = if id == start {
                std::mem::take(&mut init)
            } else {
                Vec::new()
            };
            let _ = lower_state(l, s, id, pre, &ids, accept, &prefix, st);
        }
        Ok(start)
    })?;
    if l.diags.error_count() > errs {
        return Err(super::Reported);
    }
    Ok(start)
}

/// `x.apply(args)` on a sub-parser instance, as a statement.
fn sub_parser_call<'a>(
    l: &mut Lowerer<'a>,
    s: &'a ast::Stmt,
) -> Option<(std::rc::Rc<BlockInst<'a>>, &'a [ast::Argument])> {
    let StmtKind::Call(e) = &s.kind else {
        return None;
    };
    let ExprKind::Call { callee, args, .. } = &e.kind else {
        return None;
    };
    let ExprKind::Member { base, member } = &callee.kind else {
        return None;
    };
    if member.name != "apply" {
        return None;
    }
    let ExprKind::Name(id) = &base.kind else {
        return None;
    };
    let b = match l.lookup_scoped(&id.name) {
        Some(b) => b,
        // A top-level instance (`MyParser() p;` outside any parser).
        None if matches!(
            l.env.lookup(&id.name).map(|d| &d.kind),
            Some(DeclKind::Instantiation(_))
        ) =>
        {
            match l.lookup_name(id) {
                Ok(Resolved::Obj(b)) => b,
                _ => return None,
            }
        }
        None => return None,
    };
    match b {
        Binding::Block(b) if matches!(b.decl.kind, DeclKind::Parser(_)) => Some((b, args)),
        _ => None,
    }
}

#[allow(clippy::too_many_arguments)]
fn lower_state<'a>(
    l: &mut Lowerer<'a>,
    s: &'a ast::ParserState,
    id: StateId,
    pre: ir::Block,
    ids: &HashMap<&str, StateId>,
    accept: NextState,
    prefix: &str,
    st: &mut States,
) -> Res<()> {
    let mut cur = id;
    let mut body = pre;
    l.counters_loaded.clear();
    l.varbit_extract = None;
    l.scopes.push(HashMap::new());
    let mut k = 0;
    for stmt in &s.body {
        if let Some((sub, args)) = sub_parser_call(l, stmt) {
            let DeclKind::Parser(sp) = &sub.decl.kind else {
                continue;
            };
            // A generic sub-parser: its type parameters from its arguments.
            let Ok(types) = l.infer_types(sub.decl, &sp.params, args, &sub.types) else {
                continue;
            };
            l.type_args.push(types);
            let mark = l.slice_args.len();
            let frame = l.bind_args(&sp.params, args, stmt.span);
            if !l.take_slice_args(mark).is_empty() {
                l.err(crate::check::unsupported(
                    stmt.span,
                    "a slice as an `out`/`inout` argument of a sub-parser",
                    "copying it back after the sub-parser's states",
                ));
            }
            let frame = match frame {
                Ok(f) => f,
                Err(_) => {
                    l.type_args.pop();
                    continue;
                }
            };
            k += 1;
            let cont = st.reserve(
                format!(
                    "{prefix}.{}.$after_{}{}",
                    s.name.name,
                    sub.name,
                    if k > 1 {
                        format!("${k}")
                    } else {
                        String::new()
                    }
                ),
                stmt.span,
            );
            // Copy-in/copy-out where aliasing shows (`super::aliasing`), keyed by the call's
            // continuation state, which names one call of one instance.
            let path = st.states[cont.index()].name.clone();
            let Ok((sub_frame, temps, copy_in, copy_out)) =
                l.call_temps(&sp.params, &frame, &path, stmt.span)
            else {
                l.type_args.pop();
                continue;
            };
            body.extend(copy_in);
            let sub_prefix = format!("{prefix}.{}", sub.name);
            let first = st.states.len();
            let lowered =
                lower_parser_inst(l, &sub, sub_frame, sub_prefix, NextState::State(cont), st);
            l.type_args.pop();
            let Ok(sub_start) = lowered else {
                continue;
            };
            let sub_body: ir::Block = st.states[first..]
                .iter()
                .flat_map(|s| s.body.iter().cloned())
                .collect();
            l.note_aliased(&sp.params, &frame, &temps, (&sub_body, &[]), &path);
            let state = &mut st.states[cur.index()];
            state.body = std::mem::take(&mut body);
            state.transition = ir::Transition::Direct(NextState::State(sub_start));
            body = copy_out;
            cur = cont;
            l.varbit_extract = None;
        } else {
            l.stmt(stmt, &mut body);
        }
    }
    let t = transition(l, s, ids, accept);
    l.scopes.pop();
    let state = &mut st.states[cur.index()];
    state.body = body;
    state.transition = t?;
    Ok(())
}

fn target<'a>(
    l: &mut Lowerer<'a>,
    id: &ast::Ident,
    ids: &HashMap<&str, StateId>,
    accept: NextState,
) -> Res<NextState> {
    match id.name.as_str() {
        "accept" => Ok(accept),
        "reject" => {
            warn_reject(l, id.span);
            Ok(NextState::Reject)
        }
        n => match ids.get(n) {
            Some(s) => Ok(NextState::State(*s)),
            None => {
                let mut d = Diagnostic::error(format!("no state `{n}` in this parser"))
                    .with_primary(id.span, "unknown state");
                let names = ids.keys().copied().chain(["accept", "reject"]);
                if let Some(h) = suggest::did_you_mean(n, names) {
                    d = d.with_help(h);
                } else {
                    d = d.with_help("transition to a state of this parser, `accept` or `reject`");
                }
                Err(l.err(d))
            }
        },
    }
}

/// Warns, once per top-level parser, that an explicit `transition reject` does not drop the
/// packet on Tofino: bf-p4c lowers it as the end of parsing, like `accept` (see
/// `tests/conformance/parser_reject_ingress.stf`), where BMv2 drops the packet.
fn warn_reject(l: &mut Lowerer<'_>, span: Span) {
    if l.reject_warned {
        return;
    }
    l.reject_warned = true;
    let (md, drop) = match l.gress {
        ir::Gress::Ingress => ("ig_intr_md_from_prsr", "ig_dprsr_md.drop_ctl"),
        ir::Gress::Egress => ("eg_intr_md_from_prsr", "eg_dprsr_md.drop_ctl"),
    };
    l.warn(
        Diagnostic::warning("on Tofino, `transition reject` does not drop the packet")
            .with_primary(span, "the parse ends here as on `accept`")
            .with_note(
                "the packet goes on to the control with the headers extracted so far, and \
                 `parser_err` is not set (BMv2 would drop it)",
            )
            .with_help(format!(
                "to drop it, mark it in the parser (e.g. a metadata flag) and set `{drop} = 1` \
                 in the control; parser errors such as a `select` without a match are in \
                 `{md}.parser_err`"
            )),
    );
}

fn transition<'a>(
    l: &mut Lowerer<'a>,
    s: &'a ast::ParserState,
    ids: &HashMap<&str, StateId>,
    accept: NextState,
) -> Res<ir::Transition> {
    let Some(t) = &s.transition else {
        return Ok(ir::Transition::Direct(NextState::Reject));
    };
    match &t.kind {
        TransitionKind::Direct(id) => Ok(ir::Transition::Direct(target(l, id, ids, accept)?)),
        TransitionKind::Select { exprs, cases } => {
            let mut keys = Vec::new();
            let mut tys = Vec::new();
            l.in_select = true;
            for e in exprs {
                let k = l.scalar(e, None);
                let Ok((x, ty)) = k else {
                    l.in_select = false;
                    return Err(super::Reported);
                };
                keys.push(x);
                tys.push(ty);
            }
            l.in_select = false;
            let mut out = Vec::new();
            let mut default: Option<NextState> = None;
            let mut failed = false;
            for c in cases {
                let next = match target(l, &c.next, ids, accept) {
                    Ok(n) => n,
                    Err(_) => {
                        failed = true;
                        continue;
                    }
                };
                if default.is_some() {
                    l.warn(
                        Diagnostic::warning("select case after `default` is never taken")
                            .with_primary(c.span, "unreachable"),
                    );
                    continue;
                }
                let is_default = match &c.keyset.kind {
                    KeysetKind::Default | KeysetKind::DontCare => true,
                    KeysetKind::Tuple(ks) => ks
                        .iter()
                        .all(|k| matches!(k.kind, KeysetKind::Default | KeysetKind::DontCare)),
                    _ => false,
                };
                if is_default {
                    default = Some(next);
                    continue;
                }
                let elems: Vec<&'a ast::Keyset> = match &c.keyset.kind {
                    KeysetKind::Tuple(ks) => ks.iter().collect(),
                    _ => vec![&c.keyset],
                };
                if let ([k], [_, _, ..]) = (&elems[..], &tys[..]) {
                    // A value set of a struct type standing for the whole tuple of keys.
                    match whole_tuple_set(l, k, &tys) {
                        Ok(Some(id)) => {
                            out.push(ir::SelectCase {
                                keyset: vec![KeysetElem::ValueSet(id)],
                                next,
                            });
                            continue;
                        }
                        Ok(None) => {}
                        Err(_) => {
                            failed = true;
                            continue;
                        }
                    }
                }
                if elems.len() != keys.len() {
                    l.err(
                        Diagnostic::error(format!(
                            "keyset has {} element(s), the select has {} key(s)",
                            elems.len(),
                            keys.len()
                        ))
                        .with_primary(c.keyset.span, "wrong arity"),
                    );
                    failed = true;
                    continue;
                }
                let mut keyset = Vec::new();
                for (k, ty) in elems.iter().zip(&tys) {
                    match keyset_elem(l, k, ty) {
                        Ok(e) => keyset.push(e),
                        Err(_) => failed = true,
                    }
                }
                if keyset.len() == keys.len() && !wide_constant_case(l, c, &keyset, &tys) {
                    out.push(ir::SelectCase { keyset, next });
                } else if keyset.len() == keys.len() {
                    failed = true;
                }
            }
            if failed {
                return Err(super::Reported);
            }
            Ok(ir::Transition::Select {
                keys,
                cases: out,
                default: default.unwrap_or(NextState::NoMatch),
            })
        }
    }
}

/// Most bits a constant select case may match: bf-p4c's `Device::maxParserMatchBits()`, 32
/// on Tofino 1 and 2 (`device.h`).
const MAX_PARSER_MATCH_BITS: u32 = 32;

/// Refuses (answering true) a constant case of a select on one key wider than
/// [`MAX_PARSER_MATCH_BITS`], as bf-p4c does (`parde/extract_parser.cpp`,
/// `checkParserMatchBits` on a constant keyset; masks, value sets and tuples of keys are not
/// checked there).
fn wide_constant_case(
    l: &mut Lowerer<'_>,
    c: &ast::SelectCase,
    keyset: &[KeysetElem],
    tys: &[Ty],
) -> bool {
    let ([KeysetElem::Mask { .. }], [ty], KeysetKind::Expr(_)) = (keyset, tys, &c.keyset.kind)
    else {
        return false;
    };
    let w = u32::from(ty.scalar_width().unwrap_or(0));
    if w <= MAX_PARSER_MATCH_BITS {
        return false;
    }
    l.err(
        Diagnostic::error(format!(
            "unsupported {w}-bit select (only {MAX_PARSER_MATCH_BITS}-bit select is supported currently)"
        ))
        .with_primary(c.keyset.span, format!("a {w}-bit constant case"))
        .with_note("bf-p4c refuses a constant case wider than the parser's 32 match bits (Tofino 1 and 2)")
        .with_help("select on at most 32 bits at a time, e.g. in two states"),
    );
    true
}

/// One keyset element against a key of type `ty`.
pub(super) fn keyset_elem<'a>(l: &mut Lowerer<'a>, k: &'a ast::Keyset, ty: &Ty) -> Res<KeysetElem> {
    let w = ty.scalar_width().unwrap_or(1);
    let all = rules::mask(u128::MAX, w);
    match &k.kind {
        KeysetKind::Default | KeysetKind::DontCare => Ok(KeysetElem::Mask { value: 0, mask: 0 }),
        KeysetKind::Expr(e) => {
            if let ExprKind::Name(id) = &e.kind {
                match l.lookup_name(id) {
                    Ok(Resolved::Obj(Binding::ValueSet(vs))) => {
                        return set_for_keys(l, vs, std::slice::from_ref(ty), e.span)
                            .map(|()| KeysetElem::ValueSet(vs));
                    }
                    Ok(Resolved::Obj(_)) => {
                        return Err(l.err(
                            Diagnostic::error(format!("`{}` is not a value", id.name))
                                .with_primary(
                                e.span,
                                "a select case takes a constant, a mask, a range or a value_set",
                            ),
                        ));
                    }
                    _ => {}
                }
            }
            let v = l.const_value(e, ty)?;
            Ok(KeysetElem::Mask {
                value: v,
                mask: all,
            })
        }
        KeysetKind::Mask { value, mask } => {
            let v = l.const_value(value, ty)?;
            let m = l.const_value(mask, ty)?;
            Ok(KeysetElem::Mask {
                value: v & m,
                mask: m,
            })
        }
        KeysetKind::Range { lo, hi } => {
            let a = l.const_value(lo, ty)?;
            let b = l.const_value(hi, ty)?;
            if a > b {
                l.warn(
                    Diagnostic::warning(format!("empty range {a}..{b} never matches"))
                        .with_primary(k.span, "lower bound above upper bound"),
                );
            }
            Ok(KeysetElem::Range { lo: a, hi: b })
        }
        KeysetKind::Tuple(_) => Err(l.err(
            Diagnostic::error("nested keyset tuple").with_primary(k.span, "a tuple inside a tuple"),
        )),
    }
}

/// A lone keyset element naming a value set, for a select of several keys: the set, when its
/// fields pair with the keys.
fn whole_tuple_set<'a>(
    l: &mut Lowerer<'a>,
    k: &'a ast::Keyset,
    tys: &[Ty],
) -> Res<Option<ir::ValueSetId>> {
    let KeysetKind::Expr(e) = &k.kind else {
        return Ok(None);
    };
    let ExprKind::Name(id) = &e.kind else {
        return Ok(None);
    };
    let Ok(Resolved::Obj(Binding::ValueSet(vs))) = l.lookup_name(id) else {
        return Ok(None);
    };
    set_for_keys(l, vs, tys, e.span)?;
    Ok(Some(vs))
}

/// Value set `vs` used for keys of types `tys`: as many fields as keys, each as wide as its key.
fn set_for_keys(l: &mut Lowerer<'_>, vs: ir::ValueSetId, tys: &[Ty], span: Span) -> Res<()> {
    let Some(set) = l.pipe.value_sets.get(vs.index()) else {
        return Err(super::Reported);
    };
    let fields: Vec<u16> = set.fields.iter().map(|(_, w)| *w).collect();
    let keys: Vec<u16> = tys.iter().map(|t| t.scalar_width().unwrap_or(0)).collect();
    if fields == keys {
        return Ok(());
    }
    let show = |ws: &[u16]| {
        ws.iter()
            .map(|w| format!("bit<{w}>"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(l.err(
        Diagnostic::error(format!(
            "value set `{}` holds ({}) but the select's key(s) are ({})",
            set.name,
            show(&fields),
            show(&keys)
        ))
        .with_primary(span, "type mismatch")
        .with_help("declare the value_set with the key's type, or a struct with one field per key"),
    ))
}

impl<'a> Lowerer<'a> {
    /// `value_set<T>(size) name;` in a parser: the set, empty until the control plane fills it.
    pub(super) fn lower_value_set(
        &mut self,
        d: &'a ast::Decl,
        v: &'a ast::ValueSetDecl,
    ) -> Res<ir::ValueSetId> {
        let name = self.qualify(&d.annotations, &v.name.name);
        let size = self.const_int(&v.size)?;
        if !(1..=i128::from(MAX_VALUE_SET_SIZE)).contains(&size) {
            return Err(self.err(
                Diagnostic::error(format!("value set size {size} out of range"))
                    .with_primary(v.size.span, "size")
                    .with_note(format!(
                        "each entry takes one of the parser's {MAX_VALUE_SET_SIZE} TCAM rows; the size is 1 to {MAX_VALUE_SET_SIZE}"
                    )),
            ));
        }
        let ty = self.resolve_type(&v.elem_ty)?;
        let fields = match &ty {
            Ty::Struct(st) | Ty::Header(st) => st
                .fields
                .iter()
                .map(|(n, t)| (n.clone(), t.scalar_width()))
                .collect::<Vec<_>>(),
            t => vec![("f1".to_string(), t.scalar_width())],
        };
        let mut out = Vec::new();
        for (n, w) in fields {
            match w {
                Some(w) if w > 0 => out.push((n, w)),
                _ => {
                    return Err(self.err(
                        Diagnostic::error(format!("value set element type `{ty}` is not bits"))
                            .with_primary(v.elem_ty.span, "element type")
                            .with_help(
                                "use bit<N>, or a struct of bit<N> fields (one per select key)",
                            ),
                    ))
                }
            }
        }
        let id = ir::ValueSetId(self.pipe.value_sets.len() as u32);
        self.pipe.value_sets.push(ir::ValueSet {
            name,
            gress: self.gress,
            size: size as u32,
            fields: out,
        });
        Ok(id)
    }
}

/// Most entries a value set may hold: the rows of a Tofino parser's TCAM.
pub const MAX_VALUE_SET_SIZE: u32 = 256;

//! One control instance applied in several places is one instance: its tables, actions and
//! externs exist once (P4_16 §10.3: an instance is created once, where it is declared; bf-p4c
//! keeps a table applied in mutually exclusive places as one table).
//!
//! The first apply lowers the body, every later apply reuses it, so every apply site names the
//! same `TableId`s. A parameter that every apply binds to the same storage or value aliases it.
//! A directional parameter that the applies bind differently becomes a per-instance temporary
//! (a PHV field or header named `<instance>.<param>`), as p4c's inliner does for a control
//! called more than once: each apply copies its `in`/`inout` argument in (an `out` parameter's
//! headers start invalid), runs the one body over the temporary, and copies `out`/`inout` back.
//! (p4c gives every directional parameter a temporary once the calls differ; pisa only those
//! that differ, so an argument all applies share costs no copies, unless it is written and
//! overlaps a written temporary's argument: then it is a temporary too, so the copies back
//! keep P4's parameter order.) Directionless parameters are
//! compile-time values substituted into the body, so, as in p4c, every apply must pass the
//! same one.
//!
//! Which parameters need temporaries is known only at a later apply, after the first was
//! lowered: the lowering then records them in [`CopiedParams`] and the whole program is
//! lowered again with them known (see `lower_program`).

use std::collections::{BTreeSet, HashMap};
use std::rc::Rc;

use pipeline::ir;

use super::phv::Loc;
use super::stmt::{wide_copy, Dest};
use super::{Binding, BlockInst, Lowerer, Res, V};
use crate::ast::{self, Direction};
use crate::check::env::TypeParams;
use crate::diag::Diagnostic;
use crate::source::Span;

/// A control instance, named the same way in every lowering run of one program.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct InstanceKey {
    pipe: String,
    gress: ir::Gress,
    path: String,
}

/// Per instance, the parameters its applies bind differently (by name).
pub(crate) type Differing = HashMap<InstanceKey, BTreeSet<String>>;

/// The parameters lowered as temporaries: `known` from earlier runs, `found` in this one (the
/// run is then redone).
#[derive(Default)]
pub(crate) struct CopiedParams {
    pub known: Differing,
    pub found: Differing,
}

/// Adds `found` to `known`; true when that added anything.
pub(crate) fn learn(known: &mut Differing, found: Differing) -> bool {
    let mut grew = false;
    for (key, names) in found {
        let set = known.entry(key).or_default();
        for n in names {
            grew |= set.insert(n);
        }
    }
    grew
}

/// The first lowering of a control instance applied from a control body.
struct Applied<'a> {
    /// Held so the pointer identifying the instance stays unique while cached.
    inst: Rc<BlockInst<'a>>,
    path: String,
    gress: ir::Gress,
    /// The parameters as the body saw them: the first apply's arguments, or the temporaries.
    frame: HashMap<String, Binding<'a>>,
    types: TypeParams,
    /// Where it was applied first.
    span: Span,
    body: ir::Block,
    /// The gateway spans the body pushed (replayed so spans stay in pre-order).
    ifs: Vec<Span>,
}

/// The applies of the current pipeline (made anew for each).
#[derive(Default)]
pub(crate) struct AppliedControls<'a> {
    pipe: String,
    applied: Vec<Applied<'a>>,
}

impl AppliedControls<'_> {
    /// No applies yet, in pipeline `pipe`.
    pub fn new(pipe: &str) -> Self {
        AppliedControls {
            pipe: pipe.to_string(),
            applied: Vec::new(),
        }
    }

    fn find(&self, inst: &Rc<BlockInst<'_>>, path: &str, gress: ir::Gress) -> Option<usize> {
        self.applied
            .iter()
            .position(|a| std::ptr::eq(&*a.inst, &**inst) && a.path == path && a.gress == gress)
    }
}

/// True for a parameter bound to a value (not the packet or an extern) with a direction: one
/// that can be a temporary copied in and out.
fn directional(p: &ast::Param, b: &Binding<'_>) -> bool {
    p.direction != Direction::None && matches!(b, Binding::Val(_) | Binding::In(_))
}

/// The parameters of one apply that are temporaries, and the bindings on both sides.
struct Copies<'f, 'a> {
    params: &'a [ast::Param],
    /// This apply's arguments.
    args: &'f HashMap<String, Binding<'a>>,
    /// The parameters as the body sees them.
    body: &'f HashMap<String, Binding<'a>>,
    temps: &'f BTreeSet<String>,
}

impl<'a> Lowerer<'a> {
    /// Lowers one apply of control instance `b` (its instance path `path`), with `frame` the
    /// parameters bound to this apply's arguments; returns the statements the apply runs.
    pub(super) fn apply_instance(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        params: &'a [ast::Param],
        frame: HashMap<String, Binding<'a>>,
        path: String,
        types: &TypeParams,
        span: Span,
    ) -> Res<ir::Block> {
        let key = InstanceKey {
            pipe: self.applied.pipe.clone(),
            gress: self.gress,
            path,
        };
        let temps = self.copied.known.get(&key).cloned().unwrap_or_default();
        let Some(i) = self.applied.find(b, &key.path, self.gress) else {
            return self.first_apply(b, params, frame, key, types.clone(), span, &temps);
        };
        self.same_types_and_fixed_params(b, params, i, &frame, types, span)?;
        let first = &self.applied.applied[i];
        let mut differing: BTreeSet<String> = params
            .iter()
            .filter(|p| !temps.contains(&p.name.name))
            .filter(|p| {
                let (x, y) = (first.frame.get(&p.name.name), frame.get(&p.name.name));
                matches!((x, y), (Some(x), Some(y)) if directional(p, x) && !same_binding(x, y))
            })
            .map(|p| p.name.name.clone())
            .collect();
        differing.extend(overlapping(params, &frame, &temps, &differing));
        let writes = self.writes_of(&self.applied.applied[i].body);
        differing.extend(self.aliased_params(params, &frame, &temps, &writes, &[]));
        if !differing.is_empty() {
            // Lowered again from the start with these parameters as temporaries.
            self.copied.found.entry(key).or_default().extend(differing);
        }
        let (body, ifs, body_frame) = (first.body.clone(), first.ifs.clone(), first.frame.clone());
        let copies = Copies {
            params,
            args: &frame,
            body: &body_frame,
            temps: &temps,
        };
        let mut out = Vec::new();
        self.copy_in(&copies, span, &mut out);
        self.ifs.extend(ifs);
        let mut copy_out = Vec::new();
        self.copy_out(&copies, &mut copy_out);
        let mut body = body;
        self.copy_out_on_exit(&mut body, &copy_out, span)?;
        out.extend(body);
        out.extend(copy_out);
        Ok(out)
    }

    /// The first apply of an instance: lowers its body, the parameters named in `temps`
    /// bound to fresh temporaries.
    #[allow(clippy::too_many_arguments)]
    fn first_apply(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        params: &'a [ast::Param],
        frame: HashMap<String, Binding<'a>>,
        key: InstanceKey,
        types: TypeParams,
        span: Span,
        temps: &BTreeSet<String>,
    ) -> Res<ir::Block> {
        let path = key.path.clone();
        let more = overlapping(params, &frame, temps, &BTreeSet::new());
        if !more.is_empty() {
            self.copied
                .found
                .entry(key.clone())
                .or_default()
                .extend(more);
        }
        let body_frame = self.param_temps(params, &frame, temps, &path, span)?;
        let copies = Copies {
            params,
            args: &frame,
            body: &body_frame,
            temps,
        };
        let mut out = Vec::new();
        self.copy_in(&copies, span, &mut out);
        let ifs0 = self.ifs.len();
        let body = super::control::lower_control_inst(self, b, body_frame.clone(), path.clone())?;
        let aliased = self.aliased_params(params, &frame, temps, &self.writes_of(&body), &[]);
        if !aliased.is_empty() {
            self.copied.found.entry(key).or_default().extend(aliased);
        }
        let ifs = self.ifs.get(ifs0..).unwrap_or_default().to_vec();
        let what = format!("control `{}`", b.name);
        self.warn_out_scalars(&what, params, &frame, &|n| temps.contains(n), &body, span);
        let mut copy_out = Vec::new();
        self.copy_out(&copies, &mut copy_out);
        let mut run = body.clone();
        self.copy_out_on_exit(&mut run, &copy_out, span)?;
        out.extend(run);
        out.extend(copy_out);
        let gress = self.gress;
        self.applied.applied.push(Applied {
            inst: b.clone(),
            path,
            gress,
            frame: body_frame,
            types,
            span,
            body,
            ifs,
        });
        Ok(out)
    }

    /// For a call of an action or a sub-parser (control instances go through
    /// [`Self::apply_instance`]): the parameters as the body sees them, those
    /// [`super::aliasing`] found for call `path` bound to temporaries (named after `path`),
    /// with their names and the statements copying in (before the body; they also make the
    /// `out` headers invalid) and out (after it).
    #[allow(clippy::type_complexity)]
    pub(in crate::lower) fn call_temps(
        &mut self,
        params: &'a [ast::Param],
        args: &HashMap<String, Binding<'a>>,
        path: &str,
        span: Span,
    ) -> Res<(
        HashMap<String, Binding<'a>>,
        BTreeSet<String>,
        ir::Block,
        ir::Block,
    )> {
        let temps = self
            .copied
            .known
            .get(&self.copy_key(path))
            .cloned()
            .unwrap_or_default();
        let body = self.param_temps(params, args, &temps, path, span)?;
        let copies = Copies {
            params,
            args,
            body: &body,
            temps: &temps,
        };
        let (mut copy_in, mut copy_out) = (Vec::new(), Vec::new());
        self.copy_in(&copies, span, &mut copy_in);
        self.copy_out(&copies, &mut copy_out);
        Ok((body, temps, copy_in, copy_out))
    }

    /// Records the parameters of call `path` that `body`'s writes show need temporaries
    /// (the program is then lowered again).
    pub(in crate::lower) fn note_aliased(
        &mut self,
        params: &[ast::Param],
        args: &HashMap<String, Binding<'a>>,
        temps: &BTreeSet<String>,
        (body, outer): (&[ir::Stmt], &[Rc<Loc>]),
        path: &str,
    ) {
        let found = self.aliased_params(params, args, temps, &self.writes_of(body), outer);
        if !found.is_empty() {
            let key = self.copy_key(path);
            self.copied.found.entry(key).or_default().extend(found);
        }
    }

    fn copy_key(&self, path: &str) -> InstanceKey {
        InstanceKey {
            pipe: self.applied.pipe.clone(),
            gress: self.gress,
            path: path.to_string(),
        }
    }

    /// The parameters as the body sees them: the ones named in `temps` bound to fresh
    /// temporaries, the others to this apply's arguments.
    fn param_temps(
        &mut self,
        params: &'a [ast::Param],
        frame: &HashMap<String, Binding<'a>>,
        temps: &BTreeSet<String>,
        path: &str,
        span: Span,
    ) -> Res<HashMap<String, Binding<'a>>> {
        let mut body = frame.clone();
        for p in params {
            let name = &p.name.name;
            if !temps.contains(name) || !frame.get(name).is_some_and(|a| directional(p, a)) {
                continue;
            }
            let ty = self.resolve_type(&p.ty)?;
            let loc = self.alloc(&format!("{path}.{name}"), &ty, span)?;
            let b = if p.direction == Direction::In {
                Binding::In(V::Loc(loc))
            } else {
                Binding::Val(V::Loc(loc))
            };
            body.insert(name.clone(), b);
        }
        Ok(body)
    }

    /// Refuses an apply with arguments of other types than the first apply's (one table
    /// layout), or whose directionless arguments differ from its: they are substituted into
    /// the one body (p4c refuses this too).
    fn same_types_and_fixed_params(
        &mut self,
        b: &BlockInst<'a>,
        params: &'a [ast::Param],
        i: usize,
        frame: &HashMap<String, Binding<'a>>,
        types: &TypeParams,
        span: Span,
    ) -> Res<()> {
        let first = &self.applied.applied[i];
        if first.types != *types {
            let first_span = first.span;
            return Err(self.err(
                Diagnostic::error(format!(
                    "control instance `{}` is applied with arguments of other types than before",
                    b.name
                ))
                .with_primary(span, "applied here")
                .with_secondary(first_span, "first applied here")
                .with_note("one instance has one set of tables, laid out for one type")
                .with_help("declare a second instance for the other types"),
            ));
        }
        let differs = params.iter().find(|p| {
            let (x, y) = (first.frame.get(&p.name.name), frame.get(&p.name.name));
            let fixed = x.is_some_and(|x| !directional(p, x));
            fixed && !matches!((x, y), (Some(x), Some(y)) if same_binding(x, y))
        });
        let Some(p) = differs else { return Ok(()) };
        let first_span = first.span;
        Err(self.err(
            Diagnostic::error(format!(
                "control instance `{}` is applied with another value for its directionless \
                 parameter `{}`",
                b.name, p.name.name
            ))
            .with_primary(span, "applied here")
            .with_secondary(first_span, "first applied here")
            .with_secondary(p.span, "parameter declared here")
            .with_note(
                "a directionless parameter is a compile-time value of the one instance: every \
                 apply must pass the same one (p4c refuses this too)",
            )
            .with_help("give the parameter a direction, or declare a second instance"),
        ))
    }

    /// The temporaries of `c` with this apply's argument and the body's storage for each.
    fn temp_pairs<'f>(c: &Copies<'f, 'a>) -> Vec<(&'a ast::Param, &'f V, &'f Rc<Loc>)> {
        c.params
            .iter()
            .filter(|p| c.temps.contains(&p.name.name))
            .filter_map(
                |p| match (c.args.get(&p.name.name), c.body.get(&p.name.name)) {
                    (
                        Some(Binding::Val(a) | Binding::In(a)),
                        Some(Binding::Val(V::Loc(t)) | Binding::In(V::Loc(t))),
                    ) if p.direction != Direction::None => Some((p, a, t)),
                    _ => None,
                },
            )
            .collect()
    }

    /// Before the body: `in`/`inout` arguments into their temporaries; an `out` temporary's
    /// headers start invalid, and so do those of an `out` argument used in place.
    fn copy_in(&mut self, c: &Copies<'_, 'a>, span: Span, out: &mut ir::Block) {
        for (p, arg, t) in Self::temp_pairs(c) {
            if p.direction == Direction::Out {
                let mut headers = Vec::new();
                t.headers(&mut headers);
                out.extend(headers.into_iter().map(|header| ir::Stmt::SetValid {
                    header,
                    valid: false,
                }));
            } else {
                self.copy_value(t, arg, out);
            }
        }
        let copied = |n: &str| c.temps.contains(n);
        self.invalidate_out_headers(c.params, c.args, &copied, span, out);
    }

    /// After the body: `out`/`inout` temporaries back into the arguments.
    fn copy_out(&mut self, c: &Copies<'_, 'a>, out: &mut ir::Block) {
        for (p, arg, t) in Self::temp_pairs(c) {
            if let (Direction::Out | Direction::InOut, V::Loc(a)) = (p.direction, arg) {
                self.copy_loc(a, t, out);
            }
        }
    }

    /// `dst = v` for a bound argument (storage, or a scalar computed from the arguments).
    fn copy_value(&mut self, dst: &Rc<Loc>, v: &V, out: &mut ir::Block) {
        match (v, Dest::from_loc(dst)) {
            (V::Loc(src), _) => self.copy_loc(dst, src, out),
            (V::Scalar(ir::Expr::Field(s), _), Dest::Scalar(ir::Place::Field(d), _))
                if d.width > ir::MAX_VALUE_WIDTH =>
            {
                wide_copy(d, *s, out)
            }
            (V::Scalar(e, _), Dest::Scalar(place, _)) => out.push(ir::Stmt::Assign {
                dst: place,
                value: e.clone(),
            }),
            // `bind_args` makes every `in` argument storage or a scalar.
            _ => {}
        }
    }
}

/// The `out`/`inout` parameters used in place whose argument overlaps the argument of an
/// `out`/`inout` parameter that is (`temps`) or becomes (`more`) a temporary: that one's copy
/// back after the body would land out of parameter order, so they are made temporaries too.
fn overlapping(
    params: &[ast::Param],
    args: &HashMap<String, Binding<'_>>,
    temps: &BTreeSet<String>,
    more: &BTreeSet<String>,
) -> BTreeSet<String> {
    let written = |p: &&ast::Param| matches!(p.direction, Direction::Out | Direction::InOut);
    let copied = |p: &ast::Param| temps.contains(&p.name.name) || more.contains(&p.name.name);
    let storage = |p: &ast::Param| match args.get(&p.name.name) {
        Some(Binding::Val(V::Loc(l))) => Some(l),
        _ => None,
    };
    params
        .iter()
        .filter(written)
        .filter(|q| !copied(q))
        .filter(|q| {
            params.iter().filter(written).any(|p| {
                copied(p) && matches!((storage(p), storage(q)), (Some(a), Some(b)) if overlap(a, b))
            })
        })
        .map(|q| q.name.name.clone())
        .collect()
}

/// True when two storages share a PHV bit or a header (its validity).
pub(in crate::lower) fn overlap(a: &Loc, b: &Loc) -> bool {
    let (mut fa, mut fb, mut ha, mut hb) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    a.field_refs(&mut fa);
    b.field_refs(&mut fb);
    a.headers(&mut ha);
    b.headers(&mut hb);
    let bits = |f: &ir::FieldRef| f.offset..f.offset + u32::from(f.width);
    ha.iter().any(|h| hb.contains(h))
        || fa.iter().any(|x| {
            let x = bits(x);
            fb.iter().any(|y| {
                let y = bits(y);
                x.start < y.end && y.start < x.end
            })
        })
}

/// True when two bindings are the same storage, value or object.
fn same_binding(a: &Binding<'_>, b: &Binding<'_>) -> bool {
    match (a, b) {
        (Binding::Val(x), Binding::Val(y)) | (Binding::In(x), Binding::In(y)) => same_value(x, y),
        (Binding::Packet { out: x }, Binding::Packet { out: y }) => x == y,
        (Binding::Extern(x), Binding::Extern(y)) => Rc::ptr_eq(x, y),
        (Binding::Action(x), Binding::Action(y)) => Rc::ptr_eq(x, y),
        (Binding::Table(x), Binding::Table(y)) => Rc::ptr_eq(x, y),
        (Binding::ValueSet(x), Binding::ValueSet(y)) => x == y,
        (Binding::Block(x), Binding::Block(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// Values compare by what they lower to: storage by its fields and headers, scalars by
/// their IR expression and type.
fn same_value(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Loc(x), V::Loc(y)) => Rc::ptr_eq(x, y) || x == y,
        (V::Scalar(e, t), V::Scalar(f, u)) => e == f && t == u,
        (V::Int(x), V::Int(y)) => x == y,
        _ => false,
    }
}

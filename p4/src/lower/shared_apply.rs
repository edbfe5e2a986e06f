//! One control instance applied in several places is one instance: its tables, actions and
//! externs exist once (P4_16 §10.3: an instance is created once, where it is declared; bf-p4c
//! keeps a table applied in mutually exclusive places as one table).
//!
//! The first apply lowers the body. When every apply binds the parameters to the same storage
//! and values, the parameters alias the arguments and later applies reuse that body, so every
//! apply site names the same `TableId`s. When the applies pass different arguments, the
//! instance's directional parameters become per-instance temporaries (PHV fields named
//! `<instance>.<param>`), as p4c's inliner does: each apply copies its `in`/`inout` arguments
//! in (an `out` parameter's headers start invalid), runs the one body over the temporaries,
//! and copies `out`/`inout` back. Directionless parameters are compile-time values
//! substituted into the body, so, as in p4c, every apply must pass the same one.
//!
//! Whether an instance needs temporaries is known only at its second apply, after the first
//! was lowered: the lowering then records the instance in [`CopiedInstances`] and the whole
//! program is lowered again with it known (see `lower_program`).

use std::collections::{HashMap, HashSet};
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

/// The instances whose applies pass different arguments: `known` from earlier runs (lowered
/// with temporaries), `found` in this one (the run is redone).
#[derive(Default)]
pub(crate) struct CopiedInstances {
    pub known: HashSet<InstanceKey>,
    pub found: HashSet<InstanceKey>,
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

/// What a parameter becomes when the instance is lowered with temporaries.
fn copied(p: &ast::Param, b: &Binding<'_>) -> bool {
    p.direction != Direction::None && matches!(b, Binding::Val(_) | Binding::In(_))
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
            path: path.clone(),
        };
        let with_temps = self.copied.known.contains(&key);
        let Some(i) = self.applied.find(b, &path, self.gress) else {
            return self.first_apply(b, params, frame, path, types.clone(), span, with_temps);
        };
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
        self.same_fixed_params(b, params, i, &frame, span)?;
        let first = &self.applied.applied[i];
        let (body, ifs) = (first.body.clone(), first.ifs.clone());
        if !with_temps {
            if !same_frame(&first.frame, &frame) {
                // Lowered again from the start with temporaries for this instance.
                self.copied.found.insert(key);
            }
            self.ifs.extend(ifs);
            return Ok(body);
        }
        let temps = first.frame.clone();
        let mut out = Vec::new();
        self.copy_in(params, &frame, &temps, &mut out);
        self.ifs.extend(ifs);
        out.extend(body);
        self.copy_out(params, &frame, &temps, &mut out);
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn first_apply(
        &mut self,
        b: &Rc<BlockInst<'a>>,
        params: &'a [ast::Param],
        frame: HashMap<String, Binding<'a>>,
        path: String,
        types: TypeParams,
        span: Span,
        with_temps: bool,
    ) -> Res<ir::Block> {
        let mut out = Vec::new();
        let body_frame = if with_temps {
            let temps = self.param_temps(params, &frame, &path, span)?;
            self.copy_in(params, &frame, &temps, &mut out);
            temps
        } else {
            frame.clone()
        };
        let ifs0 = self.ifs.len();
        let body = super::control::lower_control_inst(self, b, body_frame.clone(), path.clone())?;
        let ifs = self.ifs.get(ifs0..).unwrap_or_default().to_vec();
        out.extend(body.iter().cloned());
        if with_temps {
            self.copy_out(params, &frame, &body_frame, &mut out);
        }
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

    /// The parameters bound to fresh temporaries (directional ones) or to this apply's
    /// arguments (directionless ones, the packet).
    fn param_temps(
        &mut self,
        params: &'a [ast::Param],
        frame: &HashMap<String, Binding<'a>>,
        path: &str,
        span: Span,
    ) -> Res<HashMap<String, Binding<'a>>> {
        let mut temps = HashMap::new();
        for p in params {
            let name = &p.name.name;
            let Some(arg) = frame.get(name) else { continue };
            if !copied(p, arg) {
                temps.insert(name.clone(), arg.clone());
                continue;
            }
            let ty = self.resolve_type(&p.ty)?;
            let loc = self.alloc(&format!("{path}.{name}"), &ty, span)?;
            let b = if p.direction == Direction::In {
                Binding::In(V::Loc(loc))
            } else {
                Binding::Val(V::Loc(loc))
            };
            temps.insert(name.clone(), b);
        }
        Ok(temps)
    }

    /// Refuses an apply whose directionless arguments differ from the first apply's: they are
    /// substituted into the one body (p4c refuses this too).
    fn same_fixed_params(
        &mut self,
        b: &BlockInst<'a>,
        params: &'a [ast::Param],
        i: usize,
        frame: &HashMap<String, Binding<'a>>,
        span: Span,
    ) -> Res<()> {
        let first = &self.applied.applied[i];
        let differs = params.iter().find(|p| {
            let (x, y) = (first.frame.get(&p.name.name), frame.get(&p.name.name));
            let fixed = x.is_some_and(|x| !copied(p, x));
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

    /// Before the body: `in`/`inout` arguments into the temporaries; an `out` parameter's
    /// headers start invalid.
    fn copy_in(
        &mut self,
        params: &[ast::Param],
        args: &HashMap<String, Binding<'a>>,
        temps: &HashMap<String, Binding<'a>>,
        out: &mut ir::Block,
    ) {
        for p in params {
            let (Some(arg), Some(Binding::Val(V::Loc(t)) | Binding::In(V::Loc(t)))) =
                (args.get(&p.name.name), temps.get(&p.name.name))
            else {
                continue;
            };
            if !copied(p, arg) {
                continue;
            }
            match (p.direction, arg) {
                (Direction::Out, _) => {
                    let mut headers = Vec::new();
                    t.headers(&mut headers);
                    out.extend(headers.into_iter().map(|header| ir::Stmt::SetValid {
                        header,
                        valid: false,
                    }));
                }
                (_, Binding::Val(v) | Binding::In(v)) => self.copy_value(t, v, out),
                _ => {}
            }
        }
    }

    /// After the body: the temporaries of `out`/`inout` parameters back into the arguments.
    fn copy_out(
        &mut self,
        params: &[ast::Param],
        args: &HashMap<String, Binding<'a>>,
        temps: &HashMap<String, Binding<'a>>,
        out: &mut ir::Block,
    ) {
        for p in params {
            if !matches!(p.direction, Direction::Out | Direction::InOut) {
                continue;
            }
            if let (Some(Binding::Val(V::Loc(a))), Some(Binding::Val(V::Loc(t)))) =
                (args.get(&p.name.name), temps.get(&p.name.name))
            {
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

/// True when two argument frames bind every parameter to the same thing.
fn same_frame<'a>(a: &HashMap<String, Binding<'a>>, b: &HashMap<String, Binding<'a>>) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, x)| b.get(k).is_some_and(|y| same_binding(x, y)))
}

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

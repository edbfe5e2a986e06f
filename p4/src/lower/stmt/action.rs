//! Actions: lowering a table's action (with bound directional parameters) and direct calls.

use std::collections::HashMap;
use std::rc::Rc;

use pipeline::ir::{self, ActionId};

use crate::ast::{self, Direction, StmtKind};
use crate::diag::Diagnostic;
use crate::lower::{ActionSlot, Binding, Ctx, Lowerer, Res, V};
use crate::source::Span;

pub(super) fn contains_return(stmts: &[ast::Stmt]) -> bool {
    stmts.iter().any(|s| match &s.kind {
        StmtKind::Return(_) => true,
        StmtKind::Block(b) => contains_return(&b.stmts),
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            contains_return(std::slice::from_ref(then_branch))
                || else_branch
                    .as_deref()
                    .is_some_and(|e| contains_return(std::slice::from_ref(e)))
        }
        _ => false,
    })
}

/// True when a body, or an action it calls, uses a direct counter or meter (which need a
/// matched table entry). P4 forbids recursive action calls, so the walk ends.
/// Action bodies one inside another that the model runs (a table's action and the actions it
/// calls, nested): `resources::effects`'s `MAX_CALL_DEPTH`.
const MAX_ACTION_BODIES: u32 = 32;

/// How many action bodies nest below `b` through its calls (0: it calls none). Each action's
/// depth is worked out once (`memo`), so a wide call tree costs little; a callee lowered
/// before has passed this check, so the walk is at most [`MAX_ACTION_BODIES`] deep.
fn call_depth(b: &[ir::Stmt], actions: &[ir::Action], memo: &mut HashMap<usize, u32>) -> u32 {
    b.iter()
        .map(|s| match s {
            ir::Stmt::If { then, els, .. } => {
                call_depth(then, actions, memo).max(call_depth(els, actions, memo))
            }
            ir::Stmt::CallAction { action, .. } => {
                if let Some(d) = memo.get(&action.index()) {
                    return *d;
                }
                let d = actions
                    .get(action.index())
                    .map_or(1, |a| 1 + call_depth(&a.body, actions, memo));
                memo.insert(action.index(), d);
                d
            }
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

pub(super) fn uses_direct(b: &[ir::Stmt], actions: &[ir::Action]) -> bool {
    pub(super) fn expr(e: &ir::Expr) -> bool {
        match e {
            ir::Expr::MeterExecute { index: None, .. }
            | ir::Expr::FilterExecute { index: None, .. } => true,
            ir::Expr::Unary { arg, .. }
            | ir::Expr::Slice { arg, .. }
            | ir::Expr::Cast { arg, .. } => expr(arg),
            ir::Expr::Binary { a, b, .. } => expr(a) || expr(b),
            ir::Expr::Concat { hi, lo, .. } => expr(hi) || expr(lo),
            ir::Expr::Ternary {
                cond, then, els, ..
            } => expr(cond) || expr(then) || expr(els),
            _ => false,
        }
    }
    b.iter().any(|s| match s {
        ir::Stmt::CountDirect { .. } => true,
        ir::Stmt::Assign { value, .. } => expr(value),
        ir::Stmt::If {
            cond, then, els, ..
        } => expr(cond) || uses_direct(then, actions) || uses_direct(els, actions),
        ir::Stmt::CallAction { action, .. } => actions
            .get(action.index())
            .is_some_and(|a| uses_direct(&a.body, actions)),
        _ => false,
    })
}

impl<'a> Lowerer<'a> {
    /// Lowers an action used by a table or called directly (once per control instance).
    pub fn lower_action(&mut self, slot: &Rc<ActionSlot<'a>>) -> Res<ActionId> {
        if let Some(id) = slot.id.get() {
            return Ok(id);
        }
        if slot.failed.get() {
            return Err(crate::lower::Reported);
        }
        let r = self.lower_action_body(slot);
        if r.is_err() {
            slot.failed.set(true);
        }
        r
    }

    pub(super) fn lower_action_body(&mut self, slot: &Rc<ActionSlot<'a>>) -> Res<ActionId> {
        self.lower_action_with(slot, &[], slot.decl.name.span)
    }

    /// Lowers an action listed by a table with its leading directional parameters bound to
    /// `bound` (P4_16 §14.2.1.2: `actions = { fib_hit(local_md); }`; the directionless ones
    /// stay action data). One action per instance, action and binding text.
    pub fn lower_bound_action(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        bound: &'a [ast::Argument],
        span: Span,
    ) -> Res<ActionId> {
        if bound.is_empty() {
            return self.lower_action(slot);
        }
        let text: Vec<String> = bound.iter().map(|a| self.env.text_of(a.span)).collect();
        let key = (
            self.prefix.clone(),
            Rc::as_ptr(slot) as usize,
            text.join(","),
        );
        if let Some(&id) = self.bound_actions.get(&key) {
            return Ok(id);
        }
        let id = self.lower_action_with(slot, bound, span)?;
        self.bound_actions.insert(key, id);
        Ok(id)
    }

    /// The number of leading directional parameters of `decl` (those a table's action list
    /// binds); the rest are action data.
    pub fn directional_prefix(decl: &ast::ActionDecl) -> usize {
        decl.params
            .iter()
            .take_while(|p| p.direction != Direction::None)
            .count()
    }

    pub(super) fn lower_action_with(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        bound: &'a [ast::Argument],
        span: Span,
    ) -> Res<ActionId> {
        let decl = slot.decl;
        let n_bound = bound.len();
        if n_bound > 0 && n_bound != Self::directional_prefix(decl) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` is listed with {} argument(s); its directional parameters are {}",
                    decl.name.name,
                    n_bound,
                    Self::directional_prefix(decl)
                ))
                .with_primary(span, "bind exactly the directional parameters")
                .with_secondary(decl.name.span, "action declared here")
                .with_help("the control plane supplies the directionless parameters"),
            ));
        }
        let mark = self.slice_args.len();
        let frame = if n_bound > 0 {
            self.bind_args(&decl.params[..n_bound], bound, span)
        } else {
            Ok(HashMap::new())
        };
        let slices = self.take_slice_args(mark);
        let frame = frame?;
        let text: Vec<String> = bound.iter().map(|a| self.env.text_of(a.span)).collect();
        let path = format!("{}.{}({})", self.prefix, decl.name.name, text.join(","));
        let bound_params = &decl.params[..n_bound];
        let (mut body_frame, temps, copy_in, mut copy_out) =
            self.call_temps(bound_params, &frame, &path, span)?;
        let params = self.action_data_params(decl, n_bound, &mut body_frame)?;
        let saved_ctx = std::mem::replace(&mut self.ctx, crate::lower::Ctx::Action);
        let saved_ifs = std::mem::take(&mut self.ifs);
        let saved_inline = std::mem::replace(&mut self.inline_action, 0);
        let keep = slot.scope_depth.min(self.scopes.len());
        let call_site_frames = self.scopes.split_off(keep);
        let outer = self.outer_storage(decl);
        let mut body = Vec::new();
        Self::slice_copy_in(&slices, &mut body);
        body.extend(copy_in);
        self.scopes.push(body_frame);
        let errs = self.diags.error_count();
        self.block_stmts(&decl.body.stmts, &mut body);
        let what = format!("action `{}`", decl.name.name);
        let copied = |n: &str| temps.contains(n);
        self.warn_out_scalars(&what, bound_params, &frame, &copied, &body, span);
        self.note_aliased(bound_params, &frame, &temps, (&body, &outer), &path);
        Self::slice_copy_out(&slices, &mut copy_out);
        let done = self.copy_out_on_exit(&mut body, &copy_out, span);
        body.extend(copy_out);
        self.scopes.pop();
        self.scopes.extend(call_site_frames);
        self.ctx = saved_ctx;
        self.ifs = saved_ifs;
        self.inline_action = saved_inline;
        if self.diags.error_count() > errs {
            return Err(crate::lower::Reported);
        }
        done?;
        let id = ActionId(self.pipe.actions.len() as u32);
        self.pipe.actions.push(ir::Action {
            name: slot.name.clone(),
            params,
            body,
        });
        self.spans.actions.push(decl.name.span);
        if n_bound == 0 {
            slot.id.set(Some(id));
        }
        Ok(id)
    }

    /// A direct action call: `CallAction` with the data arguments, or, when the action has
    /// directional parameters, its body inlined with those bound to the arguments.
    pub(super) fn call_action(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        let decl = slot.decl;
        if args.len() != decl.params.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` takes {} argument(s), {} given",
                    decl.name.name,
                    decl.params.len(),
                    args.len()
                ))
                .with_primary(span, "wrong number of arguments")
                .with_secondary(decl.name.span, "action declared here"),
            ));
        }
        let directional = decl.params.iter().any(|p| p.direction != Direction::None);
        if !directional {
            return self.call_data_action(slot, args, span, out);
        }
        if contains_return(&decl.body.stmts) {
            return Err(self.err(crate::check::unsupported(
                span,
                "`return` in an action with directional parameters",
                "early return from an inlined action",
            )));
        }
        self.check_depth(span)?;
        let mark = self.slice_args.len();
        let frame = self.bind_args(&decl.params, args, span);
        let slices = self.take_slice_args(mark);
        let frame = frame?;
        let path = format!("{}.{}@{}", self.prefix, decl.name.name, span.lo);
        let (body_frame, temps, copy_in, mut copy_out) =
            self.call_temps(&decl.params, &frame, &path, span)?;
        Self::slice_copy_in(&slices, out);
        out.extend(copy_in);
        let saved_ctx = self.ctx;
        let inlined_into_control = self.ctx == Ctx::Control || self.inline_action > 0;
        if self.ctx == Ctx::Control {
            self.ctx = Ctx::Action;
        }
        if inlined_into_control {
            self.inline_action += 1;
        }
        // The body sees the frames of its declaration, not the call site's block locals.
        let keep = slot.scope_depth.min(self.scopes.len());
        let call_site_frames = self.scopes.split_off(keep);
        let outer = self.outer_storage(decl);
        let start = out.len();
        self.scopes.push(body_frame);
        self.depth += 1;
        self.block_stmts(&decl.body.stmts, out);
        self.depth -= 1;
        let what = format!("action `{}`", decl.name.name);
        let copied = |n: &str| temps.contains(n);
        self.warn_out_scalars(&what, &decl.params, &frame, &copied, &out[start..], span);
        self.note_aliased(&decl.params, &frame, &temps, (&out[start..], &outer), &path);
        let mut body = out.split_off(start);
        Self::slice_copy_out(&slices, &mut copy_out);
        let done = self.copy_out_on_exit(&mut body, &copy_out, span);
        out.extend(body);
        out.extend(copy_out);
        if inlined_into_control {
            self.inline_action -= 1;
        }
        self.scopes.pop();
        self.scopes.extend(call_site_frames);
        self.ctx = saved_ctx;
        done
    }

    /// The action-data parameters after the `n_bound` bound ones, bound in `frame` to the
    /// entry's data.
    fn action_data_params(
        &mut self,
        decl: &'a ast::ActionDecl,
        n_bound: usize,
        frame: &mut HashMap<String, Binding<'a>>,
    ) -> Res<Vec<ir::ActionParam>> {
        let mut params = Vec::new();
        for (i, p) in decl.params.iter().enumerate().skip(n_bound) {
            let i = i - n_bound;
            if p.direction != Direction::None {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "action `{}` has directional parameter `{}` and cannot be run by a table",
                        decl.name.name, p.name.name
                    ))
                    .with_primary(p.span, "directional parameter")
                    .with_help(
                        "table actions take action data only (parameters without `in`/`out`); \
                         bind the directional ones in the table's action list: `actions = { a(arg); }`",
                    ),
                ));
            }
            let ty = self.resolve_type(&p.ty)?;
            let Some(width) = ty.scalar_width() else {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "action parameter `{}` has type `{ty}`",
                        p.name.name
                    ))
                    .with_primary(p.ty.span, "not a scalar")
                    .with_help(
                        "action data must be `bit<W>`, `int<W>`, `bool` or a serializable enum",
                    ),
                ));
            };
            frame.insert(
                p.name.name.clone(),
                Binding::Val(V::Scalar(
                    ir::Expr::Param {
                        index: i as u16,
                        width,
                    },
                    ty,
                )),
            );
            params.push(ir::ActionParam {
                name: p.name.name.clone(),
                width,
            });
        }
        Ok(params)
    }

    /// A direct call of an action without directional parameters: `CallAction`.
    fn call_data_action(
        &mut self,
        slot: &Rc<ActionSlot<'a>>,
        args: &'a [ast::Argument],
        span: Span,
        out: &mut ir::Block,
    ) -> Res<()> {
        let decl = slot.decl;
        let id = self.lower_action(slot)?;
        // Called from a table's action (P4_16 §14.1: the call is inlined into it), a
        // direct counter or meter counts that table's matched entry, as bf-p4c does.
        let from_table_action = self.ctx == Ctx::Action && self.inline_action == 0;
        let direct = !from_table_action
            && self
                .pipe
                .actions
                .get(id.index())
                .is_some_and(|a| uses_direct(&a.body, &self.pipe.actions));
        if direct {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` uses a direct counter or meter and cannot be called directly",
                    decl.name.name
                ))
                .with_primary(span, "called here")
                .with_help("direct externs count the matched entry: run the action from the table that owns them"),
            ));
        }
        // The caller's body and the callee's chain of bodies: the model runs at most
        // `MAX_ACTION_BODIES` nested (the resource check would call the IR malformed).
        let callee = self.pipe.actions.get(id.index()).map(|a| a.body.as_slice());
        let below = callee.map_or(0, |b| {
            call_depth(b, &self.pipe.actions, &mut HashMap::new())
        });
        let bodies = 2 + below;
        if bodies > MAX_ACTION_BODIES {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action calls nest deeper than {MAX_ACTION_BODIES} levels: calling `{}` here \
                     runs {bodies} action bodies one inside another (pisa runs at most \
                     {MAX_ACTION_BODIES})",
                    decl.name.name
                ))
                .with_primary(span, "this call"),
            ));
        }
        let mut vals = Vec::new();
        for (p, a) in decl.params.iter().zip(args) {
            let ty = self.resolve_type(&p.ty)?;
            vals.push(self.scalar(&a.value, Some(&ty))?.0);
        }
        out.push(ir::Stmt::CallAction {
            action: id,
            args: vals,
        });
        Ok(())
    }
}

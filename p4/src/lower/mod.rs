//! The P4 frontend's semantic half, second part: elaborating the program from `main` and
//! lowering it to [`pipeline::ir`].
//!
//! The lowering walks the `Switch` / `Pipeline` package instances, binds each block's parameters
//! to PHV storage by type and position as TNA does, inlines sub-parsers and nested controls, and
//! type-checks every expression and statement on the way with the rules of [`crate::check`].
//! Errors are collected (one bad statement does not stop the rest from being checked); the
//! program is only returned when there were none.

mod action_alu;
mod agg_eq;
mod alias;
mod aliasing;
mod block;
mod checksum_dest;
mod control;
mod copy_prop;
mod ctor;
mod deparser_order;
pub(crate) mod dprsr_select;
mod entry_priority;
mod exit_copyout;
mod expr;
mod externs;
mod generics;
mod ghost;
pub mod intrinsics;
mod lookahead;
mod multi_parser;
mod out_scalars;
mod parse_paths;
mod parser;
pub mod phv;
mod placement_annos;
mod profiles;
mod shared_apply;
pub mod spans;
pub(crate) mod stmt;
pub mod summary;
mod table;
mod tuples;
mod unions;
mod varbit;

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use pipeline::ir::{self, ActionId, Gress, Target};

use crate::ast;
use crate::check::types::Ty;
use crate::check::{suggest, Env};
use crate::diag::{Diagnostic, Diagnostics};
use crate::source::Span;

pub use spans::{GressSpans, PipelineSpans, SourceSpans};
pub use summary::summary;

use phv::{Loc, PhvAlloc};

/// A diagnostic has been pushed; the caller gives up on the current construct.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reported;

pub(crate) type Res<T> = Result<T, Reported>;

/// A value during lowering.
#[derive(Clone, Debug)]
pub(crate) enum V {
    /// A scalar computed at run time (or a typed constant: `Expr::Const`).
    Scalar(ir::Expr, Ty),
    /// An `int` constant that has not adopted a width yet.
    Int(i128),
    /// Storage (scalar or aggregate).
    Loc(Rc<Loc>),
    /// `{a, b, c}`, with each element's span.
    List(Vec<(V, Span)>),
    /// A string literal (only meaningful as an annotation or extern argument).
    Str,
}

/// What a name in scope stands for.
#[derive(Clone)]
pub(crate) enum Binding<'a> {
    Val(V),
    /// A value bound to an `in` parameter: readable, not writable.
    In(V),
    /// `packet_in` (false) or `packet_out` (true).
    Packet {
        out: bool,
    },
    Extern(Rc<externs::ExternInst>),
    Action(Rc<ActionSlot<'a>>),
    Table(Rc<TableSlot>),
    /// A parser value set.
    ValueSet(ir::ValueSetId),
    /// A parser or control instance (inlined where it is applied).
    Block(Rc<BlockInst<'a>>),
    /// A declaration that failed (already reported): uses are silently refused, so one error
    /// does not cascade into "cannot find" errors.
    Poison,
}

/// An action declared in a control (or at top level), lowered on first use.
pub(crate) struct ActionSlot<'a> {
    pub decl: &'a ast::ActionDecl,
    /// Runtime name (control-qualified, `@name` honoured).
    pub name: String,
    pub id: Cell<Option<ActionId>>,
    /// Lowering failed once (reported); later uses stay silent.
    pub failed: Cell<bool>,
    /// How many scope frames were visible where the action was declared: its body is lowered
    /// with only those (lexical scoping), whatever the call site's block locals.
    pub scope_depth: usize,
}

/// A lowered table and the actions it lists (for `switch` labels).
pub(crate) struct TableSlot {
    pub id: ir::TableId,
    pub name: String,
    pub actions: Vec<(String, ActionId)>,
}

/// A parser or control instance.
pub(crate) struct BlockInst<'a> {
    pub decl: &'a ast::Decl,
    /// Instance name used in qualified runtime names.
    pub name: String,
    pub span: Span,
    /// Constructor parameters and their values at this instantiation.
    pub ctor: Vec<(String, V)>,
    /// Type arguments given where it was instantiated (`P<headers_t, meta_t>()`), by the
    /// declaration's type parameter names; the rest are inferred from its arguments.
    pub types: crate::check::env::TypeParams,
}

/// What kind of body is being lowered (decides which statements are allowed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ctx {
    Parser,
    Control,
    Action,
    Deparser,
    RegAction,
}

impl Ctx {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Ctx::Parser => "a parser",
            Ctx::Control => "a control",
            Ctx::Action => "an action",
            Ctx::Deparser => "a deparser",
            Ctx::RegAction => "a RegisterAction body",
        }
    }
}

/// The objects of one pipeline being built.
#[derive(Default)]
pub(crate) struct PipeObjs {
    pub tables: Vec<ir::Table>,
    pub actions: Vec<ir::Action>,
    pub registers: Vec<ir::Register>,
    pub register_actions: Vec<ir::RegisterAction>,
    pub register_params: Vec<ir::RegisterParam>,
    pub hashes: Vec<ir::HashUnit>,
    pub counters: Vec<ir::Counter>,
    pub meters: Vec<ir::Meter>,
    pub checksums: Vec<ir::Checksum>,
    pub digests: Vec<ir::Digest>,
    pub action_profiles: Vec<ir::ActionProfile>,
    pub value_sets: Vec<ir::ValueSet>,
    pub filters: Vec<ir::Filter>,
    /// Top-level extern instances of this pipeline (by declaration position), made on first
    /// use and shared by every later use, with the gress that made them.
    pub top_externs: HashMap<(crate::source::FileId, u32), (Rc<externs::ExternInst>, Gress)>,
    /// The `adjust_byte_count` each counter and meter was first called with, and where.
    pub byte_adjusts: HashMap<externs::byte_count::Measured, (u32, crate::source::Span)>,
    /// Parser counter loads from a field, by gress: the distinct `[max, rotate, mask, add]`
    /// configurations (rows of the parser's counter init RAM).
    pub counter_init_rows: Vec<(Gress, [u128; 4])>,
    /// The function each register's stateful-ALU counter has (log, fifo or stack) and the
    /// call that gave it: one per register.
    pub salu_counters: HashMap<ir::RegisterId, (&'static str, crate::source::Span)>,
    /// Actions whose `exit`s became a flag and a `return` ([`exit_copyout`]), with the flag.
    pub exit_flags: HashMap<ir::ActionId, ir::FieldRef>,
}

/// Result of [`lower_program`].
pub struct Lowered {
    pub program: ir::Program,
    pub spans: SourceSpans,
}

pub(crate) struct Lowerer<'a> {
    pub env: &'a Env<'a>,
    pub target: Target,
    pub diags: Diagnostics,
    pub scopes: Vec<HashMap<String, Binding<'a>>>,
    pub ctx: Ctx,
    pub gress: Gress,
    pub phv: PhvAlloc,
    pub pipe: PipeObjs,
    pub spans: PipelineSpans,
    /// Gateway spans of the body being lowered (swapped out while lowering actions).
    pub ifs: Vec<Span>,
    /// Top-level action slots of the current pipeline.
    pub top_actions: HashMap<String, Rc<ActionSlot<'a>>>,
    pub consts: HashMap<String, V>,
    pub const_busy: HashSet<String>,
    /// Top-level constants whose evaluation failed (reported once).
    pub const_failed: HashSet<String>,
    pub tmp: u32,
    /// The temporaries made for `_` passed to `out` parameters.
    pub dont_cares: Vec<Rc<phv::Loc>>,
    /// Slices passed to `out`/`inout` parameters, copied through temporaries by the call.
    pub(crate) slice_args: Vec<stmt::slice_args::SliceArg>,
    /// The current gress's deparser select fields that start invalid, with their flags.
    pub(crate) written_flags: Vec<dprsr_select::WrittenFlag>,
    /// Control-local scalars of ingress and egress (for [`copy_prop`]); recorded while
    /// `locals_on` (the gress's MAU control is being lowered).
    pub(crate) control_locals: [copy_prop::GressLocals; 2],
    pub(crate) locals_on: bool,
    /// Instance path for runtime names (`SwitchIngress`, `SwitchIngress.inner`).
    pub prefix: String,
    /// Inline nesting depth (a block applying itself is reported, not followed).
    pub depth: u32,
    /// Parser, control and action bodies inlined so far (bounded by [`MAX_INLINED_BODIES`]).
    pub inlined: u32,
    /// Bodies of directly called actions being inlined into a control (their ifs are gateways).
    pub inline_action: u32,
    /// Parser and control declarations lowered at least once (by declaration span).
    pub lowered_blocks: HashSet<(crate::source::FileId, u32)>,
    /// The type arguments of the generic blocks being lowered, innermost last.
    pub type_args: Vec<crate::check::env::TypeParams>,
    /// Parser counters (their PHV words) loaded from a field in the parser state being
    /// lowered: their flags read false in that state's `select` (the load lands a cycle later).
    pub counters_loaded: Vec<ir::FieldRef>,
    /// The varbit `extract` of the parser state being lowered, if any: bf-p4c takes one per
    /// state, extracted last (see [`varbit`]).
    pub varbit_extract: Option<Span>,
    /// Lowering a `select`'s keys (where a parser counter's flags may be read).
    pub in_select: bool,
    /// The top-level parser being lowered has had its `transition reject` warning.
    pub reject_warned: bool,
    /// The call that is the whole right-hand side of the assignment being lowered: a call with
    /// `out` arguments (a Tofino 2 RegisterAction's extra outputs) may run there as a statement
    /// of its own, put in [`Self::hoisted`] and run just before the assignment.
    pub whole_rhs: Option<crate::source::Span>,
    pub hoisted: Vec<ir::Stmt>,
    /// Selectors whose constructor gave the group sizes (a table's `@selector_max_group_size`
    /// / `@selector_num_max_groups` give the others theirs, as bf-p4c's `createAttached`).
    pub selector_sizes_given: HashSet<ir::ActionProfileId>,
    /// Deparser `if`s being lowered (a checksum update inside one is conditional).
    pub deparser_ifs: u32,
    /// Their conditions, innermost last (a digest's table entry comes from the innermost).
    pub deparser_conds: Vec<&'a ast::Expr>,
    /// The deparser table entries (digest, mirror, resubmit, pktgen) the deparser being
    /// lowered has emitted, with the first emit's span.
    pub digest_entries: Vec<(externs::deparser_rules::DeparserTable, u128, Span)>,
    /// The field selecting each of those tables' entries (the first emit's).
    pub(crate) deparser_selectors: Vec<externs::deparser_rules::Selector>,
    /// The gress's deparser metadata fields selecting the entries of an extern made with a
    /// constructor argument (`mirror_type`, `resubmit_type`, `digest_type`).
    pub(crate) dprsr_type_fields: Vec<(ir::Intrinsic, ir::FieldRef)>,
    /// The deparser's unconditional `Checksum.update` destinations so far, and where.
    pub csum_updates: Vec<(ir::FieldRef, crate::source::Span)>,
    /// The Tofino 2 ghost control being lowered, if any (externs acting on a packet are
    /// refused there).
    pub ghost: Option<String>,
    /// Actions listed with their directional parameters bound (`actions = { a(meta); }`),
    /// one lowered action per (instance path, action slot, argument text).
    pub bound_actions: HashMap<(String, usize, String), ActionId>,
    /// The annotations of the controls being lowered, innermost last (a control's
    /// `@ignore_table_dependency` applies to the tables it declares).
    pub control_annos: Vec<&'a [ast::Annotation]>,
    /// Control instances applied from a control body so far in this pipeline (a later apply
    /// reuses the first one's tables).
    pub applied: shared_apply::AppliedControls<'a>,
    /// Parameters of control instances applied with different arguments (temporaries).
    pub copied: shared_apply::CopiedParams,
}

/// Deepest nesting of inlined blocks and actions.
const MAX_INLINE_DEPTH: u32 = 32;

/// Most parser, control and action bodies one program inlines. Depth alone does not bound
/// the work: actions that each call the next three times, twelve levels deep, make half a
/// million bodies from a kilobyte of source (and would exhaust memory). The project's
/// programs inline 6 to 8 (switch.p4 included: tables call its actions, not inlining).
pub const MAX_INLINED_BODIES: u32 = 4096;

impl<'a> Lowerer<'a> {
    pub fn new(env: &'a Env<'a>, target: Target) -> Lowerer<'a> {
        Lowerer {
            env,
            target,
            diags: Diagnostics::new(),
            scopes: Vec::new(),
            ctx: Ctx::Control,
            gress: Gress::Ingress,
            phv: PhvAlloc::new(),
            pipe: PipeObjs::default(),
            spans: PipelineSpans::default(),
            ifs: Vec::new(),
            top_actions: HashMap::new(),
            consts: HashMap::new(),
            const_busy: HashSet::new(),
            const_failed: HashSet::new(),
            tmp: 0,
            dont_cares: Vec::new(),
            slice_args: Vec::new(),
            written_flags: Vec::new(),
            control_locals: Default::default(),
            locals_on: false,
            prefix: String::new(),
            depth: 0,
            inlined: 0,
            inline_action: 0,
            lowered_blocks: HashSet::new(),
            type_args: Vec::new(),
            counters_loaded: Vec::new(),
            varbit_extract: None,
            in_select: false,
            reject_warned: false,
            whole_rhs: None,
            hoisted: Vec::new(),
            selector_sizes_given: HashSet::new(),
            deparser_ifs: 0,
            deparser_conds: Vec::new(),
            digest_entries: Vec::new(),
            deparser_selectors: Vec::new(),
            dprsr_type_fields: Vec::new(),
            csum_updates: Vec::new(),
            ghost: None,
            bound_actions: HashMap::new(),
            control_annos: Vec::new(),
            applied: Default::default(),
            copied: Default::default(),
        }
    }

    /// Pushes `d` and returns the marker.
    pub fn err(&mut self, d: Diagnostic) -> Reported {
        self.diags.push(d);
        Reported
    }

    pub fn warn(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    /// Binds `name` in the innermost scope.
    pub fn bind(&mut self, name: &str, b: Binding<'a>) {
        if self.scopes.is_empty() {
            self.scopes.push(HashMap::new());
        }
        if let Some(top) = self.scopes.last_mut() {
            top.insert(name.to_string(), b);
        }
    }

    pub fn lookup_scoped(&self, name: &str) -> Option<Binding<'a>> {
        self.scopes.iter().rev().find_map(|s| s.get(name)).cloned()
    }

    /// Every name visible here (for "did you mean").
    pub fn visible_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.scopes.iter().flat_map(|s| s.keys().cloned()).collect();
        v.extend(self.env.names().map(str::to_string));
        v
    }

    /// "cannot find `x`" with a suggestion.
    pub fn unknown_name(&mut self, id: &ast::Ident, what: &str) -> Reported {
        let names = self.visible_names();
        let mut d = Diagnostic::error(format!("cannot find {what} `{}` in this scope", id.name))
            .with_primary(id.span, "not found");
        d = match suggest::did_you_mean(&id.name, names.iter().map(String::as_str)) {
            Some(h) => d.with_help(h),
            None => {
                d.with_help("declare it first: locals of a parser or control come before their use")
            }
        };
        self.err(d)
    }

    /// A qualified runtime name for a declaration: `@name` honoured like bf-p4c (a leading `.`
    /// makes it absolute), otherwise `prefix.name`.
    pub fn qualify(&self, annos: &[ast::Annotation], name: &str) -> String {
        if let Some(n) = crate::check::annotations::name_annotation(annos) {
            if let Some(abs) = n.strip_prefix('.') {
                return abs.to_string();
            }
            return self.join(&n);
        }
        self.join(name)
    }

    pub fn join(&self, name: &str) -> String {
        if self.prefix.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.prefix)
        }
    }

    /// A fresh hidden PHV field for a temporary.
    pub fn temp(&mut self, width: u16, span: Span) -> Res<ir::FieldRef> {
        self.tmp += 1;
        let name = format!("$tmp{}", self.tmp);
        let w = width.max(1);
        self.phv
            .hidden(&name, w)
            .map_err(|m| self.err(Diagnostic::error(m).with_primary(span, "here")))
    }

    /// Allocates PHV storage for a variable.
    pub fn alloc(&mut self, name: &str, ty: &Ty, span: Span) -> Res<Rc<Loc>> {
        self.phv.value(name, ty).map_err(|m| {
            self.err(
                Diagnostic::error(m)
                    .with_primary(span, "cannot allocate this in the PHV")
                    .with_help("headers must be a whole number of bytes; values at most 128 bits"),
            )
        })
    }

    /// Runs `f` with a fresh lexical scope stack holding `frame` (for inlined blocks and
    /// action bodies, which do not see the caller's locals).
    pub fn with_scope<T>(
        &mut self,
        frame: HashMap<String, Binding<'a>>,
        prefix: Option<String>,
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let saved = std::mem::replace(&mut self.scopes, vec![frame]);
        let saved_prefix = prefix.map(|p| std::mem::replace(&mut self.prefix, p));
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        self.scopes = saved;
        if let Some(p) = saved_prefix {
            self.prefix = p;
        }
        r
    }

    /// Guards against runaway inlining: a block that applies itself, nesting past
    /// [`MAX_INLINE_DEPTH`] levels, or more than [`MAX_INLINED_BODIES`] bodies in all.
    pub fn check_depth(&mut self, span: Span) -> Res<()> {
        if self.depth > MAX_INLINE_DEPTH {
            return Err(self.err(
                Diagnostic::error(format!(
                    "parsers, controls and action calls nest more than {MAX_INLINE_DEPTH} \
                     levels deep here (pisa inlines at most {MAX_INLINE_DEPTH})"
                ))
                .with_primary(span, "applied here")
                .with_help(
                    "P4 does not allow recursion: a block that applies itself ends here too",
                ),
            ));
        }
        self.inlined = self.inlined.saturating_add(1);
        if self.inlined > MAX_INLINED_BODIES + 1 {
            // Reported once; every body after it stops here too.
            return Err(Reported);
        }
        if self.inlined > MAX_INLINED_BODIES {
            return Err(self.err(
                Diagnostic::error(format!(
                    "inlining this program makes more than {MAX_INLINED_BODIES} parser, control \
                     and action bodies (pisa inlines at most {MAX_INLINED_BODIES})"
                ))
                .with_primary(span, "the body past the limit")
                .with_help(
                    "blocks or actions that each apply or call the next several times multiply: \
                     call a shared action from a table instead",
                ),
            ));
        }
        Ok(())
    }

    /// Resolves a written type in the current scope: top-level types, and the type arguments
    /// of the generic parser or control being lowered.
    pub fn resolve_type(&mut self, t: &ast::Type) -> Res<Ty> {
        let r = match self.type_args.last() {
            Some(tp) => self.env.resolve_type(t, tp),
            None => self.env.resolve_type(t, &Default::default()),
        };
        r.map_err(|d| self.err(d))
    }
}

/// Checks every top-level constant and type declaration of the user's program, used or not,
/// as p4c does: `const bit<8> X = 1 / 0;`, a `bit<0>` field or an enum value that does not fit
/// is an error even when nothing refers to it.
fn check_unused_decls(l: &mut Lowerer<'_>) {
    let env = l.env;
    let mut typedef_errors = HashSet::new();
    for decl in &env.program.decls {
        if env.arch_files.contains(&decl.span.file) {
            continue;
        }
        match &decl.kind {
            ast::DeclKind::Const(c) => {
                let _ = l.top_const(&c.name.name, c, c.name.span);
            }
            ast::DeclKind::Header(s) | ast::DeclKind::Struct(s) | ast::DeclKind::HeaderUnion(s)
                if s.type_params.is_empty() =>
            {
                if let Err(d) = env.check_type_decl(&s.name) {
                    l.err(d);
                }
            }
            ast::DeclKind::Enum(e) => {
                if let Err(d) = env.check_type_decl(&e.name) {
                    l.err(d);
                }
            }
            ast::DeclKind::Typedef(t) => {
                if let Err(d) = env.check_type_decl(&t.name) {
                    // A typedef cycle fails the same way at each of its members: once.
                    if typedef_errors.insert(d.message.clone()) {
                        l.err(d);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Lowers `program` for `target`. Diagnostics (errors and warnings) go to `diags`; the program is
/// returned only when there were no errors.
pub fn lower_program(env: &Env<'_>, target: Target, diags: &mut Diagnostics) -> Option<Lowered> {
    // Once a control instance is found applied with different arguments, the program is
    // lowered again from the start with those parameters made temporaries (see
    // `shared_apply`). Each run finds at least one more such parameter, and a program has
    // finitely many.
    let mut copied = shared_apply::Differing::new();
    let (mut l, out) = loop {
        let mut l = Lowerer::new(env, target);
        l.copied.known = copied.clone();
        check_unused_decls(&mut l);
        let out = block::lower_main(&mut l);
        if !shared_apply::learn(&mut copied, std::mem::take(&mut l.copied.found)) {
            break (l, out);
        }
    };
    let had_errors = l.diags.has_errors();
    // A declaration checked up front and again at a use reports the same error twice.
    let mut seen = HashSet::new();
    for d in std::mem::take(&mut l.diags) {
        let key = (d.message.clone(), d.primary_span());
        if !d.is_error() || seen.insert(key) {
            diags.push(d);
        }
    }
    match out {
        Ok(lowered) if !had_errors => Some(lowered),
        _ => None,
    }
}

//! The native engine: each gress of a pipeline compiled to machine code with Cranelift when
//! the pipeline is loaded ([`NativePipeline::compile`]), from the flat form ([`super::flat`]).
//!
//! Per gress there are three entry points (parser, control, deparser: the gress runner decides
//! what a parse end means between them) and one function per action the gress can run. PHV
//! offsets, widths and masks are constants in the code, header validity is a bit test, there
//! is no dispatch per op, and extracts copy from the parser input straight into the PHV.
//! Exact tables whose key packs into 64 bits and single-field LPM tables of at most 32 bits
//! are looked up by the code itself (`lookup`, `trie`; ternary tables whose key fits 128 bits
//! by a search of the key packed in line: a hit or a miss to a default with
//! inline data taken in line, hit and miss counted, anything else through the shim); other
//! table applies call the existing tables through a shim; either way the matched action's
//! function is called directly. Direct counters and in-range indexed counters are counted in
//! line (`counter`). Each
//! gress's intrinsic prefix is written by a generated function too (`prefix`). Digests, mirror requests and meters compute their inputs in line and
//! hand them to the one Rust definition through typed shims ([`externs`]: no fallbacks).
//! Whatever the generator does not generate yet runs through the flat
//! engine on the same context ([`env`]'s `extern "C"` shims), so every program runs and
//! coverage grows node by node ([`NativePipeline::fallbacks`] counts them).
//!
//! Tracing (`pisa trace`) runs the same generator a second time with trace hooks on
//! ([`NativePipeline`]`<Recorder>`, made at the first traced pass: `Engines::native_traced`):
//! that code calls a hook (`env::hook_*`) at each trace point — parser state, extract, `if`,
//! direct action call, `exit`, a write of `drop_ctl` — and its table lookups, fallbacks and
//! parse end record through the same context; the recorder is the context's tracer, which
//! every shim reaches through the environment it is passed. The code that forwards is
//! generated with no hook at all ([`NativePipeline::trace_points`] is 0), so tracing costs
//! forwarding nothing.
//!
//! Why here and not in a crate of its own: the switch model chooses its engine when it is
//! assembled, so the generator must be reachable from `pipeline` itself, and it needs the
//! executor's internals (the flat form, `Ctx`). Cranelift's weight (about 40 s of a debug
//! build on two cores, once) is behind the default `native` feature: building `pipeline`
//! without it keeps the flat engine only.
//!
//! Memory: generated code holds addresses of flat-form nodes (for fallbacks); they live in
//! the boxed slices of the `FlatPipeline` the code was compiled from, which sits beside it in
//! the same `Engines` and is never changed after construction.

mod counter;
pub mod env;
mod expr;
pub mod externs;
mod gen;
mod lookup;
mod ops;
mod parser;
mod prefix;
mod run;
mod salu;
mod trie;

use std::collections::HashMap;

use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};
use thiserror::Error;

use self::env::{EnvLayout, Shims};
use self::gen::{Gen, Layout, Sigs};
use super::flat::{CsPart, FBranches, FExpr, FParser, FTransition, FlatGress, FlatPipeline, Op};
use crate::exec::prefix::PrefixPlan;
use crate::ir::{FieldRef, Gress, Pipeline};
use crate::phv::Phv;
use crate::trace::{NoTrace, Tracer};

#[cfg(test)]
pub(crate) use parser::acyclic as parser_acyclic;
pub use run::NativeGress;

/// Code generation failed (the pipeline then runs on the flat engine).
#[derive(Debug, Error)]
pub enum NativeError {
    #[error("no native code generator for this machine: {0}")]
    Host(String),
    #[error("code generation: {0}")]
    Codegen(String),
}

fn cg<E: std::fmt::Display>(e: E) -> NativeError {
    NativeError::Codegen(e.to_string())
}

/// The generated code's memory: executable, never written after finalization; freed on drop.
struct Code(Option<JITModule>);

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the only handles to the code are the `NativeGress`es of the
            // `NativePipeline` that owns this `Code` (they are neither `Clone` nor `Copy`), and
            // they are being dropped with it: no generated function runs again.
            unsafe { m.free_memory() };
        }
    }
}

// SAFETY: after `finalize_definitions` the module is only kept to own the code pages; nothing
// reads or writes it until it is dropped, and the finalized code itself is immutable and
// position-independent of threads, so sharing or sending it is sound.
unsafe impl Send for Code {}
// SAFETY: as above: no method is called on the module through a shared reference.
unsafe impl Sync for Code {}

/// A pipeline compiled to native code for contexts of tracer `T`: both gresses. Code for a
/// recording tracer (traced code) calls a trace hook at every trace point; code for
/// [`NoTrace`] has no trace point at all.
pub struct NativePipeline<T: Tracer = NoTrace> {
    pub ingress: NativeGress<T>,
    pub egress: NativeGress<T>,
    /// Ops and expression nodes left to the flat engine (static count over both gresses).
    pub fallbacks: usize,
    /// Those nodes by kind ([`op_label`], [`expr_label`]) with their counts, most first.
    pub fallback_kinds: Vec<(String, usize)>,
    /// Calls of trace hooks in the code (0 for untraced code: it has no trace point).
    pub trace_points: usize,
    _code: Code,
}

impl<T: Tracer> std::fmt::Debug for NativePipeline<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativePipeline")
            .field("fallbacks", &self.fallbacks)
            .field("trace_points", &self.trace_points)
            .finish_non_exhaustive()
    }
}

/// Address space reserved for one pipeline's generated code and data (well inside the ±2 GiB
/// of a PC-relative reference; l2l3.p4 needs well under a MiB).
const JIT_ARENA_BYTES: usize = 256 << 20;

fn isa() -> Result<cranelift_codegen::isa::OwnedTargetIsa, NativeError> {
    let mut flags = settings::builder();
    for (k, v) in [
        ("opt_level", "speed"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
    ] {
        flags.set(k, v).map_err(cg)?;
    }
    let builder = cranelift_native::builder().map_err(|e| NativeError::Host(e.to_string()))?;
    builder.finish(settings::Flags::new(flags)).map_err(cg)
}

/// Which generated function a definition is.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Parser,
    Block,
    Action,
}

struct Compiler {
    module: JITModule,
    ctx: Context,
    fbc: FunctionBuilderContext,
    /// Trace hook calls generated so far.
    trace_points: usize,
    /// Nodes left to the flat engine so far, by label.
    fallbacks: std::collections::BTreeMap<String, usize>,
}

impl<T: Tracer> NativePipeline<T> {
    /// Compiles `pl` (lowered as `flat`) to native code; `drop_ctl` is each gress's
    /// `drop_ctl` field (ingress, egress), whose writes traced code traces.
    ///
    /// `plans` are each gress's prefix plan (`GressEngines::plan`): the passes of this code
    /// write their prefix with the writer generated from it.
    pub fn compile(
        pl: &Pipeline,
        flat: &FlatPipeline,
        drop_ctl: [Option<FieldRef>; 2],
        plans: [&PrefixPlan; 2],
    ) -> Result<NativePipeline<T>, NativeError> {
        let mut c = Compiler::new()?;
        let shims = Shims::of::<T>();
        let ig = c.gress(
            pl,
            &flat.ingress,
            Gress::Ingress,
            shims,
            drop_ctl[0],
            plans[0],
        )?;
        let eg = c.gress(
            pl,
            &flat.egress,
            Gress::Egress,
            shims,
            drop_ctl[1],
            plans[1],
        )?;
        c.module.finalize_definitions().map_err(cg)?;
        let ingress = ig.finish(&c.module);
        let egress = eg.finish(&c.module);
        let mut fallback_kinds: Vec<(String, usize)> = c.fallbacks.into_iter().collect();
        fallback_kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(NativePipeline {
            ingress,
            egress,
            fallbacks: fallback_kinds.iter().map(|k| k.1).sum(),
            fallback_kinds,
            trace_points: c.trace_points,
            _code: Code(Some(c.module)),
        })
    }

    pub fn gress(&self, g: Gress) -> &NativeGress<T> {
        match g {
            Gress::Ingress => &self.ingress,
            Gress::Egress => &self.egress,
        }
    }
}

impl Compiler {
    /// A compiler with an empty module.
    fn new() -> Result<Compiler, NativeError> {
        let mut builder = JITBuilder::with_isa(isa()?, default_libcall_names());
        // One reserved region per module: the generated functions call each other and load
        // their constants PC-relative (±2 GiB). The default provider takes each segment from
        // the global allocator, which may put code in the brk heap and data in an mmap'd chunk
        // terabytes away (seen: cranelift-jit's relocation panicked in a test process with many
        // switches). The reservation is address space only; pages are committed as used.
        let arena = ArenaMemoryProvider::new_with_size(JIT_ARENA_BYTES).map_err(|e| {
            cg(format!(
                "cannot reserve {JIT_ARENA_BYTES} bytes for JIT code: {e}"
            ))
        })?;
        builder.memory_provider(Box::new(arena));
        let module = JITModule::new(builder);
        let ctx = module.make_context();
        Ok(Compiler {
            module,
            ctx,
            fbc: FunctionBuilderContext::new(),
            trace_points: 0,
            fallbacks: Default::default(),
        })
    }
}

/// Function ids of one gress, before finalization.
struct GressIds {
    in_place: bool,
    layout: Layout,
    parse: FuncId,
    control: FuncId,
    deparse: FuncId,
    /// The prefix writer and how many values it reads.
    prefix: FuncId,
    prefix_values: usize,
}

impl GressIds {
    fn finish<T: Tracer>(&self, m: &JITModule) -> NativeGress<T> {
        // SAFETY: each id was defined with the signature its entry point has (`define` builds
        // parser functions as `(env) -> i64` and blocks as `(env) -> i32`, `prefix::define`
        // the prefix writer as `(values, out)` reading `prefix_values` values), against `layout`,
        // calling the shims of `T` (`compile` generates both gresses with `Shims::of::<T>`).
        unsafe {
            NativeGress::new(
                m.get_finalized_function(self.parse),
                m.get_finalized_function(self.control),
                m.get_finalized_function(self.deparse),
                (m.get_finalized_function(self.prefix), self.prefix_values),
                self.in_place,
                self.layout,
            )
        }
    }
}

impl Compiler {
    fn signature(&self, kind: Kind) -> Signature {
        let mut s = self.module.make_signature();
        s.params.push(AbiParam::new(types::I64));
        if kind == Kind::Action {
            s.params.push(AbiParam::new(types::I64));
            s.params.push(AbiParam::new(types::I64));
        }
        let ret = if kind == Kind::Parser {
            types::I64
        } else {
            types::I32
        };
        s.returns.push(AbiParam::new(ret));
        s
    }

    fn shim_sig(&self, params: &[types::Type], ret: Option<types::Type>) -> Signature {
        let mut s = self.module.make_signature();
        s.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        s.returns.extend(ret.map(AbiParam::new));
        s
    }

    fn gress(
        &mut self,
        pl: &Pipeline,
        fg: &FlatGress,
        g: Gress,
        shims: Shims,
        drop_ctl: Option<FieldRef>,
        plan: &PrefixPlan,
    ) -> Result<GressIds, NativeError> {
        let gp = match g {
            Gress::Ingress => &pl.ingress,
            Gress::Egress => &pl.egress,
        };
        let layout = Layout {
            phv_len: gp.phv.bytes,
            phv_padded: Phv::padded_len(gp.phv.bytes as usize) as u32,
            headers: gp.phv.headers.len() as u32,
        };
        let table_actions: Vec<Vec<u32>> = pl
            .tables
            .iter()
            .map(|t| {
                let mut ids: Vec<u32> = t.actions.iter().map(|a| a.action.0).collect();
                ids.push(t.default_action.action.0);
                ids.sort_unstable();
                ids.dedup();
                ids
            })
            .collect();
        let used = used_actions(fg, &table_actions);
        let inline = lookup::InlineTables::new(pl);
        // Names are per module: traced and untraced code live in modules of their own.
        let tag = match g {
            Gress::Ingress => "ig",
            Gress::Egress => "eg",
        };
        let mut actions = HashMap::new();
        for a in &used {
            let sig = self.signature(Kind::Action);
            let id = self
                .module
                .declare_function(&format!("{tag}_action_{a}"), Linkage::Local, &sig)
                .map_err(cg)?;
            actions.insert(*a, id);
        }
        let env = Unit {
            layout,
            actions: &actions,
            table_actions: &table_actions,
            inline: &inline,
            shims,
            drop_ctl,
        };
        for a in &used {
            let body = &fg.actions[*a as usize];
            self.define(actions[a], Kind::Action, &env, |gen| gen.block(body))?;
        }
        let prefix = prefix::define(
            &mut self.module,
            &mut self.ctx,
            &mut self.fbc,
            plan,
            &format!("{tag}_prefix"),
        )?;
        let mut entry = |name: &str, kind: Kind, f: &dyn Fn(&mut Gen)| {
            let sig = self.signature(kind);
            let id = self
                .module
                .declare_function(&format!("{tag}_{name}"), Linkage::Local, &sig)
                .map_err(cg)?;
            self.define(id, kind, &env, f)?;
            Ok::<FuncId, NativeError>(id)
        };
        Ok(GressIds {
            in_place: parser_in_place(&fg.parser),
            layout,
            parse: entry("parser", Kind::Parser, &|gen| gen.parser(&fg.parser))?,
            control: entry("control", Kind::Block, &|gen| gen.block(&fg.control))?,
            deparse: entry("deparser", Kind::Block, &|gen| gen.block(&fg.deparser))?,
            prefix,
            prefix_values: plan.values(),
        })
    }

    /// Builds and defines one function.
    fn define(
        &mut self,
        id: FuncId,
        kind: Kind,
        unit: &Unit,
        body: impl FnOnce(&mut Gen),
    ) -> Result<(), NativeError> {
        self.ctx.func.signature = self.signature(kind);
        let i64t = types::I64;
        let sigs = [
            self.shim_sig(&[i64t, i64t, i64t, i64t], Some(types::I32)),
            self.shim_sig(&[i64t, types::I32, types::I32], Some(i64t)),
            self.shim_sig(&[i64t, types::I32, types::I32], None),
            self.shim_sig(&[i64t, types::I32, i64t, i64t], Some(types::I32)),
            self.shim_sig(
                &[i64t, types::I32, types::I32, i64t, i64t],
                Some(types::I32),
            ),
            self.shim_sig(&[i64t, types::I32, types::I32, types::I32], None),
            self.shim_sig(&[i64t, i64t, i64t], Some(i64t)),
        ];
        let mut b = FunctionBuilder::new(&mut self.ctx.func, &mut self.fbc);
        let [node, apply, emit, action, count, extract, tcam] = sigs.map(|s| b.import_signature(s));
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let args = b.block_params(entry).to_vec();
        let env = args[0];
        let phv = b.ins().load(
            types::I64,
            gen::mem(),
            env,
            std::mem::offset_of!(EnvLayout, phv) as i32,
        );
        let valid = b.ins().load(
            types::I64,
            gen::mem(),
            env,
            std::mem::offset_of!(EnvLayout, valid) as i32,
        );
        let fault = b.create_block();
        let mut g = Gen {
            b,
            module: &mut self.module,
            layout: unit.layout,
            sigs: Sigs {
                node,
                apply,
                emit,
                action,
                count,
                extract,
                tcam,
            },
            actions: unit.actions,
            action_refs: HashMap::new(),
            table_action_ids: unit.table_actions,
            inline: unit.inline,
            env,
            phv,
            valid,
            params: (kind == Kind::Action).then(|| (args[1], args[2])),
            fault,
            flow_exit: None,
            too_short: None,
            state_var: None,
            count_steps: true,
            shims: unit.shims,
            drop_ctl: unit.drop_ctl,
            trace_points: 0,
            fallbacks: Vec::new(),
            salu: None,
        };
        body(&mut g);
        self.trace_points += g.trace_points;
        for f in g.fallbacks.drain(..) {
            *self.fallbacks.entry(f).or_default() += 1;
        }
        if kind != Kind::Parser {
            let next = g.b.ins().iconst(types::I32, i64::from(env::NEXT));
            g.b.ins().return_(&[next]);
            g.b.switch_to_block(fault);
            let f = g.b.ins().iconst(types::I32, i64::from(env::FAULT));
            g.b.ins().return_(&[f]);
        } else {
            // The parser's last block is unreachable (every state jumps or returns).
            g.b.ins()
                .trap(cranelift_codegen::ir::TrapCode::unwrap_user(1));
        }
        g.b.seal_all_blocks();
        g.b.finalize();
        let r = self.module.define_function(id, &mut self.ctx).map_err(cg);
        self.module.clear_context(&mut self.ctx);
        r
    }
}

/// What every function of one gress is generated against.
struct Unit<'a> {
    layout: Layout,
    actions: &'a HashMap<u32, FuncId>,
    table_actions: &'a [Vec<u32>],
    inline: &'a lookup::InlineTables,
    shims: Shims,
    drop_ctl: Option<FieldRef>,
}

/// Actions the gress can run (through its tables or direct calls, transitively), sorted.
fn used_actions(fg: &FlatGress, table_actions: &[Vec<u32>]) -> Vec<u32> {
    let mut seen = vec![false; fg.actions.len()];
    let mut todo = Vec::new();
    let visit = |ops: &[Op], todo: &mut Vec<u32>| {
        walk(ops, &mut |op| match op {
            Op::Apply(a) => {
                if let Some(ids) = table_actions.get(a.table as usize) {
                    todo.extend(ids.iter().copied());
                }
            }
            Op::Call { action, .. } => todo.push(action.0),
            _ => {}
        })
    };
    visit(&fg.control, &mut todo);
    visit(&fg.deparser, &mut todo);
    for st in fg.parser.states.iter() {
        visit(&st.body, &mut todo);
    }
    while let Some(a) = todo.pop() {
        match seen.get_mut(a as usize) {
            Some(s) if !*s => *s = true,
            _ => continue,
        }
        visit(&fg.actions[a as usize], &mut todo);
    }
    (0..seen.len() as u32)
        .filter(|a| seen[*a as usize])
        .collect()
}

/// Whether the generated parser can read the packet where it lies: every input read is an
/// extract or advance the generator made, at a byte-aligned cursor. A parser with anything
/// the flat engine runs (lookahead, header stacks, residual checksums, calls) may read the
/// parser input as one buffer, so its packet is copied after the prefix as for the flat engine.
fn parser_in_place(p: &FParser) -> bool {
    fn pure(e: &FExpr) -> bool {
        match e {
            FExpr::Tree(_) | FExpr::Salu(_) => false,
            FExpr::Not { a, .. }
            | FExpr::Neg { a, .. }
            | FExpr::LNot(a)
            | FExpr::Slice { a, .. }
            | FExpr::Sext { a, .. }
            | FExpr::Mask { a, .. } => pure(a),
            FExpr::LAnd(a, b)
            | FExpr::LOr(a, b)
            | FExpr::Bin { a, b, .. }
            | FExpr::Concat { hi: a, lo: b, .. } => pure(a) && pure(b),
            FExpr::Ternary {
                cond, then, els, ..
            } => pure(cond) && pure(then) && pure(els),
            FExpr::ChecksumUpdate(parts) => parts.iter().all(pure_part),
            FExpr::Hash { inputs, .. } => inputs.iter().all(|(i, _)| pure(i)),
            FExpr::Meter { index, color, .. } => {
                index.as_deref().is_none_or(pure) && color.as_deref().is_none_or(pure)
            }
            _ => true,
        }
    }
    fn pure_part(c: &CsPart) -> bool {
        match c {
            CsPart::Run { .. } => true,
            CsPart::Value { e, .. } => pure(e),
            CsPart::Tree(_) => false,
        }
    }
    fn ok(ops: &[Op]) -> bool {
        ops.iter().all(|op| match op {
            Op::SetConst { .. }
            | Op::SetParam { .. }
            | Op::SetValid { .. }
            | Op::CopyHeader { .. }
            | Op::Extract { .. }
            | Op::ExtractNext { .. } => true,
            Op::Set { e, .. } | Op::SetSlice { e, .. } => pure(e),
            Op::If {
                cond, then, els, ..
            } => pure(cond) && ok(then) && ok(els),
            Op::AdvanceConst(bits) => bits % 8 == 0,
            Op::ChecksumAdd { parts, .. } => parts.iter().all(pure_part),
            Op::Exit | Op::Return => true,
            _ => false,
        })
    }
    p.states.iter().all(|st| {
        ok(&st.body)
            && match &st.transition {
                FTransition::Direct(_) => true,
                FTransition::Select { keys, .. } => keys.iter().all(pure),
            }
    })
}

/// Calls `f` on every op of `ops`, nested blocks included.
fn walk(ops: &[Op], f: &mut impl FnMut(&Op)) {
    for op in ops {
        f(op);
        match op {
            Op::If { then, els, .. } => {
                walk(then, f);
                walk(els, f);
            }
            Op::Apply(a) => match &a.branches {
                FBranches::None => {}
                FBranches::HitMiss { hit, miss } => {
                    walk(hit, f);
                    walk(miss, f);
                }
                FBranches::ActionRun { cases, default } => {
                    for (_, b) in cases.iter() {
                        walk(b, f);
                    }
                    walk(default, f);
                }
            },
            _ => {}
        }
    }
}

/// The name of a `Debug` form's variant (up to its first space, brace or parenthesis).
fn variant(debug: String) -> String {
    debug
        .split([' ', '(', '{'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// What an op left to the flat engine is: `stmt KIND` for a statement the tree interpreter
/// runs (a register action, a hash, a digest, ...), else `op KIND` (a flat op the generator
/// does not take in this form, e.g. a field past two PHV words).
pub fn op_label(op: &Op) -> String {
    match op {
        Op::Tree(s) => format!("stmt {}", variant(format!("{s:?}"))),
        Op::Apply(a) => format!("op Apply ({} keys)", a.keys.len()),
        _ => format!("op {}", variant(format!("{op:?}"))),
    }
}

/// What an expression left to the flat engine is: `expr KIND` for a tree expression, else
/// the flat node (a binary operator with its operator).
pub fn expr_label(e: &FExpr) -> String {
    match e {
        FExpr::Tree(x) => format!("expr {}", variant(format!("{x:?}"))),
        FExpr::Salu(s) => format!("expr {}", variant(format!("{:?}", s.tree))),
        FExpr::Bin { op, width, .. } => format!("flat Bin {op:?} ({width} bits)"),
        FExpr::Field(f) => format!(
            "flat Field ({} bits at bit {} of a word)",
            f.width,
            f.offset % 64
        ),
        _ => format!("flat {}", variant(format!("{e:?}"))),
    }
}

//! Stateful-ALU rules: does a RegisterAction body fit one SALU, and does a Register have a
//! layout the hardware stores?
//!
//! The SALU model (TNA app note §7.13 and bf-p4c's device spec, see `profile.rs`): per
//! RegisterAction up to 2 conditions (Tofino2: 4), each of the form `(a − b − k) REL 0` over the
//! memory word(s), the 2 PHV inputs and a constant; two arithmetic ALUs per memory word (one for
//! each outcome of the condition), each doing one operation on two operands; one 32-bit output
//! word (Tofino2: 4) that is a copy of an input or of a computed value (a computed-only output
//! takes a spare ALU); constants in −8..7 inline and up to 4 larger ones from a register file;
//! no multiplier, no shifter, no divider (Tofino2 has DivMod).

use std::collections::BTreeSet;

use pipeline::ir::{
    BinOp, Expr, Pipeline, Place, RegWord, Register, RegisterAction, RegisterActionId, RegisterId,
    Stmt, UnOp,
};

use super::effects::Loc;
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::names::Names;
use super::profile::Profile;

/// Checks a register's word layout.
pub(crate) fn check_register(
    pi: usize,
    id: RegisterId,
    reg: &Register,
    p: &Profile,
    out: &mut Vec<ResourceIssue>,
) {
    let obj = ObjectRef::Register(pi, id);
    let widths = p
        .salu
        .widths
        .iter()
        .map(|w| w.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if !p.salu.widths.contains(&reg.width) {
        out.push(
            ResourceIssue::warning(
                IssueKind::RegisterLayout,
                obj,
                format!(
                    "register `{}` has {}-bit words, which {} registers cannot store",
                    reg.name,
                    reg.width,
                    p.name()
                ),
            )
            .with_note(format!("{} register words are {widths} bits wide (or a pair of them); the emulator accepts this one", p.name()))
            .with_help(format!("use a word width of {widths} bits")),
        );
    }
    if reg.paired && reg.width == 1 {
        out.push(ResourceIssue::warning(
            IssueKind::RegisterLayout,
            obj,
            format!(
                "register `{}` pairs two 1-bit words; the hardware has no paired 1-bit registers",
                reg.name
            ),
        ));
    }
}

fn is_cmp(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
    )
}

/// A constant as a signed number of its width.
fn signed_const(value: u128, width: u16) -> i128 {
    let w = u32::from(width.min(128));
    if w == 0 || w >= 128 {
        return value as i128;
    }
    let v = value & ((1u128 << w) - 1);
    if v >> (w - 1) == 1 {
        v as i128 - (1i128 << w)
    } else {
        v as i128
    }
}

struct Scan<'a> {
    names: &'a Names<'a>,
    p: &'a Profile,
    compares: Vec<Expr>,
    word_assigns: [u32; 2],
    stored: Vec<Expr>,
    outputs: Vec<Expr>,
    /// The highest output word written (`rv1` = 1; Tofino 2 has `rv2..rv4`).
    output_words: u32,
    inputs: Vec<(Loc, u16)>,
    big_consts: BTreeSet<i128>,
    errors: Vec<(String, Vec<String>)>,
    warnings: Vec<String>,
    arithmetic: bool,
}

impl Scan<'_> {
    fn err(&mut self, msg: String, help: &[&str]) {
        if !self.errors.iter().any(|(m, _)| *m == msg) {
            self.errors
                .push((msg, help.iter().map(|h| h.to_string()).collect()));
        }
    }

    fn warn(&mut self, msg: String) {
        if !self.warnings.contains(&msg) {
            self.warnings.push(msg);
        }
    }

    /// Records leaves (inputs, constants) and rejects what a SALU cannot read.
    fn leaves(&mut self, e: &Expr) {
        match e {
            Expr::Const { value, width } => {
                let v = signed_const(*value, *width);
                if v < self.p.salu.const_min || v > self.p.salu.const_max {
                    self.big_consts.insert(v);
                }
            }
            Expr::Field(f) => {
                let l = Loc::field(*f);
                if !self.inputs.iter().any(|(x, _)| *x == l) {
                    self.inputs.push((l, f.width));
                }
            }
            Expr::Param { index, width } => {
                let l = Loc::Temp(u32::MAX - u32::from(*index));
                if !self.inputs.iter().any(|(x, _)| *x == l) {
                    self.inputs.push((l, *width));
                }
            }
            Expr::RegValue(_) | Expr::RegInput(_) | Expr::RegisterParam(_) => {}
            // The math unit is an operand of the instruction; it reads one input.
            Expr::MathUnit { input, .. } => {
                if !is_leaf(input) {
                    let what = self.names.expr(input);
                    self.err(
                        format!("a MathUnit reads the memory word or a PHV input, not `{what}`"),
                        &["compute its input in an action before `execute` and pass it in as a PHV field"],
                    );
                }
                self.leaves(input)
            }
            Expr::Slice { arg, .. } | Expr::Cast { arg, .. } | Expr::Unary { arg, .. } => {
                self.leaves(arg)
            }
            Expr::Binary { a, b, .. } => {
                self.leaves(a);
                self.leaves(b);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.leaves(cond);
                self.leaves(then);
                self.leaves(els);
            }
            // Tofino 2's min/max unit: one operation over the memory word and a mask.
            Expr::MinMax { value, mask, .. } if self.p.salu.output_words > 1 => {
                self.leaves(value);
                self.leaves(mask);
            }
            other => {
                let what = self.names.expr(other);
                self.err(
                    format!("a stateful ALU cannot evaluate `{what}` inside a RegisterAction"),
                    &["compute the value in an action or table before `execute`, and pass it in as a PHV field"],
                );
            }
        }
    }

    /// Number of ALU operations `e` needs (constant subtrees fold away).
    fn ops(&mut self, e: &Expr) -> u32 {
        match e {
            Expr::Slice { arg, .. } | Expr::Cast { arg, .. } => self.ops(arg),
            Expr::Unary { op, arg, .. } => {
                let inner = self.ops(arg);
                if is_const(arg) {
                    0
                } else {
                    // `~` is not arithmetic for the 1-bit check: a 1-bit stateful ALU reads,
                    // sets or clears its bit and can return it complemented (bf-p4c's
                    // `read_bitc`, `set_bitc`, `clr_bitc`).
                    if *op == UnOp::Neg {
                        self.arithmetic = true;
                    }
                    inner + 1
                }
            }
            Expr::Binary { op, a, b, .. } => {
                let n = self.ops(a) + self.ops(b);
                if is_const(a) && is_const(b) {
                    return 0;
                }
                self.arithmetic = true;
                self.op_allowed(*op, a, b);
                n + 1
            }
            _ => 0,
        }
    }

    fn op_allowed(&mut self, op: BinOp, a: &Expr, b: &Expr) {
        let shown = || {
            format!(
                "{} {} {}",
                self.names.expr(a),
                super::names::binop_str(op),
                self.names.expr(b)
            )
        };
        match op {
            BinOp::Mul if !is_const(a) && !is_const(b) => self.err(
                format!("a stateful ALU cannot multiply two variables (`{}`)", shown()),
                &["multiply by a constant power of two, or use a MathUnit"],
            ),
            BinOp::Mul => self.warn(format!(
                "`{}`: the stateful ALU has no multiplier (bf-p4c would need a MathUnit); the emulator multiplies",
                shown()
            )),
            BinOp::Div | BinOp::Mod if !self.p.salu.div_mod => self.err(
                format!("{}'s stateful ALU cannot divide (`{}`)", self.p.name(), shown()),
                &["build for tofino2 (its SALU has DivMod), or approximate with a MathUnit"],
            ),
            BinOp::Shl | BinOp::Shr => self.warn(format!(
                "`{}`: the stateful ALU has no shifter; the emulator shifts",
                shown()
            )),
            _ => {}
        }
    }

    /// A condition: `&&`/`||`/`!` of comparisons, each taking a compare unit.
    fn cond(&mut self, e: &Expr) {
        match e {
            Expr::Binary {
                op: BinOp::LAnd | BinOp::LOr,
                a,
                b,
                ..
            } => {
                self.cond(a);
                self.cond(b);
            }
            Expr::Unary {
                op: UnOp::LNot,
                arg,
                ..
            } => self.cond(arg),
            Expr::Const { .. } => {}
            Expr::Binary { op, a, b, .. } if is_cmp(*op) => {
                self.leaves(e);
                let mut terms = 0;
                let ok = linear(a, &mut terms) && linear(b, &mut terms);
                if !ok || terms > 2 {
                    let shown = self.names.expr(e);
                    self.err(
                        format!("condition `{shown}` is too complex for a stateful ALU compare unit"),
                        &["a compare unit tests `(a - b - constant) <op> 0`, with a and b the memory word or a PHV input; compute the rest in an action first"],
                    );
                }
                if !self.compares.contains(e) {
                    self.compares.push(e.clone());
                }
            }
            other => {
                self.leaves(other);
                if !self.compares.contains(other) {
                    self.compares.push(other.clone());
                }
            }
        }
    }

    /// The conditions of a `this.predicate(..)` output: each takes a compare unit.
    /// Argument i is read from compare unit i (bf-p4c: "does not match with other comparisons
    /// in the ALU"): it must be the condition already on unit i, or the next free unit's.
    fn predicate_conds(&mut self, e: &Expr) {
        match e {
            Expr::SaluPredicate { conds, .. } => {
                for (i, c) in conds.iter().enumerate() {
                    let at = self.compares.iter().position(|x| x == c);
                    if at.is_some_and(|p| p != i) || (at.is_none() && self.compares.len() != i) {
                        let shown = self.names.expr(c);
                        self.err(
                            format!("predicate argument {} (`{shown}`) cannot use compare unit {i}: the conditions before it took the units in another order", i + 1),
                            &["put the `this.predicate(..)` call first in `apply`, or test its conditions in the same order before it"],
                        );
                    }
                    match (at, c) {
                        (Some(_), _) => {}
                        // `true`/`false` take a unit too (bf-p4c compares 0 with 0).
                        (None, Expr::Const { .. }) => self.compares.push(c.clone()),
                        (None, _) => self.cond(c),
                    }
                }
            }
            Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => self.predicate_conds(arg),
            _ => {}
        }
    }

    /// A value computed by one ALU.
    fn value(&mut self, e: &Expr) -> u32 {
        if let Expr::Ternary {
            cond, then, els, ..
        } = e
        {
            self.cond(cond);
            return self.value(then).max(1) + self.value(els).max(1);
        }
        self.leaves(e);
        let n = self.ops(e);
        if n > 1 {
            let shown = self.names.expr(e);
            self.err(
                format!("`{shown}` needs {n} operations; a stateful ALU instruction does one"),
                &["split the computation: precompute part of it into a PHV field in an earlier action"],
            );
        }
        1
    }

    fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::Assign {
                    dst: Place::RegValue(w),
                    value,
                } => {
                    let n = self.value(value);
                    self.word_assigns[usize::from(*w == RegWord::Hi)] += n;
                    self.stored.push(value.clone());
                }
                Stmt::Assign {
                    dst: dst @ (Place::RegOutput | Place::RegOutputN(_)),
                    value,
                } => {
                    let k = match dst {
                        Place::RegOutputN(k) => u32::from(*k),
                        _ => 1,
                    };
                    self.output_words = self.output_words.max(k);
                    self.predicate_conds(value);
                    self.outputs.push(value.clone());
                }
                Stmt::Assign { .. } => self.err(
                    "a RegisterAction can write only the register word(s) and its results `rv`..`rv4`"
                        .into(),
                    &["return the value through `rv` and assign it where `execute` is called"],
                ),
                Stmt::If {
                    cond, then, els, ..
                } => {
                    self.cond(cond);
                    self.stmts(then);
                    self.stmts(els);
                }
                Stmt::Return => {}
                _ => self.err(
                    "a RegisterAction body may only assign and branch".into(),
                    &["move the statement into the calling action"],
                ),
            }
        }
    }
}

fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Const { .. } => true,
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } | Expr::Unary { arg, .. } => is_const(arg),
        Expr::Binary { a, b, .. } => is_const(a) && is_const(b),
        _ => false,
    }
}

/// The math units of a RegisterAction body, in order (duplicates kept out).
fn math_units(body: &[Stmt], out: &mut Vec<pipeline::externs::math_unit::MathUnit>) {
    fn expr(e: &Expr, out: &mut Vec<pipeline::externs::math_unit::MathUnit>) {
        match e {
            Expr::MathUnit { unit, input, .. } => {
                if !out.contains(unit) {
                    out.push((**unit).clone());
                }
                expr(input, out);
            }
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => {
                expr(arg, out)
            }
            Expr::Binary { a, b, .. } => {
                expr(a, out);
                expr(b, out);
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                expr(cond, out);
                expr(then, out);
                expr(els, out);
            }
            _ => {}
        }
    }
    for s in body {
        match s {
            Stmt::Assign { value, .. } => expr(value, out),
            Stmt::If {
                cond, then, els, ..
            } => {
                expr(cond, out);
                math_units(then, out);
                math_units(els, out);
            }
            _ => {}
        }
    }
}

/// A stateful ALU has one math unit: the RegisterActions of one register may use one MathUnit
/// configuration between them (bf-p4c refuses two).
pub(crate) fn check_math_units(pi: usize, pipe: &Pipeline, out: &mut Vec<ResourceIssue>) {
    for (ri, reg) in pipe.registers.iter().enumerate() {
        let mut units = Vec::new();
        let mut users = Vec::new();
        for ra in pipe
            .register_actions
            .iter()
            .filter(|ra| ra.register.index() == ri)
        {
            let mut own = Vec::new();
            for b in ra.bodies() {
                math_units(b, &mut own);
            }
            if !own.is_empty() {
                users.push(ra.name.as_str());
            }
            for u in own {
                if !units.contains(&u) {
                    units.push(u);
                }
            }
        }
        if units.len() > 1 {
            out.push(
                ResourceIssue::error(
                    IssueKind::SaluTooComplex,
                    ObjectRef::Register(pi, RegisterId(ri as u32)),
                    format!(
                        "the RegisterActions of register `{}` ({}) use {} different MathUnits: its stateful ALU has one",
                        reg.name,
                        users.join(", "),
                        units.len()
                    ),
                )
                .with_help("share one MathUnit between them, or split the register"),
            );
        }
    }
}

/// Whether `e` is a sum/difference of leaves; counts its non-constant terms.
fn linear(e: &Expr, terms: &mut u32) -> bool {
    match e {
        _ if is_const(e) => true,
        Expr::RegValue(_)
        | Expr::RegInput(_)
        | Expr::Field(_)
        | Expr::Param { .. }
        | Expr::RegisterParam(_) => {
            *terms += 1;
            true
        }
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => linear(arg, terms),
        Expr::Binary {
            op: BinOp::Add | BinOp::Sub,
            a,
            b,
            ..
        } => linear(a, terms) && linear(b, terms),
        _ => false,
    }
}

fn is_leaf(e: &Expr) -> bool {
    match e {
        Expr::Const { .. }
        | Expr::Field(_)
        | Expr::Param { .. }
        | Expr::RegValue(_)
        | Expr::RegInput(_)
        | Expr::RegisterParam(_)
        // The predicate and address outputs are output sources of their own, not an ALU's.
        | Expr::SaluPredicate { .. }
        | Expr::SaluAddress { .. } => true,
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => is_leaf(arg),
        _ => false,
    }
}

/// Checks one RegisterAction against the stateful ALU of `p`.
pub(crate) fn check_register_action(
    pi: usize,
    pipe: &Pipeline,
    names: &Names<'_>,
    id: RegisterActionId,
    ra: &RegisterAction,
    p: &Profile,
    out: &mut Vec<ResourceIssue>,
) {
    let obj = ObjectRef::RegisterAction(pi, id);
    let Some(reg) = pipe.registers.get(ra.register.index()) else {
        out.push(ResourceIssue::error(
            IssueKind::MalformedIr,
            obj,
            format!(
                "RegisterAction `{}` names register id {}, which does not exist",
                ra.name, ra.register.0
            ),
        ));
        return;
    };
    let mut s = Scan {
        names,
        p,
        compares: Vec::new(),
        word_assigns: [0, 0],
        stored: Vec::new(),
        outputs: Vec::new(),
        output_words: 0,
        inputs: Vec::new(),
        big_consts: BTreeSet::new(),
        errors: Vec::new(),
        warnings: Vec::new(),
        arithmetic: false,
    };
    s.stmts(&ra.body);
    // Outputs that are neither an input nor a stored value need an ALU of their own.
    let mut output_alus = 0;
    let outputs = std::mem::take(&mut s.outputs);
    for o in &outputs {
        if !is_leaf(o) && !s.stored.contains(o) {
            output_alus += s.value(o);
        }
    }
    let salu = p.salu;
    let target = p.name();
    let ra_name = &ra.name;
    let mut errors = std::mem::take(&mut s.errors);
    if s.compares.len() as u32 > salu.compare_units {
        let list: Vec<String> = s
            .compares
            .iter()
            .map(|c| format!("`{}`", names.expr(c)))
            .collect();
        errors.push((
            format!(
                "RegisterAction `{ra_name}` needs {} conditions ({}); a {target} stateful ALU has {} compare units",
                s.compares.len(),
                list.join(", "),
                salu.compare_units
            ),
            vec!["combine conditions, or compute some of them in an action and pass the result in as a PHV input".into()],
        ));
    }
    for (w, n) in s.word_assigns.iter().enumerate() {
        if *n > salu.alus_per_word {
            let word = if w == 0 {
                "the (low) memory word"
            } else {
                "the high memory word"
            };
            errors.push((
                format!(
                    "RegisterAction `{ra_name}` computes {word} in {n} different ways; a stateful ALU has {} ALUs per word (one for each outcome of its condition)",
                    salu.alus_per_word
                ),
                vec!["restructure the body as a single if/else per memory word".into()],
            ));
        }
    }
    let instructions: u32 = s.word_assigns.iter().sum::<u32>() + output_alus;
    if instructions > salu.instructions {
        errors.push((
            format!(
                "RegisterAction `{ra_name}` needs {instructions} arithmetic instructions; a {target} stateful ALU has {}",
                salu.instructions
            ),
            vec!["simplify the body, or split the state over two registers".into()],
        ));
    }
    if s.inputs.len() as u32 > salu.phv_inputs {
        let list: Vec<String> = s
            .inputs
            .iter()
            .map(|(l, _)| match l {
                Loc::Temp(_) => "an action parameter".to_string(),
                l => format!("`{}`", names.loc(*l)),
            })
            .collect();
        errors.push((
            format!(
                "RegisterAction `{ra_name}` reads {} PHV values ({}); a stateful ALU has {} PHV inputs",
                s.inputs.len(),
                list.join(", "),
                salu.phv_inputs
            ),
            vec!["combine inputs into one field in an earlier action (e.g. their difference)".into()],
        ));
    }
    for (l, w) in &s.inputs {
        let max = salu.word_bits * if reg.paired { 2 } else { 1 };
        if *w > max {
            s.warnings.push(format!(
                "`{}` ({w} bits) is wider than the stateful ALU's {max}-bit input; the hardware would use its low bits",
                names.loc(*l)
            ));
        }
    }
    if s.big_consts.len() as u32 > salu.const_registers {
        let list: Vec<String> = s.big_consts.iter().map(|c| c.to_string()).collect();
        errors.push((
            format!(
                "RegisterAction `{ra_name}` uses {} constants outside {}..{} ({}); a stateful ALU holds {} in its constant registers",
                s.big_consts.len(),
                salu.const_min,
                salu.const_max,
                list.join(", "),
                salu.const_registers
            ),
            vec!["pass large constants in as a PHV field or a RegisterParam".into()],
        ));
    }
    if s.output_words > salu.output_words {
        errors.push((
            format!(
                "RegisterAction `{ra_name}` writes output rv{}; a {target} stateful ALU has {} output word{}",
                s.output_words,
                salu.output_words,
                if salu.output_words == 1 { "" } else { "s" }
            ),
            vec!["return one value, or build for tofino2 (four output words)".into()],
        ));
    }
    let out_bits = 32 * salu.output_words;
    if u32::from(ra.output_width) > out_bits {
        errors.push((
            format!(
                "RegisterAction `{ra_name}` returns {} bits; a {target} stateful ALU outputs {} 32-bit word{}",
                ra.output_width,
                salu.output_words,
                if salu.output_words == 1 { "" } else { "s" }
            ),
            vec!["return one word and read the other in a second pass, or build for tofino2".into()],
        ));
    }
    if reg.width == 1 && s.arithmetic {
        s.warnings.push(format!(
            "register `{}` has 1-bit words, which the hardware can only set, clear or read",
            reg.name
        ));
    }
    for (msg, help) in errors {
        let mut issue = ResourceIssue::error(IssueKind::SaluTooComplex, obj, msg);
        issue.help = help;
        issue = issue.with_note(format!(
            "RegisterAction `{ra_name}` runs on the stateful ALU of register `{}`",
            reg.name
        ));
        out.push(issue);
    }
    for w in s.warnings {
        out.push(
            ResourceIssue::warning(
                IssueKind::EmulatorOnly,
                obj,
                format!("in RegisterAction `{ra_name}`: {w}"),
            )
            .with_note("the emulator runs this, but a Tofino stateful ALU would not"),
        );
    }
}

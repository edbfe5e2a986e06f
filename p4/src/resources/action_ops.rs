//! Warnings for action code the emulator runs but Tofino's action ALUs (or bf-p4c) would not:
//! multiplication and division by anything but a power of two, arithmetic wider than a pair of
//! 32-bit PHV containers, several operations in one assignment, and reading a field after the
//! same action computed it (action instructions of one stage run in parallel).

use pipeline::ir::{ActionId, BinOp, Expr, Gress, Pipeline, Place, Stmt, TableBranches, TableId};

use super::effects::{overlap, Collector, Effects, Loc, Mode};
use super::issue::{IssueKind, ObjectRef, ResourceIssue};
use super::names::{binop_str, Names};
use super::profile::Profile;

fn const_value(e: &Expr) -> Option<u128> {
    match e {
        Expr::Const { value, .. } => Some(*value),
        Expr::Cast { arg, .. } => const_value(arg),
        _ => None,
    }
}

fn is_pow2_const(e: &Expr) -> bool {
    const_value(e).is_some_and(|v| v.is_power_of_two())
}

/// Whether `e` is made of constants only (bf-p4c folds it to one).
fn is_const(e: &Expr) -> bool {
    match e {
        Expr::Const { .. } => true,
        Expr::Cast { arg, .. } | Expr::Unary { arg, .. } => is_const(arg),
        Expr::Binary { a, b, .. } => is_const(a) && is_const(b),
        _ => false,
    }
}

/// The operand that is left when a chain of wrapping additions and subtractions of constants
/// of one width, such as `x - 20 - 8 + 1`, is folded into one addition: p4c's strength
/// reduction turns `x - c` into `x + (-c)` and its reassociation `(x + c1) + c2` into
/// `x + (c1 + c2)`, so bf-p4c needs one ALU operation for the whole chain.
fn const_chain_base(e: &Expr) -> Option<&Expr> {
    let Expr::Binary {
        op: BinOp::Add | BinOp::Sub,
        width,
        ..
    } = e
    else {
        return None;
    };
    let mut base = e;
    let mut folded = false;
    loop {
        match base {
            Expr::Binary {
                op: op @ (BinOp::Add | BinOp::Sub),
                a,
                b,
                width: w,
                ..
            } if w == width => {
                if is_const(b) {
                    base = a;
                } else if *op == BinOp::Add && is_const(a) {
                    base = b;
                } else {
                    break;
                }
                folded = true;
            }
            _ => break,
        }
    }
    folded.then_some(base)
}

/// Operations in `e` that are not on constants only.
fn op_count(e: &Expr) -> u32 {
    match e {
        Expr::Binary { a, b, .. } => {
            if is_const(a) && is_const(b) {
                0
            } else if let Some(base) = const_chain_base(e) {
                1 + op_count(base)
            } else {
                1 + op_count(a) + op_count(b)
            }
        }
        Expr::Unary { arg, .. } => {
            if is_const(arg) {
                0
            } else {
                1 + op_count(arg)
            }
        }
        Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => op_count(arg),
        Expr::Ternary {
            cond, then, els, ..
        } => 1 + op_count(cond) + op_count(then) + op_count(els),
        _ => 0,
    }
}

struct Scan<'a> {
    names: &'a Names<'a>,
    p: &'a Profile,
    found: Vec<String>,
}

impl Scan<'_> {
    fn note(&mut self, s: String) {
        if !self.found.contains(&s) {
            self.found.push(s);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Binary {
                op, a, b, width, ..
            } => {
                let shown = || {
                    format!(
                        "{} {} {}",
                        self.names.expr(a),
                        binop_str(*op),
                        self.names.expr(b)
                    )
                };
                match op {
                    BinOp::Mul if !is_pow2_const(a) && !is_pow2_const(b) => {
                        self.note(format!("`{}`: Tofino action ALUs cannot multiply (only by a power of two, as a shift)", shown()))
                    }
                    BinOp::Div | BinOp::Mod if !is_pow2_const(b) => {
                        self.note(format!("`{}`: Tofino action ALUs cannot divide (only by a power of two, as a shift or mask)", shown()))
                    }
                    BinOp::Add | BinOp::Sub | BinOp::SatAdd | BinOp::SatSub
                        if *width > 2 * self.p.alu_container_bits =>
                    {
                        self.note(format!(
                            "`{}` is {width}-bit arithmetic; Tofino adds at most two {}-bit containers with carry",
                            shown(),
                            self.p.alu_container_bits
                        ))
                    }
                    _ => {}
                }
                self.expr(a);
                self.expr(b);
            }
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } | Expr::Slice { arg, .. } => {
                self.expr(arg)
            }
            Expr::Ternary {
                cond, then, els, ..
            } => {
                self.expr(cond);
                self.expr(then);
                self.expr(els);
            }
            Expr::Concat { hi, lo, .. } => {
                self.expr(hi);
                self.expr(lo);
            }
            _ => {}
        }
    }
}

/// Checks every action of `pipe`, blaming a table that uses it (else the pipeline).
/// Scans a straight-line body's assignments; `track_computed` also flags reads of values the
/// same body computed (inside one action, where instructions run in parallel).
fn scan_body(body: &[Stmt], scan: &mut Scan<'_>, col: &mut Collector<'_>, track_computed: bool) {
    // Reads of values computed earlier (copies of constants, parameters and fields are
    // substituted by bf-p4c, so they are fine).
    let mut computed: Vec<Loc> = Vec::new();
    for s in body {
        let Stmt::Assign { dst, value } = s else {
            continue;
        };
        scan.expr(value);
        let ops = op_count(value);
        if ops > 1 && !matches!(value, Expr::RegisterExecute { .. } | Expr::Hash { .. }) {
            let shown = scan.names.expr(value);
            scan.note(format!(
                "`{shown}` needs {ops} operations; a Tofino action does one operation per destination"
            ));
        }
        if !track_computed {
            continue;
        }
        let mut fx = Effects::default();
        col.expr(value, &mut fx, Mode::Action);
        if let Some(l) = overlap(&fx.action_reads, &computed) {
            let shown = scan.names.loc(l);
            scan.note(format!(
                "reads `{shown}` after computing it in the same action; Tofino action instructions run in parallel and read the values from before the action"
            ));
        }
        let computed_here = !matches!(
            value,
            Expr::Const { .. } | Expr::Param { .. } | Expr::Field(_) | Expr::Valid(_)
        );
        if computed_here {
            match dst {
                Place::Field(f) => computed.push(Loc::field(*f)),
                Place::FieldSlice { field, hi, lo } => computed.push(Loc::slice(*field, *hi, *lo)),
                _ => {}
            }
        }
    }
}

/// Statements of a control body outside tables (each runs as its own `tbl_act` action).
fn scan_control(body: &[Stmt], scan: &mut Scan<'_>, col: &mut Collector<'_>) {
    for s in body {
        match s {
            Stmt::Assign { .. } => scan_body(std::slice::from_ref(s), scan, col, false),
            Stmt::If { then, els, .. } => {
                scan_control(then, scan, col);
                scan_control(els, scan, col);
            }
            Stmt::ApplyTable { branches, .. } => match branches {
                TableBranches::None => {}
                TableBranches::HitMiss { hit, miss } => {
                    scan_control(hit, scan, col);
                    scan_control(miss, scan, col);
                }
                TableBranches::ActionRun { cases, default } => {
                    for (_, b) in cases {
                        scan_control(b, scan, col);
                    }
                    scan_control(default, scan, col);
                }
            },
            _ => {}
        }
    }
}

const NOTE: &str = "the emulator runs this, but bf-p4c would reject it or need a different action";

/// Checks every action of `pipe` (blaming a table that uses it, else the pipeline) and the
/// statements of both controls outside tables.
pub(crate) fn check_actions(pi: usize, pipe: &Pipeline, p: &Profile, out: &mut Vec<ResourceIssue>) {
    for (ai, action) in pipe.actions.iter().enumerate() {
        let id = ActionId(ai as u32);
        let table = pipe
            .tables
            .iter()
            .position(|t| t.actions.iter().any(|a| a.action == id));
        let (obj, g) = match table {
            Some(t) => {
                let g = match pipe.tables[t].gress {
                    Gress::Ingress => &pipe.ingress,
                    Gress::Egress => &pipe.egress,
                };
                (ObjectRef::Table(pi, TableId(t as u32)), g)
            }
            None => (ObjectRef::Pipeline(pi), &pipe.ingress),
        };
        let names = Names::new(pipe, &g.phv);
        let mut scan = Scan {
            names: &names,
            p,
            found: Vec::new(),
        };
        let mut col = Collector::new(pipe, &g.phv);
        scan_body(&action.body, &mut scan, &mut col, true);
        for f in scan.found {
            out.push(
                ResourceIssue::warning(
                    IssueKind::EmulatorOnly,
                    obj,
                    format!("in action `{}`: {f}", action.name),
                )
                .with_note(NOTE),
            );
        }
    }
    for g in [&pipe.ingress, &pipe.egress] {
        let names = Names::new(pipe, &g.phv);
        let mut scan = Scan {
            names: &names,
            p,
            found: Vec::new(),
        };
        let mut col = Collector::new(pipe, &g.phv);
        scan_control(&g.control.body, &mut scan, &mut col);
        for f in scan.found {
            out.push(
                ResourceIssue::warning(
                    IssueKind::EmulatorOnly,
                    ObjectRef::Pipeline(pi),
                    format!("in control `{}`: {f}", g.control.name),
                )
                .with_note(NOTE),
            );
        }
    }
}

//! A program's IR as text: what a P4 program became, for a reader (`pisa check --emit-ir`) and
//! for golden tests. Expressions and locations are written back as P4 ([`crate::names`]);
//! each pipeline lists its objects, then per gress the PHV layout, the parser states, the
//! control and the deparser, statements indented by nesting. Stable: the same program always
//! prints the same text.

use std::fmt::{self, Write as _};

use crate::ir::{
    ActionCall, Block, GressProgram, KeyMatch, KeysetElem, NextState, Pipeline, Place, Program,
    Stmt, TableBranches, Transition,
};
use crate::names::Names;

/// The whole program as text.
pub fn program_text(p: &Program) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program {} for {:?}, pipes {:?}",
        p.name, p.target, p.pipe_map
    );
    for pl in &p.pipelines {
        let _ = pipeline_text(&mut s, pl);
    }
    s
}

fn pipeline_text(s: &mut String, pl: &Pipeline) -> fmt::Result {
    writeln!(s, "\npipeline {}", pl.name)?;
    let names = Names::new(pl, &pl.ingress.phv);
    for t in &pl.tables {
        let keys: Vec<String> = t
            .keys
            .iter()
            .map(|k| format!("{}: {}", k.name, k.kind))
            .collect();
        let acts: Vec<&str> = t
            .actions
            .iter()
            .filter_map(|a| pl.actions.get(a.action.index()).map(|x| x.name.as_str()))
            .collect();
        writeln!(
            s,
            "  table {} ({}, stage {}) size {} key [{}] actions [{}] default {}{}",
            t.name,
            t.gress,
            t.stage,
            t.size,
            keys.join(", "),
            acts.join(", "),
            call_text(pl, &t.default_action),
            if t.idle_timeout { " idle_timeout" } else { "" }
        )?;
        for e in &t.const_entries {
            let ks: Vec<String> = e.keys.iter().map(key_text).collect();
            writeln!(
                s,
                "    const ({}){} -> {}",
                ks.join(", "),
                e.priority
                    .map(|p| format!(" priority {p}"))
                    .unwrap_or_default(),
                call_text(pl, &e.action)
            )?;
        }
    }
    for a in &pl.actions {
        let ps: Vec<String> = a
            .params
            .iter()
            .map(|p| format!("bit<{}> {}", p.width, p.name))
            .collect();
        writeln!(s, "  action {}({})", a.name, ps.join(", "))?;
        block_text(s, pl, &names, &a.body, 2)?;
    }
    for r in &pl.registers {
        writeln!(
            s,
            "  register {} ({}) {} x bit<{}>{}",
            r.name,
            r.gress,
            r.size,
            r.width,
            if r.paired { " paired" } else { "" }
        )?;
    }
    for ra in &pl.register_actions {
        let reg = pl
            .registers
            .get(ra.register.index())
            .map_or("?", |r| r.name.as_str());
        writeln!(s, "  register_action {} on {reg}", ra.name)?;
        block_text(s, pl, &names, &ra.body, 2)?;
        for (what, b) in [("overflow", &ra.overflow), ("underflow", &ra.underflow)] {
            if let Some(b) = b {
                writeln!(s, "  {what}:")?;
                block_text(s, pl, &names, b, 3)?;
            }
        }
    }
    for h in &pl.hashes {
        writeln!(s, "  hash {} bit<{}> {:?}", h.name, h.width, h.algorithm)?;
    }
    for c in &pl.counters {
        let acc = accounting_text(c.bytes);
        writeln!(s, "  counter {} {:?} size {}{acc}", c.name, c.kind, c.size)?;
    }
    for m in &pl.meters {
        let acc = accounting_text(m.bytes);
        writeln!(s, "  meter {} {:?} size {}{acc}", m.name, m.kind, m.size)?;
    }
    for f in &pl.filters {
        let kind = match f.kind {
            crate::ir::FilterKind::Lpf => "lpf".to_string(),
            crate::ir::FilterKind::Wred {
                drop_value,
                no_drop_value,
            } => format!("wred drop {drop_value:#x} no_drop {no_drop_value:#x}"),
        };
        let table = f
            .direct_table
            .and_then(|t| pl.tables.get(t.index()))
            .map_or(String::new(), |t| format!(" direct on {}", t.name));
        writeln!(s, "  filter {} {kind} size {}{table}", f.name, f.size)?;
    }
    for v in &pl.value_sets {
        let fields: Vec<String> = v
            .fields
            .iter()
            .map(|(n, w)| format!("{n}: bit<{w}>"))
            .collect();
        writeln!(
            s,
            "  value_set {} {:?} size {} {{ {} }}",
            v.name,
            v.gress,
            v.size,
            fields.join(", ")
        )?;
    }
    for ap in &pl.action_profiles {
        let tables: Vec<&str> = ap
            .tables
            .iter()
            .filter_map(|t| pl.tables.get(t.index()).map(|x| x.name.as_str()))
            .collect();
        write!(
            s,
            "  action_profile {} size {} for [{}]",
            ap.name,
            ap.size,
            tables.join(", ")
        )?;
        if let Some(sel) = &ap.selector {
            write!(
                s,
                " selector {} groups {} of {}",
                sel.name, sel.num_groups, sel.max_group_size
            )?;
            if sel.mode == crate::ir::SelectorMode::Resilient {
                write!(s, " resilient")?;
            }
            if !sel.scramble {
                write!(s, " unscrambled")?;
            }
            if let Some(r) = sel.status.and_then(|r| pl.registers.get(r.index())) {
                write!(s, " status {}", r.name)?;
            }
        }
        writeln!(s)?;
    }
    gress_text(s, pl, "ingress", &pl.ingress)?;
    gress_text(s, pl, "egress", &pl.egress)?;
    match &pl.ghost {
        Some(g) => gress_text(s, pl, "ghost", g),
        None => Ok(()),
    }
}

fn gress_text(s: &mut String, pl: &Pipeline, name: &str, g: &GressProgram) -> fmt::Result {
    let names = Names::new(pl, &g.phv);
    writeln!(s, "  {name}: phv {} bytes", g.phv.bytes)?;
    for h in &g.phv.headers {
        writeln!(
            s,
            "    header {}: {} @{}+{}",
            h.name, h.type_name, h.byte_offset, h.byte_len
        )?;
    }
    for v in &g.phv.varbits {
        let h = g
            .phv
            .headers
            .get(v.header.index())
            .map_or("?", |h| h.name.as_str());
        writeln!(
            s,
            "    varbit {h}: bits {}+{}, length @{}+{}",
            v.field.offset, v.field.width, v.len.offset, v.len.width
        )?;
    }
    writeln!(s, "    parser {}", g.parser.name)?;
    for (i, st) in g.parser.states.iter().enumerate() {
        let start = if i == g.parser.start.index() {
            " (start)"
        } else {
            ""
        };
        writeln!(s, "      state {}{start}", st.name)?;
        block_text(s, pl, &names, &st.body, 4)?;
        match &st.transition {
            Transition::Direct(n) => writeln!(s, "        -> {}", next_text(g, n))?,
            Transition::Select {
                keys,
                cases,
                default,
            } => {
                let ks: Vec<String> = keys.iter().map(|k| names.expr(k)).collect();
                writeln!(s, "        select ({})", ks.join(", "))?;
                for c in cases {
                    let es: Vec<String> = c.keyset.iter().map(|k| keyset_text(pl, k)).collect();
                    writeln!(
                        s,
                        "          ({}) -> {}",
                        es.join(", "),
                        next_text(g, &c.next)
                    )?;
                }
                writeln!(s, "          default -> {}", next_text(g, default))?;
            }
        }
    }
    writeln!(s, "    control {}", g.control.name)?;
    block_text(s, pl, &names, &g.control.body, 3)?;
    writeln!(s, "    deparser {}", g.deparser.name)?;
    block_text(s, pl, &names, &g.deparser.body, 3)
}

/// A counter's or meter's byte accounting, when it is not the whole packet at egress entry.
fn accounting_text(b: crate::ir::ByteAccounting) -> String {
    let mut t = String::new();
    if b.adjust != 0 {
        t.push_str(&format!(" adjust_byte_count {}", b.adjust));
    }
    if b.true_egress {
        t.push_str(" true_egress_accounting");
    }
    t
}

fn next_text(g: &GressProgram, n: &NextState) -> String {
    match n {
        NextState::Accept => "accept".into(),
        NextState::Reject => "reject".into(),
        NextState::NoMatch => "no_match".into(),
        NextState::State(id) => g
            .parser
            .states
            .get(id.index())
            .map_or_else(|| format!("state#{}", id.0), |st| st.name.clone()),
    }
}

fn keyset_text(pl: &Pipeline, k: &KeysetElem) -> String {
    match k {
        KeysetElem::Mask { value, mask } => format!("{value:#x} &&& {mask:#x}"),
        KeysetElem::Range { lo, hi } => format!("{lo:#x}..{hi:#x}"),
        KeysetElem::ValueSet(id) => pl.value_sets.get(id.index()).map_or_else(
            || format!("value_set#{}", id.0),
            |v| format!("value_set {}", v.name),
        ),
    }
}

fn key_text(k: &KeyMatch) -> String {
    match k {
        KeyMatch::Exact(v) => format!("{v:#x}"),
        KeyMatch::Ternary { value, mask } => format!("{value:#x} &&& {mask:#x}"),
        KeyMatch::Lpm { value, prefix_len } => format!("{value:#x}/{prefix_len}"),
        KeyMatch::Range { lo, hi } => format!("{lo:#x}..{hi:#x}"),
    }
}

fn call_text(pl: &Pipeline, c: &ActionCall) -> String {
    let name = pl
        .actions
        .get(c.action.index())
        .map_or_else(|| format!("action#{}", c.action.0), |a| a.name.clone());
    let args: Vec<String> = c.args.iter().map(|v| format!("{v:#x}")).collect();
    format!("{name}({})", args.join(", "))
}

fn place_text(names: &Names<'_>, p: &Place) -> String {
    match p {
        Place::Field(f) => names.field(*f),
        Place::FieldSlice { field, hi, lo } => format!("{}[{hi}:{lo}]", names.field(*field)),
        Place::RegValue(w) => format!("value.{w:?}"),
        Place::RegOutput => "rv".into(),
        Place::RegOutputN(k) => format!("rv{k}"),
    }
}

fn block_text(
    s: &mut String,
    pl: &Pipeline,
    n: &Names<'_>,
    b: &Block,
    depth: usize,
) -> fmt::Result {
    for st in b {
        stmt_text(s, pl, n, st, depth)?;
    }
    Ok(())
}

/// One statement (and what it contains) at `depth` levels of indentation.
fn stmt_text(s: &mut String, pl: &Pipeline, n: &Names<'_>, st: &Stmt, depth: usize) -> fmt::Result {
    let pad = "  ".repeat(depth);
    let header = |h: &crate::ir::HeaderId| {
        n.phv
            .headers
            .get(h.index())
            .map_or_else(|| format!("header#{}", h.0), |x| x.name.clone())
    };
    match st {
        Stmt::Assign { dst, value } => {
            writeln!(s, "{pad}{} = {};", place_text(n, dst), n.expr(value))
        }
        Stmt::CopyHeader { dst, src } => writeln!(s, "{pad}{} = {};", header(dst), header(src)),
        Stmt::SetValid { header: h, valid } => writeln!(
            s,
            "{pad}{}.{}();",
            header(h),
            if *valid { "setValid" } else { "setInvalid" }
        ),
        Stmt::If {
            cond,
            then,
            els,
            stage,
        } => {
            match *stage {
                crate::ir::DEPARSER_STAGE => {
                    writeln!(s, "{pad}if ({}) {{  // deparser", n.expr(cond))?
                }
                st => writeln!(s, "{pad}if ({}) {{  // stage {st}", n.expr(cond))?,
            }
            block_text(s, pl, n, then, depth + 1)?;
            if !els.is_empty() {
                writeln!(s, "{pad}}} else {{")?;
                block_text(s, pl, n, els, depth + 1)?;
            }
            writeln!(s, "{pad}}}")
        }
        Stmt::ApplyTable { table, branches } => {
            let t = pl
                .tables
                .get(table.index())
                .map_or_else(|| format!("table#{}", table.0), |t| t.name.clone());
            match branches {
                TableBranches::None => writeln!(s, "{pad}{t}.apply();"),
                TableBranches::HitMiss { hit, miss } => {
                    writeln!(s, "{pad}if ({t}.apply().hit) {{")?;
                    block_text(s, pl, n, hit, depth + 1)?;
                    writeln!(s, "{pad}}} else {{")?;
                    block_text(s, pl, n, miss, depth + 1)?;
                    writeln!(s, "{pad}}}")
                }
                TableBranches::ActionRun { cases, default } => {
                    writeln!(s, "{pad}switch ({t}.apply().action_run) {{")?;
                    for (a, b) in cases {
                        let an = pl.actions.get(a.index()).map_or("?", |x| x.name.as_str());
                        writeln!(s, "{pad}  {an}:")?;
                        block_text(s, pl, n, b, depth + 2)?;
                    }
                    writeln!(s, "{pad}  default:")?;
                    block_text(s, pl, n, default, depth + 2)?;
                    writeln!(s, "{pad}}}")
                }
            }
        }
        Stmt::CallAction { action, args } => {
            let an = pl
                .actions
                .get(action.index())
                .map_or("?", |x| x.name.as_str());
            let a: Vec<String> = args.iter().map(|e| n.expr(e)).collect();
            writeln!(s, "{pad}{an}({});", a.join(", "))
        }
        Stmt::Count { counter, index } => {
            let c = pl
                .counters
                .get(counter.index())
                .map_or("?", |x| x.name.as_str());
            writeln!(s, "{pad}{c}.count({});", n.expr(index))
        }
        Stmt::CountDirect { counter } => {
            let c = pl
                .counters
                .get(counter.index())
                .map_or("?", |x| x.name.as_str());
            writeln!(s, "{pad}{c}.count();")
        }
        Stmt::RegisterExecute {
            action,
            index,
            outs,
        } => {
            let ra = pl
                .register_actions
                .get(action.index())
                .map_or("?", |x| x.name.as_str());
            let o: Vec<String> = outs
                .iter()
                .map(|p| p.map_or_else(|| "_".into(), |p| place_text(n, &p)))
                .collect();
            writeln!(
                s,
                "{pad}({}) = {ra}.execute({});",
                o.join(", "),
                n.expr(index)
            )
        }
        Stmt::RegisterClear { register, lo, hi } => {
            let r = pl
                .registers
                .get(register.index())
                .map_or("?", |x| x.name.as_str());
            writeln!(s, "{pad}{r}.clear({lo:#x}, {hi:#x});")
        }
        Stmt::Exit => writeln!(s, "{pad}exit;"),
        Stmt::Return => writeln!(s, "{pad}return;"),
        Stmt::StackShift { stack, count, push } => {
            let name = n
                .phv
                .stacks
                .get(stack.index())
                .map_or("?", |x| x.name.as_str());
            let f = if *push { "push_front" } else { "pop_front" };
            writeln!(s, "{pad}{name}.{f}({count});")
        }
        other => io_stmt_text(s, pl, n, other, &pad),
    }
}

/// Parser and deparser statements: extracts, checksums, emits, digests.
fn io_stmt_text(s: &mut String, pl: &Pipeline, n: &Names<'_>, st: &Stmt, pad: &str) -> fmt::Result {
    let header = |h: &crate::ir::HeaderId| {
        n.phv
            .headers
            .get(h.index())
            .map_or_else(|| format!("header#{}", h.0), |x| x.name.clone())
    };
    match st {
        Stmt::Extract(h) => writeln!(s, "{pad}extract({});", header(h)),
        Stmt::ExtractVarbit { header: h, bits } => {
            writeln!(s, "{pad}extract({}, {});", header(h), n.expr(bits))
        }
        Stmt::ExtractNext(st) => {
            let name = n
                .phv
                .stacks
                .get(st.index())
                .map_or("?", |x| x.name.as_str());
            writeln!(s, "{pad}extract({name}.next);")
        }
        Stmt::Advance(e) => writeln!(s, "{pad}advance({});", n.expr(e)),
        Stmt::CounterRange { cond } => {
            writeln!(s, "{pad}if ({}) parser_error(CounterRange);", n.expr(cond))
        }
        Stmt::ChecksumAdd { checksum, inputs } | Stmt::ChecksumSubtract { checksum, inputs } => {
            let op = if matches!(st, Stmt::ChecksumAdd { .. }) {
                "add"
            } else {
                "subtract"
            };
            let c = pl
                .checksums
                .get(checksum.index())
                .map_or("?", |x| x.name.as_str());
            let i: Vec<String> = inputs.iter().map(|e| n.expr(e)).collect();
            writeln!(s, "{pad}{c}.{op}({{{}}});", i.join(", "))
        }
        Stmt::ChecksumDeposit { checksum, dst } => {
            let c = pl
                .checksums
                .get(checksum.index())
                .map_or("?", |x| x.name.as_str());
            writeln!(s, "{pad}{c}.subtract_all_and_deposit({});", n.field(*dst))
        }
        Stmt::Emit(h) => writeln!(s, "{pad}emit({});", header(h)),
        Stmt::MirrorEmit {
            session,
            header: hd,
        } => {
            let i: Vec<String> = hd.iter().map(|e| n.expr(e)).collect();
            writeln!(
                s,
                "{pad}mirror.emit({}, {{{}}});",
                n.expr(session),
                i.join(", ")
            )
        }
        Stmt::ResubmitEmit { header: hd } => {
            let i: Vec<String> = hd.iter().map(|e| n.expr(e)).collect();
            writeln!(s, "{pad}resubmit.emit({{{}}});", i.join(", "))
        }
        Stmt::PktgenEmit { header: hd } => {
            let i: Vec<String> = hd.iter().map(|e| n.expr(e)).collect();
            writeln!(s, "{pad}pktgen.emit({{{}}});", i.join(", "))
        }
        Stmt::DigestPack { digest, fields } => {
            let d = pl
                .digests
                .get(digest.index())
                .map_or("?", |x| x.name.as_str());
            let i: Vec<String> = fields.iter().map(|e| n.expr(e)).collect();
            writeln!(s, "{pad}{d}.pack({{{}}});", i.join(", "))
        }
        _ => Ok(()),
    }
}

//! A short, stable text summary of a lowered program (PHV, parser states, tables, actions,
//! externs), used by the golden tests and by `pisa check --ir`-style tools.

use std::fmt::Write as _;

use pipeline::ir::{self, NextState, Transition};

fn next(p: &ir::Parser, n: &NextState) -> String {
    match n {
        NextState::Accept => "accept".into(),
        NextState::Reject => "reject".into(),
        NextState::NoMatch => "no_match".into(),
        NextState::State(s) => p
            .states
            .get(s.index())
            .map(|st| st.name.clone())
            .unwrap_or_else(|| format!("?{}", s.0)),
    }
}

fn count_stmts(b: &[ir::Stmt]) -> usize {
    b.iter()
        .map(|s| {
            1 + match s {
                ir::Stmt::If { then, els, .. } => count_stmts(then) + count_stmts(els),
                ir::Stmt::ApplyTable { branches, .. } => match branches {
                    ir::TableBranches::None => 0,
                    ir::TableBranches::HitMiss { hit, miss } => {
                        count_stmts(hit) + count_stmts(miss)
                    }
                    ir::TableBranches::ActionRun { cases, default } => {
                        cases.iter().map(|(_, b)| count_stmts(b)).sum::<usize>()
                            + count_stmts(default)
                    }
                },
                _ => 0,
            }
        })
        .sum()
}

fn gress(out: &mut String, label: &str, g: &ir::GressProgram) {
    let _ = writeln!(
        out,
        "  {label}: phv {} bytes, {} fields, prefix {} bytes, {} intrinsics bound",
        g.phv.bytes,
        g.phv.fields.len(),
        g.prefix.bytes,
        g.intrinsics.fields.len()
    );
    for h in &g.phv.headers {
        let _ = writeln!(
            out,
            "    header {} : {} @{}+{}",
            h.name, h.type_name, h.byte_offset, h.byte_len
        );
    }
    for s in &g.phv.stacks {
        let _ = writeln!(out, "    stack {} [{}]", s.name, s.elements.len());
    }
    let p = &g.parser;
    let _ = writeln!(
        out,
        "    parser {} start {}",
        p.name,
        next(p, &NextState::State(p.start))
    );
    for st in &p.states {
        let t = match &st.transition {
            Transition::Direct(n) => next(p, n),
            Transition::Select {
                keys,
                cases,
                default,
            } => {
                let cs: Vec<String> = cases.iter().map(|c| next(p, &c.next)).collect();
                format!(
                    "select/{} [{}] default {}",
                    keys.len(),
                    cs.join(", "),
                    next(p, default)
                )
            }
        };
        let _ = writeln!(
            out,
            "      state {} ({} stmts) -> {t}",
            st.name,
            st.body.len()
        );
    }
    let _ = writeln!(
        out,
        "    control {}: {} stmts",
        g.control.name,
        count_stmts(&g.control.body)
    );
    let _ = writeln!(
        out,
        "    deparser {}: {} stmts",
        g.deparser.name,
        count_stmts(&g.deparser.body)
    );
}

/// The summary text.
pub fn summary(p: &ir::Program) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "program {} for {} pipes {:?}",
        p.name,
        p.target.name(),
        p.pipe_map
    );
    for pl in &p.pipelines {
        let _ = writeln!(out, "pipeline {}", pl.name);
        gress(&mut out, "ingress", &pl.ingress);
        gress(&mut out, "egress", &pl.egress);
        if let Some(g) = &pl.ghost {
            let _ = writeln!(
                out,
                "  ghost: control {} ({} stmts), run on each queue-depth update",
                g.control.name,
                count_stmts(&g.control.body)
            );
        }
        let aname = |a: ir::ActionId| {
            pl.actions
                .get(a.index())
                .map(|x| x.name.clone())
                .unwrap_or_default()
        };
        for t in &pl.tables {
            let keys: Vec<String> = t
                .keys
                .iter()
                .map(|k| format!("{}:{}", k.name, k.kind))
                .collect();
            let acts: Vec<String> = t
                .actions
                .iter()
                .map(|a| {
                    let mut s = aname(a.action);
                    if a.default_only {
                        s.push_str("@defaultonly");
                    }
                    if a.table_only {
                        s.push_str("@tableonly");
                    }
                    s
                })
                .collect();
            let _ = writeln!(
                out,
                "  table {} ({}) keys [{}] actions [{}] default {}{:?}{} size {} entries {}{}",
                t.name,
                t.gress,
                keys.join(", "),
                acts.join(", "),
                aname(t.default_action.action),
                t.default_action.args,
                if t.default_action_const { " const" } else { "" },
                t.size,
                t.const_entries.len(),
                match (t.direct_counter, t.direct_meter) {
                    (Some(c), _) => format!(" counter {}", pl.counters[c.index()].name),
                    (_, Some(m)) => format!(" meter {}", pl.meters[m.index()].name),
                    _ => String::new(),
                }
            );
        }
        for a in &pl.actions {
            let ps: Vec<String> = a
                .params
                .iter()
                .map(|p| format!("{}:{}", p.name, p.width))
                .collect();
            let _ = writeln!(
                out,
                "  action {}({}) {} stmts",
                a.name,
                ps.join(", "),
                count_stmts(&a.body)
            );
        }
        for r in &pl.registers {
            let _ = writeln!(
                out,
                "  register {} ({}) {}x{}{}",
                r.name,
                r.gress,
                r.size,
                r.width,
                match &r.word_names {
                    Some((a, b)) => format!(" pair({a}, {b})"),
                    None => String::new(),
                }
            );
        }
        for ra in &pl.register_actions {
            let _ = writeln!(
                out,
                "  register_action {} on {} out {} {} stmts",
                ra.name,
                pl.registers
                    .get(ra.register.index())
                    .map(|r| r.name.as_str())
                    .unwrap_or("?"),
                ra.output_width,
                count_stmts(&ra.body)
            );
        }
        for h in &pl.hashes {
            let _ = writeln!(out, "  hash {} {:?} width {}", h.name, h.algorithm, h.width);
        }
        for c in &pl.counters {
            let _ = writeln!(out, "  counter {} {:?} size {}", c.name, c.kind, c.size);
        }
        for m in &pl.meters {
            let _ = writeln!(out, "  meter {} {:?} size {}", m.name, m.kind, m.size);
        }
        for c in &pl.checksums {
            let _ = writeln!(out, "  checksum {} ({})", c.name, c.gress);
        }
        for d in &pl.digests {
            let _ = writeln!(out, "  digest {} {:?}", d.name, d.fields);
        }
    }
    out
}

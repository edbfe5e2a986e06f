//! The Tofino resource check: places a lowered program's tables, gateways and registers into
//! MAU stages the way bf-p4c would (approximately), writes the chosen stages into the IR, and
//! rejects what the hardware could not run — with the reason and a `help:` line — or warns
//! where the emulator is more permissive than the hardware.
//!
//! Pieces: [`profile`] (what a target has), `units` (what takes a stage slot, and the
//! dependencies between them), `demand` (what each needs), `schedule` (greedy list scheduling),
//! `salu` / `gateway` / `single_access` / `action_ops` (rule checks), `phv` (a lower bound on
//! the PHV container bits, refused when even that cannot fit), [`Report`] (the outcome).
//!
//! Entry points: [`place`] and [`place_with_warnings`]. Issues point at IR objects through
//! [`ObjectRef`]; the frontend maps those to source spans.

mod action_ops;
mod demand;
mod dep_index;
pub(crate) mod effects;
mod extern_rules;
mod gateway;
mod ignore;
mod issue;
pub mod layout;
mod names;
mod parse_depth;
mod parser_rules;
mod phv;
mod pins;
pub mod profile;
mod report;
mod salu;
mod schedule;
mod shared_profile;
mod single_access;
mod split;
mod units;

use std::collections::BTreeMap;

use pipeline::ir::{
    Expr, Gress, Pipeline, Program, RegisterActionId, RegisterId, Stmt, TableBranches, TableId,
    Target,
};

pub use issue::{IssueKind, ObjectRef, ResourceIssue};
pub use profile::{GatewayProfile, PhvProfile, Profile, SaluProfile, TOFINO1, TOFINO2};
pub use report::{Capacity, GressReport, PhvUse, PipelineReport, Report, StageReport, Totals};

use demand::{Demand, StageUse, Stateful};
use names::Names;
use schedule::{Failure, Placement, Why};
use units::{DepKind, Unit, UnitKind};

/// Places `program` on `target`: on success, the report (warnings are dropped; see
/// [`place_with_warnings`]). On failure, every issue found (errors first, then warnings).
///
/// Chosen stages are written into `Table::stage`, `Register::stage` and `Stmt::If::stage` in
/// both cases (on failure, as far as placement got: useful for traces of a program run anyway).
pub fn place(program: &mut Program, target: Target) -> Result<Report, Vec<ResourceIssue>> {
    place_with_warnings(program, target).map(|(report, _)| report)
}

/// Like [`place`], also returning the warnings of a program that fits.
pub fn place_with_warnings(
    program: &mut Program,
    target: Target,
) -> Result<(Report, Vec<ResourceIssue>), Vec<ResourceIssue>> {
    place_with_hints(program, target, &[])
}

/// Like [`place_with_warnings`], with what the source says about the tables beyond the IR
/// (indexed like `Program::pipelines`): ALPM / ATCAM layouts, which size those tables rather
/// than as plain tables, and `@ignore_table_dependency` pairs.
pub fn place_with_hints(
    program: &mut Program,
    target: Target,
    hints: &[layout::Hints],
) -> Result<(Report, Vec<ResourceIssue>), Vec<ResourceIssue>> {
    let p = Profile::of(target);
    let mut issues = Vec::new();
    let mut report = Report {
        target: p.name().to_string(),
        stages_per_gress: u32::from(p.stages),
        capacity: Capacity {
            logical_tables: p.logical_tables,
            stateful_alus: p.stateful_alus,
            hash_bits: p.hash_bits(),
            sram_blocks: p.sram_blocks,
            tcam_blocks: p.tcam_blocks,
            exact_xbar_bytes: p.exact_xbar_bytes,
            ternary_xbar_bytes: p.ternary_xbar_bytes,
            phv_bits: p.phv.total_bits(),
        },
        pipelines: Vec::new(),
    };
    for pi in 0..program.pipelines.len() {
        let pipe = &program.pipelines[pi];
        check_objects(pi, pipe, &p, &mut issues);
        let mut prep = PipelineReport {
            name: pipe.name.clone(),
            gresses: Vec::new(),
        };
        let mut writes = Vec::new();
        let mut needs = Vec::new();
        for gress in [Gress::Ingress, Gress::Egress] {
            let no_hints = layout::Hints::default();
            let h = hints.get(pi).unwrap_or(&no_hints);
            let (g, w, need) = place_gress(pi, pipe, gress, &p, h, &mut issues);
            prep.gresses.push(g);
            writes.push((gress, w));
            needs.push((gress, need));
        }
        issues.extend(phv::check(pi, pipe, &needs, &p));
        let pipe = &mut program.pipelines[pi];
        for (gress, w) in writes {
            w.apply(pipe, gress);
        }
        report.pipelines.push(prep);
    }
    issues.sort_by_key(|i| !i.is_error());
    if issues.iter().any(ResourceIssue::is_error) {
        Err(issues)
    } else {
        Ok((report, issues))
    }
}

/// The conditions of the `Stmt::If`s of a control body in the pre-order that
/// [`ObjectRef::Gateway`]'s `index` counts.
pub fn gateway_conditions(body: &[Stmt]) -> Vec<&Expr> {
    fn walk<'a>(b: &'a [Stmt], out: &mut Vec<&'a Expr>) {
        for s in b {
            match s {
                Stmt::If {
                    cond, then, els, ..
                } => {
                    out.push(cond);
                    walk(then, out);
                    walk(els, out);
                }
                Stmt::ApplyTable { branches, .. } => match branches {
                    TableBranches::None => {}
                    TableBranches::HitMiss { hit, miss } => {
                        walk(hit, out);
                        walk(miss, out);
                    }
                    TableBranches::ActionRun { cases, default } => {
                        for (_, c) in cases {
                            walk(c, out);
                        }
                        walk(default, out);
                    }
                },
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

/// Sets `Stmt::If::stage` in the same pre-order as [`gateway_conditions`].
fn set_gateway_stages(body: &mut [Stmt], stages: &[Option<u8>], next: &mut usize) {
    for s in body {
        match s {
            Stmt::If {
                then, els, stage, ..
            } => {
                if let Some(Some(st)) = stages.get(*next) {
                    *stage = *st;
                }
                *next += 1;
                set_gateway_stages(then, stages, next);
                set_gateway_stages(els, stages, next);
            }
            Stmt::ApplyTable { branches, .. } => match branches {
                TableBranches::None => {}
                TableBranches::HitMiss { hit, miss } => {
                    set_gateway_stages(hit, stages, next);
                    set_gateway_stages(miss, stages, next);
                }
                TableBranches::ActionRun { cases, default } => {
                    for (_, c) in cases {
                        set_gateway_stages(c, stages, next);
                    }
                    set_gateway_stages(default, stages, next);
                }
            },
            _ => {}
        }
    }
}

/// Stage numbers to write back into the IR for one gress.
#[derive(Default)]
struct Writes {
    tables: Vec<(TableId, u8)>,
    registers: Vec<(RegisterId, u8)>,
    gateways: Vec<Option<u8>>,
}

impl Writes {
    fn apply(self, pipe: &mut Pipeline, gress: Gress) {
        for (t, s) in self.tables {
            if let Some(t) = pipe.tables.get_mut(t.index()) {
                t.stage = s;
            }
        }
        for (r, s) in self.registers {
            if let Some(r) = pipe.registers.get_mut(r.index()) {
                r.stage = s;
            }
        }
        let g = match gress {
            Gress::Ingress => &mut pipe.ingress,
            Gress::Egress => &mut pipe.egress,
        };
        set_gateway_stages(&mut g.control.body, &self.gateways, &mut 0);
    }
}

fn stage_u8(s: usize) -> u8 {
    u8::try_from(s).unwrap_or(u8::MAX)
}

/// Register layouts, RegisterAction bodies and action code of one pipeline.
fn check_objects(pi: usize, pipe: &Pipeline, p: &Profile, issues: &mut Vec<ResourceIssue>) {
    for (ri, reg) in pipe.registers.iter().enumerate() {
        salu::check_register(pi, RegisterId(ri as u32), reg, p, issues);
    }
    for (ai, ra) in pipe.register_actions.iter().enumerate() {
        let gress = pipe
            .registers
            .get(ra.register.index())
            .map_or(Gress::Ingress, |r| r.gress);
        let names = Names::new(pipe, phv_of(pipe, gress));
        salu::check_register_action(pi, pipe, &names, RegisterActionId(ai as u32), ra, p, issues);
        // A Tofino 2 overflow / underflow handler is a stateful-ALU program of its own: the
        // same limits (compare units, ALUs, constants) apply to it.
        for h in [&ra.overflow, &ra.underflow].into_iter().flatten() {
            let handler = pipeline::ir::RegisterAction {
                body: h.clone(),
                overflow: None,
                underflow: None,
                ..ra.clone()
            };
            let id = RegisterActionId(ai as u32);
            salu::check_register_action(pi, pipe, &names, id, &handler, p, issues);
        }
    }
    salu::check_math_units(pi, pipe, issues);
    action_ops::check_actions(pi, pipe, p, issues);
    issues.extend(extern_rules::counter_addressing(pipe, pi));
}

fn phv_of(pipe: &Pipeline, gress: Gress) -> &pipeline::ir::PhvLayout {
    match gress {
        Gress::Ingress => &pipe.ingress.phv,
        Gress::Egress => &pipe.egress.phv,
    }
}

/// The object an issue about unit `u` points at.
fn unit_object(pi: usize, gress: Gress, u: &Unit) -> ObjectRef {
    match u.kind {
        UnitKind::Table(t) => ObjectRef::Table(pi, t),
        UnitKind::Gateway(index) => ObjectRef::Gateway {
            pipeline: pi,
            gress,
            index,
        },
        UnitKind::Statements => ObjectRef::Pipeline(pi),
    }
}

/// An error for each table whose sizing annotation leaves bf-p4c no layout: a `@pack(n)`
/// needing a match row wider than 8 RAMs (bf-p4c tries only that packing,
/// mau/table_layout.cpp `setup_exact_match`), or a `@use_hash_action(1)` on a table that
/// cannot be a hash-action table (`add_hash_action_option`).
fn unfit_layouts(pi: usize, pipe: &Pipeline, demands: &[demand::Demand]) -> Vec<ResourceIssue> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for d in demands {
        let Some(t) = d.table else {
            continue;
        };
        if seen.contains(&t)
            || (d.unfit_pack.is_none()
                && d.unfit_hash_action.is_none()
                && d.range_too_wide.is_none()
                && d.range_entries_over_size.is_none())
        {
            continue;
        }
        seen.push(t);
        let name = pipe.tables.get(t.index()).map_or("?", |x| x.name.as_str());
        if let Some(n) = d.unfit_pack {
            out.push(
                ResourceIssue::error(
                    IssueKind::TableTooLarge,
                    ObjectRef::Table(pi, t),
                    format!(
                        "table `{name}`: @pack({n}) puts {n} entries in a match row, wider than \
                         8 RAMs"
                    ),
                )
                .with_note("bf-p4c lays out a table with `@pack` only with that many entries a row")
                .with_help("lower the `@pack` value, or remove it to let the layout choose"),
            );
        }
        out.extend(range_issues(pi, t, name, d));
        if let Some(why) = d.unfit_hash_action {
            out.push(
                ResourceIssue::error(
                    IssueKind::TableTooLarge,
                    ObjectRef::Table(pi, t),
                    format!(
                        "table `{name}` is required to be a hash action table by \
                         `@use_hash_action(1)`, but cannot be: {why}"
                    ),
                )
                .with_note(
                    "a hash-action table has one action, no match overhead, no idle timeout, \
                     and a row for every key value (size = 2^(key bits)); bf-p4c refuses the \
                     annotation otherwise",
                )
                .with_help("remove `@use_hash_action(1)`, or give the table that shape"),
            );
        }
    }
    out
}

/// A range key wider than bf-p4c's range match (an error), and an `@entries_with_ranges`
/// larger than the table (a warning; the size is used, as bf-p4c does).
fn range_issues(pi: usize, t: TableId, name: &str, d: &demand::Demand) -> Vec<ResourceIssue> {
    let mut out = Vec::new();
    if let Some((key, n)) = &d.range_too_wide {
        out.push(
            ResourceIssue::error(
                IssueKind::CrossbarTooWide,
                ObjectRef::Table(pi, t),
                format!(
                    "table `{name}` cannot range-match on `{key}`: it covers {n} PHV nibbles, \
                     and a range key may cover at most 5"
                ),
            )
            .with_note(
                "bf-p4c matches a range nibble by nibble within one 5-byte ternary crossbar \
                 group (mau/resource_estimate.cpp `RangeEntries`)",
            )
            .with_help(
                "range-match a slice that starts on a nibble boundary, or match the key as ternary",
            ),
        );
    }
    if let Some((n, size)) = d.range_entries_over_size {
        out.push(ResourceIssue::warning(
            IssueKind::TableTooLarge,
            ObjectRef::Table(pi, t),
            format!(
                "`@entries_with_ranges({n})` on table `{name}` is more than its {size} entries; \
                 its size is used instead"
            ),
        ));
    }
    out
}

/// Why stages `from..=to` could not take a unit: a resource ran out, or (Tofino 1) a table
/// split over them held them.
fn no_room(from: usize, to: usize, resource: &str) -> String {
    if resource == schedule::HELD {
        format!(
            "stages {from}..{to} were held by a table split over them (Tofino 1 starts no \
             other table before a split table's last part)"
        )
    } else if resource == schedule::HELD_OR_FULL {
        format!(
            "stages {from}..{to} were held by a table split over them (Tofino 1) or had no \
             room left"
        )
    } else {
        format!("stages {from}..{to} had no {resource} left")
    }
}

/// Stages the dependencies of `units` need with unlimited resources: the longest chain of
/// stage-adding dependencies, plus one.
fn dependency_depth(units: &[Unit]) -> usize {
    let mut depth = vec![0usize; units.len()];
    for v in 0..units.len() {
        for d in &units[v].deps {
            if d.on < v {
                depth[v] = depth[v].max(depth[d.on] + usize::from(d.gap));
            }
        }
    }
    depth.iter().max().map_or(0, |d| d + 1)
}

fn unit_kind_word(u: &Unit) -> &'static str {
    match u.kind {
        UnitKind::Table(_) => "table",
        UnitKind::Gateway(_) => "gateway",
        UnitKind::Statements => "statement",
    }
}

/// How much of `resource` a lone unit needs.
fn amount(d: &Demand, resource: &str, p: &Profile) -> (u32, u32) {
    let mut alone = StageUse::default();
    alone.add(d, usize::MAX);
    match resource {
        "SRAM blocks" => (alone.sram, p.sram_blocks),
        "TCAM blocks" => (alone.tcam, p.tcam_blocks),
        "hash bits" => (alone.hash_bits, p.hash_bits()),
        "exact crossbar bytes" => (demand::xbar_bytes(&alone.exact_xbar), p.exact_xbar_bytes),
        "ternary crossbar bytes" => (
            demand::xbar_bytes(&alone.ternary_xbar),
            p.ternary_xbar_bytes,
        ),
        "stateful ALUs" => (alone.salu_count(), p.stateful_alus),
        "statistics ALUs" => (alone.stats_count(), p.stats_alus),
        _ => (1, 0),
    }
}

fn stateful_name(pipe: &Pipeline, s: Stateful) -> String {
    match s {
        Stateful::Register(r) => pipe
            .registers
            .get(r.index())
            .map_or_else(|| format!("register#{}", r.0), |x| x.name.clone()),
        Stateful::Meter(m) => pipe
            .meters
            .get(m.index())
            .map_or_else(|| format!("meter#{}", m.0), |x| x.name.clone()),
        Stateful::Filter(f) => pipe
            .filters
            .get(f.index())
            .map_or_else(|| format!("filter#{}", f.0), |x| x.name.clone()),
        Stateful::Counter(c) => pipe
            .counters
            .get(c.index())
            .map_or_else(|| format!("counter#{}", c.0), |x| x.name.clone()),
        Stateful::Table(t) => pipe
            .tables
            .get(t.index())
            .map_or_else(|| format!("table#{}", t.0), |x| x.name.clone()),
    }
}

fn dep_reason(units: &[Unit], names: &Names<'_>, u: usize, i: usize) -> String {
    let d = units[u].deps[i];
    let other = &units[d.on].label;
    let loc = d.loc.map(|l| names.loc(l)).unwrap_or_default();
    match d.kind {
        DepKind::Match => format!("matches on `{loc}`, written by `{other}` (match dependency)"),
        DepKind::Action => {
            format!("its action reads `{loc}`, written by `{other}` (action dependency)")
        }
        DepKind::Output => format!("writes `{loc}`, also written by `{other}` (output dependency)"),
        DepKind::Anti => format!("writes `{loc}`, read by `{other}`"),
        DepKind::Control => format!("runs only under an outcome of `{other}` (control dependency)"),
    }
}

/// The chain of reasons that put unit `last` in its stage, earliest first.
fn chain(
    pipe: &Pipeline,
    units: &[Unit],
    names: &Names<'_>,
    pl: &Placement,
    last: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut u = last;
    for _ in 0..=units.len() {
        let s = pl.stage_of[u];
        let head = format!(
            "stage {s}: {} `{}`",
            unit_kind_word(&units[u]),
            units[u].label
        );
        match pl.why[u] {
            Why::Dep(i) => {
                out.push(format!("{head} {}", dep_reason(units, names, u, i)));
                u = units[u].deps[i].on;
            }
            Why::Full { from, resource } => {
                out.push(format!(
                    "{head}: {}",
                    no_room(from, s.saturating_sub(1), resource)
                ));
                break;
            }
            Why::Pinned(o) => {
                out.push(format!(
                    "{head} shares `{}` with an access placed in stage {s}",
                    stateful_name(pipe, o)
                ));
                break;
            }
            Why::Pushed => {
                out.push(format!(
                    "{head}, moved down so that a later access of a shared register could join it"
                ));
                break;
            }
            Why::StagePin => {
                out.push(format!("{head}, {}", pinned_text(units, pl, u, s)));
                break;
            }
            Why::Free => {
                out.push(head);
                break;
            }
        }
    }
    out.reverse();
    out
}

/// Why unit `u` (or its part) sits in stage `s` when its `@stage` put it there: its start (its
/// first part, when split) is the stage asked; a gateway's is the `@stage` of what it guards.
fn pinned_text(units: &[Unit], pl: &Placement, u: usize, s: usize) -> String {
    let start = pl.parts_of[u].first().copied().unwrap_or(pl.stage_of[u]);
    if matches!(units[u].kind, UnitKind::Gateway(_)) {
        format!("pinned by the `@stage({s})` of the tables it guards")
    } else if s == start {
        format!("pinned by `@stage({s})`")
    } else {
        format!("the rest of its entries, after the part pinned by `@stage({start})`")
    }
}

/// Why unit `u` sits in stage `s`, for the stage report: the dependency that set its stage
/// (with its kind), or the resource that ran out before it; `None` when nothing held it back.
fn placed_by(
    units: &[Unit],
    names: &Names<'_>,
    pl: &Placement,
    u: usize,
    s: usize,
) -> Option<String> {
    let label = &units[u].label;
    match pl.why[u] {
        Why::Dep(i) => {
            let d = units[u].deps[i];
            let other = &units[d.on].label;
            let via = d
                .loc
                .map(|l| format!(" on `{}`", names.loc(l)))
                .unwrap_or_default();
            let place = if d.gap == 0 { "with" } else { "after" };
            Some(format!(
                "{label}: {place} {other} ({} dependency{via})",
                d.kind.word()
            ))
        }
        Why::Full { from, resource } if from < s => {
            Some(format!("{label}: {}", no_room(from, s - 1, resource)))
        }
        Why::Pinned(_) => Some(format!("{label}: with another access of a shared object")),
        Why::Pushed => Some(format!(
            "{label}: moved down to join a later access of a shared object"
        )),
        Why::StagePin => Some(format!("{label}: {}", pinned_text(units, pl, u, s))),
        // Nothing held it back; a dependency it shares the stage with is still worth naming.
        Why::Free => units[u]
            .deps
            .iter()
            .find(|d| pl.stage_of.get(d.on) == Some(&s))
            .map(|d| {
                format!(
                    "{label}: with {} ({} dependency)",
                    units[d.on].label,
                    d.kind.word()
                )
            }),
        _ => None,
    }
}

fn place_gress(
    pi: usize,
    pipe: &Pipeline,
    gress: Gress,
    p: &Profile,
    hints: &layout::Hints,
    issues: &mut Vec<ResourceIssue>,
) -> (GressReport, Writes, phv::GressNeed) {
    let phv = phv_of(pipe, gress);
    let names = Names::new(pipe, phv);
    let ignore = ignore::pairs(pi, pipe, gress, hints, issues);
    let units = units::build(pipe, gress, &ignore);
    let pins = pins::resolve(pi, pipe, gress, &units, hints, p, issues);
    let mut report = GressReport {
        gress: gress.to_string(),
        ..GressReport::default()
    };
    let mut writes = Writes::default();

    let mut malformed: Vec<String> = units
        .iter()
        .flat_map(|u| u.fx.malformed.iter().cloned())
        .collect();
    malformed.sort();
    malformed.dedup();
    for m in malformed {
        issues.push(ResourceIssue::error(
            IssueKind::MalformedIr,
            ObjectRef::Pipeline(pi),
            format!("malformed IR in {gress}: {m}"),
        ));
    }
    for u in &units {
        if let (UnitKind::Gateway(_), Some(cond)) = (&u.kind, &u.cond) {
            issues.extend(gateway::check(cond, &names, unit_object(pi, gress, u), p));
        }
    }
    issues.extend(single_access::check(pipe, phv, pi, &units));
    issues.extend(shared_profile::check(pipe, pi, &units));
    let twice = units::applied_twice(&units);
    for &(t, _, b) in &twice {
        let name = pipe.tables.get(t.index()).map_or("?", |t| t.name.as_str());
        issues.push(
            ResourceIssue::error(
                IssueKind::TableAppliedTwice,
                unit_object(pi, gress, &units[b]),
                format!("table `{name}` is applied twice on one path through {gress}"),
            )
            .with_note("a table is one match unit, looked up at most once per packet; applies of one table (or of one control instance) must be mutually exclusive")
            .with_help("apply it in exclusive branches (if/else, switch cases), or declare a second control instance for the second lookup"),
        );
    }
    issues.extend(extern_rules::register_actions(pipe, pi, &units));
    let gp = match gress {
        Gress::Ingress => &pipe.ingress,
        Gress::Egress => &pipe.egress,
    };
    issues.extend(parser_rules::check(pi, gress, &gp.parser, &names, p.target));
    issues.extend(parse_depth::check(
        pi,
        gress,
        &gp.parser,
        phv,
        p.target,
        hints.disable_parse_depth_limit,
    ));
    let need = phv::need(pipe, gp, &units, p);
    report.phv = PhvUse {
        bits: need.total.bits,
        mau_bits: need.mau.bits,
        path: phv::path_names(&gp.parser, &need.total.states),
    };
    if !twice.is_empty() {
        // Placement would only restate it (the table's one stage cannot hold both lookups).
        return (report, writes, need);
    }

    let mut demands = demand::demands(pipe, phv, &units, p, hints);
    issues.extend(unfit_layouts(pi, pipe, &demands));
    // Tables too big for one stage's memories are spread over several (as bf-p4c does).
    let mut prefix_parts: Vec<Vec<demand::Demand>> = vec![Vec::new(); units.len()];
    for (u, d) in demands.iter_mut().enumerate() {
        if let Some(mut parts) = split::split(d, p) {
            if let Some(last) = parts.pop() {
                *d = last;
                prefix_parts[u] = parts;
            }
        }
    }
    pins::split_entries(
        pi,
        pipe,
        &units,
        &pins,
        &mut demands,
        &mut prefix_parts,
        issues,
    );
    let mut oversize = vec![false; units.len()];
    let mut reported_regs: Vec<RegisterId> = Vec::new();
    for (i, (u, d)) in units.iter().zip(&demands).enumerate() {
        let mut alone = StageUse::default();
        alone.add(d, usize::MAX);
        if let Some(resource) = alone.over(p) {
            oversize[i] = true;
            // A register too large for a stage is the register's fault, not its user's.
            let big_reg = d.stateful.iter().find_map(|(o, sram)| match o {
                Stateful::Register(r) if *sram > p.sram_blocks => Some((*r, *sram)),
                _ => None,
            });
            if let Some((r, sram)) = big_reg {
                if !reported_regs.contains(&r) {
                    reported_regs.push(r);
                    issues.push(
                        ResourceIssue::error(
                            IssueKind::TableTooLarge,
                            ObjectRef::Register(pi, r),
                            format!(
                                "register `{}` needs {sram} SRAM blocks; a {} stage has {}",
                                stateful_name(pipe, Stateful::Register(r)),
                                p.name(),
                                p.sram_blocks
                            ),
                        )
                        .with_note("a register lives in the memories of one stage")
                        .with_help("reduce the register's size or word width"),
                    );
                }
                continue;
            }
            let (need, have) = amount(d, resource, p);
            let kind = if resource.contains("crossbar") {
                IssueKind::CrossbarTooWide
            } else {
                IssueKind::TableTooLarge
            };
            let mut issue = ResourceIssue::error(
                kind,
                unit_object(pi, gress, u),
                format!(
                    "{} `{}` needs {need} {resource}; a {} stage has {have}",
                    unit_kind_word(u),
                    u.label,
                    p.name()
                ),
            );
            issue = if kind == IssueKind::CrossbarTooWide {
                issue
                    .with_note(
                        "match keys reach the match units through the stage's input crossbar",
                    )
                    .with_help(
                        "match on fewer or narrower fields, or split the lookup over two tables",
                    )
            } else if matches!(u.kind, UnitKind::Table(_)) {
                issue
                    .with_note("a table's entries can be spread over several stages, but each part needs this in its stage")
                    .with_help("reduce the table's `size` or key, or split it into several tables")
            } else {
                issue.with_help("split the work over several statements or tables")
            };
            issues.push(issue);
        }
    }

    let priority: Vec<i32> = units
        .iter()
        .map(|u| match u.kind {
            UnitKind::Table(t) => hints
                .sizing
                .iter()
                .find(|(s, _)| *s == t)
                .and_then(|(_, s)| s.priority)
                .unwrap_or(0),
            _ => 0,
        })
        .collect();
    let work = schedule::Work {
        demands: &demands,
        oversize: &oversize,
        prefix_parts: &prefix_parts,
        priority: &priority,
        pins: &pins.stage,
        before: &pins.before,
    };
    let placement = match schedule::schedule(&units, &work, p) {
        Ok(pl) => pl,
        Err(Failure::Conflict {
            object,
            first,
            second,
            chain,
        }) => {
            let obj = match object {
                Stateful::Register(r) => ObjectRef::Register(pi, r),
                _ => unit_object(pi, gress, &units[second]),
            };
            let mut issue = ResourceIssue::error(
                IssueKind::RegisterStageConflict,
                obj,
                format!(
                    "`{}` lives in one stage, but `{}` and `{}` both use it and `{}` depends on `{}`",
                    stateful_name(pipe, object),
                    units[first].label,
                    units[second].label,
                    units[second].label,
                    units[first].label
                ),
            );
            for w in chain.windows(2) {
                if let Some(i) = units[w[1]].deps.iter().position(|d| d.on == w[0]) {
                    issue = issue.with_note(format!(
                        "`{}` {}",
                        units[w[1]].label,
                        dep_reason(&units, &names, w[1], i)
                    ));
                }
            }
            issues.push(issue.with_help("merge both accesses into one RegisterAction, or compute what the second one needs before the first"));
            return (report, writes, need);
        }
        Err(Failure::GaveUp) => {
            issues.push(ResourceIssue::error(
                IssueKind::TooManyStages,
                ObjectRef::Pipeline(pi),
                format!(
                    "could not place {gress} of pipeline `{}`: moving shared registers between stages did not settle after {} passes",
                    pipe.name,
                    schedule::MAX_ATTEMPTS
                ),
            ));
            return (report, writes, need);
        }
        Err(Failure::TooDeep { unit }) => {
            issues.push(ResourceIssue::error(
                IssueKind::TooManyStages,
                ObjectRef::Pipeline(pi),
                format!(
                    "{gress} of pipeline `{}` needs more than {} stages (at `{}`); {} has {}",
                    pipe.name,
                    schedule::STAGE_CAP,
                    units[unit].label,
                    p.name(),
                    p.stages
                ),
            ));
            return (report, writes, need);
        }
    };
    issues.extend(ignore::same_stage(pi, &units, &names, &placement));
    issues.extend(pins::unmet(pi, &units, &pins, &placement, |u| {
        let s = placement.stage_of[u];
        placed_by(&units, &names, &placement, u, s)
    }));

    let used = placement.stages_used();
    if used > usize::from(p.stages) {
        let last = (0..units.len())
            .find(|&u| placement.stage_of[u] + 1 == used)
            .unwrap_or(0);
        let mut issue = ResourceIssue::error(
            IssueKind::TooManyStages,
            ObjectRef::Pipeline(pi),
            format!(
                "program needs {used} stages in {gress} of pipeline `{}`, {} has {}",
                pipe.name,
                p.name(),
                p.stages
            ),
        );
        issue = issue.with_note("the longest chain:".to_string());
        for line in chain(pipe, &units, &names, &placement, last) {
            issue = issue.with_note(line);
        }
        let by_deps = dependency_depth(&units);
        if by_deps < used {
            issue = issue.with_note(format!(
                "the dependencies alone need {by_deps} stage{}; memory adds {} (tables split \
                 over stages, or waiting for a stage with room), and pisa sizes memories by \
                 bf-p4c's estimate rules: bf-p4c's own layout may need fewer or more",
                if by_deps == 1 { "" } else { "s" },
                used - by_deps
            ));
        }
        issue = issue.with_help("shorten the chain: every match, action or output dependency on it costs a stage; independent tables can share one");
        if p.target == Target::Tofino1 && used <= usize::from(TOFINO2.stages) {
            issue = issue.with_help(format!(
                "the program fits tofino2, which has {} stages",
                TOFINO2.stages
            ));
        }
        issues.push(issue);
    }

    // Write-back and report.
    let mut gw: BTreeMap<usize, u8> = BTreeMap::new();
    for (u, unit) in units.iter().enumerate() {
        let s = stage_u8(placement.stage_of[u]);
        match unit.kind {
            UnitKind::Table(t) => writes.tables.push((t, s)),
            UnitKind::Gateway(i) => {
                gw.insert(i, s);
            }
            UnitKind::Statements => {}
        }
    }
    let n_gw = gw.keys().next_back().map_or(0, |k| k + 1);
    writes.gateways = (0..n_gw).map(|i| gw.get(&i).copied()).collect();
    for (o, s) in &placement.object_stage {
        if let Stateful::Register(r) = o {
            writes.registers.push((*r, stage_u8(*s)));
        }
    }
    report.stages_used = used as u32;
    for (s, su) in placement.stages.iter().enumerate() {
        let mut sr = StageReport {
            stage: s as u32,
            logical_tables: su.logical,
            stateful_alus: su.salu_count(),
            stats_alus: su.stats_count(),
            hash_bits: su.hash_bits,
            sram_blocks: su.sram,
            tcam_blocks: su.tcam,
            exact_xbar_bytes: demand::xbar_bytes(&su.exact_xbar),
            ternary_xbar_bytes: demand::xbar_bytes(&su.ternary_xbar),
            ..StageReport::default()
        };
        for &u in &su.units {
            // A table applied from several sites is one unit per site with the same reason.
            if let Some(r) = placed_by(&units, &names, &placement, u, s) {
                if !sr.placed_by.contains(&r) {
                    sr.placed_by.push(r);
                }
            }
            let parts = &placement.parts_of[u];
            let label = match parts.iter().position(|&ps| ps == s) {
                Some(i) if parts.len() > 1 => {
                    format!("{} (part {} of {})", units[u].label, i + 1, parts.len())
                }
                _ => units[u].label.clone(),
            };
            match units[u].kind {
                UnitKind::Gateway(_) => sr.gateways.push(label),
                UnitKind::Table(_) if sr.tables.contains(&label) => {}
                _ => sr.tables.push(label),
            }
        }
        sr.registers = su
            .stateful
            .iter()
            .filter(|o| !matches!(o, Stateful::Table(_)))
            .map(|o| stateful_name(pipe, *o))
            .collect();
        let t = &mut report.totals;
        t.tables = t.tables.saturating_add(sr.tables.len() as u32);
        t.gateways = t.gateways.saturating_add(sr.gateways.len() as u32);
        t.registers += su
            .stateful
            .iter()
            .filter(|o| matches!(o, Stateful::Register(_)))
            .count() as u32;
        t.stateful_alus = t.stateful_alus.saturating_add(sr.stateful_alus);
        t.hash_bits = t.hash_bits.saturating_add(sr.hash_bits);
        t.sram_blocks = t.sram_blocks.saturating_add(sr.sram_blocks);
        t.tcam_blocks = t.tcam_blocks.saturating_add(sr.tcam_blocks);
        report.stages.push(sr);
    }
    (report, writes, need)
}

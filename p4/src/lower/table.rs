//! Tables: keys (with `@name`), match kinds, action lists with `@defaultonly`/`@tableonly`,
//! default actions, const entries (masks, ranges, LPM prefixes, priorities), size, and the
//! direct counters/meters/registers bound through table properties.

use pipeline::ir::{self, ActionId, KeyMatch, MatchKind};

use super::expr::{path_of, Resolved};
use super::profiles::TableImplementation;
use super::{Binding, Lowerer, Res, TableSlot};
use crate::ast::{self, KeysetKind, TablePropertyKind};
use crate::check::annotations;
use crate::check::rules;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::source::Span;

/// Table size when the program names none (bf-p4c's `SetDefaultSize`: 512, or the table's
/// `min_size`; written into the table before P4Info and BF-RT are generated, so the control
/// plane sees it as the size, and the driver refuses entries past it).
pub const DEFAULT_SIZE: u32 = 512;

impl<'a> Lowerer<'a> {
    /// The size of a table that names none, with bf-p4c's warning (not for an `@hidden`
    /// table, as bf-p4c): its `min_size` if given, else [`DEFAULT_SIZE`].
    fn default_size(
        &mut self,
        d: &ast::Decl,
        t: &ast::TableDecl,
        name: &str,
        min_size: Option<u32>,
    ) -> u32 {
        let n = min_size.unwrap_or(DEFAULT_SIZE);
        if !annotations::has(&d.annotations, "hidden") {
            self.warn(
                Diagnostic::warning(format!(
                    "No size defined for table '{name}', setting default size to {n}"
                ))
                .with_primary(t.name.span, "no `size`")
                .with_note("bf-p4c's wording; the control plane sees this size (P4Info, BF-RT) and the driver refuses entries past it"),
            );
        }
        n
    }

    fn action_ref(&mut self, r: &'a ast::ActionRef) -> Res<std::rc::Rc<super::ActionSlot<'a>>> {
        match self.lookup_name(&r.name)? {
            Resolved::Obj(Binding::Action(s)) => Ok(s),
            _ => Err(self.err(
                Diagnostic::error(format!("`{}` is not an action", r.name.name))
                    .with_primary(r.name.span, "expected an action"),
            )),
        }
    }

    /// Action data of a default action or entry (constants fitted to the parameter types).
    fn action_call(
        &mut self,
        slot: &super::ActionSlot<'a>,
        id: ActionId,
        r: &'a ast::ActionRef,
        span: Span,
    ) -> Res<ir::ActionCall> {
        let args: &[ast::Argument] = r.args.as_deref().unwrap_or(&[]);
        let params = &slot.decl.params;
        if args.len() != params.len() && !(r.args.is_none() && params.is_empty()) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "action `{}` takes {} argument(s), {} given",
                    slot.decl.name.name,
                    params.len(),
                    args.len()
                ))
                .with_primary(span, "wrong number of action arguments")
                .with_secondary(slot.decl.name.span, "action declared here"),
            ));
        }
        let mut vals = Vec::new();
        let n_bound = Self::directional_prefix(slot.decl);
        for (p, a) in params.iter().zip(args).skip(n_bound) {
            let ty = self.resolve_type(&p.ty)?;
            vals.push(self.const_value(&a.value, &ty)?);
        }
        Ok(ir::ActionCall {
            action: id,
            args: vals,
        })
    }

    /// The lowered action a default action or entry names: written with all its arguments,
    /// the directional ones first, which pick the action-list binding (P4_16 §14.2.1.3).
    fn table_action_id(
        &mut self,
        slot: &std::rc::Rc<super::ActionSlot<'a>>,
        r: &'a ast::ActionRef,
    ) -> Res<ActionId> {
        let args: &'a [ast::Argument] = r.args.as_deref().unwrap_or(&[]);
        let n_bound = Self::directional_prefix(slot.decl).min(args.len());
        self.lower_bound_action(slot, &args[..n_bound], r.span)
    }

    /// Records the `@ignore_table_dependency("other")` annotations of table `id` (declared
    /// with `annos`) and of the control declaring it, for the placement.
    fn ignore_deps(&mut self, id: ir::TableId, annos: &[ast::Annotation]) {
        let on_control = self.control_annos.last().copied().unwrap_or(&[]);
        for (list, on_control) in [(annos, false), (on_control, true)] {
            for other in annotations::string_args(list, "ignore_table_dependency") {
                self.spans
                    .hints
                    .ignore_deps
                    .push(crate::resources::layout::IgnoreDep {
                        table: id,
                        other,
                        on_control,
                    });
            }
        }
    }

    /// Records table `id`'s `@pack(n)` / `@ways(n)` / `@simul_lookups(n)` /
    /// `@use_hash_action(n)` / `@placement_priority(n)` for the placement. A value out of
    /// bf-p4c's range is warned about and ignored, as bf-p4c does (mau/table_layout.cpp
    /// `get_pack_pragma_val`, `simul_lookups_pragma`, mau/resource_estimate.cpp `ways_pragma`).
    fn sizing(&mut self, id: ir::TableId, name: &str, annos: &'a [ast::Annotation]) {
        use crate::resources::layout::Sizing;
        let mut sizing = Sizing::default();
        for (which, range) in Sizing::ANNOTATIONS {
            let Some(e) = annotations::expr_arg(annos, which)
                .filter(|e| !matches!(e.kind, ast::ExprKind::String(_)))
            else {
                continue;
            };
            let Ok(n) = self.const_int(e) else {
                continue;
            };
            let Some(n) = Some(n).filter(|n| range.contains(n)) else {
                self.warn(
                    Diagnostic::warning(format!(
                        "the {which} value {n} on table `{name}` is not between {} and {}, and \
                         will be ignored",
                        range.start(),
                        range.end()
                    ))
                    .with_primary(e.span, "out of range"),
                );
                continue;
            };
            sizing.set(which, n);
        }
        if sizing != Sizing::default() {
            self.spans.hints.sizing.push((id, sizing));
        }
    }

    pub(super) fn lower_table(
        &mut self,
        d: &'a ast::Decl,
        t: &'a ast::TableDecl,
    ) -> Res<TableSlot> {
        let name = self.qualify(&d.annotations, &t.name.name);
        let mut keys: Vec<(ir::TableKey, Ty)> = Vec::new();
        let mut actions: Vec<ir::ActionRef> = Vec::new();
        let mut action_names: Vec<(String, ActionId)> = Vec::new();
        let mut default_only_refs: Vec<(ActionId, Span, String)> = Vec::new();
        let mut default: Option<(ir::ActionCall, bool)> = None;
        let mut entries: Vec<ir::ConstEntry> = Vec::new();
        let mut entries_const = false;
        let mut size = None;
        let mut min_size = None;
        let mut direct_counter = None;
        let mut direct_meter = None;
        let mut idle_timeout = false;
        let mut explicit_prio: Vec<(Option<i128>, Span)> = Vec::new();
        let mut prio_convention = super::entry_priority::Convention::default();
        let mut direct_filter = None;
        let mut direct_register = None;
        let mut implementation = None;
        let mut layout = None;
        let mut failed = false;
        let errs = self.diags.error_count();

        // Keys and actions first: entries and defaults refer to them.
        for p in &t.properties {
            match &p.kind {
                TablePropertyKind::Key(ks) => {
                    for k in ks {
                        let kind = match k.match_kind.name.as_str() {
                            "exact" => MatchKind::Exact,
                            "ternary" => MatchKind::Ternary,
                            "lpm" => MatchKind::Lpm,
                            "range" => MatchKind::Range,
                            "selector" => MatchKind::Selector,
                            // ATCAM: the partition index is matched exactly; the partitions
                            // only split the TCAM on hardware.
                            "atcam_partition_index" => MatchKind::Exact,
                            other => {
                                let d = if self.env.match_kinds.iter().any(|m| m == other) {
                                    crate::check::unsupported(
                                        k.match_kind.span,
                                        &format!("match kind `{other}`"),
                                        "this match kind (d-left hash tables)",
                                    )
                                } else {
                                    let mut d =
                                        Diagnostic::error(format!("unknown match kind `{other}`"))
                                            .with_primary(k.match_kind.span, "not a match_kind");
                                    if let Some(h) = crate::check::suggest::did_you_mean(
                                        other,
                                        self.env.match_kinds.iter().map(String::as_str),
                                    ) {
                                        d = d.with_help(h);
                                    }
                                    d
                                };
                                self.err(
                                    d.with_help("pisa supports exact, ternary, lpm and range"),
                                );
                                failed = true;
                                continue;
                            }
                        };
                        let Ok((expr, ty)) = self.scalar(&k.expr, None) else {
                            failed = true;
                            continue;
                        };
                        if kind == MatchKind::Range && !self.range_key_fits(&name, k, &ty) {
                            failed = true;
                            continue;
                        }
                        let written = self.env.text_of(k.expr.span);
                        let kname = annotations::name_annotation(&k.annotations)
                            .or_else(|| path_of(&k.expr))
                            .or_else(|| (!written.is_empty()).then_some(written))
                            .unwrap_or_else(|| format!("$key{}", keys.len()));
                        keys.push((
                            ir::TableKey {
                                name: kname,
                                expr,
                                kind,
                            },
                            ty,
                        ));
                    }
                }
                TablePropertyKind::Actions(rs) => {
                    for r in rs {
                        let Ok(slot) = self.action_ref(r) else {
                            failed = true;
                            continue;
                        };
                        let bound: &'a [ast::Argument] = r.args.as_deref().unwrap_or(&[]);
                        let Ok(id) = self.lower_bound_action(&slot, bound, r.span) else {
                            failed = true;
                            continue;
                        };
                        if actions.iter().any(|a| a.action == id) {
                            self.err(
                                Diagnostic::error(format!("action `{}` listed twice", r.name.name))
                                    .with_primary(r.span, "duplicate"),
                            );
                            failed = true;
                            continue;
                        }
                        if annotations::has(&r.annotations, "defaultonly") {
                            default_only_refs.push((id, r.span, r.name.name.clone()));
                        }
                        actions.push(ir::ActionRef {
                            action: id,
                            default_only: annotations::has(&r.annotations, "defaultonly"),
                            table_only: annotations::has(&r.annotations, "tableonly"),
                        });
                        action_names.push((r.name.name.clone(), id));
                    }
                }
                _ => {}
            }
        }

        for p in &t.properties {
            match &p.kind {
                TablePropertyKind::Key(_) | TablePropertyKind::Actions(_) => {}
                TablePropertyKind::DefaultAction(r) => {
                    let Ok(slot) = self.action_ref(r) else {
                        failed = true;
                        continue;
                    };
                    let Ok(id) = self.table_action_id(&slot, r) else {
                        failed = true;
                        continue;
                    };
                    match actions.iter().find(|a| a.action == id) {
                        None => {
                            let names: Vec<&str> =
                                action_names.iter().map(|(n, _)| n.as_str()).collect();
                            self.err(
                                Diagnostic::error(format!(
                                    "default action `{}` is not in the table's `actions`",
                                    r.name.name
                                ))
                                .with_primary(r.name.span, "not listed")
                                .with_help(format!(
                                    "add it to `actions` (listed: {})",
                                    names.join(", ")
                                )),
                            );
                            failed = true;
                            continue;
                        }
                        Some(a) if a.table_only => {
                            self.err(
                                Diagnostic::error(format!(
                                    "`{}` is `@tableonly` and cannot be the default action",
                                    r.name.name
                                ))
                                .with_primary(r.name.span, "table-only action")
                                .with_help("choose another default action or remove `@tableonly`"),
                            );
                            failed = true;
                            continue;
                        }
                        _ => {}
                    }
                    match self.action_call(&slot, id, r, r.span) {
                        Ok(c) => default = Some((c, p.is_const)),
                        Err(_) => failed = true,
                    }
                }
                TablePropertyKind::Entries(es) => {
                    entries_const = p.is_const;
                    for (i, e) in es.iter().enumerate() {
                        match self.entry(e, i, &keys, &actions) {
                            Ok(ce) => entries.push(ce),
                            Err(_) => failed = true,
                        }
                        match self.entry_priority(e) {
                            Ok(p) => explicit_prio.push((p, e.span)),
                            Err(_) => failed = true,
                        }
                    }
                }
                TablePropertyKind::Size(e) => match self.const_int(e) {
                    Ok(n) if (1..=(1 << 24)).contains(&n) => size = Some(n as u32),
                    Ok(n) => {
                        self.err(
                            Diagnostic::error(format!("table size {n} out of range"))
                                .with_primary(e.span, "invalid size")
                                .with_help("use a size from 1 to 16777216"),
                        );
                        failed = true;
                    }
                    Err(_) => failed = true,
                },
                TablePropertyKind::Other { name: pn, value } => match pn.name.as_str() {
                    "counters" | "meters" | "registers" | "filters" => {
                        let x = match self.resolve(value) {
                            Ok(Resolved::Obj(Binding::Extern(x))) => x,
                            Ok(_) => {
                                self.err(
                                    Diagnostic::error(format!(
                                        "`{}` must name a direct extern instance",
                                        pn.name
                                    ))
                                    .with_primary(value.span, "not an extern instance"),
                                );
                                failed = true;
                                continue;
                            }
                            Err(_) => {
                                failed = true;
                                continue;
                            }
                        };
                        use super::externs::Kind;
                        if let Some(owner) = self.direct_owner(&x.kind) {
                            self.direct_shared(&name, owner, value.span);
                            failed = true;
                            continue;
                        }
                        match (&x.kind, pn.name.as_str()) {
                            (
                                Kind::Counter {
                                    id, direct: true, ..
                                },
                                "counters",
                            ) => direct_counter = Some(*id),
                            (
                                Kind::Meter {
                                    id, direct: true, ..
                                },
                                "meters",
                            ) => direct_meter = Some(*id),
                            (
                                Kind::Register {
                                    id, direct: true, ..
                                },
                                "registers",
                            ) => direct_register = Some(*id),
                            (
                                Kind::Filter {
                                    id, direct: true, ..
                                },
                                "filters",
                            ) => direct_filter = Some(*id),
                            // An indirect instance of the property's family: bf-p4c attaches
                            // every extern a table property names, and an indirect one is
                            // addressed by the index its action passes, as without the
                            // property (the SDE's examples list their indirect Lpf/Wred
                            // under `filters`). Nothing to bind.
                            (Kind::Counter { direct: false, .. }, "counters")
                            | (Kind::Meter { direct: false, .. }, "meters")
                            | (Kind::Register { direct: false, .. }, "registers")
                            | (Kind::Filter { direct: false, .. }, "filters") => {}
                            _ => {
                                let want = match pn.name.as_str() {
                                    "counters" => "DirectCounter",
                                    "meters" => "DirectMeter",
                                    "filters" => "DirectLpf or DirectWred",
                                    _ => "DirectRegister",
                                };
                                self.err(
                                    Diagnostic::error(format!(
                                        "`{}` needs a `{want}` instance (or an indirect one of that family)",
                                        pn.name
                                    ))
                                    .with_primary(
                                        value.span,
                                        format!(
                                            "`{}` is not a {want}",
                                            path_of(value).unwrap_or_default()
                                        ),
                                    ),
                                );
                                failed = true;
                            }
                        }
                    }
                    "largest_priority_wins" => match self.const_value(value, &Ty::Bool) {
                        Ok(v) => prio_convention.largest_wins = v != 0,
                        Err(_) => failed = true,
                    },
                    "priority_delta" => match self.const_int(value) {
                        Ok(n) if n >= 1 => prio_convention.delta = n,
                        Ok(n) => {
                            self.err(
                                Diagnostic::error(format!("priority_delta {n} is not positive"))
                                    .with_primary(value.span, "must be 1 or more"),
                            );
                            failed = true;
                        }
                        Err(_) => failed = true,
                    },
                    // bf-p4c's `SetDefaultSize` takes it as the size of a table without one.
                    "min_size" => match self.const_int(value) {
                        Ok(n) if (1..=(1 << 24)).contains(&n) => min_size = Some(n as u32),
                        Ok(n) => {
                            self.err(
                                Diagnostic::error(format!("table min_size {n} out of range"))
                                    .with_primary(value.span, "invalid size")
                                    .with_help("use a size from 1 to 16777216"),
                            );
                            failed = true;
                        }
                        Err(_) => failed = true,
                    },
                    "idle_timeout" => match self.const_value(value, &Ty::Bool) {
                        Ok(v) => idle_timeout = v != 0,
                        Err(_) => failed = true,
                    },
                    // bf-p4c stores a hash of the key instead of the key: a lookup may hit an
                    // entry whose key only hashes alike. pisa compares the whole key.
                    "proxy_hash" => {
                        self.warn(
                            Diagnostic::warning(
                                "table property `proxy_hash` accepted, ignored: pisa matches the \
                                 whole key, where the hardware stores and compares its hash (a \
                                 packet whose key only hashes like an entry's hits it there)",
                            )
                            .with_primary(pn.span, "ignored by pisa"),
                        );
                    }
                    "requires_versioning" | "pbb_mode" => {
                        self.warn(
                            Diagnostic::warning(format!(
                                "table property `{}` accepted, ignored: pisa does not model it",
                                pn.name
                            ))
                            .with_primary(pn.span, "ignored by pisa"),
                        );
                    }
                    // Both may be given (the SDE's bri_handle does): an ALPM layout, the one
                    // with a pre-classifier, is kept over an ATCAM one.
                    "atcam" | "alpm" => match self.table_layout_property(&pn.name, value) {
                        Ok(l) => {
                            if !layout.is_some_and(|old: crate::resources::layout::AtcamLayout| {
                                old.subtrees.is_some()
                            }) {
                                layout = Some(l);
                            }
                        }
                        Err(_) => failed = true,
                    },
                    "implementation" => match self.table_implementation(value) {
                        Ok(TableImplementation::Profile(p)) => implementation = Some(p),
                        Ok(TableImplementation::Layout(l)) => layout = Some(l),
                        Err(_) => failed = true,
                    },
                    other => {
                        self.err(crate::check::unsupported(
                            pn.span,
                            &format!("table property `{other}`"),
                            &format!("`{other}`"),
                        ));
                        failed = true;
                    }
                },
            }
        }
        if let Some((c, true)) = &default {
            self.defaultonly_beside_const_default(&default_only_refs, c.action);
        }
        if !failed {
            self.number_entries(&mut entries, &explicit_prio, prio_convention);
        }
        if failed || self.diags.error_count() > errs {
            return Err(super::Reported);
        }
        super::profiles::order_selector_keys(self, &name, &mut keys, implementation, t.name.span)?;
        if layout.is_none() {
            let lpm = keys
                .iter()
                .filter(|(k, _)| k.kind == ir::MatchKind::Lpm)
                .count();
            layout = self.table_layout_annotations(&name, &d.annotations, lpm)?;
        }
        let (default_action, default_action_const) = match default {
            Some(d) => d,
            None => {
                let id = self.no_action(t.name.span)?;
                if !actions.iter().any(|a| a.action == id) {
                    actions.push(ir::ActionRef {
                        action: id,
                        default_only: true,
                        table_only: false,
                    });
                }
                (
                    ir::ActionCall {
                        action: id,
                        args: Vec::new(),
                    },
                    false,
                )
            }
        };
        let mut size = size.unwrap_or_else(|| self.default_size(d, t, &name, min_size));
        if (entries.len() as u64) > u64::from(size) {
            let n = size;
            // p4c warns and keeps every entry; so does pisa, with a table large enough.
            self.warn(
                Diagnostic::warning(format!(
                    "table `{name}` has {} const entries but `size = {n}`: its size is raised to {}",
                    entries.len(),
                    entries.len()
                ))
                .with_primary(t.name.span, "more entries than its size"),
            );
            size = entries.len() as u32;
        }
        if keys.iter().all(|(k, _)| k.kind == MatchKind::Exact) {
            let spans: Vec<Span> = explicit_prio.iter().map(|(_, sp)| *sp).collect();
            self.duplicate_exact_entries(&name, &entries, &spans)?;
        }
        if let Some(other) = self.pipe.tables.iter().position(|x| x.name == name) {
            // As p4c's P4Info generation refuses it: neither table could be named at run time.
            let first = self.spans.tables.get(other).copied();
            let mut d = Diagnostic::error(format!(
                "name `{name}` is used for two tables (an `@name` repeated?): the control plane \
                 could address neither"
            ))
            .with_primary(t.name.span, "the second table of this name");
            if let Some(first) = first {
                d = d.with_secondary(first, "the first");
            }
            return Err(self.err(d));
        }
        let id = ir::TableId(self.pipe.tables.len() as u32);
        if let Some(p) = implementation {
            self.profile_actions_differ(&name, p, &actions, t.name.span);
        }
        if let Some(p) = implementation.and_then(|p| self.pipe.action_profiles.get_mut(p.index())) {
            p.tables.push(id);
        }
        self.selector_scramble(&name, implementation, &d.annotations)?;
        self.selector_group_pragmas(&name, implementation, &d.annotations)?;
        if let Some(c) = direct_counter {
            if let Some(ctr) = self.pipe.counters.get_mut(c.index()) {
                ctr.direct_table = Some(id);
                ctr.size = size;
            }
        }
        if let Some(m) = direct_meter {
            if let Some(mt) = self.pipe.meters.get_mut(m.index()) {
                mt.direct_table = Some(id);
                mt.size = size;
            }
        }
        if let Some(f) = direct_filter {
            if let Some(ft) = self.pipe.filters.get_mut(f.index()) {
                ft.direct_table = Some(id);
                ft.size = size;
            }
        }
        if let Some(r) = direct_register {
            if let Some(rg) = self.pipe.registers.get_mut(r.index()) {
                rg.direct_table = Some(id);
                rg.size = size;
            }
        }
        self.pipe.tables.push(ir::Table {
            name: name.clone(),
            gress: self.gress,
            keys: keys.into_iter().map(|(k, _)| k).collect(),
            actions,
            default_action,
            default_action_const,
            const_entries: entries,
            entries_const,
            size,
            direct_counter,
            direct_meter,
            idle_timeout,
            stage: 0,
            hidden: annotations::has(&d.annotations, "hidden"),
        });
        self.spans.tables.push(t.name.span);
        self.ignore_deps(id, &d.annotations);
        self.sizing(id, &name, &d.annotations);
        self.placement_annotations(id, &name, &d.annotations);
        let declared = self.join(&t.name.name);
        if declared != name {
            self.spans.hints.declared_names.push((id, declared));
        }
        if let Some(l) = layout {
            self.spans.hints.layouts.push((id, l));
        }
        Ok(TableSlot {
            id,
            name,
            actions: action_names,
        })
    }

    /// Whether a `range` key fits the TCAM's range match: bf-p4c refuses a range key over more
    /// than 5 PHV nibbles ("cannot perform a range match on key ... as the key does not fit in
    /// under 5 PHV nibbles", `RangeEntries` in its resource estimate), so at most 20 bits.
    fn range_key_fits(&mut self, table: &str, k: &ast::KeyElement, ty: &Ty) -> bool {
        let width = ty.scalar_width().unwrap_or(0);
        if width <= 20 {
            return true;
        }
        self.err(
            Diagnostic::error(format!(
                "table `{table}` cannot perform a range match on a {width}-bit key: a range key \
                 must fit in 5 PHV nibbles (20 bits), as bf-p4c requires"
            ))
            .with_primary(k.expr.span, "range key wider than 20 bits")
            .with_help("match a 20-bit (or narrower) slice or copy of the field, or use `ternary`"),
        );
        false
    }

    /// Two const entries of an exact table with one key: the table holds one entry per key
    /// (the table API refuses the second when the switch is built), so it is reported here,
    /// at both entries.
    fn duplicate_exact_entries(
        &mut self,
        table: &str,
        entries: &[ir::ConstEntry],
        spans: &[Span],
    ) -> Res<()> {
        let mut seen: std::collections::HashMap<&[KeyMatch], usize> = Default::default();
        for (i, e) in entries.iter().enumerate() {
            let Some(&first) = seen.get(e.keys.as_slice()) else {
                seen.insert(&e.keys, i);
                continue;
            };
            let mut d = Diagnostic::error(format!(
                "table `{table}` has two const entries with one key: an exact table holds one \
                 entry per key"
            ));
            if let Some(sp) = spans.get(i) {
                d = d.with_primary(*sp, "the second entry with this key");
            }
            if let Some(sp) = spans.get(first) {
                d = d.with_secondary(*sp, "the first");
            }
            return Err(self.err(d));
        }
        Ok(())
    }

    /// Warns when a table shares an action profile with one whose actions differ: Intel's SDE
    /// requires the tables sharing one profile to have the same set of actions (its
    /// `tna_action_profile` example), while pisa checks a member's action against the first
    /// table's list and runs it from any of them.
    fn profile_actions_differ(
        &mut self,
        table: &str,
        profile: ir::ActionProfileId,
        actions: &[ir::ActionRef],
        at: Span,
    ) {
        let set = |list: &[ir::ActionRef]| {
            list.iter()
                .filter(|a| !a.default_only)
                .map(|a| a.action)
                .collect::<std::collections::BTreeSet<_>>()
        };
        let Some(p) = self.pipe.action_profiles.get(profile.index()) else {
            return;
        };
        let other = p.tables.iter().find_map(|t| {
            let o = self.pipe.tables.get(t.index())?;
            (set(&o.actions) != set(actions)).then(|| (o.name.clone(), p.name.clone()))
        });
        if let Some((other, pname)) = other {
            self.warn(
                Diagnostic::warning(format!(
                    "tables `{other}` and `{table}` share action profile `{pname}` but list \
                     different actions: the SDE requires tables sharing a profile to have the \
                     same set of actions; pisa checks members against `{other}`'s actions"
                ))
                .with_primary(at, "actions differ from the profile's first table")
                .with_help("give every table of the profile the same `actions` list"),
            );
        }
    }

    /// The table a direct extern is already attached to.
    fn direct_owner(&self, kind: &super::externs::Kind) -> Option<ir::TableId> {
        use super::externs::Kind;
        match kind {
            Kind::Counter {
                id, direct: true, ..
            } => self.pipe.counters.get(id.index())?.direct_table,
            Kind::Meter {
                id, direct: true, ..
            } => self.pipe.meters.get(id.index())?.direct_table,
            Kind::Register {
                id, direct: true, ..
            } => self.pipe.registers.get(id.index())?.direct_table,
            Kind::Filter {
                id, direct: true, ..
            } => self.pipe.filters.get(id.index())?.direct_table,
            _ => None,
        }
    }

    /// A direct extern a second table names: its cells are addressed by one table's match
    /// entries, so two tables would share cells (P4Info gives it one `direct_table_id`).
    fn direct_shared(&mut self, table: &str, owner: ir::TableId, at: Span) {
        let first = self
            .pipe
            .tables
            .get(owner.index())
            .map_or("?", |t| t.name.as_str());
        let mut d = Diagnostic::error(format!(
            "table `{table}` names a direct extern that table `{first}` already owns: a direct \
             counter, meter, register or filter has one cell per entry of one table"
        ))
        .with_primary(at, "attached to a second table")
        .with_help("declare one direct instance per table, or use an indexed extern");
        if let Some(span) = self.spans.tables.get(owner.index()).copied() {
            d = d.with_secondary(span, "the table that owns it");
        }
        self.err(d);
    }

    /// `NoAction` from core.p4, lowered once per pipeline.
    /// A `@defaultonly` action can never run beside a different `const default_action`:
    /// bf-p4c refuses it (`common/extract_maupipe.cpp` `SetupActionProperties::preorder`).
    fn defaultonly_beside_const_default(
        &mut self,
        refs: &[(ActionId, Span, String)],
        default: ActionId,
    ) {
        for (_, span, name) in refs.iter().filter(|r| r.0 != default) {
            self.err(
                Diagnostic::error(format!(
                    "Action {name} cannot be default only when there is another constant default action."
                ))
                .with_primary(*span, "`@defaultonly`, but never the default action")
                .with_note("as bf-p4c common/extract_maupipe.cpp SetupActionProperties")
                .with_help("remove the action, its `@defaultonly`, or the `const` of `default_action`"),
            );
        }
    }

    fn no_action(&mut self, span: Span) -> Res<ActionId> {
        let Some(name) = self.env.lookup("NoAction").and_then(|d| d.name()) else {
            return Err(self.err(
                Diagnostic::error("`NoAction` is not declared")
                    .with_primary(span, "this table needs a default action")
                    .with_help("include <core.p4>, or give the table a `default_action`"),
            ));
        };
        match self.lookup_name(name)? {
            Resolved::Obj(Binding::Action(s)) => self.lower_action(&s),
            _ => Err(self.err(
                Diagnostic::error("`NoAction` is not an action").with_primary(span, "needed here"),
            )),
        }
    }

    fn entry(
        &mut self,
        e: &'a ast::TableEntry,
        _index: usize,
        keys: &[(ir::TableKey, Ty)],
        actions: &[ir::ActionRef],
    ) -> Res<ir::ConstEntry> {
        let elems: Vec<&'a ast::Keyset> = match &e.keys.kind {
            KeysetKind::Tuple(ks) => ks.iter().collect(),
            _ => vec![&e.keys],
        };
        if elems.len() != keys.len() {
            return Err(self.err(
                Diagnostic::error(format!(
                    "entry has {} key value(s), the table has {} key(s)",
                    elems.len(),
                    keys.len()
                ))
                .with_primary(e.keys.span, "wrong number of key values"),
            ));
        }
        let mut out = Vec::new();
        for (k, (key, ty)) in elems.iter().zip(keys) {
            out.push(self.key_match(k, key.kind, ty)?);
        }
        let slot = self.action_ref(&e.action)?;
        let id = self.table_action_id(&slot, &e.action)?;
        match actions.iter().find(|a| a.action == id) {
            None => {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "entry action `{}` is not in the table's `actions`",
                        e.action.name.name
                    ))
                    .with_primary(e.action.name.span, "not listed"),
                ))
            }
            Some(a) if a.default_only => {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "`{}` is `@defaultonly` and cannot be used in an entry",
                        e.action.name.name
                    ))
                    .with_primary(e.action.name.span, "default-only action"),
                ))
            }
            _ => {}
        }
        let action = self.action_call(&slot, id, &e.action, e.action.span)?;
        Ok(ir::ConstEntry {
            keys: out,
            priority: None,
            action,
        })
    }

    /// An entry's priority as written (`priority = N :` or `@priority(N)`), not yet numbered.
    fn entry_priority(&mut self, e: &'a ast::TableEntry) -> Res<Option<i128>> {
        match (
            &e.priority,
            annotations::expr_arg(&e.annotations, "priority"),
        ) {
            (Some(p), _) | (None, Some(p)) => self.const_int(p).map(Some),
            _ => Ok(None),
        }
    }

    /// Gives `entries` their priorities in pisa's convention (see [`super::entry_priority`]).
    fn number_entries(
        &mut self,
        entries: &mut [ir::ConstEntry],
        explicit: &[(Option<i128>, Span)],
        c: super::entry_priority::Convention,
    ) {
        let raw: Vec<Option<i128>> = explicit.iter().map(|(p, _)| *p).collect();
        match super::entry_priority::normalise(&raw, c) {
            Ok(prios) => {
                for (e, p) in entries.iter_mut().zip(prios) {
                    e.priority = p;
                }
            }
            Err(err) => {
                let span = explicit.get(err.entry).map_or(Span::default(), |(_, s)| *s);
                self.err(Diagnostic::error(err.message).with_primary(span, "this entry"));
            }
        }
    }

    fn key_match(&mut self, k: &'a ast::Keyset, kind: MatchKind, ty: &Ty) -> Res<KeyMatch> {
        let w = ty.scalar_width().unwrap_or(1);
        let all = rules::mask(u128::MAX, w);
        let dont_care = matches!(k.kind, KeysetKind::Default | KeysetKind::DontCare);
        match (kind, &k.kind) {
            (MatchKind::Exact, KeysetKind::Expr(e)) => {
                Ok(KeyMatch::Exact(self.const_value(e, ty)?))
            }
            (MatchKind::Exact, _) => Err(self.err(
                Diagnostic::error("an exact key needs a single value").with_primary(
                    k.span,
                    "masks, ranges and `_` need a ternary, lpm or range key",
                ),
            )),
            (MatchKind::Ternary, KeysetKind::Expr(e)) => Ok(KeyMatch::Ternary {
                value: self.const_value(e, ty)?,
                mask: all,
            }),
            (MatchKind::Ternary, KeysetKind::Mask { value, mask }) => {
                let v = self.const_value(value, ty)?;
                let m = self.const_value(mask, ty)?;
                Ok(KeyMatch::Ternary {
                    value: v & m,
                    mask: m,
                })
            }
            (MatchKind::Ternary, _) if dont_care => Ok(KeyMatch::Ternary { value: 0, mask: 0 }),
            (MatchKind::Lpm, KeysetKind::Expr(e)) => Ok(KeyMatch::Lpm {
                value: self.const_value(e, ty)?,
                prefix_len: w,
            }),
            (MatchKind::Lpm, KeysetKind::Mask { value, mask }) => {
                let v = self.const_value(value, ty)?;
                let m = self.const_value(mask, ty)?;
                let ones = m.count_ones() as u16;
                let expect = if ones == 0 {
                    0
                } else {
                    rules::mask(u128::MAX << (w - ones), w)
                };
                if m != expect {
                    return Err(self.err(
                        Diagnostic::error(format!("lpm mask {m:#x} is not a prefix"))
                            .with_primary(k.span, "mask bits are not contiguous from the top")
                            .with_help(
                                "lpm masks look like 0xffffff00; use a ternary key for other masks",
                            ),
                    ));
                }
                Ok(KeyMatch::Lpm {
                    value: v & m,
                    prefix_len: ones,
                })
            }
            (MatchKind::Lpm, _) if dont_care => Ok(KeyMatch::Lpm {
                value: 0,
                prefix_len: 0,
            }),
            (MatchKind::Range, KeysetKind::Range { lo, hi }) => {
                let a = self.const_value(lo, ty)?;
                let b = self.const_value(hi, ty)?;
                if a > b {
                    // The table API refuses such an entry too (its low end above its high end).
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "range `{a:#x} .. {b:#x}` is empty: its low end is above its high end"
                        ))
                        .with_primary(k.span, "matches nothing")
                        .with_help("write the range as `lo .. hi` with lo <= hi"),
                    ));
                }
                Ok(KeyMatch::Range { lo: a, hi: b })
            }
            (MatchKind::Range, KeysetKind::Expr(e)) => {
                let v = self.const_value(e, ty)?;
                Ok(KeyMatch::Range { lo: v, hi: v })
            }
            (MatchKind::Range, _) if dont_care => Ok(KeyMatch::Range { lo: 0, hi: all }),
            (kind, _) => Err(self.err(
                Diagnostic::error(format!("this keyset does not fit a `{kind}` key"))
                    .with_primary(k.span, "wrong keyset form")
                    .with_help(match kind {
                        MatchKind::Ternary => "ternary keys take `v`, `v &&& mask` or `_`",
                        MatchKind::Lpm => "lpm keys take `v`, `v &&& prefix_mask` or `_`",
                        MatchKind::Range => "range keys take `lo .. hi`, `v` or `_`",
                        MatchKind::Exact => "exact keys take a value",
                        MatchKind::Selector => {
                            "selector keys are hash inputs: const entries give them no value"
                        }
                    }),
            )),
        }
    }
}

//! `ActionProfile` and `ActionSelector` instances, and tables whose `implementation` they are:
//! a profile becomes an [`ir::ActionProfile`], a selector its [`ir::ActionSelector`] (the
//! deprecated `ActionSelector(size, hash, mode)` forms create the profile too). The selector's
//! hash comes from the `Hash` instance given to it; its inputs are the table's `selector` keys.
//! `Alpm` / `Atcam` instances give a table the memory layout the resource check sizes it by.

use crate::ast;
use crate::check::annotations;
use crate::check::types::Ty;
use crate::diag::Diagnostic;
use crate::lower::expr::Resolved;
use crate::lower::externs::Kind;
use crate::lower::{Binding, Lowerer, Res};
use crate::source::Span;
use pipeline::ir::{self, ActionProfileId};

/// What a table's `implementation` names.
pub(crate) enum TableImplementation {
    /// An `ActionProfile` or `ActionSelector`: the entries hold member (or group) ids.
    Profile(ActionProfileId),
    /// An `Alpm` / `Atcam` memory layout: the table matches as written.
    Layout(crate::resources::layout::AtcamLayout),
}

/// Members a profile may hold (bf-p4c's limit for one action data table is far larger; this
/// bounds what a program can make pisa allocate).
const MAX_SIZE: i128 = 1 << 20;

impl<'a> Lowerer<'a> {
    fn profile_size(&mut self, e: &'a ast::Expr, what: &str) -> Res<u32> {
        let n = self.const_int(e)?;
        if !(1..=MAX_SIZE).contains(&n) {
            return Err(self.err(
                Diagnostic::error(format!("{what} {n} out of range"))
                    .with_primary(e.span, format!("from 1 to {MAX_SIZE}")),
            ));
        }
        Ok(n as u32)
    }

    /// The `Hash` instance an `ActionSelector` takes.
    fn selector_hash(&mut self, e: &'a ast::Expr) -> Res<ir::HashId> {
        match self.resolve(e)? {
            Resolved::Obj(Binding::Extern(x)) => match &x.kind {
                Kind::Hash { id, .. } => Ok(*id),
                _ => Err(self.err(
                    Diagnostic::error("an `ActionSelector` takes a `Hash` instance")
                        .with_primary(e.span, "not a Hash"),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error("an `ActionSelector` takes a `Hash` instance")
                    .with_primary(e.span, "not a Hash"),
            )),
        }
    }

    /// `ActionProfile(size)`.
    pub(crate) fn instantiate_profile(
        &mut self,
        name: String,
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Res<Kind> {
        let [size] = args else {
            return Err(self.err(
                Diagnostic::error("`ActionProfile` takes one constructor argument (its size)")
                    .with_primary(span, "wrong number of arguments"),
            ));
        };
        let size = self.profile_size(size, "action profile size")?;
        let id = ActionProfileId(self.pipe.action_profiles.len() as u32);
        self.pipe.action_profiles.push(ir::ActionProfile {
            name,
            size,
            tables: Vec::new(),
            selector: None,
        });
        Ok(Kind::ActionProfile { id })
    }

    /// `ActionSelector(profile, hash, mode, max_group_size, num_groups)` (optionally a
    /// register after), or the deprecated `ActionSelector(size, hash, mode [, register])`.
    pub(crate) fn instantiate_selector(
        &mut self,
        name: String,
        args: &[&'a ast::Expr],
        span: Span,
    ) -> Res<Kind> {
        if !(3..=6).contains(&args.len()) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "`ActionSelector` takes 3 to 6 constructor arguments, {} given",
                    args.len()
                ))
                .with_primary(span, "wrong number of arguments"),
            ));
        }
        let hash = self.selector_hash(args[1])?;
        let mode = match super::externs::enum_member(self, args[2], "SelectorMode_t")?.as_str() {
            "RESILIENT" => ir::SelectorMode::Resilient,
            _ => ir::SelectorMode::Fair,
        };
        // Whether the first argument is a profile instance or a size.
        let profile = match self.resolve(args[0]) {
            Ok(Resolved::Obj(Binding::Extern(x))) => match &x.kind {
                Kind::ActionProfile { id } => Some(*id),
                _ => {
                    return Err(self.err(
                        Diagnostic::error("an `ActionSelector` takes an `ActionProfile` or a size")
                            .with_primary(args[0].span, "neither"),
                    ))
                }
            },
            _ => None,
        };
        // The member-status register comes before the sizes: `(ap, hash, mode, reg, mgs,
        // groups)`, or last in the deprecated `(size, hash, mode, reg)`.
        let (status_arg, sizes) = match (profile.is_some(), args.len()) {
            (true, 6) => (Some(args[3]), &args[4..]),
            (false, 4) => (Some(args[3]), &args[4..]),
            (true, _) => (None, &args[3..]),
            (false, _) => (None, &args[3..]),
        };
        let status = match status_arg {
            Some(e) => Some(self.status_register(e)?),
            None => None,
        };
        let (id, max_group_size, num_groups) = match profile {
            Some(id) => {
                let (g, n) = match (sizes.first(), sizes.get(1)) {
                    (Some(g), Some(n)) => {
                        self.selector_sizes_given.insert(id);
                        (
                            self.profile_size(g, "max group size")?,
                            self.profile_size(n, "number of groups")?,
                        )
                    }
                    _ => (120, 4096),
                };
                (id, g, n)
            }
            None => {
                let size = self.profile_size(args[0], "action selector size")?;
                let id = ActionProfileId(self.pipe.action_profiles.len() as u32);
                self.pipe.action_profiles.push(ir::ActionProfile {
                    name: name.clone(),
                    size,
                    tables: Vec::new(),
                    selector: None,
                });
                // bf-p4c's defaults for the deprecated form: groups of up to 120 members.
                (id, 120, size.max(1))
            }
        };
        self.warn_wide_groups(&name, max_group_size, span);
        let taken = match self.pipe.action_profiles.get(id.index()) {
            None => Some(String::new()),
            Some(p) if p.selector.is_some() => Some(p.name.clone()),
            Some(_) => None,
        };
        if let Some(pname) = taken {
            return Err(self.err(
                Diagnostic::error(format!("action profile `{pname}` already has a selector"))
                    .with_primary(args[0].span, "a second selector over it"),
            ));
        }
        let Some(p) = self.pipe.action_profiles.get_mut(id.index()) else {
            return Ok(Kind::ActionProfile { id });
        };
        p.selector = Some(ir::ActionSelector {
            name,
            hash,
            max_group_size,
            num_groups,
            mode,
            scramble: true,
            status,
        });
        Ok(Kind::ActionProfile { id })
    }

    /// Groups of more than 120 members (one selector RAM word) are laid out by pisa, not as
    /// the driver would: said once per selector.
    fn warn_wide_groups(&mut self, name: &str, max_group_size: u32, span: Span) {
        if max_group_size > 120 {
            self.warn(
                Diagnostic::warning(format!(
                    "`{name}` holds groups of up to {max_group_size} members: a group of more \
                     than 120 spans several selector RAM words, which the driver fills in an \
                     order that depends on past writes; pisa deals its members into the words in \
                     order, so the member a hash picks in such a group may differ from a Tofino's"
                ))
                .with_primary(span, "wide selector groups"),
            );
        }
    }

    /// A table's `@selector_max_group_size(n)` and `@selector_num_max_groups(n)`: the group
    /// sizes of the selector it is implemented by, unless that selector's constructor gave
    /// them (bf-p4c `extract_maupipe.cpp` `createAttached` reads the pragmas first, then the
    /// constructor's `max_group_size`/`num_groups`; a size outside 1..=119040 (992 RAM words
    /// of 120 members) or fewer than one group is an error).
    pub(crate) fn selector_group_pragmas(
        &mut self,
        table: &str,
        profile: Option<ActionProfileId>,
        annos: &'a [ast::Annotation],
    ) -> Res<()> {
        let Some(p) = profile else {
            return Ok(());
        };
        let size = self.selector_pragma(table, annos, "selector_max_group_size", 992 * 120)?;
        let groups = self.selector_pragma(table, annos, "selector_num_max_groups", MAX_SIZE)?;
        if self.selector_sizes_given.contains(&p) {
            return Ok(());
        }
        let sel = self.pipe.action_profiles.get_mut(p.index());
        let Some(sel) = sel.and_then(|a| a.selector.as_mut()) else {
            return Ok(());
        };
        if let Some((n, _)) = groups {
            sel.num_groups = n;
        }
        if let Some((n, span)) = size {
            sel.max_group_size = n;
            let name = sel.name.clone();
            self.warn_wide_groups(&name, n, span);
        }
        Ok(())
    }

    /// Table `table`'s `@which(n)` with `n` in 1..=`max` (bf-p4c's range error otherwise), and
    /// where it is written; `None` when absent.
    fn selector_pragma(
        &mut self,
        table: &str,
        annos: &'a [ast::Annotation],
        which: &str,
        max: i128,
    ) -> Res<Option<(u32, Span)>> {
        let Some(e) = annotations::expr_arg(annos, which) else {
            return Ok(None);
        };
        let n = self.const_int(e)?;
        if !(1..=max).contains(&n) {
            return Err(self.err(
                Diagnostic::error(format!(
                    "the {which} pragma value on table `{table}` is not between 1 and {max}"
                ))
                .with_primary(e.span, "out of range"),
            ));
        }
        Ok(Some((n as u32, e.span)))
    }

    /// A table's `@selector_enable_scramble(0 | 1)`: whether the selector it is implemented by
    /// scrambles its hash (bf-p4c `extract_maupipe.cpp` `createAttached`: on by default, a
    /// value other than 0 or 1 is an error).
    pub(crate) fn selector_scramble(
        &mut self,
        table: &str,
        profile: Option<ActionProfileId>,
        annos: &'a [ast::Annotation],
    ) -> Res<()> {
        let Some(e) = annotations::expr_arg(annos, "selector_enable_scramble") else {
            return Ok(());
        };
        let on = match self.const_int(e)? {
            0 => false,
            1 => true,
            _ => {
                return Err(self.err(
                    Diagnostic::error(format!(
                        "the selector_enable_scramble pragma value on table `{table}` is only \
                         allowed to be 0 or 1"
                    ))
                    .with_primary(e.span, "not 0 or 1"),
                ))
            }
        };
        let sel = profile
            .and_then(|p| self.pipe.action_profiles.get_mut(p.index()))
            .and_then(|p| p.selector.as_mut());
        if let Some(sel) = sel {
            sel.scramble = on;
        }
        Ok(())
    }

    /// The `Register<bit<1>, _>` an `ActionSelector` keeps its member-status bits in.
    fn status_register(&mut self, e: &'a ast::Expr) -> Res<ir::RegisterId> {
        if let Ok(Resolved::Obj(Binding::Extern(x))) = self.resolve(e) {
            if let Kind::Register {
                id,
                direct: false,
                value: Ty::Bit(1),
                ..
            } = &x.kind
            {
                return Ok(*id);
            }
        }
        Err(self.err(
            Diagnostic::error("an `ActionSelector`'s register holds its member-status bits")
                .with_primary(e.span, "not a `Register<bit<1>, _>`")
                .with_help("declare it as `Register<bit<1>, bit<32>>(size) name;`"),
        ))
    }

    /// The layout an `Alpm(...)` / `Atcam(...)` instantiation asks for (bf-p4c's defaults for
    /// the arguments left out; named or positional, as declared in `tofino_base.p4`).
    pub(crate) fn table_layout(
        &mut self,
        tname: &str,
        args: &'a [ast::Argument],
    ) -> Res<crate::resources::layout::AtcamLayout> {
        use crate::resources::layout::{AtcamLayout, DEFAULT_PARTITIONS, DEFAULT_SUBTREES};
        const ORDER: [&str; 4] = [
            "number_partitions",
            "subtrees_per_partition",
            "atcam_subset_width",
            "shift_granularity",
        ];
        let mut vals: [Option<u32>; 4] = [None; 4];
        for (i, a) in args.iter().enumerate() {
            let slot = match &a.name {
                Some(n) => ORDER.iter().position(|o| *o == n.name),
                None => Some(i),
            };
            let Some(slot) = slot.filter(|s| *s < ORDER.len()) else {
                return Err(self.err(
                    Diagnostic::error(format!("`{tname}` has no such parameter"))
                        .with_primary(a.span, "unknown argument")
                        .with_help(format!("its parameters: {}", ORDER.join(", "))),
                ));
            };
            let n = self.const_int(&a.value)?;
            let Ok(n) = u32::try_from(n).map(|n| n.max(1)) else {
                return Err(self.err(
                    Diagnostic::error(format!("`{}` out of range", ORDER[slot]))
                        .with_primary(a.value.span, "not a positive 32-bit value"),
                ));
            };
            vals[slot] = Some(n);
        }
        let alpm = tname == "Alpm";
        Ok(AtcamLayout {
            partitions: vals[0].unwrap_or(DEFAULT_PARTITIONS),
            subtrees: alpm.then(|| vals[1].unwrap_or(DEFAULT_SUBTREES)),
            subset_width: if alpm { vals[2] } else { None },
            shift_granularity: if alpm { vals[3] } else { None },
        })
    }

    /// A table's `implementation = X`: the profile (or selector) X names, or for an `Alpm` or
    /// `Atcam` layout (which matches like the plain table; warned about once) that layout.
    pub(crate) fn table_implementation(
        &mut self,
        value: &'a ast::Expr,
    ) -> Res<TableImplementation> {
        match self.resolve(value)? {
            Resolved::Obj(Binding::Extern(x)) => match &x.kind {
                Kind::ActionProfile { id } => Ok(TableImplementation::Profile(*id)),
                Kind::TableLayout(lay) => {
                    let lay = *lay;
                    self.warn_layout(&x.name, &x.type_name, &lay, value.span, "implementation");
                    Ok(TableImplementation::Layout(lay))
                }
                _ => Err(self.err(
                    Diagnostic::error(
                        "`implementation` names an `ActionProfile` or `ActionSelector`",
                    )
                    .with_primary(value.span, format!("a `{}`", x.type_name)),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error("`implementation` names an `ActionProfile` or `ActionSelector`")
                    .with_primary(value.span, "not an extern instance"),
            )),
        }
    }
}

impl<'a> Lowerer<'a> {
    /// A table's `atcam = X` or `alpm = X` property (the older spelling of `implementation = X`
    /// for an `Atcam` / `Alpm` layout, which the SDE's programs still use): X's layout.
    pub(crate) fn table_layout_property(
        &mut self,
        property: &str,
        value: &'a ast::Expr,
    ) -> Res<crate::resources::layout::AtcamLayout> {
        let want = if property == "alpm" { "Alpm" } else { "Atcam" };
        match self.resolve(value)? {
            Resolved::Obj(Binding::Extern(x)) => match &x.kind {
                Kind::TableLayout(lay) if x.type_name == want => {
                    let lay = *lay;
                    self.warn_layout(&x.name, &x.type_name, &lay, value.span, property);
                    Ok(lay)
                }
                _ => Err(self.err(
                    Diagnostic::error(format!("`{property}` names an `{want}` instance"))
                        .with_primary(value.span, format!("a `{}`", x.type_name)),
                )),
            },
            _ => Err(self.err(
                Diagnostic::error(format!("`{property}` names an `{want}` instance"))
                    .with_primary(value.span, "not an extern instance"),
            )),
        }
    }

    /// A table's layout annotations, the older spelling of an `Alpm` / `Atcam` implementation
    /// (bf-p4c's pragmas): `@alpm(1)` with `@alpm_partitions(n)` (1024, 2048, 4096 or 8192;
    /// default 1024) and `@alpm_subtrees_per_partition(n)` (default 2) — the table must have
    /// exactly one `lpm` key field —, or `@atcam_partition_index("field")` with
    /// `@atcam_number_partitions(n)` (default 1024). `@alpm` with a value other than 1 is
    /// ignored, as bf-p4c ignores it.
    pub(crate) fn table_layout_annotations(
        &mut self,
        table: &str,
        annos: &'a [ast::Annotation],
        lpm_keys: usize,
    ) -> Res<Option<crate::resources::layout::AtcamLayout>> {
        use crate::resources::layout::{AtcamLayout, DEFAULT_PARTITIONS, DEFAULT_SUBTREES};
        let alpm = match annotations::expr_arg(annos, "alpm") {
            Some(e) => Some((e.span, self.const_int(e)? == 1)),
            None => None,
        };
        let atcam = annos
            .iter()
            .find(|a| a.name.name == "atcam_partition_index");
        let (span, lay, kind) = match (alpm, atcam) {
            (Some((span, true)), _) => {
                if lpm_keys != 1 {
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`@alpm(1)` on table `{table}` needs one, and only one, key field \
                             matched `lpm` ({lpm_keys} given)"
                        ))
                        .with_primary(span, "an ALPM table"),
                    ));
                }
                let partitions = self.layout_count(annos, "alpm_partitions", DEFAULT_PARTITIONS)?;
                if ![1024, 2048, 4096, 8192].contains(&partitions) {
                    let e =
                        annotations::expr_arg(annos, "alpm_partitions").map_or(span, |e| e.span);
                    return Err(self.err(
                        Diagnostic::error(format!(
                            "`@alpm_partitions({partitions})` on table `{table}`: the supported \
                             values are 1024, 2048, 4096 and 8192"
                        ))
                        .with_primary(e, "unsupported"),
                    ));
                }
                let subtrees =
                    self.layout_count(annos, "alpm_subtrees_per_partition", DEFAULT_SUBTREES)?;
                let lay = AtcamLayout {
                    partitions,
                    subtrees: Some(subtrees),
                    subset_width: None,
                    shift_granularity: None,
                };
                (span, lay, "Alpm")
            }
            (_, Some(a)) => {
                let partitions =
                    self.layout_count(annos, "atcam_number_partitions", DEFAULT_PARTITIONS)?;
                let lay = AtcamLayout {
                    partitions,
                    subtrees: None,
                    subset_width: None,
                    shift_granularity: None,
                };
                (a.span, lay, "Atcam")
            }
            _ => return Ok(None),
        };
        self.warn_layout(table, kind, &lay, span, "layout annotation");
        Ok(Some(lay))
    }

    /// A positive count given by annotation `which` (else `default`).
    fn layout_count(
        &mut self,
        annos: &'a [ast::Annotation],
        which: &str,
        default: u32,
    ) -> Res<u32> {
        match annotations::expr_arg(annos, which) {
            Some(e) => self.profile_size(e, &format!("`@{which}`")),
            None => Ok(default),
        }
    }

    /// The warning an `Alpm` / `Atcam` layout gets: pisa matches the table as written.
    fn warn_layout(
        &mut self,
        name: &str,
        type_name: &str,
        lay: &crate::resources::layout::AtcamLayout,
        span: Span,
        label: &str,
    ) {
        self.warn(
            Diagnostic::warning(format!(
                "`{name}` is an `{type_name}` layout: pisa matches the table as written (an \
                 ALPM table by longest prefix, an ATCAM table by priority within its \
                 partition) and sizes it in SRAM as an ATCAM{}",
                if lay.subtrees.is_some() {
                    " behind a pre-classifier TCAM (placed in the stage of the ATCAM's first \
                     part, or a stage's TCAM in each of its first parts when larger; bf-p4c \
                     gives it a stage of its own before the ATCAM, so a key written just \
                     before the table can cost bf-p4c one stage more)"
                } else {
                    ""
                }
            ))
            .with_primary(span, label.to_string()),
        );
    }
}

/// Checks a table's selector keys against its implementation and moves them after the matched
/// keys (the order the runtime and the lookups use).
pub(crate) fn order_selector_keys(
    l: &mut Lowerer<'_>,
    table: &str,
    keys: &mut [(ir::TableKey, Ty)],
    profile: Option<ActionProfileId>,
    span: Span,
) -> Res<()> {
    let selectors = keys
        .iter()
        .filter(|(k, _)| k.kind == ir::MatchKind::Selector)
        .count();
    let has_selector = profile
        .and_then(|p| l.pipe.action_profiles.get(p.index()))
        .is_some_and(|p| p.selector.is_some());
    if selectors > 0 && !has_selector {
        return Err(l.err(
            Diagnostic::error(format!(
                "table `{table}` has `selector` keys but no `ActionSelector` implementation"
            ))
            .with_primary(span, "here")
            .with_help("add `implementation = <an ActionSelector>;`"),
        ));
    }
    if has_selector && selectors == 0 {
        l.warn(
            Diagnostic::warning(format!(
                "table `{table}` has an action selector but no `selector` keys: every packet picks the same member of a group"
            ))
            .with_primary(span, "no selector keys"),
        );
    }
    keys.sort_by_key(|(k, _)| k.kind == ir::MatchKind::Selector);
    Ok(())
}

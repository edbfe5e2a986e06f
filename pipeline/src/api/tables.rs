//! Table verbs: add / modify / delete / get / clear / entries, and set / reset / get of the
//! default action, with key fields and action parameters given by name and checked against the
//! program (widths, match kinds, `@defaultonly` / `@tableonly`, const tables and defaults).

use super::names::{match_local, suggest};
use super::{ApiError, PipeSel};
use crate::ir::{self, ActionCall, KeyMatch, MatchKind, Pipeline, Value};
use crate::phv::mask;
use crate::state::new_register_state;
use crate::switch::Switch;
use crate::table::{EntryHandle, TableError};

/// A table entry as the control plane sees it (also what `entries` / `get` return).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableEntry {
    /// Key fields by name, in the table's key order.
    pub keys: Vec<(String, KeyMatch)>,
    /// Match priority (ternary/range tables only; lower wins, as BfRt's `$MATCH_PRIORITY`).
    pub priority: Option<u32>,
    /// Control-qualified action name.
    pub action: String,
    /// Action parameters by name, in declaration order.
    pub params: Vec<(String, Value)>,
}

/// A resolved table: pipeline, table id.
#[derive(Clone, Copy)]
pub(crate) struct TableRef {
    pub pl: usize,
    pub t: usize,
}

fn kind_of(m: &KeyMatch) -> MatchKind {
    match m {
        KeyMatch::Exact(_) => MatchKind::Exact,
        KeyMatch::Ternary { .. } => MatchKind::Ternary,
        KeyMatch::Lpm { .. } => MatchKind::Lpm,
        KeyMatch::Range { .. } => MatchKind::Range,
    }
}

fn wildcard(kind: MatchKind, width: u16) -> Option<KeyMatch> {
    match kind {
        MatchKind::Exact => None,
        MatchKind::Ternary => Some(KeyMatch::Ternary { value: 0, mask: 0 }),
        MatchKind::Lpm => Some(KeyMatch::Lpm {
            value: 0,
            prefix_len: 0,
        }),
        MatchKind::Range => Some(KeyMatch::Range {
            lo: 0,
            hi: mask(width),
        }),
        MatchKind::Selector => None,
    }
}

pub(crate) fn table_error(table: &ir::Table, e: TableError) -> ApiError {
    let key_name = |f: usize| {
        table
            .keys
            .get(f)
            .map(|k| k.name.clone())
            .unwrap_or_else(|| format!("#{f}"))
    };
    let name = table.name.clone();
    match e {
        TableError::Duplicate(_) => ApiError::DuplicateEntry { table: name },
        TableError::NotFound => ApiError::EntryNotFound { table: name },
        TableError::Full { capacity } => ApiError::TableFull {
            table: name,
            capacity,
        },
        TableError::ValueTooWide {
            field,
            value,
            width,
        } => ApiError::ValueTooWide {
            what: format!("table {name} key `{}`", key_name(field)),
            value,
            width,
        },
        TableError::MaskTooWide { field, mask, width } => ApiError::ValueTooWide {
            what: format!("table {name} key `{}` mask", key_name(field)),
            value: mask,
            width,
        },
        TableError::KeyCount { expected, got } => ApiError::KeyCount {
            table: name,
            expected,
            got,
        },
        TableError::KindMismatch {
            field,
            expected,
            got,
        } => ApiError::KeyKind {
            table: name,
            key: key_name(field),
            expected,
            got,
        },
        other => ApiError::Table {
            table: name,
            error: other,
        },
    }
}

/// Build the positional key of `table` from named fields.
/// Selector keys (an action selector's hash inputs) take no value in an entry.
pub(crate) fn build_keys(
    table: &ir::Table,
    keys: &[(&str, KeyMatch)],
) -> Result<Vec<KeyMatch>, ApiError> {
    let matched: Vec<&ir::TableKey> = table
        .keys
        .iter()
        .filter(|k| k.kind != MatchKind::Selector)
        .collect();
    if keys.len() > matched.len() {
        return Err(ApiError::KeyCount {
            table: table.name.clone(),
            expected: matched.len(),
            got: keys.len(),
        });
    }
    let mut out: Vec<Option<KeyMatch>> = vec![None; matched.len()];
    for (name, m) in keys {
        let Some(i) = matched.iter().position(|k| k.name == *name) else {
            return Err(ApiError::UnknownKey {
                table: table.name.clone(),
                key: name.to_string(),
                suggestions: suggest(name, matched.iter().map(|k| k.name.as_str())),
            });
        };
        if out[i].is_some() {
            return Err(ApiError::DuplicateKey {
                table: table.name.clone(),
                key: name.to_string(),
            });
        }
        let k = matched[i];
        let got = kind_of(m);
        // An exact value is accepted for ternary/range/lpm keys (BfRt does the same).
        let m = match (k.kind, *m) {
            (kind, mm) if kind == got => mm,
            (MatchKind::Ternary, KeyMatch::Exact(v)) => KeyMatch::Ternary {
                value: v,
                mask: mask(k.expr.width()),
            },
            (MatchKind::Lpm, KeyMatch::Exact(v)) => KeyMatch::Lpm {
                value: v,
                prefix_len: k.expr.width(),
            },
            (MatchKind::Range, KeyMatch::Exact(v)) => KeyMatch::Range { lo: v, hi: v },
            _ => {
                return Err(ApiError::KeyKind {
                    table: table.name.clone(),
                    key: k.name.clone(),
                    expected: k.kind,
                    got,
                })
            }
        };
        let w = k.expr.width();
        let too_wide = |v: Value| v & !mask(w) != 0;
        let bad = match m {
            KeyMatch::Exact(v) => too_wide(v).then_some(v),
            KeyMatch::Ternary { value, mask: mk } => [value, mk].into_iter().find(|v| too_wide(*v)),
            KeyMatch::Lpm { value, .. } => too_wide(value).then_some(value),
            KeyMatch::Range { lo, hi } => [lo, hi].into_iter().find(|v| too_wide(*v)),
        };
        if let Some(value) = bad {
            return Err(ApiError::ValueTooWide {
                what: format!("table {} key `{}`", table.name, k.name),
                value,
                width: w,
            });
        }
        out[i] = Some(m);
    }
    out.into_iter()
        .zip(matched)
        .map(|(m, k)| match m {
            Some(m) => Ok(m),
            None => wildcard(k.kind, k.expr.width()).ok_or_else(|| ApiError::MissingKey {
                table: table.name.clone(),
                key: k.name.clone(),
            }),
        })
        .collect()
}

/// Resolve an action of `table` and build its call from named parameters.
pub(crate) fn build_call(
    pl: &Pipeline,
    table: &ir::Table,
    action: &str,
    params: &[(&str, Value)],
    as_default: bool,
) -> Result<ActionCall, ApiError> {
    let matches: Vec<&ir::ActionRef> = table
        .actions
        .iter()
        .filter(|a| {
            pl.actions
                .get(a.action.index())
                .is_some_and(|act| match_local(action, &act.name))
        })
        .collect();
    let aref = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(ApiError::ActionNotInTable {
                table: table.name.clone(),
                action: action.to_string(),
                available: table
                    .actions
                    .iter()
                    .filter_map(|a| pl.actions.get(a.action.index()).map(|x| x.name.clone()))
                    .collect(),
            })
        }
        many => {
            return Err(ApiError::Ambiguous {
                kind: "action",
                name: action.to_string(),
                candidates: many
                    .iter()
                    .filter_map(|a| pl.actions.get(a.action.index()).map(|x| x.name.clone()))
                    .collect(),
            })
        }
    };
    let act = &pl.actions[aref.action.index()];
    if as_default && aref.table_only {
        return Err(ApiError::TableOnly {
            table: table.name.clone(),
            action: act.name.clone(),
        });
    }
    if !as_default && aref.default_only {
        return Err(ApiError::DefaultOnly {
            table: table.name.clone(),
            action: act.name.clone(),
        });
    }
    build_args(act, params).map(|args| ActionCall {
        action: aref.action,
        args,
    })
}

/// Action data from named parameters.
pub(crate) fn build_args(
    act: &ir::Action,
    params: &[(&str, Value)],
) -> Result<Vec<Value>, ApiError> {
    let mut args: Vec<Option<Value>> = vec![None; act.params.len()];
    for (name, v) in params {
        let Some(i) = act.params.iter().position(|p| p.name == *name) else {
            return Err(ApiError::UnknownParam {
                action: act.name.clone(),
                param: name.to_string(),
                suggestions: suggest(name, act.params.iter().map(|p| p.name.as_str())),
            });
        };
        if args[i].is_some() {
            return Err(ApiError::DuplicateParam {
                action: act.name.clone(),
                param: name.to_string(),
            });
        }
        let w = act.params[i].width;
        if v & !mask(w) != 0 {
            return Err(ApiError::ValueTooWide {
                what: format!("action {} parameter `{}`", act.name, name),
                value: *v,
                width: w,
            });
        }
        args[i] = Some(*v);
    }
    args.into_iter()
        .zip(act.params.iter())
        .map(|(a, p)| {
            a.ok_or_else(|| ApiError::MissingParam {
                action: act.name.clone(),
                param: p.name.clone(),
            })
        })
        .collect()
}

/// An entry's action by name with its parameters; an entry of a profile table shows the member
/// or group it points at as `$member(id)` / `$group(id)`.
pub(crate) fn named_params(pl: &Pipeline, call: &ActionCall) -> (String, Vec<(String, Value)>) {
    if let Some(r) = crate::table::profile::EntryRef::of(call) {
        let (name, id) = match r {
            crate::table::profile::EntryRef::Member(m) => ("$member", m),
            crate::table::profile::EntryRef::Group(g) => ("$group", g),
        };
        return (name.to_string(), vec![("id".to_string(), Value::from(id))]);
    }
    match pl.actions.get(call.action.index()) {
        Some(a) => (
            a.name.clone(),
            a.params
                .iter()
                .zip(call.args.iter())
                .map(|(p, v)| (p.name.clone(), *v))
                .collect(),
        ),
        None => (format!("#{}", call.action.0), Vec::new()),
    }
}

impl Switch {
    pub(crate) fn table_ref(&self, name: &str) -> Result<TableRef, ApiError> {
        let (pl, t) = self.resolve_named(
            "table",
            name,
            |p| p.tables.iter().map(|t| t.name.as_str()),
            |p, i| p.table_named(i),
        )?;
        Ok(TableRef { pl, t })
    }

    pub(crate) fn ir_table(&self, r: TableRef) -> &ir::Table {
        &self.prog.pipelines[r.pl].tables[r.t]
    }

    /// Zero the direct counters, meters and registers of `table` at `h` (a fresh entry).
    pub(crate) fn reset_direct(&mut self, pipe: usize, r: TableRef, h: EntryHandle) {
        let prog = self.prog.clone();
        let pl = &prog.pipelines[r.pl];
        let tid = ir::TableId(r.t as u32);
        let rt = &mut self.pipes[pipe].rt;
        for (ci, c) in pl.counters.iter().enumerate() {
            if c.direct_table == Some(tid) {
                let st = &mut rt.counters[ci];
                if let Some(x) = st.packets_mut().get_mut(h.index()) {
                    *x = 0;
                }
                if let Some(x) = st.bytes_mut().get_mut(h.index()) {
                    *x = 0;
                }
            }
        }
        for (mi, m) in pl.meters.iter().enumerate() {
            if m.direct_table == Some(tid) {
                let _ = rt.meters[mi].reset(h.0);
            }
        }
        for (ri, reg) in pl.registers.iter().enumerate() {
            if reg.direct_table == Some(tid) {
                let init = new_register_state(&ir::Register {
                    size: 1,
                    ..reg.clone()
                });
                let st = &mut rt.registers[ri];
                if let Some(x) = st.lo.get_mut(h.index()) {
                    *x = init.lo[0];
                }
                if let Some(x) = st.hi.get_mut(h.index()) {
                    *x = init.hi.first().copied().unwrap_or(0);
                }
            }
        }
    }

    pub(crate) fn check_mutable(&self, r: TableRef) -> Result<(), ApiError> {
        let t = self.ir_table(r);
        if t.entries_const {
            return Err(ApiError::ConstTable {
                table: t.name.clone(),
            });
        }
        Ok(())
    }

    /// What add and modify both check first: the table exists and may change, the keys and the
    /// action call are valid for it, and the pipes the request goes to.
    fn prepare_entry(
        &self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        action: &str,
        params: &[(&str, Value)],
    ) -> Result<(TableRef, Vec<KeyMatch>, ActionCall, Vec<usize>), ApiError> {
        let r = self.table_ref(table)?;
        self.check_mutable(r)?;
        let pl = &self.prog.pipelines[r.pl];
        let t = &pl.tables[r.t];
        if self.pipes.iter().any(|p| {
            p.tables
                .get(r.t)
                .is_some_and(|ts| ts.table.profile().is_some())
        }) {
            return Err(ApiError::ProfileTable {
                table: t.name.clone(),
                why: "has an action profile: its entries point at a member or a group",
            });
        }
        let km = build_keys(t, keys)?;
        let call = build_call(pl, t, action, params, false)?;
        let targets = self.target_pipes(pipes, r.pl, &t.name)?;
        Ok((r, km, call, targets))
    }

    /// Add an entry. On a multi-pipe request either every pipe gets it or none does.
    pub fn table_add(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        action: &str,
        params: &[(&str, Value)],
    ) -> Result<(), ApiError> {
        let (r, km, call, targets) = self.prepare_entry(pipes, table, keys, action, params)?;
        self.insert_all(r, &targets, &km, priority, &call)
    }

    /// Inserts one entry into table `r` of every pipe in `targets`: all of them get it, or (the
    /// first refusal undoing the inserts before it) none does.
    pub(crate) fn insert_all(
        &mut self,
        r: TableRef,
        targets: &[usize],
        km: &[KeyMatch],
        priority: Option<u32>,
        call: &ActionCall,
    ) -> Result<(), ApiError> {
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        let mut done: Vec<usize> = Vec::new();
        for &p in targets {
            match self.pipes[p].tables[r.t]
                .table
                .insert(km, priority, call.clone())
            {
                Ok(h) => {
                    self.reset_direct(p, r, h);
                    let now = self.last_ts;
                    if let Some(idle) = &mut self.pipes[p].tables[r.t].idle {
                        idle.reset(h, now);
                    }
                    done.push(p);
                }
                Err(e) => {
                    for q in done {
                        let _ = self.pipes[q].tables[r.t].table.delete(km, priority);
                    }
                    return Err(table_error(t, e));
                }
            }
        }
        Ok(())
    }

    /// Add an entry given as a [`TableEntry`].
    pub fn table_add_entry(
        &mut self,
        pipes: PipeSel,
        table: &str,
        e: &TableEntry,
    ) -> Result<(), ApiError> {
        let keys: Vec<(&str, KeyMatch)> = e.keys.iter().map(|(k, m)| (k.as_str(), *m)).collect();
        let params: Vec<(&str, Value)> = e.params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        self.table_add(pipes, table, &keys, e.priority, &e.action, &params)
    }

    /// Change the action (and data) of an existing entry.
    pub fn table_modify(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
        action: &str,
        params: &[(&str, Value)],
    ) -> Result<(), ApiError> {
        let (r, km, call, targets) = self.prepare_entry(pipes, table, keys, action, params)?;
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        // Check every pipe first so a failure changes nothing.
        for &p in &targets {
            if self.pipes[p].tables[r.t].table.get(&km, priority).is_none() {
                return Err(ApiError::EntryNotFound {
                    table: t.name.clone(),
                });
            }
        }
        for p in targets {
            self.pipes[p].tables[r.t]
                .table
                .modify(&km, priority, call.clone())
                .map_err(|e| table_error(t, e))?;
        }
        Ok(())
    }

    /// Delete an entry.
    pub fn table_delete(
        &mut self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
    ) -> Result<(), ApiError> {
        let r = self.table_ref(table)?;
        self.check_mutable(r)?;
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        let km = build_keys(t, keys)?;
        let targets = self.target_pipes(pipes, r.pl, &t.name)?;
        for &p in &targets {
            if self.pipes[p].tables[r.t].table.get(&km, priority).is_none() {
                return Err(ApiError::EntryNotFound {
                    table: t.name.clone(),
                });
            }
        }
        for p in targets {
            self.pipes[p].tables[r.t]
                .table
                .delete(&km, priority)
                .map_err(|e| table_error(t, e))?;
        }
        Ok(())
    }

    /// The entry with exactly this key (from the first selected pipe).
    pub fn table_get(
        &self,
        pipes: PipeSel,
        table: &str,
        keys: &[(&str, KeyMatch)],
        priority: Option<u32>,
    ) -> Result<TableEntry, ApiError> {
        let r = self.table_ref(table)?;
        let pl = &self.prog.pipelines[r.pl];
        let t = &pl.tables[r.t];
        let km = build_keys(t, keys)?;
        let p = self.first_pipe(pipes, r.pl, &t.name)?;
        let ts = &self.pipes[p].tables[r.t].table;
        let (h, _) = ts
            .get(&km, priority)
            .ok_or_else(|| ApiError::EntryNotFound {
                table: t.name.clone(),
            })?;
        let (k, prio, call) = ts.entry(h).ok_or_else(|| ApiError::EntryNotFound {
            table: t.name.clone(),
        })?;
        Ok(self.entry_view(pl, t, k, prio, call))
    }

    pub(crate) fn entry_view(
        &self,
        pl: &Pipeline,
        t: &ir::Table,
        keys: &[KeyMatch],
        priority: Option<u32>,
        call: &ActionCall,
    ) -> TableEntry {
        let (action, params) = named_params(pl, call);
        TableEntry {
            keys: t
                .keys
                .iter()
                .zip(keys.iter())
                .map(|(k, m)| (k.name.clone(), *m))
                .collect(),
            priority,
            action,
            params,
        }
    }

    pub(crate) fn first_pipe(
        &self,
        pipes: PipeSel,
        pipeline: usize,
        name: &str,
    ) -> Result<usize, ApiError> {
        self.target_pipes(pipes, pipeline, name)?
            .first()
            .copied()
            .ok_or_else(|| ApiError::Unknown {
                kind: "pipe running",
                name: name.to_string(),
                suggestions: Vec::new(),
            })
    }

    /// Every entry of the table (from the first selected pipe), in handle order.
    pub fn table_entries(&self, pipes: PipeSel, table: &str) -> Result<Vec<TableEntry>, ApiError> {
        let r = self.table_ref(table)?;
        let pl = &self.prog.pipelines[r.pl];
        let t = &pl.tables[r.t];
        let p = self.first_pipe(pipes, r.pl, &t.name)?;
        Ok(self.pipes[p].tables[r.t]
            .table
            .iter()
            .map(|(_, k, prio, call)| self.entry_view(pl, t, k, prio, call))
            .collect())
    }

    /// Remove every entry.
    pub fn table_clear(&mut self, pipes: PipeSel, table: &str) -> Result<(), ApiError> {
        let r = self.table_ref(table)?;
        self.check_mutable(r)?;
        let name = self.ir_table(r).name.clone();
        for p in self.target_pipes(pipes, r.pl, &name)? {
            self.pipes[p].tables[r.t].table.clear();
        }
        Ok(())
    }

    /// Set the default (miss) action.
    pub fn table_set_default(
        &mut self,
        pipes: PipeSel,
        table: &str,
        action: &str,
        params: &[(&str, Value)],
    ) -> Result<(), ApiError> {
        let r = self.table_ref(table)?;
        let prog = self.prog.clone();
        let pl = &prog.pipelines[r.pl];
        let t = &pl.tables[r.t];
        if t.default_action_const {
            return Err(ApiError::ConstDefault {
                table: t.name.clone(),
            });
        }
        let call = build_call(pl, t, action, params, true)?;
        for p in self.target_pipes(pipes, r.pl, &t.name)? {
            self.pipes[p].tables[r.t].set_default(call.clone());
        }
        Ok(())
    }

    /// Back to the program's default action.
    pub fn table_reset_default(&mut self, pipes: PipeSel, table: &str) -> Result<(), ApiError> {
        let r = self.table_ref(table)?;
        let prog = self.prog.clone();
        let t = &prog.pipelines[r.pl].tables[r.t];
        if t.default_action_const {
            return Err(ApiError::ConstDefault {
                table: t.name.clone(),
            });
        }
        for p in self.target_pipes(pipes, r.pl, &t.name)? {
            self.pipes[p].tables[r.t].set_default(t.default_action.clone());
        }
        Ok(())
    }

    /// The current default action and its parameters (first selected pipe).
    pub fn table_get_default(
        &self,
        pipes: PipeSel,
        table: &str,
    ) -> Result<(String, Vec<(String, Value)>), ApiError> {
        let r = self.table_ref(table)?;
        let pl = &self.prog.pipelines[r.pl];
        let p = self.first_pipe(pipes, r.pl, &pl.tables[r.t].name)?;
        Ok(named_params(pl, self.pipes[p].tables[r.t].default()))
    }

    /// Lookups that hit and missed in `table`, summed over the selected pipes.
    pub fn table_hit_miss(&self, pipes: PipeSel, table: &str) -> Result<(u64, u64), ApiError> {
        let r = self.table_ref(table)?;
        let targets = self.target_pipes(pipes, r.pl, &self.ir_table(r).name)?;
        Ok(targets.iter().fold((0, 0), |(h, m), &p| {
            let ts = &self.pipes[p].tables[r.t];
            (h + ts.hits.get(), m + ts.misses.get())
        }))
    }

    /// Number of entries (first selected pipe).
    pub fn table_len(&self, pipes: PipeSel, table: &str) -> Result<usize, ApiError> {
        let r = self.table_ref(table)?;
        let p = self.first_pipe(pipes, r.pl, &self.ir_table(r).name)?;
        Ok(self.pipes[p].tables[r.t].table.len())
    }

    /// The live entry handle of an entry (direct counters/meters/registers index by it).
    pub(crate) fn entry_handle(
        &self,
        pipe: usize,
        table: usize,
        tname: &ir::Table,
        keys: &[KeyMatch],
        priority: Option<u32>,
    ) -> Result<EntryHandle, ApiError> {
        self.pipes[pipe].tables[table]
            .table
            .get(keys, priority)
            .map(|(h, _)| h)
            .ok_or_else(|| ApiError::EntryNotFound {
                table: tname.name.clone(),
            })
    }

    /// Resolve a table and build a key (for direct-resource requests).
    pub(crate) fn table_key(
        &self,
        table: &str,
        keys: &[(&str, KeyMatch)],
    ) -> Result<(usize, usize, Vec<KeyMatch>), ApiError> {
        let r = self.table_ref(table)?;
        let km = build_keys(self.ir_table(r), keys)?;
        Ok((r.pl, r.t, km))
    }
}

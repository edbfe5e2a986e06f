//! Name resolution against the program: tables, keys, actions, parameters, registers,
//! counters, action profiles and parser value sets as a user names them, turned into IR ids
//! and typed values.
//!
//! A name matches when it is the object's full name (`SwitchIngress.ipv4_lpm`), a dotted suffix
//! of it (`ipv4_lpm`, `SwitchIngress.ipv4_lpm` for `pipe.SwitchIngress.ipv4_lpm`), a suffix of
//! it as a string (`Ingress.ipv4_lpm` for `SwitchIngress.ipv4_lpm`, `x` for `ex`: the Tofino
//! model's STF harness finds tables and actions by the end of their names), or — as a last
//! resort, for scripts written against another architecture's instance names such as
//! `ingress.t1` — has the same last component. The first tier with a match decides; a tier
//! with more than one match is ambiguous, the error naming them.

use pipeline::api::TableEntry;
use pipeline::ir::{self, ActionCall, ActionId, KeyMatch, MatchKind, Program, TableId, Value};

use crate::value::{self, ValueError};

/// Why a name or value could not be resolved against the program.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("no {kind} named `{name}` in the program{}", known_list(.known))]
    Unknown {
        kind: &'static str,
        name: String,
        known: Vec<String>,
    },
    #[error("{kind} name `{name}` is ambiguous: {}", .candidates.join(", "))]
    Ambiguous {
        kind: &'static str,
        name: String,
        candidates: Vec<String>,
    },
    #[error("table `{table}` has no key `{key}`{}", known_list(.known))]
    UnknownKey {
        table: String,
        key: String,
        known: Vec<String>,
    },
    #[error("key `{key}` of table `{table}` is given twice")]
    DuplicateKey { table: String, key: String },
    #[error("exact key `{key}` of table `{table}` needs a value")]
    MissingKey { table: String, key: String },
    #[error("table `{table}` has no action `{action}`{}", known_list(.known))]
    UnknownAction {
        table: String,
        action: String,
        known: Vec<String>,
    },
    #[error(
        "action `{action}` is @defaultonly in table `{table}`: it cannot be an entry's action"
    )]
    DefaultOnly { table: String, action: String },
    #[error("action `{action}` is @tableonly in table `{table}`: it cannot be the default action")]
    TableOnly { table: String, action: String },
    #[error("the default action of table `{table}` is const")]
    ConstDefault { table: String },
    #[error("action `{action}` has no parameter `{param}`{}", known_list(.known))]
    UnknownParam {
        action: String,
        param: String,
        known: Vec<String>,
    },
    #[error("action `{action}` needs parameter `{param}`")]
    MissingParam { action: String, param: String },
    #[error("table `{table}` has ternary/range keys: the entry needs a priority")]
    PriorityMissing { table: String },
    #[error("table `{table}` has only exact/lpm keys: entries take no priority")]
    PriorityForbidden { table: String },
    #[error("{what}: {source}")]
    Value {
        what: String,
        #[source]
        source: ValueError,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        String::new()
    } else {
        format!(" (it has: {})", known.join(", "))
    }
}

/// Picks the one item whose name matches `given` (see the module doc for the tiers).
fn pick<T: Copy>(kind: &'static str, given: &str, items: &[(&str, T)]) -> Result<T, ResolveError> {
    let last = given.rsplit('.').next().unwrap_or(given);
    let tiers: [&dyn Fn(&str) -> bool; 4] = [
        &|full: &str| full == given,
        &|full: &str| {
            full.len() > given.len() && full.ends_with(given) && {
                let cut = full.len() - given.len() - 1;
                full.as_bytes().get(cut) == Some(&b'.')
            }
        },
        &|full: &str| full.ends_with(given),
        &|full: &str| full.rsplit('.').next() == Some(last),
    ];
    for tier in tiers {
        let hits: Vec<&(&str, T)> = items.iter().filter(|(n, _)| tier(n)).collect();
        match hits.len() {
            0 => continue,
            1 => return Ok(hits[0].1),
            _ => {
                return Err(ResolveError::Ambiguous {
                    kind,
                    name: given.to_string(),
                    candidates: hits.iter().map(|(n, _)| n.to_string()).collect(),
                })
            }
        }
    }
    Err(ResolveError::Unknown {
        kind,
        name: given.to_string(),
        known: items.iter().take(12).map(|(n, _)| n.to_string()).collect(),
    })
}

/// A table of a pipeline of the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableRef {
    pub pipeline: usize,
    pub table: TableId,
}

/// An object (register, counter) of a pipeline, by index into its vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjRef {
    pub pipeline: usize,
    pub index: usize,
}

fn qualified<'a>(
    prog: &'a Program,
    names: impl Fn(&'a ir::Pipeline) -> Vec<&'a str>,
) -> Vec<(String, ObjRef)> {
    let multi = prog.pipelines.len() > 1;
    let mut out = Vec::new();
    for (p, pl) in prog.pipelines.iter().enumerate() {
        for (i, n) in names(pl).into_iter().enumerate() {
            let name = if multi {
                format!("{}.{}", pl.name, n)
            } else {
                n.to_string()
            };
            out.push((
                name,
                ObjRef {
                    pipeline: p,
                    index: i,
                },
            ));
        }
    }
    out
}

fn pick_obj(
    kind: &'static str,
    given: &str,
    all: &[(String, ObjRef)],
) -> Result<ObjRef, ResolveError> {
    let items: Vec<(&str, ObjRef)> = all.iter().map(|(n, r)| (n.as_str(), *r)).collect();
    pick(kind, given, &items)
}

/// Finds a table. With several pipelines, names may be prefixed by the pipeline's name.
/// `@hidden` tables are not the control plane's to name (p4c leaves them out of P4Info): they
/// are not candidates, so naming one is "no table named ...".
pub fn find_table(prog: &Program, name: &str) -> Result<TableRef, ResolveError> {
    let all: Vec<(String, ObjRef)> = qualified(prog, |pl| {
        pl.tables.iter().map(|t| t.name.as_str()).collect()
    })
    .into_iter()
    .filter(|(_, r)| prog.pipelines[r.pipeline].table_named(r.index))
    .collect();
    let r = pick_obj("table", name, &all)?;
    Ok(TableRef {
        pipeline: r.pipeline,
        table: TableId(r.index as u32),
    })
}

/// Finds an action profile (by its own name, or its selector's).
pub fn find_profile(prog: &Program, name: &str) -> Result<ObjRef, ResolveError> {
    let all = qualified(prog, |pl| {
        pl.action_profiles.iter().map(|a| a.name.as_str()).collect()
    });
    match pick_obj("action profile", name, &all) {
        Err(ResolveError::Unknown { .. }) => {
            // The selector's name stands for its profile (BfRt shows both).
            let sels = qualified(prog, |pl| {
                pl.action_profiles
                    .iter()
                    .map(|a| a.selector.as_ref().map_or("", |s| s.name.as_str()))
                    .collect()
            });
            pick_obj("action profile", name, &sels).map_err(|e| match e {
                ResolveError::Unknown { kind, name, .. } => ResolveError::Unknown {
                    kind,
                    name,
                    known: all.iter().map(|x| x.0.clone()).collect(),
                },
                other => other,
            })
        }
        other => other,
    }
}

/// A member resolved: the profile's full name, the action's, and its parameters by name.
pub type ResolvedMember = (String, String, Vec<(String, Value)>);

/// An entry pointing at a member or group, resolved: the table's full name, its keys by name,
/// the checked priority.
pub type ResolvedRefEntry = (String, Vec<(String, KeyMatch)>, Option<u32>);

/// A member of an action profile, read against the first table the profile implements.
pub fn resolve_member<'s>(
    prog: &Program,
    profile: &str,
    action: &str,
    args: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Result<ResolvedMember, ResolveError> {
    let r = find_profile(prog, profile)?;
    let pl = &prog.pipelines[r.pipeline];
    let ap = &pl.action_profiles[r.index];
    let Some(t) = ap.tables.first().and_then(|t| pl.tables.get(t.index())) else {
        return Err(ResolveError::Unknown {
            kind: "table implemented by action profile",
            name: ap.name.clone(),
            known: Vec::new(),
        });
    };
    let call = build_action(pl, t, action, args, ActionUse::Entry)?;
    let (a, params) = named_call(pl, &call);
    Ok((ap.name.clone(), a, params))
}

/// An entry that points at a member or group.
pub fn resolve_ref_entry<'s>(
    prog: &Program,
    table_name: &str,
    keys: impl IntoIterator<Item = (&'s str, &'s str)>,
    priority: Option<u32>,
) -> Result<ResolvedRefEntry, ResolveError> {
    let r = find_table(prog, table_name)?;
    let t = &prog.pipelines[r.pipeline].tables[r.table.index()];
    let km = build_key(t, keys)?;
    let priority = check_priority(t, priority)?;
    let named = t.keys.iter().map(|k| k.name.clone()).zip(km).collect();
    Ok((t.name.clone(), named, priority))
}

/// Keeps the objects the control plane can name (not those bound to an `@hidden` table, see
/// [`ir::Pipeline::direct_named`]); `direct` gives an object's table.
fn named_only(
    prog: &Program,
    all: Vec<(String, ObjRef)>,
    direct: impl Fn(&ir::Pipeline, usize) -> Option<TableId>,
) -> Vec<(String, ObjRef)> {
    all.into_iter()
        .filter(|(_, r)| {
            let pl = &prog.pipelines[r.pipeline];
            pl.direct_named(direct(pl, r.index))
        })
        .collect()
}

/// Finds a register.
pub fn find_register(prog: &Program, name: &str) -> Result<ObjRef, ResolveError> {
    let all = qualified(prog, |pl| {
        pl.registers.iter().map(|r| r.name.as_str()).collect()
    });
    let all = named_only(prog, all, |pl, i| pl.registers[i].direct_table);
    pick_obj("register", name, &all)
}

/// Finds an LPF or WRED filter.
pub fn find_filter(prog: &Program, name: &str) -> Result<ObjRef, ResolveError> {
    let all = qualified(prog, |pl| {
        pl.filters.iter().map(|f| f.name.as_str()).collect()
    });
    let all = named_only(prog, all, |pl, i| pl.filters[i].direct_table);
    pick_obj("filter", name, &all)
}

/// Finds a parser value set.
pub fn find_value_set(prog: &Program, name: &str) -> Result<ObjRef, ResolveError> {
    let all = qualified(prog, |pl| {
        pl.value_sets.iter().map(|v| v.name.as_str()).collect()
    });
    pick_obj("value set", name, &all)
}

/// A value set entry as a user writes it: the set's full name and a value and mask per field.
pub type ResolvedValueSetEntry = (String, Vec<(Value, Value)>);

/// A value set entry from text per field (`4789`, `0x12b5 &&& 0xff00`, `10.0.0.0/8`, `*`):
/// fields by name (`f1` for a `bit<N>` set), or one unnamed text for a one-field set.
pub fn resolve_value_set_entry<'s>(
    prog: &Program,
    set: &str,
    fields: impl IntoIterator<Item = (Option<&'s str>, &'s str)>,
) -> Result<ResolvedValueSetEntry, ResolveError> {
    let r = find_value_set(prog, set)?;
    let vs = &prog.pipelines[r.pipeline].value_sets[r.index];
    let known = || vs.fields.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    let mut texts: Vec<Option<&str>> = vec![None; vs.fields.len()];
    for (name, text) in fields {
        let i = match name {
            None if vs.fields.len() == 1 => 0,
            None => {
                return Err(ResolveError::MissingKey {
                    table: vs.name.clone(),
                    key: format!("field name (the set has {})", known().join(", ")),
                })
            }
            Some(n) => vs.fields.iter().position(|(f, _)| f == n).ok_or_else(|| {
                ResolveError::UnknownKey {
                    table: vs.name.clone(),
                    key: n.to_string(),
                    known: known(),
                }
            })?,
        };
        if texts[i].replace(text).is_some() {
            return Err(ResolveError::DuplicateKey {
                table: vs.name.clone(),
                key: vs.fields[i].0.clone(),
            });
        }
    }
    let mut out = Vec::new();
    for ((fname, w), text) in vs.fields.iter().zip(texts) {
        let Some(text) = text else {
            return Err(ResolveError::MissingKey {
                table: vs.name.clone(),
                key: fname.clone(),
            });
        };
        let what = || format!("value set `{}` field `{fname}` ({w} bits)", vs.name);
        let m = value::parse_key_match(text, MatchKind::Ternary, *w).map_err(|source| {
            ResolveError::Value {
                what: what(),
                source,
            }
        })?;
        // A ternary parse gives a ternary match; anything else is taken as an exact value.
        out.push(match m {
            KeyMatch::Ternary { value, mask } => (value, mask),
            KeyMatch::Exact(value)
            | KeyMatch::Lpm { value, .. }
            | KeyMatch::Range { lo: value, .. } => (value, value::width_mask(*w)),
        });
    }
    Ok((vs.name.clone(), out))
}

/// Finds a counter (indexed or direct).
pub fn find_counter(prog: &Program, name: &str) -> Result<ObjRef, ResolveError> {
    let all = qualified(prog, |pl| {
        pl.counters.iter().map(|c| c.name.as_str()).collect()
    });
    let all = named_only(prog, all, |pl, i| pl.counters[i].direct_table);
    pick_obj("counter", name, &all)
}

/// The IR table behind a [`TableRef`] (always valid for refs from [`find_table`]).
pub fn table(prog: &Program, t: TableRef) -> Option<&ir::Table> {
    prog.pipelines.get(t.pipeline)?.tables.get(t.table.index())
}

/// Whether entries of `t` carry a match priority (a ternary or range key, or several lpm keys).
pub fn needs_priority(t: &ir::Table) -> bool {
    let lpm = t.keys.iter().filter(|k| k.kind == MatchKind::Lpm).count();
    lpm > 1
        || t.keys
            .iter()
            .any(|k| matches!(k.kind, MatchKind::Ternary | MatchKind::Range))
}

/// Rewrites the key-name spellings of p4c's STF files into P4 expressions: `extra$0.h` (a
/// header-stack element) becomes `extra[0].h`, and `hdr.h.$valid$` becomes `hdr.h.isValid()`.
pub fn normalize_key_name(name: &str) -> String {
    let base = name
        .strip_suffix(".$valid$")
        .or_else(|| name.strip_suffix(".valid"))
        .map(|h| format!("{h}.isValid()"));
    let name = base.as_deref().unwrap_or(name);
    let mut out = String::with_capacity(name.len() + 2);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('[');
            while let Some(d) = chars.next_if(char::is_ascii_digit) {
                out.push(d);
            }
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

/// Builds an entry's key from `(key name, value text)` pairs, in the table's key order.
/// Omitted ternary/lpm/range keys match anything; omitted exact keys are an error. Selector
/// keys (an action selector's hash inputs, last in the table's keys) take no value.
pub fn build_key<'s>(
    t: &ir::Table,
    given: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Result<Vec<KeyMatch>, ResolveError> {
    let matched: Vec<&ir::TableKey> = t
        .keys
        .iter()
        .filter(|k| k.kind != ir::MatchKind::Selector)
        .collect();
    let names: Vec<(&str, usize)> = matched
        .iter()
        .enumerate()
        .map(|(i, k)| (k.name.as_str(), i))
        .collect();
    let mut out: Vec<Option<KeyMatch>> = vec![None; matched.len()];
    for (name, text) in given {
        // The name as written first; p4c's STF spellings only when that finds nothing.
        let found = match pick("key", name, &names) {
            Err(ResolveError::Unknown { .. }) if normalize_key_name(name) != name => {
                pick("key", &normalize_key_name(name), &names)
            }
            other => other,
        };
        let i = found.map_err(|e| match e {
            ResolveError::Unknown { known, .. } => ResolveError::UnknownKey {
                table: t.name.clone(),
                key: name.to_string(),
                known,
            },
            other => other,
        })?;
        let k = matched[i];
        if out[i].is_some() {
            return Err(ResolveError::DuplicateKey {
                table: t.name.clone(),
                key: k.name.clone(),
            });
        }
        let m = value::parse_key_match(text, k.kind, k.expr.width()).map_err(|source| {
            ResolveError::Value {
                what: format!("key `{}` ({} key, {} bits)", k.name, k.kind, k.expr.width()),
                source,
            }
        })?;
        out[i] = Some(m);
    }
    matched
        .iter()
        .zip(out)
        .map(|(k, m)| match m {
            Some(m) => Ok(m),
            None => value::match_anything(k.kind, k.expr.width()).ok_or_else(|| {
                ResolveError::MissingKey {
                    table: t.name.clone(),
                    key: k.name.clone(),
                }
            }),
        })
        .collect()
}

/// Where an action is being used, for the @defaultonly / @tableonly checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionUse {
    Entry,
    Default,
}

/// Where action `name` sits in `t`'s action list (named in full or by a dotted suffix).
fn action_index(pl: &ir::Pipeline, t: &ir::Table, name: &str) -> Result<usize, ResolveError> {
    let refs: Vec<(&str, usize)> = t
        .actions
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            pl.actions
                .get(a.action.index())
                .map(|act| (act.name.as_str(), i))
        })
        .collect();
    pick("action", name, &refs).map_err(|e| match e {
        ResolveError::Unknown { known, .. } => ResolveError::UnknownAction {
            table: t.name.clone(),
            action: name.to_string(),
            known,
        },
        other => other,
    })
}

/// Action `name` of table `t`, found as entries and default actions name it.
pub fn find_action<'p>(
    pl: &'p ir::Pipeline,
    t: &ir::Table,
    name: &str,
) -> Result<&'p ir::Action, ResolveError> {
    let i = action_index(pl, t, name)?;
    Ok(&pl.actions[t.actions[i].action.index()])
}

/// Finds action `name` among `t`'s actions and reads its arguments from `(param, text)` pairs.
pub fn build_action<'s>(
    pl: &ir::Pipeline,
    t: &ir::Table,
    name: &str,
    args: impl IntoIterator<Item = (&'s str, &'s str)>,
    usage: ActionUse,
) -> Result<ActionCall, ResolveError> {
    let i = action_index(pl, t, name)?;
    let aref = &t.actions[i];
    let act = &pl.actions[aref.action.index()];
    match usage {
        ActionUse::Entry if aref.default_only => {
            return Err(ResolveError::DefaultOnly {
                table: t.name.clone(),
                action: act.name.clone(),
            })
        }
        ActionUse::Default if aref.table_only => {
            return Err(ResolveError::TableOnly {
                table: t.name.clone(),
                action: act.name.clone(),
            })
        }
        ActionUse::Default if t.default_action_const => {
            return Err(ResolveError::ConstDefault {
                table: t.name.clone(),
            })
        }
        _ => {}
    }
    let values = build_args(act, args)?;
    Ok(ActionCall {
        action: ActionId(aref.action.0),
        args: values,
    })
}

/// Reads an action's arguments by parameter name, in parameter order; all are required.
pub fn build_args<'s>(
    act: &ir::Action,
    args: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Result<Vec<Value>, ResolveError> {
    let mut out: Vec<Option<Value>> = vec![None; act.params.len()];
    for (name, text) in args {
        let i = act
            .params
            .iter()
            .position(|p| p.name == name)
            .ok_or_else(|| ResolveError::UnknownParam {
                action: act.name.clone(),
                param: name.to_string(),
                known: act.params.iter().map(|p| p.name.clone()).collect(),
            })?;
        let p = &act.params[i];
        let v = value::parse_value(text, p.width).map_err(|source| ResolveError::Value {
            what: format!("parameter `{}` ({} bits)", p.name, p.width),
            source,
        })?;
        out[i] = Some(v);
    }
    act.params
        .iter()
        .zip(out)
        .map(|(p, v)| {
            v.ok_or_else(|| ResolveError::MissingParam {
                action: act.name.clone(),
                param: p.name.clone(),
            })
        })
        .collect()
}

/// Checks an entry's priority against the table's need for one.
pub fn check_priority(t: &ir::Table, priority: Option<u32>) -> Result<Option<u32>, ResolveError> {
    match (needs_priority(t), priority) {
        (true, None) => Err(ResolveError::PriorityMissing {
            table: t.name.clone(),
        }),
        (false, Some(_)) => Err(ResolveError::PriorityForbidden {
            table: t.name.clone(),
        }),
        (_, p) => Ok(p),
    }
}

/// A table entry resolved against the program: the table's full name and the entry in the
/// runtime API's terms (full key, action and parameter names, typed values).
pub fn resolve_entry<'s>(
    prog: &Program,
    table_name: &str,
    keys: impl IntoIterator<Item = (&'s str, &'s str)>,
    priority: Option<u32>,
    action: &str,
    args: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Result<(String, TableEntry), ResolveError> {
    let r = find_table(prog, table_name)?;
    let pl = &prog.pipelines[r.pipeline];
    let t = &pl.tables[r.table.index()];
    let km = build_key(t, keys)?;
    let priority = check_priority(t, priority)?;
    let call = build_action(pl, t, action, args, ActionUse::Entry)?;
    Ok((t.name.clone(), entry_view(pl, t, km, priority, &call)))
}

/// A default action resolved against the program, in the runtime API's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultAction {
    /// The table's full name.
    pub table: String,
    /// The action's full name.
    pub action: String,
    pub params: Vec<(String, Value)>,
}

/// Resolves `setdefault`-style requests: the table, its action and the action's parameters.
pub fn resolve_default<'s>(
    prog: &Program,
    table_name: &str,
    action: &str,
    args: impl IntoIterator<Item = (&'s str, &'s str)>,
) -> Result<DefaultAction, ResolveError> {
    let r = find_table(prog, table_name)?;
    let pl = &prog.pipelines[r.pipeline];
    let t = &pl.tables[r.table.index()];
    let call = build_action(pl, t, action, args, ActionUse::Default)?;
    let (name, params) = named_call(pl, &call);
    Ok(DefaultAction {
        table: t.name.clone(),
        action: name,
        params,
    })
}

fn named_call(pl: &ir::Pipeline, call: &ActionCall) -> (String, Vec<(String, Value)>) {
    match pl.actions.get(call.action.index()) {
        Some(a) => (
            a.name.clone(),
            a.params
                .iter()
                .zip(&call.args)
                .map(|(p, v)| (p.name.clone(), *v))
                .collect(),
        ),
        None => (String::new(), Vec::new()),
    }
}

fn entry_view(
    pl: &ir::Pipeline,
    t: &ir::Table,
    keys: Vec<KeyMatch>,
    priority: Option<u32>,
    call: &ActionCall,
) -> TableEntry {
    let (action, params) = named_call(pl, call);
    TableEntry {
        keys: t.keys.iter().map(|k| k.name.clone()).zip(keys).collect(),
        priority,
        action,
        params,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use pipeline::ir::*;

    fn field(offset: u32, width: u16) -> Expr {
        Expr::Field(FieldRef { offset, width })
    }

    fn key(name: &str, width: u16, kind: MatchKind) -> TableKey {
        TableKey {
            name: name.into(),
            expr: field(0, width),
            kind,
        }
    }

    fn action(name: &str, params: &[(&str, u16)]) -> Action {
        Action {
            name: name.into(),
            params: params
                .iter()
                .map(|(n, w)| ActionParam {
                    name: n.to_string(),
                    width: *w,
                })
                .collect(),
            body: vec![],
        }
    }

    fn aref(i: u32) -> ActionRef {
        ActionRef {
            action: ActionId(i),
            default_only: false,
            table_only: false,
        }
    }

    fn table(name: &str, keys: Vec<TableKey>, actions: Vec<ActionRef>) -> Table {
        Table {
            name: name.into(),
            gress: Gress::Ingress,
            keys,
            actions,
            default_action: ActionCall {
                action: ActionId(0),
                args: vec![],
            },
            default_action_const: false,
            const_entries: vec![],
            entries_const: false,
            size: 64,
            direct_counter: None,
            direct_meter: None,
            idle_timeout: false,
            stage: 0,
            hidden: false,
        }
    }

    fn gress() -> GressProgram {
        GressProgram {
            phv: PhvLayout::default(),
            prefix: PrefixLayout::default(),
            intrinsics: IntrinsicBindings::default(),
            parser: Parser {
                name: "p".into(),
                start: StateId(0),
                states: vec![],
            },
            control: Control {
                name: "c".into(),
                body: vec![],
            },
            deparser: Control {
                name: "d".into(),
                body: vec![],
            },
        }
    }

    /// A program shaped like l2l3.p4's tables (no bodies): enough to resolve names against.
    pub(crate) fn l2l3_like() -> Program {
        let actions = vec![
            action("NoAction", &[]),
            action("SwitchIngress.set_port", &[("port", 9)]),
            action("SwitchIngress.flood", &[("mgid", 16)]),
            action("SwitchIngress.drop", &[]),
            action("SwitchIngress.set_nexthop", &[("nexthop_id", 16)]),
            action("SwitchIngress.acl_deny", &[]),
            action("SwitchIngress.acl_permit", &[]),
            action("SwitchEgress.rewrite_smac", &[("smac", 48)]),
        ];
        let mut acl = table(
            "SwitchIngress.acl",
            vec![
                key("ig_intr_md.ingress_port", 9, MatchKind::Ternary),
                key("hdr.ipv4.dst_addr", 32, MatchKind::Ternary),
                key("hdr.l4.dst_port", 16, MatchKind::Range),
            ],
            vec![aref(5), aref(6)],
        );
        acl.actions[1].table_only = true;
        let tables = vec![
            table(
                "SwitchIngress.mac_dst",
                vec![key("hdr.ethernet.dst_addr", 48, MatchKind::Exact)],
                vec![aref(1), aref(2), aref(3)],
            ),
            table(
                "SwitchIngress.ipv4_lpm",
                vec![key("hdr.ipv4.dst_addr", 32, MatchKind::Lpm)],
                vec![aref(4), aref(3)],
            ),
            acl,
            table(
                "SwitchEgress.port_smac",
                vec![key("eg_intr_md.egress_port", 9, MatchKind::Exact)],
                vec![aref(7), aref(0)],
            ),
        ];
        let registers = vec![
            Register {
                name: "SwitchIngress.seen".into(),
                gress: Gress::Ingress,
                size: 16,
                width: 32,
                paired: false,
                word_names: None,
                initial_lo: 0,
                initial_hi: 0,
                direct_table: None,
                stage: 0,
            },
            Register {
                name: "SwitchIngress.pair".into(),
                gress: Gress::Ingress,
                size: 16,
                width: 16,
                paired: true,
                word_names: Some(("first".into(), "second".into())),
                initial_lo: 0,
                initial_hi: 0,
                direct_table: None,
                stage: 0,
            },
        ];
        let counters = vec![Counter {
            name: "SwitchIngress.ingress_port_counter".into(),
            kind: CounterKind::PacketsAndBytes,
            size: 512,
            direct_table: None,
            bytes: Default::default(),
        }];
        Program {
            name: "l2l3".into(),
            target: Target::Tofino1,
            pipelines: vec![Pipeline {
                name: "pipe".into(),
                ingress: gress(),
                egress: gress(),
                tables,
                actions,
                registers,
                register_actions: vec![],
                register_params: vec![],
                hashes: vec![],
                counters,
                meters: vec![],
                checksums: vec![],
                digests: vec![],
                action_profiles: Vec::new(),
                value_sets: Vec::new(),
                filters: Vec::new(),
                ghost: None,
            }],
            pipe_map: vec![0],
            errors: ErrorEnum::default(),
        }
    }

    #[test]
    fn table_names_full_suffix_and_last_component() {
        let p = l2l3_like();
        let want = TableRef {
            pipeline: 0,
            table: TableId(1),
        };
        assert_eq!(find_table(&p, "SwitchIngress.ipv4_lpm"), Ok(want));
        assert_eq!(find_table(&p, "ipv4_lpm"), Ok(want));
        assert_eq!(find_table(&p, "ingress.ipv4_lpm"), Ok(want));
        let e = find_table(&p, "nope").unwrap_err();
        assert!(e.to_string().contains("no table named `nope`"), "{e}");
        assert!(e.to_string().contains("SwitchIngress.mac_dst"), "{e}");
    }

    #[test]
    fn ambiguous_names_are_refused() {
        let mut p = l2l3_like();
        p.pipelines[0].tables[3].name = "SwitchEgress.ipv4_lpm".into();
        assert!(matches!(
            find_table(&p, "ipv4_lpm"),
            Err(ResolveError::Ambiguous { .. })
        ));
        assert!(find_table(&p, "SwitchEgress.ipv4_lpm").is_ok());
    }

    /// The harness's reading: the end of the name as a string, when no dotted suffix matches;
    /// more than one such table is refused with the candidates.
    #[test]
    fn table_names_by_string_suffix() {
        let mut p = l2l3_like();
        p.pipelines[0].tables[3].name = "SwitchEgress.ipv4_lpm".into();
        let want = TableRef {
            pipeline: 0,
            table: TableId(1),
        };
        // `Ingress.ipv4_lpm` ends `SwitchIngress.ipv4_lpm` only: the last component alone
        // would be ambiguous.
        assert_eq!(find_table(&p, "Ingress.ipv4_lpm"), Ok(want));
        assert_eq!(find_table(&p, "ngress.ipv4_lpm"), Ok(want));
        match find_table(&p, "ress.ipv4_lpm") {
            Err(ResolveError::Ambiguous { candidates, .. }) => assert_eq!(
                candidates,
                vec!["SwitchIngress.ipv4_lpm", "SwitchEgress.ipv4_lpm"]
            ),
            other => panic!("{other:?}"),
        }
        // A single word: `v4_lpm` ends both.
        let e = find_table(&p, "v4_lpm").unwrap_err();
        assert!(e.to_string().contains("ambiguous"), "{e}");
        assert!(e.to_string().contains("SwitchEgress.ipv4_lpm"), "{e}");
    }

    #[test]
    fn keys_follow_the_match_kind() {
        let p = l2l3_like();
        let pl = &p.pipelines[0];
        let lpm = &pl.tables[1];
        assert_eq!(
            build_key(lpm, [("hdr.ipv4.dst_addr", "10.0.1.0/24")]),
            Ok(vec![KeyMatch::Lpm {
                value: 0x0a00_0100,
                prefix_len: 24
            }])
        );
        let exact = &pl.tables[0];
        let e = build_key(exact, [("hdr.ethernet.dst_addr", "10.0.1.0/24")]).unwrap_err();
        assert!(e.to_string().contains("exact"), "{e}");
        assert!(matches!(
            build_key(exact, []),
            Err(ResolveError::MissingKey { .. })
        ));
        assert!(matches!(
            build_key(exact, [("hdr.ethernet.src_addr", "1")]),
            Err(ResolveError::UnknownKey { .. })
        ));
        // Omitted ternary/range keys match anything; bare key names work.
        let acl = &pl.tables[2];
        assert_eq!(
            build_key(acl, [("dst_port", "23..23")]),
            Ok(vec![
                KeyMatch::Ternary { value: 0, mask: 0 },
                KeyMatch::Ternary { value: 0, mask: 0 },
                KeyMatch::Range { lo: 23, hi: 23 },
            ])
        );
        assert!(matches!(
            build_key(acl, [("dst_port", "1"), ("hdr.l4.dst_port", "2")]),
            Err(ResolveError::DuplicateKey { .. })
        ));
    }

    #[test]
    fn stf_key_spellings() {
        assert_eq!(normalize_key_name("extra$0.h"), "extra[0].h");
        assert_eq!(normalize_key_name("hdr.s$12.f$x"), "hdr.s[12].f$x");
        assert_eq!(normalize_key_name("hdr.h.$valid$"), "hdr.h.isValid()");
        assert_eq!(normalize_key_name("hdr.h.valid"), "hdr.h.isValid()");
        assert_eq!(normalize_key_name("hdr.ipv4.ttl"), "hdr.ipv4.ttl");
        let mut p = l2l3_like();
        p.pipelines[0].tables[0].keys[0].name = "hdr.vlan[1].vid".into();
        assert!(build_key(&p.pipelines[0].tables[0], [("hdr.vlan$1.vid", "0x2")]).is_ok());
        // A real field called `valid` is found as written.
        p.pipelines[0].tables[0].keys[0].name = "hdr.h.valid".into();
        assert!(build_key(&p.pipelines[0].tables[0], [("hdr.h.valid", "0x2")]).is_ok());
    }

    #[test]
    fn actions_and_params() {
        let p = l2l3_like();
        let pl = &p.pipelines[0];
        let t = &pl.tables[0];
        assert_eq!(
            build_action(pl, t, "set_port", [("port", "3")], ActionUse::Entry),
            Ok(ActionCall {
                action: ActionId(1),
                args: vec![3]
            })
        );
        assert!(matches!(
            build_action(pl, t, "set_port", [], ActionUse::Entry),
            Err(ResolveError::MissingParam { .. })
        ));
        assert!(matches!(
            build_action(pl, t, "set_port", [("port", "512")], ActionUse::Entry),
            Err(ResolveError::Value { .. })
        ));
        assert!(matches!(
            build_action(pl, t, "set_port", [("prt", "1")], ActionUse::Entry),
            Err(ResolveError::UnknownParam { .. })
        ));
        assert!(matches!(
            build_action(pl, t, "rewrite_smac", [], ActionUse::Entry),
            Err(ResolveError::UnknownAction { .. })
        ));
        let acl = &pl.tables[2];
        assert!(matches!(
            build_action(pl, acl, "acl_permit", [], ActionUse::Default),
            Err(ResolveError::TableOnly { .. })
        ));
    }

    #[test]
    fn priorities() {
        let p = l2l3_like();
        let pl = &p.pipelines[0];
        assert!(needs_priority(&pl.tables[2]));
        assert!(!needs_priority(&pl.tables[1]));
        assert!(check_priority(&pl.tables[2], None).is_err());
        assert!(check_priority(&pl.tables[1], Some(1)).is_err());
        assert_eq!(check_priority(&pl.tables[2], Some(4)), Ok(Some(4)));
    }

    #[test]
    fn registers_and_counters() {
        let p = l2l3_like();
        assert_eq!(
            find_register(&p, "pair"),
            Ok(ObjRef {
                pipeline: 0,
                index: 1
            })
        );
        assert!(find_counter(&p, "ingress_port_counter").is_ok());
        assert!(find_counter(&p, "egress_port_counter").is_err());
    }
}

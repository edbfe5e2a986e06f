//! How an STF `add` / `setdefault` is read against the program where the script leaves things
//! out or over-specifies them, as the Tofino harness does: an omitted exact key matches 0, an
//! omitted action parameter is 0, a value wider than its key or parameter keeps its low bits,
//! and a header's validity key may be spelt `hdr.h`, `hdr.h.$valid` or `valid`. Each filled-in
//! or cut value yields a warning for the report.

use pipeline::ir::{self, MatchKind, Program};

use super::{harness_values, Arg};
use crate::resolve::{self, ResolveError};

/// `text` with a plain number (or the value of `v/len`, `v &&& m`) wider than `width` bits cut
/// to its low bits, as the hardware drivers write it; `None` when nothing was cut.
fn fit_value(width: u16, text: &str) -> Option<String> {
    let fit = |v: &str| -> Option<String> {
        match crate::value::parse_u128(v.trim()) {
            Ok(n) if width < 128 && n >> width != 0 => {
                Some(format!("0x{:x}", n & ((1u128 << width) - 1)))
            }
            _ => None,
        }
    };
    if let Some((v, m)) = text.split_once("&&&") {
        (fit(v).is_some() || fit(m).is_some()).then(|| {
            let (v2, m2) = (fit(v), fit(m));
            format!(
                "{} &&& {}",
                v2.unwrap_or(v.to_string()),
                m2.unwrap_or(m.to_string())
            )
        })
    } else if let Some((v, len)) = text.split_once('/') {
        fit(v).map(|v| format!("{v}/{len}"))
    } else {
        fit(text)
    }
}

/// The key name `name` stands for: as written when the table has it, else a validity-key
/// spelling (`hdr.h.$valid`, `hdr.h`, a lone `valid` when the table has one such key), else
/// the key whose name with `.` and `$` as `_` is `name`'s so written (the harness's retry).
fn key_name(t: &ir::Table, name: &str) -> String {
    let known = |n: &str| {
        !matches!(
            resolve::build_key(t, [(n, "0")]),
            Err(ResolveError::UnknownKey { .. })
        )
    };
    if known(name) {
        return name.to_string();
    }
    let mut tries: Vec<String> = Vec::new();
    if let Some(h) = name.strip_suffix(".$valid") {
        tries.push(format!("{h}.$valid$"));
    }
    tries.push(format!("{name}.$valid$"));
    let valid: Vec<&ir::TableKey> = t
        .keys
        .iter()
        .filter(|k| k.name.ends_with(".isValid()"))
        .collect();
    if matches!(name, "valid" | "$valid$" | "$valid") && valid.len() == 1 {
        tries.push(valid[0].name.clone());
    }
    // The harness's last try: `.` and `$` read as `_` (`hdr_data_f1` for `hdr.data.f1`).
    let flat = |n: &str| n.replace(['.', '$'], "_");
    tries.extend(
        t.keys
            .iter()
            .filter(|k| flat(&k.name) == flat(name))
            .map(|k| k.name.clone()),
    );
    tries
        .into_iter()
        .find(|n| known(n))
        .unwrap_or_else(|| name.to_string())
}

/// The keys of an `add` as the table reads them: names resolved, wide values cut.
pub(super) fn fit_keys(t: &ir::Table, keys: &[Arg], notes: &mut Vec<String>) -> Vec<Arg> {
    // The harness reads an SRAM (all-exact) table's keys with strtoull, a TCAM table's not.
    let sram = t
        .keys
        .iter()
        .all(|k| matches!(k.kind, MatchKind::Exact | MatchKind::Selector));
    keys.iter()
        .map(|a| {
            let name = key_name(t, &a.name);
            let leaf = |k: &&ir::TableKey| {
                k.name == name || k.name.ends_with(&format!(".{name}")) || name.ends_with(&k.name)
            };
            let key = t.keys.iter().find(leaf);
            let width = key.map(|k| k.expr.width());
            let mut value = a.value.clone();
            if let Some(k) = key {
                let w = k.expr.width();
                let (v, note) = match harness_values::number_text(w, sram, &value) {
                    Some((v, note)) => (v, Some(note)),
                    None => harness_values::key_text(k.kind, w, &value),
                };
                notes.extend(note.map(|n| format!("key `{}`: {n}", a.name)));
                value = v;
            }
            // Key values wider than their field keep their low bits, silently (the drivers'
            // way, and many suites write 0x-padded values).
            let value = width.and_then(|w| fit_value(w, &value)).unwrap_or(value);
            if name != a.name {
                notes.push(format!("key `{}` read as `{name}`", a.name));
            }
            Arg {
                name,
                value,
                ..a.clone()
            }
        })
        .collect()
}

/// An action's arguments with values wider than their parameter cut to its width (warned).
pub(super) fn fit_args(
    prog: &Program,
    table: &str,
    action: &str,
    args: &[Arg],
    notes: &mut Vec<String>,
) -> Vec<Arg> {
    let act = resolve::find_table(prog, table).ok().and_then(|r| {
        let pl = &prog.pipelines[r.pipeline];
        resolve::find_action(pl, &pl.tables[r.table.index()], action).ok()
    });
    let Some(act) = act else {
        return args.to_vec();
    };
    args.iter()
        .map(|a| {
            let p = act.params.iter().find(|p| p.name == a.name);
            let a = &match p.and_then(|p| harness_values::number_text(p.width, true, &a.value)) {
                Some((value, note)) => {
                    notes.push(format!("argument `{}`: {note}", a.name));
                    Arg { value, ..a.clone() }
                }
                None => a.clone(),
            };
            match p.and_then(|p| fit_value(p.width, &a.value).map(|v| (p, v))) {
                Some((p, v)) => {
                    notes.push(format!(
                        "argument `{}:{}` does not fit in {} bits: cut to {v}",
                        a.name, a.value, p.width
                    ));
                    Arg {
                        value: v,
                        ..a.clone()
                    }
                }
                None => a.clone(),
            }
        })
        .collect()
}

/// Adds a `0` for the exact key or the parameter `err` says is missing; `false` for any other
/// error.
pub(super) fn fill_missing(
    err: &ResolveError,
    keys: &mut Vec<Arg>,
    args: &mut Vec<Arg>,
    notes: &mut Vec<String>,
) -> bool {
    let zero = |name: &str| Arg {
        name: name.to_string(),
        value: "0".into(),
        column: 0,
    };
    match err {
        ResolveError::MissingKey { key, .. } if !keys.iter().any(|k| &k.name == key) => {
            notes.push(format!("no value for exact key `{key}`: it matches 0"));
            keys.push(zero(key));
            true
        }
        ResolveError::MissingParam { param, .. } if !args.iter().any(|a| &a.name == param) => {
            notes.push(format!("no value for parameter `{param}`: it is 0"));
            args.push(zero(param));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_values_keep_their_low_bits() {
        assert_eq!(fit_value(8, "0x1ff").as_deref(), Some("0xff"));
        assert_eq!(fit_value(8, "0xff"), None);
        assert_eq!(
            fit_value(8, "0x1ff &&& 0x1f0").as_deref(),
            Some("0xff &&& 0xf0")
        );
        assert_eq!(fit_value(8, "0x100/4").as_deref(), Some("0x0/4"));
    }
}

//! The interpreted form of an SWX pipeline: DPDK 22.11 exports no spec-file reader (its own
//! parser only feeds code generation), so this reads the subset of the `.spec` language pisa's
//! specs use (`struct`, `header`, `metadata`, `regarray`, `action`, `table`, `apply`; comments
//! `;` and `//`) and configures the pipeline through `rte_swx_pipeline_*` calls; instructions
//! go to DPDK as written. [`parse`] is pure (fuzzed: `fuzz/fuzz_targets/swx_spec.rs`).

use std::ffi::CString;

use dpdk_sys as sys;

use super::SwxError;

/// One top-level statement of a spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    Struct {
        name: String,
        fields: Vec<(String, u32)>,
    },
    Header {
        name: String,
        ty: String,
    },
    Metadata {
        ty: String,
    },
    Regarray {
        name: String,
        size: u32,
        init: u64,
    },
    Action {
        name: String,
        args: Option<String>,
        instrs: Vec<String>,
    },
    Table(Table),
    Apply {
        instrs: Vec<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    pub name: String,
    /// (field, `exact` | `lpm` | `wildcard`).
    pub keys: Vec<(String, String)>,
    pub actions: Vec<String>,
    pub default_action: String,
    /// The default action's arguments (`None` for `args none`).
    pub default_args: Option<String>,
    pub size: u32,
}

fn err(line: usize, msg: impl Into<String>) -> SwxError {
    SwxError::Spec {
        line: line as u32,
        msg: msg.into(),
        code: -22,
    }
}

fn num<T: TryFrom<u64>>(line: usize, s: &str) -> Result<T, SwxError> {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse::<u64>(),
    }
    .map_err(|_| err(line, format!("not a number: {s:?}")))?;
    T::try_from(v).map_err(|_| err(line, format!("out of range: {s}")))
}

/// Lines without comments and blanks, numbered from 1, split in words.
fn lines(text: &str) -> Vec<(usize, Vec<&str>)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let l = l.split("//").next().unwrap_or("");
            let l = l.split(';').next().unwrap_or("");
            let w: Vec<&str> = l.split_whitespace().collect();
            (!w.is_empty()).then_some((i + 1, w))
        })
        .collect()
}

/// Reads the statements of a spec.
pub fn parse(text: &str) -> Result<Vec<Stmt>, SwxError> {
    let ls = lines(text);
    let mut it = ls.iter();
    let mut out = Vec::new();
    // The lines of a `{ ... }` block up to its closing brace.
    fn block<'a>(
        it: &mut std::slice::Iter<'a, (usize, Vec<&'a str>)>,
        open: usize,
    ) -> Result<Vec<&'a (usize, Vec<&'a str>)>, SwxError> {
        let mut v = Vec::new();
        for l in it.by_ref() {
            if l.1 == ["}"] {
                return Ok(v);
            }
            v.push(l);
        }
        Err(err(open, "block not closed"))
    }
    while let Some((n, w)) = it.next() {
        let n = *n;
        match w.as_slice() {
            ["struct", name, "{"] => {
                let mut fields = Vec::new();
                for (ln, f) in block(&mut it, n)? {
                    let [ty, fname] = f.as_slice() else {
                        return Err(err(*ln, "expected `bit<N> name`"));
                    };
                    let bits = ty
                        .strip_prefix("bit<")
                        .and_then(|t| t.strip_suffix('>'))
                        .ok_or_else(|| err(*ln, "expected `bit<N>`"))?;
                    fields.push((fname.to_string(), num(*ln, bits)?));
                }
                out.push(Stmt::Struct {
                    name: name.to_string(),
                    fields,
                });
            }
            ["header", name, "instanceof", ty] => out.push(Stmt::Header {
                name: name.to_string(),
                ty: ty.to_string(),
            }),
            ["metadata", "instanceof", ty] => out.push(Stmt::Metadata { ty: ty.to_string() }),
            ["regarray", name, "size", size, "initval", init] => out.push(Stmt::Regarray {
                name: name.to_string(),
                size: num(n, size)?,
                init: num(n, init)?,
            }),
            ["action", name, "args", rest @ .., "{"] => {
                let args = match rest {
                    ["none"] => None,
                    ["instanceof", ty] => Some(ty.to_string()),
                    _ => return Err(err(n, "expected `args none` or `args instanceof T`")),
                };
                let instrs = block(&mut it, n)?.iter().map(|l| l.1.join(" ")).collect();
                out.push(Stmt::Action {
                    name: name.to_string(),
                    args,
                    instrs,
                });
            }
            ["table", name, "{"] => out.push(Stmt::Table(table(&mut it, n, name)?)),
            ["apply", "{"] => {
                let instrs = block(&mut it, n)?.iter().map(|l| l.1.join(" ")).collect();
                out.push(Stmt::Apply { instrs });
            }
            _ => return Err(err(n, format!("unknown statement `{}`", w.join(" ")))),
        }
    }
    Ok(out)
}

fn table(
    it: &mut std::slice::Iter<'_, (usize, Vec<&str>)>,
    open: usize,
    name: &str,
) -> Result<Table, SwxError> {
    let mut t = Table {
        name: name.to_string(),
        ..Table::default()
    };
    let mut section: Option<&str> = None;
    for (n, w) in it.by_ref() {
        match (section, w.as_slice()) {
            (None, ["}"]) => {
                if t.default_action.is_empty() {
                    return Err(err(open, format!("table {name} has no default_action")));
                }
                return Ok(t);
            }
            (None, ["key", "{"]) => section = Some("key"),
            (None, ["actions", "{"]) => section = Some("actions"),
            (None, ["default_action", a, "args", rest @ ..]) => {
                t.default_action = a.to_string();
                t.default_args = match rest {
                    ["none"] => None,
                    [] => return Err(err(*n, "default_action without arguments")),
                    r => Some(r.join(" ")),
                };
            }
            (None, ["size", s]) => t.size = num(*n, s)?,
            (Some(_), ["}"]) => section = None,
            (Some("key"), [f, m]) => t.keys.push((f.to_string(), m.to_string())),
            (Some("actions"), [a]) => t.actions.push(a.to_string()),
            _ => {
                return Err(err(
                    *n,
                    format!("unexpected `{}` in table {name}", w.join(" ")),
                ))
            }
        }
    }
    Err(err(open, format!("table {name} not closed")))
}

/// Refuses the `drop` instruction: it sends to the pipeline's own drop port, a DPDK sink that
/// frees the packet as an mbuf, which the in-memory ports' packets are not.
pub fn check_no_drop(stmts: &[Stmt]) -> Result<(), SwxError> {
    for s in stmts {
        let (Stmt::Action { instrs, .. } | Stmt::Apply { instrs }) = s else {
            continue;
        };
        for i in instrs {
            let op = match i.split_once(" : ") {
                Some((_, rest)) => rest,
                None => i,
            };
            if op.split_whitespace().next() == Some("drop") {
                return Err(err(
                    0,
                    format!(
                        "`{i}`: `drop` is not supported here; send to a port of the spec's own"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn cstr(s: &str) -> Result<CString, SwxError> {
    CString::new(s).map_err(|_| err(0, format!("NUL in {s:?}")))
}

fn check(rc: i32, what: &str) -> Result<(), SwxError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(SwxError::Spec {
            line: 0,
            msg: format!("DPDK refused {what}"),
            code: rc,
        })
    }
}

/// Configures the pipeline `p` (ports already configured) with `stmts`.
pub(crate) fn configure(p: *mut sys::rte_swx_pipeline, stmts: &[Stmt]) -> Result<(), SwxError> {
    for s in stmts {
        configure_one(p, s)?;
    }
    Ok(())
}

fn ptrs(v: &[CString]) -> Vec<*const std::os::raw::c_char> {
    v.iter().map(|c| c.as_ptr()).collect()
}

fn configure_one(p: *mut sys::rte_swx_pipeline, s: &Stmt) -> Result<(), SwxError> {
    // SAFETY (every call below): `p` is a pipeline being configured; every string is a live
    // CString and every array a live Vec for the duration of the call (DPDK copies them).
    match s {
        Stmt::Struct { name, fields } => {
            let names: Vec<CString> = fields
                .iter()
                .map(|f| cstr(&f.0))
                .collect::<Result<_, _>>()?;
            let mut fp: Vec<sys::rte_swx_field_params> = names
                .iter()
                .zip(fields)
                .map(|(c, f)| sys::rte_swx_field_params {
                    name: c.as_ptr(),
                    n_bits: f.1,
                })
                .collect();
            let n = cstr(name)?;
            let rc = unsafe {
                sys::rte_swx_pipeline_struct_type_register(
                    p,
                    n.as_ptr(),
                    fp.as_mut_ptr(),
                    fp.len() as u32,
                    0,
                )
            };
            check(rc, &format!("struct {name}"))
        }
        Stmt::Header { name, ty } => {
            let (n, t) = (cstr(name)?, cstr(ty)?);
            let rc =
                unsafe { sys::rte_swx_pipeline_packet_header_register(p, n.as_ptr(), t.as_ptr()) };
            check(rc, &format!("header {name}"))
        }
        Stmt::Metadata { ty } => {
            let t = cstr(ty)?;
            let rc = unsafe { sys::rte_swx_pipeline_packet_metadata_register(p, t.as_ptr()) };
            check(rc, "metadata")
        }
        Stmt::Regarray { name, size, init } => {
            let n = cstr(name)?;
            let rc = unsafe { sys::rte_swx_pipeline_regarray_config(p, n.as_ptr(), *size, *init) };
            check(rc, &format!("regarray {name}"))
        }
        Stmt::Action { name, args, instrs } => {
            let n = cstr(name)?;
            let a = args.as_deref().map(cstr).transpose()?;
            let is: Vec<CString> = instrs.iter().map(|i| cstr(i)).collect::<Result<_, _>>()?;
            let mut ip = ptrs(&is);
            let rc = unsafe {
                sys::rte_swx_pipeline_action_config(
                    p,
                    n.as_ptr(),
                    a.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
                    ip.as_mut_ptr(),
                    ip.len() as u32,
                )
            };
            check(rc, &format!("action {name}"))
        }
        Stmt::Table(t) => configure_table(p, t),
        Stmt::Apply { instrs } => {
            let is: Vec<CString> = instrs.iter().map(|i| cstr(i)).collect::<Result<_, _>>()?;
            let mut ip = ptrs(&is);
            let rc = unsafe {
                sys::rte_swx_pipeline_instructions_config(p, ip.as_mut_ptr(), ip.len() as u32)
            };
            check(rc, "apply")
        }
    }
}

fn configure_table(p: *mut sys::rte_swx_pipeline, t: &Table) -> Result<(), SwxError> {
    let key_names: Vec<CString> = t
        .keys
        .iter()
        .map(|k| cstr(&k.0))
        .collect::<Result<_, _>>()?;
    let mut fields = Vec::with_capacity(t.keys.len());
    for (c, (f, m)) in key_names.iter().zip(&t.keys) {
        let match_type = match m.as_str() {
            "exact" => sys::RTE_SWX_TABLE_MATCH_EXACT,
            "lpm" => sys::RTE_SWX_TABLE_MATCH_LPM,
            "wildcard" => sys::RTE_SWX_TABLE_MATCH_WILDCARD,
            _ => return Err(err(0, format!("table {}: match type {m:?} of {f}", t.name))),
        };
        fields.push(sys::rte_swx_match_field_params {
            name: c.as_ptr(),
            match_type,
        });
    }
    let actions: Vec<CString> = t
        .actions
        .iter()
        .map(|a| cstr(a))
        .collect::<Result<_, _>>()?;
    let mut action_ptrs = ptrs(&actions);
    let mut for_entries = vec![1i32; actions.len()];
    let mut for_default = vec![1i32; actions.len()];
    let def = cstr(&t.default_action)?;
    let def_args = t.default_args.as_deref().map(cstr).transpose()?;
    let name = cstr(&t.name)?;
    let mut params = sys::rte_swx_pipeline_table_params {
        fields: fields.as_mut_ptr(),
        n_fields: fields.len() as u32,
        action_names: action_ptrs.as_mut_ptr(),
        action_is_for_table_entries: for_entries.as_mut_ptr(),
        action_is_for_default_entry: for_default.as_mut_ptr(),
        n_actions: actions.len() as u32,
        default_action_name: def.as_ptr(),
        default_action_args: def_args.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()),
        default_action_is_const: 0,
        hash_func_name: std::ptr::null(),
    };
    // SAFETY: every pointer in `params` points into a live local above; DPDK copies the table
    // configuration before returning.
    let rc = unsafe {
        sys::rte_swx_pipeline_table_config(
            p,
            name.as_ptr(),
            &mut params,
            std::ptr::null(),
            std::ptr::null(),
            t.size,
        )
    };
    check(rc, &format!("table {}", t.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bench_spec_and_rejects_bad_lines() {
        let s = parse(include_str!("../../../bench/swx/l2l3.spec")).unwrap();
        assert!(s
            .iter()
            .any(|s| matches!(s, Stmt::Table(t) if t.name == "acl" && t.keys.len() == 5)));
        assert!(s
            .iter()
            .any(|s| matches!(s, Stmt::Apply { instrs } if instrs[0] == "rx m.port_in")));
        let e = parse("struct a {\n bit<x> f\n}\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(parse("table t {\n key {\n").is_err());
        assert!(parse("frobnicate\n").is_err());
    }
}

//! A reader for the subset of DPDK's SWX pipeline `.spec` language that pisa's specs use
//! (`struct`, `header`, `metadata`, `regarray`, `action`, `table`, `apply`; comments `;` and
//! `//`): DPDK 22.11 exports no spec-file reader (its own parser only feeds code generation), so
//! the interpreted SWX pipeline (`swx::spec`, cargo feature `dpdk`) is configured from what this
//! reads. Pure, and built without DPDK so it can be fuzzed (`fuzz/targets/src/swx_spec.rs`).

/// A spec line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("SWX spec line {line}: {msg}")]
pub struct SpecError {
    /// 1-based line (0: the spec as a whole).
    pub line: u32,
    pub msg: String,
}

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

fn err(line: usize, msg: impl Into<String>) -> SpecError {
    SpecError {
        line: line as u32,
        msg: msg.into(),
    }
}

fn num<T: TryFrom<u64>>(line: usize, s: &str) -> Result<T, SpecError> {
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
pub fn parse(text: &str) -> Result<Vec<Stmt>, SpecError> {
    let ls = lines(text);
    let mut it = ls.iter();
    let mut out = Vec::new();
    // The lines of a `{ ... }` block up to its closing brace.
    fn block<'a>(
        it: &mut std::slice::Iter<'a, (usize, Vec<&'a str>)>,
        open: usize,
    ) -> Result<Vec<&'a (usize, Vec<&'a str>)>, SpecError> {
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
) -> Result<Table, SpecError> {
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
pub fn check_no_drop(stmts: &[Stmt]) -> Result<(), SpecError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bench_spec_and_rejects_bad_lines() {
        let s = parse(include_str!("../../bench/swx/l2l3.spec")).unwrap();
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

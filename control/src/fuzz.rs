//! Entry points for the fuzz targets (`fuzz/fuzz_targets/control_*.rs`): arbitrary bytes as an
//! STF script, a table file or a control-socket request line, read and their values parsed for
//! every match kind. Must never
//! panic; the return value only keeps the work from being optimised away.

use pipeline::ir::MatchKind;

use crate::value;

const KINDS: [MatchKind; 4] = [
    MatchKind::Exact,
    MatchKind::Ternary,
    MatchKind::Lpm,
    MatchKind::Range,
];

fn values(text: &str) -> usize {
    let mut n = 0;
    for width in [1, 9, 16, 32, 48, 128] {
        n += usize::from(value::parse_value(text, width).is_ok());
        for k in KINDS {
            match value::parse_key_match(text, k, width) {
                Ok(_) => n += 1,
                Err(e) => n += e.to_string().len(),
            }
        }
    }
    n
}

/// Reads `data` as an STF script and every key/argument value in it.
pub fn stf(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match crate::stf::parse(&text) {
        Err(e) => e.to_string().len(),
        Ok(stmts) => {
            let mut n = stmts.len();
            for s in &stmts {
                match &s.stmt {
                    crate::stf::Stmt::Add { keys, action, .. } => {
                        for a in keys.iter().chain(&action.args) {
                            n += values(&a.value);
                        }
                    }
                    crate::stf::Stmt::Expect {
                        pattern: Some(p), ..
                    } => {
                        n += p.diff(data).len() + usize::from(p.matches(data));
                    }
                    _ => {}
                }
            }
            n
        }
    }
}

/// Reads `data` as a table file and every key, parameter and register value in it.
pub fn tables_file(data: &[u8]) -> usize {
    let text = String::from_utf8_lossy(data);
    match crate::tables_file::from_yaml(&text) {
        Err(e) => e.to_string().len(),
        Ok(f) => {
            let mut n = 0;
            for t in &f.tables {
                for e in &t.entries {
                    for v in e.item.key.values().chain(e.item.params.values()) {
                        n += values(v.as_str());
                    }
                }
            }
            for r in &f.registers {
                for v in [&r.item.value, &r.item.lo, &r.item.hi]
                    .into_iter()
                    .flatten()
                {
                    n += values(v.as_str());
                }
            }
            n
        }
    }
}

/// Reads `data` as a control-socket request line ([`crate::ctl`]) and every key, parameter and
/// table-file value in it.
pub fn ctl_request(data: &[u8]) -> usize {
    use crate::ctl::{texts, Request};
    let text = String::from_utf8_lossy(data);
    match Request::parse(&text) {
        Err(e) => e.to_string().len(),
        Ok(req) => {
            let mut n = req.op().len() + usize::from(req.is_write());
            let maps = match &req {
                Request::TableAdd(e) | Request::TableModify(e) => vec![&e.key, &e.params],
                Request::TableDelete { key, .. } => vec![key],
                Request::Apply { yaml } => {
                    n += tables_file(yaml.as_bytes());
                    Vec::new()
                }
                _ => Vec::new(),
            };
            for m in maps {
                match texts(m) {
                    Err(e) => n += e.len(),
                    Ok(t) => {
                        for v in t.values() {
                            n += values(v.as_str());
                        }
                    }
                }
            }
            n
        }
    }
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        #[test]
        fn tables_file_never_panics(s in "[ a-z0-9:{}\\[\\],.&*/\n_-]{0,120}") {
            let _ = super::tables_file(s.as_bytes());
        }

        #[test]
        fn stf_never_panics(s in "\\PC{0,120}") {
            let _ = super::stf(s.as_bytes());
        }

        #[test]
        fn ctl_requests_never_panic(
            s in r#"\{"op": ?"(table_add|table_modify|table_delete|apply|stats)"(, ?"[a-z]{1,6}": ?("[ -~]{0,16}"|[0-9]{1,4}|\{("[a-z.]{1,8}": ?("[0-9a-f:./&*]{0,20}"|[0-9]{1,3}|true|null))?\}))*\}"#
        ) {
            let _ = super::ctl_request(s.as_bytes());
        }
    }

    #[test]
    fn entry_points_take_any_bytes() {
        assert!(super::stf(b"add t k:0x**01 a(p:1)\nexpect 1 0*\n") > 0);
        assert!(super::stf(&[0xff, 0xfe, b'\n', b'#']) > 0);
        assert!(
            super::tables_file(b"tables:\n - {table: t, entries: [{key: {k: 1/2}, action: a}]}\n")
                > 0
        );
        assert!(super::tables_file(b"\xff: [") > 0);
    }
}

//! The STF parser: one statement per line, `#` starts a comment, keywords in any case.
//!
//! Values of keys and action arguments are kept as text (their widths come from the program);
//! here they are only checked to be one token. Packet data, ports, priorities and check values
//! are read in full. Every error carries the line and column (both 1-based).

use super::{ActionSpec, Arg, CellRef, CmpOp, CountKind, ExpectPattern, Nibble, StfStmt, Stmt};

/// A script that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct StfParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// The script's logical lines: comments cut, a `\\` at the end of a line joining the next one
/// (numbered as the first), a trailing `;` dropped (both as p4c's STF files write them).
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    // A lone CR ends a line too (old Mac files), as in the P4 frontend: otherwise a whole
    // script starting with a comment would be one comment line, and pass checking nothing.
    let text = p4::source::normalize_lone_cr(text.to_string());
    for (i, raw) in text.lines().enumerate() {
        let body = match raw.find('#') {
            Some(p) => &raw[..p],
            None => raw,
        };
        let (acc_line, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        let trimmed = body.trim_end();
        if let Some(head) = trimmed.strip_suffix('\\') {
            acc.push_str(head);
            acc.push(' ');
            pending = Some((acc_line, acc));
            continue;
        }
        acc.push_str(body);
        let t = acc.trim_end();
        let t = t.strip_suffix(';').unwrap_or(t).to_string();
        out.push((acc_line, t));
    }
    if let Some(p) = pending {
        out.push(p);
    }
    out
}

/// Reads a whole script.
pub fn parse(text: &str) -> Result<Vec<StfStmt>, StfParseError> {
    let mut out = Vec::new();
    for (line, body) in logical_lines(text) {
        let mut cur = Cursor {
            text: &body,
            pos: 0,
            line,
        };
        cur.skip_ws();
        if cur.at_end() {
            continue;
        }
        let stmt = statement(&mut cur)?;
        cur.skip_ws();
        if !cur.at_end() {
            return Err(cur.error(format!(
                "unexpected `{}` at the end of the statement",
                cur.rest()
            )));
        }
        out.push(StfStmt { line, stmt });
    }
    Ok(out)
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '[' | ']')
}

impl<'a> Cursor<'a> {
    fn column(&self) -> usize {
        self.text[..self.pos].chars().count() + 1
    }

    fn error(&self, message: impl Into<String>) -> StfParseError {
        StfParseError {
            line: self.line,
            column: self.column(),
            message: message.into(),
        }
    }

    fn error_at(&self, pos: usize, message: impl Into<String>) -> StfParseError {
        StfParseError {
            line: self.line,
            column: self.text[..pos].chars().count() + 1,
            message: message.into(),
        }
    }

    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn at_end(&self) -> bool {
        self.pos >= self.text.len()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    /// Takes characters while `f` holds.
    fn take_while(&mut self, f: impl Fn(char) -> bool) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if f(c) {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
        &self.text[start..self.pos]
    }

    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }

    fn expect_char(&mut self, c: char, what: &str) -> Result<(), StfParseError> {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}` {what}")))
        }
    }

    /// A (qualified) name: letters, digits, `_`, `.`, `$`, `[`, `]`.
    fn name(&mut self, what: &str) -> Result<String, StfParseError> {
        self.skip_ws();
        let s = self.take_while(is_name_char);
        if s.is_empty() {
            return Err(self.error(format!("expected {what}")));
        }
        Ok(s.to_string())
    }

    /// A decimal or `0x`/`0b`/`0o` number that fits in `u128`.
    fn number(&mut self, what: &str) -> Result<u128, StfParseError> {
        self.skip_ws();
        let start = self.pos;
        let s = self.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
        if s.is_empty() {
            return Err(self.error(format!("expected {what}")));
        }
        crate::value::parse_u128(s).map_err(|e| self.error_at(start, format!("{what}: {e}")))
    }

    fn number_as<T: TryFrom<u128>>(&mut self, what: &str) -> Result<T, StfParseError> {
        self.skip_ws();
        let start = self.pos;
        let n = self.number(what)?;
        T::try_from(n).map_err(|_| self.error_at(start, format!("{what} {n} is out of range")))
    }

    /// A value token of a key or an action argument: everything up to white space, `,` or `)`.
    fn value_token(&mut self, what: &str) -> Result<(String, usize), StfParseError> {
        self.skip_ws();
        let column = self.column();
        let s = self.take_while(|c| !c.is_whitespace() && c != ',' && c != ')' && c != '(');
        if s.is_empty() {
            return Err(self.error(format!("expected a value for {what}")));
        }
        Ok((s.to_string(), column))
    }
}

fn statement(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let start = cur.pos;
    let word = cur.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
    let keyword = word.to_ascii_lowercase();
    let stmt = match keyword.as_str() {
        "add" => add(cur)?,
        "setdefault" => {
            let table = cur.name("a table name")?;
            let action = action(cur)?;
            Stmt::SetDefault { table, action }
        }
        "remove" => {
            let what = cur.name("`all`")?;
            if !what.eq_ignore_ascii_case("all") {
                return Err(cur.error("only `remove all` is supported"));
            }
            Stmt::RemoveAll
        }
        "packet" => {
            let port = cur.number_as("the ingress port")?;
            let data = packet_data(cur)?;
            Stmt::Packet { port, data }
        }
        "expect" => {
            let port = cur.number_as("the egress port")?;
            cur.skip_ws();
            let pattern = if cur.at_end() {
                None
            } else {
                Some(expect_data(cur)?)
            };
            Stmt::Expect { port, pattern }
        }
        "no_packet" => Stmt::NoPacket,
        "wait" => Stmt::Wait,
        "check_counter" => check_counter(cur)?,
        "check_register" => check_register(cur)?,
        "mirroring_add" => Stmt::MirroringAdd {
            session: cur.number_as("the mirror session")?,
            port: cur.number_as("the port")?,
        },
        "mirroring_add_mc" => Stmt::MirroringAddMc {
            session: cur.number_as("the mirror session")?,
            mgid: cur.number_as("the multicast group")?,
        },
        "mc_mgrp_create" => Stmt::McMgrpCreate {
            mgid: cur.number_as("the multicast group")?,
        },
        "mc_node_create" => {
            let rid = cur.number_as("the RID")?;
            let ports = port_list(cur)?;
            Stmt::McNodeCreate { rid, ports }
        }
        "mc_prune_set" => {
            let xid = cur.number_as("the L2 exclusion id")?;
            let ports = port_list(cur)?;
            Stmt::McPruneSet { xid, ports }
        }
        "mc_node_associate" => Stmt::McNodeAssociate {
            mgid: cur.number_as("the multicast group")?,
            node: cur.number_as("the node handle")?,
        },
        "" => return Err(cur.error("expected a statement keyword")),
        _ => {
            return Err(cur.error_at(
                start,
                format!(
                    "unknown statement `{word}` (known: add, setdefault, remove, packet, expect, \
                     no_packet, wait, check_counter, check_register, mirroring_add, \
                     mirroring_add_mc, mc_mgrp_create, mc_node_create, mc_node_associate, \
                     mc_prune_set)"
                ),
            ))
        }
    };
    Ok(stmt)
}

fn port_list(cur: &mut Cursor<'_>) -> Result<Vec<u16>, StfParseError> {
    let mut ports = Vec::new();
    loop {
        cur.skip_ws();
        if cur.at_end() {
            return Ok(ports);
        }
        ports.push(cur.number_as("a port")?);
    }
}

fn add(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let table = cur.name("a table name")?;
    cur.skip_ws();
    let mut priority = None;
    let save = cur.pos;
    let digits = cur.take_while(|c| c.is_ascii_digit());
    if !digits.is_empty() && cur.peek().is_none_or(char::is_whitespace) {
        cur.pos = save;
        priority = Some(cur.number_as("the priority")?);
    } else {
        cur.pos = save;
    }
    let mut keys = Vec::new();
    let action = loop {
        cur.skip_ws();
        let start = cur.pos;
        let name = cur.name("a key (`FIELD:VALUE`) or the action (`ACTION(...)`)")?;
        cur.skip_ws();
        match cur.peek() {
            Some(':') => {
                cur.pos += 1;
                let (value, column) = cur.value_token(&format!("key `{name}`"))?;
                keys.push(Arg {
                    name,
                    value,
                    column,
                });
            }
            Some('(') => {
                cur.pos = start;
                break action(cur)?;
            }
            // An action without arguments may be written without `()`.
            None | Some('=') => {
                break ActionSpec {
                    name,
                    args: Vec::new(),
                }
            }
            _ => {
                return Err(cur.error(format!(
                    "expected `:` after key `{name}` or `(` after action `{name}`"
                )))
            }
        }
    };
    cur.skip_ws();
    let name = if cur.eat("=") {
        Some(cur.name("an entry name after `=`")?)
    } else {
        None
    };
    Ok(Stmt::Add {
        table,
        priority,
        keys,
        action,
        name,
    })
}

fn action(cur: &mut Cursor<'_>) -> Result<ActionSpec, StfParseError> {
    let name = cur.name("an action (`ACTION(ARG:VALUE, ...)`)")?;
    cur.skip_ws();
    if cur.at_end() {
        // `setdefault t drop`: no arguments, no parentheses.
        return Ok(ActionSpec {
            name,
            args: Vec::new(),
        });
    }
    cur.expect_char('(', "after the action name")?;
    let mut args = Vec::new();
    cur.skip_ws();
    if cur.eat(")") {
        return Ok(ActionSpec { name, args });
    }
    loop {
        let arg = cur.name("an action argument (`NAME:VALUE`)")?;
        cur.expect_char(':', &format!("after argument `{arg}`"))?;
        let (value, column) = cur.value_token(&format!("argument `{arg}`"))?;
        args.push(Arg {
            name: arg,
            value,
            column,
        });
        cur.skip_ws();
        if cur.eat(",") {
            continue;
        }
        if cur.eat(")") {
            break;
        }
        // Arguments separated by spaces only, as some suites write them.
        if cur.peek().is_some_and(is_name_char) {
            continue;
        }
        return Err(cur.error("expected `,` or `)` in the action's arguments"));
    }
    Ok(ActionSpec { name, args })
}

fn packet_data(cur: &mut Cursor<'_>) -> Result<Vec<u8>, StfParseError> {
    let mut nibbles = Vec::new();
    loop {
        cur.skip_ws();
        let Some(c) = cur.peek() else { break };
        let d = c
            .to_digit(16)
            .ok_or_else(|| cur.error(format!("`{c}` is not a hex digit in packet data")))?;
        nibbles.push(d as u8);
        cur.pos += c.len_utf8();
    }
    if nibbles.is_empty() {
        return Err(cur.error("expected packet data (hex bytes)"));
    }
    if nibbles.len() % 2 != 0 {
        return Err(cur.error("packet data has an odd number of hex digits"));
    }
    Ok(nibbles.chunks(2).map(|p| (p[0] << 4) | p[1]).collect())
}

fn expect_data(cur: &mut Cursor<'_>) -> Result<ExpectPattern, StfParseError> {
    let mut nibbles = Vec::new();
    let mut exact = false;
    loop {
        cur.skip_ws();
        let Some(c) = cur.peek() else { break };
        if exact {
            return Err(cur.error("`$` must end the expected data"));
        }
        match c {
            '*' => nibbles.push(Nibble::Any),
            '$' => exact = true,
            c => match c.to_digit(16) {
                Some(d) => nibbles.push(Nibble::Hex(d as u8)),
                None => {
                    return Err(cur.error(format!(
                        "`{c}` is not a hex digit, `*` or `$` in expected data"
                    )))
                }
            },
        }
        cur.pos += c.len_utf8();
    }
    Ok(ExpectPattern { nibbles, exact })
}

fn cell(cur: &mut Cursor<'_>) -> Result<CellRef, StfParseError> {
    cur.expect_char('(', "after the name")?;
    cur.skip_ws();
    let cell = match cur.peek() {
        Some(c) if c.is_ascii_digit() => CellRef::Index(cur.number_as("the index")?),
        _ => {
            let n = cur.name("an index or an entry name")?;
            CellRef::Entry(n.trim_start_matches('$').to_string())
        }
    };
    cur.expect_char(')', "after the index")?;
    Ok(cell)
}

fn check_counter(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let counter = cur.name("a counter name")?;
    let cell = cell(cur)?;
    cur.skip_ws();
    let save = cur.pos;
    let word = cur.take_while(|c| c.is_ascii_alphabetic());
    let kind = match word.to_ascii_lowercase().as_str() {
        "packets" => CountKind::Packets,
        "bytes" => CountKind::Bytes,
        "" => CountKind::Packets,
        _ => {
            return Err(cur.error_at(
                save,
                format!("expected `packets` or `bytes`, found `{word}`"),
            ))
        }
    };
    cur.skip_ws();
    if cur.at_end() {
        // No comparison: the counter must have counted something.
        return Ok(Stmt::CheckCounter {
            counter,
            cell,
            kind,
            op: CmpOp::Gt,
            value: 0,
        });
    }
    let op = if cur.eat("==") {
        CmpOp::Eq
    } else if cur.eat("!=") {
        CmpOp::Ne
    } else if cur.eat("<=") {
        CmpOp::Le
    } else if cur.eat(">=") {
        CmpOp::Ge
    } else if cur.eat("<") {
        CmpOp::Lt
    } else if cur.eat(">") {
        CmpOp::Gt
    } else {
        return Err(cur.error("expected a comparison (==, !=, <, <=, >, >=)"));
    };
    let value = cur.number("the value to compare with")?;
    Ok(Stmt::CheckCounter {
        counter,
        cell,
        kind,
        op,
        value,
    })
}

fn check_register(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let register = cur.name("a register name")?;
    let cell = cell(cur)?;
    cur.skip_ws();
    let field = match cur.peek() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => Some(cur.name("a field name")?),
        _ => None,
    };
    cur.skip_ws();
    if !(cur.eat("==") || cur.eat("=")) {
        return Err(cur.error("expected `=` and the value"));
    }
    let value = cur.number("the expected value")?;
    Ok(Stmt::CheckRegister {
        register,
        cell,
        field,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Stmt {
        let v = parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert_eq!(v.len(), 1);
        v.into_iter().next().map(|s| s.stmt).unwrap()
    }

    fn arg(name: &str, value: &str, column: usize) -> Arg {
        Arg {
            name: name.into(),
            value: value.into(),
            column,
        }
    }

    /// A script with lone-CR line endings is read line by line (it used to be one comment
    /// line, so a wrong `expect` passed with no check at all).
    #[test]
    fn lone_cr_ends_lines() {
        let v = parse("# a comment\rpacket 0 00\rexpect 1 00\r").unwrap();
        assert_eq!(v.len(), 2, "{v:?}");
        assert_eq!(v[1].line, 3);
    }

    #[test]
    fn add_with_priority_keys_action_and_name() {
        let s = one("add test1 100 data.f1:0x****0101 hdr.h.f2:5 setb1(val:0x7f, port:2) = A");
        assert_eq!(
            s,
            Stmt::Add {
                table: "test1".into(),
                priority: Some(100),
                keys: vec![arg("data.f1", "0x****0101", 23), arg("hdr.h.f2", "5", 43)],
                action: ActionSpec {
                    name: "setb1".into(),
                    args: vec![arg("val", "0x7f", 55), arg("port", "2", 66)],
                },
                name: Some("A".into()),
            }
        );
    }

    #[test]
    fn the_dialects_of_other_suites() {
        // Action without parentheses, trailing `;`, space-separated arguments, continuation.
        let v = parse(
            "add t k:1 drop;\nsetdefault t NoAction\nadd t k:2 \\\n  set(p:1 q:2)\nexpect 1 00\n",
        )
        .unwrap();
        assert_eq!(v.len(), 4);
        match &v[0].stmt {
            Stmt::Add { action, keys, .. } => {
                assert_eq!(action.name, "drop");
                assert!(action.args.is_empty());
                assert_eq!(keys[0].value, "1");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&v[1].stmt, Stmt::SetDefault { action, .. } if action.name == "NoAction"));
        match &v[2].stmt {
            Stmt::Add { action, .. } => {
                assert_eq!(action.args.len(), 2);
                assert_eq!(action.args[1].name, "q");
            }
            other => panic!("{other:?}"),
        }
        // The joined statement keeps its first line's number.
        assert_eq!(v[2].line, 3);
        assert_eq!(v[3].line, 5);
    }

    #[test]
    fn add_without_priority_and_qualified_names() {
        let s = one("ADD ingress.t1 hdr.ipv4.dst_addr:10.0.0.0/8 SwitchIngress.set_port(port:3)");
        let Stmt::Add {
            table,
            priority,
            keys,
            action,
            name,
        } = s
        else {
            panic!("not an add")
        };
        assert_eq!(table, "ingress.t1");
        assert_eq!(priority, None);
        assert_eq!(keys[0].value, "10.0.0.0/8");
        assert_eq!(action.name, "SwitchIngress.set_port");
        assert_eq!(name, None);
        // An action with no arguments.
        let s = one("add t k:1 NoAction()");
        assert!(
            matches!(s, Stmt::Add { action: ActionSpec { ref args, .. }, .. } if args.is_empty())
        );
    }

    #[test]
    fn setdefault_remove_wait_no_packet() {
        assert_eq!(
            one("setdefault ethertype_match l2_packet()"),
            Stmt::SetDefault {
                table: "ethertype_match".into(),
                action: ActionSpec {
                    name: "l2_packet".into(),
                    args: vec![]
                }
            }
        );
        assert_eq!(one("remove all"), Stmt::RemoveAll);
        assert_eq!(one("  wait  # settle"), Stmt::Wait);
        assert_eq!(one("no_packet"), Stmt::NoPacket);
    }

    #[test]
    fn packets_and_expectations() {
        assert_eq!(
            one("packet 0 01010101 0303 03 03 99"),
            Stmt::Packet {
                port: 0,
                data: vec![1, 1, 1, 1, 3, 3, 3, 3, 0x99]
            }
        );
        let Stmt::Expect {
            port: 1,
            pattern: Some(p),
        } = one("expect 1 *1010101 03 $")
        else {
            panic!("not an expect")
        };
        assert!(p.exact);
        assert_eq!(p.nibbles.len(), 10);
        assert_eq!(p.nibbles[0], Nibble::Any);
        assert_eq!(p.nibbles[1], Nibble::Hex(1));
        assert_eq!(
            one("expect 5"),
            Stmt::Expect {
                port: 5,
                pattern: None
            }
        );
    }

    #[test]
    fn checks() {
        assert_eq!(
            one("check_counter cntDum(10) packets == 2"),
            Stmt::CheckCounter {
                counter: "cntDum".into(),
                cell: CellRef::Index(10),
                kind: CountKind::Packets,
                op: CmpOp::Eq,
                value: 2
            }
        );
        assert_eq!(
            one("check_counter ingress.c($A) bytes >= 0x40"),
            Stmt::CheckCounter {
                counter: "ingress.c".into(),
                cell: CellRef::Entry("A".into()),
                kind: CountKind::Bytes,
                op: CmpOp::Ge,
                value: 64
            }
        );
        assert!(matches!(
            one("check_counter c(1)"),
            Stmt::CheckCounter {
                op: CmpOp::Gt,
                value: 0,
                ..
            }
        ));
        assert_eq!(
            one("check_register r(3) hi = 7"),
            Stmt::CheckRegister {
                register: "r".into(),
                cell: CellRef::Index(3),
                field: Some("hi".into()),
                value: 7
            }
        );
        assert!(matches!(
            one("check_register r(3) == 0x10"),
            Stmt::CheckRegister {
                field: None,
                value: 16,
                ..
            }
        ));
    }

    #[test]
    fn control_statements() {
        assert_eq!(
            one("mirroring_add 5 2"),
            Stmt::MirroringAdd {
                session: 5,
                port: 2
            }
        );
        assert_eq!(one("mc_mgrp_create 1"), Stmt::McMgrpCreate { mgid: 1 });
        assert_eq!(
            one("mc_node_create 0 1 2 3"),
            Stmt::McNodeCreate {
                rid: 0,
                ports: vec![1, 2, 3]
            }
        );
        assert_eq!(
            one("mc_prune_set 2 2 7"),
            Stmt::McPruneSet {
                xid: 2,
                ports: vec![2, 7]
            }
        );
        assert_eq!(
            one("mc_node_associate 1 0"),
            Stmt::McNodeAssociate { mgid: 1, node: 0 }
        );
    }

    #[test]
    fn lines_are_numbered() {
        let v = parse("# header\n\nwait\n  \npacket 1 00\n").unwrap();
        assert_eq!(v.iter().map(|s| s.line).collect::<Vec<_>>(), vec![3, 5]);
    }

    fn err(s: &str) -> StfParseError {
        parse(s).expect_err(s)
    }

    #[test]
    fn errors_carry_line_and_column() {
        let e = err("wait\npacket 0 0102 zz");
        assert_eq!((e.line, e.column), (2, 15));
        assert!(e.message.contains("`z`"), "{e}");
        let e = err("frobnicate 1");
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.to_string().contains("unknown statement `frobnicate`"));
        let e = err("packet 0 010");
        assert!(e.message.contains("odd"), "{e}");
        let e = err("add t k:1 act(a:1");
        assert!(e.message.contains("`,` or `)`"), "{e}");
        let e = err("add t k 1 act()");
        assert_eq!(e.column, 9);
        let e = err("expect 1 01 $ 02");
        assert_eq!(e.column, 15);
        let e = err("packet 70000 00");
        assert!(e.message.contains("out of range"), "{e}");
        let e = err("wait now");
        assert!(e.message.contains("`now`"), "{e}");
        let e = err("check_counter c(1) frames == 1");
        assert!(e.message.contains("`frames`"), "{e}");
        assert!(parse("remove t1").is_err());
        assert!(parse("packet 0").is_err());
        assert!(parse("add t k:1").is_err());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,80}") {
            let _ = parse(&s);
        }

        #[test]
        fn never_panics_on_statement_shapes(
            kw in "(add|setdefault|packet|expect|check_counter|check_register|mc_node_create) ",
            rest in "[a-z0-9_.:$*()=,<>!/& -]{0,40}",
        ) {
            let _ = parse(&format!("{kw}{rest}"));
        }
    }
}

//! The STF parser: one statement per line (or several, separated by `;`), `#` starts a
//! comment, keywords in any case. Table writes are read in `parse_write.rs`, counter and
//! register checks in `parse_check.rs`, the line structure in `lines.rs`.
//!
//! Values of keys and action arguments are kept as text (their widths come from the program);
//! here they are only checked to be one token. Packet data, ports, priorities and check values
//! are read in full. Every error carries the line and column (both 1-based).

use super::cursor::{Cursor, StfParseError};
use super::expand::Expander;
use super::lines::{joined_lines, split_statements, Statement};
use super::parse_check::{check_counter, check_register};
use super::parse_write::{add, selector, setdefault};
use super::source::{nested_error, source_arg, Sources};
use super::{ExpectPattern, Nibble, StfStmt, Stmt};
use std::path::Path;

/// Reads a whole script, with `$NAME` expanded from the process environment (as the
/// harness does; see `expand.rs`).
pub fn parse(text: &str) -> Result<Vec<StfStmt>, StfParseError> {
    parse_with_env(text, std::env::vars())
}

/// Reads a whole script, with `$NAME` expanded from `vars` (and the script's `setenv`s). A
/// `source` line is an error here: its file is named relative to the script's own file
/// ([`parse_file_with_env`]).
pub fn parse_with_env(
    text: &str,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<StfStmt>, StfParseError> {
    let mut env = Expander::new(vars);
    let mut out = Vec::new();
    parse_script(text, None, &mut env, None, &mut out)?;
    Ok(out)
}

/// Reads the script `text` of the file `file`, with `$NAME` expanded from the process
/// environment, and the scripts its `source` lines name (`source.rs`).
pub fn parse_file(text: &str, file: &Path) -> Result<Vec<StfStmt>, StfParseError> {
    parse_file_with_env(text, file, std::env::vars())
}

/// [`parse_file`] with `$NAME` expanded from `vars`.
pub fn parse_file_with_env(
    text: &str,
    file: &Path,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<Vec<StfStmt>, StfParseError> {
    let mut env = Expander::new(vars);
    let mut out = Vec::new();
    let mut sources = Sources::new(file);
    parse_script(text, Some(&mut sources), &mut env, None, &mut out)?;
    Ok(out)
}

/// Appends the statements of `text` to `out`, each at its own line or, in a sourced script,
/// at `at` (the line of the outermost `source`).
fn parse_script(
    text: &str,
    mut sources: Option<&mut Sources>,
    env: &mut Expander,
    at: Option<usize>,
    out: &mut Vec<StfStmt>,
) -> Result<(), StfParseError> {
    for (line, raw) in joined_lines(text) {
        // The whole line is expanded before any of its statements runs, as in the harness.
        let text = env.expand(&raw).map_err(|(pos, message)| StfParseError {
            line,
            column: raw[..pos].chars().count() + 1,
            message,
        })?;
        for s in split_statements(&text) {
            if let Some(name) = source_arg(&s) {
                let Some(src) = sources.as_deref_mut() else {
                    return Err(StfParseError {
                        line,
                        column: s.column0 + 1,
                        message: "`source` names a file relative to the script's own: read \
                                  the script from its file"
                            .into(),
                    });
                };
                let (file, inner) = src.enter(line, &s, name)?;
                let r = parse_script(&inner, Some(&mut *src), env, Some(at.unwrap_or(line)), out);
                src.leave();
                r.map_err(|e| nested_error(line, &s, &file, e))?;
                continue;
            }
            if let Some(stmt) = parse_statement(line, s, env)? {
                out.push(StfStmt {
                    line: at.unwrap_or(line),
                    stmt,
                });
            }
        }
    }
    Ok(())
}

/// One statement; `None` for an empty one or a `setenv` (applied to `env` here).
fn parse_statement(
    line: usize,
    s: Statement<'_>,
    env: &mut Expander,
) -> Result<Option<Stmt>, StfParseError> {
    let mut cur = Cursor {
        text: s.text,
        pos: 0,
        line,
        column0: s.column0,
    };
    cur.skip_ws();
    if cur.at_end() {
        return Ok(None);
    }
    if cur
        .rest()
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("setenv "))
    {
        cur.pos += 7;
        let name = cur.name("a variable name")?;
        let value = cur.rest().trim();
        if value.is_empty() {
            return Err(cur.error("`setenv NAME VALUE` needs a value"));
        }
        env.set(&name, value);
        return Ok(None);
    }
    let stmt = statement(&mut cur)?;
    cur.skip_ws();
    if !cur.at_end() {
        return Err(cur.error(format!(
            "unexpected `{}` at the end of the statement",
            cur.rest()
        )));
    }
    if let Stmt::Add { name: Some(n), .. } = &stmt {
        env.entry_name(n);
    }
    Ok(Some(stmt))
}

fn statement(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let start = cur.pos;
    let word = cur.take_while(|c| c.is_ascii_alphanumeric() || c == '_');
    let keyword = word.to_ascii_lowercase();
    let stmt = match keyword.as_str() {
        "add" => add(cur)?,
        "setdefault" => setdefault(cur)?,
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
        "sleep" => {
            let secs: u64 = cur.number_as("the seconds to sleep")?;
            Stmt::Sleep {
                ns: secs.saturating_mul(1_000_000_000),
            }
        }
        "check_counter" => check_counter(cur)?,
        "selector" => selector(cur)?,
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
            cur.skip_ws();
            let lags = if cur.eat("|") {
                lag_list(cur)?
            } else {
                Vec::new()
            };
            Stmt::McNodeCreate { rid, ports, lags }
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
        "register_write" => Stmt::RegisterWrite {
            register: cur.name("a register name")?,
            index: cur.number_as("the index")?,
            value: cur.number("the value")?,
        },
        "register_reset" => Stmt::RegisterReset {
            register: cur.name("a register name")?,
        },
        // bmv2's CLI read: printed, as a `check_register` without a comparison.
        "register_read" => Stmt::CheckRegister {
            register: cur.name("a register name")?,
            pipe: None,
            cell: super::CellRef::Index(cur.number_as("the index")?),
            field: None,
            test: super::ValueTest::default(),
        },
        "wire" => {
            let from = cur.number_as("the port looped back")?;
            cur.skip_ws();
            if !cur.eat("->") {
                return Err(cur.error("expected `->` (`wire PORT -> PORT`)"));
            }
            let to = cur.number_as("the port it comes back in on")?;
            Stmt::Wire { from, to }
        }
        // The Tofino harness's ghost-thread command: what it sets is not in any public
        // source, so a script using it is refused rather than run without it.
        "ghost" => {
            return Err(cur.error_at(
                start,
                "the Tofino harness's `ghost` command is not read: what it sets in the ghost \
                 thread is not public (pisa runs a Tofino 2 program's ghost control on each \
                 change of a port queue's depth)"
                    .to_string(),
            ))
        }
        "" => return Err(cur.error("expected a statement keyword")),
        _ => {
            return Err(cur.error_at(
                start,
                format!(
                    "unknown statement `{word}` (known: add, setdefault, remove, packet, expect, \
                     no_packet, wait, sleep, check_counter, check_register, mirroring_add, \
                     mirroring_add_mc, mc_mgrp_create, mc_node_create, mc_node_associate, \
                     mc_prune_set, register_read, register_write, register_reset, wire, setenv, \
                     selector)"
                ),
            ))
        }
    };
    Ok(stmt)
}

/// Ports up to the end or a `|`.
fn port_list(cur: &mut Cursor<'_>) -> Result<Vec<u16>, StfParseError> {
    let mut ports = Vec::new();
    loop {
        cur.skip_ws();
        if cur.at_end() || cur.peek() == Some('|') {
            return Ok(ports);
        }
        ports.push(cur.number_as("a port")?);
    }
}

/// LAG ids up to the end.
fn lag_list(cur: &mut Cursor<'_>) -> Result<Vec<u8>, StfParseError> {
    let mut lags = Vec::new();
    loop {
        cur.skip_ws();
        if cur.at_end() {
            return Ok(lags);
        }
        lags.push(cur.number_as("a LAG id")?);
    }
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

/// The harness's `.bbbbbbbb`: one byte written bit by bit (`0`, `1`, `*`), at a byte boundary.
fn bit_byte(cur: &mut Cursor<'_>, nibbles: &mut Vec<Nibble>) -> Result<(), StfParseError> {
    if !nibbles.len().is_multiple_of(2) {
        return Err(cur.error("`.bbbbbbbb` must start a byte, not follow half of one"));
    }
    cur.pos += 1;
    let bits = cur.take_while(|c| matches!(c, '0' | '1' | '*'));
    if bits.len() != 8 {
        return Err(cur.error("`.` starts a byte of 8 bits, each `0`, `1` or `*`"));
    }
    let (mut value, mut care) = (0u8, 0u8);
    for b in bits.bytes() {
        value = (value << 1) | u8::from(b == b'1');
        care = (care << 1) | u8::from(b != b'*');
    }
    nibbles.push(Nibble::Bits {
        value: value >> 4,
        care: care >> 4,
    });
    nibbles.push(Nibble::Bits {
        value: value & 0xf,
        care: care & 0xf,
    });
    Ok(())
}

fn expect_data(cur: &mut Cursor<'_>) -> Result<ExpectPattern, StfParseError> {
    let mut nibbles = Vec::new();
    let mut exact = false;
    loop {
        cur.skip_ws();
        let Some(c) = cur.peek() else { break };
        match c {
            '*' => nibbles.push(Nibble::Any),
            // The harness reads nothing after `$` (p4c's parser refuses it).
            '$' => {
                exact = true;
                cur.pos = cur.text.len();
                break;
            }
            '.' => {
                bit_byte(cur, &mut nibbles)?;
                continue;
            }
            c => match c.to_digit(16) {
                Some(d) => nibbles.push(Nibble::Hex(d as u8)),
                None => {
                    return Err(cur.error(format!(
                        "`{c}` is not a hex digit, `*`, `.bbbbbbbb` or `$` in expected data"
                    )))
                }
            },
        }
        cur.pos += c.len_utf8();
    }
    if exact && nibbles.len() % 2 != 0 {
        // The harness calls this malformed, p4c's compare says "too long": either way the
        // exact length is not a whole number of bytes, and rounding it up passed wrongly.
        return Err(cur.error(format!(
            "`$` after an odd number of hex digits ({}): the exact length must be whole bytes",
            nibbles.len()
        )));
    }
    Ok(ExpectPattern { nibbles, exact })
}

#[cfg(test)]
mod tests {
    use super::super::{ActionSpec, Arg, CellRef, CmpOp, CountKind, ValueTest};
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
                    member: None,
                    group: None,
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
                    args: vec![],
                    member: None,
                    group: None,
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
                pipe: None,
                cell: CellRef::Index(10),
                kind: CountKind::Packets,
                test: ValueTest {
                    cmp: Some((CmpOp::Eq, 2)),
                    ..ValueTest::default()
                }
            }
        );
        assert_eq!(
            one("check_counter ingress.c($A) bytes >= 0x40"),
            Stmt::CheckCounter {
                counter: "ingress.c".into(),
                pipe: None,
                cell: CellRef::Entry("A".into()),
                kind: CountKind::Bytes,
                test: ValueTest {
                    cmp: Some((CmpOp::Ge, 64)),
                    ..ValueTest::default()
                }
            }
        );
        // No comparison: the value is printed, never checked (it used to be `> 0`).
        assert!(matches!(
            one("check_counter c(1)"),
            Stmt::CheckCounter {
                test: ValueTest { cmp: None, .. },
                ..
            }
        ));
        assert_eq!(
            one("check_register r(3) hi = 7"),
            Stmt::CheckRegister {
                register: "r".into(),
                pipe: None,
                cell: CellRef::Index(3),
                field: Some("hi".into()),
                test: ValueTest {
                    cmp: Some((CmpOp::Eq, 7)),
                    ..ValueTest::default()
                }
            }
        );
        assert!(matches!(
            one("check_register r(3) == 0x10"),
            Stmt::CheckRegister {
                field: None,
                test: ValueTest {
                    cmp: Some((CmpOp::Eq, 16)),
                    ..
                },
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
                ports: vec![1, 2, 3],
                lags: vec![],
            }
        );
        // simple_switch_CLI's LAGs after `|`.
        assert_eq!(
            one("mc_node_create 0 2 3 | 1 4"),
            Stmt::McNodeCreate {
                rid: 0,
                ports: vec![2, 3],
                lags: vec![1, 4],
            }
        );
        assert!(parse("mc_node_create 0 2 | x").is_err());
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

    #[test]
    fn semicolon_separated_statements_parse_in_linear_time_with_their_columns() {
        // 50,000 packet statements on one line (plus bare `;`s): each blanked copy of the line
        // before it made this quadratic in time and memory (minutes, gigabytes).
        let line = "packet 0 00;;".repeat(50_000);
        let v = parse(&line).unwrap();
        assert_eq!(v.len(), 50_000);
        assert!(v.iter().all(|s| s.line == 1));
        // Columns still count from the start of the line as written.
        let e = err("wait; packet 0 0102 zz");
        assert_eq!((e.line, e.column), (1, 21));
        // Columns count characters, not bytes (`é` is two bytes).
        let e = err("setenv X é; frobnicate");
        assert_eq!(e.column, 13);
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
        // What follows `$` is not read, as in the harness.
        assert_eq!(one("expect 1 01 $ 02"), one("expect 1 01 $"),);
        // An odd nibble count cannot be an exact length (it used to round up and pass).
        let e = err("expect 1 010 $");
        assert!(e.message.contains("odd number"), "{e}");
        assert_eq!(one("sleep 2"), Stmt::Sleep { ns: 2_000_000_000 });
        assert_eq!(one("wire 3 -> 4"), Stmt::Wire { from: 3, to: 4 });
        let Stmt::Expect {
            pattern: Some(p), ..
        } = one("expect 1 00 .0000**00 $")
        else {
            panic!()
        };
        assert!(p.matches(&[0, 0x0c]) && !p.matches(&[0, 0x0d]));
        assert!(parse("expect 1 0.00000000").is_err());
        assert!(parse("expect 1 .0000").is_err());
        assert!(parse("wire 3 4").is_err());
        assert_eq!(
            one("register_write r 2 0x10"),
            Stmt::RegisterWrite {
                register: "r".into(),
                index: 2,
                value: 16
            }
        );
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

    /// `ghost` (the Tofino harness's ghost-thread command) is an STF error that says why,
    /// never a script run without it.
    #[test]
    fn the_ghost_command_is_refused_with_the_reason() {
        let e = parse("ghost 0 1\n").expect_err("ghost is not read");
        assert!(e.to_string().contains("`ghost` command is not read"), "{e}");
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

//! Table writes: `add` and `setdefault`, in p4c's form (`add T [PRIO] K:V ... ACT(P:V, ...)
//! [= NAME]`) and in the Tofino harness's looser one: commas and parentheses optional
//! (`ACT P:V ...`), `priority:N` / `way:N` named, a bare priority anywhere before the action
//! in decimal, hex or octal, and `ACT(ADDR ...)` naming an action-profile member.
//! Keys are the `NAME:VALUE` pairs before the action name, arguments those after it.

use super::cursor::{is_name_char, Cursor, StfParseError};
use super::{ActionSpec, Arg, Stmt};

pub(super) fn add(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let table = cur.name("a table name")?;
    let mut priority = None;
    let mut keys = Vec::new();
    let (mut member, mut group) = (None, None);
    let mut action = loop {
        cur.skip_punct();
        // An entry naming only its member or group needs no action.
        if (cur.at_end() || cur.peek() == Some('=')) && (member.is_some() || group.is_some()) {
            break ActionSpec::default();
        }
        if cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            // A priority, or (`add PROFILE ADDR ACTION`) an action profile's member address:
            // which one depends on the table, not known here.
            priority = Some(cur.address("the priority or member address")?);
            continue;
        }
        let start = cur.pos;
        let name = cur.name("a key (`FIELD:VALUE`) or the action (`ACTION(...)`)")?;
        cur.skip_ws();
        if !cur.eat(":") {
            cur.pos = start;
            break action(cur)?;
        }
        match name.to_ascii_lowercase().as_str() {
            "priority" => priority = Some(cur.address("the priority")?),
            // The harness's way of an exact entry: placement, nothing pisa models.
            "way" => drop(cur.address("the way")?),
            "$action_member_id" => member = Some(cur.address("the member")?),
            "$selector_group_id" => group = Some(cur.address("the group")?),
            _ => {
                let (value, column) = cur.value_token(&format!("key `{name}`"))?;
                keys.push(Arg {
                    name,
                    value,
                    column,
                });
            }
        }
    };
    action.member = action.member.or(member);
    action.group = group;
    cur.skip_punct();
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

pub(super) fn setdefault(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let table = cur.name("a table name")?;
    let action = action(cur)?;
    Ok(Stmt::SetDefault { table, action })
}

/// `NAME`, `NAME(ARGS)` or `NAME ARGS` (up to the end or `=`).
fn action(cur: &mut Cursor<'_>) -> Result<ActionSpec, StfParseError> {
    let name = cur.name("an action (`ACTION(ARG:VALUE, ...)`)")?;
    let mut spec = ActionSpec {
        name,
        ..ActionSpec::default()
    };
    cur.skip_punct();
    let closing = cur.eat("(");
    loop {
        cur.skip_punct();
        match cur.peek() {
            Some(')') if closing => {
                cur.pos += 1;
                return Ok(spec);
            }
            None | Some('=') if !closing => return Ok(spec),
            None => return Err(cur.error("expected `,` or `)` in the action's arguments")),
            Some(c) if c.is_ascii_digit() && closing => {
                spec.member = Some(cur.address("the action-data address")?);
            }
            Some(c) if c == '"' || (is_name_char(c) && (closing || !c.is_ascii_digit())) => {
                spec.args.push(argument(cur)?)
            }
            Some(_) if closing => {
                return Err(cur.error("expected `,` or `)` in the action's arguments"))
            }
            Some(_) => return Ok(spec),
        }
    }
}

/// `selector [PIPE:]NAME(GROUP) add|remove MEMBER[, MEMBER]...`.
pub(super) fn selector(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let pipe = super::parse_check::pipe_prefix(cur)?;
    let selector = cur.name("a selector name")?;
    cur.expect_char('(', "after the selector's name")?;
    let group = cur.address("the group")?;
    cur.expect_char(')', "after the group")?;
    let what = cur.name("`add` or `remove`")?.to_ascii_lowercase();
    let remove = match what.as_str() {
        "add" => false,
        "remove" => true,
        _ => return Err(cur.error(format!("expected `add` or `remove`, found `{what}`"))),
    };
    let mut members = Vec::new();
    loop {
        cur.skip_punct();
        if cur.at_end() {
            break;
        }
        members.push(cur.address("a member")?);
    }
    Ok(Stmt::Selector {
        selector,
        pipe,
        group,
        remove,
        members,
    })
}

fn argument(cur: &mut Cursor<'_>) -> Result<Arg, StfParseError> {
    let name = cur.name("an action argument (`NAME:VALUE`)")?;
    cur.expect_char(':', &format!("after argument `{name}`"))?;
    let (value, column) = cur.value_token(&format!("argument `{name}`"))?;
    Ok(Arg {
        name,
        value,
        column,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn add_of(s: &str) -> (Option<u32>, Vec<Arg>, ActionSpec) {
        match parse(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .remove(0)
            .stmt
        {
            Stmt::Add {
                priority,
                keys,
                action,
                ..
            } => (priority, keys, action),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_out_of_range_profile_member_address_is_not_called_a_priority() {
        let e = parse("add ap 18446744073709551615 set_port(port:2)").unwrap_err();
        assert_eq!(e.column, 8);
        assert_eq!(
            e.message,
            "the priority or member address 18446744073709551615 is out of range (at most 4294967295)"
        );
    }

    #[test]
    fn harness_operand_forms() {
        let (p, keys, a) = add_of("add t priority:5 f2:3 set_port(port:2)");
        assert_eq!((p, keys.len(), a.args.len()), (Some(5), 1, 1));
        assert_eq!(add_of("add t 0x10 f2:3 drop").0, Some(16));
        assert_eq!(add_of("add t 010 f2:3 drop").0, Some(8));
        assert_eq!(add_of("add t f2:3 7 drop").0, Some(7));
        let (_, keys, a) = add_of("add ex f1:1, set_port port:2, q:3 = A");
        assert_eq!(keys[0].value, "1");
        assert_eq!((a.name.as_str(), a.args.len()), ("set_port", 2));
        let (_, _, a) = add_of("add ex f1:0x00000001, set_port(port:2)");
        assert_eq!(a.args[0].value, "2");
        let (_, _, a) = add_of("add ex way:1 f1:1 set_port(3 port:2)");
        assert_eq!((a.member, a.args.len()), (Some(3), 1));
        match parse("setdefault ex set_port port:3")
            .unwrap()
            .remove(0)
            .stmt
        {
            Stmt::SetDefault { action, .. } => assert_eq!(action.args[0].value, "3"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn quoted_names() {
        match parse("add \"Ingress.ex\" f1:1 \"Ingress.set_port\"(port:2)")
            .unwrap()
            .remove(0)
            .stmt
        {
            Stmt::Add { table, action, .. } => {
                assert_eq!(table, "Ingress.ex");
                assert_eq!(action.name, "Ingress.set_port");
            }
            other => panic!("{other:?}"),
        }
        assert!(parse("add \"Ingress.ex f1:1 drop").is_err());
    }

    #[test]
    fn selector_groups() {
        assert_eq!(
            parse("selector 1:sel(4) add 0, 2 3").unwrap()[0].stmt,
            Stmt::Selector {
                selector: "sel".into(),
                pipe: Some(1),
                group: 4,
                remove: false,
                members: vec![0, 2, 3],
            }
        );
        assert!(matches!(
            parse("selector sel(4) remove 2").unwrap()[0].stmt,
            Stmt::Selector { remove: true, .. }
        ));
        assert!(parse("selector sel(4) drop 2").is_err());
        let (_, _, a) = add_of("add t f:1 $SELECTOR_GROUP_ID:4");
        assert_eq!((a.group, a.member, a.name.as_str()), (Some(4), None, ""));
        let (_, _, a) = add_of("add t f:1 $ACTION_MEMBER_ID:2 = E");
        assert_eq!(a.member, Some(2));
    }
}

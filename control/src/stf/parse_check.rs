//! `check_counter` and `check_register`, in the Tofino harness's grammar (a superset of
//! p4c's): `[PIPE:]NAME(INDEX|$ENTRY) [FIELD][[hi:lo]] [& MASK] [OP VALUE]`, OP one of
//! `= == != < <= > >=`; without a comparison the value is printed, not checked.

use super::cursor::{Cursor, StfParseError};
use super::{CellRef, CmpOp, CountKind, Stmt, ValueTest};

/// `N:` before the name: the pipe to read.
pub(super) fn pipe_prefix(cur: &mut Cursor<'_>) -> Result<Option<u16>, StfParseError> {
    cur.skip_ws();
    let start = cur.pos;
    let digits = cur.take_while(|c| c.is_ascii_digit());
    if digits.is_empty() || !cur.eat(":") {
        cur.pos = start;
        return Ok(None);
    }
    cur.pos = start;
    let pipe = cur.number_as("the pipe")?;
    cur.eat(":");
    Ok(Some(pipe))
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

fn comparison(cur: &mut Cursor<'_>) -> Result<CmpOp, StfParseError> {
    let ops = [
        ("==", CmpOp::Eq),
        ("!=", CmpOp::Ne),
        ("<=", CmpOp::Le),
        (">=", CmpOp::Ge),
        ("=", CmpOp::Eq),
        ("<", CmpOp::Lt),
        (">", CmpOp::Gt),
    ];
    for (text, op) in ops {
        if cur.eat(text) {
            return Ok(op);
        }
    }
    Err(cur.error("expected a comparison (=, ==, !=, <, <=, >, >=)"))
}

/// `[hi:lo] & MASK OP VALUE`, each part optional.
fn value_test(cur: &mut Cursor<'_>) -> Result<ValueTest, StfParseError> {
    let mut test = ValueTest::default();
    cur.skip_ws();
    if cur.eat("[") {
        let hi = cur.number_as("the slice's high bit")?;
        cur.expect_char(':', "between the slice's bits")?;
        let lo = cur.number_as("the slice's low bit")?;
        cur.expect_char(']', "after the slice")?;
        if hi < lo || hi > 127 {
            return Err(cur.error(format!(
                "the slice [{hi}:{lo}] is not bits 127..0, high first"
            )));
        }
        test.slice = Some((hi, lo));
    }
    cur.skip_ws();
    if cur.eat("&") {
        test.mask = Some(cur.number("the mask")?);
    }
    cur.skip_ws();
    if cur.at_end() {
        return Ok(test);
    }
    let op = comparison(cur)?;
    cur.skip_ws();
    if cur.peek().is_some_and(|c| !c.is_ascii_digit()) {
        return Err(cur.error(
            "expected the value to compare with (storing into a variable, `= NAME`, is not supported)",
        ));
    }
    test.cmp = Some((op, cur.number("the value to compare with")?));
    Ok(test)
}

pub(super) fn check_counter(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let pipe = pipe_prefix(cur)?;
    let counter = cur.name("a counter name")?;
    let cell = cell(cur)?;
    cur.skip_ws();
    let save = cur.pos;
    let word = cur.take_while(|c| c.is_ascii_alphabetic());
    let kind = match word.to_ascii_lowercase().as_str() {
        "packets" | "" => CountKind::Packets,
        "bytes" => CountKind::Bytes,
        _ => {
            return Err(cur.error_at(
                save,
                format!("expected `packets` or `bytes`, found `{word}`"),
            ))
        }
    };
    Ok(Stmt::CheckCounter {
        counter,
        pipe,
        cell,
        kind,
        test: value_test(cur)?,
    })
}

pub(super) fn check_register(cur: &mut Cursor<'_>) -> Result<Stmt, StfParseError> {
    let pipe = pipe_prefix(cur)?;
    let register = cur.name("a register name")?;
    let cell = cell(cur)?;
    cur.skip_ws();
    let field = match cur.peek() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            let f = cur.take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.'));
            Some(f.to_string())
        }
        _ => None,
    };
    Ok(Stmt::CheckRegister {
        register,
        pipe,
        cell,
        field,
        test: value_test(cur)?,
    })
}

#[cfg(test)]
mod tests {
    use super::super::parse;
    use super::*;

    fn one(s: &str) -> Stmt {
        parse(s)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
            .remove(0)
            .stmt
    }

    #[test]
    fn harness_counter_forms() {
        let Stmt::CheckCounter {
            pipe, test, kind, ..
        } = one("check_counter 1:ctr(5) bytes[15:8] & 0xf = 3")
        else {
            panic!()
        };
        assert_eq!((pipe, kind), (Some(1), CountKind::Bytes));
        assert_eq!(test.slice, Some((15, 8)));
        assert_eq!(test.mask, Some(15));
        assert_eq!(test.cmp, Some((CmpOp::Eq, 3)));
        assert_eq!(test.select(0xabcd), 0xb);
        let Stmt::CheckCounter { test, pipe, .. } = one("check_counter ctr(5)") else {
            panic!()
        };
        assert_eq!((test, pipe), (ValueTest::default(), None));
        assert!(parse("check_counter ctr(5) packets = X").is_err());
    }

    #[test]
    fn harness_register_forms() {
        let Stmt::CheckRegister { field, test, .. } = one("check_register 0:reg(5) lo < 5") else {
            panic!()
        };
        assert_eq!(
            (field.as_deref(), test.cmp),
            (Some("lo"), Some((CmpOp::Lt, 5)))
        );
        let Stmt::CheckRegister { field, test, .. } = one("check_register reg(5)") else {
            panic!()
        };
        assert_eq!((field, test.cmp), (None, None));
        let Stmt::CheckRegister { test, .. } = one("check_register reg(5) >= 2") else {
            panic!()
        };
        assert_eq!(test.cmp, Some((CmpOp::Ge, 2)));
    }
}

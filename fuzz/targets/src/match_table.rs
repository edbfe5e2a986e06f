//! Fuzz target: arbitrary bytes as a sequence of control-plane requests (insert, modify,
//! delete, get) and packet lookups on `pipeline::table::MatchTable`s of every shape; nothing
//! may panic, lookups must only return live handles below the size, and `len` must equal
//! the number of live entries.

use pipeline::ir::{ActionCall, ActionId, KeyMatch, MatchKind, Value};
use pipeline::table::MatchTable;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> Option<u8> {
        let (b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(*b)
    }
    fn value(&mut self) -> Option<Value> {
        let n = usize::from(self.u8()? % 17);
        let mut v: Value = 0;
        for _ in 0..n {
            v = (v << 8) | Value::from(self.u8()?);
        }
        Some(v)
    }
}

fn kind(b: u8) -> MatchKind {
    match b % 4 {
        0 => MatchKind::Exact,
        1 => MatchKind::Ternary,
        2 => MatchKind::Lpm,
        _ => MatchKind::Range,
    }
}

fn key_match(d: &mut Bytes) -> Option<KeyMatch> {
    Some(match d.u8()? % 4 {
        0 => KeyMatch::Exact(d.value()?),
        1 => KeyMatch::Ternary {
            value: d.value()?,
            mask: d.value()?,
        },
        2 => KeyMatch::Lpm {
            value: d.value()?,
            prefix_len: u16::from(d.u8()?),
        },
        _ => KeyMatch::Range {
            lo: d.value()?,
            hi: d.value()?,
        },
    })
}

fn one(data: &[u8]) -> Option<()> {
    let mut d = Bytes(data);
    let nkeys = usize::from(d.u8()? % 5);
    let mut keys = Vec::new();
    for _ in 0..nkeys {
        keys.push((kind(d.u8()?), u16::from(d.u8()?) % 140));
    }
    let size = u32::from(d.u8()? % 32);
    let mut t = MatchTable::new(&keys, size);
    while let Some(op) = d.u8() {
        let n = usize::from(d.u8()? % 6);
        let mut k = Vec::new();
        for _ in 0..n {
            k.push(key_match(&mut d)?);
        }
        let prio = if d.u8()? & 1 == 1 {
            Some(u32::from(d.u8()?))
        } else {
            None
        };
        let action = ActionCall {
            action: ActionId(u32::from(op)),
            args: vec![],
        };
        match op % 5 {
            0 => drop(t.insert(&k, prio, action)),
            1 => drop(t.modify(&k, prio, action)),
            2 => drop(t.delete(&k, prio)),
            3 => drop(t.get(&k, prio)),
            _ => {
                let mut key = Vec::new();
                for _ in 0..usize::from(d.u8()? % 6) {
                    key.push(d.value()?);
                }
                if let Some(h) = t.lookup(&key) {
                    assert!(h.0 < size);
                    assert!(t.entry(h).is_some());
                    let _ = t.entry_action(h);
                }
            }
        }
        assert_eq!(t.len(), t.iter().count());
    }
    Some(())
}

/// One input.
pub fn run(data: &[u8]) {
    let _ = one(data);
}

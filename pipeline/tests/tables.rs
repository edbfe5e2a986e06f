//! Behaviour of `pipeline::table::MatchTable`: match semantics per shape, validation errors,
//! priority direction, handle stability, and a randomized comparison against a naive model.

use pipeline::ir::{ActionCall, ActionId, KeyMatch, MatchKind, Value};
use pipeline::table::{EntryHandle, MatchTable, TableError, TableShape};
use proptest::prelude::*;

fn act(a: u32, args: &[Value]) -> ActionCall {
    ActionCall {
        action: ActionId(a),
        args: args.to_vec(),
    }
}

fn ip(a: u8, b: u8, c: u8, d: u8) -> Value {
    u32::from_be_bytes([a, b, c, d]) as Value
}

#[test]
fn exact_multi_field_hit_and_miss() {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 48), (MatchKind::Exact, 12)], 16);
    let h = t
        .insert(
            &[KeyMatch::Exact(0x0000_5e00_0101), KeyMatch::Exact(10)],
            None,
            act(3, &[7]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[0x0000_5e00_0101, 10]), Some(h));
    assert_eq!(t.lookup(&[0x0000_5e00_0101, 11]), None);
    assert_eq!(
        t.lookup(&[0x0000_5e00_0101]),
        None,
        "wrong field count is a miss"
    );
    assert_eq!(t.entry_action(h), &act(3, &[7]));
    assert_eq!(
        t.insert(
            &[KeyMatch::Exact(0x0000_5e00_0101), KeyMatch::Exact(10)],
            None,
            act(4, &[])
        ),
        Err(TableError::Duplicate(h))
    );
    t.modify(
        &[KeyMatch::Exact(0x0000_5e00_0101), KeyMatch::Exact(10)],
        None,
        act(4, &[1]),
    )
    .unwrap();
    assert_eq!(t.entry_action(h), &act(4, &[1]));
    assert_eq!(
        t.get(
            &[KeyMatch::Exact(0x0000_5e00_0101), KeyMatch::Exact(10)],
            None
        ),
        Some((h, &act(4, &[1])))
    );
}

#[test]
fn exact_wide_key_over_128_bits() {
    // Two IPv6 addresses: 256 key bits, the boxed-slice path.
    let mut t = MatchTable::new(&[(MatchKind::Exact, 128), (MatchKind::Exact, 128)], 4);
    assert_eq!(t.shape(), TableShape::Exact);
    let a: Value = 0x2001_0db8_0000_0000_0000_0000_0000_0001;
    let h = t
        .insert(
            &[KeyMatch::Exact(a), KeyMatch::Exact(!a)],
            None,
            act(1, &[]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[a, !a]), Some(h));
    assert_eq!(t.lookup(&[a, a]), None);
    t.delete(&[KeyMatch::Exact(a), KeyMatch::Exact(!a)], None)
        .unwrap();
    assert_eq!(t.lookup(&[a, !a]), None);
}

#[test]
fn lpm_longest_prefix_wins() {
    let mut t = MatchTable::new(&[(MatchKind::Lpm, 32)], 16);
    let lpm = |v, p| {
        [KeyMatch::Lpm {
            value: v,
            prefix_len: p,
        }]
    };
    let default = t.insert(&lpm(0, 0), None, act(0, &[])).unwrap();
    let net8 = t
        .insert(&lpm(ip(10, 0, 0, 0), 8), None, act(1, &[]))
        .unwrap();
    let net24 = t
        .insert(&lpm(ip(10, 1, 2, 0), 24), None, act(2, &[]))
        .unwrap();
    let host = t
        .insert(&lpm(ip(10, 1, 2, 3), 32), None, act(3, &[]))
        .unwrap();
    assert_eq!(t.lookup(&[ip(10, 1, 2, 3)]), Some(host));
    assert_eq!(t.lookup(&[ip(10, 1, 2, 4)]), Some(net24));
    assert_eq!(t.lookup(&[ip(10, 9, 9, 9)]), Some(net8));
    assert_eq!(t.lookup(&[ip(192, 168, 0, 1)]), Some(default));
    t.delete(&lpm(ip(10, 1, 2, 0), 24), None).unwrap();
    assert_eq!(t.lookup(&[ip(10, 1, 2, 4)]), Some(net8));
    // Host bits past the prefix are cleared on insert, so this is the same /8 entry.
    assert_eq!(
        t.insert(&lpm(ip(10, 7, 7, 7), 8), None, act(9, &[])),
        Err(TableError::Duplicate(net8))
    );
    assert_eq!(
        t.get(&lpm(ip(10, 0, 0, 0), 8), None).map(|x| x.0),
        Some(net8)
    );
}

#[test]
fn lpm_with_exact_vrf_field() {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 16), (MatchKind::Lpm, 32)], 16);
    let vrf1 = t
        .insert(
            &[
                KeyMatch::Exact(1),
                KeyMatch::Lpm {
                    value: ip(10, 0, 0, 0),
                    prefix_len: 8,
                },
            ],
            None,
            act(1, &[]),
        )
        .unwrap();
    let vrf2 = t
        .insert(
            &[
                KeyMatch::Exact(2),
                KeyMatch::Lpm {
                    value: ip(10, 1, 0, 0),
                    prefix_len: 16,
                },
            ],
            None,
            act(2, &[]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[1, ip(10, 1, 1, 1)]), Some(vrf1));
    assert_eq!(t.lookup(&[2, ip(10, 1, 1, 1)]), Some(vrf2));
    assert_eq!(t.lookup(&[2, ip(10, 2, 1, 1)]), None);
    assert_eq!(t.lookup(&[3, ip(10, 1, 1, 1)]), None);
}

#[test]
fn ternary_lower_priority_value_wins_and_ties_go_to_the_older_entry() {
    let mut t = MatchTable::new(&[(MatchKind::Ternary, 16)], 16);
    let tern = |v, m| [KeyMatch::Ternary { value: v, mask: m }];
    let catch_all = t.insert(&tern(0, 0), Some(100), act(0, &[])).unwrap();
    let high_byte = t
        .insert(&tern(0x1200, 0xff00), Some(10), act(1, &[]))
        .unwrap();
    let exact = t
        .insert(&tern(0x1234, 0xffff), Some(20), act(2, &[]))
        .unwrap();
    // 0x1234 matches all three; priority 10 is the lowest number, so it wins.
    assert_eq!(t.lookup(&[0x1234]), Some(high_byte));
    assert_eq!(t.lookup(&[0x5678]), Some(catch_all));
    t.delete(&tern(0x1200, 0xff00), Some(10)).unwrap();
    assert_eq!(t.lookup(&[0x1234]), Some(exact));
    // Equal priority: the older entry wins.
    let older = t
        .insert(&tern(0x0000, 0x0001), Some(50), act(3, &[]))
        .unwrap();
    let _newer = t
        .insert(&tern(0x0000, 0x0002), Some(50), act(4, &[]))
        .unwrap();
    assert_eq!(t.lookup(&[0x0100]), Some(older));
    // Same key, different priority: two distinct entries (priority is part of the key).
    assert!(t
        .insert(&tern(0x1234, 0xffff), Some(5), act(5, &[]))
        .is_ok());
    assert_eq!(t.len(), 5);
}

#[test]
fn range_and_exact_together() {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 8), (MatchKind::Range, 16)], 8);
    let web = t
        .insert(
            &[KeyMatch::Exact(6), KeyMatch::Range { lo: 80, hi: 443 }],
            Some(1),
            act(1, &[]),
        )
        .unwrap();
    let high = t
        .insert(
            &[
                KeyMatch::Exact(6),
                KeyMatch::Range {
                    lo: 1024,
                    hi: 65535,
                },
            ],
            Some(2),
            act(2, &[]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[6, 80]), Some(web));
    assert_eq!(t.lookup(&[6, 443]), Some(web));
    assert_eq!(t.lookup(&[6, 444]), None);
    assert_eq!(t.lookup(&[6, 65535]), Some(high));
    assert_eq!(t.lookup(&[17, 80]), None);
    // Shorthand: Exact(v) on a range key is [v, v].
    let one = t
        .insert(
            &[KeyMatch::Exact(17), KeyMatch::Exact(53)],
            Some(3),
            act(3, &[]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[17, 53]), Some(one));
    assert_eq!(
        t.entry(one).map(|e| e.0.to_vec()),
        Some(vec![
            KeyMatch::Exact(17),
            KeyMatch::Range { lo: 53, hi: 53 }
        ])
    );
}

#[test]
fn lpm_in_a_ternary_table_is_just_a_mask() {
    let mut t = MatchTable::new(&[(MatchKind::Lpm, 32), (MatchKind::Ternary, 8)], 8);
    assert_eq!(t.shape(), TableShape::Tcam);
    let short = t
        .insert(
            &[
                KeyMatch::Lpm {
                    value: ip(10, 0, 0, 0),
                    prefix_len: 8,
                },
                KeyMatch::Ternary { value: 0, mask: 0 },
            ],
            Some(1),
            act(1, &[]),
        )
        .unwrap();
    let _long = t
        .insert(
            &[
                KeyMatch::Lpm {
                    value: ip(10, 1, 0, 0),
                    prefix_len: 16,
                },
                KeyMatch::Ternary { value: 0, mask: 0 },
            ],
            Some(2),
            act(2, &[]),
        )
        .unwrap();
    assert_eq!(t.lookup(&[ip(10, 1, 1, 1), 0]), Some(short));
}

#[test]
fn validation_errors() {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 8), (MatchKind::Ternary, 8)], 8);
    assert_eq!(
        t.insert(&[KeyMatch::Exact(1)], Some(1), act(0, &[])),
        Err(TableError::KeyCount {
            expected: 2,
            got: 1
        })
    );
    assert_eq!(
        t.insert(
            &[KeyMatch::Exact(1), KeyMatch::Ternary { value: 0, mask: 0 }],
            None,
            act(0, &[])
        ),
        Err(TableError::PriorityMissing)
    );
    assert_eq!(
        t.insert(
            &[
                KeyMatch::Lpm {
                    value: 0,
                    prefix_len: 0
                },
                KeyMatch::Ternary { value: 0, mask: 0 }
            ],
            Some(1),
            act(0, &[])
        ),
        Err(TableError::KindMismatch {
            field: 0,
            expected: MatchKind::Exact,
            got: MatchKind::Lpm
        })
    );
    assert_eq!(
        t.insert(
            &[
                KeyMatch::Exact(256),
                KeyMatch::Ternary { value: 0, mask: 0 }
            ],
            Some(1),
            act(0, &[])
        ),
        Err(TableError::ValueTooWide {
            field: 0,
            value: 256,
            width: 8
        })
    );
    let mut e = MatchTable::new(&[(MatchKind::Exact, 8)], 8);
    assert_eq!(
        e.insert(&[KeyMatch::Exact(1)], Some(3), act(0, &[])),
        Err(TableError::PriorityForbidden)
    );
    assert_eq!(
        e.delete(&[KeyMatch::Exact(1)], None),
        Err(TableError::NotFound)
    );
    assert_eq!(
        e.modify(&[KeyMatch::Exact(1)], None, act(0, &[])),
        Err(TableError::NotFound)
    );
    assert!(e.is_empty());
}

#[test]
fn iter_and_clear() {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 16)], 8);
    for v in [5u128, 6, 7] {
        t.insert(&[KeyMatch::Exact(v)], None, act(v as u32, &[v]))
            .unwrap();
    }
    t.delete(&[KeyMatch::Exact(6)], None).unwrap();
    let seen: Vec<(EntryHandle, Value)> = t
        .iter()
        .map(|(h, k, p, a)| {
            assert_eq!(p, None);
            assert_eq!(
                a.args[0],
                match k[0] {
                    KeyMatch::Exact(v) => v,
                    _ => unreachable!(),
                }
            );
            (h, a.args[0])
        })
        .collect();
    assert_eq!(seen, vec![(EntryHandle(0), 5), (EntryHandle(2), 7)]);
    t.clear();
    assert_eq!(t.len(), 0);
    assert_eq!(t.lookup(&[5]), None);
    assert_eq!(
        t.insert(&[KeyMatch::Exact(9)], None, act(1, &[])),
        Ok(EntryHandle(0))
    );
}

#[test]
fn many_routes_handles_stay_below_size() {
    let mut t = MatchTable::new(&[(MatchKind::Lpm, 32)], 10_000);
    for i in 0..10_000u32 {
        let h = t
            .insert(
                &[KeyMatch::Lpm {
                    value: ((i as Value) << 8) & 0xffff_ff00,
                    prefix_len: 24,
                }],
                None,
                act(1, &[i as Value]),
            )
            .unwrap();
        assert!(h.0 < 10_000);
    }
    assert_eq!(t.len(), 10_000);
    let h = t.lookup(&[(1234u128 << 8) | 77]).unwrap();
    assert_eq!(t.entry_action(h).args, vec![1234]);
}

// ---- randomized comparison against a naive model ----

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<KeyMatch>, Option<u32>),
    Delete(usize),
    Lookup(Vec<Value>),
}

#[derive(Debug, Clone)]
struct Model {
    entries: Vec<(Vec<KeyMatch>, Option<u32>, u64, EntryHandle)>,
}

fn field_matches(m: &KeyMatch, k: Value, width: u16) -> bool {
    let wm = if width >= 128 {
        Value::MAX
    } else {
        (1 << width) - 1
    };
    match *m {
        KeyMatch::Exact(v) => k == v,
        KeyMatch::Ternary { value, mask } => k & mask == value & mask,
        KeyMatch::Lpm { value, prefix_len } => {
            let pm = wm & !(wm >> prefix_len.min(width));
            k & pm == value & pm
        }
        KeyMatch::Range { lo, hi } => lo <= k && k <= hi,
    }
}

impl Model {
    fn lookup(&self, shape: TableShape, widths: &[u16], key: &[Value]) -> Option<EntryHandle> {
        let hits = self.entries.iter().filter(|(ks, ..)| {
            ks.iter()
                .zip(key.iter().zip(widths.iter()))
                .all(|(m, (k, w))| field_matches(m, *k, *w))
        });
        match shape {
            TableShape::Exact => hits.map(|e| e.3).next(),
            TableShape::Lpm => hits
                .max_by_key(|(ks, ..)| {
                    ks.iter()
                        .map(|m| match m {
                            KeyMatch::Lpm { prefix_len, .. } => *prefix_len,
                            _ => 0,
                        })
                        .sum::<u16>()
                })
                .map(|e| e.3),
            TableShape::Tcam => hits
                .min_by_key(|(_, p, seq, _)| (p.unwrap_or(0), *seq))
                .map(|e| e.3),
        }
    }
}

fn match_for(kind: MatchKind, width: u16) -> BoxedStrategy<KeyMatch> {
    let wm: Value = (1 << width) - 1;
    match kind {
        // Few distinct masks, so the TCAM's tuple-space path (not the scan) is exercised.
        MatchKind::Ternary if width == 5 => (0..=wm, prop_oneof![Just(0), Just(wm), Just(0b11000)])
            .prop_map(|(v, m)| KeyMatch::Ternary { value: v, mask: m })
            .boxed(),
        MatchKind::Exact => (0..=wm).prop_map(KeyMatch::Exact).boxed(),
        MatchKind::Ternary => (0..=wm, 0..=wm)
            .prop_map(|(v, m)| KeyMatch::Ternary { value: v, mask: m })
            .boxed(),
        MatchKind::Lpm => (0..=wm, 0..=width)
            .prop_map(|(v, p)| KeyMatch::Lpm {
                value: v,
                prefix_len: p,
            })
            .boxed(),
        MatchKind::Range => (0..=wm, 0..=wm)
            .prop_map(|(a, b)| KeyMatch::Range {
                lo: a.min(b),
                hi: a.max(b),
            })
            .boxed(),
        // Selector keys are not matched: the generated tables have none.
        MatchKind::Selector => unreachable!("no selector keys in generated tables"),
    }
}

fn ops_for(keys: Vec<(MatchKind, u16)>, prio: bool) -> impl Strategy<Value = Vec<Op>> {
    let entry: Vec<BoxedStrategy<KeyMatch>> = keys.iter().map(|(k, w)| match_for(*k, *w)).collect();
    let lookup: Vec<BoxedStrategy<Value>> = keys
        .iter()
        .map(|(_, w)| (0..=((1u128 << *w) - 1)).boxed())
        .collect();
    let op = prop_oneof![
        3 => (entry, 0u32..4).prop_map(move |(k, p)| Op::Insert(k, prio.then_some(p))),
        1 => (0usize..64).prop_map(Op::Delete),
        4 => lookup.prop_map(Op::Lookup),
    ];
    proptest::collection::vec(op, 1..120)
}

fn run_against_model(keys: &[(MatchKind, u16)], ops: Vec<Op>) {
    let mut t = MatchTable::new(keys, 24);
    let widths: Vec<u16> = keys.iter().map(|k| k.1).collect();
    let mut model = Model { entries: vec![] };
    let mut seq = 0u64;
    for op in ops {
        match op {
            Op::Insert(k, p) => match t.insert(&k, p, act(1, &[])) {
                Ok(h) => {
                    // Store the normalised form the table kept.
                    let (nk, np, _) = t.entry(h).unwrap();
                    model.entries.push((nk.to_vec(), np, seq, h));
                    seq += 1;
                }
                Err(TableError::Duplicate(_)) | Err(TableError::Full { .. }) => {}
                Err(e) => panic!("unexpected {e}"),
            },
            Op::Delete(i) => {
                if model.entries.is_empty() {
                    continue;
                }
                let (k, p, _, h) = model.entries.remove(i % model.entries.len());
                assert_eq!(t.delete(&k, p), Ok(h));
            }
            Op::Lookup(key) => {
                assert_eq!(
                    t.lookup(&key),
                    model.lookup(t.shape(), &widths, &key),
                    "key {key:?}"
                );
            }
        }
        assert_eq!(t.len(), model.entries.len());
    }
}

proptest! {
    #[test]
    fn exact_matches_model(ops in ops_for(vec![(MatchKind::Exact, 3), (MatchKind::Exact, 2)], false)) {
        run_against_model(&[(MatchKind::Exact, 3), (MatchKind::Exact, 2)], ops);
    }

    #[test]
    fn lpm_matches_model(ops in ops_for(vec![(MatchKind::Exact, 1), (MatchKind::Lpm, 6)], false)) {
        run_against_model(&[(MatchKind::Exact, 1), (MatchKind::Lpm, 6)], ops);
    }

    #[test]
    fn tcam_few_masks_matches_model(ops in ops_for(vec![(MatchKind::Ternary, 5), (MatchKind::Range, 3), (MatchKind::Ternary, 5)], true)) {
        run_against_model(&[(MatchKind::Ternary, 5), (MatchKind::Range, 3), (MatchKind::Ternary, 5)], ops);
    }

    #[test]
    fn tcam_matches_model(ops in ops_for(vec![(MatchKind::Ternary, 4), (MatchKind::Range, 4), (MatchKind::Lpm, 3)], true)) {
        run_against_model(&[(MatchKind::Ternary, 4), (MatchKind::Range, 4), (MatchKind::Lpm, 3)], ops);
    }
}

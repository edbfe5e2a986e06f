//! Lookup speed of `MatchTable`: an exact table with 1k entries and an LPM table with 10k
//! IPv4 routes (mixed /16../32 prefixes) and a ternary ACL with 1k rules (5-tuple-like keys,
//! the winner usually near the end of the priority order), measured in lookups per second;
//! for the exact table also a hit's action read after the lookup and with it (`lookup_call`).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pipeline::ir::{ActionCall, ActionId, KeyMatch, MatchKind, Value};
use pipeline::table::{MatchTable, INLINE_ARGS};
use std::hint::black_box;

/// Small deterministic generator so the bench needs no RNG crate.
fn next(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    *state >> 11
}

fn action(i: u32) -> ActionCall {
    ActionCall {
        action: ActionId(1),
        args: vec![i as Value],
    }
}

fn exact_1k(c: &mut Criterion) {
    let mut t = MatchTable::new(&[(MatchKind::Exact, 48), (MatchKind::Exact, 12)], 1024);
    let mut s = 1;
    let mut keys = Vec::new();
    while keys.len() < 1000 {
        let k = [
            (next(&mut s) & 0xffff_ffff_ffff) as Value,
            (next(&mut s) & 0xfff) as Value,
        ];
        if t.insert(
            &[KeyMatch::Exact(k[0]), KeyMatch::Exact(k[1])],
            None,
            action(0),
        )
        .is_ok()
        {
            keys.push(k);
        }
    }
    let mut g = c.benchmark_group("exact_1k");
    g.throughput(Throughput::Elements(keys.len() as u64));
    g.bench_function("hit", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(t.lookup(black_box(k)));
            }
        })
    });
    // A hit's action and data: the handle, then the table's action array (two reads), against
    // `lookup_call` reading the record stored beside the key (one).
    g.bench_function("lookup_then_hit_call", |b| {
        b.iter(|| {
            for k in &keys {
                let mut buf = [0; INLINE_ARGS];
                if let Some(h) = t.lookup(black_box(k)) {
                    black_box(t.hit_call(h, k, &mut buf, &[]));
                }
            }
        })
    });
    g.bench_function("lookup_call", |b| {
        b.iter(|| {
            for k in &keys {
                let mut buf = [0; INLINE_ARGS];
                black_box(t.lookup_call(black_box(k), &mut buf, &[]));
            }
        })
    });
    g.finish();
}

fn lpm_10k(c: &mut Criterion) {
    let mut t = MatchTable::new(&[(MatchKind::Lpm, 32)], 10_240);
    let mut s = 7;
    let mut n = 0;
    while n < 10_000 {
        let len = 16 + (next(&mut s) % 17) as u16;
        let v = (next(&mut s) & 0xffff_ffff) as Value;
        let v = v & !((1u128 << (32 - len)) - 1);
        if t.insert(
            &[KeyMatch::Lpm {
                value: v,
                prefix_len: len,
            }],
            None,
            action(n),
        )
        .is_ok()
        {
            n += 1;
        }
    }
    let addrs: Vec<[Value; 1]> = (0..1000)
        .map(|_| [(next(&mut s) & 0xffff_ffff) as Value])
        .collect();
    let mut g = c.benchmark_group("lpm_10k");
    g.throughput(Throughput::Elements(addrs.len() as u64));
    g.bench_function("random_addresses", |b| {
        b.iter(|| {
            for a in &addrs {
                black_box(t.lookup(black_box(a)));
            }
        })
    });
    g.finish();
}

fn ternary_1k(c: &mut Criterion) {
    let keys = [
        (MatchKind::Ternary, 32),
        (MatchKind::Ternary, 32),
        (MatchKind::Ternary, 8),
        (MatchKind::Range, 16),
    ];
    let mut t = MatchTable::new(&keys, 1024);
    let mut s = 3;
    for i in 0..1000u32 {
        let src = (next(&mut s) & 0xffff_ffff) as Value;
        let dst = (next(&mut s) & 0xffff_ffff) as Value;
        let lo = (next(&mut s) & 0xffff) as Value;
        t.insert(
            &[
                KeyMatch::Ternary {
                    value: src,
                    mask: 0xffff_ff00,
                },
                KeyMatch::Ternary {
                    value: dst,
                    mask: 0xffff_0000,
                },
                KeyMatch::Ternary {
                    value: 6,
                    mask: 0xff,
                },
                KeyMatch::Range {
                    lo,
                    hi: (lo + 100).min(0xffff),
                },
            ],
            Some(i),
            action(i),
        )
        .unwrap();
    }
    // A catch-all rule last, so a miss of every specific rule still scans them all.
    t.insert(
        &[
            KeyMatch::Ternary { value: 0, mask: 0 },
            KeyMatch::Ternary { value: 0, mask: 0 },
            KeyMatch::Ternary { value: 0, mask: 0 },
            KeyMatch::Range { lo: 0, hi: 0xffff },
        ],
        Some(5000),
        action(9999),
    )
    .unwrap();
    let pkts: Vec<[Value; 4]> = (0..1000)
        .map(|_| {
            [
                (next(&mut s) & 0xffff_ffff) as Value,
                (next(&mut s) & 0xffff_ffff) as Value,
                6,
                (next(&mut s) & 0xffff) as Value,
            ]
        })
        .collect();
    let mut g = c.benchmark_group("ternary_1k");
    g.throughput(Throughput::Elements(pkts.len() as u64));
    g.bench_function("mostly_catch_all", |b| {
        b.iter(|| {
            for p in &pkts {
                black_box(t.lookup(black_box(p)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, exact_1k, lpm_10k, ternary_1k);
criterion_main!(benches);

//! Packets per second through the whole switch (ingress parser → MAU → deparser → TM → egress)
//! on the hand-built L2/L3 program of `tests/common`: 64 B frames in batches of 256, a forward
//! table of 1000 MACs and an LPM table of 1000 routes, on the flat engine and on the native
//! engine. Prints Mpps per core of each and their ratio next to criterion's own report.

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::Instant;

use common::*;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pipeline::api::PipeSel;
use pipeline::exec::EngineKind;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::{InFrame, OutFrame, Switch, SwitchConfig};

const BATCH: usize = 256;

fn build(engine: EngineKind) -> (Switch, Vec<Vec<u8>>) {
    let (prog, _) = l2_program(Options::default());
    let mut sw = Switch::new(prog, SwitchConfig::new(1).with_engine(engine)).expect("switch");
    assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
    for i in 0..1000u64 {
        sw.table_add(
            PipeSel::All,
            "forward",
            &[(
                "hdr.ethernet.dst_addr",
                KeyMatch::Exact((0x0200_0000_0000 + i) as Value),
            )],
            None,
            "set_port",
            &[("port", (i % 32) as Value)],
        )
        .expect("forward entry");
    }
    for i in 0..1000u32 {
        sw.table_add(
            PipeSel::All,
            "ipv4_lpm",
            &[(
                "hdr.ipv4.dst_addr",
                KeyMatch::Lpm {
                    value: Value::from(0x0a00_0000 | (i << 8)),
                    prefix_len: 24,
                },
            )],
            None,
            "route",
            &[
                ("port", Value::from(i % 32)),
                ("dmac", 0x0200_0000_0000 + Value::from(i)),
            ],
        )
        .expect("route entry");
    }
    let frames = (0..BATCH as u64)
        .map(|i| {
            let dst = 0x0200_0000_0000 + (i * 7919) % 1000;
            if i % 2 == 0 {
                eth_frame(dst, 0x0400_0000_0000 + i, 0x9000)
            } else {
                ipv4_frame(
                    dst,
                    0x0400_0000_0000 + i,
                    0x0b00_0001,
                    0x0a00_0001 | (((i as u32) % 1000) << 8),
                    64,
                )
            }
        })
        .collect();
    (sw, frames)
}

/// CPU time this thread has used (so a loaded machine does not distort the per-core figure).
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and CLOCK_THREAD_CPUTIME_ID is always available
    // on Linux; clock_gettime writes only into it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn run_batch(sw: &mut Switch, ins: &[InFrame<'_>], out: &mut Vec<OutFrame>) {
    sw.process_batch(ins, out);
    for f in out.drain(..) {
        sw.recycle(f.bytes);
    }
}

/// Mpps per core of CPU time, ns per packet and wall-clock Mpps of `rounds` batches.
fn timed(sw: &mut Switch, ins: &[InFrame<'_>], out: &mut Vec<OutFrame>, rounds: usize) -> [f64; 3] {
    let t = Instant::now();
    let cpu0 = thread_cpu_ns();
    for _ in 0..rounds {
        run_batch(sw, black_box(ins), out);
    }
    let cpu = (thread_cpu_ns() - cpu0) as f64 / 1e9;
    let secs = t.elapsed().as_secs_f64();
    let pkts = (rounds * BATCH) as f64;
    [pkts / cpu / 1e6, cpu * 1e9 / pkts, pkts / secs / 1e6]
}

fn bench(c: &mut Criterion) {
    let engines = [EngineKind::Flat, EngineKind::Native];
    let mut switches: Vec<(EngineKind, Switch, Vec<Vec<u8>>)> = engines
        .iter()
        .map(|e| {
            let (sw, frames) = build(*e);
            (*e, sw, frames)
        })
        .collect();
    let rounds: usize = std::env::var("PISA_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4000);
    let mut g = c.benchmark_group("pipeline");
    g.throughput(Throughput::Elements(BATCH as u64));
    let mut mpps = Vec::new();
    for (engine, sw, frames) in switches.iter_mut() {
        let ins: Vec<InFrame<'_>> = frames
            .iter()
            .enumerate()
            .map(|(i, b)| InFrame {
                port: (i % 16) as u16,
                bytes: b,
                ts: 0,
            })
            .collect();
        let mut out = Vec::with_capacity(BATCH * 2);
        // A plain timing loop for the Mpps-per-core line.
        for _ in 0..200 {
            run_batch(sw, &ins, &mut out);
        }
        let [m, ns, wall] = timed(sw, &ins, &mut out, rounds);
        println!(
            "pipeline/l2l3_64B ({engine}): {m:.2} Mpps per core of CPU time ({ns:.0} ns/packet), \
             {wall:.2} Mpps wall clock, {} packets",
            rounds * BATCH
        );
        mpps.push(m);
        g.bench_function(format!("l2l3_64B_batch256_{engine}"), |b| {
            b.iter(|| run_batch(sw, black_box(&ins), &mut out))
        });
    }
    g.finish();
    println!(
        "pipeline/l2l3_64B: native / flat = {:.2}",
        mpps[1] / mpps[0]
    );
}
criterion_group!(benches, bench);
criterion_main!(benches);

//! `cargo bench --bench l2l3`: l2l3.p4 (1k MACs, 10k routes, 64-byte frames, batches of 32)
//! against wire.p4 as the baseline, in one criterion group so the two are measured in the same
//! run; criterion reports throughput in elements (frames) per second for each.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pipeline::switch::InFrame;
use pisa::workload::{self, Workload};

const BATCH: usize = 32;

fn run_batches(w: &mut Workload, start: &mut usize, out: &mut Vec<pipeline::switch::OutFrame>) {
    let n = w.frames.len();
    let inputs: Vec<InFrame<'_>> = (0..BATCH)
        .map(|k| {
            let (port, bytes) = &w.frames[(*start + k) % n];
            InFrame {
                port: *port,
                bytes,
                ts: 0,
            }
        })
        .collect();
    *start = (*start + BATCH) % n;
    w.switch.process_batch(&inputs, out);
    for f in out.drain(..) {
        w.switch.recycle(f.bytes);
    }
    let _ = w.switch.drain_drops();
}

fn bench(c: &mut Criterion) {
    let mut wire = workload::wire(8192).expect("wire.p4 workload");
    let mut l2l3 = workload::l2l3(1000, 10_000, 8192).expect("l2l3.p4 workload");
    let mut g = c.benchmark_group("pipeline-64B");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.measurement_time(Duration::from_secs(3));
    let mut out = Vec::with_capacity(BATCH * 4);
    let mut i = 0;
    g.bench_function("wire.p4 (baseline)", |b| {
        b.iter(|| run_batches(&mut wire, &mut i, &mut out))
    });
    let mut j = 0;
    g.bench_function("l2l3.p4", |b| {
        b.iter(|| run_batches(&mut l2l3, &mut j, &mut out))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

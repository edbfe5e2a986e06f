//! `cargo bench --bench l2l3`: l2l3.p4 (1k MACs, 10k routes, 64-byte frames, batches of 32)
//! against wire.p4 as the baseline, in one criterion group so the two are measured in the same
//! run; criterion reports throughput in elements (frames) per second for each.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use pipeline::switch::{InFrame, OutFrame, Switch};
use pisa::workload;

const BATCH: usize = 32;

/// Feeds the next `BATCH` frames; `inputs` and `out` are reused so the loop itself allocates
/// nothing and only the switch is measured.
fn run_batch<'a>(
    sw: &mut Switch,
    frames: &'a [(u16, Vec<u8>)],
    next: &mut usize,
    inputs: &mut Vec<InFrame<'a>>,
    out: &mut Vec<OutFrame>,
) {
    inputs.clear();
    for _ in 0..BATCH {
        let (port, bytes) = &frames[*next];
        *next = (*next + 1) % frames.len();
        inputs.push(InFrame {
            port: *port,
            bytes,
            ts: 0,
        });
    }
    sw.process_batch(inputs, out);
    for f in out.drain(..) {
        sw.recycle(f.bytes);
    }
    let _ = sw.drain_drops();
}

fn bench(c: &mut Criterion) {
    let wire = workload::wire(8192, Default::default()).expect("wire.p4 workload");
    let l2l3 = workload::l2l3(1000, 10_000, 8192, Default::default()).expect("l2l3.p4 workload");
    let mut g = c.benchmark_group("pipeline-64B");
    g.throughput(Throughput::Elements(BATCH as u64));
    g.measurement_time(Duration::from_secs(3));
    for (name, w) in [("wire.p4 (baseline)", wire), ("l2l3.p4", l2l3)] {
        let (mut sw, frames) = (w.switch, w.frames);
        let mut out = Vec::with_capacity(BATCH * 4);
        let mut inputs = Vec::with_capacity(BATCH);
        let mut next = 0;
        g.bench_function(name, |b| {
            b.iter(|| run_batch(&mut sw, &frames, &mut next, &mut inputs, &mut out))
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

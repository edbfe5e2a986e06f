//! Port throughput: frames per second through an in-memory link, the same link wrapped in
//! the link model (passthrough, and with loss + duplication + reordering), and a pcap
//! capture. Run with `cargo bench -p pisa-dataplane`; nothing here is asserted.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use dataplane::mem::pair_with_capacity;
use dataplane::{FrameBatch, LinkConfig, LinkPort, Nanos, PcapPort, Port};

const BATCH: usize = 64;

fn frame(len: usize) -> Vec<u8> {
    let mut f = vec![0x5a; len];
    f[12] = 0x08;
    f[13] = 0x00;
    f
}

/// Sends one batch from `tx` and drains it at `rx`; returns frames received.
fn round(tx: &mut dyn Port, rx: &mut dyn Port, b: &mut FrameBatch, f: &[u8], now: Nanos) -> usize {
    for _ in 0..BATCH {
        b.push(f, now);
    }
    tx.send_batch(b, now).expect("send");
    let n = rx.recv_batch(b, now).expect("recv");
    b.clear();
    n
}

fn mem_and_link(c: &mut Criterion) {
    let mut g = c.benchmark_group("ports");
    g.throughput(Throughput::Elements(BATCH as u64));
    let f = frame(64);

    let (mut a, mut b) = pair_with_capacity("a", "b", 4096);
    let mut batch = FrameBatch::with_buffers(BATCH, 2048);
    g.bench_function("mem_pair_64B", |bench| {
        bench.iter(|| round(&mut a, &mut b, &mut batch, &f, Nanos(0)))
    });

    let (a, mut b) = pair_with_capacity("a", "b", 4096);
    let mut a = LinkPort::new(a, LinkConfig::default()).expect("config");
    g.bench_function("link_passthrough_64B", |bench| {
        bench.iter(|| round(&mut a, &mut b, &mut batch, &f, Nanos(0)))
    });

    let (a, mut b) = pair_with_capacity("a", "b", 4096);
    let cfg: LinkConfig = "tx.loss=0.01,tx.dup=0.01,tx.reorder=0.01,tx.corrupt=0.01,seed=1"
        .parse()
        .expect("config");
    let mut a = LinkPort::new(a, cfg).expect("config");
    let mut now = Nanos(0);
    g.bench_function("link_faults_64B", |bench| {
        bench.iter(|| {
            now += Nanos(1000);
            round(&mut a, &mut b, &mut batch, &f, now)
        })
    });

    let mut cap = PcapPort::from_io(
        "cap",
        None,
        Some(("sink", Box::new(std::io::sink()))),
        false,
    )
    .expect("pcap");
    g.bench_function("pcap_capture_64B", |bench| {
        bench.iter(|| {
            for _ in 0..BATCH {
                batch.push(&f, Nanos(0));
            }
            cap.send_batch(&mut batch, Nanos(0)).expect("write")
        })
    });
    g.finish();
}

criterion_group!(benches, mem_and_link);
criterion_main!(benches);

//! `pisa bench forward`: builds its own copy of the bundled lab, sends precomputed frames from
//! h1 to h2 through pisa and then through the kernel bridge on the same veths, and prints Mpps,
//! latency percentiles and the ratio.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use clap::Args;
use dataplane::runtime::{PortSetup, Runtime, RuntimeConfig};
use dataplane::{open_port, LinkConfig, MemHub, Nanos, PortSpec, WallClock};

use super::live::{build_switch, thread_hook, PortArg, SwitchPipeline};
use super::CompileArgs;

/// `pisa bench forward`: forwarding throughput and latency through pisa on AF_PACKET veths,
/// against the Linux kernel bridge on the same veths in the same run.
#[derive(Args, Debug, Clone)]
pub struct BenchForwardArgs {
    /// The program (default: the bundled l2l3.p4).
    #[arg(long)]
    pub program: Option<PathBuf>,
    /// Its tables (default: p4/programs/l2l3.tables.yaml, which the bundled lab matches).
    #[arg(long)]
    pub tables: Option<PathBuf>,
    /// Seconds of the throughput phase, per frame size and switch.
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Frame sizes in bytes (without FCS), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "64,1500")]
    pub sizes: Vec<usize>,
    /// Paced rate of the latency phase, frames per second.
    #[arg(long, default_value_t = 10_000)]
    pub latency_pps: u64,
    /// Frames per batch in pisa.
    #[arg(long, default_value_t = 32)]
    pub batch: usize,
    #[command(flatten)]
    pub compile: CompileArgs,
}

/// One measurement: throughput phase and latency phase.
#[derive(Debug, Clone, Copy, Default)]
struct BenchFigures {
    offered_mpps: f64,
    mpps: f64,
    /// p50, p90, p99, p99.9 in microseconds.
    lat_us: [f64; 4],
    lat_samples: u64,
}

const BENCH_ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const BENCH_MAGIC: u32 = 0x7069_7361; // "pisa"

/// Generator on `gen`, sink on `sink`: a blast for `seconds`, then `latency_pps` paced frames
/// for one second. Timestamps come from `base` (same process, same monotonic clock).
fn bench_once(
    gen: &mut dataplane::AfPacketPort,
    sink: dataplane::AfPacketPort,
    size: usize,
    seconds: f64,
    latency_pps: u64,
) -> anyhow::Result<(BenchFigures, dataplane::AfPacketPort)> {
    use dataplane::{FrameBatch, Port};
    use std::time::Instant;
    let base = Instant::now();
    let size = size.clamp(60, 1514);
    let mut template = vec![0u8; size];
    // h1 -> h2, the lab's addressing (p4/programs/l2l3.tables.yaml).
    template[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    template[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    template[12..14].copy_from_slice(&BENCH_ETHERTYPE);
    template[14..18].copy_from_slice(&BENCH_MAGIC.to_be_bytes());
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(std::sync::atomic::AtomicU64::new(0));
    // Sink thread: counts phase-0 frames, records phase-1 latencies.
    let sink_thread = {
        let stop = stop.clone();
        let received = received.clone();
        std::thread::spawn(move || {
            let mut sink = sink;
            let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .expect("valid histogram bounds");
            let mut counts = [0u64; 2];
            let mut b = FrameBatch::new(64);
            while !stop.load(Ordering::Acquire) {
                b.clear();
                match sink.recv_batch(&mut b, Nanos::ZERO) {
                    Ok(0) => {
                        let _ = sink.wait_readable(Duration::from_millis(5));
                    }
                    Ok(_) => {
                        let now = base.elapsed().as_nanos() as u64;
                        for f in b.iter() {
                            let d = &f.data;
                            if d.len() < 27
                                || d[12..14] != BENCH_ETHERTYPE
                                || d[14..18] != BENCH_MAGIC.to_be_bytes()
                            {
                                continue;
                            }
                            let ph = usize::from(d[18] & 1);
                            counts[ph] += 1;
                            received.fetch_add(1, Ordering::Relaxed);
                            if ph == 1 {
                                let mut t = [0u8; 8];
                                t.copy_from_slice(&d[19..27]);
                                let sent = u64::from_be_bytes(t);
                                let _ = hist.record(now.saturating_sub(sent).max(1));
                            }
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(1)),
                }
            }
            (counts, hist, sink)
        })
    };
    // Throughput phase: precomputed frames, sent as fast as sendmmsg takes them.
    let mut batch = FrameBatch::new(64);
    let d = Duration::from_secs_f64(seconds.max(0.1));
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed() < d {
        while batch.push(&template, Nanos::ZERO) {}
        sent += gen.send_batch(&mut batch, Nanos::ZERO)? as u64;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    // Frames delivered within the sending window (not the backlog delivered afterwards).
    let in_window = received.load(Ordering::Relaxed);
    // Let every queue on the way drain before the latency phase: wait until nothing has
    // arrived for 300 ms (at most 20 s).
    let quiet = |received: &std::sync::atomic::AtomicU64| {
        let t = Instant::now();
        let mut last = received.load(Ordering::Relaxed);
        let mut since = Instant::now();
        while since.elapsed() < Duration::from_millis(300) && t.elapsed() < Duration::from_secs(20)
        {
            std::thread::sleep(Duration::from_millis(50));
            let n = received.load(Ordering::Relaxed);
            if n != last {
                last = n;
                since = Instant::now();
            }
        }
    };
    quiet(&received);
    let mut frame = template.clone();
    frame[18] = 1;
    let gap = Duration::from_secs_f64(1.0 / latency_pps.max(1) as f64);
    let t1 = Instant::now();
    let mut next = t1;
    while t1.elapsed() < Duration::from_secs(1) {
        let now = Instant::now();
        if now < next {
            if next - now > Duration::from_micros(100) {
                std::thread::sleep(next - now - Duration::from_micros(50));
            }
            continue;
        }
        next += gap;
        let ts = base.elapsed().as_nanos() as u64;
        frame[19..27].copy_from_slice(&ts.to_be_bytes());
        batch.push(&frame, Nanos::ZERO);
        gen.send_batch(&mut batch, Nanos::ZERO)?;
    }
    quiet(&received);
    stop.store(true, Ordering::Release);
    let (counts, hist, sink) = sink_thread
        .join()
        .map_err(|_| anyhow!("the sink thread panicked"))?;
    let q = |p: f64| hist.value_at_quantile(p) as f64 / 1000.0;
    Ok((
        BenchFigures {
            offered_mpps: sent as f64 / elapsed / 1e6,
            mpps: in_window.min(counts[0]) as f64 / elapsed / 1e6,
            lat_us: [q(0.5), q(0.9), q(0.99), q(0.999)],
            lat_samples: hist.len(),
        },
        sink,
    ))
}

/// Removes the bench's lab and bridge on drop.
struct BenchCleanup {
    lab: String,
    bridge: String,
}

impl Drop for BenchCleanup {
    fn drop(&mut self) {
        let _ = dataplane::netns::ip(&["link", "del", "dev", &self.bridge]);
        let _ = dataplane::lab::lab_down(&self.lab);
    }
}

fn open_in(ns: &str, ifname: &str) -> anyhow::Result<dataplane::AfPacketPort> {
    let name = ifname.to_string();
    Ok(dataplane::netns::in_netns(ns, move || {
        dataplane::AfPacketPort::open(&name)
    })??)
}

/// Runs the forwarding benchmark (needs root).
pub fn bench_forward(args: BenchForwardArgs) -> anyhow::Result<ExitCode> {
    if !dataplane::netns::is_root() {
        return Err(anyhow!(
            "bench forward builds network namespaces and veth pairs: run it as root"
        ));
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let program_path = args
        .program
        .clone()
        .unwrap_or_else(|| root.join("p4/programs/l2l3.p4"));
    let tables = args
        .tables
        .clone()
        .unwrap_or_else(|| root.join("p4/programs/l2l3.tables.yaml"));
    let id = std::process::id() % 100_000;
    let lab_name = format!("bf{id}");
    let prefix = format!("bf{id}p");
    let text = std::fs::read_to_string(root.join("deploy/labs/l2l3-4hosts.yaml"))
        .context("cannot read the bundled lab")?
        .replace("name: l2l3-4hosts", &format!("name: {lab_name}"))
        .replace("ifprefix: l2l3p", &format!("ifprefix: {prefix}"));
    let lab = dataplane::lab::Lab::from_yaml(&text)?;
    let state = dataplane::lab::lab_up(&lab)?;
    let cleanup = BenchCleanup {
        lab: lab_name.clone(),
        bridge: format!("bf{id}br"),
    };
    let gen_ns = state.host("h1")?.netns.clone();
    let sink_ns = state.host("h2")?.netns.clone();
    let mut gen = open_in(&gen_ns, "eth0")?;
    let mut sink = open_in(&sink_ns, "eth0")?;
    let mut results: Vec<(usize, BenchFigures, BenchFigures)> = Vec::new();
    let mut pisa_figs = Vec::new();
    {
        let ports = [0u16, 1].map(|p| PortArg {
            devport: p,
            spec: PortSpec::AfPacket {
                ifname: format!("{prefix}{p}"),
            },
        });
        let sw = build_switch(&program_path, Some(&tables), &args.compile, None, &ports)?;
        let mut setups = Vec::new();
        for p in &ports {
            setups.push(PortSetup {
                devport: p.devport,
                port: open_port(&p.spec, &mut MemHub::default())?,
                link: LinkConfig::default(),
            });
        }
        let cfg = RuntimeConfig {
            batch: args.batch.max(1),
            thread_hook: thread_hook(true),
            ..RuntimeConfig::default()
        };
        let rt = Runtime::start(
            SwitchPipeline { sw },
            setups,
            Arc::new(WallClock::new()),
            cfg,
        )?;
        for &size in &args.sizes {
            let (f, s) = bench_once(&mut gen, sink, size, args.seconds, args.latency_pps)?;
            sink = s;
            pisa_figs.push((size, f));
        }
        let (_, st) = rt.stop()?;
        for p in &st.ports {
            eprintln!(
                "pisa port {}: rx {} tx {} rx drops {:?} tx drops {:?} ingress_channel_full {} egress_channel_full {}",
                p.devport,
                p.port.rx_packets,
                p.port.tx_packets,
                p.port.rx_drops,
                p.port.tx_drops,
                p.runtime.ingress_full,
                p.runtime.egress_full
            );
        }
    }
    // Baseline: the kernel bridge on the same veths.
    let br = cleanup.bridge.clone();
    dataplane::netns::ip(&["link", "add", "name", &br, "type", "bridge"])?;
    for p in 0..2 {
        dataplane::netns::ip(&["link", "set", "dev", &format!("{prefix}{p}"), "master", &br])?;
    }
    dataplane::netns::ip(&["link", "set", "dev", &br, "up"])?;
    std::thread::sleep(Duration::from_millis(200));
    for (size, pf) in pisa_figs {
        let (bf, s) = bench_once(&mut gen, sink, size, args.seconds, args.latency_pps)?;
        sink = s;
        results.push((size, pf, bf));
    }
    drop(sink);
    drop(gen);
    drop(cleanup);
    println!(
        "forwarding h1 -> h2 over AF_PACKET veths ({} s per run, latency at {} frames/s)",
        args.seconds, args.latency_pps
    );
    println!(
        "{:>6} {:<13} {:>12} {:>10} {:>9} {:>9} {:>9} {:>9}",
        "size", "switch", "offered Mpps", "fwd Mpps", "p50 us", "p90 us", "p99 us", "p99.9 us"
    );
    for (size, pf, bf) in &results {
        for (name, f) in [("pisa", pf), ("kernel bridge", bf)] {
            println!(
                "{:>6} {:<13} {:>12.3} {:>10.3} {:>9.1} {:>9.1} {:>9.1} {:>9.1}{}",
                size,
                name,
                f.offered_mpps,
                f.mpps,
                f.lat_us[0],
                f.lat_us[1],
                f.lat_us[2],
                f.lat_us[3],
                if f.lat_samples == 0 {
                    "  (no latency samples)"
                } else {
                    ""
                }
            );
        }
        let ratio = if bf.mpps > 0.0 {
            pf.mpps / bf.mpps
        } else {
            0.0
        };
        println!("{size:>6} pisa / kernel bridge throughput: {ratio:.3}");
    }
    Ok(ExitCode::SUCCESS)
}

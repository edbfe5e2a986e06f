//! The bench's traffic: the generator (bursts of one precomputed frame into a PACKET_MMAP
//! ring, at most `--window` in flight, then paced timestamped frames) and the sink that counts
//! them and records latencies, both on AF_PACKET sockets in the lab's namespaces.

use super::*;

const BENCH_ETHERTYPE: [u8; 2] = [0x88, 0xb5];
const BENCH_MAGIC: u32 = 0x7069_7361; // "pisa"

/// The generator, the sink and what they need to know about the lab.
pub(super) struct Ends {
    pub(super) gen: AfPacketPort,
    pub(super) sink: Option<AfPacketPort>,
    /// The switch-side interface the generator's frames arrive on (root namespace).
    pub(super) switch_in: String,
    pub(super) gen_burst: usize,
    pub(super) window: u64,
    /// Where the generator and the sink run (`None`: anywhere).
    pub(super) core: Option<core_affinity::CoreId>,
}

/// Pins the calling thread to `core`, if one is given.
fn pin(core: Option<core_affinity::CoreId>) {
    if let Some(c) = core {
        if !core_affinity::set_for_current(c) {
            tracing::debug!(core = c.id, "could not pin the load thread");
        }
    }
}

/// The kernel's receive counter of a root-namespace interface.
fn rx_packets(ifname: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{ifname}/statistics/rx_packets"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Waits until `received` has not moved for 300 ms (at most 20 s): every queue on the way
/// has drained.
fn wait_quiet(received: &AtomicU64) {
    let t = Instant::now();
    let mut last = received.load(Ordering::Relaxed);
    let mut since = Instant::now();
    while since.elapsed() < Duration::from_millis(300)
        && t.elapsed() < Duration::from_secs(20)
        && !interrupted()
    {
        std::thread::sleep(Duration::from_millis(50));
        let n = received.load(Ordering::Relaxed);
        if n != last {
            last = n;
            since = Instant::now();
        }
    }
}

/// A blast of `size`-byte frames for `seconds`, then `latency_pps` paced, timestamped frames
/// for one second. Timestamps come from `base` (same process, same monotonic clock).
pub(super) fn bench_once(
    ends: &mut Ends,
    size: usize,
    seconds: f64,
    latency_pps: u64,
) -> anyhow::Result<BenchFigures> {
    let base = Instant::now();
    let size = size.clamp(60, 1514);
    let mut template = vec![0u8; size];
    // h1 -> h2, the lab's addressing (p4/programs/l2l3.tables.yaml).
    template[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    template[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    template[12..14].copy_from_slice(&BENCH_ETHERTYPE);
    template[14..18].copy_from_slice(&BENCH_MAGIC.to_be_bytes());
    let stop = Arc::new(AtomicBool::new(false));
    let received = Arc::new(AtomicU64::new(0));
    let sink = ends
        .sink
        .take()
        .ok_or_else(|| anyhow!("the sink was lost"))?;
    // Sink thread: counts phase-0 frames, records phase-1 latencies.
    let core = ends.core;
    let sink_thread = {
        let stop = stop.clone();
        let received = received.clone();
        std::thread::spawn(move || {
            pin(core);
            let mut sink = sink;
            let mut hist = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
                .expect("valid histogram bounds");
            let mut counts = [0u64; 2];
            let mut b = FrameBatch::with_buffers(256, 2048);
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
    let load = Load {
        switch_in: ends.switch_in.as_str(),
        burst: ends.gen_burst,
        window: ends.window,
        received: &received,
    };
    let gen = &mut ends.gen;
    let phases = std::thread::scope(|sc| {
        sc.spawn(|| {
            pin(core);
            generate(gen, &load, &template, seconds, latency_pps, base)
        })
        .join()
    });
    wait_quiet(&received);
    stop.store(true, Ordering::Release);
    let (counts, hist, sink) = sink_thread
        .join()
        .map_err(|_| anyhow!("the sink thread panicked"))?;
    ends.sink = Some(sink);
    let g = phases.map_err(|_| anyhow!("the generator thread panicked"))??;
    let q = |p: f64| hist.value_at_quantile(p) as f64 / 1000.0;
    Ok(BenchFigures {
        offered_mpps: g.sent as f64 / g.elapsed / 1e6,
        at_switch_mpps: g.at_switch as f64 / g.elapsed / 1e6,
        mpps: g.in_window.min(counts[0]) as f64 / g.elapsed / 1e6,
        lat_us: [q(0.5), q(0.9), q(0.99), q(0.999)],
        lat_samples: hist.len(),
        lat_sent: g.lat_sent,
    })
}

/// What the generator saw.
struct GenResult {
    sent: u64,
    elapsed: f64,
    /// Frames the sink had counted when the sending window closed.
    in_window: u64,
    at_switch: u64,
    lat_sent: u64,
}

/// How the generator sends.
struct Load<'a> {
    switch_in: &'a str,
    burst: usize,
    window: u64,
    /// The sink's count of bench frames.
    received: &'a AtomicU64,
}

/// The generator's two phases: bursts of copies of `template` for `seconds`, then paced,
/// timestamped frames for one second (after everything of the first phase drained).
fn generate(
    gen: &mut AfPacketPort,
    load: &Load<'_>,
    template: &[u8],
    seconds: f64,
    latency_pps: u64,
    base: Instant,
) -> anyhow::Result<GenResult> {
    let (switch_in, received) = (load.switch_in, load.received);
    // Throughput phase: the kernel gets bursts of copies of one precomputed frame.
    let d = Duration::from_secs_f64(seconds.max(0.1));
    let received0 = received.load(Ordering::Relaxed);
    // Frames given up as lost (window mode), and when the sink last made progress.
    let mut lost = 0u64;
    let mut last_seen = received0;
    let mut progress = Instant::now();
    let at_switch0 = rx_packets(switch_in);
    let t0 = Instant::now();
    let mut sent = 0u64;
    while t0.elapsed() < d {
        check_interrupted()?;
        let mut want = load.burst;
        if load.window > 0 {
            let got = received.load(Ordering::Relaxed);
            if got != last_seen {
                last_seen = got;
                progress = Instant::now();
            }
            let in_flight = sent.saturating_sub(got - received0 + lost);
            if in_flight >= load.window {
                if progress.elapsed() >= Duration::from_millis(1) {
                    // Nothing arrived for 1 ms: what is still out is lost.
                    lost += in_flight;
                    progress = Instant::now();
                } else {
                    std::thread::sleep(Duration::from_micros(20));
                }
                continue;
            }
            want = want.min((load.window - in_flight) as usize);
        }
        sent += gen.send_copies(template, want)? as u64;
    }
    let elapsed = t0.elapsed().as_secs_f64();
    // Frames delivered within the sending window (not the backlog delivered afterwards).
    let in_window = received.load(Ordering::Relaxed);
    let at_switch = rx_packets(switch_in).saturating_sub(at_switch0);
    wait_quiet(received);
    // Latency phase: paced, one timestamped frame per send.
    let mut frame = template.to_vec();
    frame[18] = 1;
    let gap = Duration::from_secs_f64(1.0 / latency_pps.max(1) as f64);
    let mut batch = FrameBatch::new(1);
    let t1 = Instant::now();
    let mut next = t1;
    let mut lat_sent = 0u64;
    while t1.elapsed() < Duration::from_secs(1) {
        check_interrupted()?;
        let now = Instant::now();
        if now < next {
            // Sleep, never spin: the generator shares its core with pisa's I/O threads and the
            // sink, and a spinning generator would put its time slice into every latency.
            std::thread::sleep(next - now);
            continue;
        }
        next += gap;
        let ts = base.elapsed().as_nanos() as u64;
        frame[19..27].copy_from_slice(&ts.to_be_bytes());
        batch.push(&frame, Nanos::ZERO);
        lat_sent += gen.send_batch(&mut batch, Nanos::ZERO)? as u64;
    }
    Ok(GenResult {
        sent,
        elapsed,
        in_window,
        at_switch,
        lat_sent,
    })
}

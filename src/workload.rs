//! Benchmark workloads: a compiled program, a switch with its tables filled, and a set of
//! precomputed frames — built the same way for `pisa bench pipeline` and `cargo bench`.
//!
//! The programs are embedded in the binary so the benchmarks run from any directory.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use etherparse::PacketBuilder;
use p4::compile::{compile_str, CompileOptions};
use pipeline::api::PipeSel;
use pipeline::exec::EngineKind;
use pipeline::ir::{KeyMatch, Program, Target};
use pipeline::switch::{InFrame, OutFrame, Switch, SwitchConfig};

/// `p4/programs/l2l3.p4`, embedded.
pub const L2L3_P4: &str = include_str!("../p4/programs/l2l3.p4");
/// `p4/programs/wire.p4`, embedded.
pub const WIRE_P4: &str = include_str!("../p4/programs/wire.p4");
/// `p4/programs/fib.p4`, embedded.
pub const FIB_P4: &str = include_str!("../p4/programs/fib.p4");
/// The project's large program and its table file.
pub const SWITCH_P4: &str = include_str!("../p4/programs/switch.p4");
pub const SWITCH_TABLES: &str = include_str!("../p4/programs/switch.tables.yaml");

/// The router MAC of the l2l3 workload.
pub const ROUTER_MAC: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];

/// A switch ready to run and the frames to feed it (port, bytes).
pub struct Workload {
    pub name: String,
    pub switch: Switch,
    pub frames: Vec<(u16, Vec<u8>)>,
}

/// Compiles embedded P4 text for Tofino 1, turning diagnostics into an error.
pub fn compile(name: &str, text: &str) -> anyhow::Result<Arc<Program>> {
    let opts = CompileOptions {
        target: Target::Tofino1,
        ..CompileOptions::default()
    };
    compile_str(name, text, &opts)
        .map(|c| Arc::new(c.program))
        .map_err(|f| anyhow!("{name} does not compile:\n{}", f.render()))
}

fn mac(i: usize) -> [u8; 6] {
    [2, 0x10, 0, (i >> 16) as u8, (i >> 8) as u8, i as u8]
}

fn mac_value(m: [u8; 6]) -> u128 {
    m.iter().fold(0u128, |acc, b| (acc << 8) | *b as u128)
}

/// A 64-byte frame (60 bytes before the FCS the NIC would add): Ethernet + IPv4 + UDP + padding.
fn frame64(src: [u8; 6], dst: [u8; 6], sip: [u8; 4], dip: [u8; 4]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src, dst)
        .ipv4(sip, dip, 64)
        .udp(1234, 5678);
    let payload = [0u8; 18]; // 14 + 20 + 8 + 18 = 60
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, &payload)
        .expect("writing to a Vec cannot fail");
    out
}

/// l2l3.p4 with `macs` MAC entries, `routes` /24 routes over 64 next hops, a 16-rule ACL and the
/// flood group; `n_frames` frames, half switched to a known MAC, half routed to a known route.
/// Passes run on `engine`.
pub fn l2l3(
    macs: usize,
    routes: usize,
    n_frames: usize,
    engine: EngineKind,
) -> anyhow::Result<Workload> {
    let program = compile("l2l3.p4", L2L3_P4)?;
    let cfg = SwitchConfig::default().with_engine(engine);
    let mut sw = Switch::new(program, cfg).context("switch")?;
    check_engine(&sw, engine)?;
    let all = PipeSel::All;
    for i in 0..macs {
        sw.table_add(
            all,
            "SwitchIngress.mac_dst",
            &[("hdr.ethernet.dst_addr", KeyMatch::Exact(mac_value(mac(i))))],
            None,
            "set_port",
            &[("port", (i % 4) as u128)],
        )?;
    }
    sw.table_add(
        all,
        "SwitchIngress.router_mac",
        &[(
            "hdr.ethernet.dst_addr",
            KeyMatch::Exact(mac_value(ROUTER_MAC)),
        )],
        None,
        "NoAction",
        &[],
    )?;
    for nh in 1..=64u128 {
        sw.table_add(
            all,
            "SwitchIngress.nexthop",
            &[("ig_md.nexthop_id", KeyMatch::Exact(nh))],
            None,
            "forward_l3",
            &[("dmac", mac_value(mac(nh as usize))), ("port", nh % 4)],
        )?;
    }
    for i in 0..routes {
        let net = (10u128 << 24) | ((i as u128) << 8);
        sw.table_add(
            all,
            "SwitchIngress.ipv4_lpm",
            &[(
                "hdr.ipv4.dst_addr",
                KeyMatch::Lpm {
                    value: net,
                    prefix_len: 24,
                },
            )],
            None,
            "set_nexthop",
            &[("nexthop_id", (i % 64) as u128 + 1)],
        )?;
    }
    for r in 0..16u128 {
        // Deny TCP to 192.168.r.0/24 ports 6000..6100: never hit by the workload's UDP frames,
        // but every frame is looked up against all of them.
        sw.table_add(
            all,
            "SwitchIngress.acl",
            &[
                (
                    "ig_intr_md.ingress_port",
                    KeyMatch::Ternary { value: 0, mask: 0 },
                ),
                ("hdr.ipv4.src_addr", KeyMatch::Ternary { value: 0, mask: 0 }),
                (
                    "hdr.ipv4.dst_addr",
                    KeyMatch::Ternary {
                        value: (192 << 24) | (168 << 16) | (r << 8),
                        mask: 0xffff_ff00,
                    },
                ),
                (
                    "hdr.ipv4.protocol",
                    KeyMatch::Ternary {
                        value: 6,
                        mask: 0xff,
                    },
                ),
                ("hdr.l4.dst_port", KeyMatch::Range { lo: 6000, hi: 6100 }),
            ],
            Some(r as u32),
            "acl_deny",
            &[],
        )?;
    }
    for p in 0..4u128 {
        sw.table_add(
            all,
            "SwitchEgress.port_smac",
            &[("eg_intr_md.egress_port", KeyMatch::Exact(p))],
            None,
            "rewrite_smac",
            &[("smac", mac_value(ROUTER_MAC))],
        )?;
    }
    sw.mc_node_create(1, 0, &[0, 1, 2, 3], &[])?;
    sw.mc_group_create(1)?;
    sw.mc_group_add_node(1, 1, None)?;
    for p in 0..4u16 {
        sw.mc_prune_set(p, &[p])?;
    }
    let mut frames = Vec::with_capacity(n_frames);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for k in 0..n_frames {
        // xorshift: spread lookups over the tables without a dependency.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let port = (k % 4) as u16;
        let src = mac(100_000 + port as usize);
        let sip = [10, 200, 0, port as u8 + 1];
        let f = if k % 2 == 0 {
            let i = (x as usize) % macs.max(1);
            frame64(src, mac(i), sip, [10, 201, 0, 1])
        } else {
            let i = (x as usize) % routes.max(1);
            frame64(src, ROUTER_MAC, sip, [10, (i >> 8) as u8, i as u8, 7])
        };
        frames.push((port, f));
    }
    Ok(Workload {
        name: format!("l2l3.p4 ({macs} MACs, {routes} routes)"),
        switch: sw,
        frames,
    })
}

/// fib.p4 with four VRFs (input port p in VRF p + 1), `routes` /24 routes spread over them
/// round robin and 64 next hops; `n_frames` frames, each to a route of its input port's VRF.
/// Untraced passes run on `engine`.
pub fn fib(routes: usize, n_frames: usize, engine: EngineKind) -> anyhow::Result<Workload> {
    let program = compile("fib.p4", FIB_P4)?;
    let cfg = SwitchConfig::default().with_engine(engine);
    let mut sw = Switch::new(program, cfg).context("switch")?;
    check_engine(&sw, engine)?;
    let all = PipeSel::All;
    for p in 0..4u128 {
        sw.table_add(
            all,
            "FibIngress.vrf",
            &[("ig_intr_md.ingress_port", KeyMatch::Exact(p))],
            None,
            "set_vrf",
            &[("vrf_id", p + 1)],
        )?;
    }
    let routes = routes.max(4);
    for i in 0..routes {
        let j = (i / 4) as u128;
        sw.table_add(
            all,
            "FibIngress.routing",
            &[
                ("ig_md.vrf_id", KeyMatch::Exact((i % 4) as u128 + 1)),
                (
                    "hdr.ipv4.dst_addr",
                    KeyMatch::Lpm {
                        value: (10u128 << 24) | (j << 8),
                        prefix_len: 24,
                    },
                ),
            ],
            None,
            "set_nexthop",
            &[("nexthop_id", (i % 64) as u128 + 1)],
        )?;
    }
    for nh in 1..=64u128 {
        sw.table_add(
            all,
            "FibIngress.nexthop",
            &[("ig_md.nexthop_id", KeyMatch::Exact(nh))],
            None,
            "forward",
            &[
                ("dmac", mac_value(mac(nh as usize))),
                ("smac", mac_value(ROUTER_MAC)),
                ("port", nh % 4),
            ],
        )?;
    }
    let mut frames = Vec::with_capacity(n_frames);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for k in 0..n_frames {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let port = k % 4;
        // A route of this port's VRF: i = 4 j + port < routes.
        let j = (x as usize) % ((routes - port).div_ceil(4));
        let src = mac(100_000 + port);
        let f = frame64(
            src,
            ROUTER_MAC,
            [10, 200, 0, port as u8 + 1],
            [10, (j >> 8) as u8, j as u8, 7],
        );
        frames.push((port as u16, f));
    }
    Ok(Workload {
        name: format!("fib.p4 (4 VRFs, {routes} routes)"),
        switch: sw,
        frames,
    })
}

/// A switch asked to run `engine` runs it (native code that failed to generate is an error
/// here, not a quiet fallback that would mislabel a measurement).
fn check_engine(sw: &Switch, engine: EngineKind) -> anyhow::Result<()> {
    if sw.engine() != engine {
        return Err(anyhow!(
            "{engine} engine unavailable: {}",
            sw.engine_error().unwrap_or("unknown reason")
        ));
    }
    Ok(())
}

/// wire.p4 forwarding port p to port p ^ 1, egress bypassed: the baseline. Passes
/// run on `engine`.
pub fn wire(n_frames: usize, engine: EngineKind) -> anyhow::Result<Workload> {
    let program = compile("wire.p4", WIRE_P4)?;
    let cfg = SwitchConfig::default().with_engine(engine);
    let mut sw = Switch::new(program, cfg).context("switch")?;
    check_engine(&sw, engine)?;
    for p in 0..4u128 {
        sw.table_add(
            PipeSel::All,
            "WireIngress.port_fwd",
            &[("ig_intr_md.ingress_port", KeyMatch::Exact(p))],
            None,
            "send",
            &[("port", p ^ 1)],
        )?;
    }
    let frames = (0..n_frames)
        .map(|k| {
            let port = (k % 4) as u16;
            (
                port,
                frame64(mac(port as usize), mac(9), [10, 0, 0, 1], [10, 0, 0, 2]),
            )
        })
        .collect();
    Ok(Workload {
        name: "wire.p4".to_string(),
        switch: sw,
        frames,
    })
}

/// switch.p4 with `switch.tables.yaml`'s state; from host A (port 0, BD 10) a mix of four
/// kinds of frame: bridged to B, routed to C (VLAN tag pushed on egress), routed by ECMP to
/// 172.16.0.0/16 (spread over the selector's members) and routed into the VXLAN tunnel
/// (encapsulated on egress). Passes run on `engine`.
pub fn switch_p4(n_frames: usize, engine: EngineKind) -> anyhow::Result<Workload> {
    let program = compile("switch.p4", SWITCH_P4)?;
    let cfg = SwitchConfig::default().with_engine(engine);
    let mut sw = Switch::new(program, cfg).context("switch")?;
    check_engine(&sw, engine)?;
    let file = control::tables_file::from_yaml(SWITCH_TABLES).context("switch.tables.yaml")?;
    control::tables_file::apply(&mut sw, &file).context("switch.tables.yaml")?;
    let a = [0, 0, 0, 0, 0x0a, 0x01];
    let b = [0, 0, 0, 0, 0x0a, 0x02];
    let sip = [10, 10, 0, 1];
    let frames = (0..n_frames)
        .map(|k| {
            let i = (k / 4) as u8;
            let f = match k % 4 {
                0 => frame64(a, b, sip, [10, 10, 0, 2]),
                1 => frame64(a, ROUTER_MAC, sip, [10, 20, 0, 3]),
                2 => frame64(a, ROUTER_MAC, sip, [172, 16, i, i.wrapping_mul(7)]),
                _ => frame64(a, ROUTER_MAC, sip, [192, 168, 9, i]),
            };
            (0u16, f)
        })
        .collect();
    Ok(Workload {
        name: "switch.p4 (L2, L3, ECMP, VXLAN)".to_string(),
        switch: sw,
        frames,
    })
}

/// One timed run.
#[derive(Debug, Clone, Copy)]
pub struct Measurement {
    pub packets: u64,
    pub out_frames: u64,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
    /// CPU time this thread spent in the run: the per-core figure, robust against other
    /// processes taking turns on the same core.
    pub cpu: Duration,
    /// Time-stamp-counter ticks over the run (0 where the CPU has no readable TSC).
    pub tsc: u64,
}

impl Measurement {
    /// Millions of packets per second of this thread's CPU time (per core).
    pub fn mpps(&self) -> f64 {
        self.packets as f64 / self.cpu.as_secs_f64().max(1e-9) / 1e6
    }

    /// Time-stamp-counter ticks per packet (wall clock at the TSC's fixed rate, so other
    /// processes' turns on the core count too; `None` without a TSC).
    pub fn tsc_per_packet(&self) -> Option<f64> {
        (self.tsc > 0).then(|| self.tsc as f64 / self.packets.max(1) as f64)
    }

    /// Millions of packets per second of wall-clock time.
    pub fn wall_mpps(&self) -> f64 {
        self.packets as f64 / self.elapsed.as_secs_f64().max(1e-9) / 1e6
    }
}

/// CPU time consumed by the calling thread so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec owned by this frame, and
    // CLOCK_THREAD_CPUTIME_ID is supported on every Linux this runs on.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The time-stamp counter (0 where there is none to read).
pub fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64; it only reads a counter.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        0
    }
}

/// Feeds the workload's frames in batches of `batch` on this thread for about `duration`.
/// Output buffers are handed back to the switch, as a port loop would after sending them.
pub fn measure(w: &mut Workload, batch: usize, duration: Duration) -> Measurement {
    let batch = batch.max(1);
    let mut out: Vec<OutFrame> = Vec::with_capacity(batch * 4);
    let mut inputs: Vec<InFrame<'_>> = Vec::with_capacity(batch);
    let mut packets = 0u64;
    let mut out_frames = 0u64;
    let mut ts = 0u64;
    let start = Instant::now();
    let cpu_start = thread_cpu_time();
    let tsc_start = tsc();
    let mut i = 0usize;
    loop {
        for _ in 0..64 {
            inputs.clear();
            for _ in 0..batch {
                let (port, bytes) = &w.frames[i];
                i = (i + 1) % w.frames.len();
                ts += 100;
                inputs.push(InFrame {
                    port: *port,
                    bytes,
                    ts,
                });
            }
            w.switch.process_batch(&inputs, &mut out);
            packets += batch as u64;
            out_frames += out.len() as u64;
            for f in out.drain(..) {
                w.switch.recycle(f.bytes);
            }
        }
        let _ = w.switch.drain_drops();
        if start.elapsed() >= duration {
            break;
        }
    }
    Measurement {
        packets,
        out_frames,
        elapsed: start.elapsed(),
        cpu: thread_cpu_time().saturating_sub(cpu_start),
        tsc: tsc().wrapping_sub(tsc_start),
    }
}

/// Feeds exactly `n` of the workload's frames (cycling through them) in batches of `batch`,
/// untimed; returns the number of frames out. For counting instructions per packet.
pub fn feed(w: &mut Workload, batch: usize, n: u64) -> u64 {
    let batch = batch.max(1);
    let mut out: Vec<OutFrame> = Vec::with_capacity(batch * 4);
    let mut inputs: Vec<InFrame<'_>> = Vec::with_capacity(batch);
    let (mut left, mut i, mut out_frames) = (n, 0usize, 0u64);
    while left > 0 {
        inputs.clear();
        for _ in 0..batch.min(left as usize) {
            let (port, bytes) = &w.frames[i];
            i = (i + 1) % w.frames.len();
            inputs.push(InFrame {
                port: *port,
                bytes,
                ts: (n - left + inputs.len() as u64 + 1) * 100,
            });
        }
        left -= inputs.len() as u64;
        w.switch.process_batch(&inputs, &mut out);
        out_frames += out.len() as u64;
        for f in out.drain(..) {
            w.switch.recycle(f.bytes);
        }
        let _ = w.switch.drain_drops();
    }
    out_frames
}

/// One pipeline per thread: `threads` threads each build their own workload with `make` (a
/// switch of its own, as one pipe per core would have), pinned to a core each when `pin` (the
/// last cores first, as `pisa run` pins pipe threads), start together and run
/// [`measure`] for `duration`. Returns each thread's measurement, in thread order.
pub fn measure_parallel<F>(
    make: F,
    threads: usize,
    batch: usize,
    duration: Duration,
    pin: bool,
) -> anyhow::Result<Vec<Measurement>>
where
    F: Fn() -> anyhow::Result<Workload> + Sync,
{
    let threads = threads.max(1);
    let cores = if pin {
        core_affinity::get_core_ids().unwrap_or_default()
    } else {
        Vec::new()
    };
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (make, barrier, cores) = (&make, &barrier, &cores);
                s.spawn(move || -> anyhow::Result<Measurement> {
                    if let Some(c) = cores.len().checked_sub(1 + i % cores.len().max(1)) {
                        core_affinity::set_for_current(cores[c]);
                    }
                    let built = make();
                    // Every thread reaches the barrier, built or not, so none waits forever.
                    barrier.wait();
                    let mut w = built?;
                    let _ = measure(&mut w, batch, duration / 4);
                    Ok(measure(&mut w, batch, duration))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| anyhow!("a bench thread panicked"))?)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `feed` puts exactly the frames asked for through (a last batch cut short too), cycling
    /// through the workload's frames: wire.p4 forwards every one.
    #[test]
    fn feed_runs_exactly_n_frames() {
        let mut w = wire(5, EngineKind::Flat).unwrap();
        for n in [0u64, 1, 7, 8, 21] {
            let before = w.switch.stats().rx_packets;
            assert_eq!(feed(&mut w, 8, n), n);
            assert_eq!(w.switch.stats().rx_packets - before, n);
        }
    }

    /// Every thread builds its own switch, forwards, and is measured; a failing build is an
    /// error, not a hang at the start barrier.
    #[test]
    fn parallel_threads_each_measure_their_own_switch() {
        let d = Duration::from_millis(20);
        let make = || wire(64, EngineKind::Flat);
        let ms = measure_parallel(make, 2, 8, d, false).unwrap();
        assert_eq!(ms.len(), 2);
        for m in &ms {
            assert!(m.packets > 0 && m.out_frames == m.packets, "{m:?}");
        }
        let fails = || -> anyhow::Result<Workload> { Err(anyhow!("no switch")) };
        let e = measure_parallel(fails, 2, 8, d, false).unwrap_err();
        assert!(e.to_string().contains("no switch"), "{e}");
    }
}

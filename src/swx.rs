//! The SWX side of `pisa bench pipeline --against swx` (cargo feature `dpdk`; docs/swx.md):
//! DPDK's SWX pipeline running `bench/swx/l2l3.spec` in this process, its tables filled with
//! the entries of the pisa workload it is compared with (read back from pisa's switch and
//! written in DPDK's entry syntax), fed the same frames, checked frame by frame against pisa and
//! measured like [`workload::measure`].

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use dataplane::swx::{SwxMode, SwxPipeline};
use pipeline::api::PipeSel;
use pipeline::ir::KeyMatch;
use pipeline::switch::InFrame;

use crate::workload::{self, Measurement, Workload};

/// `bench/swx/l2l3.spec`, embedded.
pub const L2L3_SPEC: &str = include_str!("../bench/swx/l2l3.spec");
/// `bench/swx/fib.spec`, embedded.
pub const FIB_SPEC: &str = include_str!("../bench/swx/fib.spec");

/// Input ports of the SWX pipeline (the workload's 0..3); output port 4 is its drop port.
const PORTS: usize = 4;

/// l2l3.p4's tables as the spec names them, with each key field's width in bits.
const L2L3_TABLES: &[(&str, &str, &[u32])] = &[
    ("SwitchIngress.mac_dst", "mac_dst", &[48]),
    ("SwitchIngress.router_mac", "router_mac", &[48]),
    ("SwitchIngress.ipv4_lpm", "ipv4_lpm", &[32]),
    ("SwitchIngress.nexthop", "nexthop", &[32]),
    ("SwitchIngress.acl", "acl", &[32, 32, 32, 8, 16]),
    ("SwitchEgress.port_smac", "port_smac", &[32]),
];

/// fib.p4's tables as fib.spec names them, with each key field's width in bits.
const FIB_TABLES: &[(&str, &str, &[u32])] = &[
    ("FibIngress.vrf", "vrf", &[32]),
    ("FibIngress.routing", "routing", &[32, 32]),
    ("FibIngress.nexthop", "nexthop", &[32]),
];

/// An SWX pipeline doing the work of a pisa workload, fed the same frames.
pub struct SwxWorkload {
    pub name: String,
    pub swx: SwxPipeline,
    /// The workload's frames per input port, handed out in a loop by [`SwxWorkload::refeed`].
    frames: Vec<Vec<Vec<u8>>>,
}

impl SwxWorkload {
    /// `compiled` or `interpreted`.
    pub fn mode(&self) -> &SwxMode {
        self.swx.mode()
    }

    /// Hand out the workload's frames again, in a loop.
    pub fn refeed(&mut self) {
        self.swx.feed(self.frames.clone(), true);
    }
}

fn mask(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// `lo..=hi` over `bits` bits as (value, mask) prefixes, fewest first-to-last.
fn range_prefixes(lo: u128, hi: u128, bits: u32) -> Vec<(u128, u128)> {
    let mut out = Vec::new();
    let mut lo = lo;
    while lo <= hi {
        // The largest aligned block starting at lo that stays within hi.
        let mut size = 0u32;
        while size < bits {
            let next = size + 1;
            let block = 1u128 << next;
            if !lo.is_multiple_of(block) || lo + block - 1 > hi {
                break;
            }
            size = next;
        }
        out.push((lo, mask(bits) & !mask(size)));
        let step = 1u128 << size;
        if lo.checked_add(step).is_none() {
            break;
        }
        lo += step;
    }
    out
}

/// One pisa entry as DPDK entry lines (more than one when a range key expands).
fn entry_lines(e: &pipeline::api::TableEntry, widths: &[u32]) -> anyhow::Result<Vec<String>> {
    let mut keys: Vec<Vec<String>> = vec![Vec::new()];
    for ((name, m), &w) in e.keys.iter().zip(widths) {
        let alts: Vec<String> = match m {
            KeyMatch::Exact(v) => vec![format!("0x{v:x}")],
            KeyMatch::Ternary { value, mask } => vec![format!("0x{value:x}/0x{mask:x}")],
            KeyMatch::Lpm { value, prefix_len } => {
                let m = mask(w) & !mask(w.saturating_sub(*prefix_len as u32));
                vec![format!("0x{value:x}/0x{m:x}")]
            }
            KeyMatch::Range { lo, hi } => range_prefixes(*lo, *hi, w)
                .into_iter()
                .map(|(v, m)| format!("0x{v:x}/0x{m:x}"))
                .collect(),
        };
        if alts.is_empty() {
            bail!("key {name}: empty range");
        }
        keys = keys
            .into_iter()
            .flat_map(|k| {
                alts.iter().map(move |a| {
                    let mut k = k.clone();
                    k.push(a.clone());
                    k
                })
            })
            .collect();
    }
    let action = e.action.rsplit('.').next().unwrap_or(&e.action);
    let mut tail = format!("action {action}");
    for (p, v) in &e.params {
        tail.push_str(&format!(" {p} 0x{v:x}"));
    }
    let prio = e
        .priority
        .map(|p| format!(" priority {p}"))
        .unwrap_or_default();
    Ok(keys
        .into_iter()
        .map(|k| format!("match {}{prio} {tail}", k.join(" ")))
        .collect())
}

/// `spec` as pipeline `name` with the entries of `w`'s `tables` (pisa name, SWX name, key
/// widths), fed `w`'s frames in a loop; compiled when it can be unless `interpreted`.
fn build(
    w: &Workload,
    name: &str,
    spec: &str,
    tables: &[(&str, &str, &[u32])],
    interpreted: bool,
) -> anyhow::Result<SwxWorkload> {
    let mut swx = SwxPipeline::new(name, spec, PORTS, PORTS + 1, interpreted)
        .with_context(|| format!("SWX {name}"))?;
    for (pisa_name, swx_name, widths) in tables {
        let entries = w.switch.table_entries(PipeSel::All, pisa_name)?;
        let mut lines = Vec::with_capacity(entries.len());
        for e in &entries {
            lines.extend(entry_lines(e, widths).with_context(|| format!("{pisa_name}: {e:?}"))?);
        }
        swx.add_entries(swx_name, &lines)?;
    }
    let mut by_port = vec![Vec::new(); PORTS];
    for (port, f) in &w.frames {
        by_port
            .get_mut(*port as usize)
            .ok_or_else(|| anyhow!("frame on port {port}: the SWX pipeline has {PORTS}"))?
            .push(f.clone());
    }
    let mut s = SwxWorkload {
        name: format!("{name}.spec (SWX, {})", swx.mode().label()),
        swx,
        frames: by_port,
    };
    s.refeed();
    Ok(s)
}

/// `bench/swx/l2l3.spec` with the tables of `w` (an l2l3 workload), fed `w`'s frames in a loop;
/// compiled when it can be unless `interpreted`.
pub fn l2l3(w: &Workload, interpreted: bool) -> anyhow::Result<SwxWorkload> {
    let mut s = build(w, "l2l3", L2L3_SPEC, L2L3_TABLES, interpreted)?;
    // Flooding: mirror session N sends to port N (the spec's stand-in for multicast group 1).
    for p in 0..PORTS as u32 {
        s.swx.mirror_session(p, p)?;
    }
    Ok(s)
}

/// `bench/swx/fib.spec` with the tables of `w` (a fib workload), as [`l2l3`].
pub fn fib(w: &Workload, interpreted: bool) -> anyhow::Result<SwxWorkload> {
    build(w, "fib", FIB_SPEC, FIB_TABLES, interpreted)
}

/// Frames the check sends through both beside the workload's sample: an unknown destination
/// MAC (flooded), TTL 1 and a bad IPv4 checksum to the router MAC (dropped), a non-IPv4 frame.
pub fn edge_frames(sample: &[(u16, Vec<u8>)]) -> Vec<(u16, Vec<u8>)> {
    let mut out = Vec::new();
    let routed = sample.iter().find(|(_, f)| f[..6] == workload::ROUTER_MAC);
    if let Some((p, f)) = sample.first() {
        let mut unknown = f.clone();
        unknown[..6].copy_from_slice(&[2, 0x77, 0, 0, 0, 1]);
        out.push((*p, unknown));
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        out.push((*p, arp));
    }
    if let Some((p, f)) = routed {
        let mut ttl1 = f.clone();
        ttl1[22] = 1;
        let mut bad = f.clone();
        bad[24] ^= 0xff;
        // TTL 1 with a right checksum: recompute over the IPv4 header.
        ttl1[24..26].copy_from_slice(&[0, 0]);
        let sum = ttl1[14..34]
            .chunks(2)
            .fold(0u32, |s, w| s + u32::from(u16::from_be_bytes([w[0], w[1]])));
        let sum = (sum & 0xffff) + (sum >> 16);
        let ck = !((sum & 0xffff) + (sum >> 16)) as u16;
        ttl1[24..26].copy_from_slice(&ck.to_be_bytes());
        out.push((*p, ttl1));
        out.push((*p, bad));
    }
    out
}

/// Sends `frames` one at a time through pisa and through SWX; an error names the first frame
/// whose outputs (ports and bytes, in any order) differ. SWX is fed its workload again after.
pub fn check_same(
    w: &mut Workload,
    s: &mut SwxWorkload,
    frames: &[(u16, Vec<u8>)],
) -> anyhow::Result<()> {
    let mut out = Vec::new();
    for (i, (port, f)) in frames.iter().enumerate() {
        out.clear();
        w.switch.process_batch(
            &[InFrame {
                port: *port,
                bytes: f,
                ts: 0,
            }],
            &mut out,
        );
        let mut pisa: Vec<(u32, Vec<u8>)> =
            out.drain(..).map(|o| (o.port as u32, o.bytes)).collect();
        let _ = w.switch.drain_drops();
        let mut q = vec![Vec::new(); PORTS];
        q[*port as usize % PORTS].push(f.clone());
        s.swx.feed(q, false);
        s.swx.capture(true);
        s.swx.run(4096);
        let mut swx: Vec<(u32, Vec<u8>)> = s
            .swx
            .take_captured()
            .into_iter()
            .filter(|(p, _)| *p < PORTS as u32)
            .collect();
        s.swx.capture(false);
        pisa.sort();
        swx.sort();
        if pisa != swx {
            bail!(
                "SWX and pisa disagree on frame {i} (in on port {port}, {} bytes):\n  pisa: {}\n  SWX:  {}",
                f.len(),
                show(&pisa),
                show(&swx)
            );
        }
    }
    s.refeed();
    Ok(())
}

fn show(v: &[(u32, Vec<u8>)]) -> String {
    if v.is_empty() {
        return "dropped".into();
    }
    v.iter()
        .map(|(p, b)| {
            format!(
                "port {p}: {}",
                b.iter().map(|x| format!("{x:02x}")).collect::<String>()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Runs the SWX pipeline on its looping frames for about `duration`; per-core rate as
/// [`workload::measure`] counts it (packets received, this thread's CPU time, TSC ticks).
pub fn measure(s: &mut SwxWorkload, duration: Duration) -> Measurement {
    let rx0 = s.swx.rx_packets();
    let tx0: u64 = s.swx.tx_packets()[..PORTS].iter().sum();
    let start = Instant::now();
    let cpu_start = workload::thread_cpu_time();
    let tsc_start = workload::tsc();
    loop {
        for _ in 0..64 {
            s.swx.run(1024);
        }
        if start.elapsed() >= duration {
            break;
        }
    }
    Measurement {
        packets: s.swx.rx_packets() - rx0,
        out_frames: s.swx.tx_packets()[..PORTS].iter().sum::<u64>() - tx0,
        elapsed: start.elapsed(),
        cpu: workload::thread_cpu_time().saturating_sub(cpu_start),
        tsc: workload::tsc().wrapping_sub(tsc_start),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_become_prefixes_that_cover_exactly_the_range() {
        for (lo, hi) in [(6000u128, 6100u128), (0, 65535), (5, 5), (1, 14)] {
            let ps = range_prefixes(lo, hi, 16);
            for x in 0..65536u128 {
                let hit = ps.iter().any(|(v, m)| x & m == *v);
                assert_eq!(hit, (lo..=hi).contains(&x), "{x} in {lo}..={hi}: {ps:?}");
            }
        }
        assert_eq!(range_prefixes(0, 65535, 16), vec![(0, 0)]);
    }
}

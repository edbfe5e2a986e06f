//! The packet path does not allocate in steady state: after a warm-up, unicast, multicast,
//! routed and dropped packets go through the switch without a single heap allocation (output
//! buffers are recycled through `Switch::recycle`), on the native engine (its register action
//! generated in line) and on the flat one.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use common::*;
use pipeline::api::PipeSel;
use pipeline::exec::EngineKind;
use pipeline::ir::{KeyMatch, Value};
use pipeline::switch::{InFrame, Switch, SwitchConfig};

struct Counting;

thread_local! {
    /// Counting is switched on per thread, so allocations the test harness makes on its other
    /// threads while this test runs are not counted.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

fn set_counting(on: bool) {
    COUNTING.with(|c| c.set(on));
}
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every method forwards to the system allocator unchanged; the counter is only a side
// effect and never affects the returned memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Both untraced engines, one after the other (the allocation counter is process-wide).
#[test]
fn steady_state_packet_path_does_not_allocate() {
    for engine in [EngineKind::default(), EngineKind::Flat] {
        packet_path_does_not_allocate(engine);
    }
}

fn packet_path_does_not_allocate(engine: EngineKind) {
    let (prog, _) = l2_program(Options::default());
    let mut sw = Switch::new(prog, SwitchConfig::new(1).with_engine(engine)).unwrap();
    assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
    if engine == EngineKind::Native {
        // The port counter's RegisterAction is generated in line (what is left to the flat
        // engine is the deparser's mirror, resubmit and digest requests).
        let kinds = sw.native_fallback_kinds();
        assert!(!kinds.iter().any(|k| k.0.contains("Register")), "{kinds:?}");
    }
    let dst = |m: u64| [("hdr.ethernet.dst_addr", KeyMatch::Exact(m as Value))];
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xa),
        None,
        "set_port",
        &[("port", 2)],
    )
    .unwrap();
    sw.table_add(PipeSel::All, "forward", &dst(0xd), None, "drop", &[])
        .unwrap();
    sw.table_add(
        PipeSel::All,
        "forward",
        &dst(0xb),
        None,
        "set_mcast",
        &[("grp", 1), ("rid", 1), ("l1_xid", 0), ("l2_xid", 0)],
    )
    .unwrap();
    sw.mc_group_create(1).unwrap();
    sw.mc_node_create(1, 1, &[3, 4, 5], &[]).unwrap();
    sw.mc_group_add_node(1, 1, None).unwrap();
    sw.table_add(
        PipeSel::All,
        "ipv4_lpm",
        &[(
            "hdr.ipv4.dst_addr",
            KeyMatch::Lpm {
                value: 0x0a00_0000,
                prefix_len: 8,
            },
        )],
        None,
        "route",
        &[("port", 6), ("dmac", 0x66)],
    )
    .unwrap();
    // A ternary ACL entry: the IPv4 frame hits it, the others miss (on the native engine the
    // TCAM search of a key packed in generated code).
    let acl_key = [
        (
            "hdr.ethernet.src_addr",
            KeyMatch::Ternary {
                value: 0x0200_0000_0001,
                mask: 0xffff_ffff_ffff,
            },
        ),
        (
            "hdr.ethernet.ether_type",
            KeyMatch::Ternary {
                value: 0x0800,
                mask: 0xffff,
            },
        ),
    ];
    sw.table_add(PipeSel::All, "acl", &acl_key, Some(1), "drop", &[])
        .unwrap();
    let frames = [
        eth_frame(0xa, 0x0200_0000_0001, 0x9000),
        eth_frame(0xb, 0x0200_0000_0001, 0x9000),
        eth_frame(0xd, 0x0200_0000_0001, 0x9000),
        ipv4_frame(0xa, 0x0200_0000_0001, 0x0b00_0001, 0x0a01_0203, 64),
    ];
    let mut out = Vec::with_capacity(64);
    let run = |sw: &mut Switch, out: &mut Vec<_>| {
        for (i, f) in frames.iter().enumerate() {
            sw.process_batch(
                &[InFrame {
                    port: 1,
                    bytes: f,
                    ts: i as u64,
                }],
                out,
            );
            for o in out.drain(..) {
                let o: pipeline::switch::OutFrame = o;
                sw.recycle(o.bytes);
            }
        }
        sw.drain_drops().len()
    };
    for _ in 0..50 {
        run(&mut sw, &mut out);
    }
    // The counter works: one allocation is seen.
    set_counting(true);
    let probe = std::hint::black_box(Vec::<u8>::with_capacity(16));
    set_counting(false);
    drop(probe);
    assert_eq!(ALLOCS.swap(0, Ordering::Relaxed), 1);
    // Drop log draining allocates its result: count only the packet path.
    let mut dropped = 0;
    for _ in 0..100 {
        set_counting(true);
        for (i, f) in frames.iter().enumerate() {
            sw.process_batch(
                &[InFrame {
                    port: 1,
                    bytes: f,
                    ts: i as u64,
                }],
                &mut out,
            );
            for o in out.drain(..) {
                sw.recycle(o.bytes);
            }
        }
        set_counting(false);
        dropped += sw.drain_drops().len();
    }
    assert_eq!(
        dropped, 200,
        "two drops per round (the forward table's drop, the ACL's)"
    );
    assert_eq!(
        ALLOCS.load(Ordering::Relaxed),
        0,
        "allocations on the packet path ({engine} engine)"
    );
    assert!(sw.stats().tx_packets >= 150 * 4);
    let (hits, misses) = sw.table_hit_miss(PipeSel::All, "acl").unwrap();
    assert!(
        hits >= 150 && misses >= 150,
        "ACL {hits} hits, {misses} misses"
    );
}

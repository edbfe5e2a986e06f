//! Tofino 2 ghost threads (issue 11, section 2): the traffic manager's queue-depth updates run
//! the ghost control, which writes them into a register the ingress control reads
//! (`tests/ghost/qdepth.p4`); what ingress reads tracks the queue on every engine. Refused on
//! Tofino 1; externs bf-p4c allows in a ghost control run there.

mod common;

use std::sync::Arc;

use p4::compile::{CompileFailure, Compiled};
use pipeline::exec::EngineKind;
use pipeline::ir::Target;
use pipeline::switch::{InFrame, OutFrame, PortConfig, Switch, SwitchConfig, DEFAULT_QUEUE};
use pipeline::tm::queue::QueueConfig;
use pipeline::trace::TraceEvent;

fn try_compile(name: &str, target: Target, defines: &[&str]) -> Result<Compiled, CompileFailure> {
    common::compile_test_program("ghost", name, target, defines)
}

/// A switch running qdepth.p4 (compiled with `defines`) on `engine`, port 2 (attached)
/// sending at 1 Gbit/s.
fn switch_with(engine: EngineKind, defines: &[&str]) -> Switch {
    let c = try_compile("qdepth.p4", Target::Tofino2, defines)
        .unwrap_or_else(|f| panic!("qdepth.p4 does not compile:\n{}", f.render()));
    let mut cfg = SwitchConfig::new(1).with_engine(engine);
    let queue = QueueConfig {
        rate_bps: Some(1_000_000_000),
        ..DEFAULT_QUEUE
    };
    // Port 2 is a front-panel port (on Tofino 2 ports 0–7 loop back unless attached).
    cfg.ports.insert(
        2,
        PortConfig {
            loopback: Some(false),
            queue: Some(queue),
            ..PortConfig::default()
        },
    );
    let sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
    assert_eq!(sw.engine_error(), None);
    sw
}

fn switch(engine: EngineKind) -> Switch {
    switch_with(engine, &[])
}

/// A 1000-byte frame: Ethernet, a zeroed probe header, padding.
fn frame() -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x88, 0xb5];
    f.resize(1000, 0);
    f
}

/// The probe header's (seen, enq, ping_pong) of a frame that left.
fn probe(o: &OutFrame) -> (u32, u32, u32) {
    let w = |k: usize| u32::from_be_bytes(o.bytes[14 + 4 * k..18 + 4 * k].try_into().unwrap());
    (w(0), w(1), w(2))
}

fn send(sw: &mut Switch, ts: u64) -> (u32, u32, u32) {
    let f = frame();
    let mut out = Vec::new();
    sw.process_batch(
        &[InFrame {
            port: 1,
            bytes: &f,
            ts,
        }],
        &mut out,
    );
    assert_eq!(out.len(), 1, "one frame out at {ts}");
    assert_eq!(out[0].port, 2);
    probe(&out[0])
}

#[test]
fn ingress_reads_the_depth_the_ghost_thread_wrote() {
    let runs = [
        (EngineKind::Tree, &[][..]),
        (EngineKind::Flat, &[]),
        (EngineKind::default(), &[]),
        // The update through a gateway and a table of the ghost control.
        (EngineKind::Tree, &["GHOST_TABLE"]),
        (EngineKind::default(), &["GHOST_TABLE"]),
    ];
    for (engine, defines) in runs {
        let mut sw = switch_with(engine, defines);
        // A burst: ten frames 1 µs apart into a port that needs 8 µs per frame.
        let mut seen = Vec::new();
        for k in 0..10u64 {
            let (ig, enq, pp) = send(&mut sw, 1_000_000 + k * 1_000);
            // What ingress read is the queue's depth when the packet arrived: the depth the
            // egress pipeline sees as enq_qdepth.
            assert_eq!(ig, enq, "{engine}: packet {k}");
            assert!(pp <= 1);
            seen.push(ig);
        }
        assert_eq!(
            seen[0], 0,
            "{engine}: the first packet finds the queue empty"
        );
        // Each later packet finds the backlog grown by 7 µs of sending (875 bytes ≈ 5 of
        // Tofino 2's 176-byte cells, bf-drivers `tm_tof2.h` `BF_TM_TOF2_CELL_SIZE`).
        for k in 1..10 {
            assert!(seen[k] > seen[k - 1], "{engine}: depths {seen:?}");
        }
        assert!(seen[9] >= 44, "{engine}: depths {seen:?}");
        // Long after the burst the queue has drained, and the ghost thread said so before the
        // next packet's ingress ran.
        let (ig, enq, _) = send(&mut sw, 1_000_000_000);
        assert_eq!((ig, enq), (0, 0), "{engine}");
    }
}

#[test]
fn queue_updates_are_traced() {
    let mut sw = switch(EngineKind::default());
    let f = frame();
    let (_, t1) = sw.trace(InFrame {
        port: 1,
        bytes: &f,
        ts: 1_000,
    });
    let (_, t2) = sw.trace(InFrame {
        port: 1,
        bytes: &f,
        ts: 2_000,
    });
    let ghosts = |t: &pipeline::trace::Trace| -> Vec<(u16, u32)> {
        t.events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::Ghost { qid, qlength, .. } => Some((*qid, *qlength)),
                _ => None,
            })
            .collect()
    };
    // The first packet's enqueue: 1000 bytes = 6 cells of 176 bytes (Tofino 2's, bf-drivers
    // `tm_tof2.h` `BF_TM_TOF2_CELL_SIZE`) on port 2 (qid 2 << 4).
    assert_eq!(ghosts(&t1), vec![(32, 6)]);
    // The second packet: the drain since (1 µs = 125 bytes sent: 875 bytes, 5 cells) before its
    // ingress, then its own enqueue (1875 bytes, 11 cells).
    assert_eq!(ghosts(&t2), vec![(32, 5), (32, 11)]);
    let text = t2.to_string();
    assert!(
        text.contains("ghost pipe 0: queue of port 2 (qid 32) is 5 cells"),
        "{text}"
    );
    assert!(text.contains("register"), "{text}");
}

#[test]
fn ghost_threads_need_tofino2() {
    let e = match try_compile("qdepth.p4", Target::Tofino1, &["USE_TNA"]) {
        Ok(_) => panic!("qdepth.p4 compiled for Tofino 1"),
        Err(f) => f.render(),
    };
    assert!(
        e.contains("the ghost thread (`Pipeline`'s seventh argument) needs Tofino 2: Tofino 1's traffic manager sends no queue updates"),
        "{e}"
    );
    // tna.p4 keeps Tofino 1's six-block `Pipeline` on Tofino 2 (as Intel's header does).
    let e = match try_compile("qdepth.p4", Target::Tofino2, &["USE_TNA"]) {
        Ok(_) => panic!("qdepth.p4 with tna.p4 compiled"),
        Err(f) => f.render(),
    };
    assert!(e.contains("needs T2NA"), "{e}");
    // t2na.p4 on Tofino 1 stops at the header's own check.
    let e = match try_compile("qdepth.p4", Target::Tofino1, &[]) {
        Ok(_) => panic!("qdepth.p4 compiled for Tofino 1"),
        Err(f) => f.render(),
    };
    assert!(
        e.contains("t2na.p4 (the Tofino 2 native architecture) cannot run"),
        "{e}"
    );
}

#[test]
fn min_max_actions_are_refused_in_a_ghost_control() {
    // bf-p4c lists `MinMaxAction` for the ingress and egress MAU only
    // (`CheckT2NAExternInvocation::initPipeConstraints`, not in `validInGhost`) and refuses
    // its call in a ghost control with `checkPipeConstraints`' message.
    let e = match try_compile("qdepth.p4", Target::Tofino2, &["MINMAX_IN_GHOST"]) {
        Ok(_) => panic!("a MinMaxAction call in the ghost control compiled"),
        Err(f) => f.render(),
    };
    assert!(
        e.contains("MinMaxAction deepest cannot be used in the Ghost control (MAU)"),
        "{e}"
    );
}

#[test]
fn counters_run_in_a_ghost_control() {
    // bf-p4c allows a Counter in a ghost control (`arch/check_extern_invocation.cpp`,
    // `CheckT2NAExternInvocation::initPipeConstraints`, `validInGhost`); it counts each run of
    // the ghost control (one per queue update). Two frames into port 2's queue: the first
    // one's enqueue, then the second's drain report and its enqueue are three updates.
    for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::default()] {
        let mut sw = switch_with(engine, &["COUNT_IN_GHOST"]);
        let f = frame();
        let mut out = Vec::new();
        for ts in [1_000, 2_000] {
            sw.process_batch(
                &[InFrame {
                    port: 1,
                    bytes: &f,
                    ts,
                }],
                &mut out,
            );
        }
        assert_eq!(out.len(), 2, "{engine}");
        let v = sw
            .counter_read(pipeline::api::PipeSel::All, "Ghost.updates", 0)
            .expect("the ghost control's counter");
        assert_eq!(v[0].packets, 3, "{engine}");
    }
}

#[test]
fn the_ir_and_summary_show_the_ghost_control() {
    let c = try_compile("qdepth.p4", Target::Tofino2, &["GHOST_TABLE"]).expect("compiles");
    pipeline::ir_verify::verify(&c.program).expect("verifies");
    let ir = pipeline::ir_text::program_text(&c.program);
    let ghost = &ir[ir.find("  ghost: phv").expect("a ghost section")..];
    assert!(
        ghost.contains("header gmd: ghost_intrinsic_metadata_t"),
        "{ghost}"
    );
    assert!(ghost.contains("Ghost.queues"), "{ghost}");
    let summary = p4::lower::summary::summary(&c.program);
    assert!(summary.contains("ghost: control Ghost"), "{summary}");
}

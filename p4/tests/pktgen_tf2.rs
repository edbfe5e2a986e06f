//! Tofino 2's packet generator, extern side (issue 11, section 2): `Pktgen.emit` in the ingress
//! deparser with `ig_intr_md_for_dprsr.pktgen` set sends a deparser trigger to the pipe's
//! generator (`tests/pktgen_tf2/trigger.p4`); an app whose 128-bit pattern matches the emitted
//! header fires, and its packets run through the same switch.

mod common;

use std::sync::Arc;

use pipeline::exec::EngineKind;
use pipeline::ir::Target;
use pipeline::pktgen::{AppConfig, Pktgen, Trigger};
use pipeline::switch::{InFrame, Switch};

fn switch(engine: EngineKind) -> (Switch, String) {
    let c = common::compile_test_program("pktgen_tf2", "trigger.p4", Target::Tofino2, &[])
        .unwrap_or_else(|f| panic!("{}", f.render()));
    let warnings = c.warnings.render(&c.sources);
    let sw = Switch::new(
        Arc::new(c.program),
        common::harness_config().with_engine(engine),
    )
    .unwrap();
    (sw, warnings)
}

/// A trigger packet: Ethernet (0x88b6), then the trigger header `kind`, `seq`.
fn trigger_frame(kind: u8, seq: u32) -> Vec<u8> {
    let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x88, 0xb6, kind];
    f.extend_from_slice(&seq.to_be_bytes()[1..]);
    f.resize(64, 0);
    f
}

#[test]
fn the_deparser_trigger_fires_a_matching_app() {
    for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::default()] {
        let (mut sw, warnings) = switch(engine);
        assert!(warnings.contains("`Pktgen` accepted"), "{warnings}");
        let mut gen = Pktgen::new(Target::Tofino2, 1);
        let (mut value, mut mask) = ([0u8; 16], [0u8; 16]);
        (value[0], mask[0]) = (0xab, 0xff);
        let mut template = vec![0u8; 64];
        template[12..14].copy_from_slice(&[0x08, 0x00]);
        gen.configure(AppConfig {
            pipe: 0,
            app_id: 3,
            trigger: Trigger::Deparser { value, mask },
            period_ns: 0,
            batch_count: 1,
            packets_per_batch: 2,
            ipg_ns: 100,
            ibg_ns: 0,
            template,
            port: 6,
        })
        .unwrap();
        gen.enable(0, 3, 0).unwrap();

        let mut out = Vec::new();
        for (kind, ts) in [(0xab, 1_000), (0xcd, 2_000)] {
            let f = trigger_frame(kind, 0x010203);
            sw.process_batch(
                &[InFrame {
                    port: 1,
                    bytes: &f,
                    ts,
                }],
                &mut out,
            );
        }
        assert!(out.is_empty(), "{engine}: trigger packets are dropped");
        let triggers = sw.pktgen_trigger_drain();
        assert_eq!(triggers.len(), 2, "{engine}");
        let t = triggers[0];
        assert_eq!((t.pipe, t.address, t.length, t.ts), (0, 400, 64, 1_000));
        assert_eq!(
            t.data[..4],
            [0xab, 0x01, 0x02, 0x03],
            "{engine}: the emitted header"
        );
        assert!(t.data[4..].iter().all(|b| *b == 0));

        let mut frames = Vec::new();
        for t in &triggers {
            gen.deparser_trigger(t, &mut frames);
        }
        // Only the first trigger's header matches the app's pattern.
        assert_eq!(frames.len(), 2, "{engine}");
        assert_eq!(frames[0].port, 6);
        assert_eq!((frames[0].ts, frames[1].ts), (1_000, 1_100));
        // Tofino 2 pktgen header: pipe 0, app 3; batch 0; packets 0 and 1.
        assert_eq!(frames[1].bytes[..6], [0x03, 0, 0, 0, 0, 1]);
        for f in &frames {
            sw.process_batch(
                &[InFrame {
                    port: f.port,
                    bytes: &f.bytes,
                    ts: f.ts,
                }],
                &mut out,
            );
        }
        assert_eq!(out.len(), 2, "{engine}: generated packets are forwarded");
        assert!(out.iter().all(|o| o.port == 3));
        assert_eq!(sw.stats().pktgen_triggers, 2);
    }
}

/// `Pktgen.emit` outside an `if` is refused, as bf-p4c refuses it
/// (`parde/extract_deparser.cpp`, `ExtractDeparser::postorder`, Pktgen: "Unsupported
/// unconditional ... .emit").
#[test]
fn an_unconditional_pktgen_emit_is_refused() {
    let r = match common::compile_test_program(
        "pktgen_tf2",
        "trigger.p4",
        Target::Tofino2,
        &["UNCONDITIONAL"],
    ) {
        Ok(_) => panic!("an unconditional Pktgen.emit compiled"),
        Err(f) => f.render(),
    };
    assert!(r.contains("unsupported unconditional `pg.emit`"), "{r}");
}

/// A trigger packet whose first pass is also resubmitted (`-D RESUBMIT`): resubmit and the
/// deparser trigger share the bus and resubmit has priority (tofino-model JBay
/// `DeparserIngress::HandleResubmit`), so the first pass sends no trigger; the resubmitted pass,
/// which only sets `pktgen`, sends one. On every engine.
#[test]
fn a_resubmitted_pass_sends_no_deparser_trigger() {
    for engine in [EngineKind::Tree, EngineKind::Flat, EngineKind::default()] {
        let c = common::compile_test_program(
            "pktgen_tf2",
            "trigger.p4",
            Target::Tofino2,
            &["RESUBMIT"],
        )
        .unwrap_or_else(|f| panic!("{}", f.render()));
        let mut sw = Switch::new(
            Arc::new(c.program),
            common::harness_config().with_engine(engine),
        )
        .unwrap();
        let f = trigger_frame(0xab, 7);
        let mut out = Vec::new();
        sw.process_batch(
            &[InFrame {
                port: 1,
                bytes: &f,
                ts: 1_000,
            }],
            &mut out,
        );
        assert!(out.is_empty(), "{engine}: the second pass drops the packet");
        assert_eq!(sw.stats().resubmits, 1, "{engine}");
        let triggers = sw.pktgen_trigger_drain();
        assert_eq!(
            triggers.len(),
            1,
            "{engine}: only the resubmitted pass triggers"
        );
        assert_eq!(triggers[0].data[..4], [0xab, 0, 0, 7], "{engine}");
    }
}

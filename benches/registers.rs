//! `cargo bench --bench registers`: programs whose packet path runs RegisterActions (p4ce.p4,
//! onepipe.p4, mcrdma.p4), each set up by one of its STF tests (the `add` and multicast
//! lines; the test's packets are the frames fed, over and over), on the native engine and on
//! the flat one in the same run: per-core Mpps and TSC ticks per packet, the median of three
//! one-second runs, and what the native code leaves to the flat engine.

use std::time::Duration;

use control::stf::{parse, run_stf_on, StfOptions, Stmt};
use pipeline::exec::EngineKind;
use pipeline::switch::{Switch, SwitchConfig};
use pisa::workload::{compile, measure, Measurement, Workload};

const CASES: [(&str, &str, &str); 3] = [
    (
        "p4ce.p4",
        include_str!("../p4/programs/p4ce.p4"),
        include_str!("../p4/programs/tests/p4ce_multi_packet.stf"),
    ),
    (
        "onepipe.p4",
        include_str!("../p4/programs/onepipe.p4"),
        include_str!("../p4/programs/tests/onepipe_beacon.stf"),
    ),
    (
        "mcrdma.p4",
        include_str!("../p4/programs/mcrdma.p4"),
        include_str!("../p4/programs/tests/mcrdma_ack_merge.stf"),
    ),
];

fn workload(name: &str, p4: &str, stf: &str, engine: EngineKind) -> Workload {
    let program = compile(name, p4).expect("program");
    let stmts = parse(stf).expect("stf");
    let mut sw = Switch::new(program, SwitchConfig::default().with_engine(engine)).expect("switch");
    assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
    let report = run_stf_on(&mut sw, &stmts, &StfOptions::default());
    assert!(report.all_passed(), "{name}: its STF test fails");
    let frames: Vec<(u16, Vec<u8>)> = stmts
        .iter()
        .filter_map(|s| match &s.stmt {
            Stmt::Packet { port, data } => Some((*port, data.clone())),
            _ => None,
        })
        .collect();
    assert!(!frames.is_empty());
    Workload {
        name: name.to_string(),
        switch: sw,
        frames,
    }
}

fn median(mut ms: Vec<Measurement>) -> Measurement {
    ms.sort_by(|a, b| a.mpps().total_cmp(&b.mpps()));
    ms[ms.len() / 2]
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: build only.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    for (name, p4, stf) in CASES {
        let mut mpps = [0.0; 2];
        for (i, engine) in [EngineKind::Native, EngineKind::Flat]
            .into_iter()
            .enumerate()
        {
            let mut w = workload(name, p4, stf, engine);
            let runs = (0..3)
                .map(|_| measure(&mut w, 32, Duration::from_secs(1)))
                .collect();
            let m = median(runs);
            mpps[i] = m.mpps();
            let fallbacks = w.switch.native_fallbacks();
            println!(
                "{name:<12} {engine:<7} {:6.2} Mpps/core  {:>7} TSC ticks/packet  (native fallbacks: {fallbacks:?})",
                m.mpps(),
                m.tsc_per_packet().map_or("-".into(), |t| format!("{t:.0}")),
            );
        }
        println!("{name:<12} native / flat: {:.2}x", mpps[0] / mpps[1]);
    }
}

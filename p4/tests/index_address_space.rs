//! An index past a register's or counter's declared size, on every engine: the conformance
//! checks `reg_index_nonpow2_wrap` and `counter_index_nonpow2_wrap` (`tests/conformance/`)
//! check the packets; this checks what STF cannot see: the cell the index lands in (masked to
//! the power-of-two address space, no modulo) is outside the control plane's view, the cells
//! it does see are untouched, and each such access is counted in `index_wraps`.

mod common;

use std::sync::Arc;

use common::compile_test_program;
use pipeline::api::{ApiError, PipeSel};
use pipeline::exec::EngineKind;
use pipeline::ir::Target;
use pipeline::switch::{InFrame, Switch, SwitchConfig};

/// A switch running `tests/conformance/NAME.p4` on `engine`.
fn switch(name: &str, engine: EngineKind) -> Switch {
    let c = compile_test_program("conformance", &format!("{name}.p4"), Target::Tofino1, &[])
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let cfg = SwitchConfig::new(1).with_engine(engine);
    let sw = Switch::new(Arc::new(c.program), cfg).expect("switch");
    assert_eq!(sw.engine(), engine, "{:?}", sw.engine_error());
    sw
}

/// Sends a frame whose header bytes `a` and `b` are these; returns byte `c` of what left.
fn send(sw: &mut Switch, a: u8, b: u8) -> u8 {
    let mut bytes = vec![0xaa; 62];
    bytes[..12].fill(0);
    bytes[0] = a;
    bytes[1] = b;
    let mut c = None;
    let frame = InFrame {
        port: 0,
        bytes: &bytes,
        ts: 0,
    };
    sw.process(frame, &mut |o| c = Some(o.bytes[2]));
    c.expect("a packet out")
}

const ENGINES: [EngineKind; 3] = [EngineKind::Tree, EngineKind::Flat, EngineKind::Native];

#[test]
fn a_register_index_past_a_non_power_of_two_size_hits_a_hidden_cell() {
    for engine in ENGINES {
        let mut sw = switch("reg_index_nonpow2_wrap", engine);
        // Size 10, address space 16: 13 and 29 (29 & 15 = 13) are one hidden cell.
        assert_eq!(send(&mut sw, 13, 0x55), 0, "{engine:?}");
        assert_eq!(
            send(&mut sw, 3, 0x66),
            0,
            "{engine:?}: cell 3 untouched by index 13"
        );
        assert_eq!(send(&mut sw, 29, 0x77), 0x55, "{engine:?}");
        let cell3 = sw.register_read(PipeSel::All, "r", 3).expect("cell 3");
        assert_eq!(cell3[0].lo, 0x66, "{engine:?}");
        let e = sw.register_read(PipeSel::All, "r", 13).unwrap_err();
        assert!(matches!(e, ApiError::IndexOutOfRange { .. }), "{e:?}");
        assert_eq!(sw.exec_stats().index_wraps, 2, "{engine:?}");
    }
}

#[test]
fn a_counter_index_past_a_non_power_of_two_size_counts_a_hidden_cell() {
    for engine in ENGINES {
        let mut sw = switch("counter_index_nonpow2_wrap", engine);
        for a in [13, 13, 2] {
            send(&mut sw, a, 0);
        }
        let read = |sw: &Switch, i| sw.counter_read(PipeSel::All, "c", i).map(|v| v[0].packets);
        assert_eq!(read(&sw, 3).expect("cell 3"), 0, "{engine:?}");
        assert_eq!(read(&sw, 2).expect("cell 2"), 1, "{engine:?}");
        assert!(read(&sw, 13).is_err(), "{engine:?}");
        assert_eq!(sw.exec_stats().index_wraps, 2, "{engine:?}");
    }
}

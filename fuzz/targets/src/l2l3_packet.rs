//! Fuzz target: arbitrary bytes as a frame arriving on a port of a switch running l2l3.p4 with
//! the workload's tables must never panic the pipeline; bad frames only ever become counted
//! drops or ordinary output. The same frame goes through the native engine and the flat one,
//! which must send the same frames, and traced through the native engine (its traced code)
//! and the tree interpreter, which must send them too and record the same trace.

use std::sync::{Mutex, OnceLock};

use pipeline::exec::EngineKind;
use pipeline::switch::InFrame;
use pisa::workload::{l2l3, Workload};

static SWITCHES: OnceLock<Mutex<[Workload; 4]>> = OnceLock::new();

/// One input.
pub fn run(data: &[u8]) {
    let w = SWITCHES.get_or_init(|| {
        let build = |e| l2l3(64, 256, 1, e).expect("l2l3.p4 compiles");
        Mutex::new([
            build(EngineKind::default()),
            build(EngineKind::Flat),
            build(EngineKind::default()),
            build(EngineKind::Tree),
        ])
    });
    let Ok(mut w) = w.lock() else { return };
    let (port, frame) = match data.split_first() {
        Some((p, rest)) => ((*p % 4) as u16, rest),
        None => (0, data),
    };
    let frame = InFrame {
        port,
        bytes: frame,
        ts: 0,
    };
    let mut outs = [Vec::new(), Vec::new()];
    for (w, out) in w.iter_mut().zip(outs.iter_mut()) {
        w.switch.process_batch(&[frame], out);
        let _ = w.switch.drain_drops();
    }
    assert_eq!(outs[0], outs[1], "native and flat engines differ");
    let (native, native_trace) = w[2].switch.trace(frame);
    let (tree, tree_trace) = w[3].switch.trace(frame);
    for w in &mut w[2..] {
        let _ = w.switch.drain_drops();
    }
    assert_eq!(
        native_trace, tree_trace,
        "native traced code and tree interpreter differ"
    );
    assert_eq!(native, tree, "native traced and tree frames differ");
    assert_eq!(outs[0], native, "native traced and untraced frames differ");
    for (w, out) in w.iter_mut().zip(outs) {
        for f in out {
            w.switch.recycle(f.bytes);
        }
    }
}

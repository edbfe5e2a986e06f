//! Fuzz target: arbitrary bytes as a frame arriving on a port of a switch running l2l3.p4 with
//! the workload's tables must never panic the pipeline; bad frames only ever become counted
//! drops or ordinary output.
#![no_main]

use std::sync::{Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;
use pipeline::switch::InFrame;

static SWITCH: OnceLock<Mutex<pisa::workload::Workload>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let w = SWITCH.get_or_init(|| {
        Mutex::new(pisa::workload::l2l3(64, 256, 1).expect("l2l3.p4 compiles"))
    });
    let Ok(mut w) = w.lock() else { return };
    let (port, frame) = match data.split_first() {
        Some((p, rest)) => ((*p % 4) as u16, rest),
        None => (0, data),
    };
    let mut out = Vec::new();
    w.switch.process_batch(&[InFrame { port, bytes: frame, ts: 0 }], &mut out);
    for f in out {
        w.switch.recycle(f.bytes);
    }
    let _ = w.switch.drain_drops();
});

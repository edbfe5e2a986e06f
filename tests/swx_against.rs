//! `pisa bench pipeline --against swx`'s correctness half (cargo feature `dpdk`): DPDK's SWX
//! pipeline running bench/swx/l2l3.spec, filled with the tables of pisa's l2l3 workload, sends
//! exactly what pisa sends (ports and bytes) for a few workload frames and the edge cases
//! (flooded, TTL 1, bad checksum, not IPv4), and so does bench/swx/fib.spec against fib.p4;
//! interpreted and, where DPDK's internal pipeline headers are installed
//! (scripts/dpdk-swx-headers.sh), compiled.
#![cfg(feature = "dpdk")]

use pipeline::exec::EngineKind;

fn check(interpreted: bool) -> String {
    let mut w = pisa::workload::l2l3(16, 64, 16, EngineKind::Flat).unwrap();
    let mut s = pisa::swx::l2l3(&w, interpreted).unwrap();
    let mut frames = w.frames.clone();
    frames.extend(pisa::swx::edge_frames(&w.frames));
    assert!(frames.len() >= 20, "{}", frames.len());
    pisa::swx::check_same(&mut w, &mut s, &frames).unwrap();
    let m = pisa::swx::measure(&mut s, std::time::Duration::from_millis(20));
    // Every frame of the workload goes out once (a few may still be in flight at the end).
    assert!(
        m.packets > 0 && m.out_frames <= m.packets && m.out_frames + 16 >= m.packets,
        "{m:?}"
    );
    let mode = s.mode().label().to_string();
    // The check notices a difference: SWX's entry for the first frame's MAC moved to another
    // port than pisa's.
    let first = w.frames[0].clone();
    let mac = first.1[..6]
        .iter()
        .fold(0u64, |a, b| (a << 8) | u64::from(*b));
    let mut out = Vec::new();
    let f = pipeline::switch::InFrame {
        port: first.0,
        bytes: &first.1,
        ts: 0,
    };
    w.switch.process_batch(&[f], &mut out);
    let other = (out[0].port + 1) % 4;
    s.swx
        .add_entries(
            "mac_dst",
            &[format!("match 0x{mac:x} action set_port port {other}")],
        )
        .unwrap();
    let e = pisa::swx::check_same(&mut w, &mut s, &[first]).unwrap_err();
    assert!(e.to_string().contains("disagree on frame 0"), "{e}");
    mode
}

#[test]
fn swx_sends_what_pisa_sends() {
    assert_eq!(check(true), "interpreted");
    let header = dataplane::swx::compiled::header_dir();
    let mode = check(false);
    assert_eq!(
        mode,
        if header.is_ok() {
            "compiled"
        } else {
            "interpreted"
        },
        "{header:?}"
    );
}

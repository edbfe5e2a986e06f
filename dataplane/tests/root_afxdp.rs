//! AF_XDP over a veth pair between two network namespaces (needs root, so `#[ignore]`d: run as
//! root with `--include-ignored`; and the `afxdp` feature): frames sent by an AF_PACKET port arrive byte-identical at the AF_XDP port and
//! the other way round, and the XDP program is detached when the port is dropped.
#![cfg(feature = "afxdp")]

use std::time::Duration;

use dataplane::netns::{in_netns, ip};
use dataplane::{AfPacketPort, AfXdpPort, FrameBatch, Nanos, Port};

mod support;

use support::{collect, frame, require_root, same, veth_pair};

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_XDP on them"]
fn afxdp_and_afpacket_exchange_frames_over_veth() {
    require_root();
    let (_guard, na, nb) = veth_pair("x", "x");
    let mut x = in_netns(&na, || AfXdpPort::open("xa", 0, false))
        .unwrap()
        .unwrap();
    let mut p = in_netns(&nb, || AfPacketPort::open("xb")).unwrap().unwrap();
    let attached = ip(&["-n", &na, "link", "show", "dev", "xa"]).unwrap();
    assert!(attached.contains("xdp"), "XDP program attached: {attached}");

    let sent: Vec<Vec<u8>> = (0..100u16)
        .map(|i| frame(i, 60 + usize::from(i) * 14))
        .collect();
    let mut b = FrameBatch::new(128);
    for f in &sent {
        b.push(f, Nanos(0));
    }
    assert_eq!(p.send_batch(&mut b, Nanos(0)).unwrap(), sent.len());
    same(&collect(&mut x, sent.len()), &sent, "AF_PACKET -> AF_XDP");

    for f in &sent {
        b.push(f, Nanos(0));
    }
    assert_eq!(x.send_batch(&mut b, Nanos(0)).unwrap(), sent.len());
    same(&collect(&mut p, sent.len()), &sent, "AF_XDP -> AF_PACKET");
    // Many more than the transmit pool holds, so completions must be recycled.
    for round in 0..40u16 {
        for i in 0..64u16 {
            b.push(&frame(round * 64 + i, 64), Nanos(0));
        }
        x.send_batch(&mut b, Nanos(0)).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    x.flush(Nanos(0)).unwrap();
    // Frames either went out or were counted as dropped for want of free buffers while the
    // peer was busy; nothing vanishes.
    let s = x.stats();
    let dropped = s.tx_dropped(dataplane::DropReason::QueueFull);
    assert_eq!(s.tx_packets + dropped, 100 + 40 * 64, "{s:?}");
    assert!(s.tx_packets > 100 + 20 * 64, "most frames go out: {s:?}");

    drop(x);
    let after = ip(&["-n", &na, "link", "show", "dev", "xa"]).unwrap();
    assert!(
        !after.contains("xdp"),
        "XDP program detached on drop: {after}"
    );
}

//! AF_PACKET's PACKET_MMAP ring mode over a veth pair between two network namespaces (needs
//! root): frames in = frames out across many ring wraps (ring ↔ ring and ring ↔ `sendmmsg`
//! mode), a full receive ring counted as kernel drops, a frame longer than a ring slot counted
//! as truncated, and oversized or runt frames counted on send. `#[ignore]`d: run as root with
//! `--include-ignored` (CI does); run without root the tests fail, saying why.

mod support;

use std::time::{Duration, Instant};

use dataplane::netns::{in_netns, ip};
use dataplane::{AfPacketConfig, AfPacketPort, DropReason, FrameBatch, Nanos, Port};

use support::{collect, frame, require_root, same, veth_pair};

/// Small rings (64 receive and 32 transmit slots), so a test wraps them many times.
fn small_rings() -> AfPacketConfig {
    AfPacketConfig {
        rx_ring_frames: 64,
        tx_ring_frames: 32,
        ..AfPacketConfig::default()
    }
}

fn mmsg_mode() -> AfPacketConfig {
    AfPacketConfig {
        rx_ring_frames: 0,
        tx_ring_frames: 0,
        ..AfPacketConfig::default()
    }
}

fn open(ns: &str, ifname: &str, cfg: AfPacketConfig) -> AfPacketPort {
    let name = ifname.to_string();
    in_netns(ns, move || AfPacketPort::open_with(&name, &cfg))
        .unwrap()
        .unwrap()
}

/// Sends `sent` from `tx` in batches of 16 while `rx` receives (so neither ring overflows);
/// returns what arrived.
fn stream(tx: &mut AfPacketPort, rx: &mut AfPacketPort, sent: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let mut out = FrameBatch::new(16);
    let mut inb = FrameBatch::new(64);
    for chunk in sent.chunks(16) {
        for f in chunk {
            assert!(out.push(f, Nanos(0)));
        }
        assert_eq!(tx.send_batch(&mut out, Nanos(0)).unwrap(), chunk.len());
        assert!(out.is_empty(), "send_batch consumes the batch");
        // Keep up with the sender: read what is there now.
        inb.clear();
        rx.recv_batch(&mut inb, Nanos(0)).unwrap();
        got.extend(
            inb.iter()
                .filter(|f| f.data.len() >= 14 && f.data[12..14] == [0x88, 0xb5])
                .map(|f| f.data.clone()),
        );
    }
    got.extend(collect(rx, sent.len() - got.len()));
    got
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn ring_ports_move_frames_in_order_across_ring_wraps() {
    require_root();
    let (_guard, na, nb) = veth_pair("rw", "r");
    let mut a = open(&na, "ra", small_rings());
    let mut b = open(&nb, "rb", small_rings());
    assert_eq!(a.uses_rings(), (true, true));
    // 1000 frames through 64 receive and 32 transmit slots: about 15 and 30 wraps.
    let sent: Vec<Vec<u8>> = (0..1000u16)
        .map(|i| frame(i, 60 + (usize::from(i) * 131) % 1455))
        .collect();
    let got = stream(&mut a, &mut b, &sent);
    same(&got, &sent, "ring -> ring");
    assert_eq!(a.stats().tx_packets, sent.len() as u64);
    assert_eq!(b.stats().rx_packets, sent.len() as u64);
    assert_eq!(b.stats().total_drops(), 0);
    // The sender does not see its own frames.
    assert!(collect(&mut a, 1).is_empty(), "sender re-received a frame");
    // And back.
    let got = stream(&mut b, &mut a, &sent);
    same(&got, &sent, "ring -> ring, reverse");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn ring_and_mmsg_modes_interoperate() {
    require_root();
    let (_guard, na, nb) = veth_pair("rm", "r");
    let mut ring = open(&na, "ra", small_rings());
    let mut mmsg = open(&nb, "rb", mmsg_mode());
    assert_eq!(mmsg.uses_rings(), (false, false));
    let sent: Vec<Vec<u8>> = (0..300u16)
        .map(|i| frame(i, 60 + usize::from(i) * 4))
        .collect();
    same(&stream(&mut ring, &mut mmsg, &sent), &sent, "ring -> mmsg");
    same(&stream(&mut mmsg, &mut ring, &sent), &sent, "mmsg -> ring");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn full_receive_ring_counts_kernel_drops() {
    require_root();
    let (_guard, na, nb) = veth_pair("rf", "r");
    let mut tx = open(&na, "ra", mmsg_mode());
    let mut rx = open(&nb, "rb", small_rings());
    // 500 frames into a 64-slot ring that nobody reads.
    let n = 500u16;
    let mut b = FrameBatch::new(50);
    for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
        for &i in chunk {
            b.push(&frame(i, 100), Nanos(0));
        }
        assert_eq!(tx.send_batch(&mut b, Nanos(0)).unwrap(), chunk.len());
    }
    // Let the kernel deliver everything it will.
    std::thread::sleep(Duration::from_millis(200));
    let got = collect(&mut rx, usize::from(n));
    let s = rx.stats();
    let dropped = s.rx_dropped(DropReason::QueueFull);
    assert!(
        got.len() <= 64 && !got.is_empty(),
        "{} frames came out of a 64-slot ring",
        got.len()
    );
    // Received + counted drops = sent (the host's own frames, if any, only add to both).
    assert!(
        got.len() as u64 + dropped >= u64::from(n),
        "{} received + {dropped} dropped < {n} sent",
        got.len()
    );
    // The frames that did arrive are the first ones, in order.
    let want: Vec<Vec<u8>> = (0..got.len() as u16).map(|i| frame(i, 100)).collect();
    same(&got, &want, "first frames of a full ring");
}

/// The runtime reads a port's counters through its stats handle, not `stats()`: the kernel's
/// drops since the last periodic read are added when the port closes, so a run's final counts
/// have them (`--io threads` used to miss this tail).
#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn kernel_drops_are_read_when_the_port_closes() {
    require_root();
    let (_guard, na, nb) = veth_pair("rd", "r");
    let mut tx = open(&na, "ra", mmsg_mode());
    let rx = open(&nb, "rb", small_rings());
    let handle = rx.stats_handle();
    let n = 300u16;
    let mut b = FrameBatch::new(50);
    for chunk in (0..n).collect::<Vec<_>>().chunks(50) {
        for &i in chunk {
            b.push(&frame(i, 100), Nanos(0));
        }
        tx.send_batch(&mut b, Nanos(0)).unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        handle.snapshot().rx_dropped(DropReason::QueueFull),
        0,
        "nothing read yet"
    );
    drop(rx);
    let dropped = handle.snapshot().rx_dropped(DropReason::QueueFull);
    assert!(
        dropped >= u64::from(n) - 64,
        "{dropped} drops counted at close for {n} sent into 64 slots"
    );
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn frames_longer_than_a_slot_are_counted_truncated() {
    require_root();
    let (_guard, na, nb) = veth_pair("rt", "r");
    // The receiver's slots are sized for MTU 1500 when it opens; then both ends go to 9000.
    let mut rx = open(&nb, "rb", small_rings());
    for (ns, i) in [(&na, "ra"), (&nb, "rb")] {
        ip(&["-n", ns, "link", "set", "dev", i, "mtu", "9000"]).unwrap();
    }
    let mut tx = open(&na, "ra", mmsg_mode());
    assert_eq!(tx.max_frame_len(), 9000 + 18);
    let mut b = FrameBatch::new(4);
    b.push(&frame(1, 4000), Nanos(0));
    b.push(&frame(2, 200), Nanos(0));
    assert_eq!(tx.send_batch(&mut b, Nanos(0)).unwrap(), 2);
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut got = Vec::new();
    while got.is_empty() && Instant::now() < deadline {
        got = collect(&mut rx, 1);
    }
    same(&got, &[frame(2, 200)], "only the frame that fits a slot");
    assert_eq!(rx.stats().rx_dropped(DropReason::Truncated), 1);
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET rings"]
fn ring_send_counts_runts_and_oversized_frames() {
    require_root();
    let (_guard, na, nb) = veth_pair("rs", "r");
    let mut a = open(&na, "ra", small_rings());
    let mut b = open(&nb, "rb", small_rings());
    let mut batch = FrameBatch::new(8);
    batch.push(&frame(7, 100), Nanos(0));
    batch.push(&[0u8; 10], Nanos(0)); // runt
    batch.push(&vec![0u8; 4000], Nanos(0)); // over the MTU
    batch.push(&frame(8, 1514), Nanos(0)); // the largest untagged frame
    batch.push(&frame(9, 1518), Nanos(0)); // untagged: 4 bytes over
    assert_eq!(a.send_batch(&mut batch, Nanos(0)).unwrap(), 2);
    let s = a.stats();
    assert_eq!(s.tx_dropped(DropReason::TooShort), 1);
    assert_eq!(s.tx_dropped(DropReason::TooLong), 2);
    same(
        &collect(&mut b, 2),
        &[frame(7, 100), frame(8, 1514)],
        "valid frames",
    );
}

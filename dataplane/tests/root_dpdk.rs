//! DPDK over a veth pair between two network namespaces (needs root and the `dpdk` feature):
//! a DPDK port on a `net_af_packet` vdev over one end and an AF_PACKET port on the other end
//! exchange frames byte-identical in both directions; dropping the DPDK port detaches the vdev
//! so the same device opens again; the EAL's runtime directory is gone.
//!
//! Without the `dpdk` feature this file holds no test; with it, the test is `#[ignore]`d (it
//! needs root): `cargo test -p pisa-dataplane --features dpdk --test root_dpdk --
//! --include-ignored` as root (CI does); run without root it fails, saying why.

#[cfg(feature = "dpdk")]
mod support;

#[cfg(feature = "dpdk")]
mod with_dpdk {

    use dataplane::dpdk::{eal_args, DpdkPort};
    use dataplane::netns::in_netns;
    use dataplane::{open_port, AfPacketPort, FrameBatch, MemHub, Nanos, Port, PortSpec};

    use super::support::{collect, frame, require_root, same, veth_pair};

    #[test]
    #[ignore = "needs root: network namespaces, veth pairs and DPDK net_af_packet vdevs on them"]
    fn dpdk_af_packet_vdev_and_afpacket_exchange_frames_over_veth() {
        require_root();
        let pid = std::process::id();
        let (_guard, na, nb) = veth_pair("d", "d");
        // Opened through the spec parser and open_port, as the CLI does.
        let spec: PortSpec = "dpdk:net_af_packet0,iface=da".parse().unwrap();
        let mut d = in_netns(&na, || open_port(&spec, &mut MemHub::default()))
            .unwrap()
            .unwrap();
        let mut p = in_netns(&nb, || AfPacketPort::open("db")).unwrap().unwrap();
        assert_eq!(d.name(), "dpdk:net_af_packet0,iface=da");

        // Sizes from the minimum up to a full 1500-byte-MTU frame.
        let sent: Vec<Vec<u8>> = (0..100u16)
            .map(|i| frame(i, 60 + usize::from(i) * 14))
            .collect();
        let mut b = FrameBatch::new(128);
        for f in &sent {
            b.push(f, Nanos(0));
        }
        assert_eq!(p.send_batch(&mut b, Nanos(0)).unwrap(), sent.len());
        same(&collect(&mut d, sent.len()), &sent, "AF_PACKET -> DPDK");

        for f in &sent {
            b.push(f, Nanos(0));
        }
        assert_eq!(d.send_batch(&mut b, Nanos(0)).unwrap(), sent.len());
        assert!(b.is_empty(), "send_batch consumes the batch");
        same(&collect(&mut p, sent.len()), &sent, "DPDK -> AF_PACKET");

        let s = d.stats();
        assert!(s.rx_packets >= sent.len() as u64, "{s:?}");
        assert_eq!(s.tx_packets, sent.len() as u64, "{s:?}");
        let bytes: u64 = sent.iter().map(|f| f.len() as u64).sum();
        assert_eq!(s.tx_bytes, bytes, "{s:?}");

        // A frame longer than the port takes is counted as a drop, not sent or lost silently.
        let too_long = vec![0u8; d.max_frame_len() + 1];
        b.push(&too_long, Nanos(0));
        assert_eq!(d.send_batch(&mut b, Nanos(0)).unwrap(), 0);
        assert_eq!(
            d.stats().tx_dropped(dataplane::DropReason::TooLong),
            1,
            "{:?}",
            d.stats()
        );

        // The EAL ran with the test defaults, and its runtime directory is already gone.
        let args = eal_args().expect("EAL initialised");
        assert!(args.iter().any(|a| a == "--no-huge"), "{args:?}");
        let dir = std::path::Path::new("/var/run/dpdk").join(format!("pisa-{pid}"));
        assert!(!dir.exists(), "{} removed", dir.display());

        // Dropping the port stops, closes and detaches the vdev: the same device opens again
        // and still carries frames.
        drop(d);
        let mut d = in_netns(&na, || DpdkPort::open("net_af_packet0,iface=da"))
            .unwrap()
            .unwrap();
        let again = vec![frame(7, 200)];
        b.push(&again[0], Nanos(0));
        assert_eq!(d.send_batch(&mut b, Nanos(0)).unwrap(), 1);
        same(&collect(&mut p, 1), &again, "DPDK (reopened) -> AF_PACKET");

        // A device that does not exist is an error, not a panic.
        let e = in_netns(&na, || {
            DpdkPort::open("net_af_packet1,iface=pisa-nonexist0")
        })
        .unwrap()
        .expect_err("missing interface");
        eprintln!("expected error: {e}");
    }
}

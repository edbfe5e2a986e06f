//! Builds the example captures in `examples/l2l3/` for the four-host topology of
//! `p4/programs/l2l3.tables.yaml`: `cargo run --example make_l2l3_captures`.
//!
//! The frames are built with etherparse, independently of pisa, and the files are committed so a
//! fresh clone can run `pisa run` on them straight away. The expected outputs live in the golden
//! test (`tests/l2l3_golden.rs`), which builds them the same independent way.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use etherparse::PacketBuilder;
use pcap_file::pcap::{PcapPacket, PcapWriter};

const H1: [u8; 6] = [2, 0, 0, 0, 0, 1];
const H2: [u8; 6] = [2, 0, 0, 0, 0, 2];
const ROUTER: [u8; 6] = [2, 0, 0, 0, 0, 0xfe];
const UNKNOWN: [u8; 6] = [2, 0, 0, 0, 0, 0x99];
const BROADCAST: [u8; 6] = [0xff; 6];
const IP_H1: [u8; 4] = [10, 0, 1, 1];
const IP_H2: [u8; 4] = [10, 0, 1, 2];
const IP_H3: [u8; 4] = [10, 0, 2, 3];
const IP_H4: [u8; 4] = [10, 0, 3, 4];

fn udp(src: [u8; 6], dst: [u8; 6], sip: [u8; 4], dip: [u8; 4], ttl: u8, payload: &[u8]) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src, dst)
        .ipv4(sip, dip, ttl)
        .udp(4000, 5000);
    let mut out = Vec::with_capacity(b.size(payload.len()));
    b.write(&mut out, payload)
        .expect("writing to a Vec cannot fail");
    out
}

fn tcp(src: [u8; 6], dst: [u8; 6], sip: [u8; 4], dip: [u8; 4], dport: u16) -> Vec<u8> {
    let b = PacketBuilder::ethernet2(src, dst)
        .ipv4(sip, dip, 64)
        .tcp(40000, dport, 1, 65535);
    let mut out = Vec::with_capacity(b.size(0));
    b.write(&mut out, &[])
        .expect("writing to a Vec cannot fail");
    out
}

fn arp_request(src: [u8; 6], sip: [u8; 4], tip: [u8; 4]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&BROADCAST);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 1]);
    f.extend_from_slice(&src);
    f.extend_from_slice(&sip);
    f.extend_from_slice(&[0; 6]);
    f.extend_from_slice(&tip);
    f.resize(60, 0);
    f
}

/// Port 0 (h1): the frames, in order.
pub fn port0_frames() -> Vec<Vec<u8>> {
    let mut bad_csum = udp(H1, ROUTER, IP_H1, IP_H3, 64, b"bad checksum");
    bad_csum[14 + 10] ^= 0xff; // corrupt the IPv4 header checksum
    vec![
        udp(H1, H2, IP_H1, IP_H2, 64, b"l2 unicast h1->h2"),
        arp_request(H1, IP_H1, IP_H2),
        udp(H1, ROUTER, IP_H1, IP_H3, 64, b"routed h1->h3"),
        tcp(H1, ROUTER, IP_H1, IP_H4, 23),
        tcp(H1, ROUTER, IP_H1, IP_H4, 80),
        udp(H1, UNKNOWN, IP_H1, [10, 0, 1, 99], 64, b"unknown unicast"),
        udp(H1, ROUTER, IP_H1, IP_H3, 1, b"ttl expires"),
        bad_csum,
        vec![0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00],
    ]
}

/// Port 1 (h2): the frames, in order.
pub fn port1_frames() -> Vec<Vec<u8>> {
    vec![
        udp(H2, H1, IP_H2, IP_H1, 64, b"l2 unicast h2->h1"),
        udp(H2, ROUTER, IP_H2, IP_H4, 17, b"routed h2->h4"),
    ]
}

fn write(path: &Path, frames: &[Vec<u8>], start_ms: u64) -> std::io::Result<()> {
    let file = File::create(path)?;
    let mut w = PcapWriter::new(file).map_err(std::io::Error::other)?;
    for (i, f) in frames.iter().enumerate() {
        let ts = Duration::from_millis(start_ms + 2 * i as u64);
        w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
            .map_err(std::io::Error::other)?;
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/l2l3");
    std::fs::create_dir_all(&dir)?;
    write(&dir.join("in0.pcap"), &port0_frames(), 1000)?;
    write(&dir.join("in1.pcap"), &port1_frames(), 1001)?;
    println!("wrote {}/in0.pcap and in1.pcap", dir.display());
    Ok(())
}

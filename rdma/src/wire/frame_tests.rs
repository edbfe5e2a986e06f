//! Tests of whole-frame parse/emit: the notes' vectors, round trips of generated
//! packets, and malformed input.

use std::net::Ipv4Addr;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::icrc::tests::{unhex, VECTORS};

#[test]
fn vectors_parse_with_good_icrc_and_expected_fields() {
    for (name, hex, _) in VECTORS {
        let f = unhex(hex);
        let fr = RocePacketRepr::parse(&f).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(fr.icrc_ok, "{name}");
    }
    let f = unhex(VECTORS[2].1);
    let p = RocePacketRepr::parse(&f).unwrap().packet;
    assert_eq!(p.headers.bth.opcode, Opcode::RC_RDMA_WRITE_ONLY);
    assert_eq!(p.headers.bth.dest_qp, 0x12);
    assert_eq!(p.headers.bth.psn, 0x100);
    assert!(p.headers.bth.ack_req);
    let reth = p.headers.reth.unwrap();
    assert_eq!(
        (reth.va, reth.rkey, reth.dma_len),
        (0x7f00_0000_1000, 0xabcd_ef01, 16)
    );
    assert_eq!(p.payload, &(0u8..16).collect::<Vec<_>>()[..]);
    let cnp_bytes = unhex(VECTORS[0].1);
    let cnp = RocePacketRepr::parse(&cnp_bytes).unwrap().packet;
    assert_eq!(cnp.headers.bth.opcode, Opcode::CNP);
    assert!(cnp.headers.bth.becn);
    let nak_bytes = unhex(VECTORS[4].1);
    let nak = RocePacketRepr::parse(&nak_bytes).unwrap().packet;
    assert_eq!(
        nak.headers.aeth.unwrap().syndrome,
        Syndrome::Nak(NakCode::PsnSequenceError)
    );
}

#[test]
fn re_emitting_the_vectors_reproduces_them_byte_for_byte() {
    // These vectors have UDP checksum 0 and no reserved BTH bits, so emit must match.
    for (name, hex, _) in &VECTORS[2..] {
        let f = unhex(hex);
        let p = RocePacketRepr::parse(&f).unwrap().packet;
        assert_eq!(p.to_vec().unwrap(), f, "{name}");
    }
}

#[test]
fn corrupted_payload_fails_icrc_but_parses() {
    let mut f = unhex(VECTORS[2].1);
    f[70] ^= 0x01;
    let fr = RocePacketRepr::parse(&f).unwrap();
    assert!(!fr.icrc_ok);
}

#[test]
fn malformed_frames_are_typed_errors() {
    let f = unhex(VECTORS[3].1);
    for cut in 0..f.len() {
        assert!(RocePacketRepr::parse(&f[..cut]).is_err(), "cut at {cut}");
    }
    let mut g = f.clone();
    g[14 + 23] = 0x00; // UDP dst port 4791 -> 4608
    assert!(matches!(
        RocePacketRepr::parse(&g),
        Err(WireError::NotRoce(_))
    ));
    let mut g = f.clone();
    g[14 + 28] = 0x15; // reserved opcode
    assert_eq!(
        RocePacketRepr::parse(&g),
        Err(WireError::UnknownOpcode(0x15))
    );
    let mut g = f.clone();
    g[14 + 6] = 0x20; // more fragments
    assert_eq!(RocePacketRepr::parse(&g), Err(WireError::Fragmented));
    let mut g = f.clone();
    g[14 + 3] = 10; // IPv4 total length below the header length (found by proptest)
    assert!(matches!(
        RocePacketRepr::parse(&g),
        Err(WireError::Framing(_))
    ));
    let mut g = unhex(VECTORS[2].1);
    g[14 + 28 + 1] = 0x30; // pad 3 on a 16-byte payload is fine; on an ACK it is not
    assert!(RocePacketRepr::parse(&g).is_ok());
}

fn sample(op: Opcode, payload: &[u8]) -> RocePacketRepr<'_> {
    let mut h = RoceHeaders::new(BthRepr::new(op, 0x12, 7));
    h.deth = Some(DethRepr {
        qkey: GSI_QKEY,
        src_qp: 1,
    });
    h.reth = Some(RethRepr {
        va: 0x1000,
        rkey: 0x55,
        dma_len: payload.len() as u32,
    });
    h.atomic_eth = Some(AtomicEthRepr {
        va: 8,
        rkey: 9,
        swap_add: 10,
        compare: 11,
    });
    h.aeth = Some(AethRepr {
        syndrome: Syndrome::Ack { credit_code: 31 },
        msn: 3,
    });
    h.atomic_ack = Some(AtomicAckEthRepr { orig: 99 });
    h.imm = Some(0xdead_beef);
    h.ieth = Some(0x77);
    RocePacketRepr {
        eth: EthRepr {
            src: [2, 0, 0, 0, 0, 1],
            dst: [2, 0, 0, 0, 0, 2],
            vlan_tci: None,
        },
        ip: IpFields::V4(Ipv4Fields {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 26,
            ecn: 2,
            ttl: 64,
            identification: 1,
            dont_fragment: true,
        }),
        udp_src_port: 0xC000,
        headers: h,
        payload,
    }
}

#[test]
fn missing_required_header_is_an_error() {
    let mut p = sample(Opcode::RC_RDMA_WRITE_ONLY, b"abc");
    p.headers.reth = None;
    assert!(matches!(p.to_vec(), Err(WireError::MissingHeader { .. })));
    let p = sample(Opcode::RC_ACKNOWLEDGE, b"abc");
    assert!(matches!(
        p.to_vec(),
        Err(WireError::UnexpectedPayload { .. })
    ));
}

#[test]
fn small_frames_are_padded_to_sixty_bytes() {
    let p = sample(Opcode::RC_SEND_ONLY, b"");
    let f = p.to_vec().unwrap();
    assert_eq!(f.len(), 60);
    let back = RocePacketRepr::parse(&f).unwrap();
    assert!(back.icrc_ok);
    assert_eq!(back.packet.payload.len(), 0);
}

fn keep_only_needed(mut h: RoceHeaders) -> RoceHeaders {
    let ext = h.bth.opcode.ext_headers();
    if !ext.contains(&ExtHeader::Deth) {
        h.deth = None;
    }
    if !ext.contains(&ExtHeader::Reth) {
        h.reth = None;
    }
    if !ext.contains(&ExtHeader::AtomicEth) {
        h.atomic_eth = None;
    }
    if !ext.contains(&ExtHeader::Aeth) {
        h.aeth = None;
    }
    if !ext.contains(&ExtHeader::AtomicAckEth) {
        h.atomic_ack = None;
    }
    if !ext.contains(&ExtHeader::ImmDt) {
        h.imm = None;
    }
    if !ext.contains(&ExtHeader::Ieth) {
        h.ieth = None;
    }
    h
}

proptest! {
    #[test]
    fn whole_frames_round_trip(op in any::<u8>().prop_filter_map("op", |b| Opcode::new(b).ok()),
                               payload in vec(any::<u8>(), 0..300), v6: bool, vlan: Option<u16>,
                               ecn in 0u8..4, psn in 0u32..1 << 24, id: u16) {
        let payload = if op.has_payload() { payload } else { Vec::new() };
        let mut p = sample(op, &payload);
        p.headers.bth.psn = psn;
        p.headers.bth.pad_count = if op.has_payload() { ((4 - payload.len() % 4) % 4) as u8 } else { 0 };
        p.headers = keep_only_needed(p.headers);
        p.eth.vlan_tci = vlan;
        if v6 {
            p.ip = IpFields::V6(Ipv6Fields { src: "fd00::1".parse().unwrap(), dst: "fd00::2".parse().unwrap(),
                                              traffic_class: 0x68 | ecn, flow_label: 0x1face, hop_limit: 3 });
        } else if let IpFields::V4(f) = &mut p.ip {
            f.ecn = ecn;
            f.identification = id;
        }
        let bytes = p.to_vec().unwrap();
        prop_assert!(bytes.len() >= 60);
        let fr = RocePacketRepr::parse(&bytes).unwrap();
        prop_assert!(fr.icrc_ok);
        prop_assert_eq!(fr.packet, p);
        // etherparse agrees on the IPv4 header checksum.
        if !v6 {
            let ip = etherparse::Ipv4HeaderSlice::from_slice(&bytes[fr.offsets.l3..]).unwrap();
            prop_assert_eq!(ip.header_checksum(), ip.to_header().calc_header_checksum());
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..200)) {
        let _ = RocePacketRepr::parse(&bytes);
    }

    #[test]
    fn mutated_vectors_never_panic(i in 0usize..5, pos in 0usize..120, val: u8) {
        let mut f = unhex(VECTORS[i].1);
        let pos = pos % f.len();
        f[pos] = val;
        let _ = RocePacketRepr::parse(&f);
        let _ = crate::decode::decode_frame(&f);
    }
}

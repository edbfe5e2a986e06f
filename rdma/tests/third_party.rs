//! Cross-checks our frames against third-party decoders: tshark's InfiniBand dissector
//! must report the opcodes and fields we emitted, and scapy's RoCE layer must compute
//! the same ICRC. The tests needing a tool are `#[ignore]`d; CI (root, where
//! `scripts/test.sh` installs the tools) runs them with `--include-ignored`. Run where the
//! tool is missing they fail, saying which package to install.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use pcap_file::pcap::{PcapPacket, PcapWriter};
use rdma::wire::cm::{self, CmIds, CmRep, CmReq};
use rdma::wire::{
    AethRepr, AtomicAckEthRepr, AtomicEthRepr, BthRepr, CmMad, CmMessage, CmaIpHeader, DethRepr,
    EthRepr, IpFields, Ipv4Fields, Opcode, RethRepr, RoceHeaders, RocePacketRepr, Syndrome,
    GSI_QKEY,
};

fn packet(headers: RoceHeaders, payload: &[u8], id: u16) -> Vec<u8> {
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
            identification: id,
            dont_fragment: true,
        }),
        udp_src_port: 0xC123,
        headers,
        payload,
    }
    .to_vec()
    .expect("emit")
}

fn bth(op: Opcode, qp: u32, psn: u32, ack: bool) -> RoceHeaders {
    let mut b = BthRepr::new(op, qp, psn);
    b.ack_req = ack;
    RoceHeaders::new(b)
}

fn cm_req_mad() -> Vec<u8> {
    let mut private = vec![0u8; cm::private_len::REQ];
    CmaIpHeader {
        src_port: 40000,
        src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
    }
    .emit(&mut private)
    .unwrap();
    let req = CmReq {
        local_comm_id: 0x1111,
        service_id: cm::service_id(cm::RDMA_PS_TCP, 20001),
        local_ca_guid: 0x0200_00ff_fe00_0001,
        local_qkey: 0,
        local_qpn: 0x12,
        responder_resources: 1,
        local_eecn: 0,
        initiator_depth: 1,
        remote_eecn: 0,
        remote_cm_resp_timeout: 20,
        transport_service_type: 0,
        e2e_flow_ctrl: false,
        starting_psn: 0xabcdef,
        local_cm_resp_timeout: 20,
        retry_count: 7,
        pkey: 0xFFFF,
        path_mtu: 3,
        rdc_exists: false,
        rnr_retry_count: 7,
        max_cm_retries: 15,
        srq: false,
        ext_transport: 0,
        primary_local_lid: 0xFFFF,
        primary_remote_lid: 0xFFFF,
        primary_local_gid: cm::gid_from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))),
        primary_remote_gid: cm::gid_from_ip(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2))),
        flow_label: 0,
        packet_rate: 0,
        traffic_class: 0,
        hop_limit: 64,
        sl: 0,
        subnet_local: false,
        local_ack_timeout: 14,
        private_data: private,
    };
    CmMad {
        tid: 1,
        attr_mod: 0,
        msg: CmMessage::Req(req),
    }
    .to_bytes()
    .unwrap()
}

fn cm_rep_mad() -> Vec<u8> {
    let rep = CmRep {
        local_comm_id: 0x2222,
        remote_comm_id: 0x1111,
        local_qkey: 0,
        local_qpn: 0x34,
        local_eecn: 0,
        starting_psn: 0x123456,
        responder_resources: 1,
        initiator_depth: 1,
        target_ack_delay: 15,
        failover_accepted: 0,
        e2e_flow_ctrl: false,
        rnr_retry_count: 7,
        srq: false,
        local_ca_guid: 0x0200_00ff_fe00_0002,
        private_data: vec![],
    };
    CmMad {
        tid: 1,
        attr_mod: 0,
        msg: CmMessage::Rep(rep),
    }
    .to_bytes()
    .unwrap()
}

/// A sample of every kind of frame the endpoint emits, with what tshark should show:
/// (opcode, destqp, psn, ackreq).
fn sample_frames() -> Vec<(Vec<u8>, u8, u32, u32, bool)> {
    let mut out = Vec::new();
    let data: Vec<u8> = (0..64u8).collect();
    let mut h = bth(Opcode::RC_RDMA_WRITE_ONLY, 0x12, 0x100, true);
    h.reth = Some(RethRepr {
        va: 0x7f00_0000_1000,
        rkey: 0xabcd_ef01,
        dma_len: 64,
    });
    out.push((packet(h, &data, 1), 0x0a, 0x12, 0x100, true));
    let mut h = bth(Opcode::RC_RDMA_READ_REQUEST, 0x12, 0x101, true);
    h.reth = Some(RethRepr {
        va: 0x2000,
        rkey: 0x55,
        dma_len: 4096,
    });
    out.push((packet(h, &[], 2), 0x0c, 0x12, 0x101, true));
    let mut h = bth(Opcode::RC_ACKNOWLEDGE, 0x34, 0x100, false);
    h.aeth = Some(AethRepr {
        syndrome: Syndrome::Ack { credit_code: 6 },
        msn: 1,
    });
    out.push((packet(h, &[], 3), 0x11, 0x34, 0x100, false));
    let mut h = bth(Opcode::RC_SEND_LAST_WITH_IMMEDIATE, 0x12, 0xFFFFFF, true);
    h.imm = Some(0xdead_beef);
    out.push((packet(h, &data[..13], 4), 0x03, 0x12, 0xFFFFFF, true));
    let mut h = bth(Opcode::RC_FETCH_ADD, 0x12, 5, true);
    h.atomic_eth = Some(AtomicEthRepr {
        va: 0x3000,
        rkey: 9,
        swap_add: 1,
        compare: 0,
    });
    out.push((packet(h, &[], 5), 0x14, 0x12, 5, true));
    let mut h = bth(Opcode::RC_ATOMIC_ACKNOWLEDGE, 0x34, 5, false);
    h.aeth = Some(AethRepr {
        syndrome: Syndrome::Ack { credit_code: 31 },
        msn: 2,
    });
    h.atomic_ack = Some(AtomicAckEthRepr { orig: 41 });
    out.push((packet(h, &[], 6), 0x12, 0x34, 5, false));
    let mut h = bth(Opcode::UD_SEND_ONLY, 1, 0, false);
    h.deth = Some(DethRepr {
        qkey: GSI_QKEY,
        src_qp: 1,
    });
    out.push((packet(h, &cm_req_mad(), 7), 0x64, 1, 0, false));
    let mut h = bth(Opcode::UD_SEND_ONLY, 1, 1, false);
    h.deth = Some(DethRepr {
        qkey: GSI_QKEY,
        src_qp: 1,
    });
    out.push((packet(h, &cm_rep_mad(), 8), 0x64, 1, 1, false));
    let rtu = CmMad {
        tid: 1,
        attr_mod: 0,
        msg: CmMessage::Rtu(CmIds {
            local_comm_id: 0x1111,
            remote_comm_id: 0x2222,
            private_data: vec![],
        }),
    };
    let mut h = bth(Opcode::UD_SEND_ONLY, 1, 2, false);
    h.deth = Some(DethRepr {
        qkey: GSI_QKEY,
        src_qp: 1,
    });
    out.push((packet(h, &rtu.to_bytes().unwrap(), 9), 0x64, 1, 2, false));
    let mut h = bth(Opcode::CNP, 0x12, 0, false);
    h.bth.becn = true;
    out.push((packet(h, &[], 10), 0x81, 0x12, 0, false));
    out
}

fn write_pcap(name: &str, frames: &[Vec<u8>]) -> PathBuf {
    let path = std::env::temp_dir().join(format!("pisa-rdma-{}-{name}.pcap", std::process::id()));
    let file = std::fs::File::create(&path).expect("create pcap");
    let mut w = PcapWriter::new(file).expect("pcap header");
    for (i, f) in frames.iter().enumerate() {
        let pkt = PcapPacket::new(Duration::from_micros(i as u64), f.len() as u32, f);
        w.write_packet(&pkt).expect("write packet");
    }
    path
}

fn tool_works(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Parses the first occurrence of a field (tshark joins repeats with commas).
fn parse_num(s: &str) -> u64 {
    let s = s.split(',').next().unwrap_or("").trim();
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).unwrap_or(u64::MAX)
    } else {
        s.parse().unwrap_or(u64::MAX)
    }
}

#[test]
#[ignore = "needs tshark (apt-get install tshark)"]
fn tshark_decodes_our_frames() {
    assert!(
        tool_works("tshark", &["--version"]),
        "this test needs tshark (apt-get install tshark); install it or leave the test ignored"
    );
    let frames = sample_frames();
    let path = write_pcap(
        "tshark",
        &frames.iter().map(|f| f.0.clone()).collect::<Vec<_>>(),
    );
    let fields = [
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.bth.a",
        "infiniband.reth.va",
        "infiniband.reth.r_key",
        "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.immdt",
        "infiniband.atomicacketh.origremdt",
        "infiniband.deth.q_key",
        "infiniband.cm.req.localqpn",
        "infiniband.cm.req.startpsn",
        "infiniband.cm.req.serviceid",
        "infiniband.cm.req.ip_cm.sport",
        "infiniband.cm.req.ip_cm.sip4",
        "infiniband.cm.rep.localqpn",
        "infiniband.cm.rep.startpsn",
    ];
    let mut args: Vec<String> = vec![
        "-r".into(),
        path.display().to_string(),
        "--disable-protocol".into(),
        "tftp".into(),
        "-T".into(),
        "fields".into(),
        "-E".into(),
        "separator=|".into(),
    ];
    for f in fields {
        args.push("-e".into());
        args.push(f.into());
    }
    let out = Command::new("tshark")
        .args(&args)
        .output()
        .expect("run tshark");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    assert_eq!(rows.len(), frames.len(), "tshark output:\n{text}");
    for (row, (_, op, qp, psn, ack)) in rows.iter().zip(&frames) {
        assert_eq!(parse_num(row[0]), u64::from(*op), "opcode in {row:?}");
        assert_eq!(parse_num(row[1]), u64::from(*qp), "destqp in {row:?}");
        assert_eq!(parse_num(row[2]), u64::from(*psn), "psn in {row:?}");
        if *op != 0x81 {
            assert_eq!(parse_num(row[3]) == 1, *ack, "ackreq in {row:?}");
        }
    }
    // RDMA WRITE: RETH.
    assert_eq!(parse_num(rows[0][4]), 0x7f00_0000_1000);
    assert_eq!(parse_num(rows[0][5]), 0xabcd_ef01);
    assert_eq!(parse_num(rows[0][6]), 64);
    // ACK with 8 credits (code 6), MSN 1.
    assert_eq!(parse_num(rows[2][7]), 0x06);
    assert_eq!(parse_num(rows[2][8]), 1);
    // SEND with immediate.
    let imm = rows[3][9].split(',').next().unwrap_or("").replace(':', "");
    assert_eq!(imm, "deadbeef", "immdt in {:?}", rows[3]);
    // Atomic ACK original value.
    assert_eq!(parse_num(rows[5][10]), 41);
    // CM REQ over QP1, with the rdma_cm IP header.
    assert_eq!(parse_num(rows[6][11]), u64::from(GSI_QKEY));
    assert_eq!(parse_num(rows[6][12]), 0x12);
    assert_eq!(parse_num(rows[6][13]), 0xabcdef);
    assert_eq!(parse_num(rows[6][14]), 0x0106_4e21);
    assert_eq!(parse_num(rows[6][15]), 40000);
    assert_eq!(rows[6][16], "10.0.0.1");
    // CM REP.
    assert_eq!(parse_num(rows[7][17]), 0x34);
    assert_eq!(parse_num(rows[7][18]), 0x123456);
}

fn scapy_python() -> Option<&'static str> {
    ["python3", "/usr/bin/python3"]
        .into_iter()
        .find(|py| tool_works(py, &["-c", "import scapy.contrib.roce"]))
}

const SCAPY_CHECK: &str = r#"
import sys
from scapy.all import rdpcap, raw, Ether
from scapy.contrib.roce import BTH
ok = True
for i, p in enumerate(rdpcap(sys.argv[1])):
    got = p[BTH].icrc
    q = Ether(raw(p))
    q[BTH].icrc = None
    want = Ether(raw(q))[BTH].icrc
    print(i, hex(got), hex(want))
    ok = ok and got == want
sys.exit(0 if ok else 1)
"#;

fn run_scapy(py: &str, path: &Path) -> (bool, String) {
    let out = Command::new(py)
        .args(["-c", SCAPY_CHECK])
        .arg(path)
        .output()
        .expect("run python");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
#[ignore = "needs python3 with scapy (apt-get install python3-scapy)"]
fn scapy_recomputes_our_icrc() {
    let Some(py) = scapy_python() else {
        panic!(
            "this test needs python3 with scapy (apt-get install python3-scapy); \
             install it or leave the test ignored"
        );
    };
    let frames: Vec<Vec<u8>> = sample_frames().into_iter().map(|f| f.0).collect();
    let path = write_pcap("scapy", &frames);
    let (ok, text) = run_scapy(py, &path);
    let _ = std::fs::remove_file(&path);
    assert!(ok, "scapy disagrees:\n{text}");
    assert_eq!(text.lines().count(), frames.len(), "{text}");

    // The check itself can fail: a frame with a wrong ICRC must be caught.
    let mut bad = frames[0].clone();
    let n = bad.len();
    bad[n - 1] ^= 0xFF;
    let path = write_pcap("scapy-bad", &[bad]);
    let (ok, text) = run_scapy(py, &path);
    let _ = std::fs::remove_file(&path);
    assert!(!ok, "scapy accepted a corrupted ICRC:\n{text}");
}

#[test]
fn our_decoder_agrees_with_the_sample() {
    for (f, op, qp, psn, _) in sample_frames() {
        let d = rdma::decode::decode_frame(&f).expect("decode");
        assert!(d.icrc_ok);
        assert_eq!(d.headers.bth.opcode.value(), op);
        assert_eq!((d.headers.bth.dest_qp, d.headers.bth.psn), (qp, psn));
    }
}

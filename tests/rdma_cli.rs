//! `pisa rdma` without root: the in-process `--loopback` benchmarks print perftest-shaped
//! output, and `pisa rdma decode --check` accepts a capture of endpoint traffic (taken
//! with `rdma::host::CapturePort` over an in-memory link in virtual time) and rejects it
//! once a frame is corrupted.

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::Command;

use dataplane::mem::pair;
use dataplane::Nanos;
use rdma::host::{CapturePort, Host, VirtualNet};
use rdma::verbs::*;

const PISA: &str = env!("CARGO_BIN_EXE_pisa");

fn pisa(args: &[&str]) -> std::process::Output {
    Command::new(PISA)
        .arg("rdma")
        .args(args)
        .output()
        .expect("run pisa")
}

#[test]
fn loopback_latency_json_is_sane() {
    let out = pisa(&[
        "send-lat",
        "--loopback",
        "-n",
        "200",
        "-s",
        "100",
        "--report",
        "json",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(r["test"], "send-lat");
    assert_eq!(r["iterations"], 200);
    assert_eq!(r["bytes"], 100);
    let l = &r["latency"];
    let f = |k: &str| l[k].as_f64().unwrap_or(-1.0);
    assert!(f("min_us") > 0.0, "{r}");
    assert!(
        f("min_us") <= f("median_us") && f("median_us") <= f("p99_us"),
        "{r}"
    );
    assert!(f("p99_us") <= f("max_us"), "{r}");
}

#[test]
fn loopback_bandwidth_table_has_perftest_columns() {
    let out = pisa(&[
        "write-bw",
        "--loopback",
        "-n",
        "300",
        "-s",
        "2048",
        "--mtu",
        "512",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for col in [
        "#bytes",
        "#iterations",
        "BW peak[Gb/sec]",
        "BW average[Gb/sec]",
        "BW average[MB/sec]",
        "MsgRate[Mpps]",
    ] {
        assert!(text.contains(col), "missing {col}:\n{text}");
    }
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("2048"))
        .expect("result row");
    let nums: Vec<f64> = row
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(nums.len(), 6, "{row}");
    assert_eq!(nums[1], 300.0);
    assert!(nums[3] > 0.0 && nums[2] >= nums[3], "{row}");
    assert!(text.contains("Mtu             : 512[B]"));
}

#[test]
fn bad_usage_exits_with_2() {
    assert_eq!(pisa(&["write-bw"]).status.code(), Some(2));
    assert_eq!(
        pisa(&["read-lat", "--loopback", "--mtu", "1000"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        pisa(&["send-bw", "-d", "mem:x", "--ip", "10.0.0.1"])
            .status
            .code(),
        Some(2)
    );
}

fn capture_some_traffic(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("mem.pcap");
    let (a, b) = pair("a", "b");
    let a = CapturePort::new(Box::new(a), &path).unwrap();
    let ip = |i| Ipv4Addr::new(10, 9, 0, i);
    let mut eps = [1u8, 2].map(|i| Endpoint::new(EndpointConfig::new([2, 0, 0, 0, 9, i], ip(i))));
    let mut side = Vec::new();
    for ep in eps.iter_mut() {
        let pd = ep.alloc_pd();
        let cq = ep.create_cq(16);
        let mr = ep.reg_mr(pd, 8192, AccessFlags::ALL).unwrap();
        let qpn = ep
            .create_qp(QpInitAttr {
                pd,
                qp_type: QpType::Rc,
                send_cq: cq,
                recv_cq: cq,
                max_send_wr: 8,
                max_recv_wr: 8,
            })
            .unwrap();
        side.push((qpn, cq, mr));
    }
    let [ea, eb] = eps;
    let mut net = VirtualNet::new();
    let ha = net.add(Host::new(ea, Box::new(a)));
    let hb = net.add(Host::new(eb, Box::new(b)));
    net.host_mut(hb)
        .unwrap()
        .endpoint_mut()
        .listen(5000)
        .unwrap();
    net.host_mut(ha)
        .unwrap()
        .endpoint_mut()
        .connect(Instant::ZERO, side[0].0, IpAddr::V4(ip(2)), 5000, b"x")
        .unwrap();
    let mut conn = None;
    net.run_until(Nanos::from_secs(5), |h| {
        if let Some(CmEvent::ConnectRequest { conn: c, .. }) = h[hb].endpoint_mut().poll_cm_event()
        {
            conn = Some(c);
        }
        conn.is_some()
    })
    .unwrap();
    let now = rdma::host::instant(net.now());
    let server = net.host_mut(hb).unwrap().endpoint_mut();
    server.accept(now, conn.unwrap(), side[1].0, b"").unwrap();
    let mut up = false;
    net.run_until(Nanos::from_secs(5), |h| {
        up |= matches!(
            h[ha].endpoint_mut().poll_cm_event(),
            Some(CmEvent::Established { .. })
        );
        up
    })
    .unwrap();
    let (qpn, cq, mr) = side[0];
    let remote = side[1].2;
    let client = net.host_mut(ha).unwrap().endpoint_mut();
    let sge = Sge {
        addr: mr.addr,
        length: 5000,
        lkey: mr.lkey,
    };
    client
        .post_send(
            qpn,
            SendWr::new(
                1,
                SendOp::Write {
                    remote_addr: remote.addr,
                    rkey: remote.rkey,
                },
                sge,
            ),
        )
        .unwrap();
    let mut done = false;
    net.run_until(Nanos::from_secs(5), |h| {
        done |= !h[ha].endpoint_mut().poll_cq(cq, 4).unwrap().is_empty();
        done
    })
    .unwrap();
    drop(net);
    path
}

#[test]
fn decode_check_accepts_own_traffic_and_rejects_damage() {
    let dir = std::env::temp_dir().join(format!("pisa-rdma-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = capture_some_traffic(&dir);
    let out = pisa(&["decode", "--check", path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // CM REQ/REP/RTU + 5 WRITE packets (MTU 1024) + ACK(s); ARP frames are not listed.
    assert!(text.lines().count() >= 9, "{text}");
    assert!(
        !text.contains("BAD ICRC") && !text.contains("MALFORMED"),
        "{text}"
    );
    let bytes = std::fs::read(&path).unwrap();

    // Damage the last byte (ICRC) of the last frame: the check fails with status 1.
    let mut bad = bytes.clone();
    let n = bad.len();
    bad[n - 1] ^= 0x01;
    let bad_path = dir.join("bad.pcap");
    std::fs::write(&bad_path, &bad).unwrap();
    let out = pisa(&["decode", "--check", bad_path.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("BAD ICRC"));
    let _ = std::fs::remove_dir_all(&dir);
}

//! End-to-end tests of the live switch: the bundled four-host lab (renamed per test so tests
//! can run in parallel) with `pisa run` on AF_PACKET ports running l2l3.p4 with
//! `p4/programs/l2l3.tables.yaml` (the addressing the lab uses).
//!
//! They need root (network namespaces, veth), so they are `#[ignore]`d: run them as root with
//! `--include-ignored` (CI does); run without root they fail, saying why.
//! Everything a test creates (the lab, the pisa process, the control socket) is removed by
//! Drop guards, by name, also when an assertion fails.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dataplane::netns::in_netns;
use dataplane::{AfPacketPort, FrameBatch, Nanos, Port};

mod common;

use common::{
    lab_down_leaves_nothing, ns, ping, require_ping, require_root, start_on, start_with,
    two_pipe_tables, udp_h1_to_h3, LabGuard, Pisa,
};

/// Brings up the bundled lab as `name` (interfaces `<prefix>0..3`) and starts pisa on it
/// with AF_PACKET ports.
fn start(name: &str, prefix: &str, extra: &[&str]) -> (LabGuard, Pisa) {
    start_with(
        name,
        prefix,
        |_, ifname| format!("afpacket:{ifname}"),
        extra,
    )
}

/// An AF_PACKET socket on a host's eth0, opened inside its namespace.
fn host_port(lab: &LabGuard, host: &str) -> AfPacketPort {
    in_netns(&ns(lab, host), || AfPacketPort::open("eth0"))
        .expect("enter namespace")
        .expect("open eth0")
}

const TEST_ETHERTYPE: [u8; 2] = [0x88, 0xb5];

fn test_frame(dst: [u8; 6], src: [u8; 6], seq: u32) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&TEST_ETHERTYPE);
    f.extend_from_slice(&seq.to_be_bytes());
    f.resize(64, 0xab);
    f
}

/// Test frames (our ethertype) received on `p` within `wait`, by sequence number.
fn collect(p: &mut AfPacketPort, wait: Duration) -> Vec<u32> {
    let mut got = Vec::new();
    let mut b = FrameBatch::new(64);
    let t0 = Instant::now();
    while t0.elapsed() < wait {
        b.clear();
        match p.recv_batch(&mut b, Nanos::ZERO) {
            Ok(0) => {
                let _ = p.wait_readable(Duration::from_millis(20));
            }
            Ok(_) => {
                for f in b.iter() {
                    if f.data.len() >= 18 && f.data[12..14] == TEST_ETHERTYPE {
                        got.push(u32::from_be_bytes([
                            f.data[14], f.data[15], f.data[16], f.data[17],
                        ]));
                    }
                }
            }
            Err(e) => panic!("receive: {e}"),
        }
    }
    got
}

fn send_frames(p: &mut AfPacketPort, frames: impl Iterator<Item = Vec<u8>>) -> usize {
    let mut b = FrameBatch::new(16);
    let mut sent = 0;
    for f in frames {
        b.push(&f, Nanos::ZERO);
        if b.is_full() {
            sent += p.send_batch(&mut b, Nanos::ZERO).expect("send");
            // Pace a little so no socket buffer on the way overflows.
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    sent + p.send_batch(&mut b, Nanos::ZERO).expect("send")
}

const H1: [u8; 6] = [2, 0, 0, 0, 0, 1];
const H2: [u8; 6] = [2, 0, 0, 0, 0, 2];

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET; and ping (apt-get install iputils-ping)"]
fn ping_bridged_and_routed_and_udp_transfer() {
    require_root();
    ping_and_transfers("nsping", "nspg", &[], "inline I/O");
}

/// The same traffic with the other I/O mode (rx and tx threads per port).
#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET; and ping (apt-get install iputils-ping)"]
fn ping_and_udp_transfer_with_threaded_io() {
    require_root();
    ping_and_transfers("nsthr", "nsth", &["--io", "threads"], "threads I/O");
}

/// Pings (bridged and routed), a UDP transfer and (when installed) iperf3 through pisa started
/// with `extra` arguments; `mode` is the I/O mode pisa must report.
fn ping_and_transfers(name: &str, prefix: &str, extra: &[&str], mode: &str) {
    require_ping();
    let (lab, mut pisa) = start(name, prefix, extra);
    assert!(ping(&lab, "h1", "10.0.1.2", 3), "h1 -> h2 (bridged)");
    assert!(ping(&lab, "h1", "10.0.2.3", 3), "h1 -> h3 (routed)");
    assert!(ping(&lab, "h4", "10.0.1.2", 2), "h4 -> h2 (routed)");

    // UDP: a receiver on h3, a sender on h1, sockets opened inside the namespaces.
    let n = 500u32;
    let got = udp_h1_to_h3(&lab, n, 5001);
    assert_eq!(got, n as usize, "every UDP datagram arrives");

    // iperf3 (TCP) when installed.
    if Command::new("iperf3").arg("-v").output().is_ok() {
        let mut server = Command::new("ip")
            .args(["netns", "exec", &ns(&lab, "h3"), "iperf3", "-s", "-1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("iperf3 server");
        std::thread::sleep(Duration::from_millis(500));
        let client = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns(&lab, "h1"),
                "iperf3",
                "-c",
                "10.0.2.3",
                "-t",
                "1",
            ])
            .output()
            .expect("iperf3 client");
        let _ = server.kill();
        let _ = server.wait();
        assert!(
            client.status.success(),
            "iperf3: {}{}",
            String::from_utf8_lossy(&client.stdout),
            String::from_utf8_lossy(&client.stderr)
        );
    }
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "pisa exits cleanly: {err}");
    assert!(err.contains(mode), "pisa runs with {mode}: {err}");
    assert!(
        out.contains("ports:") && out.contains("SwitchIngress.ipv4_lpm"),
        "{out}"
    );
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn broadcast_floods_to_every_host_but_the_sender() {
    require_root();
    let (lab, _pisa) = start("nsflood", "nsfl", &[]);
    let mut ports: Vec<AfPacketPort> = ["h1", "h2", "h3", "h4"]
        .iter()
        .map(|h| host_port(&lab, h))
        .collect();
    let sent = send_frames(&mut ports[0], (0..5).map(|i| test_frame([0xff; 6], H1, i)));
    assert_eq!(sent, 5);
    for (i, h) in ["h2", "h3", "h4"].iter().enumerate() {
        let got = collect(&mut ports[i + 1], Duration::from_millis(1500));
        assert_eq!(got, vec![0, 1, 2, 3, 4], "{h} gets every broadcast once");
    }
    let back = collect(&mut ports[0], Duration::from_millis(300));
    assert!(back.is_empty(), "the sender gets nothing back: {back:?}");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn link_down_through_ctl_stops_forwarding_and_up_restores_it() {
    require_root();
    let (lab, pisa) = start("nslink", "nsln", &[]);
    let mut h1 = host_port(&lab, "h1");
    let mut h2 = host_port(&lab, "h2");
    send_frames(&mut h1, (0..3).map(|i| test_frame(H2, H1, i)));
    assert_eq!(collect(&mut h2, Duration::from_millis(1000)), vec![0, 1, 2]);

    let r = pisa.ctl(&["link-down", "1"]);
    assert_eq!(r["ok"], true, "{r}");
    send_frames(&mut h1, (10..13).map(|i| test_frame(H2, H1, i)));
    assert!(collect(&mut h2, Duration::from_millis(800)).is_empty());
    let r = pisa.ctl(&["link-get", "1"]);
    // Our 3 frames, plus whatever the hosts' kernels flooded meanwhile.
    assert!(r["faults_tx"]["down_dropped"].as_u64().unwrap() >= 3, "{r}");

    let r = pisa.ctl(&["link-up", "1"]);
    assert_eq!(r["ok"], true, "{r}");
    send_frames(&mut h1, (20..23).map(|i| test_frame(H2, H1, i)));
    assert_eq!(
        collect(&mut h2, Duration::from_millis(1000)),
        vec![20, 21, 22]
    );

    // Bad requests name the culprit and leave the switch running.
    let r = pisa.ctl(&["link-down", "9"]);
    assert_eq!(r["ok"], false);
    assert!(r["error"].as_str().unwrap().contains('9'), "{r}");
    let r = pisa.ctl(&["link-set", "1", "loss=2"]);
    assert!(r["error"].as_str().unwrap().contains('2'), "{r}");
    let r = pisa.ctl(&["table-add", "nope", "-a", "drop"]);
    assert!(r["error"].as_str().unwrap().contains("nope"), "{r}");
    let r = pisa.ctl(&["counter", "SwitchIngress.ingress_port_counter", "0"]);
    assert_eq!(r["ok"], true, "{r}");
    assert!(r["cells"][0]["packets"].as_u64().unwrap() >= 9, "{r}");

    // Table edits at run time: steer h2's MAC to port 2 (h3), then delete the entry (flood).
    let r = pisa.ctl(&[
        "table-delete",
        "mac_dst",
        "-k",
        "hdr.ethernet.dst_addr=02:00:00:00:00:02",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    let r = pisa.ctl(&[
        "table-add",
        "mac_dst",
        "-k",
        "hdr.ethernet.dst_addr=02:00:00:00:00:02",
        "-a",
        "set_port",
        "-p",
        "port=2",
    ]);
    assert_eq!(r["ok"], true, "{r}");
    let mut h3 = host_port(&lab, "h3");
    send_frames(&mut h1, (30..32).map(|i| test_frame(H2, H1, i)));
    assert_eq!(collect(&mut h3, Duration::from_millis(1000)), vec![30, 31]);
    assert!(collect(&mut h2, Duration::from_millis(200)).is_empty());
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn loss_injector_rate_matches_the_setting() {
    require_root();
    let (lab, pisa) = start("nsloss", "nsls", &["--link", "1=tx.loss=0.2,seed=11"]);
    let mut h1 = host_port(&lab, "h1");
    let mut h2 = host_port(&lab, "h2");
    let n = 2000u32;
    let receiver = std::thread::spawn(move || collect(&mut h2, Duration::from_secs(8)));
    let sent = send_frames(&mut h1, (0..n).map(|i| test_frame(H2, H1, i)));
    assert_eq!(sent, n as usize);
    let got = receiver.join().unwrap();
    let r = pisa.ctl(&["link-get", "1"]);
    let lost = r["faults_tx"]["lost"].as_u64().unwrap();
    let st = pisa.ctl(&["stats"]);
    let p0 = &st["ports"][0];
    assert!(p0["rx"].as_u64().unwrap() >= u64::from(n), "{st}");
    // Nothing but the injector lost frames: the frames missing at h2 are all counted as
    // injected losses (which may also include a few of the hosts' own flooded frames).
    let missing = u64::from(n) - got.len() as u64;
    assert!(
        (missing..=missing + 20).contains(&lost),
        "missing {missing}, injector lost {lost}: {st}"
    );
    // Binomial(2000, 0.2): mean 400, sd ≈ 17.9; accept 5 sd either way.
    assert!((310..=490).contains(&missing), "lost {missing} of {n}");
    let mut sorted = got.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), got.len(), "no duplicates");
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET"]
fn sigterm_stops_cleanly_and_leaves_nothing_behind() {
    require_root();
    // A free port for the metrics endpoint (released just before pisa takes it).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let (lab, mut pisa) = start("nsterm", "nstm", &["--metrics", &addr]);
    let pid = pisa.child.as_ref().unwrap().id();
    let mut h1 = host_port(&lab, "h1");
    send_frames(&mut h1, (0..4).map(|i| test_frame(H2, H1, i)));
    std::thread::sleep(Duration::from_millis(300));
    let mut c = std::net::TcpStream::connect(&addr).expect("metrics endpoint");
    std::io::Write::write_all(&mut c, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut page = String::new();
    c.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    for want in [
        "pisa_port_rx_packets_total{port=\"0\"",
        "pisa_port_drops_total{port=\"1\"",
        "pisa_rx_batch_size_bucket{port=\"0\",le=\"+Inf\"}",
        "pisa_switch_drops_total{reason=\"no_destination\"}",
        "pisa_queue_enqueued_total{port=\"1\"}",
        "pisa_queue_ecn_marked_total{port=\"1\"} 0",
    ] {
        assert!(page.contains(want), "metrics lack {want}: {page}");
    }
    let ctl = pisa.ctl.clone();
    let (ok, out, err) = pisa.terminate();
    assert!(ok, "exit status: {err}");
    assert!(err.contains("draining"), "{err}");
    assert!(out.contains("ports:") && out.contains("queues:"), "{out}");
    assert!(!ctl.exists(), "control socket removed");
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "no pisa process left"
    );
    // The switch left the lab's interfaces as they were; lab down removes them all.
    lab_down_leaves_nothing(lab);
}

/// Removes a file on drop.
struct FileGuard(std::path::PathBuf);

impl Drop for FileGuard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
#[ignore = "needs root: network namespaces, veth pairs and AF_PACKET; and ping (apt-get install iputils-ping)"]
fn two_pipes_run_one_thread_each_and_traffic_crosses_between_them() {
    require_root();
    require_ping();
    // h1, h2 on pipe 0 (device ports 0, 1); h3, h4 on pipe 1 (128, 129).
    let tables = FileGuard(std::env::temp_dir().join(format!(
        "pisa-test-nspipes-{}.tables.yaml",
        std::process::id()
    )));
    two_pipe_tables(&tables.0);
    let (lab, mut pisa) = start_on(
        "nspipes",
        "nspp",
        [0, 1, 128, 129],
        Some(&tables.0),
        |_, ifname| format!("afpacket:{ifname}"),
        &["--pipes", "2"],
    );
    assert!(ping(&lab, "h1", "10.0.1.2", 2), "h1 -> h2 (pipe 0 only)");
    assert!(
        ping(&lab, "h1", "10.0.2.3", 3),
        "h1 -> h3 (routed, pipe 0 -> 1)"
    );
    assert!(
        ping(&lab, "h4", "10.0.1.2", 2),
        "h4 -> h2 (routed, pipe 1 -> 0)"
    );

    // UDP h1 -> h3 across the pipes.
    let n = 500u32;
    assert_eq!(
        udp_h1_to_h3(&lab, n, 5002),
        n as usize,
        "every UDP datagram crosses from pipe 0 to pipe 1"
    );

    // Two pipe threads, copies crossing both ways, nothing dropped between them.
    let st = pisa.ctl(&["stats"]);
    let threads = st["threads"].as_array().expect("threads");
    assert_eq!(threads.len(), 2, "{st}");
    for (i, t) in threads.iter().enumerate() {
        assert_eq!(t["pipe"], i as u64, "{st}");
        assert!(t["frames"].as_u64().unwrap() > 0, "{st}");
        assert!(t["copies_out"].as_u64().unwrap() > 0, "{st}");
        assert_eq!(t["cross_full"], 0, "{st}");
    }
    // Counters are per pipe: port 128's ingress counts on pipe 1 only.
    let r = pisa.ctl(&["counter", "SwitchIngress.ingress_port_counter", "128"]);
    let cells = r["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 2, "{r}");
    assert_eq!(cells[0]["pipe"], 0);
    assert_eq!(cells[0]["packets"], 0, "{r}");
    assert_eq!(cells[1]["pipe"], 1);
    assert!(cells[1]["packets"].as_u64().unwrap() >= 3, "{r}");
    let r = pisa.ctl(&[
        "counter",
        "SwitchEgress.egress_port_counter",
        "128",
        "--pipe",
        "1",
    ]);
    assert_eq!(r["cells"].as_array().unwrap().len(), 1, "{r}");
    assert!(
        r["cells"][0]["packets"].as_u64().unwrap() >= n as u64,
        "{r}"
    );

    let (ok, out, err) = pisa.terminate();
    assert!(ok, "pisa exits cleanly: {err}");
    assert!(
        err.contains("one thread per pipe (pipe 0, pipe 1)"),
        "{err}"
    );
    assert!(
        out.contains("pipe 0 thread:") && out.contains("pipe 1 thread:"),
        "{out}"
    );
    assert!(
        out.contains("egress_port_counter[128] pipe 1:"),
        "the report covers pipe 1: {out}"
    );
    lab_down_leaves_nothing(lab);
}

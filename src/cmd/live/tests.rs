//! Tests of the live switch: argument parsing, both threading modes against each other,
//! control answers, metrics and the report.

use super::*;
use dataplane::switch::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use dataplane::runtime::{Pipeline, PortSetup, RuntimeConfig, RuntimeStats};
use dataplane::{Clock, Nanos};
use pipeline::api::PipeSel;
use pipeline::switch::{InFrame, Switch, TmCopy};

use super::PortArg;
use crate::cmd::TargetArg;

fn compile() -> CompileArgs {
    CompileArgs {
        target: TargetArg::Tofino1,
        include: Vec::new(),
        define: Vec::new(),
        disable_parse_depth_limit: false,
    }
}

#[test]
fn device_ports_parse_as_numbers_or_pipe_slash_port() {
    assert_eq!(parse_devport("5"), Ok(5));
    assert_eq!(parse_devport("1/4"), Ok(132));
    assert_eq!(parse_devport("3/127"), Ok(511));
    assert!(parse_devport("4/0").unwrap_err().contains("out of range"));
    assert!(parse_devport("0/128").unwrap_err().contains("out of range"));
    assert!(parse_devport("512").unwrap_err().contains("512"));
    assert!(parse_devport("x").unwrap_err().contains("\"x\""));
    let p: PortArg = "1/2=afpacket:veth9".parse().unwrap();
    assert_eq!(p.devport, 130);
    assert_eq!(p.spec.to_string(), "afpacket:veth9");
    assert!("0afpacket:x"
        .parse::<PortArg>()
        .unwrap_err()
        .contains("DEVPORT=SPEC"));
    assert!("0=bogus:x"
        .parse::<PortArg>()
        .unwrap_err()
        .contains("bogus"));
    let l: LinkArg = "3=rate=10G,loss=0.5".parse().unwrap();
    assert_eq!(l.devport, 3);
    assert_eq!(l.config.tx.rate_bps, 10_000_000_000);
    assert_eq!(l.config.rx.faults.loss, 0.5);
    assert!("3=loss=7".parse::<LinkArg>().unwrap_err().contains('7'));
}

#[test]
fn ports_must_sit_on_existing_pipes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prog = root.join("p4/programs/l2l3.p4");
    let ports = vec![
        "0=mem:a".parse::<PortArg>().unwrap(),
        "1/0=mem:b".parse::<PortArg>().unwrap(),
    ];
    let e = build_switch(&prog, None, &compile(), Some(1), &ports)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("device port 128") && e.contains("--pipes 2"),
        "{e}"
    );
    let sw = build_switch(&prog, None, &compile(), Some(2), &ports).unwrap();
    assert_eq!(sw.num_pipes(), 2);
    // Without --pipes, the program's own pipe count (TNA `Switch(pipe)`: every pipe).
    let sw = build_switch(&prog, None, &compile(), None, &ports).unwrap();
    assert_eq!(sw.num_pipes(), 4);
}

#[test]
fn the_switch_pipeline_forwards_bridged_frames_and_reports() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let sw = build_switch(
        &root.join("p4/programs/l2l3.p4"),
        Some(&root.join("p4/programs/l2l3.tables.yaml")),
        &compile(),
        None,
        &[],
    )
    .unwrap();
    let mut p = SwitchPipeline { sw };
    let mut f = vec![0u8; 64];
    f[..6].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    let mut out = Vec::new();
    p.process(0, &f, Nanos(1), &mut |port, bytes| out.push((port, bytes)));
    assert_eq!(
        out,
        vec![(1, f.clone())],
        "h1 -> h2 is switched to port 1 unchanged"
    );
    let st = RuntimeStats::default();
    let r = report(
        &[Part {
            sw: &p.sw,
            owns: ALL_PIPES,
        }],
        &st,
    );
    assert!(r.contains("SwitchIngress.mac_dst: 4 entries"), "{r}");
    assert!(
        r.contains("ingress_port_counter[0] pipe 0: 1 packets"),
        "{r}"
    );
}

/// l2l3.tables.yaml with hosts h3 and h4 moved to pipe 1 (device ports 128 and 129).
fn two_pipe_tables(test: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("p4/programs/l2l3.tables.yaml")).unwrap();
    let text = text
        .replace("port: 2 }", "port: 128 }")
        .replace("port: 3 }", "port: 129 }")
        .replace("ports: [0, 1, 2, 3]", "ports: [0, 1, 128, 129]")
        .replace("{ xid: 2, ports: [2] }", "{ xid: 128, ports: [128] }")
        .replace("{ xid: 3, ports: [3] }", "{ xid: 129, ports: [129] }");
    assert!(text.contains("port: 129 }") && text.contains("xid: 129"));
    let path = std::env::temp_dir().join(format!(
        "pisa-live-{test}-{}.tables.yaml",
        std::process::id()
    ));
    std::fs::write(&path, text).unwrap();
    path
}

fn switches(test: &str, count: usize) -> Vec<Switch> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tables = two_pipe_tables(test);
    let v = build_switches(
        &root.join("p4/programs/l2l3.p4"),
        Some(&tables),
        &compile(),
        Some(2),
        &[],
        count,
        None,
    )
    .unwrap();
    let _ = std::fs::remove_file(tables);
    v
}

fn mac(n: u8) -> [u8; 6] {
    [2, 0, 0, 0, 0, n]
}

/// A 64-byte L2 frame (ethertype 0x88b5) with a sequence number.
fn l2(dst: [u8; 6], src: [u8; 6], seq: u16) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&[0x88, 0xb5]);
    f[14..16].copy_from_slice(&seq.to_be_bytes());
    f
}

/// An IPv4/UDP frame to the router MAC, for the routed path.
fn routed(src: [u8; 6], sip: [u8; 4], dip: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[..6].copy_from_slice(&mac(0xfe));
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let ip = &mut f[14..34];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&50u16.to_be_bytes());
    ip[8] = 64;
    ip[9] = 17;
    ip[12..16].copy_from_slice(&sip);
    ip[16..20].copy_from_slice(&dip);
    let mut sum = 0u32;
    for c in ip.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    ip[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    f[34..36].copy_from_slice(&5000u16.to_be_bytes());
    f[36..38].copy_from_slice(&5001u16.to_be_bytes());
    f[38..40].copy_from_slice(&30u16.to_be_bytes());
    f
}

/// Bridged within and across pipes, flooded to both pipes, routed across pipes.
fn mixed_traffic() -> Vec<(u16, Vec<u8>)> {
    let mut v = Vec::new();
    for i in 0..8u16 {
        v.push((0, l2(mac(2), mac(1), i)));
        v.push((0, l2(mac(3), mac(1), i)));
        v.push((128, l2(mac(1), mac(3), i)));
        v.push((129, l2(mac(0x77), mac(4), i)));
        v.push((1, routed(mac(2), [10, 0, 1, 2], [10, 0, 3, 4])));
    }
    v
}

#[test]
fn the_split_path_forwards_exactly_like_process() {
    let mut sws = switches("split", 2);
    let (mut split, mut whole) = (sws.pop().unwrap(), sws.pop().unwrap());
    let mut want = Vec::new();
    let mut got = Vec::new();
    for (i, (port, bytes)) in mixed_traffic().iter().enumerate() {
        let frame = InFrame {
            port: *port,
            bytes,
            ts: 1000 * i as u64,
        };
        whole.process(frame, &mut |o| want.push(o));
        let mut copies = Vec::new();
        split.ingress_to_tm(frame, &mut |o| got.push(o), &mut copies);
        let mut queue: std::collections::VecDeque<TmCopy> = copies.drain(..).collect();
        while let Some(c) = queue.pop_front() {
            split.tm_to_egress(c, &mut |o| got.push(o), &mut copies);
            queue.extend(copies.drain(..));
        }
    }
    assert_eq!(got, want, "same frames, same order, same times");
    assert_eq!(split.stats(), whole.stats());
    // Flooded copies reached both pipes; routed frames crossed to pipe 1.
    let ports: std::collections::BTreeSet<u16> = got.iter().map(|o| o.port).collect();
    assert_eq!(ports, [0, 1, 128, 129].into_iter().collect());
    for (name, i) in [("ingress_port_counter", 0), ("egress_port_counter", 129)] {
        assert_eq!(
            split.counter_read(PipeSel::All, name, i).unwrap(),
            whole.counter_read(PipeSel::All, name, i).unwrap()
        );
    }
}

struct Hosts {
    ports: Vec<dataplane::MemPort>,
}

impl Hosts {
    fn send(&mut self, i: usize, frames: &[Vec<u8>]) {
        let mut b = dataplane::FrameBatch::new(64);
        for f in frames {
            if !b.push(f, Nanos::ZERO) {
                dataplane::Port::send_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap();
                b.push(f, Nanos::ZERO);
            }
        }
        dataplane::Port::send_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap();
    }

    /// Frames received on host `i` until `want` came or 5 s passed.
    fn recv(&mut self, i: usize, want: usize) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let mut b = dataplane::FrameBatch::new(64);
        let t0 = std::time::Instant::now();
        while got.len() < want && t0.elapsed() < Duration::from_secs(5) {
            b.clear();
            if dataplane::Port::recv_batch(&mut self.ports[i], &mut b, Nanos::ZERO).unwrap() == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            got.extend(b.iter().map(|f| f.data.to_vec()));
        }
        got
    }
}

fn start_live(test: &str, per_pipe: bool) -> (SwitchRuntime, Hosts) {
    let devports = [0u16, 1, 128, 129];
    let mut setups = Vec::new();
    let mut hosts = Vec::new();
    for d in devports {
        let (sw, host) =
            dataplane::mem::pair_with_capacity(&format!("sw{d}"), &format!("h{d}"), 4096);
        setups.push(PortSetup {
            devport: d,
            port: Box::new(sw),
            link: LinkConfig::default(),
        });
        hosts.push(host);
    }
    let thread_pipes = [0u16, 1];
    let count = if per_pipe { 2 } else { 1 };
    let clock: Arc<dyn Clock> = Arc::new(dataplane::VirtualClock::new());
    let cfg = RuntimeConfig {
        idle_wait: Duration::from_millis(2),
        ..RuntimeConfig::default()
    };
    let rt = SwitchRuntime::start(
        switches(test, count),
        per_pipe,
        &thread_pipes,
        setups,
        clock,
        cfg,
    )
    .unwrap();
    (rt, Hosts { ports: hosts })
}

fn ctl_ok(h: &SwitchHandle, line: &str) -> serde_json::Value {
    let r = control::server::handle_line(h, line);
    assert_eq!(r["ok"], true, "{line} -> {r}");
    r
}

/// Both threading modes forward the same traffic and answer `pisa ctl` alike.
fn live_two_pipes(per_pipe: bool) {
    let test = if per_pipe { "live-pipes" } else { "live-one" };
    let (rt, mut hosts) = start_live(test, per_pipe);
    let h = rt.handle();
    // h1 (pipe 0) -> h3 (pipe 1), unicast across pipes; flood from h1 reaches h2, h3, h4.
    let uni: Vec<Vec<u8>> = (0..50).map(|i| l2(mac(3), mac(1), i)).collect();
    hosts.send(0, &uni);
    let got = hosts.recv(2, 50);
    assert_eq!(got, uni, "in order, unchanged");
    let flood: Vec<Vec<u8>> = (0..10).map(|i| l2(mac(0x77), mac(1), i)).collect();
    hosts.send(0, &flood);
    assert_eq!(hosts.recv(1, 10).len(), 10);
    assert_eq!(hosts.recv(2, 10).len(), 10);
    assert_eq!(hosts.recv(3, 10).len(), 10);
    // Counters per pipe: ingress on pipe 0 only, egress to port 128 on pipe 1 only.
    let r = ctl_ok(
        &h,
        r#"{"op":"counter_read","name":"ingress_port_counter","index":0}"#,
    );
    assert_eq!(r["cells"][0]["pipe"], 0);
    assert_eq!(r["cells"][0]["packets"], 60);
    assert_eq!(r["cells"][1]["pipe"], 1);
    assert_eq!(r["cells"][1]["packets"], 0);
    let r = ctl_ok(
        &h,
        r#"{"op":"counter_read","name":"egress_port_counter","index":128,"pipe":1}"#,
    );
    assert_eq!(r["cells"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["cells"][0]["packets"], 60);
    let r = control::server::handle_line(
        &h,
        r#"{"op":"counter_read","name":"ingress_port_counter","index":0,"pipe":3}"#,
    );
    assert_eq!(r["ok"], false, "{r}");
    assert!(r["error"].as_str().unwrap().contains("pipe 3"), "{r}");
    // A new entry reaches both pipes: frames for it from pipe 0 and pipe 1 both arrive.
    ctl_ok(
        &h,
        r#"{"op":"table_add","table":"mac_dst","key":{"hdr.ethernet.dst_addr":"02:00:00:00:00:99"},"action":"set_port","params":{"port":129}}"#,
    );
    hosts.send(0, &[l2(mac(0x99), mac(1), 1)]);
    hosts.send(2, &[l2(mac(0x99), mac(3), 2)]);
    let got = hosts.recv(3, 2);
    assert_eq!(got.len(), 2);
    assert!(hosts.recv(1, 1).is_empty(), "not flooded any more");
    let r = ctl_ok(&h, r#"{"op":"stats"}"#);
    let threads = r["threads"].as_array().unwrap();
    assert_eq!(threads.len(), if per_pipe { 2 } else { 1 });
    assert!(r["switch_drops"].as_object().unwrap().is_empty(), "{r}");
    let metrics = render_metrics(&h);
    assert!(
        metrics.contains("pisa_queue_enqueued_total{port=\"129\"} 12"),
        "{metrics}"
    );
    assert!(metrics.contains("pisa_queue_enqueued_total{port=\"0\"} 0"));
    let (parts, st) = rt.stop().unwrap();
    assert_eq!(st.processed, 62);
    let parts: Vec<Part> = parts
        .iter()
        .map(|(sw, owns)| Part { sw, owns: *owns })
        .collect();
    let rep = report(&parts, &st);
    assert!(
        rep.contains("ingress_port_counter[0] pipe 0: 61 packets"),
        "{rep}"
    );
    assert!(
        rep.contains("ingress_port_counter[128] pipe 1: 1 packets"),
        "{rep}"
    );
    assert!(
        rep.contains("egress_port_counter[129] pipe 1: 12 packets"),
        "{rep}"
    );
    assert!(rep.contains("SwitchIngress.mac_dst: 5 entries"), "{rep}");
    if per_pipe {
        assert!(rep.contains("pipe 0 thread: 61 frame(s)"), "{rep}");
        assert!(rep.contains("pipe 1 thread: 1 frame(s)"), "{rep}");
        assert_eq!(st.cross_full(), 0);
    } else {
        assert!(rep.contains("pipeline thread: 62 frame(s)"), "{rep}");
    }
}

#[test]
fn one_thread_per_pipe_forwards_across_pipes_and_answers_ctl_per_pipe() {
    live_two_pipes(true);
}

#[test]
fn one_pipeline_thread_gives_the_same_answers() {
    live_two_pipes(false);
}

#[test]
fn pipe_threads_follow_the_ports() {
    assert!(PipeThreads::Auto.per_pipe(&[0, 128]));
    assert!(!PipeThreads::Auto.per_pipe(&[0, 1, 2]));
    assert!(!PipeThreads::One.per_pipe(&[0, 128]));
    assert!(PipeThreads::PerPipe.per_pipe(&[0, 1]));
    assert_eq!(PipeThreads::from_str("1", false), Ok(PipeThreads::One));
    assert_eq!(
        PipeThreads::from_str("per-pipe", false),
        Ok(PipeThreads::PerPipe)
    );
    assert_eq!(ownership(&[0, 1]), vec![(0, 0b1101), (1, 0b0010)]);
    assert_eq!(ownership(&[2]), vec![(2, 0b1111)]);
}

/// Pipeline capacity (frames through ingress per second) with one pipeline thread and
/// with one thread per pipe, on four in-memory ports (two per pipe), for traffic that
/// stays within each pipe and traffic that crosses between them. Two senders blast as fast
/// as they can; the excess is dropped at the ingress channels, so `processed` over the
/// window is what the pipeline thread(s) keep up with. Run:
/// `cargo test --release -p pisa --bin pisa bench_pipe_threads -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, not a check: run it with --ignored --nocapture in release"]
fn bench_pipe_threads() {
    let secs = 1.0;
    for across in [false, true] {
        let mut rates: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..5 {
            for (m, per_pipe) in [false, true].into_iter().enumerate() {
                rates[m].push(measure(per_pipe, across, secs));
            }
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() / 2]
        };
        let one = median(&mut rates[0]);
        let per = median(&mut rates[1]);
        println!(
            "{}: one pipeline thread {:.3} Mpps, one thread per pipe {:.3} Mpps, ratio {:.2} \
             (median of 5 runs of {secs} s; {} cores)",
            if across {
                "across pipes (0 <-> 128)"
            } else {
                "within pipes (0 -> 1, 128 -> 129)"
            },
            one / 1e6,
            per / 1e6,
            per / one,
            std::thread::available_parallelism().map_or(0, |n| n.get())
        );
    }
}

fn measure(per_pipe: bool, across: bool, secs: f64) -> f64 {
    use std::sync::atomic::AtomicBool;
    let (rt, hosts) = start_live("bench", per_pipe);
    let h = rt.handle();
    let stop = Arc::new(AtomicBool::new(false));
    // (host index, frame it sends): h1 on port 0, h3 on port 128.
    let flows = if across {
        [(0, l2(mac(3), mac(1), 0)), (2, l2(mac(1), mac(3), 0))]
    } else {
        [(0, l2(mac(2), mac(1), 0)), (2, l2(mac(4), mac(3), 0))]
    };
    let mut threads = Vec::new();
    for (i, mut port) in hosts.ports.into_iter().enumerate() {
        let frame = flows.iter().find(|(h, _)| *h == i).map(|(_, f)| f.clone());
        let stop = stop.clone();
        threads.push(std::thread::spawn(move || {
            let mut b = dataplane::FrameBatch::new(32);
            while !stop.load(Ordering::Relaxed) {
                if let Some(f) = &frame {
                    b.clear();
                    while b.push(f, Nanos::ZERO) {}
                    let _ = dataplane::Port::send_batch(&mut port, &mut b, Nanos::ZERO);
                }
                b.clear();
                let got = dataplane::Port::recv_batch(&mut port, &mut b, Nanos::ZERO);
                if frame.is_none() && got.unwrap_or(0) == 0 {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(200));
    let p0 = h.stats().processed;
    let t0 = std::time::Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let p1 = h.stats().processed;
    let dt = t0.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    drop(rt.stop());
    (p1 - p0) as f64 / dt
}

/// `meter_read` over the control socket: a meter's byte count adjustment per pipe, and a
/// cell's rates as a `meters:` item applied over the same socket set them (unconfigured cells
/// read `null`); a direct meter reads by its table; unknown names are errors.
#[test]
fn meters_read_back_over_the_control_socket() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("p4/tests/fidelity/meter_byte_adjust.p4");
    let sws = build_switches(&path, None, &compile(), Some(1), &[], 1, None).unwrap();
    let (port, _host) = dataplane::mem::pair_with_capacity("msw", "mh", 16);
    let setups = vec![PortSetup {
        devport: 1,
        port: Box::new(port),
        link: LinkConfig::default(),
    }];
    let clock: Arc<dyn Clock> = Arc::new(dataplane::VirtualClock::new());
    let rt =
        SwitchRuntime::start(sws, false, &[0], setups, clock, RuntimeConfig::default()).unwrap();
    let h = rt.handle();
    let yaml = "meters:\\n  - { meter: by_index, index: 3, cir: 1000, pir: 2000, cbs: 1500, pbs: 3000, byte_count_adjust: -12 }\\n  - { table: classify, byte_count_adjust: 20 }\\n";
    ctl_ok(&h, &format!(r#"{{"op":"apply","yaml":"{yaml}"}}"#));
    let r = ctl_ok(&h, r#"{"op":"meter_read","name":"by_index","index":3}"#);
    assert_eq!(r["cells"][0]["byte_count_adjust"], -12, "{r}");
    let rates = &r["cells"][0]["rates"];
    assert_eq!((&rates["cir"], &rates["pir"]), (&1000.into(), &2000.into()));
    assert_eq!((&rates["cbs"], &rates["pbs"]), (&1500.into(), &3000.into()));
    let r = ctl_ok(&h, r#"{"op":"meter_read","name":"by_index","index":4}"#);
    assert!(r["cells"][0]["rates"].is_null(), "{r}");
    let r = ctl_ok(&h, r#"{"op":"meter_read","name":"Ingress.classify"}"#);
    assert_eq!(r["cells"][0]["byte_count_adjust"], 20, "{r}");
    let r = control::server::handle_line(&h, r#"{"op":"meter_read","name":"nothing"}"#);
    assert_eq!(r["ok"], false, "{r}");
    assert!(r["error"].as_str().unwrap().contains("nothing"), "{r}");
    let r = control::server::handle_line(&h, r#"{"op":"meter_read","name":"by_index","index":16}"#);
    assert_eq!(r["ok"], false, "{r}");
    rt.stop().unwrap();
}

//! Runtime tests on in-memory links with a virtual clock and small test pipelines.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a test body once per I/O mode, as `NAME::threads` and `NAME::inline`.
macro_rules! both_modes {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn threads() {
                super::$name(super::IoMode::Threads);
            }
            #[test]
            fn inline() {
                super::$name(super::IoMode::Inline);
            }
        }
    )*};
}

use super::*;
use crate::mem::{pair_with_capacity, MemPort};
use crate::time::VirtualClock;

/// Port 0 ↔ port 1 ("a wire"), port 2 floods to 0 and 1; counts frames seen.
struct Wire {
    seen: u64,
}

impl Pipeline for Wire {
    fn process(&mut self, port: u16, data: &[u8], _ts: Nanos, out: &mut dyn FnMut(u16, Vec<u8>)) {
        self.seen += 1;
        match port {
            0 => out(1, data.to_vec()),
            1 => out(0, data.to_vec()),
            2 => {
                out(0, data.to_vec());
                out(1, data.to_vec());
            }
            // Port 3 sends to a device port nobody attached.
            _ => out(100, data.to_vec()),
        }
    }
}

struct Setup {
    rt: Runtime<Wire>,
    hosts: Vec<MemPort>,
}

fn setup(n: u16, link: LinkConfig, io: IoMode) -> Setup {
    let mut ports = Vec::new();
    let mut hosts = Vec::new();
    for i in 0..n {
        let (sw, host) = pair_with_capacity(&format!("sw{i}"), &format!("h{i}"), 1 << 16);
        ports.push(PortSetup {
            devport: i,
            port: Box::new(sw),
            link: link.clone(),
        });
        hosts.push(host);
    }
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::new());
    let cfg = RuntimeConfig {
        idle_wait: Duration::from_millis(2),
        io,
        ..RuntimeConfig::default()
    };
    let rt = Runtime::start(Wire { seen: 0 }, ports, clock, cfg).unwrap();
    Setup { rt, hosts }
}

fn send(host: &mut MemPort, n: u16) {
    send_to(host, 0, n);
}

/// Sends `n` 64-byte frames numbered 0.. (bytes 14..16) with `dst` in their first two bytes.
pub(super) fn send_to(host: &mut MemPort, dst: u16, n: u16) {
    let mut b = FrameBatch::new(64);
    for i in 0..n {
        let mut f = vec![0u8; 64];
        f[..2].copy_from_slice(&dst.to_be_bytes());
        f[14..16].copy_from_slice(&i.to_be_bytes());
        if !b.push(&f, Nanos::ZERO) {
            host.send_batch(&mut b, Nanos::ZERO).unwrap();
            b.push(&f, Nanos::ZERO);
        }
    }
    host.send_batch(&mut b, Nanos::ZERO).unwrap();
}

/// Receives until `want` frames came or 5 s of real time passed; their sequence numbers.
pub(super) fn recv(host: &mut MemPort, want: usize) -> Vec<u16> {
    let mut got = Vec::new();
    let mut b = FrameBatch::new(64);
    let t0 = Instant::now();
    while got.len() < want && t0.elapsed() < Duration::from_secs(5) {
        b.clear();
        if host.recv_batch(&mut b, Nanos::ZERO).unwrap() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        got.extend(
            b.iter()
                .map(|f| u16::from_be_bytes([f.data[14], f.data[15]])),
        );
    }
    got
}

fn forwards_in_order_and_stops_with_stats(mode: IoMode) {
    let mut s = setup(2, LinkConfig::default(), mode);
    send(&mut s.hosts[0], 500);
    let got = recv(&mut s.hosts[1], 500);
    assert_eq!(got, (0..500).collect::<Vec<u16>>(), "every frame, in order");
    send(&mut s.hosts[1], 3);
    assert_eq!(recv(&mut s.hosts[0], 3), vec![0, 1, 2]);
    let (p, st) = s.rt.stop().unwrap();
    assert_eq!(p.seen, 503);
    assert_eq!(st.processed, 503);
    assert_eq!(st.ports[0].port.rx_packets, 500);
    assert_eq!(st.ports[1].port.tx_packets, 500);
    assert_eq!(st.ports[1].port.rx_packets, 3);
    let batches: u64 = st.ports[0].runtime.batch_sizes.iter().sum();
    assert_eq!(batches, st.ports[0].runtime.rx_batches);
    assert!(batches > 0);
}

fn flood_and_unattached_port_are_counted(mode: IoMode) {
    let mut s = setup(4, LinkConfig::default(), mode);
    send(&mut s.hosts[2], 10);
    assert_eq!(recv(&mut s.hosts[0], 10).len(), 10);
    assert_eq!(recv(&mut s.hosts[1], 10).len(), 10);
    send(&mut s.hosts[3], 7);
    let h = s.rt.handle();
    let t0 = Instant::now();
    while h.stats().no_port < 7 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(h.stats().no_port, 7);
    let (_, st) = s.rt.stop().unwrap();
    assert_eq!(st.ports[2].port.tx_packets, 0, "no echo to the sender");
    assert_eq!(st.ports[3].port.tx_packets, 0);
}

fn link_down_and_loss_change_at_run_time(mode: IoMode) {
    let mut s = setup(2, LinkConfig::default(), mode);
    let h = s.rt.handle();
    let link = h.link(1).unwrap();
    link.set_link_up(false);
    send(&mut s.hosts[0], 20);
    // The pipeline processes them, the down link drops them.
    let t0 = Instant::now();
    while link.tx_stats().down_dropped < 20 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(link.tx_stats().down_dropped, 20);
    link.set_link_up(true);
    send(&mut s.hosts[0], 5);
    assert_eq!(recv(&mut s.hosts[1], 5), vec![0, 1, 2, 3, 4]);

    link.set_config("loss=0.25,seed=9".parse().unwrap())
        .unwrap();
    send(&mut s.hosts[0], 4000);
    let t0 = Instant::now();
    let mut got = 0usize;
    while t0.elapsed() < Duration::from_secs(5) {
        got += recv(&mut s.hosts[1], 4000 - got).len();
        if got as u64 + link.tx_stats().lost >= 4000 {
            break;
        }
    }
    let lost = link.tx_stats().lost;
    assert_eq!(
        got as u64 + lost,
        4000,
        "every frame delivered or counted lost"
    );
    // 4000 draws at p = 0.25: mean 1000, sd ≈ 27; 5 sd either way.
    assert!((865..=1135).contains(&lost), "lost {lost}");
    assert!(matches!(h.link(9), Err(RuntimeError::NoSuchPort(9))));
    let (_, st) = s.rt.stop().unwrap();
    assert_eq!(st.ports[1].faults_tx.lost, lost);
}

fn control_calls_run_on_the_pipeline_thread(mode: IoMode) {
    let mut s = setup(2, LinkConfig::default(), mode);
    send(&mut s.hosts[0], 3);
    assert_eq!(recv(&mut s.hosts[1], 3).len(), 3);
    let h = s.rt.handle();
    let seen = h
        .call(Duration::from_secs(5), |p: &mut Wire| p.seen)
        .unwrap();
    assert_eq!(seen, 3);
    h.call(Duration::from_secs(5), |p: &mut Wire| p.seen = 100)
        .unwrap();
    let (p, _) = s.rt.stop().unwrap();
    assert_eq!(p.seen, 100);
    assert!(matches!(
        h.call(Duration::from_millis(100), |p: &mut Wire| p.seen),
        Err(RuntimeError::Stopped)
    ));
}

fn stop_drains_frames_held_by_a_delayed_link(mode: IoMode) {
    // Wall clock here: the drain waits real time for the held frames to come due.
    let (sw0, mut h0) = pair_with_capacity("sw0", "h0", 1024);
    let (sw1, mut h1) = pair_with_capacity("sw1", "h1", 1024);
    let ports = vec![
        PortSetup {
            devport: 0,
            port: Box::new(sw0),
            link: LinkConfig::default(),
        },
        PortSetup {
            devport: 1,
            port: Box::new(sw1),
            link: "tx.delay=30ms".parse().unwrap(),
        },
    ];
    let clock: Arc<dyn Clock> = Arc::new(crate::time::WallClock::new());
    let rt = Runtime::start(
        Wire { seen: 0 },
        ports,
        clock,
        RuntimeConfig {
            io: mode,
            ..RuntimeConfig::default()
        },
    )
    .unwrap();
    send(&mut h0, 10);
    let h = rt.handle();
    let t0 = Instant::now();
    while h.stats().processed < 10 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (_, st) = rt.stop().unwrap();
    assert_eq!(
        st.ports[1].port.tx_packets, 10,
        "held frames left before the stop finished"
    );
    assert_eq!(recv(&mut h1, 10).len(), 10);
}

fn bad_port_lists_are_refused(mode: IoMode) {
    assert!(matches!(check_devports(&[]), Err(RuntimeError::NoPorts)));
    assert!(matches!(
        check_devports(&[1, 2, 1]),
        Err(RuntimeError::DuplicatePort(1))
    ));
    assert!(matches!(
        check_devports(&[512]),
        Err(RuntimeError::PortOutOfRange(512))
    ));
    assert!(check_devports(&[0, 128, 511]).is_ok());
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::new());
    let r = Runtime::start(
        Wire { seen: 0 },
        Vec::new(),
        clock,
        RuntimeConfig {
            io: mode,
            ..RuntimeConfig::default()
        },
    );
    assert!(matches!(r, Err(RuntimeError::NoPorts)));
}

fn metrics_page_lists_ports(mode: IoMode) {
    let mut s = setup(2, LinkConfig::default(), mode);
    send(&mut s.hosts[0], 4);
    assert_eq!(recv(&mut s.hosts[1], 4).len(), 4);
    let h = s.rt.handle();
    let h2 = h.clone();
    let srv = MetricsServer::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(move || render_prometheus(&h2.stats())),
    )
    .unwrap();
    let mut c = std::net::TcpStream::connect(srv.local_addr()).unwrap();
    use std::io::{Read, Write};
    c.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut body = String::new();
    c.read_to_string(&mut body).unwrap();
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    assert!(
        body.contains("pisa_port_rx_packets_total{port=\"0\",name=\"sw0\"} 4"),
        "{body}"
    );
    assert!(body.contains("pisa_port_tx_packets_total{port=\"1\",name=\"sw1\"} 4"));
    assert!(body.contains("pisa_rx_batch_size_bucket{port=\"0\",le=\"+Inf\"}"));
    drop(srv);
    drop(s.rt.stop().unwrap());
}

fn link_delay_and_rate_hold_frames_until_due(mode: IoMode) {
    let (sw0, mut h0) = pair_with_capacity("sw0", "h0", 1024);
    let (sw1, mut h1) = pair_with_capacity("sw1", "h1", 1024);
    let ports = vec![
        PortSetup {
            devport: 0,
            port: Box::new(sw0),
            link: LinkConfig::default(),
        },
        PortSetup {
            devport: 1,
            port: Box::new(sw1),
            link: "tx.delay=10ms,tx.rate=1M".parse().unwrap(),
        },
    ];
    let clock = Arc::new(VirtualClock::new());
    let cfg = RuntimeConfig {
        idle_wait: Duration::from_millis(2),
        io: mode,
        ..RuntimeConfig::default()
    };
    let rt = Runtime::start(Wire { seen: 0 }, ports, clock.clone(), cfg).unwrap();
    send(&mut h0, 10);
    let h = rt.handle();
    let t0 = Instant::now();
    while h.stats().processed < 10 && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    // Virtual time stands still: nothing is due yet.
    std::thread::sleep(Duration::from_millis(20));
    let mut b = FrameBatch::new(64);
    assert_eq!(
        h1.recv_batch(&mut b, Nanos::ZERO).unwrap(),
        0,
        "held by the delay"
    );
    clock.advance(Nanos(9_000_000));
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        h1.recv_batch(&mut b, Nanos::ZERO).unwrap(),
        0,
        "9 ms < delay"
    );
    // At 1 Mbit/s a 64-byte frame (plus 24 bytes of overhead) takes 0.7 ms on the wire:
    // at 11.2 ms only the first is out (10.7 ms), the second leaves at 11.4 ms.
    clock.advance(Nanos(2_200_000));
    let first = recv(&mut h1, 1);
    assert_eq!(first, vec![0]);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        h1.recv_batch(&mut b, Nanos::ZERO).unwrap(),
        0,
        "the rest wait for the rate"
    );
    clock.advance(Nanos(1_000_000_000));
    assert_eq!(recv(&mut h1, 9), (1..10).collect::<Vec<u16>>());
    drop(rt.stop().unwrap());
}

both_modes!(
    forwards_in_order_and_stops_with_stats,
    link_delay_and_rate_hold_frames_until_due,
    flood_and_unattached_port_are_counted,
    link_down_and_loss_change_at_run_time,
    control_calls_run_on_the_pipeline_thread,
    stop_drains_frames_held_by_a_delayed_link,
    bad_port_lists_are_refused,
    metrics_page_lists_ports
);

/// Inline mode with a busy-poll window longer than the test: frames before, during and after
/// the window's restart all forward, and stopping does not wait for the window to close.
#[test]
fn busy_poll_forwards_and_stops_inside_its_window() {
    let (sw0, mut h0) = pair_with_capacity("sw0", "h0", 1 << 16);
    let (sw1, mut h1) = pair_with_capacity("sw1", "h1", 1 << 16);
    let ports = [(0, sw0), (1, sw1)]
        .into_iter()
        .map(|(devport, p)| PortSetup {
            devport,
            port: Box::new(p),
            link: LinkConfig::default(),
        })
        .collect();
    let cfg = RuntimeConfig {
        io: IoMode::Inline,
        busy_poll: Duration::from_secs(3600),
        ..RuntimeConfig::default()
    };
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::new());
    let rt = Runtime::start(Wire { seen: 0 }, ports, clock, cfg).unwrap();
    send(&mut h0, 100);
    assert_eq!(recv(&mut h1, 100), (0..100).collect::<Vec<u16>>());
    std::thread::sleep(Duration::from_millis(5));
    send(&mut h1, 7);
    assert_eq!(recv(&mut h0, 7), (0..7).collect::<Vec<u16>>());
    let (p, st) = rt.stop().unwrap();
    assert_eq!(p.seen, 107);
    assert_eq!(st.processed, 107);
}

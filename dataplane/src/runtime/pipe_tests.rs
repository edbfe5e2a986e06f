//! Per-pipe runtime tests: a toy two-pipe switch on in-memory links with a virtual clock —
//! copies crossing pipes, fan-out to both pipes, per-pipe state, control requests to every
//! pipe thread, the drain at stop and counted drops on a full cross-pipe channel.

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

use super::tests::{recv, send_to as send};
use super::*;
use crate::mem::{pair_with_capacity, MemPort};
use crate::time::VirtualClock;

/// Frames carry their destination device port in bytes 0..2 (0xffff: every port of `group`)
/// and a sequence number in bytes 14..16.
struct Toy {
    pipe: u16,
    /// Frames this pipe ran through ingress, per ingress device port.
    ingress: Vec<(u16, u64)>,
    /// Copies this pipe egressed.
    egressed: u64,
    /// Copies handed to this pipe for a port of another pipe (must stay 0).
    wrong_pipe: u64,
    /// The fan-out group, set by control requests.
    group: Vec<u16>,
    /// Sleep per egress, to keep copies in flight.
    egress_delay: Duration,
}

struct ToyCopy {
    port: u16,
    bytes: Vec<u8>,
}

impl PipeStage for Toy {
    type Copy = ToyCopy;

    fn copy_port(copy: &ToyCopy) -> u16 {
        copy.port
    }

    fn ingress(
        &mut self,
        port: u16,
        data: &[u8],
        _ts: Nanos,
        _out: &mut dyn FnMut(u16, Vec<u8>),
        copies: &mut Vec<ToyCopy>,
    ) {
        if port >> 7 != self.pipe {
            self.wrong_pipe += 1;
        }
        match self.ingress.iter_mut().find(|(p, _)| *p == port) {
            Some((_, n)) => *n += 1,
            None => self.ingress.push((port, 1)),
        }
        let dst = u16::from_be_bytes([data[0], data[1]]);
        let ports = if dst == 0xffff {
            self.group.clone()
        } else {
            vec![dst]
        };
        for p in ports {
            copies.push(ToyCopy {
                port: p,
                bytes: data.to_vec(),
            });
        }
    }

    fn egress(
        &mut self,
        copy: ToyCopy,
        out: &mut dyn FnMut(u16, Vec<u8>),
        _copies: &mut Vec<ToyCopy>,
    ) {
        if copy.port >> 7 != self.pipe {
            self.wrong_pipe += 1;
        }
        if !self.egress_delay.is_zero() {
            std::thread::sleep(self.egress_delay);
        }
        self.egressed += 1;
        out(copy.port, copy.bytes);
    }
}

const PORTS: [u16; 4] = [0, 1, 128, 129];

struct Setup {
    rt: PipeRuntime<Toy>,
    hosts: Vec<MemPort>,
}

fn setup(delay: Duration, cross_channel: usize, io: IoMode) -> Setup {
    let mut ports = Vec::new();
    let mut hosts = Vec::new();
    for d in PORTS {
        let (sw, host) = pair_with_capacity(&format!("sw{d}"), &format!("h{d}"), 1 << 16);
        ports.push(PortSetup {
            devport: d,
            port: Box::new(sw),
            link: LinkConfig::default(),
        });
        hosts.push(host);
    }
    let clock: Arc<dyn Clock> = Arc::new(VirtualClock::new());
    let cfg = RuntimeConfig {
        idle_wait: Duration::from_millis(2),
        io,
        cross_channel,
        ..RuntimeConfig::default()
    };
    let stage = |pipe| Toy {
        pipe,
        ingress: Vec::new(),
        egressed: 0,
        wrong_pipe: 0,
        group: Vec::new(),
        egress_delay: delay,
    };
    let rt = PipeRuntime::start(stage, ports, clock, cfg).unwrap();
    Setup { rt, hosts }
}

fn wait_processed(h: &PipeHandle<Toy>, n: u64) {
    let t0 = Instant::now();
    while h.stats().processed < n && t0.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(h.stats().processed, n);
}

fn unicast_crosses_pipes_in_order_and_each_pipe_keeps_its_own_state(mode: IoMode) {
    let mut s = setup(Duration::ZERO, 1024, mode);
    let h = s.rt.handle();
    assert_eq!(h.pipes(), vec![0, 1]);
    // Port 0 (pipe 0) -> port 129 (pipe 1), port 128 (pipe 1) -> port 1 (pipe 0), and a
    // same-pipe pair for comparison.
    send(&mut s.hosts[0], 129, 300);
    send(&mut s.hosts[2], 1, 200);
    send(&mut s.hosts[3], 128, 50);
    assert_eq!(recv(&mut s.hosts[3], 300), (0..300).collect::<Vec<u16>>());
    assert_eq!(recv(&mut s.hosts[1], 200), (0..200).collect::<Vec<u16>>());
    assert_eq!(recv(&mut s.hosts[2], 50), (0..50).collect::<Vec<u16>>());
    // Reads per pipe thread: each saw only its own ports' ingress.
    let mut seen = h
        .call_each(Duration::from_secs(5), |t: &mut Toy| {
            let mut v = t.ingress.clone();
            v.sort_unstable();
            (v, t.egressed, t.wrong_pipe)
        })
        .unwrap();
    seen.sort_by_key(|(p, _)| *p);
    assert_eq!(seen[0], (Some(0), (vec![(0, 300)], 200, 0)));
    assert_eq!(seen[1], (Some(1), (vec![(128, 200), (129, 50)], 350, 0)));
    let (stages, st) = s.rt.stop().unwrap();
    assert_eq!(stages.len(), 2);
    assert_eq!(st.processed, 550);
    let t0 = st.threads.iter().find(|t| t.pipe == Some(0)).unwrap();
    let t1 = st.threads.iter().find(|t| t.pipe == Some(1)).unwrap();
    assert_eq!((t0.frames, t0.copies_out, t0.copies_in), (300, 300, 200));
    assert_eq!((t1.frames, t1.copies_out, t1.copies_in), (250, 200, 300));
    assert_eq!(st.cross_full(), 0);
}

fn a_control_write_reaches_every_pipe_and_fan_out_lands_on_both(mode: IoMode) {
    let mut s = setup(Duration::ZERO, 1024, mode);
    let h = s.rt.handle();
    // The group is "symmetric state": set on every pipe thread.
    let r = h
        .call_each(Duration::from_secs(5), |t: &mut Toy| {
            t.group = vec![1, 128, 129];
            t.pipe
        })
        .unwrap();
    assert_eq!(r, vec![(Some(0), 0), (Some(1), 1)]);
    send(&mut s.hosts[0], 0xffff, 20);
    send(&mut s.hosts[2], 0xffff, 10);
    assert_eq!(recv(&mut s.hosts[1], 30).len(), 30);
    assert_eq!(recv(&mut s.hosts[2], 30).len(), 30);
    assert_eq!(recv(&mut s.hosts[3], 30).len(), 30);
    // One pipe only.
    let g = h
        .call_pipe(1, Duration::from_secs(5), |t: &mut Toy| t.group.len())
        .unwrap();
    assert_eq!(g, 3);
    assert!(matches!(
        h.call_pipe(3, Duration::from_secs(1), |t: &mut Toy| t.pipe),
        Err(RuntimeError::NoSuchPipe(3))
    ));
    let body = render_prometheus(&h.stats());
    assert!(
        body.contains("pisa_thread_frames_total{thread=\"pipe0\"} 20"),
        "{body}"
    );
    assert!(body.contains("pisa_thread_frames_total{thread=\"pipe1\"} 10"));
    let (stages, _) = s.rt.stop().unwrap();
    for (pipe, t) in stages {
        assert_eq!(t.wrong_pipe, 0);
        // Pipe 0 egresses port 1 (30 copies), pipe 1 ports 128 and 129 (60).
        assert_eq!(t.egressed, if pipe == Some(0) { 30 } else { 60 });
    }
    assert!(matches!(
        h.call_pipe(0, Duration::from_millis(100), |t: &mut Toy| t.pipe),
        Err(RuntimeError::Stopped)
    ));
}

fn stop_drains_copies_still_crossing(mode: IoMode) {
    // Egress is slow, so copies are still queued between the pipe threads at stop.
    let mut s = setup(Duration::from_micros(300), 1024, mode);
    let h = s.rt.handle();
    send(&mut s.hosts[0], 128, 400);
    wait_processed(&h, 400);
    let (_, st) = s.rt.stop().unwrap();
    let p128 = st.ports.iter().find(|p| p.devport == 128).unwrap();
    assert_eq!(
        p128.port.tx_packets, 400,
        "every crossing copy left at stop"
    );
    assert_eq!(recv(&mut s.hosts[2], 400).len(), 400);
}

fn a_full_cross_pipe_channel_drops_and_counts(mode: IoMode) {
    // One batch of room between the pipes and a slow egress: some copies cannot cross.
    let mut s = setup(Duration::from_millis(2), 1, mode);
    let h = s.rt.handle();
    for _ in 0..10 {
        send(&mut s.hosts[0], 128, 32);
    }
    wait_processed(&h, 320);
    let (_, st) = s.rt.stop().unwrap();
    let p128 = st.ports.iter().find(|p| p.devport == 128).unwrap();
    let full = st.cross_full();
    assert!(full > 0, "the channel never filled: {:?}", st.threads);
    assert_eq!(
        p128.port.tx_packets + full,
        320,
        "every copy delivered or counted"
    );
    let t0 = st.threads.iter().find(|t| t.pipe == Some(0)).unwrap();
    assert_eq!(t0.cross_full, full);
    assert_eq!(t0.copies_out + full, 320);
}

both_modes!(
    unicast_crosses_pipes_in_order_and_each_pipe_keeps_its_own_state,
    a_control_write_reaches_every_pipe_and_fan_out_lands_on_both,
    stop_drains_copies_still_crossing,
    a_full_cross_pipe_channel_drops_and_counts
);

//! Prometheus text exposition of the runtime's statistics ([`render_prometheus`]) and a tiny
//! HTTP responder ([`MetricsServer`]) that serves it on `GET /metrics` (any path answers the
//! same), enough for Prometheus, curl and tests without an HTTP framework.
//!
//! Metric names (all counters unless noted), labelled by `port` (device port) and `name`:
//! `pisa_port_rx_packets_total`, `pisa_port_rx_bytes_total`, `pisa_port_tx_packets_total`,
//! `pisa_port_tx_bytes_total`, `pisa_port_drops_total{direction,reason}` (backend drops by
//! reason, runtime channel drops as `ingress_channel_full` / `egress_channel_full`, injected
//! faults as `fault_loss` / `fault_link_down` / `fault_queue`), `pisa_port_faults_total{direction,
//! kind}` for duplicated / reordered / corrupted frames, `pisa_rx_batch_size_bucket{le}`
//! (a histogram of receive batch sizes), `pisa_no_port_drops_total`, `pisa_processed_total`,
//! and per pipeline thread (label `thread`: `pipeline` or `pipeN`)
//! `pisa_thread_batches_total`, `pisa_thread_frames_total`, `pisa_thread_copies_in_total`,
//! `pisa_thread_copies_out_total`, `pisa_thread_cross_full_drops_total`.
//! Callers append their own lines (queue depth, ECN marks, switch drop reasons).

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::stats::{RuntimeStats, BATCH_BUCKETS, BATCH_BUCKET_LE};
use crate::port::DropReason;

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The runtime's statistics in Prometheus text format (version 0.0.4).
pub fn render_prometheus(st: &RuntimeStats) -> String {
    let mut s = String::new();
    type Get = fn(&super::PortReport) -> u64;
    let simple: [(&str, &str, Get); 4] = [
        ("pisa_port_rx_packets_total", "Frames received", |p| {
            p.port.rx_packets
        }),
        ("pisa_port_rx_bytes_total", "Bytes received", |p| {
            p.port.rx_bytes
        }),
        ("pisa_port_tx_packets_total", "Frames sent", |p| {
            p.port.tx_packets
        }),
        ("pisa_port_tx_bytes_total", "Bytes sent", |p| {
            p.port.tx_bytes
        }),
    ];
    for (name, help, get) in simple {
        let _ = writeln!(s, "# HELP {name} {help}.\n# TYPE {name} counter");
        for p in &st.ports {
            let _ = writeln!(
                s,
                "{name}{{port=\"{}\",name=\"{}\"}} {}",
                p.devport,
                escape(&p.name),
                get(p)
            );
        }
    }
    let name = "pisa_port_drops_total";
    let _ = writeln!(
        s,
        "# HELP {name} Frames dropped at a port, by direction and reason.\n# TYPE {name} counter"
    );
    for p in &st.ports {
        let l = format!("port=\"{}\",name=\"{}\"", p.devport, escape(&p.name));
        let mut line = |dir: &str, reason: &str, v: u64| {
            let _ = writeln!(
                s,
                "{name}{{{l},direction=\"{dir}\",reason=\"{reason}\"}} {v}"
            );
        };
        for r in DropReason::ALL {
            line("rx", r.name(), p.port.rx_dropped(r));
            line("tx", r.name(), p.port.tx_dropped(r));
        }
        line("rx", "ingress_channel_full", p.runtime.ingress_full);
        line("tx", "egress_channel_full", p.runtime.egress_full);
        for (dir, f) in [("tx", &p.faults_tx), ("rx", &p.faults_rx)] {
            line(dir, "fault_loss", f.lost);
            line(dir, "fault_link_down", f.down_dropped);
            line(dir, "fault_queue", f.queue_dropped);
        }
    }
    let name = "pisa_port_faults_total";
    let _ = writeln!(
        s,
        "# HELP {name} Frames duplicated, reordered or corrupted by fault injection.\n# TYPE {name} counter"
    );
    for p in &st.ports {
        for (dir, f) in [("tx", &p.faults_tx), ("rx", &p.faults_rx)] {
            for (kind, v) in [
                ("duplicated", f.duplicated),
                ("reordered", f.reordered),
                ("corrupted", f.corrupted),
            ] {
                let _ = writeln!(
                    s,
                    "{name}{{port=\"{}\",name=\"{}\",direction=\"{dir}\",kind=\"{kind}\"}} {v}",
                    p.devport,
                    escape(&p.name)
                );
            }
        }
    }
    let name = "pisa_rx_batch_size";
    let _ = writeln!(
        s,
        "# HELP {name} Frames per receive batch.\n# TYPE {name} histogram"
    );
    for p in &st.ports {
        let mut cum = 0;
        for (i, le) in BATCH_BUCKET_LE.iter().enumerate().take(BATCH_BUCKETS) {
            cum += p.runtime.batch_sizes[i];
            let _ = writeln!(
                s,
                "{name}_bucket{{port=\"{}\",le=\"{le}\"}} {cum}",
                p.devport
            );
        }
        let _ = writeln!(s, "{name}_count{{port=\"{}\"}} {cum}", p.devport);
        // Exact sum is not kept; the frames received is its best stand-in.
        let _ = writeln!(
            s,
            "{name}_sum{{port=\"{}\"}} {}",
            p.devport, p.port.rx_packets
        );
    }
    let _ = writeln!(
        s,
        "# HELP pisa_no_port_drops_total Frames sent to a device port with nothing attached.\n# TYPE pisa_no_port_drops_total counter\npisa_no_port_drops_total {}",
        st.no_port
    );
    let _ = writeln!(
        s,
        "# HELP pisa_processed_total Frames run through the pipeline.\n# TYPE pisa_processed_total counter\npisa_processed_total {}",
        st.processed
    );
    type GetT = fn(&super::PipeThreadStats) -> u64;
    let per_thread: [(&str, &str, GetT); 5] = [
        (
            "pisa_thread_batches_total",
            "Receive batches a pipeline thread ran",
            |t| t.batches,
        ),
        (
            "pisa_thread_frames_total",
            "Frames a pipeline thread ran through ingress",
            |t| t.frames,
        ),
        (
            "pisa_thread_copies_in_total",
            "Copies other pipe threads sent this one for egress",
            |t| t.copies_in,
        ),
        (
            "pisa_thread_copies_out_total",
            "Copies this pipe thread sent to others for egress",
            |t| t.copies_out,
        ),
        (
            "pisa_thread_cross_full_drops_total",
            "Copies dropped because the target pipe thread's channel was full",
            |t| t.cross_full,
        ),
    ];
    for (name, help, get) in per_thread {
        let _ = writeln!(s, "# HELP {name} {help}.\n# TYPE {name} counter");
        for t in &st.threads {
            let label = match t.pipe {
                Some(p) => format!("pipe{p}"),
                None => "pipeline".to_string(),
            };
            let _ = writeln!(s, "{name}{{thread=\"{label}\"}} {}", get(t));
        }
    }
    s
}

/// Produces the page body on every scrape.
pub type RenderFn = Arc<dyn Fn() -> String + Send + Sync>;

/// A minimal HTTP/1.0-style responder for `/metrics`, on its own thread. Stops when dropped.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Listens on `addr` and serves `render()`'s output.
    pub fn start(addr: SocketAddr, render: RenderFn) -> std::io::Result<MetricsServer> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("pisa-metrics".into())
            .spawn(move || {
                while !flag.load(Ordering::Acquire) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            if let Err(e) = answer(stream, &render) {
                                tracing::debug!(error = %e, "metrics request failed");
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "metrics accept failed");
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            })?;
        Ok(MetricsServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// The address it listens on (the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn answer(mut stream: TcpStream, render: &RenderFn) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    // Read the request head (up to 8 KiB, until the blank line); its content does not matter.
    let mut buf = [0u8; 8192];
    let mut len = 0;
    while len < buf.len() {
        let n = stream.read(&mut buf[len..])?;
        if n == 0 {
            break;
        }
        len += n;
        if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    let body = render();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}
